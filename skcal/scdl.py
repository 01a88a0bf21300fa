"""SCDL: the soft-binned calibration decision loss (SPEC section 4).

For a grid ``G_m = {0, 1/m, ..., 1}`` the soft-bin weights are the triangular kernel
``w_i(p) = max(0, 1 - |m p - i|)``; with ``pi_i = E[w_i(p)]`` and ``q_i = E[w_i(p) y] / pi_i``::

    SCFDL_{m,i} = sum_{j <= i} pi_j (q_j - (i + 1)/m)_+  +  sum_{j > i} pi_j (i/m - q_j)_+
    SCDL_m      = max_i SCFDL_{m,i}
    SCDL        = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)

Implementation: binned sums only. One pass over the data deposits, per cell of the finest dyadic
grid ``M = m_max``, the total weight, the total weight times the position ``u = M p - c`` of the
prediction inside its cell ``c``, and the same two sums multiplied by ``y``. Every coarser dyadic
grid ``m = M / k`` follows exactly: a prediction in fine cell ``c = b k + r`` lies in coarse cell
``b`` at relative position ``(r + u) / k``, so its weight on the upper grid point ``b + 1`` is
``(r + u) / k`` (and ``1 - (r + u) / k`` on ``b``), which is linear in the deposited sums. Cost:
``O(T)`` for the deposit plus ``O(m^2)`` per grid for the ``SCFDL_{m,i}`` of all ``i`` (a
vectorised ``(m + 1) x (m + 1)`` array, processed in row blocks), never a T-by-m matrix.
Because ``pi_j (q_j - t)_+ = (E[w_j y] - pi_j t)_+``, empty bins need no special case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from skcal._validation import check_binary_probabilities

__all__ = ["SCDLCurve", "scdl_curve", "scdl_score", "default_max_bins"]

# Largest number of entries of an SCFDL block held in memory at once.
_BLOCK_ENTRIES = 1 << 22


def default_max_bins(n_effective):
    """Largest dyadic ``m >= 2`` with ``m ln(m) <= sqrt(T)`` (SPEC section 4).

    The logarithm is the natural one. ``m = 2`` is always allowed, so even tiny samples are
    scored on the grid ``{0, 1/2, 1}``.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size ``T``.

    Returns
    -------
    int

    Examples
    --------
    >>> default_max_bins(1_000), default_max_bins(10_000), default_max_bins(1_000_000)
    (8, 16, 128)
    """
    root = math.sqrt(max(float(n_effective), 0.0))
    m = 2
    while 2 * m * math.log(2 * m) <= root:
        m *= 2
    return m


def _effective_n(w, n):
    """Kish effective sample size ``(sum w)^2 / sum w^2`` (``n`` without weights)."""
    if w is None:
        return float(n)
    return float(w.sum() ** 2 / np.dot(w, w))


def _fine_sums(p, y, w, M):
    """Deposit the data on ``M`` cells: weight, weight*u, weight*y, weight*u*y per cell."""
    t = p * M
    c = np.minimum(t.astype(np.intp), M - 1)
    u = t - c  # position inside the cell, in [0, 1] (p = 1 sits at u = 1 of the last cell)
    wy = y if w is None else w * y
    wu = u if w is None else w * u
    N = np.bincount(c, weights=w, minlength=M).astype(np.float64)
    U = np.bincount(c, weights=wu, minlength=M)
    Y = np.bincount(c, weights=wy, minlength=M)
    UY = np.bincount(c, weights=wu * y, minlength=M)
    return N, U, Y, UY


def _grid_moments(sums, m, total):
    """``pi_i`` and ``a_i = E[w_i y]`` (i = 0..m) on the grid ``m`` from the fine sums."""
    N, U, Y, UY = sums
    M = N.shape[0]
    k = M // m
    r = np.arange(k, dtype=np.float64)

    def split(cnt, pos):
        cnt = cnt.reshape(m, k)
        hi = (cnt @ r + pos.reshape(m, k).sum(axis=1)) / k  # weight on the upper neighbour
        lo = cnt.sum(axis=1) - hi
        out = np.zeros(m + 1)
        out[:m] += lo
        out[1:] += hi
        return out

    pi = split(N, U) / total
    a = split(Y, UY) / total
    # Round-off can leave tiny negative values in empty or nearly empty bins.
    np.maximum(pi, 0.0, out=pi)
    np.clip(a, 0.0, pi, out=a)
    return pi, a


def _scfdl(pi, a):
    """``SCFDL_{m,i}`` for every ``i = 0..m`` from ``pi_j`` and ``a_j = pi_j q_j``."""
    m = pi.shape[0] - 1
    out = np.empty(m + 1)
    j = np.arange(m + 1)
    rows = max(1, _BLOCK_ENTRIES // (m + 1))
    for start in range(0, m + 1, rows):
        i = np.arange(start, min(m + 1, start + rows))[:, None]
        below = np.maximum(a - pi * ((i + 1) / m), 0.0)  # j <= i: gain from deviating up
        above = np.maximum(pi * (i / m) - a, 0.0)  # j > i: gain from deviating down
        out[start : start + i.shape[0]] = np.where(j <= i, below, above).sum(axis=1)
    return out


@dataclass(frozen=True)
class SCDLCurve:
    """Everything :func:`scdl_curve` computes.

    Attributes
    ----------
    n_bins : ndarray of int, shape (g,)
        The dyadic grids searched, ``2, 4, ..., m_max``.
    scdl_m : ndarray of shape (g,)
        ``SCDL_m`` for each grid (non-decreasing in ``m``).
    scdl : float
        ``min_m max(SCDL_m, 1/m)``.
    selected_n_bins : int
        The selected grid ``m*`` (the smallest ``m`` attaining the minimum); ``scdl`` lies in
        ``[1/m*, 2/m*)``.
    pi : list of ndarray
        ``pi[g]`` holds ``pi_i`` (``i = 0..m``) for grid ``n_bins[g]``; it sums to 1.
    q : list of ndarray
        ``q[g]`` holds ``q_i``; NaN for an empty bin (``pi_i = 0``).
    scfdl : list of ndarray
        ``scfdl[g]`` holds ``SCFDL_{m,i}`` for ``i = 0..m``; its maximum is ``scdl_m[g]``.
    n_effective : float
        The sample size ``T`` used by the default ``max_bins`` rule.
    """

    n_bins: np.ndarray
    scdl_m: np.ndarray
    scdl: float
    selected_n_bins: int
    pi: list = field(repr=False)
    q: list = field(repr=False)
    scfdl: list = field(repr=False)
    n_effective: float = float("nan")

    def grid(self, n_bins):
        """Return ``(pi, q, scfdl)`` for the grid with ``n_bins`` bins."""
        idx = np.flatnonzero(self.n_bins == n_bins)
        if idx.size == 0:
            raise ValueError(f"n_bins={n_bins} is not one of the searched grids {self.n_bins.tolist()}.")
        g = int(idx[0])
        return self.pi[g], self.q[g], self.scfdl[g]


def _check_max_bins(max_bins):
    if max_bins is None:
        return None
    if isinstance(max_bins, (bool, np.bool_)) or not isinstance(max_bins, (int, np.integer)):
        raise ValueError(f"max_bins must be None or an integer >= 2; got {max_bins!r}.")
    if max_bins < 2:
        raise ValueError(f"max_bins must be None or an integer >= 2; got {max_bins}.")
    return 1 << (int(max_bins).bit_length() - 1)  # largest power of two <= max_bins


def _curve(p, y, w, max_bins=None):
    T = _effective_n(w, p.shape[0])
    M = default_max_bins(T) if max_bins is None else max_bins
    total = float(p.shape[0]) if w is None else float(w.sum())
    sums = _fine_sums(p, y, w, M)
    grids, values, pis, qs, scfdls = [], [], [], [], []
    m = 2
    while m <= M:
        pi, a = _grid_moments(sums, m, total)
        s = _scfdl(pi, a)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(pi > 0, a / np.where(pi > 0, pi, 1.0), np.nan)
        grids.append(m)
        values.append(float(s.max()))
        pis.append(pi)
        qs.append(q)
        scfdls.append(s)
        m *= 2
    grids = np.asarray(grids)
    values = np.asarray(values)
    objective = np.maximum(values, 1.0 / grids)
    g = int(np.argmin(objective))  # first minimiser: the smallest m
    return SCDLCurve(
        n_bins=grids,
        scdl_m=values,
        scdl=float(objective[g]),
        selected_n_bins=int(grids[g]),
        pi=pis,
        q=qs,
        scfdl=scfdls,
        n_effective=T,
    )


def _scdl_at(p, y, w, m):
    """``(SCDL_m, pi, a)`` on an arbitrary grid ``m >= 1`` (not necessarily dyadic)."""
    total = float(p.shape[0]) if w is None else float(w.sum())
    pi, a = _grid_moments(_fine_sums(p, y, w, m), m, total)
    return float(_scfdl(pi, a).max()), pi, a


def scdl_curve(y_true, y_prob, *, max_bins=None, sample_weight=None, pos_label=None):
    """The SCDL search in full: ``SCDL_m`` per dyadic grid, ``m*``, and every bin's ``pi`` and ``q``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class (or ``predict_proba`` output).
    max_bins : int, default=None
        Largest grid searched. ``None`` applies ``m ln(m) <= sqrt(T)`` (natural logarithm; see
        :func:`default_max_bins`), where ``T`` is the sample size or, with ``sample_weight``,
        Kish's effective sample size ``(sum w)^2 / sum w^2``. An integer caps the search at the
        largest power of two not above it (it must be >= 2).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights; expectations become weighted means.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Returns
    -------
    SCDLCurve
        Holds ``pi``, ``q`` and ``SCFDL_{m,i}`` for *every* searched grid (the arrays are
        small: ``m_max + 1`` entries at most).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> curve = scdl_curve(y, p)
    >>> curve.n_bins.tolist()
    [2, 4, 8, 16]
    >>> bool(np.all(np.diff(curve.scdl_m) >= 0))
    True
    >>> m = curve.selected_n_bins
    >>> 1 / m <= curve.scdl < 2 / m
    True
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return _curve(p, y, w, _check_max_bins(max_bins))


def scdl_score(y_true, y_prob, *, max_bins=None, sample_weight=None, pos_label=None):
    """Soft-binned calibration decision loss (SCDL) of binary probabilities; lower is better.

    ``SCDL = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)``, with ``SCDL_m`` the largest
    soft-binned threshold decision loss on the grid ``{0, 1/m, ..., 1}`` (SPEC section 4). It lies
    in (0, 1) and bounds the swap regret of every bounded decision task: a decision maker who
    rounds ``p`` to the selected grid and best-responds has swap regret at most ``4 SCDL``
    (utilities in [0, 1]); see :class:`skcal.SoftBinRounder`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class, or ``predict_proba`` output.
    max_bins : int, default=None
        ``None``: search the dyadic grids up to the largest ``m`` with ``m ln(m) <= sqrt(T)``
        (natural log; ``T`` = sample size, or Kish's effective size with weights). An integer
        caps the search instead (rounded down to a power of two, at least 2).
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    pos_label : int, float, bool or str, default=None
        The positive class (needed for labels other than {0, 1}, {-1, 1} or booleans).

    Returns
    -------
    float

    See Also
    --------
    scdl_curve : the whole search (``SCDL_m`` per grid, ``m*``, ``pi``, ``q``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import scdl_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5000)
    >>> y = (rng.uniform(size=5000) < p).astype(int)
    >>> scdl_score(y, p)            # calibrated: SCDL sits at the floor 1/m_max = 1/16
    0.0625
    >>> round(scdl_score(y, 1 - p), 4)  # anti-calibrated
    0.1935
    """
    return scdl_curve(
        y_true, y_prob, max_bins=max_bins, sample_weight=sample_weight, pos_label=pos_label
    ).scdl
