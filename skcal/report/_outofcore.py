"""Reports past memory: a first-order report from statistics merged over chunks of rows.

A binary (first-order) report is a function of small mergeable statistics: every metric's
value is its statistics object's ``compute`` (:mod:`skcal.stats`), and every paired bootstrap
replicate is the same object inside a :class:`~skcal.stats.PoissonBootstrap`, whose weights are
keyed by the row's *global* index, so the replicate statistics of disjoint chunks add. This
module turns chunks of rows (each with the global index of its first row) into those
statistics, merges them, and builds the same :class:`~skcal.report._compute.ReportResults` and
:class:`~skcal.report.CalibrationReport` that :meth:`CalibrationReport.from_predictions`
builds from the rows in memory. :func:`report_from_batches` reads chunks one after the other;
:func:`skcal.dask.calibration_report_dask` reduces them as a tree on Dask. Both use
:class:`OutOfCorePlan`.

What equals the in-memory report, and what differs
--------------------------------------------------
* The values, the intervals, the ranks, ``p_best`` and the verdict equal the in-memory report on
  the same rows (values to round-off, about 1e-13 relative) when the rows number at most
  ``exact_rows`` (default ``10**6``): every metric uses the statistics the in-memory path uses
  (SCDL's finest grid fixed by the ``"auto"`` rule at ``n``, smCE's replicates on
  ``smce_grid_cells(n)`` cells, the exact cutoff error and the exact smCE value).
* Above ``exact_rows``, the two exact measures whose statistics grow with the distinct
  predictions are computed on fixed grids with a stated bound: the cutoff error (value and
  replicates) on :class:`~skcal.stats.CutoffGridStatistics` (65,536 cells; ``exact - value`` lies
  in ``[0, bound]``) and the smCE value on :class:`~skcal.stats.SmoothCEGridStatistics`
  (``smce_grid_cells(n)`` cells, the grid its replicates already use). The report's notes state
  each model's bound.
* The calibration tests (consistency resampling of the cutoff error, which redraws every label)
  and the reliability diagrams need rows: they run on every ``k``-th row of the data, ``k`` the
  smallest step that keeps at most ``sample_rows`` rows (default ``10**6``; ``k = 1``, all rows,
  below that), and the notes say so. With all rows they equal the in-memory report's.
* How the bootstrap replicates are made. Up to ``exact_rows`` with every row kept in the sample
  (``sample_step == 1``, the default up to 10^6 rows) and no ``replicate_block`` given, the one
  pass over the data computes the values and keeps the rows, and :meth:`OutOfCorePlan.finish`
  runs the in-memory report's bootstrap (:func:`~skcal.report._bootstrap.run_bootstrap`, the same
  seed) on them: equal by construction. Above ``exact_rows`` every measure's replicate statistics
  are summed on one shared grid of units (:class:`skcal.stats.ReplicateGrid`: three sparse
  entries per row and replicate, equal to the per-measure replicates to round-off), a block of
  replicates per pass, the block chosen so that its sums of every model take at most
  :data:`GRID_BLOCK_BYTES`; the first pass also computes the values and the sample. Otherwise
  (a smaller sample, or ``replicate_block`` given up to ``exact_rows``) each measure's replicates
  are one :class:`~skcal.stats.PoissonBootstrap`, ``replicate_block`` at a time, one pass per
  block (smECE's replicate statistics hold up to 2^18 cells, 8 MiB per replicate and model): the
  block is chosen so that one block's statistics of every model take at most
  :data:`BLOCK_BYTES`. The replicates never depend on the block.
* Only the built-in binary metrics with statistics are available (:data:`OUT_OF_CORE_METRICS`);
  ROC AUC, user callables, multiclass and second-order reports, and ``max_seconds`` are not.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skcal._catalog import measures
from skcal._compat import validate_params
from skcal._constraints import (
    LABELS,
    NAMES,
    POS_LABEL,
    StrictInterval,
)
from skcal._docstrings import fill
from skcal._validation import check_binary_probabilities
from skcal.report._bootstrap import prepare_all, run_bootstrap
from skcal.report._chunk_checks import SeenLabels, check_chunk_labels, check_first_row, check_label_set
from skcal.report._compute import (
    SETTINGS_DOCS,
    ReportResults,
    ReportSeeds,
    ReportSettings,
    build_table,
    run_calibration_tests,
)
from skcal.report._kinds import FirstOrderData, FirstOrderKind
from skcal.report._report import COMMON_CONSTRAINTS, REPORT_DOCS, CalibrationReport
from skcal.report._verdict import build_verdict, primary_metric
from skcal.stats import (
    GridReplicates,
    MeanStatistics,
    PoissonBootstrap,
    ReplicateGrid,
    merge_all,
    poisson_weights,
)

__all__ = [
    "SETTINGS_DOCS",
    "BLOCK_BYTES",
    "GRID_BLOCK_BYTES",
    "REPORT_CONSTRAINTS",
    "OUT_OF_CORE_DOCS",
    "EXACT_ROWS",
    "OUT_OF_CORE_METRICS",
    "SAMPLE_ROWS",
    "ChunkStatistics",
    "OutOfCorePlan",
    "merge_chunk_statistics",
    "report_from_batches",
]

#: The metrics an out-of-core report computes: the catalogue's binary measures with ``out_of_core``
#: (the first-order defaults).
OUT_OF_CORE_METRICS = tuple(measures("binary", out_of_core=True))
#: Rows up to which the cutoff error and smCE use their exact statistics.
EXACT_ROWS = 10**6
#: Rows at most kept for the calibration tests and the reliability diagrams.
SAMPLE_ROWS = 10**6
#: Largest size of one block of replicate statistics of every model (bytes): a worker holds
#: about three (a running state, a partition's, their merge) per chain it runs.
BLOCK_BYTES = 1 << 27
#: Rows of one slice of a chunk folded above ``exact_rows`` (its temporaries are a few times this).
FOLD_ROWS = 1 << 20
#: Largest size of one block of replicate sums on the shared grid (above ``exact_rows``), of every
#: model: a chain folds its chunks into one such state in place.
GRID_BLOCK_BYTES = 5 << 25


#: The keywords of :class:`OutOfCorePlan` beside the report's settings.
_PLAN_KEYWORDS = ("pos_label", "labels", "exact_rows", "sample_rows", "replicate_block")
_POSITIVE_INT = [StrictInterval(Integral, 1, None, closed="left")]
#: The constraints of the out-of-core reports' common arguments.
REPORT_CONSTRAINTS = {
    **{k: v for k, v in COMMON_CONSTRAINTS.items() if k not in ("n_jobs", "max_seconds")},
    "metrics": [list, tuple, str, None],
    "pos_label": POS_LABEL,
    "labels": LABELS,
    "exact_rows": _POSITIVE_INT,
    "sample_rows": _POSITIVE_INT,
    "replicate_block": [StrictInterval(Integral, 1, None, closed="left"), None],
}
#: The out-of-core reports' parameters described once: the report's (:data:`REPORT_DOCS`) and
#: their own (see :func:`skcal._docstrings.fill`).
OUT_OF_CORE_DOCS = {
    **REPORT_DOCS,
    "pos_label": """pos_label : int, float, bool, str or None, default=None
    The positive class of ``y``.""",
    "exact_rows": """exact_rows : int, default=10**6
    Rows up to which the cutoff error and smCE use their exact statistics (above: fixed grids
    with a stated bound, written in the report's notes).""",
    "sample_rows": """sample_rows : int, default=10**6
    Rows at most kept for the calibration tests and the reliability diagrams.""",
    "replicate_block": """replicate_block : int or None, default=None
    Bootstrap replicates per pass (None: up to ``exact_rows`` rows, all of them in memory from
    the kept rows when every row is kept, else as many as fit in
    :data:`~skcal.report._outofcore.BLOCK_BYTES` (128 MiB) of statistics; above, as many as fit
    in :data:`~skcal.report._outofcore.GRID_BLOCK_BYTES` of sums on the shared grid).""",
}


def _replicate_bytes(n, n_models, exact):
    """About the bytes of one replicate's statistics of every metric of one model, for ``n`` rows."""
    per = 4 * min(n, 1 << 18)  # smECE: four arrays on the occupied fine cells
    per += min(n, 1 << 16)  # smCE's grid (at most 2^16 cells)
    per += n if exact else 1 << 16  # cutoff: a running sum per distinct prediction, or the grid
    # SCDL's finest grid (two sums a node), then binned ECE and the means
    per += 2 * (1 << max(0, math.ceil(math.log2(4 * math.sqrt(max(n, 1)))))) + 64
    return 8 * per * n_models


@dataclass
class ChunkStatistics:
    """The statistics of some rows: per model and metric the value's and the replicates' objects.

    Attributes
    ----------
    point : list of list or None
        ``point[i][j]``: model ``i``'s statistics of metric ``j`` (None in a replicates-only pass).
    boot : list of list, GridReplicates, ndarray or None
        ``boot[i][j]``: the :class:`~skcal.stats.PoissonBootstrap` of the pass's block; above
        ``exact_rows`` the block's sums on the shared grid
        (:class:`~skcal.stats.GridReplicates`), which
        :meth:`OutOfCorePlan.reduce_pass` turns into their values ``(count, models, metrics)``.
    sample : list
        ``(global row indices, y, {model: p})`` of the rows kept for the tests and figures.
    n_rows : int
        Rows folded in.
    """

    point: list | None
    boot: list | None
    sample: list
    n_rows: int


def _merge_grid(grids):
    grids = [g for g in grids if g is not None]
    if not grids:
        return None
    return [
        [merge_all([g[i][j] for g in grids], split_every=len(grids)) for j in range(len(grids[0][i]))]
        for i in range(len(grids[0]))
    ]


def _merge_boot(boots, in_place):
    boots = [b for b in boots if b is not None]
    if not boots:
        return None
    if not isinstance(boots[0], GridReplicates):
        return _merge_grid(boots)
    acc = boots[0] if in_place else copy.deepcopy(boots[0])
    for b in boots[1:]:
        if b is not acc:  # a chunk folded into the state already (OutOfCorePlan.fold)
            acc.merge(b)
    return acc


def merge_chunk_statistics(parts, *, in_place=False):
    """Merge :class:`ChunkStatistics` of disjoint rows (one step).

    Parameters
    ----------
    parts : sequence of ChunkStatistics
        At least one.
    in_place : bool, default=False
        Add the replicate sums of a shared grid (above ``exact_rows``) into the first part's
        arrays instead of a copy (a chain folding its chunks holds one such state, not two);
        otherwise the inputs are not modified.

    Returns
    -------
    ChunkStatistics
        The statistics of all their rows.
    """
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    return ChunkStatistics(
        point=_merge_grid([p.point for p in parts]),
        boot=_merge_boot([p.boot for p in parts], in_place),
        sample=[s for p in parts for s in p.sample],
        n_rows=sum(p.n_rows for p in parts),
    )


class OutOfCorePlan:
    """What an out-of-core report computes: templates, replicate blocks, the sample step, seeds.

    Built once from the number of rows (the data-driven choices of the in-memory report,
    SCDL's finest grid and smCE's replicate grid, depend on it), then used by every chunk
    (:meth:`chunk`) and, after the merges, by :meth:`finish`. Picklable (Dask ships it to the
    workers).

    Parameters
    ----------
    n_samples : int
        Rows of the whole data.
    model_names : sequence of str
        The models (the prediction columns).
    metrics : sequence of str or None
        Metric names among :data:`OUT_OF_CORE_METRICS` (None: all of them, the first-order
        defaults).
    settings : ReportSettings
        The report's settings.
    pos_label : int, float, bool, str or None
        The positive class of the labels.
    labels : sequence or None, default=None
        The label set, fixed before the first chunk (see :func:`report_from_batches`): a label
        outside it in any chunk is an error naming the chunk and the row.
    exact_rows, sample_rows : int
        See the module docstring.
    replicate_block : int or None
        Replicates per pass over the data (None: chosen from :data:`GRID_BLOCK_BYTES` above
        ``exact_rows``, from :data:`BLOCK_BYTES` otherwise; up to ``exact_rows`` with every row
        in the sample, all replicates are made in memory after the one pass).
    """

    def __init__(
        self,
        n_samples,
        model_names,
        metrics,
        settings,
        *,
        pos_label=None,
        labels=None,
        exact_rows=EXACT_ROWS,
        sample_rows=SAMPLE_ROWS,
        replicate_block=None,
    ):
        n = int(n_samples)
        if n < 1:
            raise ValueError(f"the data hold no rows (n_samples={n}); a report needs at least one row.")
        if settings.max_seconds is not None:
            raise ValueError("max_seconds is not available for an out-of-core report.")
        self.n_samples = n
        self.model_names = tuple(str(m) for m in model_names)
        if not self.model_names:
            raise ValueError("models is empty; expected at least one prediction column.")
        if len(set(self.model_names)) != len(self.model_names):
            raise ValueError(f"models: duplicate names {list(self.model_names)}.")
        kind = FirstOrderKind()
        names = (
            list(OUT_OF_CORE_METRICS)
            if metrics is None
            else [metrics]
            if isinstance(metrics, str)
            else list(metrics)
        )
        for name in names:
            if not isinstance(name, str) or name not in OUT_OF_CORE_METRICS:
                raise ValueError(
                    f"metrics: {name!r} is not available out of core; expected names among "
                    f"{list(OUT_OF_CORE_METRICS)}."
                )
        self.kind = kind
        self.metrics = tuple(kind.resolve_metrics(names))
        primary_metric(kind, names, {m.name: m.is_calibration for m in self.metrics}, settings.primary)
        self.base_names = tuple(names)
        self.measures = tuple(m.measure for m in self.metrics)
        self.settings = settings
        self.pos_label = pos_label
        self.labels = None if labels is None else check_label_set(labels, pos_label)
        self.exact_rows = int(exact_rows)
        self.exact = n <= self.exact_rows
        self.seeds = ReportSeeds(settings.random_state)
        self.seed = int(self.seeds.bootstrap())  # drawn first, as in memory
        self.test_seeds = self.seeds.tests()
        self.figure_seed = self.seeds.figures()
        self.sample_step = max(1, -(-n // int(sample_rows)))
        B = int(settings.n_bootstrap)
        # how the replicates are computed (see the module docstring): from the rows kept in the
        # sample when they are all the rows and the measures are exact; on one shared grid of
        # units above exact_rows; otherwise (exact, sampled) one PoissonBootstrap per measure
        # (a replicate_block given up to exact_rows asks for the passes of the per-measure bootstrap)
        if self.exact:
            self.mode = "sample" if self.sample_step == 1 and replicate_block is None else "blocks"
        else:
            self.mode = "grid"
        self.grid = None
        if self.mode == "grid":
            self.grid = ReplicateGrid(
                {m.name: self.replicate_template(m.name) for m in self.measures},
                {m.name: m.rows for m in self.measures if m.rows is not None},
            )
        if replicate_block is None:
            if self.mode == "grid":
                per = 8 * len(self.model_names) * (self.grid.size + len(self.grid.dense))
                per = max(per, 1)
                replicate_block = max(1, min(B, GRID_BLOCK_BYTES // per)) if B else 1
            else:
                per = _replicate_bytes(n, len(self.model_names), self.exact)
                replicate_block = max(1, min(B, BLOCK_BYTES // max(per, 1))) if B else 1
        block = max(1, int(replicate_block))
        if self.mode == "sample" and B:
            block = B  # made in memory after the one pass (see finish)
        self.blocks = tuple((r0, min(block, B - r0)) for r0 in range(0, B, block))

    @classmethod
    def from_options(cls, n_samples, model_names, metrics, **options):
        """The plan of the options the public functions take: its own keywords and the settings."""
        own = {k: options.pop(k) for k in _PLAN_KEYWORDS}
        for name, kind in (("n_bootstrap", int), ("confidence_level", float), ("n_resamples", int)):
            options[name] = kind(options[name])
        options["test_calibration"] = bool(options["test_calibration"])
        return cls(n_samples, model_names, metrics, ReportSettings(**options), **own)

    def passes(self):
        """The passes over the data: ``(replicate block index or None, whether it computes the values)``.

        One pass when every row is in the sample up to ``exact_rows`` (the replicates are made
        in memory after it) or when the replicates fit in one block (the values and every
        replicate together); above ``exact_rows``, the first block's pass computes the values
        and the sample too (all fixed-size statistics), then one pass per further block;
        otherwise a first pass for the values and the sample (whose statistics, the exact cutoff
        and smCE's sorted runs among them, do not share a worker's memory with a block), then
        one pass per block.
        """
        if self.mode == "sample" or not self.blocks:
            return [(None, True)]
        if len(self.blocks) == 1 or self.mode == "grid":
            # the grid's blocks fit beside the values' statistics (all of fixed size)
            return [(0, True)] + [(b, False) for b in range(1, len(self.blocks))]
        return [(None, True)] + [(b, False) for b in range(len(self.blocks))]

    # -- templates -------------------------------------------------------------------------
    def point_template(self, name):
        """The statistics object of metric ``name``'s value (a mean's: of its per-row losses)."""
        m = self.measures[self.base_names.index(name)]
        return MeanStatistics() if m.rows is not None else m.value_template(self.n_samples, exact=self.exact)

    def replicate_template(self, name):
        """The statistics object of metric ``name``'s bootstrap replicates (the in-memory report's)."""
        m = self.measures[self.base_names.index(name)]
        if m.rows is not None:
            return MeanStatistics()
        return m.replicate_template(self.n_samples, exact=self.exact)

    # -- one chunk -------------------------------------------------------------------------
    def check_chunk(self, y, predictions, first_row=0):
        """Validate one chunk: ``(y as float 0/1, {model: p})``; ``first_row`` names it in errors."""
        if self.labels is not None:
            check_chunk_labels(y, self.labels, first_row)
        yv, preds = None, {}
        for name in self.model_names:
            if name not in predictions:
                raise ValueError(f"models: no prediction column {name!r} in the data.")
            yy, pp, _ = check_binary_probabilities(
                y,
                predictions[name],
                pos_label=self.pos_label,
                y_prob_name=f"column {name!r}",
                y_true_name="y",
            )
            yv = yy if yv is None else yv
            preds[name] = pp
        return yv, preds

    def fold(self, acc, first_row, y, predictions, *, block=None, point=True):
        """``acc`` (None or the statistics of earlier chunks) with one more chunk folded in.

        A shared grid's replicate sums are added into ``acc``'s arrays in place (one state per
        chain of chunks); everything else is merged as :func:`merge_chunk_statistics` does.
        """
        n = np.shape(y)[0]
        step = FOLD_ROWS if self.mode == "grid" else max(n, 1)
        if n > step:  # above exact_rows, a long chunk is folded in slices (smaller temporaries)
            for a in range(0, n, step):
                sl = slice(a, min(n, a + step))
                part_preds = {m: np.asarray(predictions[m])[sl] for m in self.model_names}
                acc = self.fold(
                    acc, int(first_row) + a, np.asarray(y)[sl], part_preds, block=block, point=point
                )
            return acc
        into = acc.boot if acc is not None and isinstance(acc.boot, GridReplicates) else None
        part = self.chunk(first_row, y, predictions, block=block, point=point, into=into)
        return part if acc is None else merge_chunk_statistics([acc, part], in_place=True)

    def chunk(self, first_row, y, predictions, *, block=None, point=True, into=None):
        """The :class:`ChunkStatistics` of one chunk of rows.

        Parameters
        ----------
        first_row : int
            Global index of the chunk's first row (the key of its bootstrap weights).
        y : array-like of shape (n,)
            Binary labels.
        predictions : dict
            Model name -> positive-class probabilities of shape ``(n,)``.
        block : int or None, default=None
            Index in :attr:`blocks` of the replicates to accumulate (None: none).
        point : bool, default=True
            Accumulate the values' statistics and the rows kept for the tests and figures
            (the first pass does; the other replicate blocks' passes do not).
        into : GridReplicates or None, default=None
            Above ``exact_rows``: the block's replicate sums to add the chunk's into (in place;
            None: new sums).

        Returns
        -------
        ChunkStatistics
        """
        yv, preds = self.check_chunk(y, predictions, first_row)
        n = yv.shape[0]
        offset = int(first_row)
        arrays, orders = {}, {}
        for name in self.model_names if point or self.mode != "grid" else ():
            p = preds[name]
            # one stable sort of the model's rows by p, shared by every measure that sorts (as in
            # memory): their plans find the rows sorted
            order = (
                np.argsort(p)  # the statistics do not depend on the order of tied rows
                if self.exact and any(m.rows is None for m in self.measures)
                else None
            )
            orders[name] = order
            rows = (yv, p) if order is None else (yv[order], p[order])  # one copy, every measure's
            for m in self.measures:
                arrays[(name, m.name)] = (m.rows(yv, p),) if m.rows is not None else rows
        point_stats = sample = None
        if point:
            point_stats = [
                [self.point_template(m.name).update(*arrays[(model, m.name)]) for m in self.measures]
                for model in self.model_names
            ]
            rows = np.arange(offset, offset + n, dtype=np.int64)
            keep = rows % self.sample_step == 0
            sample = [(rows[keep], yv[keep], {m: preds[m][keep] for m in self.model_names})]
        boot = None
        if block is not None and n and self.mode == "grid":
            r0, count = self.blocks[block]
            boot = into
            if boot is None:
                boot = GridReplicates(self.grid, len(self.model_names), r0, count, self.seed)
            boot.add(self.grid, offset, yv, [preds[m] for m in self.model_names])
        elif block is not None and n:
            r0, count = self.blocks[block]
            W = poisson_weights(self.seed, np.arange(r0, r0 + count), np.arange(offset, offset + n))
            boot = []
            for m in self.model_names:
                order = orders[m]
                Ws = None if order is None else np.ascontiguousarray(W[:, order])
                index = None if order is None else order.astype(np.int64) + offset
                row = []
                for ms in self.measures:
                    template = self.replicate_template(ms.name)
                    bs = PoissonBootstrap(template, n_replicates=count, first_replicate=r0, seed=self.seed)
                    if ms.rows is not None:
                        row.append(bs.update(*arrays[(m, ms.name)], row_offset=offset, replicate_weights=W))
                    else:
                        row.append(bs.update(*arrays[(m, ms.name)], row_index=index, replicate_weights=Ws))
                boot.append(row)
        return ChunkStatistics(point_stats, boot, sample or [], n)

    # -- the report ------------------------------------------------------------------------
    def run(self, run_pass, *, run_passes=None, width=1, title=None, notes=(), verbose=0, started=None):
        """Make every pass of :meth:`passes` and finish the report.

        ``run_pass(block, point)`` returns the merged :class:`ChunkStatistics` of all rows for
        one pass (a loop over chunks, or a Dask graph). ``run_passes``, when given, makes
        ``width`` passes at once: it takes a list of ``(block, point)`` and returns their
        statistics in order (Dask runs independent passes on different workers). The other
        arguments are :meth:`finish`'s.
        """
        first, blocks = None, []
        t0 = time.perf_counter()
        passes = self.passes()
        if run_passes is None:
            groups, width = [[p] for p in passes], 1
        else:
            groups = [passes[i : i + int(width)] for i in range(0, len(passes), int(width))]
        done = 0
        for group in groups:
            results = [run_pass(*group[0])] if run_passes is None else run_passes(group)
            for (block, point), acc in zip(group, results, strict=True):
                acc = self.reduce_pass(acc)
                if point:
                    first = acc
                if block is not None:
                    blocks.append(acc)
            done += len(group)
            if verbose:
                print(
                    f"[skcal] pass {done}/{len(passes)} done ({time.perf_counter() - t0:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        return self.finish(
            first,
            blocks,
            title=title,
            notes=notes,
            verbose=verbose,
            started=started,
            bootstrap_seconds=time.perf_counter() - t0,
        )

    def reduce_pass(self, acc):
        """A pass's merged statistics with a grid block's sums replaced by its replicate values.

        The values, ``(count, n_models, n_metrics)``, are what :meth:`finish` reads; Dask
        computes them on a worker, so only they come back to the client.
        """
        if isinstance(acc.boot, GridReplicates):
            values = acc.boot.values(self.grid, self.base_names)
            acc = ChunkStatistics(acc.point, values, acc.sample, acc.n_rows)
        return acc

    def finish(
        self, first, block_stats, *, title=None, notes=(), verbose=0, started=None, bootstrap_seconds=0.0
    ):
        """The :class:`~skcal.report.CalibrationReport` from the merged statistics.

        Parameters
        ----------
        first : ChunkStatistics
            The merged statistics of the first pass (values and sample).
        block_stats : list of ChunkStatistics
            The merged statistics of every replicate block, in the order of :attr:`blocks`.
        title : str or None, default=None
            The report's title.
        notes : sequence of str, default=()
            Free text shown in the outputs (the out-of-core notes are added after it).
        verbose : int, default=0
            Progress lines.
        started : float or None, default=None
            ``time.perf_counter()`` when the report started.
        bootstrap_seconds : float, default=0.0
            Wall time of the replicate passes.

        Returns
        -------
        CalibrationReport
        """
        started = time.perf_counter() if started is None else started
        if first.n_rows != self.n_samples:
            raise ValueError(
                f"the data held {first.n_rows} rows in the report's pass, but {self.n_samples} when counted; "
                "the data changed while the report was made."
            )
        K, M = len(self.model_names), len(self.metrics)
        point = np.array([[float(s.compute()) for s in row] for row in first.point])
        B = int(self.settings.n_bootstrap)
        reps = np.empty((B, K, M))
        if self.mode != "sample":
            for (r0, count), st in zip(self.blocks, block_stats, strict=True):
                if isinstance(st.boot, np.ndarray):  # a grid block, reduced to its values
                    reps[r0 : r0 + count] = st.boot
                    continue
                for i in range(K):
                    for j in range(M):
                        reps[r0 : r0 + count, i, j] = st.boot[i][j].compute()
        details = {
            metric.name: {model: m.details(first.point[i][j]) for i, model in enumerate(self.model_names)}
            for j, (metric, m) in enumerate(zip(self.metrics, self.measures, strict=True))
            if m.details is not None
        }
        sample = sorted(first.sample, key=lambda s: int(s[0][0]) if s[0].size else -1)
        ys = np.concatenate([s[1] for s in sample]) if sample else np.zeros(0)
        ps = {
            m: np.concatenate([s[2][m] for s in sample]) if sample else np.zeros(0) for m in self.model_names
        }
        if self.mode == "sample" and B:
            # every row is in the sample: the in-memory report's bootstrap on them
            data, plist = FirstOrderData(ys), [ps[m] for m in self.model_names]
            metrics = list(self.metrics)
            t0 = time.perf_counter()
            # the in-memory report's blocks (its values with unit weights are unused here: they
            # come from the merged statistics), so that the replicates are its own bit for bit
            reps = run_bootstrap(
                data,
                plist,
                metrics,
                prepare_all(data, plist, metrics),
                B,
                self.seed,
                n_jobs=self.settings.n_jobs,
                verbose=verbose,
            ).values
            bootstrap_seconds += time.perf_counter() - t0
        tests = None
        if self.settings.test_calibration:
            if verbose:
                print(f"[skcal] calibration tests on {ys.shape[0]} rows", file=sys.stderr, flush=True)
            tests = run_calibration_tests(
                {m: (ys, ps[m]) for m in self.model_names},
                self.settings.n_resamples,
                self.test_seeds,
                verbose,
            )
        s = self.settings
        table = build_table(
            point, reps, self.metrics, self.model_names, s.confidence_level, s.interval_method
        )
        results = ReportResults(
            metrics=self.metrics,
            model_names=self.model_names,
            params=[[{} for _ in self.metrics] for _ in self.model_names],
            table=table,
            bootstrap_values=reps,
            metric_details=details,
            calibration_tests=tests,
            n_samples=self.n_samples,
            figure_seed=self.figure_seed,
            n_bootstrap_requested=B,
            bootstrap_seconds=float(bootstrap_seconds),
            bootstrap_seed=self.seed,
        )
        return CalibrationReport(
            kind=self.kind,
            results=results,
            verdict=build_verdict(self.kind, results, s.primary),
            settings=s,
            title=title or self.kind.default_title,
            notes=list(notes) + self.notes(first, ys.shape[0]),
            data=FirstOrderData(ys),
            predictions=ps,
            elapsed=time.perf_counter() - started,
        )

    def notes(self, first, n_kept):
        """The notes an out-of-core report adds: the passes, the sample, any grid's bound."""
        passes = len(self.passes())
        size = self.blocks[0][1] if self.blocks else 0
        head = f"Computed out of core from statistics merged over {self.n_samples} rows, in {passes} pass(es)"
        if self.mode == "sample":
            how = (
                "the paired bootstrap replicates made in memory from the rows kept, which are all the rows"
                if self.blocks
                else "no bootstrap replicates"
            )
            out = [f"{head} over the data ({how})."]
        else:
            grid = (
                f"; each block's replicate statistics summed on one grid of {self.grid.U} cells"
                if self.mode == "grid"
                else ""
            )
            out = [
                f"{head} over the data ({len(self.blocks)} block(s) of up to {size} paired bootstrap "
                f"replicates{grid}; the values come from the first pass)."
            ]
        if self.sample_step == 1:
            out.append("The calibration tests and the reliability diagrams use all rows.")
        else:
            out.append(
                f"The calibration tests and the reliability diagrams use every {self.sample_step}-th row "
                f"({n_kept} of {self.n_samples} rows); the table, the intervals and the verdict use all rows."
            )
        approximate = [j for j, m in enumerate(self.measures) if m.approximate is not None]
        if not self.exact and approximate:
            bounds = []
            for j in approximate:
                b = ", ".join(f"{m}: {first.point[i][j].bound():.2g}" for i, m in enumerate(self.model_names))
                bounds.append(f"{self.metrics[j].label} ({b})")
            labels = " and ".join(self.metrics[j].label for j in approximate)
            classes = ", ".join(type(first.point[0][j]).__name__ for j in approximate)
            out.append(
                f"Above {self.exact_rows} rows {labels} are computed on fixed grids ({classes}); the exact "
                "value differs from the one shown by at most the stated bound: " + "; ".join(bounds) + "."
            )
        return out


@fill(**OUT_OF_CORE_DOCS)
@validate_params(
    {
        "batches": [callable],
        "n_samples": [StrictInterval(Integral, 0, None, closed="left")],
        "models": NAMES,
        **REPORT_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
def report_from_batches(
    batches,
    *,
    n_samples,
    models,
    metrics=None,
    n_bootstrap=200,
    confidence_level=0.9,
    interval_method="bc-percentile",
    n_bins=10,
    strategy="uniform",
    test_calibration=True,
    n_resamples=1000,
    random_state=None,
    pos_label=None,
    labels=None,
    exact_rows=EXACT_ROWS,
    sample_rows=SAMPLE_ROWS,
    replicate_block=None,
    title=None,
    notes=(),
    verbose=0,
    primary=None,
):
    """A first-order report from chunks of rows read one after the other (data past memory).

    The same report as :meth:`CalibrationReport.from_predictions` on the concatenated rows (see
    the module docstring for what is equal and what differs), from statistics accumulated chunk
    by chunk: memory is bounded by a chunk and the statistics, never by the number of rows.

    Parameters
    ----------
    batches : callable
        ``batches()`` returns an iterable of ``(first_row, y, predictions)``: the global index of
        the chunk's first row, its binary labels and a dict model -> probabilities. Called once
        per pass over the data (the first pass computes the values, the sample and the first
        block of replicates; each further block of replicates is one more pass). The chunks
        come in order: each ``first_row`` is the number of rows of the chunks before it (it keys
        the bootstrap weights, so it is checked), and every pass delivers ``n_samples`` rows.
    n_samples : int
        Rows of the whole data (the sum of the chunks' lengths).
    models : list or tuple of str
        The models (keys of every chunk's predictions), a list of names even for one model.
    metrics : sequence of str or None, default=None
        Among :data:`OUT_OF_CORE_METRICS` (None: all, the first-order defaults).
    {resampling}
    {random_state}
    {pos_label}
    labels : array-like of shape (1,) or (2,), default=None
        The label set, fixed before the first chunk: a label of any chunk outside it is an
        error naming the chunk and the row. ``None``: the labels of all chunks, as in memory:
        each chunk's labels are checked against those of the chunks before it, so a third label
        (``'maybe'`` beside ``'yes'`` and ``'no'``), ``{0, 1}`` in one chunk and ``{-1, 1}``
        in another, or two labels without ``pos_label`` among them are errors naming the chunk
        and the row where the set stops being one binary label set, and need no pass of
        their own.
    {exact_rows}
    {sample_rows}
    {replicate_block}
    {outputs}
    {primary}

    {returns}

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.report import report_from_batches
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000); y = (rng.uniform(size=3000) < p).astype(int)
    >>> def batches():
    ...     for a in range(0, 3000, 1000):
    ...         yield a, y[a:a + 1000], {"model": p[a:a + 1000]}
    >>> report = report_from_batches(batches, n_samples=3000, models=["model"], n_bootstrap=20,
    ...                              n_resamples=100, random_state=0)
    >>> report.table.shape
    (1, 40)
    """
    started = time.perf_counter()
    plan = OutOfCorePlan.from_options(
        n_samples,
        models,
        metrics,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        interval_method=interval_method,
        n_bins=n_bins,
        strategy=strategy,
        test_calibration=test_calibration,
        n_resamples=n_resamples,
        random_state=random_state,
        pos_label=pos_label,
        labels=labels,
        exact_rows=exact_rows,
        sample_rows=sample_rows,
        replicate_block=replicate_block,
        primary=primary,
    )

    def run_pass(block, point):
        acc, delivered = None, 0
        seen = SeenLabels(pos_label) if point and plan.labels is None else None
        for first_row, y, preds in batches():
            n = np.shape(y)[0] if np.ndim(y) else 0
            first_row = check_first_row(first_row, delivered, plan.n_samples, n)
            if seen is not None:
                seen.add(y, first_row)
            acc = plan.fold(acc, first_row, y, preds, block=block, point=point)
            delivered += n
        if acc is None:
            raise ValueError("the data hold no rows; a report needs at least one row.")
        if delivered != plan.n_samples:
            raise ValueError(
                f"the data held {delivered} rows in the report's pass, but {plan.n_samples} were given as "
                "n_samples; every pass over the batches must deliver n_samples rows."
            )
        return acc

    return plan.run(run_pass, title=title, notes=notes, verbose=verbose, started=started)
