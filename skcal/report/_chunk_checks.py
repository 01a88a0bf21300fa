"""The labels and the rows of an out-of-core report's chunks, checked as they arrive.

In memory a report sees all labels at once; past memory it sees one chunk at a time. The label
set is either fixed before the first chunk (``labels=``: :func:`check_label_set`, then
:func:`check_chunk_labels` on every chunk) or the union of the chunks' labels, checked chunk by
chunk against the in-memory rule (:class:`SeenLabels`); every error names the chunk and the row.
:func:`check_first_row` keeps the chunks in order (a chunk's first row keys its bootstrap weights).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._validation import binary_labels, label_array, plain, unique_labels

__all__ = ["SeenLabels", "check_chunk_labels", "check_first_row", "check_label_set"]


def check_label_set(labels, pos_label):
    """The label set of an out-of-core report, checked: at most two labels, mapped to 0/1 as in memory.

    ``pos_label`` must be one of two labels; without it the labels must be ``{0, 1}``,
    ``{-1, 1}`` or booleans (the in-memory report's rule).

    Parameters
    ----------
    labels : array-like of shape (1,) or (2,)
        The labels.
    pos_label : int, float, bool, str or None
        The positive class.

    Returns
    -------
    ndarray
        The labels.
    """
    arr = label_array(labels, "labels")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"labels must be a non-empty list of labels; got an array of shape {arr.shape}.")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"labels has duplicates: {plain(arr)}.")
    binary_labels(arr, pos_label, "labels")  # at most two, and which one is positive
    return arr


def _same_kind(a, b):
    return (a.dtype.kind in "biuf") == (b.dtype.kind in "biuf")


def _chunk_labels(y):
    """The chunk's labels as a 1-D array (other shapes are left to the chunk's own check)."""
    yl = label_array(y, "y")
    return yl[:, 0] if yl.ndim == 2 and yl.shape[1] == 1 else yl


def check_chunk_labels(y, labels, first_row):
    """Raise naming the chunk and the row when a label of the chunk is not in ``labels``.

    Parameters
    ----------
    y : array-like of shape (n,)
        The chunk's labels.
    labels : ndarray
        The label set (:func:`check_label_set`).
    first_row : int
        The global index of the chunk's first row.
    """
    yl = _chunk_labels(y)
    if yl.ndim != 1 or yl.size == 0:
        return
    out = ~np.isin(yl, labels) if _same_kind(yl, labels) else np.ones(yl.shape, dtype=bool)
    if yl.dtype.kind == "f":
        out &= ~np.isnan(yl)  # a missing label is the chunk's own error (check_binary_probabilities)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"y: the chunk whose first row is {first_row} holds the label {plain(yl[i])!r} at row "
            f"{first_row + i}, which is not in labels {plain(labels)} (the label set is fixed before the "
            f"first chunk; {int(out.sum())} rows of this chunk hold labels outside it)."
        )


class SeenLabels:
    """The labels of the chunks so far, checked chunk by chunk against the in-memory rule.

    Without a label set given in advance, each chunk's labels are mapped to 0/1 by the same rule
    as in memory (``pos_label``, else ``{0, 1}``, ``{-1, 1}`` or booleans), which gives every
    valid label set the same mapping whichever of its labels a chunk holds; what a chunk cannot
    see is a label of another chunk that makes the whole set invalid (a third label, ``{0, 1}``
    in one chunk and ``{-1, 1}`` in another, two labels without ``pos_label`` among them). This
    keeps the union of the labels seen and raises, naming the chunk and the row, when a chunk's
    label makes it invalid: the report's labels are those of all chunks, as in memory, without
    a pass of their own.

    Parameters
    ----------
    pos_label : int, float, bool, str or None
        The positive class.
    """

    def __init__(self, pos_label):
        self.pos_label = pos_label
        self.classes = None

    def add(self, y, first_row):
        """Fold in one chunk's labels (the global index of its first row names it in errors)."""
        yl = _chunk_labels(y)
        if yl.ndim != 1 or yl.size == 0:
            return
        u = unique_labels(yl)
        if self.classes is None:
            try:
                binary_labels(u, self.pos_label, "y")
            except ValueError:
                return  # the chunk's own labels are wrong: its check says so, as in memory
            self.classes = u
            return
        old = self.classes
        if not _same_kind(u, old):
            new, reason = None, "labels of another type than those of the chunks before it"
        else:
            new, reason = np.unique(np.concatenate([old, u])), None
            try:
                binary_labels(new, self.pos_label, "y")
            except ValueError as exc:
                reason = str(exc)
        if reason is not None:
            fresh = ~np.isin(yl, old) if new is not None else np.ones(yl.shape, dtype=bool)
            i = int(np.flatnonzero(fresh)[0])
            raise ValueError(
                f"y: the chunk whose first row is {first_row} holds the label {plain(yl[i])!r} at row "
                f"{first_row + i}, which the chunks before it did not hold (their labels: {plain(old)}); "
                f"with it the labels are not one binary label set: {reason} Pass labels= to fix the "
                "label set before the first chunk."
            )
        self.classes = new


def check_first_row(first_row, delivered, n_samples, n):
    """The chunk's ``first_row`` as an int, checked against the rows the chunks before it delivered."""
    if isinstance(first_row, bool) or not isinstance(first_row, Integral):
        raise ValueError(
            f"batches: a chunk's first_row must be an integer (the global index of its first row); got "
            f"{plain(first_row)!r}."
        )
    first_row = int(first_row)
    if first_row != delivered:
        raise ValueError(
            f"batches: a chunk says its first row is {first_row}, but the chunks before it delivered "
            f"{delivered} rows; first_row must be the index of the chunk's first row in the whole data "
            "(the chunks in order, without gaps or overlaps: it keys the bootstrap weights)."
        )
    if delivered + n > n_samples:
        raise ValueError(
            f"batches: the chunk whose first row is {first_row} holds {n} rows, so the data hold more than "
            f"n_samples={n_samples} rows."
        )
    return first_row
