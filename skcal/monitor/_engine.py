"""The monitor's engine: re-blocking, the per-block pipeline, segments and the stored history.

Rows arrive in batches of any size. The engine cuts the stream into blocks of exactly
``block_size`` rows; the rows of an incomplete block wait in a buffer (part of the state) until
the block is complete. Each complete block goes through one pipeline: its per-bin sums
(:mod:`skcal.monitor._blocks`), the patterns' signs from the memory and the components' log
factors (:mod:`skcal.monitor._betting`), and the paths and the lower bound
(:mod:`skcal.monitor._detector`). Blocks are processed many at a time, and every step either
treats blocks independently or carries its state from one block to the next in a fixed order,
so the path at every block boundary is the same, bit for bit, however the caller splits the rows.

A *segment* is a stretch of blocks monitored from a fresh start (``CalibrationMonitor.new_segment``):
its capitals, detector, lower bound, memory and alarm start again, while the stored blocks of
the earlier segments stay in the history. The rows of an incomplete block when a segment starts
belong to no block: they are dropped (and counted).

``advance`` and ``new_segment`` are pure: they return a new engine and leave the old one as it
was, so a batch that fails half-way (it cannot after validation, but memory can run out) changes
nothing.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from skcal.monitor._betting import (
    component_bets,
    component_weights,
    log_factors,
    memory_sums,
    n_components,
    pattern_signs,
    to_functions,
)
from skcal.monitor._blocks import SUM_NAMES, block_sums, sum_x
from skcal.monitor._detector import PathCarry, advance_paths, change_start

__all__ = ["Engine", "SUPER_ROWS", "BLOCK_FIELDS", "PATH_FIELDS"]

#: Rows per pass of the pipeline (whole blocks, at least one): bounds the temporaries' memory.
SUPER_ROWS = 1 << 19
#: The paths the engine stores per block (beside the sums and the times).
PATH_FIELDS = ("log_e", "log_m", "lcb")
#: What the engine stores per block.
BLOCK_FIELDS = (*SUM_NAMES, *PATH_FIELDS, "time_first", "time_last")


@dataclasses.dataclass
class Engine:
    n_bins: int
    block_size: int
    n_classes: int
    memory: int | None
    tolerance: float
    log_threshold: float  # the test's and the lower bound's: log(1 / alpha)
    detect_threshold: float  # the e-detector's: log A (inf unless detect)
    detect: bool
    mem_tail: np.ndarray
    path: PathCarry
    buffer_y: list
    buffer_p: list
    buffer_t: np.ndarray | None
    blocks: dict
    segments: list  # one dict per segment: label, first_block, first_row, dropped (+ the alarm of past ones)
    n_seen: int = 0
    time_kind: str | None = None
    first_time: float | int | None = None
    last_time: float | int | None = None
    alarm_block: int | None = None  # counted from the segment's first block
    change_block: int | None = None
    alarm_component: int | None = None

    @classmethod
    def new(
        cls, *, n_bins, block_size, n_classes, memory, tolerance, log_threshold, detect_threshold, detect
    ):
        return cls(
            n_bins=n_bins,
            block_size=block_size,
            n_classes=n_classes,
            memory=memory,
            tolerance=float(tolerance),
            log_threshold=log_threshold,
            detect_threshold=detect_threshold,
            detect=detect,
            **cls._fresh(n_bins, n_classes),
            blocks={name: [] for name in BLOCK_FIELDS},
            segments=[{"label": None, "first_block": 0, "first_row": 0, "dropped": 0}],
        )

    @staticmethod
    def _fresh(n_bins, n_classes):
        """The fields a segment starts from: empty memory, paths and buffer, no alarm."""
        return {
            "mem_tail": np.zeros((1, 2, n_classes, 2 * n_bins - 1)),
            "path": PathCarry.initial((n_classes, n_components(n_bins))),
            "buffer_y": [np.empty(0) for _ in range(n_classes)],
            "buffer_p": [np.empty(0) for _ in range(n_classes)],
            "buffer_t": None,
            "alarm_block": None,
            "change_block": None,
            "alarm_component": None,
        }

    @functools.cached_property
    def logw(self):
        return np.log(component_weights(self.n_bins, self.n_classes))

    @functools.cached_property
    def bets(self):
        return component_bets(self.n_bins)

    @property
    def n_buffered(self):
        return int(self.buffer_p[0].shape[0])

    @property
    def n_blocks(self):
        """Complete blocks over every segment."""
        return self.segments[-1]["first_block"] + self.path.n_blocks

    @property
    def alarm_threshold(self):
        return self.detect_threshold if self.detect else self.log_threshold

    def block_array(self, name):
        """Everything stored for ``name``, blocks along the first axis."""
        parts = self.blocks[name]
        if len(parts) == 1:
            return parts[0]
        if parts:
            out = np.concatenate(parts)
        else:
            shape = (0, self.n_classes, self.n_bins) if name in SUM_NAMES else (0,)
            out = np.empty(shape, dtype=np.int64 if name in ("count", "positives") else np.float64)
        self.blocks[name] = [out] if parts else []
        return out

    def block_rows(self):
        """The row count at the end of every stored block (segments' dropped rows included)."""
        out = np.empty(self.n_blocks, dtype=np.int64)
        for i, seg in enumerate(self.segments):
            stop = self.segments[i + 1]["first_block"] if i + 1 < len(self.segments) else self.n_blocks
            j = np.arange(seg["first_block"], stop)
            out[j] = seg["first_row"] + (j - seg["first_block"] + 1) * self.block_size
        return out

    def block_segments(self):
        out = np.empty(self.n_blocks, dtype=np.int64)
        for i, seg in enumerate(self.segments):
            stop = self.segments[i + 1]["first_block"] if i + 1 < len(self.segments) else self.n_blocks
            out[seg["first_block"] : stop] = i
        return out

    # ------------------------------------------------------------------------------------------
    def new_segment(self, label):
        """A new engine whose next block starts a fresh segment (the buffered rows are dropped)."""
        past = {**self.segments[-1], **self.segment_summary()}
        start = {
            "label": label,
            "first_block": self.n_blocks,
            "first_row": self.n_seen,
            "dropped": self.n_buffered,
        }
        return dataclasses.replace(
            self,
            blocks={k: list(v) for k, v in self.blocks.items()},
            segments=[*self.segments[:-1], past, start],
            **self._fresh(self.n_bins, self.n_classes),
        )

    def segment_summary(self):
        """The current segment's alarm and final values (what the history keeps of it)."""
        return {
            "alarm_block": self.alarm_block,
            "change_block": self.change_block,
            "alarm_component": self.alarm_component,
            "blocks": int(self.path.n_blocks),
            "lcb": float(self.path.lcb),
            "max_log_e": float(self.path.max_log_e),
        }

    def advance(self, ys, ps, ts, time_kind):
        """A new engine after the rows ``ys[c], ps[c]`` (one array per class) and times ``ts``."""
        B = self.block_size
        n = ps[0].shape[0]
        new = dataclasses.replace(self, blocks={k: list(v) for k, v in self.blocks.items()})
        new.n_seen = self.n_seen + n
        if ts is not None and n:
            new.time_kind = time_kind
            if new.first_time is None:
                new.first_time = ts[0].item()
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
        B, K = self.block_size, self.n_bins
        parts = [block_sums(y, p, K, B) for y, p in zip(ys, ps, strict=True)]
        sums = {name: np.stack([part[name] for part in parts], axis=1) for name in SUM_NAMES}
        pos, sp, spp = sums["positives"], sums["sum_p"], sums["sum_p_pos"]
        stats = np.stack([sums["count"] - pos, sp - spp, pos, spp], axis=-1).astype(np.float64)
        S = to_functions(sum_x(sums))
        Q = to_functions(sums["sum_x2"])
        mem, self.mem_tail = memory_sums(self.mem_tail, S, Q, self.memory)
        lf = log_factors(stats, pattern_signs(mem), K)
        carry = self.path
        out, self.path = advance_paths(
            carry, lf, self.logw, self.bets, self.tolerance, B, self.detect, self.log_threshold
        )
        if self.alarm_block is None:
            stat = out["log_m"] if self.detect else out["log_e"]
            hits = np.flatnonzero(stat >= self.alarm_threshold)
            if hits.size:
                i = int(hits[0])
                self.alarm_block = carry.n_blocks + i
                self.change_block, self.alarm_component = change_start(
                    carry, out["log_capital"], i, self.logw
                )
        for name in SUM_NAMES:
            self.blocks[name].append(sums[name])
        for name in PATH_FIELDS:
            self.blocks[name].append(out[name])
        nb = lf.shape[0]
        if ts is None:
            first = last = np.full(nb, np.nan)
        elif self.time_kind == "datetime":
            first, last = ts[0::B].copy(), ts[B - 1 :: B].copy()
        else:
            first, last = ts[0::B].astype(np.float64), ts[B - 1 :: B].astype(np.float64)
        self.blocks["time_first"].append(first)
        self.blocks["time_last"].append(last)
