"""Report metrics: a small picklable record per metric, and the functions they score.

Every metric is ``func(data, prediction, **params) -> float`` for one model on one (re)sample,
where ``data`` is the validated validation data of the report kind (see :mod:`._kinds`). The
proper scores and accuracy come from :mod:`sklearn.metrics`; the calibration errors from
skcal's own modules. Everything here is a module-level function or a small class, so a report
(and its metrics) can be pickled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score

from skcal.binned_ece import binned_ece
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_curve, scdl_score
from skcal.smooth_ece import smooth_ece


@dataclass(frozen=True)
class Metric:
    """A report metric.

    ``func(data, prediction, **params)`` scores one model; ``prepare(data, prediction)``
    (optional) returns the ``params`` fixed once per model on the full validation set and reused
    on every bootstrap replicate (for data-driven hyperparameters such as CE2's degree);
    ``details(data, prediction)`` (optional) returns extra numbers shown beside the value (such
    as SCDL's selected grid ``m*`` and the unfloored ``SCDL_{m*}``).
    """

    name: str
    label: str
    func: object
    greater_is_better: bool = False
    description: str = ""
    prepare: object = None
    details: object = None
    #: Rank by the absolute value (zero is ideal, the sign is informative).
    rank_by_abs: bool = False
    #: Range of the metric, used to clip intervals: (low, high), None for unbounded.
    bounds: tuple = (0.0, None)
    #: A calibration error (the verdict's "best calibrated" uses one of these).
    is_calibration: bool = False
    #: For a metric that is a mean of per-row losses: ``pointwise(data, prediction) -> (n,)``
    #: losses, whose mean over a resample's rows is the metric on that resample (the bootstrap
    #: then skips recomputing it; the value on the full sample still comes from ``func``).
    pointwise: object = None


# ----------------------------------------------------------------------------------------------
# binary measures: f(y, p) with y in {0, 1}
# ----------------------------------------------------------------------------------------------
def brier(y, p):
    """Brier score of positive-class probabilities (:func:`sklearn.metrics.brier_score_loss`)."""
    return float(brier_score_loss(y, p, pos_label=1))


def binary_log_loss(y, p):
    """Log loss of positive-class probabilities (:func:`sklearn.metrics.log_loss`)."""
    return float(log_loss(y, p, labels=[0.0, 1.0]))


def accuracy(y, p):
    """Accuracy of the decision ``p >= 1/2`` (:func:`sklearn.metrics.accuracy_score`)."""
    return float(accuracy_score(y == 1.0, p >= 0.5))


def roc_auc(y, p):
    """ROC AUC (:func:`sklearn.metrics.roc_auc_score`); NaN when a resample holds one class."""
    if np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, p))


def scdl(y, p):
    """SCDL (:func:`skcal.scdl.scdl_score`)."""
    return float(scdl_score(y, p))


def scdl_details(y, p):
    """SCDL's selected grid ``m*``, the unfloored ``SCDL_{m*}`` on it and whether SCDL is ``1/m*``."""
    curve = scdl_curve(y, p)
    return {
        "m*": int(curve.selected_n_bins),
        "SCDL_m*": float(curve.selected_scdl_m),
        "at_floor": bool(curve.at_floor),
    }


def smece(y, p):
    """smECE (:func:`skcal.smooth_ece.smooth_ece`)."""
    return float(smooth_ece(y, p))


def smce(y, p):
    """The Lipschitz smooth calibration error (:func:`skcal.lipschitz.smooth_calibration_error`)."""
    return float(smooth_calibration_error(y, p))


def cutoff(y, p):
    """The cutoff calibration error (:func:`skcal.cutoff.cutoff_calibration_error`)."""
    return float(cutoff_calibration_error(y, p))


def ece11(y, p):
    """Binned ECE with 11 equal-width bins (:func:`skcal.binned_ece.binned_ece`)."""
    return float(binned_ece(y, p, n_bins=11))


#: name -> (label, function, greater_is_better, description, is_calibration, bounds)
BINARY = {
    "scdl": (
        "SCDL",
        scdl,
        False,
        "soft-binned calibration decision loss, min over dyadic grids m of max(SCDL_m, 1/m), grids "
        "searched up to the smallest power of two >= 4 sqrt(n)",
        True,
        (0.0, 1.0),
    ),
    "smooth_ece": (
        "smECE",
        smece,
        False,
        "smooth ECE of Blasiok and Nakkiran: the mean absolute gap of the kernel-smoothed calibration "
        "curve (relplot's smECE)",
        True,
        (0.0, 1.0),
    ),
    "smooth_calibration_error": (
        "smCE",
        smce,
        False,
        "Lipschitz smooth calibration error of Blasiok, Gopalan, Hu and Nakkiran: the largest "
        "E[w(p) (y - p)] over 1-Lipschitz w with values in [-1, 1], computed exactly",
        True,
        (0.0, 1.0),
    ),
    "cutoff": (
        "cutoff",
        cutoff,
        False,
        "cutoff calibration error: the largest |E[(y - p) 1{p in I}]| over intervals I",
        True,
        (0.0, 1.0),
    ),
    "binned_ece": ("ECE-11", ece11, False, "binned ECE with 11 equal-width bins", True, (0.0, 1.0)),
    "accuracy": (
        "accuracy",
        accuracy,
        True,
        "accuracy of the decision p >= 1/2 (sklearn.metrics.accuracy_score)",
        False,
        (0.0, 1.0),
    ),
    "brier": (
        "Brier",
        brier,
        False,
        "mean squared error of p against the label (sklearn.metrics.brier_score_loss)",
        False,
        (0.0, 1.0),
    ),
    "log_loss": (
        "log loss",
        binary_log_loss,
        False,
        "mean negative log-likelihood (sklearn.metrics.log_loss)",
        False,
        (0.0, None),
    ),
    "roc_auc": (
        "ROC AUC",
        roc_auc,
        True,
        "area under the ROC curve, ranking only (sklearn.metrics.roc_auc_score)",
        False,
        (0.0, 1.0),
    ),
}


def _log_loss_rows(y, p):
    eps = np.finfo(np.float64).eps  # sklearn.metrics.log_loss clips at the dtype's eps
    q = np.clip(p, eps, 1 - eps)
    return -(y * np.log(q) + (1.0 - y) * np.log1p(-q))


def _brier_rows(y, p):
    return (p - y) ** 2


def _accuracy_rows(y, p):
    return ((p >= 0.5) == (y == 1.0)).astype(float)


#: Per-row losses of the binary measures that are means (see ``Metric.pointwise``).
BINARY_POINTWISE = {"brier": _brier_rows, "log_loss": _log_loss_rows, "accuracy": _accuracy_rows}


class OnView:
    """``func(*view(data, prediction))``: a binary measure applied to a view of the data.

    ``view`` is a module-level function returning ``(y, p)``, for example the labels and the
    probabilities (first order) or every vote and the mean ``m`` of its row (second order).
    """

    def __init__(self, func, view):
        self.func = func
        self.view = view

    def __call__(self, data, prediction, **params):
        return self.func(*self.view(data, prediction), **params)


def binary_metric(name, view, *, suffix="", rowwise=False):
    """The :class:`Metric` of binary measure ``name`` applied through ``view``.

    ``rowwise`` declares that ``view`` keeps one entry per row (so per-row losses can be
    resampled with the rows).
    """
    label, func, gib, desc, is_cal, bounds = BINARY[name]
    pointwise = None
    if rowwise and name in BINARY_POINTWISE:
        pointwise = OnView(BINARY_POINTWISE[name], view)
    return Metric(
        name,
        label,
        OnView(func, view),
        gib,
        desc + suffix,
        details=OnView(scdl_details, view) if name == "scdl" else None,
        bounds=bounds,
        is_calibration=is_cal,
        pointwise=pointwise,
    )


class UserMetric:
    """A user's ``callable(y, prediction) -> float`` applied to ``view(data, prediction)``."""

    def __init__(self, func, view):
        self.func = func
        self.view = view

    def __call__(self, data, prediction, **params):
        return float(self.func(*self.view(data, prediction)))


def user_metric(name, spec, view):
    """A :class:`Metric` from a callable or a ``(callable, greater_is_better)`` pair."""
    gib = False
    func = spec
    if isinstance(spec, tuple):
        if len(spec) != 2 or not callable(spec[0]):
            raise ValueError(f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair.")
        func, gib = spec[0], bool(spec[1])
    if not callable(func):
        raise ValueError(f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair.")
    return Metric(str(name), str(name), UserMetric(func, view), gib, "user metric", bounds=(None, None))
