"""skcal._io: CSV and parquet logs (files and folders) read in order, in batches."""

import sys

import numpy as np
import pandas as pd
import pytest

from skcal._io import (
    LogFormatError,
    count_rows,
    file_format,
    iter_batches,
    list_files,
    read_columns,
    read_table,
    write_atomic,
)

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


def test_a_mixed_folder_is_read_whole(tmp_path):
    """CSV and parquet files in one folder: every row of every file, in path order (never half)."""
    _frame(4, 0).to_csv(tmp_path / "2024-01-01.csv", index=False)
    _frame(3, 4).to_parquet(tmp_path / "2024-01-02.parquet")
    _frame(2, 7).to_csv(tmp_path / "2024-01-03.csv.gz", index=False)
    got = list(iter_batches(tmp_path, columns=["t"]))
    assert np.array_equal(np.concatenate([f["t"].to_numpy() for _, _, f in got]), np.arange(9))
    frame, parts = read_table(tmp_path)
    assert len(frame) == 9 and [(p.name, first, n) for p, first, n in parts] == [
        ("2024-01-01.csv", 0, 4),
        ("2024-01-02.parquet", 4, 3),
        ("2024-01-03.csv.gz", 7, 2),
    ]
    assert count_rows(tmp_path) == 9


def test_a_file_with_other_columns_is_named(tmp_path):
    _frame(4).to_csv(tmp_path / "a.csv", index=False)
    _frame(4).rename(columns={"m": "q"}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(
        LogFormatError, match=r"b\.parquet: its columns differ .*missing \['m'\], extra \['q'\]"
    ):
        read_columns(tmp_path)


def test_a_truncated_gzip_file_is_named(tmp_path):
    import gzip

    text = _frame(5000).to_csv(index=False).encode()
    data = gzip.compress(text)
    (tmp_path / "day.csv.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(LogFormatError, match=r"day\.csv\.gz: cannot be read"):
        list(iter_batches(tmp_path / "day.csv.gz"))
    with pytest.raises(LogFormatError, match=r"day\.csv\.gz"):
        read_table(tmp_path)


def test_a_corrupt_parquet_file_is_named(tmp_path):
    _frame(10).to_parquet(tmp_path / "good.parquet")
    data = (tmp_path / "good.parquet").read_bytes()
    (tmp_path / "bad.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(LogFormatError, match=r"bad\.parquet: cannot be read"):
        read_columns(tmp_path)
    (tmp_path / "worse.pq").write_bytes(b"PAR1 not really parquet PAR1")
    with pytest.raises(LogFormatError, match=r"worse\.pq: cannot be read"):
        list(iter_batches(tmp_path / "worse.pq"))


@pytest.mark.parametrize(
    "text, match",
    [
        ("y;a\n1;0.2\n", "one column holding semicolons"),
        ("y,,a\n1,2,0.3\n", "column 2 has an empty name"),
        ("y,a,a\n1,0.2,0.3\n", r"duplicate column names \['a'\]"),
        ("", "the file is empty"),
    ],
)
def test_csv_headers_are_checked(tmp_path, text, match):
    (tmp_path / "h.csv").write_text(text)
    with pytest.raises(LogFormatError, match=match):
        read_columns(tmp_path / "h.csv")


def test_text_cells_are_read_as_stripped_strings(tmp_path):
    (tmp_path / "s.csv").write_text("y , a\n 1,0.5 \nyes,\n")
    frame, _ = read_table(tmp_path / "s.csv", dtype=str)
    assert frame.to_dict("list") == {"y": ["1", "yes"], "a": ["0.5", ""]}


def test_write_atomic_replaces_whole_and_cleans_up(tmp_path):
    import os

    target = tmp_path / "state.json"
    write_atomic(target, "old")
    stale = tmp_path / ".state.json.skcal-tmp-deadbeef"
    stale.write_text("left by a killed run")
    write_atomic(target, b"new")
    assert target.read_text() == "new" and not stale.exists()
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_write_atomic_interrupted_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    import os

    target = tmp_path / "page.html"
    write_atomic(target, "old")

    def fail(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


def test_fingerprint_and_the_hash_of_a_prefix(tmp_path):
    import hashlib

    from skcal._io import fingerprint, sha256_prefix

    path = tmp_path / "a.csv"
    path.write_bytes(b"y,m\n1,0.5\n")
    fp = fingerprint(path)
    assert fp["size"] == 10 and fp["sha256"] == hashlib.sha256(b"y,m\n1,0.5\n").hexdigest()
    assert isinstance(fp["mtime_ns"], int)
    with open(path, "ab") as fh:  # appended to: the old bytes hash as before
        fh.write(b"0,0.2\n")
    assert sha256_prefix(path, fp["size"]) == fp["sha256"] != fingerprint(path)["sha256"]
    assert sha256_prefix(path, 0) == hashlib.sha256(b"").hexdigest()
