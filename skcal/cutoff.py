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

    One argsort; ``p`` and the residual are gathered together as the two columns of one
    ``(n, 2)`` array (one random access per row instead of two). The other rows' running sums
    are masked out of the max / min, not copied.
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    n = p.shape[0]
    A = np.empty((n, 2))
    A[:, 0] = p
    np.subtract(y, p, out=A[:, 1])
    if w is not None:
        A[:, 1] *= w
    W = float(n) if w is None else float(w.sum())
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
    One argsort, linear memory. The same running sums are what the mergeable
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
