"""Every public callable of skcal at 1e6 rows: CPU seconds and peak memory against the budget.

The budget: **30 s of CPU and 2 GB of memory** per call with the callable's defaults, at
``--n`` rows (default 1e6): binary inputs (``binary_predictions`` of the harness), multiclass
with ``k = 10`` classes (``multiclass_predictions``), second order (``second_order_snapshots``:
scores ``(m, sigma2)`` and two snapshots) or features for the estimators that wrap fitted
classifiers (three logistic regressions fitted on 2,000 other rows, outside the timing), as
fits each callable. Everything a callable needs besides its own work (the data, a fitted
estimator for a method, a figure's axes) is made before the measurement.

Measured per call, each in a fresh child process (``python -m benchmarks.public_budget
--_child NAME``): **CPU** = ``resource.getrusage`` user + system time of the process and of its
children (joblib's worker processes, where a callable uses them) over the call; **memory** =
the peak resident set of the process (``VmHWM`` of ``/proc/self/status`` after
``reset_peak_rss``: the interpreter, the data and the call together) and its growth over the
resident set before the call. A child that runs past ``--timeout`` seconds (wall time, default
120) is stopped and recorded as such; a child whose call uses more than ``--cpu-limit`` seconds
of CPU (default 60, twice the budget; ``RLIMIT_CPU``, so the machine's load does not matter) is
stopped by the kernel and recorded as ``"cpu_limit"``, over the budget. ``--quick`` runs every case in
this process at ``n = 1000`` rows (the CI smoke run, ``tests/test_benchmarks_public_budget.py``).
``--in-process`` runs the cases at ``--n`` rows in this process too (each on its own fresh data,
made outside the measurement), except the reports (``CHILD_CASES``), which keep their child
process and its timeout: on a loaded machine an interpreter start and ``import skcal`` per case
cost more wall time than most calls. In this process the peak resident set of a case also holds
what earlier cases left allocated (the process's heap does not shrink), so its ``peak_rss_mib``
can only overstate; ``peak_growth_mib`` is the case's own growth.

Callables not run are listed in ``EXCLUDED`` with the reason (each public name is either a case
here or there; ``public_names()`` is checked against both in the smoke test).

Usage (from the repository root)::

    nice python -m benchmarks.public_budget               # n = 1e6, every case in a child process
    nice python -m benchmarks.public_budget --in-process  # n = 1e6, the reports in child processes
    python -m benchmarks.public_budget --quick            # n = 1e3, in this process
    python -m benchmarks.public_budget --only ce2_score   # cases whose name contains a string

Writes ``public_budget.json`` (``public_budget_quick.json`` with ``--quick``) to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import resource
import signal
import subprocess
import time

import numpy as np

from benchmarks import _harness as harness

#: The budget per call.
CPU_BUDGET_S = 30.0
MEMORY_BUDGET_MIB = 2048.0
K = 10  # classes of the multiclass cases


# ----------------------------------------------------------------------------------------------
# data (made once per child, outside the measurement)
# ----------------------------------------------------------------------------------------------
class Data:
    """Lazily made inputs at ``n`` rows."""

    def __init__(self, n):
        self.n = n
        self._cache = {}

    def _get(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def binary(self):
        return self._get("binary", lambda: harness.binary_predictions(self.n))

    @property
    def multiclass(self):
        return self._get("multiclass", lambda: harness.multiclass_predictions(self.n, K))

    @property
    def q_true(self):
        def make():
            _, P = self.multiclass
            Q = 0.9 * P + 0.1 / K  # the reports' true posteriors: a mild miscalibration of P
            return Q

        return self._get("q", make)

    @property
    def logits(self):
        return self._get("logits", lambda: np.log(self.multiclass[1]))

    @property
    def second_order(self):
        return self._get("second", lambda: harness.second_order_snapshots(self.n))

    @property
    def targets(self):
        def make():
            from skcal.votes import snapshot_targets

            t1, t2, _ = snapshot_targets(self.second_order[1])
            return t1, t2

        return self._get("targets", make)

    @property
    def features(self):
        """``X`` (n, 3), binary labels for it, snapshots for it, and three fitted classifiers."""

        def make():
            from sklearn.linear_model import LogisticRegression

            import skcal

            rng = np.random.default_rng(1)
            X = rng.standard_normal((self.n, 3))
            f = 1.0 / (1.0 + np.exp(-X @ np.array([1.0, -0.5, 0.25])))
            y = (rng.random(self.n) < f).astype(np.int64)
            snaps = skcal.Snapshots(rng.random((self.n, 2)) < f[:, None])  # two votes a row, said
            Xf = rng.standard_normal((2000, 3))
            yf = (rng.random(2000) < 1.0 / (1.0 + np.exp(-Xf @ np.array([1.0, -0.5, 0.25])))).astype(int)
            members = [LogisticRegression(C=c).fit(Xf, yf) for c in (0.1, 1.0, 10.0)]
            return X, y, snaps, members

        return self._get("features", make)


UTILITY = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.4]])


def _axes(panels=1):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    ax = Figure(figsize=(4 * panels, 4)).subplots(1, panels)
    return ax if panels == 1 else list(ax)


# ----------------------------------------------------------------------------------------------
# the cases: name -> (kind, setup(data) -> zero-argument callable)
# ----------------------------------------------------------------------------------------------
def _binary_metric(name, **kw):
    def setup(d):
        import skcal

        y, p = d.binary
        return lambda: getattr(skcal, name)(y, p, **kw)

    return "binary", setup


def _multiclass_metric(name, **kw):
    def setup(d):
        import skcal

        y, P = d.multiclass
        return lambda: getattr(skcal, name)(y, P, **kw)

    return "multiclass", setup


def _fitted(kind, make, method, args):
    """A method of an estimator fitted before the measurement (``make(d)`` -> (estimator, data))."""

    def setup(d):
        est, data = make(d)
        return lambda: getattr(est, method)(*args(data))

    return kind, setup


def _rounder(d):
    import skcal

    y, p = d.binary
    return skcal.SoftBinRounder(random_state=0).fit(p, y), (y, p)


def _platt(d):
    import skcal

    S, Y = d.second_order
    return skcal.SecondOrderPlattCalibrator().fit(S, skcal.Snapshots(Y)), (S, skcal.Snapshots(Y))


def _perturber(d):
    import skcal

    S, _ = d.second_order
    return skcal.SechPerturber(random_state=0).fit(S), S


def _ensemble(d):
    import skcal

    X, _, _, members = d.features
    return skcal.EnsembleMoments(members).fit(X), X


def _socc(d):
    import skcal

    X, _, snaps, members = d.features
    return skcal.SecondOrderCalibratedClassifier(members).fit(X, snaps), X


def _votes(d):
    import skcal

    _, Y = d.second_order
    return skcal.VoteCounts.from_snapshots(Y), Y


def _class_votes(d):
    """Two votes per row over ``K`` classes (one from ``y``, one from the rolled labels)."""
    import skcal

    y, _ = d.multiclass
    C = np.zeros((d.n, K), dtype=np.int64)
    np.add.at(C, (np.arange(d.n), y), 1)
    np.add.at(C, (np.arange(d.n), np.roll(y, 1)), 1)
    return skcal.VoteCounts(counts=C)


def _member_probas(d):
    """Three members' class probabilities, shape ``(3, n, K)``."""
    _, P = d.multiclass
    return np.stack([P, d.q_true, np.roll(P, 1, axis=1)])


def _stats_case(cls_name, inputs, **params):
    """``cls(**params).update(*inputs) `` then ``compute()`` (one case: the streaming path)."""

    def setup(d):
        import skcal.stats as stats

        cls = getattr(stats, cls_name)
        arrays = inputs(d)
        return lambda: cls(**params).update(*arrays).compute()

    return "statistics", setup


def _report_case(kind):
    def setup(d):
        import skcal

        if kind == "binary":
            y, p = d.binary
            preds = {"a": p, "b": np.clip(p + 0.02, 0, 1), "c": np.clip(0.9 * p + 0.05, 0, 1)}
        elif kind == "multiclass":
            y, P = d.multiclass
            preds = {"a": P, "b": d.q_true, "c": np.roll(P, 1, axis=0)}
        else:
            S, Y = d.second_order
            S2 = S.copy()
            S2[:, 1] *= 0.5
            preds = {"a": S, "b": S2, "c": np.column_stack([S[:, 0], np.zeros(len(S))])}
            y = skcal.Snapshots(Y)
        return lambda: skcal.CalibrationReport.from_predictions(y, preds, random_state=0)

    return kind, setup


def _calibration_report(d):
    import skcal

    X, y, _, members = d.features
    return lambda: skcal.calibration_report(
        {f"lr{i}": m for i, m in enumerate(members)}, X, y, random_state=0
    )


def _display(fn, panels=1):
    def setup(d):
        ax = _axes(panels)
        return lambda: fn(d, ax)

    return setup


def cases():
    import skcal

    b, m = _binary_metric, _multiclass_metric
    out = {}
    for name in (
        "binned_ece",
        "average_calibration_error",
        "debiased_l2_calibration_error",
        "max_calibration_error",
        "rms_calibration_error",
        "cutoff_calibration_error",
        "ks_calibration_error",
        "scdl_curve",
        "scdl_score",
        "smooth_ece",
        "smooth_calibration_error",
        "reliability_curve",
        "smooth_reliability_curve",
        "calibration_test",
    ):
        out[name] = b(name)
    out["expected_swap_regret"] = (
        "binary",
        lambda d: lambda: skcal.expected_swap_regret(*d.binary, UTILITY, 16),
    )
    out["soft_bin_weights"] = ("binary", lambda d: lambda: skcal.soft_bin_weights(d.binary[1], 64))
    out["swap_regret"] = (
        "binary",
        lambda d: (
            lambda: skcal.swap_regret(
                d.binary[0], (d.binary[1] > 0.5).astype(int) + (d.binary[1] > 0.8), UTILITY
            )
        ),
    )
    out["SoftBinRounder.fit"] = (
        "binary",
        lambda d: lambda: skcal.SoftBinRounder(random_state=0).fit(d.binary[1], d.binary[0]),
    )
    for meth, args in (
        ("transform", lambda a: (a[1],)),
        ("score", lambda a: (a[1], a[0])),
        ("predict_weights", lambda a: (a[1],)),
        ("decide", lambda a: (a[1], UTILITY)),
        ("decide_proba", lambda a: (a[1], UTILITY)),
    ):
        out[f"SoftBinRounder.{meth}"] = _fitted("binary", _rounder, meth, args)
    out["SoftBinRounder.fit_statistics"] = (
        "binary",
        lambda d: (
            lambda: skcal.SoftBinRounder(random_state=0).fit_statistics(
                skcal.stats.ScdlStatistics().update(d.binary[0], d.binary[1])
            )
        ),
    )
    out["SoftBinRounder.grid_responses"] = _fitted("binary", _rounder, "grid_responses", lambda a: (UTILITY,))
    out["ReliabilityDisplay.from_predictions"] = (
        "binary",
        _display(lambda d, ax: skcal.ReliabilityDisplay.from_predictions(*d.binary, ax=ax, random_state=0)),
    )
    out["ReliabilityDisplay.from_estimator"] = (
        "features",
        _display(
            lambda d, ax: skcal.ReliabilityDisplay.from_estimator(
                d.features[3][1], d.features[0], d.features[1], ax=ax, random_state=0
            )
        ),
    )
    # multiclass
    for name in (
        "brier_over_k",
        "classwise_ece",
        "classwise_lince",
        "conf_ce",
        "conf_ece",
        "confidence_proper_loss",
        "truthful_conf_ce",
    ):
        out[name] = m(name)
    out["lince_score"] = (
        "multiclass",
        lambda d: lambda: skcal.lince_score(d.multiclass[1], d.q_true, bin_on=d.multiclass[1].max(axis=1)),
    )
    out["truthful_decomposition"] = (
        "multiclass",
        lambda d: lambda: skcal.truthful_decomposition(d.q_true, d.multiclass[1]),
    )
    out["truthful_decomposition(measure='classwise_lince')"] = (
        "multiclass",
        lambda d: lambda: skcal.truthful_decomposition(d.q_true, d.multiclass[1], measure="classwise_lince"),
    )
    out["assign_bins"] = ("multiclass", lambda d: lambda: skcal.assign_bins(d.multiclass[1].max(axis=1)))
    out["apply_temperature"] = ("multiclass", lambda d: lambda: skcal.apply_temperature(d.logits, 1.5))
    out["fit_temperature"] = (
        "multiclass",
        lambda d: lambda: skcal.fit_temperature(d.logits, d.multiclass[0]),
    )
    out["temperature_nll"] = (
        "multiclass",
        lambda d: lambda: skcal.temperature_nll(d.logits, d.multiclass[0], 1.5),
    )
    # second order
    so = "second-order"
    votes = lambda d: skcal.Snapshots(d.second_order[1])  # noqa: E731 - two votes a row, said
    out["ce2_score"] = (so, lambda d: lambda: skcal.ce2_score(votes(d), d.second_order[0]))
    out["ce2_details"] = (so, lambda d: lambda: skcal.ce2_details(votes(d), d.second_order[0]))
    for method in ("bucketing", "nadaraya_watson"):
        out[f"ce2_score(method={method!r})"] = (
            so,
            lambda d, method=method: (
                lambda: skcal.ce2_score(votes(d), d.second_order[0], method=method)
            ),
        )
        out[f"baseline_ce2(method={method!r})"] = (
            so,
            lambda d, method=method: (
                lambda: skcal.baseline_ce2(
                    d.second_order[0], *d.targets, method=method, bandwidth=2**-6, random_state=0
                )
            ),
        )
    out["ce1_score"] = (so, lambda d: lambda: skcal.ce1_score(d.second_order[1][:, 0], d.second_order[0]))
    for name in ("sech_cdf", "sech_pdf"):
        out[name] = (
            so,
            lambda d, name=name: lambda: getattr(skcal, name)(d.second_order[0][:, 0], 0.5, 2**-6),
        )
    out["sech_ppf"] = (so, lambda d: lambda: skcal.sech_ppf(d.second_order[0][:, 0], 0.5, 2**-6))
    out["sech_sample"] = (
        so,
        lambda d: lambda: skcal.sech_sample(d.second_order[0][:, 0], 2**-6, random_state=0),
    )
    out["SechPerturber.fit"] = (
        so,
        lambda d: lambda: skcal.SechPerturber(random_state=0).fit(d.second_order[0]),
    )
    out["SechPerturber.transform"] = _fitted(so, _perturber, "transform", lambda S: (S,))
    out["SechPerturber.density"] = _fitted(so, _perturber, "density", lambda S: (S, S))
    out["SecondOrderPlattCalibrator.fit"] = (
        so,
        lambda d: lambda: skcal.SecondOrderPlattCalibrator().fit(d.second_order[0], votes(d)),
    )
    out["SecondOrderPlattCalibrator.partial_fit"] = (
        so,
        lambda d: lambda: skcal.SecondOrderPlattCalibrator().partial_fit(d.second_order[0], votes(d)),
    )
    for meth, args in (
        ("transform", lambda a: (a[0],)),
        ("predict", lambda a: (a[0],)),
        ("predict_moments", lambda a: (a[0],)),
        ("eta1", lambda a: (a[0],)),
        ("eta2", lambda a: (a[0],)),
        ("score", lambda a: a),
    ):
        out[f"SecondOrderPlattCalibrator.{meth}"] = _fitted(so, _platt, meth, args)
    out["SecondOrderPlattCalibrator.fit_statistics"] = (
        so,
        lambda d: (
            lambda: skcal.SecondOrderPlattCalibrator().fit_statistics(
                skcal.stats.CE2Statistics(degree=12).update(votes(d), d.second_order[0])
            )
        ),
    )
    S_of = lambda d: d.second_order[0]  # noqa: E731
    out["SecondOrderDisplay.from_predictions"] = (
        so,
        _display(lambda d, ax: skcal.SecondOrderDisplay.from_predictions(S_of(d), S_of(d), ax=ax), 1),
    )
    out["SecondOrderDisplay.from_estimator"] = (
        so,
        _display(lambda d, ax: skcal.SecondOrderDisplay.from_estimator(_platt(d)[0], S_of(d), ax=ax), 3),
    )
    out["VoteCounts"] = (
        so,
        lambda d: lambda: skcal.VoteCounts(d.second_order[1].sum(axis=1), np.full(d.n, 2.0)),
    )
    out["VoteCounts.from_snapshots"] = (
        so,
        lambda d: lambda: skcal.VoteCounts.from_snapshots(d.second_order[1]),
    )
    out["VoteCounts.from_class_counts"] = (
        so,
        lambda d: (
            lambda: skcal.VoteCounts.from_class_counts(
                np.column_stack([d.second_order[1].sum(axis=1), 2 - d.second_order[1].sum(axis=1)]), 0
            )
        ),
    )
    for meth in ("targets", "to_snapshots", "votes"):
        out[f"VoteCounts.{meth}"] = _fitted(so, _votes, meth, lambda Y: ())
    out["Snapshots"] = (so, lambda d: lambda: skcal.Snapshots(d.second_order[1]))
    out["Snapshots.to_counts"] = _fitted(
        so, lambda d: (skcal.Snapshots(d.second_order[1]), None), "to_counts", lambda _: ()
    )
    out["VoteCounts.one_vs_rest"] = (
        "multiclass",
        lambda d: (lambda votes: lambda: votes.one_vs_rest(d.multiclass[0]))(_class_votes(d)),
    )
    out["ensemble_moments"] = (
        "multiclass",
        lambda d: (lambda probas: lambda: skcal.ensemble_moments(probas))(_member_probas(d)),
    )
    # estimators wrapping fitted classifiers
    out["EnsembleMoments.fit"] = (
        "features",
        lambda d: lambda: skcal.EnsembleMoments(d.features[3]).fit(d.features[0]),
    )
    out["EnsembleMoments.transform"] = _fitted("features", _ensemble, "transform", lambda X: (X,))
    out["EnsembleMoments.fit_transform"] = (
        "features",
        lambda d: lambda: skcal.EnsembleMoments(d.features[3]).fit_transform(d.features[0]),
    )
    out["SecondOrderCalibratedClassifier.fit"] = (
        "features",
        lambda d: (
            lambda: skcal.SecondOrderCalibratedClassifier(d.features[3]).fit(d.features[0], d.features[2])
        ),
    )
    for meth in ("predict_second_order", "predict_proba", "predict"):
        out[f"SecondOrderCalibratedClassifier.{meth}"] = _fitted("features", _socc, meth, lambda X: (X,))
    # statistics objects (the streaming path; the in-memory functions above build them too)
    binary = lambda d: d.binary  # noqa: E731
    multi = lambda d: d.multiclass  # noqa: E731
    snaps = lambda d: (skcal.Snapshots(d.second_order[1]), d.second_order[0])  # noqa: E731
    for cls in (
        "BinnedStatistics",
        "CutoffGridStatistics",
        "CutoffStatistics",
        "ScdlStatistics",
        "SmoothECEStatistics",
    ):
        out[f"stats.{cls}"] = _stats_case(cls, binary)
    for cls in ("AccuracyStatistics", "BrierScoreStatistics", "LogLossStatistics"):
        out[f"stats.{cls}(binary)"] = _stats_case(cls, binary)
        out[f"stats.{cls}(multiclass)"] = _stats_case(cls, multi, labels=np.arange(K))
    for cls in ("ClasswiseStatistics", "TopLabelStatistics"):
        out[f"stats.{cls}"] = _stats_case(cls, multi, labels=np.arange(K))
    out["stats.CE2Statistics"] = _stats_case("CE2Statistics", snaps, degree=12)
    out["stats.CE1Statistics"] = _stats_case(
        "CE1Statistics", lambda d: (d.second_order[1][:, 0], d.second_order[0]), degree=12
    )
    out["stats.QuantileHistogramStatistics"] = (
        "statistics",
        lambda d: lambda: skcal.stats.QuantileHistogramStatistics().update(*d.binary),
    )
    edges = skcal.stats.quantile_edges
    out["stats.quantile_edges"] = ("statistics", lambda d: lambda: edges(lambda: iter([d.binary]), 15))
    thresholds = skcal.stats.quantile_thresholds
    out["stats.quantile_thresholds"] = (
        "statistics",
        lambda d: lambda: thresholds(lambda: iter([d.multiclass]), 15, labels=np.arange(K)),
    )

    def _states(d):
        y, p = d.binary
        parts = np.array_split(np.arange(len(y)), 8)
        return [skcal.stats.SmoothECEStatistics().update(y[i], p[i]) for i in parts]

    def _merge(d):
        objs = _states(d)
        return lambda: skcal.stats.merge_all(objs).compute()

    def _from_state(d):
        state = skcal.stats.ScdlStatistics().update(*d.binary).get_state()
        return lambda: skcal.stats.from_state(state).compute()

    out["stats.merge_all"] = ("statistics", _merge)
    out["stats.from_state"] = ("statistics", _from_state)
    # reports (the bootstrap engineer's: listed, not changed here)
    for kind in ("binary", "multiclass", "second-order"):
        out[f"CalibrationReport.from_predictions({kind})"] = _report_case(kind)
    out["calibration_report"] = ("features", _calibration_report)
    # scorers and data
    out["get_skcal_scorer_names"] = ("none", lambda d: skcal.get_skcal_scorer_names)
    out["register_scorer"] = (
        "none",
        lambda d: (
            lambda: skcal.register_scorer("budget_scdl", skcal.scorers.SCORER_TABLE["scdl"], overwrite=True)
        ),
    )
    out["datasets.load_weather_sentiment_amt"] = ("none", lambda d: skcal.datasets.load_weather_sentiment_amt)
    return out


#: Cases that keep a child process (and its timeout) with ``--in-process``.
CHILD_CASES = ("CalibrationReport.from_predictions", "calibration_report")


#: Public callables not run, with the reason.
EXCLUDED = {
    "CalibrationReport.format_value / formatted_table / to_frame / to_text / to_markdown / to_dict / "
    "to_json / add_figure / to_html": "render the tables a report already holds: their cost does not grow "
    "with the rows (and a report of 1e6 rows is itself over the budget, see the report cases)",
    "ReliabilityDisplay.plot / SecondOrderDisplay.plot": "draw what from_predictions computed (run by "
    "from_predictions / from_estimator, whose cases include them)",
    "CalibrationTestResult.rejects / SCDLCurve.grid": "read fields of a result (no rows)",
    "CE2Result / ReliabilityCurve / SmoothReliabilityCurve": "results (dataclasses) that ce2_details, "
    "reliability_curve and smooth_reliability_curve return: made by those cases",
    "get_feature_names_out / set_*_request / get_params / set_params": "scikit-learn metadata, no rows",
    "stats.BaseStatistics": "the abstract base of the statistics classes (each subclass is a case)",
    "stats.CE2PlugInStatistics": "the second pass of ce2_score's plug-in (needs fitted coefficients): "
    "measured through ce2_score",
    "stats.QuantileCellStatistics / stats.QuantileSelector": "the passes behind quantile_edges and "
    "quantile_thresholds, measured through them",
    "skcal.dask (evaluate, evaluate_dataframe, fit_second_order_calibrator)": "the out-of-core front end "
    "(Dask collections): its scale is measured by benchmarks/scale_dask.py (1e7 to 1e8 rows)",
    "skcal.cli / skcal report (the command)": "runs CalibrationReport.from_predictions on a file: "
    "the report cases",
}


def public_names():
    """Every public callable of ``skcal.__all__`` as the sweep of bad input names them."""
    import skcal

    keys = []
    for name in sorted(skcal.__all__):
        if name.startswith("_"):
            continue
        obj = getattr(skcal, name)
        if inspect.isclass(obj):
            own = [
                k for k, v in vars(obj).items() if not k.startswith("_") and callable(getattr(obj, k, None))
            ]
            keys += [f"{name}.{k}" for k in own]
            if "__init__" in vars(obj) and not hasattr(obj, "fit") and not own:
                keys.append(name)
        elif callable(obj):
            keys.append(name)
    return keys


# ----------------------------------------------------------------------------------------------
# measuring
# ----------------------------------------------------------------------------------------------
def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _limit_cpu(seconds):
    """Let the kernel stop this process (``SIGXCPU``) after ``seconds`` more of its own CPU time."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def measure(name, n, table=None, cpu_limit=None):
    """CPU seconds, wall seconds and memory of one call of case ``name`` at ``n`` rows (this process).

    ``cpu_limit`` (seconds; a child process only): the kernel stops the process once the call
    has used that much CPU, and the parent records the case as stopped (see :func:`run_child`).
    """
    table = cases() if table is None else table
    kind, setup = table[name]
    fn = setup(Data(n))
    gc.collect()
    if cpu_limit is not None:
        _limit_cpu(cpu_limit)
    rss0 = harness.reset_peak_rss()
    c0, t0 = _cpu(), time.perf_counter()
    error = None
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - a failing call is recorded, the sweep goes on
        error = f"{type(exc).__name__}: {exc}"[:300]
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    peak = harness.status_kib("VmHWM")
    out = {"kind": kind, "cpu_s": cpu, "wall_s": wall, "status": "error" if error else "done"}
    if error:
        out["error"] = error
    if peak is not None and rss0 is not None:
        out["peak_rss_mib"] = peak / 1024.0
        out["peak_growth_mib"] = (peak - rss0) / 1024.0
    return out


def run_child(name, n, timeout, cpu_limit=None):
    """:func:`measure` in a fresh interpreter (``--_child``), stopped after ``timeout`` seconds.

    With ``cpu_limit``, the kernel also stops the child once the call has used that many CPU
    seconds (``RLIMIT_CPU``, whatever the machine's load): the case is recorded as
    ``"cpu_limit"``, over the budget, with its CPU at least the limit.
    """
    extra = () if cpu_limit is None else ("--cpu-limit", cpu_limit)
    try:
        stdout = harness.run_module(__file__, "--_child", name, "--n", n, *extra, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {
            "status": "timeout",
            "cpu_s": None,
            "wall_s": float(timeout),
            "note": f"stopped after {timeout} s",
        }
    except RuntimeError as exc:
        if f"exited with {-signal.SIGXCPU}" in str(exc):
            return {
                "status": "cpu_limit",
                "cpu_s": None,
                "cpu_s_at_least": float(cpu_limit),
                "note": f"stopped by the kernel after {cpu_limit:g} s of CPU in the call",
            }
        return {"status": "error", "error": str(exc)[-300:]}
    return json.loads(stdout.strip().splitlines()[-1])


def verdict(row):
    if row["status"] in ("timeout", "cpu_limit"):
        return False
    if row["status"] != "done":
        return None
    ok = row["cpu_s"] <= CPU_BUDGET_S
    if "peak_rss_mib" in row:
        ok = ok and row["peak_rss_mib"] <= MEMORY_BUDGET_MIB
    return bool(ok)


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="n = 1000 rows, in this process (CI)")
    parser.add_argument("--n", type=float, default=None, help="rows (default 1e6; 1e3 with --quick)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="wall seconds per child before it is stopped"
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="run the cases whose names contain one of these"
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the cases in this process (the reports still in child processes)",
    )
    parser.add_argument(
        "--cpu-limit",
        type=float,
        default=2 * CPU_BUDGET_S,
        help="CPU seconds after which a child's call is stopped (recorded as over the budget)",
    )
    parser.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = harness.parse_args(parser, argv)
    n = int(args.n) if args.n else (1000 if args.quick else 10**6)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if args._child is not None:
        print(json.dumps(measure(args._child, n, cpu_limit=args.cpu_limit)))
        return None
    clock = harness.Timer()
    table = cases()
    names = [k for k in table if not args.only or any(s in k for s in args.only)]
    rows = {}
    for name in names:
        here = args.quick or (args.in_process and not name.startswith(CHILD_CASES))
        row = measure(name, n, table) if here else run_child(name, n, args.timeout, args.cpu_limit)
        row["process"] = "this" if here else "child"
        row["within_budget"] = verdict(row)
        rows[name] = row
        cpu = "-" if row.get("cpu_s") is None else f"{row['cpu_s']:8.2f} s"
        mem = f"{row['peak_rss_mib']:8.0f} MiB" if "peak_rss_mib" in row else ""
        flag = {True: "", False: "OVER", None: "?"}[row["within_budget"]]
        print(f"{name:60s} {row['status']:8s} cpu {cpu} {mem} {flag}", flush=True)
    over = [k for k, r in rows.items() if r["within_budget"] is False]
    result = {
        "quick": args.quick,
        "n": n,
        "budget": {"cpu_s": CPU_BUDGET_S, "peak_rss_mib": MEMORY_BUDGET_MIB},
        "cases": rows,
        "over_budget": over,
        "errors": [k for k, r in rows.items() if r["status"] == "error"],
        "excluded": EXCLUDED,
    }
    config = harness.args_config(
        args,
        n_used=n,
        k=K,
        data={
            "binary": harness.BINARY_PREDICTIONS,
            "multiclass": f"multiclass_predictions(n, {K})",
            "second-order": "second_order_snapshots(n)",
        },
    )
    stem = "public_budget_quick" if args.quick else "public_budget"
    harness.write_result(__file__, argv, args.out / f"{stem}.json", result, config=config, clock=clock)
    print(f"over budget: {over}")
    return result


if __name__ == "__main__":
    main()
