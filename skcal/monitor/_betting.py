"""Testing calibration by betting: the test functions, the bets, the capital and the tolerance.

Notation. A stream of rows ``(p_t, y_t)``: the forecast ``p_t`` in [0, 1] is known before the
label ``y_t`` in {0, 1}; ``x_t = y_t - p_t`` is the residual and ``F_{t-1}`` everything seen
before row ``t``. The l1 calibration error of the rows at step ``t`` is
``CE_t = E_t |E[y | p] - p|``, and the tolerance null is ``CE_t <= eps`` at every step (rows
conditionally independent given the past; the distribution of ``p`` may change with ``t``).
``eps = 0`` is exact calibration, ``E[y_t | F_{t-1}, p_t] = p_t``.

Test functions. ``n_bins = K = 2**L`` equal-width right-closed bins (the first also holds 0, as in
:class:`skcal.stats.BinnedStatistics`) and their dyadic coarsenings with ``K / 2, ..., 2``
bins. The family is ``g = +1`` and ``g = -1`` (calibration in the large: a global bias up or
down) and, for each level ``l = 1..L`` (``2**l`` bins), one *pattern* ``g_{l, t}(p)``: the sign
of the residual of ``p``'s level-``l`` bin in the bet's memory (every earlier block, or the
last ``memory`` blocks), and 0 where that sum is within ``DEAD_ZONE`` standard errors of 0
(``|S| <= DEAD_ZONE sqrt(Q + 1)``, ``S`` and ``Q`` the memory's sums of ``x`` and ``x^2`` in
the bin). A pattern bets that the bins lean the way they leaned so far: over- and
under-confidence (residuals of opposite signs below and above some ``p``) and miscalibration
confined to a region, which the constant functions cannot see. Every ``g`` is predictable (fixed
within a block, computed from the blocks before it) and ``|g| <= 1``.

Bets. Each test function bets every value ``lambda`` of ``GRID`` (``1/2, 1/4, ..., 1/32``), fixed
in advance: a *component* ``c = (g, lambda)``. The capital of a component at tolerance ``eps``
is

    K_{c, t}(eps) = prod_{s <= t} (1 + lambda g_s(p_s) x_s) / (1 + lambda eps)
                  = prod_{s <= t} (1 + b (g_s(p_s) x_s - eps)),    b = lambda / (1 + lambda eps),

a bet ``b`` in ``[0, 1/2]`` on ``g x - eps``. Under the tolerance null,
``E[g_t(p_t) x_t | F_{t-1}] = E[g_t(p_t) (E[y | p_t] - p_t)] <= E |E[y | p] - p| = CE_t <= eps``
for any ``g_t`` chosen from the past with ``|g_t| <= 1``, so each factor has conditional mean at
most one, and is at least ``1 - (1 + eps) / 2 > 0``: ``K_c(eps)`` is a nonnegative
supermartingale, whatever the distribution of ``p`` does over time. Its logarithm is
``log K_{c, t}(0) - n_t log(1 + lambda eps)`` (``n_t`` rows), decreasing in ``eps``: the capital
at every tolerance follows from the exact test's capital and the row count.

Capital from sufficient statistics. For a row with ``y = 1`` the factor of ``(g, lambda)`` is
``1 + lambda g (1 - p)``, for ``y = 0`` it is ``1 - lambda g p``; both logs are concave in ``p``,
so on each finest bin ``[a, b]`` they lie above their chord, ``alpha + beta p`` with
``beta = (f(b) - f(a)) / (b - a)``. Replacing every row's log factor by its chord's value
lowers each factor, so the product of the chords is again a supermartingale, and it depends on
a block's rows only through ``n0, sum_{y=0} p, n1, sum_{y=1} p`` per finest bin (the chords of
one ``lambda`` are fixed numbers): four ``np.bincount`` sums instead of a ``log1p`` per row and
component. On bins of width ``1/16`` the chord is within ``(1/16)^2 / 8 |f''|`` of the log
factor, a few per cent of a row's expected gain at any useful bet.

Mixture. ``E_t(eps) = sum_c w_c K_{c, t}(eps)`` with fixed weights summing to one: the two
constant functions share ``CONSTANT_WEIGHT`` (a global bias is the most common drift, and the
detector's speed on it is what the weight buys), the ``L`` patterns share the rest evenly, and
each splits its share evenly over the grid. ``E_t(eps)`` is a nonnegative supermartingale with
``E_0 = 1`` under the tolerance null, so ``P(sup_t E_t(eps) >= 1 / alpha) <= alpha`` (Ville),
and it decreases in ``eps``, so ``LCB_t = sup {eps : max_{s <= t} E_s(eps) >= 1 / alpha}`` (0
when none) is a time-uniform lower confidence bound: ``LCB_t > CE`` for some ``t`` implies
``max_s E_s(CE) >= 1 / alpha``, which has probability at most ``alpha`` when ``CE_t <= CE`` at
every step. Classwise monitoring stacks one family per class, weights divided by the number of
classes (an average of supermartingales on one filtration is one).

Every function here is vectorised over blocks and either treats blocks independently or carries
its state from one call to the next through a sequential ``ufunc.accumulate``, and every sum over
bins or components has a fixed order, so a path computed in one call or in several is the same,
bit for bit.

The references are those of :class:`skcal.monitor.CalibrationMonitor`.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "GRID",
    "CONSTANT_WEIGHT",
    "DEAD_ZONE",
    "n_functions",
    "n_components",
    "component_bets",
    "component_weights",
    "function_names",
    "to_functions",
    "chord_tables",
    "memory_sums",
    "pattern_signs",
    "log_factors",
    "tolerance_penalty",
    "log_mixture",
]

#: The bets every test function places, fixed in advance (the mixture over them adapts).
GRID = 2.0 ** -np.arange(1, 6)
#: Total prior weight of the two constant test functions (a global bias up or down).
CONSTANT_WEIGHT = 0.75
#: A pattern bets on a bin only when its memory's residual sum is this many standard errors from 0.
DEAD_ZONE = 1.5


def _levels(n_bins):
    return int(n_bins).bit_length() - 1  # L, with n_bins = 2**L


def n_functions(n_bins):
    """Test functions: ``g = +1``, ``g = -1`` and one pattern per level ``1..L`` (``L + 2``)."""
    return _levels(n_bins) + 2


def n_components(n_bins):
    """Components ``(function, bet)``: ``n_functions(n_bins) * len(GRID)``."""
    return n_functions(n_bins) * GRID.size


def function_names(n_bins):
    """Names of the test functions, in component order (``"+1"``, ``"-1"``, ``"pattern 2"``, ...)."""
    return ["+1", "-1"] + [f"pattern {2**lev}" for lev in range(1, _levels(n_bins) + 1)]


def component_bets(n_bins):
    """The bet ``lambda`` of every component, shape ``(C,)`` (function-major)."""
    return np.tile(GRID, n_functions(n_bins))


def component_weights(n_bins, n_classes=1):
    """Prior weights ``(n_classes, C)`` of the components (they sum to one)."""
    L = _levels(n_bins)
    G = GRID.size
    per_function = np.empty(n_functions(n_bins))
    per_function[:2] = CONSTANT_WEIGHT / 2.0 if L else 0.5
    if L:
        per_function[2:] = (1.0 - CONSTANT_WEIGHT) / L
    w = np.repeat(per_function / G, G)
    return np.tile(w / n_classes, (n_classes, 1))


def to_functions(fine, axis=-1):
    """Sums per finest bin to sums per bin of every level, coarsest first.

    Along ``axis`` (the last or the one before it), ``K`` finest bins become ``2K - 1``: level 0
    (one bin), level 1 (two bins), ..., level ``L`` (the ``K`` finest). A coarser bin is the sum
    of two adjacent finer ones (elementwise adds, so a block's result does not depend on the
    other blocks of the array).
    """
    if axis in (-1, fine.ndim - 1):
        even, odd = (lambda a: a[..., 0::2]), (lambda a: a[..., 1::2])
    elif axis in (-2, fine.ndim - 2):
        even, odd = (lambda a: a[..., 0::2, :]), (lambda a: a[..., 1::2, :])
    else:
        raise ValueError(f"axis must be the last or the one before it; got {axis}.")
    levels = [fine]
    cur = fine
    while cur.shape[axis] > 1:
        cur = even(cur) + odd(cur)
        levels.append(cur)
    return np.concatenate(levels[::-1], axis=axis)


@functools.lru_cache(maxsize=8)
def chord_tables(n_bins):
    """Chord coefficients of the log factors, for ``g = +1`` and ``g = -1``.

    Returns
    -------
    ndarray of shape (n_bins, 4, 2 G)
        ``[k, s, j]``: the coefficient of the statistic ``s`` (``n0, sum_{y=0} p, n1,
        sum_{y=1} p`` of bin ``k``) in the chord lower bound of ``sum log(1 + lambda g x)`` over
        the bin's rows, for ``g = +1, lambda = GRID[j]`` (``j < G``) and
        ``g = -1, lambda = GRID[j - G]``. Read-only.
    """
    K = int(n_bins)
    G = GRID.size
    a = np.arange(K + 1) / K  # exact: K is a power of two
    lam = GRID[None, :]
    out = np.empty((K, 4, 2 * G))
    for j, g in enumerate((1.0, -1.0)):
        f1 = np.log1p(g * lam * (1.0 - a[:, None]))  # y = 1: 1 + lambda g (1 - p)
        f0 = np.log1p(-g * lam * a[:, None])  # y = 0: 1 - lambda g p
        for s0, f in ((0, f0), (2, f1)):
            beta = (f[1:] - f[:-1]) * K
            out[:, s0, j * G : (j + 1) * G] = f[:-1] - beta * a[:-1, None]
            out[:, s0 + 1, j * G : (j + 1) * G] = beta
    out.setflags(write=False)
    return out


def memory_sums(tail, S, Q, memory):
    """The memory's sums of ``x`` and ``x^2`` before each new block, and the new carry.

    Parameters
    ----------
    tail : ndarray of shape (T, 2, ...)
        Running totals of ``(S, Q)`` at the last ``T`` block boundaries (the last one is the
        current total; ``T = 1`` with ``memory=None``, at most ``memory + 1`` otherwise).
    S, Q : ndarray of shape (nb, ...)
        Per-block sums of the new blocks.
    memory : int or None
        Blocks the memory looks back on (``None``: all earlier blocks).

    Returns
    -------
    mem : ndarray of shape (nb, 2, ...)
        ``(S, Q)`` over the memory of each new block (the blocks before it).
    tail : ndarray
        The carry for the next call.
    """
    nb = S.shape[0]
    X = np.stack([S, Q], axis=1)
    cum = np.cumsum(np.concatenate([tail[-1:], X]), axis=0)  # cum[i]: total before new block i
    if memory is None:
        return cum[:-1], np.ascontiguousarray(cum[-1:])
    full = np.concatenate([tail[:-1], cum])
    n_old = tail.shape[0] - 1
    first = n_old - memory  # the window of new block i starts at boundary first + i (>= 0)
    if first >= 0:
        begin = full[first : first + nb]
    else:
        lead = min(-first, nb)
        begin = np.concatenate([np.repeat(full[:1], lead, axis=0), full[: nb - lead]])
    return full[n_old : n_old + nb] - begin, np.ascontiguousarray(full[-(memory + 1) :])


def pattern_signs(mem):
    """``g`` of every bin of every level from the memory's sums (``-1``, ``0`` or ``+1``).

    Parameters
    ----------
    mem : ndarray of shape (nb, 2, ..., 2K - 1)
        Memory sums ``(S, Q)`` per bin of every level (:func:`to_functions` layout).

    Returns
    -------
    ndarray of shape (nb, ..., 2K - 1)
    """
    S, Q = mem[:, 0], mem[:, 1]
    strong = np.abs(S) > DEAD_ZONE * np.sqrt(np.maximum(Q, 0.0) + 1.0)
    return np.where(strong, np.sign(S), 0.0)


def log_factors(stats, signs, n_bins):
    """Per-block log factors of every component at ``eps = 0`` (the chord capital).

    Parameters
    ----------
    stats : ndarray of shape (nb, k, K, 4)
        ``n0, sum_{y=0} p, n1, sum_{y=1} p`` of every block, class and finest bin.
    signs : ndarray of shape (nb, k, 2K - 1)
        The patterns' ``g`` per bin of every level (:func:`pattern_signs`; level 0 unused).
    n_bins : int
        ``K``, a power of two.

    Returns
    -------
    ndarray of shape (nb, k, C)
    """
    G = GRID.size
    K = int(n_bins)
    # per finest bin, the chord sums of g = +1 (first G) and g = -1 (last G): a sequential sum
    # over the four statistics of each bin (einsum's loop; it does not depend on the other blocks)
    cur = np.einsum("nckS,kSg->nckg", stats, chord_tables(K))
    nb, k = stats.shape[:2]
    out = np.empty((nb, k, n_components(K)))
    for level in range(_levels(K), 0, -1):  # finest first; then the sums of adjacent pairs
        g = signs[..., (1 << level) - 1 : (1 << (level + 1)) - 1, None]
        lean = cur[..., :G] * (g > 0)  # each bin's chord sum on the side its pattern leans to
        lean += cur[..., G:] * (g < 0)
        c = (1 + level) * G
        out[..., c : c + G] = lean.sum(axis=-2)
        cur = cur[..., 0::2, :] + cur[..., 1::2, :]
    out[..., : 2 * G] = cur[..., 0, :]  # g = +1, then g = -1: the two constant functions
    return out


def tolerance_penalty(n_bins, tolerance):
    """``log(1 + lambda eps)`` of every component: what a row costs each capital at tolerance ``eps``."""
    return np.log1p(component_bets(n_bins) * float(tolerance))


def log_mixture(logK, logw):
    """``log sum_c w_c exp(logK_c)`` for each block, as a fixed-order sum over the components.

    Parameters
    ----------
    logK : ndarray of shape (nb, k, C)
    logw : ndarray of shape (k, C)

    Returns
    -------
    ndarray of shape (nb,)
    """
    a = (logK + logw).reshape(logK.shape[0], -1)
    m = a.max(axis=1)
    m = np.where(np.isfinite(m), m, 0.0)
    # a sum along each contiguous row: its order depends on the row's length only, so a block's
    # value never depends on the other blocks of the array
    s = np.exp(a - m[:, None]).sum(axis=1)
    with np.errstate(divide="ignore"):
        return m + np.log(s)
