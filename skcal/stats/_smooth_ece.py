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
from scipy.fft import irfft, next_fast_len, rfft

from skcal._compat import validate_params
from skcal._constraints import POS_LABEL
from skcal.stats._base import BinaryStatistics

__all__ = [
    "DENSITY_EPS",
    "FINE_CELLS",
    "MESH_POINTS",
    "FineGrid",
    "SmoothECEStatistics",
    "fine_deposit",
    "fine_grid",
    "reflected_gaussian",
    "smooth_ece_from_grid",
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
    ext = np.concatenate([values[:, ::-1][:, :-1], values, values[:, ::-1][:, 1:]], axis=1)
    n_ext = ext.shape[1]
    nfft = next_fast_len(n_ext + E - 1, real=True)
    full = irfft(rfft(ext, nfft, axis=1) * rfft(ker, nfft), nfft, axis=1)
    valid = full[:, E - 1 : n_ext]  # np.convolve(ext, ker, "valid")
    return valid[:, E // 2 : E // 2 + E]


def _interpolate(t, y):
    """relplot's ``kernels.interpolate``: piecewise-linear interpolation of ``y`` on ``t``."""
    n = y.shape[0]
    step = 1.0 / (n - 1)
    inds = np.clip((t * (n - 1)).astype(np.intp), 0, n - 2)
    resid = (t - inds * step) / step
    return y[inds] * (1 - resid) + y[inds + 1] * resid


def _smece_at(grid, sigma):
    E = max(2000, round(20 / sigma)) // 2 + 1
    mesh = np.linspace(0.0, 1.0, max(round(10 / sigma), MESH_POINTS))
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

    def __init__(self, *, pos_label=None):
        self.pos_label = pos_label

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
