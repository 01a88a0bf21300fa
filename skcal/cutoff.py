"""Cutoff calibration error ``sup over intervals I of |E[(y - p) 1{p in I}]|``.

A comparison measure of *Testable and Actionable Calibration for Full Swap Regret*.
"""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats import CutoffStatistics

__all__ = ["cutoff_calibration_error"]


@fill(**BINARY_DOCS)
@validate_params(BINARY_INPUTS, prefer_skip_nested_validation=True)
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
    {y_true}
    {y_prob}
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: ``E`` is the weighted mean.
    {pos_label}

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
    # only read: no validated copies
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    return CutoffStatistics.compute_validated(y, p, w, measure="cutoff")
