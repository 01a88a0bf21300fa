"""Testing calibration by betting: the test functions, the bets and the mixture e-process.

Notation. A stream of rows ``(p_t, y_t)``: the forecast ``p_t`` in [0, 1] is known before the
label ``y_t`` in {0, 1}; ``x_t = y_t - p_t`` is the residual. The null is
``E[y_t | past, p_t] = p_t`` at every step, which holds for any adaptive choice of ``p_t``.

Test functions. ``n_bins = K = 2**L`` equal-width right-closed bins ``((j - 1) / K, j / K]`` (the
first also holds 0, as in :class:`skcal.stats.BinnedStatistics`) and their dyadic coarsenings
with ``K / 2, ..., 2, 1`` bins give ``F = 2 K - 1`` indicator functions ``g_f(p) = 1{p in bin}``,
the coarsest being the constant ``g = 1``. A bet may have either sign, so each indicator bets on
the bin's residual being positive or negative ("signed" indicators). Function ``f`` of level
``l`` (``2**l`` bins) has prior weight ``w_f = 1 / ((L + 1) 2**l)``: each resolution gets
``1 / (L + 1)``, split evenly over its bins, and the weights sum to one.

Bets. Rows are grouped in blocks of ``block_size``; the bet ``lambda_{f, j}`` of function ``f``
on block ``j`` is fixed over the block and computed from the blocks before it (predictable),
with the aGRAPA rule of Waudby-Smith and Ramdas,
``lambda = mu_hat / (sigma_hat^2 + mu_hat^2) = S / (Q + q0)``, where ``S`` and ``Q`` are the sums
of ``g(p) x`` and ``g(p)^2 x^2`` over the bet's memory (every earlier block, or the last
``memory`` blocks) and ``q0 = 1`` a prior that keeps the first bets small, clipped to
``[-1/2, 1/2]``. Every factor ``1 + lambda g(p) x`` then lies in ``[1/2, 3/2]``.

Capital. Two per-block factors are implemented, both with conditional mean at most one under
the null, so the capital ``K_{f, t}`` (their product over blocks) is a nonnegative
supermartingale and Ville's inequality applies:

* ``"product"``: ``prod_{rows} (1 + lambda g(p) x)``, the test martingale by betting itself
  (Shafer and Vovk), computed row by row (a ``log1p`` per row and resolution);
* ``"bernstein"`` (the default): ``exp(lambda S_j - psi(|lambda|) Q_j)`` with
  ``psi(c) = -log(1 - c) - c``, where ``S_j`` and ``Q_j`` are the block's sums of ``g x`` and
  ``g^2 x^2``. Fan, Grama and Liu (2015, Lemma 4.1): ``log(1 + u) >= u - psi(c) u^2 / c^2``
  for ``u >= -c``, ``0 <= c < 1``; with ``u = lambda g x`` and ``c = |lambda|`` every row's
  factor ``exp(lambda g x - psi(|lambda|) g^2 x^2)`` is at most ``1 + lambda g x``, so the
  product is at most the test martingale above: a supermartingale from sufficient statistics
  (the empirical-Bernstein capital of Waudby-Smith and Ramdas), and the reason an update costs a
  few ``np.bincount`` passes instead of one ``log1p`` per row and test function.

Mixture. ``E_t = sum_f w_f K_{f, t}`` is again a nonnegative supermartingale with ``E_0 = 1``,
so ``P(sup_t E_t >= 1 / alpha) <= alpha`` (Ville) and ``min(1, 1 / max_{s <= t} E_s)`` is an
anytime-valid p-value. Classwise monitoring stacks one family per class (weights divided by the
number of classes); the average of test supermartingales on one filtration is one.

Every function here is vectorised over blocks and follows a carry: running a path in one call or
in several (the carry of one call passed to the next) gives the same bits, because every
accumulation is a sequential ``ufunc.accumulate`` along the block axis and every reduction over
the test functions is a fixed-order loop.

References
----------
G. Shafer and V. Vovk, *Game-Theoretic Foundations for Probability and Finance*, Wiley, 2019.
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024.
S. Arnold, A. Henzi and J. F. Ziegel, "Sequentially valid tests for forecast calibration",
Annals of Applied Statistics 17(3), 2023.
X. Fan, I. Grama and Q. Liu, "Exponential inequalities for martingales with applications",
Electronic Journal of Probability 20, 2015.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BET_CAP",
    "BET_PRIOR",
    "n_functions",
    "function_weights",
    "function_levels",
    "to_functions",
    "psi_e",
    "bets",
    "bernstein_log_factors",
    "product_log_factors",
    "log_mixture",
]

#: Largest absolute bet: every factor ``1 + lambda g(p) (y - p)`` stays in ``[1/2, 3/2]``.
BET_CAP = 0.5
#: Prior added to the sum of squared residuals in the aGRAPA bet ``S / (Q + prior)``.
BET_PRIOR = 1.0


def n_functions(n_bins):
    """Number of test functions of the dyadic family with ``n_bins`` finest bins (``2 n_bins - 1``)."""
    return 2 * n_bins - 1


def function_levels(n_bins):
    """``[(offset, bins)]`` of each resolution, coarsest (the constant) first."""
    out, k, off = [], 1, 0
    while k <= n_bins:
        out.append((off, k))
        off += k
        k *= 2
    return out


def function_weights(n_bins, n_classes=1):
    """Prior weights ``(n_classes, F)`` of the test functions (they sum to one)."""
    levels = function_levels(n_bins)
    w = np.empty(n_functions(n_bins))
    for off, k in levels:
        w[off : off + k] = 1.0 / (len(levels) * k)
    return np.tile(w / n_classes, (n_classes, 1))


def to_functions(fine):
    """Sums per finest bin ``(..., K)`` to sums per test function ``(..., 2K - 1)``.

    Coarser bins are sums of two adjacent finer ones (elementwise adds, so the result of a row
    does not depend on the other rows of the array).
    """
    levels = [fine]
    cur = fine
    while cur.shape[-1] > 1:
        cur = cur[..., 0::2] + cur[..., 1::2]
        levels.append(cur)
    return np.concatenate(levels[::-1], axis=-1)


def psi_e(c):
    """``psi_E(c) = -log(1 - c) - c`` for ``0 <= c < 1`` (Fan, Grama and Liu)."""
    c = np.asarray(c, dtype=np.float64)
    return -np.log1p(-c) - c


def bets(tail, S, Q, memory):
    """aGRAPA bets of new blocks from the blocks before them, and the new carry.

    Parameters
    ----------
    tail : ndarray of shape (T, 2, k, F)
        Running totals of ``(S, Q)`` at the last ``T`` block boundaries (the last one is the
        current total; ``T = 1`` with ``memory=None``, at most ``memory + 1`` otherwise).
    S, Q : ndarray of shape (nb, k, F)
        Per-block sums of ``g x`` and ``g^2 x^2`` of the new blocks.
    memory : int or None
        Blocks the bet looks back on (``None``: all earlier blocks).

    Returns
    -------
    lam : ndarray of shape (nb, k, F)
        The bet of each new block, in ``[-1/2, 1/2]``.
    tail : ndarray
        The carry for the next call.
    """
    nb = S.shape[0]
    X = np.stack([S, Q], axis=1)
    cum = np.cumsum(np.concatenate([tail[-1:], X]), axis=0)  # cum[i]: total before new block i
    if memory is None:
        mem = cum[:-1]
        new_tail = cum[-1:]
    else:
        full = np.concatenate([tail[:-1], cum])
        n_old = tail.shape[0] - 1
        first = n_old - memory  # the window of new block i starts at boundary first + i (>= 0)
        if first >= 0:
            begin = full[first : first + nb]
        else:
            lead = min(-first, nb)
            begin = np.concatenate([np.repeat(full[:1], lead, axis=0), full[: nb - lead]])
        mem = full[n_old : n_old + nb] - begin
        new_tail = full[-(memory + 1) :]
    lam = mem[:, 0] / (mem[:, 1] + BET_PRIOR)
    np.clip(lam, -BET_CAP, BET_CAP, out=lam)
    return lam, np.ascontiguousarray(new_tail)


def bernstein_log_factors(lam, S, Q):
    """Per-block log factors ``lambda S - psi(|lambda|) Q`` of the empirical-Bernstein capital."""
    return lam * S - psi_e(np.abs(lam)) * Q


def product_log_factors(ids, x, lam, n_bins):
    """Per-block ``sum log(1 + lambda g(p) x)`` over the rows, for every test function.

    Parameters
    ----------
    ids : ndarray of intp of shape (nb * block_size,)
        ``block * n_bins + bin`` of each row (finest bins).
    x : ndarray of shape (nb * block_size,)
        Residuals ``y - p``.
    lam : ndarray of shape (nb, F)
        The bets of one class's test functions.
    n_bins : int
        Finest bins (a power of two).

    Returns
    -------
    ndarray of shape (nb, F)
    """
    nb = lam.shape[0]
    out = np.empty_like(lam)
    top = n_bins.bit_length() - 1
    for off, k in function_levels(n_bins):
        shift = top - (k.bit_length() - 1)
        cid = ids >> shift if shift else ids  # block * k + coarse bin (K is a power of two)
        lam_k = np.ascontiguousarray(lam[:, off : off + k]).ravel()
        terms = np.log1p(lam_k[cid] * x)
        out[:, off : off + k] = np.bincount(cid, weights=terms, minlength=nb * k).reshape(nb, k)
    return out


def log_mixture(logK, logw):
    """``log sum_f w_f exp(logK_f)`` for each block, as a fixed-order sum over the functions.

    Parameters
    ----------
    logK : ndarray of shape (nb, k, F)
    logw : ndarray of shape (k, F)

    Returns
    -------
    ndarray of shape (nb,)
    """
    a = (logK + logw).reshape(logK.shape[0], -1)
    m = a.max(axis=1)
    s = np.zeros(a.shape[0])
    for f in range(a.shape[1]):  # a fixed order: a block's value never depends on the others
        s += np.exp(a[:, f] - m)
    return m + np.log(s)
