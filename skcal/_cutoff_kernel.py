"""Compiled passes of the cutoff and KS calibration errors: the packed keys and their running sums.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :func:`skcal.stats._cutoff.running_sum_extremes` (the unweighted path of
:func:`skcal.cutoff.cutoff_calibration_error` and
:func:`skcal.ks_calibration_error.ks_calibration_error`), whose numpy path computes the same
extremes bit for bit when numba is missing: both add ``y - p`` in increasing ``p`` one row at a
time (``np.cumsum`` is a sequential sum).

* :func:`pack_keys` forms each row's 64-bit key, the bit pattern of ``p`` shifted left by one
  with the label in the freed lowest bit, in one pass over the caller's arrays (numpy needs a
  copy of ``p`` and two passes).
* :func:`sorted_key_extremes` walks the sorted keys once: the running sum of ``y - p`` and its
  largest and smallest value at the last row of each group of tied predictions (numpy needs
  six passes and four temporaries: the shift back, the mask, the tie test, the difference, the
  cumulative sum and the two extremes).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pack_keys", "sorted_key_extremes"]


@numba.njit(nogil=True, cache=True)
def pack_keys(p, y):
    """The key ``bits(p) << 1 | (y != 0)`` of every row (``uint64``).

    Parameters
    ----------
    p : ndarray of float64 of shape (n,)
        Validated probabilities in [0, 1] (C-contiguous).
    y : ndarray of shape (n,)
        Labels in {0, 1} (any numeric or boolean dtype: one compiled form each).

    Returns
    -------
    ndarray of uint64 of shape (n,)
    """
    n = p.shape[0]
    bits = p.view(np.uint64)
    out = np.empty(n, dtype=np.uint64)
    one = np.uint64(1)
    zero = np.uint64(0)
    for i in range(n):
        out[i] = (bits[i] << one) | (one if y[i] != 0 else zero)
    return out


@numba.njit(nogil=True, cache=True)
def sorted_key_extremes(keys):
    """Largest and smallest running sum of ``y - p`` over sorted packed keys, ties merged.

    Parameters
    ----------
    keys : ndarray of uint64 of shape (n,)
        :func:`pack_keys` of the rows, sorted (n >= 1).

    Returns
    -------
    hi, lo : float
        The extremes of the running sums at the last row of each group of equal ``p`` (``S_0 = 0``
        is not included: :func:`skcal.stats._cutoff.cutoff_from_running_sums` adds it).
    """
    n = keys.shape[0]
    one = np.uint64(1)
    half = keys >> one
    ps = half.view(np.float64)
    hi = -np.inf
    lo = np.inf
    s = 0.0
    for i in range(n):
        s += float(keys[i] & one) - ps[i]
        if i == n - 1 or half[i + 1] != half[i]:
            if s > hi:
                hi = s
            if s < lo:
                lo = s
    return hi, lo
