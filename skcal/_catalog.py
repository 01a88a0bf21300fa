"""The catalogue of skcal's measures: one :class:`Measure` per measure, and every table built from it.

A measure is the thing users come for: a calibration error or a score of predictions against
labels. Its entry says, once, what skcal offers for it: the function that computes it, its
mergeable statistics (:mod:`skcal.stats`), its direction, range, label and description, and
which parts of skcal use it. The scorer table (:mod:`skcal.scorers`), the report's metrics and
its kinds' catalogues (:mod:`skcal.report`), the out-of-core report, :func:`skcal.dask.evaluate`
and :func:`skcal.calibration_test.calibration_test` all read :data:`CATALOG`; none keeps a table
of its own. A new measure is its statistics (``skcal/stats/_foo.py``), its function
(``skcal/foo.py``) and one entry here.

The input kinds: ``"binary"`` (labels and positive-class probabilities ``f(y, p)``; a report
offers these through its views, for example a second-order report scores the mean ``m`` against
every vote), ``"multiclass"`` (labels as column indices and an ``(n, k)`` probability matrix),
``"second_order"`` (snapshots or vote counts and ``(n, 2)`` scores ``(m, sigma2)``) and
``"class_second_order"`` (counts per class and ``(n, k, 2)`` scores). Measures without a module
of their own (the scores computed as scikit-learn does, and the second-order report's losses)
are defined here, beside their entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from sklearn.metrics import roc_auc_score

from skcal._validation import check_multiclass_labels
from skcal.binned_ece import binned_ece
from skcal.binned_measures import average_calibration_error as ace
from skcal.binned_measures import debiased_l2_calibration_error as dl2
from skcal.binned_measures import max_calibration_error as mce
from skcal.binned_measures import rms_calibration_error as rms
from skcal.ce2 import ce1_score, ce2_score
from skcal.cutoff import cutoff_calibration_error
from skcal.ks_calibration_error import ks_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.stats import (
    AccuracyStatistics,
    BinnedStatistics,
    BrierScoreStatistics,
    CE1Statistics,
    CE2Statistics,
    ClasswiseStatistics,
    CutoffGridStatistics,
    CutoffStatistics,
    LogLossStatistics,
    ScdlStatistics,
    SmoothCEGridStatistics,
    SmoothCEStatistics,
    SmoothECEStatistics,
    SortedCutoffStatistics,
    TopLabelStatistics,
    smce_grid_cells,
)
from skcal.truthful import (
    brier_over_k,
    classwise_ece,
    classwise_lince,
    conf_ce,
    conf_ece,
    confidence_proper_loss,
    truthful_conf_ce,
)
from skcal.votes import snapshot_targets

__all__ = ["CATALOG", "INPUTS", "Measure", "measure", "measures"]

#: The kinds of input a measure takes (see the module docstring).
INPUTS = ("binary", "multiclass", "second_order", "class_second_order")


@dataclass(frozen=True)
class Measure:
    """One measure and what skcal offers for it.

    Attributes
    ----------
    name, input : str
        The name everywhere (the report metric, ``skcal.dask.evaluate``'s measure, the scorer,
        also registered as ``neg_<name>``, and the calibration test's ``measure``) and one of
        :data:`INPUTS`.
    function : callable or None
        ``function(y, prediction, **kwargs) -> float`` (None: a form that only exists as
        statistics, such as ``cutoff_grid``).
    label, description : str
        A short label (table headers) and one line saying what it is.
    statistics, params
        Its mergeable statistics class and their default arguments: ``skcal.dask`` updates
        ``statistics(**params)`` with each partition.
    greater_is_better, bounds, rank_by_abs, is_calibration
        Direction; range (``None`` for an open end; intervals are clipped to it); ranked by the
        absolute value; a calibration error (the report's verdict picks among these).
    scorer : str or None
        A scikit-learn scorer: ``"pos_label"`` or ``"labels"`` (the estimator's classes are
        passed as that argument), or ``"second_order"`` (the second-order output is scored).
    report, out_of_core, calibration_test : bool
        Offered by the report kinds of its input (a binary measure also through their views), by
        the out-of-core report, as ``calibration_test(measure=name)``.
    dask, label_args, strategy
        How exactly :func:`skcal.dask.evaluate` computes it (None: not offered there), which of
        its ``pos_label`` / ``labels`` the statistics take and the default binning rule.
    template, replicates, sorted_replicates, approximate : callable or None
        Binary measures: functions of the rows ``n`` giving the statistics of the value (default
        ``statistics(**params)``), of its bootstrap replicates (default ``template``), of its
        replicates on rows sorted by prediction (default ``replicates``), and the fixed-size form
        with a stated bound an out-of-core report uses above its exact rows. Other inputs:
        ``replicates(y, prediction, **params)``, the template of the replicates (None: recomputed),
        or ``(template, plan)`` with its replicate plan of those rows when it was made on the way.
    rows : callable or None
        ``rows(y, prediction)``: per-row losses whose mean is the measure.
    details : callable or None
        ``details(statistics)``: numbers shown beside the value, from the value's statistics.
    """

    name: str
    input: str
    function: object
    label: str
    description: str
    statistics: object = None
    params: object = field(default_factory=dict)
    greater_is_better: bool = False
    bounds: tuple = (0.0, 1.0)
    rank_by_abs: bool = False
    is_calibration: bool = True
    scorer: str | None = None
    report: bool = False
    dask: str | None = None
    label_args: tuple = ("pos_label",)
    strategy: str | None = None
    out_of_core: bool = False
    calibration_test: bool = False
    template: object = None
    replicates: object = None
    sorted_replicates: object = None
    approximate: object = None
    rows: object = None
    details: object = None

    def __post_init__(self):
        if self.input not in INPUTS:
            raise ValueError(f"input must be one of {INPUTS}; got {self.input!r}.")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def __reduce__(self):  # by reference (its functions need not pickle): the catalogue's entry
        return measure, (self.name, self.input)

    def make(self, **overrides):
        """An empty statistics object of the measure (``statistics(**params, **overrides)``).

        Parameters
        ----------
        **overrides : dict
            Constructor arguments replacing the defaults.

        Returns
        -------
        BaseStatistics
            A new, empty object.
        """
        return self.statistics(**{**self.params, **overrides})

    def value_template(self, n, *, exact=True):
        """The statistics of the value of a binary measure on ``n`` rows (exact, or with a bound).

        None for a measure without statistics.
        """
        if not exact and self.approximate is not None:
            return self.approximate(n)
        if self.template is not None:
            return self.template(n)
        return None if self.statistics is None else self.make()

    def replicate_template(self, n, *, exact=True, sorted_rows=False):
        """The statistics of the bootstrap replicates of a binary measure on ``n`` rows.

        ``exact=False``: the fixed-size form above an out-of-core report's exact rows;
        ``sorted_rows``: the rows come sorted by the prediction (one array, in memory).
        """
        if not exact and self.approximate is not None:
            return self.approximate(n)
        if sorted_rows and self.sorted_replicates is not None:
            return self.sorted_replicates(n)
        return self.replicates(n) if self.replicates is not None else self.value_template(n)


# ----------------------------------------------------------------------------------------------
# measures with no module of their own
# ----------------------------------------------------------------------------------------------
def brier(y, p):
    """Brier score of positive-class probabilities: :func:`sklearn.metrics.brier_score_loss`, directly.

    scikit-learn (from 1.7) stacks ``(1 - p, p)`` against the one-hot labels, adds each row's two
    squared differences and halves the mean; the same operations on the two columns give its
    value bit for bit (``tests/test_report_multiclass_direct.py``).
    """
    a = (1.0 - y) - (1.0 - p)
    b = y - p
    return float(np.mean(a * a + b * b) * 0.5)


def log_loss(y, p):
    """Log loss of positive-class probabilities: :func:`sklearn.metrics.log_loss`, directly.

    scikit-learn stacks ``(1 - p, p)``, clips both to ``[eps, 1 - eps]`` and averages ``-log`` of
    the true class's column; the same operations on that column give its value bit for bit.
    """
    eps = np.finfo(np.float64).eps
    q = np.where(y == 1.0, np.clip(p, eps, 1 - eps), np.clip(1.0 - p, eps, 1 - eps))
    return float(np.mean(-np.log(q)))


def accuracy(y, p):
    """Accuracy of the decision ``p >= 1/2``: :func:`sklearn.metrics.accuracy_score`, directly."""
    return float(np.mean((y == 1.0) == (p >= 0.5)))


def roc_auc(y, p):
    """ROC AUC (:func:`sklearn.metrics.roc_auc_score`); NaN when the rows hold one class."""
    if np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, p))


def brier_rows(y, p):
    """Per-row squared errors ``(p - y)^2`` (their mean is :func:`brier`)."""
    return (p - y) ** 2


def log_loss_rows(y, p):
    """Per-row log losses of 0/1 labels, ``p`` clipped to ``[eps, 1 - eps]`` as scikit-learn does.

    ``-(y log q + (1 - y) log(1 - q))`` with one logarithm a row (``y`` is 0 or 1).
    """
    eps = np.finfo(np.float64).eps
    q = np.clip(p, eps, 1 - eps)
    out = np.empty_like(q)
    pos = y > 0.5
    out[pos] = -np.log(q[pos])
    neg = ~pos
    out[neg] = -np.log1p(-q[neg])
    return out


def accuracy_rows(y, p):
    """Per-row hits of the decision ``p >= 1/2``."""
    return ((p >= 0.5) == (y == 1.0)).astype(float)


def _codes(y, P, labels):
    """The column of each row's class: ``y`` itself for ``labels`` None or ``0..k-1``."""
    k = P.shape[1]
    if labels is None or np.array_equal(labels, np.arange(k)):
        return np.asarray(y)
    return check_multiclass_labels(y, k, labels=labels, name="y")


def multiclass_accuracy(y, P, *, labels=None):
    """Accuracy of the most probable class (ties: the lowest column).

    ``y`` holds the class of each row; ``labels`` the class of each column (None: ``y`` holds
    column indices), as for every multiclass measure here.
    """
    return float(np.mean(_codes(y, P, labels) == np.argmax(P, axis=1)))


def multiclass_accuracy_rows(y, P, *, labels=None):
    """Per-row hits of the most probable class."""
    return (np.argmax(P, axis=1) == _codes(y, P, labels)).astype(float)


def multiclass_brier(y, P, *, labels=None):
    """:func:`sklearn.metrics.brier_score_loss` of class labels, computed directly.

    ``mean(sum_j (1[y = j] - p_j)^2)`` over C-ordered rows without the one-hot matrix:
    ``(0 - p)^2`` is ``p^2`` exactly, so the value is scikit-learn's bit for bit.
    """
    codes = _codes(y, P, labels)
    rows = np.arange(codes.shape[0])
    D = np.square(P, order="C")
    D[rows, codes] = (1.0 - P[rows, codes]) ** 2
    value = np.mean(D.sum(axis=1))
    return float(value * 0.5 if P.shape[1] < 3 else value)  # scikit-learn's scale_by_half="auto"


def multiclass_brier_rows(y, P, *, labels=None):
    """Per row ``sum_j p_j^2 - 2 p_y + 1`` (the squares summed without an ``(n, k)`` temporary)."""
    codes = _codes(y, P, labels)
    return np.einsum("ij,ij->i", P, P) - 2 * P[np.arange(codes.shape[0]), codes] + 1.0


def multiclass_log_loss(y, P, *, labels=None):
    """:func:`sklearn.metrics.log_loss` of class labels: the true class's probability clipped to
    ``[eps, 1 - eps]``, ``-log`` averaged (scikit-learn's, bit for bit)."""
    return float(np.mean(multiclass_log_loss_rows(y, P, labels=labels)))


def multiclass_log_loss_rows(y, P, *, labels=None):
    """Per-row log losses, whose mean is :func:`multiclass_log_loss`."""
    codes = _codes(y, P, labels)
    eps = np.finfo(np.float64).eps
    return -np.log(np.clip(P[np.arange(codes.shape[0]), codes], eps, 1 - eps))


def squared_error_estimate(t1, t2, m):
    """Per row, ``t2 - 2 m t1 + m^2``: unbiased for ``(f* - m)^2`` given the input."""
    return t2 - 2.0 * m * t1 + m**2


def second_moment_mse_rows(snapshots, scores):
    """Per row, ``(m^2 + sigma2 - t2)^2`` (``t2`` the snapshots' unbiased target of ``E[f*^2]``)."""
    t2 = snapshot_targets(snapshots)[1]
    return (scores[:, 0] ** 2 + scores[:, 1] - t2) ** 2


def second_moment_mse(snapshots, scores):
    """Mean of ``(m^2 + sigma2 - t2)^2``, a proper loss for ``E[f*^2]`` (includes label noise)."""
    return float(np.mean(second_moment_mse_rows(snapshots, scores)))


def variance_bias_rows(snapshots, scores):
    """Per row, ``sigma2 - (t2 - 2 m t1 + m^2)``."""
    t1, t2, _ = snapshot_targets(snapshots)
    return scores[:, 1] - squared_error_estimate(t1, t2, scores[:, 0])


def variance_bias(snapshots, scores):
    """Mean stated variance minus the unbiased estimate of the mean squared error ``(f* - m)^2``."""
    return _variance_bias(*snapshot_targets(snapshots)[:2], scores)


def _variance_bias(t1, t2, scores):
    return float(np.mean(scores[:, 1]) - np.mean(squared_error_estimate(t1, t2, scores[:, 0])))


def top_label_task(counts, scores):
    """The top-label task of k-class scores: ``((n, 2) scores, vote counts of the top class)``."""
    top = np.argmax(scores[..., 0], axis=1)
    return scores[np.arange(top.shape[0]), top], counts.one_vs_rest(top)


def classwise_second_moment_mse(counts, scores):
    """Mean over rows and classes of ``(m_j^2 + sigma2_j - t2_j)^2``."""
    t2 = counts.targets()[1]
    return float(np.mean((scores[..., 0] ** 2 + scores[..., 1] - t2) ** 2))


def top_label_variance_bias(counts, scores):
    """:func:`variance_bias` of the top label (each row's class of largest ``m``)."""
    S, V = top_label_task(counts, scores)
    return _variance_bias(*V.targets(), S)


def ce2_classwise(snapshots, scores, **kwargs):
    """CE2 of k-class scores, classwise (:func:`skcal.ce2.ce2_score`, ``multiclass="classwise"``)."""
    return ce2_score(snapshots, scores, multiclass="classwise", **kwargs)


def ce2_top_label(snapshots, scores, **kwargs):
    """CE2 of k-class scores, top label (:func:`skcal.ce2.ce2_score`, ``multiclass="top_label"``)."""
    return ce2_score(snapshots, scores, multiclass="top_label", **kwargs)


def scdl_details(statistics):
    """SCDL's selected grid ``m*``, the unfloored ``SCDL_{m*}`` on it and whether SCDL is ``1/m*``."""
    curve = statistics.curve()
    return {
        "m*": int(curve.selected_n_bins),
        "SCDL_m*": float(curve.selected_scdl_m),
        "at_floor": bool(curve.at_floor),
    }


def _smce_grid(n):
    return SmoothCEGridStatistics(n_cells=smce_grid_cells(n))


def _ce2_replicates(snapshots, scores, *, degree=None, alpha=1e-6):
    # each replicate is ce2_score of its resample at the degree and ridge chosen on the full sample
    return None if degree is None else CE2Statistics(degree=int(degree), alpha=float(alpha))


_BINNED = (
    "exact, {} bins by default as in memory; uniform bins or given edges in one pass (per-bin sums); "
    "strategy='quantile': exact percentile edges from extra passes (a histogram, then the edge cells' values)"
)
_TRUTHFUL = (
    "exact: by default the in-memory quantile bins (equal mass by rank, ties by global row index), found by "
    "extra passes (a histogram, then the edge cells' values and row indices); one pass on uniform bins "
    "(strategy='uniform') or given edges / thresholds (per-bin sums)"
)
_SUMS = "exact (sums of per-row terms)"
_RUNS = "exact (sorted distinct predictions with their residual sums; state grows with them)"
_POLYNOMIAL = "exact at a fixed degree and alpha (two passes: moments, then plug-in sums)"
_BOTH = ("pos_label", "labels")
_OPEN = (0.0, None)


def _binned(name, function, measure, n_bins, strategy, label, description, **kw):
    kw.setdefault("scorer", "pos_label")
    params = {"n_bins": n_bins, "measure": measure}
    return Measure(name, "binary", function, label, description, BinnedStatistics, params,
                   dask=_BINNED.format(strategy), strategy=strategy, **kw)  # fmt: skip


def _truthful(name, function, statistics, label, description, **kw):
    def replicates(codes, P):  # the full sample's quantile bins, kept by every replicate (and the plan)
        return statistics.with_quantile_bins(P, measure=name, codes=codes)

    params = {"n_bins": 15, "measure": name}
    return Measure(name, "multiclass", function, label, description, statistics, params, bounds=_OPEN,
                   dask=_TRUTHFUL, label_args=("labels",), strategy="quantile", replicates=replicates,
                   **kw)  # fmt: skip


# fmt: off
#: Every measure of skcal, in the order the tables list them.
CATALOG = (
    # -- binary: labels and positive-class probabilities --------------------------------------------------
    Measure("scdl", "binary", scdl_score, "SCDL", "soft-binned calibration decision loss, min over dyadic "
            "grids m of max(SCDL_m, 1/m), grids searched up to the smallest power of two >= 4 sqrt(n)",
            ScdlStatistics, scorer="pos_label", report=True,
            dask="exact (finest-grid node masses; every coarser dyadic grid is folded from them)",
            out_of_core=True, calibration_test=True, template=ScdlStatistics.for_rows, details=scdl_details),
    Measure("smooth_ece", "binary", smooth_ece, "smECE", "smooth ECE of Blasiok and Nakkiran: the mean "
            "absolute gap of the kernel-smoothed calibration curve (relplot's smECE)", SmoothECEStatistics,
            scorer="pos_label", report=True,
            dask="exact to the grid deposit smooth_ece uses in memory (2^18 cells)", out_of_core=True,
            calibration_test=True),
    Measure("smooth_calibration_error", "binary", smooth_calibration_error, "smCE", "Lipschitz smooth "
            "calibration error of Blasiok, Gopalan, Hu and Nakkiran: the largest E[w(p) (y - p)] over "
            "1-Lipschitz w with values in [-1, 1], computed exactly", SmoothCEStatistics, scorer="pos_label",
            report=True, out_of_core=True, calibration_test=True, replicates=_smce_grid,
            approximate=_smce_grid),
    Measure("cutoff", "binary", cutoff_calibration_error, "cutoff", "cutoff calibration error: the largest "
            "|E[(y - p) 1{p in I}]| over intervals I", CutoffStatistics, report=True, dask=_RUNS,
            out_of_core=True, calibration_test=True, sorted_replicates=lambda n: SortedCutoffStatistics(),
            approximate=lambda n: CutoffGridStatistics()),
    _binned("binned_ece", binned_ece, "ece", 11, "uniform", "ECE-11", "binned ECE with 11 equal-width bins",
            scorer=None, report=True, out_of_core=True, calibration_test=True),
    Measure("accuracy", "binary", accuracy, "accuracy", "accuracy of the decision p >= 1/2 "
            "(sklearn.metrics.accuracy_score)", AccuracyStatistics, greater_is_better=True,
            is_calibration=False, report=True, dask=_SUMS, label_args=_BOTH, out_of_core=True,
            rows=accuracy_rows),
    Measure("brier", "binary", brier, "Brier", "mean squared error of p against the label "
            "(sklearn.metrics.brier_score_loss)", BrierScoreStatistics, is_calibration=False, report=True,
            dask=_SUMS, label_args=_BOTH, out_of_core=True, rows=brier_rows),
    Measure("log_loss", "binary", log_loss, "log loss", "mean negative log-likelihood "
            "(sklearn.metrics.log_loss)", LogLossStatistics, bounds=_OPEN, is_calibration=False, report=True,
            dask=_SUMS, label_args=_BOTH, out_of_core=True, rows=log_loss_rows),
    Measure("roc_auc", "binary", roc_auc, "ROC AUC", "area under the ROC curve, ranking only "
            "(sklearn.metrics.roc_auc_score)", greater_is_better=True, is_calibration=False, report=True),
    Measure("ks_calibration_error", "binary", ks_calibration_error, "KS", "Kolmogorov-Smirnov calibration "
            "error: the largest |E[(y - p) 1{p <= t}]| over thresholds t", CutoffStatistics,
            {"measure": "ks"}, scorer="pos_label", dask=_RUNS),
    Measure("cutoff_grid", "binary", None, "cutoff (grid)", "the cutoff calibration error on a 65,536-cell "
            "grid, within its stated bound", CutoffGridStatistics,
            dask="approximate: a 65,536-cell grid, within the stated bound (CutoffGridStatistics.bound)"),
    _binned("max_calibration_error", mce, "mce", 15, "uniform", "MCE", "largest |mean(y) - mean(p)| over 15 "
            "bins"),
    _binned("rms_calibration_error", rms, "rms", 15, "uniform", "RMSCE", "root-mean-square binned "
            "calibration error"),
    _binned("average_calibration_error", ace, "ace", 15, "uniform", "ACE", "unweighted mean gap over the "
            "non-empty bins"),
    _binned("debiased_l2_calibration_error", dl2, "debiased_l2", 15, "quantile", "debiased L2", "debiased "
            "l2 calibration error of Kumar, Liang and Ma (15 equal-mass bins)"),
    Measure("ce1", "binary", ce1_score, "CE1", "first-order calibration error E|eta1 - m| of the score m "
            "(tensor-Chebyshev ridge estimate)", CE1Statistics, {"degree": 12, "alpha": 1e-6}, bounds=_OPEN,
            dask=_POLYNOMIAL, label_args=()),
    # -- multiclass: labels as column indices and (n, k) probabilities --------------------------------------
    _truthful("truthful_conf_ce", truthful_conf_ce, TopLabelStatistics, "ConfCE-corr", "corrected squared "
              "top-label calibration error, truthful (15 quantile bins)", scorer="labels", report=True),
    _truthful("classwise_lince", classwise_lince, ClasswiseStatistics, "LinCE-cw", "classwise linear "
              "calibration error, truthful (15 quantile bins per class)", scorer="labels", report=True),
    _truthful("conf_ece", conf_ece, TopLabelStatistics, "ConfECE", "top-label ECE (not truthful; for "
              "comparison; 15 quantile bins)", report=True),
    _truthful("conf_ce", conf_ce, TopLabelStatistics, "ConfCE", "squared top-label calibration error "
              "without the label-noise correction (not truthful)"),
    _truthful("classwise_ece", classwise_ece, ClasswiseStatistics, "ECE-cw", "classwise ECE (not truthful; "
              "15 quantile bins per class)"),
    Measure("brier_over_k", "multiclass", brier_over_k, "Brier/k", "mean Brier score divided by the number "
            "of classes (the proper loss of classwise LinCE)", bounds=_OPEN, is_calibration=False),
    Measure("confidence_proper_loss", "multiclass", confidence_proper_loss, "conf. loss", "mean confidence "
            "proper loss 1 - z + (c - z)^2 (the proper loss of ConfCE-corr)", bounds=_OPEN,
            is_calibration=False),
    Measure("accuracy", "multiclass", multiclass_accuracy, "accuracy", "accuracy of the most probable class",
            greater_is_better=True, bounds=_OPEN, is_calibration=False, report=True,
            rows=multiclass_accuracy_rows),
    Measure("brier", "multiclass", multiclass_brier, "Brier", "mean over rows of sum_j (p_j - 1[y = j])^2 "
            "(sklearn.metrics.brier_score_loss)", bounds=_OPEN, is_calibration=False, report=True,
            rows=multiclass_brier_rows),
    Measure("log_loss", "multiclass", multiclass_log_loss, "log loss", "mean negative log-probability of "
            "the true class (sklearn.metrics.log_loss)", bounds=_OPEN, is_calibration=False, report=True,
            rows=multiclass_log_loss_rows),
    # -- second order: snapshots and (m, sigma2) -------------------------------------------------------------
    Measure("ce2", "second_order", ce2_score, "CE2", "second-order calibration error E|eta1 - m| + E|eta2 - "
            "(m^2 + sigma2)|: tensor-Chebyshev ridge estimate, degree and ridge chosen once per model by "
            "5-fold CV on the full validation set", CE2Statistics, {"degree": 12, "alpha": 1e-6},
            bounds=_OPEN, scorer="second_order", report=True, dask=_POLYNOMIAL, label_args=(),
            replicates=_ce2_replicates),
    Measure("second_moment_mse", "second_order", second_moment_mse, "MSE(m^2+s2)", "mean of (m^2 + sigma2 - "
            "t2)^2, a proper loss for E[f*^2] (includes label noise)", bounds=_OPEN, is_calibration=False,
            report=True, rows=second_moment_mse_rows),
    Measure("variance_bias", "second_order", variance_bias, "mean s2 - (f*-m)^2", "mean stated variance "
            "sigma2 minus the unbiased estimate of the mean squared error (f* - m)^2 (positive: the model "
            "overstates its uncertainty; negative: over-confident); ranked by |value|", bounds=(None, None),
            rank_by_abs=True, is_calibration=False, report=True, rows=variance_bias_rows),
    # -- k-class second order: counts per class and (n, k, 2) scores ---------------------------------------
    Measure("ce2_classwise", "class_second_order", ce2_classwise, "CE2-cw", "classwise second-order "
            "calibration error: the mean over classes of the one-vs-rest CE2 E|eta1 - m_j| + E|eta2 - "
            "(m_j^2 + sigma2_j)|, each class's degree and ridge chosen once per model by 5-fold CV",
            bounds=_OPEN, scorer="second_order", report=True),
    Measure("ce2_top_label", "class_second_order", ce2_top_label, "CE2-top", "top-label second-order "
            "calibration error: CE2 of each row's class of largest m, its (m, sigma2) and its votes "
            "(degree and ridge by 5-fold CV)", bounds=_OPEN, scorer="second_order", report=True),
    Measure("second_moment_mse", "class_second_order", classwise_second_moment_mse, "MSE(m^2+s2)", "mean "
            "over rows and classes of (m_j^2 + sigma2_j - t2_j)^2, a proper loss for E[f*_j^2]", bounds=_OPEN,
            is_calibration=False, report=True),
    Measure("variance_bias", "class_second_order", top_label_variance_bias, "mean s2 - (f*-m)^2", "top "
            "label: mean stated variance sigma2 minus the unbiased estimate of the mean squared error (f* "
            "- m)^2 (positive: overstated uncertainty; negative: over-confident); ranked by |value|",
            bounds=(None, None), rank_by_abs=True, is_calibration=False, report=True),
)
# fmt: on


def measures(input=None, **flags):
    """The catalogue's measures of one input kind with the given flags, as a dict name -> :class:`Measure`.

    ``measures("binary", report=True)`` are the binary report metrics; a flag is true when the
    entry's attribute is truthy (``dask=True`` selects the measures with a ``dask`` status).
    """
    out = {}
    for m in CATALOG:
        if input is not None and m.input != input:
            continue
        if all(bool(getattr(m, k)) == bool(v) for k, v in flags.items()):
            out.setdefault(m.name, m)
    return out


def measure(name, input="binary"):
    """The catalogue entry of ``name`` for ``input`` (a ``KeyError`` if there is none)."""
    for m in CATALOG:
        if m.name == name and m.input == input:
            return m
    raise KeyError(f"no measure {name!r} of {input} input in the catalogue")
