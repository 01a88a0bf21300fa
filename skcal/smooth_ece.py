"""Smooth ECE (smECE) of Blasiok and Nakkiran, as computed by ``relplot.smECE``.

The smECE at bandwidth ``sigma`` kernel-smooths the residuals ``p - y`` against ``p`` with a
Gaussian kernel reflected at 0 and 1, and integrates the absolute smoothed residual against the
smoothed density; ``smECE`` is its value at the bandwidth ``sigma*`` where ``smECE(sigma) =
sigma`` (found by bisection). This module reproduces ``relplot.smECE`` (version 1.x, default
configuration: reflected Gaussian kernel, 200-point evaluation mesh) step by step, with two
changes that make it faster and leave the value unchanged to well within 1e-3:

* The data are deposited **once** on a fine grid of ``2^18`` cells (per cell: total weight, its
  first moment in ``p``, total residual and its first moment), held by
  :class:`skcal.stats.SmoothECEStatistics`, so chunks of rows merge. relplot re-deposits all
  samples on a grid of ``E`` points for every bandwidth it tries; here each bandwidth re-deposits
  the occupied fine cells instead, placing each at its centre of mass. The linear (hat-function)
  deposit is exact for every fine cell that does not straddle a node of the ``E``-point grid
  (in particular for every cell holding one distinct prediction value), and off by at most
  ``(E - 1) / 2^18`` of the straddling cells' mass otherwise.
* The reflected convolution uses an FFT instead of a direct ``O(E^2)`` convolution.

relplot is *not* imported at run time (it is used only in the tests that check agreement).
"""

from __future__ import annotations

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft

from skcal._compat import validate_params
from skcal._constraints import POS_LABEL, SAMPLE_WEIGHT
from skcal._validation import check_binary_probabilities
from skcal.stats._smooth_ece import SmoothECEStatistics

__all__ = ["smooth_ece"]

#: Cells of the grid the data are deposited on once.
FINE_CELLS = 1 << 18
#: Evaluation mesh of relplot's default configuration (``relplot.config.smECE_mesh_pts``).
MESH_POINTS = 200
#: Regulariser relplot adds to the smoothed density.
DENSITY_EPS = 1e-4


class _FineGrid:
    """The data deposited once: per occupied fine cell, weight and residual with their moments."""

    @classmethod
    def from_sums(cls, N, F, R, RF, scale=1.0):
        """Occupied cells of the ``2^18``-cell deposit, weights multiplied by ``scale``."""
        self = cls.__new__(cls)
        occupied = np.flatnonzero(N > 0)
        n_occ, f_occ = N.take(occupied), F.take(occupied)
        self.N = n_occ * scale
        self.F = f_occ * scale
        self.R = R.take(occupied) * scale
        self.RF = RF.take(occupied) * scale
        self.centre = np.clip(f_occ / n_occ, 0.0, 1.0)
        return self

    def deposit(self, E):
        """Linear deposit of weight and residual on the ``E``-point grid (relplot's rounding)."""
        b = np.clip((self.centre * (E - 1)).astype(np.intp), 0, E - 2)
        out = []
        for V, VF in ((self.N, self.F), (self.R, self.RF)):
            upper = (E - 1) * VF - b * V  # sum of frac * v over the cell
            out.append(
                np.bincount(b, weights=V - upper, minlength=E)
                + np.bincount(b + 1, weights=upper, minlength=E)
            )
        return out


def _reflected_gaussian(values, sigma):
    """relplot's ``ReflectedGaussianKernel.convolve`` for each row of ``values`` (one FFT pass)."""
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
    smoothed = _reflected_gaussian(np.vstack(grid.deposit(E)), sigma)
    dens = _interpolate(mesh, smoothed[0]) + DENSITY_EPS
    ys = _interpolate(mesh, smoothed[1])
    # relplot: sum(|ys / dens| * dens) / sum(dens)
    return float(np.sum(np.abs(ys / dens) * dens) / np.sum(dens))


@validate_params(
    {
        "y_true": ["array-like"],
        "y_prob": ["array-like"],
        "sample_weight": SAMPLE_WEIGHT,
        "pos_label": POS_LABEL,
        "return_bandwidth": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def smooth_ece(y_true, y_prob, *, sample_weight=None, pos_label=None, return_bandwidth=False):
    """Compute the smooth calibration error smECE (Blasiok and Nakkiran, 2023), as ``relplot.smECE``.

    The bandwidth ``sigma`` is found as relplot finds it: if ``smECE(1) >= 1`` is false the
    interval [0, 1] is bisected 10 times for the crossing ``smECE(sigma) = sigma``, and the value
    is reported at the lower end of the final interval that fails ``sigma < smECE(sigma)``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights (relplot has none). They are rescaled to sum to ``n``, so that unit
        weights reproduce the unweighted value exactly (relplot's density regulariser ``1e-4``
        is on the scale of counts).
    pos_label : int, float, bool or str, default=None
        The positive class.
    return_bandwidth : bool, default=False
        Also return the selected bandwidth ``sigma``.

    Returns
    -------
    float or tuple of float
        The smECE, or ``(smECE, sigma)`` with ``return_bandwidth=True``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> round(smooth_ece(y, p), 3)
    0.168
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    stats = SmoothECEStatistics()
    stats._stats = SmoothECEStatistics._chunk_arrays(y, p, w)
    stats.n_updates_ = 1
    return stats.compute(return_bandwidth=return_bandwidth)


def _smooth_ece_from_grid(grid, return_bandwidth=False):
    """relplot's bandwidth search and smECE on a :class:`_FineGrid`."""

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
