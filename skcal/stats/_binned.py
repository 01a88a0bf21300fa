"""Mergeable per-bin statistics of binary predictions (binned ECE, MCE, RMS, ACE, debiased l2).

The bins are fixed before any row is seen: ``n_bins`` equal-width bins on [0, 1], or the given
``edges`` (for quantile bins, edges computed beforehand, for example in a first pass). Every bin
uses scikit-learn's right-closed rule, ``np.searchsorted(edges[1:-1], p)``: bin ``j`` is
``(edges[j], edges[j + 1]]`` and the first bin also holds ``edges[0]``; a prediction below the
first edge goes to the first bin and one above the last edge to the last bin (as in
``sklearn.calibration.calibration_curve``).

Per bin the object adds up the number of rows, the weight ``W_b = sum w``, ``sum w p``,
``sum w y`` and ``sum w^2``; every binned measure of skcal is a function of these sums, so the
statistics merge exactly (up to floating-point summation order).
"""

from __future__ import annotations

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import EDGES, N_BINS, POS_LABEL
from skcal._validation import check_bin_edges
from skcal.binning import right_closed_bin_ids, uniform_bin_ids
from skcal.stats._base import BinaryStatistics
from skcal.stats._replicate import ReplicatePlan, add_sparse_sums

__all__ = ["BinnedStatistics", "BINNED_MEASURES"]

#: Measures :class:`BinnedStatistics` computes.
BINNED_MEASURES = ("ece", "mce", "rms", "ace", "debiased_l2", "debiased_l2_squared")


class BinnedStatistics(BinaryStatistics):
    """Per-bin sums of binary predictions for the binned calibration measures.

    Parameters
    ----------
    n_bins : int, default=11
        Number of equal-width bins on [0, 1] (ignored when ``edges`` is given).
    edges : array-like of shape (n_bins + 1,), default=None
        Non-decreasing bin edges (for example quantile edges from a first pass). Bins are
        right-closed, ``(edges[j], edges[j + 1]]``, the first one closed on both sides.
    measure : {"ece", "mce", "rms", "ace", "debiased_l2", "debiased_l2_squared"}, default="ece"
        What :meth:`compute` returns; see :mod:`skcal.binned_measures` for the formulas.
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk (a chunk holding one class only cannot tell
        it); ``None`` accepts ``{0, 1}``, ``{-1, 1}`` and booleans.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``count``, ``weight``, ``sum_wp``, ``sum_wy`` and ``sum_w2``, one entry per bin.

    Examples
    --------
    >>> from skcal.stats import BinnedStatistics
    >>> a = BinnedStatistics(n_bins=2).update([0, 1], [0.1, 0.2])
    >>> b = BinnedStatistics(n_bins=2).update([1, 1], [0.9, 0.9])
    >>> round((a + b).compute(), 12)
    0.2
    """

    _param_names = ("n_bins", "edges", "measure", "pos_label")
    _compute_only_params = ("measure",)
    _parameter_constraints: dict = {
        "n_bins": N_BINS,
        "edges": EDGES,
        "measure": [StrOptions(set(BINNED_MEASURES))],
        "pos_label": POS_LABEL,
    }

    def __init__(self, *, n_bins=11, edges=None, measure="ece", pos_label=None):
        if edges is not None:
            edges = check_bin_edges(edges)
            n_bins = edges.shape[0] - 1
        self.n_bins = int(n_bins)
        self.edges = None if edges is None else edges.tolist()
        self.measure = measure
        self.pos_label = pos_label

    # -- binning -------------------------------------------------------------------------
    def bin_edges(self):
        """Return the bin edges (``linspace(0, 1, n_bins + 1)`` unless edges were given).

        Returns
        -------
        ndarray of shape (n_bins + 1,)
            The edges.
        """
        if self.edges is None:
            return np.linspace(0.0, 1.0, self.n_bins + 1)
        return np.asarray(self.edges, dtype=np.float64)

    @validate_params({"p": ["array-like"]}, prefer_skip_nested_validation=True)
    def bin_ids(self, p):
        """Return the right-closed bin of each prediction (``np.searchsorted(edges[1:-1], p)``).

        Parameters
        ----------
        p : array-like of shape (n,)
            Predictions.

        Returns
        -------
        ndarray of intp of shape (n,)
            Bin ids in ``range(n_bins)``.
        """
        p = np.asarray(p, dtype=np.float64)
        if self.edges is None and p.size and p.min() >= 0.0 and p.max() <= 1.0:
            return uniform_bin_ids(p, self.n_bins)
        return right_closed_bin_ids(p, self.bin_edges())

    # -- protocol ------------------------------------------------------------------------
    def _empty(self):
        z = np.zeros(self.n_bins)
        return {
            "count": np.zeros(self.n_bins, dtype=np.int64),
            "weight": z.copy(),
            "sum_wp": z.copy(),
            "sum_wy": z.copy(),
            "sum_w2": z.copy(),
        }

    def _sums(self, y, p, w, rows=1 << 14):
        """Per-bin sums of validated rows, binned in chunks (bin ids never exist for all rows)."""
        out = self._empty()
        for s in range(0, p.shape[0], rows):
            sl = slice(s, s + rows)
            part = self._bin_sums(self.bin_ids(p[sl]), y[sl], p[sl], None if w is None else w[sl])
            for k in out:
                out[k] += part[k]
        return out

    def _bin_sums(self, ids, y, p, w):
        nb = self.n_bins
        count = np.bincount(ids, minlength=nb).astype(np.int64)
        if w is None:
            return {
                "count": count,
                "weight": count.astype(np.float64),
                "sum_wp": np.bincount(ids, weights=p, minlength=nb),
                "sum_wy": np.bincount(ids, weights=y, minlength=nb),
                "sum_w2": count.astype(np.float64),
            }
        return {
            "count": count,
            "weight": np.bincount(ids, weights=w, minlength=nb),
            "sum_wp": np.bincount(ids, weights=w * p, minlength=nb),
            "sum_wy": np.bincount(ids, weights=w * y, minlength=nb),
            "sum_w2": np.bincount(ids, weights=w * w, minlength=nb),
        }

    # -- results -------------------------------------------------------------------------
    def curve(self):
        """Per-bin data: edges, counts, weights, mean prediction and observed frequency.

        Returns
        -------
        dict
            ``edges`` (n_bins + 1,), ``count`` (rows per bin), ``weight`` (``W_b``),
            ``mean_predicted`` and ``observed_frequency`` (weighted means; NaN in empty bins).
        """
        s = self.stats_
        with np.errstate(invalid="ignore", divide="ignore"):
            mp = np.where(s["weight"] > 0, s["sum_wp"] / s["weight"], np.nan)
            fy = np.where(s["weight"] > 0, s["sum_wy"] / s["weight"], np.nan)
        return {
            "edges": self.bin_edges(),
            "count": s["count"].copy(),
            "weight": s["weight"].copy(),
            "mean_predicted": mp,
            "observed_frequency": fy,
        }

    def _compute(self):
        s = self.stats_
        W = s["weight"].sum()
        if W <= 0:
            raise ValueError("BinnedStatistics holds no rows with positive weight; nothing to compute.")
        ne = s["weight"] > 0
        Wb = s["weight"][ne]
        gap = (s["sum_wy"][ne] - s["sum_wp"][ne]) / Wb
        m = self.measure
        if m == "ece":
            return float(np.abs(s["sum_wy"][ne] - s["sum_wp"][ne]).sum() / W)
        if m == "mce":
            return float(np.abs(gap).max())
        if m == "rms":
            return float(np.sqrt(np.dot(Wb / W, gap * gap)))
        if m == "ace":
            return float(np.abs(gap).mean())
        # Kumar, Liang and Ma (2019): sum_b (W_b / W) [gap_b^2 - ybar_b (1 - ybar_b) / (n_eff_b - 1)],
        # n_eff_b = W_b^2 / sum w^2 (= n_b without weights); bins with < 2 rows contribute 0.
        ybar = s["sum_wy"][ne] / Wb
        n_eff = Wb * Wb / s["sum_w2"][ne]
        ok = (s["count"][ne] >= 2) & (n_eff > 1.0 + 1e-12)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_bin = np.where(ok, gap * gap - ybar * (1.0 - ybar) / (n_eff - 1.0), 0.0)
        sq = float(np.dot(Wb / W, per_bin))
        if m == "debiased_l2_squared":
            return sq
        return float(np.sqrt(max(sq, 0.0)))

    # -- bootstrap replicates: one weighted histogram per replicate -----------------------
    def _replicate_plan(self, y, p, w, index=None):
        return _BinnedPlan(self, y, p, w)

    def _grid_bin_ids(self, values):
        return self.bin_ids(values)

    def _grid_statistics(self, units, column):
        """The bins' sums from the units' (unit weights: the copies are the weights and ``w^2``)."""
        A = units.grid._bin_sums()
        weight = np.ascontiguousarray((A @ units.S0).T)
        return {
            "count": np.rint(weight).astype(np.int64),
            "weight": weight,
            "sum_wp": np.ascontiguousarray((A @ units.P).T),
            "sum_wy": np.ascontiguousarray((A @ units.Y0).T),
            "sum_w2": weight.copy(),
        }

    def _replicate_compute(self, stats):
        """Every replicate's measure from its per-bin sums (NaN for a replicate of no weight)."""
        weight, wp, wy = stats["weight"], stats["sum_wp"], stats["sum_wy"]
        W = weight.sum(axis=1)
        ne = weight > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            safe = np.where(ne, weight, 1.0)
            gap = np.where(ne, (wy - wp) / safe, 0.0)
            m = self.measure
            if m == "ece":
                out = np.abs(wy - wp).sum(axis=1) / W
            elif m == "mce":
                out = np.where(ne, np.abs(gap), -np.inf).max(axis=1)
            elif m == "rms":
                out = np.sqrt((weight / W[:, None] * gap * gap).sum(axis=1))
            elif m == "ace":
                out = np.abs(gap).sum(axis=1) / ne.sum(axis=1)
            else:
                ybar = np.where(ne, wy / safe, 0.0)
                n_eff = np.where(ne, weight * weight / np.where(ne, stats["sum_w2"], 1.0), 0.0)
                ok = ne & (stats["count"] >= 2) & (n_eff > 1.0 + 1e-12)
                per_bin = np.where(ok, gap * gap - ybar * (1.0 - ybar) / np.where(ok, n_eff - 1.0, 1.0), 0.0)
                out = (weight / W[:, None] * per_bin).sum(axis=1)
                if m == "debiased_l2":
                    out = np.sqrt(np.maximum(out, 0.0))
        return np.where(W > 0, out, np.nan)


class _BinnedPlan(ReplicatePlan):
    """Replicates of the per-bin sums: the rows' bins are found once (one sparse product a tile).

    Copies of a row count it once each (``count``) and add ``w``, ``w p``, ``w y`` and ``w^2``
    each. The label (in {0, 1}, as :func:`~skcal._validation.check_binary_chunk` gives it)
    picks which of two blocks of bins a row adds to, so ``sum w y`` is the second block's
    weight: with unit weights a row adds two entries (``1`` and ``p``; its count, weight and
    ``w^2`` are all its copies), with row weights four (``1``, ``w``, ``w p``, ``w^2``).
    """

    def __init__(self, stats, y, p, w):
        self.stats, self.w = stats, w
        self.n_rows = p.shape[0]
        ids = (
            np.concatenate([stats.bin_ids(p[s : s + (1 << 16)]) for s in range(0, p.shape[0], 1 << 16)])
            if p.shape[0]
            else np.zeros(0, dtype=np.intp)
        )
        nb = stats.n_bins
        base = ids.astype(np.int64) + nb * y.astype(np.int64)  # (bin, label): 2 nb rows a column
        cols = [np.ones_like(p), p] if w is None else [np.ones_like(p), w, w * p, w * w]
        self.rows = base[:, None] + (np.arange(len(cols), dtype=np.int64) * 2 * nb)[None, :]
        self.vals = np.column_stack(cols)

    def empty(self, n_replicates, scratch=None):
        return {"_acc": np.zeros((2 * self.rows.shape[1] * self.stats.n_bins, n_replicates))}

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["_acc"], self.rows[sl], self.vals[sl], W)
        return out

    def finish(self, out):
        acc, nb = out["_acc"], self.stats.n_bins
        blocks = acc.reshape(-1, 2, nb, acc.shape[1])  # (column, label, bin, replicate)
        both = [np.ascontiguousarray((b[0] + b[1]).T) for b in blocks]
        if self.w is None:
            copies, sum_wp = both
            weight, sum_w2 = copies.copy(), copies.copy()  # w = w^2 = 1: both are the copies
            sum_wy = np.ascontiguousarray(blocks[0, 1].T)
        else:
            copies, weight, sum_wp, sum_w2 = both
            sum_wy = np.ascontiguousarray(blocks[1, 1].T)
        return {
            "count": np.rint(copies).astype(np.int64),
            "weight": weight,
            "sum_wp": sum_wp,
            "sum_wy": sum_wy,
            "sum_w2": sum_w2,
        }


_BINNED_KEYS = ("count", "weight", "sum_wp", "sum_wy", "sum_w2")
