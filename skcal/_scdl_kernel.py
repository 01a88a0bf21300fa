"""Compiled deposit of SCDL's soft bins: binary rows onto the hat functions of one grid, in one pass.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.stats` (SCDL's statistics,
:func:`skcal.stats.binary_node_deposit`), whose numpy path computes the same masses (up to the
order of floating-point additions) when numba is missing or the input is small.

* :func:`binary_cell_sums` walks the rows once: each row's left node ``lo`` on the grid of ``m``
  cells, offset by ``m + 1`` when its label is 1, receives its weight and its weight times the
  right node's share ``frac = m p - lo`` (numpy needs eight elementwise passes and two bincounts
  per chunk of rows for the same sums).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["binary_cell_sums"]


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
