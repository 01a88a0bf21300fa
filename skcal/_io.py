"""Reading logged predictions: CSV and parquet files and folders, in order, in batches.

A *log* is a CSV file (``.csv``, ``.csv.gz``), a parquet file (``.parquet``, ``.pq``) or a folder
of them, read recursively in sorted order of their paths (date-named files and hive-style
partitions such as ``date=2024-01-31/part-0.parquet`` sort in time order); files whose name
starts with ``.`` or ``_`` (``_SUCCESS``, ``.crc``) are skipped. :func:`iter_batches` yields the
rows in that order as pandas DataFrames of at most ``batch_rows`` rows, so a log larger than
memory streams through (a parquet file is read one record batch at a time with pyarrow).

pyarrow is optional: it is imported inside the functions that read parquet (install
``skcal[parquet]``), and a parquet log without it is a clear error.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

__all__ = [
    "LogFormatError",
    "BATCH_ROWS",
    "list_files",
    "file_format",
    "read_columns",
    "iter_batches",
    "count_rows",
]

#: Default rows per batch.
BATCH_ROWS = 1 << 20


class LogFormatError(ValueError):
    """A log that cannot be read (missing, empty, unknown format, missing columns)."""


def file_format(path):
    """``"csv"`` or ``"parquet"`` by the file name (``.csv``, ``.csv.gz``, ``.parquet``, ``.pq``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    str
    """
    name = Path(path).name.lower()
    if name.endswith(".csv") or name.endswith(".csv.gz"):
        return "csv"
    if name.endswith(".parquet") or name.endswith(".pq"):
        return "parquet"
    raise LogFormatError(f"{path}: not a CSV (.csv, .csv.gz) or parquet (.parquet, .pq) file.")


def _readable(name):
    return not name.startswith((".", "_"))


def list_files(path):
    """The files of a log, in reading order.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them.

    Returns
    -------
    list of pathlib.Path
    """
    p = Path(path)
    if not p.exists():
        raise LogFormatError(f"{path}: no such file or folder.")
    if p.is_file():
        file_format(p)
        return [p]
    files = []
    for root, dirs, names in os.walk(p):
        dirs[:] = sorted(d for d in dirs if _readable(d))
        for name in names:
            lower = name.lower()
            if _readable(name) and lower.endswith((".csv", ".csv.gz", ".parquet", ".pq")):
                files.append(Path(root) / name)
    if not files:
        raise LogFormatError(f"{path}: the folder holds no CSV or parquet files.")
    return sorted(files, key=lambda f: f.relative_to(p).as_posix())


def _pyarrow_parquet(path):
    try:
        import pyarrow.parquet as pq  # pyarrow is optional (the parquet extra): imported here only
    except ImportError:
        raise LogFormatError(
            f"{path}: reading parquet needs pyarrow, which is not installed; pip install 'skcal[parquet]'."
        ) from None
    return pq


def read_columns(path):
    """The column names of a log (of its first file; every file must have them).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    list of str
    """
    first = list_files(path)[0]
    if file_format(first) == "parquet":
        pq = _pyarrow_parquet(first)
        return list(pq.ParquetFile(first).schema_arrow.names)
    try:
        header = pd.read_csv(first, nrows=0)
    except pd.errors.EmptyDataError:
        raise LogFormatError(
            f"{first}: the file is empty; expected a header row naming the columns."
        ) from None
    return [str(c).strip() for c in header.columns]


def iter_batches(path, columns=None, batch_rows=BATCH_ROWS):
    """Yield ``(file, first_row, frame)`` for the rows of a log, in order.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them (read in sorted order).
    columns : list of str, default=None
        The columns to read (all by default); a file without one of them is an error.
    batch_rows : int, default=BATCH_ROWS
        At most this many rows per frame.

    Yields
    ------
    file : pathlib.Path
        The file the rows come from.
    first_row : int
        The position of the frame's first row in the whole log (0-based).
    frame : pandas.DataFrame
        The rows, with ``columns`` in that order.
    """
    row = 0
    for f in list_files(path):
        for frame in _file_batches(f, columns, batch_rows):
            if len(frame):
                yield f, row, frame
                row += len(frame)


def count_rows(path):
    """The number of rows of a parquet log, from the files' metadata (no row is read).

    Parameters
    ----------
    path : str or path-like
        A parquet file or a folder of them.

    Returns
    -------
    int
    """
    total = 0
    for f in list_files(path):
        if file_format(f) != "parquet":
            raise LogFormatError(f"{f}: not a parquet file; count_rows reads parquet metadata only.")
        total += int(_pyarrow_parquet(f).ParquetFile(f).metadata.num_rows)
    return total


def _file_batches(f, columns, batch_rows):
    if file_format(f) == "parquet":
        pq = _pyarrow_parquet(f)
        pf = pq.ParquetFile(f)
        names = pf.schema_arrow.names
        _check_columns(f, names, columns)
        for batch in pf.iter_batches(batch_size=batch_rows, columns=columns):
            yield batch.to_pandas()
        return
    try:
        header = [str(c).strip() for c in pd.read_csv(f, nrows=0).columns]
    except pd.errors.EmptyDataError:
        raise LogFormatError(f"{f}: the file is empty; expected a header row naming the columns.") from None
    _check_columns(f, header, columns)
    reader = pd.read_csv(f, chunksize=batch_rows, skipinitialspace=True)
    try:
        for frame in reader:
            frame.columns = [str(c).strip() for c in frame.columns]
            yield frame if columns is None else frame[columns]
    except pd.errors.ParserError as exc:
        raise LogFormatError(f"{f}: malformed CSV ({exc}).") from None


def _check_columns(f, names, columns):
    if columns is None:
        return
    missing = [c for c in columns if c not in names]
    if missing:
        raise LogFormatError(f"{f}: has no column {missing[0]!r} (its columns: {list(names)}).")
