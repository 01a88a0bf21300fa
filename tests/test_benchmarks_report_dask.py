"""Smoke test of benchmarks/report_dask.py (quick mode: 1e5 rows, synchronous scheduler)."""

import json

import pytest

pytest.importorskip("dask.dataframe", reason="dask is not installed (pip install 'skcal[dask]')")
pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install 'skcal[parquet]')")


def test_quick_mode_equals_the_in_memory_report(tmp_path):
    from benchmarks import report_dask

    scratch = tmp_path / "scratch"
    record = report_dask.main(["--quick", "--out", str(tmp_path), "--scratch", str(scratch)])
    assert record["rows"] == 100_000 and record["files"] == 4
    assert record["max_rel_diff_vs_in_memory"] < 1e-10
    assert set(record["table"]) == set(report_dask.MODELS)
    assert record["passes"] >= 1 and "all rows" in " ".join(record["notes"])
    assert not scratch.exists()  # the parquet scratch folder is deleted
    runs = json.loads((tmp_path / "report_dask.json").read_text())
    assert len(runs) == 1 and "provenance" in runs[0]


def test_quick_mode_from_a_dask_dataframe_equals_the_in_memory_report(tmp_path):
    from benchmarks import report_dask

    out = tmp_path / "out"
    record = report_dask.main(["--quick", "--input", "dataframe", "--out", str(out)])
    assert record["input"] == "dataframe" and record["files"] == 4
    assert record["max_rel_diff_vs_in_memory"] < 1e-10
