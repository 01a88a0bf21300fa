"""The monitor's status in the Prometheus text exposition format (version 0.0.4).

For the node exporter's textfile collector (write the text to ``*.prom`` in its folder,
atomically) or any scraper: one gauge per quantity, each with ``# HELP`` and ``# TYPE`` lines
before its samples, the model as the label ``model``, values in Go's float syntax (``NaN``,
``+Inf``, ``-Inf``), label values escaped (backslash, double quote, newline), a newline after
the last line. Existing Grafana and Alertmanager set-ups alert on it without new code, for
example ``skcal_monitor_alarm == 1`` or
``skcal_monitor_calibration_error_lcb > skcal_monitor_tolerance``.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from skcal._compat import HasMethods, validate_params

__all__ = ["render_prometheus", "METRIC_PREFIX"]

#: The prefix of every metric name.
METRIC_PREFIX = "skcal_monitor"

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _value(v):
    """A sample value in the exposition format's float syntax."""
    if v is None:
        return "NaN"
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def _escape_label(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n")


def _seconds(v):
    return None if v is None else pd.Timestamp(v).value / 1e9


@validate_params(
    {"monitor": [HasMethods(["status"])], "labels": [dict, None], "prefix": [str]},
    prefer_skip_nested_validation=True,
)
def render_prometheus(monitor, *, labels=None, prefix=METRIC_PREFIX):
    """The monitor's status in the Prometheus text exposition format.

    Parameters
    ----------
    monitor : CalibrationMonitor
        A monitor that has seen rows.
    labels : dict or None, default=None
        More labels for every sample (``{"job": "nightly"}``). The label ``model`` is the
        monitor's ``model_name`` (when it has one) unless given here.
    prefix : str, default="skcal_monitor"
        The prefix of the metric names.

    Returns
    -------
    str
        The text, ending with a newline: one gauge per quantity of :meth:`CalibrationMonitor.status`
        with its ``# HELP`` line (``calibration_error_lcb``, ``tolerance``, ``log10_evidence``,
        ``log10_threshold``, ``alarm``, ``pvalue``, ``rows_seen``, ``segment`` and, with datetime
        times, ``last_time_seconds`` and ``alarm_time_seconds`` in Unix seconds).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.monitor import CalibrationMonitor, render_prometheus
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5_000)
    >>> m = CalibrationMonitor(tolerance=0.02, model_name="churn").update(rng.uniform(size=5_000) < p, p)
    >>> print(render_prometheus(m).splitlines()[2])
    skcal_monitor_calibration_error_lcb{model="churn"} 0.0
    """
    if not _NAME.match(prefix):
        raise ValueError(
            f"prefix must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); got {prefix!r}."
        )
    st = monitor.status()
    all_labels = {}
    if st.get("model_name") is not None:
        all_labels["model"] = st["model_name"]
    for k, v in (labels or {}).items():
        if not isinstance(k, str) or not _LABEL.match(k) or k.startswith("__"):
            raise ValueError(
                f"labels has the key {k!r}; label names match [a-zA-Z_][a-zA-Z0-9_]* and do not start "
                "with '__'."
            )
        all_labels[k] = v
    label_text = ",".join(f'{k}="{_escape_label(v)}"' for k, v in all_labels.items())
    label_text = f"{{{label_text}}}" if label_text else ""
    kind = getattr(getattr(monitor, "_engine", None), "time_kind", None)
    metrics = [
        (
            "calibration_error_lcb",
            "Time-uniform lower confidence bound of the l1 calibration error E|E[y|p] - p| "
            "(level 1 - alpha, current segment).",
            st["calibration_error_lcb"],
        ),
        ("tolerance", "The calibration error the alarm tolerates.", st["tolerance"]),
        ("log10_evidence", "The alarm statistic (e-value or e-detector), log10.", st["log10_evidence"]),
        ("log10_threshold", "The alarm threshold of log10_evidence.", st["log10_threshold"]),
        ("alarm", "1 after an alarm in the current segment, else 0.", 1.0 if st["alarm"] else 0.0),
        ("pvalue", "Anytime-valid p-value of the tolerance test (current segment).", st["pvalue"]),
        ("rows_seen", "Rows seen.", st["rows"]),
        ("segment", "Index of the current monitoring segment.", st["segment"]),
    ]
    if kind == "datetime":
        metrics.append(
            (
                "last_time_seconds",
                "Time of the last row seen, Unix seconds.",
                _seconds(st.get("last_time")),
            )
        )
        if st.get("alarm_time") is not None:
            metrics.append(
                ("alarm_time_seconds", "Time of the alarm, Unix seconds.", _seconds(st["alarm_time"]))
            )
    lines = []
    for name, help_text, value in metrics:
        full = f"{prefix}_{name}"
        lines.append(f"# HELP {full} {_escape_help(help_text)}")
        lines.append(f"# TYPE {full} gauge")
        lines.append(f"{full}{label_text} {_value(value)}")
    return "\n".join(lines) + "\n"
