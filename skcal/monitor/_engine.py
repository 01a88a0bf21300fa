"""The monitor's engine: re-blocking, the per-block pipeline and the stored history.

Rows arrive in batches of any size. The engine cuts the stream into blocks of exactly
``block_size`` rows; the rows of an incomplete block wait in a buffer (part of the state) until
the block is complete. Each complete block goes through one pipeline: its per-bin sums
(:mod:`skcal.monitor._blocks`), the test functions' sums, the predictable bets and log factors
(:mod:`skcal.monitor._betting`), and the paths (:mod:`skcal.monitor._detector`). Blocks are
processed many at a time, and every step either treats blocks independently or carries its
state from one block to the next in a fixed order, so the path at every block boundary is the
same, bit for bit, however the caller splits the rows.

``advance`` is pure: it returns a new engine and leaves the old one as it was, so a batch that
fails half-way (it cannot after validation, but memory can run out) changes nothing.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from skcal.monitor._betting import (
    bernstein_log_factors,
    bets,
    function_weights,
    n_functions,
    product_log_factors,
    to_functions,
)
from skcal.monitor._blocks import SUM_NAMES, block_sums, fine_ids
from skcal.monitor._detector import PathCarry, advance_paths, change_start

__all__ = ["Engine", "SUPER_ROWS", "BLOCK_FIELDS"]

#: Rows per pass of the pipeline (whole blocks, at least one): bounds the temporaries' memory.
SUPER_ROWS = 1 << 20
#: What the engine stores per block.
BLOCK_FIELDS = (*SUM_NAMES, "log_e", "log_m", "time_first", "time_last")


@dataclasses.dataclass
class Engine:
    n_bins: int
    block_size: int
    n_classes: int
    memory: int | None
    capital: str
    log_threshold: float
    detect: bool
    bet_tail: np.ndarray
    path: PathCarry
    buffer_y: list
    buffer_p: list
    buffer_t: np.ndarray | None
    blocks: dict
    n_seen: int = 0
    time_kind: str | None = None
    last_time: float | int | None = None
    alarm_block: int | None = None
    change_block: int | None = None
    alarm_function: int | None = None

    @classmethod
    def new(cls, *, n_bins, block_size, n_classes, memory, capital, log_threshold, detect):
        F = n_functions(n_bins)
        return cls(
            n_bins=n_bins,
            block_size=block_size,
            n_classes=n_classes,
            memory=memory,
            capital=capital,
            log_threshold=log_threshold,
            detect=detect,
            bet_tail=np.zeros((1, 2, n_classes, F)),
            path=PathCarry.initial((n_classes, F)),
            buffer_y=[np.empty(0) for _ in range(n_classes)],
            buffer_p=[np.empty(0) for _ in range(n_classes)],
            buffer_t=None,
            blocks={name: [] for name in BLOCK_FIELDS},
        )

    @functools.cached_property
    def logw(self):
        return np.log(function_weights(self.n_bins, self.n_classes))

    @property
    def n_buffered(self):
        return int(self.buffer_p[0].shape[0])

    def block_array(self, name):
        """Everything stored for ``name``, blocks along the first axis."""
        parts = self.blocks[name]
        if len(parts) == 1:
            return parts[0]
        if parts:
            out = np.concatenate(parts)
        else:
            shape = (0, self.n_classes, self.n_bins) if name in SUM_NAMES else (0,)
            out = np.empty(shape, dtype=np.int64 if name == "count" else np.float64)
        self.blocks[name] = [out] if parts else []
        return out

    # ------------------------------------------------------------------------------------------
    def advance(self, ys, ps, ts, time_kind):
        """A new engine after the rows ``ys[c], ps[c]`` (one array per class) and times ``ts``."""
        B = self.block_size
        n = ps[0].shape[0]
        new = dataclasses.replace(self, blocks={k: list(v) for k, v in self.blocks.items()})
        new.n_seen = self.n_seen + n
        if ts is not None:
            new.time_kind = time_kind
            new.last_time = ts[-1].item()
        nbuf = self.n_buffered
        if nbuf + n < B:  # the rows only fill the buffer
            new.buffer_y = [np.concatenate([by, y]) for by, y in zip(self.buffer_y, ys, strict=True)]
            new.buffer_p = [np.concatenate([bp, p]) for bp, p in zip(self.buffer_p, ps, strict=True)]
            new.buffer_t = None if ts is None else np.concatenate([self._buffer_times(), ts])
            return new
        head = B - nbuf if nbuf else 0
        if head:  # the buffered rows and the first rows of the batch make one block
            new._run(
                [np.concatenate([by, y[:head]]) for by, y in zip(self.buffer_y, ys, strict=True)],
                [np.concatenate([bp, p[:head]]) for bp, p in zip(self.buffer_p, ps, strict=True)],
                None if ts is None else np.concatenate([self._buffer_times(), ts[:head]]),
            )
        whole = head + ((n - head) // B) * B
        step = max(1, SUPER_ROWS // B) * B
        for s in range(head, whole, step):
            e = min(s + step, whole)
            new._run([y[s:e] for y in ys], [p[s:e] for p in ps], None if ts is None else ts[s:e])
        new.buffer_y = [np.array(y[whole:], dtype=np.float64) for y in ys]
        new.buffer_p = [np.array(p[whole:], dtype=np.float64) for p in ps]
        new.buffer_t = None if ts is None else np.array(ts[whole:])
        return new

    def _buffer_times(self):
        if self.buffer_t is None:
            return np.empty(0, dtype=np.int64 if self.time_kind == "datetime" else np.float64)
        return self.buffer_t

    def _run(self, ys, ps, ts):
        """Run whole blocks through the pipeline (mutates ``self``, a fresh copy)."""
        B, K, k = self.block_size, self.n_bins, self.n_classes
        parts = [block_sums(y, p, K, B) for y, p in zip(ys, ps, strict=True)]
        sums = {name: np.stack([part[name] for part in parts], axis=1) for name in SUM_NAMES}
        S = to_functions(sums["sum_x"])
        Q = to_functions(sums["sum_x2"])
        lam, self.bet_tail = bets(self.bet_tail, S, Q, self.memory)
        if self.capital == "product":
            lf = np.empty_like(lam)
            for c in range(k):
                ids = fine_ids(ps[c], K, B)
                lf[:, c] = product_log_factors(ids, ys[c] - ps[c], lam[:, c], K)
        else:
            lf = bernstein_log_factors(lam, S, Q)
        carry = self.path
        out, self.path = advance_paths(carry, lf, self.logw, self.detect)
        if self.alarm_block is None:
            stat = out["log_m"] if self.detect else out["log_e"]
            hits = np.flatnonzero(stat >= self.log_threshold)
            if hits.size:
                i = int(hits[0])
                self.alarm_block = carry.n_blocks + i
                self.change_block, self.alarm_function = change_start(carry, out["log_capital"], i, self.logw)
        for name in SUM_NAMES:
            self.blocks[name].append(sums[name])
        self.blocks["log_e"].append(out["log_e"])
        self.blocks["log_m"].append(out["log_m"])
        nb = lam.shape[0]
        if ts is None:
            first = last = np.full(nb, np.nan)
        else:
            first, last = ts[0::B].astype(np.float64), ts[B - 1 :: B].astype(np.float64)
            if self.time_kind == "datetime":
                first, last = ts[0::B].copy(), ts[B - 1 :: B].copy()
        self.blocks["time_first"].append(first)
        self.blocks["time_last"].append(last)
