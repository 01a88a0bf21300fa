"""skcal._io: CSV and parquet logs (files and folders) read in order, in batches."""

import sys

import numpy as np
import pandas as pd
import pytest

from skcal._io import LogFormatError, file_format, iter_batches, list_files, read_columns

pyarrow = pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")


def _frame(n, start=0):
    return pd.DataFrame({"t": np.arange(start, start + n), "y": np.arange(n) % 2, "m": np.linspace(0, 1, n)})


def test_file_formats():
    assert file_format("a/b.csv") == "csv" and file_format("x.CSV.GZ") == "csv"
    assert file_format("x.parquet") == "parquet" and file_format("x.pq") == "parquet"
    with pytest.raises(LogFormatError, match="not a CSV"):
        file_format("x.json")


def test_a_folder_is_read_in_sorted_order_of_its_paths(tmp_path):
    (tmp_path / "date=2024-01-02").mkdir()
    (tmp_path / "date=2024-01-01").mkdir()
    (tmp_path / "_tmp").mkdir()
    _frame(3, 10).to_parquet(tmp_path / "date=2024-01-02" / "part-0.parquet")
    _frame(3, 0).to_parquet(tmp_path / "date=2024-01-01" / "part-1.parquet")
    _frame(3, 3).to_parquet(tmp_path / "date=2024-01-01" / "part-2.parquet")
    _frame(3, 99).to_parquet(tmp_path / "_tmp" / "part-9.parquet")  # skipped
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".part-0.parquet.crc").write_text("")
    (tmp_path / "notes.txt").write_text("not a log")
    names = [f.relative_to(tmp_path).as_posix() for f in list_files(tmp_path)]
    assert names == [
        "date=2024-01-01/part-1.parquet",
        "date=2024-01-01/part-2.parquet",
        "date=2024-01-02/part-0.parquet",
    ]
    batches = list(iter_batches(tmp_path, columns=["t", "m"], batch_rows=2))
    assert [first for _, first, _ in batches] == [0, 2, 3, 5, 6, 8]
    t = np.concatenate([b["t"].to_numpy() for _, _, b in batches])
    assert list(t) == [0, 1, 2, 3, 4, 5, 10, 11, 12]
    assert list(batches[0][2].columns) == ["t", "m"]
    assert read_columns(tmp_path) == ["t", "y", "m"]


def test_csv_files_stream_in_batches(tmp_path):
    _frame(10).to_csv(tmp_path / "a.csv", index=False)
    _frame(5, 10).to_csv(tmp_path / "b.csv.gz", index=False)
    assert read_columns(tmp_path / "a.csv") == ["t", "y", "m"]
    got = list(iter_batches(tmp_path, batch_rows=4))
    assert [len(f) for _, _, f in got] == [4, 4, 2, 4, 1]
    assert np.array_equal(np.concatenate([f["t"] for _, _, f in got]), np.arange(15))


def test_errors_name_the_file(tmp_path):
    with pytest.raises(LogFormatError, match="no such file"):
        list_files(tmp_path / "missing")
    with pytest.raises(LogFormatError, match="holds no CSV or parquet"):
        list_files(tmp_path)
    _frame(4).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"t": [1], "m": [0.5]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(LogFormatError, match=r"b\.parquet: has no column 'y'"):
        list(iter_batches(tmp_path, columns=["t", "y"]))
    (tmp_path / "c.csv").write_text("")
    with pytest.raises(LogFormatError, match="the file is empty"):
        read_columns(tmp_path / "c.csv")


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch):
    _frame(4).to_parquet(tmp_path / "a.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(LogFormatError, match=r"needs pyarrow.*skcal\[parquet\]"):
        read_columns(tmp_path / "a.parquet")
