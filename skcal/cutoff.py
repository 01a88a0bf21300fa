"""Cutoff calibration error ``sup over intervals I of |E[(y - p) 1{p in I}]|``.

A comparison measure of *Testable and Actionable Calibration for Full Swap Regret*.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import POS_LABEL, SAMPLE_WEIGHT
from skcal._validation import check_binary_probabilities
from skcal.stats._cutoff import _from_running_sums

__all__ = ["cutoff_calibration_error"]

_CONSTRAINTS = {
    "y_true": ["array-like"],
    "y_prob": ["array-like"],
    "sample_weight": SAMPLE_WEIGHT,
    "pos_label": POS_LABEL,
}


def _group_end_sums(y_true, y_prob, sample_weight, pos_label):
    """Running sums of ``w (y - p)`` in increasing ``p``, at the last row of each tie, and ``W``.

    Unweighted, no permutation is formed: each row becomes one 64-bit key, the bit pattern of
    ``p`` shifted left by one with the label in the freed lowest bit. For ``p`` in [0, 1] the
    IEEE-754 bit pattern read as an unsigned integer is increasing in ``p`` and below ``2**62``
    (``-0.0``, whose sign bit is shifted out, becomes ``+0.0``, its equal), so one (SIMD) sort of
    the keys orders the rows by ``p`` with the labels alongside, and both are read back exactly
    by a shift and a mask. Ties in ``p`` stay contiguous (they are merged below, so their order
    is irrelevant). Weighted, one argsort orders ``p`` and ``w (y - p)`` together, gathered as
    the two columns of one ``(n, 2)`` array. The other rows' running sums are masked out of the
    max / min, not copied.
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    n = p.shape[0]
    if w is None:
        key = np.ascontiguousarray(p).view(np.uint64) << np.uint64(1)
        key |= y > 0.5
        del y, p
        key.sort()
        ps = (key >> np.uint64(1)).view(np.float64)  # the sorted p, exactly
        last = np.empty(n, dtype=bool)
        np.not_equal(ps[1:], ps[:-1], out=last[:-1])
        last[-1] = True
        np.bitwise_and(key, np.uint64(1), out=key)  # the labels, in the same order
        np.subtract(key, ps, out=ps)
        del key
        np.cumsum(ps, out=ps)
        return ps, last, float(n)
    A = np.empty((n, 2))
    A[:, 0] = p
    np.subtract(y, p, out=A[:, 1])
    A[:, 1] *= w
    W = float(w.sum())
    del y, w
    order = np.argsort(p)  # ties are merged below, so the order within a tie is irrelevant
    del p
    B = A[order]
    del A, order
    S = np.cumsum(B[:, 1])
    last = np.empty(n, dtype=bool)
    np.not_equal(B[1:, 0], B[:-1, 0], out=last[:-1])
    last[-1] = True
    return S, last, W


def _masked_extremes(S, last):
    return np.array([S.max(where=last, initial=-np.inf), S.min(where=last, initial=np.inf)])


@validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)
def cutoff_calibration_error(y_true, y_prob, *, sample_weight=None, pos_label=None):
    """Cutoff calibration error ``sup over intervals I of |E[(y - p) 1{p in I}]|``, exactly.

    Sort by ``p``, merge ties (an interval contains all or none of the samples sharing a value
    of ``p``), and form the running sums ``S_k`` of ``y - p`` (``S_0 = 0``); the supremum over
    intervals is ``max_k S_k - min_k S_k``, divided by the sample size (or the total weight).
    One sort of packed 64-bit keys (``p``'s bits and the label; an argsort when weighted),
    linear memory. The same running sums are what the mergeable
    :class:`skcal.stats.CutoffStatistics` holds per distinct prediction.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class, or ``predict_proba`` output.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: ``E`` is the weighted mean.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Returns
    -------
    float
        The cutoff calibration error, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.cutoff import cutoff_calibration_error
    >>> cutoff_calibration_error([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9])
    0.15
    """
    S, last, W = _group_end_sums(y_true, y_prob, sample_weight, pos_label)
    return _from_running_sums(_masked_extremes(S, last), W, "cutoff")
