"""Snapshots and vote counts as the inputs of second-order measures and estimators.

A function that takes second-order labels reads them from what they are declared to be: counts
(:class:`~skcal.votes.VoteCounts`) or individual votes (:class:`~skcal.votes.Snapshots`). A plain
array is the spec's snapshots (``r`` votes per row, NaN for a missing vote), unless it has as
many columns as the task has classes (``k``; 2 for a binary task): then it is also a table of
counts per class (votes for class 0, votes for class 1, ...), the two readings give different
numbers, and it is refused with both named (:func:`refuse_ambiguous_votes`), never read by a
guess. The rule looks at the number of columns alone, never at the values, so an array, its
chunks, its partitions and its samples all get the same answer.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import NON_NEGATIVE_INT, POSITIVE_INT, StrictInterval
from skcal._validation import binary_labels
from skcal.votes._containers import (
    Snapshots,
    VoteCounts,
    binary_vote_values,
    class_vote_counts,
    unbiased_targets,
    vote_array,
)

__all__ = [
    "check_class_votes",
    "check_snapshots",
    "first_order_targets",
    "refuse_ambiguous_votes",
    "require_pairs",
    "snapshot_targets",
    "snapshot_votes",
]


@validate_params(
    {"Y": [np.ndarray], "name": [str], "n_classes": [StrictInterval(Integral, 2, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def refuse_ambiguous_votes(Y, name, n_classes):
    """Refuse a plain array of votes that is also a table of counts per class of the task.

    A plain ``(n, r)`` array is snapshots (``r`` votes per row) in the spec's convention; with
    ``r`` equal to the task's number of classes (``n_classes``; 2 for a binary task) it is also
    ``VoteCounts(counts=Y)`` (row ``i`` holds the votes for each class), and the two readings give
    different numbers. Then this raises, naming both readings and the two containers that say
    which is meant. It looks at the number of columns alone: a plain array with two columns of 0/1
    is refused for a binary task whatever its values (a table of counts of two classes can hold the
    same 0/1 entries, as doubly-labelled data does: rows of one vote beside rows of two), so that
    the answer never depends on the rows a chunk, a partition or a sample happens to hold.

    Parameters
    ----------
    Y : ndarray of shape (n, r)
        Votes as :func:`skcal.votes.vote_array` returns them.
    name : str
        The argument's name in error messages.
    n_classes : int
        The number of classes of the task (2 for binary).

    Returns
    -------
    ndarray
        ``Y``, when it has another number of columns (then it can only be snapshots).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import refuse_ambiguous_votes
    >>> refuse_ambiguous_votes(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), "y", 2).shape  # 3 votes
    (2, 3)
    >>> refuse_ambiguous_votes(np.array([[1.0, 0.0], [1.0, 1.0]]), "y", 2)
    Traceback (most recent call last):
    ...
    ValueError: y is a plain array with 2 columns, as many as the task has classes: ...
    """
    if Y.shape[1] != n_classes:
        return Y
    what = "0/1 votes" if n_classes == 2 else f"class labels 0..{n_classes - 1}"
    raise ValueError(
        f"{name} is a plain array with {n_classes} columns, as many as the task has classes: it reads "
        f"two ways, as snapshots ({n_classes} {what} per row) or as counts per class (row i holds the "
        f"number of votes for each of the {n_classes} classes), and the two give different numbers. "
        f"Say which it is: skcal.Snapshots({name}) for votes, or skcal.VoteCounts(counts={name}) for "
        "counts per class."
    )


def _check_items(votes, name, min_votes, n_samples):
    """``votes`` (:class:`VoteCounts`) once every item has ``min_votes`` votes and there are ``n_samples``."""
    c = votes.total
    if (c < min_votes).any():
        i = int(np.argmax(c < min_votes))
        raise ValueError(
            f"Every item of {name} needs at least {min_votes} votes; item {i} has {int(c[i])}. "
            + _SINGLE_LABEL_HINT
        )
    if n_samples is not None and len(votes) != n_samples:
        raise ValueError(f"{name} has {len(votes)} items; expected {n_samples} (one per score).")
    return votes


@validate_params(
    {
        "snapshots": ["array-like"],
        "name": [str],
        "n_samples": [*NON_NEGATIVE_INT, None],
        "min_votes": POSITIVE_INT,
    },
    prefer_skip_nested_validation=True,
)
def check_snapshots(snapshots, *, name="snapshots", n_samples=None, min_votes=2):
    """Validate binary votes: snapshots ``(n, r)`` (NaN marks a missing vote) or vote counts.

    ``snapshots`` is a :class:`~skcal.votes.VoteCounts` (binary counts, or counts of two classes,
    whose column 1 is the positive class), returned as binary counts after the same row checks
    (so that every caller takes counts without building a padded array; pass the result on to
    :func:`snapshot_targets`); a :class:`~skcal.votes.Snapshots` of 0/1 votes; or a plain array
    of 0/1 votes, read as snapshots unless it is also a table of counts of two classes
    (:func:`refuse_ambiguous_votes`). Each row needs at least ``min_votes`` votes: 2 for anything
    second order (``t2`` needs a pair of votes), 1 for first-order uses. Boolean input is
    converted to float first (for numpy booleans ``+`` is a logical OR); pandas nullable dtypes
    with ``pd.NA`` are read with ``NA`` as a missing vote.

    Parameters
    ----------
    snapshots : array-like of shape (n, r), Snapshots or VoteCounts
        The votes.
    name : str, default="snapshots"
        The argument's name in error messages.
    n_samples : int, default=None
        The expected number of rows.
    min_votes : int, default=2
        The votes every row needs.

    Returns
    -------
    ndarray of shape (n, r) or VoteCounts
        A fresh float64 array (NaN for a missing vote), or the counts themselves.
    """
    if isinstance(snapshots, VoteCounts):
        if snapshots.counts is not None:
            if snapshots.counts.shape[1] > 2:
                raise ValueError(
                    f"{name} holds votes of {snapshots.counts.shape[1]} classes, but this takes binary votes "
                    "(one positive class). Pass k-class scores ((n, k, 2) or (n, 2k)) for the k-class "
                    f"measure, or {name}.one_vs_rest(j) for the one-vs-rest task of class j."
                )
            snapshots = VoteCounts(snapshots.positive, snapshots.total)  # k = 2: column 1 is positive
        return _check_items(snapshots, name, min_votes, n_samples)
    declared = isinstance(snapshots, Snapshots)
    if declared:
        Y = snapshots.votes.copy()
    else:
        if np.ndim(snapshots) == 1:
            raise ValueError(
                f"{name} must be 2-dimensional, (n, k) snapshots (k >= {min_votes} labels per row), or "
                f"skcal.votes.VoteCounts; got a 1-D array of shape {np.shape(snapshots)}, i.e. one label "
                "per row. " + _SINGLE_LABEL_HINT
            )
        Y = vote_array(snapshots, name)
    if Y.shape[1] < min_votes:
        raise ValueError(
            f"{name} must have at least {min_votes} columns (independent labels per input); got shape "
            f"{Y.shape}. " + _SINGLE_LABEL_HINT
        )
    binary_vote_values(Y, name)
    counts = (~np.isnan(Y)).sum(axis=1)
    if (counts < min_votes).any():
        raise ValueError(
            f"Every row of {name} needs at least {min_votes} votes; row {int(np.argmax(counts < min_votes))} "
            f"has {int(counts.min())}. " + _SINGLE_LABEL_HINT
        )
    if not declared:
        refuse_ambiguous_votes(Y, name, 2)
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows; expected {n_samples} (one per score).")
    return Y


#: Appended to every "too few votes" error: what works with one label per row.
_SINGLE_LABEL_HINT = (
    "A single label per input cannot estimate E[f*^2] (the product of two independent labels is "
    "needed). With one label per row use the first-order tools: ce1_score, SecondOrderPlattCalibrator"
    "(order=1) and every first-order measure (scdl_score, smooth_ece, binned_ece, ...). Second "
    "order only needs pairs for E[f*^2]: doubly labelling a subset of the rows is enough "
    "(docs/guide/crowd_labels.md measures how many)."
)


@validate_params({"snapshots": ["array-like"]}, prefer_skip_nested_validation=True)
def snapshot_targets(snapshots):
    """Unbiased targets ``t1``, ``t2`` from validated snapshots or vote counts.

    Returns ``(t1, t2, c)`` with ``t1 = a / c`` estimating E[f*], ``t2 = a (a - 1) / (c (c - 1))``
    estimating E[f*^2] and ``c`` the number of votes, where ``a`` counts positive votes. ``t2`` is
    NaN on rows with a single vote. ``snapshots`` is the output of :func:`check_snapshots`: an
    array of votes or a :class:`skcal.votes.VoteCounts` (same numbers, no padded array).

    Parameters
    ----------
    snapshots : ndarray of shape (n, k), Snapshots or VoteCounts
        Validated votes.

    Returns
    -------
    t1 : ndarray of shape (n,)
        ``a / c``.
    t2 : ndarray of shape (n,)
        ``a (a - 1) / (c (c - 1))`` (NaN for a single vote).
    c : ndarray of shape (n,)
        The number of votes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import VoteCounts, snapshot_targets
    >>> t1, t2, c = snapshot_targets(np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> t1.tolist(), t2.tolist()
    ([1.0, 0.5], [1.0, 0.0])
    >>> [x.tolist() for x in snapshot_targets(VoteCounts([2, 1], [2, 2]))]
    [[1.0, 0.5], [1.0, 0.0], [2.0, 2.0]]
    """
    if isinstance(snapshots, VoteCounts):
        a = snapshots.positive.astype(np.float64)
        c = snapshots.total.astype(np.float64)
    else:
        Y = snapshots.votes if isinstance(snapshots, Snapshots) else np.asarray(snapshots, dtype=np.float64)
        obs = ~np.isnan(Y)
        c = obs.sum(axis=1).astype(np.float64)
        a = np.where(obs, Y, 0.0).sum(axis=1)
    return (*unbiased_targets(a, c), c)


@validate_params({"snapshots": ["array-like"]}, prefer_skip_nested_validation=True)
def snapshot_votes(snapshots):
    """Every observed vote as a flat sample: ``(rows, values)`` (row-major order).

    ``snapshots`` is the output of :func:`check_snapshots` (votes or vote counts). For counts the
    votes of a row come as ``a`` ones, then ``c - a`` zeros (the order of
    :meth:`skcal.votes.VoteCounts.to_snapshots`).

    Parameters
    ----------
    snapshots : ndarray of shape (n, k) or VoteCounts
        Validated votes.

    Returns
    -------
    rows : ndarray of int
        The row of each vote.
    values : ndarray of float
        The vote, 1.0 or 0.0.
    """
    if isinstance(snapshots, VoteCounts):
        return snapshots.votes()
    if isinstance(snapshots, Snapshots):
        snapshots = snapshots.votes
    obs = ~np.isnan(snapshots)
    return np.nonzero(obs)[0], snapshots[obs]


@validate_params({"total": ["array-like"], "name": [str]}, prefer_skip_nested_validation=True)
def require_pairs(total, name="snapshots"):
    """Raise unless some row has two votes; return the mask of the rows that have.

    The second-order rule for mixed data: ``t1`` comes from every row, ``t2 = a (a - 1) / (c (c -
    1))`` from the rows with ``c >= 2`` votes only (a single label cannot estimate ``E[f*^2]``).

    Parameters
    ----------
    total : array-like of shape (n,)
        The number of votes of each row.
    name : str, default="snapshots"
        The labels' name in the error message.

    Returns
    -------
    ndarray of bool of shape (n,)
        ``total >= 2``.
    """
    pairs = np.asarray(total) >= 2
    if not pairs.any():
        raise ValueError(
            f"No item of {name} has 2 votes (every one has a single label), and E[f*^2] needs a pair. "
            + _SINGLE_LABEL_HINT
        )
    return pairs


@validate_params(
    {"y": ["array-like"], "name": [str], "n_samples": [*NON_NEGATIVE_INT, None]},
    prefer_skip_nested_validation=True,
)
def first_order_targets(y, name="y_true", n_samples=None):
    """``t1`` of binary labels (one per row) or of votes (snapshots, ``Snapshots``, ``VoteCounts``).

    The first-order target of a row: its label (``{0, 1}``, ``{-1, 1}`` or booleans; a 1-D array or
    one column), or the share of positive votes ``a / c`` of its votes (one vote per row
    suffices). A plain 2-D array of two or more columns is snapshots, refused when it also reads as
    counts of two classes (:func:`check_snapshots`).

    Parameters
    ----------
    y : array-like of shape (n,) or (n, r), Snapshots or VoteCounts
        The labels or votes.
    name : str, default="y_true"
        The argument's name in error messages.
    n_samples : int, default=None
        The expected number of rows.

    Returns
    -------
    ndarray of shape (n,)
        ``t1`` in [0, 1].

    Examples
    --------
    >>> from skcal.votes import VoteCounts, first_order_targets
    >>> first_order_targets([0, 1, 1]).tolist(), first_order_targets(VoteCounts([1, 2], [4, 2])).tolist()
    ([0.0, 1.0, 1.0], [0.25, 1.0])
    """
    if isinstance(y, (VoteCounts, Snapshots)):
        return snapshot_targets(check_snapshots(y, name=name, n_samples=n_samples, min_votes=1))[0]
    arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] >= 2:
        Y = check_snapshots(arr, name=f"{name} (snapshots)", n_samples=n_samples, min_votes=1)
        return snapshot_targets(Y)[0]
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    t1 = binary_labels(arr, None, name, has_pos_label=False)
    if n_samples is not None and t1.shape[0] != n_samples:
        raise ValueError(f"{name} has {t1.shape[0]} labels; expected {n_samples} (one per score).")
    return t1


# ---------------------------------------------------------------------------------------------
# the inputs of k-class second-order measures: counts per class or snapshots of class labels
# ---------------------------------------------------------------------------------------------
@validate_params(
    {
        "y": ["array-like"],
        "n_classes": [StrictInterval(Integral, 2, None, closed="left")],
        "name": [str],
        "n_samples": [*NON_NEGATIVE_INT, None],
        "min_votes": POSITIVE_INT,
        "classes": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def check_class_votes(y, n_classes, *, name="snapshots", n_samples=None, min_votes=1, classes=None):
    """Validate k-class labels and return them as counts per class (``VoteCounts(counts=...)``).

    Counts per class are the sufficient statistics of every k-class second-order measure (the
    targets ``t1``, ``t2`` of each class's one-vs-rest task depend on a row's votes only through
    them), so snapshots of class labels and the equivalent counts give identical results.

    Parameters
    ----------
    y : VoteCounts, Snapshots, array-like of shape (n, r) or (n,)
        Counts per class (``VoteCounts(counts=C)``; binary counts when ``n_classes == 2``, their
        positive votes being class 1), snapshots of class labels (``Snapshots``, or a plain array
        of ``r`` votes per row, NaN for a missing vote; a plain ``(n, n_classes)`` array that also
        reads as counts per class is refused, :func:`refuse_ambiguous_votes`), or one class label
        per row (1-D).
    n_classes : int
        The number of classes ``k`` of the scores (at least 2).
    name : str, default="snapshots"
        The argument's name in error messages.
    n_samples : int, default=None
        The expected number of rows.
    min_votes : int, default=1
        The votes every row needs (second-order measures take 1 and need pairs on some rows, see
        :func:`require_pairs`).
    classes : array-like of shape (k,), default=None
        The class labels, in the order of the scores' classes. ``None``: snapshots hold class codes
        ``0..k-1`` and counts are read in their column order. Given: counts with
        :attr:`VoteCounts.classes` are reordered to it (a class missing from either side is an
        error), and snapshots hold these labels.

    Returns
    -------
    VoteCounts
        Counts of shape ``(n, n_classes)``, columns in the order of the classes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import check_class_votes
    >>> from skcal.votes import Snapshots
    >>> check_class_votes(Snapshots([[0, 2, 2], [1, 1, np.nan]]), 3).counts.tolist()
    [[1, 0, 2], [0, 2, 0]]
    >>> check_class_votes(np.array([[0, 2], [1, 1]]), 3).counts.tolist()  # 2 votes of 3 classes
    [[1, 0, 1], [0, 2, 0]]
    """
    k = int(n_classes)
    if isinstance(y, VoteCounts):
        if y.counts is None:
            if k != 2:
                raise ValueError(
                    f"{name} holds binary counts (positive, total), but the scores have {k} classes: pass "
                    "VoteCounts(counts=C) with one column of votes per class."
                )
            V = VoteCounts(counts=np.column_stack([y.total - y.positive, y.positive]), classes=classes)
        else:
            V = y
            if V.counts.shape[1] != k:
                raise ValueError(
                    f"{name} holds votes of {V.counts.shape[1]} classes, but the scores have {k} classes; "
                    "every class needs its column of votes (and every column a class of the scores)."
                )
            if classes is not None and V.classes is not None:
                want = np.asarray(classes).tolist()
                have = V.classes.tolist()
                missing = [c for c in want if c not in have]
                extra = [c for c in have if c not in want]
                if missing or extra:
                    what = ([f"missing {missing}"] if missing else []) + (
                        [f"not a class of the model: {extra}"] if extra else []
                    )
                    raise ValueError(
                        f"{name} has columns for the classes {have}, the model has the classes {want} "
                        f"({'; '.join(what)})."
                    )
                idx = [have.index(c) for c in want]
                V = VoteCounts(counts=V.counts[:, idx], classes=np.asarray(classes))
    else:
        declared = isinstance(y, Snapshots)
        one_per_row = not declared and np.ndim(y) == 1
        Y = y.votes if declared else vote_array(y, name)
        C = class_vote_counts(Y, k, name, classes)
        c = C.sum(axis=1)
        if (c < 1).any():
            raise ValueError(f"Every row of {name} needs a vote; row {int(np.argmax(c < 1))} has none.")
        if not declared and not one_per_row:
            refuse_ambiguous_votes(Y, name, k)
        V = VoteCounts(counts=C, classes=classes)
    return _check_items(V, name, min_votes, n_samples)
