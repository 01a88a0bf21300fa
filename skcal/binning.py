"""Binning rules that look at predictions only.

The binning rules of *Truthful Calibration Errors for Multi-Class Prediction*.

A binning rule maps the values a predictor reports (never the labels) to integer bin ids. The
truthful calibration errors of :mod:`skcal.truthful` stay truthful for *any* such rule, because
the bins are then fixed given the reports, so the expected error splits into a bias term that
vanishes for honest reports and a variance term that the reports cannot influence.

Three rules are provided:

``"uniform"``
    Equal-width bins on [0, 1] with the edges ``np.linspace(0, 1, n_bins + 1)`` and
    scikit-learn's right-closed rule (the rule of :func:`sklearn.calibration.calibration_curve`,
    ``np.searchsorted(edges[1:-1], v)``): bin ``j`` is ``(edges[j], edges[j + 1]]``, except the
    first, which is closed, ``[0, edges[1]]``. A value exactly on an inner edge therefore goes
    to the bin on its *left*, and ``0.0`` belongs to the first bin. Values outside [0, 1] are
    rejected. Every binned measure of skcal uses this rule.
``"quantile"``
    Equal mass by sorted order, ties broken by index: order the values by ``(value, index)``
    (a stable sort), and cut the sorted positions ``0..n-1`` into ``n_bins`` contiguous groups
    whose sizes differ by at most one. As in :func:`numpy.array_split`, the first
    ``n % n_bins`` groups (those holding the smallest values) receive one extra sample. When
    ``n < n_bins`` the first ``n`` bins hold one sample each and the rest are empty. Tied values
    may therefore fall into different bins; which one depends only on their index. No edge rule
    is involved: the bins are defined by ranks.
callable
    ``f(values, n_bins) -> ids`` returning one non-negative integer per value. The ids are used
    as they are (they need not be below ``n_bins`` or contiguous).

The quantile rule runs in expected linear time without a full sort: one histogram pass over
16384 equal-width cells of ``[min, max]`` finds the cells that hold a bin boundary; every other
cell lies inside one bin, and only the values in boundary cells are ordered (recursively by the
same histogram when a boundary cell is large, by index alone when it holds one tied value, and
by a stable sort of the few remaining values). The result is exactly the stable-sort result.
Memory is linear in ``n``.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import BINNING_RULE, N_BINS, NON_NEGATIVE_INT, POSITIVE_INT
from skcal._validation import as_float_array, reject_nonfinite

__all__ = [
    "BINNING_STRATEGIES",
    "assign_bins",
    "column_bin_ids",
    "hat_deposit",
    "hat_neighbours",
    "iter_columns",
    "quantile_bin_starts",
    "rank_to_bin",
    "right_closed_bin_ids",
    "threshold_bin_ids",
    "uniform_bin_edges",
    "uniform_bin_ids",
]

#: Names of the built-in binning rules.
BINNING_STRATEGIES = ("uniform", "quantile")

#: Number of histogram cells per pass of the linear-time quantile rule.
_N_CELLS = 16384
#: Subsets at most this large are ordered by a stable sort instead of a histogram pass.
_SMALL = 1 << 15
#: Deepest histogram recursion before falling back to a stable sort of a boundary cell.
_MAX_DEPTH = 6


@validate_params({"n_bins": N_BINS}, prefer_skip_nested_validation=True)
def uniform_bin_edges(n_bins):
    """Return the ``n_bins + 1`` edges of the uniform rule, ``np.linspace(0, 1, n_bins + 1)``.

    Parameters
    ----------
    n_bins : int
        Number of bins (>= 1).

    Returns
    -------
    ndarray of shape (n_bins + 1,)
        The edges; bin ``j`` is ``(edges[j], edges[j + 1]]`` (the first bin also holds 0).

    Examples
    --------
    >>> from skcal.binning import uniform_bin_edges
    >>> uniform_bin_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return np.linspace(0.0, 1.0, int(n_bins) + 1)


@validate_params({"values": ["array-like"], "n_cells": N_BINS}, prefer_skip_nested_validation=True)
def hat_neighbours(values, n_cells):
    """Left node and right-node weight of each value on the grid ``{0, 1/m, ..., 1}``.

    The hat (triangular) functions ``w_i(v) = max(0, 1 - |m v - i|)``, ``i = 0..m``, of the
    uniform grid with ``m = n_cells`` cells are non-zero at two nodes at most: ``lo`` with weight
    ``1 - frac`` and ``lo + 1`` with weight ``frac``. ``v = 1`` sits at ``frac = 1`` of the last
    cell. This is the one place skcal computes them (SCDL's soft bins, the rounding of
    :class:`~skcal.rounding.SoftBinRounder`, the smoothing grid of the reliability diagram).

    Parameters
    ----------
    values : ndarray of shape (n,)
        Values in [0, 1] (not checked: callers validate their inputs).
    n_cells : int
        Number of cells ``m >= 1`` (the grid has ``m + 1`` nodes).

    Returns
    -------
    lo : ndarray of intp, shape (n,)
        Left node, in ``0..m-1``.
    frac : ndarray of float64, shape (n,)
        Weight of the node ``lo + 1``, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.binning import hat_neighbours
    >>> lo, frac = hat_neighbours(np.array([0.0, 0.3, 1.0]), 4)
    >>> lo.tolist(), np.round(frac, 6).tolist()
    ([0, 1, 3], [0.0, 0.2, 1.0])
    """
    t = values * n_cells
    lo = np.minimum(t.astype(np.intp), n_cells - 1)
    return lo, t - lo


@validate_params(
    {"values": ["array-like"], "n_cells": N_BINS, "weights": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def hat_deposit(values, n_cells, weights=None):
    """Deposit weights on the ``n_cells + 1`` nodes of ``{0, 1/m, ..., 1}`` by the hat functions.

    Node ``i`` receives ``sum_n weights[..., n] * max(0, 1 - |m values[n] - i|)``: each value
    splits its weight between its two neighbouring nodes in proportion to its distance from
    them, so the deposit preserves the total weight and its first moment. One
    :func:`numpy.bincount` does all of it, also for a stack of weight rows (one per bootstrap
    replicate, or one per quantity: for example ``[w, w * y]``), whose ids are offset by row.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Values in [0, 1] (not checked: callers validate their inputs).
    n_cells : int
        Number of cells ``m >= 1``.
    weights : ndarray of shape (n,) or (r, n), default=None
        The weights to deposit; ``None`` deposits unit weights. Each row of a 2-D array is
        deposited separately.

    Returns
    -------
    ndarray of shape (m + 1,) or (r, m + 1)
        The node masses (float64).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.binning import hat_deposit
    >>> hat_deposit(np.array([0.0, 0.3, 1.0]), 4).round(6).tolist()
    [1.0, 0.8, 0.2, 0.0, 1.0]
    >>> hat_deposit(np.array([0.25, 0.5]), 2, np.array([[1.0, 1.0], [0.0, 2.0]])).round(6).tolist()
    [[0.5, 1.5, 0.0], [0.0, 2.0, 0.0]]
    """
    lo, frac = hat_neighbours(values, n_cells)
    size = n_cells + 1
    if weights is None:
        hi = frac
        low = 1.0 - frac
        ids = lo
        rows = 1
    else:
        weights = np.asarray(weights, dtype=np.float64)
        hi = weights * frac
        low = weights - hi
        rows = 1 if weights.ndim == 1 else weights.shape[0]
        ids = lo if weights.ndim == 1 else lo + (np.arange(rows, dtype=np.intp) * size)[:, None]
    # two bincounts (left and right node) rather than one over concatenated ids: no 2n copies
    ids = np.ravel(ids)
    out = np.bincount(ids, weights=np.ravel(low), minlength=rows * size)
    out[1:] += np.bincount(ids, weights=np.ravel(hi), minlength=rows * size)[: rows * size - 1]
    return out if weights is None or weights.ndim == 1 else out.reshape(rows, size)


@validate_params({"values": ["array-like"], "edges": ["array-like"]}, prefer_skip_nested_validation=True)
def right_closed_bin_ids(values, edges):
    """Right-closed bin of each value: ``np.searchsorted(edges[1:-1], values)``.

    Bin ``j`` is ``(edges[j], edges[j + 1]]`` and the first bin also holds ``edges[0]``; values
    below the first edge go to the first bin, values above the last edge to the last bin (the
    rule of ``sklearn.calibration.calibration_curve`` and of every binned measure of skcal).

    Parameters
    ----------
    values : ndarray of float
        The values (not checked).
    edges : ndarray of shape (n_bins + 1,)
        Non-decreasing edges (see :func:`skcal._validation.check_bin_edges`).

    Returns
    -------
    ndarray of intp
        Bin ids in ``range(n_bins)``, of the shape of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> right_closed_bin_ids(np.array([0.0, 0.5, 0.6]), np.array([0.0, 0.5, 1.0])).tolist()
    [0, 0, 1]
    """
    return np.searchsorted(edges[1:-1], values, side="left").astype(np.intp, copy=False)


@validate_params(
    {"values": ["array-like"], "n_bins": N_BINS, "name": [str]}, prefer_skip_nested_validation=True
)
def uniform_bin_ids(values, n_bins, name="values"):
    """Bin ids of the ``"uniform"`` rule: :func:`right_closed_bin_ids` on ``linspace(0, 1, n_bins + 1)``.

    Computed without a search (a few times faster), and equal to the search exactly.

    Parameters
    ----------
    values : ndarray of float
        Finite values in [0, 1]; a value outside is an error naming ``name``.
    n_bins : int
        Number of bins (>= 1).
    name : str, default="values"
        The argument's name in the error message.

    Returns
    -------
    ndarray of intp
        Bin ids in ``range(n_bins)``, of the shape of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> uniform_bin_ids(np.array([0.0, 0.5, 0.51, 1.0]), 2).tolist()
    [0, 0, 1, 1]
    """
    if values.size and (values.min() < 0.0 or values.max() > 1.0):
        raise ValueError(
            f'strategy="uniform" bins [0, 1], so {name} must lie in [0, 1]; got values in '
            f'[{values.min():.6g}, {values.max():.6g}]. Use strategy="quantile" or a callable.'
        )
    edges = uniform_bin_edges(n_bins)
    if n_bins == 1:
        return np.zeros(values.shape, dtype=np.intp)
    # ceil(v * n_bins) - 1 is the right-closed bin up to one ulp; two exact corrections against
    # the linspace edges make it equal to np.searchsorted(edges[1:-1], v) (a few times faster).
    ids = np.ceil(values * n_bins).astype(np.intp)
    ids -= 1
    np.clip(ids, 0, n_bins - 1, out=ids)
    ids -= (values <= edges[ids]) & (ids > 0)
    ids += (values > edges[ids + 1]) & (ids < n_bins - 1)
    return ids


@validate_params(
    {"ranks": ["array-like"], "n": NON_NEGATIVE_INT, "n_bins": N_BINS}, prefer_skip_nested_validation=True
)
def rank_to_bin(ranks, n, n_bins):
    """Map sorted positions ``0..n-1`` to the equal-mass bins of ``np.array_split`` sizes.

    The first ``n % n_bins`` bins hold one position more (see the ``"quantile"`` rule).

    Parameters
    ----------
    ranks : array-like of int
        Positions in ``0..n-1``.
    n : int
        Number of values.
    n_bins : int
        Number of bins.

    Returns
    -------
    ndarray of intp
        The bin of each position.

    Examples
    --------
    >>> rank_to_bin([0, 1, 2, 3, 4], 5, 2).tolist()
    [0, 0, 0, 1, 1]
    """
    ranks = np.asarray(ranks, dtype=np.intp)
    q, rem = divmod(n, n_bins)
    if q == 0:
        return ranks.copy()
    big = rem * (q + 1)  # positions covered by the first `rem` groups of size q + 1
    return np.where(ranks < big, ranks // (q + 1), rem + (ranks - big) // q)


def _put(ids, sel, vals):
    if sel is None:
        ids[:] = vals
    else:
        ids[sel] = vals


def _assign_quantile(v, sel, r0, ids, n, n_bins, depth):
    """Write the quantile ids of the subset ``v`` (values in index order, global ranks from r0)."""
    m = v.shape[0]
    if m == 0:
        return
    lo, hi = v.min(), v.max()
    if lo == hi:  # one tied value: index order is the sorted order
        _put(ids, sel, rank_to_bin(np.arange(r0, r0 + m), n, n_bins))
        return
    span = float(hi) - float(lo)
    scale = _N_CELLS / span if np.isfinite(span) and span > 0 else np.inf
    if m <= _SMALL or depth >= _MAX_DEPTH or not np.isfinite(scale):
        order = np.argsort(v, kind="stable")
        ranks = np.empty(m, dtype=np.intp)
        ranks[order] = np.arange(r0, r0 + m)
        _put(ids, sel, rank_to_bin(ranks, n, n_bins))
        return
    key = _cell_keys(v, lo, scale)
    cnt = np.bincount(key, minlength=_N_CELLS)
    start, cellbin = _cell_table(cnt, r0, n, n_bins)
    sub = cellbin[key.astype(np.intp)]  # gathering with an intp index is much faster than uint16
    _put(ids, sel, sub)
    midx = np.flatnonzero(sub < 0)  # members of boundary cells, in index order
    if midx.size:
        gidx = midx if sel is None else sel[midx]
        _finish_cells(v[midx], gidx, key[midx], start, cnt, ids, n, n_bins, depth)


def _cell_keys(v, lo, scale, cells=None):
    """``floor((v - lo) * scale)`` as uint16, clipped to the last cell (non-decreasing in v)."""
    cells = _N_CELLS if cells is None else cells
    key = v - lo
    key *= scale
    key = key.astype(np.uint16)  # _N_CELLS <= 2**16; much faster than a float -> int64 cast
    np.minimum(key, cells - 1, out=key)
    return key


def _cell_table(cnt, r0, n, n_bins):
    """First global rank of every cell, and its bin (-1 where the cell straddles a boundary)."""
    start = np.empty(cnt.shape[0], dtype=np.intp)
    start[0] = r0
    np.cumsum(cnt[:-1], out=start[1:])
    start[1:] += r0
    first = rank_to_bin(start, n, n_bins)
    last = rank_to_bin(np.maximum(start + cnt - 1, start), n, n_bins)
    return start, np.where((first != last) & (cnt > 0), -1, first)


def _finish_cells(vals, gidx, gkey, start, cnt, ids, n, n_bins, depth):
    """Exact ids of the members of boundary cells (values ``vals`` in index order).

    Large cells are refined by another histogram pass; the others are ordered together by one
    stable sort: cells are disjoint value intervals, so it orders each cell's members by
    ``(value, index)`` contiguously, the cells in key order.
    """
    big_cell = cnt > _SMALL
    big = big_cell[gkey]
    if big.any():
        for c in np.unique(gkey[big]):
            mask = gkey == c
            _assign_quantile(vals[mask], gidx[mask], int(start[c]), ids, n, n_bins, depth + 1)
        keep = ~big
        vals, gidx, gkey = vals[keep], gidx[keep], gkey[keep]
    if gidx.size == 0:
        return
    order = np.argsort(vals, kind="stable")
    skey = gkey[order]
    gcnt = np.bincount(gkey, minlength=cnt.shape[0])
    goff = np.cumsum(gcnt) - gcnt
    ranks = np.empty(gidx.shape[0], dtype=np.intp)
    ranks[order] = start[skey] + np.arange(gidx.shape[0]) - goff[skey]
    _put(ids, gidx, rank_to_bin(ranks, n, n_bins))


def _quantile_ids_1d(values, n_bins):
    """Linear-time quantile ids of a 1-D array, equal to the stable-sort ids."""
    n = values.shape[0]
    ids = np.empty(n, dtype=np.intp)
    if n_bins == 1:
        ids[:] = 0
        return ids
    _assign_quantile(values, None, 0, ids, n, n_bins, 0)
    return ids


def _callable_ids(strategy, values, n_bins):
    n = values.shape[0]
    ids = strategy(values.copy(), n_bins)
    ids = np.asarray(ids)
    if ids.shape != (n,):
        raise ValueError(
            f"The binning callable must return one bin id per value (shape ({n},)); got shape {ids.shape}."
        )
    if ids.dtype.kind == "b" or ids.dtype.kind not in "iuf":
        raise ValueError(f"The binning callable must return integer bin ids; got dtype {ids.dtype}.")
    if ids.dtype.kind == "f":
        if not np.isfinite(ids).all() or (ids != np.round(ids)).any():
            raise ValueError("The binning callable must return integer bin ids; got non-integer floats.")
    if ids.min() < 0:
        raise ValueError(
            f"The binning callable must return non-negative bin ids; got a minimum of {ids.min()}."
        )
    return ids.astype(np.intp)


@validate_params(
    {"col": ["array-like"], "n_bins": N_BINS, "strategy": BINNING_RULE, "name": [str]},
    prefer_skip_nested_validation=True,
)
def column_bin_ids(col, n_bins, strategy, name):
    """Bin ids of one contiguous 1-D column under a rule already validated by the caller.

    :func:`assign_bins` without its checks, for callers that have validated the values (finite
    floats) and the rule.

    Parameters
    ----------
    col : ndarray of float64 of shape (n,)
        The values (contiguous; the ``"quantile"`` rule reads them, a callable gets a copy).
    n_bins : int
        Number of bins (>= 1).
    strategy : {"quantile", "uniform"} or callable
        The rule (see the module docstring).
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray of intp of shape (n,)
        Bin ids.

    Examples
    --------
    >>> import numpy as np
    >>> column_bin_ids(np.array([0.9, 0.1, 0.5]), 3, "quantile", "v").tolist()
    [2, 0, 1]
    """
    if callable(strategy):
        return _callable_ids(strategy, col, n_bins)
    if strategy == "uniform":
        return uniform_bin_ids(col, n_bins, name)
    return _quantile_ids_1d(col, n_bins)


@validate_params({"V": ["array-like"], "block": POSITIVE_INT}, prefer_skip_nested_validation=True)
def iter_columns(V, block=16):
    """Yield ``(j, contiguous copy of V[:, j])`` for every column, reading ``block`` columns per pass.

    The columns are transposed in cache-sized tiles, so that no ``(k, n)`` copy of ``V`` exists
    at once (peak memory: ``block`` columns).

    Parameters
    ----------
    V : ndarray of shape (n, k)
        The matrix.
    block : int, default=16
        Columns read per pass over the rows.

    Yields
    ------
    j : int
        The column index.
    column : ndarray of shape (n,)
        A contiguous copy of ``V[:, j]`` (a row of a fresh block buffer: the caller may
        modify it, for example sort it in place).

    Examples
    --------
    >>> import numpy as np
    >>> [c.tolist() for _, c in iter_columns(np.array([[1.0, 2.0], [3.0, 4.0]]))]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    n, k = V.shape
    rows = 8192
    for j0 in range(0, k, block):
        j1 = min(k, j0 + block)
        B = np.empty((j1 - j0, n), dtype=V.dtype)
        for s in range(0, n, rows):  # transpose in cache-sized tiles (much faster than one .T copy)
            B[:, s : s + rows] = V[s : s + rows, j0:j1].T
        for jj in range(B.shape[0]):
            yield j0 + jj, B[jj]


def _ids_2d(V, n_bins, strategy, name, dtype=np.intp, rows=None):
    """Bin ids of every column of ``V`` (n, k) under a validated rule, as ``dtype``."""
    n, k = V.shape
    out = np.empty((n, k), dtype=dtype)
    chunk = rows or max(256, (1 << 20) // k)
    if callable(strategy):
        for j, col in iter_columns(V):
            out[:, j] = _callable_ids(strategy, col, n_bins)
    elif strategy == "uniform":
        if V.min() < 0.0 or V.max() > 1.0:
            uniform_bin_ids(V, n_bins, name)  # raises
        for s in range(0, n, chunk):
            out[s : s + chunk] = uniform_bin_ids(V[s : s + chunk], n_bins, name)
    else:
        # column by column (read in blocks of 16 columns): the 1-D rule refines each column's
        # dense cells on their own range, which the chunked row-major histogram of
        # _quantile_ids_2d cannot do (it is far slower on skewed columns such as softmax outputs)
        buf = {}
        for j, col in iter_columns(V):
            buf[j] = _quantile_ids_1d(col, n_bins)
            if len(buf) == 8 or j == k - 1:  # write 8 columns at once (row-major output)
                j0 = min(buf)
                out[:, j0 : j + 1] = np.stack([buf[i] for i in range(j0, j + 1)], axis=1)
                buf = {}
    return out


@validate_params(
    {
        "values": ["array-like"],
        "n_bins": N_BINS,
        "strategy": BINNING_RULE,
        "name": [str],
    },
    prefer_skip_nested_validation=True,
)
def assign_bins(values, n_bins=15, strategy="quantile", *, name="values"):
    """Assign each value to a bin with a rule that sees the values only.

    Parameters
    ----------
    values : array-like of shape (n,) or (n, m)
        The reported values to bin (for example top-label confidences). A 2-D array is binned
        column by column, each column on its own (used for classwise errors).
    n_bins : int, default=15
        Number of bins, from 1 to ``2**24``. It may exceed the number of values (bins are
        then empty).
    strategy : {"quantile", "uniform"} or callable, default="quantile"
        The binning rule; see the module docstring for the exact edge and remainder
        conventions. ``"uniform"`` is right-closed like scikit-learn's ``calibration_curve``:
        a value on an inner edge goes to the bin on its left and 0 to the first bin. A
        callable is called as ``strategy(values_1d, n_bins)`` (once per column for 2-D input)
        and must return one non-negative integer per value.
    name : str, default="values"
        Name used in error messages.

    Returns
    -------
    ndarray of intp, same shape as ``values``
        Bin ids. For the built-in rules they lie in ``range(n_bins)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.binning import assign_bins
    >>> assign_bins([0.0, 0.2, 0.5, 0.51, 1.0], n_bins=2, strategy="uniform").tolist()
    [0, 0, 0, 1, 1]
    >>> assign_bins([0.9, 0.1, 0.5, 0.5, 0.3], n_bins=2, strategy="quantile").tolist()
    [1, 0, 0, 1, 0]
    """
    n_bins = int(n_bins)
    v = as_float_array(values, name, ndim=(1, 2))
    reject_nonfinite(v, name)
    if v.ndim == 1:
        return column_bin_ids(v, n_bins, strategy, name)
    return _ids_2d(v, n_bins, strategy, name)


@validate_params(
    {
        "values": ["array-like"],
        "index": ["array-like"],
        "thr_values": ["array-like"],
        "thr_index": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def threshold_bin_ids(values, index, thr_values, thr_index):
    """Assign each row the number of ``(value, index)`` thresholds at or below it (its bin).

    Row ``i`` goes to bin ``#{j : (thr_values[j], thr_index[j]) <= (values[i], index[i])}``
    (lexicographic order). With the thresholds taken at the boundary ranks of the stable sort
    by ``(value, index)``, these are the equal-mass ids of :func:`skcal.binning.assign_bins`.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    index : ndarray of int of shape (n,)
        The rows' global indices.
    thr_values : ndarray of shape (m,)
        Threshold values, lexicographically sorted together with ``thr_index`` (``+inf`` for a
        threshold no row reaches).
    thr_index : ndarray of int of shape (m,)
        Threshold indices (non-negative).

    Returns
    -------
    ndarray of intp of shape (n,)
        Bin ids in ``range(m + 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.binning import threshold_bin_ids
    >>> threshold_bin_ids(np.array([0.5, 0.5, 0.2]), np.arange(3), np.array([0.5]), np.array([1])).tolist()
    [0, 1, 0]
    """
    tv = np.asarray(thr_values, dtype=np.float64)
    tg = np.asarray(thr_index, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if tv.size == 0:
        return np.zeros(v.shape[0], dtype=np.intp)
    # thresholds with a smaller value: all rows but those tied with a threshold value are done
    ids = _count_below(tv, v)
    tied = np.flatnonzero(tv[np.minimum(ids, tv.shape[0] - 1)] == v)
    if tied.size:
        # among the thresholds of the tied value (a run of tv), those with index <= the row's:
        # one search over the keys run * M + index, lexicographic in (value, index)
        _, run = np.unique(tv, return_inverse=True)
        M = int(tg.max()) + 2  # row indices are clipped to M - 1, above every threshold index
        comp = run.astype(np.int64) * M + tg
        g = np.minimum(np.asarray(index, dtype=np.int64)[tied], M - 1)
        ids[tied] = np.searchsorted(comp, run[ids[tied]].astype(np.int64) * M + g, side="right")
    return ids


#: Up to this many thresholds, :func:`_count_below` counts by comparisons instead of a search.
_COUNT_BELOW_MAX = 64


def _count_below(sorted_values, v):
    """``#{j : sorted_values[j] < v[i]}`` per row, as ``np.searchsorted(sorted_values, v)`` gives it.

    For a few thresholds, one vectorised comparison per threshold summed into a ``uint8``
    counter is several times faster than the binary search (whose branches a CPU mispredicts
    on unsorted keys); the counts are the same integers (``sorted_values`` non-decreasing). A NaN
    (which the search orders last) or many thresholds take the search.
    """
    m = sorted_values.shape[0]
    if m > _COUNT_BELOW_MAX or np.isnan(sorted_values).any() or np.isnan(v).any():
        return np.searchsorted(sorted_values, v, side="left").astype(np.intp, copy=False)
    count = np.zeros(v.shape[0], dtype=np.uint8)
    below = np.empty(v.shape[0], dtype=bool)
    for t in sorted_values.tolist():
        np.greater(v, t, out=below)
        count += below
    return count.astype(np.intp)


@validate_params(
    {"values": ["array-like"], "ids": ["array-like"], "n_bins": N_BINS}, prefer_skip_nested_validation=True
)
def quantile_bin_starts(values, ids, n_bins):
    """The row of the first ``(value, index)`` of each bin but the first, from quantile ids.

    With ``ids`` the ``"quantile"`` ids of ``values`` (:func:`assign_bins`), bin ``b`` is a run
    of the stable order by ``(value, index)``; its first row is the lowest-index row holding the
    bin's smallest value. These rows at their values are the ``(value, index)`` thresholds with
    which :func:`threshold_bin_ids` gives ``ids`` again: one pass for the bins' minima and one
    for the rows holding them, instead of a selection of the boundary ranks.

    Parameters
    ----------
    values : ndarray of float64 of shape (n,)
        The binned values (finite).
    ids : ndarray of int of shape (n,)
        Their quantile ids for ``n_bins`` bins.
    n_bins : int
        Bins, at most ``n`` (so that none is empty).

    Returns
    -------
    ndarray of intp of shape (n_bins - 1,)
        The first row of bins ``1 .. n_bins - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([0.5, 0.1, 0.5, 0.5, 0.9, 0.2])
    >>> quantile_bin_starts(v, assign_bins(v, 3), 3).tolist()
    [0, 3]
    """
    values = np.asarray(values, dtype=np.float64)
    ids = np.asarray(ids)
    n_bins = int(n_bins)
    if values.ndim != 1 or ids.shape != values.shape or (ids.size and ids.dtype.kind not in "iu"):
        raise ValueError(
            f"values and ids must be 1-d arrays of the same length, ids integers; got shapes {values.shape} "
            f"and {ids.shape}, ids of dtype {ids.dtype}."
        )
    if n_bins > values.shape[0]:
        raise ValueError(f"n_bins must be at most the number of values ({values.shape[0]}); got {n_bins}.")
    if ids.size and (ids.min() < 0 or ids.max() >= n_bins):
        raise ValueError(f"ids must be bin ids in 0..n_bins - 1 = {n_bins - 1}.")
    ids = ids.astype(np.intp, copy=False)
    lowest = np.full(n_bins, np.inf)
    np.minimum.at(lowest, ids, values)
    holders = np.flatnonzero(values == lowest[ids])  # increasing: the first per bin is its start
    _, first = np.unique(ids[holders], return_index=True)
    return holders[first[1:]]
