"""Kolmogorov-Smirnov calibration error (Gupta, Rahimi, Ajanthan, Mensink, Sminchisescu, Hartley 2021)."""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats import CutoffStatistics

__all__ = ["ks_calibration_error"]


@fill(**BINARY_DOCS)
@validate_params(BINARY_INPUTS, prefer_skip_nested_validation=True)
def ks_calibration_error(y_true, y_prob, *, sample_weight=None, pos_label=None):
    """Kolmogorov-Smirnov calibration error ``max_k |(1/n) sum_{i <= k} (y_(i) - p_(i))|``.

    Gupta et al. (2021) sort the predictions, form the cumulative sums of the predictions and of
    the labels, each divided by ``n``, and take the largest absolute difference between the two
    curves. An order between tied predictions is arbitrary, so skcal takes the cumulative sums
    only at the last row of each group of tied predictions (the curve between distinct
    predictions); without ties this is exactly their formula. Equivalently, the supremum over
    thresholds ``t`` of ``|E[(y - p) 1{p <= t}]|``: the cutoff calibration error restricted to
    intervals starting at 0 (so never larger than it).

    Parameters
    ----------
    {y_true}
    {y_prob}
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: the sums are weighted and divided by the total weight.
    {pos_label}

    Returns
    -------
    float
        The KS calibration error, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.ks_calibration_error import ks_calibration_error
    >>> round(ks_calibration_error([0, 1, 1, 0], [0.2, 0.4, 0.6, 0.8]), 6)
    0.2
    """
    # only read: no validated copies
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    return CutoffStatistics.compute_validated(y, p, w, measure="ks")
