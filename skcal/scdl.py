"""SCDL: the soft-binned calibration decision loss.

Defined in *Testable and Actionable Calibration for Full Swap Regret*.

For a grid ``G_m = {0, 1/m, ..., 1}`` the soft-bin weights are the triangular kernel
``w_i(p) = max(0, 1 - |m p - i|)``; with ``pi_i = E[w_i(p)]`` and ``q_i = E[w_i(p) y] / pi_i``::

    SCFDL_{m,i} = sum_{j <= i} pi_j (q_j - (i + 1)/m)_+  +  sum_{j > i} pi_j (i/m - q_j)_+
    SCDL_m      = max_i SCFDL_{m,i}
    SCDL        = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)

Implementation: one pass deposits the rows' soft-bin masses on the nodes of the finest grid
``M = m_max`` (:class:`skcal.stats.ScdlStatistics`); every coarser dyadic grid is folded from
it exactly in ``O(m)``. ``SCFDL_{m,i}`` for all ``i`` costs ``O(m)`` too: bin ``j`` contributes
to row ``i`` through ``(a_j - pi_j (i+1)/m)_+`` (``j <= i``), which is positive exactly for
``i < m q_j - 1``, and through ``(pi_j i/m - a_j)_+`` (``j > i``), positive exactly for
``i > m q_j``; each is a linear function of ``i`` on an interval of rows, so all rows follow
from two difference arrays and a cumulative sum. Total cost ``O(T + M)``, never a T-by-m matrix.

**Grid rules.** ``m_max`` is chosen by ``max_bins``:

* ``"auto"`` (default): ``m_max`` = the smallest power of two ``>= 4 sqrt(T)``. The plug-in
  ``SCDL_m`` of a calibrated predictor is noise that grows with ``m`` and crosses the floor
  ``1/m`` near ``m = 2 sqrt(T)``; once ``SCDL_m >= 1/m`` no finer grid can win, so with this cap
  the search reaches the crossing and SCDL is set by the data, not by the cap. In a study on the
  distribution of experiment 6.5 (SCDL on synthetic data: ``X ~ U[0, 1]``,
  ``Y ~ Bernoulli(alpha (1 - 2X)^2 + (1 - alpha) X)``; ``docs/guide/scdl.md``) the ``4 sqrt(T)``
  cap gave the same value as the largest grid the data support in every run, while ``2 sqrt(T)``
  still bound at ``T = 1000``.
* ``"theory"``: the largest dyadic ``m`` with ``m ln(m) <= sqrt(T)``, the cap of the rate theorem
  (8 below 1,968 samples, so SCDL cannot go below 1/8 there).
* an integer: the largest power of two not above it.

``T`` is the sample size, or Kish's effective size ``(sum w)^2 / sum w^2`` with weights. An
explicit ``max_bins`` may not exceed :func:`max_supported_bins` of the number of rows.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import MAX_BINS_LIMIT, POS_LABEL, SAMPLE_WEIGHT, StrictInterval
from skcal._validation import check_binary_probabilities
from skcal.stats._scdl import ScdlStatistics, _node_deposit

#: Relative tolerance within which two grids tie for the minimum of ``max(SCDL_m, 1/m)``.
TIE_RTOL = 1e-12

__all__ = [
    "SCDLCurve",
    "scdl_curve",
    "scdl_score",
    "default_max_bins",
    "theory_max_bins",
    "max_supported_bins",
]

#: The ``"auto"`` rule: ``m_max`` is the smallest power of two ``>= AUTO_FACTOR * sqrt(T)``.
AUTO_FACTOR = 4.0

MAX_BINS = [StrOptions({"auto", "theory"}), StrictInterval(Integral, 2, MAX_BINS_LIMIT, closed="both"), None]


_NONNEG_REAL = [StrictInterval(Real, 0, None, closed="left")]


@validate_params({"n_effective": _NONNEG_REAL}, prefer_skip_nested_validation=True)
def theory_max_bins(n_effective):
    """Largest dyadic ``m >= 2`` with ``m ln(m) <= sqrt(T)``: the rate theorem's cap in *Full Swap Regret*.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size ``T``.

    Returns
    -------
    int
        A power of two, at least 2.

    Examples
    --------
    >>> theory_max_bins(1_000), theory_max_bins(10_000), theory_max_bins(1_000_000)
    (8, 16, 128)
    """
    root = math.sqrt(max(float(n_effective), 0.0))
    m = 2
    while 2 * m * math.log(2 * m) <= root and 2 * m <= MAX_BINS_LIMIT:
        m *= 2
    return m


@validate_params(
    {"n_rows": [StrictInterval(Integral, 0, None, closed="left")]}, prefer_skip_nested_validation=True
)
def max_supported_bins(n_rows):
    """Largest ``max_bins`` accepted for ``n_rows`` rows: ``max(1024, 4 n_rows)``, at most ``2**24``.

    A grid with far more cells than rows puts every row in a cell of its own; finer grids only
    lower the floor ``1/m`` below any resolution the sample has, and cost memory.

    Parameters
    ----------
    n_rows : int
        Number of rows.

    Returns
    -------
    int
        The bound (not necessarily a power of two).

    Examples
    --------
    >>> max_supported_bins(2), max_supported_bins(10_000)
    (1024, 40000)
    """
    return int(min(MAX_BINS_LIMIT, max(1024, 4 * int(n_rows))))


@validate_params(
    {"n_effective": _NONNEG_REAL, "rule": [StrOptions({"auto", "theory"})]},
    prefer_skip_nested_validation=True,
)
def default_max_bins(n_effective, rule="auto"):
    """The largest grid ``m_max`` searched by a named rule for a sample of (effective) size ``T``.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size ``T``.
    rule : {"auto", "theory"}, default="auto"
        ``"auto"``: the smallest power of two ``>= 4 sqrt(T)`` (at least 2). ``"theory"``: the
        largest power of two with ``m ln(m) <= sqrt(T)`` (see :func:`theory_max_bins`).

    Returns
    -------
    int
        A power of two, at least 2.

    Examples
    --------
    >>> default_max_bins(1_000), default_max_bins(10_000), default_max_bins(1_000_000)
    (128, 512, 4096)
    >>> default_max_bins(1_000, rule="theory")
    8
    """
    if rule == "theory":
        return theory_max_bins(n_effective)
    if rule != "auto":
        raise ValueError(f"rule must be 'auto' or 'theory'; got {rule!r}.")
    target = AUTO_FACTOR * math.sqrt(max(float(n_effective), 0.0))
    m = 2
    while m < target and 2 * m <= MAX_BINS_LIMIT:
        m *= 2
    return m


def _resolve_max_bins(max_bins, n_effective, n_rows):
    """The finest dyadic grid searched: a power of two, checked against the data."""
    if max_bins is None or isinstance(max_bins, str):
        rule = "auto" if max_bins is None else max_bins
        if rule not in ("auto", "theory"):
            raise ValueError(f"max_bins must be 'auto', 'theory', None or an integer >= 2; got {max_bins!r}.")
        M = default_max_bins.__wrapped__(n_effective, rule)
        # a rule never asks for more than the rows support
        bound = max_supported_bins(n_rows)
        while M > bound and M > 2:
            M //= 2
        return M
    if isinstance(max_bins, (bool, np.bool_)) or not isinstance(max_bins, (Integral, np.integer)):
        raise ValueError(f"max_bins must be 'auto', 'theory', None or an integer >= 2; got {max_bins!r}.")
    if max_bins < 2:
        raise ValueError(f"max_bins must be 'auto', 'theory', None or an integer >= 2; got {max_bins!r}.")
    bound = max_supported_bins(n_rows)
    if max_bins > bound:
        raise ValueError(
            f"max_bins={max_bins} is larger than {n_rows} rows support: at most max(1024, 4 n_rows) = "
            f"{bound} (a finer grid puts every row in a cell of its own). Use max_bins='auto'."
        )
    return 1 << (int(max_bins).bit_length() - 1)  # largest power of two <= max_bins


def _effective_n(w, n):
    """Kish effective sample size ``(sum w)^2 / sum w^2`` (``n`` without weights)."""
    if w is None:
        return float(n)
    return float(w.sum() ** 2 / np.dot(w, w))


def _masses_to_moments(W, A, total):
    """``pi_i = W_i / total`` and ``a_i = A_i / total``, with round-off clipped to ``0 <= a <= pi``."""
    pi = W / total
    a = A / total
    np.maximum(pi, 0.0, out=pi)
    np.clip(a, 0.0, pi, out=a)
    return pi, a


def _scfdl(pi, a):
    """``SCFDL_{m,i}`` for every ``i = 0..m`` from ``pi_j`` and ``a_j = pi_j q_j``, in ``O(m)``.

    ``pi`` has shape ``(m + 1,)`` or ``(R, m + 1)``; ``a`` has shape ``(m + 1,)`` or ``(R, m + 1)``
    (one row per replicate, as the calibration test uses it). The result has ``a``'s shape.
    """
    a = np.asarray(a)
    one = a.ndim == 1
    a2 = np.atleast_2d(a)
    R, m1 = a2.shape
    m = m1 - 1
    pi2 = np.broadcast_to(pi, a2.shape)
    j = np.broadcast_to(np.arange(m1), a2.shape)
    pos = pi2 > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mq = np.where(pos, m * a2 / np.where(pos, pi2, 1.0), 0.0)
    # Row i gains c + s * i from bin j on rows start..stop-1: difference arrays of length m + 2
    # per replicate, filled by one bincount over (replicate, row) indices.
    width = m + 2
    base = (np.arange(R) * width)[:, None]
    # j <= i, positive iff i < m q_j - 1: rows j .. ceil(m q_j) - 2
    stop_a = np.minimum(np.ceil(mq).astype(np.intp) - 1, m + 1)
    sel_a = pos & (stop_a > j)
    # j > i, positive iff i > m q_j: rows floor(m q_j) + 1 .. j - 1
    start_b = np.floor(mq).astype(np.intp) + 1
    sel_b = pos & (start_b < j)
    ca = (a2 - pi2 / m)[sel_a]
    sa = (pi2 / m)[sel_a]
    cb = a2[sel_b]
    sb = (pi2 / m)[sel_b]
    idx = np.concatenate(
        [(base + j)[sel_a], (base + stop_a)[sel_a], (base + start_b)[sel_b], (base + j)[sel_b]]
    )
    size = R * width
    const = np.bincount(idx, weights=np.concatenate([ca, -ca, -cb, cb]), minlength=size)
    slope = np.bincount(idx, weights=np.concatenate([-sa, sa, sb, -sb]), minlength=size)
    const = np.cumsum(const.reshape(R, width), axis=1)[:, :m1]
    slope = np.cumsum(slope.reshape(R, width), axis=1)[:, :m1]
    out = np.maximum(const + slope * np.arange(m1), 0.0)
    return out[0] if one else out


@dataclass(frozen=True)
class SCDLCurve:
    """Everything :func:`scdl_curve` computes.

    Parameters
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
        The sample size ``T`` used by the grid rule.
    selected_scdl_m : float
        The unfloored ``SCDL_{m*}`` on the selected grid; ``scdl = max(selected_scdl_m, 1/m*)``,
        so ``selected_scdl_m < 1/m*`` means SCDL sits on the floor of its grid.
    max_bins : int
        The finest grid searched, ``n_bins[-1]``.
    max_bins_rule : str
        How ``max_bins`` was chosen: ``"auto"``, ``"theory"`` or ``"fixed"`` (an integer).
    at_floor : bool
        Whether ``scdl`` equals the floor ``1/m*`` (then models with the same ``m*`` tie).
    """

    n_bins: np.ndarray
    scdl_m: np.ndarray
    scdl: float
    selected_n_bins: int
    pi: list = field(repr=False)
    q: list = field(repr=False)
    scfdl: list = field(repr=False)
    n_effective: float = float("nan")
    selected_scdl_m: float = float("nan")
    max_bins: int = 0
    max_bins_rule: str = "auto"
    at_floor: bool = False

    def grid(self, n_bins):
        """Return ``(pi, q, scfdl)`` for the grid with ``n_bins`` bins.

        Parameters
        ----------
        n_bins : int
            One of the searched grids ``self.n_bins``.

        Returns
        -------
        pi : ndarray of shape (n_bins + 1,)
            Bin masses.
        q : ndarray of shape (n_bins + 1,)
            Bin label means (NaN for empty bins).
        scfdl : ndarray of shape (n_bins + 1,)
            ``SCFDL_{m,i}`` per threshold ``i``.
        """
        idx = np.flatnonzero(self.n_bins == n_bins)
        if idx.size == 0:
            raise ValueError(f"n_bins={n_bins} is not one of the searched grids {self.n_bins.tolist()}.")
        g = int(idx[0])
        return self.pi[g], self.q[g], self.scfdl[g]


def _curve_from_statistics(stats, max_bins="auto"):
    """The dyadic SCDL search from a :class:`ScdlStatistics`."""
    s = stats.stats_
    total = float(s["sum_w"])
    n_rows = int(s["n_rows"])
    if n_rows == 0 or total <= 0:
        raise ValueError("The statistics hold no rows with positive weight; SCDL is undefined.")
    T = stats.n_effective_
    rule = "fixed" if isinstance(max_bins, (int, np.integer)) else ("auto" if max_bins is None else max_bins)
    wanted = _resolve_max_bins(max_bins, T, n_rows)
    M = min(wanted, int(stats.max_bins))
    W, A = s["W"], s["A"]
    while W.shape[0] - 1 > M:
        W, A = _coarsen_pair(W, A)
    levels = []
    m = M
    while m >= 2:
        levels.append((m, W, A))
        if m > 2:
            W, A = _coarsen_pair(W, A)
        m //= 2
    levels.reverse()
    grids, values, pis, qs, scfdls = [], [], [], [], []
    for m, Wm, Am in levels:
        pi, a = _masses_to_moments(Wm, Am, total)
        sc = _scfdl(pi, a)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(pi > 0, a / np.where(pi > 0, pi, 1.0), np.nan)
        grids.append(m)
        values.append(float(sc.max()))
        pis.append(pi)
        qs.append(q)
        scfdls.append(sc)
    grids = np.asarray(grids)
    values = np.asarray(values)
    objective = np.maximum(values, 1.0 / grids)
    # first minimiser, the smallest m, with ties taken up to round-off: SCDL_{2m} = 1/m exactly
    # (in exact arithmetic a tie with grid m) must not select 2m because the folded sums land
    # a few ulps below 1/m
    best = objective.min()
    g = int(np.flatnonzero(objective <= best + TIE_RTOL * max(best, np.finfo(float).tiny))[0])
    if M < wanted and g == grids.shape[0] - 1 and values[g] < 1.0 / grids[g]:
        warnings.warn(
            f"The SCDL search stopped at the statistics' finest grid max_bins={M}, below the "
            f"{rule!r} rule's {wanted}, and SCDL sits on its floor 1/{M}; build ScdlStatistics with a "
            "larger max_bins for the full search.",
            UserWarning,
            stacklevel=3,
        )
    return SCDLCurve(
        n_bins=grids,
        scdl_m=values,
        scdl=float(objective[g]),
        selected_n_bins=int(grids[g]),
        pi=pis,
        q=qs,
        scfdl=scfdls,
        n_effective=T,
        selected_scdl_m=float(values[g]),
        max_bins=int(grids[-1]),
        max_bins_rule=rule,
        at_floor=bool(values[g] <= 1.0 / grids[g]),
    )


def _coarsen_pair(W, A):
    from skcal.stats._scdl import _coarsen

    return _coarsen(W), _coarsen(A)


def _curve(p, y, w, max_bins=None):
    """The SCDL search on validated arrays (through :class:`ScdlStatistics`)."""
    T = _effective_n(w, p.shape[0])
    M = _resolve_max_bins(max_bins, T, p.shape[0])
    stats = ScdlStatistics(max_bins=M)
    stats._stats = ScdlStatistics._chunk_arrays(y, p, w, M)
    stats.n_updates_ = 1
    return _curve_from_statistics(stats, max_bins)


def _scdl_at(p, y, w, m):
    """``(SCDL_m, pi, a)`` on an arbitrary grid ``m >= 1`` (not necessarily dyadic)."""
    total = float(p.shape[0]) if w is None else float(w.sum())
    W, A = _node_deposit(p, y, w, m)
    pi, a = _masses_to_moments(W, A, total)
    return float(_scfdl(pi, a).max()), pi, a


_PARAMS = {
    "y_true": ["array-like"],
    "y_prob": ["array-like"],
    "max_bins": MAX_BINS,
    "sample_weight": SAMPLE_WEIGHT,
    "pos_label": POS_LABEL,
}


@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def scdl_curve(y_true, y_prob, *, max_bins="auto", sample_weight=None, pos_label=None):
    """Compute the SCDL search in full: ``SCDL_m`` per dyadic grid, ``m*`` and every bin.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class (or ``predict_proba`` output).
    max_bins : {"auto", "theory"}, int or None, default="auto"
        Largest grid searched. ``"auto"`` (or ``None``): the smallest power of two
        ``>= 4 sqrt(T)``, so that the search reaches the grid where the noise of ``SCDL_m``
        crosses the floor ``1/m``. ``"theory"``: the rate theorem's ``m ln(m) <= sqrt(T)``
        (natural logarithm). ``T`` is the sample size or, with ``sample_weight``, Kish's
        effective sample size. An integer caps the search at the largest power of two not above
        it; it must lie in ``[2, max(1024, 4 n)]`` for ``n`` rows.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights; expectations become weighted means.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Returns
    -------
    SCDLCurve
        Holds ``pi``, ``q`` and ``SCFDL_{m,i}`` for every searched grid, the selected grid
        ``selected_n_bins`` (``m*``) and the unfloored ``selected_scdl_m`` (``SCDL_{m*}``).

    See Also
    --------
    scdl_score : the number alone.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> curve = scdl_curve(y, p)
    >>> curve.n_bins.tolist()
    [2, 4, 8, 16, 32, 64, 128, 256]
    >>> curve.selected_n_bins, round(curve.selected_scdl_m, 4), round(curve.scdl, 4)
    (128, 0.0087, 0.0087)
    >>> theory = scdl_curve(y, p, max_bins="theory")   # m ln m <= sqrt(2000): m_max = 16
    >>> theory.n_bins.tolist(), theory.scdl, theory.at_floor
    ([2, 4, 8, 16], 0.0625, True)
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return _curve(p, y, w, max_bins)


@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def scdl_score(y_true, y_prob, *, max_bins="auto", sample_weight=None, pos_label=None):
    """Compute the soft-binned calibration decision loss (SCDL) of binary probabilities.

    ``SCDL = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)``, with ``SCDL_m`` the largest
    soft-binned threshold decision loss on the grid ``{0, 1/m, ..., 1}`` (*Full Swap Regret*). It
    lies in (0, 1), lower is better, and bounds the swap regret of every bounded decision task: a
    decision maker who rounds ``p`` to the selected grid and best-responds has swap regret at most
    ``4 SCDL`` (utilities in [0, 1]); see :class:`skcal.rounding.SoftBinRounder`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class, or ``predict_proba`` output.
    max_bins : {"auto", "theory"}, int or None, default="auto"
        The grid rule (see :func:`scdl_curve`). ``"auto"`` (or ``None``) searches up to the
        smallest power of two ``>= 4 sqrt(T)``; ``"theory"`` up to the largest ``m`` with
        ``m ln(m) <= sqrt(T)``; an integer caps the search (rounded down to a power of two, at
        least 2, at most ``max(1024, 4 n)``).
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    pos_label : int, float, bool or str, default=None
        The positive class (needed for labels other than {0, 1}, {-1, 1} or booleans).

    Returns
    -------
    float
        SCDL; it lies in ``[1/m*, 2/m*)`` for the selected grid ``m*``.

    See Also
    --------
    scdl_curve : the whole search (``SCDL_m`` per grid, ``m*``, ``pi``, ``q``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.scdl import scdl_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5000)
    >>> y = (rng.uniform(size=5000) < p).astype(int)
    >>> round(scdl_score(y, p), 4)                   # calibrated: set by the noise of 5000 rows
    0.005
    >>> scdl_score(y, p, max_bins="theory")           # the theorem's cap m_max = 16: the floor
    0.0625
    >>> round(scdl_score(y, 1 - p), 4)                # anti-calibrated
    0.1935
    """
    return scdl_curve(
        y_true, y_prob, max_bins=max_bins, sample_weight=sample_weight, pos_label=pos_label
    ).scdl
