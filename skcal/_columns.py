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

import os
import re

import numpy as np
import pandas as pd

from skcal._compat import validate_params
from skcal._io import LogFormatError, file_format, read_columns, read_table
from skcal.votes import Snapshots, VoteCounts

__all__ = [
    "CSVFormatError",
    "CLASS_COLUMN",
    "model_base",
    "parse_predictions",
    "read_predictions",
    "read_predictions_csv",
]


class CSVFormatError(LogFormatError):
    """A log of predictions that does not follow the column convention (``skcal report --help``)."""


#: ``NAME[CLASS]``: a model's column for one class.
CLASS_COLUMN = re.compile(r"^(.+)\[(.+)\]$")

_ID_NAME = re.compile(r"^(id|ids|index|idx|key|name|names|uid|uuid|row|rows|sample|example)$|[_ -]id$", re.I)
_TIME_NAME = re.compile(r"^(t|ts|time|timestamp|date|datetime|day|hour|when)$|[_ -](time|ts|at|date)$", re.I)
_MISSING = ["nan", "na", "n/a", "null", "none"]


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


def _looks_like_time(col, raw, bad):
    """Whether a non-numeric column looks like a time column (by its name, or ISO 8601 cells)."""
    if _TIME_NAME.search(col):
        return True
    sample = raw[bad.to_numpy()].head(20)
    try:
        pd.to_datetime(sample, format="ISO8601")
    except (ValueError, TypeError):
        return False
    return True


def _as_text(series):
    if pd.api.types.is_string_dtype(series) or series.dtype == object:
        return series.astype(str).str.strip()
    return series.astype(str)


def _parse_numeric(df, col, rows):
    """``(values, empty)`` of a numeric column: floats (NaN where empty) and the empty cells."""
    s = df[col]
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        return values, np.isnan(values)
    raw = _as_text(s)
    empty = (raw == "") | raw.str.lower().isin(_MISSING)
    values = pd.to_numeric(raw.where(~empty), errors="coerce")
    bad = values.isna() & ~empty
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        hint = ""
        if _looks_like_time(col, raw, bad):
            hint = f" It looks like a time column: skip it with --ignore {col}."
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


def _multiclass(df, rows, label, model_cols, bracketed):
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
    raw = _as_text(df[label]).to_numpy(dtype=object)
    codes = pd.Index(classes).get_indexer(raw)
    unknown_rows = np.flatnonzero(codes < 0)
    if unknown_rows.size:
        i = int(unknown_rows[0])
        unknown = sorted({str(v) for v in raw[unknown_rows]})
        raise CSVFormatError(
            rows.say(
                i,
                f"label column {label!r} holds {raw[i]!r} at {{at}}, which is not one of the classes of the "
                f"NAME[CLASS] columns {classes} ({len(unknown)} unknown labels: {unknown[:5]}).",
            )
        )
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


def _labels(series, rows, col, pos_label):
    """0/1 floats from a binary label column (0/1, true/false, -1/1, or two values and a positive one)."""
    path = rows.source
    raw = _as_text(series).to_numpy(dtype=object)
    low = pd.Series(raw, dtype=object).str.lower().to_numpy(dtype=object)
    empty = (raw == "") | (low == "nan")
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise CSVFormatError(rows.say(i, f"label column {col!r} has an empty or NaN cell at {{at}}."))
    values = np.unique(raw.astype(str))
    if len(values) > 2:
        raise CSVFormatError(
            f"{path}: label column {col!r} holds {len(values)} classes "
            f"{values[:10].tolist()}{'...' if len(values) > 10 else ''}, but every model has one column; "
            "a multiclass file gives one column per class per model, named NAME[CLASS] (see "
            "'skcal report --help')."
        )
    num = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=float)
    numeric = not np.isnan(num).any()
    if pos_label is not None:
        pos = str(pos_label)
        if pos in values.tolist():
            return (raw == pos).astype(float)
        try:  # numeric labels written differently ("1" vs "1.0")
            target = float(pos)
        except ValueError:
            target = None
        if numeric and target is not None:
            return (num == target).astype(float)
        raise CSVFormatError(
            f"{path}: --pos-label {pos!r} is not a label in column {col!r}: {values.tolist()}."
        )
    if set(np.unique(low).tolist()) <= {"true", "false"}:
        return (low == "true").astype(float)
    if not numeric:
        raise CSVFormatError(
            f"{path}: label column {col!r} has labels {values.tolist()}; pass --pos-label to say which is "
            "the positive class."
        )
    classes = set(np.unique(num).tolist())
    if classes <= {0.0, 1.0}:
        return num
    if classes <= {-1.0, 1.0}:
        return (num == 1.0).astype(float)
    raise CSVFormatError(
        f"{path}: label column {col!r} has labels {sorted(classes)}; expected 0/1 (or -1/1, true/false), "
        "or pass --pos-label."
    )


def parse_predictions(df, rows, *, label="y", pos_label=None, ignore=(), models=None):
    """Labels and model predictions from a frame that follows the column convention.

    Parameters
    ----------
    df : pandas.DataFrame
        The log's rows (text cells or typed columns).
    rows : Rows
        Where each row comes from, for the messages.
    label, pos_label, ignore, models : see :func:`read_predictions_csv`

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
            raise CSVFormatError(f"{path}: --models names models that are not in the file: {missing}.")
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
            return _multiclass(df, rows, label, model_cols, bracketed)
        y = _labels(df[label], rows, label, pos_label)
        preds = {c: _model_column(df, c, rows, 0.0, 1.0, "probability", "probabilities") for c in model_cols}
        return y, preds, None
    if len(snap_cols) >= 2:
        Y, preds = _snapshots(df, rows, cols, snap_cols)
        return Y, preds, None
    raise CSVFormatError(
        f"{path}: no label column; expected a column named {label!r} (one label per row) or snapshot "
        f"columns {label}1, {label}2, ... (several votes per row). Columns found: {header}. "
        "Use --label to name the label column."
    )


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
    try:
        read_columns(path)  # every file's header checked, and the same columns in every file
        df, parts = read_table(path, dtype=str)
    except CSVFormatError:
        raise
    except LogFormatError as exc:
        raise CSVFormatError(str(exc)) from None
    return parse_predictions(
        df, Rows(parts, path), label=label, pos_label=pos_label, ignore=ignore, models=models
    )


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
