"""The bad-input sweep: every public callable gets the standard bad inputs (issue 13).

Every public callable of ``skcal.__all__`` (functions, estimators' ``fit`` / ``transform`` /
``predict``, displays' ``from_predictions``, the report entry points) must have an entry in
``CASES`` below saying how to call it with valid data and which of its arguments are arrays
and which are parameters of which kind. A public callable without an entry fails
``test_every_public_callable_has_a_sweep_entry``, so the next public function cannot skip it.

For every entry the sweep checks that the valid call works (no RuntimeWarning, no NaN) and
then feeds, one at a time:

- each array argument: complex values, strings in an object array, NaN, infinity, a wrong
  number of dimensions, an empty array (and, for labels, a missing label ``None``);
- all per-sample arrays cut to a single row (must work without NaN, or fail clearly) and one
  array one row short (length mismatch);
- each parameter: a bool where an int or a float is expected, a string where a number is, a
  float where an int is, ``None`` where it is not allowed, NaN where a float is, an unknown
  option, and absurd sizes (``n_bins=10**12``, ``max_bins=2**40``, ``degree=10**5``).

Each bad case must raise a ``ValueError`` or ``TypeError`` (scikit-learn's
``InvalidParameterError`` is both) whose message names the argument, within a time limit,
without a RuntimeWarning or ComplexWarning, and without mutating any input. A case that fails
because of a file another engineer owns is marked ``xfail(strict=True, reason="<file>: <what>;
owner: <branch>")`` in ``XFAIL``; when the fix is merged the case passes, the strict mark
fails, and the entry is removed.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import pickle
import re
import signal
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass

import numpy as np
import pytest

import skcal
import skcal.platt
from skcal.scorers import SCORER_TABLE

#: seconds one case may take (absurd sizes must be refused, not computed)
TIME_LIMIT = 3.0

# ---------------------------------------------------------------------------------------------
# valid data (small, so that ~1,500 calls run well under a minute)
# ---------------------------------------------------------------------------------------------
_rng = np.random.RandomState(0)
N = 40
Y01 = np.r_[0, 1, _rng.randint(0, 2, N - 2)]
P01 = _rng.uniform(0.05, 0.95, N)
Y3 = np.r_[0, 1, 2, _rng.randint(0, 3, N - 3)]
P3 = _rng.dirichlet(np.ones(3), size=N)
Q3 = _rng.dirichlet(np.ones(3), size=N)
LOGITS = _rng.normal(size=(N, 3))
_M = _rng.uniform(0.0, 1.0, N)
SCORES = np.column_stack([_M, _rng.uniform(0, 1, N) * _M * (1 - _M)])
SNAPSHOTS = (_rng.uniform(size=(N, 3)) < _M[:, None]).astype(float)
T1 = _rng.uniform(0, 1, N)
T2 = T1 * _rng.uniform(0, 1, N)
X3 = _rng.normal(size=(N, 3))
UTILITY = np.array([[1.0, 0.0], [0.0, 1.0]])
ACTIONS = _rng.randint(0, 2, N)
POINTS = np.linspace(0.0, 1.0, 7)
VOTES_TOTAL = _rng.randint(2, 6, N).astype(float)
VOTES_POS = np.floor(_rng.uniform(0, 1, N) * (VOTES_TOTAL + 1)).clip(0, VOTES_TOTAL)


# k classes: per-class vote counts, (n, k, 2) scores and a fitted 3-class ensemble
COUNTS3 = _rng.multinomial(4, np.full(3, 1 / 3), size=N)
_M3 = _rng.dirichlet(np.ones(3), size=N)
SCORES3 = np.stack([_M3, _rng.uniform(0, 1, (N, 3)) * _M3 * (1 - _M3)], axis=2)


def _fitted_classifiers(y=Y01, Cs=(0.1, 1.0, 10.0)):
    from sklearn.linear_model import LogisticRegression

    return [LogisticRegression(C=c).fit(X3, y) for c in Cs]


MEMBERS = _fitted_classifiers()
MEMBERS3 = _fitted_classifiers(Y3, (0.1, 10.0))


@dataclass
class Entry:
    """How to call one public callable with valid data, and what its arguments are."""

    call: Callable
    args: dict
    #: array argument -> kind ("numeric", "labels", "votes", "proba"); "votes" allow NaN
    arrays: dict = field(default_factory=dict)
    #: the array arguments that hold one entry per sample (cut to one row / one row short)
    samples: tuple = ()
    #: int parameter -> an absurd size (or None)
    ints: dict = field(default_factory=dict)
    floats: tuple = ()
    #: parameter taking string options
    options: tuple = ()
    #: parameters for which None is a valid value
    none_ok: tuple = ()
    #: how the argument is named in messages, when not by its own name
    names: dict = field(default_factory=dict)
    #: "either" (work or fail clearly), "work" or "fail"
    single_row: str = "either"
    #: the array arguments broadcast (any shape, empty allowed): no ndim / empty cases
    shape_free: bool = False


def _fit_transform(cls, method="transform"):
    def call(X, y=None, **params):
        est = cls(**params).fit(X, y) if y is not None else cls(**params).fit(X)
        return getattr(est, method)(X)

    return call


def _fitted_method(cls, fit_args, method, params=None):
    def call(X):
        est = cls(**(params or {})).fit(*fit_args)
        return getattr(est, method)(X)

    return call


def _report(y, p, **kw):
    return skcal.CalibrationReport.from_predictions(y, {"model": p}, **kw)


def _batched_report(y, p, **kw):
    """:func:`skcal.report.report_from_batches` of the rows in two chunks (one when not 1-D)."""
    from skcal.report import report_from_batches

    n = max([np.shape(a)[0] for a in (y, p) if np.ndim(a)] or [0])
    cut = n // 2 if np.ndim(y) == 1 and np.ndim(p) >= 1 and np.shape(y)[0] == np.shape(p)[0] else n

    def batches():
        yield 0, y[:cut] if cut < n else y, {"model": p[:cut] if cut < n else p}
        if cut < n:
            yield cut, y[cut:], {"model": p[cut:]}

    return report_from_batches(batches, n_samples=n, models=["model"], **kw)


def _close(result):
    import matplotlib.pyplot as plt

    plt.close("all")
    return result


BIN = {"y_true": Y01, "y_prob": P01}
BIN_ARRAYS = {"y_true": "labels", "y_prob": "proba", "sample_weight": "numeric"}
BIN_SAMPLES = ("y_true", "y_prob", "sample_weight")
MC = {"y_true": Y3, "y_proba": P3}
MC_ARRAYS = {"y_true": "labels", "y_proba": "proba", "sample_weight": "numeric"}
MC_SAMPLES = ("y_true", "y_proba", "sample_weight")
W = np.linspace(0.5, 1.5, N)
KERNEL = {"h": 0.1, "lo": 0.0, "hi": 1.0}


def _mc_metric(func, binned=True):
    return Entry(
        func,
        {**MC, "sample_weight": W},
        arrays=MC_ARRAYS,
        samples=MC_SAMPLES,
        ints={"n_bins": 10**12} if binned else {},
        options=("strategy",) if binned else (),
        none_ok=("sample_weight", "labels"),
    )


CASES: dict[str, Entry] = {
    # first-order binary measures
    "binned_ece": Entry(
        skcal.binned_ece,
        {**BIN, "sample_weight": W},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "pos_label"),
    ),
    "cutoff_calibration_error": Entry(
        skcal.cutoff_calibration_error,
        {**BIN, "sample_weight": W},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        none_ok=("sample_weight", "pos_label"),
    ),
    "scdl_curve": Entry(
        skcal.scdl_curve,
        {**BIN, "sample_weight": W, "max_bins": 8},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"max_bins": 2**40},
        none_ok=("sample_weight", "pos_label", "max_bins"),
    ),
    "scdl_score": Entry(
        skcal.scdl_score,
        {**BIN, "sample_weight": W, "max_bins": 8},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"max_bins": 2**40},
        none_ok=("sample_weight", "pos_label", "max_bins"),
    ),
    "smooth_ece": Entry(
        skcal.smooth_ece,
        {**BIN, "sample_weight": W},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        none_ok=("sample_weight", "pos_label"),
    ),
    "smooth_calibration_error": Entry(
        skcal.smooth_calibration_error,
        {**BIN, "sample_weight": W},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        none_ok=("sample_weight", "pos_label"),
        single_row="work",
    ),
    "max_calibration_error": Entry(
        skcal.max_calibration_error,
        {**BIN, "sample_weight": W, "n_bins": 5},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "pos_label", "edges"),
    ),
    "rms_calibration_error": Entry(
        skcal.rms_calibration_error,
        {**BIN, "sample_weight": W, "n_bins": 5},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "pos_label", "edges"),
    ),
    "average_calibration_error": Entry(
        skcal.average_calibration_error,
        {**BIN, "sample_weight": W, "n_bins": 5},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "pos_label", "edges"),
    ),
    "debiased_l2_calibration_error": Entry(
        skcal.debiased_l2_calibration_error,
        {**BIN, "sample_weight": W, "n_bins": 5},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "pos_label", "edges"),
    ),
    "ks_calibration_error": Entry(
        skcal.ks_calibration_error,
        {**BIN, "sample_weight": W},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        none_ok=("sample_weight", "pos_label"),
    ),
    "reliability_curve": Entry(
        skcal.reliability_curve,
        {**BIN, "sample_weight": W, "n_bins": 5},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12, "n_bootstrap": 10**12},
        floats=("confidence",),
        options=("strategy",),
        none_ok=("sample_weight", "pos_label", "edges", "interval", "random_state"),
    ),
    "smooth_reliability_curve": Entry(
        skcal.smooth_reliability_curve,
        {**BIN, "sample_weight": W, "n_bootstrap": 3, "random_state": 0},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"grid_points": 10**12, "n_bootstrap": 10**12},
        floats=("bandwidth", "min_density", "confidence"),
        none_ok=("sample_weight", "pos_label", "bandwidth", "random_state"),
    ),
    "calibration_test": Entry(
        skcal.calibration_test,
        {**BIN, "sample_weight": W, "measure": "binned_ece", "n_resamples": 19, "random_state": 0},
        arrays=BIN_ARRAYS,
        samples=BIN_SAMPLES,
        ints={"n_resamples": 10**12},
        none_ok=("sample_weight", "pos_label", "random_state", "n_jobs"),
    ),
    # soft-bin rounding and swap regret
    "SoftBinRounder": Entry(
        _fit_transform(skcal.SoftBinRounder),
        {"X": P01, "y": Y01, "n_bins": 4, "random_state": 0},
        arrays={"X": "proba", "y": "labels"},
        samples=("X", "y"),
        ints={"n_bins": 10**12},
        none_ok=("random_state", "max_bins"),
    ),
    "SoftBinRounder.transform": Entry(
        _fitted_method(skcal.SoftBinRounder, (P01, Y01), "transform", {"n_bins": 4, "random_state": 0}),
        {"X": P01},
        arrays={"X": "proba"},
        samples=("X",),
        single_row="work",
    ),
    "expected_swap_regret": Entry(
        skcal.expected_swap_regret,
        {**BIN, "utility": UTILITY, "n_bins": 4, "sample_weight": W},
        arrays={**BIN_ARRAYS, "utility": "numeric"},
        samples=BIN_SAMPLES,
        ints={"n_bins": 10**12},
        none_ok=("sample_weight", "pos_label"),
    ),
    "soft_bin_weights": Entry(
        skcal.soft_bin_weights,
        {"y_prob": P01, "n_bins": 4},
        arrays={"y_prob": "proba"},
        samples=("y_prob",),
        ints={"n_bins": 10**12},
        single_row="work",
    ),
    "swap_regret": Entry(
        skcal.swap_regret,
        {"y_true": Y01, "actions": ACTIONS, "utility": UTILITY, "sample_weight": W},
        arrays={"y_true": "labels", "actions": "labels", "utility": "numeric", "sample_weight": "numeric"},
        samples=("y_true", "actions", "sample_weight"),
        none_ok=("sample_weight", "pos_label"),
    ),
    # truthful multiclass errors
    "assign_bins": Entry(
        skcal.assign_bins,
        {"values": P01, "n_bins": 4},
        arrays={"values": "numeric"},
        samples=("values",),
        ints={"n_bins": 10**12},
        options=("strategy",),
    ),
    "brier_over_k": _mc_metric(skcal.brier_over_k, binned=False),
    "classwise_ece": _mc_metric(skcal.classwise_ece),
    "classwise_lince": _mc_metric(skcal.classwise_lince),
    "conf_ce": _mc_metric(skcal.conf_ce),
    "conf_ece": _mc_metric(skcal.conf_ece),
    "confidence_proper_loss": _mc_metric(skcal.confidence_proper_loss, binned=False),
    "truthful_conf_ce": _mc_metric(skcal.truthful_conf_ce),
    "lince_score": Entry(
        skcal.lince_score,
        {"u": P3, "phi": Q3, "sample_weight": W, "bin_on": P3.max(axis=1)},
        arrays={"u": "numeric", "phi": "numeric", "sample_weight": "numeric", "bin_on": "numeric"},
        samples=("u", "phi", "sample_weight", "bin_on"),
        ints={"n_bins": 10**12},
        options=("strategy",),
        none_ok=("sample_weight", "bin_on"),
    ),
    "truthful_decomposition": Entry(
        skcal.truthful_decomposition,
        {"q_true": Q3[:6], "y_proba": P3[:6], "n_bins": 2, "n_draws": 50, "random_state": 0},
        arrays={"q_true": "proba", "y_proba": "proba"},
        samples=("q_true", "y_proba"),
        ints={"n_bins": 10**12, "max_outcomes": None, "n_draws": None},
        options=("measure", "strategy", "method"),
        none_ok=("random_state",),
    ),
    # temperature scaling
    "apply_temperature": Entry(
        skcal.apply_temperature,
        {"logits": LOGITS, "temperature": 2.0},
        arrays={"logits": "numeric"},
        samples=("logits",),
        floats=("temperature",),
        single_row="work",
    ),
    "fit_temperature": Entry(
        skcal.fit_temperature,
        {"logits": LOGITS, "y": Y3, "sample_weight": W},
        arrays={"logits": "numeric", "y": "labels", "sample_weight": "numeric"},
        samples=("logits", "y", "sample_weight"),
        floats=("tol",),
        none_ok=("labels", "sample_weight"),
    ),
    "temperature_nll": Entry(
        skcal.temperature_nll,
        {"logits": LOGITS, "y": Y3, "temperature": 1.5, "sample_weight": W},
        arrays={"logits": "numeric", "y": "labels", "sample_weight": "numeric"},
        samples=("logits", "y", "sample_weight"),
        floats=("temperature",),
        none_ok=("labels", "sample_weight"),
        single_row="work",
    ),
    # second-order scores
    "EnsembleMoments": Entry(
        lambda X, **params: skcal.EnsembleMoments(**params).fit(X).transform(X),
        {"X": X3, "estimator": MEMBERS},
        arrays={"X": "features"},
        samples=("X",),
        none_ok=("pos_label",),
        single_row="work",
    ),
    "ensemble_moments": Entry(
        skcal.ensemble_moments,
        {"probas": np.stack([m.predict_proba(X3) for m in MEMBERS]), "layout": "flat"},
        arrays={"probas": "numeric"},
        options=("layout",),
        single_row="work",
    ),
    "EnsembleMoments.transform": Entry(
        _fitted_method(skcal.EnsembleMoments, (X3,), "transform", {"estimator": MEMBERS}),
        {"X": X3},
        arrays={"X": "features"},
        samples=("X",),
        single_row="work",
    ),
    "VoteCounts": Entry(
        skcal.VoteCounts,
        {"positive": VOTES_POS, "total": VOTES_TOTAL},
        arrays={"positive": "numeric", "total": "numeric"},
        samples=("positive", "total"),
    ),
    # declared votes: the container, then counted (which reads the votes' values)
    "Snapshots": Entry(
        lambda votes: skcal.Snapshots(votes).to_counts(),
        {"votes": SNAPSHOTS},
        arrays={"votes": "votes"},
        samples=("votes",),
        names={"votes": "vote"},
    ),
    "SechPerturber": Entry(
        _fit_transform(skcal.SechPerturber),
        {"X": SCORES, "bandwidth": 0.1, "random_state": 0},
        arrays={"X": "numeric"},
        samples=("X",),
        floats=("bandwidth",),
        options=("out_of_bounds",),
        none_ok=("random_state", "bounds"),
        single_row="work",
    ),
    "SechPerturber.transform": Entry(
        _fitted_method(skcal.SechPerturber, (SCORES,), "transform", {"random_state": 0}),
        {"X": SCORES},
        arrays={"X": "numeric"},
        samples=("X",),
        single_row="work",
    ),
    "sech_cdf": Entry(
        skcal.sech_cdf,
        {"t": POINTS, "s": 0.5, **KERNEL},
        shape_free=True,
        arrays={"t": "numeric"},
        floats=("h", "lo", "hi"),
        single_row="work",
    ),
    "sech_pdf": Entry(
        skcal.sech_pdf,
        {"t": POINTS, "s": 0.5, **KERNEL},
        shape_free=True,
        arrays={"t": "numeric"},
        floats=("h", "lo", "hi"),
        single_row="work",
    ),
    "sech_ppf": Entry(
        skcal.sech_ppf,
        {"u": POINTS, "s": 0.5, **KERNEL},
        shape_free=True,
        arrays={"u": "numeric"},
        floats=("h", "lo", "hi"),
        single_row="work",
    ),
    "sech_sample": Entry(
        skcal.sech_sample,
        {"s": POINTS, **KERNEL, "random_state": 0},
        shape_free=True,
        arrays={"s": "numeric"},
        floats=("h", "lo", "hi"),
        none_ok=("random_state",),
        single_row="work",
    ),
    # second-order calibration error and recalibration
    "SecondOrderCalibratedClassifier": Entry(
        lambda X, y, **p: skcal.SecondOrderCalibratedClassifier(MEMBERS, **p).fit(X, y).predict_proba(X),
        {"X": X3, "y": SNAPSHOTS, "degree": 2, "random_state": 0},
        arrays={"X": "features", "y": "votes"},
        samples=("X", "y"),
        floats=("bandwidth", "alpha"),
        options=("basis",),
    ),
    "SecondOrderCalibratedClassifier.predict": Entry(
        _fitted_method(
            lambda **p: skcal.SecondOrderCalibratedClassifier(MEMBERS, **p),
            (X3, SNAPSHOTS),
            "predict",
            {"degree": 2, "random_state": 0},
        ),
        {"X": X3},
        arrays={"X": "features"},
        samples=("X",),
        single_row="work",
    ),
    "SecondOrderPlattCalibrator": Entry(
        _fit_transform(skcal.SecondOrderPlattCalibrator, "predict"),
        {"X": SCORES, "y": SNAPSHOTS, "degree": 3},
        arrays={"X": "numeric", "y": "votes"},
        samples=("X", "y"),
        ints={"degree": 10**5},
        floats=("alpha",),
        options=("basis",),
    ),
    "SecondOrderPlattCalibrator.transform": Entry(
        _fitted_method(skcal.SecondOrderPlattCalibrator, (SCORES, SNAPSHOTS), "transform", {"degree": 3}),
        {"X": SCORES},
        arrays={"X": "numeric"},
        samples=("X",),
        single_row="work",
    ),
    "SecondOrderPlattCalibrator.predict": Entry(
        _fitted_method(skcal.SecondOrderPlattCalibrator, (SCORES, SNAPSHOTS), "predict", {"degree": 3}),
        {"X": SCORES},
        arrays={"X": "numeric"},
        samples=("X",),
        single_row="work",
    ),
    "baseline_ce2": Entry(
        skcal.baseline_ce2,
        {"scores": SCORES, "t1": T1, "t2": T2, "method": "bucketing", "bandwidth": 0.1, "random_state": 0},
        arrays={"scores": "numeric", "t1": "numeric", "t2": "numeric"},
        samples=("scores", "t1", "t2"),
        floats=("bandwidth", "validation_fraction"),
        options=("method",),
        none_ok=("random_state",),
    ),
    "ce1_score": Entry(
        skcal.ce1_score,
        {"y_true": Y01, "scores": SCORES, "sample_weight": W},
        arrays={"y_true": "labels", "scores": "numeric", "sample_weight": "numeric"},
        samples=("y_true", "scores", "sample_weight"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        none_ok=("sample_weight", "cv", "random_state", "alphas"),
    ),
    "ce2_details": Entry(
        skcal.ce2_details,
        {"snapshots": SNAPSHOTS, "scores": SCORES, "sample_weight": W},
        arrays={"snapshots": "votes", "scores": "numeric", "sample_weight": "numeric"},
        samples=("snapshots", "scores", "sample_weight"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        options=("method", "basis"),
        none_ok=("sample_weight", "cv", "random_state", "alphas"),
    ),
    "ce2_score": Entry(
        skcal.ce2_score,
        {"snapshots": SNAPSHOTS, "scores": SCORES, "sample_weight": W},
        arrays={"snapshots": "votes", "scores": "numeric", "sample_weight": "numeric"},
        samples=("snapshots", "scores", "sample_weight"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        options=("method", "basis"),
        none_ok=("sample_weight", "cv", "random_state", "alphas"),
    ),
    # the k-class forms of the second-order tools (a variant key "NAME[form]" of a public NAME)
    "VoteCounts[counts]": Entry(
        lambda counts: skcal.VoteCounts(counts=counts),
        {"counts": COUNTS3},
        arrays={"counts": "numeric"},
        samples=("counts",),
    ),
    "ensemble_moments[classes]": Entry(
        skcal.ensemble_moments,
        {"probas": np.stack([m.predict_proba(X3) for m in MEMBERS3]), "layout": "classes"},
        arrays={"probas": "numeric"},
        options=("layout",),
        single_row="work",
    ),
    "ce2_score[classwise]": Entry(
        lambda counts, scores, **kw: skcal.ce2_score(skcal.VoteCounts(counts=counts), scores, **kw),
        {"counts": COUNTS3, "scores": SCORES3, "multiclass": "classwise", "average": "macro"},
        arrays={"counts": "numeric", "scores": "numeric"},
        samples=("counts", "scores"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        options=("multiclass", "average", "basis"),
    ),
    "ce2_details[top_label]": Entry(
        skcal.ce2_details,
        {"snapshots": np.column_stack([Y3, Y3[::-1]]), "scores": SCORES3, "multiclass": "top_label"},
        arrays={"snapshots": "votes", "scores": "numeric"},
        samples=("snapshots", "scores"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        options=("multiclass", "basis"),
    ),
    "ce1_score[classwise]": Entry(
        skcal.ce1_score,
        {"y_true": Y3, "scores": SCORES3, "multiclass": "classwise"},
        arrays={"y_true": "labels", "scores": "numeric"},
        samples=("y_true", "scores"),
        ints={"degree": 10**5},
        floats=("alpha", "bandwidth"),
        options=("multiclass", "average"),
    ),
    "SecondOrderCalibratedClassifier[k classes]": Entry(  # bad counts: see "VoteCounts[counts]"
        lambda X, y, **p: skcal.SecondOrderCalibratedClassifier(MEMBERS3, **p).fit(X, y).predict_proba(X),
        {"X": X3, "y": skcal.VoteCounts(counts=COUNTS3), "degree": 2, "random_state": 0},
        arrays={"X": "features"},
        samples=("X",),
        floats=("bandwidth", "alpha"),
        options=("basis", "multiclass", "projection"),
    ),
    "platt.project_to_simplex": Entry(
        skcal.platt.project_to_simplex,
        {"scores": SCORES3},
        arrays={"scores": "numeric"},
        samples=("scores",),
        options=("method",),
        single_row="work",
    ),
    # reports and displays
    "CalibrationReport.from_predictions": Entry(
        _report,
        {"y": Y01, "p": P01, "n_bootstrap": 3, "random_state": 0},
        arrays={"y": "labels", "p": "proba"},
        samples=("y", "p"),
        ints={"n_bootstrap": 10**12, "n_resamples": 10**12},
        floats=("confidence_level", "max_seconds"),
        none_ok=("random_state", "pos_label", "labels", "metrics", "n_jobs", "title", "max_seconds"),
        names={"p": "predictions"},
    ),
    "report.report_from_batches": Entry(  # the chunked report
        _batched_report,
        {"y": Y01, "p": P01, "n_bootstrap": 3, "n_resamples": 20, "random_state": 0},
        arrays={"y": "labels", "p": "proba"},
        samples=("y", "p"),
        ints={"n_bootstrap": 10**12, "n_resamples": 10**12},
        floats=("confidence_level",),
        options=("interval_method", "strategy"),
        none_ok=("random_state", "pos_label", "labels", "metrics", "title", "n_bins", "replicate_block"),
        names={"p": "column 'model'"},
    ),
    "calibration_report": Entry(
        skcal.calibration_report,
        {"estimators": {"lr": MEMBERS[1]}, "X": X3, "y": Y01, "n_bootstrap": 3, "random_state": 0},
        arrays={"X": "features", "y": "labels"},
        samples=("X", "y"),
        ints={"n_bootstrap": 10**12, "n_resamples": 10**12},
        floats=("confidence_level", "max_seconds"),
        none_ok=("random_state", "metrics", "n_jobs", "title", "max_seconds"),
    ),
    "ReliabilityDisplay.from_predictions": Entry(
        lambda **kw: _close(skcal.ReliabilityDisplay.from_predictions(**kw)),
        {**BIN, "n_bootstrap": 3, "random_state": 0, "n_bins": 5},
        arrays={"y_true": "labels", "y_prob": "proba", "sample_weight": "numeric"},
        samples=BIN_SAMPLES,
        ints={"n_bootstrap": 10**12, "n_bins": 10**12},
        floats=("confidence_level",),
        options=("strategy",),
        none_ok=("random_state", "pos_label", "sample_weight", "n_bins", "name", "ax", "hist_ax"),
    ),
    "SecondOrderDisplay.from_predictions": Entry(
        lambda **kw: _close(skcal.SecondOrderDisplay.from_predictions(**kw)),
        {"raw_scores": SCORES, "recalibrated_scores": SCORES},
        arrays={"raw_scores": "numeric", "recalibrated_scores": "numeric"},
        samples=("raw_scores", "recalibrated_scores"),
        ints={"n_bins": 10**12},
        none_ok=("true_sigma2", "true_prob", "name", "ax"),
    ),
    # scorers
    "register_scorer": Entry(
        skcal.register_scorer, {"name": "sweep_scdl", "scorer": SCORER_TABLE["scdl"]}
    ),
    "get_skcal_scorer_names": Entry(skcal.get_skcal_scorer_names, {}),
}

#: public functions of a submodule (not in ``skcal.__all__``) that the sweep covers too
SUBMODULE_ENTRIES = ("platt.project_to_simplex", "report.report_from_batches")

#: public classes that are results, not entry points (built by the functions above)
NOT_CALLED = {
    "SCDLCurve": "the result of scdl_curve",
    "CalibrationTestResult": "the result of calibration_test",
    "ReliabilityCurve": "the result of reliability_curve",
    "SmoothReliabilityCurve": "the result of smooth_reliability_curve",
    "CE2Result": "the result of ce2_details",
    "CalibrationReport": "built by CalibrationReport.from_predictions / calibration_report",
    "ReliabilityDisplay": "built by ReliabilityDisplay.from_predictions",
    "SecondOrderDisplay": "built by SecondOrderDisplay.from_predictions",
}

# ---------------------------------------------------------------------------------------------
# cases that fail in files other engineers own: id -> (file, what, owner)
# ---------------------------------------------------------------------------------------------
_R = [  # (file, what, owner)
    (
        "skcal/binned_ece.py",
        "n_bins=10**12 ends in MemoryError, not bounded by the data",
        "binned",
    ),
    (
        "skcal/scdl.py",
        "max_bins=2**40 ends in MemoryError, not bounded by the data",
        "scdl",
    ),
    (
        "skcal/rounding.py",
        "object X of numeric strings accepted (validate_data converts); use reject_strings",
        "scdl",
    ),
    (
        "skcal/rounding.py",
        "n_bins=True taken as one bin",
        "scdl",
    ),
    (
        "skcal/rounding.py",
        "n_bins=10**12 ends in MemoryError, not bounded by the data",
        "scdl",
    ),
    (
        "skcal/rounding.py",
        "utility: complex cut to its real part (ComplexWarning) / numeric strings accepted",
        "scdl",
    ),
    (
        "skcal/rounding.py",
        "n_bins=10**12 not refused (MemoryError or silently accepted)",
        "scdl",
    ),
    (
        "skcal/binning.py",
        "n_bins=10**12 silently accepted, not bounded by the data",
        "binned",
    ),
    (
        "skcal/truthful.py",
        "n_bins=10**12 silently accepted, not bounded by the data",
        "binned",
    ),
    (
        "skcal/truthful.py",
        "max_outcomes: wrong type not rejected (no validate_params)",
        "binned",
    ),
    (
        "skcal/truthful.py",
        "n_draws: wrong type not rejected (no validate_params)",
        "binned",
    ),
    (
        "skcal/platt.py",
        "object X of numeric strings accepted (validate_data converts); use reject_strings",
        "crowd",
    ),
    (
        "skcal/platt.py",
        "degree=10**5 ends in MemoryError (bound it by MAX_DEGREE_LIMIT)",
        "crowd",
    ),
    (
        "skcal/ce2.py",
        "degree=10**5 hangs or ends in MemoryError",
        "stats",
    ),
    (
        "skcal/report.py",
        "n_bootstrap=10**12 ends in MemoryError",
        "report",
    ),
    (
        "skcal/display.py",
        "n_bootstrap absurd size ends in MemoryError",
        "report",
    ),
    (
        "skcal/display.py",
        "max_bins absurd size ends in MemoryError",
        "report",
    ),
    (
        "skcal/display.py",
        "n_bins=True / 10**12 accepted",
        "report",
    ),
]
XFAIL: dict[str, tuple[str, str, str]] = {
}


def required_entries():
    """The sweep keys every public callable of ``skcal.__all__`` needs."""
    keys = []
    for name in sorted(skcal.__all__):
        if name.startswith("_"):
            continue
        obj = getattr(skcal, name)
        if inspect.isclass(obj):
            if hasattr(obj, "fit"):
                keys.append(name)
                keys += [f"{name}.{m}" for m in ("transform", "predict") if m in vars(obj)]
            for m in ("from_predictions",):
                if m in vars(obj):
                    keys.append(f"{name}.{m}")
            if not hasattr(obj, "fit") and "from_predictions" not in vars(obj) and name not in NOT_CALLED:
                keys.append(name)
        elif callable(obj):
            keys.append(name)
    return keys


# ---------------------------------------------------------------------------------------------
# running one call
# ---------------------------------------------------------------------------------------------
class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds):
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield  # pragma: no cover - no SIGALRM (Windows) or not the main thread
        return

    def handler(signum, frame):
        raise _Timeout(f"took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _run(entry, args):
    """Call the entry; return ``(result, exception)``; RuntimeWarning/ComplexWarning are errors."""
    snapshot = {k: pickle.dumps(v) for k, v in args.items() if isinstance(v, np.ndarray)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            with _time_limit(TIME_LIMIT):
                result, exc = entry.call(**args), None
        except _Timeout as e:
            pytest.fail(f"the call hung: {e}")
        except (RuntimeWarning, np.exceptions.ComplexWarning) as w:
            pytest.fail(f"the call emitted {type(w).__name__}: {w}")
        except MemoryError as e:
            pytest.fail(f"the call ran out of memory instead of refusing the size: {e!r}")
        except Exception as e:  # noqa: BLE001 - classified by the caller
            result, exc = None, e
    for k, blob in snapshot.items():
        assert pickle.dumps(args[k]) == blob, f"the call mutated its argument {k}"
    return result, exc


def _has_nan(result, depth=0):
    if depth > 2 or result is None:
        return False
    if isinstance(result, float):
        return math.isnan(result)
    if isinstance(result, np.ndarray) and result.dtype.kind == "f":
        return bool(np.isnan(result).any())
    if isinstance(result, dict):
        return any(_has_nan(v, depth + 1) for v in result.values())
    if isinstance(result, (tuple, list)):
        return any(_has_nan(v, depth + 1) for v in result)
    if is_dataclass(result):  # scalar fields only (arrays may mark empty bins with NaN)
        values = (getattr(result, f.name) for f in fields(result))
        return any(isinstance(v, float) and math.isnan(v) for v in values)
    return False


#: scikit-learn's own ``validate_data`` messages about ``X``, clear although they do not repeat the
#: name (they name the estimator); accepted for estimator methods and for features
_SKLEARN_CLEAR = ("Complex data not supported", "Found array with", "Input X contains", "Input contains")


def _assert_clear_error(exc, names):
    assert exc is not None, f"no error: a silent result instead of an error naming {names}"
    assert isinstance(exc, (ValueError, TypeError)), f"raised {type(exc).__name__}: {exc}"
    msg = str(exc)
    assert any(n in msg for n in names) or any(s in msg for s in _SKLEARN_CLEAR), (
        f"the message does not name {' or '.join(names)}: {msg!r}"
    )
    # numbers and labels as the user wrote them, never numpy's repr (np.float64(93.4), np.str_('yes'))
    assert not _NUMPY_REPR.search(msg), f"the message shows a numpy repr: {msg!r}"


_NUMPY_REPR = re.compile(r"\bnp\.(float|int|uint|str_|bool|complex|datetime64|timedelta64)\w*\(")


# ---------------------------------------------------------------------------------------------
# the bad inputs
# ---------------------------------------------------------------------------------------------
def _bad_arrays(kind, value, shape_free=False):
    a = np.asarray(value)
    out = {}
    if kind == "features":  # handed to the user's models, which may take strings
        out["complex"] = a.astype(float) + 0.5j
        nan = a.astype(float).copy()
        nan.flat[0] = np.nan
        out["nan"] = nan
    elif kind in ("numeric", "proba", "votes"):
        out["complex"] = a.astype(float) + 0.5j
        out["strings"] = a.astype(str).astype(object)
        if kind != "votes":
            nan = a.astype(float).copy()
            nan.flat[0] = np.nan
            out["nan"] = nan
        inf = a.astype(float).copy()
        inf.flat[0] = np.inf
        out["inf"] = inf
    else:  # labels
        out["complex"] = a + 0.5j
        missing = a.astype(object).copy()
        missing.flat[0] = None
        out["missing_label"] = missing
        nan = a.astype(float).copy()
        nan.flat[0] = np.nan
        out["nan"] = nan
    if not shape_free:
        out["ndim"] = a.reshape(a.shape + (1, 1))
        out["empty"] = a[:0]
    return out


def _bad_params(entry):
    out = []
    for p, absurd in entry.ints.items():
        out += [(p, "bool", True), (p, "str", "3"), (p, "float", 2.5)]
        if p not in entry.none_ok:
            out.append((p, "None", None))
        if absurd is not None:
            out.append((p, "absurd", absurd))
    for p in entry.floats:
        out += [(p, "bool", True), (p, "str", "0.1"), (p, "nan", float("nan"))]
        if p not in entry.none_ok:
            out.append((p, "None", None))
    for p in entry.options:
        out += [(p, "unknown", "no-such-option"), (p, "int", 123)]
        if p not in entry.none_ok:
            out.append((p, "None", None))
    return out


def _cases():
    cases = []
    for key, entry in CASES.items():
        cases.append((key, "valid", None, None))
        for arg, kind in entry.arrays.items():
            if arg not in entry.args:
                continue
            for bad in _bad_arrays(kind, entry.args[arg], entry.shape_free):
                cases.append((key, f"{arg}-{bad}", "array", (arg, bad)))
        present = [a for a in entry.samples if a in entry.args]
        if present:
            cases.append((key, "single_row", "single_row", None))
        if len(present) >= 2:
            cases.append((key, "length_mismatch", "length", present))
        for p, what, value in _bad_params(entry):
            cases.append((key, f"{p}-{what}", "param", (p, value)))
    return cases


def _param_id(key, case):
    cid = f"{key}-{case}"
    if cid in XFAIL:
        file, what, owner = XFAIL[cid]
        mark = pytest.mark.xfail(strict=True, reason=f"{file}: {what}; owner: {owner}")
        return pytest.param(key, case, id=cid, marks=mark)
    return pytest.param(key, case, id=cid)


_ALL = {(k, c): (kind, data) for k, c, kind, data in _cases()}


# ---------------------------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------------------------
def test_every_public_callable_has_a_sweep_entry():
    missing = [k for k in required_entries() if k not in CASES]
    assert not missing, (
        f"public callables without a sweep entry: {missing}. Add an Entry for each to CASES in "
        "tests/test_sweep.py (how to call it with valid data, which arguments are arrays and "
        "which are parameters), or, for a result class, to NOT_CALLED."
    )
    stale = [k for k in CASES if k.split("[")[0] not in required_entries() and k not in SUBMODULE_ENTRIES]
    assert not stale, f"sweep entries for names that are not public: {stale}"


def test_xfail_marks_name_existing_cases():
    ids = {f"{k}-{c}" for k, c in _ALL}
    assert set(XFAIL) <= ids, sorted(set(XFAIL) - ids)


@pytest.mark.parametrize("key, case", [_param_id(k, c) for k, c in _ALL])
def test_sweep(key, case):
    entry = CASES[key]
    kind, data = _ALL[key, case]
    args = dict(entry.args)
    if kind is None:  # the valid call works and gives no NaN
        result, exc = _run(entry, args)
        assert exc is None, f"the valid call failed: {exc!r}"
        assert not _has_nan(result), "the valid call returned NaN"
        return
    if kind == "array":
        arg, bad = data
        args[arg] = _bad_arrays(entry.arrays[arg], entry.args[arg], entry.shape_free)[bad]
        _, exc = _run(entry, args)
        _assert_clear_error(exc, [entry.names.get(arg, arg)])
        return
    if kind == "single_row":
        for a in entry.samples:
            if a in args:
                args[a] = np.asarray(args[a])[:1]
        result, exc = _run(entry, args)
        if entry.single_row == "work" or (entry.single_row == "either" and exc is None):
            assert exc is None, f"a single row failed: {exc!r}"
            assert not _has_nan(result), "a single row gave NaN (a silent number)"
        else:
            assert isinstance(exc, (ValueError, TypeError)) and str(exc), f"unclear failure: {exc!r}"
        return
    if kind == "length":
        short = data[1]
        args[short] = np.asarray(args[short])[:-1]
        _, exc = _run(entry, args)
        _assert_clear_error(exc, [entry.names.get(a, a) for a in data] + ["Inconsistent", "samples"])
        return
    p, value = data
    args[p] = value
    _, exc = _run(entry, args)
    _assert_clear_error(exc, [p])


def test_single_row_where_it_must_work():
    # the scoring functions that are defined for one sample stay finite there
    assert skcal.apply_temperature(LOGITS[:1], 2.0).shape == (1, 3)
    assert np.isfinite(skcal.temperature_nll(LOGITS[:1], Y3[:1], 1.0))


def test_truthful_decomposition_large_n_and_few_draws():
    # default arguments from ~650 rows used to raise OverflowError in float(k) ** n
    rng = np.random.RandomState(1)
    Q = rng.dirichlet(np.ones(3), size=700)
    out = skcal.truthful_decomposition(Q, Q, n_draws=20, random_state=0)
    assert out["check_method"] == "monte_carlo" and np.isfinite(out["check_stderr"]).all()
    # one Monte Carlo draw has no standard error: refused instead of NaN
    with pytest.raises(ValueError, match="n_draws"):
        skcal.truthful_decomposition(Q[:5], Q[:5], method="monte_carlo", n_draws=1)


def test_ce2_cv_true_names_cv():
    with pytest.raises(ValueError, match="cv"):
        skcal.ce2_score(SNAPSHOTS, SCORES, cv=True)


def test_ce2_method_none_lists_polynomial():
    with pytest.raises(ValueError, match="polynomial"):
        skcal.ce2_score(SNAPSHOTS, SCORES, method=None)


def test_register_scorer_bad_arguments_keep_sklearn_working():
    from sklearn.metrics import get_scorer_names

    with pytest.raises((TypeError, ValueError), match="name"):
        skcal.register_scorer(123, None)
    assert "accuracy" in get_scorer_names()




def test_wrong_length_labels_are_blamed_on_labels():
    with pytest.raises(ValueError, match="^labels has 4 entries"):
        skcal.classwise_ece(Y3, P3, labels=[0, 1, 2, 3])


def test_no_pos_label_hint_where_there_is_no_pos_label():
    with pytest.raises(ValueError, match="these are not") as info:
        skcal.ce1_score(np.where(Y01 == 1, "yes", "no"), SCORES)
    assert "pos_label" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# leftovers of the sweep (issue 20): each failed before its fix
# ---------------------------------------------------------------------------------------------
def test_soft_bin_rounder_takes_object_labels_as_their_numbers():
    # an object array of ints used to end in AttributeError: 'int' object has no attribute 'item'
    ref = skcal.SoftBinRounder().fit(P01, Y01)
    got = skcal.SoftBinRounder().fit(P01, Y01.astype(object))
    assert got.n_bins_ == ref.n_bins_ and got.scdl_ == ref.scdl_


def test_soft_bin_rounder_names_y_for_a_missing_label():
    # None in an object label array used to raise a TypeError from np.unique that did not name y
    y = Y01.astype(object)
    y[3] = None
    with pytest.raises(ValueError, match="^y contains missing labels"):
        skcal.SoftBinRounder().fit(P01, y)


def test_auto_degree_refuses_a_sample_too_small_for_any_degree():
    from skcal.chebyshev import auto_degree

    # 1.5 samples used to give degree 1 (4 tensor basis functions) without a word
    with pytest.raises(ValueError, match=r"at least 4 .*got n_samples = 1\.5"):
        auto_degree(n_samples=1.5, bandwidth=2**-6)
    with pytest.raises(ValueError, match=r"at least 2 .*got n_samples = 1\.5"):
        auto_degree(n_samples=1.5, bandwidth=2**-6, basis="1d")
    assert auto_degree(n_samples=4, bandwidth=2**-6) == 1
    # the same rule, and message, for degree="auto" of the estimators
    with pytest.raises(ValueError, match=r"effective sample size \(sum w\)\^2 / sum w\^2 = 3"):
        skcal.ce2_score(SNAPSHOTS[:3], SCORES[:3])


def test_first_order_platt_does_not_suggest_pos_label():
    # order=1 takes binary labels but has no pos_label: the hint used to say to pass it
    y = np.where(Y01 == 1, "b", "a")
    with pytest.raises(ValueError, match="these are not") as info:
        skcal.SecondOrderPlattCalibrator(order=1, degree=2).fit(SCORES, y)
    assert "pos_label" not in str(info.value)
    assert "encode the positive class as 1" in str(info.value)


@pytest.mark.parametrize("func", [skcal.sech_cdf, skcal.sech_pdf, skcal.sech.sech_sf])
def test_sech_names_t_and_s_when_their_shapes_do_not_broadcast(func):
    # mismatched lengths used to give numpy's "operands could not be broadcast together"
    with pytest.raises(ValueError, match=r"^t and s must broadcast together.*\(7,\) and \(3,\)"):
        func(POINTS, np.array([0.2, 0.5, 0.8]), 0.1)
    with pytest.raises(ValueError, match="^u and s must broadcast together"):
        skcal.sech_ppf(POINTS, np.array([0.2, 0.5, 0.8]), 0.1)
    assert func(POINTS[:, None], np.array([0.2, 0.5, 0.8])[None, :], 0.1).shape == (7, 3)


def test_truthful_decomposition_n_draws_auto():
    # the default n_draws="auto": 20,000 draws at these sizes (n k = 2,100 entries), the same
    # result as asking for them; any other string is refused, naming n_draws
    rng = np.random.RandomState(1)
    Q = rng.dirichlet(np.ones(3), size=700)
    auto = skcal.truthful_decomposition(Q, Q, random_state=0)
    explicit = skcal.truthful_decomposition(Q, Q, n_draws=20_000, random_state=0)
    assert auto["check_method"] == "monte_carlo"
    for key, value in auto.items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(explicit[key]))
    for bad in ("Auto", "auto ", "", "20000"):
        with pytest.raises(ValueError, match="n_draws"):
            skcal.truthful_decomposition(Q, Q, n_draws=bad)


# ---------------------------------------------------------------------------------------------
# the command line's vote-count columns: every bad value names its column and its line
# ---------------------------------------------------------------------------------------------
_COUNT_FILES = {
    "binary": (["y:positive", "y:total"], ["m:m", "m:sigma2"]),
    "per_class": (["y[a]", "y[b]", "y[c]"], [f"m[{c}]:{x}" for x in ("m", "sigma2") for c in "abc"]),
}


@pytest.mark.parametrize("form", sorted(_COUNT_FILES))
@pytest.mark.parametrize("bad", ["complex", "string", "empty", "nan", "inf", "negative", "fraction"])
def test_cli_count_columns_bad_values(tmp_path, form, bad):
    from skcal.cli import CSVFormatError, read_predictions_csv

    count_cols, model_cols = _COUNT_FILES[form]
    value = {"complex": "1+2j", "string": "two", "empty": "", "nan": "nan", "inf": "inf"}
    value |= {"negative": "-1", "fraction": "0.5"}
    for j, col in enumerate(count_cols):
        counts = [["1", "3"][i % 2] if form == "binary" else "1" for i in range(len(count_cols))]
        rows = [",".join(counts + ["0.3"] * (len(model_cols) // 2) + ["0.01"] * (len(model_cols) // 2))] * 4
        bad_row = rows[0].split(",")
        bad_row[j] = value[bad]
        rows[2] = ",".join(bad_row)
        path = tmp_path / f"{form}-{j}.csv"
        path.write_text("\n".join([",".join(count_cols + model_cols), *rows]) + "\n", encoding="utf-8")
        with pytest.raises(CSVFormatError, match=rf"{re.escape(col)}.*line 4|line 4.*{re.escape(col)}"):
            read_predictions_csv(str(path))


@pytest.mark.parametrize("n", [40, 5_000])
def test_n_jobs_zero_is_refused_at_every_size(n):
    """``n_jobs=0`` means nothing; it was accepted wherever the work fitted in one block."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    calls = {
        "calibration_test": lambda: skcal.calibration_test(y, p, n_resamples=20, n_jobs=0),
        "CalibrationReport.from_predictions": lambda: skcal.CalibrationReport.from_predictions(
            y, {"m": p}, n_bootstrap=3, n_resamples=20, n_jobs=0
        ),
    }
    for call in calls.values():
        with pytest.raises(ValueError, match="'n_jobs' parameter .* an int in the range \\[1, inf\\)"):
            call()
    assert skcal.calibration_test(y, p, n_resamples=20, n_jobs=-1).pvalue >= 0  # -1: every core
