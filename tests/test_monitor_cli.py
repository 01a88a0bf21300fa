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
from skcal.monitor import DEFAULT_TOLERANCE, CalibrationMonitor

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


def test_the_status_line_prints_times_to_the_minute_and_progress_per_file(tmp_path, capsys):
    df = _log(shift_from=10_000)
    df["ts"] = (pd.to_datetime(df["ts"]) + pd.Timedelta("17.123456789s")).astype(str)  # sub-second times
    logs = _folder(tmp_path, df, parts=2)
    code = main(["monitor", str(logs), "--time", "ts", "--out", str(tmp_path / "page.html")])
    out, err = capsys.readouterr()
    assert code == 1
    times = re.findall(r"\((\d{4}-\d\d-\d\d[^)]*)\)", out)
    assert len(times) == 2 and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", t) for t in times), out
    assert "15,000 new rows (15,000 in this run)" in err and "15,000 new rows (30,000 in this run)" in err


def test_csv_and_parquet_give_the_same_monitor(tmp_path, capsys):
    df = _log(shift_from=15_000, shift=0.03)
    df.to_csv(tmp_path / "log.csv", index=False)
    folder = _folder(tmp_path, df)
    a = _run(capsys, tmp_path / "log.csv", "--time", "ts", "--out", tmp_path / "a.json", "--format", "json")
    b = _run(capsys, folder, "--time", "ts", "--out", tmp_path / "b.json", "--format", "json")
    assert a[0] == b[0] and a[1] == b[1]
    status = json.loads(a[1])
    assert set(status) >= {
        "rows",
        "e_value",
        "pvalue",
        "alarm",
        "alarm_at",
        "change_at",
        "alarm_time",
        "calibration_error_lcb",
        "tolerance",
    }
    doc = json.loads((tmp_path / "a.json").read_text())
    blocks = 30_000 // CalibrationMonitor().block_size
    assert doc["schema"] == "skcal.monitor/2" and len(doc["history"]) == blocks
    assert doc["segments"][0]["first_row"] == 0
    assert {"rows", "e_value", "p_value", "ece", "time_end"} <= set(doc["history"][0])


def test_state_resumes_where_the_last_run_stopped(tmp_path, capsys):
    df = _log(shift_from=20_000, shift=0.04)
    whole = CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(
        df["y"], df["model"], time=pd.to_datetime(df["ts"])
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    df.iloc[:12_345].to_csv(logs / "2024-01-01.csv", index=False)
    state, page = tmp_path / "state.json", tmp_path / "m.html"
    code1, _, _ = _run(capsys, logs, "--time", "ts", "--state", state, "--out", page)
    assert code1 == 0 and state.exists()
    saved = state.read_text()
    # other parameters than the state's: exit 2 naming both, and the state is left as it was
    code, _, err = _run(capsys, logs, "--time", "ts", "--state", state, "--alpha", "0.01")
    assert code == 2 and "--alpha 0.05 in the state, --alpha 0.01 in this run" in err
    assert state.read_text() == saved
    df.iloc[12_345:].to_csv(logs / "2024-01-02.csv", index=False)  # the next night's file
    code2, out, _ = _run(capsys, logs, "--time", "ts", "--state", state, "--out", page)
    resumed = CalibrationMonitor.from_state(json.loads(state.read_text()))
    assert code2 == int(whole.alarm_) == 1
    assert resumed.n_seen_ == len(df)
    assert np.array_equal(resumed._block("log_e"), whole._block("log_e"))
    assert f"ALARM at row {whole.alarm_at_:,}" in out


@pytest.mark.parametrize(
    "make, extra, match",
    [
        (lambda df: df.drop(columns="y"), [], "--label: .*log.csv has no column 'y'"),
        (lambda df: df.assign(other=df["model"]), [], "2 models"),
        (
            lambda df: df.assign(y=df["y"].where(df.index != 5, 3)),
            [],
            r"holds 3 classes \['0', '1', '3'\] \(e.g. '3' first at .*log.csv: line 7\)",
        ),
        (
            lambda df: df.assign(model=df["model"].where(df.index != 7, 1.5)),
            [],
            r"log.csv: column 'model' must hold probabilities in \[0, 1\]; line 9 holds 1.5",
        ),
        (
            lambda df: df.assign(model=df["model"].where(df.index != 7, np.nan)),
            [],
            "column 'model' has 1 empty or NaN cells \\(first at line 9\\)",
        ),
        (lambda df: df.iloc[::-1], [], "log.csv: time column goes backwards at line 3"),
        (lambda df: df, ["--time", "when"], "--time: .*log.csv has no column 'when'"),
        (lambda df: df, ["--model", "model,other"], "a monitor watches one model; got 2"),
        (lambda df: df.assign(y=np.where(df["y"] == 1, "spam", "ham")), [], "pass --pos-label VALUE"),
        (
            lambda df: df.assign(y=np.where(df["y"] == 1, "spam", "ham")),
            ["--labels", "ham,spam"],
            "pass --pos-label VALUE",
        ),
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
    for extra, multiclass in (([], "top-label"), (["--classwise"], "classwise")):
        out_file = tmp_path / f"{multiclass}.json"
        argv = [tmp_path / "mc.csv", "--ignore", "id", "--format", "json", "--out", out_file, *extra]
        code, out, _ = _run(capsys, *argv)
        assert code == 0
        expected = CalibrationMonitor(
            labels=list(names), multiclass=multiclass, tolerance=DEFAULT_TOLERANCE
        ).update(names[y], P)
        assert json.loads(out)["log10_evidence"] == pytest.approx(expected.log10_evidence_, rel=1e-12)


def test_detect_mode_and_named_binary_labels(tmp_path, capsys):
    df = _log(n=60_000, shift_from=40_000, shift=0.1)
    df["y"] = np.where(df["y"] == 1, "spam", "ham")
    df.to_csv(tmp_path / "log.csv", index=False)
    code, out, _ = _run(
        capsys,
        tmp_path / "log.csv",
        "--time",
        "ts",
        "--pos-label",
        "spam",
        "--mode",
        "detect",
        "--alpha",
        "0.001",
        "--out",
        tmp_path / "d.html",
    )
    assert code == 1 and "the calibration error changed to exceed the tolerance 0" in out
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


# ----------------------------------------------------------------------------------------------
# a nightly job that cannot double-count or get stuck (issue 38, item 3)
# ----------------------------------------------------------------------------------------------
def _night(folder, df, day, fmt="csv", **kw):
    """Write one night's rows as a file of the folder."""
    path = folder / f"2024-01-{day:02d}.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False, **kw)
    else:
        df.to_parquet(path, index=False)
    return path


def _nightly(capsys, logs, state, *extra, fmt="json"):
    out = logs.parent / f"monitor.{fmt}"
    return _run(capsys, logs, "--state", state, "--format", fmt, "--out", out, *extra)


@pytest.mark.parametrize("time", [True, False], ids=["with --time", "without --time"])
def test_the_same_folder_twice_reads_nothing_new_and_a_grown_one_only_the_new_file(tmp_path, capsys, time):
    df = _log(n=9_000)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    extra = ["--time", "ts"] if time else ["--ignore", "ts"]
    _night(logs, df.iloc[:3_000], 1)
    code, out, _ = _nightly(capsys, logs, state, *extra)
    assert code == 0 and json.loads(out)["rows"] == 3_000
    for _ in range(2):  # the same command again, twice: nothing new, never a row twice
        code, out, _ = _nightly(capsys, logs, state, *extra)
        status = json.loads(out)
        assert code == 0 and status["rows"] == 3_000 and status["note"].startswith("no new rows in ")
    _night(logs, df.iloc[3_000:5_000], 2)
    _night(logs, df.iloc[5_000:9_000], 3)
    code, out, _ = _nightly(capsys, logs, state, *extra)
    assert code == 0 and json.loads(out)["rows"] == 9_000
    whole = CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(
        df["y"], df["model"], time=pd.to_datetime(df["ts"]) if time else None
    )
    resumed = CalibrationMonitor.from_state(json.loads(state.read_text()))
    assert np.array_equal(resumed._block("log_e"), whole._block("log_e"))
    files = resumed.source_["files"]
    assert sorted(files) == ["2024-01-01.csv", "2024-01-02.csv", "2024-01-03.csv"]
    assert [files[k]["rows"] for k in sorted(files)] == [3_000, 2_000, 4_000]


def test_equal_timestamps_one_per_day_are_allowed_across_nights(tmp_path, capsys):
    df = _log(n=6_000)
    df["ts"] = np.repeat(["2024-01-01", "2024-01-02", "2024-01-02"], 2_000)  # one timestamp per day
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, df.iloc[:4_000], 1)  # day 1 and half of day 2
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0
    source = json.loads(state.read_text())["source"]
    assert source["time"] == {"column": "ts", "last": "2024-01-02T00:00:00", "rows_at_last": 2_000}
    _night(logs, df.iloc[4_000:], 2)  # the rest of day 2: the same timestamp, new rows
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 0 and json.loads(out)["rows"] == 6_000
    assert json.loads(state.read_text())["source"]["time"]["rows_at_last"] == 4_000
    # an earlier time in a new file is an error naming its file and line
    _night(logs, df.iloc[:10].assign(ts="2023-12-31"), 3)
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and "2024-01-03.csv: time column goes backwards at line 2" in err


def test_a_file_appended_to_is_read_from_its_first_new_row(tmp_path, capsys):
    df = _log(n=5_000)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    path = _night(logs, df.iloc[:2_000], 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0
    df.iloc[2_000:].to_csv(path, index=False, header=False, mode="a")  # a logger appends
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 0 and json.loads(out)["rows"] == 5_000
    whole = CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(
        df["y"], df["model"], time=pd.to_datetime(df["ts"])
    )
    resumed = CalibrationMonitor.from_state(json.loads(state.read_text()))
    assert np.array_equal(resumed._block("log_e"), whole._block("log_e"))


@pytest.mark.parametrize("change", ["rewritten", "truncated", "prefix changed"])
def test_a_changed_file_that_was_read_is_an_error_naming_it(tmp_path, capsys, change):
    df = _log(n=4_000)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    path = _night(logs, df.iloc[:2_000], 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0
    saved = state.read_text()
    text = path.read_text()
    if change == "rewritten":  # the same size, other labels
        path.write_text(text.replace(",1,", ",7,", 1).replace(",0,", ",1,", 1).replace(",7,", ",0,", 1))
        os.utime(path, ns=(0, 0))
    elif change == "truncated":
        path.write_text(text[: len(text) // 2])
    else:
        path.write_text(text.replace(",1,", ",0,", 1) + text[-200:])
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and f"{path}: this file was read by an earlier run (2,000 rows" in err, err
    assert "remove the state file" in err and state.read_text() == saved


def test_an_empty_night_exits_0_and_says_no_new_rows(tmp_path, capsys):
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, _log(n=3_000), 1)
    assert _nightly(capsys, logs, state, "--time", "ts", fmt="html")[0] == 0
    _night(logs, _log(n=3_000).iloc[:0], 2)  # a file with a header and no rows
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts", fmt="html")
    assert code == 0 and out.startswith(f"skcal monitor: no new rows in {logs}") and "no alarm" in out
    assert (tmp_path / "monitor.html").exists()


def test_after_an_alarm_every_run_says_so_until_reset(tmp_path, capsys):
    bad = _log(n=8_000, shift_from=0, shift=0.15)
    good = _log(n=8_000, seed=1)
    good["ts"] = pd.date_range("2024-02-01", periods=8_000, freq="min").astype(str)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, bad, 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 1
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 1  # an empty night: the alarm stays up
    _night(logs, good, 2)  # after retraining
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 1  # the segment that alarmed goes on
    code, _, _ = _run(capsys, logs, "--time", "ts", "--reset", "--out", tmp_path / "m.html")
    assert code == 2  # --reset needs the state
    # the state of the night before the good file, then --reset: a new segment for the good rows
    state.unlink()
    (logs / "2024-01-02.csv").rename(tmp_path / "later.csv")
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 1
    (tmp_path / "later.csv").rename(logs / "2024-01-02.csv")
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts", "--reset")
    status = json.loads(out)
    assert code == 0 and status["segment"] == 1 and status["segment_label"].startswith("--reset at row 8,000")
    assert not status["alarm"] and status["rows"] == 16_000
    segments = json.loads((tmp_path / "monitor.json").read_text())["segments"]
    assert len(segments) == 2 and segments[0]["alarm_at"] is not None  # the history is kept
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0  # and the next night is quiet


def test_a_model_version_column_starts_a_segment_at_each_new_value(tmp_path, capsys):
    bad = _log(n=6_000, shift_from=0, shift=0.15).assign(version="v1")
    good = _log(n=6_000, seed=2).assign(version="v2")
    good["ts"] = pd.date_range("2024-02-01", periods=6_000, freq="min").astype(str)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, pd.concat([bad, good.iloc[:3_000]]), 1)
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts", "--segment", "version")
    status = json.loads(out)
    assert code == 0 and status["segment"] == 1 and status["segment_label"] == "version=v2"
    _night(logs, good.iloc[3_000:], 2)  # the same version goes on: the same segment
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts", "--segment", "version")
    assert code == 0 and json.loads(out)["segment"] == 1
    segments = json.loads((tmp_path / "monitor.json").read_text())["segments"]
    assert [s["label"] for s in segments] == ["version=v1", "version=v2"]
    assert segments[0]["alarm_at"] is not None


_BASE = ["--time", "ts", "--model", "model"]


@pytest.mark.parametrize(
    "then, match",
    [
        (["--time", "ts", "--model", "other"], "--model model in the state, --model other in this run"),
        ([*_BASE, "--tolerance", "0.05"], "--tolerance 0.02 in the state, --tolerance 0.05 in this run"),
        ([*_BASE, "--mode", "detect"], "--mode test in the state, --mode detect in this run"),
        ([*_BASE, "--label", "z"], "--label y in the state, --label z in this run"),
        (["--model", "model", "--ignore", "ts"], "--time ts in the state, no --time in this run"),
        ([*_BASE, "--pos-label", "no"], "--pos-label yes in the state, --pos-label no in this run"),
    ],
)
def test_a_run_that_watches_something_else_than_its_state_is_an_error_naming_both(
    tmp_path, capsys, then, match
):
    df = _log(n=3_000).assign(other=lambda d: d["model"])
    df["y"] = np.where(df["y"] == 1, "yes", "no")
    df["z"] = df["y"]
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, df, 1)
    code, _, err = _nightly(capsys, logs, state, *_BASE, "--tolerance", "0.02", "--pos-label", "yes")
    assert code == 0, err
    saved = state.read_text()
    code, _, err = _nightly(capsys, logs, state, *then)
    assert code == 2 and match in err and f"--state {state}" in err, err
    assert state.read_text() == saved
    # without the flags the state's are used: the same run again reads nothing new, exit 0
    assert _nightly(capsys, logs, state, *_BASE)[0] == 0


def test_every_exit_status(tmp_path, capsys, monkeypatch):
    import gzip

    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, _log(n=3_000), 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0  # no alarm
    _night(
        logs,
        _log(n=6_000, shift_from=0, shift=0.2).assign(
            ts=lambda d: d["ts"].str.replace("2024-01-0", "2024-02-0")
        ),
        2,
    )
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 1  # the alarm
    saved = state.read_text()
    raw = gzip.compress(_log(n=100).to_csv(index=False).encode())
    (logs / "2024-03-01.csv.gz").write_bytes(raw[: len(raw) // 2])  # a truncated gzip
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and str(logs / "2024-03-01.csv.gz") in err and state.read_text() == saved
    (logs / "2024-03-01.csv.gz").unlink()
    import skcal.monitor._monitor as mm

    monkeypatch.setattr(mm.CalibrationMonitor, "status", lambda self: 1 / 0)
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 3 and "ZeroDivisionError" in err and "internal error (exit status 3)" in err


def test_a_run_that_fails_leaves_the_state_and_no_temporary_file(tmp_path, capsys):
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, _log(n=3_000), 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0
    saved = state.read_text()
    later = _log(n=3_000)
    later["ts"] = pd.date_range("2024-02-01", periods=3_000, freq="min").astype(str)
    _night(logs, later, 2)
    bad = later.copy()
    bad["ts"] = pd.date_range("2024-03-01", periods=3_000, freq="min").astype(str)
    bad.loc[2_500, "model"] = 1.5  # the second new file is bad after its first rows were fed
    _night(logs, bad, 3)
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and "2024-01-03.csv: column 'model' must hold probabilities" in err
    assert state.read_text() == saved
    assert not [p for p in tmp_path.iterdir() if ".skcal-tmp-" in p.name]


def test_prometheus_format_for_the_textfile_collector(tmp_path, capsys):
    parser = pytest.importorskip("prometheus_client.parser")
    logs = tmp_path / "logs"
    logs.mkdir()
    _night(logs, _log(n=6_000, shift_from=2_000, shift=0.15), 1)
    out = tmp_path / "skcal.prom"
    code, line, _ = _run(
        capsys, logs, "--time", "ts", "--tolerance", "0.02", "--format", "prometheus", "--out", out
    )
    assert code == 1 and line.startswith("skcal monitor: ALARM")
    families = {f.name: f for f in parser.text_string_to_metric_families(out.read_text())}
    for name in ("calibration_error_lcb", "log10_evidence", "alarm", "rows_seen", "last_time_seconds"):
        sample = families[f"skcal_monitor_{name}"].samples[0]
        assert sample.labels == {"model": "model"}
    assert families["skcal_monitor_alarm"].samples[0].value == 1.0
    assert families["skcal_monitor_rows_seen"].samples[0].value == 6_000
    assert families["skcal_monitor_calibration_error_lcb"].samples[0].value > 0.02


def test_tolerance_and_false_alarm_flags(tmp_path, capsys):
    df = _log(n=20_000, shift_from=0, shift=0.02)  # off by two points
    df.to_csv(tmp_path / "log.csv", index=False)
    args = [tmp_path / "log.csv", "--time", "ts", "--format", "json", "--out", tmp_path / "m.json"]
    code, out, _ = _run(capsys, *args)
    assert code == 1 and json.loads(out)["tolerance"] == DEFAULT_TOLERANCE == 0.01  # the default
    code, out, _ = _run(capsys, *args, "--tolerance", "0")
    assert code == 1 and json.loads(out)["tolerance"] == 0  # the exact test alarms
    code, out, _ = _run(capsys, *args, "--tolerance", "0.05")
    assert code == 0 and json.loads(out)["tolerance"] == 0.05  # within a tolerance of 0.05
    code, out, _ = _run(capsys, *args, "--mode", "detect", "--false-alarm-every", "1e8rows")
    assert json.loads(out)["false_alarm_rows"] == pytest.approx(1e8, rel=1e-9)
    # 20,000 rows over 13.9 days: a year is 365 / 13.9 times the rows
    code, out, _ = _run(capsys, *args, "--mode", "detect", "--false-alarm-every", "365d")
    days = (20_000 - 1) / (24 * 60)
    assert json.loads(out)["false_alarm_rows"] == pytest.approx(365 * 20_000 / days, rel=1e-6)
    for extra, match in (
        (["--false-alarm-every", "1e8rows"], "--false-alarm-every is for --mode detect"),
        (["--mode", "detect", "--false-alarm-every", "soon"], "expected a number of rows"),
    ):
        try:
            code, _, err = _run(capsys, *args, *extra)
        except SystemExit as exc:  # argparse's own usage error
            code, err = exc.code, capsys.readouterr().err
        assert code == 2 and match in err, err
    code, _, err = _run(
        capsys, tmp_path / "log.csv", "--ignore", "ts", "--mode", "detect", "--false-alarm-every", "365d"
    )
    assert code == 2 and "a time span needs a datetime --time column" in err


def test_a_state_saved_by_a_program_is_not_resumed(tmp_path, capsys):
    df = _log(n=3_000)
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, df, 1)
    monitor = CalibrationMonitor().update(df["y"], df["model"])
    state.write_text(json.dumps(monitor.get_state()))
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and "a monitor saved by a program" in err and "count rows twice" in err


def test_a_corrupt_parquet_file_exits_2_naming_it_and_keeps_the_state(tmp_path, capsys):
    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, _log(n=3_000), 1, fmt="parquet")
    assert _nightly(capsys, logs, state, "--ignore", "ts")[0] == 0
    saved = state.read_text()
    cut = _night(logs, _log(n=1_000), 2, fmt="parquet")
    cut.write_bytes(cut.read_bytes()[:-100])  # a parquet file cut short (its footer lost)
    code, out, err = _nightly(capsys, logs, state, "--ignore", "ts")
    assert code == 2 and "2024-01-02.parquet" in err and out == ""
    assert state.read_text() == saved


def test_an_interrupted_state_write_keeps_the_old_state_and_no_temporary(tmp_path, capsys, monkeypatch):
    import skcal._io as io_module

    logs, state = tmp_path / "logs", tmp_path / "state.json"
    logs.mkdir()
    _night(logs, _log(n=3_000), 1)
    assert _nightly(capsys, logs, state, "--time", "ts")[0] == 0
    saved = state.read_text()
    _night(logs, _log(n=3_000).assign(ts=lambda d: d["ts"].str.replace("2024-01-0", "2024-02-0")), 2)
    real_replace = io_module.os.replace

    def replace(src, dst):
        if Path(dst) == state:
            raise OSError(28, "No space left on device", str(dst))  # after its temporary is written
        return real_replace(src, dst)

    monkeypatch.setattr(io_module.os, "replace", replace)
    code, _, err = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 2 and f"{state} No space left on device" in err  # an output error, never the alarm's 1
    assert state.read_text() == saved
    assert not [p for p in tmp_path.iterdir() if ".skcal-tmp-" in p.name]
    monkeypatch.setattr(io_module.os, "replace", real_replace)
    # a killed run's temporary beside the state is removed by the next run, which reads the rows
    (tmp_path / ".state.json.skcal-tmp-0123456789ab").write_text("left by a killed run")
    code, out, _ = _nightly(capsys, logs, state, "--time", "ts")
    assert code == 0 and json.loads(out)["rows"] == 6_000
    assert not [p for p in tmp_path.iterdir() if ".skcal-tmp-" in p.name]
    umask = os.umask(0o022)
    os.umask(umask)
    for written in (state, tmp_path / "monitor.json"):  # the permissions of any new file
        assert written.stat().st_mode & 0o777 == 0o666 & ~umask
