"""Bootstrap replicates past memory: one grid of cells that every report measure is folded from.

Above ``exact_rows`` an out-of-core report's replicate statistics are those of
:mod:`skcal.report._outofcore`'s templates (SCDL's finest grid, smECE's ``2^18``-cell deposit,
smCE's and the cutoff error's fixed grids, the binned error's bins, the means). Updated one
measure at a time (one :class:`~skcal.stats.PoissonBootstrap` each) they cost about 20 sparse
entries per row, replicate and model, and their states (12 MB per replicate and model, most of it
smECE's deposit) allow a few replicates per pass over the data. :class:`ReplicateGrid` computes
the *same* replicate statistics, to round-off, from one sparse product per row and replicate of
three entries:

* every row falls in one **unit**, a run of cells of smECE's ``2^18``-cell grid inside one cell
  of the coarsest grid ``G`` that all the dyadic grids nest in (``G`` = the largest of SCDL's
  finest grid, the smCE grid and the cutoff grid; all are powers of two and so are nested);
  a unit is one fine cell where one of the ``E``-point grids of smECE's bandwidth search has a
  node inside the cell (or at its left edge): only there does smECE's deposit depend on the
  fine cell's own centre of mass; everywhere else it is linear in the sums of the rows, so a run
  of cells deposits as the sum of its cells; a unit crossing an edge of the binned error's bins
  is split at it;
* per unit and label ``y`` the sums of ``1``, ``d`` and (for both labels together) ``d^2``, with
  ``d = p - x_u`` the distance to the unit's left edge, hold every statistic of every measure:
  SCDL's hat masses, smECE's ``(N, F, R, RF)``, the grids' residuals and weights, the bins'
  sums are linear maps of them, applied once per block of replicates (:meth:`ReplicateGrid.values`);
* the means (accuracy, Brier, log loss), the replicate's row count and smCE's bound are dense
  columns, one BLAS product per tile.

The state of a block of ``R`` replicates is ``5 U`` floats per replicate and model (``U`` about
86,000 units for ``G = 2^16``: 3.4 MB instead of 12 MB), held in place while a chain of chunks
is folded in. Each replicate's value is then computed from the statistics by the template's own
replicate formula (through :func:`skcal.stats.from_state` of a
:class:`~skcal.stats.PoissonBootstrap` state), so the values equal the per-measure bootstrap's
to round-off (``tests/test_report_outofcore_grid.py`` checks every measure against it).

smECE's search visits the bandwidths 1 and ``k / 1024`` (its ten bisection steps on [0, 1]), whose
``E``-point grids (:func:`smece_grid_points`) fix the units; a change of that search changes
them (the test against the per-measure bootstrap would fail).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from skcal._threads import one_blas_thread
from skcal.stats import MeanStatistics, PoissonBootstrap, poisson_weights
from skcal.stats._replicate import add_sparse_sums
from skcal.stats._smooth_ece import FINE_CELLS, smece_grid_points, special_fine_cells

__all__ = ["ReplicateGrid", "GridReplicates", "smece_grid_points", "TILE_ROWS"]

#: Rows per tile of replicate weights.
TILE_ROWS = 1 << 15
#: Replicates whose measures' statistics are formed at once from the sums.
VALUE_STEP = 4
#: Floats of the sparse state per unit and replicate (``1`` and ``d`` per label, ``d^2``).
CHANNELS_PER_UNIT = 5


def _binary_log_loss_rows(y, p):
    """``-(y log q + (1 - y) log(1 - q))``, ``q = clip(p, eps, 1 - eps)``, for labels ``y`` in {0, 1}.

    Equal to the report's per-row log loss (``BINARY_POINTWISE["log_loss"]``) for 0/1 labels,
    with one logarithm a row instead of two.
    """
    eps = np.finfo(np.float64).eps
    q = np.clip(p, eps, 1 - eps)
    out = np.empty_like(q)
    pos = y > 0.5
    out[pos] = -np.log(q[pos])
    neg = ~pos
    out[neg] = -np.log1p(-q[neg])
    return out


def _indicator(targets, n_targets):
    """Sparse ``(n_targets, U)`` matrix summing units into their targets."""
    U = targets.shape[0]
    return sparse.csr_matrix((np.ones(U), (targets, np.arange(U))), shape=(n_targets, U))


class ReplicateGrid:
    """The units of the report's replicate statistics and the maps from their sums to each measure's.

    Parameters
    ----------
    templates : dict
        Metric base name -> the replicate template of :class:`~skcal.report._outofcore.OutOfCorePlan`
        (``CutoffGridStatistics``, ``SmoothCEGridStatistics``, ``ScdlStatistics``,
        ``SmoothECEStatistics``, ``BinnedStatistics`` and ``MeanStatistics``).
    pointwise : dict
        Metric base name -> ``f(y, p)`` per-row losses (the means).
    """

    def __init__(self, templates, pointwise):
        self.templates = dict(templates)
        self.pointwise = dict(pointwise)
        self.names = list(templates)
        sizes = [1024]
        for name, t in self.templates.items():
            if name == "scdl":
                sizes.append(int(t.max_bins))
            elif name in ("cutoff", "smooth_calibration_error"):
                sizes.append(int(t.n_cells))
        G = max(sizes)
        if G > FINE_CELLS or G & (G - 1) or any(s & (s - 1) for s in sizes):
            raise ValueError(f"the replicate grids {sizes} are not powers of two up to {FINE_CELLS}.")
        self.G = G
        self.shift = int(np.log2(FINE_CELLS // G))
        f = np.arange(FINE_CELLS)
        start = (f & ((1 << self.shift) - 1)) == 0
        if "smooth_ece" in self.templates:
            special = special_fine_cells()
            start |= special
            start[1:] |= special[:-1]
        self.unit_of_fine = (np.cumsum(start) - 1).astype(np.intp)
        first = np.flatnonzero(start)
        fine = first
        self.extra = None
        binned = self.templates.get("binned_ece")
        if binned is not None:
            left = first / FINE_CELLS
            right = np.nextafter(np.append(first[1:], FINE_CELLS) / FINE_CELLS, 0.0)
            b_lo, b_hi = binned.bin_ids(left), binned.bin_ids(right)
            if np.any(b_hi - b_lo > 1):
                raise ValueError("a unit of the replicate grid crosses two edges of the binned error's bins.")
            split = np.flatnonzero(b_hi != b_lo)
            self.extra = np.full(first.size, -1, dtype=np.intp)
            self.extra[split] = first.size + np.arange(split.size)
            self.unit_bin = b_lo
            fine = np.concatenate([first, first[split]])
            self.bins = np.concatenate([b_lo, b_hi[split]])
        self.fine = fine.astype(np.int64)
        self.x = self.fine / FINE_CELLS  # every unit's reference point: its first fine cell's left edge
        self.U = int(fine.size)
        self.coarse = self.fine >> self.shift
        self.size = CHANNELS_PER_UNIT * self.U
        # the dense columns: the row count, then per metric of per-row values its column
        self.dense = ["copies"] + [n for n in self.pointwise]
        if "smooth_calibration_error" in self.templates:
            self.dense.append("smce_bound")
        self._maps = {}

    # -- rows -------------------------------------------------------------------------------
    def rows(self, y, p):
        """The sparse entries of validated rows: ``(rows, vals)``, three per row.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels as 0/1 floats.
        p : ndarray of shape (n,)
            Probabilities.

        Returns
        -------
        rows : ndarray of int64 of shape (n, 3)
            The rows of the state each row adds to.
        vals : ndarray of shape (n, 3)
            What it adds (``1``, ``d``, ``d^2``).
        """
        f = (p * FINE_CELLS).astype(np.intp)
        np.minimum(f, FINE_CELLS - 1, out=f)
        u = self.unit_of_fine.take(f)
        if self.extra is not None:
            sel = np.flatnonzero(self.extra.take(u) >= 0)  # rows of the units a bin edge splits
            if sel.size:
                us = u[sel]
                mis = self.templates["binned_ece"].bin_ids(p[sel]) != self.unit_bin[us]
                u[sel[mis]] = self.extra[us[mis]]
        n = p.shape[0]
        vals = np.empty((n, 3))
        vals[:, 0] = 1.0
        d = vals[:, 1]
        np.subtract(p, self.x.take(u), out=d)
        np.multiply(d, d, out=vals[:, 2])
        # a unit's five sums are adjacent (one region of the state per row, not three)
        base = u.astype(np.int64)
        base *= CHANNELS_PER_UNIT
        rows = np.empty((n, 3), dtype=np.int64)
        np.add(base, 2 * y.astype(np.int64), out=rows[:, 0])  # 1, for y = 0 or y = 1
        np.add(rows[:, 0], 1, out=rows[:, 1])  # d, for y = 0 or y = 1
        np.add(base, 4, out=rows[:, 2])  # d^2 of both labels together
        return rows, vals

    def dense_rows(self, y, p):
        """The dense columns of validated rows, ``(n, len(self.dense))``."""
        dense = np.empty((p.shape[0], len(self.dense)))
        dense[:, 0] = 1.0
        for k, name in enumerate(self.dense[1:], start=1):
            if name == "smce_bound":
                t = self.templates["smooth_calibration_error"]
                ids = np.minimum((p * t.n_cells).astype(np.intp), t.n_cells - 1)
                dense[:, k] = np.abs(y - p) * np.abs(p - (ids + 0.5) / t.n_cells)
            elif name == "log_loss":  # the report's per-row log loss, one logarithm a row (y is 0/1)
                dense[:, k] = _binary_log_loss_rows(y, p)
            else:
                dense[:, k] = self.pointwise[name](y, p)
        return dense

    # -- from the units' sums to every measure's replicate statistics ---------------------------
    def _map(self, key):
        if key not in self._maps:
            if key == "fine":
                cells, inv = np.unique(self.fine, return_inverse=True)
                self._maps[key] = (cells, _indicator(inv.ravel(), cells.size))
            elif key == "bins":
                t = self.templates["binned_ece"]
                self._maps[key] = _indicator(self.bins, t.n_bins)
            elif key == "scdl":
                M = int(self.templates["scdl"].max_bins)
                lo = (self.coarse >> int(np.log2(self.G // M))).astype(np.int64)
                self._maps[key] = (lo, _indicator(lo, M + 1), _indicator(lo + 1, M + 1))
            else:  # a grid of n cells
                n = int(self.templates[key].n_cells)
                self._maps[key] = _indicator(self.coarse >> int(np.log2(self.G // n)), n)
        return self._maps[key]

    def statistics(self, acc, dense):
        """Per metric, the replicate statistics (a dict of arrays) from one model's sums.

        Parameters
        ----------
        acc : ndarray of shape (5 U, R)
            The units' sums, five rows per unit: ``1`` and ``d`` of its rows with ``y = 0``, the
            same with ``y = 1``, then ``d^2`` of all its rows.
        dense : ndarray of shape (R, n_dense)
            The dense columns' sums.

        Returns
        -------
        dict
            Metric base name -> the statistics of its :class:`~skcal.stats.PoissonBootstrap`.
        """
        per = acc.reshape(self.U, CHANNELS_PER_UNIT, acc.shape[1])
        S0_0, Sd_0, S0_1, Sd_1, Sdd = (np.ascontiguousarray(per[:, k]) for k in range(CHANNELS_PER_UNIT))
        x = self.x[:, None]
        S0 = S0_0 + S0_1  # copies of the unit's rows
        Y0 = S0_1  # ... of its rows with y = 1
        Sd = Sd_0 + Sd_1
        P = x * S0 + Sd  # sum of p
        YP = x * Y0 + Sd_1  # sum of y p
        copies = dense[:, 0].copy()
        n_rows = np.rint(copies).astype(np.int64)
        col = {name: dense[:, k] for k, name in enumerate(self.dense)}
        out = {}
        for name, t in self.templates.items():
            if isinstance(t, MeanStatistics):
                out[name] = {"sum_weight": copies, "sum_value": col[name].copy(), "n_samples": n_rows}
            elif name == "smooth_ece":
                cells, A = self._map("fine")
                PP = x * x * S0 + 2.0 * x * Sd + Sdd  # sum of p^2
                N = A @ S0
                keep = N.any(axis=1)  # the occupied cells
                stats = {"cells": cells[keep].astype(np.int64)}
                for k, v in (("N", N), ("F", A @ P), ("R", A @ (P - Y0)), ("RF", A @ (PP - YP))):
                    stats[k] = np.ascontiguousarray(v[keep])
                stats["sum_w"], stats["n_rows"] = copies, n_rows
                out[name] = stats
            elif name == "scdl":
                lo, L, H = self._map("scdl")
                M = int(t.max_bins)
                base = (x[:, 0] * M - lo)[:, None]  # the unit's left edge in node steps from lo
                fw = base * S0 + M * Sd  # sum of the right node's share
                fa = base * Y0 + M * Sd_1
                W = L @ (S0 - fw) + H @ fw
                A_ = L @ (Y0 - fa) + H @ fa
                out[name] = {
                    "W": np.ascontiguousarray(W.T),
                    "A": np.ascontiguousarray(A_.T),
                    "sum_w": copies,
                    "sum_w2": copies,
                    "n_rows": n_rows,
                }
            elif name == "cutoff":
                A = self._map("cutoff")
                out[name] = {
                    "resid": np.ascontiguousarray((A @ (Y0 - P)).T),
                    "abs_resid": np.ascontiguousarray((A @ (P + Y0 - 2.0 * YP)).T),
                    "weight": np.ascontiguousarray((A @ S0).T),
                }
            elif name == "smooth_calibration_error":
                A = self._map("smooth_calibration_error")
                out[name] = {
                    "resid": np.ascontiguousarray((A @ (Y0 - P)).T),
                    "weight": copies,
                    "bound": col["smce_bound"].copy(),
                }
            elif name == "binned_ece":
                A = self._map("bins")
                weight = np.ascontiguousarray((A @ S0).T)
                out[name] = {
                    "count": np.rint(weight).astype(np.int64),
                    "weight": weight,
                    "sum_wp": np.ascontiguousarray((A @ P).T),
                    "sum_wy": np.ascontiguousarray((A @ Y0).T),
                    "sum_w2": weight.copy(),
                }
            else:  # pragma: no cover - the plan builds the grid from these names only
                raise ValueError(f"no replicate grid form for {name!r}.")
        return out


def replicate_values(template, stats, n_replicates):
    """The template's replicate values of stacked replicate statistics (its own formula).

    Parameters
    ----------
    template : BaseStatistics
        The statistics template.
    stats : dict of ndarray
        Its :class:`~skcal.stats.PoissonBootstrap` statistics of ``n_replicates`` replicates.
    n_replicates : int
        Replicates.

    Returns
    -------
    ndarray of shape (n_replicates,)
        One value per replicate.
    """
    return PoissonBootstrap.from_sums(stats, template=template, n_replicates=n_replicates).compute()


class GridReplicates:
    """The sums of a block of replicates on a :class:`ReplicateGrid`, per model (mergeable in place).

    Parameters
    ----------
    grid : ReplicateGrid
        The units.
    n_models : int
        Models.
    first_replicate, n_replicates : int
        The block of replicates.
    seed : int
        The bootstrap's key.
    """

    def __init__(self, grid, n_models, first_replicate, n_replicates, seed):
        self.first_replicate, self.n_replicates = int(first_replicate), int(n_replicates)
        self.seed = int(seed)
        self.acc = [np.zeros((grid.size, self.n_replicates)) for _ in range(n_models)]
        self.dense = [np.zeros((self.n_replicates, len(grid.dense))) for _ in range(n_models)]

    def add(self, grid, first_row, y, preds):
        """Add the rows ``first_row ..`` (``y`` and one ``p`` per model, validated); return self.

        The chunk's weights are drawn once, ``(rows, replicates)`` as bytes; each model visits
        its rows in the order of their cells of the coarsest grid (a radix sort of 16-bit ids),
        so that its tiles add into neighbouring regions of the state (a random row's region is
        a cache and TLB miss each; sorted, they stream). The dense columns are one product per
        tile with one BLAS thread (a pool fighting the other processes is many times slower).
        """
        n = y.shape[0]
        if n == 0:
            return self
        R = self.n_replicates
        reps = np.arange(self.first_replicate, self.first_replicate + R)
        W8T = np.empty((n, R), dtype=np.uint8)
        WT = np.empty((min(n, TILE_ROWS), R))
        with one_blas_thread():
            for a in range(0, n, TILE_ROWS):
                b = min(n, a + TILE_ROWS)
                W8T[a:b] = poisson_weights(self.seed, reps, np.arange(first_row + a, first_row + b)).T
                Wt = WT[: b - a]
                np.copyto(Wt, W8T[a:b])
                for i, p in enumerate(preds):
                    self.dense[i] += Wt.T @ grid.dense_rows(y[a:b], p[a:b])
            rows_of = W8T.view(np.dtype((np.void, R))).ravel()  # a row's R weights as one item
            for i, p in enumerate(preds):
                coarse = (p * grid.G).astype(np.intp)
                np.minimum(coarse, grid.G - 1, out=coarse)
                small = coarse.astype(np.uint16 if grid.G <= 1 << 16 else np.uint32)
                order = np.argsort(small, kind="stable")  # a radix sort
                ys, ps = y.take(order), p.take(order)
                for a in range(0, n, TILE_ROWS):
                    b = min(n, a + TILE_ROWS)
                    Wt = WT[: b - a]
                    np.copyto(Wt, rows_of.take(order[a:b]).view(np.uint8).reshape(b - a, R))
                    rows, vals = grid.rows(ys[a:b], ps[a:b])
                    add_sparse_sums(self.acc[i], rows, vals, Wt.T)
        return self

    def merge(self, other):
        """Add another chunk's sums of the same block in place; return self."""
        if (other.first_replicate, other.n_replicates, other.seed) != (
            self.first_replicate,
            self.n_replicates,
            self.seed,
        ):
            raise ValueError("Cannot merge the sums of different blocks of replicates.")
        for a, b in zip(self.acc, other.acc, strict=True):
            a += b
        for a, b in zip(self.dense, other.dense, strict=True):
            a += b
        return self

    def values(self, grid, names, step=VALUE_STEP):
        """``(n_replicates, n_models, len(names))`` replicate values of the metrics ``names``.

        Computed ``step`` replicates at a time (the measures' statistics of a few replicates at
        once beside the sums, not of the whole block).
        """
        out = np.empty((self.n_replicates, len(self.acc), len(names)))
        for i, (acc, dense) in enumerate(zip(self.acc, self.dense, strict=True)):
            for r0 in range(0, self.n_replicates, step):
                sl = slice(r0, min(self.n_replicates, r0 + step))
                stats = grid.statistics(np.ascontiguousarray(acc[:, sl]), dense[sl])
                count = sl.stop - sl.start
                for j, name in enumerate(names):
                    out[sl, i, j] = replicate_values(grid.templates[name], stats.pop(name), count)
        return out
