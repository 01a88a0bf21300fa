"""Time-uniform reliability bands: a confidence sequence for each bin's mean residual.

For the rows of one bin, with residuals ``r = y - p`` in [-1, 1] whose conditional mean is
``mu`` (the stationary case), and a candidate mean ``m`` in [-1, 1], ``xi = (r - m) / 2`` lies in
[-1, 1]. For bets ``0 <= lambda < 1`` chosen from the earlier blocks (fixed within a block),
Fan, Grama and Liu's inequality ``exp(lambda xi - psi(lambda) xi^2) <= 1 + lambda xi``, with
``psi(c) = -log(1 - c) - c``, makes

    K+(m) = prod exp( lambda (r - m) / 2 - psi(lambda) (r - m)^2 / 4)
    K-(m) = prod exp(-lambda (r - m) / 2 - psi(lambda) (r - m)^2 / 4)

nonnegative supermartingales at ``m = mu``: the capital of betting that the mean is above
(``K+``) or below (``K-``) ``m``, the two halves of the hedged capital process of Waudby-Smith
and Ramdas with the empirical-Bernstein lower bound of each factor. By Ville's inequality,
``{m : K+(m) < 2 / alpha and K-(m) < 2 / alpha}`` covers ``mu`` at every time simultaneously
with probability at least ``1 - alpha``. Each log capital is a concave quadratic in ``m`` whose
coefficients are sums of ``lambda``, ``lambda n``, ``psi n``, ``psi sum r`` and ``psi sum r^2``
over blocks, so the set is read off in closed form from the per-block sums; the band is its
hull (an interval). Without stationarity it covers the bet-weighted running average of the
rows' conditional means.

The bets follow the predictable plug-in rule of Waudby-Smith and Ramdas (their
empirical-Bernstein confidence sequence), one value per block: with ``i`` one more than the
bin's rows before the block and ``v`` the variance of ``xi`` estimated from them (prior
``1/4``), ``lambda = min(1/2, sqrt(2 log(2 / alpha) / (v i log(1 + i))))``.

The monitor's diagram asks every bin at once, so each bin's sequence is at level
``alpha / (bins x classes)`` (Bonferroni): the whole diagram is covered at all times with
probability at least ``1 - alpha``.

References
----------
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024 (Sections 3 and 4).
X. Fan, I. Grama and Q. Liu, "Exponential inequalities for martingales with applications",
Electronic Journal of Probability 20, 2015.
"""

from __future__ import annotations

import numpy as np

__all__ = ["residual_bands", "psi_e", "BAND_BET_CAP"]

#: Largest bet of a band's capital process.
BAND_BET_CAP = 0.5


def psi_e(c):
    """``psi_E(c) = -log(1 - c) - c`` for ``0 <= c < 1`` (Fan, Grama and Liu)."""
    c = np.asarray(c, dtype=np.float64)
    return -np.log1p(-c) - c


def _superlevel(a, b, c):
    """``[lo, hi]`` of ``{m : a m^2 + b m + c >= 0}`` for ``a <= 0`` (``lo > hi``: empty)."""
    lo = np.full(np.shape(a), np.inf)
    hi = np.full(np.shape(a), -np.inf)
    quad = a < 0
    with np.errstate(invalid="ignore", divide="ignore"):
        disc = b * b - 4 * a * c
        root = np.sqrt(np.where(quad & (disc >= 0), disc, 0.0))
        r1 = (-b + root) / (2 * a)
        r2 = (-b - root) / (2 * a)
        ok = quad & (disc >= 0)
        lo = np.where(ok, np.minimum(r1, r2), lo)
        hi = np.where(ok, np.maximum(r1, r2), hi)
        lin = ~quad
        cut = -c / b
        lo = np.where(lin & (b > 0), cut, lo)
        hi = np.where(lin & (b > 0), np.inf, hi)
        lo = np.where(lin & (b < 0), -np.inf, lo)
        hi = np.where(lin & (b < 0), cut, hi)
        every = lin & (b == 0) & (c >= 0)
        lo = np.where(every, -np.inf, lo)
        hi = np.where(every, np.inf, hi)
    return lo, hi


def _hull_outside(lo1, hi1, lo2, hi2):
    """Hull of ``[-1, 1]`` minus the two closed intervals (``nan`` where nothing is left)."""

    def inside(m, lo, hi):
        return (lo <= m) & (m <= hi)

    low = np.full(np.shape(lo1), -1.0)
    high = np.full(np.shape(lo1), 1.0)
    for _ in range(2):  # with two intervals, two passes reach the first point outside both
        low = np.where(inside(low, lo1, hi1), hi1, low)
        low = np.where(inside(low, lo2, hi2), hi2, low)
        high = np.where(inside(high, lo1, hi1), lo1, high)
        high = np.where(inside(high, lo2, hi2), lo2, high)
    empty = (low > 1.0) | (high < -1.0) | (low > high)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def residual_bands(count, sum_x, sum_x2, alpha):
    """Confidence sequences for the mean residual of every bin, from per-block sums.

    Parameters
    ----------
    count, sum_x, sum_x2 : ndarray of shape (nb, ...)
        Per-block rows, ``sum (y - p)`` and ``sum (y - p)^2`` of each bin, block axis first
        (the blocks of the segment the sequence starts at).
    alpha : float
        Level of each bin's sequence (``P(ever miss) <= alpha``).

    Returns
    -------
    lower, upper : ndarray of shape (...)
        The band of each bin after the last block (``nan`` for an empty bin or an empty set).
    """
    n = np.asarray(count, dtype=np.float64)
    S = np.asarray(sum_x, dtype=np.float64)
    Q = np.asarray(sum_x2, dtype=np.float64)
    thr = np.log(2.0 / alpha)
    # predictable bets: from the bin's rows in the earlier blocks of the segment
    n_before = np.cumsum(n, axis=0) - n
    S_before = np.cumsum(S, axis=0) - S
    Q_before = np.cumsum(Q, axis=0) - Q
    with np.errstate(invalid="ignore", divide="ignore"):
        centred = np.where(n_before > 0, Q_before - S_before**2 / np.maximum(n_before, 1), 0.0)
    v = (0.25 + np.maximum(centred, 0.0) / 4.0) / (n_before + 1.0)
    i = n_before + 1.0
    lam = np.minimum(BAND_BET_CAP, np.sqrt(2.0 * thr / (v * i * np.log1p(i))))
    ps = psi_e(lam)
    A = (lam * S).sum(axis=0) / 2.0
    Bn = (lam * n).sum(axis=0) / 2.0
    Vq = (ps * Q).sum(axis=0) / 4.0
    Vs = (ps * S).sum(axis=0) / 4.0
    Vn = (ps * n).sum(axis=0) / 4.0
    # log K+-(m) = +-(A - Bn m) - (Vq - 2 Vs m + Vn m^2); reject m where either reaches thr
    lo1, hi1 = _superlevel(-Vn, 2.0 * Vs - Bn, A - Vq - thr)
    lo2, hi2 = _superlevel(-Vn, 2.0 * Vs + Bn, -A - Vq - thr)
    lower, upper = _hull_outside(lo1, hi1, lo2, hi2)
    total = n.sum(axis=0)
    return np.where(total > 0, lower, np.nan), np.where(total > 0, upper, np.nan)
