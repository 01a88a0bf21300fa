"""Mergeable statistics of the Lipschitz smooth calibration error smCE, exact and on a grid.

The measure is that of :mod:`skcal.lipschitz` (Blasiok, Gopalan, Hu and Nakkiran 2023):
``smCE = sup E[f(p) (y - p)]`` over 1-Lipschitz ``f: [0, 1] -> [-1, 1]``, on a sample the linear
program over the sorted distinct predictions with the merged residuals, solved exactly through
its dual, a weighted L1 isotonic regression of the running residual sums (the derivation is in
:mod:`skcal.lipschitz`). The solver lives here, beside the statistics, and solves many problems
at once: the bootstrap replicates of one model share their points and differ in residuals.

* :class:`SmoothCEStatistics` is exact: the state of :class:`~skcal.stats.CutoffStatistics`
  (per distinct prediction, the sums of ``w (y - p)`` and of ``w``), so it merges the same way.
* :class:`SmoothCEGridStatistics` has a fixed size and a stated bound: the residuals are added
  into ``n_cells`` equal cells of [0, 1] and each cell's residual is placed at the cell's
  midpoint ``x_c``. For any 1-Lipschitz ``f``, moving a row from ``p`` to ``x_c`` changes
  ``E[f(p) (y - p)]`` by at most ``E[|y - p| |p - x_c|]``, so the grid value is within
  ``bound() = sum w |y - p| |p - x_c| / W`` of the exact smCE (below ``E|y - p| / (2 n_cells)``).
  The report's bootstrap uses it for the replicates of smCE (its value stays exact).
"""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._compiled import compiled
from skcal._constraints import N_BINS, POS_LABEL, Integral, StrictInterval
from skcal._docstrings import fill
from skcal.stats._base import VALIDATED_ROWS, VALIDATED_ROWS_DOCS, BinaryStatistics
from skcal.stats._cutoff import CutoffStatistics
from skcal.stats._replicate import ReplicatePlan, add_sparse_sums

__all__ = [
    "SmoothCEGridStatistics",
    "SmoothCEStatistics",
    "isotonic_l1_costs",
    "smce_from_sorted",
    "smce_grid_cells",
]


#: From this many values (problems x points) on, the compiled partitioning is used when numba is
#: installed (one problem at a time, depth first, without numpy's temporaries per level); below,
#: numpy is fast enough and need not import numba.
_KERNEL_MIN_ENTRIES = 1 << 14


def isotonic_l1_costs(X, w):
    """Minimum of ``sum_i w_i |x_i - v_i|`` over non-decreasing ``v``, for every row of ``X`` at once.

    Recursive partitioning (Stout 2013, "Isotonic regression via partitioning"): a segment of
    indices whose solution values lie in the distinct values ``vals[lo..hi]`` is split at
    ``mid = (lo + hi) // 2`` by the best two-level fit with levels ``vals[mid] < vals[mid + 1]``,
    which puts a prefix of the segment at the lower level; the prefix keeps ``vals[lo..mid]`` and
    the rest ``vals[mid + 1..hi]``. A segment with one admissible value is finished. The rows of
    ``X`` are independent problems: their segments never mix, and every recursion level handles
    all rows' segments with the same segmented reductions. With numba installed (the ``fast``
    extra) and at least ``2^14`` values, :func:`skcal._replicate_kernel.isotonic_l1_costs` runs
    the same partitioning one problem at a time (the costs agree to round-off, about 1e-15
    relative).

    Parameters
    ----------
    X : ndarray of shape (R, n) or (n,)
        The values, one problem per row.
    w : ndarray of shape (n,) or (R, n)
        Positive weights (shared by the rows, or one row each).

    Returns
    -------
    ndarray of shape (R,) or float
        The minimum cost of each problem.

    Examples
    --------
    >>> import numpy as np
    >>> float(isotonic_l1_costs(np.array([3.0, 1.0, 2.0]), np.ones(3)))
    2.0
    """
    one = np.ndim(X) == 1
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    R, n = X.shape
    W = np.broadcast_to(np.asarray(w, dtype=np.float64), X.shape)
    kernel = compiled("replicate") if X.size >= _KERNEL_MIN_ENTRIES else None
    if kernel is not None:
        cost = kernel.isotonic_l1_costs(X, W)
        return float(cost[0]) if one else cost
    cost = np.zeros(R)
    if n == 0:
        return float(cost[0]) if one else cost
    order = np.argsort(X, axis=1, kind="stable")
    Xs = np.take_along_axis(X, order, axis=1)
    new = np.ones((R, n), dtype=bool)
    new[:, 1:] = Xs[:, 1:] != Xs[:, :-1]
    gidx = (np.cumsum(new.ravel()) - 1).reshape(R, n)
    vals = Xs[new]
    rank = np.empty(R * n, dtype=np.intp)
    rank[(order + (np.arange(R) * n)[:, None]).ravel()] = gidx.ravel()
    seg_lo, seg_hi = gidx[:, 0].astype(np.intp), gidx[:, -1].astype(np.intp)
    keep_rows = seg_lo < seg_hi  # a row with one distinct value costs 0
    if not keep_rows.any():
        return float(cost[0]) if one else cost
    rows = np.flatnonzero(keep_rows)
    sel = (rows[:, None] * n + np.arange(n)[None, :]).ravel()
    er, ew, ex = rank[sel], W.ravel()[sel], X.ravel()[sel]
    erep = np.repeat(rows, n)
    seg_start = (np.arange(rows.size) * n).astype(np.intp)
    seg_lo, seg_hi = seg_lo[rows], seg_hi[rows]
    while er.size:
        n_act = er.size
        seg_len = np.diff(np.append(seg_start, n_act))
        seg_id = np.repeat(np.arange(seg_start.size), seg_len)
        mid = (seg_lo + seg_hi) // 2
        upper = er > mid[seg_id]
        # cost of putting the first k elements of a segment at the lower level, up to a constant:
        # the prefix sums of w * (+1 if the element prefers the upper level else -1)
        z = np.where(upper, ew, -ew)
        C = np.cumsum(z)
        rel = C - (C[seg_start] - z[seg_start])[seg_id]
        seg_min = np.minimum.reduceat(rel, seg_start)
        # first position attaining the segment minimum (k >= 1), or k = 0 (empty prefix) when no
        # prefix has a negative sum
        pos = np.arange(n_act)
        at_min = np.where(rel == seg_min[seg_id], pos, n_act)
        first = np.minimum.reduceat(at_min, seg_start)
        k = np.where(seg_min < 0, first - seg_start + 1, 0)
        # children, interleaved in index order: (prefix, lower values), (rest, upper values)
        child_start = np.column_stack([seg_start, seg_start + k]).ravel()
        child_len = np.column_stack([k, seg_len - k]).ravel()
        child_lo = np.column_stack([seg_lo, mid + 1]).ravel()
        child_hi = np.column_stack([mid, seg_hi]).ravel()
        done = child_lo == child_hi
        child_of = np.repeat(np.arange(child_start.size), child_len)
        elem_done = done[child_of]
        if elem_done.any():
            v = vals[child_lo[child_of[elem_done]]]
            cost += np.bincount(
                erep[elem_done], weights=ew[elem_done] * np.abs(ex[elem_done] - v), minlength=R
            )
        keep_child = (~done) & (child_len > 0)
        keep_elem = ~elem_done
        er, ew, ex, erep = er[keep_elem], ew[keep_elem], ex[keep_elem], erep[keep_elem]
        kept_len = child_len[keep_child]
        seg_start = np.concatenate([[0], np.cumsum(kept_len)[:-1]]).astype(np.intp)
        seg_lo, seg_hi = child_lo[keep_child], child_hi[keep_child]
    return float(cost[0]) if one else cost


def smce_from_sorted(r, p):
    """smCE of merged residuals ``r`` (divided by the total weight) at sorted distinct points ``p``.

    Parameters
    ----------
    r : ndarray of shape (n,) or (R, n)
        The residual of each point (one problem per row: the points are shared).
    p : ndarray of shape (n,)
        Increasing points in [0, 1].

    Returns
    -------
    float or ndarray of shape (R,)
        ``|R_n| + min over monotone nu of sum_i d_i |R_i - nu_i|`` (see :mod:`skcal.lipschitz`).

    Examples
    --------
    >>> import numpy as np
    >>> float(smce_from_sorted(np.array([-0.125, 0.375]), np.array([0.5, 0.9])))
    0.3
    """
    one = np.ndim(r) == 1
    r2 = np.atleast_2d(np.asarray(r, dtype=np.float64))
    Rc = np.cumsum(r2, axis=1)
    Rn = Rc[:, -1] if r2.shape[1] else np.zeros(r2.shape[0])
    if r2.shape[1] <= 1:
        value = np.abs(Rn)
        return float(value[0]) if one else value
    d = np.diff(p)
    lo, hi = np.minimum(0.0, Rn), np.maximum(0.0, Rn)
    inner = Rc[:, :-1]
    x = np.clip(inner, lo[:, None], hi[:, None])
    value = np.abs(Rn) + np.abs(inner - x) @ d
    act = hi > lo
    if act.any():
        xa = np.where((Rn > 0)[:, None], x, -x)[act]
        value[act] += isotonic_l1_costs(xa, d)
    return float(value[0]) if one else value


class SmoothCEStatistics(CutoffStatistics):
    """Exact, mergeable statistics of the Lipschitz smooth calibration error smCE.

    The state of :class:`~skcal.stats.CutoffStatistics` (sorted distinct predictions with their
    sums of ``w (y - p)`` and of ``w``); :meth:`compute` solves the linear program of
    :func:`skcal.lipschitz.smooth_calibration_error` on it.

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``values``, ``resid`` and ``weight``, as :class:`~skcal.stats.CutoffStatistics`.

    Examples
    --------
    >>> from skcal.stats import SmoothCEStatistics
    >>> from skcal.lipschitz import smooth_calibration_error
    >>> y, p = [0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]
    >>> s = SmoothCEStatistics().update(y[:2], p[:2]) + SmoothCEStatistics().update(y[2:], p[2:])
    >>> bool(abs(s.compute() - smooth_calibration_error(y, p)) < 1e-12)
    True
    """

    _param_names = ("pos_label",)
    _parameter_constraints: dict = {"pos_label": POS_LABEL}

    def __init__(self, *, pos_label=None):
        self.pos_label = pos_label
        self.measure = "cutoff"  # the sorted runs of the parent class; compute is smCE's

    @classmethod
    @validate_params({**VALIDATED_ROWS, "pos_label": POS_LABEL}, prefer_skip_nested_validation=True)
    @fill(**VALIDATED_ROWS_DOCS)
    def compute_validated(cls, y, p, sample_weight=None, *, pos_label=None):
        """Return smCE of validated rows: ``from_validated(...).compute()``.

        The sorted runs of the rows, then the linear program (not the cutoff error's shorter
        path of :meth:`CutoffStatistics.compute_validated`, whose value is another measure).
        :func:`skcal.lipschitz.smooth_calibration_error` computes through it.

        Parameters
        ----------
        {validated_rows}
        {validated_pos_label}

        Returns
        -------
        float
            The smooth calibration error.

        Examples
        --------
        >>> import numpy as np
        >>> y, p = np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.1, 0.2, 0.3, 0.4])
        >>> round(SmoothCEStatistics.compute_validated(y, p), 6)
        0.26
        """
        return cls.from_validated(y, p, sample_weight, pos_label=pos_label).compute()

    def _compute(self):
        s = self.stats_
        W = float(s["weight"].sum())
        if W <= 0:
            raise ValueError("The statistics hold no rows with positive weight; smCE is undefined.")
        if s["values"].size == 0:
            return 0.0
        return float(smce_from_sorted(s["resid"] / W, s["values"]))

    def _replicate_compute(self, stats):
        W = stats["weight"]
        out = np.full(W.shape[0], np.nan)
        ok = W > 0
        if stats["values"].size == 0:
            out[ok] = 0.0
        elif ok.any():  # resid is (values, replicates)
            out[ok] = smce_from_sorted(stats["resid"][:, ok].T / W[ok, None], stats["values"])
        return out


_ROWS = [StrictInterval(Integral, 0, None, closed="left")]


@validate_params({"n": _ROWS}, prefer_skip_nested_validation=True)
def smce_grid_cells(n):
    """Cells of the grid on which smCE's bootstrap replicates are computed for ``n`` rows.

    The smallest power of two ``>= 4 sqrt(n)`` (SCDL's ``"auto"`` rule), between 1024 and
    ``2**16``. A replicate's grid value is within ``E[|y - p| |p - x_c|]`` of its exact smCE
    (:class:`SmoothCEGridStatistics`, whose ``bound()`` states it per replicate), which is at
    most ``E|y - p| / (2 G)``.

    Parameters
    ----------
    n : int
        Rows.

    Returns
    -------
    int
        ``G``.

    Examples
    --------
    >>> smce_grid_cells(300), smce_grid_cells(10**5), smce_grid_cells(10**6)
    (1024, 2048, 4096)
    """
    G = 1024
    while G < 4.0 * np.sqrt(max(int(n), 0)) and G < 1 << 16:
        G *= 2
    return G


class SmoothCEGridStatistics(BinaryStatistics):
    """Fixed-size statistics of smCE on a grid of cell midpoints, with a stated bound.

    Parameters
    ----------
    n_cells : int, default=4096
        Number of equal cells of [0, 1]; each cell's residual sits at its midpoint.
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``resid`` (per cell ``sum w (y - p)``), ``weight`` (``W``) and ``bound``
        (``sum w |y - p| |p - x_c|``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import SmoothCEGridStatistics
    >>> from skcal.lipschitz import smooth_calibration_error
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> s = SmoothCEGridStatistics(n_cells=1024).update(y, p)
    >>> bool(abs(s.compute() - smooth_calibration_error(y, p)) <= s.bound())
    True
    """

    _param_names = ("n_cells", "pos_label")
    _parameter_constraints: dict = {"n_cells": N_BINS, "pos_label": POS_LABEL}

    def __init__(self, *, n_cells=4096, pos_label=None):
        self.n_cells = int(n_cells)
        self.pos_label = pos_label

    def midpoints(self):
        """Return the cells' midpoints ``(j + 1/2) / n_cells``.

        Returns
        -------
        ndarray of shape (n_cells,)
            Where each cell's residual sits.
        """
        return (np.arange(self.n_cells) + 0.5) / self.n_cells

    def _empty(self):
        return {"resid": np.zeros(self.n_cells), "weight": np.zeros(()), "bound": np.zeros(())}

    def _cells(self, p):
        ids = np.minimum((p * self.n_cells).astype(np.intp), self.n_cells - 1)
        return ids, np.abs(p - (ids + 0.5) / self.n_cells)

    def _sums(self, y, p, w):
        ids, dist = self._cells(p)
        r = y - p
        if w is not None:
            r = r * w
        return {
            "resid": np.bincount(ids, weights=r, minlength=self.n_cells),
            "weight": np.array(float(p.shape[0]) if w is None else float(w.sum())),
            "bound": np.array(float(np.abs(r) @ dist)),
        }

    def _compute(self):
        s = self.stats_
        W = float(s["weight"])
        if W <= 0:
            raise ValueError("The statistics hold no rows with positive weight; smCE is undefined.")
        keep = s["resid"] != 0
        if not keep.any():
            return 0.0
        return float(smce_from_sorted(s["resid"][keep] / W, self.midpoints()[keep]))

    def bound(self):
        """Return the bound ``|exact smCE - compute()|`` cannot exceed.

        Returns
        -------
        float
            ``sum w |y - p| |p - x_c| / W`` (at most ``E|y - p| / (2 n_cells)``).
        """
        return float(self.stats_["bound"] / self.stats_["weight"])

    # -- bootstrap replicates ------------------------------------------------------------
    def _replicate_plan(self, y, p, w, index=None):
        return _SmoothCEGridPlan(self, y, p, w)

    def _replicate_compute(self, stats):
        W = stats["weight"]
        out = np.full(W.shape[0], np.nan)
        ok = W > 0
        keep = np.any(stats["resid"] != 0, axis=0)  # a point of zero residual leaves the LP unchanged
        if not keep.any():
            out[ok] = 0.0
        elif ok.any():
            out[ok] = smce_from_sorted(stats["resid"][ok][:, keep] / W[ok, None], self.midpoints()[keep])
        return out

    def _replicate_bounds(self, stats):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(stats["weight"] > 0, stats["bound"] / stats["weight"], np.nan)

    def _grid_cells(self):
        return int(self.n_cells)

    def _grid_dense(self, y, p):
        """Per row ``|y - p| |p - x_c|``, its share of the bound (a dense column of the grid)."""
        ids = np.minimum((p * self.n_cells).astype(np.intp), self.n_cells - 1)
        return np.abs(y - p) * np.abs(p - (ids + 0.5) / self.n_cells)

    def _grid_statistics(self, units, column):
        """The cells' residual sums, the copies and the bound's column."""
        A = units.grid._cells(int(self.n_cells))
        resid = np.ascontiguousarray((A @ (units.Y0 - units.P)).T)
        return {"resid": resid, "weight": units.copies, "bound": column.copy()}


class _SmoothCEGridPlan(ReplicatePlan):
    def __init__(self, stats, y, p, w):
        self.stats, self.w = stats, w
        self.n_rows = p.shape[0]
        ids, dist = stats._cells(p)
        r = y - p if w is None else (y - p) * w
        self.rows = ids.astype(np.int64)[:, None]
        self.r = r[:, None]
        self.dist = np.abs(r) * dist

    def empty(self, n_replicates, scratch=None):
        return {
            "resid": self.zeros(scratch, "resid", (self.stats.n_cells, n_replicates)),
            "weight": np.zeros(n_replicates),
            "bound": np.zeros(n_replicates),
        }

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["resid"], self.rows[sl], self.r[sl], W)
        out["weight"] += copies if self.w is None else W @ self.w[sl]
        out["bound"] += W @ self.dist[sl]
        return out

    def finish(self, out):
        out["resid"] = np.ascontiguousarray(out["resid"].T)
        return out
