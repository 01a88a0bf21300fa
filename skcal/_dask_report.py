"""The first-order calibration report over a Dask dataframe or a parquet folder, past memory.

The out-of-core report of :mod:`skcal.report._outofcore`, its passes run as Dask tasks: each
partition (or parquet file) is folded by the task that reads it, along chains of consecutive
partitions, and the chains' statistics are merged up a tree. Public as
:func:`skcal.dask.calibration_report_dask`; this module needs Dask, as :mod:`skcal.dask` does.
"""

from __future__ import annotations

import os
import time
from numbers import Integral

import dask
import numpy as np

from skcal._compat import HasMethods, validate_params
from skcal._constraints import SCHEDULER, SPLIT_EVERY, StrictInterval
from skcal._docstrings import fill
from skcal._io import count_rows, file_format, list_files, read_columns
from skcal._validation import plain
from skcal.report._chunk_checks import check_label_set
from skcal.report._outofcore import (
    EXACT_ROWS,
    OUT_OF_CORE_DOCS,
    REPORT_CONSTRAINTS,
    SAMPLE_ROWS,
    OutOfCorePlan,
    merge_chunk_statistics,
)

__all__ = ["calibration_report_dask"]


def is_dask_frame(x):
    """Whether ``x`` is a Dask dataframe or series (it has partitions and divisions)."""
    return hasattr(x, "to_delayed") and hasattr(x, "npartitions") and hasattr(x, "divisions")


def _file_columns(path, columns):
    """The columns of one parquet file, as numpy arrays (read by the task that folds them)."""
    import pyarrow.parquet as pq  # pyarrow is optional (the parquet extra)

    table = pq.read_table(path, columns=list(columns))
    return {c: table.column(c).to_numpy() for c in columns}


def _file_rows_and_labels(path, y):
    """The rows of one parquet file and the distinct labels of its column ``y`` (``None``: the rows only)."""
    if y is None:
        return count_rows(path), None
    import pyarrow.parquet as pq  # pyarrow is optional (the parquet extra)

    labels = np.asarray(pq.read_table(path, columns=[y]).column(y).to_numpy())
    return int(labels.shape[0]), np.unique(labels)


class _OwnPartition:
    """A dask dataframe partition that the task folding it computes itself.

    Given to a task as an argument, a partition's delayed object becomes a task of its own, which
    the scheduler may run ahead of the chain that folds it (every partition is a root task), so
    frames wait in the workers' memory: measured, 10 partitions of 1e6 rows on 2 workers of 1 GiB
    killed the workers. Wrapped in this class (which dask does not look into) the partition is
    computed by :func:`_fold_partition` with the synchronous scheduler, when the chain reaches it,
    as a parquet file of a path is read there. The key of the partition is its token.
    """

    __slots__ = ("part",)

    def __init__(self, part):
        self.part = part

    def __dask_tokenize__(self):
        return ("skcal-own-partition", str(self.part.key))

    def compute(self):
        return self.part.compute(scheduler="sync")


def _partition_rows(part):
    return len(part.compute())


def _partition_rows_and_labels(part, y):
    """The rows of a partition and the distinct labels of its column ``y`` (``None``: the rows only)."""
    if y is None:
        return _partition_rows(part), None
    frame = part.compute()
    return len(frame), np.unique(np.asarray(frame[y]))


def _label_set_of_parts(uniques, pos_label, names):
    """The labels of every partition as one set, checked; an invalid set names the first partition
    (in reading order) whose labels make it invalid."""
    seen = None
    for u, name in zip(uniques, names, strict=True):
        if not len(u):
            continue
        try:
            if seen is not None and (u.dtype.kind in "biuf") != (seen.dtype.kind in "biuf"):
                raise ValueError("labels of another type than those before them.")
            union = u if seen is None else np.unique(np.concatenate([seen, u]))
            check_label_set(union, pos_label)
        except ValueError as exc:
            before = [] if seen is None else plain(seen)
            raise ValueError(
                f"y: {name} holds the labels {plain(u)}; with those of the partitions before it ({before}) "
                f"they are not one binary label set: {exc}"
            ) from None
        seen = union
    return seen


def _fold_partition(plan, acc, frame, first_row, y, models, block, point):
    """``acc`` (None or the statistics of the chain's earlier partitions) with one partition folded in.

    ``frame`` (a parquet file's path or an :class:`_OwnPartition`) is read here, when the chain
    folds it (see :class:`_OwnPartition`).
    """
    if isinstance(frame, _OwnPartition):
        frame = frame.compute()
    cols = _file_columns(frame, [y, *models]) if isinstance(frame, str) else frame
    yy = np.asarray(cols[y])
    preds = {m: np.asarray(cols[m]) for m in models}
    del cols
    return plan.fold(acc, int(first_row), yy, preds, block=block, point=point)


def _merge_report_parts(*parts):
    # the chains' states are intermediate results no other task reads: merged into the first
    return merge_chunk_statistics(parts, in_place=True)


def _parquet_frame(path):
    """A dask dataframe of a parquet file or folder (its files in the reading order of the CLI),
    the files' own columns and the files."""
    import dask.dataframe as dd  # dask[dataframe] is optional (the dask extra)

    files = list_files(path)
    csv = [str(f) for f in files if file_format(f) != "parquet"]
    if csv:  # never half a log: a folder with CSV files is refused, not read in part
        raise ValueError(
            f"data: {path} holds CSV files ({len(csv)}, first {csv[0]}); Dask reads parquet logs only. "
            "Convert them to parquet, or make the report in batches without Dask."
        )
    # the files' own columns: a hive-style folder (date=.../part.parquet) adds its partition keys
    return dd.read_parquet([str(f) for f in files]), read_columns(files[0]), [str(f) for f in files]


@fill(**OUT_OF_CORE_DOCS)
@validate_params(
    {
        "data": [HasMethods(["to_delayed"]), str, os.PathLike],
        "y": [str],
        "models": [list, tuple, None],
        **REPORT_CONSTRAINTS,
        "chains": [StrictInterval(Integral, 1, None, closed="left")],
        "split_every": SPLIT_EVERY,
        "scheduler": SCHEDULER,
    },
    prefer_skip_nested_validation=True,
)
def calibration_report_dask(
    data,
    *,
    y="y",
    models=None,
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
    chains=2,
    split_every=4,
    scheduler=None,
    title=None,
    notes=(),
    verbose=0,
    primary=None,
):
    """A first-order calibration report from a Dask dataframe or a parquet folder, past memory.

    The same report as :meth:`skcal.report.CalibrationReport.from_predictions` on the same rows
    (values to round-off, intervals and ``p_best`` equal for the same ``random_state`` up to
    ``exact_rows`` rows), made from statistics merged over the partitions (see
    :mod:`skcal.report._outofcore` for what is equal and what differs): one pass counts the rows of
    every partition (the global index of a partition's first row keys its bootstrap weights) and,
    unless ``labels`` is given, reads their label set, then each pass turns every partition into the
    statistics of every model and metric, with one block of Poisson-bootstrap replicates, folds them
    along ``chains`` chains of consecutive partitions and merges the chains up a tree; the first
    pass also computes the values and keeps the rows the calibration tests and the reliability
    diagrams use (every ``k``-th row, at most ``sample_rows``). A worker holds a partition and a few
    blocks of statistics, never all rows.

    Parameters
    ----------
    data : dask.dataframe.DataFrame, str or path-like
        One row per scored example, or a parquet file or folder of parquet files (read in the
        sorted order of their paths, as the CLI reads them).
    y : str, default="y"
        The label column.
    models : list of str or None, default=None
        The probability columns, one per model (None: every column but ``y``; of a parquet
        path, every column of its first file but ``y``, without hive partition keys).
    metrics : list of str or None, default=None
        Among :data:`skcal.report._outofcore.OUT_OF_CORE_METRICS` (None: the first-order
        defaults).
    {resampling}
    {random_state}
    {pos_label}
    labels : array-like of shape (1,) or (2,), default=None
        The label set, fixed before the first chunk: a label outside it in any partition is an
        error naming the partition's first row and the row. ``None``: read by a first pass over
        the label column (with the rows of each partition), and an invalid set (a third label,
        ``{0, 1}`` beside ``{-1, 1}``) is an error naming the first partition that holds it.
    {exact_rows}
    {sample_rows}
    {replicate_block}
    chains : int, default=2
        The partitions are split into this many runs of consecutive partitions; each run is a
        chain of tasks folding one partition at a time into one running state (a worker holds
        about one state per chain it runs, never a state per partition), and the chains' states
        are merged up a tree down to two, which the client merges (above ``exact_rows`` a
        state is a block of replicate sums on one shared grid, folded in place).
    split_every : int, default=4
        Fan-in of the tree merging the chains.
    scheduler : str, callable, distributed.Client or None, default=None
        Passed to :func:`dask.compute` (``None``: the current default, e.g. a ``Client``).
    {outputs}
    {primary}

    {returns}

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd
    >>> from skcal.dask import calibration_report_dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> pdf = pd.DataFrame({"y": (rng.uniform(size=2000) < p).astype(int), "a": p, "b": p ** 2})
    >>> report = calibration_report_dask(dd.from_pandas(pdf, npartitions=3), n_bootstrap=20,
    ...                                  n_resamples=100, random_state=0, scheduler="sync")
    >>> report.model_names
    ['a', 'b']
    """
    started = time.perf_counter()
    df, file_columns, files = (
        _parquet_frame(data) if isinstance(data, (str, os.PathLike)) else (data, None, None)
    )
    if not is_dask_frame(df) or not hasattr(df, "columns"):
        raise TypeError(f"data must be a dask DataFrame or a parquet path; got {type(data).__name__}.")
    columns = [str(c) for c in df.columns]
    if y not in columns:
        raise ValueError(f"y: no column {y!r} in the data (its columns: {columns}).")
    if models is None:
        models = [c for c in (columns if file_columns is None else file_columns) if c != y]
    models = [str(m) for m in models]
    missing = [m for m in models if m not in columns]
    if missing:
        raise ValueError(f"models: no column {missing[0]!r} in the data (its columns: {columns}).")
    if not models:
        raise ValueError("models: the data hold no probability column besides y.")
    # the label set is fixed before the first chunk: given, or read here by a first pass over the
    # label column (with the rows of every partition), then every chunk is checked against it
    ycol = y if labels is None else None
    if files is not None:  # a parquet path: one partition per file, read by the task that folds it
        parts, names = files, files
        tasks = [dask.delayed(_file_rows_and_labels)(f, ycol) for f in files]
    else:
        # each partition computed by the task that uses it (see _OwnPartition)
        parts = [_OwnPartition(part) for part in df[[y, *models]].to_delayed()]
        names = [f"partition {i}" for i in range(len(parts))]
        # the lengths of the very partitions the passes read (a column projection may regroup them)
        tasks = [dask.delayed(_partition_rows_and_labels)(part, ycol) for part in parts]
    counted = dask.compute(*tasks, scheduler=scheduler)
    lengths = np.asarray([c[0] for c in counted], dtype=np.int64)
    if labels is None:
        labels = _label_set_of_parts([c[1] for c in counted], pos_label, names)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    plan = OutOfCorePlan.from_options(
        int(lengths.sum()),
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
    shared = dask.delayed(plan, pure=True, traverse=False)
    fold = dask.delayed(_fold_partition, pure=True)
    merge = dask.delayed(_merge_report_parts, pure=True)
    reduce = dask.delayed(OutOfCorePlan.reduce_pass, pure=True)
    split_every = int(split_every)
    work = [(part, int(o)) for part, o, n in zip(parts, offsets, lengths, strict=True) if n]
    n_chains = min(len(work), int(chains))
    bounds = np.linspace(0, len(work), n_chains + 1).round().astype(int)

    def run_pass(block, point):
        level = []
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            acc = None  # a chain: its partitions folded one after the other into one running state
            for part, o in work[lo:hi]:
                acc = fold(shared, acc, part, o, y, models, block, point)
            level.append(acc)
        while len(level) > 2:
            level = [merge(*level[i : i + split_every]) for i in range(0, len(level), split_every)]
        # the last two states are merged by the client (a worker holds one state, never two);
        # the plan then turns a block's sums into its replicate values
        parts = dask.compute(*level, scheduler=scheduler)
        return merge_chunk_statistics(parts, in_place=True)

    def run_passes(group):
        # above exact_rows: each pass of the group is one chain over every file (or partition),
        # on its own worker, whose block of sums becomes its replicate values there (only they
        # and the first pass's values and sample come back; no worker ever holds two blocks)
        chains_ = []
        for block, point in group:
            acc = None
            for part, o in work:
                acc = fold(shared, acc, part, o, y, models, block, point)
            chains_.append(reduce(shared, acc))
        return list(dask.compute(*chains_, scheduler=scheduler))

    # (a dataframe's partitions too: each fold computes its own, so no partition is shared by
    # the chains of a round, nor does a block of sums move between workers)
    if plan.mode == "grid" and len(plan.blocks) > 1 and len(work) > 0:
        return plan.run(
            run_pass,
            run_passes=run_passes,
            width=int(chains),
            title=title,
            notes=notes,
            verbose=verbose,
            started=started,
        )
    return plan.run(run_pass, title=title, notes=notes, verbose=verbose, started=started)
