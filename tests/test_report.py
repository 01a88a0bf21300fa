"""calibration_report / CalibrationReport: values, intervals, ranks, HTML, Markdown, the demo."""

import base64
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import (
    CalibrationReport,
    binned_ece,
    calibration_report,
    ce2_score,
    cutoff_calibration_error,
    scdl_score,
    smooth_ece,
)
from skcal._demo import run_demo
from skcal.report import render_html

FIELDS = ["value", "low", "high", "rank", "p_best"]


def _binary_predictions(n=400, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    return y, {
        "honest": p,
        "overconfident": np.clip(1.8 * p - 0.4, 0.001, 0.999),
        "constant": np.full(n, 0.5),
    }


class _Page(HTMLParser):
    """Collects the images, table cells and text of an HTML page."""

    def __init__(self):
        super().__init__()
        self.images, self.cells, self.text, self.stack = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        self.text.append(data)
        if self.stack and self.stack[-1] in ("td", "th"):
            self.cells.append(data)


def _parse(text):
    page = _Page()
    page.feed(text)
    page.close()
    return page


# ----------------------------------------------------------------------------------------------
# values, intervals, ranks
# ----------------------------------------------------------------------------------------------
def test_first_order_values_equal_the_metrics():
    y, preds = _binary_predictions()
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=0)
    assert rep.metric_names == ["scdl", "smooth_ece", "cutoff", "binned_ece", "accuracy", "brier", "log_loss"]
    t = rep.table
    assert list(t.index) == list(preds)
    assert list(t.columns.get_level_values(0).unique()) == rep.metric_names
    assert list(t["scdl"].columns) == FIELDS
    for name, p in preds.items():
        assert t.loc[name, ("scdl", "value")] == pytest.approx(scdl_score(y, p))
        assert t.loc[name, ("smooth_ece", "value")] == pytest.approx(smooth_ece(y, p))
        assert t.loc[name, ("cutoff", "value")] == pytest.approx(cutoff_calibration_error(y, p))
        assert t.loc[name, ("binned_ece", "value")] == pytest.approx(binned_ece(y, p, n_bins=11))
        assert t.loc[name, ("brier", "value")] == pytest.approx(np.mean((p - y) ** 2))
        assert t.loc[name, ("log_loss", "value")] == pytest.approx(log_loss(y, p))
        assert t.loc[name, ("accuracy", "value")] == pytest.approx(np.mean((p >= 0.5) == y))
    assert np.isnan(t[("brier", "low")]).all()  # no bootstrap, no interval
    assert "No intervals" in rep._legend_lines()[0] and "replicates" not in rep.to_markdown()


def test_ranks_follow_values_and_direction():
    y, preds = _binary_predictions()
    preds["honest copy"] = preds["honest"].copy()
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier", "accuracy"], n_bootstrap=0)
    brier = rep.table["brier"]
    assert brier.loc["honest", "rank"] == brier.loc["honest copy", "rank"] == 1  # ties share
    assert brier.loc["constant", "rank"] > 1
    order = brier["value"].sort_values(kind="stable")
    assert list(brier.loc[order.index, "rank"]) == sorted(brier["rank"])
    acc = rep.table["accuracy"]  # greater is better
    assert acc.loc[acc["value"].idxmax(), "rank"] == 1
    assert acc.loc["constant", "rank"] == acc["rank"].max()


def test_values_equal_up_to_float_noise_are_tied():
    # 0.1 + 0.2 == 0.30000000000000004 != 0.3: equal up to floating-point noise, so tied (rank and
    # p_best compare values rounded to RANK_SIGNIFICANT_DIGITS = 10 significant digits)
    y, _ = _binary_predictions(n=50)
    preds = {"a": np.full(50, 0.25), "b": np.full(50, 0.75), "c": np.full(50, 0.5)}
    noisy = {"noisy": lambda y, p: (0.1 + 0.2) if p[0] < 0.4 else (0.3 if p[0] > 0.6 else 0.3 + 1e-8)}
    rep = CalibrationReport.from_predictions(y, preds, metrics=noisy, n_bootstrap=10, random_state=0)
    t = rep.table["noisy"]
    assert t.loc["a", "value"] != t.loc["b", "value"]
    assert t["rank"].to_dict() == {"a": 1, "b": 1, "c": 3}  # the Brier tie rule: ties share the lower rank
    assert t["p_best"].to_dict() == {"a": 1.0, "b": 1.0, "c": 0.0}


def test_bootstrap_intervals_pbest_and_reproducibility():
    y, preds = _binary_predictions()
    kw = {"metrics": ["brier", "log_loss"], "n_bootstrap": 40, "random_state": 7}
    a = CalibrationReport.from_predictions(y, preds, **kw)
    with parallel_config(backend="threading"):  # workers without process start-up cost
        b = CalibrationReport.from_predictions(y, preds, n_jobs=2, **kw)
    np.testing.assert_array_equal(a.bootstrap_values, b.bootstrap_values)  # independent of n_jobs
    assert a.bootstrap_values.shape == (40, 3, 2)
    t = a.table["brier"]
    assert (t["low"] <= t["high"]).all()
    assert t.loc["honest", "low"] <= t.loc["honest", "value"] <= t.loc["honest", "high"]
    assert t["p_best"].between(0, 1).all()
    assert t.loc["honest", "p_best"] > 0.9  # the honest model is clearly best here
    # the interval is the percentile of the replicate values
    np.testing.assert_allclose(t["low"], np.quantile(a.bootstrap_values[:, :, 0], 0.05, axis=0))
    c = CalibrationReport.from_predictions(y, preds, metrics=["brier"], n_bootstrap=40, random_state=8)
    assert not np.array_equal(c.bootstrap_values[:, :, 0], a.bootstrap_values[:, :, 0])


def test_metric_that_is_nan_on_every_replicate():
    y, preds = _binary_predictions(n=60)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics={"nan": lambda yy, p: float("nan"), "brier": "brier"}, n_bootstrap=5, random_state=0
    )
    assert np.isnan(rep.table["nan"]["low"]).all() and (rep.table["nan"]["rank"] == 1).all()
    assert "nan" in rep.to_markdown()


def test_custom_metrics_and_roc_auc():
    y, preds = _binary_predictions()
    rep = CalibrationReport.from_predictions(
        y,
        preds,
        metrics={
            "mean_p": lambda yy, p: float(np.mean(p)),
            "hits": (lambda yy, p: float(np.mean((p > 0.5) == yy)), True),
            "auc": "roc_auc",
        },
        n_bootstrap=5,
        random_state=0,
    )
    assert rep.metric_names == ["mean_p", "hits", "auc"]
    assert rep.table.loc["honest", ("mean_p", "value")] == pytest.approx(np.mean(preds["honest"]))
    assert rep.greater_is_better == {"mean_p": False, "hits": True, "auc": True}
    assert rep.metric_labels["auc"] == "ROC AUC"


def test_calibration_report_from_estimators_and_progress(capsys):
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.4, random_state=0)
    models = [
        GaussianNB().fit(X_tr, y_tr),
        DummyClassifier(strategy="prior").fit(X_tr, y_tr),
        ("lr", make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)),
    ]
    rep = calibration_report(models, X_te, y_te, n_bootstrap=10, random_state=0, verbose=1)
    assert rep.model_names == ["GaussianNB", "DummyClassifier", "lr"]
    np.testing.assert_allclose(rep.predictions["GaussianNB"], models[0].predict_proba(X_te)[:, 1])
    assert rep.table.loc["DummyClassifier", ("accuracy", "rank")] == 3
    err = capsys.readouterr().err
    assert "[skcal] bootstrap: 10/10 replicates" in err and "predicting with 'lr'" in err


def test_string_labels_use_the_estimators_positive_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] + rng.normal(size=300) > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    rep = calibration_report({"lr": clf}, X, y, metrics=["brier"], n_bootstrap=0)
    p = clf.predict_proba(X)[:, 1]
    assert rep.table.loc["lr", ("brier", "value")] == pytest.approx(np.mean((p - (y == "yes")) ** 2))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda y, P: CalibrationReport.from_predictions(y, P, metrics=["nope"]), "unknown metric 'nope'"),
        (lambda y, P: CalibrationReport.from_predictions(y, {}), "predictions is empty"),
        (lambda y, P: CalibrationReport.from_predictions(y, P, n_bootstrap=-1), "n_bootstrap"),
        (lambda y, P: CalibrationReport.from_predictions(y, P, confidence_level=1.0), "confidence_level"),
        (lambda y, P: CalibrationReport.from_predictions(y, {"a": P["honest"][:-1]}), "Inconsistent"),
        (lambda y, P: CalibrationReport.from_predictions(y, {"a": P["honest"] + 1}), r"predictions\['a'\]"),
        (lambda y, P: CalibrationReport.from_predictions(y, [("a", 1), ("a", 2)]), "duplicate model names"),
        (lambda y, P: CalibrationReport.from_predictions(y, P, metrics={"x": 3}), "callable"),
        (lambda y, P: CalibrationReport.from_predictions(y, "abc"), "dict name -> model"),
    ],
)
def test_errors(call, match):
    y, preds = _binary_predictions(n=50)
    with pytest.raises(ValueError, match=match):
        call(y, preds)


def test_estimator_errors():
    X = np.random.default_rng(0).normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    y3 = np.arange(60) % 3
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ValueError, match="has no predict_proba.*use CalibrationReport.from_predictions"):
        calibration_report({"r": LinearRegression().fit(X, y)}, X, y)
    probs = GaussianNB().fit(X, y).predict_proba(X)
    for stored in (probs, probs[:, 1].tolist()):  # predictions passed where models are expected
        with pytest.raises(
            ValueError, match=r"estimators\['a'\] is a (ndarray|list) of predictions, not a model"
        ):
            calibration_report({"a": stored}, X, y)
    with pytest.raises(ValueError, match="for stored predictions use CalibrationReport.from_predictions"):
        calibration_report({"a": probs}, X, np.column_stack([y, y]))  # second order too
    assert calibration_report({"m": GaussianNB().fit(X, y3)}, X, y3, n_bootstrap=0).order == "multiclass"
    a = GaussianNB().fit(X, y)
    b = GaussianNB().fit(X, np.where(y == 1, 5, 0))
    with pytest.raises(ValueError, match="same labels"):
        calibration_report({"a": a, "b": b}, X, y)


# ----------------------------------------------------------------------------------------------
# second order
# ----------------------------------------------------------------------------------------------
def _second_order(n=800, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.05, 0.95, n)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    Y[::7, 1] = np.nan  # missing votes are allowed ...
    Y = np.column_stack([Y, (rng.uniform(size=n) < f).astype(float)])  # ... with a third vote
    m_noisy = np.clip(f + rng.normal(0, 0.15, n), 0, 1)
    s2_true = np.mean((f - m_noisy) ** 2)  # the simulation knows the mean squared error of m
    preds = {
        "calibrated variance": np.column_stack([m_noisy, np.full(n, s2_true)]),
        "no variance": np.column_stack([m_noisy, np.zeros(n)]),
    }
    return Y, preds


def test_second_order_report_values():
    Y, preds = _second_order()
    rep = CalibrationReport.from_predictions(Y, preds, n_bootstrap=8, random_state=0)
    assert rep.order == "second"
    assert rep.metric_names == ["ce2", "scdl", "brier", "second_moment_mse", "variance_bias"]
    obs = ~np.isnan(Y)
    a, c = np.nansum(Y, axis=1), obs.sum(axis=1)
    t1, t2 = a / c, a * (a - 1) / (c * (c - 1))
    for name, S in preds.items():
        m, s2 = S[:, 0], S[:, 1]
        row = rep.table.loc[name]
        params = rep.metric_params[name]["ce2"]
        assert row[("ce2", "value")] == pytest.approx(ce2_score(Y, S, bandwidth=2**-6, **params))
        votes_m = np.repeat(m[:, None], Y.shape[1], axis=1)[obs]
        assert row[("brier", "value")] == pytest.approx(np.mean((votes_m - Y[obs]) ** 2))
        assert row[("scdl", "value")] == pytest.approx(scdl_score(Y[obs], votes_m))
        assert row[("second_moment_mse", "value")] == pytest.approx(np.mean((m**2 + s2 - t2) ** 2))
        err = t2 - 2 * m * t1 + m**2
        assert row[("variance_bias", "value")] == pytest.approx(np.mean(s2) - np.mean(err))
    # sigma2 = the true mean squared error of m: its variance bias is near 0 and ranks first
    vb = rep.table["variance_bias"]
    assert abs(vb.loc["calibrated variance", "value"]) < 0.01
    assert vb.loc["no variance", "value"] < -0.01
    assert vb.loc["calibrated variance", "rank"] == 1
    # the SCDL floor counts votes, not rows, and says so (the first line counts rows)
    legend = rep._legend_lines()
    assert legend[0].startswith(f"{Y.shape[0]} validation samples")
    n_votes = int(obs.sum())
    assert any(f"with {n_votes} votes (SCDL of m against every vote)" in line for line in legend)
    assert not any(f"with {n_votes} samples" in line for line in legend)


def test_interval_figure_labels_abs_ranked_metric_closer_to_zero():
    Y, preds = _second_order(n=200)
    rep = CalibrationReport.from_predictions(
        Y, preds, metrics=["brier", "variance_bias"], n_bootstrap=5, random_state=0
    )
    axes = [ax for ax in rep.figures["Metric intervals"].axes if ax.get_visible()]
    titles = [ax.get_title() for ax in axes]
    assert titles[0].endswith("(lower is better)")
    assert titles[1].endswith("(closer to 0 is better)") and "lower is better" not in titles[1]
    zero_lines = [
        ln for ax in axes for ln in ax.get_lines() if np.allclose(ln.get_xdata(), 0) and len(ln.get_xdata())
    ]
    assert len(zero_lines) == 1 and zero_lines[0].axes is axes[1]  # a reference line only for |value|


def test_second_order_input_errors():
    Y, preds = _second_order(n=40)
    with pytest.raises(ValueError, match="one column"):
        CalibrationReport.from_predictions(Y, {"m only": preds["no variance"][:, :1]})
    with pytest.raises(ValueError, match="expected 40"):
        CalibrationReport.from_predictions(Y, {"short": preds["no variance"][:-1]})
    with pytest.raises(ValueError, match="sigma2"):
        CalibrationReport.from_predictions(Y, {"bad": preds["no variance"] + [0, 0.3]})
    with pytest.raises(ValueError, match="transform nor predict"):
        calibration_report({"x": object()}, np.zeros((40, 1)), Y)


# ----------------------------------------------------------------------------------------------
# writers
# ----------------------------------------------------------------------------------------------
def test_markdown_is_a_valid_table_and_escapes_pipes():
    y, preds = _binary_predictions(n=100)
    preds = {"a|b": preds["honest"], "plain": preds["constant"]}
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["brier", "log_loss"], n_bootstrap=10, random_state=0, notes=["data: x"]
    )
    md = rep.to_markdown()
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert rows[0] == "| model | Brier | log loss |"
    assert rows[1] == "|---|---:|---:|"
    assert len(rows) == 4 and rows[2].startswith("| a\\|b | ")
    assert all(len(re.split(r"(?<!\\)\|", r)) == 5 for r in rows)  # 3 cells per row, pipes escaped
    assert "data: x" in md and "#1" in rows[2]


@pytest.mark.filterwarnings("error:constrained_layout not applied")  # legends must fit the panels
def test_html_is_self_contained_escaped_and_embeds_every_figure(tmp_path):
    y, preds = _binary_predictions(n=200)
    preds = {"<script>alert(1)</script>": preds["honest"], "b & c": preds["constant"]}
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["brier", "scdl"], n_bootstrap=10, random_state=0
    )
    path = tmp_path / "r.html"
    returned = rep.to_html(path)
    assert returned == path  # the path, not 1 MB of HTML echoed in a notebook
    text = path.read_text(encoding="utf-8")
    assert rep.to_html(str(path)) == path  # a str path works too
    assert text.count("<h1>Calibration report</h1>") == 1 and "<h2>" not in text  # the title once
    again = rep.to_html()  # no path: the page as a string (PNG bytes may differ on re-render)
    assert again.startswith("<!DOCTYPE html>") and _parse(again).text == _parse(text).text
    assert "<script>" not in text and "&lt;script&gt;" in text and "b &amp; c" in text
    page = _parse(text)
    assert len(page.images) == len(rep.figures) == 2
    for img in page.images:
        assert img["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(img["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(rep.figures) == {img["alt"] for img in page.images}
    assert "<script>alert(1)</script>" in page.cells and "b & c" in page.cells
    assert not any(src in text for src in ("http://", "https://", 'src="/'))  # nothing external


def test_report_without_matplotlib(monkeypatch):
    y, preds = _binary_predictions(n=100)
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier"], n_bootstrap=0)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # "import matplotlib" now fails
    assert rep.figures == {}
    text = rep.to_html()
    assert "<img" not in text and "Figures omitted: matplotlib is not installed" in text


def test_add_figure_lazy_and_duplicate():
    y, preds = _binary_predictions(n=100)
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier"], n_bootstrap=0)
    calls = []

    def make():
        from matplotlib.figure import Figure

        calls.append(1)
        return Figure()

    rep.add_figure("extra", make)
    assert calls == []  # not built until needed
    assert "extra" in rep.figures and calls == [1]
    with pytest.raises(ValueError, match="already added"):
        rep.add_figure("extra", make)


# ----------------------------------------------------------------------------------------------
# the demo (one run shared by the tests below)
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo():
    reports, title, intro = run_demo(n_bootstrap=10, random_state=0)
    return reports, render_html(reports, title=title, intro=intro)


def test_demo_tables_columns_and_ranks(demo):
    (first, second, third), _ = demo
    assert first.order == "first" and second.order == "second" and third.order == "multiclass"
    assert third.model_names == ["logistic regression", "naive Bayes", "random forest"]
    assert first.model_names == [
        "logistic regression",
        "naive Bayes",
        "random forest",
        "SVM (Platt)",
        "bagged trees",
    ]
    for rep in (first, second, third):
        t = rep.table
        assert isinstance(t, pd.DataFrame)
        assert t.columns.names == ["metric", "field"]
        assert list(t.columns) == [(m, f) for m in rep.metric_names for f in FIELDS]
        assert np.isfinite(t.xs("value", axis=1, level="field").to_numpy()).all()
        for m in rep.metric_names:
            ranks = t[(m, "rank")]
            assert ranks.min() == 1 and ranks.max() <= len(rep.model_names)
            vals = t[(m, "value")].abs() if rep._metric_by_name[m].rank_by_abs else t[(m, "value")]
            best = vals.idxmax() if rep.greater_is_better[m] else vals.idxmin()
            assert ranks[best] == 1
    assert {"scdl", "smooth_ece", "cutoff", "binned_ece", "accuracy", "brier", "log_loss"} <= set(
        first.metric_names
    )
    # naive Bayes is overconfident on this data: worst log loss of the five
    assert first.table.loc["naive Bayes", ("log_loss", "rank")] == 5
    assert "ce2" in second.metric_names
    assert second.model_names == [
        "bagged trees (raw)",
        "bagged trees + first-order Platt",
        "bagged trees + second-order Platt",
    ]
    # first-order Platt sets sigma2' = 0
    assert (second.predictions["bagged trees + first-order Platt"][:, 1] == 0).all()
    # the raw bagged trees overstate their variance the most
    assert second.table.loc["bagged trees (raw)", ("variance_bias", "rank")] == 3


def test_demo_html_embeds_every_figure(demo):
    reports, text = demo
    page = _parse(text)
    n_figures = sum(len(r.figures) for r in reports)
    assert n_figures >= 6
    assert len(page.images) == n_figures
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.images)
    body = " ".join(page.text)
    assert "SIMULATED" in body  # the simulated second labels are disclosed


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")
def test_demo_html_renders_in_headless_chromium(demo, tmp_path):
    """Load the page in a real browser and check that every embedded image decodes."""
    _, text = demo
    probe = (
        "<script>window.addEventListener('load', function () {"
        "var im = Array.prototype.slice.call(document.images);"
        "document.title = 'IMAGES:' + im.length + ':' + im.filter(function (i) {"
        "return i.complete && i.naturalWidth > 100; }).length; });</script>"
    )
    path = tmp_path / "probe.html"
    path.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    cmd = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--virtual-time-budget=10000",
        "--dump-dom",
        path.as_uri(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    title = out.stdout.split("<title>", 1)[1].split("</title>", 1)[0]
    _, total, decoded = title.split(":")
    assert int(total) == int(decoded) >= 6


# ----------------------------------------------------------------------------------------------
# multiclass
# ----------------------------------------------------------------------------------------------
def test_multiclass_report_values_and_labels():
    from sklearn.datasets import load_wine

    from skcal import classwise_lince, conf_ece, truthful_conf_ce

    X, y = load_wine(return_X_y=True)
    names = np.array(["barolo", "grignolino", "barbera"])[y]  # string labels, sorted order differs
    X_tr, X_te, y_tr, y_te = train_test_split(X, names, test_size=0.5, random_state=0)
    models = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr),
        "naive Bayes": GaussianNB().fit(X_tr, y_tr),
    }
    rep = calibration_report(models, X_te, y_te, n_bootstrap=10, random_state=0)
    assert rep.order == "multiclass"
    assert rep.metric_names == [
        "truthful_conf_ce",
        "classwise_lince",
        "conf_ece",
        "accuracy",
        "brier",
        "log_loss",
    ]
    for name, model in models.items():
        P = model.predict_proba(X_te)
        np.testing.assert_allclose(rep.predictions[name], P)
        row = rep.table.loc[name]
        assert row[("truthful_conf_ce", "value")] == pytest.approx(
            truthful_conf_ce(y_te, P, labels=model.classes_)
        )
        assert row[("classwise_lince", "value")] == pytest.approx(
            classwise_lince(y_te, P, labels=model.classes_)
        )
        assert row[("conf_ece", "value")] == pytest.approx(conf_ece(y_te, P, labels=model.classes_))
        onehot = (y_te[:, None] == model.classes_[None, :]).astype(float)
        assert row[("brier", "value")] == pytest.approx(np.mean(np.sum((P - onehot) ** 2, axis=1)))
        assert row[("log_loss", "value")] == pytest.approx(log_loss(y_te, P, labels=model.classes_))
        acc = np.mean(model.classes_[P.argmax(axis=1)] == y_te)
        assert row[("accuracy", "value")] == pytest.approx(acc)
    assert len(rep.figures) == 2 and any("Top-label" in t for t in rep.figures)


def test_multiclass_top_label_diagram_axis_labels():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=150)
    y = np.array([rng.choice(3, p=p) for p in P])
    rep = CalibrationReport.from_predictions(y, {"honest": P}, metrics=["accuracy"], n_bootstrap=0)
    (title,) = [t for t in rep.figures if "Top-label" in t]
    ax = rep.figures[title].axes[0]
    assert ax.get_ylabel() == "accuracy of the top label"
    assert ax.get_xlabel().startswith("confidence")
    assert "positive class" not in ax.get_ylabel()


def test_multiclass_from_predictions_and_errors():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=90)
    y = np.array([rng.choice(3, p=p) for p in P])
    rep = CalibrationReport.from_predictions(
        y, {"honest": P, "uniform": np.full((90, 3), 1 / 3)}, n_bootstrap=0
    )
    assert rep.table.loc["honest", ("log_loss", "rank")] == 1
    with pytest.raises(ValueError, match="unknown metric 'scdl' for a multiclass report"):
        CalibrationReport.from_predictions(y, {"a": P}, metrics=["scdl"])
    with pytest.raises(ValueError, match="must sum to 1"):
        CalibrationReport.from_predictions(y, {"a": P * 0.5})
    with pytest.raises(ValueError, match="Inconsistent"):
        CalibrationReport.from_predictions(y[:-1], {"a": P})
    X = rng.normal(size=(90, 2))
    with pytest.raises(ValueError, match=r"has classes_ \[0, 1\], unlike the other models' \[0, 1, 2\]"):
        calibration_report(
            {"a": GaussianNB().fit(X, y), "b": GaussianNB().fit(X, y % 2)}, X, y, n_bootstrap=0
        )
