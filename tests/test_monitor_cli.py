"""``skcal monitor``: exit statuses, the status line, --state, --format json, bad input."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skcal.cli import main
from skcal.monitor import CalibrationMonitor

pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")
ROOT = Path(__file__).resolve().parents[1]


def _log(n=30_000, shift_from=None, shift=0.08, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    q = p.copy()
    if shift_from is not None:
        q[shift_from:] = np.clip(p[shift_from:] + shift, 0, 1)
    y = (rng.uniform(size=n) < q).astype(int)
    t = pd.date_range("2024-01-01", periods=n, freq="min")
    return pd.DataFrame({"ts": t.astype(str), "y": y, "model": p})


def _folder(tmp_path, df, parts=3, name="logs"):
    d = tmp_path / name
    d.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), parts)):
        frame = df.iloc[part].copy()
        frame["ts"] = pd.to_datetime(frame["ts"])
        frame.to_parquet(d / f"day-{i:02d}.parquet", index=False)
    return d


def _run(capsys, *argv):
    code = main(["monitor", *map(str, argv), "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrated_log_exits_0_and_a_miscalibrated_one_exits_1(tmp_path, capsys):
    ok = _folder(tmp_path, _log())
    code, out, _ = _run(capsys, ok, "--time", "ts", "--out", tmp_path / "ok.html")
    assert code == 0 and out.startswith("skcal monitor: no alarm") and out.count("\n") == 1
    assert (tmp_path / "ok.html").read_text().startswith("<!DOCTYPE html>")
    bad = tmp_path / "bad.csv"
    _log(shift_from=10_000).to_csv(bad, index=False)
    code, out, _ = _run(capsys, bad, "--time", "ts", "--out", tmp_path / "bad.html")
    assert code == 1 and out.startswith("skcal monitor: ALARM at row ") and "estimated change at row" in out
    assert "2024-01-" in out  # the alarm's time


def test_csv_and_parquet_give_the_same_monitor(tmp_path, capsys):
    df = _log(shift_from=15_000, shift=0.03)
    df.to_csv(tmp_path / "log.csv", index=False)
    folder = _folder(tmp_path, df)
    a = _run(capsys, tmp_path / "log.csv", "--time", "ts", "--out", tmp_path / "a.json", "--format", "json")
    b = _run(capsys, folder, "--time", "ts", "--out", tmp_path / "b.json", "--format", "json")
    assert a[0] == b[0] and a[1] == b[1]
    status = json.loads(a[1])
    assert set(status) >= {"rows", "e_value", "pvalue", "alarm", "alarm_at", "change_at", "alarm_time"}
    doc = json.loads((tmp_path / "a.json").read_text())
    blocks = 30_000 // CalibrationMonitor().block_size
    assert doc["schema"] == "skcal.monitor/1" and len(doc["history"]) == blocks
    assert {"rows", "e_value", "p_value", "ece", "time_end"} <= set(doc["history"][0])


def test_state_resumes_where_the_last_run_stopped(tmp_path, capsys):
    df = _log(shift_from=20_000, shift=0.04)
    whole = CalibrationMonitor().update(df["y"], df["model"], time=pd.to_datetime(df["ts"]))
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    df.iloc[:12_345].to_csv(first, index=False)
    df.iloc[12_345:].to_csv(second, index=False)
    state = tmp_path / "state.json"
    code1, _, _ = _run(capsys, first, "--time", "ts", "--state", state, "--out", tmp_path / "m.html")
    assert code1 == 0 and state.exists()
    saved = state.read_text()
    # the same rows again go backwards in time: exit 2, and the state file is left as it was
    code, _, err = _run(capsys, first, "--time", "ts", "--state", state, "--out", tmp_path / "m.html")
    assert code == 2 and "time goes backwards" in err and state.read_text() == saved
    # other parameters than the state's: exit 2
    code, _, err = _run(capsys, second, "--time", "ts", "--state", state, "--alpha", "0.01")
    assert code == 2 and "--alpha 0.01 (the state has 0.05)" in err
    code2, out, _ = _run(capsys, second, "--time", "ts", "--state", state, "--out", tmp_path / "m.html")
    resumed = CalibrationMonitor.from_state(json.loads(state.read_text()))
    assert code2 == int(whole.alarm_) == 1
    assert np.array_equal(resumed._block("log_e"), whole._block("log_e"))
    assert f"ALARM at row {whole.alarm_at_:,}" in out


@pytest.mark.parametrize(
    "make, extra, match",
    [
        (lambda df: df.drop(columns="y"), [], "no label column 'y'"),
        (lambda df: df.assign(other=df["model"]), [], "2 models"),
        (lambda df: df.assign(y=df["y"].where(df.index != 5, 3)), [], "y holds labels outside"),
        (
            lambda df: df.assign(model=df["model"].where(df.index != 7, 1.5)),
            [],
            r"p must hold probabilities in \[0, 1\]",
        ),
        (
            lambda df: df.assign(model=df["model"].where(df.index != 7, np.nan)),
            [],
            "p must hold probabilities",
        ),
        (lambda df: df.iloc[::-1], [], "time goes backwards"),
        (lambda df: df, ["--time", "when"], "no time column 'when'"),
        (lambda df: df, ["--n-bins", "10"], "power of two"),
        (lambda df: df, ["--out", "/nonexistent/dir/m.html"], "does not exist"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(tmp_path, capsys, make, extra, match):
    path = tmp_path / "log.csv"
    make(_log(n=3_000)).to_csv(path, index=False)
    argv = [path, "--out", tmp_path / "m.html"]
    if "--time" not in extra:
        argv += ["--time", "ts"]
    code, out, err = _run(capsys, *argv, *extra)
    assert code == 2 and out == ""
    assert err.startswith("skcal monitor: error: ") and re.search(match, err), err


def test_usage_errors_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["monitor", str(tmp_path), "--alpha", "2"])
    assert exc.value.code == 2
    assert "expected a number in (0, 1)" in capsys.readouterr().err
    code, _, err = _run(capsys, tmp_path / "missing")
    assert code == 2 and "no such file or folder" in err


def test_multiclass_logs_top_label_and_classwise(tmp_path, capsys):
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), size=6_000)
    y = np.array([rng.choice(3, p=row) for row in P])
    names = np.array(["cat", "dog", "fox"])
    df = pd.DataFrame(
        {"y": names[y], **{f"net[{c}]": P[:, i] for i, c in enumerate(names)}, "id": np.arange(6_000)}
    )
    df.to_csv(tmp_path / "mc.csv", index=False)
    code, out, _ = _run(capsys, tmp_path / "mc.csv", "--ignore", "id", "--out", tmp_path / "a.html")
    assert code == 0
    expected = CalibrationMonitor(labels=list(names)).update(names[y], P)
    assert f"e-value {expected.e_value_:.4g}" in out
    code, out, _ = _run(
        capsys, tmp_path / "mc.csv", "--ignore", "id", "--classwise", "--out", tmp_path / "b.html"
    )
    assert code == 0
    classwise = CalibrationMonitor(labels=list(names), multiclass="classwise").update(names[y], P)
    assert f"e-value {classwise.e_value_:.4g}" in out


def test_detect_mode_and_named_binary_labels(tmp_path, capsys):
    df = _log(n=60_000, shift_from=40_000, shift=0.1)
    df["y"] = np.where(df["y"] == 1, "spam", "ham")
    df.to_csv(tmp_path / "log.csv", index=False)
    code, out, _ = _run(
        capsys,
        tmp_path / "log.csv",
        "--time",
        "ts",
        "--labels",
        "ham,spam",
        "--mode",
        "detect",
        "--alpha",
        "0.001",
        "--out",
        tmp_path / "d.html",
    )
    assert code == 1 and "e-detector reached its threshold 1e+07" in out  # 1e7 rows silent w.p. 0.999
    row = int(out.split("estimated change at row ")[1].split(" ")[0].replace(",", ""))
    assert abs(row - 40_000) <= 5_000


def test_the_installed_command_and_python_dash_m(tmp_path):
    path = tmp_path / "log.csv"
    _log(n=5_000, shift_from=0, shift=0.3).to_csv(path, index=False)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "skcal",
            "monitor",
            str(path),
            "--time",
            "ts",
            "--out",
            str(tmp_path / "m.html"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("skcal monitor: ALARM")
    helptext = subprocess.run(
        [sys.executable, "-m", "skcal", "monitor", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    ).stdout
    assert "Exit status: 0 no alarm, 1 alarm" in helptext and "--state" in helptext
