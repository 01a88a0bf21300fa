"""The p-value per model of H0 "the predictions are calibrated", behind one function.

:func:`calibration_pvalue` uses :func:`skcal.calibration_test.calibration_test` (consistency
resampling of smECE, Brocker and Smith 2007) when that module exists. Without it, a small
fallback computes a consistency-resampling p-value itself: labels ``y* ~ Bernoulli(p)`` are drawn
``n_resamples`` times and a kernel-smoothed calibration error is recomputed on each, all
replicates at once. The fallback's statistic is smECE's residual smoothing *at the bandwidth
smECE selects on the observed labels* (held fixed across replicates, on a 201-point grid), so
every replicate costs two sparse products; it is an approximation of smECE's own test and is
named as such in the report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from skcal.smooth_ece import smooth_ece

#: Grid of the fallback statistic.
FALLBACK_GRID = 201
#: Replicates drawn at once by the fallback (memory ``FALLBACK_CHUNK * n``).
FALLBACK_CHUNK = 100


@dataclass(frozen=True)
class PValue:
    """A calibration test of one model: statistic, p-value and how they were obtained."""

    statistic: float
    pvalue: float
    measure: str
    method: str
    n_resamples: int


def calibration_pvalue(y, p, *, n_resamples=1000, random_state=None):
    """The p-value of "``p`` is calibrated for ``y``" by consistency resampling of smECE.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    p : ndarray of shape (n,)
        Probabilities of the label 1.
    n_resamples : int, default=1000
        Resampled label vectors.
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling.

    Returns
    -------
    PValue
    """
    try:
        from skcal.calibration_test import calibration_test
    except ImportError:
        return _fallback(y, p, n_resamples=n_resamples, random_state=random_state)
    res = calibration_test(y, p, measure="smooth_ece", n_resamples=n_resamples, random_state=random_state)
    return PValue(
        float(res.statistic),
        float(res.pvalue),
        "smECE",
        "consistency resampling (skcal.calibration_test)",
        int(n_resamples),
    )


def _kernel(sigma):
    g = np.linspace(0.0, 1.0, FALLBACK_GRID)
    d = g[:, None] - g[None, :]
    s = g[:, None] + g[None, :]
    return (
        np.exp(-(d**2) / (2 * sigma**2))
        + np.exp(-(s**2) / (2 * sigma**2))
        + np.exp(-((2 - s) ** 2) / (2 * sigma**2))
    )


def _fallback(y, p, *, n_resamples, random_state):
    """Consistency resampling of smECE at the observed bandwidth (see the module docstring)."""
    # small dense products: one BLAS thread is faster (and does not fight other processes)
    with threadpool_limits(limits=1):
        return _fallback_impl(y, p, n_resamples=n_resamples, random_state=random_state)


def _fallback_impl(y, p, *, n_resamples, random_state):
    _, sigma = smooth_ece(y, p, return_bandwidth=True)
    sigma = max(float(sigma), 1.0 / (FALLBACK_GRID - 1))
    E = FALLBACK_GRID
    pos = p * (E - 1)
    lo = np.clip(np.floor(pos).astype(np.intp), 0, E - 2)
    frac = pos - lo
    n = p.shape[0]
    D = sparse.csr_matrix(
        (
            np.column_stack([1 - frac, frac]).ravel(),
            (np.repeat(np.arange(n), 2), np.column_stack([lo, lo + 1]).ravel()),
        ),
        shape=(n, E),
    )
    K = _kernel(sigma)
    dens = (D.T @ np.ones(n)) @ K
    total = dens.sum()

    def stat(residuals):  # residuals: (b, n) -> (b,) smoothed |residual| integrated over the grid
        return np.abs((D.T @ residuals.T).T @ K).sum(axis=1) / total

    observed = float(stat((p - y)[None, :])[0])
    rng = check_random_state(random_state)
    null = []
    for start in range(0, n_resamples, FALLBACK_CHUNK):
        b = min(FALLBACK_CHUNK, n_resamples - start)
        ystar = (rng.uniform(size=(b, n)) < p).astype(float)
        null.append(stat(p - ystar))
    null = np.concatenate(null) if null else np.empty(0)
    pvalue = (1.0 + np.sum(null >= observed - 1e-15)) / (1.0 + null.shape[0])
    return PValue(
        observed,
        float(pvalue),
        "smoothed |residual| at smECE's bandwidth",
        "consistency resampling, fallback of skcal.report (bandwidth fixed at the observed one)",
        int(n_resamples),
    )
