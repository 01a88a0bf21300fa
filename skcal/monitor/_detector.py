"""The paths of a monitor: the mixture e-process, the e-detector, the lower bound and the change.

Given the per-block log factors ``lf[j, c]`` of every component ``c`` at ``eps = 0`` (see
:mod:`skcal.monitor._betting`), with ``L_{c, t} = sum_{j <= t} lf[j, c]`` the log capital after
block ``t`` (``L_{c, 0} = 0``), ``n_t = t B`` the rows of ``t`` blocks of ``B`` rows and
``pi_c(eps) = log(1 + lambda_c eps)`` the cost of a row at tolerance ``eps``, the log capital at
tolerance ``eps`` is ``L_{c, t}(eps) = L_{c, t} - n_t pi_c(eps)``, and:

* **Test** (``mode="test"``): the capital started at block ``j`` is ``K^{(j)}_t(eps) =
  prod_{i = j..t} factor_i(eps)``, and the statistic is the mixture over the starts and the
  components ``R_t(eps) = sum_c w_c sum_{j <= t} pi_j K^{(j)}_{c, t}(eps)`` with
  ``pi_1 = 1/2`` (the capital since the segment's start) and ``pi_j = (log 2 / 2) (1 / log j -
  1 / log(j + 1))`` for ``j >= 2`` (they sum to one; ``log(1 / pi_j)`` grows like ``log j + 2 log
  log j``). Each ``pi_j K^{(j)}`` is a nonnegative supermartingale under the tolerance null
  (constant ``pi_j`` before ``j``), so ``R`` is one with ``R_0 <= 1`` and Ville's inequality gives
  ``P(sup_t R_t(tol) >= 1 / alpha) <= alpha`` over an unbounded horizon: the alarm. A start
  after a long calibrated stretch sees only the rows since, so a late excess is found about as
  fast as an early one (with a fixed start, every bet pays ``log(1 + lambda eps)`` per calibrated
  row and the delay grows with the calibrated stretch). Recursively, per component,
  ``S_t = (S_{t-1} + pi_t) * factor_t``; the anytime-valid p-value is
  ``min(1, 1 / max_{s <= t} R_s(tol))``.
* **Lower confidence bound** (both modes): ``R_t(eps)`` is a sum of nonnegative terms
  ``w_c pi_j K^{(j)}_{c, t}(eps)``, so for any starts chosen in any way from the data, the sum of a
  few of its terms is below it: ``E'_t(eps) = sum_c w_c (pi_1 K^{(1)}_{c, t}(eps) + pi_{j_c(t)}
  K^{(j_c(t))}_{c, t}(eps)) <= R_t(eps)`` (the second term left out where ``j_c(t) = 1``). The
  start ``j_c(t)`` of each component is the latest boundary near the running minimum of its exact
  test's log capital ``L_c`` (``eps = 0``; within ``log 2``, as for the change below): the start of
  an excess after a calibrated stretch (where the exact capital drifts down), whatever the
  tolerance. So ``E'`` follows a stationary excess through ``K^{(1)}`` and a late one as ``R``
  does, and it is a sum of ``2 C`` terms, each decreasing in ``eps`` and known in closed form at
  every ``eps``. With
  ``r_s = sup {eps : E'_s(eps) >= 1 / alpha}``, ``LCB_t`` is the running maximum of ``r_s``,
  raised to the tolerance once ``R_t(tol)`` has crossed (the alarm): ``LCB_t > CE`` implies
  ``sup_s R_s(CE) >= 1 / alpha``, so ``P(exists t: LCB_t > CE) <= alpha`` whenever ``CE_t <= CE``
  at every step. Only blocks with
  ``E'_s(LCB_{s-1}) >= 1 / alpha`` can raise ``r``. For those, ``f(eps) = log E'_s(eps) -
  log(1 / alpha)`` is convex (a log-sum-exp of the convex ``-n log(1 + lambda eps)``) and
  decreasing, with ``f(1) < 0`` (``E'_s(1) <= 1``: no factor exceeds one at ``eps = 1``), so
  Newton's method started at the left end of the bracket, the tolerance when ``f(tol) >= 0`` and 0
  otherwise, stays left of the root (the tangent of a convex function lies below it) and
  converges to it from there: ``LCB_STEPS`` steps, each keeping ``f >= 0``, the same for every
  block whatever the batching. The reported bound is therefore one whose process has crossed, and
  it reaches the tolerance exactly when the test alarms.
* **e-detector** (``mode="detect"``, Shin, Ramdas and Rinaldo): per component the
  Shiryaev-Roberts statistic of the capitals started at every block with shared bets,
  ``M_{c, t} = sum_{j = 1..t} K_{c, t}(tol) / K_{c, j - 1}(tol) = (M_{c, t - 1} + 1) *
  factor_{c, t}``, ``M_{c, 0} = 0``, mixed with the same weights: ``M_t = sum_c w_c M_{c, t}``.
  Under the null every factor has conditional mean at most one, so ``M_t - t`` is a
  supermartingale starting at 0: for the alarm time ``tau = inf{t : M_t >= A}``, optional
  stopping and Fatou's lemma give ``E[tau] >= A`` blocks, and since ``M_t + (T - t)`` is a
  nonnegative supermartingale on ``t <= T`` starting at ``T``, ``P(tau <= T) <= T / A``.
* **Change location** (CUSUM-type maximum): at the first alarm ``tau``, the component with the
  largest weighted evidence from its best start, ``log w_c + L_{c, tau}(tol) - min_j L_{c,
  j}(tol)``, and for it the latest start ``j`` whose evidence is at least half the best (within
  ``log 2`` of it): before a change the log capital of a calibrated stream drifts down or stays
  flat, so the latest start near its minimum is where the evidence begins to grow. It needs a
  running minimum and one boundary per component, so the memory does not grow with the stream.

In logs, ``log M_{c, t} = L_{c, t}(tol) + log sum_{j <= t} exp(-L_{c, j - 1}(tol))`` (and the same
with ``log pi_j`` added for ``R``), whose second term is one ``np.logaddexp.accumulate`` along the
blocks; every path is computed for all new blocks at once and continues exactly from the carry of
the previous call.

References
----------
J. Shin, A. Ramdas and A. Rinaldo, "E-detectors: a nonparametric framework for sequential change
detection", New England Journal of Statistics in Data Science 2(2), 2024.
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skcal.monitor._betting import log_mixture

__all__ = [
    "start_weights",
    "PathCarry",
    "advance_paths",
    "change_start",
    "lower_bounds",
    "log_e_at",
    "bound_terms",
    "CHANGE_TOLERANCE",
    "LCB_STEPS",
]

#: A start of the change is "near the best" when its evidence is at least half the best's.
CHANGE_TOLERANCE = float(np.log(2.0))
#: Newton steps of the lower bound (from the left of the root: each keeps the crossing).
LCB_STEPS = 12


def start_weights(j):
    """``log pi_j`` of the starts ``j = 1, 2, ...`` (1-based blocks of the segment); they sum to one."""
    j = np.asarray(j, dtype=np.float64)
    with np.errstate(divide="ignore"):
        rest = np.log(0.5 * np.log(2.0)) + np.log(np.log1p(1.0 / j)) - np.log(np.log(j)) - np.log(np.log1p(j))
    return np.where(j == 1, np.log(0.5), rest)


@dataclass
class PathCarry:
    """What a path needs from the blocks before: arrays of shape ``(k, C)`` and scalars."""

    n_blocks: int
    log_capital: np.ndarray  # L_{c, t} at eps = 0
    log_sr: np.ndarray  # log sum_{j <= t} exp(-L_{c, j - 1}(tol)) (-inf before the first block)
    log_starts: np.ndarray  # log sum_{j <= t} pi_j exp(-L_{c, j - 1}(tol)) (-inf before the first block)
    min_log_capital: np.ndarray  # min_{j <= t} L_{c, j}(tol)
    argmin_log_capital: np.ndarray  # the latest boundary j near it (see _running_min; int64)
    min_log_capital0: np.ndarray  # min_{j <= t} L_{c, j} at eps = 0 (the bound's starts)
    start_block: np.ndarray  # the latest boundary near it (int64)
    start_log_capital0: np.ndarray  # L_{c, j} at eps = 0 at that boundary
    max_start0: np.ndarray  # max_{j <= t} (log pi_j - L_{c, j - 1}) at eps = 0 (-inf at first)
    max_log_e: float  # max_{s <= t} log R_s(tol) (0 before the first block: no evidence)
    lcb: float  # LCB_t (0 before any crossing)

    @classmethod
    def initial(cls, shape):
        return cls(
            n_blocks=0,
            log_capital=np.zeros(shape),
            log_sr=np.full(shape, -np.inf),
            log_starts=np.full(shape, -np.inf),
            min_log_capital=np.zeros(shape),
            argmin_log_capital=np.zeros(shape, dtype=np.int64),
            min_log_capital0=np.zeros(shape),
            start_block=np.zeros(shape, dtype=np.int64),
            start_log_capital0=np.zeros(shape),
            max_start0=np.full(shape, -np.inf),
            max_log_e=0.0,
            lcb=0.0,
        )


def _at(L0, rows, pen):
    """``L(eps) = L - n pi(eps)`` for log capitals ``L0 (nb, k, C)`` after ``rows (nb,)`` rows."""
    return L0 - rows[:, None, None] * pen


def advance_paths(carry, lf, logw, bets, tolerance, block_size, detect, log_threshold):
    """Advance every path over new blocks.

    Parameters
    ----------
    carry : PathCarry
        The state after the blocks before (not modified).
    lf : ndarray of shape (nb, k, C)
        Log factors of the new blocks at ``eps = 0``.
    logw : ndarray of shape (k, C)
        Log prior weights of the components.
    bets : ndarray of shape (C,)
        The bet ``lambda_c`` of every component.
    tolerance : float
        The monitor's tolerance ``tol``.
    block_size : int
        Rows per block.
    detect : bool
        Whether to compute the e-detector (its log-sum-exp is most of the cost of a path).
    log_threshold : float
        ``log(1 / alpha)``, the level of the test and the lower bound.

    Returns
    -------
    out : dict
        ``log_e`` (nb,), the log test statistic ``log R`` at the tolerance after each new block;
        ``log_m`` (nb,),
        the log e-detector statistic (NaN unless ``detect``); ``lcb`` (nb,), the lower bound;
        ``log_capital`` (nb + 1, k, C), each component's log capital at the tolerance at the
        boundary before the new blocks and after each.
    carry : PathCarry
        The state after the new blocks.
    """
    nb = lf.shape[0]
    L0 = np.cumsum(np.concatenate([carry.log_capital[None], lf]), axis=0)  # L0[0]: before
    blocks = np.arange(carry.n_blocks, carry.n_blocks + nb + 1)
    rows = (blocks * block_size).astype(np.float64)
    L = _at(L0, rows, np.log1p(bets * tolerance))
    log_pi = start_weights(blocks[1:])  # the start at new block i is block n + i + 1
    starts = np.concatenate([carry.log_starts[None], log_pi[:, None, None] - L[:-1]])
    acc = np.logaddexp.accumulate(starts, axis=0)[1:]
    log_e = log_mixture(L[1:] + acc, logw)
    if detect:
        sr = np.logaddexp.accumulate(np.concatenate([carry.log_sr[None], -L[:-1]]), axis=0)[1:]
        log_m = log_mixture(L[1:] + sr, logw)
        log_sr = sr[-1].copy()
    else:
        log_m = np.full(nb, np.nan)
        log_sr = carry.log_sr.copy()
    low, at = _running_min(L, carry.min_log_capital, carry.argmin_log_capital, carry.n_blocks, nb)
    # the bound: first a cheap upper bound of log E'_s(LCB_{s-1}): R(tol) itself once the bound has
    # reached the tolerance (E' <= R, decreasing in eps), else every start's weighted capital
    # bounded by the best one, max_j (log pi_j - L0_{j-1}) + L0_s (a running maximum, carried);
    # without a block that can reach the threshold, only the floor at the tolerance moves and only
    # the carried start is updated
    best = np.maximum.accumulate(
        np.concatenate([carry.max_start0[None], log_pi[:, None, None] - L0[:-1]]), axis=0
    )[1:]
    if carry.lcb >= tolerance:
        upper = log_e
    else:
        top = logw + L0[1:] + np.maximum(np.log(0.5), best)
        upper = top.reshape(nb, -1).max(axis=1) + np.log(2 * top[0].size)
    if np.any(upper >= log_threshold):
        low0, start_L0, start_block, start_pi = _starts(carry, L0, nb)
        D0, drows, base = bound_terms(L0[1:], rows[1:], start_L0, start_block, start_pi, logw, block_size)
        lcb = lower_bounds(
            D0, drows, base, np.concatenate([bets, bets]), tolerance, log_e, log_threshold, carry.lcb
        )
        start_block, start_L0 = start_block[-1].copy(), start_L0[-1].copy()
    else:
        alarmed = np.maximum.accumulate(log_e >= log_threshold)
        lcb = np.where(alarmed, max(carry.lcb, tolerance), carry.lcb)
        low0, start_block = _running_min(L0, carry.min_log_capital0, carry.start_block, carry.n_blocks, nb)
        new_at = start_block - carry.n_blocks  # a new boundary (>= 1), or the carried start's
        start_L0 = np.where(
            new_at >= 1,
            np.take_along_axis(L0, np.maximum(new_at, 0)[None], axis=0)[0],
            carry.start_log_capital0,
        )
    new = PathCarry(
        n_blocks=carry.n_blocks + nb,
        log_capital=L0[-1].copy(),
        log_sr=log_sr,
        log_starts=acc[-1].copy(),
        min_log_capital=low,
        argmin_log_capital=at,
        min_log_capital0=low0,
        start_block=start_block,
        start_log_capital0=start_L0,
        max_start0=best[-1].copy(),
        max_log_e=max(carry.max_log_e, float(np.max(log_e))),
        lcb=float(lcb[-1]),
    )
    return {"log_e": log_e, "log_m": log_m, "lcb": lcb, "log_capital": L}, new


def _terms(D0, drows, base, bets, eps):
    eps = np.asarray(eps, dtype=np.float64).reshape(-1, 1, 1)
    drows = np.asarray(drows, dtype=np.float64)
    if drows.ndim == 1:
        drows = drows[:, None, None]
    return base + D0 - drows * np.log1p(bets * eps), drows


def bound_terms(L0, rows, start_L0, start_block, log_pi, logw, block_size):
    """The ``2 C`` terms of the bound's mixture ``E'``: each component since the segment's start
    and since its own start (see the module docstring), as ``(D0, drows, base)`` for
    :func:`log_e_at` with the bets repeated twice.

    Parameters
    ----------
    L0 : ndarray of shape (nb, k, C)
        Log capitals at ``eps = 0`` since the segment's start.
    rows : ndarray of shape (nb,)
        Rows since the segment's start.
    start_L0, start_block, log_pi : ndarray of shape (nb, k, C)
        ``L0`` at each component's start boundary, the boundary, and ``log pi`` of the start.
    logw : ndarray of shape (k, C)
    block_size : int

    Returns
    -------
    D0, drows, base : ndarray of shape (nb, k, 2 C)
    """
    full = np.broadcast_to(rows[:, None, None], L0.shape).astype(np.float64)
    D0 = np.concatenate([L0, L0 - start_L0], axis=-1)
    drows = np.concatenate([full, full - start_block * float(block_size)], axis=-1)
    # the start near the minimum is left out where it is the segment's start (counted once)
    own = np.where(start_block > 0, logw + log_pi, -np.inf)
    base = np.concatenate([np.broadcast_to(logw + np.log(0.5), L0.shape), own], axis=-1)
    return D0, drows, base


def log_e_at(D0, drows, base, bets, eps):
    """``log sum_c exp(base_c + D0_c - drows_c log(1 + lambda_c eps_s))`` of every block.

    Parameters
    ----------
    D0 : ndarray of shape (nb, k, C)
        Log capitals at ``eps = 0`` since each component's start.
    drows : ndarray of shape (nb,) or (nb, k, C)
        Rows since the start.
    base : ndarray of shape (k, C) or (nb, k, C)
        Log weights (prior and start).
    bets : ndarray of shape (C,)
    eps : ndarray of shape (nb,)
        A tolerance per block.

    Returns
    -------
    ndarray of shape (nb,)
    """
    a, _ = _terms(D0, drows, base, bets, eps)
    return log_mixture(a, np.zeros(a.shape[1:]))


def _newton_step(D0, drows, base, bets, eps, level):
    """``f(eps)`` and the Newton step ``eps - f / f'`` of ``f = log E'(eps) - level``, per block."""
    a, dr = _terms(D0, drows, base, bets, eps)
    flat = a.reshape(a.shape[0], -1)
    m = np.max(flat, axis=1)
    m = np.where(np.isfinite(m), m, 0.0)
    w = np.exp(flat - m[:, None])
    total = w.sum(axis=1)
    with np.errstate(divide="ignore"):
        f = m + np.log(total) - level
    slope = -dr * bets / (1.0 + bets * eps.reshape(-1, 1, 1))  # d a_c / d eps
    df = (w * np.broadcast_to(slope, a.shape).reshape(flat.shape)).sum(axis=1) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.where(df < 0, eps - f / df, eps)
    return f, step


def lower_bounds(D0, drows, base, bets, tolerance, log_r_tol, log_threshold, lcb_before):
    """``LCB`` after each new block (see the module docstring).

    Parameters
    ----------
    D0 : ndarray of shape (nb, k, C)
        Each component's log capital at ``eps = 0`` since its start, after each new block.
    drows : ndarray of shape (nb, k, C)
        Rows since each component's start.
    base : ndarray of shape (nb, k, C)
        ``log w_c + log pi_{j_c}``.
    bets : ndarray of shape (C,)
        The bet of every component.
    tolerance : float
        The monitor's tolerance: the bisection splits at it.
    log_r_tol : ndarray of shape (nb,)
        ``log R_s(tol)``, the test statistic of each new block.
    log_threshold : float
        ``log(1 / alpha)``.
    lcb_before : float
        The bound before the new blocks.

    Returns
    -------
    ndarray of shape (nb,)
    """
    nb = D0.shape[0]
    if nb == 0:
        return np.empty(0)
    alarmed = np.maximum.accumulate(log_r_tol >= log_threshold)
    floor = np.where(alarmed, max(lcb_before, tolerance), lcb_before)
    # candidates: E'(LCB_{s-1}) >= 1 / alpha; a block whose largest term is below the threshold
    # by more than log(terms) cannot be one, and needs no exponential
    a, _ = _terms(D0, drows, base, bets, np.full(1, lcb_before))
    flat = a.reshape(nb, -1)
    near = np.flatnonzero(flat.max(axis=1) + np.log(flat.shape[1]) >= log_threshold)
    cand = near[log_mixture(a[near], np.zeros(a.shape[1:])) >= log_threshold] if near.size else near
    r = floor.copy()
    if cand.size:
        # start at the left end of the bracket [0, 1] split at the tolerance, whatever came
        # before: a block's r_s depends on the block alone, so the bound does not depend on the
        # batching; every Newton iterate stays left of the root (f convex and decreasing)
        Dc, rc, bc = D0[cand], drows[cand], base[cand]
        above = log_e_at(Dc, rc, bc, bets, np.full(cand.size, tolerance)) >= log_threshold
        x = np.where(above, tolerance, 0.0)
        best = np.full(cand.size, -1.0)  # the last iterate whose mixture crossed (none yet)
        for _ in range(LCB_STEPS + 1):
            f, step = _newton_step(Dc, rc, bc, bets, x, log_threshold)
            ok = f >= 0  # past the root by a rounding error: keep the last iterate that crossed
            best = np.where(ok, x, best)
            x = np.where(ok, np.minimum(np.maximum(step, x), 1.0), x)
        r[cand] = np.maximum(best, floor[cand])
    return np.maximum.accumulate(np.maximum(r, lcb_before))


def _starts(carry, L0, nb):
    """The bound's start of every component as of each new block (see the module docstring).

    Returns
    -------
    low : ndarray of shape (k, C)
        The running minimum of ``L0`` after the new blocks (the carry).
    start_L0 : ndarray of shape (nb, k, C)
        ``L0`` at the start boundary as of each new block.
    block : ndarray of int64 of shape (nb, k, C)
        The start boundary (blocks of the segment before the start) as of each new block.
    log_pi : ndarray of shape (nb, k, C)
        ``log pi`` of the start (block ``block + 1``).
    """
    new = L0[1 : nb + 1]
    run = np.minimum.accumulate(np.concatenate([carry.min_log_capital0[None], new]), axis=0)[1:]
    near = new <= run + CHANGE_TOLERANCE
    idx = np.where(near, np.arange(nb)[:, None, None], -1)
    last = np.maximum.accumulate(idx, axis=0)  # the latest near new boundary up to each block
    fresh = last >= 0
    block = np.where(fresh, carry.n_blocks + 1 + last, carry.start_block).astype(np.int64)
    safe = np.maximum(last, 0)
    at0 = np.take_along_axis(L0, safe + 1, axis=0)
    # log pi of the starts: one per new boundary and one per carried start, then gathered
    new_pi = start_weights(carry.n_blocks + 2 + np.arange(nb))[safe]
    log_pi = np.where(fresh, new_pi, start_weights(carry.start_block + 1))
    return run[-1].copy(), np.where(fresh, at0, carry.start_log_capital0), block, log_pi


def _running_min(L, low, at, n_blocks, upto):
    """Running minimum of each component's log capital, and the latest boundary near it.

    Over the boundaries up to ``n_blocks + upto`` (``L[1:upto + 1]`` are the new ones; ``low``
    and ``at`` the minimum and the boundary over the ``n_blocks`` before): the minimum ``m`` and
    the latest boundary ``j`` with ``L_j <= m_j + CHANGE_TOLERANCE``, where ``m_j`` is the
    minimum up to ``j`` itself. That is the latest start whose evidence ``L_t - L_j`` is within
    ``CHANGE_TOLERANCE`` of the best start's (for any later ``t``: a new minimum after ``j`` is
    itself such a boundary, and before it the condition does not change).
    """
    if upto == 0:
        return low.copy(), at.copy()
    new = L[1 : upto + 1]
    run = np.minimum.accumulate(np.concatenate([low[None], new]), axis=0)[1:]
    near = new <= run + CHANGE_TOLERANCE
    last = upto - 1 - np.argmax(near[::-1], axis=0)  # the latest new boundary near the minimum
    return run[-1].copy(), np.where(near.any(axis=0), n_blocks + 1 + last, at).astype(np.int64)


def change_start(carry, L, i, logw):
    """The block where the change starts, estimated after new block ``i`` (CUSUM-type maximum).

    Parameters
    ----------
    carry : PathCarry
        The state before the new blocks.
    L : ndarray of shape (nb + 1, k, C)
        Log capital at the tolerance at the boundary before the new blocks and after each
        (``advance_paths``).
    i : int
        The new block after which the change is estimated (the alarm).
    logw : ndarray of shape (k, C)
        Log prior weights.

    Returns
    -------
    start : int
        The first block (0-based, counted in the segment) of the estimated change: for the
        component with the largest ``log w_c + L_{c, tau} - min_j L_{c, j}``, the latest
        boundary ``j`` with ``L_{c, j} <= min_{i <= j} L_{c, i} + log 2``.
    component : int
        The flat index ``class * C + c`` of that component.
    """
    low, at = _running_min(L, carry.min_log_capital, carry.argmin_log_capital, carry.n_blocks, i + 1)
    score = (logw + L[i + 1] - low).ravel()
    c = int(np.argmax(score))
    return int(at.ravel()[c]), c
