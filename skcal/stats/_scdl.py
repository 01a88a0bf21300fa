"""Mergeable statistics of SCDL: soft-bin masses on a fixed finest grid.

SCDL, the soft-binned calibration decision loss, is defined in *Testable and Actionable
Calibration for Full Swap Regret* (see :mod:`skcal.scdl`).

The statistics of SCDL are, for the finest dyadic grid ``{0, 1/M, ..., 1}``, the soft-bin
masses ``W_i = sum_s w_s w_i(p_s)`` and ``A_i = sum_s w_s w_i(p_s) y_s`` (``i = 0..M``), plus the
total weight, the sum of squared weights (for Kish's effective sample size, which the default
grid rule needs) and the row count. They are sums over rows, so chunks merge by addition.

Every coarser dyadic grid follows exactly: the hat function of node ``i`` on the grid ``m`` is
``h^{2m}_{2i} + (h^{2m}_{2i-1} + h^{2m}_{2i+1}) / 2`` (a piecewise-linear function with nodes on the
coarse grid is piecewise linear on the fine one, with values 1, 1/2, 0 at the fine nodes), so
``W^m_i = W^{2m}_{2i} + (W^{2m}_{2i-1} + W^{2m}_{2i+1}) / 2`` and the same for ``A``. Folding every
grid costs ``O(M)`` in total.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from skcal._compat import validate_params
from skcal._compiled import compiled
from skcal._constraints import (
    MAX_BINS_LIMIT,
    POS_LABEL,
    POSITIVE_INT,
    SCDL_MAX_BINS,
    Integral,
    PowerOfTwoInterval,
    Real,
    StrictInterval,
)
from skcal._docstrings import fill
from skcal.binning import hat_deposit, hat_neighbours
from skcal.stats._base import (
    VALIDATED_ROWS,
    VALIDATED_ROWS_DOCS,
    BinaryStatistics,
    effective_sample_size,
    kish_size,
)
from skcal.stats._replicate import ReplicatePlan, add_sparse_sums
from skcal.stats._scdl_rules import (
    AUTO_FACTOR,
    SCDLCurve,
    default_max_bins,
    max_supported_bins,
    resolve_max_bins,
    theory_max_bins,
)

__all__ = [
    "AUTO_FACTOR",
    "DEFAULT_STATISTICS_MAX_BINS",
    "TIE_RTOL",
    "SCDLCurve",
    "ScdlStatistics",
    "coarsen",
    "default_max_bins",
    "masses_to_moments",
    "max_supported_bins",
    "binary_node_deposit",
    "node_deposit",
    "resolve_max_bins",
    "scdl_on_grid",
    "scdl_replicates",
    "scfdl",
    "theory_max_bins",
]

#: Finest grid of a :class:`ScdlStatistics` built without ``max_bins`` (state: 2 x 65,537 floats).
DEFAULT_STATISTICS_MAX_BINS = 1 << 16
#: Relative tolerance within which two grids tie for the minimum of ``max(SCDL_m, 1/m)``.
TIE_RTOL = 1e-12

#: A dyadic grid the statistics can fold to exactly.
_FINEST_GRID = [PowerOfTwoInterval(2, MAX_BINS_LIMIT)]
#: The arguments of the searches of validated rows (``max_bins``: the grid rule).
_VALIDATED_SEARCH = {**VALIDATED_ROWS, "max_bins": SCDL_MAX_BINS, "pos_label": POS_LABEL}


# ---------------------------------------------------------------------------------------------
# soft-bin masses and SCFDL
# ---------------------------------------------------------------------------------------------
#: The parameters and returns of the two deposits (filled in by :func:`fill`).
_DEPOSIT_DOCS = {
    name: f"""Parameters
----------
p : ndarray of shape (n,)
    Validated probabilities in [0, 1].
y : ndarray of shape (n,)
    {labels}
w : ndarray of shape (n,) or None
    Validated weights (``None``: unit weights).
m : int
    The grid size (any integer >= 1).

Returns
-------
W : ndarray of shape (m + 1,)
    The weight masses.
A : ndarray of shape (m + 1,)
    The label masses."""
    for name, labels in [
        ("parameters", "Labels in {0, 1} (or any real targets)."),
        ("binary_parameters", "Labels in {0, 1} (float64, validated)."),
    ]
}


@fill(**_DEPOSIT_DOCS)
def node_deposit(p, y, w, m):
    """Soft-bin masses ``W_i`` and ``A_i`` (``i = 0..m``) of the rows ``(p, y, w)`` on the grid ``m``.

    ``W_i = sum_s w_s w_i(p_s)`` and ``A_i = sum_s w_s w_i(p_s) y_s`` with the hat functions
    ``w_i(p) = max(0, 1 - |m p - i|)`` (:func:`skcal.binning.hat_deposit`).

    {parameters}

    Examples
    --------
    >>> import numpy as np
    >>> W, A = node_deposit(np.array([0.25, 1.0]), np.array([1.0, 0.0]), None, 2)
    >>> W.tolist(), A.tolist()
    ([0.5, 0.5, 1.0], [0.5, 0.5, 0.0])
    """
    wt = np.ones_like(p) if w is None else w
    W, A = hat_deposit(p, m, np.stack([wt, wt * y]))
    return W, A


#: Rows deposited per step of :func:`binary_node_deposit` (its temporaries stay a few MB).
_DEPOSIT_CHUNK = 1 << 15


@fill(**_DEPOSIT_DOCS)
def binary_node_deposit(p, y, w, m):
    """:func:`node_deposit` for labels ``y`` in {0, 1}, in two bincounts per chunk of rows.

    Each row's cell ``lo`` (left node) is offset by ``m + 1`` when ``y = 1``, and per offset cell
    one bincount adds the weights and one the weights times the right node's share ``frac``:
    node ``i`` then receives ``sum(w) - sum(w frac)`` from its own cell and ``sum(w frac)`` from
    the cell on its left, for ``W`` (both halves) and ``A`` (the ``y = 1`` half). The values
    equal :func:`node_deposit`'s up to round-off. The rows go in chunks of 32,768, so the
    temporaries never exceed a few MB whatever the number of rows. From ``2^16`` rows on, with
    numba installed, and at any size once numba is imported, the per-cell sums are one compiled
    pass instead (:func:`skcal._scdl_kernel.binary_cell_sums`; equal up to the order of the
    additions).

    {binary_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> p, y = np.array([0.25, 1.0, 0.6]), np.array([1.0, 0.0, 1.0])
    >>> [np.allclose(a, b) for a, b in zip(binary_node_deposit(p, y, None, 4), node_deposit(p, y, None, 4))]
    [True, True]
    """
    n = p.shape[0]
    kernel = _deposit_kernel(n)
    if kernel is not None:
        total, share = kernel.binary_cell_sums(*_kernel_rows(p, y, w), int(m), w is not None)
        return _fold_cell_sums(total, share, m)
    size = 2 * (m + 1)
    total = np.zeros(size)
    share = np.zeros(size)
    step = min(n, _DEPOSIT_CHUNK)
    # buffers made once and reused: fresh chunk-sized arrays would be page-faulted every chunk
    t_buf, lo_buf, off_buf = np.empty(step), np.empty(step), np.empty(step)
    ids_buf = np.empty(step, dtype=np.intp)
    for start in range(0, n, step):
        k = min(n, start + step) - start
        t, lo, off, ids = t_buf[:k], lo_buf[:k], off_buf[:k], ids_buf[:k]
        np.multiply(p[start : start + k], m, out=t)
        np.floor(t, out=lo)
        np.minimum(lo, m - 1, out=lo)  # p = 1 sits at frac = 1 of the last cell
        t -= lo  # frac, the right node's share (as hat_neighbours computes it)
        np.multiply(y[start : start + k], m + 1, out=off)
        lo += off  # the y = 1 half of the cells (exact: small integers)
        np.copyto(ids, lo, casting="unsafe")
        if w is None:
            total += np.bincount(ids, minlength=size)
        else:
            wc = w[start : start + k]
            total += np.bincount(ids, weights=wc, minlength=size)
            t *= wc
        share += np.bincount(ids, weights=t, minlength=size)
    return _fold_cell_sums(total, share, m)


def _deposit_kernel(n):
    """:mod:`skcal._scdl_kernel` for a deposit of ``n`` rows, or None (numpy's deposit).

    From ``_KERNEL_MIN_ROWS`` rows on when numba is installed; below it only where numba is
    loaded already (no temporaries of ``n`` rows, and no import of numba for a small call).
    """
    return compiled("scdl", size=n, min_size=_KERNEL_MIN_ROWS)


def _kernel_rows(p, y, w):
    """``(p, y, w)`` as the compiled deposit reads them, copied only where they must be."""
    pc = np.ascontiguousarray(p, dtype=np.float64)
    # labels as they come when they are int64 or float64 (no n-row copy), else as float64
    keep = y.dtype in (np.int64, np.float64) and y.flags.c_contiguous
    yc = y if keep else np.ascontiguousarray(y, np.float64)
    wc = pc if w is None else np.ascontiguousarray(w, dtype=np.float64)  # not read unweighted
    return pc, yc, wc


def _fold_cell_sums(total, share, m):
    """Node masses ``(W, A)`` from per offset cell total weight and right-node share."""
    own = total - share
    out = own.reshape(2, m + 1)
    out[:, 1:] += share.reshape(2, m + 1)[:, :-1]
    W = out[0] + out[1]
    return W, out[1].copy()


#: From this many masses (replicates x nodes) on, the replicates' grid maxima are compiled when numba
#: is installed (:func:`skcal._scdl_kernel.scdl_grid_maxima`: no ``(R, m + 1)`` temporaries).
_KERNEL_MIN_GRID = 1 << 12

#: From this many rows on, the compiled deposit is used when numba is installed: below, numpy is
#: about as fast and the first call need not import numba (once per process); below
#: it the compiled deposit is used where numba is imported already (a report, a bootstrap or a
#: test has run), since it needs no temporaries of ``n`` rows (numpy's take about 32 bytes a row)
_KERNEL_MIN_ROWS = 1 << 16


def coarsen(V):
    """Fold masses on the grid ``2m`` to the grid ``m`` (last axis of ``V``: ``2m + 1`` entries).

    The hat function of node ``i`` on the grid ``m`` is ``h_{2i} + (h_{2i-1} + h_{2i+1}) / 2`` on
    the grid ``2m``, so the coarse masses are exact sums of the fine ones.

    Parameters
    ----------
    V : ndarray of shape (..., 2m + 1)
        Masses on the grid ``2m``.

    Returns
    -------
    ndarray of shape (..., m + 1)
        Masses on the grid ``m``.

    Examples
    --------
    >>> import numpy as np
    >>> coarsen(np.array([1.0, 2.0, 3.0, 4.0, 5.0])).tolist()
    [2.0, 6.0, 7.0]
    """
    even = V[..., 0::2].copy()
    odd = 0.5 * V[..., 1::2]
    even[..., :-1] += odd
    even[..., 1:] += odd
    return even


def masses_to_moments(W, A, total):
    """``pi_i = W_i / total`` and ``a_i = A_i / total``, with round-off clipped to ``0 <= a <= pi``.

    Parameters
    ----------
    W : ndarray of shape (m + 1,)
        Soft-bin weight masses (:func:`node_deposit`).
    A : ndarray of shape (m + 1,) or (R, m + 1)
        Soft-bin label masses (one row per replicate of the labels).
    total : float
        The total weight.

    Returns
    -------
    pi : ndarray of shape (m + 1,)
        ``E[w_i(p)]``.
    a : ndarray of the shape of ``A``
        ``E[w_i(p) y] = pi_i q_i``.
    """
    pi = W / total
    a = A / total
    np.maximum(pi, 0.0, out=pi)
    np.clip(a, 0.0, pi, out=a)
    return pi, a


@validate_params({"pi": ["array-like"], "a": ["array-like"]}, prefer_skip_nested_validation=True)
def scfdl(pi, a):
    """``SCFDL_{m,i}`` for every ``i = 0..m`` from ``pi_j`` and ``a_j = pi_j q_j``, in ``O(m)``.

    Row ``i`` gains ``(a_j - pi_j (i + 1)/m)_+`` from every bin ``j <= i`` and
    ``(pi_j i/m - a_j)_+`` from every bin ``j > i``; each is linear in ``i`` on an interval of
    rows, so all rows follow from two difference arrays and a cumulative sum.

    Parameters
    ----------
    pi : ndarray of shape (m + 1,) or (R, m + 1)
        Bin masses.
    a : ndarray of shape (m + 1,) or (R, m + 1)
        ``pi_j q_j`` (one row per replicate, as the calibration test uses it).

    Returns
    -------
    ndarray of the shape of ``a``
        ``SCFDL_{m,i}``; SCDL_m is its maximum over ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import scfdl
    >>> scfdl(np.array([0.5, 0.0, 0.5]), np.array([0.5, 0.0, 0.0])).round(6).tolist()
    [0.25, 0.25, 0.0]
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


@validate_params(
    {"p": ["array-like"], "y": ["array-like"], "w": ["array-like", None], "m": POSITIVE_INT},
    prefer_skip_nested_validation=True,
)
def scdl_on_grid(p, y, w, m):
    """``(SCDL_m, pi, a)`` of validated rows on an arbitrary grid ``m >= 1`` (not necessarily dyadic).

    The soft-bin masses of the rows on ``{0, 1/m, ..., 1}`` and the largest :func:`scfdl`:
    what :class:`skcal.rounding.SoftBinRounder` measures on its own grid (a dyadic grid folds
    from :class:`ScdlStatistics` instead). The arrays are not checked (validate them with
    :func:`skcal._validation.check_binary_probabilities`).

    Parameters
    ----------
    p : ndarray of shape (n,)
        Validated probabilities in [0, 1].
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    w : ndarray of shape (n,) or None
        Validated weights with a positive total.
    m : int
        The grid size.

    Returns
    -------
    scdl_m : float
        ``max_i SCFDL_{m,i}``.
    pi : ndarray of shape (m + 1,)
        Bin masses.
    a : ndarray of shape (m + 1,)
        ``pi_i q_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import scdl_on_grid
    >>> round(scdl_on_grid(np.array([0.2, 0.8]), np.array([1.0, 0.0]), None, 4)[0], 6)
    0.4
    """
    total = float(p.shape[0]) if w is None else float(w.sum())
    W, A = node_deposit(p, y, w, m)
    pi, a = masses_to_moments(W, A, total)
    return float(scfdl(pi, a).max()), pi, a


# ---------------------------------------------------------------------------------------------
# the search and its result
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _level_layout(M):
    """The dyadic grids ``2, 4, ..., M`` and where each starts in their concatenated nodes."""
    grids = 2 ** np.arange(1, int(M).bit_length())
    starts = np.concatenate([[0], np.cumsum(grids + 1)[:-1]])
    grids.setflags(write=False)
    starts.setflags(write=False)
    return grids, starts


@functools.lru_cache(maxsize=16)
def _level_index(M):
    """Per node of the concatenated grids ``2 .. M``: its grid ``m``, its index ``j`` in it, and
    the offset of its grid's difference array (``m + 2`` entries a grid) in the concatenation."""
    grids, starts = _level_layout(M)
    sizes = grids + 1
    m = np.repeat(grids, sizes)
    j = np.arange(int(sizes.sum())) - np.repeat(starts, sizes)
    base = np.repeat(np.concatenate([[0], np.cumsum(grids + 2)[:-1]]), sizes)
    for arr in (m, j, base):
        arr.setflags(write=False)
    return m, j, base, int((grids + 2).sum())


def _scfdl_levels(pi, a, M):
    """:func:`scfdl` of every dyadic grid ``2 .. M`` at once, on their concatenated nodes.

    The same difference arrays as :func:`scfdl`, one per grid, laid end to end: four bincounts
    (the two ends of each node's two intervals) fill all of them and one cumulative sum (less
    its value where each grid starts) integrates them, so the whole search costs a few array
    operations instead of a few per grid. The values equal :func:`scfdl` per grid up to
    round-off. The temporaries are freed as soon as they are used: the search's working set is
    a few arrays of the ``2M`` nodes (about 15 KB at ``M = 128``, the grid of 1e3 rows).
    """
    if M <= 1 << 16:
        m, j, base, size = _level_index(M)
    else:  # not cached: the index arrays would hold 2 M entries each
        m, j, base, size = _level_index.__wrapped__(M)
    pos = pi > 0
    mq = m * a
    with np.errstate(invalid="ignore", divide="ignore"):
        mq /= pi
    mq[~pos] = 0.0
    pim = pi / m
    stop_a = np.ceil(mq).astype(np.intp)
    stop_a -= 1
    np.minimum(stop_a, m + 1, out=stop_a)
    sel_a = pos & (stop_a > j)
    start_b = np.floor(mq).astype(np.intp)
    del mq
    start_b += 1
    sel_b = pos & (start_b < j)
    del pos
    stop_a += base
    start_b += base
    at_j = base + j
    # each node's interval a adds (a - pi/m, -pi/m) from j on and takes them back from stop_a
    # on; interval b adds (-a, pi/m) from start_b on and takes them back from j on
    ca = a[sel_a] - pim[sel_a]
    # (an empty selection's bincount is int64 zeros: the accumulators are float from the start)
    dC = np.bincount(at_j[sel_a], weights=ca, minlength=size).astype(np.float64, copy=False)
    dC -= np.bincount(stop_a[sel_a], weights=ca, minlength=size)
    del ca
    cb = a[sel_b]
    dC -= np.bincount(start_b[sel_b], weights=cb, minlength=size)
    dC += np.bincount(at_j[sel_b], weights=cb, minlength=size)
    del cb
    sa = pim[sel_a]
    dS = np.bincount(stop_a[sel_a], weights=sa, minlength=size).astype(np.float64, copy=False)
    dS -= np.bincount(at_j[sel_a], weights=sa, minlength=size)
    del sa, stop_a, sel_a
    sb = pim[sel_b]
    dS += np.bincount(start_b[sel_b], weights=sb, minlength=size)
    dS -= np.bincount(at_j[sel_b], weights=sb, minlength=size)
    del sb, start_b, sel_b, pim
    # cumulative sums with a leading zero; each grid's sums start from zero, so what the grids
    # before it left (zero up to round-off) is subtracted: C[base + j + 1] - C[base]
    C = np.zeros(size + 1)
    np.cumsum(dC, out=C[1:])
    del dC
    S = np.zeros(size + 1)
    np.cumsum(dS, out=S[1:])
    del dS
    at_j += 1
    out = C[at_j]
    out -= C[base]
    del C
    slope = S[at_j]
    slope -= S[base]
    del S, at_j
    slope *= j
    out += slope
    return np.maximum(out, 0.0, out=out)


def _search(stats, max_bins):
    """The dyadic SCDL search from a :class:`ScdlStatistics` (:meth:`ScdlStatistics.curve`)."""
    s = stats.stats_
    total = float(s["sum_w"])
    n_rows = int(s["n_rows"])
    if n_rows == 0 or total <= 0:
        raise ValueError("The statistics hold no rows with positive weight; SCDL is undefined.")
    T = stats.n_effective_
    rule = "fixed" if isinstance(max_bins, (int, np.integer)) else ("auto" if max_bins is None else max_bins)
    wanted = resolve_max_bins(max_bins, T, n_rows)
    M = min(wanted, int(stats.max_bins))
    V = np.stack([s["W"], s["A"]])
    while V.shape[1] - 1 > M:
        V = coarsen(V)
    stack = [V]
    while stack[-1].shape[1] - 1 > 2:
        stack.append(coarsen(stack[-1]))
    stack.reverse()  # the grids 2, 4, ..., M
    flat = np.concatenate(stack, axis=1)
    del stack, V  # the search's working set stays a few arrays of the 2M nodes
    pi, a = masses_to_moments(flat[0], flat[1], total)
    del flat
    grids, starts = _level_layout(M)
    sc = _scfdl_levels(pi, a, M)
    values = np.maximum.reduceat(sc, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(pi > 0, a / np.where(pi > 0, pi, 1.0), np.nan)
    bounds = list(zip(starts.tolist(), (starts + grids + 1).tolist(), strict=True))
    pis = [pi[i:j] for i, j in bounds]
    qs = [q[i:j] for i, j in bounds]
    scfdls = [sc[i:j] for i, j in bounds]
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
        n_bins=grids.copy(),
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


class ScdlStatistics(BinaryStatistics):
    """Mergeable sufficient statistics of SCDL: soft-bin masses on the finest dyadic grid.

    ``update`` deposits the rows' soft-bin weights on the grid ``{0, 1/M, ..., 1}`` with
    ``M = max_bins``; every coarser dyadic grid is folded from it exactly, so :meth:`curve` and
    :meth:`compute` equal :func:`skcal.scdl.scdl_curve` / :func:`skcal.scdl.scdl_score` on all the
    rows (those functions compute through this object, built by ``from_validated``). The
    default grid rule depends on the sample size, which is known only at the end, so the finest
    grid is fixed at construction: the search runs on the dyadic grids up to
    ``min(rule(T), max_bins)``.

    Parameters
    ----------
    max_bins : int, default=65536
        The finest grid ``M`` (a power of two, at most ``2**24``). The state holds two arrays of
        ``M + 1`` floats. The default ``2**16`` covers the ``"auto"`` rule up to about
        ``T = 6.7e7`` effective rows; beyond it the search stops at ``M`` (and :meth:`curve`
        warns if that cap binds).
    pos_label : int, float, bool or str, default=None
        The positive class; give it when labels are not ``{0, 1}``, ``{-1, 1}`` or booleans
        (a chunk may hold only one class).

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded in.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import ScdlStatistics
    >>> from skcal.scdl import scdl_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)
    >>> a = ScdlStatistics().update(y[:1000], p[:1000])
    >>> b = ScdlStatistics().update(y[1000:], p[1000:])
    >>> bool(abs((a + b).compute() - scdl_score(y, p)) < 1e-12)
    True
    """

    _param_names = ("max_bins", "pos_label")
    _parameter_constraints: dict = {"max_bins": _FINEST_GRID, "pos_label": POS_LABEL}

    def __init__(self, *, max_bins=DEFAULT_STATISTICS_MAX_BINS, pos_label=None):
        self.max_bins = int(max_bins)
        self.pos_label = pos_label

    def _empty(self):
        M = self.max_bins
        return {
            "W": np.zeros(M + 1),
            "A": np.zeros(M + 1),
            "sum_w": np.zeros(()),
            "sum_w2": np.zeros(()),
            "n_rows": np.zeros((), dtype=np.int64),
        }

    def _sums(self, y, p, w):
        W, A = binary_node_deposit(p, y, w, self.max_bins)
        n = p.shape[0]
        return {
            "W": W,
            "A": A,
            "sum_w": np.array(float(n) if w is None else float(w.sum())),
            "sum_w2": np.array(float(n) if w is None else float(np.dot(w, w))),
            "n_rows": np.array(n, dtype=np.int64),
        }

    @classmethod
    @validate_params(
        {
            "n_rows": [StrictInterval(Integral, 1, None, closed="left")],
            "n_effective": [StrictInterval(Real, 0, None, closed="left"), None],
            "pos_label": POS_LABEL,
        },
        prefer_skip_nested_validation=True,
    )
    def for_rows(cls, n_rows, *, n_effective=None, pos_label=None):
        """Empty statistics whose finest grid is the ``"auto"`` rule's for ``n_rows`` rows.

        The grid :func:`skcal.scdl.scdl_score` searches up to on those rows, so the statistics of
        a resample of about ``n_rows`` rows search the same grids (a bootstrap's replicates).

        Parameters
        ----------
        n_rows : int
            The rows.
        n_effective : float, default=None
            Their effective sample size, the ``T`` of the rule (for weighted rows
            :func:`effective_sample_size`); ``None``: ``n_rows`` (unweighted rows).
        pos_label : int, float, bool, str or None, default=None
            The positive class.

        Returns
        -------
        ScdlStatistics
            The template.

        Examples
        --------
        >>> ScdlStatistics.for_rows(10_000).max_bins
        512
        """
        T = float(n_rows) if n_effective is None else float(n_effective)
        return cls(max_bins=resolve_max_bins("auto", T, int(n_rows)), pos_label=pos_label)

    @classmethod
    @validate_params(_VALIDATED_SEARCH, prefer_skip_nested_validation=True)
    @fill(**VALIDATED_ROWS_DOCS)
    def curve_validated(cls, y, p, sample_weight=None, *, max_bins="auto", pos_label=None):
        """The SCDL search on validated rows: :func:`skcal.scdl.scdl_curve` once its inputs are checked.

        The rows are deposited with :meth:`from_validated` on the finest grid the rule asks for
        (:func:`resolve_max_bins` of Kish's effective sample size), and :meth:`curve` searches it.
        The arrays are only read, so they may come from a validation with ``copy=False`` (as in
        :meth:`compute_validated`).

        Parameters
        ----------
        {validated_rows}
        max_bins : {"auto", "theory"}, int or None, default="auto"
            The grid rule of :func:`skcal.scdl.scdl_curve` (not the constructor's finest grid,
            which follows from the rule and the rows).
        {validated_pos_label}

        Returns
        -------
        SCDLCurve
            The whole search.

        Examples
        --------
        >>> import numpy as np
        >>> y, p = np.array([0.0, 1.0, 1.0, 0.0]), np.array([0.1, 0.9, 0.6, 0.4])
        >>> ScdlStatistics.curve_validated(y, p).n_bins.tolist()
        [2, 4, 8]
        """
        T = effective_sample_size(sample_weight, p.shape[0])
        M = resolve_max_bins(max_bins, T, p.shape[0])
        stats = cls.from_validated(y, p, sample_weight, max_bins=M, pos_label=pos_label)
        return _search(stats, max_bins)

    @classmethod
    @validate_params(_VALIDATED_SEARCH, prefer_skip_nested_validation=True)
    @fill(**VALIDATED_ROWS_DOCS)
    def compute_validated(cls, y, p, sample_weight=None, *, max_bins="auto", pos_label=None):
        """SCDL of validated rows: :meth:`curve_validated`'s ``scdl``, in one compiled call where
        the compiled deposit would be used.

        The deposit, the fold to node masses and the whole dyadic search run in
        :func:`skcal._scdl_kernel.scdl_of_rows` (the numpy search builds every grid's arrays for
        :class:`SCDLCurve`), with the numpy path's arithmetic operation for operation: the same
        value bit for bit, the same grid selected. Without numba, or below ``2^16`` rows before
        numba is imported, it is ``curve_validated(...).scdl``. :func:`skcal.scdl.scdl_score`
        computes through it.

        Parameters
        ----------
        {validated_rows}
        max_bins : {"auto", "theory"}, int or None, default="auto"
            The grid rule of :func:`skcal.scdl.scdl_score` (not the constructor's finest grid).
        {validated_pos_label}

        Returns
        -------
        float
            ``min_m max(SCDL_m, 1/m)`` over the searched dyadic grids.

        Examples
        --------
        >>> import numpy as np
        >>> y, p = np.array([0.0, 1.0, 1.0, 0.0]), np.array([0.1, 0.9, 0.6, 0.4])
        >>> ScdlStatistics.compute_validated(y, p)
        0.125
        """
        n = p.shape[0]
        kernel = _deposit_kernel(n)
        total = float(n) if sample_weight is None else float(sample_weight.sum())
        if kernel is None or n == 0 or not total > 0:  # the numpy search (and its errors)
            return cls.curve_validated(y, p, sample_weight, max_bins=max_bins, pos_label=pos_label).scdl
        M = resolve_max_bins(max_bins, effective_sample_size(sample_weight, n), n)
        pc, yc, wc = _kernel_rows(p, y, sample_weight)
        value, _, _ = kernel.scdl_of_rows(pc, yc, wc, int(M), sample_weight is not None, total, TIE_RTOL)
        return float(value)

    @property
    def n_effective_(self):
        """Kish's effective sample size ``(sum w)^2 / sum w^2`` of the rows folded in."""
        s = self.stats_
        return kish_size(s["sum_w"], s["sum_w2"])  # as effective_sample_size: the same T, bit for bit

    @validate_params({"n_bins": _FINEST_GRID}, prefer_skip_nested_validation=True)
    def grid_masses(self, n_bins):
        """Return ``(pi, a)`` on a dyadic grid ``n_bins <= max_bins``: ``pi_i`` and ``a_i = pi_i q_i``.

        Parameters
        ----------
        n_bins : int
            A power of two dividing ``max_bins``.

        Returns
        -------
        pi : ndarray of shape (n_bins + 1,)
            ``E[w_i(p)]``; sums to one.
        a : ndarray of shape (n_bins + 1,)
            ``E[w_i(p) y]``.
        """
        m = int(n_bins)
        if m > self.max_bins:
            raise ValueError(f"n_bins={m} exceeds the statistics' finest grid max_bins={self.max_bins}.")
        W, A = self.stats_["W"], self.stats_["A"]
        while W.shape[0] - 1 > m:
            W, A = coarsen(W), coarsen(A)
        return masses_to_moments(W, A, float(self.stats_["sum_w"]))

    @validate_params({"max_bins": SCDL_MAX_BINS}, prefer_skip_nested_validation=True)
    def curve(self, max_bins="auto"):
        """The SCDL search on the accumulated rows (see :func:`skcal.scdl.scdl_curve`).

        Parameters
        ----------
        max_bins : "auto", "theory" or int, default="auto"
            The grid rule, as in :func:`skcal.scdl.scdl_curve`; the search never goes past the
            statistics' own ``max_bins``.

        Returns
        -------
        SCDLCurve
            The whole search, with the selected grid and its unfloored ``SCDL_m``.
        """
        return _search(self, max_bins)

    def _compute(self):
        return self.curve().scdl

    def compute(self):
        """Return SCDL (the ``"auto"`` grid rule) of the accumulated rows.

        Returns
        -------
        float
            ``min_m max(SCDL_m, 1/m)`` over the searched dyadic grids.
        """
        return self._compute()

    # -- bootstrap replicates --------------------------------------------------------------
    def _replicate_plan(self, y, p, w, index=None):
        return _ScdlPlan(self, y, p, w)

    def _replicate_compute(self, stats):
        return scdl_replicates(stats, self.max_bins)

    def _grid_cells(self):
        return int(self.max_bins)

    def _grid_statistics(self, units, column):
        """The node masses: each unit's rows split between its two nodes by their sums of ``d``."""
        M = int(self.max_bins)
        lo, L, H = units.grid._nodes(M)
        base = (units.x[:, 0] * M - lo)[:, None]  # the unit's left edge in node steps from lo
        fw = base * units.S0 + M * units.Sd  # sum of the right node's share
        fa = base * units.Y0 + M * units.Sd_1
        W = L @ (units.S0 - fw) + H @ fw
        A = L @ (units.Y0 - fa) + H @ fa
        c = units.copies
        W, A = np.ascontiguousarray(W.T), np.ascontiguousarray(A.T)
        return {"W": W, "A": A, "sum_w": c, "sum_w2": c, "n_rows": units.n_rows}


class _ScdlPlan(ReplicatePlan):
    """Replicates of the soft-bin masses: each row's two nodes and weights are found once.

    A row of weight ``w`` adds ``w (1 - frac)`` to node ``lo`` and ``w frac`` to ``lo + 1``
    (``hat_deposit``), and the same to the label masses when ``y = 1``. As in
    :func:`binary_node_deposit` (labels in {0, 1}, as :func:`~skcal._validation.check_binary_chunk`
    gives them), the label picks the block of nodes a row adds to: two entries per row of one
    sparse product per tile, the masses of the rows with ``y = 0`` and of those with ``y = 1``
    side by side, whose sum is the total mass ``W`` and whose second half is the label mass
    ``A``. The sums accumulate as ``(nodes, replicates)`` and are transposed once.
    """

    def __init__(self, stats, y, p, w):
        self.stats, self.w = stats, w
        self.n_rows = p.shape[0]
        self.M = stats.max_bins
        lo, frac = hat_neighbours(p, self.M)
        n = p.shape[0]
        # written in place, int32 where the nodes allow (half the memory of the gathers)
        self.rows = np.empty((n, 2), dtype=np.int32 if 2 * (self.M + 1) < 2**31 else np.int64)
        base = self.rows[:, 0]
        np.multiply(y, self.M + 1, out=base, casting="unsafe")  # y = 1: the second block
        base += lo.astype(base.dtype, copy=False)
        np.add(base, 1, out=self.rows[:, 1])
        self.vals = np.empty((n, 2))
        if w is None:
            self.vals[:, 1] = frac
            np.subtract(1.0, frac, out=self.vals[:, 0])
        else:
            np.multiply(w, frac, out=self.vals[:, 1])
            np.subtract(w, self.vals[:, 1], out=self.vals[:, 0])

    def empty(self, n_replicates, scratch=None):
        return {
            "_acc": self.zeros(scratch, "acc", (2 * (self.M + 1), n_replicates)),
            "sum_w": np.zeros(n_replicates),
            "sum_w2": np.zeros(n_replicates),
            "n_rows": np.zeros(n_replicates, dtype=np.int64),
        }

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["_acc"], self.rows[sl], self.vals[sl], W)
        if self.w is None:
            out["sum_w"] += copies
            out["sum_w2"] += copies
        else:
            out["sum_w"] += W @ self.w[sl]
            out["sum_w2"] += W @ (self.w[sl] * self.w[sl])  # copies of a row: W w^2
        out["n_rows"] += np.rint(copies).astype(np.int64)
        return out

    def finish(self, out):
        acc, M1 = out.pop("_acc"), self.M + 1
        out["W"] = np.ascontiguousarray((acc[:M1] + acc[M1:]).T)
        out["A"] = np.ascontiguousarray(acc[M1:].T)
        return out


def scdl_replicates(stats, max_bins):
    """SCDL of every replicate from stacked :class:`ScdlStatistics` statistics (the ``"auto"`` rule).

    Replicate ``r`` is what :meth:`ScdlStatistics.compute` returns for its statistics: the dyadic
    search up to ``min(rule(T_r), max_bins)``, ``T_r`` the replicate's effective size. All
    replicates are folded together, grid by grid, with the arithmetic of the single search.

    Parameters
    ----------
    stats : dict of ndarray
        ``W`` and ``A`` of shape ``(R, max_bins + 1)``, ``sum_w``, ``sum_w2`` and ``n_rows`` of
        shape ``(R,)``.
    max_bins : int
        The statistics' finest grid.

    Returns
    -------
    ndarray of shape (R,)
        SCDL per replicate (NaN for a replicate with no weight).
    """
    W, A = stats["W"], stats["A"]
    total = np.asarray(stats["sum_w"], dtype=float)
    sw2 = np.asarray(stats["sum_w2"], dtype=float)
    n_rows = np.asarray(stats["n_rows"])
    R = W.shape[0]
    ok = (n_rows > 0) & (total > 0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        T = np.where(sw2 > 0, total * total / np.where(sw2 > 0, sw2, 1.0), 0.0)
    for r in np.flatnonzero(ok & ~(np.isfinite(T) & np.isfinite(sw2))):  # overflowing squares
        kish_size(total[r], sw2[r])
    cap = np.array(
        [
            min(resolve_max_bins("auto", float(T[r]), int(n_rows[r])), int(max_bins)) if ok[r] else 2
            for r in range(R)
        ]
    )
    safe_total = np.where(ok, total, 1.0)[:, None]
    grids, objective = [], []
    m = int(max_bins)
    kernel = compiled("scdl") if R * (m + 1) >= _KERNEL_MIN_GRID else None
    while True:
        pi, a = masses_to_moments(W, A, safe_total)
        if kernel is not None:  # the same maxima without the (R, m + 1) temporaries
            values = kernel.scdl_grid_maxima(np.ascontiguousarray(pi), np.ascontiguousarray(a))
        else:
            values = scfdl(pi, a).max(axis=1)
        objective.append(np.where(m <= cap, np.maximum(values, 1.0 / m), np.inf))
        grids.append(m)
        if m == 2:
            break
        W, A = coarsen(W), coarsen(A)
        m //= 2
    obj = np.array(objective[::-1]).T  # (R, levels), grids increasing
    best = obj.min(axis=1)
    tol = best + TIE_RTOL * np.maximum(best, np.finfo(float).tiny)
    g = np.argmax(obj <= tol[:, None], axis=1)
    out = obj[np.arange(R), g]
    return np.where(ok, out, np.nan)
