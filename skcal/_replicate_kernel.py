"""Compiled reductions of bootstrap replicates: the extremes of running sums.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.stats` (the cutoff and KS replicates of
:func:`skcal.stats.replicate_running_sum_error`), whose numpy path computes the same values
(up to the order of floating-point additions) when numba is missing.

* :func:`running_sum_extremes` walks the sums per distinct prediction of a block of replicates
  once, in row order, keeping each replicate's running sum and its largest and smallest value;
  numpy needs a cumulative sum along the value axis (strided for this layout), about ten times
  slower.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["running_sum_extremes"]


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
