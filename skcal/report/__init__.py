"""Model-selection reports: several models, one validation set, every calibration measure.

:func:`calibration_report` evaluates fitted models on the same validation data and returns a
:class:`CalibrationReport`: a verdict in plain words, a pandas table with each metric's value,
a paired-bootstrap interval, the models' rank and ``P(best)``, a calibration-test p-value per
model, the figures, and writers for a self-contained HTML page, Markdown and JSON.

The package is organised by concept:

* ``_kinds``: one class per report kind (first-order, second-order, multiclass) owning its
  data, validation, metrics, legend, figures and advice; nothing else branches on the kind;
* ``_metrics``: the metric record and the measures (proper scores from :mod:`sklearn.metrics`);
* ``_bootstrap``: the paired bootstrap, the intervals, the ranks and ``p_best``;
* ``_pvalues``: the per-model calibration test behind one function;
* ``_verdict``: the plain-words summary;
* ``_render``: text, Markdown, JSON and HTML;
* ``_figures``: the figures, which read only the report's public attributes;
* ``_report``: :class:`CalibrationReport` and :func:`calibration_report`.
"""

from skcal.report._bootstrap import INTERVAL_METHODS
from skcal.report._outofcore import report_from_batches
from skcal.report._render import JSON_SCHEMA
from skcal.report._report import CalibrationReport, calibration_report, render_html, render_json

__all__ = [
    "CalibrationReport",
    "INTERVAL_METHODS",
    "JSON_SCHEMA",
    "calibration_report",
    "render_html",
    "render_json",
    "report_from_batches",
]
