"""Consistency-resampling test of calibration (Brocker and Smith, 2007).

Under H0 "the predictions are calibrated", ``E[y | p] = p``, so labels drawn as
``y* ~ Bernoulli(p)`` are distributed as the real labels would be. Recomputing a calibration
measure on ``R`` such replicates gives its null distribution at these very predictions, and the
p-value ``(1 + #{null >= observed}) / (1 + R)``, which is valid (never anti-conservative) for
any measure, also one with ties or a discrete null distribution.

**Vectorised replicates.** Only the label-dependent sums of a measure change between
replicates; everything that depends on ``p`` and the weights alone (cells, sort order, soft-bin
weights, the grid rule) is computed once. Replicates are processed in blocks: a block of ``B``
label vectors is a ``B x n`` array, and its label sums per cell are one sparse-matrix product.

* ``"scdl"``: the soft-bin label masses ``A*_i`` on the finest grid (``p``'s masses ``W_i`` and
  the ``"auto"`` grid rule, which depends only on the weights, are fixed); every dyadic grid is
  folded and ``SCFDL`` computed for the whole block at once. Exact: each replicate's value is
  :func:`skcal.scdl.scdl_score` of its labels.
* ``"binned_ece"``: the residual sum per equal-width bin (11 bins). Exact.
* ``"cutoff"``: predictions sorted once; the running sums of the block are one ``cumsum`` along
  the rows. Exact.
* ``"smooth_ece"``: the residual channels of the ``2^18``-cell deposit are formed for the whole
  block at once; the bandwidth search (``smECE(sigma) = sigma``, which depends on the labels) is
  then re-run for every replicate, so each value is exactly :func:`skcal.smooth_ece.smooth_ece`
  of its labels. Nothing is kept fixed between replicates except the label-free density channel.
* ``"smooth_calibration_error"`` (the Lipschitz smCE of :mod:`skcal.lipschitz`) and callables:
  a plain loop over replicates.

Each replicate ``r`` draws its labels from its own random stream (spawned from one
``SeedSequence``), so the result does not depend on the block size or ``n_jobs``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

from skcal._compat import StrOptions, validate_params
from skcal._constraints import BINARY_INPUTS, N_JOBS, RANDOM_STATE, StrictInterval
from skcal._validation import check_binary_probabilities
from skcal.binned_ece import binned_ece
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.stats._base import effective_sample_size
from skcal.stats._scdl import node_deposit, resolve_max_bins, scdl_values
from skcal.stats._smooth_ece import FINE_CELLS, FineGrid, smooth_ece_from_grid

#: Largest number of consistency resamples accepted (memory and time grow linearly in it).
MAX_RESAMPLES = 10**6

__all__ = ["CalibrationTestResult", "calibration_test", "MEASURES"]

#: Measures known by name.
MEASURES = ("scdl", "smooth_ece", "cutoff", "binned_ece", "smooth_calibration_error")
#: The function of each named measure (the loop over replicates calls it; see ``vectorise``).
_FUNCTIONS = {
    "scdl": scdl_score,
    "smooth_ece": smooth_ece,
    "cutoff": cutoff_calibration_error,
    "binned_ece": binned_ece,
    "smooth_calibration_error": smooth_calibration_error,
}

#: Largest number of label entries (replicates x rows) held in memory at once.
_BLOCK_ENTRIES = 1 << 22

#: Quantiles of the null distribution reported.
NULL_QUANTILES = (0.5, 0.9, 0.95, 0.99)


@dataclass(frozen=True)
class CalibrationTestResult:
    """Result of :func:`calibration_test`.

    Parameters
    ----------
    statistic : float
        The measure on the observed labels.
    pvalue : float
        ``(1 + #{null >= statistic}) / (1 + n_resamples)``.
    measure : str
        Name of the measure (a callable's ``__name__``).
    n_resamples : int
        Number of consistency resamples ``R``.
    null_mean : float
        Mean of the null distribution.
    null_std : float
        Standard deviation of the null distribution (``ddof=1``).
    null_quantiles : dict
        Quantiles ``{0.5, 0.9, 0.95, 0.99}`` of the null distribution.
    null_distribution : ndarray of shape (n_resamples,)
        The measure on every replicate, in replicate order.
    """

    statistic: float
    pvalue: float
    measure: str
    n_resamples: int
    null_mean: float
    null_std: float
    null_quantiles: dict
    null_distribution: np.ndarray = field(repr=False)

    @validate_params(
        {"level": [StrictInterval(Real, 0, 1, closed="both")]}, prefer_skip_nested_validation=True
    )
    def rejects(self, level=0.05):
        """Whether H0 "calibrated" is rejected at ``level``.

        Parameters
        ----------
        level : float, default=0.05
            The significance level.

        Returns
        -------
        bool
            ``pvalue <= level``.
        """
        return bool(self.pvalue <= level)


def _seed_sequence(random_state):
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, (Integral, np.integer)):
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**32, size=4, dtype=np.uint64).tolist())
    raise ValueError(f"random_state must be None, an int or a RandomState; got {random_state!r}.")


def _draw_block(seeds, p):
    """Labels ``y* ~ Bernoulli(p)`` for one block of replicates, shape ``(len(seeds), n)``."""
    Y = np.empty((len(seeds), p.shape[0]))
    for k, s in enumerate(seeds):
        Y[k] = np.random.default_rng(s).random(p.shape[0]) < p
    return Y


# -- vectorised measures ----------------------------------------------------------------------
# Each kernel is built once from (p, w) and maps a (B, n) block of labels to B values.


class _ScdlKernel:
    def __init__(self, p, w):
        n = p.shape[0]
        self.M = resolve_max_bins("auto", effective_sample_size(w, n), n)
        self.total = float(n) if w is None else float(w.sum())
        self.W, _ = node_deposit(p, np.zeros(n), w, self.M)
        t = p * self.M
        c = np.minimum(t.astype(np.intp), self.M - 1)
        u = t - c
        wt = np.ones(n) if w is None else w
        rows = np.concatenate([c, c + 1])
        cols = np.concatenate([np.arange(n), np.arange(n)])
        vals = np.concatenate([wt - wt * u, wt * u])
        self.S = sparse.csr_matrix((vals, (rows, cols)), shape=(self.M + 1, n))

    def __call__(self, Y):
        A = np.asarray((self.S @ Y.T).T)  # (B, M + 1) label masses
        return scdl_values(self.W, A, self.total)


class _BinnedKernel:
    def __init__(self, p, w, n_bins=11):
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        ids = np.searchsorted(edges[1:-1], p)
        wt = np.ones_like(p) if w is None else w
        self.total = float(wt.sum())
        self.S = sparse.csr_matrix((wt, (ids, np.arange(p.shape[0]))), shape=(n_bins, p.shape[0]))
        self.wp = np.bincount(ids, weights=wt * p, minlength=n_bins)

    def __call__(self, Y):
        D = np.asarray(self.S @ Y.T) - self.wp[:, None]  # (n_bins, B) residual sums
        return np.abs(D).sum(axis=0) / self.total


class _CutoffKernel:
    def __init__(self, p, w):
        self.order = np.argsort(p)
        ps = p[self.order]
        self.last = np.empty(ps.shape[0], dtype=bool)
        self.last[:-1] = ps[1:] != ps[:-1]
        self.last[-1] = True
        wt = np.ones_like(p) if w is None else w
        self.w = wt[self.order]
        self.wp = (wt * p)[self.order]
        self.total = float(wt.sum())

    def __call__(self, Y):
        r = Y[:, self.order] * self.w - self.wp  # w (y - p) in sorted order
        S = np.cumsum(r, axis=1)[:, self.last]
        hi = np.maximum(S.max(axis=1), 0.0)
        lo = np.minimum(S.min(axis=1), 0.0)
        return (hi - lo) / self.total


class _SmoothECEKernel:
    def __init__(self, p, w):
        n = p.shape[0]
        wt = np.ones(n) if w is None else w
        c = np.minimum((p * FINE_CELLS).astype(np.intp), FINE_CELLS - 1)
        N = np.bincount(c, weights=wt, minlength=FINE_CELLS)
        occupied = np.flatnonzero(N > 0)
        cell_of = np.full(FINE_CELLS, -1, dtype=np.intp)
        cell_of[occupied] = np.arange(occupied.size)
        k = occupied.size
        keep = wt > 0
        self.S = sparse.csr_matrix(
            (wt[keep], (cell_of[c[keep]], np.flatnonzero(keep))), shape=(k, n)
        )
        self.Sp = sparse.csr_matrix(
            ((wt * p)[keep], (cell_of[c[keep]], np.flatnonzero(keep))), shape=(k, n)
        )
        self.N = N[occupied]
        self.F = np.bincount(c, weights=wt * p, minlength=FINE_CELLS)[occupied]
        self.PF = np.bincount(c, weights=wt * p * p, minlength=FINE_CELLS)[occupied]
        self.scale = n / float(wt.sum())

    def __call__(self, Y):
        WY = np.asarray(self.S @ Y.T)  # (k, B): sum w y* per occupied cell
        WYP = np.asarray(self.Sp @ Y.T)  # sum w p y*
        out = np.empty(Y.shape[0])
        for b in range(Y.shape[0]):
            grid = FineGrid(
                self.N * self.scale,
                self.F * self.scale,
                (self.F - WY[:, b]) * self.scale,
                (self.PF - WYP[:, b]) * self.scale,
                np.clip(self.F / self.N, 0.0, 1.0),
            )
            out[b] = smooth_ece_from_grid(grid)
        return out


class _LoopKernel:
    def __init__(self, p, w, func):
        self.p, self.w, self.func = p, w, func

    def __call__(self, Y):
        out = np.empty(Y.shape[0])
        for b in range(Y.shape[0]):
            y = Y[b].astype(np.int64)
            value = self.func(y, self.p) if self.w is None else self.func(y, self.p, sample_weight=self.w)
            out[b] = float(value)
        return out


def _kernel(measure, p, w, vectorise=True):
    if callable(measure):
        return _LoopKernel(p, w, measure), getattr(measure, "__name__", "callable")
    if not vectorise:
        return _LoopKernel(p, w, _named_function(measure)), measure
    if measure == "scdl":
        return _ScdlKernel(p, w), measure
    if measure == "binned_ece":
        return _BinnedKernel(p, w), measure
    if measure == "cutoff":
        return _CutoffKernel(p, w), measure
    if measure == "smooth_ece":
        return _SmoothECEKernel(p, w), measure
    return _LoopKernel(p, w, _named_function(measure)), measure


def _named_function(measure):
    return _FUNCTIONS[measure]


def _null_values(kernel, p, seeds, n_jobs):
    block = max(1, min(len(seeds), _BLOCK_ENTRIES // max(1, p.shape[0])))
    blocks = [seeds[k : k + block] for k in range(0, len(seeds), block)]
    if n_jobs is None or n_jobs == 1 or len(blocks) == 1:
        parts = [kernel(_draw_block(b, p)) for b in blocks]
    else:
        parts = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(lambda b: kernel(_draw_block(b, p)))(b) for b in blocks
        )
    return np.concatenate(parts)


@validate_params(
    {
        **BINARY_INPUTS,
        "measure": [StrOptions(set(MEASURES)), callable],
        "n_resamples": [StrictInterval(Integral, 1, MAX_RESAMPLES, closed="both")],
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
    },
    # a callable measure is the user's code: the skcal functions it calls validate their arguments
    prefer_skip_nested_validation=False,
)
def calibration_test(
    y_true,
    y_prob,
    *,
    measure="smooth_ece",
    n_resamples=1000,
    sample_weight=None,
    random_state=None,
    n_jobs=None,
    pos_label=None,
):
    """Test H0 "the predictions are calibrated" by consistency resampling.

    Draws ``n_resamples`` label vectors ``y* ~ Bernoulli(p)`` (Brocker and Smith, 2007),
    recomputes ``measure`` on each, and compares the observed value with that null
    distribution: ``pvalue = (1 + #{null >= observed}) / (1 + n_resamples)``. Only the
    label-dependent sums of a named measure are recomputed per replicate, for blocks of
    replicates at once (see the module documentation); each replicate's value equals the measure
    function on its labels exactly.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    measure : {"smooth_ece", "scdl", "cutoff", "binned_ece", "smooth_calibration_error"} or \
callable, default="smooth_ece"
        The test statistic (larger means less calibrated): :func:`skcal.smooth_ece.smooth_ece`,
        :func:`skcal.scdl.scdl_score` (``"auto"`` grid rule), the cutoff calibration error, the
        11-bin equal-width ECE, or the Lipschitz smooth calibration error of
        :mod:`skcal.lipschitz`. A callable ``f(y_true, y_prob)`` (called with
        ``sample_weight=`` when weights are given) is evaluated in a loop.
    n_resamples : int, default=1000
        Number of consistency resamples ``R``, at most ``10**6`` (a p-value resolution of 1e-6 is
        far below what any test level needs); the smallest attainable p-value is ``1 / (R + 1)``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights, used by the measure on the observed and the resampled labels.
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling (replicate ``r`` draws from the ``r``-th stream spawned from one
        ``SeedSequence``), so results do not depend on ``n_jobs``.
    n_jobs : int, default=None
        Threads over blocks of replicates (``None``: one).
    pos_label : int, float, bool or str, default=None
        The positive class of ``y_true``.

    Returns
    -------
    CalibrationTestResult
        The statistic, p-value and null distribution summary (mean, std, quantiles).

    See Also
    --------
    skcal.smooth_ece.smooth_ece, skcal.scdl.scdl_score : measures usable as the statistic.

    Notes
    -----
    The test is exact in the sense of Monte Carlo tests: under H0 with the predictions held
    fixed, the p-value satisfies ``P(pvalue <= a) <= a`` for every ``a``. A small p-value says
    the labels are unlikely under ``E[y | p] = p``; a large one is not evidence of calibration
    beyond the test's power at this sample size.

    References
    ----------
    J. Brocker and L. A. Smith, "Increasing the reliability of reliability diagrams", Weather
    and Forecasting 22 (2007), 651-661.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.calibration_test import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> res = calibration_test(y, p, measure="binned_ece", n_resamples=499, random_state=0)
    >>> res.pvalue                       # calibrated: not rejected
    0.274
    >>> biased = np.clip(p + 0.05, 0, 1)
    >>> calibration_test(y, biased, measure="smooth_ece", n_resamples=199, random_state=0).pvalue
    0.005
    >>> calibration_test(y, biased, measure="scdl", n_resamples=199, random_state=0).pvalue
    0.09

    SCDL is a decision loss: a shift by ``b`` costs threshold decisions only about ``b^2 / 2``,
    which 2000 rows do not resolve at ``b = 0.05``; at ``b = 0.1`` its p-value is 0.005 too.
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return _run(y, p, w, measure, n_resamples, random_state, n_jobs)


def _run(y, p, w, measure, n_resamples, random_state, n_jobs, vectorise=True):
    """The test on validated arrays; ``vectorise=False`` loops over the measure function."""
    kernel, name = _kernel(measure, p, w, vectorise=vectorise)
    statistic = float(kernel(y[None, :])[0])
    seeds = _seed_sequence(random_state).spawn(n_resamples)
    null = _null_values(kernel, p, seeds, n_jobs)
    # the observed and the resampled values come from the same arithmetic, so exact ties count
    pvalue = (1.0 + float(np.count_nonzero(null >= statistic))) / (1.0 + n_resamples)
    return CalibrationTestResult(
        statistic=statistic,
        pvalue=pvalue,
        measure=name,
        n_resamples=int(n_resamples),
        null_mean=float(null.mean()),
        null_std=float(null.std(ddof=1)) if n_resamples > 1 else math.nan,
        null_quantiles={q: float(np.quantile(null, q)) for q in NULL_QUANTILES},
        null_distribution=null,
    )
