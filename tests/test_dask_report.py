"""The report past memory: from chunks read in order, from Dask partitions and from parquet.

Every out-of-core report is compared with the in-memory report on the same rows
(:meth:`CalibrationReport.from_predictions`): the values to 1e-10 relative, the intervals (the
same Poisson-bootstrap replicates, keyed by the global row index) to 1e-10 relative, and the
ranks, ``p_best``, the calibration tests, SCDL's details and the verdict equal.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from skcal.cli import main
from skcal.report import CalibrationReport, report_from_batches
from skcal.report._outofcore import OUT_OF_CORE_METRICS, OutOfCorePlan

N = 2000
SETTINGS = {"n_bootstrap": 30, "n_resamples": 100, "random_state": 3}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    p = rng.uniform(0.02, 0.98, size=N)
    y = (rng.uniform(size=N) < p).astype(int)
    preds = {"honest": p, "shifted": np.clip(p + 0.06, 0, 1), "sharp": p**1.5}
    return y, preds


@pytest.fixture(scope="module")
def reference(data):
    y, preds = data
    return CalibrationReport.from_predictions(y, preds, **SETTINGS)


def _batches(y, preds, cuts):
    def gen():
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            yield a, y[a:b], {k: v[a:b] for k, v in preds.items()}

    return gen


def assert_same_report(ref, rep, *, rtol=1e-10):
    assert rep.model_names == ref.model_names and rep.metric_names == ref.metric_names
    for field in ("value", "low", "high", "p_best"):
        a = ref.table.xs(field, axis=1, level="field").to_numpy(float)
        b = rep.table.xs(field, axis=1, level="field").to_numpy(float)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=0, err_msg=field)
    a = ref.table.xs("rank", axis=1, level="field")
    b = rep.table.xs("rank", axis=1, level="field")
    assert a.equals(b)
    np.testing.assert_allclose(rep.bootstrap_values, ref.bootstrap_values, rtol=rtol, atol=1e-15)
    pd.testing.assert_frame_equal(rep.calibration_tests, ref.calibration_tests)
    for model, d in ref.metric_details["scdl"].items():
        got = rep.metric_details["scdl"][model]
        assert (got["m*"], got["at_floor"]) == (d["m*"], d["at_floor"])
        assert got["SCDL_m*"] == pytest.approx(d["SCDL_m*"], rel=rtol)
    assert rep.verdict == ref.verdict
    assert rep.n_samples == ref.n_samples


@pytest.mark.parametrize(
    "cuts",
    [(0, N), (0, 700, 1400, N), (0, 1, 5, 600, 601, 1300, 1999, N)],
    ids=["1 chunk", "3 chunks", "7 uneven chunks"],
)
def test_batches_report_equals_the_in_memory_report(data, reference, cuts):
    y, preds = data
    rep = report_from_batches(_batches(y, preds, cuts), n_samples=N, models=list(preds), **SETTINGS)
    assert_same_report(reference, rep)
    assert "all rows" in " ".join(rep.notes)


def test_every_row_kept_gives_the_in_memory_replicates_bit_for_bit():
    """Up to ``exact_rows`` the batches' report runs the in-memory report's bootstrap on the
    kept rows with its blocks (the first one carrying the weighting of ones of the values taken
    from the replicates): the same tiles, so the same replicates bit for bit (more rows than one
    tile, where a block of another size would add in another order)."""
    rng = np.random.default_rng(12)
    n = 12_000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"a": p, "b": np.clip(p + 0.05, 0, 1)}
    kw = {"n_bootstrap": 30, "random_state": 3, "test_calibration": False}
    ref = CalibrationReport.from_predictions(y, preds, **kw)
    rep = report_from_batches(_batches(y, preds, (0, 5000, n)), n_samples=n, models=list(preds), **kw)
    np.testing.assert_array_equal(rep.bootstrap_values, ref.bootstrap_values)


def test_replicate_blocks_do_not_change_the_replicates(data, reference):
    y, preds = data
    rep = report_from_batches(
        _batches(y, preds, (0, 900, N)), n_samples=N, models=list(preds), replicate_block=7, **SETTINGS
    )
    assert_same_report(reference, rep)
    assert "6 pass(es)" in rep.notes[0]


def test_a_metric_subset_and_no_bootstrap(data):
    y, preds = data
    kw = {"metrics": ["smooth_ece", "brier"], "n_bootstrap": 0, "test_calibration": False}
    ref = CalibrationReport.from_predictions(y, preds, **kw)
    rep = report_from_batches(_batches(y, preds, (0, 500, N)), n_samples=N, models=list(preds), **kw)
    np.testing.assert_allclose(rep.table.to_numpy(float), ref.table.to_numpy(float), rtol=1e-10)
    assert rep.calibration_tests is None and rep.bootstrap_values.shape == (0, 3, 2)


def test_above_exact_rows_the_grids_hold_their_bounds_and_the_sample_is_every_kth_row(data, reference):
    y, preds = data
    rep = report_from_batches(
        _batches(y, preds, (0, 1000, N)),
        n_samples=N,
        models=list(preds),
        exact_rows=1000,
        sample_rows=500,
        **SETTINGS,
    )
    notes = " ".join(rep.notes)
    assert "every 4-th row (500 of 2000 rows)" in notes and "stated bound" in notes
    plan = OutOfCorePlan(N, list(preds), None, rep.settings, exact_rows=1000)
    for i, model in enumerate(preds):
        # the grid values are within their stated bounds of the exact (in-memory) values
        for name in ("cutoff", "smooth_calibration_error"):
            stats = plan.point_template(name).update(y, preds[model])
            exact = reference.table.loc[model, (name, "value")]
            assert abs(rep.table.loc[model, (name, "value")] - exact) <= stats.bound() + 1e-12
        # the other metrics are unchanged
        for name in ("scdl", "smooth_ece", "binned_ece", "brier"):
            assert rep.table.loc[model, (name, "value")] == pytest.approx(
                reference.table.loc[model, (name, "value")], rel=1e-10
            )
        del i
    # the tests ran on every 4th row, with the in-memory report's seeds
    sub = CalibrationReport.from_predictions(
        y[::4],
        {k: v[::4] for k, v in preds.items()},
        metrics=["brier"],
        n_bootstrap=0,
        n_resamples=100,
        random_state=3,
    )
    pd.testing.assert_frame_equal(rep.calibration_tests, sub.calibration_tests)


def test_the_report_writes_html_with_its_figures(data, tmp_path):
    pytest.importorskip("matplotlib")
    y, preds = data
    rep = report_from_batches(_batches(y, preds, (0, 1000, N)), n_samples=N, models=list(preds), **SETTINGS)
    page = rep.to_html(tmp_path / "r.html")
    text = (tmp_path / "r.html").read_text()
    assert page and "Reliability diagrams" in text and "data:image/png;base64" in text
    assert "Computed out of core" in text


def test_bad_input_names_the_argument(data):
    y, preds = data
    gen = _batches(y, preds, (0, 1000, N))
    with pytest.raises(ValueError, match="metrics: 'roc_auc' is not available out of core"):
        report_from_batches(gen, n_samples=N, models=list(preds), metrics=["roc_auc"])
    with pytest.raises(ValueError, match="models: no prediction column 'nope'"):
        report_from_batches(gen, n_samples=N, models=["nope"], n_bootstrap=2)
    with pytest.raises(ValueError, match="held 2000 rows in the report's pass, but 2500"):
        report_from_batches(gen, n_samples=2500, models=list(preds), n_bootstrap=2, test_calibration=False)
    with pytest.raises(ValueError, match="the data hold no rows"):
        report_from_batches(lambda: iter(()), n_samples=0, models=["a"])
    with pytest.raises(ValueError, match="batches"):
        report_from_batches([1, 2], n_samples=N, models=["a"])
    with pytest.raises(ValueError, match="n_bootstrap"):
        report_from_batches(gen, n_samples=N, models=["a"], n_bootstrap=-1)
    with pytest.raises(ValueError, match="predictions|column 'honest'|y_prob|range"):
        bad = {k: v * 2 for k, v in preds.items()}
        report_from_batches(_batches(y, bad, (0, N)), n_samples=N, models=list(bad), n_bootstrap=2)


def test_out_of_core_metrics_are_the_first_order_defaults():
    from skcal.report._kinds import FirstOrderKind

    assert tuple(FirstOrderKind.default_metrics) == OUT_OF_CORE_METRICS


# ---------------------------------------------------------------------------------------------
# Dask
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dd():
    return pytest.importorskip("dask.dataframe", reason="the Dask report needs dask[dataframe]")


@pytest.fixture(scope="module")
def frame(data):
    y, preds = data
    return pd.DataFrame({"y": y, **preds})


@pytest.mark.parametrize(
    "divisions",
    [(0, N - 1), (0, 700, 1400, N - 1), (0, 1, 5, 600, 601, 1300, 1999, N - 1)],
    ids=["1 partition", "3 partitions", "7 uneven partitions"],
)
def test_dask_report_equals_the_in_memory_report(dd, frame, reference, divisions):
    from skcal.dask import calibration_report_dask

    ddf = dd.from_pandas(frame, npartitions=1).repartition(divisions=list(divisions))
    assert ddf.npartitions == len(divisions) - 1
    rep = calibration_report_dask(ddf, y="y", scheduler="sync", **SETTINGS)
    assert_same_report(reference, rep)


def test_dask_report_on_threads_with_replicate_blocks(dd, frame, reference):
    from skcal.dask import calibration_report_dask

    ddf = dd.from_pandas(frame, npartitions=5)
    rep = calibration_report_dask(
        ddf,
        models=["honest", "shifted", "sharp"],
        scheduler="threads",
        replicate_block=11,
        split_every=2,
        **SETTINGS,
    )
    assert_same_report(reference, rep)


@pytest.fixture(scope="module")
def parquet_logs(frame, tmp_path_factory):
    pytest.importorskip("pyarrow", reason="reading parquet needs pyarrow (the parquet extra)")
    root = tmp_path_factory.mktemp("logs")
    frame.to_parquet(root / "one.parquet")
    folder = root / "folder"
    (folder / "date=2024-01-02").mkdir(parents=True)
    (folder / "date=2024-01-01").mkdir(parents=True)
    # hive-style partitions read in the sorted order of their paths, files of uneven sizes
    frame.iloc[:300].to_parquet(folder / "date=2024-01-01" / "part-0.parquet")
    frame.iloc[300:1700].to_parquet(folder / "date=2024-01-01" / "part-1.parquet")
    frame.iloc[1700:].to_parquet(folder / "date=2024-01-02" / "part-0.parquet")
    (folder / "_SUCCESS").write_text("")
    frame.to_csv(root / "one.csv", index=False)
    (root / "empty").mkdir()
    (root / "csvonly").mkdir()
    frame.to_csv(root / "csvonly" / "a.csv", index=False)
    return root


def test_dask_report_from_a_parquet_folder(dd, parquet_logs, reference):
    from skcal.dask import calibration_report_dask

    rep = calibration_report_dask(str(parquet_logs / "folder"), scheduler="sync", **SETTINGS)
    assert_same_report(reference, rep)


@pytest.mark.parametrize("source", ["parquet folder", "dask dataframe"])
def test_dask_report_above_exact_rows_equals_the_batches_report(dd, frame, parquet_logs, data, source):
    # above exact_rows the replicates are blocks of sums on the shared grid; from files the
    # blocks of a round run as independent chains over every file (run_passes), from a
    # dataframe as chains of partitions merged; both equal the one-process report
    from skcal.dask import calibration_report_dask

    y, preds = data
    kw = {**SETTINGS, "exact_rows": 1000, "replicate_block": 7}
    ref = report_from_batches(_batches(y, preds, (0, 300, 1700, N)), n_samples=N, models=list(preds), **kw)
    assert "5 pass(es)" in ref.notes[0] and "one grid of" in ref.notes[0]
    folder = str(parquet_logs / "folder")
    data_ = folder if source == "parquet folder" else dd.from_pandas(frame, npartitions=3)
    rep = calibration_report_dask(data_, y="y", models=list(preds), scheduler="threads", chains=2, **kw)
    assert_same_report(ref, rep, rtol=1e-9)
    assert rep.notes == ref.notes


def test_dask_bad_input_names_the_argument(dd, frame, parquet_logs):
    from skcal.dask import calibration_report_dask

    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="y: no column 'label'"):
        calibration_report_dask(ddf, y="label", scheduler="sync")
    with pytest.raises(ValueError, match="models: no column 'zz'"):
        calibration_report_dask(ddf, models=["honest", "zz"], scheduler="sync")
    with pytest.raises(ValueError, match="data: .* holds CSV files .*Dask reads parquet logs only"):
        calibration_report_dask(str(parquet_logs / "csvonly"), scheduler="sync")
    with pytest.raises(ValueError, match="no CSV or parquet files"):
        calibration_report_dask(parquet_logs / "empty", scheduler="sync")
    with pytest.raises(ValueError, match="data"):
        calibration_report_dask(frame, scheduler="sync")  # a pandas frame is not a dask one
    with pytest.raises(ValueError, match="metrics"):
        calibration_report_dask(ddf, metrics=["roc_auc"], scheduler="sync")


# ---------------------------------------------------------------------------------------------
# the CLI
# ---------------------------------------------------------------------------------------------
def _table(capsys):
    out = capsys.readouterr().out
    return out[out.index("\n", 1) :]  # drop the title line (it names the input)


CLI = ["--n-bootstrap", "30", "--n-resamples", "100", "--seed", "3", "-q"]


def test_cli_parquet_file_and_folder_give_the_csv_report(parquet_logs, tmp_path, capsys):
    assert (
        main(
            [
                "report",
                str(parquet_logs / "one.csv"),
                "--out",
                str(tmp_path / "c.json"),
                "--format",
                "json",
                *CLI,
            ]
        )
        == 0
    )
    csv_table = _table(capsys)
    csv_json = json.loads((tmp_path / "c.json").read_text())
    for i, src in enumerate([parquet_logs / "one.parquet", parquet_logs / "folder"]):
        out = tmp_path / f"p{i}.json"
        assert main(["report", str(src), "--out", str(out), "--format", "json", *CLI]) == 0
        assert _table(capsys) == csv_table
        got = json.loads(out.read_text())
        assert got["verdict"] == csv_json["verdict"] and got["n_samples"] == N
        assert got["calibration_tests"] == csv_json["calibration_tests"]
        assert got["models"] == csv_json["models"] and got["metrics"] == csv_json["metrics"]


def test_cli_dask_and_html(parquet_logs, tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.html"
    assert (
        main(["report", str(parquet_logs / "folder"), "--dask", "--format", "html", "--out", str(out), *CLI])
        == 0
    )
    dask_table = _table(capsys)
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "Reliability diagrams" in text and "out of core" in text
    assert main(["report", str(parquet_logs / "folder"), "--out", str(tmp_path / "s.html"), *CLI]) == 0
    assert _table(capsys) == dask_table


@pytest.mark.parametrize(
    "args, message",
    [
        (["--label", "z"], "--label z"),
        (["--models", "honest,zz"], "--models"),
        (["--max-seconds", "3"], "--max-seconds"),
        (["--metrics", "roc_auc"], "metrics"),
    ],
)
def test_cli_parquet_bad_options_exit_2(parquet_logs, tmp_path, capsys, args, message):
    assert main(["report", str(parquet_logs / "folder"), "--out", str(tmp_path / "r.html"), *CLI, *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_bad_inputs_exit_2(parquet_logs, tmp_path, capsys):
    out = ["--out", str(tmp_path / "r.html"), "-q"]
    assert main(["report", str(parquet_logs / "empty"), *out]) == 2
    err = capsys.readouterr().err
    assert "PREDICTIONS" in err and "no CSV or parquet files" in err
    # a folder of CSV files is read whole in batches; on Dask it is refused, never read in part
    assert main(["report", str(parquet_logs / "csvonly"), *out]) == 0
    capsys.readouterr()
    assert main(["report", str(parquet_logs / "csvonly"), "--dask", *out]) == 2
    assert "Dask reads parquet logs only" in capsys.readouterr().err
    assert main(["report", str(parquet_logs / "one.csv"), "--dask", *out]) == 2
    assert "--dask / --scheduler" in capsys.readouterr().err


def test_cli_scheduler_that_does_not_answer_exits_2(parquet_logs, tmp_path, capsys):
    pytest.importorskip("distributed")
    args = ["report", str(parquet_logs / "one.parquet"), "--scheduler", "tcp://127.0.0.1:9", "-q"]
    assert main([*args, "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "--scheduler tcp://127.0.0.1:9" in err and "no Dask scheduler answered" in err


def test_a_dataframe_partition_is_computed_by_the_task_that_uses_it():
    # given as a task argument, a partition would be a root task of its own that the scheduler
    # may run ahead of the chain folding it (frames waiting in the workers' memory)
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    from skcal._dask_report import _OwnPartition, _partition_rows

    frame = pd.DataFrame({"y": np.arange(10) % 2, "p": np.linspace(0.1, 0.9, 10)})
    parts = [_OwnPartition(part) for part in dd.from_pandas(frame, npartitions=3).to_delayed()]
    task = dask.delayed(_partition_rows, pure=True)(parts[0])
    assert len(dict(task.__dask_graph__())) == 1  # one task: the partition is computed inside it
    sizes = dask.compute(*[dask.delayed(_partition_rows, pure=True)(p) for p in parts], scheduler="sync")
    assert sum(sizes) == 10 and len(sizes) == 3
    tokens = {dask.base.tokenize(p) for p in parts}
    assert len(tokens) == 3 and dask.base.tokenize(parts[1]) == dask.base.tokenize(
        _OwnPartition(parts[1].part)
    )
