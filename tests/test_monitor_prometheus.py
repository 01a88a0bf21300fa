"""``render_prometheus``: the status in the Prometheus text exposition format, read back by parsers.

Two readers check the text: a strict parser of the format written here from its specification
(https://prometheus.io/docs/instrumenting/exposition_formats/, text format 0.0.4: ``# HELP``
and ``# TYPE`` lines, one family's samples after its ``TYPE`` line and together, metric and label
names, escaped label values, Go float values, a final newline), and ``prometheus_client``'s own
parser when it is installed.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest

from skcal.monitor import CalibrationMonitor, render_prometheus

METRIC = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r"(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)"
LABEL_VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(
    rf"^(?P<name>{METRIC})(?:\{{(?P<labels>(?:{LABEL}={LABEL_VALUE})(?:,{LABEL}={LABEL_VALUE})*,?)?\}})? "
    rf"(?P<value>{VALUE})(?: (?P<ts>-?\d+))?$"
)
HELP = re.compile(rf"^# HELP (?P<name>{METRIC}) (?P<text>(?:[^\\\n]|\\\\|\\n)*)$")
TYPE = re.compile(rf"^# TYPE (?P<name>{METRIC}) (?P<type>counter|gauge|histogram|summary|untyped)$")


def _unescape(v):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], v)


def parse_strict(text):
    """``{name: {"help", "type", "samples": [(labels, value)]}}``, or an ``AssertionError`` saying why not."""
    assert text.endswith("\n"), "the text must end with a newline"
    families, current, seen_samples = {}, None, set()
    for n, line in enumerate(text[:-1].split("\n"), 1):
        if line.startswith("# HELP "):
            m = HELP.match(line)
            assert m, f"line {n}: malformed HELP: {line!r}"
            fam = families.setdefault(m["name"], {"samples": []})
            assert "help" not in fam, f"line {n}: a second HELP for {m['name']}"
            fam["help"] = _unescape(m["text"])
            current = m["name"]
        elif line.startswith("# TYPE "):
            m = TYPE.match(line)
            assert m, f"line {n}: malformed TYPE: {line!r}"
            fam = families.setdefault(m["name"], {"samples": []})
            assert "type" not in fam and not fam["samples"], f"line {n}: TYPE after samples or twice"
            fam["type"] = m["type"]
            current = m["name"]
        elif line.startswith("#"):
            continue  # a comment
        else:
            assert line.strip(), f"line {n}: an empty line"
            m = SAMPLE.match(line)
            assert m, f"line {n}: malformed sample: {line!r}"
            name = m["name"]
            assert name == current, f"line {n}: sample {name} outside its family {current}"
            assert name not in seen_samples or families[name]["samples"], f"line {n}: family {name} split"
            labels = {}
            if m["labels"]:
                for k, v in re.findall(rf"({LABEL})=({LABEL_VALUE})", m["labels"]):
                    assert k not in labels, f"line {n}: label {k} twice"
                    labels[k] = _unescape(v[1:-1])
            value = m["value"]
            value = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}.get(value, None) or float(value)
            families.setdefault(name, {"samples": []})["samples"].append((labels, value))
            seen_samples.add(name)
    for name, fam in families.items():
        assert fam.get("type") and fam["samples"], f"{name}: a family needs a TYPE and samples"
    return families


def _monitor(shift=0.0, **kw):
    rng = np.random.default_rng(0)
    n = 30_000
    p = rng.uniform(size=n)
    q = np.where(np.arange(n) >= 15_000, np.clip(p + shift, 0, 1), p)
    t = pd.date_range("2024-05-01", periods=n, freq="min").to_numpy()
    return CalibrationMonitor(**kw).update(rng.uniform(size=n) < q, p, time=t)


def test_the_metrics_parse_and_hold_the_status():
    m = _monitor(shift=-0.1, tolerance=0.02, model_name='churn "v2"\\eu\nwest')
    text = render_prometheus(m, labels={"job": "nightly"})
    fam = parse_strict(text)
    st = m.status()
    want = {
        "skcal_monitor_calibration_error_lcb": st["calibration_error_lcb"],
        "skcal_monitor_tolerance": 0.02,
        "skcal_monitor_log10_evidence": st["log10_evidence"],
        "skcal_monitor_log10_threshold": st["log10_threshold"],
        "skcal_monitor_alarm": 1.0,
        "skcal_monitor_pvalue": st["pvalue"],
        "skcal_monitor_rows_seen": 30_000,
        "skcal_monitor_segment": 0,
        "skcal_monitor_last_time_seconds": pd.Timestamp("2024-05-01").value / 1e9 + 29_999 * 60,
        "skcal_monitor_alarm_time_seconds": pd.Timestamp(st["alarm_time"]).value / 1e9,
    }
    assert set(fam) == set(want)
    for name, value in want.items():
        assert fam[name]["type"] == "gauge" and fam[name]["help"]
        ((labels, got),) = fam[name]["samples"]
        assert labels == {"model": 'churn "v2"\\eu\nwest', "job": "nightly"}
        assert got == pytest.approx(value, rel=1e-12), name
    assert st["calibration_error_lcb"] > 0.02


def test_prometheus_client_reads_it_too():
    parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is not installed")
    m = _monitor(tolerance=0.01, model_name="p")
    families = {f.name: f for f in parser.text_string_to_metric_families(render_prometheus(m))}
    assert families["skcal_monitor_alarm"].samples[0].value == 0.0
    assert families["skcal_monitor_rows_seen"].samples[0].labels == {"model": "p"}
    assert families["skcal_monitor_calibration_error_lcb"].type == "gauge"
    assert "skcal_monitor_alarm_time_seconds" not in families  # no alarm, no alarm time


def test_infinities_nan_and_no_labels():
    rng = np.random.default_rng(1)
    p = np.full(5_000, 0.95)
    m = CalibrationMonitor(mode="detect").update(rng.uniform(size=5_000) < 0.05, p)
    text = render_prometheus(m, prefix="calib")
    fam = parse_strict(text)
    assert "calib_last_time_seconds" not in fam  # no datetimes
    assert fam["calib_pvalue"]["samples"] == [({}, 0.0)]
    assert fam["calib_log10_evidence"]["samples"][0][1] > 100
    fresh = CalibrationMonitor(mode="detect").update(rng.uniform(size=100) < 0.5, np.full(100, 0.5))
    assert "calib_log10_evidence -Inf" in render_prometheus(fresh, prefix="calib")  # M_0 = 0
    parse_strict(render_prometheus(fresh, prefix="calib"))


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"prefix": "9bad"}, "prefix"),
        ({"labels": {"bad-name": "x"}}, "label names"),
        ({"labels": {"__reserved": "x"}}, "label names"),
    ],
)
def test_bad_names_are_an_error(bad, match):
    with pytest.raises(ValueError, match=match):
        render_prometheus(_monitor(), **bad)


def test_the_strict_parser_rejects_what_the_format_forbids():
    for text in (
        "# TYPE a gauge\na 1",  # no final newline
        "# TYPE a gauge\na{x=1} 1\n",  # unquoted label value
        "# TYPE a gauge\na 1\n# TYPE b gauge\na 2\n",  # a family split
        "a 1\n",  # no TYPE
        "# TYPE a gauge\na one\n",  # not a float
    ):
        with pytest.raises(AssertionError):
            parse_strict(text)
