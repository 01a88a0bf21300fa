"""The skcal command line: the CSV convention, its errors, the demo, and ``python -m skcal``."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skcal.cli import CSVFormatError, main, read_predictions_csv

ROOT = Path(__file__).resolve().parents[1]


def _write(tmp_path, text, name="p.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _first_order_csv(tmp_path, n=120, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p).astype(int)
    q = np.clip(p + 0.2, 0, 1)
    lines = ["id,y,honest,shifted"] + [f"r{i},{y[i]},{p[i]:.6f},{q[i]:.6f}" for i in range(n)]
    return _write(tmp_path, "\n".join(lines) + "\n"), y, p, q


def test_read_first_order(tmp_path):
    path, y, p, q = _first_order_csv(tmp_path)
    yy, preds = read_predictions_csv(path, ignore=["id"])
    np.testing.assert_array_equal(yy, y)
    assert list(preds) == ["honest", "shifted"]
    np.testing.assert_allclose(preds["honest"], p, atol=1e-6)


def test_read_second_order_with_missing_votes(tmp_path):
    text = "y1,y2,y3,ens:m,ens:sigma2,cal:sigma2,cal:m\n1,0,,0.4,0.01,0.02,0.5\n1,1,1,0.9,0.0,0.0,0.8\n"
    Y, preds = read_predictions_csv(_write(tmp_path, text))
    assert Y.shape == (2, 3) and np.isnan(Y.votes[0, 2])  # a Snapshots: the columns say votes
    np.testing.assert_allclose(preds["ens"], [[0.4, 0.01], [0.9, 0.0]])
    np.testing.assert_allclose(preds["cal"], [[0.5, 0.02], [0.8, 0.0]])


def test_read_labels_variants(tmp_path):
    y, _ = read_predictions_csv(_write(tmp_path, "y,a\ntrue,0.2\nfalse,0.3\n"))
    np.testing.assert_array_equal(y, [1, 0])
    y, _ = read_predictions_csv(_write(tmp_path, "y,a\n-1,0.2\n1,0.3\n"))
    np.testing.assert_array_equal(y, [0, 1])
    y, _ = read_predictions_csv(
        _write(tmp_path, "target,a\nspam,0.2\nham,0.3\n"), label="target", pos_label="spam"
    )
    np.testing.assert_array_equal(y, [1, 0])


@pytest.mark.parametrize(
    "text, kwargs, match",
    [
        ("a,b\n0.1,0.2\n", {}, "no label column; expected a column named 'y'"),
        ("y,a\n1,0.2\n0,abc\n", {}, "column 'a' must be numeric; line 3 holds 'abc'"),
        ("y,a\n1,0.2\n0,1.2\n", {}, r"column 'a' must hold probabilities in \[0, 1\]; line 3 holds 1.2"),
        ("y,a\n1,0.2\n0,-0.1\n", {}, "line 3 holds -0.1"),
        ("y,a\n1,0.2\n0,\n", {}, "column 'a' has 1 empty or NaN cells"),
        ("y,a\n1,0.2\n0,NaN\n", {}, "column 'a' has 1 empty or NaN cells"),
        ("y,a\n1,0.2\n0,inf\n", {}, "infinite value at line 3"),
        ("y,a,a\n1,0.2,0.3\n", {}, "duplicate column names"),
        ("y\n1\n0\n", {}, "no model columns"),
        ("", {}, "the file is empty"),
        ("y,a\n", {}, "no data rows"),
        ("y,a\n1,0.2\n2,0.2\n3,0.1\n", {}, "holds 3 classes"),
        ("y,a\n1,0.2\n,0.2\n", {}, "label column 'y' has an empty"),
        ("y,a\nspam,0.2\nham,0.3\n", {}, "pass --pos-label"),
        ("y,a\n2,0.2\n3,0.3\n", {}, "expected 0/1"),
        ("y,a\nspam,0.2\nham,0.3\n", {"pos_label": "eggs"}, "--pos-label 'eggs' is not a label"),
        ("y,a:m,a:sigma2\n1,0.2,0.01\n", {}, "need snapshot columns y1, y2"),
        ("y,y1,y2,a\n1,1,0,0.2\n", {}, "both a label column"),
        ("y1,y2,a:m\n1,0,0.2\n", {}, "model 'a' has no a:sigma2 column"),
        ("y1,y2,a:m,a:sigma2,b\n1,0,0.2,0.01,0.3\n", {}, "column 'b' is not a snapshot column"),
        ("y1,y2,a:m,a:sigma2\n1,2,0.2,0.01\n", {}, "0/1 votes"),
        ("y1,y2,a:m,a:sigma2\n1,,0.2,0.01\n", {}, "at least 2 votes"),
        ("y1,y2,a:m,a:sigma2\n1,0,0.2,0.3\n", {}, r"variances in \[0, 0.25\]"),
        ("y1,y2\n1,0\n", {}, "no model columns"),
        ("y,a\n1,0.2\n", {"ignore": ["zzz"]}, "--ignore names columns that do not exist"),
        ("y,id,a\n1,r1,0.2\n0,r2,0.3\n", {}, "column 'id' must be numeric.*skip it with --ignore id"),
        ("y,a,tag\n1,0.2,x7\n0,0.3,k9\n", {}, "column 'tag' must be numeric.*skip it with --ignore tag"),
        ("y;a;b\n1;0.2;0.3\n", {}, "one column holding semicolons; the file must be comma-separated"),
        ("y\ta\n1\t0.2\n", {}, "one column holding tabs; the file must be comma-separated"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, match):
    path = _write(tmp_path, text)
    with pytest.raises(CSVFormatError, match=match):
        read_predictions_csv(path, **kwargs)


def test_non_numeric_model_column_is_not_called_an_id(tmp_path):
    path = _write(tmp_path, "y,a\n1,0.2\n0,abc\n0,0.4\n")
    with pytest.raises(CSVFormatError, match="line 3 holds 'abc'") as info:
        read_predictions_csv(path)
    assert "--ignore" not in str(info.value)  # a typo in a model column is not an identifier


def test_missing_file_error(tmp_path):
    with pytest.raises(CSVFormatError, match="no such file"):
        read_predictions_csv(tmp_path / "absent.csv")


def test_main_reports_csv_errors_with_status_2(tmp_path, capsys):
    path = _write(tmp_path, "label,a\n1,0.2\n")
    assert main(["report", path, "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skcal report: error:") and "no label column" in err
    assert not (tmp_path / "r.html").exists()


def test_main_report_from_csv(tmp_path, capsys):
    path, y, p, q = _first_order_csv(tmp_path)
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    status = main(
        [
            "report",
            path,
            "--ignore",
            "id",
            "--out",
            str(out),
            "--markdown",
            str(md),
            "--n-bootstrap",
            "10",
            "-q",
        ]
    )
    assert status == 0
    printed = capsys.readouterr()
    assert "honest" in printed.out and "SCDL" in printed.out and printed.err == ""
    html = out.read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 2
    heading = f"Calibration report: {path}"
    assert html.count(f"<h1>{heading}</h1>") == 1 and f"<h2>{heading}</h2>" not in html  # title once
    assert md.read_text(encoding="utf-8").count("| honest |") == 1


def test_main_zero_bootstrap_says_there_are_no_intervals(tmp_path, capsys):
    path, *_ = _first_order_csv(tmp_path)
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    args = ["report", path, "--ignore", "id", "--out", str(out), "--markdown", str(md)]
    assert main([*args, "--n-bootstrap", "0", "--metrics", "brier", "-q"]) == 0
    capsys.readouterr()
    text = md.read_text(encoding="utf-8")
    assert "0 replicates" not in text and "paired-bootstrap interval" not in text
    assert "No intervals: the bootstrap was skipped (n\\_bootstrap=0)" in text  # Markdown-escaped
    assert "No intervals" in out.read_text(encoding="utf-8")


def test_main_second_order_csv_with_metrics(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 150
    f = rng.uniform(0.1, 0.9, n)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(int)
    lines = ["y1,y2,ens:m,ens:sigma2"] + [f"{Y[i, 0]},{Y[i, 1]},{f[i]:.4f},0.01" for i in range(n)]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    status = main(
        [
            "report",
            path,
            "--out",
            str(tmp_path / "r.html"),
            "--metrics",
            "brier,variance_bias",
            "--n-bootstrap",
            "0",
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "Brier" in out and "mean s2" in out


def test_main_argument_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report"])
    assert exc.value.code == 2
    assert "skcal report: error: give PREDICTIONS (a log file or folder; or --demo" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", "x.csv", "--demo"])
    with pytest.raises(SystemExit):
        main(["report", "x.csv", "--confidence", "2"])
    with pytest.raises(SystemExit):
        main(["report", "x.csv", "--n-bootstrap", "-3"])


def test_main_bad_metric_name(tmp_path, capsys):
    path, *_ = _first_order_csv(tmp_path)
    status = main(["report", path, "--ignore", "id", "--metrics", "nope", "--out", str(tmp_path / "r.html")])
    assert status == 2 and "unknown metric 'nope'" in capsys.readouterr().err


def test_demo_command_prints_the_table(tmp_path, capsys):
    out = tmp_path / "demo.html"
    assert main(["demo", "--out", str(out), "--n-bootstrap", "0", "--n-resamples", "20", "--quiet"]) == 0
    printed = capsys.readouterr().out
    for column in ("SCDL", "smECE", "cutoff", "ECE-11"):
        assert column in printed
    for model in ("logistic regression", "naive Bayes", "random forest", "bagged trees"):
        assert model in printed
    assert "CE2" in printed  # the second-order part
    assert "ConfCE-corr" in printed and "LinCE-cw" in printed  # the multiclass part
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_help_documents_the_csv_convention(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "Log column convention" in out and "NAME:sigma2" in out and "--pos-label" in out


def test_python_dash_m_skcal_subprocess(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    path, *_ = _first_order_csv(tmp_path)
    out = tmp_path / "r.html"
    cmd = [sys.executable, "-m", "skcal", "report", path, "--ignore", "id", "--out", str(out)]
    run = subprocess.run(
        cmd + ["--n-bootstrap", "3", "--n-resamples", "10"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "honest" in run.stdout and f"report written to {out}" in run.stderr
    assert out.exists()
    bad_cmd = cmd[:4] + [str(tmp_path / "absent.csv"), "--out", str(out)]
    bad = subprocess.run(bad_cmd, capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "no such file" in bad.stderr


# ----------------------------------------------------------------------------------------------
# formats, multiclass files, the allow-list, failing fast
# ----------------------------------------------------------------------------------------------
def _multiclass_csv(tmp_path, n=150, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 3)) * 2
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    classes = ["cat", "dog", "eel"]
    y = [classes[rng.choice(3, p=row)] for row in P]
    U = np.full((n, 3), 1 / 3)
    header = "y," + ",".join(f"{m}[{c}]" for m in ("honest", "uniform") for c in classes)
    rows = [",".join([y[i], *(f"{v:.8f}" for v in P[i]), *(f"{v:.8f}" for v in U[i])]) for i in range(n)]
    return _write(tmp_path, "\n".join([header, *rows]) + "\n"), y, P


def test_read_multiclass_csv(tmp_path):
    path, y, P = _multiclass_csv(tmp_path)
    yy, preds, labels = read_predictions_csv(path, return_labels=True)
    assert labels == ["cat", "dog", "eel"]
    assert yy.tolist() == [labels.index(v) for v in y]
    np.testing.assert_allclose(preds["honest"], P, atol=1e-8)
    assert set(preds) == {"honest", "uniform"}


@pytest.mark.parametrize(
    "text, match",
    [
        ("y,a[x],a[y],a[z],b\nx,0.2,0.3,0.5,0.1\n", "not NAME\\[CLASS\\] columns"),
        ("y,a[x],a[y],a[z],b[x],b[y]\nx,0.2,0.3,0.5,0.5,0.5\n", "every model needs one column per class"),
        ("y,a[x],a[y]\nx,0.2,0.8\n", "needs at least 3"),
        ("y,a[x],a[y],a[z]\nw,0.2,0.3,0.5\n", "holds 'w' at line 2, which is not one of the classes"),
        ("y,a\nx,0.2\nz,0.3\nw,0.5\n", "holds 3 classes .* NAME\\[CLASS\\]"),
    ],
)
def test_multiclass_csv_errors(tmp_path, text, match):
    with pytest.raises(CSVFormatError, match=match):
        read_predictions_csv(_write(tmp_path, text))


def test_main_multiclass_csv_every_format(tmp_path, capsys):
    path, *_ = _multiclass_csv(tmp_path)
    common = ["report", path, "--n-bootstrap", "5", "--n-resamples", "20", "-q"]
    assert main([*common, "--out", str(tmp_path / "r.html")]) == 0
    assert "Top-label reliability" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert main([*common, "--format", "json", "--out", str(tmp_path / "r.json")]) == 0
    import json

    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "multiclass" and doc["models"] == ["honest", "uniform"]
    assert main([*common, "--format", "md", "--out", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.count("| honest |") == 1 and "ConfCE-corr" in md
    assert "ConfCE-corr" in capsys.readouterr().out


def test_default_out_follows_the_format(tmp_path, monkeypatch, capsys):
    path, *_ = _first_order_csv(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = [
        "report",
        path,
        "--ignore",
        "id",
        "--n-bootstrap",
        "0",
        "--n-resamples",
        "0",
        "--metrics",
        "brier",
        "-q",
    ]
    assert main([*args, "--format", "json"]) == 0
    assert (tmp_path / "report.json").exists() and not (tmp_path / "report.html").exists()


def test_models_allow_list(tmp_path):
    path, *_ = _first_order_csv(tmp_path)
    _, preds = read_predictions_csv(path, ignore=["id"], models=["shifted"])
    assert list(preds) == ["shifted"]
    _, preds = read_predictions_csv(path, models=["honest"])  # the id column is not read either
    assert list(preds) == ["honest"]
    with pytest.raises(CSVFormatError, match="--model names models that are not in the log: \\['nope'\\]"):
        read_predictions_csv(path, models=["nope"])


def test_bad_out_and_directory_csv_fail_before_computing(tmp_path, capsys, monkeypatch):
    import skcal.report._report as rr

    def boom(*args, **kwargs):  # computing would be a bug
        raise AssertionError("the report was computed")

    monkeypatch.setattr(rr.CalibrationReport, "from_predictions", classmethod(boom))
    path, *_ = _first_order_csv(tmp_path)
    assert main(["report", path, "--out", str(tmp_path / "missing" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["report", path, "--out", str(tmp_path)]) == 2
    assert "is a directory; expected a file name" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty), "--out", str(tmp_path / "r.html")]) == 2
    # a folder is read in batches (a report past memory): one without log files is named
    assert "PREDICTIONS" in (err := capsys.readouterr().err) and "holds no CSV or parquet files" in err
    assert main(["demo", "--out", str(tmp_path / "missing" / "d.html")]) == 2
    assert main(["report", path, "--markdown", str(tmp_path / "missing" / "r.md")]) == 2
    if os.name == "posix" and os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["report", path, "--out", str(locked / "r.html")]) == 2
        assert "not writable" in capsys.readouterr().err
    with pytest.raises(CSVFormatError, match="is a directory"):
        read_predictions_csv(tmp_path)


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("skcal ")


def test_help_documents_the_multiclass_convention(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = capsys.readouterr().out
    assert "NAME[CLASS]" in out and "--format" in out and "--model NAME" in out
    assert "deprecated: the old spelling of --model" in out


def test_json_from_csv_has_smce_and_the_scdl_grid(tmp_path):
    """The CLI's default first-order metrics include smCE; SCDL carries m*, SCDL_m* and at_floor."""
    import json

    from skcal.lipschitz import smooth_calibration_error
    from skcal.scdl import scdl_curve

    path, y, p, q = _first_order_csv(tmp_path)
    out = tmp_path / "r.json"
    args = ["report", path, "--ignore", "id", "--n-bootstrap", "0", "--n-resamples", "20"]
    assert main([*args, "--format", "json", "--out", str(out), "-q"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert "smooth_calibration_error" in [m["name"] for m in doc["metrics"]]
    res = {(r["model"], r["metric"]): r for r in doc["results"]}
    for name, pp in (("honest", p), ("shifted", q)):
        pp = np.round(pp, 6)  # as written to the CSV
        smce = res[(name, "smooth_calibration_error")]["value"]
        assert smce == pytest.approx(smooth_calibration_error(y, pp))
        curve = scdl_curve(y, pp)
        assert res[(name, "scdl")]["details"] == {
            "m*": curve.selected_n_bins,
            "SCDL_m*": pytest.approx(curve.selected_scdl_m),
            "at_floor": curve.at_floor,
        }


# ----------------------------------------------------------------------------------------------
# vote-count columns: y:positive / y:total (binary) and y[CLASS] (per class)
# ----------------------------------------------------------------------------------------------
def _count_csvs(tmp_path, n=200, seed=0):
    rng = np.random.default_rng(seed)
    classes = ["cat", "dog", "fox"]
    M = rng.dirichlet(np.full(3, 2.0), n)
    S2 = rng.uniform(0, 1, (n, 3)) * M * (1 - M) * 0.3
    C = np.stack([rng.multinomial(int(t), p) for t, p in zip(rng.integers(2, 6, n), M, strict=True)])
    head = [f"y[{c}]" for c in classes] + [f"ens[{c}]:{x}" for x in ("m", "sigma2") for c in classes]
    rows = [",".join([*map(str, C[i]), *(f"{v:.8f}" for v in (*M[i], *S2[i]))]) for i in range(n)]
    k_path = _write(tmp_path, "\n".join([",".join(head), *rows]) + "\n", "k.csv")
    rows = [f"{C[i, 0]},{C[i].sum()},{M[i, 0]:.8f},{S2[i, 0]:.8f}" for i in range(n)]
    b_path = _write(tmp_path, "\n".join(["y:positive,y:total,ens:m,ens:sigma2", *rows]) + "\n", "b.csv")
    return k_path, b_path, C, np.round(M, 8), np.round(S2, 8)


def test_read_count_columns(tmp_path):
    from skcal import VoteCounts

    k_path, b_path, C, M, S2 = _count_csvs(tmp_path)
    votes, preds = read_predictions_csv(k_path)
    assert isinstance(votes, VoteCounts) and votes.classes.tolist() == ["cat", "dog", "fox"]
    np.testing.assert_array_equal(votes.counts, C)
    np.testing.assert_array_equal(votes.total, C.sum(axis=1))
    assert preds["ens"].shape == (200, 3, 2)
    np.testing.assert_allclose(preds["ens"][..., 0], M)
    np.testing.assert_allclose(preds["ens"][..., 1], S2)
    votes, preds = read_predictions_csv(b_path)
    np.testing.assert_array_equal(votes.positive, C[:, 0])
    np.testing.assert_array_equal(votes.total, C.sum(axis=1))
    np.testing.assert_allclose(preds["ens"], np.column_stack([M[:, 0], S2[:, 0]]))
    # the class columns may come in any order: they are read by name
    import pandas as pd

    df = pd.read_csv(k_path)
    df[["y[fox]", "y[cat]", "y[dog]", *df.columns[3:]]].to_csv(tmp_path / "r.csv", index=False)
    again, _ = read_predictions_csv(str(tmp_path / "r.csv"))
    assert again.classes.tolist() == ["fox", "cat", "dog"]
    np.testing.assert_array_equal(again.counts, C[:, [2, 0, 1]])


def test_main_report_from_count_columns(tmp_path, capsys):
    import json

    from skcal import CalibrationReport, VoteCounts

    k_path, b_path, C, M, S2 = _count_csvs(tmp_path)
    common = ["--n-bootstrap", "5", "--n-resamples", "20", "-q", "--format", "json"]
    cases = [
        (k_path, "second-order (k classes)", VoteCounts(counts=C), np.stack([M, S2], axis=2)),
        (b_path, "second-order", VoteCounts(C[:, 0], C.sum(axis=1)), np.column_stack([M[:, 0], S2[:, 0]])),
    ]
    for path, kind, votes, scores in cases:
        out = tmp_path / "r.json"
        assert main(["report", path, *common, "--out", str(out)]) == 0
        doc = json.loads(out.read_text(encoding="utf-8"))
        assert doc["kind"] == kind and doc["models"] == ["ens"]
        # the same numbers as the report built in Python from the counts and the scores
        rep = CalibrationReport.from_predictions(votes, {"ens": scores}, n_bootstrap=5, random_state=0)
        for row in doc["results"]:
            assert row["value"] == pytest.approx(rep.table[row["metric"]]["value"]["ens"], rel=1e-12)
        assert {r["metric"] for r in doc["results"]} >= (
            {"ce2_classwise", "ce2_top_label"} if kind != "second-order" else {"ce2"}
        )


@pytest.mark.parametrize(
    "text, match",
    [
        ("y:positive,y[a],a:m,a:sigma2\n1,2,0.5,0.1\n", "count columns .* not a mix"),
        ("y:positive,a:m,a:sigma2\n1,0.5,0.1\n", "give y:positive and y:total"),
        ("y:positive,y:total,a:m,a:sigma2\n-1,2,0.5,0.1\n", "'y:positive' must hold vote counts"),
        ("y:positive,y:total,a:m,a:sigma2\n1.5,2,0.5,0.1\n", "count column 'y:positive' .* line 2"),
        ("y:positive,y:total,a:m,a:sigma2\n3,2,0.5,0.1\n", "positive"),
        ("y[a],y[b],a[a]:m,a[b]:m,a[a]:sigma2\n1,1,0.5,0.5,0.1\n", "no column 'a\\[b\\]:sigma2'"),
        ("y[a],y[b],a:m,a:sigma2\n1,1,0.5,0.1\n", "no column 'a\\[a\\]:m'"),
        ("y[a],y[b]\n1,1\n", "no model columns"),
        ("y,y[a],y[b],a:m,a:sigma2\n1,1,1,0.5,0.1\n", "both vote-count columns"),
        ("y[a],y[b],a[a]:m,a[b]:m,a[a]:sigma2,a[b]:sigma2\n1,1,1.5,0.5,0.1,0.1\n", "a\\[a\\]:m"),
    ],
)
def test_count_columns_errors(tmp_path, text, match):
    with pytest.raises(CSVFormatError, match=match):
        read_predictions_csv(_write(tmp_path, text))


def test_report_reads_a_mixed_folder_whole(tmp_path, capsys):
    """A folder of CSV and parquet files: every row of both halves (it once read the parquet half)."""
    pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, size=400)
    y = (rng.uniform(size=400) < p).astype(int)
    logs = tmp_path / "logs"
    logs.mkdir()
    pd.DataFrame({"y": y[:200], "m": p[:200]}).to_csv(logs / "2024-01-01.csv", index=False)
    pd.DataFrame({"y": y[200:], "m": p[200:]}).to_parquet(logs / "2024-01-02.parquet")
    out = tmp_path / "r.json"
    argv = ["report", str(logs), "--format", "json", "--out", str(out), "--n-bootstrap", "0"]
    code = main([*argv, "--n-resamples", "0"])
    assert code == 0
    assert "400 rows in 2 file(s)" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["n_samples"] == 400


# ----------------------------------------------------------------------------------------------
# one command-line convention for report and monitor (issue 37, item 4)
# ----------------------------------------------------------------------------------------------
N_LOG = 240
_NUMPY_REPR = re.compile(r"\bnp\.(float|int|uint|str_|bool)\w*\(")
_API_WORDS = re.compile(r"\b(pos_label|labels|models|y_true|y_prob)=")


def _log_frame(label="y", values=("no", "yes"), seed=5):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, N_LOG)
    y = (rng.uniform(size=N_LOG) < p).astype(int)
    return pd.DataFrame(
        {
            "ts": pd.date_range("2024-06-01", periods=N_LOG, freq="h").strftime("%Y-%m-%dT%H:%M:%S"),
            "id": [f"r{i}" for i in range(N_LOG)],
            label: np.asarray(values, dtype=object)[y],
            "a": p,
            "b": np.clip(p + 0.1, 0, 1),
        }
    )


def _write_log(tmp_path, reader, frame, name="log"):
    """The same rows as a CSV, gzip CSV or parquet file, or a folder of CSV, parquet or both."""
    half = N_LOG // 2
    if reader in ("csv", "gz"):
        path = tmp_path / f"{name}.csv{'.gz' if reader == 'gz' else ''}"
        frame.to_csv(path, index=False)
        return path
    if reader == "parquet":
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        return path
    path = tmp_path / name
    path.mkdir()
    kinds = {
        "csv-folder": ("csv", "csv"),
        "parquet-folder": ("parquet", "parquet"),
        "mixed": ("csv", "parquet"),
    }
    for i, (part, kind) in enumerate(zip((frame.iloc[:half], frame.iloc[half:]), kinds[reader], strict=True)):
        if kind == "csv":
            part.to_csv(path / f"2024-06-0{i + 1}.csv", index=False)
        else:
            part.to_parquet(path / f"2024-06-0{i + 1}.parquet", index=False)
    return path


def _cli(capsys, tmp_path, command, log, *flags):
    """Run one command: ``(status, out, err, rows read, a number comparable across readers)``."""
    out_file = tmp_path / f"{command}.json"
    argv = [command, str(log), *flags, "--format", "json", "--out", str(out_file), "-q"]
    if command == "report":
        argv += ["--n-bootstrap", "0", "--n-resamples", "0", "--metrics", "brier,smooth_ece"]
    else:
        argv += ["--block-size", "40"] + ([] if "--model" in flags else ["--model", "a"])
    code = main(argv)
    out, err = capsys.readouterr()
    rows = number = None
    if code in (0, 1):
        doc = json.loads(out_file.read_text())
        if command == "report":
            rows = doc["n_samples"]
            number = [r["value"] for r in doc["results"] if r["metric"] == "brier"]
        else:
            rows, number = doc["status"]["rows"], doc["status"]["e_value"]
    return code, out, err, rows, number


def _assert_cli_words(err):
    assert not _NUMPY_REPR.search(err), err
    assert not _API_WORDS.search(err), err
    assert "Traceback" not in err, err


COMMANDS = ["report", "monitor"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("reader", ["csv", "gz", "parquet", "csv-folder", "parquet-folder", "mixed"])
def test_convention_every_reader_reads_every_row_the_same(tmp_path, capsys, command, reader):
    pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")
    frame = _log_frame()
    ref = _write_log(tmp_path, "csv", frame, name="ref")
    flags = ["--pos-label", "yes", "--ignore", "id", "--time", "ts"]
    code, _, err, rows, ref_number = _cli(capsys, tmp_path, command, ref, *flags)
    assert code == 0, err
    log = _write_log(tmp_path, reader, frame)
    code, _, err, rows, number = _cli(capsys, tmp_path, command, log, *flags)
    assert code == 0, err
    assert rows == N_LOG  # never half a mixed folder
    np.testing.assert_allclose(number, ref_number, rtol=1e-12)


# (flags, report's status and message, monitor's status and message); "ok" means status 0
FLAG_TABLE = [
    (["--pos-label", "yes", "--ignore", "id", "--time", "ts"], "ok", "ok"),
    (["--pos-label", "yes", "--ignore", "id", "--ignore", "ts"], "ok", "ok"),
    (["--pos-label", "yes", "--labels", "no,yes", "--ignore", "id", "--time", "ts"], "ok", "ok"),
    (["--pos-label", "yes", "--ignore", "id", "--time", "ts", "--model", "b"], "ok", "ok"),
    (
        ["--pos-label", "yes", "--ignore", "id", "--time", "ts", "--model", "a,b"],
        "ok",
        "--model: a monitor watches one model; got 2: a, b",
    ),
    (
        ["--pos-label", "yes", "--ignore", "id", "--time", "ts", "--model", "a", "--model", "b"],
        "ok",
        "--model: a monitor watches one model; got 2: a, b",
    ),
    (["--pos-label", "yes", "--ignore", "id", "--time", "ts", "--model", "zz"], "--model", "--model zz"),
    (["--pos-label", "yes", "--ignore", "zz", "--time", "ts"], "--ignore: ", "--ignore: "),
    (["--pos-label", "yes", "--ignore", "id", "--time", "zz"], "--time: ", "--time: "),
    (["--pos-label", "yes", "--label", "target"], "--label target", "--label: "),
    (["--ignore", "id", "--time", "ts"], "pass --pos-label VALUE", "pass --pos-label VALUE"),
    (
        ["--labels", "no,yes", "--ignore", "id", "--time", "ts"],
        "pass --pos-label VALUE",
        "pass --pos-label VALUE",
    ),
    (
        ["--pos-label", "no", "--labels", "no,maybe", "--ignore", "id", "--time", "ts"],
        "holds 'yes', which is not one of --labels no,maybe",
        "holds 'yes', which is not one of --labels no,maybe",
    ),
    (
        ["--pos-label", "maybe", "--ignore", "id", "--time", "ts"],
        "--pos-label 'maybe' is not a label in column 'y'",
        "--pos-label 'maybe' is not a label in column 'y'",
    ),
    (
        ["--pos-label", "yes", "--ignore", "id"],
        "give it with --time ts",
        "ok",
    ),  # the monitor reads y and a only
    (["--pos-label", "yes", "--time", "ts"], "skip it with --ignore id", "ok"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flags, report, monitor", FLAG_TABLE, ids=[" ".join(f[0]) for f in FLAG_TABLE])
def test_convention_each_flag_means_the_same_in_both_commands(
    tmp_path, capsys, command, flags, report, monitor
):
    log = _write_log(tmp_path, "csv", _log_frame())
    expect = report if command == "report" else monitor
    code, _, err, rows, _ = _cli(capsys, tmp_path, command, log, *flags)
    if expect == "ok":  # (the monitor may alarm on model b, 0.1 above the truth)
        assert code in ((0,) if command == "report" else (0, 1)) and rows == N_LOG, err
    else:
        assert code == 2 and err.startswith(f"skcal {command}: error: ") and expect in err, err
        _assert_cli_words(err)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("values", [("0", "1"), ("-1", "1"), ("false", "true"), ("0.0", "1.0")])
def test_convention_the_same_labels_need_no_pos_label_in_both_commands(tmp_path, capsys, command, values):
    log = _write_log(tmp_path, "csv", _log_frame(values=values))
    code, _, err, rows, _ = _cli(capsys, tmp_path, command, log, "--ignore", "id", "--time", "ts")
    assert code == 0 and rows == N_LOG, err


def _truncated_gzip(tmp_path):
    import gzip

    raw = gzip.compress(_log_frame().to_csv(index=False).encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(raw[: len(raw) // 2])
    return path


def _corrupt_parquet(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 64)
    return path


def _folder_with(tmp_path, make_bad):
    folder = tmp_path / "logs"
    folder.mkdir()
    _log_frame().to_csv(folder / "2024-06-01.csv", index=False)
    bad = make_bad(folder)
    return folder, bad


CORRUPT = {
    "truncated gzip": lambda t: (_truncated_gzip(t),) * 2,
    "corrupt parquet": lambda t: (_corrupt_parquet(t),) * 2,
    "truncated gzip in a folder": lambda t: _folder_with(t, _truncated_gzip),
    "corrupt parquet in a folder": lambda t: _folder_with(t, _corrupt_parquet),
    "other columns in a folder": lambda t: _folder_with(
        t,
        lambda d: (
            _log_frame().drop(columns="b").to_csv(d / "2024-06-02.csv", index=False),
            d / "2024-06-02.csv",
        )[1],
    ),
    "an empty file": lambda t: _folder_with(
        t, lambda d: ((d / "2024-06-02.csv").write_text(""), d / "2024-06-02.csv")[1]
    ),
    "no such file": lambda t: (t / "absent.csv",) * 2,
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_convention_corrupt_files_are_named_with_status_2(tmp_path, capsys, command, case):
    if "parquet" in case:
        pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")
    log, bad = CORRUPT[case](tmp_path)
    code, out, err, _, _ = _cli(
        capsys, tmp_path, command, log, "--pos-label", "yes", "--ignore", "id", "--time", "ts"
    )
    assert code == 2 and str(bad) in err, err
    _assert_cli_words(err)


@pytest.mark.parametrize("command", COMMANDS)
def test_convention_an_internal_error_is_status_3_with_its_traceback(tmp_path, capsys, command, monkeypatch):
    import skcal.monitor._monitor as mm
    import skcal.report._report as rr

    def boom(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(rr.CalibrationReport, "from_predictions", classmethod(boom))
    monkeypatch.setattr(mm.CalibrationMonitor, "update", boom)
    log = _write_log(tmp_path, "csv", _log_frame())
    code, _, err, _, _ = _cli(
        capsys, tmp_path, command, log, "--pos-label", "yes", "--ignore", "id", "--time", "ts"
    )
    assert code == 3
    assert "Traceback" in err and "RuntimeError: a bug" in err and "internal error (exit status 3)" in err


def test_report_fewer_rows_than_a_report_needs(tmp_path, capsys):
    path = _write(tmp_path, "y,a\n1,0.9\n0,0.2\n")
    assert main(["report", path, "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "2 rows; a report needs at least 10" in err and "Traceback" not in err
    rows = "\n".join(f"{i % 2},{0.3 + 0.04 * i:.2f}" for i in range(12))
    path = _write(tmp_path, f"y,a\n{rows}\n", name="twelve.csv")
    assert main(["report", path, "--n-bins", "20", "--out", str(tmp_path / "r.html")]) == 2
    assert "a report needs at least 20" in capsys.readouterr().err


def test_the_help_examples_run_as_written(tmp_path, capsys, monkeypatch):
    """Every example of both --help texts: its file is written as shown and its commands exit 0."""
    import shlex

    monkeypatch.chdir(tmp_path)
    ran = 0
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        example = capsys.readouterr().out.split("\nexample: ", 1)[1].splitlines()
        target = tmp_path / example[0].rsplit("a file ", 1)[1].strip()  # "... a file NAME"
        cells = [ln.strip() for ln in example[1:] if ln.strip() and not ln.strip().startswith("$")]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(cells) + "\n")
        for ln in example[1:]:
            if ln.strip().startswith("$ skcal "):
                code = main(shlex.split(ln.strip()[len("$ skcal ") :]))
                _, err = capsys.readouterr()
                assert code == 0, (ln, err)
                ran += 1
    assert ran >= 3


# ----------------------------------------------------------------------------------------------
# --fail-on: a report that fails a CI step
# ----------------------------------------------------------------------------------------------
def _fail_on(tmp_path, capsys, *flags, n=600):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p).astype(int)
    frame = pd.DataFrame(
        {"y": y, "honest": p, "close": np.clip(p + 0.005, 0, 1), "off": np.clip(p + 0.25, 0, 1)}
    )
    path = tmp_path / "val.csv"
    frame.to_csv(path, index=False)
    argv = [
        "report",
        str(path),
        "--out",
        str(tmp_path / "r.json"),
        "--format",
        "json",
        "--n-resamples",
        "200",
    ]
    code = main([*argv, "--n-bootstrap", "100", "-q", *flags])
    return code, capsys.readouterr()


def test_fail_on_miscalibrated(tmp_path, capsys):
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "miscalibrated")
    assert code == 1 and "--fail-on miscalibrated holds: off (p = " in printed.err
    assert "fails the calibration test at the 5% level" in printed.err and "honest" not in printed.err
    assert (tmp_path / "r.json").exists() and "honest" in printed.out  # the report is written all the same
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "miscalibrated", "--model", "honest,close")
    assert code == 0 and "--fail-on" not in printed.err


def test_fail_on_worse_than_a_baseline(tmp_path, capsys):
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "worse-than=honest")
    assert code == 1 and "--fail-on worse-than=honest holds: off is worse (smECE" in printed.err
    assert "close is worse" not in printed.err  # a difference the bootstrap cannot tell from zero passes
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "worse-than=off")
    assert code == 0, printed.err
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "worse-than=off", "--n-bootstrap", "0")
    assert code == 0  # without the bootstrap, the values
    code, printed = _fail_on(tmp_path, capsys, "--fail-on", "worse-than=honest", "--primary", "brier")
    assert code == 1 and "off is worse (Brier" in printed.err  # the report's primary measure


@pytest.mark.parametrize(
    "flags, match",
    [
        (["--fail-on", "worse-than=nope"], "--fail-on worse-than=nope: the report has no model 'nope'"),
        (
            ["--fail-on", "miscalibrated", "--n-resamples", "0"],
            "--fail-on miscalibrated needs the calibration",
        ),
    ],
)
def test_fail_on_usage_errors_exit_2(tmp_path, capsys, flags, match):
    code, printed = _fail_on(tmp_path, capsys, *flags)
    assert code == 2 and match in printed.err


def test_fail_on_bad_condition_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "x.csv"), "--fail-on", "slow"])
    assert exc.value.code == 2 and "expected 'miscalibrated' or 'worse-than=NAME'" in capsys.readouterr().err
