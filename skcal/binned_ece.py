"""Binned expected calibration error, binned exactly as ``sklearn.calibration.calibration_curve``."""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS, BINNED_STRATEGY, EDGES, N_BINS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_bin_edges, check_binary_probabilities
from skcal.stats import BinnedStatistics

__all__ = ["binned_ece", "binned_statistics", "BINNED_CONSTRAINTS"]

#: Constraints shared by the binned measures of skcal (binary predictions).
BINNED_CONSTRAINTS = {**BINARY_INPUTS, "n_bins": N_BINS, "strategy": BINNED_STRATEGY, "edges": EDGES}


def _bin_edges(p, n_bins, strategy, edges):
    """The edges of a binned measure: given, uniform, or scikit-learn's percentile edges."""
    if edges is not None:
        return check_bin_edges(edges)
    if strategy == "quantile":
        return np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    return np.linspace(0.0, 1.0, n_bins + 1)


@fill(**BINARY_DOCS)
@validate_params(
    {**BINNED_CONSTRAINTS, "measure": BinnedStatistics._parameter_constraints["measure"]},
    prefer_skip_nested_validation=True,
)
def binned_statistics(
    y_true,
    y_prob,
    *,
    n_bins=11,
    strategy="uniform",
    edges=None,
    sample_weight=None,
    pos_label=None,
    measure="ece",
):
    """Validate, bin (right-closed) and return the filled :class:`~skcal.stats.BinnedStatistics`.

    The per-bin sums that :func:`binned_ece`, the measures of :mod:`skcal.binned_measures` and
    :func:`skcal.reliability_curve.reliability_curve` are computed from, with their bins.

    Parameters
    ----------
    {y_true}
    {y_prob}
    n_bins : int, default=11
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1], or scikit-learn's percentile edges.
    edges : array-like of shape (n_bins + 1,), default=None
        Explicit non-decreasing bin edges (right-closed); overrides ``n_bins`` and ``strategy``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    {pos_label}
    measure : {"ece", "mce", "rms", "ace", "debiased_l2", "debiased_l2_squared"}, default="ece"
        What the object's ``compute`` returns.

    Returns
    -------
    BinnedStatistics
        The statistics of the rows (``compute()``, ``curve()``).

    Examples
    --------
    >>> from skcal.binned_ece import binned_statistics
    >>> st = binned_statistics([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    >>> st.curve()["count"].tolist(), round(st.compute(), 6)
    ([2, 2], 0.225)
    """
    # read only by the bin sums: the caller's arrays need no copy
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    if edges is None and strategy == "uniform":
        bins = {"n_bins": int(n_bins)}
    else:
        bins = {"edges": _bin_edges(p, int(n_bins), strategy, edges)}
    return BinnedStatistics.from_validated(y, p, w, **bins, measure=measure, pos_label=pos_label)


@fill(**BINARY_DOCS)
@validate_params(BINNED_CONSTRAINTS, prefer_skip_nested_validation=True)
def binned_ece(
    y_true, y_prob, *, n_bins=11, strategy="uniform", edges=None, sample_weight=None, pos_label=None
):
    """Binned expected calibration error ``sum_b (W_b / W) |mean_b(y) - mean_b(p)|``.

    The bins are those of :func:`sklearn.calibration.calibration_curve`: ``"uniform"`` uses
    ``n_bins`` equal-width bins on [0, 1]; ``"quantile"`` uses the edges
    ``np.percentile(y_prob, linspace(0, 100, n_bins + 1))`` (linear interpolation, so tied
    predictions can leave bins empty). Edge rule (every binned measure of skcal): right-closed,
    ``np.searchsorted(edges[1:-1], p)``, so a prediction equal to an inner edge goes to the bin
    on its left and ``p = 0`` to the first bin. Empty bins contribute nothing. Without weights
    this equals ``sum(count_b * |prob_true - prob_pred|) / n`` over the non-empty bins that
    ``calibration_curve`` returns. Computed through :class:`skcal.stats.BinnedStatistics`.

    Parameters
    ----------
    {y_true}
    {y_prob}
    n_bins : int, default=11
        Number of bins (11 equal-width bins is the comparison measure of
        *Testable and Actionable Calibration for Full Swap Regret*).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1], or scikit-learn's percentile edges.
    edges : array-like of shape (n_bins + 1,), default=None
        Explicit non-decreasing bin edges (right-closed); overrides ``n_bins`` and ``strategy``.
    sample_weight : array-like of shape (n,), default=None
        Weights enter the bin means and bin masses; the quantile edges stay the unweighted
        percentiles of ``y_prob`` (as ``calibration_curve`` computes them).
    {pos_label}

    Returns
    -------
    float
        The binned ECE, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.binned_ece import binned_ece
    >>> round(binned_ece([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2), 6)
    0.225
    """
    return binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label, measure="ece",
    ).compute()
