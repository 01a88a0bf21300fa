"""Per-bin data of a reliability diagram, like ``sklearn.calibration.calibration_curve``.

:func:`reliability_curve` returns, for every bin, the number of rows, the bin weight, the mean
prediction, the observed frequency of the positive class and optionally a Wilson score interval
for that frequency. The bins are those of every binned measure of skcal (see
:mod:`skcal.binned_measures`): equal-width on [0, 1], scikit-learn's percentile edges, or
explicit edges, all right-closed (``np.searchsorted(edges[1:-1], p)``: a prediction on an inner
edge goes to the bin on its left, ``p = 0`` to the first bin). Unlike ``calibration_curve``,
empty bins are kept (with NaN means) so that the arrays line up with the edges; use
``curve.nonempty`` to drop them.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import StrictInterval
from skcal.binned_ece import BINNED_CONSTRAINTS
from skcal.binned_ece import binned_statistics as _binned_statistics

__all__ = ["reliability_curve", "ReliabilityCurve"]


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per-bin data returned by :func:`reliability_curve` (one entry per bin).

    Parameters
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges; bin ``j`` is ``(edges[j], edges[j + 1]]``, the first bin closed.
    count : ndarray of int64, shape (n_bins,)
        Rows per bin.
    weight : ndarray of shape (n_bins,)
        Total sample weight per bin (equal to ``count`` without weights).
    mean_predicted : ndarray of shape (n_bins,)
        Weighted mean prediction per bin (NaN for empty bins).
    observed_frequency : ndarray of shape (n_bins,)
        Weighted frequency of the positive class per bin (NaN for empty bins).
    lower : ndarray of shape (n_bins,) or None
        Lower end of the Wilson score interval of the observed frequency (``None`` unless
        requested).
    upper : ndarray of shape (n_bins,) or None
        Upper end of the interval (``None`` unless requested).
    confidence : float or None
        Coverage of the interval.
    """

    edges: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    mean_predicted: np.ndarray
    observed_frequency: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    confidence: float | None = None

    @property
    def nonempty(self):
        """Boolean mask of the bins holding positive weight."""
        return self.weight > 0


def wilson_interval(frequency, n_eff, confidence=0.95):
    """Wilson score interval for a binomial frequency observed on ``n_eff`` trials.

    Parameters
    ----------
    frequency : array-like
        Observed frequencies in [0, 1].
    n_eff : array-like
        Numbers of trials (effective sample sizes with weights); non-positive entries give NaN.
    confidence : float, default=0.95
        Coverage, in (0, 1).

    Returns
    -------
    tuple of ndarray
        The lower and upper interval ends, ``(f + z^2/2n -+ z sqrt(f(1-f)/n + z^2/4n^2)) / (1 + z^2/n)``.

    Examples
    --------
    >>> from skcal.reliability_curve import wilson_interval
    >>> lo, hi = wilson_interval([0.5], [10])
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (0.2366, 0.7634)
    """
    from scipy.stats import norm

    f = np.asarray(frequency, dtype=np.float64)
    n = np.asarray(n_eff, dtype=np.float64)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 1.0 + z * z / n
        center = (f + z * z / (2.0 * n)) / denom
        half = z / denom * np.sqrt(f * (1.0 - f) / n + z * z / (4.0 * n * n))
        ok = n > 0
        return np.where(ok, center - half, np.nan), np.where(ok, center + half, np.nan)


@validate_params(
    {
        **BINNED_CONSTRAINTS,
        "interval": [StrOptions({"wilson"}), None],
        "confidence": [StrictInterval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def reliability_curve(
    y_true,
    y_prob,
    *,
    n_bins=10,
    strategy="uniform",
    edges=None,
    sample_weight=None,
    pos_label=None,
    interval=None,
    confidence=0.95,
):
    """Per-bin counts, mean prediction and observed frequency of binary predictions.

    The bins and their right-closed edge rule are those of every binned measure of skcal
    (``np.searchsorted(edges[1:-1], p)``; ``p = 0`` in the first bin): without weights and
    restricted to ``curve.nonempty``, ``observed_frequency`` and ``mean_predicted`` are
    ``sklearn.calibration.calibration_curve``'s ``prob_true`` and ``prob_pred``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    n_bins : int, default=10
        Number of bins (scikit-learn's default).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1], or the percentile edges of ``calibration_curve``.
    edges : array-like of shape (n_bins + 1,), default=None
        Explicit non-decreasing bin edges; overrides ``n_bins`` and ``strategy``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights (they enter the means, the bin weights and, through the effective
        bin size ``W_b^2 / sum w^2``, the interval).
    pos_label : int, float, bool or str, default=None
        The positive class.
    interval : {"wilson"} or None, default=None
        Add a Wilson score interval for each bin's observed frequency.
    confidence : float, default=0.95
        Coverage of the interval.

    Returns
    -------
    ReliabilityCurve
        Arrays with one entry per bin (empty bins included, NaN means).

    Examples
    --------
    >>> from skcal.reliability_curve import reliability_curve
    >>> c = reliability_curve([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    >>> c.count.tolist(), c.mean_predicted.round(3).tolist(), c.observed_frequency.tolist()
    ([2, 2], [0.15, 0.9], [0.5, 1.0])
    """
    stats = _binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label, measure="ece",
    )
    return curve_from_statistics(stats, interval=interval, confidence=confidence)


def curve_from_statistics(stats, *, interval=None, confidence=0.95):
    """Build a :class:`ReliabilityCurve` from a filled :class:`~skcal.stats.BinnedStatistics`.

    Parameters
    ----------
    stats : BinnedStatistics
        Accumulated per-bin sums (for example merged over chunks).
    interval : {"wilson"} or None, default=None
        Add a Wilson score interval.
    confidence : float, default=0.95
        Coverage of the interval.

    Returns
    -------
    ReliabilityCurve
        The per-bin data.

    Examples
    --------
    >>> from skcal.stats import BinnedStatistics
    >>> from skcal.reliability_curve import curve_from_statistics
    >>> s = BinnedStatistics(n_bins=2).update([0, 1], [0.2, 0.7])
    >>> curve_from_statistics(s).observed_frequency.tolist()
    [0.0, 1.0]
    """
    c = stats.curve()
    lower = upper = None
    if interval == "wilson":
        s = stats.stats_
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.where(s["sum_w2"] > 0, s["weight"] ** 2 / s["sum_w2"], 0.0)
        lower, upper = wilson_interval(c["observed_frequency"], n_eff, confidence)
    return ReliabilityCurve(
        edges=c["edges"],
        count=c["count"],
        weight=c["weight"],
        mean_predicted=c["mean_predicted"],
        observed_frequency=c["observed_frequency"],
        lower=lower,
        upper=upper,
        confidence=None if interval is None else float(confidence),
    )
