"""The paired bootstrap, its intervals, the ranks and ``p_best``.

The bootstrap is *paired*: every replicate resamples the rows once and scores every model on the
same resample, so two models' intervals are comparable and ``p_best`` (the fraction of
replicates in which a model is the best or tied for best) says how stable a ranking is.

Intervals
---------
Calibration errors estimated from a sample are biased upward by its noise, and a bootstrap
resample (with its duplicated rows) adds about as much again, so the plain percentile interval
of the replicates runs above the value and can exclude it (the demo had smECE 0.00413 with
interval [0.00457, 0.00578]). The default interval, ``"bc-percentile"``, is a bias-corrected
percentile interval: the replicates are shifted by the bootstrap's estimate of that resampling
bias, ``value - median(replicates)``, before their quantiles are taken,

    [value - (median - q_lo), value + (q_hi - median)],

so it keeps the spread and skewness of the bootstrap distribution but is centred on the value
(which it always contains), then clipped to the metric's range. It measures the sampling
variability of the value; like every interval around a biased estimate, it is not an interval
for the population value of a calibration error near zero. ``benchmarks/report_intervals.py``
measures its coverage on a simulation with a known truth. ``"percentile"`` (the old interval)
and ``"basic"`` (``[2 value - q_hi, 2 value - q_lo]``, which corrects the bias twice) are
available for comparison.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn import config_context
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

#: Interval methods (see the module docstring).
INTERVAL_METHODS = ("bc-percentile", "percentile", "basic")

#: Ranks and ``p_best`` compare values rounded to this many significant digits, so that models
#: whose metric differs only by floating-point noise are tied.
RANK_SIGNIFICANT_DIGITS = 10


def prepare_all(data, preds, metrics):
    """Per model and metric, the keyword arguments fixed on the full validation set."""
    return [[m.prepare(data, p) if m.prepare is not None else {} for m in metrics] for p in preds]


def score_all(data, preds, metrics, params):
    """Array (n_models, n_metrics) of every metric for every model on one (re)sample."""
    return np.array(
        [
            [m.func(data, p, **kw) for m, kw in zip(metrics, pk, strict=True)]
            for p, pk in zip(preds, params, strict=True)
        ],
        dtype=float,
    )


def _chunk(data, preds, metrics, params, seeds):
    # metrics that are means of per-row losses are resampled from those losses
    rows = [[m.pointwise(data, p) if m.pointwise is not None else None for m in metrics] for p in preds]
    out = np.empty((len(seeds), len(preds), len(metrics)))
    # many small problems: one BLAS thread each is faster than a pool fighting other processes
    with config_context(skip_parameter_validation=True), threadpool_limits(limits=1):
        for r, seed in enumerate(seeds):
            idx = np.random.RandomState(seed).randint(0, data.n, size=data.n)
            sub = data.take(idx)
            for i, p in enumerate(preds):
                pi = p[idx]
                for j, m in enumerate(metrics):
                    lr = rows[i][j]
                    out[r, i, j] = lr[idx].mean() if lr is not None else m.func(sub, pi, **params[i][j])
    return out


def run_bootstrap(data, preds, metrics, params, n_bootstrap, n_jobs, random_state, verbose):
    """Every metric of every model on ``n_bootstrap`` paired resamples: ``(B, n_models, n_metrics)``.

    Every replicate draws its rows from its own seed, so results do not depend on ``n_jobs``.
    """
    rng = check_random_state(random_state)
    seeds = rng.randint(0, np.iinfo(np.int32).max, size=n_bootstrap)
    if n_bootstrap == 0:
        return np.empty((0, len(preds), len(metrics)))
    n_workers = effective_n_jobs(n_jobs)
    n_chunks = int(min(n_bootstrap, max(1, 4 * n_workers), 50))
    chunks = [c for c in np.array_split(seeds, n_chunks) if c.size]
    t0 = last = time.perf_counter()
    results, done = [], 0
    parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    for res in parallel(delayed(_chunk)(data, preds, metrics, params, c) for c in chunks):
        results.append(res)
        done += res.shape[0]
        if verbose and (done == n_bootstrap or time.perf_counter() - last >= 1.0):
            last = time.perf_counter()
            print(
                f"[skcal] bootstrap: {done}/{n_bootstrap} replicates ({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    return np.concatenate(results, axis=0)


def intervals(values, replicates, confidence_level, method="bc-percentile", bounds=(None, None)):
    """Bootstrap intervals of several models' values.

    Parameters
    ----------
    values : ndarray of shape (n_models,)
        The metric on the full sample.
    replicates : ndarray of shape (n_bootstrap, n_models)
        The metric on every paired resample (NaN allowed).
    confidence_level : float
        Nominal coverage.
    method : {"bc-percentile", "percentile", "basic"}, default="bc-percentile"
        See the module docstring.
    bounds : tuple, default=(None, None)
        The metric's range; the interval is clipped to it.

    Returns
    -------
    low, high : ndarray of shape (n_models,)
        NaN where a model has no finite replicate.
    """
    n_models = replicates.shape[1]
    if replicates.shape[0] == 0 or not np.isfinite(replicates).any():
        return np.full(n_models, np.nan), np.full(n_models, np.nan)
    alpha = (1.0 - confidence_level) / 2.0
    with warnings.catch_warnings():  # a model whose metric is NaN on every replicate
        warnings.simplefilter("ignore", RuntimeWarning)
        q_lo = np.nanquantile(replicates, alpha, axis=0)
        q_hi = np.nanquantile(replicates, 1.0 - alpha, axis=0)
        med = np.nanmedian(replicates, axis=0)
    if method == "percentile":
        low, high = q_lo, q_hi
    elif method == "basic":
        low, high = 2 * values - q_hi, 2 * values - q_lo
    elif method == "bc-percentile":
        low, high = values - (med - q_lo), values + (q_hi - med)
    else:
        raise ValueError(f"interval method must be one of {INTERVAL_METHODS}; got {method!r}.")
    lo_b, hi_b = bounds
    if lo_b is not None:
        low, high = np.maximum(low, lo_b), np.maximum(high, lo_b)
    if hi_b is not None:
        low, high = np.minimum(low, hi_b), np.minimum(high, hi_b)
    return low, high


def round_significant(values, digits=RANK_SIGNIFICANT_DIGITS):
    """``values`` rounded to ``digits`` significant digits (zero, NaN and infinity unchanged)."""
    v = np.asarray(values, dtype=float)
    # Decimal formatting is exact at every magnitude; the arrays are small.
    return np.array([float(f"{x:.{digits}g}") for x in v.ravel()]).reshape(v.shape)


def ranks(values, greater_is_better, by_abs=False):
    """Ranks (1 is best) of values rounded to ``RANK_SIGNIFICANT_DIGITS``; ties share the lower rank."""
    v = np.abs(values) if by_abs else np.asarray(values, dtype=float)
    v = round_significant(v)
    key = -v if greater_is_better else v
    return pd.Series(key).rank(method="min", na_option="bottom").to_numpy().astype(int)


def p_best(replicates, greater_is_better, by_abs=False):
    """Fraction of replicates in which each model is the best or tied for best (NaN: worst)."""
    if replicates.shape[0] == 0 or not np.isfinite(replicates).any():
        return np.full(replicates.shape[1], np.nan)
    key = round_significant(np.abs(replicates) if by_abs else replicates)
    key = -key if greater_is_better else key
    key = np.where(np.isnan(key), np.inf, key)
    return (key == key.min(axis=1, keepdims=True)).mean(axis=0)
