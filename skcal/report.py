"""Model-selection reports: several models, one validation set, every calibration measure.

:func:`calibration_report` evaluates fitted models on the same validation data and returns a
:class:`CalibrationReport`: a pandas table with each metric's value, a paired bootstrap interval
and the models' rank, the figures (reliability diagrams, metric intervals, second-order views),
and writers for a self-contained HTML file and a Markdown table.

Three kinds of report exist, chosen by the shape of ``y`` and of the predictions:

* **first order** (``y`` holds one binary label per row): each model's ``predict_proba`` gives
  the positive-class probability; the default metrics are SCDL, smECE, the cutoff calibration
  error, the 11-bin ECE, accuracy (at threshold 1/2), the Brier score and the log loss.
* **second order** (``y`` is an ``(n, k)`` array of snapshots, ``k >= 2`` independent labels per
  row, NaN for a missing vote): each model outputs second-order scores ``(m, sigma2)`` through
  ``transform`` (or ``predict`` when it has no ``transform``), e.g. a pipeline ending in
  :class:`~skcal.SecondOrderPlattCalibrator` or :class:`~skcal.EnsembleMoments`; the default
  metrics are CE2, SCDL and the Brier score of ``m`` against the individual votes, a proper
  loss for the second moment and the bias of the stated variance.
* **multiclass** (``y`` holds one of ``k > 2`` classes per row): each model's ``predict_proba``
  is an ``(n, k)`` matrix; the default metrics are the truthful errors of SPEC 5 (the corrected
  top-label ConfCE and the classwise LinCE), the top-label ECE for comparison, accuracy, the
  multiclass Brier score and the log loss.

The bootstrap is *paired*: every replicate resamples the rows once and scores every model on the
same resample, so the intervals of two models are comparable and ``p_best`` (the fraction of
replicates in which a model is the best) says how stable a ranking is.
"""

from __future__ import annotations

import base64
import html
import io
import numbers
import pathlib
import sys
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_random_state

from skcal._validation import (
    check_binary_probabilities,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_scores,
    check_snapshots,
    snapshot_targets,
    snapshot_votes,
)
from skcal.votes import VoteCounts

__all__ = ["CalibrationReport", "calibration_report"]

#: Probabilities are clipped to [LOG_LOSS_EPS, 1 - LOG_LOSS_EPS] inside the log loss.
LOG_LOSS_EPS = 1e-15


# ----------------------------------------------------------------------------------------------
# metrics
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Metric:
    """A report metric: ``func(data, prediction) -> float`` for one model on one (re)sample."""

    name: str
    label: str
    func: object
    greater_is_better: bool = False
    description: str = ""
    #: ``prepare(data, prediction) -> dict`` of keyword arguments for ``func``, computed once per
    #: model on the full validation set and reused on every bootstrap replicate (for metrics
    #: with data-driven hyperparameters, such as CE2's degree and ridge).
    prepare: object = None
    #: Rank by the absolute value (zero is ideal, the sign is informative).
    rank_by_abs: bool = False


def _brier(y, p):
    return float(np.mean((p - y) ** 2))


def _log_loss(y, p):
    q = np.clip(p, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    return float(-np.mean(y * np.log(q) + (1.0 - y) * np.log1p(-q)))


def _accuracy(y, p):
    return float(np.mean((p >= 0.5) == (y == 1.0)))


def _roc_auc(y, p):
    from sklearn.metrics import roc_auc_score

    if np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, p))


def _scdl(y, p):
    from skcal import scdl_score

    return float(scdl_score(y, p))


def _smooth_ece(y, p):
    from skcal import smooth_ece

    return float(smooth_ece(y, p))


def _cutoff(y, p):
    from skcal import cutoff_calibration_error

    return float(cutoff_calibration_error(y, p))


def _binned_ece(y, p):
    from skcal import binned_ece

    return float(binned_ece(y, p, n_bins=11))


_FIRST_ORDER = {
    "scdl": ("SCDL", _scdl, False, "soft-binned calibration decision loss (SPEC 4)"),
    "smooth_ece": ("smECE", _smooth_ece, False, "smooth calibration error of Blasiok and Nakkiran"),
    "cutoff": (
        "cutoff",
        _cutoff,
        False,
        "cutoff calibration error: sup over intervals of |E[(y-p)1{p in I}]|",
    ),
    "binned_ece": ("ECE-11", _binned_ece, False, "binned ECE with 11 equal-width bins"),
    "accuracy": ("accuracy", _accuracy, True, "accuracy of the decision p >= 1/2"),
    "brier": ("Brier", _brier, False, "mean squared error of p against the label"),
    "log_loss": (
        "log loss",
        _log_loss,
        False,
        "mean negative log-likelihood (p clipped to [1e-15, 1-1e-15])",
    ),
    "roc_auc": ("ROC AUC", _roc_auc, True, "area under the ROC curve (ranking only)"),
}
_FIRST_ORDER_DEFAULT = ("scdl", "smooth_ece", "cutoff", "binned_ece", "accuracy", "brier", "log_loss")


def _first_order_metric(name):
    label, func, gib, desc = _FIRST_ORDER[name]
    return _Metric(name, label, lambda d, p, _f=func: _f(d.y, p), gib, desc)


class _FirstOrderData:
    """Validated first-order validation data: binary labels ``y`` (float 0/1)."""

    order = "first"

    def __init__(self, y):
        self.y = y
        self.n = y.shape[0]

    def take(self, idx):
        return _FirstOrderData(self.y[idx])


class _SecondOrderData:
    """Validated snapshots with their unbiased targets and the flattened votes."""

    order = "second"

    def __init__(self, Y):
        self.Y = Y
        self.n = Y.shape[0]
        self.t1, self.t2, self.c = snapshot_targets(Y)  # Y: votes or skcal.votes.VoteCounts
        self.vote_rows, self.votes = snapshot_votes(Y)  # row of each observed vote (row-major order)

    def take(self, idx):
        return _SecondOrderData(self.Y[idx])


def _vote_metric(name):
    """A first-order metric of ``m`` against every observed vote (each vote one sample)."""
    label, func, gib, desc = _FIRST_ORDER[name]
    return _Metric(
        name,
        label,
        lambda d, s, _f=func: _f(d.votes, s[d.vote_rows, 0]),
        gib,
        desc + "; m against each vote",
    )


#: Sech bandwidth assumed for second-order scores in the report's CE2 (SPEC 1 default).
CE2_BANDWIDTH = 2**-6
#: Candidate degrees and folds for the report's CE2 (chosen once per model, see ``_ce2_prepare``).
CE2_DEGREES = (2, 4, 8)
CE2_FOLDS = 5


def _ce2_prepare(d, s):
    """Choose CE2's degree and ridge once per model: 5-fold CV of both moment regressions.

    The candidates are the tensor degrees ``CE2_DEGREES`` and the ridge multipliers of
    :data:`skcal.ce2.DEFAULT_ALPHAS`, scored by the held-out squared error of the two moment
    regressions (a proper criterion, SPEC 2). Validation sets are small, so the analytic degree
    rule (which targets large n) is not used.
    """
    from skcal import ce2_details

    res = ce2_details(d.Y, s, degree=list(CE2_DEGREES), cv=CE2_FOLDS, bandwidth=CE2_BANDWIDTH, random_state=0)
    return {"degree": int(res.degree), "alpha": float(res.alpha)}


def _ce2(d, s, degree=None, alpha=1e-6):
    from skcal import ce2_score

    kw = {} if degree is None else {"degree": degree}
    return float(ce2_score(d.Y, s, alpha=alpha, bandwidth=CE2_BANDWIDTH, **kw))


def _second_moment_mse(d, s):
    v = s[:, 0] ** 2 + s[:, 1]
    return float(np.mean((v - d.t2) ** 2))


def _variance_bias(d, s):
    # e = t2 - 2 m t1 + m^2 is unbiased for (f* - m)^2 given x (SPEC 0 targets).
    m, s2 = s[:, 0], s[:, 1]
    e = d.t2 - 2.0 * m * d.t1 + m**2
    return float(np.mean(s2) - np.mean(e))


_SECOND_ORDER = {
    "ce2": _Metric(
        "ce2",
        "CE2",
        _ce2,
        False,
        "second-order calibration error (SPEC 2): tensor-Chebyshev ridge estimate, degree and ridge chosen "
        "once per model by 5-fold CV on the full validation set; its bootstrap replicates run upward "
        "(duplicated rows let the in-sample fit follow noise), so its interval can sit above the value: "
        "compare the models' intervals with each other",
        prepare=_ce2_prepare,
    ),
    "second_moment_mse": _Metric(
        "second_moment_mse",
        "MSE(m^2+s2)",
        _second_moment_mse,
        False,
        "mean of (m^2 + sigma2 - t2)^2, a proper loss for E[f*^2] (includes label noise)",
    ),
    "variance_bias": _Metric(
        "variance_bias",
        "mean s2 - (f*-m)^2",
        _variance_bias,
        False,
        "mean sigma2 minus the unbiased estimate of the mean squared error (f* - m)^2 "
        "(positive: overstated uncertainty); ranked by absolute value",
        rank_by_abs=True,
    ),
}
_SECOND_ORDER_DEFAULT = ("ce2", "scdl", "brier", "second_moment_mse", "variance_bias")


class _MulticlassData:
    """Validated multiclass labels as column indices ``0..k-1`` of the probability matrices."""

    order = "multiclass"

    def __init__(self, codes, n_classes):
        self.codes = codes
        self.n_classes = n_classes
        self.n = codes.shape[0]

    def take(self, idx):
        return _MulticlassData(self.codes[idx], self.n_classes)


def _mc_labels(d):
    return np.arange(d.n_classes)


def _mc_truthful_conf_ce(d, P):
    from skcal import truthful_conf_ce

    return float(truthful_conf_ce(d.codes, P, labels=_mc_labels(d)))


def _mc_classwise_lince(d, P):
    from skcal import classwise_lince

    return float(classwise_lince(d.codes, P, labels=_mc_labels(d)))


def _mc_conf_ece(d, P):
    from skcal import conf_ece

    return float(conf_ece(d.codes, P, labels=_mc_labels(d)))


def _mc_accuracy(d, P):
    return float(np.mean(np.argmax(P, axis=1) == d.codes))


def _mc_brier(d, P):
    onehot = np.zeros_like(P)
    onehot[np.arange(d.n), d.codes] = 1.0
    return float(np.mean(np.sum((P - onehot) ** 2, axis=1)))


def _mc_log_loss(d, P):
    q = np.clip(P[np.arange(d.n), d.codes], LOG_LOSS_EPS, 1.0)
    return float(-np.mean(np.log(q)))


_MULTICLASS = {
    "truthful_conf_ce": _Metric(
        "truthful_conf_ce",
        "ConfCE-corr",
        _mc_truthful_conf_ce,
        False,
        "corrected squared top-label calibration error, truthful (SPEC 5; 15 quantile bins)",
    ),
    "classwise_lince": _Metric(
        "classwise_lince",
        "LinCE-cw",
        _mc_classwise_lince,
        False,
        "classwise linear calibration error, truthful (SPEC 5; 15 quantile bins per class)",
    ),
    "conf_ece": _Metric(
        "conf_ece",
        "ConfECE",
        _mc_conf_ece,
        False,
        "top-label ECE (not truthful; for comparison; 15 quantile bins)",
    ),
    "accuracy": _Metric("accuracy", "accuracy", _mc_accuracy, True, "accuracy of the most probable class"),
    "brier": _Metric("brier", "Brier", _mc_brier, False, "mean over rows of sum_j (p_j - 1[y = j])^2"),
    "log_loss": _Metric(
        "log_loss", "log loss", _mc_log_loss, False, "mean negative log-probability of the true class"
    ),
}
_MULTICLASS_DEFAULT = ("truthful_conf_ce", "classwise_lince", "conf_ece", "accuracy", "brier", "log_loss")


def _resolve_metrics(metrics, order):
    """Turn the ``metrics`` argument into a list of :class:`_Metric`."""
    if metrics is None:
        metrics = {"first": _FIRST_ORDER_DEFAULT, "second": _SECOND_ORDER_DEFAULT}.get(
            order, _MULTICLASS_DEFAULT
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    items = metrics.items() if isinstance(metrics, dict) else [(m, m) for m in metrics]
    out = []
    for name, spec in items:
        if isinstance(spec, str) and order == "multiclass":
            if spec not in _MULTICLASS:
                raise ValueError(
                    f"metrics: unknown metric {spec!r} for a multiclass report; expected one of "
                    f"{sorted(_MULTICLASS)} or a dict name -> callable."
                )
            out.append(replace(_MULTICLASS[spec], name=str(name)))
            continue
        if isinstance(spec, str):
            if order == "second" and spec in _SECOND_ORDER:
                out.append(replace(_SECOND_ORDER[spec], name=str(name)))
            elif spec in _FIRST_ORDER:
                obj = _first_order_metric(spec) if order == "first" else _vote_metric(spec)
                out.append(replace(obj, name=str(name)))
            else:
                known = sorted(_FIRST_ORDER) if order == "first" else sorted({*_FIRST_ORDER, *_SECOND_ORDER})
                raise ValueError(
                    f"metrics: unknown metric {spec!r} for a {order}-order report; expected one of "
                    f"{known} or a dict name -> callable."
                )
            continue
        gib = False
        func = spec
        if isinstance(spec, tuple):
            if len(spec) != 2 or not callable(spec[0]):
                raise ValueError(
                    f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair."
                )
            func, gib = spec[0], bool(spec[1])
        if not callable(func):
            raise ValueError(f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair.")
        if order == "multiclass":
            out.append(
                _Metric(str(name), str(name), lambda d, P, _f=func: float(_f(d.codes, P)), gib, "user metric")
            )
        elif order == "first":
            out.append(
                _Metric(str(name), str(name), lambda d, p, _f=func: float(_f(d.y, p)), gib, "user metric")
            )
        else:
            out.append(
                _Metric(str(name), str(name), lambda d, s, _f=func: float(_f(d.Y, s)), gib, "user metric")
            )
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise ValueError(f"metrics: duplicate metric names {names}.")
    if not out:
        raise ValueError("metrics is empty; expected at least one metric.")
    return out


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------
def _as_named_models(estimators, what="estimators"):
    """A dict name -> object from a dict, a list of objects or a list of (name, object) pairs."""
    if isinstance(estimators, dict):
        items = [(str(k), v) for k, v in estimators.items()]
    elif isinstance(estimators, (list, tuple)):
        items = []
        counts = {}
        for e in estimators:
            if isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str):
                items.append(e)
                continue
            base = type(e).__name__
            if base == "Pipeline" and hasattr(e, "steps"):
                base = type(e.steps[-1][1]).__name__
            counts[base] = counts.get(base, 0) + 1
            items.append((base if counts[base] == 1 else f"{base} ({counts[base]})", e))
    else:
        raise ValueError(
            f"{what} must be a dict name -> model or a list of models; got {type(estimators).__name__}."
        )
    if not items:
        raise ValueError(f"{what} is empty; expected at least one model.")
    names = [k for k, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: duplicate model names {names}.")
    return dict(items)


def _is_snapshots(y):
    if isinstance(y, VoteCounts):
        return True
    arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    return arr.ndim == 2 and arr.shape[1] >= 2


def _is_multiclass(predictions):
    """Whether any prediction is an ``(n, k)`` probability matrix with ``k > 2``."""
    for P in predictions.values():
        shape = np.shape(P.to_numpy() if hasattr(P, "to_numpy") else P)
        if len(shape) == 2 and shape[1] > 2:
            return True
    return False


_FROM_PREDICTIONS_HINT = (
    "calibration_report takes fitted models; for stored predictions use "
    "CalibrationReport.from_predictions(y, {name: predictions})."
)


def _not_a_model(name, estimator):
    """An error for an array passed where a fitted model was expected, or None."""
    if isinstance(estimator, (np.ndarray, list, tuple, pd.Series, pd.DataFrame)):
        return ValueError(
            f"estimators[{name!r}] is a {type(estimator).__name__} of predictions, not a model; "
            + _FROM_PREDICTIONS_HINT
        )
    return None


def _first_order_prediction(name, estimator, X):
    err = _not_a_model(name, estimator)
    if err is not None:
        raise err
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(
            f"estimators[{name!r}] has no predict_proba; a first-order report needs probabilistic "
            "classifiers (" + _FROM_PREDICTIONS_HINT + ")"
        )
    proba = np.asarray(estimator.predict_proba(X))
    if proba.ndim != 2 or proba.shape[1] < 2:
        raise ValueError(
            f"estimators[{name!r}].predict_proba returned shape {proba.shape}; expected (n, k) class "
            "probabilities with k >= 2."
        )
    return proba, getattr(estimator, "classes_", None)


def _second_order_prediction(name, estimator, X):
    err = _not_a_model(name, estimator)
    if err is not None:
        raise err
    if hasattr(estimator, "predict_second_order"):  # e.g. SecondOrderCalibratedClassifier
        method = "predict_second_order"
    else:
        method = "transform" if hasattr(estimator, "transform") else "predict"
    if not hasattr(estimator, method):
        raise ValueError(
            f"estimators[{name!r}] has neither transform nor predict; a second-order report needs models "
            "that output (m, sigma2) (" + _FROM_PREDICTIONS_HINT + ")"
        )
    S = np.asarray(getattr(estimator, method)(X), dtype=float)
    if S.ndim != 2 or S.shape[1] != 2:
        raise ValueError(
            f"estimators[{name!r}].{method} returned shape {S.shape}; a second-order report needs "
            "(n, 2) scores (m, sigma2)."
        )
    return S


# ----------------------------------------------------------------------------------------------
# the bootstrap
# ----------------------------------------------------------------------------------------------
def _prepare_all(data, preds, metrics):
    """Per model and metric, the keyword arguments fixed on the full validation set."""
    return [[m.prepare(data, p) if m.prepare is not None else {} for m in metrics] for p in preds]


def _score_all(data, preds, metrics, params):
    """Array (n_models, n_metrics) of every metric for every model on one (re)sample."""
    return np.array(
        [
            [m.func(data, p, **kw) for m, kw in zip(metrics, pk, strict=True)]
            for p, pk in zip(preds, params, strict=True)
        ],
        dtype=float,
    )


def _bootstrap_chunk(data, preds, metrics, params, seeds):
    out = np.empty((len(seeds), len(preds), len(metrics)))
    for r, seed in enumerate(seeds):
        idx = np.random.RandomState(seed).randint(0, data.n, size=data.n)
        out[r] = _score_all(data.take(idx), [p[idx] for p in preds], metrics, params)
    return out


def _run_bootstrap(data, preds, metrics, params, n_bootstrap, n_jobs, random_state, verbose):
    rng = check_random_state(random_state)
    seeds = rng.randint(0, np.iinfo(np.int32).max, size=n_bootstrap)
    if n_bootstrap == 0:
        return np.empty((0, len(preds), len(metrics)))
    n_workers = effective_n_jobs(n_jobs)
    n_chunks = int(min(n_bootstrap, max(1, 4 * n_workers), 50))
    chunks = [c for c in np.array_split(seeds, n_chunks) if c.size]
    t0 = time.perf_counter()
    results = []
    done = 0
    last = t0
    try:  # results as they complete, for progress lines (joblib >= 1.3)
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    except TypeError:  # pragma: no cover - older joblib: all results at the end
        parallel = Parallel(n_jobs=n_jobs)
    for res in parallel(delayed(_bootstrap_chunk)(data, preds, metrics, params, c) for c in chunks):
        results.append(res)
        done += res.shape[0]
        if verbose and (done == n_bootstrap or time.perf_counter() - last >= 1.0):
            last = time.perf_counter()
            print(
                f"[skcal] bootstrap: {done}/{n_bootstrap} replicates ({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    return np.concatenate(results, axis=0)


#: Ranks and ``p_best`` compare values rounded to this many significant digits, so that models
#: whose metric differs only by floating-point noise (e.g. 0.19999959423857713 and
#: 0.1999995942385772 from two models with identical errors) are tied.
RANK_SIGNIFICANT_DIGITS = 10


def _round_significant(values, digits=RANK_SIGNIFICANT_DIGITS):
    """``values`` rounded to ``digits`` significant digits (zero, NaN and infinity unchanged)."""
    v = np.asarray(values, dtype=float)
    # Decimal formatting is exact at every magnitude (a power-of-ten scale overflows near 1e-300);
    # the arrays are small (bootstrap replicates x models).
    return np.array([float(f"{x:.{digits}g}") for x in v.ravel()]).reshape(v.shape)


def _ranks(values, greater_is_better, by_abs=False):
    """Ranks (1 is best) of values rounded to ``RANK_SIGNIFICANT_DIGITS``; ties share the lower rank."""
    v = np.abs(values) if by_abs else np.asarray(values, dtype=float)
    v = _round_significant(v)
    key = -v if greater_is_better else v
    return pd.Series(key).rank(method="min", na_option="bottom").to_numpy().astype(int)


# ----------------------------------------------------------------------------------------------
# the report object
# ----------------------------------------------------------------------------------------------
class CalibrationReport:
    """Several models' calibration on one validation set: table, figures, HTML and Markdown.

    Build it with :func:`calibration_report` (from fitted models) or
    :meth:`CalibrationReport.from_predictions` (from predictions already made).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model; columns are a MultiIndex ``(metric, field)`` with fields ``value``
        (the metric on the full validation set), ``low`` and ``high`` (the bootstrap percentile
        interval at ``confidence_level``), ``rank`` (1 is best; ties share the lower rank) and
        ``p_best`` (the fraction of bootstrap replicates in which the model is the best or tied
        for best). Ranks and ``p_best`` compare values rounded to 10 significant digits
        (:data:`RANK_SIGNIFICANT_DIGITS`), so models that differ only by floating-point noise
        are tied.
    order : {"first", "second", "multiclass"}
        First-order (binary labels), second-order (snapshots) or multiclass report.
    model_names : list of str
    metric_names : list of str
    predictions : dict
        Model name -> the validated predictions that were scored: an ``(n,)`` array of
        positive-class probabilities (first order), an ``(n, 2)`` array ``(m, sigma2)`` (second
        order) or an ``(n, k)`` probability matrix (multiclass).
    bootstrap_values : ndarray of shape (n_bootstrap, n_models, n_metrics)
        Every metric of every model on every bootstrap replicate.
    figures : dict
        Figure title -> :class:`matplotlib.figure.Figure`, built on first access (empty when
        matplotlib is not installed).
    notes : list of str
        Free text shown in the HTML and Markdown output (data provenance, caveats).
    """

    def __init__(
        self,
        *,
        data,
        predictions,
        metrics,
        bootstrap_values,
        confidence_level,
        title,
        notes,
        params,
        estimators=None,
        elapsed=None,
        random_state=None,
    ):
        self._data = data
        self._params = params
        self.metric_params = {
            model: {m.name: dict(kw) for m, kw in zip(metrics, pk, strict=True) if kw}
            for model, pk in zip(predictions, params, strict=True)
        }
        self._metrics = metrics
        self._estimators = estimators or {}
        self._random_state = random_state
        self.order = data.order
        self.n_samples = data.n
        self.predictions = predictions
        self.model_names = list(predictions)
        self.metric_names = [m.name for m in metrics]
        self._metric_by_name = {m.name: m for m in metrics}
        self.metric_labels = {m.name: m.label for m in metrics}
        self.metric_descriptions = {m.name: m.description for m in metrics}
        self.greater_is_better = {m.name: m.greater_is_better for m in metrics}
        self.bootstrap_values = bootstrap_values
        self.confidence_level = confidence_level
        self.title = title
        self.notes = list(notes)
        self.elapsed = elapsed
        self._figures = None
        self._extra_figures = []
        self.table = self._build_table()

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_predictions(
        cls,
        y,
        predictions,
        *,
        metrics=None,
        n_bootstrap=200,
        confidence_level=0.9,
        n_jobs=None,
        random_state=None,
        pos_label=None,
        labels=None,
        title=None,
        notes=(),
        verbose=0,
        _estimators=None,
    ):
        """Build a report from predictions that were already made.

        Parameters
        ----------
        y : array-like of shape (n,) or (n, k)
            Binary labels (first-order report), snapshots, ``k >= 2`` independent binary labels
            per row with NaN for a missing vote (second-order report), or class labels
            (multiclass report).
        predictions : dict
            Model name -> positive-class probabilities of shape ``(n,)`` or ``(n, 2)``
            (``predict_proba`` output) for a first-order report, second-order scores
            ``(m, sigma2)`` of shape ``(n, 2)`` for a second-order report, or ``(n, k)`` class
            probabilities with ``k > 2`` for a multiclass report.
        metrics, n_bootstrap, confidence_level, n_jobs, random_state, verbose
            As in :func:`calibration_report`.
        pos_label : int, float, bool or str, default=None
            The positive class of ``y`` (binary first order only).
        labels : array-like of shape (k,), default=None
            Multiclass only: the class of each probability column (default: the sorted labels
            of ``y``, or ``0..k-1`` for integer labels in that range).
        title : str, default=None
            Title of the HTML page and Markdown section.
        notes : sequence of str, default=()
            Free text shown in the HTML and Markdown output.

        Returns
        -------
        report : CalibrationReport

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.report import CalibrationReport
        >>> rng = np.random.RandomState(0)
        >>> p = rng.uniform(size=300)
        >>> y = (rng.uniform(size=300) < p).astype(int)
        >>> report = CalibrationReport.from_predictions(
        ...     y, {"honest": p, "overconfident": np.clip(1.6 * p - 0.3, 0, 1)},
        ...     metrics=["brier", "accuracy"], n_bootstrap=20, random_state=0)
        >>> report.table["brier"]["rank"].to_dict()
        {'honest': 1, 'overconfident': 2}
        """
        _check_bootstrap_params(n_bootstrap, confidence_level)
        predictions = _as_named_models(predictions, what="predictions")
        t0 = time.perf_counter()
        if _is_snapshots(y):
            Y = check_snapshots(y, name="y")
            data = _SecondOrderData(Y)
            preds = {}
            for name, s in predictions.items():
                S = check_scores(s, name=f"predictions[{name!r}]")
                if S.shape[1] != 2:
                    raise ValueError(
                        f"predictions[{name!r}] has one column; a second-order report (snapshots as y) "
                        "needs (m, sigma2) scores of shape (n, 2)."
                    )
                if S.shape[0] != data.n:
                    raise ValueError(
                        f"predictions[{name!r}] has {S.shape[0]} rows; expected {data.n} (one per row of y)."
                    )
                preds[name] = S
        elif _is_multiclass(predictions):
            arrays = {
                name: (P.to_numpy() if hasattr(P, "to_numpy") else np.asarray(P))
                for name, P in predictions.items()
            }
            k = max(a.shape[1] if a.ndim == 2 else 1 for a in arrays.values())
            preds = {
                name: check_multiclass_probabilities(P, name=f"predictions[{name!r}]", n_classes=k)
                for name, P in arrays.items()
            }
            codes = check_multiclass_labels(y, k, labels=labels, name="y")
            for name, P in preds.items():
                if P.shape[0] != codes.shape[0]:
                    raise ValueError(
                        f"Inconsistent numbers of samples: y has {codes.shape[0]}, predictions[{name!r}] "
                        f"has {P.shape[0]}."
                    )
            data = _MulticlassData(codes, k)
        else:
            yv = None
            preds = {}
            for name, p in predictions.items():
                yy, pp, _ = check_binary_probabilities(
                    y, p, pos_label=pos_label, y_prob_name=f"predictions[{name!r}]", y_true_name="y"
                )
                if yv is None:
                    yv = yy
                preds[name] = pp
            data = _FirstOrderData(yv)
        metric_objs = _resolve_metrics(metrics, data.order)
        plist = list(preds.values())
        params = _prepare_all(data, plist, metric_objs)
        boot = _run_bootstrap(data, plist, metric_objs, params, n_bootstrap, n_jobs, random_state, verbose)
        report = cls(
            data=data,
            predictions=preds,
            metrics=metric_objs,
            bootstrap_values=boot,
            confidence_level=confidence_level,
            title=title
            or {
                "first": "Calibration report",
                "second": "Second-order calibration report",
                "multiclass": "Multiclass calibration report",
            }[data.order],
            notes=notes,
            params=params,
            estimators=_estimators,
            elapsed=None,
            random_state=random_state,
        )
        report.elapsed = time.perf_counter() - t0
        return report

    def _build_table(self):
        point = _score_all(self._data, list(self.predictions.values()), self._metrics, self._params)
        alpha = (1.0 - self.confidence_level) / 2.0
        cols = {}
        boot = self.bootstrap_values
        for j, m in enumerate(self._metrics):
            by_abs = m.rank_by_abs
            col = boot[:, :, j]
            if boot.shape[0] and np.isfinite(col).any():
                with warnings.catch_warnings():  # a model whose metric is NaN on every replicate
                    warnings.simplefilter("ignore", RuntimeWarning)
                    low = np.nanquantile(col, alpha, axis=0)
                    high = np.nanquantile(col, 1 - alpha, axis=0)
                key = _round_significant(np.abs(col) if by_abs else col)
                key = -key if m.greater_is_better else key
                key = np.where(np.isnan(key), np.inf, key)
                p_best = (key == key.min(axis=1, keepdims=True)).mean(axis=0)
            else:
                low = high = p_best = np.full(len(self.model_names), np.nan)
            cols[(m.name, "value")] = point[:, j]
            cols[(m.name, "low")] = low
            cols[(m.name, "high")] = high
            cols[(m.name, "rank")] = _ranks(point[:, j], m.greater_is_better, by_abs)
            cols[(m.name, "p_best")] = p_best
        table = pd.DataFrame(cols, index=pd.Index(self.model_names, name="model"))
        table.columns = pd.MultiIndex.from_tuples(table.columns, names=["metric", "field"])
        return table

    # -- text output ----------------------------------------------------------------------
    def formatted_table(self, *, digits=4, intervals=True):
        """A DataFrame of strings ``value [low, high] #rank``, one column per metric.

        Parameters
        ----------
        digits : int, default=4
            Significant digits of every number.
        intervals : bool, default=True
            Include the bootstrap interval.

        Returns
        -------
        pandas.DataFrame
        """
        out = {}
        for name in self.metric_names:
            t = self.table[name]
            cells = []
            for model in self.model_names:
                v, lo, hi, rk = t.loc[model, ["value", "low", "high", "rank"]]
                s = _fmt(v, digits)
                if intervals and np.isfinite(lo):
                    s += f" [{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
                s += f" #{int(rk)}"
                cells.append(s)
            out[self.metric_labels[name]] = cells
        return pd.DataFrame(out, index=pd.Index(self.model_names, name="model"))

    def to_text(self, *, digits=4, intervals=False):
        """The table as plain text (as printed by the command line)."""
        with pd.option_context("display.width", 250, "display.max_columns", 50):
            return self.formatted_table(digits=digits, intervals=intervals).to_string()

    def __str__(self):
        return f"{self.title}\n{self.to_text()}"

    def __repr__(self):
        return (
            f"<CalibrationReport ({self.order} order): {len(self.model_names)} models x "
            f"{len(self.metric_names)} metrics on {self.n_samples} samples, "
            f"{self.bootstrap_values.shape[0]} bootstrap replicates>"
        )

    def _legend_lines(self):
        level = int(round(100 * self.confidence_level))
        if self.bootstrap_values.shape[0] == 0:
            lines = [
                f"{self.n_samples} validation samples; cells are value #rank (1 is best). No intervals: "
                "the bootstrap was skipped (n_bootstrap=0).",
                "Calibration errors estimated from a sample are biased upward by its noise: compare the "
                "models' values with each other.",
            ]
        else:
            lines = [
                f"{self.n_samples} validation samples; cells are value [{level}% paired-bootstrap interval, "
                f"{self.bootstrap_values.shape[0]} replicates] #rank (1 is best).",
                "Calibration errors estimated from a sample are biased upward by its noise, and a bootstrap "
                "resample (with its duplicated rows) adds more, so their percentile intervals run higher "
                "than the value and may even exclude it: compare the models' intervals with each other.",
            ]
        for name in self.metric_names:
            direction = "higher is better" if self.greater_is_better[name] else "lower is better"
            if self._metric_by_name[name].rank_by_abs:
                direction = "closer to 0 is better"
            lines.append(f"{self.metric_labels[name]}: {self.metric_descriptions[name]} ({direction}).")
        if "scdl" in self.metric_names and self.metric_descriptions["scdl"] != "user metric":
            from skcal.scdl import default_max_bins

            if self.order == "first":
                n = self._data.n
                sample = f"{n} samples"
            else:  # SCDL of m against every vote: its sample is the votes, not the rows
                n = self._data.votes.shape[0]
                sample = f"{n} votes (SCDL of m against every vote)"
            m = default_max_bins(n)
            floor = (self.table[("scdl", "value")] <= 1.0 / m + 1e-12).sum()
            lines.append(
                f"SCDL cannot go below 1/m_max = {1.0 / m:g}: with {sample} the dyadic search stops at "
                f"m_max = {m} (m ln m <= sqrt(n), SPEC 4). {floor} of {len(self.model_names)} models sit at "
                "this floor, i.e. no decision task can tell them from calibrated at the resolution this "
                "sample allows."
            )
        return lines

    def to_markdown(self, *, digits=4):
        """The report as Markdown: title, notes, the table and its legend.

        The table is written directly (pandas' ``to_markdown`` needs the optional ``tabulate``
        package); ``|`` in names is escaped.

        Returns
        -------
        str
        """
        ft = self.formatted_table(digits=digits)
        header = ["model", *ft.columns]
        lines = [f"## {_md_escape(self.title)}", ""]
        for note in self.notes:
            lines += [_md_escape(note), ""]
        lines.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * len(ft.columns)) + "|")
        for model in ft.index:
            row = [model, *ft.loc[model].tolist()]
            lines.append("| " + " | ".join(_md_escape(str(c)) for c in row) + " |")
        lines.append("")
        lines += [f"- {_md_escape(x)}" for x in self._legend_lines()]
        return "\n".join(lines) + "\n"

    # -- figures --------------------------------------------------------------------------
    @property
    def figures(self):
        if self._figures is None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self._figures = {}
            else:
                self._figures = self._make_figures()
        return self._figures

    def _make_figures(self):
        from skcal._report_figures import make_report_figures

        figs = make_report_figures(self)
        for title, fig in self._extra_figures:
            figs[title] = fig() if callable(fig) else fig
        return figs

    def add_figure(self, title, figure):
        """Add a figure to the report (shown after the built-in ones).

        Parameters
        ----------
        title : str
            Caption (escaped in the HTML).
        figure : matplotlib Figure or callable
            The figure, or a function of no arguments that makes it; a function is called only
            when the figures are first needed, so a report can be built without matplotlib.

        Returns
        -------
        self : CalibrationReport
        """
        if title in {t for t, _ in self._extra_figures}:
            raise ValueError(f"a figure titled {title!r} was already added.")
        self._extra_figures.append((str(title), figure))
        if self._figures is not None:
            self._figures[str(title)] = figure() if callable(figure) else figure
        return self

    # -- HTML -----------------------------------------------------------------------------
    def to_html(self, path=None, *, digits=4):
        """One self-contained HTML page: table, legend, notes and every figure as a PNG data URI.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the page (UTF-8). Nothing is written when ``None``.
        digits : int, default=4

        Returns
        -------
        pathlib.Path or str
            The path written to when ``path`` is given (so a notebook cell ending in
            ``report.to_html("report.html")`` does not echo a page of embedded images);
            the HTML text when ``path`` is None.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.report import CalibrationReport
        >>> rng = np.random.RandomState(0)
        >>> p = rng.uniform(size=100)
        >>> y = (rng.uniform(size=100) < p).astype(int)
        >>> report = CalibrationReport.from_predictions(y, {"honest": p}, metrics=["brier"],
        ...                                             n_bootstrap=0)
        >>> import pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
        >>> report.to_html(out) == out  # writes the file, returns its path
        True
        >>> report.to_html()[:15]  # no path: the page as a string
        '<!DOCTYPE html>'
        """
        return render_html([self], path=path, title=self.title, digits=digits)

    def _html_section(self, digits=4, level=2, heading=True):
        e = html.escape
        ft = self.formatted_table(digits=digits)
        parts = [f"<section><h{level}>{e(self.title)}</h{level}>" if heading else "<section>"]
        for note in self.notes:
            parts.append(f'<p class="note">{e(note)}</p>')
        parts.append('<table class="metrics"><thead><tr><th>model</th>')
        for name in self.metric_names:
            parts.append(
                f'<th title="{e(self.metric_descriptions[name])}">{e(self.metric_labels[name])}</th>'
            )
        parts.append("</tr></thead><tbody>")
        for model in self.model_names:
            parts.append(f"<tr><th>{e(model)}</th>")
            for name in self.metric_names:
                rank = int(self.table.loc[model, (name, "rank")])
                cls = ' class="best"' if rank == 1 else ""
                parts.append(f"<td{cls}>{e(ft.loc[model, self.metric_labels[name]])}</td>")
            parts.append("</tr>")
        parts.append('</tbody></table><ul class="legend">')
        parts += [f"<li>{e(x)}</li>" for x in self._legend_lines()]
        parts.append("</ul>")
        figs = self.figures
        if not figs:
            parts.append(
                '<p class="note">Figures omitted: matplotlib is not installed '
                "(install it with <code>pip install &quot;skcal[plot]&quot;</code>).</p>"
            )
        for title, fig in figs.items():
            parts.append(
                f'<figure><img alt="{e(title)}" src="data:image/png;base64,{_png_base64(fig)}">'
                f"<figcaption>{e(title)}</figcaption></figure>"
            )
        parts.append("</section>")
        return "\n".join(parts)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table.metrics { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
table.metrics th, table.metrics td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
table.metrics thead th { background: #f0f0f0; }
table.metrics tbody th { text-align: left; }
td.best { background: #e3f4e1; font-weight: 600; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; }
p.note { background: #fff8e1; padding: 0.5em 0.8em; border-left: 4px solid #f0b400; }
ul.legend { font-size: 0.85em; color: #555; }
"""


def render_html(reports, *, path=None, title="Calibration report", intro=(), digits=4):
    """Render one or more reports as one self-contained HTML page.

    Parameters
    ----------
    reports : list of CalibrationReport
    path : str or path-like, default=None
        Where to write the page (UTF-8); nothing is written when ``None``.
    title : str, default="Calibration report"
    intro : sequence of str, default=()
        Paragraphs shown under the title.
    digits : int, default=4

    Returns
    -------
    pathlib.Path or str
        The path written to when ``path`` is given, else the HTML text.
    """
    e = html.escape
    body = [f"<h1>{e(title)}</h1>"] + [f"<p>{e(p)}</p>" for p in intro]
    # a section repeating the page title (a single report, as in to_html) gets no second heading
    body += [r._html_section(digits=digits, heading=r.title != title) for r in reports]
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n<footer><p>Made by skcal.</p></footer>\n</body>\n</html>\n"
    )
    if path is None:
        return text
    path = pathlib.Path(path)
    path.write_text(text, encoding="utf-8")
    return path


def _png_base64(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)  # the figures use constrained layout
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _fmt(x, digits):
    if x is None or not np.isfinite(x):
        return "nan"
    return f"{x:.{digits}g}"


def _md_escape(s):
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _check_bootstrap_params(n_bootstrap, confidence_level):
    if not isinstance(n_bootstrap, numbers.Integral) or isinstance(n_bootstrap, bool) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a non-negative integer; got {n_bootstrap!r}.")
    if not isinstance(confidence_level, numbers.Real) or not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must lie in (0, 1); got {confidence_level!r}.")


def calibration_report(
    estimators,
    X,
    y,
    *,
    metrics=None,
    n_bootstrap=200,
    confidence_level=0.9,
    n_jobs=None,
    random_state=None,
    title=None,
    notes=(),
    verbose=0,
):
    """Compare the calibration of several fitted models on the same validation data.

    Parameters
    ----------
    estimators : dict or list
        Fitted models: a dict name -> model, a list of ``(name, model)`` pairs or a list of models
        (named after their class, or after the last step of a pipeline). For a first-order report
        they are binary classifiers with ``predict_proba`` (``classes_[1]`` is the positive
        class); classifiers of ``k > 2`` classes make a multiclass report (their ``classes_``
        name the columns); for a second-order report they output
        ``(m, sigma2)`` through ``transform`` (or ``predict`` when they have no ``transform``),
        e.g. a pipeline ending in :class:`~skcal.SecondOrderPlattCalibrator` or
        :class:`~skcal.EnsembleMoments`; a model with ``predict_second_order`` (such as
        :class:`skcal.second_order_classifier.SecondOrderCalibratedClassifier`) is asked for that.
    X : array-like
        Validation inputs, passed to every model.
    y : array-like of shape (n,) or (n, k)
        Binary labels (first-order report), class labels (multiclass report) or snapshots:
        ``k >= 2`` independent binary labels per row, NaN for a missing vote, or a
        :class:`skcal.votes.VoteCounts` (second-order report).
    metrics : list of str or dict, default=None
        Metric names, or a dict name -> callable (``callable(y, prediction) -> float``, lower is
        better) or name -> ``(callable, greater_is_better)``; for a second-order report callables
        receive the snapshots (a ``VoteCounts`` if ``y`` was one) and the ``(n, 2)`` scores.
        Names for a first-order report:
        ``"scdl"``, ``"smooth_ece"``, ``"cutoff"``, ``"binned_ece"``, ``"accuracy"``, ``"brier"``,
        ``"log_loss"``, ``"roc_auc"``; ``None`` means all but ``"roc_auc"``. A second-order report
        adds ``"ce2"``, ``"second_moment_mse"`` and ``"variance_bias"``; the first-order names there
        score ``m`` against every observed vote (each vote one sample); ``None`` means ``"ce2"``,
        ``"scdl"``, ``"brier"``, ``"second_moment_mse"`` and ``"variance_bias"`` (smECE is left
        out of the second-order default because it is the slowest measure to bootstrap). A
        multiclass report offers (and by default uses) ``"truthful_conf_ce"``,
        ``"classwise_lince"``, ``"conf_ece"``, ``"accuracy"``, ``"brier"`` and ``"log_loss"``;
        its callables receive integer class codes ``0..k-1`` and the ``(n, k)`` matrix.
    n_bootstrap : int, default=200
        Paired bootstrap replicates (rows resampled with replacement, every model scored on the
        same resample). 0 skips the intervals.
    confidence_level : float, default=0.9
        Coverage of the percentile intervals.
    n_jobs : int, default=None
        joblib workers over bootstrap replicates. Results do not depend on it: every replicate
        draws its rows from its own seed.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap.
    title : str, default=None
    notes : sequence of str, default=()
        Free text shown in the HTML and Markdown output (data provenance, caveats).
    verbose : int, default=0
        Print progress lines to stderr when positive.

    Returns
    -------
    report : CalibrationReport

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skcal import calibration_report
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
    >>> models = {
    ...     "logistic": make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr),
    ...     "naive Bayes": GaussianNB().fit(X_tr, y_tr),
    ... }
    >>> report = calibration_report(models, X_te, y_te, metrics=["brier", "log_loss"],
    ...                             n_bootstrap=50, random_state=0)
    >>> report.table["log_loss"]["rank"].to_dict()
    {'logistic': 1, 'naive Bayes': 2}
    """
    models = _as_named_models(estimators)
    second = _is_snapshots(y)
    predictions = {}
    classes = None
    t0 = time.perf_counter()
    for name, est in models.items():
        if verbose:
            print(f"[skcal] predicting with {name!r}", file=sys.stderr, flush=True)
        if second:
            predictions[name] = _second_order_prediction(name, est, X)
        else:
            p, cls = _first_order_prediction(name, est, X)
            if cls is not None:
                if classes is None:
                    classes = np.asarray(cls)
                elif not np.array_equal(np.asarray(cls), classes):
                    raise ValueError(
                        f"estimators[{name!r}] has classes_ {np.asarray(cls).tolist()}, unlike the other "
                        f"models' {classes.tolist()}; all models must be fitted on the same labels."
                    )
            predictions[name] = p
    pos_label = labels = None
    if not second:
        widths = {p.shape[1] for p in predictions.values()}
        if len(widths) > 1:
            raise ValueError(f"the models predict different numbers of classes: {sorted(widths)}.")
        if widths == {2}:  # binary: the probability of the positive class classes_[1]
            predictions = {name: p[:, 1] for name, p in predictions.items()}
            if classes is not None:
                pos_label = classes[1].item() if hasattr(classes[1], "item") else classes[1]
        else:
            labels = classes
    report = CalibrationReport.from_predictions(
        y,
        predictions,
        metrics=metrics,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        n_jobs=n_jobs,
        random_state=random_state,
        pos_label=pos_label,
        labels=labels,
        title=title,
        notes=notes,
        verbose=verbose,
        _estimators=models,
    )
    report.elapsed = time.perf_counter() - t0
    return report
