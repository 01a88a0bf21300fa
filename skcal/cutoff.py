"""Cutoff calibration error (SPEC section 4, comparison measures)."""

from __future__ import annotations

import numpy as np

from skcal._validation import check_binary_probabilities

__all__ = ["cutoff_calibration_error"]


def cutoff_calibration_error(y_true, y_prob, *, sample_weight=None, pos_label=None):
    """Cutoff calibration error ``sup over intervals I of |E[(y - p) 1{p in I}]|``, exactly.

    Sort by ``p``, merge ties (an interval contains all or none of the samples sharing a value
    of ``p``), and form the running sums ``S_k`` of ``y - p`` (``S_0 = 0``); the supremum over
    intervals is ``max_k S_k - min_k S_k``, divided by the sample size (or the total weight).
    ``O(n log n)`` time, linear memory.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class, or ``predict_proba`` output.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: ``E`` is the weighted mean.
    pos_label : default=None
        The positive class.

    Returns
    -------
    float

    Examples
    --------
    >>> cutoff_calibration_error([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9])
    0.15
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    r = y - p if w is None else w * (y - p)
    total = float(p.shape[0]) if w is None else float(w.sum())
    order = np.argsort(p)  # ties are merged below, so the order within a tie is irrelevant
    ps = p[order]
    S = np.cumsum(r[order])
    # Keep only the last running sum of each group of tied predictions.
    last = np.empty(ps.shape[0], dtype=bool)
    last[:-1] = ps[1:] != ps[:-1]
    last[-1] = True
    S = S[last]
    hi = max(float(S.max()), 0.0)
    lo = min(float(S.min()), 0.0)
    return (hi - lo) / total
