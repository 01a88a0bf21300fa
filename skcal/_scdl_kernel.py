"""Compiled deposit of SCDL's soft bins: binary rows onto the hat functions of one grid, in one pass.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.stats` (SCDL's statistics,
:func:`skcal.stats._scdl.binary_node_deposit`), whose numpy path computes the same masses (up to the
order of floating-point additions) when numba is missing or the input is small.

* :func:`binary_cell_sums` walks the rows once: each row's left node ``lo`` on the grid of ``m``
  cells, offset by ``m + 1`` when its label is 1, receives its weight and its weight times the
  right node's share ``frac = m p - lo`` (numpy needs eight elementwise passes and two bincounts
  per chunk of rows for the same sums).
* :func:`scdl_grid_maxima` is ``SCDL_m = max_i SCFDL_{m,i}`` of every row of masses (the
  bootstrap replicates of SCDL's search), from the same difference arrays as
  :func:`skcal.stats.scfdl`, one row at a time, without the ``(R, m + 1)`` temporaries.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["binary_cell_sums", "scdl_grid_maxima", "scdl_of_rows", "scdl_search"]


@numba.njit(nogil=True, cache=True)
def binary_cell_sums(p, y, w, m, weighted):
    """Per offset cell, the total weight and the weight times ``frac`` (``2 (m + 1)`` cells each).

    Parameters
    ----------
    p : ndarray of shape (n,)
        Validated probabilities in [0, 1].
    y : ndarray of shape (n,)
        Labels in {0, 1} (int64 or float64: one compiled form each).
    w : ndarray of shape (n,)
        Weights (read only when ``weighted``).
    m : int
        The grid size.
    weighted : bool
        Whether ``w`` applies.

    Returns
    -------
    total, share : ndarray of shape (2 (m + 1),)
        The sums :func:`skcal.stats._scdl.binary_node_deposit` forms with its bincounts.
    """
    size = 2 * (m + 1)
    total = np.zeros(size)
    share = np.zeros(size)
    for i in range(p.shape[0]):
        t = p[i] * m
        lo = np.floor(t)
        if lo > m - 1:
            lo = m - 1.0
        frac = t - lo
        c = int(lo) + (m + 1) * int(y[i])
        wi = w[i] if weighted else 1.0
        total[c] += wi
        share[c] += wi * frac
    return total, share


@numba.njit(nogil=True, cache=True)
def scdl_grid_maxima(pi, a):
    """``max_i SCFDL_{m,i}`` of each row of ``(pi, a)``: :func:`skcal.stats.scfdl` then its row maxima.

    Row ``i`` gains ``a_j - pi_j (i + 1) / m`` from every bin ``j <= i`` with ``i < m q_j - 1``
    and ``pi_j i / m - a_j`` from every bin ``j > i`` with ``i > m q_j`` (``q_j = a_j / pi_j``):
    linear in ``i`` on an interval of rows per bin, so two difference arrays (constant and slope)
    and one running sum give every row; the same terms as the numpy function, added in another
    order (round-off).

    Parameters
    ----------
    pi, a : ndarray of shape (R, m + 1)
        Bin masses and ``pi_j q_j`` (one row per replicate), as ``masses_to_moments`` gives them.

    Returns
    -------
    ndarray of shape (R,)
        ``SCDL_m`` per row (at least 0).
    """
    R, m1 = a.shape
    m = m1 - 1
    out = np.empty(R)
    dc = np.empty(m1 + 1)
    ds = np.empty(m1 + 1)
    for r in range(R):
        dc[:] = 0.0
        ds[:] = 0.0
        for j in range(m1):
            pj = pi[r, j]
            if pj > 0:
                aj = a[r, j]
                mq = m * aj / pj
                s = pj / m
                stop_a = min(int(np.ceil(mq)) - 1, m + 1)
                if stop_a > j:  # rows j .. stop_a - 1
                    c = aj - s
                    dc[j] += c
                    dc[stop_a] -= c
                    ds[j] -= s
                    ds[stop_a] += s
                start_b = int(np.floor(mq)) + 1
                if start_b < j:  # rows start_b .. j - 1
                    dc[start_b] -= aj
                    dc[j] += aj
                    ds[start_b] += s
                    ds[j] -= s
        c = 0.0
        s = 0.0
        best = 0.0
        for i in range(m1):
            c += dc[i]
            s += ds[i]
            v = c + s * i
            if v > best:
                best = v
        out[r] = best
    return out


@numba.njit(nogil=True, cache=True)
def scdl_search(W, A, total, tie_rtol):
    """SCDL's dyadic search from the node masses ``W``, ``A`` on the finest grid ``M`` (``M + 1`` each).

    The arithmetic of the numpy search (:func:`skcal.stats._scdl._search`), operation for
    operation, so the value is the same bit for bit: the grids ``M, M/2, ..., 2`` folded as
    :func:`skcal.stats._scdl.coarsen` folds them, laid end to end in increasing order, their moments
    as :func:`skcal.stats._scdl.masses_to_moments` forms them, the difference arrays of
    ``_scfdl_levels`` (each of its four bincounts a sum in node order, combined in its order),
    one running sum over all grids less its value where each grid starts, each grid's maximum,
    the objective ``max(SCDL_m, 1/m)`` and the first grid within ``tie_rtol`` of the lowest.

    Returns
    -------
    scdl : float
        ``max(SCDL_{m*}, 1/m*)``.
    m_star : int
        The selected grid.
    scdl_m : float
        ``SCDL_{m*}``.
    """
    M = W.shape[0] - 1
    L = 0
    m = M
    while m >= 2:
        L += 1
        m //= 2
    grids = np.empty(L, np.int64)
    nstart = np.zeros(L + 1, np.int64)  # each grid's first node in the concatenation
    dbase = np.zeros(L + 1, np.int64)  # each grid's first entry of the difference arrays
    m = 2
    for k in range(L):
        grids[k] = m
        nstart[k + 1] = nstart[k] + m + 1
        dbase[k + 1] = dbase[k] + m + 2
        m *= 2
    nodes = nstart[L]
    size = dbase[L]
    Wl = np.empty(nodes)
    Al = np.empty(nodes)
    top = nstart[L - 1]
    for i in range(M + 1):
        Wl[top + i] = W[i]
        Al[top + i] = A[i]
    for k in range(L - 2, -1, -1):  # coarsen: node i = fine 2i, + half of 2i + 1, + half of 2i - 1
        h = grids[k]
        src = nstart[k + 1]
        dst = nstart[k]
        for i in range(h + 1):
            w_ = Wl[src + 2 * i]
            a_ = Al[src + 2 * i]
            if i < h:
                w_ += 0.5 * Wl[src + 2 * i + 1]
                a_ += 0.5 * Al[src + 2 * i + 1]
            if i > 0:
                w_ += 0.5 * Wl[src + 2 * i - 1]
                a_ += 0.5 * Al[src + 2 * i - 1]
            Wl[dst + i] = w_
            Al[dst + i] = a_
    # the four bincounts of the constant and of the slope, each in node order
    B1 = np.zeros(size)
    B2 = np.zeros(size)
    B3 = np.zeros(size)
    B4 = np.zeros(size)
    S1 = np.zeros(size)
    S2 = np.zeros(size)
    S3 = np.zeros(size)
    S4 = np.zeros(size)
    for k in range(L):
        m = grids[k]
        base = dbase[k]
        for j in range(m + 1):
            t = nstart[k] + j
            pj = Wl[t] / total
            aj = Al[t] / total
            if pj < 0.0:  # np.maximum(pi, 0)
                pj = 0.0
            if aj < 0.0:  # np.clip(a, 0, pi)
                aj = 0.0
            if aj > pj:
                aj = pj
            if not pj > 0:
                continue
            mq = m * aj
            mq /= pj
            pim = pj / m
            stop_a = min(int(np.ceil(mq)) - 1, m + 1)
            start_b = int(np.floor(mq)) + 1
            if stop_a > j:
                ca = aj - pim
                B1[base + j] += ca
                B2[base + stop_a] += ca
                S1[base + stop_a] += pim
                S2[base + j] += pim
            if start_b < j:
                B3[base + start_b] += aj
                B4[base + j] += aj
                S3[base + start_b] += pim
                S4[base + j] += pim
    C = np.zeros(size + 1)
    S = np.zeros(size + 1)
    c = 0.0
    s = 0.0
    for i in range(size):
        c = c + (((B1[i] - B2[i]) - B3[i]) + B4[i])
        s = s + (((S1[i] - S2[i]) + S3[i]) - S4[i])
        C[i + 1] = c
        S[i + 1] = s
    obj = np.empty(L)
    vals = np.empty(L)
    for k in range(L):
        m = grids[k]
        base = dbase[k]
        best = 0.0
        first = True
        for j in range(m + 1):
            at = base + j + 1
            v = C[at] - C[base]
            v += (S[at] - S[base]) * j
            if v < 0.0:
                v = 0.0
            if first or v > best:
                best = v
                first = False
        vals[k] = best
        inv = 1.0 / m
        obj[k] = best if best > inv else inv
    lowest = obj.min()
    tol = lowest + tie_rtol * max(lowest, 2.2250738585072014e-308)
    for k in range(L):
        if obj[k] <= tol:
            return obj[k], grids[k], vals[k]
    return obj[0], grids[0], vals[0]  # pragma: no cover - the minimum is within its own tolerance


@numba.njit(nogil=True, cache=True)
def scdl_of_rows(p, y, w, m, weighted, total, tie_rtol):
    """SCDL of validated rows in one compiled call: :func:`binary_cell_sums`, the fold of
    ``skcal.stats._scdl._fold_cell_sums`` and :func:`scdl_search` (``total``: the rows' total
    weight, summed by the caller), each with the numpy path's arithmetic."""
    cells, share = binary_cell_sums(p, y, w, m, weighted)
    m1 = m + 1
    W = np.empty(m1)
    A = np.empty(m1)
    for i in range(m1):
        o0 = cells[i] - share[i]
        o1 = cells[m1 + i] - share[m1 + i]
        if i > 0:
            o0 += share[i - 1]
            o1 += share[m1 + i - 1]
        W[i] = o0 + o1
        A[i] = o1
    return scdl_search(W, A, total, tie_rtol)
