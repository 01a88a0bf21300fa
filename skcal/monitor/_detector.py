"""The paths of a monitor: the mixture e-process, the e-detector and the change location.

Given the per-block log factors ``lf[j, f]`` of every test function ``f`` (see
:mod:`skcal.monitor._betting`), with ``L_{f, t} = sum_{j <= t} lf[j, f]`` the log capital after
block ``t`` (``L_{f, 0} = 0``):

* **Test** (``mode="test"``): the mixture ``E_t = sum_f w_f exp(L_{f, t})``, a nonnegative
  supermartingale with ``E_0 = 1``; alarm when ``E_t >= 1 / alpha`` (Ville's inequality:
  probability at most ``alpha`` over an unbounded horizon), anytime-valid p-value
  ``min(1, 1 / max_{s <= t} E_s)``.
* **e-detector** (``mode="detect"``, Shin, Ramdas and Rinaldo): per function the
  Shiryaev-Roberts statistic of the processes started at every block with shared bets,
  ``M_{f, t} = sum_{j = 1..t} K_{f, t} / K_{f, j - 1} = (M_{f, t - 1} + 1) exp(lf[t, f])``,
  ``M_{f, 0} = 0``, and the statistic is their mixture ``M_t = sum_f w_f M_{f, t}`` (the
  statistic used by the alarm). Under the null every factor has conditional mean at most one, so
  ``E[M_{f, t} | past] <= M_{f, t - 1} + 1``: ``M_t - t`` is a supermartingale starting at 0.
  For the alarm time ``tau = inf{t : M_t >= 1 / alpha}``, optional stopping at ``tau ^ n`` and
  Fatou's lemma give ``E[tau] >= E[M_tau] >= 1 / alpha`` when ``E[tau]`` is finite (and trivially
  otherwise): the average run length to a false alarm is at least ``1 / alpha`` blocks. The
  mixture over ``f`` is itself an e-detector, since ``sum_f w_f K_{f, t} / K_{f, j - 1}`` is a
  test supermartingale started at block ``j``.
* **Change location** (CUSUM-type maximum): at the first alarm ``tau``, the test function with
  the largest weighted evidence from its best start, ``log w_f + L_{f, tau} - min_j L_{f, j}``
  (the pair ``(f, j)`` with the largest ``w_f K_{f, tau} / K_{f, j - 1}``), and for it the latest
  start ``j`` whose evidence ``K_{f, tau} / K_{f, j - 1}`` is at least half the best (within
  ``log 2`` of it). Before a change a calibrated stream's log capital is nearly flat (the bets
  are near 0), so its exact minimum falls anywhere in the flat stretch; the latest start near
  the minimum is where the evidence begins to grow. It needs a running minimum and one boundary
  per function, so the memory does not grow with the stream.

In logs, ``log M_{f, t} = L_{f, t} + log sum_{j <= t} exp(-L_{f, j - 1})``, where the second
term is one ``np.logaddexp.accumulate`` along the blocks; every path is computed for all new
blocks at once and continues exactly from the carry of the previous call.

References
----------
J. Shin, A. Ramdas and A. Rinaldo, "E-detectors: a nonparametric framework for sequential change
detection", New England Journal of Statistics in Data Science 2(2), 2024.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skcal.monitor._betting import log_mixture

__all__ = ["PathCarry", "advance_paths", "change_start", "CHANGE_TOLERANCE"]

#: A start of the change is "near the best" when its evidence is at least half the best's.
CHANGE_TOLERANCE = float(np.log(2.0))


@dataclass
class PathCarry:
    """What a path needs from the blocks before: all arrays of shape ``(k, F)`` but the scalars."""

    n_blocks: int
    log_capital: np.ndarray  # L_{f, t}
    log_sr: np.ndarray  # log sum_{j <= t} exp(-L_{f, j - 1}) (-inf before the first block)
    min_log_capital: np.ndarray  # min_{j <= t} L_{f, j}
    argmin_log_capital: np.ndarray  # the latest boundary j near it (see _running_min; int64)
    max_log_e: float  # max_{s <= t} log E_s (0 before the first block: E_0 = 1)

    @classmethod
    def initial(cls, shape):
        return cls(
            n_blocks=0,
            log_capital=np.zeros(shape),
            log_sr=np.full(shape, -np.inf),
            min_log_capital=np.zeros(shape),
            argmin_log_capital=np.zeros(shape, dtype=np.int64),
            max_log_e=0.0,
        )


def advance_paths(carry, lf, logw, detect):
    """Advance every path over new blocks.

    Parameters
    ----------
    carry : PathCarry
        The state after the blocks before (not modified).
    lf : ndarray of shape (nb, k, F)
        Log factors of the new blocks.
    logw : ndarray of shape (k, F)
        Log prior weights of the test functions.
    detect : bool
        Whether to compute the e-detector (its log-sum-exp is most of the cost of a path).

    Returns
    -------
    out : dict
        ``log_e`` (nb,), the log mixture e-value after each new block; ``log_m`` (nb,), the log
        e-detector statistic (NaN unless ``detect``); ``log_capital`` (nb + 1, k, F), each
        function's log capital at the boundary before the new blocks and after each.
    carry : PathCarry
        The state after the new blocks.
    """
    nb = lf.shape[0]
    L = np.cumsum(np.concatenate([carry.log_capital[None], lf]), axis=0)  # L[0]: before
    log_e = log_mixture(L[1:], logw)
    if detect:
        sr = np.logaddexp.accumulate(np.concatenate([carry.log_sr[None], -L[:-1]]), axis=0)[1:]
        log_m = log_mixture(L[1:] + sr, logw)
        log_sr = sr[-1].copy()
    else:
        log_m = np.full(nb, np.nan)
        log_sr = carry.log_sr.copy()
    low, at = _running_min(carry, L, nb)
    new = PathCarry(
        n_blocks=carry.n_blocks + nb,
        log_capital=L[-1].copy(),
        log_sr=log_sr,
        min_log_capital=low,
        argmin_log_capital=at,
        max_log_e=max(carry.max_log_e, float(np.max(log_e))),
    )
    return {"log_e": log_e, "log_m": log_m, "log_capital": L}, new


def _running_min(carry, L, upto):
    """Running minimum of each function's log capital, and the latest boundary near it.

    Over the boundaries up to ``carry.n_blocks + upto`` (``L[1:upto + 1]`` are the new ones):
    the minimum ``m`` and the latest boundary ``j`` with ``L_j <= m_j + CHANGE_TOLERANCE``,
    where ``m_j`` is the minimum up to ``j`` itself. That is the latest start whose evidence
    ``L_t - L_j`` is within ``CHANGE_TOLERANCE`` of the best start's (for any later ``t``: a new
    minimum after ``j`` is itself such a boundary, and before it the condition does not change).
    """
    if upto == 0:
        return carry.min_log_capital.copy(), carry.argmin_log_capital.copy()
    new = L[1 : upto + 1]
    run = np.minimum.accumulate(np.concatenate([carry.min_log_capital[None], new]), axis=0)[1:]
    near = new <= run + CHANGE_TOLERANCE
    last = upto - 1 - np.argmax(near[::-1], axis=0)  # the latest new boundary near the minimum
    return run[-1].copy(), np.where(
        near.any(axis=0), carry.n_blocks + 1 + last, carry.argmin_log_capital
    ).astype(np.int64)


def change_start(carry, L, i, logw):
    """The block where the change starts, estimated after new block ``i`` (CUSUM-type maximum).

    Parameters
    ----------
    carry : PathCarry
        The state before the new blocks.
    L : ndarray of shape (nb + 1, k, F)
        Log capital at the boundary before the new blocks and after each (``advance_paths``).
    i : int
        The new block after which the change is estimated (the alarm).
    logw : ndarray of shape (k, F)
        Log prior weights.

    Returns
    -------
    start : int
        The first block (0-based) of the estimated change: for the function with the largest
        ``log w_f + L_{f, tau} - min_j L_{f, j}``, the latest boundary ``j`` with
        ``L_{f, j} <= min_{i <= j} L_{f, i} + log 2``.
    function : int
        The flat index ``class * F + f`` of that test function.
    """
    low, at = _running_min(carry, L, i + 1)
    score = (logw + L[i + 1] - low).ravel()
    f = int(np.argmax(score))
    return int(at.ravel()[f]), f
