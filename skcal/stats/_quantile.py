"""Exact quantile bins over chunked data, by extra passes of mergeable statistics.

Quantile (equal-mass) bins depend on all rows, so they cannot be fixed before the data is seen
and no single pass of additive statistics gives them. They are found *exactly* (never
approximated) by a few extra passes over the data, each of which reduces a small mergeable
statistics object:

1. **Histogram pass** (:class:`QuantileHistogramStatistics`): the number of values in each of
   ``n_cells`` equal cells of [0, 1] (cell ``c`` is ``[c / C, (c + 1) / C)``, the last one also
   holds 1; ``C`` is a power of two, so the cell of a value is exact). The counts add. Their
   cumulative sums give, for every needed rank, the cell holding it and its rank inside the
   cell.
2. **Cell passes** (:class:`QuantileCellStatistics`): for the cells holding a needed rank, either
   the values (and global row indices) of their members, concatenated across chunks, when the
   cells are small enough (at most ``max_collect`` values in all), or a finer histogram of each
   large cell (``n_cells`` sub-cells of the integer range of its values' IEEE-754 bit patterns,
   which order non-negative doubles exactly; with per-sub-cell minimum and maximum, so that the
   next pass works on the tight range). A cell holding a single tied value is refined by the
   global row index instead, when the row index matters. Each refinement shrinks the range
   ``n_cells``-fold, so a few passes suffice (see :class:`QuantileSelector`).

The selected order statistics are exact, and the bins built from them are those of the
in-memory functions:

``"percentile"`` (binary binned measures: :func:`skcal.binned_ece.binned_ece`,
    :mod:`skcal.binned_measures`, ``strategy="quantile"``)
    scikit-learn's edges ``np.percentile(p, linspace(0, 1, n_bins + 1) * 100)``: the order
    statistics at ranks ``floor`` and ``floor + 1`` of ``(n - 1) q``, interpolated with numpy's
    own formula (:func:`percentile_edges`), so the edges equal ``np.percentile`` bitwise; then
    :class:`~skcal.stats.BinnedStatistics` with ``edges=``.
``"top_label"`` / ``"classwise"`` (the truthful measures of :mod:`skcal.truthful`)
    equal-mass bins by rank, ties broken by row index (:func:`skcal.binning.assign_bins`,
    ``strategy="quantile"``). Over chunks the row index is the *global* position (the chunk's
    ``row_offset`` plus the local index), and the bins are defined by the thresholds
    ``(value, global index)`` of the rows at the bin boundary ranks: a row falls in bin ``j``
    when ``j`` thresholds are lexicographically at or below its ``(value, index)``. Then
    :class:`~skcal.stats.TopLabelStatistics` / :class:`~skcal.stats.ClasswiseStatistics` with
    ``thresholds=``, updated with each chunk's ``row_offset``.

The quantile edges ignore ``sample_weight`` (as the in-memory functions do: rows of weight zero
still count in the ranks).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import StrOptions, class_constraints, validate_parameter_constraints, validate_params
from skcal._constraints import (
    LABELS,
    N_BINS,
    NON_NEGATIVE_INT,
    POS_LABEL,
    POSITIVE_INT,
    PowerOfTwoInterval,
    StrictInterval,
)
from skcal._validation import check_binary_probabilities, check_multiclass_inputs
from skcal.binning import threshold_bin_ids
from skcal.stats._base import BaseStatistics
from skcal.stats._binned import BinnedStatistics
from skcal.stats._truthful import ClasswiseStatistics, TopLabelStatistics

__all__ = [
    "QuantileHistogramStatistics",
    "QuantileCellStatistics",
    "QuantileSelector",
    "percentile_edges",
    "quantile_edges",
    "quantile_thresholds",
    "threshold_bin_ids",
]

_SOURCES = ("binary", "top_label", "classwise")
_KINDS = ("percentile", "top_label", "classwise")
_BITS_ONE = int(np.array([1.0]).view(np.int64)[0])
_I64_MAX = np.iinfo(np.int64).max
#: ``g_hi`` of a box over every row (whatever the number of rows)
_ALL_ROWS = 1 << 62
#: Rows per block when a chunk is binned (bounds the temporaries of one ``update``).
_ROWS = 1 << 16
#: The cells of a histogram pass: a power of two (the cell of a value is then exact), at most 2**20.
_N_CELLS = [PowerOfTwoInterval(2, 1 << 20)]
#: Sub-cells of a refinement.
_N_SUB = [StrictInterval(Integral, 2, 1 << 20, closed="both")]
_SOURCE = [StrOptions(set(_SOURCES))]


# ---------------------------------------------------------------------------------------------
# values, bit patterns and the exact bin rules
# ---------------------------------------------------------------------------------------------
def _bits(v):
    """IEEE-754 bit patterns of non-negative doubles as int64 (monotone; -0.0 maps to +0.0)."""
    v = np.asarray(v, dtype=np.float64) + 0.0
    return v.view(np.int64)


def _from_bits(u):
    return np.asarray(u, dtype=np.int64).view(np.float64)


def _chunk_values(source, labels, pos_label, y_true, y_prob):
    """The values a measure bins, validated as that measure validates them: (n, n_columns)."""
    if source == "binary":
        _, p, _ = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=None)
        return np.asarray(p, dtype=np.float64)[:, None]
    P, _, _ = check_multiclass_inputs(y_true, y_prob, None, labels)
    if source == "top_label":
        c = P[np.arange(P.shape[0]), np.argmax(P, axis=1)]
        return c[:, None]
    return P


def _cell_keys(v, n_cells):
    """First-pass cell of each value: ``min(floor(v * C), C - 1)`` (exact: ``C`` is a power of 2)."""
    key = (v * n_cells).astype(np.int64)
    np.clip(key, 0, n_cells - 1, out=key)
    return key


def _cell_bit_range(c, n_cells):
    """The bit-pattern range ``[lo, hi)`` of the values of first-pass cell ``c``."""
    lo = int(_bits(np.array([c / n_cells]))[0])
    hi = _BITS_ONE + 1 if c == n_cells - 1 else int(_bits(np.array([(c + 1) / n_cells]))[0])
    return lo, hi


def percentile_edges(order_stats, n, n_bins):
    """Compute scikit-learn's quantile edges from the order statistics, bitwise as ``np.percentile``.

    ``np.percentile(p, linspace(0, 1, n_bins + 1) * 100)`` (method ``"linear"``) takes, for each
    ``q``, the order statistics at ranks ``floor((n - 1) q)`` and the next one (both ``n - 1`` at
    the top) and interpolates them with numpy's ``_lerp``; this function repeats those
    floating-point operations in the same order on the given order statistics.

    Parameters
    ----------
    order_stats : dict of int to float
        Value of the order statistic (0-based rank in the sorted values) for every rank of
        :func:`percentile_ranks`.
    n : int
        Number of values (>= 1).
    n_bins : int
        Number of bins.

    Returns
    -------
    ndarray of shape (n_bins + 1,)
        The edges.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats._quantile import percentile_edges, percentile_ranks
    >>> p = np.array([0.3, 0.1, 0.9, 0.4, 0.4])
    >>> s = np.sort(p)
    >>> e = percentile_edges({r: s[r] for r in percentile_ranks(5, 3)}, 5, 3)
    >>> bool(np.array_equal(e, np.percentile(p, np.linspace(0, 1, 4) * 100)))
    True
    """
    prev, nxt, gamma = _percentile_plan(int(n), int(n_bins))
    a = np.array([order_stats[int(r)] for r in prev], dtype=np.float64)
    b = np.array([order_stats[int(r)] for r in nxt], dtype=np.float64)
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def _percentile_plan(n, n_bins):
    """Ranks (previous, next) and interpolation weights of numpy's linear percentile."""
    q = np.true_divide(np.linspace(0, 1, n_bins + 1) * 100, 100)
    virtual = (n - 1) * q
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    gamma = virtual - prev.astype(np.intp)
    prev_r = np.where(prev < 0, n - 1, prev).astype(np.int64)
    nxt_r = np.where(nxt < 0, n - 1, nxt).astype(np.int64)
    return prev_r, nxt_r, gamma


def percentile_ranks(n, n_bins):
    """Return the 0-based ranks whose order statistics :func:`percentile_edges` needs.

    Parameters
    ----------
    n : int
        Number of values (>= 1).
    n_bins : int
        Number of bins.

    Returns
    -------
    ndarray of int64
        Sorted distinct ranks (at most ``2 (n_bins + 1)``).
    """
    prev, nxt, _ = _percentile_plan(int(n), int(n_bins))
    return np.unique(np.concatenate([prev, nxt]))


def boundary_ranks(n, n_bins):
    """Return the first sorted position of bins ``1 .. n_bins - 1`` of the equal-mass rule.

    Parameters
    ----------
    n : int
        Number of values.
    n_bins : int
        Number of bins.

    Returns
    -------
    ndarray of int64 of shape (n_bins - 1,)
        ``s_j = j q + min(j, r)`` with ``q, r = divmod(n, n_bins)``; a bin whose start is ``n``
        (when ``n < n_bins``) is empty.
    """
    q, rem = divmod(int(n), int(n_bins))
    j = np.arange(1, int(n_bins), dtype=np.int64)
    return j * q + np.minimum(j, rem)


# ---------------------------------------------------------------------------------------------
# the pass statistics
# ---------------------------------------------------------------------------------------------
class _PassBase(BaseStatistics):
    def _setup_source(self, source, labels, pos_label):
        if source != "binary":
            if labels is None:
                raise ValueError(
                    "labels is required: the class of each probability column, in column order "
                    "(pass labels=)."
                )
            labels = list(np.asarray(labels).tolist())
        self.source, self.labels, self.pos_label = source, labels, pos_label

    def _n_columns(self):
        return len(self.labels) if self.source == "classwise" else 1

    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like"],
            "sample_weight": ["array-like", None],
            "row_offset": NON_NEGATIVE_INT,
        },
        prefer_skip_nested_validation=True,
    )
    def update(self, y_true, y_prob, sample_weight=None, row_offset=0):
        """Add a chunk of rows; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Labels (validated as the measure validates them).
        y_prob : array-like of shape (n,) or (n, k)
            Probabilities.
        sample_weight : array-like of shape (n,), default=None
            Ignored: quantile edges count every row, whatever its weight.
        row_offset : int, default=0
            Global index of the chunk's first row (the position of the chunk in the data).

        Returns
        -------
        object
            The updated statistics.
        """
        if len(y_prob) == 0:
            chunk = self._empty()
        else:
            V = _chunk_values(self.source, self.labels, self.pos_label, y_true, y_prob)
            chunk = self._chunk_values(V, int(row_offset))
        self._stats = self._combine(self.stats_, chunk)
        self.n_updates_ += 1
        return self


class QuantileHistogramStatistics(_PassBase):
    """First pass of the exact quantile bins: counts of the values in equal cells of [0, 1].

    Parameters
    ----------
    source : {"binary", "top_label", "classwise"}, default="binary"
        Which values are binned: the positive-class probability (binary binned measures), the
        top-label confidence, or every class column (one histogram per column).
    labels : array-like, default=None
        Class labels in column order (required for the multiclass sources).
    pos_label : int, float, bool or str, default=None
        Positive class of binary labels.
    n_cells : int, default=4096
        Number of equal cells, a power of two (the cell of a value is then exact).

    Attributes
    ----------
    stats_ : dict of ndarray
        ``count`` (n_columns, n_cells), int64.

    Examples
    --------
    >>> from skcal.stats import QuantileHistogramStatistics
    >>> h = QuantileHistogramStatistics(n_cells=4).update([0, 1, 1], [0.1, 0.5, 1.0])
    >>> h.stats_["count"].tolist()
    [[1, 0, 1, 1]]
    """

    _param_names = ("source", "labels", "pos_label", "n_cells")
    _parameter_constraints: dict = {
        "source": _SOURCE,
        "labels": LABELS,
        "pos_label": POS_LABEL,
        "n_cells": _N_CELLS,
    }

    def __init__(self, *, source="binary", labels=None, pos_label=None, n_cells=4096):
        self._setup_source(source, labels, pos_label)
        self.n_cells = int(n_cells)

    def _empty(self):
        return {"count": np.zeros((self._n_columns(), self.n_cells), dtype=np.int64)}

    def _chunk_values(self, V, row_offset):
        k, C = V.shape[1], self.n_cells
        count = np.zeros(k * C, dtype=np.int64)
        shift = np.arange(k, dtype=np.int64) * C
        for s in range(0, V.shape[0], max(1, _ROWS // k)):
            key = _cell_keys(V[s : s + max(1, _ROWS // k)], C)
            key += shift
            count += np.bincount(key.ravel(), minlength=k * C)
        return {"count": count.reshape(k, C)}

    def _compute(self):
        return self.stats_["count"].copy()


class QuantileCellStatistics(_PassBase):
    """A cell pass of the exact quantile bins: members or finer histograms of the given cells.

    Each cell ("box") is a range of bit patterns of the values ``[u_lo, u_hi)`` and a range of
    global row indices ``[g_lo, g_hi)`` of one column; the boxes of a column are disjoint and
    each lies inside one first-pass cell. A box in mode 0 collects its members' bit patterns and
    global indices (concatenated across chunks); mode 1 counts its members in ``n_cells``
    sub-ranges of equal width ``width`` of ``[u_lo, u_hi)`` and keeps each sub-range's smallest
    and largest bit pattern; mode 2 (a box of one value) counts them in sub-ranges of the row
    index range.

    Parameters
    ----------
    source : {"binary", "top_label", "classwise"}, default="binary"
        Which values are binned (as in :class:`QuantileHistogramStatistics`).
    labels : array-like, default=None
        Class labels in column order (required for the multiclass sources).
    pos_label : int, float, bool or str, default=None
        Positive class of binary labels.
    n_cells : int, default=4096
        Cells of the first pass (to locate a value's first-pass cell), a power of two.
    n_sub : int, default=1024
        Sub-cells of a mode-1 or mode-2 box.
    boxes : array-like of int of shape (m, 7), default=None
        Rows ``(column, u_lo, u_hi, g_lo, g_hi, mode, width)``; ``g_hi = 2**62`` (with
        ``g_lo = 0``) is a box over every row. ``None`` is no box.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``hist_count``, ``hist_min``, ``hist_max`` (one row of ``n_sub`` per histogram box, in
        box order) and ``box``, ``u``, ``g`` (the collected members: box number, bit pattern,
        global index).

    Examples
    --------
    >>> from skcal.stats import QuantileCellStatistics
    >>> from skcal.stats._quantile import _cell_bit_range
    >>> lo, hi = _cell_bit_range(0, 2)  # the values in [0, 0.5)
    >>> s = QuantileCellStatistics(n_cells=2, boxes=[[0, lo, hi, 0, 4, 0, 1]])
    >>> s.update([0, 1, 0, 1], [0.4, 0.9, 0.1, 0.4]).stats_["g"].tolist()
    [0, 2, 3]
    """

    _param_names = ("source", "labels", "pos_label", "n_cells", "n_sub", "boxes")
    _parameter_constraints: dict = {
        "source": _SOURCE,
        "labels": LABELS,
        "pos_label": POS_LABEL,
        "n_cells": _N_CELLS,
        "n_sub": _N_SUB,
        "boxes": ["array-like", None],
    }

    def __init__(self, *, source="binary", labels=None, pos_label=None, n_cells=4096, n_sub=1024, boxes=None):
        self._setup_source(source, labels, pos_label)
        b = np.zeros((0, 7), dtype=np.int64) if boxes is None else np.array(boxes, dtype=np.int64)
        if b.size == 0:
            b = np.zeros((0, 7), dtype=np.int64)
        if b.ndim != 2 or b.shape[1] != 7:
            raise ValueError(f"boxes must have shape (m, 7); got {b.shape}.")
        if b.shape[0] and (
            (b[:, 0] < 0).any()
            or (b[:, 0] >= self._n_columns()).any()
            or (b[:, 1] >= b[:, 2]).any()
            or (b[:, 3] >= b[:, 4]).any()
            or (~np.isin(b[:, 5], (0, 1, 2))).any()
            or (b[:, 6] < 1).any()
        ):
            raise ValueError(
                "boxes rows must be (column, u_lo < u_hi, g_lo < g_hi, mode in {0, 1, 2}, width >= 1)."
            )
        self.n_cells, self.n_sub = int(n_cells), int(n_sub)
        self.boxes = b.tolist()
        self._prepare(b)

    def _prepare(self, b):
        """Per-column lookup tables of the boxes (sorted by ``(u_lo, g_lo)``)."""
        self._mode, self._width = b[:, 5].copy(), b[:, 6].copy()
        self._lo = np.where(self._mode == 2, b[:, 3], b[:, 1])  # start of the histogram's range
        self._hist_slot = np.full(b.shape[0], -1, dtype=np.int64)
        hist = np.flatnonzero(b[:, 5] > 0)
        self._hist_slot[hist] = np.arange(hist.size)
        self._n_hist = hist.size
        self._cols = {}
        for j in np.unique(b[:, 0]) if b.shape[0] else []:
            ids = np.flatnonzero(b[:, 0] == j)
            ids = ids[np.lexsort((b[ids, 3], b[ids, 1]))]
            bx = b[ids]
            ilo, inv = np.unique(bx[:, 1], return_inverse=True)
            ihi = np.zeros_like(ilo)
            ihi[inv] = bx[:, 2]
            every = bx[:, 4] >= _ALL_ROWS  # boxes over every row
            # row indices are clipped to M - 1, at or above every other box's g_hi
            M = int(bx[~every, 4].max()) + 1 if (~every).any() else 1
            cells = np.zeros(self.n_cells, dtype=bool)
            cells[_cell_keys(_from_bits(bx[:, 1]), self.n_cells)] = True
            # one box per value range, each over every row: no row-index test needed
            simple = ilo.size == ids.size and every.all()
            inv = inv.astype(np.int64)
            self._cols[int(j)] = {
                "ids": ids, "ilo": ilo, "ihi": ihi, "M": M, "cells": cells, "simple": bool(simple),
                "cstart": inv * M + np.where(every, 0, bx[:, 3]),
                "cend": inv * M + np.where(every, M, bx[:, 4]),
                "modes": frozenset(np.unique(bx[:, 5]).tolist()),
            }

    #: the values collected in the edge cells grow with the rows
    _variable_shape = True

    def _empty(self):
        e = np.zeros(0, dtype=np.int64)
        return {
            "hist_count": np.zeros((self._n_hist, self.n_sub), dtype=np.int64),
            "hist_min": np.full((self._n_hist, self.n_sub), _I64_MAX, dtype=np.int64),
            "hist_max": np.full((self._n_hist, self.n_sub), -1, dtype=np.int64),
            "box": e,
            "u": e.copy(),
            "g": e.copy(),
        }

    def _combine(self, a, b):
        return {
            "hist_count": a["hist_count"] + b["hist_count"],
            "hist_min": np.minimum(a["hist_min"], b["hist_min"]),
            "hist_max": np.maximum(a["hist_max"], b["hist_max"]),
            "box": np.concatenate([a["box"], b["box"]]),
            "u": np.concatenate([a["u"], b["u"]]),
            "g": np.concatenate([a["g"], b["g"]]),
        }

    def _members(self, col, j, row_offset):
        """Members of the boxes of column ``j``: (box ids, bit patterns, global indices)."""
        t = self._cols[j]
        cand = np.flatnonzero(t["cells"][_cell_keys(col, self.n_cells)])
        u = _bits(col[cand])
        iv = np.searchsorted(t["ilo"], u, side="right") - 1
        ok = iv >= 0
        ok[ok] = u[ok] < t["ihi"][iv[ok]]
        if not ok.all():
            cand, u, iv = cand[ok], u[ok], iv[ok]
        g = cand.astype(np.int64)
        g += row_offset
        if t["simple"]:
            return t["ids"][iv], u, g
        M = t["M"]
        key = iv * M + np.minimum(g, M - 1)
        bi = np.searchsorted(t["cstart"], key, side="right") - 1
        ok = (bi >= 0) & (key < t["cend"][np.maximum(bi, 0)])
        return t["ids"][bi[ok]], u[ok], g[ok]

    def _chunk_values(self, V, row_offset):
        out = self._empty()
        ns = self.n_sub
        parts = {"box": [], "u": [], "g": []}
        for j, t in self._cols.items():
            box, u, g = self._members(np.ascontiguousarray(V[:, j]), j, row_offset)
            modes = t["modes"]
            if modes == {0}:
                parts["box"].append(box), parts["u"].append(u), parts["g"].append(g)
                continue
            if 0 in modes:
                c = self._mode[box] == 0
                parts["box"].append(box[c]), parts["u"].append(u[c]), parts["g"].append(g[c])
                h = ~c
                box, u, g = box[h], u[h], g[h]
            if modes <= {0, 1}:
                sub = u - self._lo[box]
            elif modes <= {0, 2}:
                sub = g - self._lo[box]
            else:
                sub = np.where(self._mode[box] == 1, u, g) - self._lo[box]
            sub //= self._width[box]
            np.minimum(sub, ns - 1, out=sub)
            sub += self._hist_slot[box] * ns
            out["hist_count"] += np.bincount(sub, minlength=self._n_hist * ns).reshape(-1, ns)
            np.minimum.at(out["hist_min"].reshape(-1), sub, u)
            np.maximum.at(out["hist_max"].reshape(-1), sub, u)
        for k in parts:
            if parts[k]:
                out[k] = np.concatenate(parts[k]).astype(np.int64, copy=False)
        return out

    def _compute(self):
        return dict(self.stats_)


# ---------------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------------
class QuantileSelector:
    """Exact quantile bins over chunked data: the passes, one statistics object per pass.

    The protocol, for any way of running passes over the data (a loop over chunks, Dask):

    1. ``stats = sel.next_statistics()``; while it is not ``None``: update a copy of it with every
       chunk (``update(y, p, row_offset=first_row_of_chunk)``; the chunks in any grouping, the
       copies merged in any order), then ``sel.advance(merged)``;
    2. ``sel.result()`` (the edges or thresholds) or ``sel.make_statistics(...)`` (the measure's
       statistics object with the exact bins, for the main pass).

    The first pass is the histogram (:class:`QuantileHistogramStatistics`, the row index is not
    used); each further pass (:class:`QuantileCellStatistics`) collects the members of the cells
    holding the needed ranks, or refines the cells too large to collect (more than
    ``max_collect`` members in all). At most ``ceil(62 / log2(n_sub))`` refinements narrow a
    cell to one value (7 with the default ``n_sub``; a cell of one value is recognised from its
    smallest and largest member at once), then at most ``ceil(log(n) / log(n_sub))`` split a
    tied value by row index (3 for ``n <= 2**30``), then one pass collects the members.

    Parameters
    ----------
    kind : {"percentile", "top_label", "classwise"}
        ``"percentile"``: scikit-learn's percentile edges of the positive-class probability
        (binary binned measures); ``"top_label"`` / ``"classwise"``: the equal-mass bins of the
        truthful measures (ties broken by global row index), on the confidence or on every class
        column.
    n_bins : int
        Number of bins.
    labels : array-like, default=None
        Class labels in column order (required for ``"top_label"`` and ``"classwise"``).
    pos_label : int, float, bool or str, default=None
        Positive class of binary labels (``"percentile"``).
    n_cells : int, default=4096
        Cells of the first-pass histogram (a power of two).
    n_sub : int, default=1024
        Sub-cells of a refinement.
    max_collect : int, default=1048576
        Most member values collected in one pass (bounds the pass's state).

    Attributes
    ----------
    n_passes_ : int
        Passes made so far.
    n_rows_ : int or None
        Number of rows (known after the first pass).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import QuantileSelector
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> sel = QuantileSelector(kind="percentile", n_bins=5)
    >>> while (st := sel.next_statistics()) is not None:
    ...     for a in range(0, 1000, 300):
    ...         _ = st.update(y[a : a + 300], p[a : a + 300], row_offset=a)
    ...     _ = sel.advance(st)
    >>> bool(np.array_equal(sel.result(), np.percentile(p, np.linspace(0, 1, 6) * 100)))
    True
    """

    #: Checked by the constructor itself, also inside a function whose own validation skips nested
    #: checks (skcal.dask.evaluate builds a selector from a measure's keyword arguments).
    _parameter_constraints: dict = {
        "kind": [StrOptions(set(_KINDS))],
        "n_bins": N_BINS,
        "labels": LABELS,
        "pos_label": POS_LABEL,
        "n_cells": _N_CELLS,
        "n_sub": _N_SUB,
        "max_collect": POSITIVE_INT,
    }

    def __init__(
        self, *, kind, n_bins, labels=None, pos_label=None, n_cells=4096, n_sub=1024, max_collect=1 << 20
    ):
        params = {
            "kind": kind, "n_bins": n_bins, "labels": labels, "pos_label": pos_label, "n_cells": n_cells,
            "n_sub": n_sub, "max_collect": max_collect,
        }
        validate_parameter_constraints(
            self._parameter_constraints,
            params,
            caller_name="QuantileSelector.__init__",
            compiled=class_constraints(type(self)),
        )
        self.kind, self.n_bins = kind, int(n_bins)
        self.source = "binary" if kind == "percentile" else kind
        self._common = {"source": self.source, "labels": labels, "pos_label": pos_label, "n_cells": n_cells}
        QuantileCellStatistics(**self._common, n_sub=n_sub)  # checks that the labels are given
        self.labels = self._common["labels"] = None if labels is None else list(np.asarray(labels).tolist())
        self.n_sub, self.max_collect = int(n_sub), int(max_collect)
        self._need_index = kind != "percentile"
        self.n_passes_ = 0
        self.n_rows_ = None
        self._resolved = None  # column -> {rank: (value, index)}
        self._pending = None  # list of box dicts
        self._pass_boxes = None

    # -- protocol --------------------------------------------------------------------------
    @property
    def done(self):
        """Whether every needed order statistic is known.

        Returns
        -------
        bool
            ``True`` once :meth:`result` can be called.
        """
        return self._resolved is not None and not self._pending

    def next_statistics(self):
        """Return an empty statistics object for the next pass, or ``None`` when done.

        Returns
        -------
        QuantileHistogramStatistics, QuantileCellStatistics or None
            Update it with every chunk, merge, and pass the result to :meth:`advance`.
        """
        if self._resolved is None:
            return QuantileHistogramStatistics(**self._common)
        if not self._pending:
            return None
        order = sorted(range(len(self._pending)), key=lambda i: self._pending[i]["count"])
        budget, rows = self.max_collect, []
        for i in order:
            bx = self._pending[i]
            if bx["count"] <= budget:
                budget -= bx["count"]
                mode, width = 0, 1
            elif bx["u_hi"] - bx["u_lo"] > 1:
                mode, width = 1, -(-(bx["u_hi"] - bx["u_lo"]) // self.n_sub)
            else:
                mode, width = 2, -(-(bx["g_hi"] - bx["g_lo"]) // self.n_sub)
            bx["mode"], bx["width"] = mode, width
            rows.append(self._box_row(bx))
        self._pass_boxes = [self._pending[i] for i in order]
        return QuantileCellStatistics(**self._common, n_sub=self.n_sub, boxes=rows)

    @validate_params({"stats": [BaseStatistics]}, prefer_skip_nested_validation=True)
    def advance(self, stats):
        """Fold the merged statistics of a pass in; return ``self``.

        Parameters
        ----------
        stats : QuantileHistogramStatistics or QuantileCellStatistics
            The object :meth:`next_statistics` returned, updated with every chunk (merged).

        Returns
        -------
        QuantileSelector
            ``self``.
        """
        if self._resolved is None:
            if not isinstance(stats, QuantileHistogramStatistics):
                raise TypeError("The first pass takes a QuantileHistogramStatistics.")
            self._first(stats.stats_["count"])
        else:
            if not isinstance(stats, QuantileCellStatistics):
                raise TypeError("Passes after the first take a QuantileCellStatistics.")
            if stats.boxes != [self._box_row(b) for b in self._pass_boxes]:
                raise ValueError("stats was not built by this selector's last next_statistics().")
            self._refine(stats.stats_)
        self.n_passes_ += 1
        return self

    # -- passes ----------------------------------------------------------------------------
    def _box_row(self, b):
        """The row of a box in ``QuantileCellStatistics(boxes=...)`` (every row: ``g_hi = 2**62``)."""
        every = b["g_lo"] == 0 and b["g_hi"] == self.n_rows_
        g_hi = _ALL_ROWS if every else b["g_hi"]
        return [b["col"], b["u_lo"], b["u_hi"], b["g_lo"], g_hi, b["mode"], b["width"]]

    def _ranks(self, n):
        if self.kind == "percentile":
            return percentile_ranks(n, self.n_bins)
        r = boundary_ranks(n, self.n_bins)
        return r[r < n]

    def _first(self, counts):
        n = int(counts[0].sum())
        if n == 0:
            raise ValueError("The data holds no rows; quantile bins need at least one.")
        if (counts.sum(axis=1) != n).any():  # pragma: no cover - columns come from one array
            raise ValueError("The columns hold different numbers of values.")
        self.n_rows_ = n
        ranks = self._ranks(n)
        self._resolved = {j: {} for j in range(counts.shape[0])}
        self._pending = []
        for j in range(counts.shape[0]):
            cum = np.cumsum(counts[j])
            cells = np.searchsorted(cum, ranks, side="right")
            for c in np.unique(cells):
                lo, hi = _cell_bit_range(int(c), counts.shape[1])
                start = int(cum[c] - counts[j, c])
                rs = ranks[cells == c]
                self._add_box(j, lo, hi, 0, n, int(counts[j, c]), [(int(r), int(r) - start) for r in rs])

    def _add_box(self, col, u_lo, u_hi, g_lo, g_hi, count, ranks):
        """Queue a box, or resolve its ranks at once when its members are known without a pass."""
        if u_hi - u_lo == 1:
            value = float(_from_bits(np.array([u_lo]))[0])
            if not self._need_index or count == g_hi - g_lo:  # every index in range is a member
                for r, off in ranks:
                    self._resolved[col][r] = (value, g_lo + off)
                return
        self._pending.append(
            {"col": col, "u_lo": u_lo, "u_hi": u_hi, "g_lo": g_lo, "g_hi": g_hi, "count": count,
             "ranks": ranks}
        )

    def _refine(self, s):
        boxes, self._pending = self._pass_boxes, []
        hist = [b for b in boxes if b["mode"] > 0]
        order = np.argsort(s["box"], kind="stable")
        sb, su, sg = s["box"][order], s["u"][order], s["g"][order]
        bounds = np.searchsorted(sb, np.arange(len(boxes) + 1))
        for i, b in enumerate(boxes):
            if b["mode"] != 0:
                continue
            u, g = su[bounds[i] : bounds[i + 1]], sg[bounds[i] : bounds[i + 1]]
            if u.shape[0] != b["count"]:
                raise ValueError(
                    f"A cell pass collected {u.shape[0]} values where the previous pass counted "
                    f"{b['count']}; the data changed between passes (or the row offsets are wrong)."
                )
            o = np.lexsort((g, u))
            for r, off in b["ranks"]:
                self._resolved[b["col"]][r] = (float(_from_bits(u[o[off]])), int(g[o[off]]))
        for slot, b in enumerate(hist):
            cnt, mn, mx = s["hist_count"][slot], s["hist_min"][slot], s["hist_max"][slot]
            if int(cnt.sum()) != b["count"]:
                raise ValueError(
                    f"A cell pass counted {int(cnt.sum())} values where the previous pass counted "
                    f"{b['count']}; the data changed between passes (or the row offsets are wrong)."
                )
            cum = np.cumsum(cnt)
            offs = np.array([off for _, off in b["ranks"]], dtype=np.int64)
            subs = np.searchsorted(cum, offs, side="right")
            for sub in np.unique(subs):
                start = int(cum[sub] - cnt[sub])
                rs = [(r, off - start) for (r, off), t in zip(b["ranks"], subs, strict=True) if t == sub]
                if b["mode"] == 1:
                    lo, hi = int(mn[sub]), int(mx[sub]) + 1
                    self._add_box(b["col"], lo, hi, b["g_lo"], b["g_hi"], int(cnt[sub]), rs)
                else:
                    g_lo = b["g_lo"] + int(sub) * b["width"]
                    g_hi = min(b["g_hi"], g_lo + b["width"])
                    self._add_box(b["col"], b["u_lo"], b["u_hi"], g_lo, g_hi, int(cnt[sub]), rs)

    # -- results ---------------------------------------------------------------------------
    def result(self):
        """Return the exact bins: percentile edges, or ``(values, indices)`` thresholds.

        Returns
        -------
        ndarray or tuple of ndarray
            ``"percentile"``: the ``n_bins + 1`` edges (equal to ``np.percentile`` bitwise).
            ``"top_label"``: thresholds ``(values, indices)`` of shape ``(n_bins - 1,)``;
            ``"classwise"``: of shape ``(k, n_bins - 1)``. A threshold of a bin left empty
            (``n < n_bins``) is ``(inf, 0)``.
        """
        if not self.done:
            raise RuntimeError("The passes are not finished; call next_statistics() / advance() until done.")
        n = self.n_rows_
        if self.kind == "percentile":
            return percentile_edges({r: v for r, (v, _) in self._resolved[0].items()}, n, self.n_bins)
        ranks = boundary_ranks(n, self.n_bins)
        k = len(self._resolved)
        tv = np.full((k, ranks.size), np.inf)
        tg = np.zeros((k, ranks.size), dtype=np.int64)
        for j in range(k):
            for i, r in enumerate(ranks):
                if r < n:
                    tv[j, i], tg[j, i] = self._resolved[j][int(r)]
        if self.kind == "top_label":
            return tv[0], tg[0]
        return tv, tg

    def make_statistics(self, **kwargs):
        """Return the measure's empty statistics object with the exact quantile bins.

        Parameters
        ----------
        **kwargs : dict
            Further constructor arguments (``measure``, ``pos_label`` or ``labels``).

        Returns
        -------
        BaseStatistics
            :class:`~skcal.stats.BinnedStatistics` with ``edges=`` (``"percentile"``), or
            :class:`~skcal.stats.TopLabelStatistics` / :class:`~skcal.stats.ClasswiseStatistics`
            with ``thresholds=`` (update those with each chunk's ``row_offset``).
        """
        bins = self.result()
        if self.kind == "percentile":
            return BinnedStatistics(edges=bins, **kwargs)
        klass = TopLabelStatistics if self.kind == "top_label" else ClasswiseStatistics
        kwargs.setdefault("labels", self.labels)
        return klass(thresholds=bins, **kwargs)


def _run(selector, chunks):
    while (st := selector.next_statistics()) is not None:
        offset = 0
        for chunk in chunks():
            st.update(chunk[0], chunk[1], row_offset=offset)
            offset += len(chunk[1])
        selector.advance(st)
    return selector.result()


_PASSES = {
    "chunks": [callable],
    "n_bins": N_BINS,
    "n_cells": _N_CELLS,
    "n_sub": _N_SUB,
    "max_collect": POSITIVE_INT,
}


@validate_params({**_PASSES, "pos_label": POS_LABEL}, prefer_skip_nested_validation=True)
def quantile_edges(chunks, n_bins, *, pos_label=None, n_cells=4096, n_sub=1024, max_collect=1 << 20):
    """Compute scikit-learn's quantile edges of chunked binary predictions exactly, by a few passes.

    Equal bitwise to ``np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)`` on all rows (the
    edges of ``binned_ece(..., strategy="quantile")``), without holding the rows in memory.

    Parameters
    ----------
    chunks : callable
        ``chunks()`` returns a fresh iterable of ``(y, p)`` (or ``(y, p, w)``) chunks, the same
        rows in the same order every time (one call per pass).
    n_bins : int
        Number of bins.
    pos_label : int, float, bool or str, default=None
        Positive class of binary labels.
    n_cells : int, default=4096
        Cells of the first-pass histogram (a power of two).
    n_sub : int, default=1024
        Sub-cells of a refinement.
    max_collect : int, default=1048576
        Most values collected in one pass.

    Returns
    -------
    ndarray of shape (n_bins + 1,)
        The edges, for :class:`~skcal.stats.BinnedStatistics` ``(edges=...)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import quantile_edges
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500); y = (rng.uniform(size=500) < p).astype(int)
    >>> e = quantile_edges(lambda: ((y[a : a + 64], p[a : a + 64]) for a in range(0, 500, 64)), 10)
    >>> bool(np.array_equal(e, np.percentile(p, np.linspace(0, 1, 11) * 100)))
    True
    """
    sel = QuantileSelector(
        kind="percentile", n_bins=n_bins, pos_label=pos_label, n_cells=n_cells, n_sub=n_sub,
        max_collect=max_collect,
    )
    return _run(sel, chunks)


@validate_params(
    {**_PASSES, "labels": ["array-like"], "kind": [StrOptions({"top_label", "classwise"})]},
    prefer_skip_nested_validation=True,
)
def quantile_thresholds(
    chunks, n_bins, *, labels, kind="top_label", n_cells=4096, n_sub=1024, max_collect=1 << 20
):
    """Find the equal-mass bins of the truthful measures over chunked data exactly, by a few passes.

    The bins of :func:`skcal.binning.assign_bins` (``strategy="quantile"``: ranks by
    ``(value, row index)``, ``array_split`` sizes) on all rows, as ``(value, global index)``
    thresholds; :class:`~skcal.stats.TopLabelStatistics` / ``ClasswiseStatistics``
    ``(thresholds=...)`` updated with each chunk's ``row_offset`` then reproduce the in-memory
    bins, and :func:`threshold_bin_ids` gives the ids.

    Parameters
    ----------
    chunks : callable
        ``chunks()`` returns a fresh iterable of ``(y, P)`` (or ``(y, P, w)``) chunks, the same
        rows in the same order every time; the global index of a row is its position.
    n_bins : int
        Number of bins.
    labels : array-like of shape (k,)
        Class labels in column order.
    kind : {"top_label", "classwise"}, default="top_label"
        Bins of the top-label confidence (ConfCE^corr, ConfCE, ConfECE) or of every class column
        (classwise LinCE and ECE).
    n_cells : int, default=4096
        Cells of the first-pass histogram (a power of two).
    n_sub : int, default=1024
        Sub-cells of a refinement.
    max_collect : int, default=1048576
        Most values collected in one pass.

    Returns
    -------
    tuple of ndarray
        ``(values, indices)``, of shape ``(n_bins - 1,)`` (top label) or ``(k, n_bins - 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import quantile_thresholds
    >>> from skcal.stats._quantile import threshold_bin_ids
    >>> from skcal.binning import assign_bins
    >>> P = np.array([[0.6, 0.4], [0.5, 0.5], [0.5, 0.5], [0.9, 0.1], [0.7, 0.3]]); y = [0, 1, 0, 0, 1]
    >>> chunks = lambda: ((y[a : a + 2], P[a : a + 2]) for a in range(0, 5, 2))
    >>> tv, tg = quantile_thresholds(chunks, 3, labels=[0, 1])
    >>> c = P.max(axis=1)
    >>> threshold_bin_ids(c, np.arange(5), tv, tg).tolist() == assign_bins(c, 3).tolist()
    True
    """
    sel = QuantileSelector(
        kind=kind, n_bins=n_bins, labels=labels, n_cells=n_cells, n_sub=n_sub, max_collect=max_collect
    )
    return _run(sel, chunks)
