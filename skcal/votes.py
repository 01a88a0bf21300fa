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
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import NON_NEGATIVE_INT, POSITIVE_INT
from skcal._validation import as_float_array, reject_nonfinite

__all__ = ["VoteCounts", "check_snapshots", "snapshot_targets", "snapshot_votes"]


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


class VoteCounts:
    """Binary vote counts per item: ``positive`` positive votes out of ``total`` votes.

    Pass a ``VoteCounts`` wherever skcal takes ``snapshots`` (``ce2_score``, ``ce2_details``,
    ``ce1_score``, ``SecondOrderPlattCalibrator.fit``, ``SecondOrderCalibratedClassifier.fit``,
    ``calibration_report`` and ``CalibrationReport.from_predictions``, ...); the results are
    identical to those from the equivalent NaN-padded snapshot array (see :meth:`to_snapshots`),
    without building it.

    Parameters
    ----------
    positive : array-like of shape (n,)
        Number of positive votes of each item (non-negative integers).
    total : array-like of shape (n,)
        Number of votes of each item (integers ``>= max(1, positive)``).

    Attributes
    ----------
    positive : ndarray of shape (n,), int64
        Read-only copy of the positive counts ``a``.
    total : ndarray of shape (n,), int64
        Read-only copy of the vote totals ``c``.

    See Also
    --------
    skcal.datasets.load_weather_sentiment_amt : crowd data as counts per class.

    Notes
    -----
    The unbiased targets are ``t1 = a / c`` for ``E[f*]`` and ``t2 = a (a - 1) / (c (c - 1))``
    for ``E[f*^2]``, with ``a = positive`` and ``c = total``. ``t2`` needs two votes, so
    second-order functions require ``total >= 2`` on every row; first-order ones
    (``ce1_score``, ``SecondOrderPlattCalibrator`` with ``order=1``) accept ``total >= 1``. A
    ``VoteCounts`` is not converted by ``numpy.asarray`` (that raises ``TypeError``), so it can
    never be misread as a two-column array of snapshots.

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
    """

    __slots__ = ("positive", "total")

    @validate_params(
        {"positive": ["array-like"], "total": ["array-like"]}, prefer_skip_nested_validation=True
    )
    def __init__(self, positive, total):
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
        object.__setattr__(self, "positive", a)
        object.__setattr__(self, "total", c)

    def __setattr__(self, key, value):
        raise AttributeError("VoteCounts is immutable; build a new one instead.")

    def __getstate__(self):
        return {"positive": self.positive, "total": self.total}

    def __setstate__(self, state):
        for k in ("positive", "total"):
            arr = np.array(state[k], dtype=np.int64)
            arr.flags.writeable = False
            object.__setattr__(self, k, arr)

    # -- container protocol ----------------------------------------------------------------
    def __len__(self):
        return self.positive.shape[0]

    @property
    def shape(self):
        """``(n, 2)``: the counts read as a table of ``(positive, total)`` rows."""
        return (self.positive.shape[0], 2)

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            index = [index]
        return VoteCounts(self.positive[index], self.total[index])

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "A VoteCounts is not an array: pass it to skcal functions as it is (where they take "
            "snapshots), or call .to_snapshots() for a NaN-padded (n, k) array of votes."
        )

    def __repr__(self):
        return (
            f"VoteCounts(n={len(self)}, votes={int(self.total.sum())}, positive={int(self.positive.sum())})"
        )

    # -- conversions -----------------------------------------------------------------------
    def targets(self):
        """The unbiased targets ``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))``.

        Returns
        -------
        t1 : ndarray of shape (n,)
            Estimates of ``E[f*]``, one per item.
        t2 : ndarray of shape (n,)
            Estimates of ``E[f*^2]``; NaN on items with a single vote.
        """
        a = self.positive.astype(np.float64)
        c = self.total.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            t2 = np.where(c >= 2, a * (a - 1.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
        return a / c, t2

    def to_snapshots(self):
        """The equivalent NaN-padded snapshot array (``a`` ones, then ``c - a`` zeros, then NaN).

        Returns
        -------
        ndarray of shape (n, max(total))
            One row per item, one column per vote.
        """
        j = np.arange(int(self.total.max()))[None, :]
        Y = np.where(j < self.positive[:, None], 1.0, 0.0)
        return np.where(j < self.total[:, None], Y, np.nan)

    def votes(self):
        """Every vote as a flat sample, in the order of :meth:`to_snapshots` (row-major).

        Returns
        -------
        rows : ndarray of shape (sum(total),)
            The item of each vote.
        values : ndarray of shape (sum(total),)
            The vote, 1.0 or 0.0.
        """
        rows = np.repeat(np.arange(len(self)), self.total)
        starts = np.cumsum(self.total) - self.total
        rank = np.arange(rows.shape[0]) - np.repeat(starts, self.total)
        return rows, (rank < self.positive[rows]).astype(np.float64)

    @classmethod
    @validate_params({"snapshots": ["array-like"]}, prefer_skip_nested_validation=True)
    def from_snapshots(cls, snapshots):
        """Count the votes of an ``(n, k)`` snapshot array (NaN marks a missing vote).

        Parameters
        ----------
        snapshots : array-like of shape (n, k)
            Binary votes 0/1, NaN for a missing vote; every row needs one vote.

        Returns
        -------
        VoteCounts
            The counts of each row.
        """
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
            ``positive = counts[:, positive_class]``, ``total = counts.sum(axis=1)``.

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
    :class:`skcal.votes.VoteCounts`, which is returned as it is after the same row checks, so
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
        t2 = np.where(c >= 2, a * (a - 1.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
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
