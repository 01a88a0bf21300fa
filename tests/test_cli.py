"""The skcal command line: the CSV convention, its errors, the demo, and ``python -m skcal``."""

import json
import os
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
    assert "give PREDICTIONS.csv (or --demo" in capsys.readouterr().err
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
    assert "CSV column convention" in out and "NAME:sigma2" in out and "--pos-label" in out


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
    with pytest.raises(CSVFormatError, match="--models names models that are not in the file: \\['nope'\\]"):
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
    assert "NAME[CLASS]" in out and "--format" in out and "--models" in out


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
