"""Compiled kernels of bootstrap replicates: the Poisson weights, running sums and smCE's isotonic costs.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.stats` (the weight stream of
:func:`skcal.stats.poisson_weights`, and the cutoff and KS replicates of
:func:`skcal.stats._cutoff.replicate_running_sum_error`), whose numpy paths compute the same values
(the same weights bit for bit; the same sums up to the order of floating-point additions) when
numba is missing, and by ``skcal.stats._lipschitz.isotonic_l1_costs`` (smCE and its replicates).

* :func:`poisson_weights` draws the Poisson(1) weights of a block of replicates and rows in one
  fused pass (SplitMix64, the table of the top 16 bits, the binary search of the few ambiguous
  slots); numpy makes about ten passes over a ``uint64`` array of the block's size.
* :func:`isotonic_l1_costs` runs the recursive partitioning of
  ``skcal.stats._lipschitz.isotonic_l1_costs`` one problem at a time, depth first, on a stack of
  segments; numpy runs every problem's segments of one recursion level together, with a dozen
  temporaries a level.

* :func:`weighted_abs_gaps` sums each replicate's weighted ``|clipped fit - target|`` of CE2's
  plug-in pass in one pass over the tile; numpy makes a clipped copy and a temporary per order.
* :func:`running_sum_extremes` walks the sums per distinct prediction of a block of replicates
  once, in row order, keeping each replicate's running sum and its largest and smallest value;
  numpy needs a cumulative sum along the value axis (strided for this layout).
"""

from __future__ import annotations

import numba
import numpy as np

# the compiled SplitMix64 of the calibration test's label stream (same layer, numba too)
from skcal._resampling_kernel import GAMMA, splitmix64

__all__ = [
    "fold_sorted_rows",
    "isotonic_l1_costs",
    "poisson_weights",
    "poisson_weights_by_row",
    "running_sum_extremes",
    "weighted_abs_gaps",
]


@numba.njit(nogil=True, cache=True)
def poisson_weights(keys, rows, table, thresholds):
    """Poisson(1) weights ``W[r, i]`` of rows ``rows`` in the streams ``keys`` (uint8).

    ``u = mix64(keys[r] + (rows[i] + 1) * 0x9E3779B97F4A7C15)``, then the weight is
    ``table[u >> 48]``, or, where the table holds 255 (a slot that a threshold splits), the number
    of ``thresholds`` at or below ``u``: :func:`skcal.stats.poisson_weights`'s stream.

    Parameters
    ----------
    keys : ndarray of uint64 of shape (R,)
        The replicates' keys (:func:`skcal.stats._bootstrap.replicate_keys`).
    rows : ndarray of int64 of shape (n,)
        Global row indices (non-negative).
    table : ndarray of uint8 of shape (65536,)
        The weight of each top-16-bit slot, 255 where a threshold splits the slot.
    thresholds : ndarray of uint64
        The Poisson(1) inversion thresholds, increasing.

    Returns
    -------
    ndarray of uint8 of shape (R, n)
    """
    R = keys.shape[0]
    n = rows.shape[0]
    out = np.empty((R, n), dtype=np.uint8)
    one = np.uint64(1)
    for r in range(R):
        k = keys[r]
        for i in range(n):
            z = splitmix64((np.uint64(rows[i]) + one) * GAMMA + k)
            t = table[z >> np.uint64(48)]
            if t == 255:
                t = np.searchsorted(thresholds, z, side="right")
            out[r, i] = t
    return out


@numba.njit(nogil=True, cache=True)
def poisson_weights_by_row(keys, rows, table, thresholds, out):
    """:func:`poisson_weights` written as ``out[i, r]`` (``(n, R)``): a row's weights side by side.

    The layout the report's blocks read (no transposed copy of the ``(R, n)`` array).
    """
    R = keys.shape[0]
    one = np.uint64(1)
    for i in range(rows.shape[0]):
        c = (np.uint64(rows[i]) + one) * GAMMA
        for r in range(R):
            z = splitmix64(c + keys[r])
            t = table[z >> np.uint64(48)]
            if t == 255:
                t = np.searchsorted(thresholds, z, side="right")
            out[i, r] = t


@numba.njit(nogil=True, cache=True)
def running_sum_extremes(resid):
    """Largest and smallest running sum of each column of ``resid`` (``(D, R)``, C order).

    Parameters
    ----------
    resid : ndarray of shape (D, R)
        Sums per distinct value (rows, in increasing order of the value) and replicate.

    Returns
    -------
    hi, lo : ndarray of shape (R,)
        ``max_d sum_{e <= d} resid[e, r]`` and the minimum (``-inf`` / ``inf`` when ``D = 0``).
    """
    D, R = resid.shape
    hi = np.full(R, -np.inf)
    lo = np.full(R, np.inf)
    run = np.zeros(R)
    for d in range(D):
        for r in range(R):
            s = run[r] + resid[d, r]
            run[r] = s
            if s > hi[r]:
                hi[r] = s
            if s < lo[r]:
                lo[r] = s
    return hi, lo


@numba.njit(nogil=True, cache=True)
def fold_sorted_rows(WT, r, ends, total, hi, lo):
    """Add rows sorted by prediction to every replicate's running sum; keep its extremes at run ends.

    Row ``i`` adds ``WT[i, j] r[i]`` to replicate ``j``'s running sum ``total[j]`` (in place); where
    ``ends[i]`` (the row ends a run of tied predictions), ``hi`` and ``lo`` take the running sum's
    maximum and minimum. The same additions, in the same order, as the numpy path of
    :class:`skcal.stats.SortedCutoffStatistics`' replicate plan.

    Parameters
    ----------
    WT : ndarray of shape (t, R)
        A tile's replicate weights, a row's ``R`` weights side by side (C order).
    r : ndarray of shape (t,)
        ``w (y - p)`` of the tile's rows.
    ends : ndarray of bool of shape (t,)
        Whether each row ends a run of tied predictions (and is not the chunk's last row).
    total, hi, lo : ndarray of shape (R,)
        The running sums and their extremes so far (modified in place).
    """
    t, R = WT.shape
    for i in range(t):
        ri = r[i]
        if ends[i]:
            for j in range(R):
                s = total[j] + WT[i, j] * ri
                total[j] = s
                hi[j] = max(hi[j], s)
                lo[j] = min(lo[j], s)
        else:
            for j in range(R):
                total[j] = total[j] + WT[i, j] * ri


@numba.njit(nogil=True, cache=True)
def isotonic_l1_costs(X, W):
    """Minimum of ``sum_i W[r, i] |X[r, i] - v_i|`` over non-decreasing ``v``, for every row ``r``.

    The recursive partitioning of ``skcal.stats._lipschitz.isotonic_l1_costs`` (Stout 2013): a segment
    of consecutive indices whose solution lies in the distinct values ``vals[lo..hi]`` of its row
    is split at ``mid = (lo + hi) // 2`` after the first prefix of least
    ``sum w (+1 if rank > mid else -1)`` (none when no prefix sum is negative); the prefix keeps
    ``vals[lo..mid]``, the rest ``vals[mid + 1..hi]``, and a segment with one value adds its cost.

    Parameters
    ----------
    X : ndarray of shape (R, n)
        The values, one problem per row.
    W : ndarray of shape (R, n)
        Positive weights (a broadcast view is fine).

    Returns
    -------
    ndarray of shape (R,)
    """
    R, n = X.shape
    cost = np.zeros(R)
    rank = np.empty(n, dtype=np.int64)
    vals = np.empty(n)
    # depth first, each split pushes two segments and pops one: depth <= log2(n) + 2
    cap = 2 * 66
    st_start = np.empty(cap, dtype=np.int64)
    st_len = np.empty(cap, dtype=np.int64)
    st_lo = np.empty(cap, dtype=np.int64)
    st_hi = np.empty(cap, dtype=np.int64)
    for r in range(R):
        x = X[r]
        w = W[r]
        order = np.argsort(x, kind="mergesort")
        nv = 0
        for j in range(n):
            v = x[order[j]]
            if nv == 0 or v != vals[nv - 1]:
                vals[nv] = v
                nv += 1
            rank[order[j]] = nv - 1
        if nv <= 1:
            continue  # one distinct value: cost 0
        st_start[0], st_len[0], st_lo[0], st_hi[0] = 0, n, 0, nv - 1
        top = 1
        acc = 0.0
        while top > 0:
            top -= 1
            s, ln, lo, hi = st_start[top], st_len[top], st_lo[top], st_hi[top]
            if ln == 0:
                continue
            if lo == hi:
                v = vals[lo]
                for j in range(s, s + ln):
                    acc += w[j] * abs(x[j] - v)
                continue
            mid = (lo + hi) // 2
            run = 0.0
            best = np.inf
            k = 0
            for j in range(s, s + ln):
                if rank[j] > mid:
                    run += w[j]
                else:
                    run -= w[j]
                if run < best:
                    best = run
                    k = j - s + 1
            if not best < 0.0:
                k = 0
            st_start[top], st_len[top], st_lo[top], st_hi[top] = s + k, ln - k, mid + 1, hi
            st_start[top + 1], st_len[top + 1], st_lo[top + 1], st_hi[top + 1] = s, k, lo, mid
            top += 2
        cost[r] = acc
    return cost


@numba.njit(nogil=True, cache=True)
def weighted_abs_gaps(E, targets, XT, out):
    """``out[k, r] += sum_i XT[i, r] |clip(E[i, k R + r], 0, 1) - targets[k, i]|`` in one pass.

    The plug-in term of CE2's replicates (:class:`skcal.stats.CE2PlugInStatistics`): ``E``
    ``(rows, order R)`` holds every replicate's fit at the rows, order by order, ``targets``
    ``(order, rows)`` the first and second moments of the scores, ``XT`` ``(rows, R)`` the
    replicates' weights; numpy needs the clipped array and a temporary per order.
    """
    t, R = XT.shape
    for k in range(targets.shape[0]):
        for i in range(t):
            g = targets[k, i]
            for r in range(R):
                e = min(max(E[i, k * R + r], 0.0), 1.0)
                out[k, r] += XT[i, r] * abs(e - g)
