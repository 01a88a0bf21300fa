"""Vote counts as a first-class label type.

Crowd data usually comes as *counts*: item ``i`` received ``total[i]`` binary votes, of which
``positive[i]`` were positive. :class:`VoteCounts` holds such counts, and every skcal function or
estimator that takes ``snapshots`` (an ``(n, k)`` NaN-padded array of individual votes) takes a
:class:`VoteCounts` in its place, with identical results: the checks of this module
(:func:`check_snapshots` and :func:`snapshot_targets`, beside the class they know) dispatch on
the type, so no padded array is ever built.

From ``a`` positive votes out of ``c`` the unbiased targets are

* ``t1 = a / c`` for ``E[f*]`` (needs ``c >= 1``), and
* ``t2 = a (a - 1) / (c (c - 1))`` for ``E[f*^2]`` (the share of ordered pairs of distinct votes
  that are both positive; needs ``c >= 2``),

where ``f*`` is the probability that one vote on the item is positive. With one vote per item
only ``t1`` exists: first-order measures and first-order recalibration work, second-order ones
need at least two votes on (some of) the items.

**k classes.** ``VoteCounts(counts=C)`` holds an ``(n, k)`` table of votes per class (rows may
have different totals); its targets are per class, ``t1[:, j] = a_j / c`` and
``t2[:, j] = a_j (a_j - 1) / (c (c - 1))``, the binary targets of the one-vs-rest task of class
``j`` (:meth:`VoteCounts.one_vs_rest`). :func:`check_class_votes` turns counts or snapshots of
class labels into such counts (the sufficient statistics of every k-class second-order measure),
and :func:`check_class_scores` validates k-class second-order scores in either layout: ``(n, k,
2)`` (``m`` at ``[..., 0]``, ``sigma2`` at ``[..., 1]``) or the transformer layout ``(n, 2k)``
(the k means, then the k variances).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import NON_NEGATIVE_INT, POSITIVE_INT, StrictInterval
from skcal._validation import SIGMA2_MAX, as_float_array, check_range, reject_nonfinite

__all__ = [
    "VoteCounts",
    "check_class_scores",
    "check_class_votes",
    "check_snapshots",
    "class_scores_layout",
    "flat_class_scores",
    "require_pairs",
    "snapshot_targets",
    "snapshot_votes",
]


def _count_array(x, name):
    if x is None:
        raise ValueError(f"{name} is None; expected a 1-D array-like of vote counts.")
    if hasattr(x, "to_numpy"):
        x = x.to_numpy(dtype=np.float64, na_value=np.nan) if hasattr(x, "dtype") else x.to_numpy()
    raw = np.asarray(x)
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must hold real vote counts; got complex values.")
    if raw.dtype.kind == "b":
        raise ValueError(f"{name} must hold integer vote counts; got booleans.")
    if raw.dtype.kind in "USO" and any(isinstance(v, (str, bytes)) for v in raw.ravel().tolist()):
        raise ValueError(f"{name} must hold integer vote counts; got strings.")
    try:
        arr = np.array(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold integer vote counts; could not convert it: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one count per item); got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; expected at least one item.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; expected non-negative integer counts.")
    if (arr < 0).any() or (arr != np.round(arr)).any():
        bad = arr[(arr < 0) | (arr != np.round(arr))][:5]
        raise ValueError(f"{name} must hold non-negative integers; got {bad.tolist()}.")
    if arr.max() > 2**52:
        raise ValueError(f"{name} has counts above 2**52, which float64 cannot count exactly.")
    out = arr.astype(np.int64)
    out.flags.writeable = False
    return out


def _count_table(x, name):
    """An ``(n, k)`` table of non-negative integer counts (k >= 2) as read-only int64."""
    if x is None:
        raise ValueError(f"{name} is None; expected an (n, k) array-like of votes per class.")
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    raw = np.asarray(x)
    if raw.ndim != 2 or raw.shape[1] < 2:
        raise ValueError(
            f"{name} must have shape (n, k): one row per item, one column of votes per class, k >= 2; "
            f"got shape {raw.shape}. Binary counts are VoteCounts(positive, total)."
        )
    cols = [_count_array(raw[:, j], f"{name}[:, {j}]") for j in range(raw.shape[1])]
    out = np.column_stack(cols)
    out.flags.writeable = False
    return out


def _readonly(arr):
    arr = np.array(arr)
    arr.flags.writeable = False
    return arr


class VoteCounts:
    """Vote counts per item: binary (``positive`` of ``total``) or per class (``counts``).

    Pass a ``VoteCounts`` wherever skcal takes ``snapshots`` (``ce2_score``, ``ce2_details``,
    ``ce1_score``, ``SecondOrderPlattCalibrator.fit``, ``SecondOrderCalibratedClassifier.fit``,
    ``calibration_report`` and ``CalibrationReport.from_predictions``, ...); the results are
    identical to those from the equivalent NaN-padded snapshot array (see :meth:`to_snapshots`),
    without building it.

    Parameters
    ----------
    positive : array-like of shape (n,), default=None
        Binary counts: the number of positive votes of each item (non-negative integers).
    total : array-like of shape (n,), default=None
        The number of votes of each item (integers ``>= max(1, positive)``). With ``counts`` it
        is optional and, when given, must equal the row sums of ``counts``.
    counts : array-like of shape (n, k), default=None
        Votes per item and class, ``k >= 2`` (keyword only; instead of ``positive``). Rows may
        have different totals. A DataFrame's column names become :attr:`classes`.
    classes : array-like of shape (k,), default=None
        The class of each column of ``counts`` (``None``: the columns are the class codes
        ``0..k-1``, or a DataFrame's column names).

    Attributes
    ----------
    positive : ndarray of shape (n,), int64, or None
        Read-only copy of the positive counts ``a`` (for ``k = 2`` class counts: column 1, the
        convention of ``predict_proba``; ``None`` for ``k > 2``).
    total : ndarray of shape (n,), int64
        Read-only copy of the vote totals ``c``.
    counts : ndarray of shape (n, k), int64, or None
        Read-only votes per class (``None`` for binary counts).
    classes : ndarray of shape (k,) or None
        The class of each column of ``counts``, when known.

    See Also
    --------
    skcal.datasets.load_weather_sentiment_amt : crowd data as counts per class.

    Notes
    -----
    The unbiased targets are ``t1 = a / c`` for ``E[f*]`` and ``t2 = a (a - 1) / (c (c - 1))``
    for ``E[f*^2]``, with ``a = positive`` and ``c = total``; for class counts they are per class,
    ``a = counts[:, j]`` (the one-vs-rest task of class ``j``, :meth:`one_vs_rest`). ``t2`` needs
    two votes: second-order functions fit ``E[f*^2]`` on the rows with ``total >= 2`` only and
    need at least some of them; first-order ones (``ce1_score``, ``SecondOrderPlattCalibrator``
    with ``order=1``) accept ``total >= 1`` everywhere. A ``VoteCounts`` is not converted by
    ``numpy.asarray`` (that raises ``TypeError``), so it can never be misread as an array of
    snapshots.

    Examples
    --------
    >>> from skcal.votes import VoteCounts
    >>> votes = VoteCounts(positive=[3, 0, 1], total=[4, 2, 2])
    >>> t1, t2 = votes.targets()
    >>> t1.tolist(), t2.tolist()
    ([0.75, 0.0, 0.5], [0.5, 0.0, 0.0])
    >>> votes.to_snapshots()
    array([[ 1.,  1.,  1.,  0.],
           [ 0.,  0., nan, nan],
           [ 1.,  0., nan, nan]])
    >>> C = VoteCounts(counts=[[3, 1, 0], [0, 2, 2]])
    >>> C
    VoteCounts(n=2, votes=8, classes=3)
    >>> C.targets()[0].tolist()
    [[0.75, 0.25, 0.0], [0.0, 0.5, 0.5]]
    >>> C.one_vs_rest(1).positive.tolist(), C.one_vs_rest(1).total.tolist()
    ([1, 2], [4, 4])
    """

    __slots__ = ("positive", "total", "counts", "classes")

    @validate_params(
        {
            "positive": ["array-like", None],
            "total": ["array-like", None],
            "counts": ["array-like", None],
            "classes": ["array-like", None],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(self, positive=None, total=None, *, counts=None, classes=None):
        if counts is not None:
            if positive is not None:
                raise ValueError(
                    "Give either positive and total (binary counts) or counts (votes per class), not both."
                )
            names = None
            if hasattr(counts, "columns") and classes is None:
                names = np.asarray(list(counts.columns), dtype=object)
            C = _count_table(counts, "counts")
            c = C.sum(axis=1)
            if total is not None:
                given = _count_array(total, "total")
                if given.shape != c.shape:
                    raise ValueError(
                        f"total has {given.shape[0]} entries but counts has {c.shape[0]} rows; expected "
                        "one per item."
                    )
                if (given != c).any():
                    i = int(np.argmax(given != c))
                    raise ValueError(
                        f"counts row {i} sums to {int(c[i])} votes but total[{i}] is {int(given[i])}; "
                        "the class counts of a row must add up to its total."
                    )
            if (c < 1).any():
                raise ValueError(f"counts row {int(np.argmax(c < 1))} has no votes; every item needs one.")
            if classes is not None:
                names = np.asarray(classes.to_numpy() if hasattr(classes, "to_numpy") else classes)
                if names.ndim != 1 or names.shape[0] != C.shape[1]:
                    raise ValueError(
                        f"classes must hold one label per column of counts ({C.shape[1]}); got shape "
                        f"{names.shape}."
                    )
            if names is not None:
                if len(set(names.tolist())) != names.shape[0]:
                    raise ValueError(f"classes must be distinct; got {names.tolist()}.")
                names = _readonly(names)
            c.flags.writeable = False
            pos = C[:, 1].copy() if C.shape[1] == 2 else None
            if pos is not None:
                pos.flags.writeable = False
            for k, v in (("positive", pos), ("total", c), ("counts", C), ("classes", names)):
                object.__setattr__(self, k, v)
            return
        if classes is not None:
            raise ValueError(
                "classes names the columns of counts; binary counts (positive, total) have none."
            )
        a = _count_array(positive, "positive")
        c = _count_array(total, "total")
        if a.shape != c.shape:
            raise ValueError(
                f"positive has {a.shape[0]} entries but total has {c.shape[0]}; expected one per item."
            )
        if (c < 1).any():
            raise ValueError(
                f"total must be at least 1 on every item; item {int(np.argmax(c < 1))} has 0 votes."
            )
        if (a > c).any():
            i = int(np.argmax(a > c))
            raise ValueError(
                f"positive exceeds total on item {i}: {int(a[i])} positive of {int(c[i])} votes."
            )
        for k, v in (("positive", a), ("total", c), ("counts", None), ("classes", None)):
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        raise AttributeError("VoteCounts is immutable; build a new one instead.")

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k in ("positive", "total", "counts"):
            v = state.get(k)
            object.__setattr__(self, k, None if v is None else _readonly(np.asarray(v, dtype=np.int64)))
        cl = state.get("classes")
        object.__setattr__(self, "classes", None if cl is None else _readonly(cl))

    # -- container protocol ----------------------------------------------------------------
    def __len__(self):
        return self.total.shape[0]

    @property
    def n_classes(self):
        """``k`` for counts per class, 2 for binary counts."""
        return 2 if self.counts is None else self.counts.shape[1]

    @property
    def shape(self):
        """``(n, 2)`` for binary counts (rows of ``(positive, total)``), ``(n, k)`` for class counts."""
        return (len(self), 2 if self.counts is None else self.counts.shape[1])

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            index = [index]
        if self.counts is not None:
            return VoteCounts(counts=self.counts[index], classes=self.classes)
        return VoteCounts(self.positive[index], self.total[index])

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "A VoteCounts is not an array: pass it to skcal functions as it is (where they take "
            "snapshots), or call .to_snapshots() for a NaN-padded (n, k) array of votes."
        )

    def __repr__(self):
        if self.counts is not None:
            return f"VoteCounts(n={len(self)}, votes={int(self.total.sum())}, classes={self.counts.shape[1]})"
        return (
            f"VoteCounts(n={len(self)}, votes={int(self.total.sum())}, positive={int(self.positive.sum())})"
        )

    # -- conversions -----------------------------------------------------------------------
    def targets(self):
        """The unbiased targets ``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))``.

        Returns
        -------
        t1 : ndarray of shape (n,) or (n, k)
            Estimates of ``E[f*]``, one per item (per item and class for class counts).
        t2 : ndarray of shape (n,) or (n, k)
            Estimates of ``E[f*^2]``; NaN on items with a single vote.
        """
        if self.counts is not None:
            return _targets(self.counts.astype(np.float64), self.total.astype(np.float64)[:, None])
        return _targets(self.positive.astype(np.float64), self.total.astype(np.float64))

    @validate_params({"column": ["array-like", Integral]}, prefer_skip_nested_validation=True)
    def one_vs_rest(self, column):
        """Binary counts of one class against the others.

        Parameters
        ----------
        column : int or array-like of int of shape (n,)
            The column of ``counts`` whose votes count as positive: one column for every item,
            or one per item (e.g. each item's predicted class, for the top-label task).

        Returns
        -------
        VoteCounts
            ``positive = counts[i, column_i]`` of ``total`` votes.
        """
        if self.counts is None:
            raise ValueError("one_vs_rest needs counts per class (VoteCounts(counts=...)); these are binary.")
        k = self.counts.shape[1]
        col = np.asarray(column)
        if col.dtype.kind not in "iu" or col.ndim > 1 or (col.ndim == 1 and col.shape[0] != len(self)):
            raise ValueError(
                f"column must be a column index of counts or one index per item ({len(self)}); got "
                f"{column!r}."
            )
        if ((col < 0) | (col >= k)).any():
            raise ValueError(f"column must lie in 0..{k - 1} (the columns of counts); got {column!r}.")
        rows = np.arange(len(self))
        return VoteCounts(self.counts[rows, col] if col.ndim else self.counts[:, int(col)], self.total)

    def to_snapshots(self):
        """The equivalent NaN-padded snapshot array.

        Binary counts: ``a`` ones, then ``c - a`` zeros, then NaN. Class counts: the class codes
        ``0..k-1`` of the votes in increasing order (``counts[i, 0]`` zeros, then
        ``counts[i, 1]`` ones, ...), then NaN.

        Returns
        -------
        ndarray of shape (n, max(total))
            One row per item, one column per vote.
        """
        j = np.arange(int(self.total.max()))[None, :]
        if self.counts is not None:
            ends = np.cumsum(self.counts, axis=1)  # (n, k): a vote at position j has code #(ends <= j)
            codes = (ends[:, None, :] <= j[:, :, None]).sum(axis=2).astype(np.float64)
            return np.where(j < self.total[:, None], codes, np.nan)
        Y = np.where(j < self.positive[:, None], 1.0, 0.0)
        return np.where(j < self.total[:, None], Y, np.nan)

    def votes(self):
        """Every vote as a flat sample, in the order of :meth:`to_snapshots` (row-major).

        Returns
        -------
        rows : ndarray of shape (sum(total),)
            The item of each vote.
        values : ndarray of shape (sum(total),)
            The vote: 1.0 or 0.0 for binary counts, the class code for class counts.
        """
        rows = np.repeat(np.arange(len(self)), self.total)
        starts = np.cumsum(self.total) - self.total
        rank = np.arange(rows.shape[0]) - np.repeat(starts, self.total)
        if self.counts is not None:
            ends = np.cumsum(self.counts, axis=1)[rows]
            return rows, (ends <= rank[:, None]).sum(axis=1).astype(np.float64)
        return rows, (rank < self.positive[rows]).astype(np.float64)

    @classmethod
    @validate_params(
        {"snapshots": ["array-like"], "n_classes": [*POSITIVE_INT, None]}, prefer_skip_nested_validation=True
    )
    def from_snapshots(cls, snapshots, n_classes=None):
        """Count the votes of an ``(n, r)`` snapshot array (NaN marks a missing vote).

        Parameters
        ----------
        snapshots : array-like of shape (n, r)
            Binary votes 0/1 (``n_classes=None``), or class codes ``0..n_classes-1``; NaN for a
            missing vote; every row needs one vote.
        n_classes : int, default=None
            ``None``: binary votes, counted as ``(positive, total)``. An int ``k >= 2``: class
            labels, counted per class (``VoteCounts(counts=...)``).

        Returns
        -------
        VoteCounts
            The counts of each row.
        """
        if n_classes is not None:
            return check_class_votes(snapshots, n_classes, min_votes=1)
        Y = check_snapshots(snapshots, min_votes=1)
        obs = ~np.isnan(Y)
        return cls(np.where(obs, Y, 0.0).sum(axis=1), obs.sum(axis=1))

    @classmethod
    @validate_params(
        {"counts": ["array-like"], "positive_class": [Integral]}, prefer_skip_nested_validation=True
    )
    def from_class_counts(cls, counts, positive_class):
        """One-vs-rest counts from an ``(n, n_classes)`` table of votes per class.

        Parameters
        ----------
        counts : array-like of shape (n, n_classes)
            Votes per item and class (e.g. ``load_weather_sentiment_amt().data``).
        positive_class : int
            Column of the class that counts as a positive vote.

        Returns
        -------
        VoteCounts
            ``positive = counts[:, positive_class]``, ``total = counts.sum(axis=1)`` (the same as
            ``VoteCounts(counts=counts).one_vs_rest(positive_class)``).

        Examples
        --------
        >>> from skcal.votes import VoteCounts
        >>> VoteCounts.from_class_counts([[2, 1, 0], [0, 3, 3]], positive_class=1).positive.tolist()
        [1, 3]
        """
        if hasattr(counts, "to_numpy"):
            counts = counts.to_numpy()
        C = np.asarray(counts)
        if C.ndim != 2 or C.shape[1] < 2:
            raise ValueError(f"counts must have shape (n, n_classes) with n_classes >= 2; got {C.shape}.")
        if isinstance(positive_class, bool) or not isinstance(positive_class, (int, np.integer)):
            raise ValueError(f"positive_class must be a column index (int); got {positive_class!r}.")
        if not -C.shape[1] <= positive_class < C.shape[1]:
            raise ValueError(
                f"positive_class={positive_class} is not a column of counts ({C.shape[1]} columns)."
            )
        for j in range(C.shape[1]):
            _count_array(C[:, j], f"counts[:, {j}]")
        return cls(C[:, positive_class], C.sum(axis=1))


def _targets(a, c):
    """``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))`` (NaN where ``c < 2``), broadcast."""
    with np.errstate(invalid="ignore", divide="ignore"):
        # max(a - 1, 0): a = 0 gives t2 = 0.0, not -0.0
        t2 = np.where(c >= 2, a * np.maximum(a - 1.0, 0.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
    return a / c, t2


# ---------------------------------------------------------------------------------------------
# snapshots and vote counts as the inputs of second-order measures and estimators
# ---------------------------------------------------------------------------------------------
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
    """Validate ``(n, k)`` binary snapshots (NaN marks a missing vote) or vote counts.

    ``snapshots`` is either an array-like of 0/1 votes (``k >= min_votes`` columns) or a
    :class:`skcal.votes.VoteCounts` (binary counts, or counts of two classes, whose column 1 is
    the positive class), which is returned as binary counts after the same row checks, so
    that every caller takes counts without building a padded array (pass the result on to
    :func:`snapshot_targets`). Each row needs at least ``min_votes`` votes: 2 for anything
    second order (``t2`` needs a pair of votes), 1 for first-order uses. Boolean input is
    converted to float first (for numpy booleans ``+`` is a logical OR); pandas nullable
    dtypes with ``pd.NA`` are read with ``NA`` as a missing vote.

    Parameters
    ----------
    snapshots : array-like of shape (n, k) or VoteCounts
        The votes.
    name : str, default="snapshots"
        The argument's name in error messages.
    n_samples : int, default=None
        The expected number of rows.
    min_votes : int, default=2
        The votes every row needs.

    Returns
    -------
    ndarray of shape (n, k) or VoteCounts
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
        c = snapshots.total
        if (c < min_votes).any():
            i = int(np.argmax(c < min_votes))
            raise ValueError(
                f"Every item of {name} needs at least {min_votes} votes; item {i} has {int(c[i])}. "
                + _SINGLE_LABEL_HINT
            )
        if n_samples is not None and len(snapshots) != n_samples:
            raise ValueError(f"{name} has {len(snapshots)} items; expected {n_samples} (one per score).")
        return snapshots
    if hasattr(snapshots, "to_numpy"):
        try:
            snapshots = snapshots.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            snapshots = snapshots.to_numpy()
    raw = np.asarray(snapshots)
    if raw.dtype.kind == "b":
        raw = raw.astype(np.float64)
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must hold binary labels 0/1 (or NaN for missing); got complex values.")
    if raw.ndim == 1:
        raise ValueError(
            f"{name} must be 2-dimensional, (n, k) snapshots (k >= {min_votes} labels per row), or "
            f"skcal.votes.VoteCounts; got a 1-D array of shape {raw.shape}, i.e. one label per row. "
            + _SINGLE_LABEL_HINT
        )
    Y = as_float_array(raw, name, ndim=(2,))
    reject_nonfinite(Y, name, allow_nan=True)
    if Y.shape[1] < min_votes:
        raise ValueError(
            f"{name} must have at least {min_votes} columns (independent labels per input); got shape "
            f"{Y.shape}. " + _SINGLE_LABEL_HINT
        )
    obs = ~np.isnan(Y)
    vals = Y[obs]
    if not np.isin(vals, (0.0, 1.0)).all():
        bad = np.unique(vals[~np.isin(vals, (0.0, 1.0))])[:5]
        raise ValueError(f"{name} must hold binary labels 0/1 (or NaN for missing); got {bad.tolist()}.")
    counts = obs.sum(axis=1)
    if (counts < min_votes).any():
        raise ValueError(
            f"Every row of {name} needs at least {min_votes} votes; row {int(np.argmax(counts < min_votes))} "
            f"has {int(counts.min())}. " + _SINGLE_LABEL_HINT
        )
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
    snapshots : ndarray of shape (n, k) or VoteCounts
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
        Y = np.asarray(snapshots, dtype=np.float64)
        obs = ~np.isnan(Y)
        c = obs.sum(axis=1).astype(np.float64)
        a = np.where(obs, Y, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # max(a - 1, 0): a = 0 gives t2 = 0.0, not -0.0
        t2 = np.where(c >= 2, a * np.maximum(a - 1.0, 0.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
    return a / c, t2, c


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


# ---------------------------------------------------------------------------------------------
# the inputs of k-class second-order measures: counts per class, class snapshots, class scores
# ---------------------------------------------------------------------------------------------
_CLASS_HINT = "for counts per class wrap them as VoteCounts(counts=C)"


def _class_codes(values, name, n_classes, classes):
    """Class codes ``0..k-1`` of the votes ``values`` (numbers), by ``classes`` when given."""
    if classes is None:
        ok = (values == np.round(values)) & (values >= 0) & (values < n_classes)
        if not ok.all():
            bad = np.unique(values[~ok])[:5]
            raise ValueError(
                f"{name} must hold class codes 0..{n_classes - 1} (NaN for a missing vote); got "
                f"{bad.tolist()} ({_CLASS_HINT})."
            )
        return values.astype(np.intp)
    cl = np.asarray(classes)
    if cl.dtype.kind not in "iufb":
        raise ValueError(
            f"{name} is a numeric snapshot array, but the classes {cl.tolist()[:10]} are not numbers: pass "
            "VoteCounts(counts=C, classes=...) instead."
        )
    order = np.argsort(cl, kind="stable")
    pos = np.searchsorted(cl[order], values)
    pos = np.clip(pos, 0, cl.shape[0] - 1)
    hit = cl[order][pos] == values
    if not hit.all():
        bad = np.unique(values[~hit])[:5]
        raise ValueError(
            f"{name} holds labels {bad.tolist()} that are not among the classes {cl.tolist()[:10]}."
        )
    return order[pos].astype(np.intp)


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
    y : VoteCounts, array-like of shape (n, r) or (n,)
        Counts per class (``VoteCounts(counts=C)``; binary counts when ``n_classes == 2``, their
        positive votes being class 1), snapshots of class labels (``r`` votes per row, NaN for a
        missing vote), or one class label per row.
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
    >>> check_class_votes(np.array([[0, 2, 2], [1, 1, np.nan]]), 3).counts.tolist()
    [[1, 0, 2], [0, 2, 0]]
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
        if hasattr(y, "to_numpy"):
            try:
                y = y.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                y = y.to_numpy()
        raw = np.asarray(y)
        if raw.dtype.kind == "b":
            raw = raw.astype(np.float64)
        Y = as_float_array(raw, name, ndim=(1, 2))
        reject_nonfinite(Y, name, allow_nan=True)
        if Y.ndim == 1:
            Y = Y[:, None]
        obs = ~np.isnan(Y)
        codes = _class_codes(Y[obs], name, k, classes)
        rows = np.nonzero(obs)[0]
        C = np.zeros((Y.shape[0], k), dtype=np.int64)
        np.add.at(C, (rows, codes), 1)
        c = C.sum(axis=1)
        if (c < 1).any():
            raise ValueError(f"Every row of {name} needs a vote; row {int(np.argmax(c < 1))} has none.")
        V = VoteCounts(counts=C, classes=classes)
    c = V.total
    if (c < min_votes).any():
        i = int(np.argmax(c < min_votes))
        raise ValueError(
            f"Every item of {name} needs at least {min_votes} votes; item {i} has {int(c[i])}. "
            + _SINGLE_LABEL_HINT
        )
    if n_samples is not None and len(V) != n_samples:
        raise ValueError(f"{name} has {len(V)} items; expected {n_samples} (one per score).")
    return V


@validate_params({"scores": "no_validation"}, prefer_skip_nested_validation=True)
def class_scores_layout(scores):
    """The layout of k-class second-order scores: ``"classes"`` (``(n, k, 2)``), ``"flat"`` or None.

    ``(n, k, 2)`` arrays (and ``(n, k, 1)``, ``m`` alone per class) are k-class scores; so is the
    transformer layout ``(n, 2k)`` with ``k >= 2`` (the k means, then the k variances). ``(n, 2)``
    and ``(n, 1)`` are binary scores and give None, as does anything that is not an array.

    Parameters
    ----------
    scores : object
        The scores.

    Returns
    -------
    str or None
        ``"classes"``, ``"flat"`` or None.
    """
    shape = getattr(scores, "shape", None)
    if shape is None:
        try:
            shape = np.shape(scores)
        except (TypeError, ValueError):
            return None
    if len(shape) == 3 and shape[2] in (1, 2):
        return "classes"
    if len(shape) == 2 and shape[1] >= 4 and shape[1] % 2 == 0:
        return "flat"
    return None


@validate_params(
    {
        "scores": ["array-like"],
        "name": [str],
        "n_classes": [StrictInterval(Integral, 2, None, closed="left"), None],
        "out_of_bounds": [StrOptions({"raise", "clip"})],
        "allow_mean_only": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def check_class_scores(
    scores, *, name="scores", n_classes=None, out_of_bounds="raise", allow_mean_only=False
):
    """Validate k-class second-order scores; return them as an ``(n, k, 2)`` array.

    Two layouts are accepted: ``(n, k, 2)`` with ``m`` at ``[..., 0]`` and ``sigma2`` at
    ``[..., 1]`` (the binary ``(n, 2)`` with a class axis), and the transformer layout ``(n, 2k)``
    of :class:`~skcal.EnsembleMoments` (the k means, then the k variances). Every ``m`` must lie in
    [0, 1] and every ``sigma2`` in [0, 1/4] (as :func:`skcal._validation.check_scores` checks the
    binary scores); the means need not sum to 1 (sech-perturbed and one-vs-rest recalibrated
    scores do not).

    Parameters
    ----------
    scores : array-like of shape (n, k, 2) or (n, 2k)
        The scores, ``k >= 2``.
    name : str, default="scores"
        The argument's name in error messages.
    n_classes : int, default=None
        The expected ``k``.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Refuse or clip values outside the box.
    allow_mean_only : bool, default=False
        Also accept ``(n, k, 1)`` (``m`` alone per class), returned as ``(n, k, 1)``.

    Returns
    -------
    ndarray of shape (n, k, 2) (or (n, k, 1))
        A fresh float64 array.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import check_class_scores
    >>> flat = np.array([[0.7, 0.2, 0.1, 0.01, 0.02, 0.0]])  # 3 means, then 3 variances
    >>> check_class_scores(flat)[0].tolist()
    [[0.7, 0.01], [0.2, 0.02], [0.1, 0.0]]
    """
    S = as_float_array(scores, name, ndim=(2, 3))
    reject_nonfinite(S, name)
    if S.ndim == 2:
        if S.shape[1] < 4 or S.shape[1] % 2:
            raise ValueError(
                f"{name} must have shape (n, k, 2) or (n, 2k) (the k means, then the k variances) with "
                f"k >= 2; got shape {S.shape}. Binary scores (m, sigma2) have shape (n, 2)."
            )
        k = S.shape[1] // 2
        S = np.stack([S[:, :k], S[:, k:]], axis=2)
    elif S.shape[2] not in ((1, 2) if allow_mean_only else (2,)) or S.shape[1] < 2:
        raise ValueError(
            f"{name} must have shape (n, k, 2) (m, sigma2 per class) or (n, 2k) with k >= 2; got shape "
            f"{S.shape}."
        )
    if n_classes is not None and S.shape[1] != n_classes:
        raise ValueError(f"{name} has {S.shape[1]} classes; expected {n_classes}.")
    S[..., 0] = check_range(S[..., 0], f"{name} (m)", 0.0, 1.0, out_of_bounds=out_of_bounds)
    if S.shape[2] == 2:
        S[..., 1] = check_range(S[..., 1], f"{name} (sigma2)", 0.0, SIGMA2_MAX, out_of_bounds=out_of_bounds)
    return S


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def flat_class_scores(scores):
    """``(n, k, 2)`` k-class scores in the transformer layout ``(n, 2k)`` (means, then variances).

    Parameters
    ----------
    scores : ndarray of shape (n, k, 2)
        Validated k-class scores.

    Returns
    -------
    ndarray of shape (n, 2k)
        ``[m_0, ..., m_{k-1}, sigma2_0, ..., sigma2_{k-1}]`` per row.
    """
    S = np.asarray(scores)
    return np.concatenate([S[..., 0], S[..., 1]], axis=1)
