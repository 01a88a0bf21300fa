"""Reading and writing the files of a log: CSV, gzip CSV and parquet, files and folders.

A *log* is a CSV file (``.csv``, ``.csv.gz``), a parquet file (``.parquet``, ``.pq``) or a folder
of them, read recursively in sorted order of their paths (date-named files and hive-style
partitions such as ``date=2024-01-31/part-0.parquet`` sort in time order); files whose name
starts with ``.`` or ``_`` (``_SUCCESS``, ``.crc``) are skipped. A folder may mix CSV and
parquet files: it is read whole, every file in path order, and every file must have the same
columns (a file with other columns is an error naming it, never a half-read log).

:func:`iter_batches` yields the rows in that order as pandas DataFrames of at most
``batch_rows`` rows, so a log larger than memory streams through (a parquet file is read one
record batch at a time); :func:`read_table` reads a whole log into one frame. Every error is a
:class:`LogFormatError` naming the file: a missing or empty file, an unknown format, missing
columns, a malformed CSV, a truncated gzip stream, a corrupt parquet file.

:func:`write_atomic` writes an output file (a page, a state) so that a reader never sees half of
it: a temporary file in the same folder, flushed to disk, then renamed over the target.

This module is the ground floor of every command and reader (the report, the monitor, the
command line, the Dask front end): it imports pandas and, for parquet only, pyarrow, inside the
functions that read parquet (install ``skcal[parquet]``; a parquet log without it is a clear
error).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import secrets
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "LogFormatError",
    "CSVFormatError",
    "Rows",
    "BATCH_ROWS",
    "list_files",
    "file_format",
    "read_columns",
    "iter_batches",
    "read_table",
    "count_rows",
    "check_writable",
    "OutputError",
    "fingerprint",
    "sha256_prefix",
    "write_atomic",
]

#: Default rows per batch.
BATCH_ROWS = 1 << 20

#: The readable file names, by format.
_SUFFIXES = {"csv": (".csv", ".csv.gz"), "parquet": (".parquet", ".pq")}

#: What reading a damaged file raises, by library: a truncated gzip stream (``EOFError``,
#: ``zlib.error``, ``gzip.BadGzipFile`` an ``OSError``), bytes that are not UTF-8, a parquet file
#: pyarrow cannot decode (``ArrowInvalid`` is a ``ValueError``, ``ArrowIOError`` an ``OSError``).
_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, pd.errors.ParserError)

#: The marker in the name of :func:`write_atomic`'s temporary files.
_TMP_MARK = ".skcal-tmp-"


class LogFormatError(ValueError):
    """A log that cannot be read (missing, empty, corrupt, unknown format, missing columns)."""


class OutputError(ValueError):
    """An output file that cannot be written (a folder, a missing folder, no permission)."""


class CSVFormatError(LogFormatError):
    """A log of predictions that does not follow the column convention (``skcal report --help``)."""


class Rows:
    """Where the rows of a log's frame come from: each row's file and line (CSV) or row (parquet).

    Parameters
    ----------
    parts : list of tuple
        ``(file, first_row, n_rows)`` per file, as :func:`skcal._io.read_table` returns them.
    source : str
        The log as the user named it (a file or a folder).
    """

    def __init__(self, parts, source):
        self.parts = list(parts)
        self.source = str(source)
        self._firsts = np.array([first for _, first, _ in self.parts], dtype=np.int64)

    @classmethod
    def of_batch(cls, file, first_in_file, n_rows, source):
        """The rows of a batch of ``n_rows`` rows of ``file`` from its row ``first_in_file`` (0-based)."""
        return cls([(file, -int(first_in_file), int(n_rows) + int(first_in_file))], source)

    def at(self, i):
        """``(file, "line 5")`` of row ``i`` of the frame (the header is line 1 of a CSV file)."""
        j = int(np.searchsorted(self._firsts, i, side="right")) - 1
        f, first, _ = self.parts[j]
        within = int(i) - first
        if file_format(f) == "csv":
            return str(f), f"line {within + 2}"
        return str(f), f"row {within + 1}"

    def say(self, i, text):
        """``"{file}: {text}"`` with ``{at}`` in ``text`` replaced by row ``i``'s line or row."""
        f, where = self.at(i)
        return f"{f}: {text.format(at=where)}"


def check_writable(path, option):
    """Fail fast, before any computing, when the output ``path`` cannot be written.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    option : str
        The command-line option that named it (``--out``), for the message.

    Raises
    ------
    OutputError
        Naming the option and the path.
    """
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{option} {path}: is a directory; expected a file name.")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise OutputError(f"{option} {path}: not writable (permission denied).")


def file_format(path):
    """``"csv"`` or ``"parquet"`` by the file name (``.csv``, ``.csv.gz``, ``.parquet``, ``.pq``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    str

    Examples
    --------
    >>> from skcal._io import file_format
    >>> file_format("logs/2024-01-31.csv.gz"), file_format("part-0.parquet")
    ('csv', 'parquet')
    """
    name = Path(path).name.lower()
    for fmt, suffixes in _SUFFIXES.items():
        if name.endswith(suffixes):
            return fmt
    raise LogFormatError(f"{path}: not a CSV (.csv, .csv.gz) or parquet (.parquet, .pq) file.")


def _readable(name):
    return not name.startswith((".", "_"))


def list_files(path):
    """The files of a log, in reading order.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them (CSV and parquet may be mixed).

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
            if _readable(name) and name.lower().endswith(_SUFFIXES["csv"] + _SUFFIXES["parquet"]):
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


def _damaged(f, exc):
    """The error of a file that cannot be read: its name and what the reader said."""
    reason = str(exc).strip() or type(exc).__name__
    return LogFormatError(f"{f}: cannot be read ({reason}); is the file complete?")


def _csv_header(f):
    """The stripped column names of a CSV file's header row, checked."""
    opener = gzip.open if str(f).lower().endswith(".gz") else open
    try:
        with opener(f, "rt", newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except PermissionError:
        raise LogFormatError(f"{f}: permission denied (the file cannot be read).") from None
    except UnicodeDecodeError as exc:
        raise LogFormatError(f"{f}: not a UTF-8 text file ({exc.reason}).") from None
    except (*_READ_ERRORS, csv.Error) as exc:
        raise _damaged(f, exc) from None
    if not header or all(not h.strip() for h in header):
        raise LogFormatError(f"{f}: the file is empty; expected a header row naming the columns.")
    header = [h.strip() for h in header]
    if len(header) == 1:
        for sep, name in ((";", "semicolon"), ("\t", "tab")):
            if sep in header[0]:
                raise LogFormatError(
                    f"{f}: the header {header[0]!r} is one column holding {name}s; the file must be "
                    "comma-separated (e.g. y,model_a,model_b)."
                )
    if "" in header:
        raise LogFormatError(f"{f}: column {header.index('') + 1} has an empty name in the header.")
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise LogFormatError(f"{f}: duplicate column names {dups}; every column needs its own name.")
    return header


def _parquet_file(f):
    pq = _pyarrow_parquet(f)
    try:
        return pq.ParquetFile(f)
    except _READ_ERRORS as exc:
        raise _damaged(f, exc) from None


def _columns_of(f):
    if file_format(f) == "parquet":
        return list(_parquet_file(f).schema_arrow.names)
    return _csv_header(f)


def read_columns(path):
    """The column names of a log; every file of a folder must have the same ones.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them.

    Returns
    -------
    list of str
        The columns, in the order of the first file.
    """
    files = list_files(path)
    first = _columns_of(files[0])
    for f in files[1:]:
        cols = _columns_of(f)
        if set(cols) != set(first):
            extra = sorted(set(cols) - set(first))
            missing = sorted(set(first) - set(cols))
            raise LogFormatError(
                f"{f}: its columns differ from those of {files[0]} "
                f"(missing {missing}, extra {extra}); every file of a log needs the same columns."
            )
    return first


def iter_batches(path, columns=None, batch_rows=BATCH_ROWS, *, dtype=None):
    """Yield ``(file, first_row, frame)`` for the rows of a log, in order.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them (read in sorted order).
    columns : list of str, default=None
        The columns to read (all by default); a file without one of them is an error.
    batch_rows : int, default=BATCH_ROWS
        At most this many rows per frame.
    dtype : {None, str}, default=None
        ``str`` reads every CSV cell as text, stripped, with empty cells as ``""`` (for a reader
        that parses the cells itself); ``None`` lets pandas infer the types. Parquet columns keep
        their types either way.

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
        for frame in _file_batches(f, columns, batch_rows, dtype):
            if len(frame):
                yield f, row, frame
                row += len(frame)


def read_table(path, columns=None, *, dtype=None):
    """A whole log as one frame, with the files its rows come from.

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them.
    columns : list of str, default=None
        The columns to read (all by default).
    dtype : {None, str}, default=None
        As in :func:`iter_batches`.

    Returns
    -------
    frame : pandas.DataFrame
        Every row, with a fresh ``RangeIndex``.
    parts : list of tuple
        ``(file, first_row, n_rows)`` of every file that holds rows, in order.
    """
    frames, parts = [], []
    for f, first, frame in iter_batches(path, columns, BATCH_ROWS, dtype=dtype):
        if parts and parts[-1][0] == f:
            parts[-1] = (f, parts[-1][1], parts[-1][2] + len(frame))
        else:
            parts.append((f, first, len(frame)))
        frames.append(frame)
    if not frames:
        names = columns if columns is not None else read_columns(path)
        return pd.DataFrame({c: pd.Series(dtype=object) for c in names}), []
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return frame.reset_index(drop=True), parts


def count_rows(path):
    """The number of rows of a log (parquet: from the files' metadata; CSV: by reading it once).

    Parameters
    ----------
    path : str or path-like
        A CSV or parquet file, or a folder of them.

    Returns
    -------
    int
    """
    total = 0
    for f in list_files(path):
        if file_format(f) == "parquet":
            total += int(_parquet_file(f).metadata.num_rows)
        else:
            first = _csv_header(f)[:1]
            total += sum(len(frame) for frame in _file_batches(f, first, BATCH_ROWS, str))
    return total


def _file_batches(f, columns, batch_rows, dtype):
    if file_format(f) == "parquet":
        pf = _parquet_file(f)
        _check_columns(f, pf.schema_arrow.names, columns)
        try:
            for batch in pf.iter_batches(batch_size=batch_rows, columns=columns):
                yield batch.to_pandas()
        except _READ_ERRORS as exc:
            raise _damaged(f, exc) from None
        return
    header = _csv_header(f)
    _check_columns(f, header, columns)
    text = dtype is str
    wanted = set(header if columns is None else columns)
    try:
        reader = pd.read_csv(
            f,
            chunksize=batch_rows,
            skipinitialspace=True,
            encoding="utf-8-sig",
            usecols=lambda c: str(c).strip() in wanted,
            dtype=str if text else None,
            keep_default_na=not text,
        )
        for frame in reader:
            frame.columns = [str(c).strip() for c in frame.columns]
            if text:
                frame = frame.apply(lambda s: s.str.strip())
            yield frame[header if columns is None else columns]
    except pd.errors.ParserError as exc:
        raise LogFormatError(f"{f}: malformed CSV ({exc}).") from None
    except _READ_ERRORS as exc:
        raise _damaged(f, exc) from None


def _check_columns(f, names, columns):
    if columns is None:
        return
    missing = [c for c in columns if c not in names]
    if missing:
        raise LogFormatError(f"{f}: has no column {missing[0]!r} (its columns: {list(names)}).")


def _stale_temporaries(path):
    return sorted(path.parent.glob(f".{path.name}{_TMP_MARK}*"))


def write_atomic(path, data):
    """Write ``data`` to ``path`` so that the file is either the old one or the new one, whole.

    The data go to a temporary file in the same folder, which is flushed to disk and renamed
    over ``path``. Temporaries left by a run that was killed while writing ``path`` are removed
    first. The file gets the permissions of any file the process creates (``0o666`` less the
    umask), not the owner-only mode of a temporary file.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    data : str or bytes
        The content (text is written as UTF-8).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    for stale in _stale_temporaries(path):
        stale.unlink(missing_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    tmp = folder / f".{path.name}{_TMP_MARK}{secrets.token_hex(6)}"
    # created like any new file (0o666 less the umask), exclusively: no other writer shares it
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


#: Bytes read at a time when hashing a file.
_HASH_CHUNK = 1 << 20


def sha256_prefix(path, n_bytes=None):
    """The SHA-256 of the first ``n_bytes`` bytes of a file (all of it when None), in hex.

    Parameters
    ----------
    path : str or path-like
        The file.
    n_bytes : int or None, default=None
        How many bytes to hash from the start.

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    left = None if n_bytes is None else int(n_bytes)
    with open(path, "rb") as fh:
        while left is None or left > 0:
            chunk = fh.read(_HASH_CHUNK if left is None else min(_HASH_CHUNK, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
    return h.hexdigest()


def fingerprint(path):
    """What identifies a file's content: ``{"size", "mtime_ns", "sha256"}``.

    A job that keeps the fingerprints of the files it read can tell a file it has read from a
    new one, and a file that changed since: a file whose size and modification time are the
    same is taken as unchanged (as ``rsync`` does), otherwise its content hash is compared.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    dict
    """
    st = os.stat(path)
    return {"size": int(st.st_size), "mtime_ns": int(st.st_mtime_ns), "sha256": sha256_prefix(path)}
