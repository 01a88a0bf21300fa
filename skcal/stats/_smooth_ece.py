"""Mergeable statistics of smECE: the one fine-grid deposit of :mod:`skcal.smooth_ece`, and its search.

Per cell of a fixed grid of ``2^18`` cells on [0, 1]: the total weight ``N``, its first moment
in ``p`` (``F``), the total residual ``R = sum w (p - y)`` and its first moment ``RF``; plus the
row count and total weight (the weights are rescaled to sum to the row count, as
:func:`skcal.smooth_ece.smooth_ece` does). All are sums over rows, so chunks merge by addition.

The formulas that turn the deposit into smECE (relplot's reflected Gaussian smoothing on an
``E``-point grid, its bandwidth bisection) live here too, so that the statistics object, the
in-memory :func:`skcal.smooth_ece.smooth_ece` and the replicates of
:mod:`skcal.calibration_test` share one implementation.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.fft import irfft, next_fast_len, rfft

from skcal._compat import validate_params
from skcal._constraints import POS_LABEL
from skcal._docstrings import fill
from skcal.stats._base import VALIDATED_ROWS, VALIDATED_ROWS_DOCS, BinaryStatistics
from skcal.stats._replicate import ReplicatePlan, add_sparse_sums, is_sorted

__all__ = [
    "DENSITY_EPS",
    "FINE_CELLS",
    "MESH_POINTS",
    "FineGrid",
    "SmoothECEStatistics",
    "fine_deposit",
    "fine_grid",
    "fine_cell_units",
    "reflected_gaussian",
    "smece_grid_points",
    "smooth_ece_from_grid",
    "smooth_ece_replicates",
    "special_fine_cells",
]

#: Cells of the grid the data are deposited on once.
FINE_CELLS = 1 << 18
#: Evaluation mesh of relplot's default configuration (``relplot.config.smECE_mesh_pts``).
MESH_POINTS = 200
#: Regulariser relplot adds to the smoothed density.
DENSITY_EPS = 1e-4


def fine_deposit(p, r, w, K=FINE_CELLS):
    """``(N, F, R, RF)`` per cell of the ``K``-cell grid for predictions ``p`` and residuals ``r``.

    Cell ``c`` is ``[c / K, (c + 1) / K)`` (the last one closed). ``N`` adds the weights,
    ``F`` the weighted predictions, ``R`` the weighted residuals and ``RF`` the weighted
    residuals times the predictions.

    Parameters
    ----------
    p : ndarray of shape (n,)
        Validated predictions in [0, 1].
    r : ndarray of shape (n,)
        Residuals ``p - y``.
    w : ndarray of shape (n,) or None
        Validated weights (``None``: unit weights).
    K : int, default=FINE_CELLS
        Number of cells.

    Returns
    -------
    N : ndarray of shape (K,)
        The weight per cell.
    F : ndarray of shape (K,)
        Its first moment in ``p``.
    R : ndarray of shape (K,)
        The residual per cell.
    RF : ndarray of shape (K,)
        Its first moment in ``p``.
    """
    c = np.minimum((p * K).astype(np.intp), K - 1)
    wp = p if w is None else w * p
    wr = r if w is None else w * r
    N = np.bincount(c, weights=w, minlength=K).astype(np.float64)
    F = np.bincount(c, weights=wp, minlength=K)
    R = np.bincount(c, weights=wr, minlength=K)
    RF = np.bincount(c, weights=wr * p, minlength=K)
    return N, F, R, RF


#: Below this many rows, :func:`fine_grid` adds the rows of the occupied cells only (found by a
#: sort of the cell ids) instead of filling the four ``2^18``-cell arrays.
COMPACT_ROWS = 1 << 14


def fine_grid(p, r, w, K=FINE_CELLS):
    """The :class:`FineGrid` of validated rows: :func:`fine_deposit` and :meth:`FineGrid.from_sums`.

    The same sums as the deposit on all ``K`` cells followed by ``from_sums`` (each cell adds
    its rows in row order either way, so the values are equal bit for bit), with the weights
    rescaled to sum to the row count; below :data:`COMPACT_ROWS` rows only the occupied cells
    are formed.

    Parameters
    ----------
    p : ndarray of shape (n,)
        Validated predictions in [0, 1].
    r : ndarray of shape (n,)
        Residuals ``p - y``.
    w : ndarray of shape (n,) or None
        Validated weights with a positive total (``None``: unit weights).
    K : int, default=FINE_CELLS
        Number of cells.

    Returns
    -------
    FineGrid
        The occupied cells.
    """
    n = p.shape[0]
    scale = float(n) / (float(n) if w is None else float(w.sum()))
    if n >= COMPACT_ROWS:
        return FineGrid.from_sums(*fine_deposit(p, r, w, K), scale)
    c = np.minimum((p * K).astype(np.intp), K - 1)
    cells, inv = np.unique(c, return_inverse=True)
    k = cells.shape[0]
    wp = p if w is None else w * p
    wr = r if w is None else w * r
    N = np.bincount(inv, weights=w, minlength=k).astype(np.float64)
    F = np.bincount(inv, weights=wp, minlength=k)
    R = np.bincount(inv, weights=wr, minlength=k)
    RF = np.bincount(inv, weights=wr * p, minlength=k)
    if w is not None and not (N > 0).all():  # cells holding only rows of weight zero
        keep = N > 0
        N, F, R, RF = N[keep], F[keep], R[keep], RF[keep]
    return FineGrid(N * scale, F * scale, R * scale, RF * scale, np.clip(F / N, 0.0, 1.0))


class FineGrid:
    """The data deposited once: per occupied fine cell, weight and residual with their moments.

    What smECE's bandwidth search (:func:`smooth_ece_from_grid`) reads: for every occupied cell
    of the ``2^18``-cell deposit, the weight ``N``, its first moment in ``p`` (``F``), the
    residual ``R = sum w (p - y)`` and its first moment ``RF``, and the cell's centre of mass
    ``centre``, where each bandwidth's ``E``-point grid re-deposits the cell.

    Parameters
    ----------
    N, F, R, RF : ndarray of shape (c,)
        The sums of the ``c`` occupied cells (``N > 0``), weights already rescaled.
    centre : ndarray of shape (c,)
        The cells' centres of mass in [0, 1] (``F / N`` of the unscaled sums).

    Examples
    --------
    >>> import numpy as np
    >>> N, F = np.array([2.0, 0.0, 1.0]), np.array([0.5, 0.0, 0.9])
    >>> grid = FineGrid.from_sums(N, F, np.array([0.1, 0.0, -0.2]), np.array([0.0, 0.0, -0.18]))
    >>> grid.centre.tolist()
    [0.25, 0.9]
    """

    def __init__(self, N, F, R, RF, centre):
        self.N, self.F, self.R, self.RF, self.centre = N, F, R, RF, centre
        self._deposits = {}

    @classmethod
    def from_sums(cls, N, F, R, RF, scale=1.0):
        """The occupied cells of a full ``2^18``-cell deposit, weights multiplied by ``scale``.

        Parameters
        ----------
        N, F, R, RF : ndarray of shape (2**18,)
            The sums per cell (:func:`fine_deposit`).
        scale : float, default=1.0
            Multiplies every sum (``n / sum w``: weights rescaled to sum to the row count).

        Returns
        -------
        FineGrid
            The occupied cells.
        """
        occupied = np.flatnonzero(N > 0)
        n_occ, f_occ = N.take(occupied), F.take(occupied)
        return cls(
            n_occ * scale,
            f_occ * scale,
            R.take(occupied) * scale,
            RF.take(occupied) * scale,
            np.clip(f_occ / n_occ, 0.0, 1.0),
        )

    def deposit(self, E):
        """Deposit weight and residual linearly on the ``E``-point grid (relplot's rounding).

        Parameters
        ----------
        E : int
            The number of grid points on [0, 1].

        Returns
        -------
        list of ndarray of shape (E,)
            The weight and the residual per grid point.
        """
        cached = self._deposits.get(E)
        if cached is not None:  # the bandwidth search asks for the same E at most bandwidths
            return cached
        b = np.clip((self.centre * (E - 1)).astype(np.intp), 0, E - 2)
        out = []
        for V, VF in ((self.N, self.F), (self.R, self.RF)):
            upper = (E - 1) * VF - b * V  # sum of frac * v over the cell
            out.append(
                np.bincount(b, weights=V - upper, minlength=E)
                + np.bincount(b + 1, weights=upper, minlength=E)
            )
        self._deposits[E] = out
        return out


def reflected_gaussian(values, sigma):
    """relplot's ``ReflectedGaussianKernel.convolve`` for each row of ``values`` (one FFT pass).

    Parameters
    ----------
    values : ndarray of shape (r, E)
        Rows on the ``E``-point grid of [0, 1].
    sigma : float
        The bandwidth.

    Returns
    -------
    ndarray of shape (r, E)
        Each row convolved with the Gaussian reflected at 0 and 1.
    """
    E = values.shape[-1]
    t = np.linspace(0.0, 1.0, E)
    ker = np.exp(-((t - 0.5) ** 2) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    nfft = _reflected_fft_size(E)
    full = irfft(rfft(_reflected_rows(values), nfft, axis=-1) * rfft(ker, nfft), nfft, axis=-1)
    return full[..., E - 1 : 2 * E - 1]


def _reflected_rows(values):
    """The part of the reflected extension of ``values`` that the kept outputs of the convolution read.

    relplot convolves the extension ``ext = [values reversed (without its last), values, values
    reversed (without its first)]`` (``3E - 2`` points) with the ``E``-point kernel
    (``np.convolve(ext, ker, "valid")``) and keeps the ``E`` outputs from ``E // 2`` on: output
    ``j`` reads ``ext[h + j .. h + j + E - 1]``, ``h = E // 2``, so only ``ext[h : h + 2E - 1]``
    is read. Returned along the last axis (shape ``(..., 2E - 1)``).
    """
    E = values.shape[-1]
    h = E // 2
    ext = np.concatenate([values[..., ::-1][..., :-1], values, values[..., ::-1][..., 1:]], axis=-1)
    return ext[..., h : h + 2 * E - 1]


def _reflected_fft_size(E):
    """FFT length of :func:`reflected_gaussian` on an ``E``-point grid.

    The ``2E - 1`` points of :func:`_reflected_rows` convolved with the ``E``-point kernel: with
    a circular convolution of length ``N >= 2E - 1`` the outputs ``E - 1 .. 2E - 2`` (those kept)
    wrap around nothing, since each reads inputs ``0 .. 2E - 2`` only; the same values as
    relplot's linear convolution of the whole extension (``3E - 2 + E - 1`` points, longer
    transforms) up to floating-point round-off.
    """
    return next_fast_len(2 * E - 1, real=True)


def _interpolation_nodes(t, n):
    """The left node of each point of ``t`` on the ``n``-point grid of [0, 1] and the weight of
    its right node (relplot's ``kernels.interpolate``)."""
    step = 1.0 / (n - 1)
    inds = np.clip((t * (n - 1)).astype(np.intp), 0, n - 2)
    return inds, (t - inds * step) / step


def _interpolate(t, y):
    """relplot's ``kernels.interpolate``: piecewise-linear interpolation of ``y`` on ``t``."""
    inds, resid = _interpolation_nodes(t, y.shape[0])
    return y[inds] * (1 - resid) + y[inds + 1] * resid


def _smece_at(grid, sigma):
    E, n_mesh = _grid_size(sigma)
    mesh = np.linspace(0.0, 1.0, n_mesh)
    smooth = getattr(grid, "smoothed", None)  # a grid may reuse its label-free channel's smoothing
    if smooth is not None:
        smoothed = smooth(E, sigma)
    else:
        smoothed = reflected_gaussian(np.vstack(grid.deposit(E)), sigma)
    dens = _interpolate(mesh, smoothed[0]) + DENSITY_EPS
    ys = _interpolate(mesh, smoothed[1])
    # relplot: sum(|ys / dens| * dens) / sum(dens)
    return float(np.sum(np.abs(ys / dens) * dens) / np.sum(dens))


def smooth_ece_from_grid(grid, return_bandwidth=False):
    """Return smECE of a :class:`FineGrid` after relplot's bandwidth search.

    If ``smECE(1) >= 1`` is false the interval [0, 1] is bisected 10 times for the crossing
    ``smECE(sigma) = sigma``, and the value is reported at the lower end of the final interval
    that fails ``sigma < smECE(sigma)``.

    Parameters
    ----------
    grid : FineGrid
        The deposited data.
    return_bandwidth : bool, default=False
        Also return the selected bandwidth.

    Returns
    -------
    float or tuple of float
        The smECE, or ``(smECE, sigma)``.
    """

    def check(sigma):  # relplot's predicate (eps = 0.001)
        return sigma < 0.001 or sigma < _smece_at(grid, sigma)

    sigma = 1.0
    if not check(sigma):
        start, end = 1.0, 0.0
        for _ in range(10):
            mid = (start + end) / 2
            if check(mid):
                end = mid
            else:
                start = mid
        sigma = start
    value = _smece_at(grid, sigma)
    return (value, sigma) if return_bandwidth else value


class SmoothECEStatistics(BinaryStatistics):
    """Mergeable sufficient statistics of smECE: weight and residual deposited on a fine grid.

    :func:`skcal.smooth_ece.smooth_ece` computes through this object, so :meth:`compute` on
    merged chunks equals it on all the rows. The state holds four arrays of ``2^18`` floats
    (8 MiB).

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class; give it when labels are not ``{0, 1}``, ``{-1, 1}`` or booleans.

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded in.
    FINE_CELLS : int
        Class constant: the cells of the fine grid the rows are deposited on (``2^18``).
    MESH_POINTS : int
        Class constant: the evaluation mesh of relplot's default configuration (200 points).
    DENSITY_EPS : float
        Class constant: the regulariser relplot adds to the smoothed density (``1e-4``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import SmoothECEStatistics
    >>> from skcal.smooth_ece import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> s = SmoothECEStatistics().update(y[:500], p[:500]) + SmoothECEStatistics().update(y[500:], p[500:])
    >>> bool(abs(s.compute() - smooth_ece(y, p)) < 1e-12)
    True
    """

    _param_names = ("pos_label",)
    _parameter_constraints: dict = {"pos_label": POS_LABEL}
    FINE_CELLS = FINE_CELLS
    MESH_POINTS = MESH_POINTS
    DENSITY_EPS = DENSITY_EPS

    def __init__(self, *, pos_label=None):
        self.pos_label = pos_label

    @classmethod
    @validate_params(
        {**VALIDATED_ROWS, "return_bandwidth": ["boolean"], "pos_label": POS_LABEL},
        prefer_skip_nested_validation=True,
    )
    @fill(**VALIDATED_ROWS_DOCS)
    def compute_validated(cls, y, p, sample_weight=None, *, return_bandwidth=False, pos_label=None):
        """Return smECE of validated rows, as ``from_validated(...).compute(return_bandwidth)``.

        One batch deposits only the fine cells its rows occupy (below ``2^14`` rows, found by a
        sort of the cell ids; the same sums, cell by cell, as the deposit on all ``2^18`` cells),
        so a small call does not fill four ``2^18``-cell arrays. :func:`skcal.smooth_ece.smooth_ece`
        computes through it.

        Parameters
        ----------
        {validated_rows}
        return_bandwidth : bool, default=False
            Also return the selected bandwidth.
        {validated_pos_label}

        Returns
        -------
        float or tuple of float
            The smECE, or ``(smECE, sigma)`` with ``return_bandwidth=True``.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=2000)
        >>> y = (rng.uniform(size=2000) < p ** 2).astype(float)
        >>> round(SmoothECEStatistics.compute_validated(y, p), 3)
        0.168
        """
        return smooth_ece_from_grid(fine_grid(p, p - y, sample_weight), return_bandwidth)

    def _empty(self):
        z = np.zeros(FINE_CELLS)
        return {
            "N": z,
            "F": z.copy(),
            "R": z.copy(),
            "RF": z.copy(),
            "sum_w": np.zeros(()),
            "n_rows": np.zeros((), dtype=np.int64),
        }

    def _sums(self, y, p, w):
        N, F, R, RF = fine_deposit(p, p - y, w)
        n = p.shape[0]
        return {
            "N": N,
            "F": F,
            "R": R,
            "RF": RF,
            "sum_w": np.array(float(n) if w is None else float(w.sum())),
            "n_rows": np.array(n, dtype=np.int64),
        }

    def _compute(self, return_bandwidth=False):
        s = self.stats_
        if int(s["n_rows"]) == 0 or float(s["sum_w"]) <= 0:
            raise ValueError("The statistics hold no rows with positive weight; smECE is undefined.")
        grid = FineGrid.from_sums(s["N"], s["F"], s["R"], s["RF"], float(s["n_rows"]) / float(s["sum_w"]))
        return smooth_ece_from_grid(grid, return_bandwidth)

    @validate_params({"return_bandwidth": ["boolean"]}, prefer_skip_nested_validation=True)
    def compute(self, return_bandwidth=False):
        """Return smECE of the accumulated rows (see :func:`skcal.smooth_ece.smooth_ece`).

        Parameters
        ----------
        return_bandwidth : bool, default=False
            Also return the selected bandwidth.

        Returns
        -------
        float or tuple of float
            The smECE, or ``(smECE, sigma)`` with ``return_bandwidth=True``.
        """
        return self._compute(return_bandwidth)

    # -- bootstrap replicates: the fine deposit of each replicate, on the occupied cells -----
    #: the replicate statistics keep only the cells the rows occupy (a sorted ``cells`` index),
    #: so their size grows with the rows, up to ``2^18`` cells; their cell arrays are
    #: ``(cells, replicates)`` (the layout of the deposit's sparse product), the others
    #: ``(replicates,)``
    _replicate_variable_shape = True

    def _replicate_empty(self, n_replicates):
        z = np.zeros((0, n_replicates))
        return {
            "cells": np.zeros(0, dtype=np.int64),
            "N": z,
            "F": z.copy(),
            "R": z.copy(),
            "RF": z.copy(),
            "sum_w": np.zeros(n_replicates),
            "n_rows": np.zeros(n_replicates, dtype=np.int64),
        }

    def _replicate_plan(self, y, p, w, index=None):
        return _SmoothECEPlan(self, y, p, w)

    def _replicate_combine(self, a, b):
        if a["cells"].size == 0 or b["cells"].size == 0:
            base = b if a["cells"].size == 0 else a
            out = {k: np.array(v, copy=True) for k, v in base.items()}
            out["sum_w"] = a["sum_w"] + b["sum_w"]
            out["n_rows"] = a["n_rows"] + b["n_rows"]
            return out
        cells = np.union1d(a["cells"], b["cells"])
        ia, ib = np.searchsorted(cells, a["cells"]), np.searchsorted(cells, b["cells"])
        out = {"cells": cells}
        R = a["N"].shape[1]
        for k in ("N", "F", "R", "RF"):
            v = np.zeros((cells.size, R))
            v[ia] = a[k]
            v[ib] += b[k]
            out[k] = v
        out["sum_w"] = a["sum_w"] + b["sum_w"]
        out["n_rows"] = a["n_rows"] + b["n_rows"]
        return out

    def _replicate_compute(self, stats):
        return smooth_ece_replicates(stats)

    def _grid_fine_starts(self):
        # a special cell's deposit depends on its own centre of mass: it is a unit alone (and
        # the next cell starts one)
        special = special_fine_cells()
        start = special.copy()
        start[1:] |= special[:-1]
        return start

    def _grid_statistics(self, units, column):
        """The fine deposit's sums on the occupied fine cells, from the units' sums."""
        cells, A = units.grid._fine_cells()
        x = units.x
        PP = x * x * units.S0 + 2.0 * x * units.Sd + units.Sdd  # sum of p^2
        N = A @ units.S0
        keep = N.any(axis=1)  # the occupied cells
        stats = {"cells": cells[keep].astype(np.int64)}
        R, RF = A @ (units.P - units.Y0), A @ (PP - units.YP)
        for k, v in (("N", N), ("F", A @ units.P), ("R", R), ("RF", RF)):
            stats[k] = np.ascontiguousarray(v[keep])
        stats["sum_w"], stats["n_rows"] = units.copies, units.n_rows
        return stats


def smece_grid_points():
    """The sizes ``E`` of the grids smECE's bandwidth search can deposit on.

    The search evaluates the bandwidth 1, then bisects [0, 1] ten times, so every bandwidth it
    evaluates is 1 or ``k / 1024`` (``k / 1024 >= 0.001``); each is smoothed on an ``E``-point
    grid with ``E = max(2000, round(20 / sigma)) // 2 + 1`` (:func:`_smece_at`).

    Returns
    -------
    list of int
        The distinct ``E``, increasing.

    Examples
    --------
    >>> smece_grid_points()[:3], len(smece_grid_points())
    ([1001, 1025, 1139], 10)
    """
    sigmas = [1.0] + [k / 1024 for k in range(1, 1024) if k / 1024 >= 0.001]
    return sorted({max(2000, round(20 / s)) // 2 + 1 for s in sigmas})


_UNITS: list = []  # (unit of each fine cell, first fine cell of each unit), made once


def special_fine_cells():
    """Fine cells deposited at their own centre of mass by some ``E``-point grid of smECE.

    A cell whose two edges fall in different intervals of one of the grids of
    :func:`smece_grid_points`, or whose left edge lies (within 1e-7 grid steps) on a node: the
    classification of :func:`_segments`, for every grid the search can visit.

    Returns
    -------
    ndarray of bool of shape (FINE_CELLS,)
        Whether each fine cell is special.
    """
    c = np.arange(FINE_CELLS)
    special = np.zeros(FINE_CELLS, dtype=bool)
    for E in smece_grid_points():
        special |= ~_fixed_cells(c, E)[1]
    return special


def _fixed_cells(cells, E):
    """``(b, fixed)``: each fine cell's interval ``b`` of the ``E``-point grid, and whether the cell
    lies strictly inside it (no node inside the cell, its left edge not on a node within 1e-7 grid
    steps): only such a cell's deposit is linear in its sums."""
    lo_edge = cells / FINE_CELLS * (E - 1)
    hi_edge = np.nextafter((cells + 1) / FINE_CELLS, 0.0) * (E - 1)
    b_lo = np.clip(lo_edge.astype(np.intp), 0, E - 2)
    b_hi = np.clip(hi_edge.astype(np.intp), 0, E - 2)
    near = np.abs(lo_edge - np.round(lo_edge)) < 1e-7
    return b_lo, (b_lo == b_hi) & ~near


def fine_cell_units():
    """The runs of fine cells whose smECE deposits are linear in their sums, on every grid.

    A unit is one special fine cell (:func:`special_fine_cells`) or a maximal run of the others:
    a run lies strictly inside one interval of every grid the bandwidth search can visit, so its
    deposit on any of them is that of its summed ``(N, F, R, RF)`` at its first cell (what
    :func:`_segments` finds per grid), while a special cell is deposited at its own centre of
    mass. 28,666 units instead of ``2^18`` cells: the replicate statistics are kept per unit.

    Returns
    -------
    unit : ndarray of int64 of shape (FINE_CELLS,)
        The unit of each fine cell (non-decreasing).
    first : ndarray of int64 of shape (n_units,)
        Each unit's first fine cell.
    """
    if not _UNITS:
        special = special_fine_cells()
        start = special.copy()
        start[1:] |= special[:-1]
        start[0] = True
        unit = np.cumsum(start) - 1
        _UNITS.append((unit.astype(np.int64), np.flatnonzero(start).astype(np.int64)))
    return _UNITS[0]


class _SmoothECEPlan(ReplicatePlan):
    """Replicates of the fine deposit, on the units the chunk's rows occupy (one sparse product a tile).

    The sums are kept per unit of :func:`fine_cell_units` (a special fine cell, or a run of the
    others), each named by its first fine cell: the deposit of a run on every grid of the search
    is that of its sums at its first cell, so the replicates equal those of the per-cell sums to
    round-off, with at most 28,666 rows of state instead of ``2^18`` (a 1e6-row chunk fills
    almost every cell).
    """

    def __init__(self, stats, y, p, w):
        self.stats, self.w = stats, w
        self.n_rows = p.shape[0]
        unit_of, unit_first = fine_cell_units()
        c = np.minimum((p * FINE_CELLS).astype(np.intp), FINE_CELLS - 1)
        u = unit_of.take(c)
        if is_sorted(u):
            first = np.concatenate(([True], u[1:] != u[:-1])) if u.size else np.zeros(0, dtype=bool)
            self.cells = unit_first.take(u[first])
            cid = (np.cumsum(first) - 1).astype(np.int64)
        else:
            units, cid = np.unique(u, return_inverse=True)
            self.cells, cid = unit_first.take(units), cid.ravel().astype(np.int64)
        r = p - y
        vals = np.column_stack([np.ones_like(p), p, r, r * p])
        self.vals = vals if w is None else vals * w[:, None]
        U = self.cells.size
        self.rows = cid[:, None] + (np.arange(4, dtype=np.int64) * U)[None, :]

    def empty(self, n_replicates, scratch=None):
        return {
            "_acc": self.zeros(scratch, "acc", (4 * self.cells.size, n_replicates)),  # N, F, R, RF stacked
            "sum_w": np.zeros(n_replicates),
            "n_rows": np.zeros(n_replicates, dtype=np.int64),
        }

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["_acc"], self.rows[sl], self.vals[sl], W)
        out["sum_w"] += copies if self.w is None else W @ self.w[sl]
        out["n_rows"] += np.rint(copies).astype(np.int64)
        return out

    def finish(self, out):
        acc, U = out.pop("_acc"), self.cells.size
        out.update(cells=self.cells, N=acc[:U], F=acc[U : 2 * U], R=acc[2 * U : 3 * U], RF=acc[3 * U :])
        return out


def _grid_size(sigma):
    """``(E, mesh points)`` of :func:`_smece_at` at bandwidth ``sigma`` (ints; arrays for an array).

    ``numpy.round`` rounds halves to even, as Python's ``round`` does.
    """
    E = np.maximum(2000, np.round(20 / np.asarray(sigma, dtype=float))).astype(np.int64) // 2 + 1
    n_mesh = np.maximum(np.round(10 / np.asarray(sigma, dtype=float)).astype(np.int64), MESH_POINTS)
    if E.ndim == 0:
        return int(E), int(n_mesh)
    return E, n_mesh


class _ReplicateGrids:
    """The fine grids of a block of replicates (``(c, g)``: cells by replicates), deposited per ``E`` once.

    ``FineGrid.deposit`` places each cell at its centre of mass ``F / N``, between the nodes
    ``b`` and ``b + 1`` of the ``E``-point grid. A cell lying strictly inside one interval of that
    grid has the same ``b`` in every replicate, and its deposit is linear in its sums: node ``b``
    gets ``(b + 1) V - (E - 1) VF`` and node ``b + 1`` gets ``(E - 1) VF - b V``. So the sums of
    the cells of one interval are added first (one segment sum for all replicates) and deposited
    once; the few cells holding a node of the grid are deposited one by one at their replicate's
    centre, as ``FineGrid.deposit`` does.
    """

    def __init__(self, cells, N, F, R, RF, scale):
        self.cells = cells
        self.V = ((N, F), (R, RF))
        self.scale = scale  # (g,): weights rescaled to sum to the row count
        self.cache = {}

    def deposit(self, E, rows, channel=None):
        """Weight and residual of replicates ``rows`` on the ``E``-point grid: ``(len(rows), 2, E)``.

        ``channel`` 0 or 1 gives the weight or the residual alone, ``(len(rows), E)``.
        """
        if E not in self.cache:
            self.cache[E] = self._deposit(E)
        if channel is None:
            return self.cache[E][rows]
        return self.cache[E][rows, channel]

    def spectrum(self, E, rows):
        """``rfft`` of the reflected residual deposits of ``rows`` on the ``E``-point grid, and its length.

        The forward transform of :func:`reflected_gaussian`'s extended rows depends on the
        replicate and ``E`` only, not on the bandwidth, so it is made once per ``E`` for every
        replicate (a row's transform does not depend on the rows beside it) and reused by every
        bisection step that visits ``E``. Only the residual channel is transformed: the
        density enters smECE through its sum over the mesh alone, a linear function of the
        weight deposit (:func:`_density_weights`).
        """
        key = ("spectrum", E)
        if key not in self.cache:
            values = self.deposit(E, slice(None))[:, 1]  # (g, E): the residuals
            nfft = _reflected_fft_size(E)
            self.cache[key] = (rfft(_reflected_rows(values), nfft, axis=1), nfft)
        spec, nfft = self.cache[key]
        return spec[rows], nfft

    def _deposit(self, E):
        g = self.scale.shape[0]
        out = np.zeros((g, 2, E))
        c = self.cells
        if c.size == 0:
            return out
        seg, nodes, unique, s_idx = _segments(c, E)
        scale = self.scale[None, :]
        for ch, (V, VF) in enumerate(self.V):
            sv = (seg @ V) * scale  # the segment sums of every replicate: one sparse product
            svf = (seg @ VF) * scale
            upper = (E - 1) * svf - nodes[:, None] * sv
            if unique:
                out[:, ch, nodes] += (sv - upper).T
                out[:, ch, nodes + 1] += upper.T
            else:  # two runs of one b (split by a cell near a node) add up
                np.add.at(out[:, ch].T, nodes, sv - upper)
                np.add.at(out[:, ch].T, nodes + 1, upper)
        if s_idx.size:
            N, F = self.V[0]
            Ns, Fs = N[s_idx].T, F[s_idx].T  # (g, s)
            with np.errstate(invalid="ignore", divide="ignore"):
                centre = np.where(Ns > 0, np.clip(Fs / np.where(Ns > 0, Ns, 1.0), 0.0, 1.0), 0.0)
            b = np.clip((centre * (E - 1)).astype(np.intp), 0, E - 2)
            flat = (b + (np.arange(g) * E)[:, None]).ravel()
            for ch, (V, VF) in enumerate(self.V):
                v, vf = V[s_idx].T * self.scale[:, None], VF[s_idx].T * self.scale[:, None]
                upper = (E - 1) * vf - b * v  # as FineGrid.deposit
                out[:, ch] += (
                    np.bincount(flat, weights=(v - upper).ravel(), minlength=g * E)
                    + np.bincount(flat + 1, weights=upper.ravel(), minlength=g * E + 1)[: g * E]
                ).reshape(g, E)
        return out


def _segments(cells, E):
    """How the occupied fine cells ``cells`` deposit on the ``E``-point grid.

    Cells lying strictly inside one interval of the grid form runs of one node ``b`` (rows of a
    sparse segment-sum matrix); the others (a node inside, or a left edge on a node) are
    deposited one by one at their replicates' centres.
    """
    # a cell with a node inside, or whose left edge sits (within rounding) on a node, is
    # deposited at its centre
    b_lo, fixed = _fixed_cells(cells, E)
    # segments of consecutive cells: each run of fixed cells with one b, each other cell alone
    key_b = np.where(fixed, b_lo, -1)
    brk = np.ones(cells.size, dtype=bool)
    brk[1:] = (key_b[1:] != key_b[:-1]) | ~fixed[1:] | ~fixed[:-1]
    starts = np.flatnonzero(brk)
    seg_fixed = fixed[starts]
    nodes = b_lo[starts][seg_fixed]
    seg = sparse.csr_matrix(
        (np.ones(cells.size), np.arange(cells.size), np.append(starts, cells.size)),
        shape=(starts.size, cells.size),
    )[seg_fixed]
    return seg, nodes, bool(np.unique(nodes).size == nodes.size), np.flatnonzero(~fixed)


def _interpolation(E, n_mesh):
    """relplot's linear interpolation from the ``E``-point grid to the ``n_mesh``-point mesh.

    Returns the left nodes ``inds``, the weights ``frac`` of the right ones (as
    :func:`_interpolate`) and ``u``, each grid node's total weight over the mesh (so that the
    sum over the mesh of an interpolated row ``v`` is ``u @ v``).
    """
    inds, frac = _interpolation_nodes(np.linspace(0.0, 1.0, n_mesh), E)
    u = np.bincount(inds, weights=1 - frac, minlength=E) + np.bincount(inds + 1, weights=frac, minlength=E)
    return inds, frac, u


def _density_weights(E, n_mesh, sigmas, kernel_spectrum, nfft):
    """:func:`_density_weights_of` of each bandwidth of ``sigmas``, kept per ``(E, mesh, sigma)``.

    The first steps of every block's search visit the same bandwidths (1/2, 1/4, ...), so the
    weights are made once per process and bandwidth (at most :data:`_DENSITY_CACHE` of them).
    """
    keys = [(E, n_mesh, nfft, float(s)) for s in sigmas]
    missing = [k for k, key in enumerate(keys) if key not in _DENSITY_WEIGHTS]
    if missing:
        made = _density_weights_of(E, n_mesh, kernel_spectrum[missing], nfft)
        if len(_DENSITY_WEIGHTS) + len(missing) > _DENSITY_CACHE:
            _DENSITY_WEIGHTS.clear()
        for k, row in zip(missing, made, strict=True):
            _DENSITY_WEIGHTS[keys[k]] = row
    return np.stack([_DENSITY_WEIGHTS[key] for key in keys])


#: (E, mesh points, FFT length, bandwidth) -> the density weights of :func:`_density_weights_of`
_DENSITY_WEIGHTS: dict = {}
#: Bandwidths' weights kept at most (8 KB each).
_DENSITY_CACHE = 1024


def _density_weights_of(E, n_mesh, kernel_spectrum, nfft):
    """``c`` with ``c @ N = sum over the mesh of the smoothed, interpolated weight deposit N``.

    The smoothing (:func:`reflected_gaussian`: the reflected extension, a circular convolution
    of length ``nfft`` with the kernel, the outputs ``E - 1 .. 2E - 2``) and the interpolation
    are linear, so the sum is ``N`` times the adjoint of both applied to a vector of ones: the
    interpolation's node weights ``u`` placed at the kept outputs, correlated with the kernel
    (``kernel_spectrum``'s conjugate, one row per bandwidth), and folded back through the
    reflection. Equal to smoothing ``N`` and summing up to floating-point round-off.
    """
    _, _, u = _interpolation(E, n_mesh)
    z = np.zeros(nfft)
    z[E - 1 : 2 * E - 1] = u
    back = irfft(rfft(z)[None, :] * np.conj(kernel_spectrum), nfft, axis=1)[:, : 2 * E - 1]
    h = E // 2
    e = np.arange(h, h + 2 * E - 1)  # the extension's points that _reflected_rows keeps
    source = np.where(e < E - 1, E - 1 - e, np.where(e <= 2 * E - 2, e - (E - 1), 3 * E - 3 - e))
    out = np.empty((back.shape[0], E))
    for k in range(back.shape[0]):
        out[k] = np.bincount(source, weights=back[k], minlength=E)
    return out


def _smece_many(grids, rows, sigmas):
    """``_smece_at`` of replicates ``rows`` at their bandwidths ``sigmas`` (one FFT pass per grid size).

    ``_smece_at`` is ``sum |ys / dens| * dens / sum dens`` over the mesh, ``dens`` the smoothed
    weight plus :data:`DENSITY_EPS` (positive: the smoothed weight is a positive smoothing of
    non-negative deposits) and ``ys`` the smoothed residual. So the numerator is ``sum |ys|``
    (to round-off) and the denominator a linear function of the weight deposit
    (:func:`_density_weights`): only the residual channel is smoothed, by one inverse transform
    per replicate.
    """
    out = np.empty(rows.size)
    E_all, mesh_all = _grid_size(sigmas)
    keys, group = np.unique(E_all * (1 << 32) + mesh_all, return_inverse=True)
    group = group.ravel()
    for k, key in enumerate(keys.tolist()):
        E, n_mesh = key >> 32, key & 0xFFFFFFFF
        sel = np.flatnonzero(group == k)
        sig = sigmas[sel]
        spec, nfft = grids.spectrum(E, rows[sel])  # (g, nfft // 2 + 1)
        t = np.linspace(0.0, 1.0, E)
        # replicates whose bisections are at the same bandwidth share its kernel's transform
        # (most of them, in the first steps): the same numbers, made once
        sig_u, which = np.unique(sig, return_inverse=True)
        which = which.ravel()
        sc = sig_u[:, None]
        ker = np.exp(-((t[None, :] - 0.5) ** 2) / (2 * sc**2)) / (np.sqrt(2 * np.pi) * sc)
        kspec = rfft(ker, nfft, axis=1)
        full = irfft(spec * kspec[which], nfft, axis=1)
        smoothed = full[:, E - 1 : 2 * E - 1]  # as reflected_gaussian
        inds, frac, _ = _interpolation(E, n_mesh)
        ys = smoothed[:, inds] * (1 - frac) + smoothed[:, inds + 1] * frac
        c = _density_weights(E, n_mesh, sig_u, kspec, nfft)  # (unique bandwidths, E)
        N = grids.deposit(E, rows[sel], channel=0)  # (g, E)
        if sig_u.size <= 16:  # a few bandwidths: one product with each's weights
            total = (N @ c.T)[np.arange(sel.size), which]
        else:
            total = np.einsum("ge,ge->g", N, c[which])
        total += n_mesh * DENSITY_EPS
        out[sel] = np.sum(np.abs(ys), axis=1) / total
    return out


def smooth_ece_replicates(stats, block=None):
    """smECE of every replicate from stacked replicate statistics, searched for all at once.

    Each replicate's value is :meth:`SmoothECEStatistics.compute` of its statistics: the same
    fine grid (weights rescaled to sum to the replicate's row count), the same ``E``-point
    deposits, reflected Gaussian smoothing and bandwidth bisection. The bisection runs for a
    block of replicates together: at every step the replicates are grouped by grid size, each
    group smoothed in one FFT pass, and each replicate's deposit on an ``E``-point grid is made
    once however often its bisection visits that grid. Only the residual channel is smoothed
    (one inverse transform per replicate and step): the density enters through its sum over
    the mesh, a linear function of the weight deposit (:func:`_density_weights`), so the
    values equal ``compute``'s to floating-point round-off, not bit for bit.

    Parameters
    ----------
    stats : dict of ndarray
        ``cells`` (the occupied fine cells, ``(c,)``), ``N``, ``F``, ``R``, ``RF`` of shape
        ``(c, R)``, ``sum_w`` and ``n_rows`` of shape ``(R,)``.
    block : int, default=None
        Replicates searched together (``None``: all).

    Returns
    -------
    ndarray of shape (R,)
        smECE per replicate (NaN for a replicate with no weight).
    """
    N, F, Rs, RF = stats["N"], stats["F"], stats["R"], stats["RF"]  # (cells, replicates)
    c, n_rep = N.shape
    n_rows = np.asarray(stats["n_rows"], dtype=float)
    sum_w = np.asarray(stats["sum_w"], dtype=float)
    ok = (n_rows > 0) & (sum_w > 0)
    out = np.full(n_rep, np.nan)
    if block is None:  # all replicates at once: the state is in memory already
        block = n_rep
    for b0 in range(0, n_rep, block):
        idx = np.arange(b0, min(n_rep, b0 + block))
        idx = idx[ok[idx]]
        if idx.size == 0:
            continue
        scale = n_rows[idx] / sum_w[idx]
        if idx.size == n_rep:  # the whole state: no copy
            block_arrays = (N, F, Rs, RF)
        else:  # one contiguous copy per block (the sparse products read contiguous rows)
            block_arrays = tuple(np.ascontiguousarray(A[:, idx]) for A in (N, F, Rs, RF))
        grids = _ReplicateGrids(stats["cells"], *block_arrays, scale)
        out[idx] = _bisect(grids, idx.size)
    return out


def _bisect(grids, g):
    """relplot's bandwidth search (see :func:`smooth_ece_from_grid`) for ``g`` replicates at once.

    The search first checks ``1 < smECE(1)``, which never holds: every smoothed residual is at
    most its smoothed weight (both are the same positive smoothing of deposits with
    ``|R_j| <= N_j``), and the density adds :data:`DENSITY_EPS` to each mesh point, so
    ``smECE(sigma) < 1`` at every bandwidth. So every replicate bisects, and ``smECE(1)`` is
    needed only for a replicate whose search never leaves 1 (all its checks hold): it is
    computed for those alone, at the end.
    """
    rows = np.arange(g)
    value = np.full(g, np.nan)  # smECE at the current start (1: computed at the end if needed)
    start, end = np.ones(g), np.zeros(g)
    for _ in range(10):
        mid = (start + end) / 2
        chk = mid < 0.001
        need = ~chk
        vals = np.empty(g)
        if need.any():
            vals[need] = _smece_many(grids, rows[need], mid[need])
            chk[need] = mid[need] < vals[need]
        end = np.where(chk, mid, end)
        start = np.where(~chk, mid, start)
        value = np.where(~chk, vals, value)  # the value at the current start
    stay = start == 1.0
    if stay.any():
        value[stay] = _smece_many(grids, rows[stay], np.ones(int(stay.sum())))
    return value
