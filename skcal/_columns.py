"""The column convention of a log of predictions: which column holds what, read into arrays.

A log (a CSV or parquet file, or a folder of them, read by :mod:`skcal._io`) holds one row per
validation example. Its columns are named by a convention, the same for ``skcal report`` and
``skcal monitor``:

* ``y``: the label of the row (0/1, true/false, -1/1, or any two values with a positive label;
  for a multiclass model, one of the class names of its columns);
* ``y1, y2, ...``: snapshots, several 0/1 votes for the same input (an empty cell is a missing
  vote); ``y:positive, y:total`` or ``y[CLASS]``: vote counts;
* ``NAME``: a model's probability of the positive class; ``NAME[CLASS]``: its probability of
  each class; ``NAME:m`` and ``NAME:sigma2`` (or ``NAME[CLASS]:m``, ``NAME[CLASS]:sigma2``): a
  second-order model's mean and variance.

:func:`parse_predictions` reads a frame of such columns into labels and a dict of model arrays,
and :func:`read_predictions` reads a whole log into them. Every error is a
:class:`CSVFormatError` naming the file, the column and the line (CSV) or row (parquet) of the
first problem.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np
import pandas as pd

from skcal._compat import validate_params
from skcal._io import BATCH_ROWS, CSVFormatError, LogFormatError, Rows, iter_batches, read_columns, read_table
from skcal._labels import MISSING, as_text, binary_labels, class_codes, first_seen
from skcal.votes import Snapshots, VoteCounts

__all__ = [
    "CLASS_COLUMN",
    "Log",
    "looks_like_time",
    "model_base",
    "parse_predictions",
    "parse_times",
    "probability_column",
    "read_log",
    "read_predictions",
    "scan_labels",
    "add_column_arguments",
    "model_names",
    "read_predictions_csv",
]


#: ``NAME[CLASS]``: a model's column for one class.
CLASS_COLUMN = re.compile(r"^(.+)\[(.+)\]$")

_ID_NAME = re.compile(r"^(id|ids|index|idx|key|name|names|uid|uuid|row|rows|sample|example)$|[_ -]id$", re.I)
_TIME_NAME = re.compile(r"^(t|ts|time|timestamp|date|datetime|day|hour|when)$|[_ -](time|ts|at|date)$", re.I)


def model_base(col):
    """The model a column belongs to: NAME for NAME, NAME:m, NAME:sigma2, NAME[CLASS](:m, :sigma2).

    Parameters
    ----------
    col : str

    Returns
    -------
    str
    """
    base, sep, kind = col.rpartition(":")
    col = base if sep and kind in ("m", "sigma2") and base else col
    m = CLASS_COLUMN.match(col)
    return m.group(1) if m else col


def _looks_like_id(col, raw, bad):
    """Whether a non-numeric column looks like an identifier (by its name, or distinct text cells)."""
    if _ID_NAME.search(col):
        return True
    return bool(bad.all()) and raw.nunique() == raw.shape[0]


def looks_like_time(column, dtype=None):
    """Whether a column looks like a time column by its name (``ts``, ``event_time``) or its type.

    Parameters
    ----------
    column : str
        The column's name.
    dtype : numpy or pandas dtype, default=None
        Its type, when known (a parquet column's datetime type).

    Returns
    -------
    bool
    """
    if dtype is not None and pd.api.types.is_datetime64_any_dtype(dtype):
        return True
    return bool(_TIME_NAME.search(column))


def _looks_like_time(col, raw, bad):
    """Whether a non-numeric column looks like a time column (by its name, or ISO 8601 cells)."""
    if looks_like_time(col):
        return True
    sample = raw[bad.to_numpy()].head(20)
    try:
        pd.to_datetime(sample, format="ISO8601")
    except (ValueError, TypeError):
        return False
    return True


def _parse_numeric(df, col, rows):
    """``(values, empty)`` of a numeric column: floats (NaN where empty) and the empty cells."""
    s = df[col]
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        return values, np.isnan(values)
    raw = as_text(s)
    empty = (raw == "") | raw.str.lower().isin(MISSING)
    values = pd.to_numeric(raw.where(~empty), errors="coerce")
    bad = values.isna() & ~empty
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        hint = ""
        if _looks_like_time(col, raw, bad):
            hint = (
                f" It looks like a time column: give it with --time {col} (or skip it with --ignore {col})."
            )
        elif _looks_like_id(col, raw, bad):
            hint = f" It looks like an identifier: skip it with --ignore {col}."
        raise CSVFormatError(
            rows.say(
                i,
                f"column {col!r} must be numeric; {{at}} holds {raw.iloc[i]!r} "
                f"({int(bad.sum())} non-numeric cells in this column).{hint}",
            )
        )
    return values.to_numpy(dtype=float), empty.to_numpy()


def _model_column(df, col, rows, lo, hi, what, plural):
    values, empty = _parse_numeric(df, col, rows)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise CSVFormatError(
            rows.say(
                i,
                f"column {col!r} has {int(empty.sum())} empty or NaN cells (first at {{at}}); "
                f"every model needs a {what} for every row.",
            )
        )
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise CSVFormatError(
            rows.say(i, f"column {col!r} has an infinite value at {{at}}; expected a {what}.")
        )
    out = (values < lo) | (values > hi)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise CSVFormatError(
            rows.say(
                i,
                f"column {col!r} must hold {plural} in [{lo:g}, {hi:g}]; {{at}} holds "
                f"{values[i]:g} ({int(out.sum())} values out of range).",
            )
        )
    return values


def probability_column(frame, column, rows):
    """A model's probability column as floats in [0, 1]; a bad cell is an error naming its file and row.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a log (text cells or typed columns).
    column : str
        The model's column.
    rows : Rows
        Where the frame's rows come from.

    Returns
    -------
    ndarray of float64
    """
    return _model_column(frame, column, rows, 0.0, 1.0, "probability", "probabilities")


def _vote_counts(df, rows, label, cols, count_cols):
    """Counts from LABEL[CLASS] (per class) or LABEL:positive and LABEL:total columns, and the scores."""
    path = rows.source
    binary = [f"{label}:positive", f"{label}:total"]
    per_class = [c for c in count_cols if c not in binary]
    if per_class and len(per_class) != len(count_cols) or (not per_class and len(count_cols) != 2):
        raise CSVFormatError(
            f"{path}: count columns {count_cols}: give {label}:positive and {label}:total (binary counts) or "
            f"one column {label}[CLASS] per class, not a mix."
        )
    counts = []
    for c in per_class or binary:
        values, empty = _parse_numeric(df, c, rows)
        bad = empty | ~np.isfinite(values) | (values < 0) | (values != np.round(values))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CSVFormatError(
                rows.say(
                    i,
                    f"count column {c!r} must hold vote counts (integers >= 0); {{at}} holds "
                    f"{str(df[c].iloc[i])!r}.",
                )
            )
        counts.append(values.astype(np.int64))
    classes = [CLASS_COLUMN.match(c).group(2) for c in per_class]
    try:
        y = VoteCounts(counts=np.column_stack(counts), classes=classes) if per_class else VoteCounts(*counts)
    except ValueError as exc:
        raise CSVFormatError(f"{path}: {exc}") from None
    suffixes = [f"[{c}]" for c in classes] or [""]
    preds = {}
    for name in dict.fromkeys(model_base(c) for c in cols if c not in count_cols):
        need = [f"{name}{sfx}:{kind}" for kind in ("m", "sigma2") for sfx in suffixes]
        missing = [c for c in need if c not in cols]
        if missing:
            raise CSVFormatError(
                f"{path}: model {name!r} has no column {missing[0]!r} (a vote-count file gives every model "
                "NAME:m and NAME:sigma2, or with counts per class NAME[CLASS]:m and NAME[CLASS]:sigma2)."
            )
        m = [_model_column(df, f"{name}{x}:m", rows, 0, 1, "mean", "means") for x in suffixes]
        v = [_model_column(df, f"{name}{x}:sigma2", rows, 0, 0.25, "variance", "variances") for x in suffixes]
        preds[name] = (
            np.stack([np.column_stack(m), np.column_stack(v)], axis=2)
            if per_class
            else np.column_stack([m[0], v[0]])
        )
    if not preds:
        raise CSVFormatError(f"{path}: no model columns (NAME:m, NAME:sigma2) beside the counts {count_cols}")
    return y, preds


def _snapshots(df, rows, cols, snap_cols):
    """0/1 snapshots (NaN for a missing vote) and the ``(n, 2)`` scores of NAME:m, NAME:sigma2 columns."""
    path = rows.source
    Y = np.empty((df.shape[0], len(snap_cols)))
    for j, c in enumerate(snap_cols):
        values, empty = _parse_numeric(df, c, rows)
        bad = ~empty & ~np.isin(values, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CSVFormatError(
                rows.say(
                    i,
                    f"snapshot column {c!r} must hold 0/1 votes (empty for missing); "
                    f"{{at}} holds {values[i]:g}.",
                )
            )
        Y[:, j] = values
    votes = (~np.isnan(Y)).sum(axis=1)
    if (votes < 2).any():
        i = int(np.flatnonzero(votes < 2)[0])
        raise CSVFormatError(
            rows.say(i, f"every row needs at least 2 votes in {snap_cols}; {{at}} has {int(votes[i])}.")
        )
    model_cols = [c for c in cols if c not in snap_cols]
    names = []
    for c in model_cols:
        base, sep, kind = c.rpartition(":")
        if not sep or kind not in ("m", "sigma2") or not base:
            raise CSVFormatError(
                f"{path}: column {c!r} is not a snapshot column and not NAME:m or NAME:sigma2; a "
                "second-order file pairs every model's m and sigma2 columns (or use --ignore)."
            )
        if base not in names:
            names.append(base)
    if not names:
        raise CSVFormatError(f"{path}: no model columns (NAME:m, NAME:sigma2) besides the snapshots.")
    preds = {}
    for name in names:
        for kind in ("m", "sigma2"):
            if f"{name}:{kind}" not in model_cols:
                raise CSVFormatError(f"{path}: model {name!r} has no {name}:{kind} column.")
        m = _model_column(df, f"{name}:m", rows, 0.0, 1.0, "mean", "means")
        s2 = _model_column(df, f"{name}:sigma2", rows, 0.0, 0.25, "variance", "variances")
        preds[name] = np.column_stack([m, s2])
    return Snapshots(Y), preds  # the columns y1, y2, ... say these are votes, not counts


def _multiclass(df, rows, label, model_cols, bracketed, labels=None):
    """Class codes and ``(n, k)`` probabilities from NAME[CLASS] columns."""
    path = rows.source
    plain = [c for c in model_cols if c not in bracketed]
    if plain:
        raise CSVFormatError(
            f"{path}: columns {plain} are not NAME[CLASS] columns; a multiclass file gives every model one "
            "column per class (or use --ignore)."
        )
    groups = {}
    for c in bracketed:
        name, cls = CLASS_COLUMN.match(c).groups()
        groups.setdefault(name, []).append(cls)
    first_name, classes = next(iter(groups.items()))
    for name, cl in groups.items():
        if sorted(cl) != sorted(classes):
            raise CSVFormatError(
                f"{path}: model {name!r} has classes {cl} but {first_name!r} has {classes}; every model "
                "needs one column per class, for the same classes."
            )
    if len(classes) < 3:
        raise CSVFormatError(
            f"{path}: {len(classes)} classes {classes}; a multiclass file needs at least 3. For two classes, "
            "give one column per model (the positive class's probability) and --pos-label."
        )
    if labels is not None and sorted(labels) != sorted(classes):
        raise CSVFormatError(
            f"{path}: --labels {','.join(labels)} are not the classes of the NAME[CLASS] columns {classes}; "
            "for a multiclass log --labels must name the same classes."
        )
    _, codes = class_codes(df[label], classes, label, rows)
    y = codes.astype(np.intp)
    preds = {}
    for name in groups:
        preds[name] = np.column_stack(
            [
                _model_column(df, f"{name}[{c}]", rows, 0.0, 1.0, "probability", "probabilities")
                for c in classes
            ]
        )
    return y, preds, list(classes)


def scan_labels(path, column, *, time=None, batch_rows=None):
    """One pass over the label column of a log: its rows, its labels (each with its first row), its time span.

    Only the label column (and the time column) is read (a column projection of a parquet
    file; one or two parsed columns of a CSV file), so the pass costs a fraction of a pass over
    the predictions.

    Parameters
    ----------
    path : str or path-like
        The log.
    column : str
        The label column.
    time : str or None, default=None
        A time column to read too (its cells checked, its first and last time kept).
    batch_rows : int or None, default=None
        Rows per batch read (None: :data:`skcal._io.BATCH_ROWS`).

    Returns
    -------
    n_rows : int
    seen : dict
        Canonical label -> ``(text, where)``, as :func:`first_seen` returns it.
    span : tuple of str or None
        The earliest and the latest time (ISO 8601 for datetimes), or None without ``time``.
    """
    columns = [column] if time is None or time == column else [column, time]
    seen, n, file, start, lo, hi = {}, 0, None, 0, None, None
    for f, first, frame in iter_batches(path, columns=columns, batch_rows=batch_rows or BATCH_ROWS):
        if f != file:
            file, start = f, first
        rows = Rows.of_batch(f, first - start, len(frame), path)
        first_seen(frame[column], rows, seen)
        if time is not None:
            t = parse_times(frame[time], time, rows)
            if len(t):
                lo = t.min() if lo is None else min(lo, t.min())
                hi = t.max() if hi is None else max(hi, t.max())
        n += len(frame)
    return n, seen, None if lo is None else _span(lo, hi)


def _span(lo, hi):
    if isinstance(lo, pd.Timestamp):
        return lo.isoformat(), hi.isoformat()
    return f"{float(lo):g}", f"{float(hi):g}"


def parse_times(series, column, rows):
    """A time column as datetimes (naive UTC) or float numbers; a bad cell is an error naming its row.

    Parameters
    ----------
    series : pandas.Series
        The cells: datetimes, numbers, or text in ISO 8601.
    column : str
        The column's name (``--time``).
    rows : Rows
        Where the rows come from.

    Returns
    -------
    pandas.Series
        ``datetime64[ns]`` (time zones converted to UTC) or ``float64``.
    """
    s = pd.Series(series).reset_index(drop=True)
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return s.dt.tz_convert("UTC").dt.tz_localize(None)
    if pd.api.types.is_datetime64_any_dtype(s):
        bad = s.isna().to_numpy()
        if not bad.any():
            return s
        kind = "an empty cell"
    elif pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        values = s.astype(np.float64)
        bad = ~np.isfinite(values.to_numpy())
        if not bad.any():
            return values
        kind = "a cell that is empty or not finite"
    else:
        text = as_text(s)
        parsed = pd.to_datetime(text.where(text != ""), format="ISO8601", utc=True, errors="coerce")
        bad = parsed.isna().to_numpy()
        if not bad.any():
            return parsed.dt.tz_localize(None)
        numbers = pd.to_numeric(text, errors="coerce")
        if not numbers.isna().any() and np.isfinite(numbers.to_numpy(dtype=float)).all():
            return numbers.astype(np.float64)
        kind = None
    i = int(np.flatnonzero(bad)[0])
    what = kind or f"{as_text(s).iloc[i]!r}"
    raise CSVFormatError(
        rows.say(
            i,
            f"time column {column!r} (--time) holds {what} at {{at}}; expected ISO 8601 datetimes "
            "(e.g. 2024-06-01T13:45:00) or numbers in every row.",
        )
    )


def parse_predictions(df, rows, *, label="y", pos_label=None, ignore=(), models=None, labels=None):
    """Labels and model predictions from a frame that follows the column convention.

    Parameters
    ----------
    df : pandas.DataFrame
        The log's rows (text cells or typed columns).
    rows : Rows
        Where each row comes from, for the messages.
    label, pos_label, ignore, models : see :func:`read_predictions_csv`
    labels : list of str or None, default=None
        ``--labels``: the label set given in advance (a binary log), or the classes of the
        ``NAME[CLASS]`` columns (a multiclass log); a label outside it is an error naming its row.

    Returns
    -------
    y : ndarray or VoteCounts
        As :func:`read_predictions_csv` returns it.
    predictions : dict
        Model name -> array.
    classes : list of str or None
        The classes of a multiclass log (``None`` otherwise).
    """
    path = rows.source
    header = list(df.columns)
    missing_ignored = [c for c in ignore if c not in header]
    if missing_ignored:
        raise CSVFormatError(f"{path}: --ignore names columns that do not exist: {missing_ignored}.")
    if df.shape[0] == 0:
        raise CSVFormatError(f"{path}: the file has a header but no data rows.")
    cols = [c for c in header if c not in set(ignore)]
    snap_re = re.compile(rf"^{re.escape(label)}\d+$")
    count_re = re.compile(rf"^{re.escape(label)}(\[.+\]|:positive|:total)$")  # vote-count columns
    labelled = {c for c in cols if c == label or snap_re.match(c) or count_re.match(c)}
    if models is not None:
        keep = set(models)
        found = {model_base(c) for c in cols if c not in labelled}
        missing = [m for m in models if m not in found]
        if missing:
            raise CSVFormatError(
                f"{path}: --model names models that are not in the log: {missing} (its models: "
                f"{sorted(found)})."
            )
        cols = [c for c in cols if c in labelled or model_base(c) in keep]
    snap_cols = [c for c in cols if snap_re.match(c)]
    count_cols = [c for c in cols if count_re.match(c)]
    if label in cols and snap_cols:
        raise CSVFormatError(
            f"{path}: found both a label column {label!r} and snapshot columns {snap_cols}; use one or "
            "the other (or --ignore some)."
        )
    if count_cols and (label in cols or snap_cols):
        raise CSVFormatError(f"{path}: found both vote-count columns {count_cols} and other label columns.")
    if count_cols:
        y, preds = _vote_counts(df, rows, label, cols, count_cols)
        return y, preds, None
    if label in cols:
        model_cols = [c for c in cols if c != label]
        if not model_cols:
            raise CSVFormatError(f"{path}: no model columns besides the label column {label!r}.")
        paired = [c for c in model_cols if c.endswith((":m", ":sigma2"))]
        if paired:
            raise CSVFormatError(
                f"{path}: columns {paired} are second-order (NAME:m / NAME:sigma2) but the file has a "
                f"single label column {label!r}; second-order scores need snapshot columns "
                f"{label}1, {label}2, ..."
            )
        bracketed = [c for c in model_cols if CLASS_COLUMN.match(c)]
        if bracketed:
            return _multiclass(df, rows, label, model_cols, bracketed, labels)
        y = binary_labels(df[label], rows, label, pos_label, labels)
        preds = {c: _model_column(df, c, rows, 0.0, 1.0, "probability", "probabilities") for c in model_cols}
        return y, preds, None
    if len(snap_cols) >= 2:
        Y, preds = _snapshots(df, rows, cols, snap_cols)
        return Y, preds, None
    raise CSVFormatError(
        f"{path}: no label column; expected a column named {label!r} (--label {label}; one label per row) "
        f"or snapshot columns {label}1, {label}2, ... (several votes per row). Columns found: {header}. "
        "Use --label to name the label column."
    )


class Log:
    """A whole log read by :func:`read_log`: labels, predictions, classes and the time span.

    Attributes
    ----------
    y : ndarray or VoteCounts
        As :func:`read_predictions_csv` returns it.
    predictions : dict
        Model name -> array.
    classes : list of str or None
        The classes of a multiclass log.
    n_rows : int
        The rows.
    times : pandas.Series or None
        The ``--time`` column, parsed (:func:`parse_times`).
    """

    def __init__(self, y, predictions, classes, n_rows, times=None):
        self.y = y
        self.predictions = predictions
        self.classes = classes
        self.n_rows = int(n_rows)
        self.times = times

    def time_span(self):
        """``(first, last)`` times as text (ISO 8601 for datetimes), or None without ``--time``."""
        if self.times is None or not len(self.times):
            return None
        return _span(self.times.min(), self.times.max())


def read_log(path, *, label="y", pos_label=None, labels=None, ignore=(), models=None, time=None):
    """Read a whole log of labels and predictions (a file or a folder, CSV or parquet).

    Parameters
    ----------
    path : str or path-like
        A CSV (``.csv``, ``.csv.gz``) or parquet file, or a folder of them.
    label, pos_label, ignore, models : see :func:`read_predictions_csv`
    labels : list of str or None, default=None
        As in :func:`parse_predictions`.
    time : str or None, default=None
        ``--time``: a time column (not a model), parsed and checked.

    Returns
    -------
    Log
    """
    try:
        header = read_columns(path)  # every file's header checked, and the same columns in every file
        if time is not None and time not in header:
            raise CSVFormatError(f"--time {time}: {path} has no column {time!r} (its columns: {header}).")
        df, parts = read_table(path, dtype=str)
    except CSVFormatError:
        raise
    except LogFormatError as exc:
        raise CSVFormatError(str(exc)) from None
    rows = Rows(parts, path)
    skip = [*ignore, *([time] if time is not None and time not in ignore else [])]
    y, preds, classes = parse_predictions(
        df, rows, label=label, pos_label=pos_label, ignore=skip, models=models, labels=labels
    )
    times = None if time is None else parse_times(df[time], time, rows)
    return Log(y, preds, classes, df.shape[0], times)


def read_predictions(path, *, label="y", pos_label=None, ignore=(), models=None):
    """Read a whole log of labels and predictions (a file or a folder, CSV or parquet).

    Parameters
    ----------
    path : str or path-like
        A CSV (``.csv``, ``.csv.gz``) or parquet file, or a folder of them.
    label, pos_label, ignore, models : see :func:`read_predictions_csv`

    Returns
    -------
    y, predictions, classes
        As :func:`parse_predictions` returns them.
    """
    log = read_log(path, label=label, pos_label=pos_label, ignore=ignore, models=models)
    return log.y, log.predictions, log.classes


@validate_params(
    {
        "path": [str, os.PathLike],
        "label": [str],
        "pos_label": [str, None],
        "ignore": [list, tuple],
        "models": [list, tuple, None],
        "return_labels": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def read_predictions_csv(path, *, label="y", pos_label=None, ignore=(), models=None, return_labels=False):
    """Read a CSV file of labels and model predictions (the column convention of ``skcal report``).

    Parameters
    ----------
    path : str or path-like
        The CSV file (``.csv``, or gzip-compressed ``.csv.gz``).
    label : str, default="y"
        Name of the label column; snapshot columns are ``label`` followed by digits.
    pos_label : str, default=None
        The positive class when the labels are not 0/1, -1/1 or true/false.
    ignore : sequence of str, default=()
        Columns to skip (e.g. an id column).
    models : sequence of str, default=None
        Allow-list: read only these models (every other model column is skipped).
    return_labels : bool, default=False
        Also return the class names of a multiclass file (``None`` otherwise).

    Returns
    -------
    y : ndarray of shape (n,) or (n, k), or VoteCounts
        Labels (0/1 floats), class codes ``0..k-1`` (multiclass, in the order of the first
        model's columns), snapshots (0/1 floats, NaN for a missing vote) or vote counts.
    predictions : dict
        Model name -> ``(n,)`` probabilities, ``(n, k)`` class probabilities or ``(n, 2)``
        scores ``(m, sigma2)``.
    labels : list of str or None
        With ``return_labels=True``: the class of each probability column (multiclass only).

    Raises
    ------
    CSVFormatError
        A ``ValueError`` that names the file, the column and the line of the first problem.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from skcal.cli import read_predictions_csv
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "val.csv"
    >>> _ = path.write_text("y,logistic\\n1,0.9\\n0,0.2\\n")
    >>> y, preds = read_predictions_csv(path)
    >>> y, preds["logistic"]
    (array([1., 0.]), array([0.9, 0.2]))
    """
    path = str(path)
    if os.path.isdir(path):
        raise CSVFormatError(f"{path}: is a directory; expected a CSV file of labels and predictions.")
    if not os.path.exists(path):
        raise CSVFormatError(f"{path}: no such file.")
    y, preds, classes = read_predictions(path, label=label, pos_label=pos_label, ignore=ignore, models=models)
    return (y, preds, classes) if return_labels else (y, preds)


# ----------------------------------------------------------------------------------------------
# the flags of the convention, the same for every command
# ----------------------------------------------------------------------------------------------
def _label_list(text):
    labels = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in labels):
        raise argparse.ArgumentTypeError(f"expected labels separated by commas (e.g. no,yes), got {text!r}")
    if len(set(labels)) != len(labels):
        raise argparse.ArgumentTypeError(f"a label is given twice in {text!r}")
    return labels


class _DeprecatedModels(argparse.Action):
    """``--models a,b``: the old spelling of ``--model a,b``; still works, with a one-line note."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            f"{parser.prog}: note: --models is deprecated; use --model NAME (repeatable, commas "
            "accepted: --model a,b).",
            file=sys.stderr,
        )
        items = getattr(namespace, self.dest) or []
        setattr(namespace, self.dest, [*items, values])


def add_column_arguments(parser, *, several_models):
    """Register the flags of the column convention on a command's parser (the same for every command).

    ``--label COL``, ``--pos-label VALUE``, ``--labels A,B,...``, ``--model NAME`` (repeatable,
    commas accepted), ``--ignore COL`` (repeatable) and ``--time COL``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    several_models : bool
        Whether the command reads several models (``skcal report``: ``--model`` is an
        allow-list, and ``--models`` its deprecated alias) or one (``skcal monitor``).
    """
    parser.add_argument("--label", default="y", metavar="COL", help="the label column (default: %(default)s)")
    parser.add_argument(
        "--pos-label",
        default=None,
        metavar="VALUE",
        help="the positive class of binary labels other than 0/1, -1/1 or true/false",
    )
    parser.add_argument(
        "--labels",
        type=_label_list,
        default=None,
        metavar="A,B,...",
        help=(
            "the full label set, fixed before the first row is read (default: the labels of the whole "
            "log, read by a first pass over the label column); a label outside it is an error naming "
            "its file and row"
        ),
    )
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="NAME",
        help=(
            "read only model NAME (repeatable, commas accepted: --model a,b; default: every model column)"
            if several_models
            else "the model to monitor when the log has several (commas are not needed: one model)"
        ),
    )
    if several_models:
        parser.add_argument(
            "--models",
            action=_DeprecatedModels,
            dest="model",
            metavar="NAME,...",
            help="deprecated: the old spelling of --model (still works, with a note on stderr)",
        )
    parser.add_argument(
        "--ignore", action="append", default=[], metavar="COL", help="skip column COL (repeatable)"
    )
    parser.add_argument(
        "--time",
        default=None,
        metavar="COL",
        help=(
            "the time column (ISO 8601 datetimes or numbers): not a model; the report states the span "
            "it covers"
            if several_models
            else "the time column (ISO 8601 datetimes or numbers, non-decreasing over the log)"
        ),
    )


def model_names(values):
    """The model names of ``--model`` (repeatable, commas accepted), in order, each once; None if not given.

    Parameters
    ----------
    values : list of str or None
        What argparse collected.

    Returns
    -------
    list of str or None

    Examples
    --------
    >>> model_names(["a,b", "c", "a"])
    ['a', 'b', 'c']
    """
    if values is None:
        return None
    names = [n.strip() for v in values for n in v.split(",")]
    return list(dict.fromkeys(n for n in names if n))
