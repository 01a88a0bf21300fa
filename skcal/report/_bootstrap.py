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
from skcal.report._orders import SortOrders
from skcal.stats import PoissonBootstrap
from skcal.stats._base import same_statistics
from skcal.stats._bootstrap import poisson_weights_into, update_together

#: Interval methods (see the module docstring).
INTERVAL_METHODS = ("bc-percentile", "percentile", "basic")

#: Ranks and ``p_best`` compare values rounded to this many significant digits, so that models
#: whose metric differs only by floating-point noise are tied.
RANK_SIGNIFICANT_DIGITS = 10


def prepare_all(data, preds, metrics):
    """Per model and metric, the keyword arguments fixed on the full validation set."""
    return [[m.prepare(data, p) if m.prepare is not None else {} for m in metrics] for p in preds]


def score_all(data, preds, metrics, params, skip=()):
    """Array (n_models, n_metrics) of every metric for every model on one (re)sample.

    The metrics of the indices ``skip`` are left NaN (their values come from elsewhere).
    """
    return np.array(
        [
            [
                np.nan if j in skip else m.func(data, p, **kw)
                for j, (m, kw) in enumerate(zip(metrics, pk, strict=True))
            ]
            for p, pk in zip(preds, params, strict=True)
        ],
        dtype=float,
    )


#: Largest number of replicate weights (replicates x rows) drawn for one block of replicates: a
#: block holds them as bytes (a row's weights side by side), 128 MiB at most; the statistics
#: convert them to float a tile at a time. Larger blocks make CE2's replicate moments one product
#: with more rows of weights (39 GFlop/s with 100 rows, 17 with 16, on one core here).
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
    point : ndarray of shape (n_models, n_metrics) or None
        The values of the metrics with ``value_from_replicates`` (their statistics with unit
        weights; NaN for the other metrics), or None without such metrics.
    """

    values: np.ndarray
    n_requested: int
    seconds: float = 0.0
    budget_limited: bool = False
    point: object = None


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
    key: object  # the weights key of its rows (None: the validation rows in order)
    second: object  # the second pass's scores (CE2), or None
    leader: object  # index of the job whose statistics it is computed from, or None
    template: object  # its statistics template


class _Replicates:
    """One report's replicate machinery: per model and metric a prepared statistics template."""

    def __init__(self, data, preds, metrics, params, seed, orders=None):
        self.data, self.preds, self.metrics, self.params, self.seed = data, preds, metrics, params, int(seed)
        self.n = int(data.n)
        self._rows = {}  # weights key -> the validation row of each array row
        self._buffers = {}  # reused weight arrays
        self.workspace = {}  # reused accumulators of the statistics (each block's are discarded)
        orders = SortOrders() if orders is None else orders
        sorted_views = {}
        # (model, metric) -> the spec's arrays sorted by its ``sort_by`` (Metric.value_from_sorted)
        self._sorted_arrays = {}
        # one _Job per model and metric (prepared None: a user's callable); a job whose template
        # holds the same statistics of the same arrays as an earlier job's (two measures of one
        # binning, ``same_statistics``) names that job as its leader and is computed from the
        # leader's replicate statistics (``compute_as``), not updated again
        self.jobs = []
        leaders = {}  # (model, arrays, rows) -> indices of the jobs updated with them
        # the arrays whose ids name them, alive until every job is made: a job's temporary (a
        # mean's per-row losses, which its plan may copy) freed early could lend its id to the
        # next job's, whose replicates would then be computed from the wrong statistics
        alive = []
        largest = self.n
        for i, p in enumerate(preds):
            for j, m in enumerate(metrics):
                spec = m.replicates(data, p, **params[i][j]) if m.replicates is not None else None
                if spec is None:
                    self.jobs.append(_Job(i, j, None, None, None, None, None))
                    continue
                arrays, rows = spec.arrays, spec.rows
                key = None if rows is None else ("rows", i, id(rows))
                if spec.sort_by is not None:
                    share = (i, spec.share)
                    if share not in sorted_views:
                        order = orders.of(arrays[spec.sort_by])
                        srows = order if rows is None else np.asarray(rows)[order]
                        sorted_views[share] = (tuple(a[order] for a in arrays), srows)
                    arrays, rows = sorted_views[share]
                    key = ("sorted", share)
                    if m.value_from_sorted is not None:
                        self._sorted_arrays[(i, j)] = arrays
                if rows is not None:
                    self._rows[key] = rows
                    largest = max(largest, rows.shape[0])
                alive.append((arrays, rows))
                same = (i, tuple(id(a) for a in arrays), id(rows))
                if not spec.two_pass:
                    t = spec.template
                    alike = [k for k in leaders.get(same, ()) if same_statistics(t, self.jobs[k].template)]
                    leader = alike[0] if alike else None
                    if leader is not None:
                        prepared = self.jobs[leader].prepared
                        self.jobs.append(_Job(i, j, prepared, key, None, leader, spec.template))
                        continue
                    leaders.setdefault(same, []).append(len(self.jobs))
                boot = PoissonBootstrap(spec.template, n_replicates=1, seed=self.seed)
                prepared = boot.prepare(*arrays, row_index=rows)
                second = arrays[1] if spec.two_pass else None
                self.jobs.append(_Job(i, j, prepared, key, second, None, spec.template))
        self.block = int(np.clip(BLOCK_ENTRIES // max(1, largest), 4, MAX_BLOCK))

    def fork(self):
        """An engine for another thread: the same prepared jobs, its own scratch arrays.

        The prepared rows and plans are only read during a block; the one thing an update lends
        a plan, its workspace, is kept per thread (``ReplicatePlan.workspace``).
        """
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

    def weights(self, r0, count, unit=False):
        """The block's Poisson weights of the validation rows, ``(count, n)`` uint8.

        The ``(replicates, rows)`` view of a reused ``(rows, replicates)`` array, a row's weights
        side by side (the layout the statistics gather and convert a tile at a time), drawn a
        slice of rows at a time and transposed into it. ``unit`` appends a last weighting of
        ones (``(count + 1, n)``): :meth:`run_block`'s values of the rows themselves.
        """
        WT = self._buffer("weights8T", (self.n, count + int(unit)), np.uint8)
        step = max(1, (1 << 20) // count)
        reps = np.arange(r0, r0 + count)
        for a in range(0, self.n, step):
            rows = np.arange(a, min(self.n, a + step))
            poisson_weights_into(self.seed, reps, rows, WT[a : a + step, :count])
        if unit:
            WT[:, count] = 1
        return WT.T

    def sorted_values(self, metric_indices):
        """``(n_models, n_metrics)``: the metrics ``metric_indices`` from the sorted views (else NaN).

        Each is ``Metric.value_from_sorted`` of its replicate spec's arrays in the sorted order
        the engine made for its replicates; a model without that view gets ``func``'s value.
        """
        out = np.full((len(self.preds), len(self.metrics)), np.nan)
        for j in metric_indices:
            m = self.metrics[j]
            for i, p in enumerate(self.preds):
                arrays = self._sorted_arrays.get((i, j))
                if arrays is None:
                    out[i, j] = m.func(self.data, p, **self.params[i][j])
                else:
                    out[i, j] = m.value_from_sorted(*arrays)
        return out

    def point_values(self, metric_indices):
        """``(n_models, n_metrics)``: the metrics ``metric_indices`` with every row's weight 1 (else NaN).

        One block of one replicate of unit weights through the jobs of those metrics (and their
        leaders): each value is its statistics' own value on the validation rows, the exact
        measure up to floating-point round-off (``Metric.value_from_replicates``).
        """
        wanted = set(metric_indices)
        only = {k for k, job in enumerate(self.jobs) if job.j in wanted and job.prepared is not None}
        only |= {self.jobs[k].leader for k in only if self.jobs[k].leader is not None}
        ones = np.ones((self.n, 1), dtype=np.uint8).T  # the (replicates, rows) view the blocks use
        with one_blas_thread(openmp=True):
            return self.run_block(0, 1, weights=ones, only=only)[0]

    def run_block(self, r0, count, weights=None, only=None, unit=False):
        """Every metric of every model on replicates ``r0 .. r0 + count - 1``.

        ``weights`` (``(count, n)`` counts) replaces the drawn Poisson weights, and ``only`` (job
        indices) limits the jobs computed (the others stay NaN): :meth:`point_values`. ``unit``
        adds a last row to the result, every metric with unit weights (the values of
        ``Metric.value_from_replicates``, made with the block at about a replicate's cost).

        Runs inside :func:`run_bootstrap`'s one-thread limit of the BLAS and OpenMP pools, taken
        once in the calling thread: the limit is the whole process's, so threads that entered and
        left limiters of their own would restore each other's saved counts and could leave the
        process pinned to one thread after the report.
        """
        drawn = count  # replicates (the weighting of ones, if any, is the row after them)
        if weights is None:
            W8 = self.weights(r0, count, unit)
            count += int(unit)
        else:
            W8 = weights
        out = np.full((count, len(self.preds), len(self.metrics)), np.nan)
        # the statistics read the counts as (replicates, rows) views of the (rows, replicates)
        # array: update_together converts them to float a tile at a time (gathered into a
        # model's sorted order where its rows are sorted), while the tile is in cache
        W = W8
        groups = {}  # weights key -> its jobs, in the order of the jobs (model by model)
        followers = {}  # leader's index -> the jobs computed from its statistics
        with config_context(skip_parameter_validation=True):
            for index, job in enumerate(self.jobs):
                i, j, prepared, key, _, leader, _ = job
                if only is not None and index not in only:
                    continue
                if prepared is None:  # a user's callable: its value is func's, not recomputed here
                    out[:drawn, i, j] = self._resampled(i, j, W8[:drawn])
                elif leader is not None:
                    followers.setdefault(leader, []).append(job)
                else:
                    groups.setdefault(key, []).append((index, job))
            for key, members in groups.items():
                boots = [
                    PoissonBootstrap(job.template, n_replicates=count, first_replicate=r0, seed=self.seed)
                    for _, job in members
                ]
                # the tiles of the weights are read once for every statistic of these rows (the
                # weights are Poisson counts: nothing to check)
                update_together(
                    [(b, job.prepared) for b, (_, job) in zip(boots, members, strict=True)],
                    W,
                    rows=None if key is None else self._rows[key],
                    workspace=self.workspace,
                )
                # the one-pass values first: their statistics live in the workspace's arrays, which
                # a second pass must not reuse before they are computed
                for boot, (index, (i, j, _, _, second, _, _)) in zip(boots, members, strict=True):
                    if second is None:
                        out[:, i, j] = boot.compute()
                        for fi, fj, *_, template in followers.get(index, ()):
                            out[:, fi, fj] = boot.compute_as(template)
                for boot, (_, (i, j, _, _, second, _, _)) in zip(boots, members, strict=True):
                    if second is not None:  # CE2: each replicate's fit, evaluated for its own weights
                        boot = boot.plug_in()
                        update_together(
                            [(boot, boot.prepare(None, second))],
                            W,
                            rows=None if key is None else self._rows[key],
                            workspace=self.workspace.setdefault("second pass", {}),
                        )
                        out[:, i, j] = boot.compute()
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
    orders=None,
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

    The metrics with ``value_from_replicates`` get their values too (``BootstrapRun.point``):
    one more weighting, of ones, beside the first block's replicates (every caller's first
    block is the same, so the replicates are too), or alone without replicates. So do the
    metrics with ``value_from_sorted``, from the rows the engine sorted for their replicates.

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
    orders : SortOrders, default=None
        The report's sorts of its prediction arrays (:mod:`skcal.report._orders`), shared with
        its other stages; a fresh cache by default.

    Returns
    -------
    BootstrapRun
        The replicates and how many were made.
    """
    t0 = time.perf_counter()
    started = t0 if started is None else started
    n_models, n_metrics = len(preds), len(metrics)
    point_metrics = [j for j, m in enumerate(metrics) if m.value_from_replicates]
    sorted_metrics = [j for j, m in enumerate(metrics) if m.value_from_sorted is not None]
    if n_bootstrap == 0 and not point_metrics and not sorted_metrics:
        return BootstrapRun(np.empty((0, n_models, n_metrics)), 0)
    engine = _Replicates(data, preds, metrics, params, seed, orders)
    sorted_point = engine.sorted_values(sorted_metrics)
    if n_bootstrap == 0:
        point = engine.point_values(point_metrics) if point_metrics else sorted_point
        point[:, sorted_metrics] = sorted_point[:, sorted_metrics]
        return BootstrapRun(np.empty((0, n_models, n_metrics)), 0, time.perf_counter() - t0, point=point)
    # blocks of equal size (a short last block costs a block's fixed work for a few replicates)
    size = -(-n_bootstrap // -(-n_bootstrap // engine.block))
    progress = Progress("bootstrap", n_bootstrap, "replicates", verbose)
    # one BLAS / OpenMP thread for the many small products, set once here in the calling thread
    # for every block (see run_block)
    with one_blas_thread(openmp=True):
        # under a budget the first (timed) block is a quarter of a block, so that the budget can
        # cut the replicates finely (the replicates do not depend on the blocks but for round-off)
        first = min(size if max_seconds is None else max(4, size // 4), n_bootstrap)
        parts = [engine.run_block(0, first, unit=bool(point_metrics))]
        point = sorted_point if sorted_metrics else None
        if point_metrics:  # the first block's last row: unit weights
            point = sorted_point
            point[:, point_metrics] = parts[0][-1][:, point_metrics]
            parts[0] = parts[0][:-1]
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
        point,
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
