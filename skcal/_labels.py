"""The labels of a log: one rule that turns a label column into 0/1 or class codes.

The label set of a log is fixed before its rows are read (given with ``--labels``, or the labels
of the whole log, read by a first pass over the label column), so every file and chunk of a log
reads its labels by the same rule; a label outside the set is an error naming its file and row.
Two spellings of one label (``1`` and ``1.0``, ``True`` and ``true``) are one label
(:func:`canonical_label`). :class:`BinaryLabels` is the rule of a binary log,
:func:`class_codes` reads a multiclass label column against the classes of its model columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from skcal._io import CSVFormatError

__all__ = [
    "MISSING",
    "BinaryLabels",
    "as_text",
    "binary_labels",
    "canonical_label",
    "class_codes",
    "first_seen",
]

#: The cells read as a missing value.
MISSING = ["nan", "na", "n/a", "null", "none"]


def as_text(series):
    """The cells of a column as stripped text (typed cells through ``str``)."""
    if pd.api.types.is_string_dtype(series) or series.dtype == object:
        return series.astype(str).str.strip()
    return series.astype(str)


def canonical_label(text):
    """The form two spellings of one label share: ``"1"``, ``"1.0"`` -> ``"1"``; ``"True"`` -> ``"true"``.

    Parameters
    ----------
    text : str
        A label as text (stripped).

    Returns
    -------
    str

    Examples
    --------
    >>> [canonical_label(t) for t in ["1.0", "1", "-1", "TRUE", "yes", "0.50"]]
    ['1', '1', '-1', 'true', 'yes', '0.5']
    """
    text = str(text).strip()
    low = text.lower()
    if low in ("true", "false"):
        return low
    try:
        v = float(text)
    except ValueError:
        return text
    if not np.isfinite(v):
        return low
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def first_seen(series, rows, seen=None):
    """Add the labels of a label column to ``seen``: canonical label -> ``(text, where)`` of its first row.

    Parameters
    ----------
    series : pandas.Series
        The label column of a frame (text or typed cells).
    rows : Rows
        Where the frame's rows come from.
    seen : dict or None, default=None
        The labels of earlier frames (updated in place; None: a new dict).

    Returns
    -------
    dict
    """
    seen = {} if seen is None else seen
    # the distinct values first (a hash pass over the typed column), then each one's text
    uniq = as_text(pd.Series(series).reset_index(drop=True).drop_duplicates())
    for i, t in uniq.items():
        c = canonical_label(t)
        if c not in seen:
            f, where = rows.at(int(i))
            seen[c] = (t, f"{f}: {where}")
    return seen


def _shown(labels, limit=10):
    labels = list(labels)
    return f"{labels[:limit]}{'...' if len(labels) > limit else ''}"


class BinaryLabels:
    """How the labels of a binary log become 0/1: one rule for every command, file and chunk.

    The label set is fixed before the rows are read: given (``--labels``) or the labels of the
    whole log (read by a first pass over the label column, or from the rows in memory). The
    positive class is ``--pos-label``; without it the labels must be 0/1, -1/1 or true/false.
    Two spellings of one label (``1`` and ``1.0``, ``True`` and ``true``) are one label.

    Parameters
    ----------
    column : str
        The label column.
    labels : list of str
        The canonical labels of the set.
    positive : str or None
        The canonical positive label.
    """

    def __init__(self, column, labels, positive):
        self.column = column
        self.labels = list(labels)
        self.positive = positive

    @classmethod
    def from_seen(cls, column, seen, *, pos_label=None, labels=None, source=""):
        """The rule for the labels ``seen`` (canonical -> ``(text, where)``, from :func:`first_seen`).

        Parameters
        ----------
        column : str
            The label column.
        seen : dict
            The labels of the log, each with its first row.
        pos_label : str or None, default=None
            ``--pos-label``.
        labels : list of str or None, default=None
            ``--labels``: the label set given in advance.
        source : str, default=""
            The log, for messages.

        Returns
        -------
        BinaryLabels
        """
        col = column
        for c, (text, where) in seen.items():
            if text == "" or c.lower() in MISSING:
                raise CSVFormatError(
                    f"{where}: label column {col!r} has an empty or missing label ({text!r})."
                )
        if labels is not None:
            given = list(dict.fromkeys(canonical_label(t) for t in labels))
            for c, (text, where) in seen.items():
                if c not in given:
                    raise CSVFormatError(
                        f"{where}: label column {col!r} holds {text!r}, which is not one of --labels "
                        f"{','.join(labels)}."
                    )
            universe = given
        else:
            universe = list(seen)
        shown = _shown(sorted(universe))
        if len(universe) > 2:
            if labels is not None:
                raise CSVFormatError(
                    f"--labels {','.join(labels)}: {len(universe)} labels, but every model has one "
                    "probability column (two labels); a multiclass log gives one column per class per "
                    "model, NAME[CLASS]."
                )
            extra = list(seen)[2]  # the third label in reading order
            raise CSVFormatError(
                f"{source}: label column {col!r} holds {len(universe)} classes {shown} (e.g. "
                f"{seen[extra][0]!r} first at {seen[extra][1]}), but every model has one column; a "
                "multiclass file gives one column per class per model, named NAME[CLASS] (see "
                "'skcal report --help')."
            )
        if pos_label is not None:
            pos = canonical_label(pos_label)
            if pos not in universe and len(universe) == 2:
                raise CSVFormatError(
                    f"{source}: --pos-label {pos_label!r} is not a label in column {col!r}: {shown}."
                )
            return cls(col, sorted(set(universe) | {pos}), pos)
        if set(universe) <= {"true", "false"}:
            return cls(col, sorted(universe), "true")
        try:
            values = {float(c) for c in universe}
        except ValueError:
            values = None
        if values is not None and (values <= {0.0, 1.0} or values <= {-1.0, 1.0}):
            return cls(col, sorted(universe), "1")
        if values is not None and values <= {-1.0, 0.0, 1.0}:
            raise CSVFormatError(
                f"{source}: label column {col!r} mixes 0 and -1 {shown}; expected 0/1 or -1/1 (or name the "
                "positive class with --pos-label)."
            )
        if values is None:
            raise CSVFormatError(
                f"{source}: label column {col!r} has labels {shown}; pass --pos-label VALUE to say which "
                "is the positive class."
            )
        raise CSVFormatError(
            f"{source}: label column {col!r} has labels {shown}; expected 0/1 (or -1/1, true/false), or pass "
            "--pos-label VALUE."
        )

    def encode(self, series, rows):
        """0/1 floats of a label column; a label outside the set is an error naming its file and row.

        Each distinct value is read once (``pandas.factorize``, a hash pass), then every row
        takes its value's 0/1 by its code.
        """
        s = pd.Series(series).reset_index(drop=True)
        codes, uniques = pd.factorize(s, use_na_sentinel=False)
        texts = as_text(pd.Series(uniques, dtype=s.dtype if len(uniques) else object))
        canon = [canonical_label(t) for t in texts]
        known = np.array([c in self.labels for c in canon] + [False], dtype=bool)  # code -1: none
        if not known[codes].all():
            i = int(np.flatnonzero(~known[codes])[0])
            text, c = texts.iloc[codes[i]], canon[codes[i]]
            what = "an empty or missing label" if c.lower() in MISSING or text == "" else repr(text)
            raise CSVFormatError(
                rows.say(
                    i,
                    f"label column {self.column!r} holds {what} at {{at}}, which is not one of the labels "
                    f"{self.labels} (fixed before the first row was read).",
                )
            )
        positive = np.array([c == self.positive for c in canon] + [False], dtype=np.float64)
        return positive[codes]

    def state(self):
        """The rule as JSON types (for a monitor's state)."""
        return {"column": self.column, "labels": list(self.labels), "positive": self.positive}


def binary_labels(series, rows, col, pos_label, labels=None):
    """0/1 floats from a binary label column (0/1, true/false, -1/1, or two values and a positive one)."""
    rule = BinaryLabels.from_seen(
        col, first_seen(series, rows), pos_label=pos_label, labels=labels, source=rows.source
    )
    return rule.encode(series, rows)


def class_codes(series, classes, column, rows):
    """A multiclass label column as ``(text, codes)``: each label's text and its index in ``classes``.

    Parameters
    ----------
    series : pandas.Series
        The label column.
    classes : list of str
        The classes (of the ``NAME[CLASS]`` columns).
    column : str
        The label column's name.
    rows : Rows
        Where the rows come from.

    Returns
    -------
    text : ndarray of object
    codes : ndarray of intp

    Raises
    ------
    CSVFormatError
        Naming the file and row of the first label that is not a class.
    """
    raw = as_text(pd.Series(series).reset_index(drop=True)).to_numpy(dtype=object)
    codes = pd.Index(classes).get_indexer(raw)
    unknown_rows = np.flatnonzero(codes < 0)
    if unknown_rows.size:
        i = int(unknown_rows[0])
        unknown = sorted({str(v) for v in raw[unknown_rows]})
        raise CSVFormatError(
            rows.say(
                i,
                f"label column {column!r} holds {raw[i]!r} at {{at}}, which is not one of the classes of "
                f"the NAME[CLASS] columns {list(classes)} ({len(unknown)} unknown labels: {unknown[:5]}).",
            )
        )
    return raw, codes.astype(np.intp)
