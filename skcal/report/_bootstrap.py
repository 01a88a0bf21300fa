"""The paired bootstrap, its intervals, the ranks and ``p_best``.

The bootstrap is *paired*: every replicate resamples the rows once and scores every model on the
same resample, so two models' intervals are comparable and ``p_best`` (the fraction of
replicates in which a model is the best or tied for best) says how stable a ranking is.

It is a Poisson bootstrap computed through the statistics objects (:func:`run_bootstrap`):
replicate ``r`` counts validation row ``i`` ``W[r, i] ~ Poisson(1)`` times
(:func:`skcal.stats.poisson_weights`, keyed by the report's seed, the replicate and the row),
and each built-in metric's replicates are its statistics on those counts
(:class:`skcal.stats.PoissonBootstrap`), a block of replicates at a time; a metric given as a
callable is recomputed on each replicate's rows (row ``i`` repeated ``W[r, i]`` times).

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

import copy
import queue
import sys
import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn import config_context

from skcal._threads import one_blas_thread
from skcal.stats import PoissonBootstrap, PreparedRows, poisson_weights_into, update_together

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


#: Largest number of replicate weights (replicates x rows) drawn for one block of replicates: a
#: block holds them as bytes (a row's weights side by side), 128 MiB at most; the statistics
#: convert them to float a tile at a time. Larger blocks make CE2's replicate moments one product
#: with more rows of weights (a BLAS product is more efficient the more rows it has).
BLOCK_ENTRIES = 1 << 27
#: Most replicates in one block (200 replicates: two blocks of 100).
MAX_BLOCK = 100


@dataclass(frozen=True)
class BootstrapRun:
    """The replicates of a report and how they were obtained.

    Attributes
    ----------
    values : ndarray of shape (n_replicates, n_models, n_metrics)
        Every metric of every model on every replicate.
    n_requested : int
        Replicates asked for (``n_bootstrap``).
    seconds : float
        Wall time of the bootstrap.
    budget_limited : bool
        Whether ``max_seconds`` lowered the number of replicates.
    """

    values: np.ndarray
    n_requested: int
    seconds: float = 0.0
    budget_limited: bool = False


class Progress:
    """Progress of a report stage on stderr: a bar on a terminal, lines with ``verbose`` elsewhere.

    On a terminal (``sys.stderr.isatty()``) the bar is redrawn in place with ``\\r``; without
    one, a line is printed at most once a second when ``verbose`` is positive.
    """

    def __init__(self, label, total, unit, verbose=0, stream=None):
        self.label, self.total, self.unit = label, int(total), unit
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.bar = bool(isatty()) if callable(isatty) else False
        self.verbose = bool(verbose)
        self.t0 = self.last = time.perf_counter()
        self.drawn = False

    def update(self, done, total=None):
        """Report ``done`` of ``total`` units (``total`` may shrink, as under ``max_seconds``)."""
        if total is not None:
            self.total = int(total)
        now = time.perf_counter()
        finished = done >= self.total
        if self.bar:
            width = 24
            k = int(width * done / max(1, self.total))
            print(
                f"\r[skcal] {self.label} [{'#' * k}{'.' * (width - k)}] {done}/{self.total} {self.unit} "
                f"({now - self.t0:.1f} s)",
                end="\n" if finished else "",
                file=self.stream,
                flush=True,
            )
            self.drawn = not finished
        elif self.verbose and (finished or now - self.last >= 1.0):
            print(
                f"[skcal] {self.label}: {done}/{self.total} {self.unit} ({now - self.t0:.1f} s)",
                file=self.stream,
                flush=True,
            )
        self.last = now

    def close(self):
        """End an unfinished bar's line."""
        if self.bar and self.drawn:
            print(file=self.stream, flush=True)
            self.drawn = False


class _Job(NamedTuple):
    """One model's metric in the bootstrap: its prepared rows and how its replicates are made."""

    i: int  # the model
    j: int  # the metric
    prepared: object  # PreparedRows (None: a user's callable, recomputed on each resample)
    key: object  # the rows' key: their validation rows are ``rows[key]`` (None: the rows in order)
    template: object  # its statistics template
    second: object  # the second pass's scores (CE2's plug-in sums on the same rows), or None
    leader: object = None  # the job whose statistics it is computed from (compute_as), or None


class _Replicates:
    """One report's replicate machinery: per model and metric a prepared statistics template."""

    def __init__(self, data, preds, metrics, params, seed):
        self.data, self.preds, self.metrics, self.params, self.seed = data, preds, metrics, params, int(seed)
        self.n = int(data.n)
        self.rows = {}  # key -> the validation row of each array row
        self._buffers = {}  # reused weight arrays
        self.workspace = {}  # reused accumulators of the statistics (each block's are discarded)
        sorted_views = {}  # (model, view) -> its arrays and rows sorted by the prediction
        leaders = {}  # (model, _family) -> the job whose statistics a metric of that family reads
        self.jobs = []
        largest = self.n
        for i, p in enumerate(preds):
            for j, m in enumerate(metrics):
                family = _family(m, params[i][j])
                if family is not None and (i, family) in leaders:
                    k = leaders[(i, family)]
                    self.jobs.append(_Job(i, j, None, None, _as(self.jobs[k].template, m.measure), None, k))
                    continue
                spec = m.replicates(data, p, **params[i][j]) if m.replicates is not None else None
                if spec is None:
                    self.jobs.append(_Job(i, j, None, None, None, None))
                    continue
                arrays, rows = spec.arrays, spec.rows
                key = None if rows is None else (i, j)
                if spec.sort_by is not None:
                    # the binary measures of a view share one sort of the model's rows by the
                    # prediction (their plans find the rows sorted); their statistics do not
                    # depend on the order of tied rows (up to round-off), so any sort will do
                    key = (i, spec.view)
                    if key not in sorted_views:
                        order = np.argsort(arrays[spec.sort_by])
                        srows = order if rows is None else np.asarray(rows)[order]
                        sorted_views[key] = (tuple(a[order] for a in arrays), srows)
                    arrays, rows = sorted_views[key]
                if rows is not None:
                    self.rows[key] = rows
                    largest = max(largest, rows.shape[0])
                boot = PoissonBootstrap(spec.template, n_replicates=1, seed=self.seed)
                if spec.plan is None:
                    prepared = boot.prepare(*arrays, row_index=rows)
                else:  # the plan came with the template (the rows were validated by the report)
                    index = np.arange(self.n, dtype=np.int64) if rows is None else rows
                    prepared = PreparedRows(spec.template, spec.plan, index)
                second = arrays[1] if boot.two_pass else None
                if family is not None and second is None:
                    leaders[(i, family)] = len(self.jobs)
                self.jobs.append(_Job(i, j, prepared, key, spec.template, second))
        self.block = int(np.clip(BLOCK_ENTRIES // max(1, largest), 4, MAX_BLOCK))

    def fork(self):
        """An engine for another thread: the same prepared jobs, its own scratch arrays."""
        other = copy.copy(self)
        other._buffers = {}
        other.workspace = {}
        return other

    def _buffer(self, key, shape, dtype=np.float64):
        """An array reused by every block (a fresh one would be first touched each time)."""
        size = int(np.prod(shape))
        buf = self._buffers.get((key, np.dtype(dtype)))
        if buf is None or buf.size < size:
            buf = self._buffers[(key, np.dtype(dtype))] = np.empty(size, dtype=dtype)
        return buf[:size].reshape(shape)

    def weights(self, r0, count):
        """The block's Poisson weights of the validation rows, ``(count, n)`` uint8.

        The ``(replicates, rows)`` view of a reused ``(rows, replicates)`` array, a row's weights
        side by side (the layout the statistics gather and convert a tile at a time), drawn a
        slice of rows at a time and transposed into it.
        """
        WT = self._buffer("weights8T", (self.n, count), np.uint8)
        step = max(1, (1 << 20) // count)
        reps = np.arange(r0, r0 + count)
        for a in range(0, self.n, step):
            rows = np.arange(a, min(self.n, a + step))
            poisson_weights_into(self.seed, reps, rows, WT[a : a + step, :count])
        return WT.T

    def run_block(self, r0, count):
        """Every metric of every model on replicates ``r0 .. r0 + count - 1``.

        Runs inside :func:`run_bootstrap`'s one-thread limit of the BLAS and OpenMP pools, taken
        once in the calling thread: the limit is the whole process's, so threads that entered and
        left limiters of their own would restore each other's saved counts and could leave the
        process pinned to one thread after the report.
        """
        W = self.weights(r0, count)
        out = np.full((count, len(self.preds), len(self.metrics)), np.nan)
        groups = {}  # rows' key -> its jobs, in the order of the jobs (model by model)
        with config_context(skip_parameter_validation=True):
            followers = {}  # leader's index -> the jobs computed from its statistics
            for index, job in enumerate(self.jobs):
                if job.leader is not None:
                    followers.setdefault(job.leader, []).append(job)
                elif job.prepared is None:  # a user's callable: recomputed on each resample's rows
                    out[:, job.i, job.j] = self._resampled(job.i, job.j, W)
                else:
                    groups.setdefault(job.key, []).append((index, job))
            for key, members in groups.items():
                rows = None if key is None else self.rows[key]
                boots = [
                    PoissonBootstrap(job.template, n_replicates=count, first_replicate=r0, seed=self.seed)
                    for _, job in members
                ]
                # the tiles of the weights are read once for every statistic of these rows
                jobs = [(b, job.prepared) for b, (_, job) in zip(boots, members, strict=True)]
                update_together(jobs, W, rows=rows, workspace=self.workspace)
                # the one-pass values first: their statistics live in the workspace's arrays, which
                # a second pass must not reuse before they are computed
                for boot, (index, job) in zip(boots, members, strict=True):
                    if job.second is None:
                        out[:, job.i, job.j] = boot.compute()
                        for f in followers.get(index, ()):
                            out[:, f.i, f.j] = boot.compute_as(f.template)
                for boot, (_, job) in zip(boots, members, strict=True):
                    if job.second is not None:  # CE2: each replicate's fit, evaluated for its own weights
                        second = boot.plug_in()
                        scratch = self.workspace.setdefault("second pass", {})
                        update_together(
                            [(second, second.prepare(None, job.second))], W, rows=rows, workspace=scratch
                        )
                        out[:, job.i, job.j] = second.compute()
        return out

    def _resampled(self, i, j, W):
        """A metric without statistics (a user's callable): recomputed on each resample's rows."""
        m, p, kw = self.metrics[j], self.preds[i], self.params[i][j]
        rows = np.arange(self.n)
        vals = np.empty(W.shape[0])
        for r in range(W.shape[0]):
            idx = np.repeat(rows, W[r])
            vals[r] = m.func(self.data.take(idx), p[idx], **kw) if idx.size else np.nan
        return vals


def _family(metric, params):
    """What a catalogue metric's replicate statistics are the same as another's of one model for.

    Two metrics of one model whose measures have the same statistics class, view, parameters
    (those ``compute`` alone reads aside, such as ``measure``) and fixed ``params`` hold the same
    replicate statistics (the truthful ConfCE-corr and ConfECE of one binning): the first is
    updated, the others read its statistics (:meth:`~skcal.stats.PoissonBootstrap.compute_as`).
    """
    m = metric.measure
    if m is None or m.statistics is None or metric.replicates is None:
        return None
    kept = {k: v for k, v in m.params.items() if k not in m.statistics._compute_only_params}
    return m.statistics, metric.replicates.view, repr(sorted(kept.items())), repr(sorted(params.items()))


def _as(template, measure):
    """``template`` with ``measure``'s own compute-only parameters (``measure``)."""
    own = {k: measure.params[k] for k in type(template)._compute_only_params if k in measure.params}
    return type(template)(**{**template.get_params(), **own})


def run_bootstrap(
    data,
    preds,
    metrics,
    params,
    n_bootstrap,
    seed,
    *,
    n_jobs=None,
    verbose=0,
    max_seconds=None,
    started=None,
):
    """Every metric of every model on ``n_bootstrap`` paired Poisson-bootstrap replicates.

    Replicate ``r`` weights validation row ``i`` by ``W[r, i] ~ Poisson(1)``
    (:func:`skcal.stats.poisson_weights` with ``seed``), the same weights for every model and
    metric (the paired design). A built-in metric's replicates are its statistics on those
    weights (:class:`skcal.stats.PoissonBootstrap` of the metric's template, blocks of
    replicates at a time); a metric without statistics (a user's callable) is recomputed on
    each replicate's rows, row ``i`` repeated ``W[r, i]`` times. The replicates do not depend
    on ``n_jobs`` (bit for bit), nor on the block size beyond round-off: a shorter block (the
    last one, or the blocks of another ``n_bootstrap``) sizes its tiles of rows by its own
    replicate count, so some sums add in another order (about 1e-15 relative).

    With ``max_seconds``, the first block (a quarter of a block: 25 of 200 replicates up to about
    1.3e6 rows) is timed and the number of replicates lowered so that the report (counted from
    ``started``) ends within ``max_seconds``; never below that first block.

    Parameters
    ----------
    data : object
        The kind's validated data.
    preds : list
        Validated predictions, one per model.
    metrics : list of Metric
        The metrics.
    params : list of list of dict
        Per model and metric, the parameters fixed on the full sample.
    n_bootstrap : int
        Replicates asked for.
    seed : int
        Key of the weight stream.
    n_jobs : int, default=None
        Threads over blocks of replicates (results do not depend on it). The threads share the
        prepared statistics; each has its own scratch arrays (a block's weights and the
        statistics' accumulators), so that part of the memory grows with the threads. Always threads
        (``require="sharedmem"``, as the blocks share the prepared rows): a process backend of
        the caller's :func:`joblib.parallel_config` is overridden.
    verbose : int, default=0
        Progress lines without a terminal.
    max_seconds : float, default=None
        Time budget of the report.
    started : float, default=None
        ``time.perf_counter()`` when the report started (default: now).

    Returns
    -------
    BootstrapRun
        The replicates and how many were made.
    """
    t0 = time.perf_counter()
    started = t0 if started is None else started
    if n_bootstrap == 0:
        return BootstrapRun(np.empty((0, len(preds), len(metrics))), 0)
    engine = _Replicates(data, preds, metrics, params, seed)
    # blocks of equal size (a short last block costs a block's fixed work for a few replicates)
    size = -(-n_bootstrap // -(-n_bootstrap // engine.block))
    progress = Progress("bootstrap", n_bootstrap, "replicates", verbose)
    # one BLAS / OpenMP thread for the many small products (a pool fighting other processes is
    # many times slower), set once here in the calling thread for every block (see run_block)
    with one_blas_thread(openmp=True):
        # under a budget the first (timed) block is a quarter of a block, so that the budget can
        # cut the replicates finely (the replicates do not depend on the blocks but for round-off)
        first = min(size if max_seconds is None else max(4, size // 4), n_bootstrap)
        parts = [engine.run_block(0, first)]
        target = n_bootstrap
        if max_seconds is not None:
            per_replicate = (time.perf_counter() - t0) / first
            remaining = float(max_seconds) - (time.perf_counter() - started)
            target = min(
                n_bootstrap, max(first, first + int(max(0.0, remaining) / max(per_replicate, 1e-12)))
            )
        progress.update(first, target)
        blocks = [(r0, min(size, target - r0)) for r0 in range(first, target, size)]
        done = first
        if blocks:
            if effective_n_jobs(n_jobs) > 1:
                # an engine's scratch (weights, workspace) serves one block at a time: each thread
                # of the pool takes its own engine, which shares the prepared jobs (fork)
                engines = queue.SimpleQueue()
                engines.put(engine)

                def run_block(r0, count):
                    try:
                        own = engines.get_nowait()
                    except queue.Empty:
                        own = engine.fork()
                    try:
                        return own.run_block(r0, count)
                    finally:
                        engines.put(own)

                results = Parallel(n_jobs=n_jobs, require="sharedmem", return_as="generator")(
                    delayed(run_block)(r0, c) for r0, c in blocks
                )
            else:
                results = (engine.run_block(r0, c) for r0, c in blocks)
            for res in results:
                parts.append(res)
                done += res.shape[0]
                progress.update(done, target)
    progress.close()
    return BootstrapRun(
        np.concatenate(parts, axis=0),
        int(n_bootstrap),
        time.perf_counter() - t0,
        target < n_bootstrap,
    )


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
