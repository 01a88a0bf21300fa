"""The report object and the function that builds it from fitted models."""

from __future__ import annotations

import sys
import time

import pandas as pd

from skcal import _html
from skcal._compat import HasMethods, StrOptions, validate_params
from skcal._constraints import (
    BOOLEAN,
    DIGITS,
    JSON_INDENT,
    MAX_BINS_LIMIT,
    N_BOOTSTRAP,
    N_JOBS,
    OUTPUT_PATH,
    POS_LABEL,
    PROBABILITY_OPEN,
    RANDOM_STATE,
    VERBOSE,
    Integral,
    Real,
    StrictInterval,
)
from skcal._docstrings import fill
from skcal.calibration_test import MAX_RESAMPLES
from skcal.report import _render
from skcal.report._bootstrap import INTERVAL_METHODS
from skcal.report._compute import SETTINGS_DOCS, ReportResults, ReportSettings, compute_results
from skcal.report._kinds import ReportKind, kind_for, kind_for_target
from skcal.report._verdict import build_verdict, primary_metric

#: The constraints of the report settings every report function takes.
COMMON_CONSTRAINTS = {
    "metrics": [list, tuple, dict, str, None],
    "n_bootstrap": N_BOOTSTRAP,
    "confidence_level": PROBABILITY_OPEN,
    "interval_method": [StrOptions(set(INTERVAL_METHODS))],
    "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both"), None],
    "strategy": [StrOptions({"uniform", "quantile", "soft"})],
    "test_calibration": ["boolean"],
    "n_resamples": [StrictInterval(Integral, 1, MAX_RESAMPLES, closed="both")],
    "n_jobs": N_JOBS,
    "random_state": RANDOM_STATE,
    "title": [str, None],
    "notes": [list, tuple],
    "verbose": VERBOSE,
    "max_seconds": [StrictInterval(Real, 0, None, closed="neither"), None],
    "primary": [str, None],
}
#: The report's settings (:data:`~skcal.report._compute.SETTINGS_DOCS`), and the runs of them
#: that every report function documents in the same order (``{resampling}``, ``{outputs}``), and
#: what they return (``{returns}``).
REPORT_DOCS = {
    **SETTINGS_DOCS,
    "resampling": "\n".join(
        SETTINGS_DOCS[name]
        for name in "n_bootstrap confidence_level interval_method n_bins strategy".split()
        + ["test_calibration", "n_resamples"]
    ),
    "outputs": "\n".join(SETTINGS_DOCS[name] for name in ("title", "notes", "verbose")),
    "returns": "Returns\n-------\nCalibrationReport\n    The report.",
}


def _as_named_models(estimators, what="estimators"):
    """A dict name -> object from a dict, a list of objects or a list of (name, object) pairs."""
    if isinstance(estimators, dict):
        items = [(str(k), v) for k, v in estimators.items()]
    elif isinstance(estimators, (list, tuple)):
        items, counts = [], {}
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


class CalibrationReport:
    """Several models' calibration on one validation set: verdict, table, figures, HTML, Markdown, JSON.

    Build it with :func:`calibration_report` (from fitted models) or
    :meth:`CalibrationReport.from_predictions` (from predictions already made); both compute
    through :func:`skcal.report._compute.compute_results` and
    :func:`skcal.report._verdict.build_verdict`, and the constructor only stores what they
    return. The kind of report (first-order, second-order or multiclass) follows from the shapes
    of ``y`` and the predictions; see :func:`calibration_report`.

    Parameters
    ----------
    kind : ReportKind
        The report kind (an object of :mod:`skcal.report._kinds`).
    results : ReportResults
        The computed table, bootstrap replicates, details and calibration tests.
    verdict : list of str
        The plain-words summary shown at the top of every output.
    settings : ReportSettings
        How the results were computed (bootstrap, intervals, bins, tests, seed).
    title : str
        Title of the page and section.
    notes : sequence of str, default=()
        Free text shown in the outputs.
    data : object, default=None
        The validated validation data of the kind (the figures are drawn from it).
    predictions : dict, default=None
        Model name -> validated prediction (the figures are drawn from them).
    estimators : dict, default=None
        Model name -> fitted model, when the report was made from models.
    elapsed : float, default=None
        Seconds the report took to compute.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model; columns are a MultiIndex ``(metric, field)`` with fields ``value``
        (the metric on the full validation set), ``low`` and ``high`` (the interval at
        ``confidence_level``), ``rank`` (1 is best; ties share the lower rank) and ``p_best``
        (the fraction of bootstrap replicates in which the model is the best or tied).
    order : str
        ``"first-order"``, ``"second-order"`` or ``"multiclass"`` (the kind's name).
    y_true : ndarray
        The validated labels: 0/1 (first order), snapshots (second order) or class codes
        ``0..k-1`` (multiclass).
    metric_details : dict
        Metric -> model -> extra numbers (SCDL: the selected grid ``m*``, the unfloored
        ``SCDL_m*`` and ``at_floor``, whether SCDL equals ``1/m*``).
    calibration_tests : pandas.DataFrame or None
        Per model: ``statistic``, ``pvalue``, ``measure``, ``method``, ``n_resamples``.
    bootstrap_values : ndarray of shape (n_bootstrap, n_models, n_metrics)
        Every metric of every model on every paired bootstrap replicate.
    random_state : int or None
        Seed of the figures' bootstrap (drawn from the report's ``random_state`` when that is
        a ``RandomState`` instance).
    figures : dict
        Figure title -> :class:`matplotlib.figure.Figure`, built on first access (empty when
        matplotlib is not installed).
    """

    @validate_params(
        {
            "kind": [ReportKind],
            "results": [ReportResults],
            "verdict": [list],
            "settings": [ReportSettings],
            "title": [str],
            "notes": [list, tuple],
            "data": "no_validation",
            "predictions": [dict, None],
            "estimators": [dict, None],
            "elapsed": [Real, None],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(
        self,
        *,
        kind,
        results,
        verdict,
        settings,
        title,
        notes=(),
        data=None,
        predictions=None,
        estimators=None,
        elapsed=None,
    ):
        self.kind = kind
        self.results = results
        self.verdict = verdict
        self.settings = settings
        self.title = title
        self.notes = list(notes)
        self.data = data
        self.predictions = predictions
        self.estimators = {} if estimators is None else estimators
        self.elapsed = elapsed
        self.reliability_displays = {}
        self._figures = None
        self._extra_figures = []
        self._extra_words = {}

    # -- what the results and settings hold, under the report's names ----------------------
    table = property(lambda self: self.results.table, doc="The table (see the class docstring).")
    metrics = property(lambda self: list(self.results.metrics), doc="The metrics scored.")
    params = property(lambda self: self.results.params, doc="Per model and metric, the fixed parameters.")
    bootstrap_values = property(lambda self: self.results.bootstrap_values, doc="Every replicate's values.")
    metric_details = property(lambda self: self.results.metric_details, doc="Metric -> model -> details.")
    calibration_tests = property(lambda self: self.results.calibration_tests, doc="The calibration tests.")
    n_samples = property(lambda self: self.results.n_samples, doc="Rows of the validation data.")
    model_names = property(lambda self: list(self.results.model_names), doc="The models.")
    metric_names = property(lambda self: self.results.metric_names, doc="The metrics' names.")

    @property
    def primary_metric(self):
        """The primary measure: the table is ranked by it and the verdict speaks of it."""
        return primary_metric(self.kind, self.metric_names, self.metric_is_calibration, self.settings.primary)

    metric_labels = property(lambda self: self.results.metric_labels, doc="Metric name -> label.")
    metric_is_calibration = property(
        lambda self: self.results.metric_is_calibration, doc="Metric name -> is a calibration error."
    )
    random_state = property(lambda self: self.results.figure_seed, doc="Seed of the figures' bootstrap.")
    confidence_level = property(lambda self: self.settings.confidence_level, doc="Nominal coverage.")
    interval_method = property(lambda self: self.settings.interval_method, doc="The interval method.")
    n_bins = property(lambda self: self.settings.n_bins, doc="Bins of the reliability diagrams.")
    strategy = property(lambda self: self.settings.strategy, doc="Binning of the reliability diagrams.")
    order = property(lambda self: self.kind.name, doc="The kind's name.")
    y_true = property(lambda self: None if self.data is None else self.data.target, doc="The labels.")

    @property
    def n_bootstrap(self):
        """Number of paired bootstrap replicates behind the intervals."""
        return int(self.results.bootstrap_values.shape[0])

    @property
    def n_bootstrap_requested(self):
        """Replicates asked for; more than :attr:`n_bootstrap` when ``max_seconds`` lowered them."""
        return int(self.results.n_bootstrap_requested)

    @property
    def max_seconds(self):
        """The time budget the report was made with (``None``: none)."""
        return self.settings.max_seconds

    @property
    def metric_descriptions(self):
        """Metric name -> one-line description."""
        return {m.name: m.description for m in self.results.metrics}

    @property
    def greater_is_better(self):
        """Metric name -> whether larger values are better."""
        return {m.name: m.greater_is_better for m in self.results.metrics}

    @property
    def rank_by_abs(self):
        """Metric name -> whether models are ranked by the absolute value."""
        return {m.name: m.rank_by_abs for m in self.results.metrics}

    @property
    def metric_params(self):
        """Model -> metric -> the parameters fixed on the full validation set (non-empty only)."""
        return {
            model: {m.name: dict(kw) for m, kw in zip(self.results.metrics, pk, strict=True) if kw}
            for model, pk in zip(self.results.model_names, self.results.params, strict=True)
        }

    # -- construction ----------------------------------------------------------------------
    @classmethod
    @fill(**REPORT_DOCS)
    @validate_params(
        {
            "y": ["array-like"],
            "predictions": [dict, list, tuple],
            "pos_label": POS_LABEL,
            "labels": ["array-like", None],
            **COMMON_CONSTRAINTS,
        },
        prefer_skip_nested_validation=True,
    )
    def from_predictions(
        cls,
        y,
        predictions,
        *,
        metrics=None,
        n_bootstrap=200,
        confidence_level=0.9,
        interval_method="bc-percentile",
        n_bins=10,
        strategy="uniform",
        test_calibration=True,
        n_resamples=1000,
        n_jobs=None,
        random_state=None,
        pos_label=None,
        labels=None,
        title=None,
        notes=(),
        verbose=0,
        max_seconds=None,
        primary=None,
    ):
        """Build a report from predictions that were already made.

        Parameters
        ----------
        y : array-like of shape (n,) or (n, k)
            Binary labels (first-order report), class labels (multiclass report) or snapshots,
            ``k >= 2`` independent binary labels per row with NaN for a missing vote
            (second-order report).
        predictions : dict or list
            Model name -> positive-class probabilities of shape ``(n,)`` or ``(n, 2)`` (first
            order), ``(n, k)`` class probabilities with ``k > 2`` (multiclass) or second-order
            scores ``(m, sigma2)`` of shape ``(n, 2)`` (second order).
        metrics : list of str or dict, default=None
            As in :func:`calibration_report`.
        {resampling}
        {n_jobs}
        {random_state}
        {pos_label}
        labels : array-like of shape (k,), default=None
            Multiclass only: the class of each probability column (default: the sorted labels
            of ``y``).
        {outputs}
        {max_seconds}
        {primary}

        {returns}

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
        settings = ReportSettings(
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            interval_method=interval_method,
            n_bins=n_bins,
            strategy=strategy,
            test_calibration=test_calibration,
            n_resamples=n_resamples,
            n_jobs=n_jobs,
            random_state=random_state,
            max_seconds=max_seconds,
            primary=primary,
        )
        return cls._compute(
            y,
            predictions,
            metrics,
            settings,
            pos_label=pos_label,
            labels=labels,
            title=title,
            notes=notes,
            verbose=verbose,
        )

    @classmethod
    def _compute(
        cls,
        y,
        predictions,
        metrics,
        settings,
        *,
        pos_label,
        labels,
        title,
        notes,
        verbose,
        estimators=None,
        t0=None,
    ):
        """The factory: validate, compute the results and the verdict, then store them."""
        t0 = time.perf_counter() if t0 is None else t0
        predictions = _as_named_models(predictions, what="predictions")
        kind = kind_for(y, predictions)
        data, preds = kind.validate(y, predictions, pos_label=pos_label, labels=labels)
        metric_objs = kind.resolve_metrics(metrics)
        names = [m.name for m in metric_objs]
        primary_metric(kind, names, {m.name: m.is_calibration for m in metric_objs}, settings.primary)
        results = compute_results(kind, data, preds, metric_objs, settings, verbose=verbose, started=t0)
        return cls(
            kind=kind,
            results=results,
            verdict=build_verdict(kind, results, settings.primary),
            settings=settings,
            title=title or kind.default_title,
            notes=notes,
            data=data,
            predictions=preds,
            estimators=estimators,
            elapsed=time.perf_counter() - t0,
        )

    # -- pickling and notebooks ------------------------------------------------------------
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_figures"] = None  # matplotlib figures are rebuilt on demand
        state["reliability_displays"] = {}
        return state

    def _repr_html_(self):
        return f"<style>{_html.CSS}</style><div class='skcal-report'>{_render.html_section(self)}</div>"

    def __str__(self):
        return f"{self.title}\n{self.to_text()}"

    def __repr__(self):
        return (
            f"<CalibrationReport ({self.order}): {len(self.model_names)} models x {len(self.metric_names)} "
            f"metrics on {self.n_samples} samples, {self.n_bootstrap} bootstrap replicates>"
        )

    # -- tables ----------------------------------------------------------------------------
    @validate_params(
        {"x": [Real, None], "digits": DIGITS},
        prefer_skip_nested_validation=True,
    )
    def format_value(self, x, digits=4):
        """A number as the report writes it (``digits`` significant digits).

        Parameters
        ----------
        x : float
            The number.
        digits : int, default=4
            Significant digits.

        Returns
        -------
        str
            The formatted number (``"nan"`` for a missing one).
        """
        return _html.fmt(x, digits)

    @validate_params(
        {"digits": DIGITS, "intervals": BOOLEAN},
        prefer_skip_nested_validation=True,
    )
    def formatted_table(self, *, digits=4, intervals=True):
        """A DataFrame of strings ``value [low, high] #rank (P(best) ...)``, one column per metric.

        Parameters
        ----------
        digits : int, default=4
            Significant digits of every number.
        intervals : bool, default=True
            Include the intervals and P(best).

        Returns
        -------
        pandas.DataFrame
            One row per model (plus a ``calibration p`` column when the tests ran).
        """
        return _render.formatted_table(self, digits, intervals)

    def to_frame(self):
        """The results as a tidy DataFrame: one row per (model, metric).

        Returns
        -------
        pandas.DataFrame
            Columns ``model``, ``metric``, ``value``, ``low``, ``high``, ``rank``, ``p_best``
            and, when the calibration tests ran, ``calibration_pvalue`` (per model).

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.report import CalibrationReport
        >>> rng = np.random.RandomState(0)
        >>> p = rng.uniform(size=200)
        >>> y = (rng.uniform(size=200) < p).astype(int)
        >>> report = CalibrationReport.from_predictions(y, {"a": p}, metrics=["brier"], n_bootstrap=0,
        ...                                             test_calibration=False)
        >>> report.to_frame().columns.tolist()
        ['model', 'metric', 'value', 'low', 'high', 'rank', 'p_best']
        """
        rows = []
        for model in self.model_names:
            for name in self.metric_names:
                t = self.table.loc[model, name]
                rows.append(
                    {
                        "model": model,
                        "metric": name,
                        **{f: t[f] for f in ("value", "low", "high")},
                        "rank": int(t["rank"]),
                        "p_best": t["p_best"],
                    }
                )
        frame = pd.DataFrame(rows, columns=["model", "metric", "value", "low", "high", "rank", "p_best"])
        if self.calibration_tests is not None:
            frame["calibration_pvalue"] = frame["model"].map(self.calibration_tests["pvalue"]).astype(float)
        return frame

    @validate_params(
        {"digits": DIGITS, "intervals": BOOLEAN},
        prefer_skip_nested_validation=True,
    )
    def to_text(self, *, digits=4, intervals=False):
        """The verdict and the table as plain text (as printed by the command line).

        Parameters
        ----------
        digits : int, default=4
            Significant digits.
        intervals : bool, default=False
            Include the intervals.

        Returns
        -------
        str
            The text.
        """
        return _render.to_text(self, digits, intervals)

    @validate_params(
        {"digits": DIGITS},
        prefer_skip_nested_validation=True,
    )
    def to_markdown(self, *, digits=4):
        """The report as Markdown: title, verdict, notes, the table and its legend.

        User text (model names, title, notes) is escaped: HTML becomes entities and Markdown's
        table and emphasis characters are backslash-escaped.

        Parameters
        ----------
        digits : int, default=4
            Significant digits.

        Returns
        -------
        str
            The Markdown text.
        """
        return _render.to_markdown(self, digits)

    def to_dict(self):
        """The report as plain JSON types (the document :meth:`to_json` writes).

        Returns
        -------
        dict
            Keys ``schema`` (``"skcal.report/1"``), ``kind``, ``title``, ``n_samples``,
            ``n_bootstrap``, ``confidence_level``, ``interval_method``, ``models``,
            ``metrics``, ``results`` (one entry per model and metric), ``calibration_tests``,
            ``verdict`` and ``notes``; missing numbers are ``None``. The JSON Schema is
            ``skcal.report.JSON_SCHEMA``.
        """
        return _render.report_to_dict(self)

    @validate_params(
        {"path": OUTPUT_PATH, "indent": JSON_INDENT},
        prefer_skip_nested_validation=True,
    )
    def to_json(self, path=None, *, indent=2):
        """The report as a JSON document (see :meth:`to_dict`).

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write it (UTF-8); nothing is written when None.
        indent : int, default=2
            Indentation.

        Returns
        -------
        pathlib.Path or str
            The path written to, or the JSON text when ``path`` is None.
        """
        text = _render.to_json([self], indent=indent)
        return text if path is None else _render.write_text(text, path)

    # -- figures ---------------------------------------------------------------------------
    @property
    def figures(self):
        """Figure title -> matplotlib Figure (built on first access; empty without matplotlib)."""
        if self._figures is None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self._figures = {}
            else:
                figs = self.kind.figures(self)
                for title, fig in self._extra_figures:
                    figs[title] = fig() if callable(fig) else fig
                self._figures = figs
        return self._figures

    @property
    def figure_explanations(self):
        """Figure title -> a paragraph saying in words what it shows (the HTML captions)."""
        words = self.kind.figure_explanations(self)
        words.update(self._extra_words)
        return words

    @validate_params(
        {"title": [str], "figure": [callable, HasMethods(["savefig"])], "caption": [str]},
        prefer_skip_nested_validation=True,
    )
    def add_figure(self, title, figure, *, caption=""):
        """Add a figure to the report (shown after the built-in ones).

        Parameters
        ----------
        title : str
            Title (escaped in the HTML).
        figure : matplotlib Figure or callable
            The figure, or a picklable function of no arguments that makes it (called only
            when the figures are first needed, so a report can be built without matplotlib).
        caption : str, default=""
            What the figure shows, in words.

        Returns
        -------
        CalibrationReport
            The report.
        """
        if title in {t for t, _ in self._extra_figures}:
            raise ValueError(f"a figure titled {title!r} was already added.")
        self._extra_figures.append((str(title), figure))
        self._extra_words[str(title)] = str(caption)
        if self._figures is not None:
            self._figures[str(title)] = figure() if callable(figure) else figure
        return self

    # -- HTML ------------------------------------------------------------------------------
    @validate_params(
        {"path": OUTPUT_PATH, "digits": DIGITS},
        prefer_skip_nested_validation=True,
    )
    def to_html(self, path=None, *, digits=4):
        """One self-contained HTML page: verdict, table, legend, notes and every figure as a PNG.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the page (UTF-8). Nothing is written when ``None``.
        digits : int, default=4
            Significant digits.

        Returns
        -------
        pathlib.Path or str
            The path written to when ``path`` is given; the HTML text when it is None.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.report import CalibrationReport
        >>> rng = np.random.RandomState(0)
        >>> p = rng.uniform(size=100)
        >>> y = (rng.uniform(size=100) < p).astype(int)
        >>> report = CalibrationReport.from_predictions(y, {"honest": p}, metrics=["brier"],
        ...                                             n_bootstrap=0, test_calibration=False)
        >>> import pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
        >>> report.to_html(out) == out  # writes the file, returns its path
        True
        >>> report.to_html()[:15]  # no path: the page as a string
        '<!DOCTYPE html>'
        """
        return render_html([self], path=path, title=self.title, digits=digits)


@validate_params(
    {
        "reports": [list, tuple],
        "path": OUTPUT_PATH,
        "title": [str],
        "intro": [list, tuple],
        "digits": DIGITS,
    },
    prefer_skip_nested_validation=True,
)
def render_html(reports, *, path=None, title="Calibration report", intro=(), digits=4):
    """Render one or more reports as one self-contained HTML page.

    Parameters
    ----------
    reports : list of CalibrationReport
        The reports, one section each.
    path : str or path-like, default=None
        Where to write the page (UTF-8); nothing is written when ``None``.
    title : str, default="Calibration report"
        Title of the page.
    intro : sequence of str, default=()
        Paragraphs shown under the title.
    digits : int, default=4
        Significant digits.

    Returns
    -------
    pathlib.Path or str
        The path written to when ``path`` is given, else the HTML text.
    """
    text = _render.render_page(reports, title=title, intro=intro, digits=digits)
    return text if path is None else _render.write_text(text, path)


@validate_params(
    {
        "reports": [list, tuple],
        "path": "no_validation",
        "indent": [StrictInterval(Integral, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def render_json(reports, *, path=None, indent=2):
    """Write one or more reports as JSON: one report's :meth:`~CalibrationReport.to_dict`, or a list of them.

    Parameters
    ----------
    reports : list of CalibrationReport
        The reports.
    path : str or path-like, default=None
        Where to write the document (UTF-8); nothing is written when ``None``.
    indent : int or None, default=2
        Indentation (``None``: one line).

    Returns
    -------
    pathlib.Path or str
        The path written to when ``path`` is given, else the JSON text.
    """
    text = _render.to_json(reports, indent=indent)
    return text if path is None else _render.write_text(text, path)


@fill(**REPORT_DOCS)
@validate_params(
    {
        "estimators": [dict, list, tuple],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        **COMMON_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
def calibration_report(
    estimators,
    X,
    y,
    *,
    metrics=None,
    n_bootstrap=200,
    confidence_level=0.9,
    interval_method="bc-percentile",
    n_bins=10,
    strategy="uniform",
    test_calibration=True,
    n_resamples=1000,
    n_jobs=None,
    random_state=None,
    title=None,
    notes=(),
    verbose=0,
    max_seconds=None,
    primary=None,
):
    """Compare the calibration of several fitted models on the same validation data.

    The kind of report follows from the data. **First order**: ``y`` holds one binary label per
    row and every model's ``predict_proba`` gives the positive-class probability (default metrics
    SCDL with its selected grid ``m*``, smECE, the Lipschitz smCE, the cutoff error, the 11-bin
    ECE, accuracy, Brier and log loss).
    **Multiclass**: ``y`` holds one of ``k > 2`` classes and ``predict_proba`` is an ``(n, k)``
    matrix (default metrics the truthful ConfCE-corr and classwise LinCE, the top-label ECE,
    accuracy, Brier and log loss). **Second order**: ``y`` is an ``(n, k)`` array of snapshots
    (``k >= 2`` independent labels per row, NaN for a missing vote) and every model outputs
    ``(m, sigma2)`` through ``transform`` (or ``predict``) (default metrics CE2, SCDL and Brier of
    ``m`` against every vote, a proper loss for the second moment and the bias of the stated
    variance).

    Parameters
    ----------
    estimators : dict or list
        Fitted models: a dict name -> model, a list of ``(name, model)`` pairs or a list of
        models (named after their class, or after the last step of a pipeline).
    X : array-like
        Validation inputs, passed to every model.
    y : array-like of shape (n,) or (n, k)
        Binary labels, class labels or snapshots (see above).
    metrics : list of str or dict, default=None
        Metric names, or a dict name -> callable (``callable(y, prediction) -> float``, lower is
        better) or name -> ``(callable, greater_is_better)``. First-order names: ``"scdl"``,
        ``"smooth_ece"``, ``"smooth_calibration_error"`` (the Lipschitz smCE), ``"cutoff"``,
        ``"binned_ece"``, ``"accuracy"``, ``"brier"``, ``"log_loss"``, ``"roc_auc"``. A
        second-order report adds ``"ce2"``, ``"second_moment_mse"`` and ``"variance_bias"`` (the
        first-order names there score ``m`` against every vote; callables receive the snapshots
        and the ``(n, 2)`` scores). A multiclass report offers ``"truthful_conf_ce"``,
        ``"classwise_lince"``, ``"conf_ece"``, ``"accuracy"``, ``"brier"``, ``"log_loss"`` and,
        not a default, ``"smooth_calibration_error"`` of the top-label confidence (callables
        receive class codes ``0..k-1`` and the ``(n, k)`` matrix). ``None`` means the kind's defaults.
        Callables receive their own copies of the arrays (the other metrics, the tests and the
        figures read the report's), so one that writes into them changes nothing else.
    {resampling}
    {n_jobs}
    {random_state}
    {outputs}
    {max_seconds}
    {primary}

    {returns}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skcal.report import calibration_report
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
    t0 = time.perf_counter()
    models = _as_named_models(estimators)
    if verbose:
        print(f"[skcal] predicting with {len(models)} models", file=sys.stderr, flush=True)
    predictions, extra = kind_for_target(y).collect(models, X)
    settings = ReportSettings(
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        interval_method=interval_method,
        n_bins=n_bins,
        strategy=strategy,
        test_calibration=test_calibration,
        n_resamples=n_resamples,
        n_jobs=n_jobs,
        random_state=random_state,
        max_seconds=max_seconds,
        primary=primary,
    )
    return CalibrationReport._compute(
        y,
        predictions,
        metrics,
        settings,
        title=title,
        notes=notes,
        verbose=verbose,
        estimators=models,
        t0=t0,
        pos_label=extra.get("pos_label"),
        labels=extra.get("labels"),
    )
