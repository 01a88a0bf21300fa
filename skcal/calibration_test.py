"""Consistency-resampling test of calibration (Brocker and Smith, 2007).

Under H0 "the predictions are calibrated", ``E[y | p] = p``, so labels drawn as
``y* ~ Bernoulli(p)`` are distributed as the real labels would be. Recomputing a calibration
measure on ``R`` such replicates gives its null distribution at these very predictions, and the
p-value ``(1 + #{null >= observed}) / (1 + R)``, which is valid (never anti-conservative) for
any measure, also one with ties or a discrete null distribution.

**The resamples share the sort of p.** The rows are sorted by ``p`` once; the labels of every
replicate are drawn in that order, and every measure's label-free part (cells, soft-bin
weights, the grid rule, the running sums of ``p``) is computed once from the sorted rows.

**The labels.** Replicate ``r`` (``r = 0 .. R - 1``) draws its labels from its own segment of
one counter-based stream: word ``j`` of the stream is ``splitmix64(key + (j + 1) GAMMA)``
(SplitMix64, Steele, Lea and Flood 2014, ``GAMMA = 0x9E3779B97F4A7C15``, uint64 arithmetic),
``key`` a 64-bit word drawn from ``SeedSequence(random_state)``, and replicate ``r`` owns the
words ``r L .. (r + 1) L - 1``, ``L = 8 ceil(n / 8)``. For the sorted rows ``8 g .. 8 g + 7``,
word ``r L + (l - 1) L / 8 + g`` gives byte ``l`` (``l = 1 .. 8``) of a 64-bit uniform ``U``
per row (byte ``b`` of the word for row ``8 g + b``), and ``y* = 1`` iff ``U < floor(p 2^64)``
(``p < 1``; ``y* = 1`` for ``p = 1``), so ``P(y* = 1) = floor(p 2^64) / 2^64``, within
``2^-64`` of ``p``. The comparison goes byte by byte from the first and stops at the first byte
that differs from ``p``'s: one random byte decides 255 rows in 256 (that is the whole cost of
a draw), the second byte all but one in 65,536, and the later bytes are read only then. Exact:
the same labels as comparing all 64 bits.

Why the replicates are independent Bernoulli draws, independent of each other: every row of
every replicate reads its own bytes of the stream (no word is used by two replicates, and no
byte by two rows), the stream's words are consecutive outputs of SplitMix64, a generator that
passes BigCrush (its 2^64 period is far beyond the ``R L`` words a test reads; the test refuses
``R L >= 2^64``), and a row's label is a fixed function of its bytes and its ``p``. The labels
of replicate ``r`` are a function of ``(key, r, row)`` alone, so the result does not depend
on how the replicates are split into blocks, on ``n_jobs``, or on whether numba is installed:
the compiled kernel (:mod:`skcal._resampling_kernel`, used when numba is installed and the test
draws at least ``2^25`` labels) and the numpy path draw the same labels bit for bit and compute
the same values.

**Vectorised replicates.** Only the label-dependent sums of a measure change between
replicates. Replicates are processed in blocks: a block of ``B`` label vectors is a ``B x n``
array, and its label sums per cell are one sparse-matrix product.

* ``"cutoff"``: ``S_i = C_i - P_i`` at the last row of each run of tied predictions, ``C`` the
  running sum of ``w y*`` (a running count, unweighted) and ``P`` that of ``w p``; the value is
  ``(max(S, 0) - min(S, 0)) / W``. The compiled kernel never stores the labels: it decides
  eight rows per random word, and, unweighted, keeps only integer running counts per 64 rows
  and integer bounds of the running sums between them, and walks row by row only the few
  groups of eight rows whose bounds reach the running sums' extremes (exact: the extremes lie in
  those groups; see :func:`skcal._resampling_kernel.cutoff_null`). The numpy path forms the
  labels and one ``cumsum`` along the rows. The observed value uses the same arithmetic.
* ``"scdl"``: the soft-bin label masses ``A*_i`` on the finest grid (``p``'s masses ``W_i`` and
  the ``"auto"`` grid rule, which depends only on the weights, are fixed); every dyadic grid is
  folded and ``SCFDL`` computed for the whole block at once. Each replicate's value is
  :func:`skcal.scdl.scdl_score` of its labels (up to round-off).
* ``"binned_ece"``: the residual sum per equal-width bin (11 bins).
* ``"smooth_ece"``: the residual channels of the ``2^18``-cell deposit are formed for the whole
  block at once; the bandwidth search (``smECE(sigma) = sigma``, which depends on the labels) is
  then re-run for every replicate, so each value is :func:`skcal.smooth_ece.smooth_ece` of its
  labels. Nothing is kept fixed between replicates except the label-free density channel.
* ``"smooth_calibration_error"`` (the Lipschitz smCE of :mod:`skcal.lipschitz`) and callables:
  a plain loop over replicates, the labels put back in the input's row order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

from skcal._catalog import measure as catalogue_measure
from skcal._catalog import measures
from skcal._compat import StrOptions, validate_params
from skcal._compiled import compiled
from skcal._constraints import BINARY_INPUTS, N_JOBS, RANDOM_STATE, StrictInterval
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats import (
    BinnedStatistics,
    CutoffStatistics,
    PoissonBootstrap,
    ScdlStatistics,
    SmoothECEStatistics,
    effective_sample_size,
)

FINE_CELLS = SmoothECEStatistics.FINE_CELLS

#: Largest number of consistency resamples accepted (memory and time grow linearly in it).
MAX_RESAMPLES = 10**6

__all__ = ["CalibrationTestResult", "calibration_test", "MEASURES"]

#: Measures known by name: the catalogue's binary measures with ``calibration_test``.
MEASURES = tuple(measures("binary", calibration_test=True))

#: Largest number of label entries (replicates x rows) held in memory at once.
_BLOCK_ENTRIES = 1 << 22

#: Quantiles of the null distribution reported.
NULL_QUANTILES = (0.5, 0.9, 0.95, 0.99)


@dataclass(frozen=True)
class CalibrationTestResult:
    """Result of :func:`calibration_test`.

    Parameters
    ----------
    statistic : float
        The measure on the observed labels.
    pvalue : float
        ``(1 + #{null >= statistic}) / (1 + n_resamples)``.
    measure : str
        Name of the measure (a callable's ``__name__``).
    n_resamples : int
        Number of consistency resamples ``R``.
    null_mean : float
        Mean of the null distribution.
    null_std : float
        Standard deviation of the null distribution (``ddof=1``).
    null_quantiles : dict
        Quantiles ``{0.5, 0.9, 0.95, 0.99}`` of the null distribution.
    null_distribution : ndarray of shape (n_resamples,)
        The measure on every replicate, in replicate order.
    """

    statistic: float
    pvalue: float
    measure: str
    n_resamples: int
    null_mean: float
    null_std: float
    null_quantiles: dict
    null_distribution: np.ndarray = field(repr=False)

    @validate_params(
        {"level": [StrictInterval(Real, 0, 1, closed="both")]}, prefer_skip_nested_validation=True
    )
    def rejects(self, level=0.05):
        """Whether H0 "calibrated" is rejected at ``level``.

        Parameters
        ----------
        level : float, default=0.05
            The significance level.

        Returns
        -------
        bool
            ``pvalue <= level``.
        """
        return bool(self.pvalue <= level)


def _seed_sequence(random_state):
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, (Integral, np.integer)):
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**32, size=4, dtype=np.uint64).tolist())
    raise ValueError(f"random_state must be None, an int or a RandomState; got {random_state!r}.")


# -- the label stream --------------------------------------------------------------------------
_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_U64 = np.uint64


def _splitmix64(z):
    """SplitMix64's output function, in place on a uint64 array of states (wrapping arithmetic)."""
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    return z


def _words(key, r, j):
    """Words ``r L + j`` of the stream, as ``splitmix64(key + (1 + r L + j) GAMMA)``.

    ``r`` holds the replicates' offsets ``1 + r L`` already multiplied by ``GAMMA`` and added to
    ``key`` (their states' bases, uint64), ``j`` the word index within the replicate (uint64);
    both broadcast.
    """
    z = r + j * _U64(_GAMMA)
    return _splitmix64(z)


def _bytes_of(words, n):
    """The bytes of ``words`` (shape ``(B, m1)``), byte ``b`` of word ``g`` for row ``8 g + b``."""
    B = words.shape[0]
    return words.astype("<u8", copy=False).view(np.uint8).reshape(B, -1)[:, :n]


@dataclass(frozen=True)
class _Stream:
    """The label stream of one test: a key and the tables of the sorted predictions.

    Replicate ``r`` draws its labels from the words ``r L .. (r + 1) L - 1`` of the SplitMix64
    sequence ``splitmix64(key + (j + 1) GAMMA)`` (``j = 0, 1, ...``), ``L = 8 m1`` for ``m1``
    groups of eight sorted rows: word ``(l - 1) m1 + g`` gives byte ``l`` of the 64-bit uniform
    ``U`` of the rows ``8 g .. 8 g + 7`` (byte ``b`` of the word for row ``8 g + b``), and
    ``y* = 1`` iff ``U < floor(p 2^64)`` (``p < 1``), compared byte by byte from the first, so a
    byte is read only when the earlier ones equal ``p``'s (``y* = 1`` for ``p = 1``).
    """

    key: int
    n: int
    m1: int
    P64: np.ndarray  # floor(p 2^64) per sorted row (uint64)
    q1: np.ndarray  # first byte of P64 per row (uint8)
    q2: np.ndarray  # second byte
    one: np.ndarray  # p == 1 (bool)
    tables: tuple  # Q1, Q2, VALID, ONE packed per group (uint64), for the compiled kernel

    @property
    def L(self):
        return 8 * self.m1

    def bases(self, r0, B):
        """``key + (1 + r L) GAMMA`` of the replicates ``r0 .. r0 + B - 1``, uint64 of shape (B, 1)."""
        vals = [(self.key + (1 + (r0 + i) * self.L) * _GAMMA) & _MASK64 for i in range(B)]
        return np.array(vals, dtype=np.uint64)[:, None]


def group_tables(ps, key):
    """The :class:`_Stream` of the sorted predictions ``ps`` with the 64-bit ``key``."""
    n = ps.shape[0]
    m1 = -(-n // 8)
    one = ps >= 1.0
    P64 = np.zeros(8 * m1, dtype=np.uint64)
    P64[:n] = np.floor(np.where(one, 0.0, ps) * 2.0**64).astype(np.uint64)
    P64[:n][one] = _U64(_MASK64)
    q1 = (P64 >> _U64(56)).astype(np.uint8)
    q2 = ((P64 >> _U64(48)) & _U64(0xFF)).astype(np.uint8)
    valid = np.zeros(8 * m1, dtype=np.uint8)
    valid[:n] = 0x80
    onem = np.zeros(8 * m1, dtype=np.uint8)
    onem[:n][one] = 0x80
    valid &= ~onem

    def packed(b):
        return b.view("<u8").astype(np.uint64)

    tables = (packed(q1), packed(q2), packed(valid), packed(onem))
    return _Stream(int(key), n, m1, P64[:n].copy(), q1[:n].copy(), q2[:n].copy(), one, tables)


def _draw_numpy(stream, r0, B):
    """Labels ``(B, n)`` (uint8, sorted rows) of replicates ``r0 ..`` by numpy, as the kernel draws them."""
    n, m1 = stream.n, stream.m1
    bases = stream.bases(r0, B)
    g = np.arange(m1, dtype=np.uint64)
    b1 = _bytes_of(_words(stream.key, bases, g[None, :]), n)
    Y = b1 < stream.q1
    tie = b1 == stream.q1
    tie[:, stream.one] = False
    Y[:, stream.one] = True
    rr, ii = np.nonzero(tie)
    level = 2
    while rr.size and level <= 8:
        gi = (ii >> 3).astype(np.uint64)
        words = _words(stream.key, bases[rr, 0], _U64((level - 1) * m1) + gi)
        xb = (words >> (_U64(8) * (ii & 7).astype(np.uint64))) & _U64(0xFF)
        pb = (stream.P64[ii] >> _U64(64 - 8 * level)) & _U64(0xFF)
        Y[rr[xb < pb], ii[xb < pb]] = True
        keep = xb == pb
        rr, ii = rr[keep], ii[keep]
        level += 1
    return Y.view(np.uint8)


#: From this many label draws (replicates x rows) on, the compiled kernel is used when numba is
#: installed: below, numpy is about as fast and the first call need not import numba.
_KERNEL_MIN_DRAWS = 1 << 25


def _kernel_module(stream, n_resamples):
    if stream.n * n_resamples < _KERNEL_MIN_DRAWS:
        return None
    return compiled("resampling")


def draw_labels(stream, r0, B, compiled=None):
    """The labels of replicates ``r0 .. r0 + B - 1``, uint8 of shape ``(B, n)`` (sorted rows).

    By the compiled kernel (``compiled``: :mod:`skcal._resampling_kernel`) or by numpy: the same
    labels either way.
    """
    if compiled is None:
        return _draw_numpy(stream, r0, B)
    out = np.empty((B, stream.n), dtype=np.uint8)
    Q1, Q2, VALID, ONE = stream.tables
    compiled.draw_labels(_U64(stream.key), r0, _U64(stream.L), Q1, Q2, VALID, ONE, stream.P64, stream.n, out)
    return out


# -- vectorised measures ----------------------------------------------------------------------
# Each kernel is built once from the sorted (p, w) and maps a (B, n) block of labels to B values;
# a kernel with a ``null`` method computes a block of replicates from the stream itself.


class _ScdlKernel:
    def __init__(self, p, w):
        n = p.shape[0]
        self.template = ScdlStatistics.for_rows(n, n_effective=effective_sample_size(w, n))
        self.M = self.template.max_bins
        self.n, self.total = n, float(n) if w is None else float(w.sum())
        self.sum_w2 = float(n) if w is None else float(np.dot(w, w))
        self.W = ScdlStatistics.from_validated(np.zeros(n), p, w, max_bins=self.M).stats_["W"]
        t = p * self.M
        c = np.minimum(t.astype(np.intp), self.M - 1)
        u = t - c
        wt = np.ones(n) if w is None else w
        rows = np.concatenate([c, c + 1])
        cols = np.concatenate([np.arange(n), np.arange(n)])
        vals = np.concatenate([wt - wt * u, wt * u])
        self.S = sparse.csr_matrix((vals, (rows, cols)), shape=(self.M + 1, n))

    def __call__(self, Y):
        A = np.asarray((self.S @ Y.T).T)  # (B, M + 1) label masses
        B = A.shape[0]
        # every replicate shares the weight masses (the labels alone are redrawn)
        stats = {"W": np.broadcast_to(self.W, A.shape), "A": A, "sum_w": np.full(B, self.total),
                 "sum_w2": np.full(B, self.sum_w2), "n_rows": np.full(B, self.n)}  # fmt: skip
        return PoissonBootstrap.from_sums(stats, template=self.template, n_replicates=B).compute()


class _BinnedKernel:
    def __init__(self, p, w, n_bins=11):
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        ids = np.searchsorted(edges[1:-1], p)
        wt = np.ones_like(p) if w is None else w
        self.total = float(wt.sum())
        self.S = sparse.csr_matrix((wt, (ids, np.arange(p.shape[0]))), shape=(n_bins, p.shape[0]))
        self.wp = np.bincount(ids, weights=wt * p, minlength=n_bins)

    def __call__(self, Y):
        D = np.asarray(self.S @ Y.T) - self.wp[:, None]  # (n_bins, B) residual sums
        return np.abs(D).sum(axis=0) / self.total


class _CutoffKernel:
    """The cutoff error of label vectors in the sorted order: ``(max(S, 0) - min(S, 0)) / W``.

    ``S_i = C_i - P_i`` at the last row of each run of tied predictions, with ``C`` the running
    sum of ``w y`` (a running count, unweighted) and ``P`` that of ``w p``: the same arithmetic
    for the observed labels, for the numpy replicates and in the compiled kernel, so the
    observed and the resampled values compare exactly.
    """

    def __init__(self, p, w):
        n = p.shape[0]
        self.w = w
        self.last = np.empty(n, dtype=bool)
        np.not_equal(p[1:], p[:-1], out=self.last[:-1])
        self.last[-1] = True
        self.P = np.cumsum(p if w is None else w * p)
        self.total = float(n) if w is None else float(w.sum())
        self._bounds = None

    def __call__(self, Y):
        if self.w is None:
            C = np.cumsum(Y.astype(np.int64), axis=1)
        else:
            C = np.cumsum(Y * self.w, axis=1)
        S = C - self.P
        hi = np.maximum(S.max(axis=1, where=self.last, initial=-np.inf), 0.0)
        lo = np.minimum(S.min(axis=1, where=self.last, initial=np.inf), 0.0)
        return (hi - lo) / self.total

    def bounds(self):
        """Integer bounds per group of 8 rows and per super-group of 64 (:func:`cutoff_null`)."""
        if self._bounds is None:
            groups = _run_end_bounds(self.P, self.last, 8)[:, :2]
            self._bounds = (np.ascontiguousarray(groups), _run_end_bounds(self.P, self.last, 64))
        return self._bounds

    def null(self, stream, r0, B, compiled):
        """The values of replicates ``r0 .. r0 + B - 1``, by the compiled kernel or by numpy."""
        if compiled is None:
            return self(draw_labels(stream, r0, B))
        out = np.empty(B)
        Q1, Q2, VALID, ONE = stream.tables
        w = np.empty(0) if self.w is None else self.w
        if self.w is None:
            bnd, bs = self.bounds()
        else:
            bnd = bs = np.empty((0, 4), dtype=np.int64)
        compiled.cutoff_null(
            _U64(stream.key), r0, _U64(stream.L), Q1, Q2, VALID, ONE, stream.P64, bnd, bs,
            self.P, self.last, w, stream.n, out,
        )
        return out / self.total


def _run_end_bounds(P, last, G):
    """Per block of ``G`` sorted rows, the integer bounds that :func:`cutoff_null` compares.

    Columns: ``floor(P)`` at the block's first run end, ``ceil(P)`` at its last run end,
    ``ceil(P)`` plus the number of rows after the last run end, and ``floor(P)`` at the last run
    end; ``+2**62, -2**62, +2**62, -2**62`` for a block without a run end (``last``).
    """
    n = P.shape[0]
    m = -(-n // G)
    big = 2**62
    ends = np.zeros(G * m, dtype=bool)
    ends[:n] = last
    Pp = np.zeros(G * m)
    Pp[:n] = P
    E = ends.reshape(m, G)
    PG = Pp.reshape(m, G)
    has = E.any(axis=1)
    first = np.argmax(E, axis=1)
    lastb = G - 1 - np.argmax(E[:, ::-1], axis=1)
    rows = np.arange(m)
    valid_rows = np.minimum(G, n - G * rows)  # the last block may be short
    out = np.empty((m, 4), dtype=np.int64)
    out[:, 0] = np.where(has, np.floor(PG[rows, first]), big)
    out[:, 1] = np.where(has, np.ceil(PG[rows, lastb]), -big)
    out[:, 2] = np.where(has, np.ceil(PG[rows, lastb]) + (valid_rows - 1 - lastb), big)
    out[:, 3] = np.where(has, np.floor(PG[rows, lastb]), -big)
    return out


class _SmoothECEKernel:
    """smECE of every replicate: its statistics on the occupied fine cells (the rows are sorted,
    so each cell's rows are one run: differences of running sums of the labels), then the
    bandwidth search of a block of replicates at once (the replicate statistics of
    :class:`skcal.stats.SmoothECEStatistics` in a :class:`skcal.stats.PoissonBootstrap`, whose
    values are :func:`skcal.smooth_ece.smooth_ece` of their labels up to round-off)."""

    def __init__(self, p, w):
        # p is sorted: each fine cell's rows are one contiguous run
        n = p.shape[0]
        wt = np.ones(n) if w is None else w
        c = np.minimum((p * FINE_CELLS).astype(np.intp), FINE_CELLS - 1)
        N = np.bincount(c, weights=wt, minlength=FINE_CELLS)
        self.cells = np.flatnonzero(N > 0)
        cells, starts = np.unique(c, return_index=True)
        self.ends = np.append(starts[1:], n) - 1  # the last row of each cell's run
        self.runs = np.searchsorted(cells, self.cells)  # the runs of the occupied cells
        self.wt, self.wp = wt, wt * p
        self.N = N[self.cells]
        self.F = np.bincount(c, weights=wt * p, minlength=FINE_CELLS)[self.cells]
        self.PF = np.bincount(c, weights=wt * p * p, minlength=FINE_CELLS)[self.cells]
        self.n, self.total = n, float(wt.sum())

    def __call__(self, Y):
        B = Y.shape[0]
        WY = np.diff(np.cumsum(Y * self.wt, axis=1)[:, self.ends], axis=1, prepend=0.0)[:, self.runs]
        WYP = np.diff(np.cumsum(Y * self.wp, axis=1)[:, self.ends], axis=1, prepend=0.0)[:, self.runs]
        stats = {
            "cells": self.cells,
            "N": np.repeat(self.N[:, None], B, axis=1),
            "F": np.repeat(self.F[:, None], B, axis=1),
            "R": np.ascontiguousarray((self.F - WY).T),  # sum w (p - y)
            "RF": np.ascontiguousarray((self.PF - WYP).T),  # sum w (p - y) p
            "sum_w": np.full(B, self.total),
            "n_rows": np.full(B, self.n),
        }
        return PoissonBootstrap.from_sums(stats, template=SmoothECEStatistics(), n_replicates=B).compute()


class _LoopKernel:
    """A measure function called on each replicate's labels, in the rows' original order."""

    def __init__(self, p, w, func, order):
        self.p, self.w, self.func, self.order = p, w, func, order

    def __call__(self, Y):
        out = np.empty(Y.shape[0])
        y = np.empty(Y.shape[1], dtype=np.int64)
        for b in range(Y.shape[0]):
            y[self.order] = Y[b]  # sorted rows back to the input's order
            value = self.func(y, self.p) if self.w is None else self.func(y, self.p, sample_weight=self.w)
            out[b] = float(value)
        return out


def _kernel_builder(template):
    """``build(ps, ws)`` of the vectorised kernel of ``template``'s measure, or None (a loop).

    By the class of the measure's statistics, exactly (a subclass's measure is another) and
    its parameters (the binned ECE on equal-width bins, the cutoff error, not the KS error).
    """
    kind = type(template)
    if kind is ScdlStatistics:
        return _ScdlKernel
    if kind is SmoothECEStatistics:
        return _SmoothECEKernel
    if kind is BinnedStatistics and template.measure == "ece" and template.edges is None:
        return lambda p, w: _BinnedKernel(p, w, template.n_bins)
    if kind is CutoffStatistics and template.measure == "cutoff":
        return _CutoffKernel
    return None


def _sort_rows(y, p, w, need_order):
    """The rows sorted by ``p``: ``(ys, ps, ws, order)``.

    Unweighted and without the permutation, one sort of 64-bit keys (``p``'s bits shifted left,
    the label in the lowest bit; as :meth:`skcal.stats.CutoffStatistics.compute_validated`); else
    a stable argsort (ties keep the input's order, so the labels of a replicate are the same rows'
    labels on every machine). The two orders differ only among tied predictions, where neither
    the statistics (evaluated at the end of each run of ties) nor the resampled labels (drawn
    from ``ps``) can tell them apart.
    """
    if w is None and not need_order:
        key = np.ascontiguousarray(p).view(np.uint64) << _U64(1)
        key |= y > 0.5
        key.sort()
        ps = (key >> _U64(1)).view(np.float64)
        ys = (key & _U64(1)).astype(np.float64)
        return ys, ps, None, None
    order = np.argsort(p, kind="stable")
    return y[order], p[order], None if w is None else w[order], order


def _block_size(n, kernel):
    if hasattr(kernel, "null"):
        return 64  # no labels are materialised by the compiled kernel; numpy caps it below
    return max(1, _BLOCK_ENTRIES // max(1, n))


def _null_values(kernel, stream, n_resamples, n_jobs, compiled):
    n = stream.n
    block = _block_size(n, kernel)
    if compiled is None:
        block = min(block, max(1, _BLOCK_ENTRIES // max(1, n)))
    starts = list(range(0, n_resamples, block))

    def one(r0):
        B = min(block, n_resamples - r0)
        if hasattr(kernel, "null"):
            return kernel.null(stream, r0, B, compiled)
        return kernel(draw_labels(stream, r0, B, compiled).astype(np.float64))

    if n_jobs is None or n_jobs == 1 or len(starts) == 1:
        parts = [one(r0) for r0 in starts]
    else:
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(one)(r0) for r0 in starts)
    return np.concatenate(parts)


@fill(**BINARY_DOCS)
@validate_params(
    {
        **BINARY_INPUTS,
        "measure": [StrOptions(set(MEASURES)), callable],
        "n_resamples": [StrictInterval(Integral, 1, MAX_RESAMPLES, closed="both")],
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
    },
    # a callable measure is the user's code: the skcal functions it calls validate their arguments
    prefer_skip_nested_validation=False,
)
def calibration_test(
    y_true,
    y_prob,
    *,
    measure="smooth_ece",
    n_resamples=1000,
    sample_weight=None,
    random_state=None,
    n_jobs=None,
    pos_label=None,
):
    """Test H0 "the predictions are calibrated" by consistency resampling.

    Draws ``n_resamples`` label vectors ``y* ~ Bernoulli(p)`` (Brocker and Smith, 2007),
    recomputes ``measure`` on each, and compares the observed value with that null
    distribution: ``pvalue = (1 + #{null >= observed}) / (1 + n_resamples)``. Only the
    label-dependent sums of a named measure are recomputed per replicate, for blocks of
    replicates at once (see the module documentation); each replicate's value equals the measure
    function on its labels exactly.

    Parameters
    ----------
    {y_true}
    {y_prob}
    measure : {"smooth_ece", "scdl", "cutoff", "binned_ece", "smooth_calibration_error"} or \
callable, default="smooth_ece"
        The test statistic (larger means less calibrated): :func:`skcal.smooth_ece.smooth_ece`,
        :func:`skcal.scdl.scdl_score` (``"auto"`` grid rule), the cutoff calibration error, the
        11-bin equal-width ECE, or the Lipschitz smooth calibration error of
        :mod:`skcal.lipschitz`. A callable ``f(y_true, y_prob)`` (called with
        ``sample_weight=`` when weights are given) is evaluated in a loop. A named statistic is
        computed on the rows sorted by ``p``, in the same arithmetic as its null resamples (so
        exact ties with the null count); it equals the measure's function to rounding (relative
        ``1e-12``), not always to the last bit.
    n_resamples : int, default=1000
        Number of consistency resamples ``R``, at most ``10**6`` (a p-value resolution of 1e-6 is
        far below what any test level needs); the smallest attainable p-value is ``1 / (R + 1)``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights, used by the measure on the observed and the resampled labels.
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling: the key of the label stream is drawn from
        ``SeedSequence(random_state)``, and replicate ``r`` reads its own segment of the stream
        (see the module documentation), so results do not depend on ``n_jobs``, on the block
        size or on whether numba is installed.
    n_jobs : int, default=None
        Threads over blocks of replicates (``None``: one).
    {pos_label}

    Returns
    -------
    CalibrationTestResult
        The statistic, p-value and null distribution summary (mean, std, quantiles).

    See Also
    --------
    skcal.smooth_ece.smooth_ece, skcal.scdl.scdl_score : measures usable as the statistic.

    Notes
    -----
    The test is exact in the sense of Monte Carlo tests: under H0 with the predictions held
    fixed, the p-value satisfies ``P(pvalue <= a) <= a`` for every ``a``. A small p-value says
    the labels are unlikely under ``E[y | p] = p``; a large one is not evidence of calibration
    beyond the test's power at this sample size.

    References
    ----------
    J. Brocker and L. A. Smith, "Increasing the reliability of reliability diagrams", Weather
    and Forecasting 22 (2007), 651-661.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.calibration_test import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> res = calibration_test(y, p, measure="binned_ece", n_resamples=499, random_state=0)
    >>> res.pvalue                       # calibrated: not rejected
    0.302
    >>> biased = np.clip(p + 0.05, 0, 1)
    >>> calibration_test(y, biased, measure="smooth_ece", n_resamples=199, random_state=0).pvalue
    0.005
    >>> calibration_test(y, biased, measure="scdl", n_resamples=199, random_state=0).pvalue
    0.12

    SCDL is a decision loss: a shift by ``b`` costs threshold decisions only about ``b^2 / 2``,
    which 2000 rows do not resolve at ``b = 0.05``; at ``b = 0.1`` its p-value is 0.01.
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return _run(y, p, w, measure, n_resamples, random_state, n_jobs)


def _run(y, p, w, measure, n_resamples, random_state, n_jobs, vectorise=True):
    """The test on validated arrays; ``vectorise=False`` loops over the measure function."""
    build = None if callable(measure) or not vectorise else _kernel_builder(catalogue_measure(measure).make())
    ys, ps, ws, order = _sort_rows(y, p, w, need_order=build is None)
    key = int(_seed_sequence(random_state).generate_state(1, np.uint64)[0])
    stream = group_tables(ps, key)
    if n_resamples * stream.L >= 1 << 64:  # pragma: no cover - beyond any memory
        raise ValueError("n_resamples times the number of rows exceeds the label stream (2**64 words).")
    if build is None:
        func = measure if callable(measure) else catalogue_measure(measure).function
        kernel = _LoopKernel(p, w, func, order)
    else:
        kernel = build(ps, ws)
    name = getattr(measure, "__name__", "callable") if callable(measure) else measure
    statistic = float(kernel(ys[None, :])[0])
    compiled = _kernel_module(stream, n_resamples)
    null = _null_values(kernel, stream, int(n_resamples), n_jobs, compiled)
    # the observed and the resampled values come from the same arithmetic, so exact ties count
    pvalue = (1.0 + float(np.count_nonzero(null >= statistic))) / (1.0 + n_resamples)
    return CalibrationTestResult(
        statistic=statistic,
        pvalue=pvalue,
        measure=name,
        n_resamples=int(n_resamples),
        null_mean=float(null.mean()),
        null_std=float(null.std(ddof=1)) if n_resamples > 1 else math.nan,
        null_quantiles={q: float(np.quantile(null, q)) for q in NULL_QUANTILES},
        null_distribution=null,
    )
