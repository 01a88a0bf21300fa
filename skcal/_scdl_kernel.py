"""Compiled deposit of SCDL's soft bins: binary rows onto the hat functions of one grid, in one pass.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.stats` (SCDL's statistics,
:func:`skcal.stats.binary_node_deposit`), whose numpy path computes the same masses (up to the
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

__all__ = ["binary_cell_sums", "scdl_grid_maxima"]


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
        The sums :func:`skcal.stats.binary_node_deposit` forms with its bincounts.
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
