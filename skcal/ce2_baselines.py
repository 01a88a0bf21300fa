"""Baseline CE2 estimators: bucketing and Nadaraya-Watson.

The baselines of *The Minimax Rate of Second-Order Calibration*. Both regress the snapshot targets
``t1`` (for ``E[Y | S]``) and ``t2`` (for ``E[f*^2 | S]``) on the (already sech-perturbed) scores
and plug the fits into

.. code-block:: text

    CE2_hat = mean_i |eta1_hat(S_i) - m_i| + mean_i |eta2_hat(S_i) - (m_i^2 + sigma2_i)|.

They reach only the ``n^{-1/4}`` rate and exist for the rate experiment (experiment 6.1, the
error of the CE2 estimators against the sample size), next to the polynomial estimator of
:func:`skcal.ce2_score`, which calls :func:`baseline_ce2` for ``method="bucketing"`` and
``method="nadaraya_watson"``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from skcal._compat import StrOptions, validate_params
from skcal._constraints import BANDWIDTH, POSITIVE_REAL, PROBABILITY_OPEN, RANDOM_STATE
from skcal._threads import one_blas_thread
from skcal._validation import as_float_array, check_consistent_length, check_scores, reject_nonfinite

__all__ = ["baseline_ce2", "baseline_predict", "C_GRID"]

#: The grid of constants ``c`` searched by ``c="auto"`` (chosen on a held-out split by squared error).
C_GRID = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Bucketing's number of cells per axis is clipped to this range.
K_MIN, K_MAX = 2, 200
#: Nadaraya-Watson truncates its Gaussian kernel at this many bandwidths.
NW_TRUNCATION = 5.0
#: At most this many kernel weights are held in memory at once by Nadaraya-Watson.
_BLOCK = 1 << 18
#: Dyadic extensions of the bucketing grid stop after this many steps in either direction.
_MAX_EXTENSIONS = 30


# ----------------------------------------------------------------------------------------------
# the two regressions
# ----------------------------------------------------------------------------------------------
def n_buckets(c, n, h):
    """Cells per axis ``K = clip(ceil(c (n / h^2)^{1/4}), 2, 200)`` (*Minimax Rate*)."""
    return int(np.clip(np.ceil(c * (n / h**2) ** 0.25), K_MIN, K_MAX))


def nw_bandwidth(c, n, h):
    """Kernel bandwidth ``b = c h^{1/2} n^{-1/4}`` on the unit square (*Minimax Rate*)."""
    return float(c * np.sqrt(h) * n**-0.25)


def _cells(Z, K):
    idx = np.clip(np.floor(Z * K).astype(np.intp), 0, K - 1)
    flat = idx[:, 0]
    for j in range(1, Z.shape[1]):
        flat = flat * K + idx[:, j]
    return flat


def _bucketing_predict(Z_fit, T_fit, Z_query, K):
    """Cell means of the targets ``T_fit`` (n, 2) at ``Z_query``; empty cells get the global mean."""
    n_cells = K ** Z_fit.shape[1]
    cells = _cells(Z_fit, K)
    counts = np.bincount(cells, minlength=n_cells)
    sums = np.stack([np.bincount(cells, T_fit[:, k], minlength=n_cells) for k in range(2)], axis=1)
    q = _cells(Z_query, K)
    out = np.tile(T_fit.mean(axis=0), (Z_query.shape[0], 1))
    filled = counts[q] > 0
    out[filled] = sums[q[filled]] / counts[q[filled], None]
    return out


def _cell_ranges(Z_fit, G):
    """Sort the fitted points into ``G`` cells per axis; return (order, cell ids, CSR offsets)."""
    d = Z_fit.shape[1]
    cells = _cells(Z_fit, G)
    order = np.argsort(cells, kind="stable")
    offsets = np.searchsorted(cells[order], np.arange(G**d + 1))
    return order, offsets


def _nw_predict(Z_fit, T_fit, Z_query, b):
    """Nadaraya-Watson with the Gaussian kernel of bandwidth ``b`` truncated at ``5 b``.

    Exact, without an n-by-n matrix: the unit square is cut into cells of side at least
    ``5 b / k`` (k = 1 or 3), so the neighbours of a query within ``5 b`` lie within ``k`` cells
    of its own (contiguous ranges once the fitted points are sorted by cell). The kernel weights of each
    block of queries against those candidates are computed densely (weights beyond ``5 b`` set to
    zero) and contracted with the targets by one matrix product; blocks hold at
    most ``_BLOCK`` weights, so memory stays linear in ``n``. A query without a fitted sample
    within ``5 b`` gets the global mean.
    """
    d = Z_fit.shape[1]
    radius = NW_TRUNCATION * b
    # cells of side >= radius / k: the neighbours lie within k cells in each direction. k = 3
    # for wide kernels (few cells; the candidate block hugs the disc more tightly, ~58% of the
    # candidates inside it instead of ~35% with k = 1); k = 1 for narrow ones (many cells, where
    # the per-cell overhead dominates).
    k = 1 if 1.0 / radius >= 16 else 3
    G = max(1, min(int(np.floor(k / radius)), 4096 if d == 1 else 512))
    order, offsets = _cell_ranges(Z_fit, G)
    Zs = Z_fit[order]
    Ts = np.column_stack([np.ones(Z_fit.shape[0]), T_fit[order]])  # [1, t1, t2]
    q_cells = _cells(Z_query, G)
    q_order = np.argsort(q_cells, kind="stable")
    q_bounds = np.searchsorted(q_cells[q_order], np.arange(G**d + 1))
    scale = -0.5 / b**2
    cutoff = scale * radius**2
    sums = np.zeros((Z_query.shape[0], 3))
    for cell in np.flatnonzero(np.diff(q_bounds)):
        rows = q_order[q_bounds[cell] : q_bounds[cell + 1]]
        if d == 1:
            ranges = [(offsets[max(cell - k, 0)], offsets[min(cell + k, G - 1) + 1])]
        else:
            i, j = divmod(int(cell), G)
            lo_j, hi_j = max(j - k, 0), min(j + k, G - 1)
            rows_i = range(max(i - k, 0), min(i + k + 1, G))
            ranges = [(offsets[r * G + lo_j], offsets[r * G + hi_j + 1]) for r in rows_i]
        pieces = [np.arange(a, z) for a, z in ranges if z > a]
        if not pieces:
            continue  # no fitted sample near this cell: global mean below
        cand = np.concatenate(pieces)
        Zc, Tc = Zs[cand], Ts[cand]
        # scale |q - p|^2 = scale |q|^2 + scale |p|^2 - 2 scale q.p as ONE product A @ B.T, with
        # coordinates centred on the candidates' mean (so the expansion loses no precision)
        centre = Zc.mean(axis=0)
        Pc = Zc - centre
        B = np.column_stack([(-2.0 * scale) * Pc, np.ones(cand.size), scale * (Pc * Pc).sum(axis=1)])
        step = max(1, _BLOCK // cand.size)
        for start in range(0, rows.size, step):
            r = rows[start : start + step]
            Qc = Z_query[r] - centre
            A = np.column_stack([Qc, scale * (Qc * Qc).sum(axis=1), np.ones(r.size)])
            E = A @ B.T  # -|q - p|^2 / (2 b^2)
            np.minimum(E, 0.0, out=E)  # rounding can make the expansion slightly positive
            np.copyto(E, -np.inf, where=E < cutoff)  # truncation at 5 b
            np.exp(E, out=E)
            sums[r] = E @ Tc
    out = np.tile(T_fit.mean(axis=0), (Z_query.shape[0], 1))
    hit = sums[:, 0] > 0
    out[hit] = sums[hit, 1:] / sums[hit, :1]
    return out


#: Above this many kernel weights (fitted rows x queries x the kernel's share of the square) the
#: Nadaraya-Watson sums are computed on a grid (:func:`_nw_grid_predict`), with a certified bound.
NW_EXACT_WEIGHTS = 3 * 10**8
#: Grid spacing of the grid method, in kernel bandwidths, and the largest grid per axis.
NW_GRID_STEP = 1.0 / 32
NW_GRID_MAX = {1: 1 << 20, 2: 2048}


def _nw_weights_estimate(n_fit, n_query, b, d):
    """Kernel weights the exact method forms: rows x queries x the kernel support's share."""
    share = min(1.0, 10.0 * b) if d == 1 else min(1.0, np.pi * (NW_TRUNCATION * b) ** 2)
    return float(n_fit) * float(n_query) * share


def _linear_deposit(Z, G):
    """Corner nodes and (bi)linear weights of each point on the grid of ``G`` cells per axis."""
    t = Z * G
    lo = np.clip(np.floor(t).astype(np.intp), 0, G - 1)
    frac = t - lo
    return lo, frac


def _corners(lo, frac, G):
    """Flat node index and weight of each of the ``2^d`` corners: lists of arrays."""
    d = lo.shape[1]
    idx, wts = [], []
    for corner in range(1 << d):
        flat = np.zeros(lo.shape[0], dtype=np.intp)
        w = np.ones(lo.shape[0])
        for j in range(d):
            up = (corner >> j) & 1
            flat = flat * (G + 1) + lo[:, j] + up
            w = w * (frac[:, j] if up else 1.0 - frac[:, j])
        idx.append(flat)
        wts.append(w)
    return idx, wts


def _radial_kernel(values, G, d):
    """``values(r)`` (r in units of the data) on the node offsets of the grid: an odd-sized array."""
    R = int(np.ceil(values.support * G))
    off = np.arange(-R, R + 1) / G
    if d == 1:
        r = np.abs(off)
    else:
        r = np.sqrt(off[:, None] ** 2 + off[None, :] ** 2)
    return values(r)


class _Kernel:
    """The truncated Gaussian of bandwidth ``b``."""

    def __init__(self, b):
        self.b = b
        self.support = NW_TRUNCATION * b

    def __call__(self, r):
        return np.where(r <= self.support, np.exp(-0.5 * (r / self.b) ** 2), 0.0)


class _ErrorKernel:
    """A bound ``E(v)`` of ``|K~ - K|`` for every pair whose grid nodes differ by ``v``.

    For a pair at ``u = q - x`` the grid weight is ``K~ = E[K(u - D)]`` over the corners of both
    points (``D`` their offset, ``E[D] = 0``, ``|D| <= Dm = 2 sqrt(d) delta``, ``E|D|^2 <= V =
    d delta^2 / 2``). With ``s = (|D|^2 - 2 u.D) / (2 b^2)``, ``K(u - D) = K(u) e^{-s}``, and
    ``1 - E[s] <= E[e^{-s}] <= 1 + E[s^2] e^{s_max} / 2``: the relative error lies in
    ``[-V / (2 b^2), V (Dm + 2|u|)^2 e^{s_max} / (8 b^4)]``, ``s_max = (Dm^2 + 2|u| Dm) / (2 b^2)``,
    while every corner pair lies inside the truncation radius (``|u| <= 5 b - Dm``); a pair
    nearer the radius has both weights below ``exp(-(5 b - 2 Dm)^2 / (2 b^2))``, and one beyond
    ``5 b + Dm`` none. ``E(v)`` is the supremum of these bounds over ``|u - v| <= Dm`` (a pair
    whose nodes differ by ``v`` has ``|u - v| <= Dm``): the kernel's largest value times the
    relative bound's largest value on that ball, plus the near-radius term where the ball
    reaches it.
    """

    def __init__(self, b, delta, d):
        self.b = b
        self.Dm = 2.0 * np.sqrt(d) * delta
        self.V = d * delta**2 / 2.0
        self.support = NW_TRUNCATION * b + 2.0 * self.Dm

    def __call__(self, r):
        b, Dm, V = self.b, self.Dm, self.V
        inner = np.maximum(r - Dm, 0.0)  # the smallest |u| of the ball
        outer = r + Dm  # the largest
        k_max = np.exp(-0.5 * (inner / b) ** 2)
        s_max = (Dm**2 + 2.0 * outer * Dm) / (2.0 * b**2)
        rel = np.maximum(V / (2.0 * b**2), V * (Dm + 2.0 * outer) ** 2 * np.exp(s_max) / (8.0 * b**4))
        radius = NW_TRUNCATION * b
        interior = inner <= radius - Dm
        near = (outer > radius - Dm) & (inner <= radius + Dm)
        tail = np.exp(-0.5 * (max(radius - 2.0 * Dm, 0.0) / b) ** 2)
        return np.where(interior, k_max * rel, 0.0) + np.where(near, tail, 0.0)


def _nw_grid_predict(Z_fit, T_fit, Z_query, b, G):
    """Nadaraya-Watson sums on a grid of ``G`` cells per axis, with a certified error bound.

    The fitted rows are deposited (bi)linearly on the ``(G + 1)^d`` nodes, convolved (FFT) with
    the truncated Gaussian sampled at the node offsets, and read back at each query by the same
    interpolation; the error kernel of :class:`_ErrorKernel`, convolved the same way, bounds
    ``sum_i |K~_i - K_i|`` of each query, hence its fits: with ``D'`` the grid's kernel mass at
    the query, ``|eta~ - eta| = |sum (K~_i - K_i)(t_i - eta)| / D' <= Err / D'`` (targets in
    [0, 1]; the bound is capped at 1).

    Returns
    -------
    pred : ndarray of shape (q, 2)
        The fits (the global mean where the grid's kernel mass is zero).
    bound : ndarray of shape (q,)
        The bound of ``|pred - exact|`` for both fits.
    """
    from scipy.signal import fftconvolve

    d = Z_fit.shape[1]
    shape = (G + 1,) * d
    lo, frac = _linear_deposit(Z_fit, G)
    idx, wts = _corners(lo, frac, G)
    size = (G + 1) ** d
    channels = np.empty((4, size))
    Tc = np.column_stack([np.ones(Z_fit.shape[0]), T_fit])
    ids = np.concatenate(idx)
    for c in range(3):
        channels[c] = np.bincount(ids, weights=np.concatenate([w * Tc[:, c] for w in wts]), minlength=size)
    channels[3] = channels[0]
    kern = _radial_kernel(_Kernel(b), G, d)
    err = _radial_kernel(_ErrorKernel(b, 1.0 / G, d), G, d)
    grids = channels.reshape((4, *shape))
    axes = tuple(range(1, d + 1))
    smooth = fftconvolve(grids[:3], kern[None], mode="same", axes=axes).reshape(3, size)
    bound_mass = fftconvolve(grids[3:], err[None], mode="same", axes=axes).reshape(size)
    qlo, qfrac = _linear_deposit(Z_query, G)
    qidx, qwts = _corners(qlo, qfrac, G)
    sums = sum(w[:, None] * smooth[:, i].T for i, w in zip(qidx, qwts, strict=True))
    errq = sum(w * bound_mass[i] for i, w in zip(qidx, qwts, strict=True))
    # the FFT's own rounding: a few ulps of the largest grid sum, per query
    errq = np.maximum(errq, 0.0) + 1e-12 * float(Z_fit.shape[0])
    out = np.tile(T_fit.mean(axis=0), (Z_query.shape[0], 1))
    mass = sums[:, 0]
    hit = mass > 0
    out[hit] = sums[hit, 1:] / mass[hit, None]
    bound = np.ones(Z_query.shape[0])
    bound[hit] = np.minimum(1.0, errq[hit] / mass[hit])
    return out, bound


def _nw_auto(Z_fit, T_fit, Z_query, b):
    """Exact Nadaraya-Watson, or the grid method above ``NW_EXACT_WEIGHTS`` weights.

    Returns ``(pred, bound, info)``: the bound of every query's error (zeros when exact) and the
    method's name and grid spacing.
    """
    d = Z_fit.shape[1]
    if _nw_weights_estimate(Z_fit.shape[0], Z_query.shape[0], b, d) <= NW_EXACT_WEIGHTS:
        return _nw_predict(Z_fit, T_fit, Z_query, b), np.zeros(Z_query.shape[0]), {"method": "exact"}
    G = int(min(NW_GRID_MAX[d], np.ceil(1.0 / (NW_GRID_STEP * b))))
    pred, bound = _nw_grid_predict(Z_fit, T_fit, Z_query, b, G)
    return pred, bound, {"method": "grid", "grid_spacing": 1.0 / G}


@validate_params(
    {
        "method": [StrOptions({"bucketing", "nadaraya_watson"})],
        "Z_fit": ["array-like"],
        "T_fit": ["array-like"],
        "Z_query": ["array-like"],
        "c": POSITIVE_REAL,
        "h": BANDWIDTH,
    },
    prefer_skip_nested_validation=True,
)
def baseline_predict(method, Z_fit, T_fit, Z_query, c, h):
    """The fitted functions of a baseline at query points, clipped to [0, 1].

    Parameters
    ----------
    method : {"bucketing", "nadaraya_watson"}
        The baseline.
    Z_fit : ndarray of shape (n, 2)
        The fitting scores on the unit square (``sigma2`` multiplied by 4, as
        :func:`baseline_ce2` maps them).
    T_fit : ndarray of shape (n, r)
        The fitted targets (``t1``, ``t2``).
    Z_query : ndarray of shape (q, 2)
        The query points, mapped as ``Z_fit``.
    c : float
        The baseline's constant (cells ``K`` or kernel bandwidth from ``c``, ``n`` and ``h``).
    h : float
        The sech bandwidth.

    Returns
    -------
    ndarray of shape (q, r)
        The cell means (bucketing) or kernel averages (Nadaraya-Watson) of the targets.
    """
    n = Z_fit.shape[0]
    if method == "bucketing":
        pred = _bucketing_predict(Z_fit, T_fit, Z_query, n_buckets(c, n, h))
    else:
        # the (rows x candidates) @ (candidates x 3) products are skinny: one BLAS thread is
        # faster than the default on a loaded machine (docs/benchmarks/ce2_baselines.md)
        with one_blas_thread():
            pred, _, _ = _nw_auto(Z_fit, T_fit, Z_query, nw_bandwidth(c, n, h))
    return np.clip(pred, 0.0, 1.0)  # the function class of the estimator: values in [0, 1]


# ----------------------------------------------------------------------------------------------
# selection of c
# ----------------------------------------------------------------------------------------------
def _select_c(method, Z, T, h, validation_fraction, random_state):
    n = Z.shape[0]
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    n_val = int(np.clip(round(validation_fraction * n), 1, n - 1))
    val, fit = perm[:n_val], perm[n_val:]
    n_fit = fit.size
    losses = {}

    def loss(c):
        if c not in losses:
            pred = baseline_predict(method, Z[fit], T[fit], Z[val], c, h)
            losses[c] = float(np.mean(np.sum((pred - T[val]) ** 2, axis=1)))
        return losses[c]

    def best():  # smallest loss; ties go to the smaller c
        return min(losses, key=lambda c: (losses[c], c))

    for c in C_GRID:
        loss(c)
    if method == "bucketing":
        # extend the grid dyadically while the best c sits on its boundary and K still changes
        for _ in range(_MAX_EXTENSIONS):
            c_best = best()
            if c_best == min(losses):
                c_new = c_best / 2.0
            elif c_best == max(losses):
                c_new = c_best * 2.0
            else:
                break
            if n_buckets(c_new, n_fit, h) == n_buckets(c_best, n_fit, h):
                break  # K is clipped at 2 or 200: the extension cannot change the fit
            loss(c_new)
            if best() != c_new:
                break
    return best(), dict(sorted(losses.items()))


# ----------------------------------------------------------------------------------------------
# public function
# ----------------------------------------------------------------------------------------------
def _check_target(t, name, n):
    t = as_float_array(t, name, ndim=(1,))
    reject_nonfinite(t, name)
    if t.min() < 0 or t.max() > 1:
        raise ValueError(f"{name} must lie in [0, 1]; got values in [{t.min():.6g}, {t.max():.6g}].")
    return t


@validate_params(
    {
        "scores": ["array-like"],
        "t1": ["array-like"],
        "t2": ["array-like"],
        "method": [StrOptions({"bucketing", "nadaraya_watson"})],
        "bandwidth": BANDWIDTH,
        "c": [StrOptions({"auto"}), *POSITIVE_REAL],
        "validation_fraction": PROBABILITY_OPEN,
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def baseline_ce2(
    scores,
    t1,
    t2,
    *,
    method,
    bandwidth,
    c="auto",
    validation_fraction=0.3,
    random_state=None,
):
    """Estimate CE2 with a baseline regression: bucketing or Nadaraya-Watson.

    Both baselines regress ``t1`` and ``t2`` on the scores, after mapping the rectangle
    ``R = [0, 1] x [0, 1/4]`` onto the unit square (``sigma2`` multiplied by 4):

    - ``"bucketing"``: ``K x K`` equal cells with ``K = clip(ceil(c (n / h^2)^{1/4}), 2, 200)``;
      the fit is the mean of the targets in the cell of the score.
    - ``"nadaraya_watson"``: isotropic Gaussian kernel of bandwidth ``b = c h^{1/2} n^{-1/4}``
      truncated at ``5 b`` (weights vanish beyond Euclidean distance ``5 b``). Exact while a fit
      needs at most ``NW_EXACT_WEIGHTS = 3e8`` kernel weights (rows x queries x the kernel's
      share of the square; the rate experiment's sizes); above, the kernel sums are computed on
      a grid of spacing ``b / 32`` (at most 2048 cells per axis): the rows deposited
      bilinearly, convolved by FFT, read back bilinearly, with an error kernel convolved beside
      them that bounds every fit's distance to the exact one (``ce2_error_bound``; see
      :func:`_nw_grid_predict`). The exact sums need ``~ 78 c^2 h n^{3/2}`` weights, the grid
      ``O(n + cells log cells)`` operations (times in ``docs/benchmarks/ce2_baselines.md``).

    Here ``n`` is the number of samples the regression is fitted on. Each fitted function is
    clipped to [0, 1] (the cell and kernel averages of targets in [0, 1] already are).

    Parameters
    ----------
    scores : array-like of shape (n, 2) or (n, 1)
        The (already perturbed) scores ``(m, sigma2)`` in ``R``, or ``m`` alone in [0, 1]. With
        ``m`` alone the regressions are one-dimensional (``K`` cells on [0, 1], the same
        formulas for ``K`` and ``b``) and ``sigma2`` is taken as 0, so the second term compares
        ``eta2`` with ``m^2``.
    t1 : array-like of shape (n,)
        Unbiased targets for ``E[Y | S]`` in [0, 1] (see
        :func:`skcal.votes.snapshot_targets`).
    t2 : array-like of shape (n,)
        Unbiased targets for ``E[f*^2 | S]`` in [0, 1].
    method : {"bucketing", "nadaraya_watson"}
        The baseline regression.
    bandwidth : float
        The sech bandwidth ``h > 0`` with which the scores were perturbed (it sets ``K``/``b``).
    c : "auto" or float, default="auto"
        The constant in ``K`` or ``b``. ``"auto"`` chooses it from ``C_GRID = (0.25, 0.5, 1, 2,
        4, 8)`` on a random held-out split, by the validation squared error of both regressions
        ``mean((eta1 - t1)^2 + (eta2 - t2)^2)`` (ties go to the smaller ``c``). For bucketing,
        when the best ``c`` is the smallest (largest) tried, ``c / 2`` (``2 c``) is tried next,
        repeatedly, while it improves the loss and still changes ``K`` (which is clipped to
        [2, 200]).
    validation_fraction : float in (0, 1), default=0.3
        Share of the samples held out to choose ``c``. After the choice the regressions are
        **refitted on all n samples** with the chosen ``c`` (``K`` and ``b`` recomputed with the
        full ``n``), and CE2 is the plug-in average over all samples.
    random_state : int, RandomState instance or None, default=None
        Draws the held-out split.

    Returns
    -------
    dict
        ``"ce2"``, ``"term1"`` (``mean |eta1 - m|``), ``"term2"`` (``mean |eta2 - v|``), ``"c"``
        (the constant used), ``"eta1"``, ``"eta2"`` (the final fits at every score, arrays of
        shape (n,)), ``"validation_loss"`` (dict mapping each ``c`` tried to its loss; empty
        when ``c`` is given), and ``"n_cells"`` (``K``) for bucketing or
        ``"kernel_bandwidth"`` (``b``) for Nadaraya-Watson, with ``"nw_method"`` (``"exact"`` or
        ``"grid"``), ``"grid_spacing"`` (``None`` when exact) and ``"ce2_error_bound"`` (a bound
        of ``|ce2 - exact ce2|`` for the final fit: 0 when exact; the choice of ``c`` compares
        validation losses computed the same way).

    Notes
    -----
    Empty neighbourhoods: a query whose cell holds no fitted sample (bucketing) or that has no
    fitted sample within ``5 b`` (Nadaraya-Watson) gets the global mean of the fitted targets.
    This only happens on the held-out split; in the final fit every score is its own neighbour.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.ce2_baselines import baseline_ce2
    >>> scores = np.array([[0.1, 0.0], [0.2, 0.0], [0.9, 0.1], [0.8, 0.1]])
    >>> t1 = np.array([0.0, 0.5, 1.0, 1.0])
    >>> t2 = np.array([0.0, 0.0, 1.0, 1.0])
    >>> res = baseline_ce2(scores, t1, t2, method="bucketing", bandwidth=0.25, c=0.25)
    >>> res["n_cells"], res["eta1"].tolist()
    (2, [0.25, 0.25, 1.0, 1.0])
    >>> round(res["ce2"], 6)
    0.225
    """
    S = check_scores(scores)
    n = S.shape[0]
    t1 = _check_target(t1, "t1", n)
    t2 = _check_target(t2, "t2", n)
    check_consistent_length(scores=S, t1=t1, t2=t2)
    h = float(bandwidth)

    Z = S.copy()
    if Z.shape[1] == 2:
        Z[:, 1] *= 4.0  # both axes of unit length
    T = np.column_stack([t1, t2])

    if isinstance(c, str):
        if n < 2:
            raise ValueError(f"c='auto' needs at least 2 samples to hold some out; got {n}.")
        c_used, losses = _select_c(method, Z, T, h, float(validation_fraction), random_state)
    else:
        c_used, losses = float(c), {}

    if method == "nadaraya_watson":
        with one_blas_thread():
            eta, bound, info = _nw_auto(Z, T, Z, nw_bandwidth(c_used, n, h))
        eta = np.clip(eta, 0.0, 1.0)
    else:
        eta = baseline_predict(method, Z, T, Z, c_used, h)
    m = S[:, 0]
    v = m**2 + (S[:, 1] if S.shape[1] == 2 else 0.0)
    term1 = float(np.mean(np.abs(eta[:, 0] - m)))
    term2 = float(np.mean(np.abs(eta[:, 1] - v)))
    out = {
        "ce2": term1 + term2,
        "term1": term1,
        "term2": term2,
        "c": c_used,
        "eta1": eta[:, 0],
        "eta2": eta[:, 1],
        "validation_loss": losses,
    }
    if method == "bucketing":
        out["n_cells"] = n_buckets(c_used, n, h)
    else:
        out["kernel_bandwidth"] = nw_bandwidth(c_used, n, h)
        out["nw_method"] = info["method"]
        out["grid_spacing"] = info.get("grid_spacing")
        # |eta~ - eta| <= bound at every score, so each term moves by at most its mean
        out["ce2_error_bound"] = 2.0 * float(bound.mean())
    return out
