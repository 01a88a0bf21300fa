"""skcal.report: each report kind end to end, values, ranks, verdict, outputs, pickling."""

import json
import pickle
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_info

from skcal.binned_ece import binned_ece
from skcal.ce2 import ce2_score
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.report import JSON_SCHEMA, CalibrationReport, calibration_report, render_html
from skcal.report._kinds import KINDS
from skcal.scdl import scdl_curve, scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.truthful import classwise_lince, conf_ece, truthful_conf_ce
from skcal.votes import Snapshots

FIELDS = ["value", "low", "high", "rank", "p_best"]
FAST = {"n_bootstrap": 20, "n_resamples": 100, "random_state": 0}


def _binary(n=400, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    return y, {
        "honest": p,
        "overconfident": np.clip(1.8 * p - 0.4, 0.001, 0.999),
        "constant": np.full(n, 0.5),
    }


def _snapshots(n=300, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.05, 0.95, size=n)
    Y = Snapshots((rng.uniform(size=(n, 2)) < f[:, None]).astype(float))
    honest = np.column_stack([np.clip(f + rng.normal(0, 0.05, n), 0, 1), np.full(n, 0.0025)])
    shifted = np.column_stack([np.clip(f + 0.2, 0, 1), np.full(n, 0.0001)])
    return Y, {"honest": honest, "shifted": shifted}


def _multiclass(n=400, k=4, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 2
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in P])
    sharp = np.exp(3 * logits) / np.exp(3 * logits).sum(axis=1, keepdims=True)
    return y, {"honest": P, "overconfident": sharp}


# ----------------------------------------------------------------------------------------------
# first order: values from the defining functions and sklearn.metrics
# ----------------------------------------------------------------------------------------------
def test_first_order_values_equal_the_metrics():
    y, preds = _binary()
    rep = CalibrationReport.from_predictions(y, preds, **FAST)
    assert rep.order == "first-order"
    for name, p in preds.items():
        row = rep.table.loc[name]
        assert row[("scdl", "value")] == pytest.approx(scdl_score(y, p))
        assert row[("smooth_ece", "value")] == pytest.approx(smooth_ece(y, p))
        assert row[("cutoff", "value")] == pytest.approx(cutoff_calibration_error(y, p))
        assert row[("binned_ece", "value")] == pytest.approx(binned_ece(y, p, n_bins=11))
        assert row[("brier", "value")] == pytest.approx(brier_score_loss(y, p))
        assert row[("log_loss", "value")] == pytest.approx(log_loss(y, p))
        assert row[("accuracy", "value")] == pytest.approx(accuracy_score(y, p >= 0.5))
        assert row[("smooth_calibration_error", "value")] == pytest.approx(smooth_calibration_error(y, p))
        curve = scdl_curve(y, p)
        det = rep.metric_details["scdl"][name]
        assert det["m*"] == curve.selected_n_bins
        assert det["SCDL_m*"] == pytest.approx(curve.scdl_m[list(curve.n_bins).index(curve.selected_n_bins)])
        assert det["SCDL_m*"] == pytest.approx(curve.selected_scdl_m)
        assert det["at_floor"] is curve.at_floor
    assert list(rep.table.columns) == [(m, f) for m in rep.metric_names for f in FIELDS]
    assert rep.metric_labels["smooth_calibration_error"] == "smCE"
    assert "1-Lipschitz" in rep.metric_descriptions["smooth_calibration_error"]


def test_scdl_grid_floor_and_rule_shown_in_every_output():
    """m*, the unfloored SCDL_m* and at_floor reach the table text, the legend, Markdown and JSON."""
    rng = np.random.default_rng(1)
    n = 400
    p = rng.uniform(0.02, 0.98, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"honest": p, "constant": np.full(n, 0.5)}
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["scdl"], n_bootstrap=0, test_calibration=False
    )
    for name, pp in preds.items():
        curve = scdl_curve(y, pp)
        det = rep.metric_details["scdl"][name]
        assert (det["m*"], det["at_floor"]) == (curve.selected_n_bins, curve.at_floor)
        cell = rep.formatted_table().loc[name, "SCDL"]
        assert f"m*={curve.selected_n_bins}" in cell
        assert f"at_floor={'yes' if curve.at_floor else 'no'}" in cell
    assert {d["at_floor"] for d in rep.metric_details["scdl"].values()} == {True, False}
    legend = " ".join(rep.to_markdown().splitlines())
    assert "4 sqrt(n)" in legend and "at\\_floor=True means" in legend
    assert "m ln m" not in legend
    doc = rep.to_dict()
    det = next(r["details"] for r in doc["results"] if r["metric"] == "scdl" and r["model"] == "honest")
    assert set(det) == {"m*", "SCDL_m*", "at_floor"} and isinstance(det["at_floor"], bool)


def test_pointwise_bootstrap_equals_recomputing_the_metric():
    """Brier, log loss and accuracy replicates are weighted means of per-row losses: the same as
    recomputing them on each Poisson resample (row i repeated W[r, i] times)."""
    y, preds = _binary(n=150)
    rep = CalibrationReport.from_predictions(
        y,
        preds,
        metrics=["brier", "log_loss", "accuracy"],
        n_bootstrap=5,
        random_state=3,
        test_calibration=False,
    )
    from skcal.stats import poisson_weights

    W = poisson_weights(rep.results.bootstrap_seed, range(5), range(150))
    for r in range(5):
        idx = np.repeat(np.arange(150), W[r])  # the resample: row i counted W[r, i] times
        for i, p in enumerate(preds.values()):
            assert rep.bootstrap_values[r, i, 0] == pytest.approx(brier_score_loss(y[idx], p[idx]))
            assert rep.bootstrap_values[r, i, 1] == pytest.approx(log_loss(y[idx], p[idx], labels=[0, 1]))
            assert rep.bootstrap_values[r, i, 2] == pytest.approx(accuracy_score(y[idx], p[idx] >= 0.5))


def test_ranks_direction_ties_and_pbest():
    y, preds = _binary()
    preds["copy"] = preds["honest"] * (1 + 1e-15)
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier", "accuracy"], **FAST)
    assert rep.table.loc["honest", ("brier", "rank")] == rep.table.loc["copy", ("brier", "rank")] == 1
    assert rep.table.loc["constant", ("accuracy", "rank")] == 4
    pb = rep.table[("brier", "p_best")]
    assert pb["honest"] == pb["copy"] == 1.0 and pb["constant"] == 0.0


def test_bootstrap_reproducible_and_independent_of_n_jobs():
    y, preds = _binary(n=200)
    a = CalibrationReport.from_predictions(
        y, preds, metrics=["brier", "cutoff"], n_bootstrap=12, random_state=1
    )
    with parallel_config(backend="threading"):
        b = CalibrationReport.from_predictions(
            y, preds, metrics=["brier", "cutoff"], n_bootstrap=12, random_state=1, n_jobs=2
        )
    np.testing.assert_array_equal(a.bootstrap_values, b.bootstrap_values)
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.calibration_tests, b.calibration_tests)


@pytest.mark.parametrize(
    "make", [_binary, _multiclass, _snapshots], ids=["binary", "multiclass", "second_order"]
)
def test_threads_over_several_blocks_give_the_serial_replicates(make):
    # 150 replicates are three blocks of 64 at these sizes, so two threads run blocks at once:
    # each must have its own scratch and prepared plans (they shared them, and the replicates
    # of a threaded report were silently wrong)
    y, preds = make(n=600)
    a = CalibrationReport.from_predictions(y, preds, n_bootstrap=150, random_state=3)
    pools = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    # the blocks always run in threads (they share the prepared rows): a process backend set by
    # the caller's parallel_config is overridden, where it used to fail to pickle the engine
    for backend in ("threading", "loky"):
        with parallel_config(backend=backend):
            b = CalibrationReport.from_predictions(y, preds, n_bootstrap=150, random_state=3, n_jobs=2)
        np.testing.assert_array_equal(a.bootstrap_values, b.bootstrap_values)
        pd.testing.assert_frame_equal(a.table, b.table)
        # the one-thread BLAS limit is the process's: the threads must not leave it behind
        assert [(i["internal_api"], i["num_threads"]) for i in threadpool_info()] == pools


def test_a_threaded_report_leaves_the_blas_pools_as_it_found_them():
    # each thread used to enter and leave its own one-thread limit of the (process-wide) pools:
    # interleaved, the last to leave restored the other's 1, and BLAS stayed pinned to 1 thread
    from benchmarks.report_scale import data  # the data of the benchmark that showed it

    y, preds = data("first-order", 20_000)

    def pools():
        return [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]

    before = pools()
    CalibrationReport.from_predictions(y, preds, n_bootstrap=200, random_state=1, test_calibration=False)
    assert pools() == before
    for _ in range(3):
        CalibrationReport.from_predictions(
            y, preds, n_bootstrap=400, random_state=1, test_calibration=False, n_jobs=2
        )
        assert pools() == before


def test_custom_metric_and_roc_auc():
    y, preds = _binary()
    rep = CalibrationReport.from_predictions(
        y,
        preds,
        metrics={
            "auc": "roc_auc",
            "mae": lambda yy, pp: np.mean(np.abs(yy - pp)),
            "neg": (lambda yy, pp: -1.0, True),
        },
        n_bootstrap=5,
        random_state=0,
    )
    assert rep.metric_names == ["auc", "mae", "neg"]
    assert rep.greater_is_better == {"auc": True, "mae": False, "neg": True}
    assert rep.table.loc["honest", ("mae", "value")] == pytest.approx(np.mean(np.abs(y - preds["honest"])))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"metrics": ["nope"]}, "unknown metric 'nope'"),
        ({"metrics": []}, "metrics is empty"),
        ({"metrics": {"a": 3}}, "must be a callable"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"n_bootstrap": True}, "n_bootstrap"),
        ({"confidence_level": 1.0}, "confidence_level"),
        ({"interval_method": "bca"}, "interval_method"),
        ({"strategy": "kmeans"}, "strategy"),
    ],
)
def test_argument_errors(kwargs, match):
    y, preds = _binary(n=50)
    with pytest.raises(ValueError, match=match):
        CalibrationReport.from_predictions(y, preds, **kwargs)


def test_one_column_y_is_named_not_blamed_on_the_predictions():
    y, preds = _snapshots(n=40)
    with pytest.raises(ValueError, match=r"y has shape \(40, 1\): one column.*second-order"):
        CalibrationReport.from_predictions(y.votes[:, :1], preds)


def test_calibration_report_from_estimators_uses_classes():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.where(y == 1, "benign", "malignant")
    X_tr, X_te, y_tr, y_te = train_test_split(X, labels, random_state=0, stratify=labels)
    models = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr),
        "nb": GaussianNB().fit(X_tr, y_tr),
    }
    rep = calibration_report(models, X_te, y_te, metrics=["log_loss"], **FAST)
    # classes_ = ['benign', 'malignant']: the positive class is 'malignant'
    p = models["nb"].predict_proba(X_te)[:, 1]
    assert rep.table.loc["nb", ("log_loss", "value")] == pytest.approx(log_loss(y_te == "malignant", p))
    assert rep.estimators == models
    with pytest.raises(ValueError, match="of predictions, not a model"):
        calibration_report({"a": p}, X_te, y_te)


# ----------------------------------------------------------------------------------------------
# the verdict on cases with a known answer
# ----------------------------------------------------------------------------------------------
def test_verdict_names_the_best_and_the_miscalibrated():
    rng = np.random.default_rng(5)
    n = 3000
    p = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"calibrated": p, "biased": np.clip(p + 0.15, 0, 1)}
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=50, n_resamples=200, random_state=0)
    text = " ".join(rep.verdict)
    assert text.startswith("Best calibrated by smECE (the primary measure): calibrated (")
    assert "a clear winner" in text
    mis = next(line for line in rep.verdict if line.startswith("Miscalibrated at the 5% level"))
    assert re.search(r"biased \(p (<|=) 0\.00\d+\)", mis)  # 200 resamples: p is at least about 1/201
    assert "calibrated (p" not in mis  # the calibrated model is not called miscalibrated
    assert "Recalibrate biased" in text and "method='isotonic'" in text  # 3000 rows: isotonic
    assert rep.calibration_tests.loc["calibrated", "pvalue"] > 0.05
    assert rep.calibration_tests.loc["biased", "pvalue"] < 0.01


def test_verdict_small_sample_suggests_sigmoid_and_no_test_without_tests():
    y, preds = _binary(n=300)
    rep = CalibrationReport.from_predictions(y, preds, **FAST)
    assert "method='sigmoid'" in " ".join(rep.verdict)
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=0, test_calibration=False)
    assert rep.calibration_tests is None
    assert not any("Miscalibrated" in line for line in rep.verdict)
    assert "no bootstrap was run" in rep.verdict[0]


def test_second_order_report_values_and_advice():
    Y, preds = _snapshots()
    rep = CalibrationReport.from_predictions(Snapshots(Y), preds, **FAST)
    assert rep.order == "second-order"
    s = preds["shifted"]
    params = rep.metric_params["shifted"]["ce2"]
    assert rep.table.loc["shifted", ("ce2", "value")] == pytest.approx(
        ce2_score(Snapshots(Y), s, degree=params["degree"], alpha=params["alpha"], bandwidth=2**-6)
    )
    votes, m = Y.votes.ravel(), np.repeat(s[:, 0], 2)
    assert rep.table.loc["shifted", ("brier", "value")] == pytest.approx(brier_score_loss(votes, m))
    text = " ".join(rep.verdict)
    assert "Best calibrated by CE2 (the primary measure): honest" in text
    assert "shifted" in text and "SecondOrderPlattCalibrator(order=2)" in text
    assert set(rep.figures) >= {
        "Is the stated uncertainty right?",
        "Reliability of the mean m against every vote",
    }
    assert "over-confident" in rep.figure_explanations["Is the stated uncertainty right?"]


def test_multiclass_report_values():
    y, preds = _multiclass()
    rep = CalibrationReport.from_predictions(y, preds, **FAST)
    assert rep.order == "multiclass"
    P = preds["overconfident"]
    row = rep.table.loc["overconfident"]
    assert row[("truthful_conf_ce", "value")] == pytest.approx(truthful_conf_ce(y, P))
    assert row[("classwise_lince", "value")] == pytest.approx(classwise_lince(y, P))
    assert row[("conf_ece", "value")] == pytest.approx(conf_ece(y, P))
    assert row[("log_loss", "value")] == pytest.approx(log_loss(y, P))
    assert row[("brier", "value")] == pytest.approx(brier_score_loss(y, P, labels=np.arange(4)))
    assert "Best calibrated by ConfCE-corr (the primary measure): honest" in rep.verdict[0]
    assert "Top-label reliability diagrams" in rep.figures
    assert "smooth_calibration_error" not in rep.metric_names  # not a default of this kind


def test_smce_in_the_multiclass_and_second_order_kinds():
    """The Lipschitz smCE scores the same binary views as the kinds' other binary measures."""
    y, preds = _multiclass()
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["smooth_calibration_error"], n_bootstrap=0, test_calibration=False
    )
    for name, P in preds.items():
        top = np.argmax(P, axis=1)
        correct, conf = (top == y).astype(float), P[np.arange(len(y)), top]
        assert rep.table.loc[name, ("smooth_calibration_error", "value")] == pytest.approx(
            smooth_calibration_error(correct, conf)
        )
    assert rep.metric_labels["smooth_calibration_error"] == "smCE-top"
    Y, spreds = _snapshots()
    rep = CalibrationReport.from_predictions(
        Y, spreds, metrics=["smooth_calibration_error", "scdl"], n_bootstrap=0, test_calibration=False
    )
    s = spreds["shifted"]
    votes, m = Y.votes.ravel(), np.repeat(s[:, 0], 2)
    assert rep.table.loc["shifted", ("smooth_calibration_error", "value")] == pytest.approx(
        smooth_calibration_error(votes, m)
    )
    assert rep.table.loc["shifted", ("scdl", "value")] == pytest.approx(scdl_score(votes, m))


def test_kinds_are_classes_in_one_registry():
    names = ["second-order (k classes)", "second-order", "multiclass", "first-order"]
    assert [k.name for k in KINDS] == names
    for kind in KINDS:
        assert set(kind().default_metrics) <= set(kind().catalog())


# ----------------------------------------------------------------------------------------------
# outputs
# ----------------------------------------------------------------------------------------------
class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.text, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_escaped_with_verdict_and_figures(tmp_path):
    y, preds = _binary(n=200)
    preds = {"<b>bold</b> & co": preds["honest"], "plain": preds["constant"]}
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier", "smooth_ece"], **FAST)
    out = rep.to_html(tmp_path / "r.html")
    text = out.read_text(encoding="utf-8")
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt; &amp; co" in text
    page = _Page()
    page.feed(text)
    assert len(page.images) == len(rep.figures) == 2
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.images)
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing fetched from the network
    assert 'class="verdict"' in text and "P(best)" in text and "calibration p" in text


def test_repr_html_has_table_and_figures():
    y, preds = _binary(n=150)
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier"], **FAST)
    h = rep._repr_html_()
    assert "<table" in h and h.count("<img") == len(rep.figures) and "Verdict" in h


def test_markdown_escapes_html_and_table_characters():
    y, preds = _binary(n=150)
    preds = {"<script>x</script>|a*b_": preds["honest"]}
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier"], **FAST)
    md = rep.to_markdown()
    assert "<script>" not in md and "&lt;script&gt;" in md
    row = next(line for line in md.splitlines() if "script" in line and line.startswith("|"))
    assert row.count("|") - row.count("\\|") == 4  # model, Brier, calibration p: 4 unescaped pipes
    assert "\\*" in row and "\\_" in row


def _validate(instance, schema, path="$"):
    """A small JSON Schema validator for the keywords JSON_SCHEMA uses (jsonschema is not a dependency)."""
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    t = schema.get("type")
    if t is not None:
        allowed = t if isinstance(t, list) else [t]
        ok = False
        for name in allowed:
            if name == "integer":
                ok |= isinstance(instance, int) and not isinstance(instance, bool)
            elif name == "number":
                ok |= isinstance(instance, (int, float)) and not isinstance(instance, bool)
            else:
                ok |= isinstance(instance, types[name])
        assert ok, f"{path}: {instance!r} is not {t}"
    if "const" in schema:
        assert instance == schema["const"], path
    if "enum" in schema:
        assert instance in schema["enum"], path
    if isinstance(instance, (int, float)) and not isinstance(instance, bool):
        assert instance >= schema.get("minimum", -np.inf), path
        assert instance <= schema.get("maximum", np.inf), path
        assert instance > schema.get("exclusiveMinimum", -np.inf), path
        assert instance < schema.get("exclusiveMaximum", np.inf), path
    for key in schema.get("required", []):
        assert key in instance, f"{path}: missing {key}"
    for key, sub in schema.get("properties", {}).items():
        if isinstance(instance, dict) and key in instance:
            _validate(instance[key], sub, f"{path}.{key}")
    if "items" in schema and isinstance(instance, list):
        for i, item in enumerate(instance):
            _validate(item, schema["items"], f"{path}[{i}]")


@pytest.mark.parametrize("make", [_binary, _snapshots, _multiclass])
def test_json_follows_the_schema(make, tmp_path):
    y, preds = make()
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=5, n_resamples=20, random_state=0)
    doc = json.loads(rep.to_json())
    _validate(doc, JSON_SCHEMA)
    assert len(doc["results"]) == len(rep.model_names) * len(rep.metric_names)
    assert doc["kind"] == rep.order
    path = rep.to_json(tmp_path / "r.json")
    assert json.loads(path.read_text()) == doc
    bad = dict(doc, n_bootstrap=-1)
    with pytest.raises(AssertionError):
        _validate(bad, JSON_SCHEMA)


def test_to_frame_is_tidy():
    y, preds = _binary(n=150)
    rep = CalibrationReport.from_predictions(y, preds, metrics=["brier", "cutoff"], **FAST)
    f = rep.to_frame()
    assert f.shape == (6, 8)
    assert list(f.columns) == [
        "model",
        "metric",
        "value",
        "low",
        "high",
        "rank",
        "p_best",
        "calibration_pvalue",
    ]
    assert (
        f.loc[(f.model == "honest") & (f.metric == "cutoff"), "value"].item()
        == rep.table.loc["honest", ("cutoff", "value")]
    )


@pytest.mark.parametrize("make", [_binary, _snapshots, _multiclass])
def test_pickle_round_trip(make):
    y, preds = make(n=200)
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=5, n_resamples=20, random_state=0)
    rep.add_figure("extra", _extra_figure, caption="words")
    _ = rep.figures  # built figures are not pickled; they are rebuilt on demand
    back = pickle.loads(pickle.dumps(rep))
    pd.testing.assert_frame_equal(back.table, rep.table)
    assert back.verdict == rep.verdict and back.to_markdown() == rep.to_markdown()
    assert set(back.figures) == set(rep.figures)


def _extra_figure():
    from matplotlib.figure import Figure

    return Figure(figsize=(2, 2))


def test_report_without_matplotlib(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real(name, *args, **kwargs)

    y, preds = _binary(n=100)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["brier"], n_bootstrap=0, test_calibration=False
    )
    monkeypatch.setattr(builtins, "__import__", fake)
    assert rep.figures == {}
    assert "Figures omitted: matplotlib is not installed" in rep.to_html()


def test_add_figure_lazy_and_duplicate():
    y, preds = _binary(n=100)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["brier"], n_bootstrap=0, test_calibration=False
    )
    calls = []

    def make():
        calls.append(1)
        return _extra_figure()

    rep.add_figure("extra", make, caption="what it shows")
    assert calls == []
    assert "extra" in rep.figures and calls == [1]
    assert rep.figure_explanations["extra"] == "what it shows"
    with pytest.raises(ValueError, match="already added"):
        rep.add_figure("extra", make)


def test_render_html_several_reports():
    y, preds = _binary(n=100)
    a = CalibrationReport.from_predictions(y, preds, metrics=["brier"], n_bootstrap=0, title="A")
    b = CalibrationReport.from_predictions(y, preds, metrics=["cutoff"], n_bootstrap=0, title="B")
    text = render_html([a, b], title="both", intro=["hello"])
    assert text.count("<section>") == 2 and "<h2>A</h2>" in text and "<p>hello</p>" in text


# ----------------------------------------------------------------------------------------------
# construction: the factory computes, the constructor stores; one random_state seeds everything
# ----------------------------------------------------------------------------------------------
def _seeded_report(random_state, n=400):
    rng = np.random.RandomState(3)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)  # calibrated: p-values away from their floor
    return CalibrationReport.from_predictions(
        y,
        {"a": p, "b": np.clip(1.05 * p - 0.02, 0, 1)},
        metrics=["smooth_ece", "cutoff", "brier"],
        n_bootstrap=30,
        n_resamples=200,
        random_state=random_state,
    )


def test_two_reports_from_randomstate_zero_are_equal():
    # a RandomState instance used to become RandomState(None) in the calibration tests
    r1 = _seeded_report(np.random.RandomState(0))
    r2 = _seeded_report(np.random.RandomState(0))
    pd.testing.assert_frame_equal(r1.table, r2.table)
    pd.testing.assert_frame_equal(r1.calibration_tests, r2.calibration_tests)
    np.testing.assert_array_equal(r1.bootstrap_values, r2.bootstrap_values)
    assert r1.random_state == r2.random_state and r1.random_state is not None
    assert r1.verdict == r2.verdict


def test_int_seed_reproducible_and_tests_seeded():
    r1, r2 = _seeded_report(7), _seeded_report(7)
    pd.testing.assert_frame_equal(r1.calibration_tests, r2.calibration_tests)
    assert r1.random_state == 7  # the figures keep the int seed
    r3 = _seeded_report(8)
    assert not np.array_equal(r1.bootstrap_values, r3.bootstrap_values)


def test_constructor_only_stores():
    from skcal.report._compute import ReportSettings

    r = _seeded_report(0)
    stored = CalibrationReport(
        kind=r.kind,
        results=r.results,
        verdict=["a verdict given by the caller"],
        settings=ReportSettings(n_bins=5),
        title="t",
    )
    assert stored.table is r.results.table  # not recomputed
    assert stored.verdict == ["a verdict given by the caller"]  # not rebuilt
    assert stored.n_bins == 5 and stored.calibration_tests is r.calibration_tests
    assert stored.data is None and stored.predictions is None and stored.estimators == {}
    assert stored.to_frame().shape[0] == 6  # the writers read the stored results only


def test_demo_bins_reach_the_report_without_patching():
    from skcal._demo import run_demo

    reports, _, _ = run_demo(n_bootstrap=0, n_resamples=1, parts=["first"], n_bins=7, strategy="quantile")
    assert reports[0].n_bins == 7 and reports[0].strategy == "quantile"
