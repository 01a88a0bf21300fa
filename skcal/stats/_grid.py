"""Bootstrap replicates of several binary statistics summed on one shared grid of units.

Past memory, an out-of-core report's replicates of all its binary measures could be one
:class:`~skcal.stats.PoissonBootstrap` per measure: about 20 sparse entries per row, replicate and
model, and states (smECE's fine deposit most of all) that allow few replicates per pass over the
data. :class:`ReplicateGrid` computes the *same* replicate statistics, to round-off, from one
sparse product per row and replicate of three entries:

* every row falls in one **unit**, a run of cells of smECE's ``2^18``-cell fine grid inside one
  cell of the coarsest dyadic grid ``G`` that every template's grid nests in (``G`` the largest
  of the templates' ``_grid_cells()``); a fine cell that a template needs alone
  (``_grid_fine_starts()``: smECE's cells holding a node of one of its ``E``-point grids) starts
  a unit of its own, and a unit crossing an edge of a template's bins (``_grid_bin_ids``) is
  split at it;
* per unit and label ``y`` the sums of ``1``, ``d`` and (for both labels together) ``d^2``, with
  ``d = p - x_u`` the distance to the unit's left edge, hold every template's statistics, which
  each template forms from them itself (``_grid_statistics(units, column)``, its own layout),
  a few replicates at a time;
* per-row values the sums cannot give (the means' losses, smCE's bound) are dense columns, one
  BLAS product per tile: a template's ``_grid_dense(y, p)`` or the ``rows`` a caller gives.

The state of a block of ``R`` replicates is ``5 U`` floats per replicate and model, held in place
while a chain of chunks is folded in; each replicate's value is the template's own formula of its
statistics (:meth:`PoissonBootstrap.from_sums`). ``tests/test_report_outofcore_grid.py`` checks
every form against the per-measure bootstrap.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from skcal._compat import HasMethods, validate_params
from skcal._constraints import Integral, StrictInterval
from skcal._threads import one_blas_thread
from skcal.stats._bootstrap import PoissonBootstrap, poisson_weights
from skcal.stats._replicate import add_sparse_sums
from skcal.stats._smooth_ece import FINE_CELLS

__all__ = ["CHANNELS_PER_UNIT", "GridReplicates", "ReplicateGrid", "UnitSums", "TILE_ROWS"]

#: Rows per tile of replicate weights.
TILE_ROWS = 1 << 15
#: Replicates whose templates' statistics are formed at once from the sums.
VALUE_STEP = 4
#: Floats of the sparse state per unit and replicate (``1`` and ``d`` per label, ``d^2``).
CHANNELS_PER_UNIT = 5


_POSITIVE = [StrictInterval(Integral, 1, None, closed="left")]


def _indicator(targets, n_targets):
    """Sparse ``(n_targets, U)`` matrix summing units into their targets."""
    U = targets.shape[0]
    return sparse.csr_matrix((np.ones(U), (targets, np.arange(U))), shape=(n_targets, U))


class ReplicateGrid:
    """The shared grid of units on which several binary templates' bootstrap replicates are summed.

    The out-of-core report's replicates past memory (see the module documentation): every
    template declares its grid form (the binned measures, the cutoff and KS errors on their
    grids, smCE and smECE on their grids, SCDL, the means), and the grid's units nest in all of
    them. :class:`GridReplicates` sums a block of replicates on it; each replicate's value is
    the template's own formula, equal to :class:`PoissonBootstrap`'s to round-off.

    Parameters
    ----------
    templates : dict
        Name -> a binary statistics template with a grid form.
    rows : dict
        Name -> ``rows(y, p)``, the per-row values of a mean (a :class:`MeanStatistics` template).

    Attributes
    ----------
    G : int
        The coarsest dyadic grid every template's grid nests in.
    U : int
        The number of units.
    size : int
        Floats of the sparse state per replicate and model (five per unit).
    dense : list of str
        The dense columns: the row count, then one per template with per-row values.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import BinnedStatistics, GridReplicates, PoissonBootstrap, ReplicateGrid
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < p).astype(float)
    >>> grid = ReplicateGrid({"ece": BinnedStatistics(n_bins=10)}, {})
    >>> block = GridReplicates(grid, n_models=1, first_replicate=0, n_replicates=5, seed=1)
    >>> values = block.add(grid, 0, y, [p]).values(grid, ["ece"])
    >>> values.shape
    (5, 1, 1)
    >>> boot = PoissonBootstrap(BinnedStatistics(n_bins=10), n_replicates=5, seed=1).update(y, p)
    >>> bool(np.allclose(values[:, 0, 0], boot.compute(), rtol=1e-9))
    True
    """

    @validate_params({"templates": [dict], "rows": [dict]}, prefer_skip_nested_validation=True)
    def __init__(self, templates, rows):
        self.templates = dict(templates)
        self.rows_of = dict(rows)
        missing = [n for n, t in self.templates.items() if not hasattr(t, "_grid_statistics")]
        if missing:
            raise ValueError(f"no grid form for {missing}: their statistics have no _grid_statistics.")
        sizes = [1024] + [t._grid_cells() for t in self.templates.values() if t._grid_cells() is not None]
        G = max(sizes)
        if G > FINE_CELLS or any(s & (s - 1) for s in sizes):
            raise ValueError(f"the replicate grids {sizes} are not powers of two up to {FINE_CELLS}.")
        self.G = G
        self.shift = int(np.log2(FINE_CELLS // G))
        start = (np.arange(FINE_CELLS) & ((1 << self.shift) - 1)) == 0
        for t in self.templates.values():
            alone = t._grid_fine_starts()
            if alone is not None:
                start |= alone
        self.unit_of_fine = (np.cumsum(start) - 1).astype(np.intp)
        first = np.flatnonzero(start)
        fine = first
        self.extra = None
        binned = [t for t in self.templates.values() if hasattr(t, "_grid_bin_ids")]
        if len(binned) > 1:
            raise ValueError("the grid splits its units at the edges of one template's bins at most.")
        self.binned = binned[0] if binned else None
        if self.binned is not None:
            left = first / FINE_CELLS
            right = np.nextafter(np.append(first[1:], FINE_CELLS) / FINE_CELLS, 0.0)
            b_lo, b_hi = self.binned._grid_bin_ids(left), self.binned._grid_bin_ids(right)
            if np.any(b_hi - b_lo > 1):
                raise ValueError("a unit of the replicate grid crosses two edges of the bins.")
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
        # the dense columns: the row count, then one per mean and per template with per-row values
        self.dense = ["copies"] + list(self.rows_of)
        own = [n for n, t in self.templates.items() if n not in self.rows_of and hasattr(t, "_grid_dense")]
        self.dense += own
        self._maps = {}

    # -- rows -------------------------------------------------------------------------------
    def _rows(self, y, p):
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
                mis = self.binned._grid_bin_ids(p[sel]) != self.unit_bin[us]
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

    def _dense_rows(self, y, p):
        """The dense columns of validated rows, ``(n, len(self.dense))``."""
        dense = np.empty((p.shape[0], len(self.dense)))
        dense[:, 0] = 1.0
        for k, name in enumerate(self.dense[1:], start=1):
            make = self.rows_of.get(name) or self.templates[name]._grid_dense
            dense[:, k] = make(y, p)
        return dense

    # -- the maps from the units to the templates' cells ------------------------------------
    def _cells(self, n):
        """Sparse ``(n, U)`` sums of the units into the ``n`` cells of a dyadic grid (``n | G``)."""
        if ("cells", n) not in self._maps:
            self._maps[("cells", n)] = _indicator(self.coarse >> int(np.log2(self.G // n)), n)
        return self._maps[("cells", n)]

    def _nodes(self, m):
        """``(lo, L, H)``: the units' left nodes on the ``m``-cell grid, the sums into ``lo``, ``lo + 1``."""
        if ("nodes", m) not in self._maps:
            lo = (self.coarse >> int(np.log2(self.G // m))).astype(np.int64)
            self._maps[("nodes", m)] = (lo, _indicator(lo, m + 1), _indicator(lo + 1, m + 1))
        return self._maps[("nodes", m)]

    def _fine_cells(self):
        """``(cells, A)``: the distinct fine cells of the units and the sums of the units into them."""
        if "fine" not in self._maps:
            cells, inv = np.unique(self.fine, return_inverse=True)
            self._maps["fine"] = (cells, _indicator(inv.ravel(), cells.size))
        return self._maps["fine"]

    def _bin_sums(self):
        """Sparse ``(n_bins, U)`` sums of the units into the bins of the binned template."""
        if "bins" not in self._maps:
            self._maps["bins"] = _indicator(self.bins, self.binned.n_bins)
        return self._maps["bins"]

    def _statistics(self, acc, dense):
        """Per template, its replicate statistics (its own layout) from one model's sums.

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
            Name -> the statistics of its :class:`~skcal.stats.PoissonBootstrap`.
        """
        units = UnitSums(self, acc, dense)
        column = dict(zip(self.dense, dense.T, strict=True))
        return {n: t._grid_statistics(units, column.get(n)) for n, t in self.templates.items()}


class UnitSums:
    """One model's sums of a few replicates per unit of a :class:`ReplicateGrid`, as a template reads them.

    Attributes ``(U, R)``: ``S0`` copies of the unit's rows, ``Y0`` of those with ``y = 1``,
    ``Sd_1`` their ``sum d``, ``Sd`` and ``Sdd`` the sums of ``d`` and ``d^2`` of all its rows,
    ``P`` and ``YP`` the sums of ``p`` and ``y p``; ``x`` ``(U, 1)`` the units' left edges;
    ``copies`` and ``n_rows`` ``(R,)`` each replicate's rows; ``grid`` the grid (its maps).
    """

    def __init__(self, grid, acc, dense):
        per = acc.reshape(grid.U, CHANNELS_PER_UNIT, acc.shape[1])
        S0_0, Sd_0, S0_1, Sd_1, Sdd = (np.ascontiguousarray(per[:, k]) for k in range(CHANNELS_PER_UNIT))
        self.grid = grid
        self.x = grid.x[:, None]
        self.S0 = S0_0 + S0_1
        self.Y0, self.Sd_1, self.Sdd = S0_1, Sd_1, Sdd
        self.Sd = Sd_0 + Sd_1
        self.P = self.x * self.S0 + self.Sd
        self.YP = self.x * self.Y0 + Sd_1
        self.copies = dense[:, 0].copy()
        self.n_rows = np.rint(self.copies).astype(np.int64)


class GridReplicates:
    """The sums of a block of replicates on a :class:`ReplicateGrid`, per model (mergeable in place).

    Replicate ``r`` counts row ``i`` :func:`poisson_weights` ``(seed, r, i)`` times, as a
    :class:`PoissonBootstrap` with the same seed does; chunks of rows (:meth:`add` with their
    global first row) and partial sums of the same block (:meth:`merge`) give the same sums in
    any chunking.

    Parameters
    ----------
    grid : ReplicateGrid
        The units.
    n_models : int
        Models (each adds its own predictions of the same rows).
    first_replicate, n_replicates : int
        The block of replicates.
    seed : int
        The bootstrap's key.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import CutoffGridStatistics, GridReplicates, ReplicateGrid
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(size=600)
    >>> y = (rng.uniform(size=600) < p).astype(float)
    >>> grid = ReplicateGrid({"cutoff": CutoffGridStatistics(n_cells=1024)}, {})
    >>> whole = GridReplicates(grid, 1, 0, 3, seed=2).add(grid, 0, y, [p])
    >>> a = GridReplicates(grid, 1, 0, 3, seed=2).add(grid, 0, y[:250], [p[:250]])
    >>> b = GridReplicates(grid, 1, 0, 3, seed=2).add(grid, 250, y[250:], [p[250:]])
    >>> bool(np.allclose(a.merge(b).values(grid, ["cutoff"]), whole.values(grid, ["cutoff"]), rtol=1e-12))
    True
    """

    @validate_params(
        {
            "grid": [ReplicateGrid],
            "n_models": [StrictInterval(Integral, 1, None, closed="left")],
            "first_replicate": [StrictInterval(Integral, 0, None, closed="left")],
            "n_replicates": [StrictInterval(Integral, 1, None, closed="left")],
            "seed": [StrictInterval(Integral, 0, None, closed="left")],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(self, grid, n_models, first_replicate, n_replicates, seed):
        self.first_replicate, self.n_replicates = int(first_replicate), int(n_replicates)
        self.seed = int(seed)
        self.acc = [np.zeros((grid.size, self.n_replicates)) for _ in range(n_models)]
        self.dense = [np.zeros((self.n_replicates, len(grid.dense))) for _ in range(n_models)]

    @validate_params(
        {
            "grid": [ReplicateGrid],
            "first_row": [StrictInterval(Integral, 0, None, closed="left")],
            "y": [np.ndarray],
            "preds": [list, tuple],
        },
        prefer_skip_nested_validation=True,
    )
    def add(self, grid, first_row, y, preds):
        """Add the rows ``first_row ..`` (``y`` and one ``p`` per model, validated); return self.

        The chunk's weights are drawn once, ``(rows, replicates)`` as bytes; each model visits
        its rows in the order of their cells of the coarsest grid (a radix sort of 16-bit ids),
        so that its tiles add into neighbouring regions of the state (a random row's region is
        a cache and TLB miss each; sorted, they stream). The dense columns are one product per
        tile with one BLAS thread (a pool fighting the other processes is many times slower).

        Parameters
        ----------
        grid : ReplicateGrid
            The grid these sums were made for.
        first_row : int
            Global index of the chunk's first row (the key of its weights).
        y : ndarray of shape (n,)
            Labels as 0/1 floats (validated).
        preds : list of ndarray of shape (n,)
            One model's probabilities per model, in [0, 1] (validated).

        Returns
        -------
        GridReplicates
            ``self``.
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
                    self.dense[i] += Wt.T @ grid._dense_rows(y[a:b], p[a:b])
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
                    rows, vals = grid._rows(ys[a:b], ps[a:b])
                    add_sparse_sums(self.acc[i], rows, vals, Wt.T)
        return self

    @validate_params({"other": [HasMethods(["add", "merge", "values"])]}, prefer_skip_nested_validation=True)
    def merge(self, other):
        """Add another chunk's sums of the same block in place; return self.

        Parameters
        ----------
        other : GridReplicates
            Sums of the same block of replicates (same first replicate, count and seed).

        Returns
        -------
        GridReplicates
            ``self``.
        """
        same = (other.first_replicate, other.n_replicates, other.seed)
        if same != (self.first_replicate, self.n_replicates, self.seed):
            raise ValueError("Cannot merge the sums of different blocks of replicates.")
        for a, b in zip(self.acc, other.acc, strict=True):
            a += b
        for a, b in zip(self.dense, other.dense, strict=True):
            a += b
        return self

    @validate_params(
        {"grid": [ReplicateGrid], "names": [list, tuple], "step": _POSITIVE},
        prefer_skip_nested_validation=True,
    )
    def values(self, grid, names, step=VALUE_STEP):
        """``(n_replicates, n_models, len(names))`` replicate values of the templates ``names``.

        Computed ``step`` replicates at a time (the templates' statistics of a few replicates at
        once beside the sums, not of the whole block), each by the template's own formula
        (:meth:`PoissonBootstrap.from_sums`).

        Parameters
        ----------
        grid : ReplicateGrid
            The grid these sums were made for.
        names : list of str
            Templates of the grid.
        step : int, default=4
            Replicates whose statistics are formed at once.

        Returns
        -------
        ndarray of shape (n_replicates, n_models, len(names))
            The values.
        """
        out = np.empty((self.n_replicates, len(self.acc), len(names)))
        for i, (acc, dense) in enumerate(zip(self.acc, self.dense, strict=True)):
            for r0 in range(0, self.n_replicates, step):
                sl = slice(r0, min(self.n_replicates, r0 + step))
                stats = grid._statistics(np.ascontiguousarray(acc[:, sl]), dense[sl])
                for j, name in enumerate(names):
                    boot = PoissonBootstrap.from_sums(
                        stats.pop(name), template=grid.templates[name], n_replicates=sl.stop - sl.start
                    )
                    out[sl, i, j] = boot.compute()
        return out
