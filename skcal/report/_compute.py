"""Computing a report: the values, the paired bootstrap, the table, the details and the tests.

:func:`compute_results` is the report's factory behind :meth:`CalibrationReport.from_predictions`:
it turns validated data and predictions into a :class:`ReportResults` (everything a report shows
except the figures, which are drawn from the report on first access), and
:func:`~skcal.report._verdict.build_verdict` turns those results into the verdict.
:class:`~skcal.report.CalibrationReport` only stores what they return.

Randomness
----------
One ``random_state`` seeds everything, through :func:`sklearn.utils.check_random_state`: the
bootstrap draws the 64-bit key of its weight stream from it (two 32-bit draws), then the
calibration tests draw one seed per model from the same generator, then the figures' seed is
drawn from it. So a report is reproducible
from an int or from a ``RandomState`` instance in the same state (two reports made from
``RandomState(0)`` are equal), and ``None`` means fresh randomness. For an int, the tests' seeds
come from their own ``RandomState(int)`` and the figures use the int itself (the layout reports
of earlier versions were made with).
"""

from __future__ import annotations

import numbers
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from skcal._html import fmt
from skcal.report._bootstrap import (
    Progress,
    intervals,
    p_best,
    prepare_all,
    ranks,
    run_bootstrap,
    score_all,
)
from skcal.report._pvalues import calibration_pvalue

#: The report's settings, described once: the parameters of :func:`~skcal.report.calibration_report`,
#: :meth:`~skcal.report.CalibrationReport.from_predictions`, :func:`~skcal.report.report_from_batches`
#: and :func:`skcal.dask.calibration_report_dask` (``{name}`` in their docstrings, see
#: :func:`skcal._docstrings.fill`).
SETTINGS_DOCS = {
    "n_bootstrap": """n_bootstrap : int, default=200
    Paired bootstrap replicates, at most 10**5; 0 skips the intervals. Replicate ``r`` counts
    validation row ``i`` ``W[r, i] ~ Poisson(1)`` times (the Poisson bootstrap, on a
    counter-based stream keyed by the row: :func:`skcal.stats.poisson_weights`), the same
    weights for every model and metric (paired). The built-in metrics' replicates are their
    statistics on those weights (:class:`skcal.stats.PoissonBootstrap`; smCE's on its fine
    grid, within a stated bound far below the interval's width, see
    :func:`skcal.stats.smce_grid_cells`); a metric given as a callable is recomputed on each
    replicate's rows (row ``i`` repeated ``W[r, i]`` times).""",
    "confidence_level": """confidence_level : float, default=0.9
    Nominal coverage of the intervals.""",
    "interval_method": """interval_method : {"bc-percentile", "percentile", "basic"}, default="bc-percentile"
    How intervals are made from the replicates. ``"bc-percentile"`` shifts the replicates by
    the bootstrap's estimate of the resampling bias (estimate minus their median), so the
    interval is centred on the value and contains it; see :mod:`skcal.report._bootstrap`.""",
    "n_bins": """n_bins : int or None, default=10
    Bins of the reliability diagrams (as in :class:`~sklearn.calibration.CalibrationDisplay`;
    ``None`` with ``strategy="soft"`` uses SCDL's selected grid).""",
    "strategy": """strategy : {"uniform", "quantile", "soft"}, default="uniform"
    Binning of the reliability diagrams (see :class:`~skcal.display.ReliabilityDisplay`).""",
    "test_calibration": """test_calibration : bool, default=True
    Run a calibration test per model (:func:`skcal.calibration_test` on the cutoff
    calibration error: labels redrawn as ``Bernoulli(p)``, the error recomputed on each
    resample) and report its p-value; the verdict names the models miscalibrated at the 5%
    level.""",
    "n_resamples": """n_resamples : int, default=1000
    Resamples of each calibration test (at most a million, as :func:`skcal.calibration_test`
    allows).""",
    "n_jobs": """n_jobs : int, default=None
    Number of threads over blocks of bootstrap replicates. Results do not depend on it.""",
    "random_state": """random_state : int, RandomState instance or None, default=None
    Seeds the bootstrap and the tests.""",
    "title": """title : str, default=None
    Title of the page and section.""",
    "notes": """notes : sequence of str, default=()
    Free text shown in the outputs (data provenance, caveats).""",
    "verbose": """verbose : int, default=0
    Print the report's stages to stderr when positive. On a terminal
    (``sys.stderr.isatty()``) a progress bar of the bootstrap and of the calibration tests
    is drawn whatever ``verbose`` is.""",
    "max_seconds": """max_seconds : float, default=None
    Time budget of the report, in seconds. The first block of bootstrap replicates is timed
    after the values and the calibration tests, and the number of replicates lowered so that
    the report ends within the budget (never below that first block, a quarter of a block:
    4 to 25 replicates). The report then says how many replicates it used
    (:attr:`CalibrationReport.n_bootstrap`, ``to_dict()["bootstrap"]``, the legend and the
    verdict): the intervals' end points and ``P(best)`` carry a Monte Carlo error that grows as
    ``1/sqrt(B)`` for ``B`` replicates. ``None`` (the default) computes all ``n_bootstrap``.""",
    "primary": """primary : str, default=None
    The report's primary measure, one of its metrics: the table is ranked by it and the
    verdict speaks of it, the other calibration measures being supporting evidence. None
    takes the kind's default (first order: ``"smooth_ece"``; see the reports guide).""",
    "pos_label": """pos_label : int, float, bool or str, default=None
    The positive class of ``y`` (binary first order only).""",
}


@dataclass(frozen=True)
class ReportSettings:
    """How a report is computed: the arguments of the same names of
    :func:`~skcal.report.calibration_report` (:data:`SETTINGS_DOCS`); ``primary`` None is the
    kind's default (:func:`skcal.report._verdict.primary_metric`)."""

    n_bootstrap: int = 200
    confidence_level: float = 0.9
    interval_method: str = "bc-percentile"
    n_bins: int | None = 10
    strategy: str = "uniform"
    test_calibration: bool = True
    n_resamples: int = 1000
    n_jobs: int | None = None
    random_state: object = None
    max_seconds: float | None = None
    primary: str | None = None


@dataclass(frozen=True)
class ReportResults:
    """Everything a report computed, before the verdict and the figures.

    Attributes
    ----------
    metrics : tuple of Metric
        The metrics scored, in the table's order.
    model_names : tuple of str
        The models, in the table's order.
    params : list of list of dict
        Per model and metric, the keyword arguments fixed on the full validation set.
    table : pandas.DataFrame
        One row per model; columns ``(metric, field)`` with fields ``value``, ``low``, ``high``,
        ``rank`` and ``p_best``.
    bootstrap_values : ndarray of shape (n_bootstrap, n_models, n_metrics)
        Every metric of every model on every paired replicate.
    metric_details : dict
        Metric -> model -> extra numbers shown beside the value.
    calibration_tests : pandas.DataFrame or None
        Per model: ``statistic``, ``pvalue``, ``measure``, ``method``, ``n_resamples``.
    n_samples : int
        Rows of the validation data.
    figure_seed : int or None
        Seed of the figures' bootstrap, drawn when the report was computed.
    n_bootstrap_requested : int
        Replicates asked for (``n_bootstrap``); ``bootstrap_values`` holds fewer when
        ``max_seconds`` lowered them.
    bootstrap_seconds : float
        Wall time of the bootstrap.
    bootstrap_seed : int or None
        Key of the bootstrap's weight stream (:func:`skcal.stats.poisson_weights`).
    """

    metrics: tuple
    model_names: tuple
    params: list
    table: pd.DataFrame
    bootstrap_values: np.ndarray
    metric_details: dict
    calibration_tests: pd.DataFrame | None
    n_samples: int
    figure_seed: int | None = None
    n_bootstrap_requested: int = 0
    bootstrap_seconds: float = 0.0
    bootstrap_seed: int | None = None

    @property
    def n_bootstrap(self):
        """Replicates behind the intervals."""
        return int(self.bootstrap_values.shape[0])

    @property
    def budget_limited(self):
        """Whether ``max_seconds`` lowered the number of replicates."""
        return self.n_bootstrap < self.n_bootstrap_requested

    @property
    def metric_names(self):
        """The metrics' names."""
        return [m.name for m in self.metrics]

    @property
    def metric_labels(self):
        """Metric name -> short label."""
        return {m.name: m.label for m in self.metrics}

    @property
    def metric_is_calibration(self):
        """Metric name -> whether it is a calibration error."""
        return {m.name: m.is_calibration for m in self.metrics}

    @staticmethod
    def format_value(x, digits=4):
        """A number as the report writes it (``digits`` significant digits)."""
        return fmt(x, digits)


class ReportSeeds:
    """The report's seeds, all drawn from one ``check_random_state(random_state)``."""

    def __init__(self, random_state):
        self.random_state = random_state
        self.integer = isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
        self.rng = check_random_state(random_state)

    def bootstrap(self):
        """The 64-bit key of the bootstrap's weight stream (two 32-bit draws)."""
        hi = int(self.rng.randint(0, 1 << 32, dtype=np.int64))
        lo = int(self.rng.randint(0, 1 << 32, dtype=np.int64))
        return (hi << 32) | lo

    def tests(self):
        """A generator of per-model test seeds, or None for fresh randomness."""
        if self.random_state is None:
            return None
        return np.random.RandomState(self.random_state) if self.integer else self.rng

    def figures(self):
        if self.random_state is None:
            return None
        return int(self.random_state) if self.integer else int(self.rng.randint(0, np.iinfo(np.int32).max))


def build_table(point, replicates, metrics, model_names, confidence_level, interval_method):
    """The report's table from the point values ``(n_models, n_metrics)`` and the replicates."""
    cols = {}
    for j, m in enumerate(metrics):
        rep = replicates[:, :, j]
        low, high = intervals(point[:, j], rep, confidence_level, interval_method, m.bounds)
        cols[(m.name, "value")] = point[:, j]
        cols[(m.name, "low")] = low
        cols[(m.name, "high")] = high
        cols[(m.name, "rank")] = ranks(point[:, j], m.greater_is_better, m.rank_by_abs)
        cols[(m.name, "p_best")] = p_best(rep, m.greater_is_better, m.rank_by_abs)
    table = pd.DataFrame(cols, index=pd.Index(list(model_names), name="model"))
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["metric", "field"])
    return table


def run_calibration_tests(test_inputs, n_resamples, seeds, verbose=0):
    """Per model, the calibration test of its binary ``(y, p)``: a DataFrame indexed by model."""
    rows = {}
    progress = Progress("calibration tests", len(test_inputs), "models", verbose)
    for k, (model, (y, p)) in enumerate(test_inputs.items()):
        seed = None if seeds is None else int(seeds.randint(0, np.iinfo(np.int32).max))
        res = calibration_pvalue(y, p, n_resamples=n_resamples, random_state=seed)
        rows[model] = {
            "statistic": res.statistic,
            "pvalue": res.pvalue,
            "measure": res.measure,
            "method": res.method,
            "n_resamples": res.n_resamples,
        }
        progress.update(k + 1)
    progress.close()
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")


def _say(verbose, text):
    """A progress line on stderr when ``verbose``."""
    if verbose:
        print(f"[skcal] {text}", file=sys.stderr, flush=True)


def compute_results(kind, data, predictions, metrics, settings, *, verbose=0, started=None):
    """Compute a report's results from validated data and predictions.

    The values (each metric's function), details and calibration tests first, then the paired
    bootstrap (whose number of replicates ``settings.max_seconds`` may lower; see
    :func:`~skcal.report._bootstrap.run_bootstrap`).

    Parameters
    ----------
    kind : ReportKind
        The report kind.
    data : object
        The kind's validated data.
    predictions : dict
        Model name -> validated prediction.
    metrics : list of Metric
        The metrics to score.
    settings : ReportSettings
        How to compute them.
    verbose : int, default=0
        Print progress lines to stderr when positive.
    started : float, default=None
        ``time.perf_counter()`` when the report started (the budget counts from it).

    Returns
    -------
    ReportResults
        The table, replicates, details, tests and the figures' seed.
    """
    started = time.perf_counter() if started is None else started
    seeds = ReportSeeds(settings.random_state)
    boot_seed = seeds.bootstrap()  # drawn first, whatever the order of the stages below
    test_seeds = seeds.tests()
    names = tuple(predictions)
    plist = list(predictions.values())
    params = prepare_all(data, plist, metrics)
    point = score_all(data, plist, metrics, params)
    details = {
        m.name: {model: m.details(data, p) for model, p in predictions.items()}
        for m in metrics
        if m.details is not None
    }
    tests = None
    if settings.test_calibration:
        _say(verbose, f"calibration tests ({settings.n_resamples} resamples per model)")
        t0 = time.perf_counter()
        tests = run_calibration_tests(
            kind.test_inputs(data, predictions), settings.n_resamples, test_seeds, verbose
        )
        _say(verbose, f"calibration tests done ({time.perf_counter() - t0:.1f} s)")
    if settings.n_bootstrap:
        budget = "" if settings.max_seconds is None else f", within max_seconds={settings.max_seconds:g}"
        _say(verbose, f"bootstrap ({settings.n_bootstrap} paired Poisson replicates{budget})")
    run = run_bootstrap(
        data,
        plist,
        metrics,
        params,
        settings.n_bootstrap,
        boot_seed,
        n_jobs=settings.n_jobs,
        verbose=verbose,
        max_seconds=settings.max_seconds,
        started=started,
    )
    if settings.n_bootstrap:
        _say(verbose, f"bootstrap done: {run.values.shape[0]} replicates ({run.seconds:.1f} s)")
    level, method = settings.confidence_level, settings.interval_method
    table = build_table(point, run.values, metrics, names, level, method)
    return ReportResults(
        metrics=tuple(metrics),
        model_names=names,
        params=params,
        table=table,
        bootstrap_values=run.values,
        metric_details=details,
        calibration_tests=tests,
        n_samples=int(data.n),
        figure_seed=seeds.figures(),
        n_bootstrap_requested=int(settings.n_bootstrap),
        bootstrap_seconds=float(run.seconds),
        bootstrap_seed=int(boot_seed),
    )
