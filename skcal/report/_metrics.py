"""Report metrics: a small picklable record per metric, and the functions they score.

Every metric is ``func(data, prediction, **params) -> float`` for one model on one (re)sample,
where ``data`` is the validated validation data of the report kind (see :mod:`._kinds`). The
proper scores and accuracy come from :mod:`sklearn.metrics`; the calibration errors from
skcal's own modules. Everything here is a module-level function or a small class, so a report
(and its metrics) can be pickled.

A built-in metric also says how its bootstrap replicates are computed through the statistics
objects of :mod:`skcal.stats` (``Metric.replicates``, returning a :class:`ReplicateSpec`): the
statistics template, the arrays it is updated with and the input row of each array row (the
votes of a second-order report share their input's weight). The replicates' data-driven
choices are made once, on the full validation set: SCDL's finest grid (the ``"auto"`` rule at
``n``), the truthful measures' quantile bins, CE2's degree and ridge; a replicate then moves the
row weights only. smCE's replicates use its fine-grid form (:class:`~skcal.stats.SmoothCEGridStatistics`,
``smce_grid_cells(n)`` cells, within its stated bound of the exact smCE); every other replicate
is the exact measure of its resample. The values of SCDL, smECE, the cutoff error and ECE-11 are
those statistics with unit weights (:data:`VALUES_FROM_REPLICATES`), the measures to round-off;
so is the second-order report's CE2 (its ``Metric`` sets ``value_from_replicates``). smCE's value
is computed from the rows the bootstrap sorted for its replicates (:data:`VALUES_FROM_SORTED`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics import roc_auc_score

from skcal.binned_ece import binned_ece
from skcal.binning import column_bin_ids, quantile_bin_starts
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_curve, scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.stats import (
    BinnedStatistics,
    CE2Statistics,
    ClasswiseStatistics,
    CutoffStatistics,
    MeanStatistics,
    ScdlStatistics,
    SmoothCEGridStatistics,
    SmoothECEStatistics,
    SortedCutoffStatistics,
    TopLabelStatistics,
)
from skcal.stats._lipschitz import smce_of_sorted_rows
from skcal.stats._scdl import resolve_max_bins


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
    #: losses, whose mean over a resample's rows is the metric on that resample (the value on
    #: the full sample still comes from ``func``).
    pointwise: object = None
    #: ``replicates(data, prediction, **params) -> ReplicateSpec`` (or None): how the bootstrap
    #: computes the metric's replicates through a statistics object. A metric without it (a
    #: user's callable) is recomputed on each resample's rows.
    replicates: object = None
    #: The value is the replicate statistics' own value with every row's weight 1 (the exact
    #: measure, equal to ``func`` up to floating-point round-off), computed by the bootstrap's
    #: engine from the rows it has prepared anyway instead of by a second pass of ``func``.
    value_from_replicates: bool = False
    #: ``value_from_sorted(*arrays) -> float``: the exact value from the replicate spec's arrays
    #: sorted (stably) by its ``sort_by``, equal to ``func`` up to floating-point round-off;
    #: the bootstrap's engine computes it from the sorted view it makes for the replicates, so
    #: the value needs no sort of its own (smCE: its residuals merged per distinct prediction).
    value_from_sorted: object = None


@dataclass(frozen=True)
class ReplicateSpec:
    """How one model's replicates of one metric are computed: a statistics template and its rows.

    ``template`` is updated with ``arrays`` (as its ``update`` takes them) inside a
    :class:`~skcal.stats.PoissonBootstrap`; ``rows`` gives the validation row (whose bootstrap
    weight applies) of each array row (``None``: array row ``i`` is validation row ``i``);
    ``sort_by`` names the array (a probability) by which the rows are sorted once per model, and
    ``share`` the key under which that sort is shared by the model's metrics (the view). A
    ``two_pass`` template (CE2) is followed by its plug-in pass on the same rows.
    """

    template: object
    arrays: tuple
    rows: object = None
    sort_by: object = None
    share: object = None
    two_pass: bool = False


def smce_grid_cells(n):
    """Cells of the grid on which smCE's bootstrap replicates are computed for ``n`` rows.

    The smallest power of two ``>= 4 sqrt(n)`` (SCDL's ``"auto"`` rule), between 1024 and
    ``2**16``. A replicate's grid value is within ``E[|y - p| |p - x_c|]`` of its exact smCE
    (:class:`~skcal.stats.SmoothCEGridStatistics`, whose ``bound()`` states it per replicate),
    which is at most ``E|y - p| / (2 G)``.

    Parameters
    ----------
    n : int
        Rows.

    Returns
    -------
    int
        ``G``.

    Examples
    --------
    >>> smce_grid_cells(300), smce_grid_cells(10**5), smce_grid_cells(10**6)
    (1024, 2048, 4096)
    """
    G = 1024
    while G < 4.0 * np.sqrt(max(int(n), 0)) and G < 1 << 16:
        G *= 2
    return G


def quantile_bin_thresholds(values, n_bins):
    """``(values, indices)`` thresholds reproducing the equal-mass bins of ``values`` (or None).

    The thresholds of :class:`~skcal.stats.TopLabelStatistics` (``thresholds=``): the
    ``(value, row)`` of the first row of every bin but the first in the stable order by value,
    so that :func:`skcal.binning.threshold_bin_ids` gives the ids of
    :func:`skcal.binning.assign_bins` with ``strategy="quantile"``. None when a bin is empty
    (fewer rows than bins).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    n_bins : int
        Bins.

    Returns
    -------
    tuple of ndarray or None
        ``(threshold values, threshold row indices)``, each of shape ``(n_bins - 1,)``.
    """
    return quantile_bins(values, n_bins)[1]


def quantile_bins(values, n_bins):
    """Quantile ids of ``values`` and :func:`quantile_bin_thresholds` (``(None, None)``: a bin is empty).

    The ids by the linear-time rule of :func:`skcal.binning.column_bin_ids`, the thresholds
    (the first row of every bin but the first) from them by
    :func:`skcal.binning.quantile_bin_starts`: the same rows as a selection of the boundary
    ranks in the stable order, found in two passes.
    """
    n, n_bins = values.shape[0], int(n_bins)
    if n < n_bins:
        return None, None
    values = np.ascontiguousarray(values, dtype=np.float64)
    ids = column_bin_ids(values, n_bins, "quantile", "values")
    rows = quantile_bin_starts(values, ids, n_bins)
    return ids, (values[rows], rows)


# ----------------------------------------------------------------------------------------------
# binary measures: f(y, p) with y in {0, 1}
# ----------------------------------------------------------------------------------------------
def brier(y, p):
    """Brier score of positive-class probabilities: :func:`sklearn.metrics.brier_score_loss`, directly.

    ``y`` holds the validated labels (0.0 and 1.0) and ``p`` the probabilities, as every view
    of the report gives them. scikit-learn (from 1.7) stacks ``(1 - p, p)`` against the one-hot
    labels, adds each row's two squared differences and halves the mean; the same operations
    on the two columns give its value bit for bit (``tests/test_report_multiclass_direct.py``)
    without its validation of the labels and its ``(n, 2)`` temporaries.
    """
    a = (1.0 - y) - (1.0 - p)
    b = y - p
    return float(np.mean(a * a + b * b) * 0.5)


def binary_log_loss(y, p):
    """Log loss of positive-class probabilities: :func:`sklearn.metrics.log_loss`, directly.

    scikit-learn stacks ``(1 - p, p)``, clips both to ``[eps, 1 - eps]`` and averages ``-log``
    of the true class's column; the same operations on that column alone give its value bit for
    bit (``tests/test_report_multiclass_direct.py``).
    """
    eps = np.finfo(np.float64).eps
    q = np.where(y == 1.0, np.clip(p, eps, 1 - eps), np.clip(1.0 - p, eps, 1 - eps))
    return float(np.mean(-np.log(q)))


def accuracy(y, p):
    """Accuracy of the decision ``p >= 1/2``: :func:`sklearn.metrics.accuracy_score`, directly."""
    return float(np.mean((y == 1.0) == (p >= 0.5)))


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


def _scdl_template(n):
    # the "auto" grid of the full validation set: a resample of about n rows searches the same
    return ScdlStatistics(max_bins=resolve_max_bins("auto", float(n), n))


#: name -> template of a binary measure's replicates, from the number of rows
BINARY_TEMPLATES = {
    "scdl": _scdl_template,
    "smooth_ece": lambda n: SmoothECEStatistics(),
    "smooth_calibration_error": lambda n: SmoothCEGridStatistics(n_cells=smce_grid_cells(n)),
    "cutoff": lambda n: CutoffStatistics(),
    "binned_ece": lambda n: BinnedStatistics(n_bins=11),
}


#: name -> template of a binary measure's replicates on the rows sorted by prediction, which the
#: in-memory bootstrap makes once per model and view (``ReplicateSpec.sort_by``): the exact cutoff
#: error walks them once per block of replicates, its state ``5`` numbers a replicate
#: (:class:`~skcal.stats.SortedCutoffStatistics`), where the chunks of an out-of-core report,
#: in row order, need :data:`BINARY_TEMPLATES`' state of one entry per distinct prediction
SORTED_TEMPLATES = {"cutoff": lambda n: SortedCutoffStatistics()}


class BinaryReplicates:
    """The :class:`ReplicateSpec` of binary measure ``name`` applied through ``view``.

    A view may name, in its attribute ``replicate_rows``, the data's attribute holding the
    validation row of each of its rows (the second-order votes view: ``vote_rows``).
    """

    def __init__(self, name, view):
        self.name = name
        self.view = view

    def __call__(self, data, prediction, **params):
        y, p = self.view(data, prediction)
        attr = getattr(self.view, "replicate_rows", None)
        rows = None if attr is None else getattr(data, attr)
        if self.name in BINARY_POINTWISE:
            return ReplicateSpec(MeanStatistics(), (BINARY_POINTWISE[self.name](y, p),), rows)
        make = SORTED_TEMPLATES.get(self.name, BINARY_TEMPLATES.get(self.name))
        if make is None:
            return None
        return ReplicateSpec(make(p.shape[0]), (y, p), rows, sort_by=1, share=self.view)


class MeanReplicates:
    """The :class:`ReplicateSpec` of a mean of per-row losses ``rows(data, prediction)``."""

    def __init__(self, rows):
        self.rows = rows

    def __call__(self, data, prediction, **params):
        return ReplicateSpec(MeanStatistics(), (np.asarray(self.rows(data, prediction), dtype=float),))


class TruthfulReplicates:
    """The :class:`ReplicateSpec` of a truthful multiclass measure with the full sample's quantile bins."""

    def __init__(self, measure, n_bins=15):
        self.measure = measure
        self.n_bins = n_bins

    def __call__(self, data, P, **params):
        labels = list(range(data.n_classes))
        nb = self.n_bins
        n, k = P.shape
        # the bin ids found for the thresholds are lent to the template's plan of this P
        # (``_hint_plan``), which would otherwise find them again from the thresholds
        if self.measure == "classwise_lince":
            if n < nb:
                return None
            ids = np.empty((n, k), dtype=np.intp)
            tv, tg = np.empty((k, nb - 1)), np.empty((k, nb - 1), dtype=np.intp)
            for j in range(k):
                ids[:, j], (tv[j], tg[j]) = quantile_bins(P[:, j], nb)
            template = ClasswiseStatistics(labels=labels, n_bins=nb, thresholds=(tv, tg))
            template._hint_plan(P, ids=ids)
        else:
            r, c = data.top(P)
            ids, thr = data.top_bins(P, nb)
            if thr is None:
                return None
            template = TopLabelStatistics(labels=labels, n_bins=nb, measure=self.measure, thresholds=thr)
            template._hint_plan(P, r=r, c=c, ids=ids)
        return ReplicateSpec(template, (data.codes, P))


class CE2Replicates:
    """The :class:`ReplicateSpec` of CE2 at the degree and ridge chosen once on the full sample.

    The replicates go through :class:`~skcal.stats.CE2Statistics` (the Chebyshev moments of each
    replicate, one ridge fit each) and its plug-in pass (each replicate's fit evaluated for its
    own weights): each is :func:`skcal.ce2.ce2_score` of its resample at that degree and ridge.
    """

    def __call__(self, data, S, degree=None, alpha=1e-6):
        if degree is None:
            return None
        template = CE2Statistics(degree=int(degree), alpha=float(alpha))
        # the snapshots as counts: the same targets, validated about ten times faster per model
        return ReplicateSpec(template, (data.counts, S), two_pass=True)


#: Binary measures whose report value comes from their exact replicate statistics with unit
#: weights (``Metric.value_from_replicates``). smCE's replicates are on a grid, so its exact
#: value comes from the rows the engine sorts for them (:data:`VALUES_FROM_SORTED`); the means
#: are scikit-learn's arithmetic bit for bit (``func``).
VALUES_FROM_REPLICATES = frozenset({"scdl", "smooth_ece", "cutoff", "binned_ece"})
#: Binary measures whose report value is computed from their rows sorted by ``p`` ``(ys, ps)``
#: (``Metric.value_from_sorted``), equal to the function's value up to round-off.
VALUES_FROM_SORTED = {"smooth_calibration_error": smce_of_sorted_rows}


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
        replicates=BinaryReplicates(name, view),
        value_from_replicates=name in VALUES_FROM_REPLICATES,
        value_from_sorted=VALUES_FROM_SORTED.get(name),
    )


class UserMetric:
    """A user's ``callable(y, prediction) -> float`` applied to ``view(data, prediction)``.

    The callable gets its own copies of the report's arrays: the other metrics, the tests and the
    figures read the same arrays, so a callable that wrote into them (clipping in place, sorting
    in place) would change their numbers silently. Copies rather than read-only views, so that a
    callable compiled for writable arrays (numba with an explicit signature) still accepts them.
    """

    def __init__(self, func, view):
        self.func = func
        self.view = view

    def __call__(self, data, prediction, **params):
        return float(self.func(*[_own_copy(a) for a in self.view(data, prediction)]))


def _own_copy(a):
    """A copy of an ndarray (anything else as it is: the votes' containers are read-only)."""
    return a.copy() if isinstance(a, np.ndarray) else a


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
