"""Mergeable statistics of the truthful multiclass calibration errors.

The measures are those of *Truthful Calibration Errors for Multi-Class Prediction* (see
:mod:`skcal.truthful`).

The bins are fixed before any row is seen: ``n_bins`` equal-width bins on [0, 1] or the given
``edges``, with the right-closed rule of every binned measure of skcal
(``np.searchsorted(edges[1:-1], v)``: a value on an inner edge goes to the bin on its left, 0 to
the first bin). The class labels are fixed at construction (``labels``), so a chunk missing a
class cannot shift the columns. Quantile (equal-mass) bins depend on all rows: they are given as
``thresholds=`` (``(value, global row index)`` pairs at the bin boundary ranks, found exactly by
the extra passes of :class:`skcal.stats.QuantileSelector`), and each chunk is then updated with
its ``row_offset`` (the global index of its first row), so that ties are broken by global row
index exactly as :func:`skcal.binning.assign_bins` breaks them in memory.

* :class:`TopLabelStatistics`: per bin ``sum w (c - z)``; and ``sum w^2 (1 - z)``, ``W``
  (ConfCE^corr, ConfCE, ConfECE).
* :class:`ClasswiseStatistics`: per class and bin ``sum w (p[r] - 1[y = r])``; and ``W``
  (classwise LinCE, classwise ECE).
"""

from __future__ import annotations

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import (
    EDGES,
    LABELS,
    N_BINS,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    SAMPLE_WEIGHT,
    Pair,
    Real,
)
from skcal._validation import check_bin_edges, check_multiclass_inputs
from skcal.binning import (
    column_bin_ids,
    quantile_bin_starts,
    right_closed_bin_ids,
    threshold_bin_ids,
    uniform_bin_ids,
)
from skcal.stats._base import BaseStatistics, count_rows
from skcal.stats._replicate import ReplicatePlan, add_sparse_sums

__all__ = [
    "TopLabelStatistics",
    "ClasswiseStatistics",
    "classwise_value",
    "quantile_bin_thresholds",
    "top_label_value",
]

_TOP = ("truthful_conf_ce", "conf_ce", "conf_ece")
_CW = ("classwise_lince", "classwise_ece")
#: Equal-mass bins as a pair ``(values, indices)`` (their contents are checked by the constructor).
_THRESHOLDS = [Pair("a pair (values, indices)"), None]
#: The parameters both kinds share: the class labels and the bins.
_BINS = {"labels": LABELS, "n_bins": N_BINS, "edges": EDGES, "thresholds": _THRESHOLDS}


@validate_params(
    {"sums": ["array-like"], "corr": [Real], "W": [Real], "measure": [StrOptions(set(_TOP))]},
    prefer_skip_nested_validation=True,
)
def top_label_value(sums, corr, W, measure):
    """ConfCE^corr, ConfCE or ConfECE from the top-label bin sums.

    The formula :class:`TopLabelStatistics` computes by, and the top-label functions of
    :mod:`skcal.truthful` (which form the sums in one pass of their own, bins without rows
    left out) compute through.

    Parameters
    ----------
    sums : ndarray of shape (n_bins,)
        Per bin ``sum w (c - z)``.
    corr : float
        ``sum w^2 (1 - z)``.
    W : float
        The total weight.
    measure : {"truthful_conf_ce", "conf_ce", "conf_ece"}
        Which measure.

    Returns
    -------
    float
        The measure.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import top_label_value
    >>> round(top_label_value(np.array([0.3, -0.2]), 1.0, 4.0, "truthful_conf_ce"), 6)
    0.070625
    """
    if W <= 0:
        raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
    if measure == "truthful_conf_ce":
        return float((np.dot(sums, sums) + corr) / W**2)
    if measure == "conf_ce":
        return float(np.dot(sums, sums) / W**2)
    return float(np.abs(sums).sum() / W)


@validate_params(
    {"sums": ["array-like"], "k": POSITIVE_INT, "W": [Real], "measure": [StrOptions(set(_CW))]},
    prefer_skip_nested_validation=True,
)
def classwise_value(sums, k, W, measure):
    """Classwise LinCE or ECE from per-class bin sums.

    The formula :class:`ClasswiseStatistics` computes by, and the classwise functions of
    :mod:`skcal.truthful` (which form each class's sums in passes of their own, bins without
    rows left out) compute through.

    Parameters
    ----------
    sums : sequence of k ndarray
        Per class and bin ``sum w (p[r] - 1[y = r])``.
    k : int
        The number of classes.
    W : float
        The total weight.
    measure : {"classwise_lince", "classwise_ece"}
        ``"classwise_lince"``: the mean over the classes of ``|sums[r]|^2 / W^2``;
        ``"classwise_ece"``: of ``sum |sums[r]| / W``.

    Returns
    -------
    float
        The classwise measure.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import classwise_value
    >>> round(classwise_value([np.array([0.2, -0.1]), np.array([-0.2, 0.1])], 2, 2.0, "classwise_ece"), 6)
    0.15
    """
    if W <= 0:
        raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
    if measure == "classwise_lince":
        return float(sum(float(np.dot(s, s)) for s in sums) / (k * W**2))
    return float(sum(float(np.abs(s).sum()) for s in sums) / (k * W))


def _check_thresholds(thresholds, k):
    """``(values, indices)`` thresholds: shapes (m,) or (k, m), sorted, indices non-negative."""
    try:
        tv, tg = thresholds
    except (TypeError, ValueError):
        raise ValueError("thresholds must be a pair (values, indices).") from None
    try:
        tv = np.array(tv, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("threshold values must be numeric.") from None
    tg_raw = np.asarray(tg)
    if (
        tg_raw.size
        and tg_raw.dtype.kind not in "iu"
        and not (
            tg_raw.dtype.kind == "f" and np.isfinite(tg_raw).all() and (tg_raw == np.round(tg_raw)).all()
        )
    ):
        raise ValueError("threshold indices must be integers.")
    tg = tg_raw.astype(np.int64).reshape(tv.shape) if tg_raw.size == tv.size else None
    want = 1 if k is None else 2
    if tg is None or tv.ndim != want or (k is not None and tv.shape[0] != k):
        shape = "(n_bins - 1,)" if k is None else f"({k}, n_bins - 1)"
        raise ValueError(
            f"thresholds values and indices must both have shape {shape}; got {tv.shape}, {tg_raw.shape}."
        )
    if np.isnan(tv).any() or (tv == -np.inf).any() or (tg < 0).any():
        raise ValueError("thresholds: values must be finite or +inf and indices non-negative.")
    v2, g2 = np.atleast_2d(tv), np.atleast_2d(tg)
    with np.errstate(invalid="ignore"):
        dv = np.diff(v2, axis=1)
        bad = (dv < 0) | ((dv == 0) & (np.diff(g2, axis=1) <= 0) & np.isfinite(v2[:, 1:]))
    if bad.any():
        raise ValueError("thresholds must be strictly increasing in (value, index) order.")
    return tv, tg


def quantile_bin_thresholds(values, n_bins):
    """``(values, indices)`` thresholds reproducing the equal-mass bins of ``values`` (or None).

    The thresholds of :class:`TopLabelStatistics` (``thresholds=``): the ``(value, row)`` of the
    first row of every bin but the first in the stable order by value, so that
    :func:`skcal.binning.threshold_bin_ids` gives the ids of :func:`skcal.binning.assign_bins`
    with ``strategy="quantile"``. None when a bin is empty (fewer rows than bins).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    n_bins : int
        Bins.

    Returns
    -------
    tuple of ndarray or None
        ``(threshold values, threshold row indices)``, each of shape ``(n_bins - 1,)``.
    """
    if values.shape[0] < int(n_bins):
        return None
    return _quantile_bins(np.ascontiguousarray(values, dtype=np.float64), int(n_bins))[1]


def _quantile_bins(values, n_bins):
    """The quantile ids of ``values`` (:func:`skcal.binning.column_bin_ids`, linear time) and the
    thresholds found from them (:func:`skcal.binning.quantile_bin_starts`: no sort)."""
    ids = column_bin_ids(values, n_bins, "quantile", "values")
    rows = quantile_bin_starts(values, ids, n_bins)
    return ids, (values[rows], rows)


class _TruthfulBase(BaseStatistics):
    def _setup(self, labels, n_bins, edges, thresholds=None, per_class=False):
        if labels is None:
            raise ValueError("labels is required: the class labels in column order (fixed for every chunk).")
        labels = list(np.asarray(labels).tolist())
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise ValueError("labels must hold at least 2 distinct class labels.")
        self.thresholds = None
        if thresholds is not None:
            if edges is not None:
                raise ValueError("Pass edges or thresholds, not both.")
            tv, tg = _check_thresholds(thresholds, len(labels) if per_class else None)
            n_bins = tv.shape[-1] + 1
            self.thresholds = [tv.tolist(), tg.tolist()]
        elif edges is not None:
            e = check_bin_edges(edges)
            n_bins = e.shape[0] - 1
            edges = e.tolist()
        self.labels, self.n_bins, self.edges = labels, int(n_bins), edges

    def _ids(self, v, index=None, column=None):
        if self.thresholds is not None:
            tv, tg = (np.asarray(t) for t in self.thresholds)
            if column is not None:
                tv, tg = tv[column], tg[column]
            return threshold_bin_ids(v, index, tv, tg)
        if self.edges is None:
            return uniform_bin_ids(v, self.n_bins, "y_proba")
        return right_closed_bin_ids(v, np.asarray(self.edges))

    def _check_chunk(self, y_true, y_proba, sample_weight=None):
        if count_rows(y_proba) == 0 and count_rows(y_true) == 0:
            return None
        return check_multiclass_inputs(y_true, y_proba, sample_weight, self.labels, allow_zero_total=True)

    @validate_params(
        {
            "y_true": ["array-like"],
            "y_proba": ["array-like"],
            "sample_weight": SAMPLE_WEIGHT,
            "row_offset": NON_NEGATIVE_INT,
        },
        prefer_skip_nested_validation=True,
    )
    def update(self, y_true, y_proba, sample_weight=None, row_offset=0):
        """Add a chunk of labels and predicted probabilities; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Class labels (each one of ``labels``).
        y_proba : array-like of shape (n, k)
            Predicted probabilities, columns in the order of ``labels``.
        sample_weight : array-like of shape (n,), default=None
            Importance weights (see :mod:`skcal.truthful`).
        row_offset : int, default=0
            Global index of the chunk's first row. Used only with ``thresholds`` (ties at a
            threshold value are split by global row index); ignored otherwise.

        Returns
        -------
        object
            The updated statistics.
        """
        self._row_offset = int(row_offset)
        try:
            return super().update(y_true, y_proba, sample_weight=sample_weight)
        finally:
            del self._row_offset

    def _index(self, n):
        """Global indices of the rows of the chunk being added (``row_offset + arange(n)``)."""
        if self.thresholds is None:
            return None
        return np.arange(n, dtype=np.int64) + getattr(self, "_row_offset", 0)

    def _plan_index(self, n, index):
        """Global row indices for the thresholds' tie-breaking (``None`` without thresholds)."""
        if self.thresholds is None:
            return None
        return np.arange(n, dtype=np.int64) if index is None else np.asarray(index, dtype=np.int64)

    @classmethod
    @validate_params(
        {
            "P": ["array-like"],
            "measure": [StrOptions(set(_TOP + _CW))],
            "n_bins": N_BINS,
            "codes": ["array-like", None],
        },
        prefer_skip_nested_validation=True,
    )
    def with_quantile_bins(cls, P, *, measure, n_bins=15, codes=None):
        """Empty statistics of ``measure`` on the equal-mass bins of ``P`` (None: fewer rows than bins).

        The bins of :func:`skcal.binning.assign_bins` with ``strategy="quantile"`` of the top-label
        confidences (:class:`TopLabelStatistics`) or of every column (:class:`ClasswiseStatistics`)
        of these rows, as ``thresholds``: the bootstrap replicates of the rows keep the full
        sample's bins, the choice the in-memory measure makes once.

        Parameters
        ----------
        P : ndarray of shape (n, k)
            Validated probabilities; the labels are the column indices ``0..k-1``.
        measure : str
            The measure (see the class).
        n_bins : int, default=15
            Bins.
        codes : ndarray of int of shape (n,), default=None
            The labels as column indices: also return the template's replicate plan of the rows
            ``(P, codes)`` (the rows' bins are known here, the plan need not find them again).

        Returns
        -------
        TopLabelStatistics, ClasswiseStatistics, tuple or None
            The template, or ``(template, plan)`` with ``codes``.
        """
        n, k = P.shape
        if n < int(n_bins):
            return None
        top = np.argmax(P, axis=1) if cls is TopLabelStatistics else None
        columns = [P[np.arange(n), top]] if top is not None else [P[:, j] for j in range(k)]
        found = [_quantile_bins(np.ascontiguousarray(v, dtype=np.float64), int(n_bins)) for v in columns]
        ids = [f[0] for f in found]
        values = np.asarray([f[1][0] for f in found])
        thresholds = (values, np.asarray([f[1][1] for f in found], dtype=np.int64))
        if top is not None:
            thresholds = (thresholds[0][0], thresholds[1][0])
        template = cls(labels=list(range(k)), n_bins=int(n_bins), measure=measure, thresholds=thresholds)
        if codes is None:
            return template
        if top is not None:
            return template, template._plan(codes, None, ids[0], top, columns[0])
        return template, template._plan(P, codes, None, ids)


class TopLabelStatistics(_TruthfulBase):
    """Mergeable top-label bin sums: ConfCE^corr (truthful), ConfCE and ConfECE.

    Parameters
    ----------
    labels : array-like of shape (k,)
        Class labels in column order.
    n_bins : int, default=15
        Equal-width bins on [0, 1] (ignored when ``edges`` is given).
    edges : array-like, default=None
        Non-decreasing bin edges for the confidences (right-closed).
    measure : {"truthful_conf_ce", "conf_ce", "conf_ece"}, default="truthful_conf_ce"
        What :meth:`compute` returns.
    thresholds : tuple of two array-like of shape (n_bins - 1,), default=None
        Equal-mass bins as ``(values, indices)``: a row of confidence ``c`` and global index
        ``g`` goes to the bin counting the thresholds lexicographically at or below ``(c, g)``
        (see :func:`skcal.stats.quantile_thresholds`, which finds the thresholds of
        ``strategy="quantile"`` exactly). Update with each chunk's ``row_offset``.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``resid`` (per bin ``sum w (c - z)``), ``corr`` (``sum w^2 (1 - z)``), ``weight`` (``W``).

    Examples
    --------
    >>> from skcal.stats import TopLabelStatistics
    >>> from skcal.truthful import truthful_conf_ce
    >>> a = TopLabelStatistics(labels=[0, 1], n_bins=2).update([0, 1], [[0.8, 0.2], [0.3, 0.7]])
    >>> b = TopLabelStatistics(labels=[0, 1], n_bins=2).update([1, 0], [[0.6, 0.4], [0.9, 0.1]])
    >>> P = [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.9, 0.1]]
    >>> bool(abs((a + b).compute() - truthful_conf_ce([0, 1, 1, 0], P, n_bins=2, strategy="uniform")) < 1e-15)
    True
    """

    _param_names = ("labels", "n_bins", "edges", "measure", "thresholds")
    _compute_only_params = ("measure",)
    _parameter_constraints: dict = {**_BINS, "measure": [StrOptions(set(_TOP))]}

    def __init__(self, *, labels=None, n_bins=15, edges=None, measure="truthful_conf_ce", thresholds=None):
        self._setup(labels, n_bins, edges, thresholds)
        self.measure = measure

    def _empty(self):
        return {"resid": np.zeros(self.n_bins), "corr": np.zeros(1), "weight": np.zeros(1)}

    def _sums(self, P, codes, w):
        n = P.shape[0]
        r = np.argmax(P, axis=1)
        c = P[np.arange(n), r]
        miss = (codes != r).astype(np.float64)
        resid = c - 1.0 + miss
        ww = np.ones(n) if w is None else w
        return {
            "resid": np.bincount(self._ids(c, self._index(n)), weights=ww * resid, minlength=self.n_bins),
            "corr": np.array([np.dot(ww * ww, miss)]),
            "weight": np.array([ww.sum()]),
        }

    def _compute(self):
        s = self.stats_
        return top_label_value(s["resid"], float(s["corr"][0]), float(s["weight"][0]), self.measure)

    # -- bootstrap replicates: one bincount over (replicate, bin) per tile -----------------
    def _replicate_plan(self, P, codes, w, index=None):
        n = P.shape[0]
        r = np.argmax(P, axis=1)
        c = P[np.arange(n), r]
        return self._plan(codes, w, self._ids(c, self._plan_index(n, index)), r, c)

    def _plan(self, codes, w, ids, r, c):
        """The replicate plan of rows whose bin ids, top classes ``r`` and confidences ``c`` are known."""
        miss = (codes != r).astype(np.float64)
        return _TopLabelPlan(self, ids, c - 1.0 + miss, miss, w)

    def _replicate_compute(self, stats):
        sums, corr, W = stats["resid"], stats["corr"][:, 0], stats["weight"][:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.measure == "truthful_conf_ce":
                out = (np.einsum("rb,rb->r", sums, sums) + corr) / W**2
            elif self.measure == "conf_ce":
                out = np.einsum("rb,rb->r", sums, sums) / W**2
            else:
                out = np.abs(sums).sum(axis=1) / W
        return np.where(W > 0, out, np.nan)


class _TopLabelPlan(ReplicatePlan):
    def __init__(self, stats, ids, resid, miss, w):
        self.stats, self.w = stats, w
        self.n_rows = ids.shape[0]
        self.rows = ids.astype(np.int64)[:, None]
        self.resid = (resid if w is None else w * resid)[:, None]
        # the resample's copies of a row of weight w add w^2 each to the correction
        self.corr = miss if w is None else w * w * miss

    def empty(self, n_replicates, scratch=None):
        return {
            "resid": np.zeros((self.stats.n_bins, n_replicates)),
            "corr": np.zeros((n_replicates, 1)),
            "weight": np.zeros((n_replicates, 1)),
        }

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["resid"], self.rows[sl], self.resid[sl], W)
        out["corr"][:, 0] += W @ self.corr[sl]
        out["weight"][:, 0] += copies if self.w is None else W @ self.w[sl]
        return out

    def finish(self, out):
        out["resid"] = np.ascontiguousarray(out["resid"].T)
        return out


class ClasswiseStatistics(_TruthfulBase):
    """Mergeable per-class bin sums: classwise LinCE (truthful) and classwise ECE.

    Parameters
    ----------
    labels : array-like of shape (k,)
        Class labels in column order.
    n_bins : int, default=15
        Equal-width bins on [0, 1] (ignored when ``edges`` is given).
    edges : array-like, default=None
        Non-decreasing bin edges, the same for every class column (right-closed).
    measure : {"classwise_lince", "classwise_ece"}, default="classwise_lince"
        What :meth:`compute` returns.
    thresholds : tuple of two array-like of shape (k, n_bins - 1), default=None
        Equal-mass bins of each class column as ``(values, indices)`` (see
        :class:`TopLabelStatistics` and :func:`skcal.stats.quantile_thresholds` with
        ``kind="classwise"``). Update with each chunk's ``row_offset``.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``resid`` (k, n_bins): ``sum w (p[r] - 1[y = r])`` per class and bin; ``weight`` (``W``).

    Examples
    --------
    >>> from skcal.stats import ClasswiseStatistics
    >>> P = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> s = ClasswiseStatistics(labels=[0, 1, 2], n_bins=2).update([0, 1, 2, 1], P)
    >>> round(s.compute(), 6)
    0.026667
    """

    _param_names = ("labels", "n_bins", "edges", "measure", "thresholds")
    _compute_only_params = ("measure",)
    _parameter_constraints: dict = {**_BINS, "measure": [StrOptions(set(_CW))]}

    def __init__(self, *, labels=None, n_bins=15, edges=None, measure="classwise_lince", thresholds=None):
        self._setup(labels, n_bins, edges, thresholds, per_class=True)
        self.measure = measure

    def _empty(self):
        return {"resid": np.zeros((len(self.labels), self.n_bins)), "weight": np.zeros(1)}

    def _sums(self, P, codes, w):
        n, k = P.shape
        nb = self.n_bins
        ids = np.empty((n, k), dtype=np.intp)
        index = self._index(n)
        for j in range(k):
            ids[:, j] = self._ids(np.ascontiguousarray(P[:, j]), index, j)
        flat = (ids + np.arange(k)[None, :] * nb).ravel()
        ww = np.ones(n) if w is None else w
        sums = np.bincount(flat, weights=(P * ww[:, None]).ravel(), minlength=k * nb)
        sums -= np.bincount(ids[np.arange(n), codes] + codes * nb, weights=ww, minlength=k * nb)
        return {"resid": sums.reshape(k, nb), "weight": np.array([ww.sum()])}

    def _compute(self):
        s = self.stats_
        return classwise_value(list(s["resid"]), len(self.labels), float(s["weight"][0]), self.measure)

    # -- bootstrap replicates ----------------------------------------------------------------
    def _replicate_plan(self, P, codes, w, index=None):
        idx = self._plan_index(P.shape[0], index)
        ids = [self._ids(np.ascontiguousarray(P[:, j]), idx, j) for j in range(P.shape[1])]
        return self._plan(P, codes, w, ids)

    def _plan(self, P, codes, w, ids):
        """The replicate plan of rows whose bin ids (one array per class column) are known."""
        n, k = P.shape
        nb = self.n_bins
        # k entries per row, w (p_j - 1[y = j]) in class j's bin: the bins of class j are the
        # rows j * nb .. j * nb + nb - 1 of the accumulator
        # int32 accumulator rows (k nb of them): half the memory of int64, as fast in the products
        itype = np.int32 if k * nb < 2**31 else np.int64
        rows = np.empty((n, k), dtype=itype)
        for j in range(k):
            rows[:, j] = ids[j]
        rows += np.arange(k, dtype=itype) * nb
        return _ClasswisePlan(self, rows, P, np.asarray(codes, dtype=np.int64), w)

    def _replicate_compute(self, stats):
        sums, W = stats["resid"], stats["weight"][:, 0]
        k = len(self.labels)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.measure == "classwise_lince":
                out = np.einsum("rkb,rkb->r", sums, sums) / (k * W**2)
            else:
                out = np.abs(sums).sum(axis=(1, 2)) / (k * W)
        return np.where(W > 0, out, np.nan)


class _ClasswisePlan(ReplicatePlan):
    def __init__(self, stats, rows, P, codes, w):
        self.stats, self.w = stats, w
        self.n_rows, self.k = P.shape
        # rows: (n, k) accumulator rows of w (p_j - 1[y = j]), class j's bin (the true class's
        # -w shares its entry with its p: one entry fewer per row than a separate -w)
        self.rows = rows
        self.vals = np.array(P, dtype=np.float64, order="C")  # a copy
        self.vals[np.arange(self.n_rows), codes] -= 1.0
        if w is not None:
            self.vals *= w[:, None]

    def empty(self, n_replicates, scratch=None):
        k, nb = len(self.stats.labels), self.stats.n_bins
        return {"resid": np.zeros((k * nb, n_replicates)), "weight": np.zeros((n_replicates, 1))}

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["resid"], self.rows[sl], self.vals[sl], W)
        out["weight"][:, 0] += copies if self.w is None else W @ self.w[sl]
        return out

    def finish(self, out):
        k, nb = len(self.stats.labels), self.stats.n_bins
        out["resid"] = np.ascontiguousarray(out["resid"].T).reshape(-1, k, nb)
        return out
