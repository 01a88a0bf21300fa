"""Mergeable statistics of the truthful multiclass calibration errors.

The measures are those of *Truthful Calibration Errors for Multi-Class Prediction* (see
:mod:`skcal.truthful`).

The bins are fixed before any row is seen: ``n_bins`` equal-width bins on [0, 1] or the given
``edges``, with the right-closed rule of every binned measure of skcal
(``np.searchsorted(edges[1:-1], v)``: a value on an inner edge goes to the bin on its left, 0 to
the first bin). The class labels are fixed at construction (``labels``), so a chunk missing a
class cannot shift the columns. Quantile (equal-mass) bins depend on all rows and are not
available here; the in-memory functions of :mod:`skcal.truthful` compute them exactly.

* :class:`TopLabelStatistics`: per bin ``sum w (c - z)``; and ``sum w^2 (1 - z)``, ``W``
  (ConfCE^corr, ConfCE, ConfECE).
* :class:`ClasswiseStatistics`: per class and bin ``sum w (p[r] - 1[y = r])``; and ``W``
  (classwise LinCE, classwise ECE).
"""

from __future__ import annotations

import numpy as np

from skcal.stats._base import BaseStatistics

__all__ = ["TopLabelStatistics", "ClasswiseStatistics"]

_TOP = ("truthful_conf_ce", "conf_ce", "conf_ece")
_CW = ("classwise_lince", "classwise_ece")


def top_label_value(sums, corr, W, measure):
    """ConfCE^corr, ConfCE or ConfECE from the bin sums (shared with :mod:`skcal.truthful`)."""
    if W <= 0:
        raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
    if measure == "truthful_conf_ce":
        return float((np.dot(sums, sums) + corr) / W**2)
    if measure == "conf_ce":
        return float(np.dot(sums, sums) / W**2)
    return float(np.abs(sums).sum() / W)


def classwise_value(sums, k, W, measure):
    """Classwise LinCE or ECE from per-class bin sums (shared with :mod:`skcal.truthful`)."""
    if W <= 0:
        raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
    if measure == "classwise_lince":
        return float(sum(float(np.dot(s, s)) for s in sums) / (k * W**2))
    return float(sum(float(np.abs(s).sum()) for s in sums) / (k * W))


class _TruthfulBase(BaseStatistics):
    def _setup(self, labels, n_bins, edges, measure, allowed):
        from skcal.stats._binned import _check_edges

        if labels is None:
            raise ValueError("labels is required: the class labels in column order (fixed for every chunk).")
        labels = list(np.asarray(labels).tolist())
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise ValueError("labels must hold at least 2 distinct class labels.")
        if edges is not None:
            e = _check_edges(edges)
            n_bins = e.shape[0] - 1
            edges = e.tolist()
        elif isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
            raise ValueError(f"n_bins must be an integer >= 1; got {n_bins!r}.")
        if measure not in allowed:
            raise ValueError(f"measure must be one of {allowed}; got {measure!r}.")
        self.labels, self.n_bins, self.edges, self.measure = labels, int(n_bins), edges, measure

    def _ids(self, v):
        from skcal.binning import _right_closed_ids, _uniform_ids

        if self.edges is None:
            return _uniform_ids(v, self.n_bins, "y_proba")
        return _right_closed_ids(v, np.asarray(self.edges))

    def _inputs(self, y_true, y_proba, sample_weight):
        from skcal.stats._binned import _validate_chunk
        from skcal.truthful import _check_inputs

        def check(y, P, sample_weight=None):
            return _check_inputs(y, P, sample_weight, self.labels)

        return _validate_chunk(check, y_true, y_proba, sample_weight)

    def update(self, y_true, y_proba, sample_weight=None):
        """Add a chunk of labels and predicted probabilities; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Class labels (each one of ``labels``).
        y_proba : array-like of shape (n, k)
            Predicted probabilities, columns in the order of ``labels``.
        sample_weight : array-like of shape (n,), default=None
            Importance weights (see :mod:`skcal.truthful`).

        Returns
        -------
        object
            The updated statistics.
        """
        return super().update(y_true, y_proba, sample_weight=sample_weight)


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

    _param_names = ("labels", "n_bins", "edges", "measure")

    def __init__(self, *, labels=None, n_bins=15, edges=None, measure="truthful_conf_ce"):
        self._setup(labels, n_bins, edges, measure, _TOP)

    def _empty(self):
        return {"resid": np.zeros(self.n_bins), "corr": np.zeros(1), "weight": np.zeros(1)}

    def _chunk(self, y_true, y_proba, sample_weight=None):
        if len(y_proba) == 0:
            return self._empty()
        P, codes, w = self._inputs(y_true, y_proba, sample_weight)
        n = P.shape[0]
        r = np.argmax(P, axis=1)
        c = P[np.arange(n), r]
        miss = (codes != r).astype(np.float64)
        resid = c - 1.0 + miss
        ww = np.ones(n) if w is None else w
        return {
            "resid": np.bincount(self._ids(c), weights=ww * resid, minlength=self.n_bins),
            "corr": np.array([np.dot(ww * ww, miss)]),
            "weight": np.array([ww.sum()]),
        }

    def _compute(self):
        s = self.stats_
        return top_label_value(s["resid"], float(s["corr"][0]), float(s["weight"][0]), self.measure)


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

    _param_names = ("labels", "n_bins", "edges", "measure")

    def __init__(self, *, labels=None, n_bins=15, edges=None, measure="classwise_lince"):
        self._setup(labels, n_bins, edges, measure, _CW)

    def _empty(self):
        return {"resid": np.zeros((len(self.labels), self.n_bins)), "weight": np.zeros(1)}

    def _chunk(self, y_true, y_proba, sample_weight=None):
        if len(y_proba) == 0:
            return self._empty()
        P, codes, w = self._inputs(y_true, y_proba, sample_weight)
        n, k = P.shape
        nb = self.n_bins
        ids = np.empty((n, k), dtype=np.intp)
        for j in range(k):
            ids[:, j] = self._ids(np.ascontiguousarray(P[:, j]))
        flat = (ids + np.arange(k)[None, :] * nb).ravel()
        ww = np.ones(n) if w is None else w
        sums = np.bincount(flat, weights=(P * ww[:, None]).ravel(), minlength=k * nb)
        sums -= np.bincount(ids[np.arange(n), codes] + codes * nb, weights=ww, minlength=k * nb)
        return {"resid": sums.reshape(k, nb), "weight": np.array([ww.sum()])}

    def _compute(self):
        s = self.stats_
        return classwise_value(list(s["resid"]), len(self.labels), float(s["weight"][0]), self.measure)
