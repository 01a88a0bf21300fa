"""The containers of votes: counts (:class:`VoteCounts`) and individual votes (:class:`Snapshots`)."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import POSITIVE_INT
from skcal._validation import as_float_array, reject_nonfinite

__all__ = [
    "Snapshots",
    "VoteCounts",
    "binary_vote_values",
    "class_vote_counts",
    "unbiased_targets",
    "vote_array",
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
            return unbiased_targets(self.counts.astype(np.float64), self.total.astype(np.float64)[:, None])
        return unbiased_targets(self.positive.astype(np.float64), self.total.astype(np.float64))

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
        snapshots : array-like of shape (n, r) or Snapshots
            Binary votes 0/1 (``n_classes=None``), or class codes ``0..n_classes-1``; NaN for a
            missing vote; every row needs one vote. The method's name says these are votes, so a
            plain array is read as votes here (never as counts).
        n_classes : int, default=None
            ``None``: binary votes, counted as ``(positive, total)``. An int ``k >= 2``: class
            labels, counted per class (``VoteCounts(counts=...)``).

        Returns
        -------
        VoteCounts
            The counts of each row.

        Examples
        --------
        >>> from skcal.votes import VoteCounts
        >>> VoteCounts.from_snapshots([[1, 0, 1], [0, 0, float("nan")]]).positive.tolist()
        [2, 0]
        >>> VoteCounts.from_snapshots([[2, 0, 2], [1, 1, 1]], n_classes=3).counts.tolist()
        [[1, 0, 2], [0, 3, 0]]
        """
        Y = snapshots.votes if isinstance(snapshots, Snapshots) else vote_array(snapshots, "snapshots")
        if Y.shape[0] == 0:
            raise ValueError("snapshots has no rows; expected at least one item with a vote.")
        if n_classes is not None:
            if int(n_classes) < 2:
                raise ValueError(f"n_classes must be at least 2 (or None for binary votes); got {n_classes}.")
            C = class_vote_counts(Y, int(n_classes), "snapshots")
            _require_a_vote(C.sum(axis=1), "snapshots")
            return cls(counts=C)
        binary_vote_values(Y, "snapshots")
        obs = ~np.isnan(Y)
        _require_a_vote(obs.sum(axis=1), "snapshots")
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


def unbiased_targets(a, c):
    """``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))`` (NaN where ``c < 2``), broadcast."""
    with np.errstate(invalid="ignore", divide="ignore"):
        # max(a - 1, 0): a = 0 gives t2 = 0.0, not -0.0
        t2 = np.where(c >= 2, a * np.maximum(a - 1.0, 0.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
    return a / c, t2


def _require_a_vote(total, name):
    if (total < 1).any():
        raise ValueError(f"Every row of {name} needs a vote; row {int(np.argmax(total < 1))} has none.")


# ---------------------------------------------------------------------------------------------
# individual votes
# ---------------------------------------------------------------------------------------------
def vote_array(values, name, allow_empty=False):
    """Votes as a fresh float64 ``(n, r)`` array: NaN (or pandas ``NA``) for a missing vote.

    Booleans become 0/1 (for numpy booleans ``+`` is a logical OR); a 1-D input is one vote per
    row; strings, complex numbers and infinities are refused. The values themselves (0/1 votes or
    class codes) are checked by the reading that needs them (:func:`binary_vote_values`,
    :func:`class_vote_counts`).

    Parameters
    ----------
    values : array-like of shape (n, r) or (n,)
        The votes.
    name : str
        The argument's name in error messages.
    allow_empty : bool, default=False
        Accept zero rows (a chunk of a stream, a partition).

    Returns
    -------
    ndarray of shape (n, r)
        A fresh float64 array.
    """
    if isinstance(values, VoteCounts):
        raise TypeError(f"{name} is a VoteCounts (counts), not votes.")
    if hasattr(values, "to_numpy"):
        try:
            values = values.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            values = values.to_numpy()
    raw = np.asarray(values)
    if raw.dtype.kind == "b":
        raw = raw.astype(np.float64)
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must hold votes (0/1 or class codes, NaN for missing); got complex values.")
    Y = as_float_array(raw, name, ndim=(1, 2), ensure_non_empty=not allow_empty)
    reject_nonfinite(Y, name, allow_nan=True)
    return Y[:, None] if Y.ndim == 1 else Y


def binary_vote_values(Y, name):
    """Refuse votes other than 0, 1 and NaN (a missing vote) in the float array ``Y``.

    Parameters
    ----------
    Y : ndarray
        Votes as :func:`vote_array` returns them.
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray
        ``Y``.
    """
    vals = Y[~np.isnan(Y)]
    bad = ~np.isin(vals, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"{name} must hold binary votes 0/1 (or NaN for missing); got "
            f"{np.unique(vals[bad])[:5].tolist()}. Counts go in VoteCounts: "
            "VoteCounts(positive, total) for binary counts, VoteCounts(counts=C) for votes per class."
        )
    return Y


def _class_codes(values, name, n_classes, classes):
    """Class codes ``0..k-1`` of the votes ``values`` (numbers), by ``classes`` when given."""
    if classes is None:
        ok = (values == np.round(values)) & (values >= 0) & (values < n_classes)
        if not ok.all():
            bad = np.unique(values[~ok])[:5]
            raise ValueError(
                f"{name} must hold class codes 0..{n_classes - 1} (NaN for a missing vote); got "
                f"{bad.tolist()} (for counts per class wrap them as VoteCounts(counts=C))."
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


def class_vote_counts(Y, n_classes, name, classes=None):
    """The ``(n, k)`` table of votes per class of class-label votes ``Y`` (NaN: no vote).

    Parameters
    ----------
    Y : ndarray of shape (n, r)
        Votes as :func:`vote_array` returns them: class codes ``0..k-1``, or labels of ``classes``.
    n_classes : int
        ``k``.
    name : str
        The argument's name in error messages.
    classes : array-like of shape (k,), default=None
        The class labels the votes hold, in the order of the columns (``None``: codes).

    Returns
    -------
    ndarray of shape (n, k)
        int64 counts (rows without a vote are all 0).
    """
    obs = ~np.isnan(Y)
    codes = _class_codes(Y[obs], name, n_classes, classes)
    C = np.zeros((Y.shape[0], n_classes), dtype=np.int64)
    np.add.at(C, (np.nonzero(obs)[0], codes), 1)
    return C


class Snapshots:
    """Individual votes per item, declared as votes: ``(n, r)``, NaN for a missing vote.

    A plain 2-D array of small integers reads two ways: as ``r`` votes per row (snapshots) or as
    votes per class (counts). Wherever skcal takes second-order labels, a ``Snapshots`` says
    "these are votes" as :class:`VoteCounts` says "these are counts". A plain array is read as
    snapshots (the spec's convention) only where it cannot be a table of counts of the task's
    classes; where it can, it is refused with both readings named.

    Parameters
    ----------
    votes : array-like of shape (n, r) or (n,)
        One row per item, one column per vote (1-D: one vote per item). Binary tasks: 0/1 votes,
        1 for the positive class (booleans accepted). k classes: class codes ``0..k-1`` (or, where
        a function takes ``classes``, those labels). NaN (or pandas ``NA``) marks a missing vote.
        Whether the values suit a task is checked by the function that takes them.

    Attributes
    ----------
    votes : ndarray of shape (n, r)
        A read-only float64 copy.

    See Also
    --------
    VoteCounts : votes counted per item (binary, or per class).

    Notes
    -----
    A ``Snapshots`` is not converted by ``numpy.asarray`` (that raises ``TypeError``), so it can
    never be read as anything but votes; ``snapshots.votes`` is the array.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import Snapshots
    >>> Y = Snapshots([[1, 0], [1, 1], [0, np.nan]])
    >>> Y
    Snapshots(n=3, votes=5, columns=2)
    >>> Y.to_counts().positive.tolist(), Y.to_counts().total.tolist()
    ([1, 2, 0], [2, 2, 1])
    >>> Snapshots([[2, 0, 2]]).to_counts(n_classes=3).counts.tolist()
    [[1, 0, 2]]
    """

    __slots__ = ("votes",)

    @validate_params({"votes": ["array-like"]}, prefer_skip_nested_validation=True)
    def __init__(self, votes):
        if isinstance(votes, Snapshots):
            votes = votes.votes
        Y = vote_array(votes, "votes", allow_empty=True)
        if Y.shape[1] == 0:
            raise ValueError(f"votes has no columns (shape {Y.shape}); expected a column per vote.")
        Y.flags.writeable = False
        object.__setattr__(self, "votes", Y)

    def __setattr__(self, key, value):
        raise AttributeError("Snapshots is immutable; build a new one instead.")

    def __getstate__(self):
        return {"votes": self.votes}

    def __setstate__(self, state):
        object.__setattr__(self, "votes", _readonly(np.asarray(state["votes"], dtype=np.float64)))

    def __len__(self):
        return self.votes.shape[0]

    @property
    def shape(self):
        """``(n, r)``: items and vote columns."""
        return self.votes.shape

    #: Two axes, items and votes (``shape`` is ``(n, r)``).
    ndim = 2

    def __getitem__(self, index):
        """The rows ``index`` (an int, a slice, an index array or a mask), as ``Snapshots``.

        ``(rows, ...)`` and ``(rows, :)`` are rows too (scikit-learn's splitters index so); any
        other index of the columns is refused: a column of votes is ``snapshots.votes[:, j]``.
        """
        if isinstance(index, tuple):
            whole = [r is Ellipsis or (isinstance(r, slice) and r == slice(None)) for r in index[1:]]
            if not index or not all(whole):
                raise TypeError("Snapshots index rows only; index snapshots.votes for the array of votes.")
            index = index[0]
        if isinstance(index, (int, np.integer)):
            index = [index]
        return Snapshots(self.votes[index])

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "A Snapshots is not an array: pass it to skcal functions as it is (where they take "
            "snapshots), or read its .votes."
        )

    def __repr__(self):
        n_votes = int((~np.isnan(self.votes)).sum())
        return f"Snapshots(n={len(self)}, votes={n_votes}, columns={self.votes.shape[1]})"

    @validate_params({"n_classes": [*POSITIVE_INT, None]}, prefer_skip_nested_validation=True)
    def to_counts(self, n_classes=None):
        """The votes counted per item (:meth:`VoteCounts.from_snapshots`).

        Parameters
        ----------
        n_classes : int, default=None
            ``None``: binary votes, counted as ``(positive, total)``; an int ``k >= 2``: class
            codes, counted per class.

        Returns
        -------
        VoteCounts
            The counts.
        """
        return VoteCounts.from_snapshots(self, n_classes)
