"""Binned expected calibration error, binned exactly as ``sklearn.calibration.calibration_curve``."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._validation import check_binary_probabilities

__all__ = ["binned_ece"]


def binned_ece(y_true, y_prob, *, n_bins=11, strategy="uniform", sample_weight=None, pos_label=None):
    """Binned ECE: ``sum_b (n_b / n) |mean(y in b) - mean(p in b)|``.

    The bins are those of :func:`sklearn.calibration.calibration_curve`: ``"uniform"`` uses
    ``n_bins`` equal-width bins on [0, 1]; ``"quantile"`` uses the edges
    ``np.percentile(y_prob, linspace(0, 100, n_bins + 1))`` (linear interpolation, so tied
    predictions can leave bins empty); a prediction equal to an inner edge goes to the bin on
    its left (``np.searchsorted(edges[1:-1], p)``). Empty bins contribute nothing. Without
    weights this equals ``sum(count_b * |prob_true - prob_pred|) / n`` over the non-empty bins
    that ``calibration_curve`` returns.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    n_bins : int, default=11
        Number of bins (11 equal-width bins is the SPEC's comparison measure).
    strategy : {"uniform", "quantile"}, default="uniform"
    sample_weight : array-like of shape (n,), default=None
        Weights enter the bin means and bin masses; the quantile edges stay the unweighted
        percentiles of ``y_prob`` (as ``calibration_curve`` computes them).
    pos_label : default=None
        The positive class.

    Returns
    -------
    float

    Examples
    --------
    >>> binned_ece([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    0.2
    """
    if isinstance(n_bins, (bool, np.bool_)) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins!r}.")
    if strategy not in ("uniform", "quantile"):
        raise ValueError(f"strategy must be 'uniform' or 'quantile'; got {strategy!r}.")
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], p)
    wt = np.ones(p.shape[0]) if w is None else w
    total = np.bincount(ids, weights=wt, minlength=n_bins)
    diff = np.bincount(ids, weights=wt * (y - p), minlength=n_bins)
    # sum_b n_b |mean_b(y) - mean_b(p)| = sum_b |sum_{s in b} (y_s - p_s)|
    return float(np.abs(diff).sum() / total.sum())
