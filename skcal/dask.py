"""Calibration measures over Dask arrays and dataframes, reduced as a tree of merged statistics.

Every measure is computed from its mergeable statistics object (:mod:`skcal.stats`): each
partition is turned into the object's versioned state (:meth:`~skcal.stats.BaseStatistics.get_state`,
a small dict of arrays), the states are merged pairwise up a tree (``split_every`` at a time)
and only the root is brought back. Per-partition metric *values* are never combined (a mean of
per-block means is wrong when blocks differ in size; a sum of sums is not), so the result equals
the in-memory function on all rows up to round-off, whatever the partitioning.

Several measures are computed in one pass over the data (:func:`evaluate`). The polynomial
CE2 / CE1 estimators need a second pass (the plug-in sums, given the coefficients fitted from
the first pass's moment statistics); it is made automatically, for those measures only.

This module needs Dask (``pip install 'skcal[dask]'``); ``import skcal`` never imports it.

The measures are the catalogue's (:mod:`skcal._catalog`) with a ``dask`` status: a new measure is
offered here by its entry there (its statistics class, default arguments, label arguments,
input and how exact it is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

try:
    import dask
    import dask.array as da
except ImportError as exc:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "skcal.dask needs Dask (dask[array,dataframe,distributed] >= 2024.1); install it with "
        "`pip install 'skcal[dask]'`."
    ) from exc

import numpy as np

from skcal._catalog import measures
from skcal._compat import HasMethods, validate_parameter_constraints, validate_params
from skcal._constraints import (
    ALPHA,
    BASIS,
    DEGREE,
    LABELS,
    POS_LABEL,
    POSITIVE_REAL,
    SAMPLE_WEIGHT,
    SCHEDULER,
    SPLIT_EVERY,
)
from skcal._dask_report import calibration_report_dask, is_dask_frame
from skcal.chebyshev import auto_degree, check_auto_sample_size
from skcal.platt import SecondOrderPlattCalibrator
from skcal.stats import (
    BaseStatistics,
    BinnedStatistics,
    CE1Statistics,
    CE2Statistics,
    ClasswiseStatistics,
    QuantileSelector,
    TopLabelStatistics,
    from_state,
    merge_all,
    statistics_class,
)
from skcal.votes import Snapshots

__all__ = [
    "MEASURES",
    "MeasureSpec",
    "calibration_report_dask",
    "evaluate",
    "evaluate_dataframe",
    "fit_second_order_calibrator",
]


@dataclass(frozen=True)
class MeasureSpec:
    """How :func:`evaluate` builds the statistics of one measure, from its catalogue entry.

    The fields are the entry's (:class:`skcal._catalog.Measure`): ``statistics`` names its
    statistics class (``"module:Class"``; ``klass`` is the class), ``kwargs`` are its ``params``,
    ``label_args`` and ``strategy`` are as there, ``inputs`` is ``"second_order"`` (snapshots and
    ``(m, sigma2)``) or ``"first_order"``, and ``status`` is its ``dask`` text (the guide's table is
    built from it). ``compute_params`` (the class's ``_compute_only_params``) change what
    ``compute`` returns, never the state: measures whose statistics differ only in them share one
    state in :func:`evaluate`'s pass (the binned family on the same bins is one set of sums).
    """

    statistics: str
    kwargs: dict = field(default_factory=dict)
    label_args: tuple = ("pos_label", "labels")
    inputs: str = "first_order"
    status: str = "exact (sums of per-row terms)"
    compute_params: tuple = ()
    strategy: str | None = None
    klass: type = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, measure):
        """The spec of a catalogue :class:`~skcal._catalog.Measure` with a ``dask`` status."""
        k = measure.statistics
        return cls(
            f"{k.__module__}:{k.__name__}",
            dict(measure.params),
            measure.label_args,
            "second_order" if measure.input == "second_order" else "first_order",
            measure.dask,
            tuple(k._compute_only_params),
            measure.strategy,
            k,
        )

    def make(self, **overrides):
        """An empty statistics object, the defaults updated by the keyword arguments ``overrides``."""
        return self.klass(**{**self.kwargs, **overrides})


#: The measures :func:`evaluate` knows: the catalogue's measures with a ``dask`` status.
MEASURES: dict[str, MeasureSpec] = {name: MeasureSpec.of(m) for name, m in measures(dask=True).items()}


# ---------------------------------------------------------------------------------------------
# partitions
# ---------------------------------------------------------------------------------------------


def _aligned(x, row_chunks, name):
    if x.ndim == 1:
        return x if x.chunks[0] == row_chunks else x.rechunk((row_chunks,))
    if x.ndim == 2:
        want = (row_chunks, (x.shape[1],))
        return x if x.chunks == want else x.rechunk(want)
    raise ValueError(f"{name} must be 1- or 2-dimensional; got {x.ndim} dimensions.")


def _array_blocks(x):
    # not optimised: dask's array optimisation fuses a task that feeds both y and p (one
    # generating or reading function per block) into each of them, so it would run twice
    blocks = x.to_delayed(optimize_graph=False)
    return list(blocks.ravel() if x.ndim == 1 else blocks[:, 0])


def _partitions(y, p, sample_weight):
    """Aligned ``(y, p, w)`` partitions as lists of delayed objects (dask arrays: unoptimised, see
    :func:`_array_blocks`)."""
    arrays = [y, p] + ([] if sample_weight is None else [sample_weight])
    names = ["y", "p", "sample_weight"]
    if all(is_dask_frame(a) for a in arrays):
        nparts = {a.npartitions for a in arrays}
        if len(nparts) != 1:
            raise ValueError(f"y, p and sample_weight must have the same partitions; got {sorted(nparts)}.")
        # each column optimised on its own: dask-expr pushes the column projection into the
        # reader (read_parquet reads only that column), so nothing is read twice
        parts = [list(a.to_delayed()) for a in arrays]
    elif any(is_dask_frame(a) for a in arrays):
        raise TypeError("Pass y, p and sample_weight all as dask arrays or all as dask dataframes/series.")
    else:
        arrs = [a if isinstance(a, da.Array) else da.asarray(np.asarray(a)) for a in arrays]
        rows = arrs[0].chunks[0]
        if any(np.isnan(c) for c in rows):
            raise ValueError("y has unknown chunk sizes; call y.compute_chunk_sizes() first.")
        for a, nm in zip(arrs, names, strict=False):
            if a.shape[0] != arrs[0].shape[0]:
                raise ValueError(f"{nm} has {a.shape[0]} rows; y has {arrs[0].shape[0]}.")
        parts = [_array_blocks(_aligned(a, rows, nm)) for a, nm in zip(arrs, names, strict=False)]
    if sample_weight is None:
        parts.append([None] * len(parts[0]))
    return list(zip(*parts, strict=True))


def _n_columns(p):
    if is_dask_frame(p):
        return len(p.columns) if hasattr(p, "columns") else 1
    return 1 if np.ndim(p) == 1 else p.shape[1]


# ---------------------------------------------------------------------------------------------
# the graph: per-partition states, merged up a tree
# ---------------------------------------------------------------------------------------------
def _to_numpy(x):
    return x.to_numpy() if hasattr(x, "to_numpy") else x


def _recipe(state):
    """What a leaf task needs to build a template: its kind and parameters, not its arrays.

    Every leaf starts from an empty object, rebuilt on the worker from ``kind`` and ``params``,
    so the graph carries a few hundred bytes per measure instead of the empty arrays (the 2^18
    zero cells of smECE would be serialised into, and tokenised for, every leaf task). A
    template that already holds rows is merged in once, at the root (:func:`_reduce`).
    """
    return {k: state[k] for k in ("kind", "format_version", "state_version", "params")}


def _holds_rows(state):
    """Whether a template state differs from its class's empty statistics."""
    if state.get("n_updates", 0):
        return True
    empty = statistics_class(state["kind"])(**state["params"]).get_state(copy=False)["arrays"]
    arrays = state["arrays"]
    return not all(np.shape(arrays[k]) == np.shape(v) and not np.any(arrays[k]) for k, v in empty.items())


def _partition_states(recipes, y, p, w, offset=None):
    """The states of every recipe updated with one partition (``offset``: its first global row,
    passed as ``row_offset`` to the recipes flagged ``use_offset``, the quantile passes and the
    threshold-binned truthful statistics)."""
    out = []
    y, p, w = _to_numpy(y), _to_numpy(p), _to_numpy(w)
    if np.ndim(y) == 2 and np.shape(y)[1] >= 2:
        y = Snapshots(y)  # evaluate's y of two or more columns is snapshots: said, by its argument
    for r in recipes:
        try:
            target = statistics_class(r["kind"])
        except ValueError:
            target = None
        if target is None or target._state_version != r["state_version"]:
            raise ValueError(
                f"The worker's skcal cannot build {r['kind']!r} state version {r['state_version']}; "
                "install the same skcal on the client and the workers."
            )
        obj = target(**r["params"])  # empty: no zero arrays copied through a state
        if r.get("use_offset"):
            obj.update(y, p, sample_weight=w, row_offset=offset)
        else:
            obj.update(y, p, sample_weight=w)
        out.append(obj.get_state(copy=False))
    return out


def _merge_states(*groups):
    # the input states are read, never written, and the merged objects are discarded: no copies;
    # a group merges in one step (the exact cutoff statistics merge all their sorted runs at once)
    out = []
    for states in zip(*groups, strict=True):
        objs = [BaseStatistics.from_state(s, copy=False) for s in states]
        merged = objs[0] if len(objs) == 1 else merge_all(objs, split_every=len(objs))
        out.append(merged.get_state(copy=False))
    return out


def _tree_reduce(recipes, partitions, split_every, offsets=None):
    """Delayed root: the list of merged states (one per recipe, see :func:`_recipe`)."""
    leaf = dask.delayed(_partition_states, pure=True)
    merge = dask.delayed(_merge_states, pure=True)
    # one shared key for the (small) recipes: tokenised and shipped once, not per leaf task
    shared = dask.delayed(recipes, pure=True, traverse=False)
    if offsets is None:
        level = [leaf(shared, y, p, w) for y, p, w in partitions]
    else:
        level = [leaf(shared, y, p, w, int(o)) for (y, p, w), o in zip(partitions, offsets, strict=True)]
    return _tree(level, merge, split_every)


def _tree(level, combine, split_every):
    """The root of ``combine`` applied up a tree over ``level``, ``split_every`` at a time."""
    while len(level) > 1:
        level = [combine(*level[i : i + split_every]) for i in range(0, len(level), split_every)]
    return level[0]


def _label_set(y_parts, split_every):
    uniq = dask.delayed(lambda y: np.unique(_to_numpy(y)), pure=True)
    union = dask.delayed(lambda *u: np.unique(np.concatenate(u)), pure=True)
    return _tree([uniq(y) for y in y_parts], union, split_every)


def _share_key(recipe):
    drop = set(statistics_class(recipe["kind"])._compute_only_params)
    params = {k: v for k, v in recipe["params"].items() if k not in drop}
    flag = recipe.get("use_offset", False)
    return repr((recipe["kind"], recipe["state_version"], flag, sorted(params.items())))


def _reduce(templates, partitions, split_every, scheduler, *, offsets=None, use_offset=None):
    """The merged statistics objects of every template state over the partitions.

    Templates travel as recipes (:func:`_recipe`); templates that differ only in compute-only
    parameters (:attr:`MeasureSpec.compute_params`) are reduced once, and each gets the shared
    merged state with its own parameters. A template that already holds rows is added once.
    ``offsets`` (each partition's first global row index) is passed as ``row_offset`` to the
    templates flagged in ``use_offset``.
    """
    recipes = [_recipe(t) for t in templates]
    for r, flag in zip(recipes, use_offset or [False] * len(recipes), strict=True):
        if flag:
            r["use_offset"] = True
    keys, slot, distinct = [], {}, []
    for r in recipes:
        key = _share_key(r)
        if key not in slot:
            slot[key] = len(distinct)
            distinct.append(r)
        keys.append(key)
    if partitions:
        with_offsets = offsets if any(use_offset or ()) else None
        root = _tree_reduce(distinct, partitions, split_every, offsets=with_offsets)
        (states,) = dask.compute(root, scheduler=scheduler)
    else:
        states = [statistics_class(r["kind"])(**r["params"]).get_state() for r in distinct]
    out, used = [], set()
    for t, k in zip(templates, keys, strict=True):
        # the computed states are ours: the first object of a state reads its arrays, the others copy
        state = states[slot[k]]
        sums = {a: np.array(v) for a, v in state["arrays"].items()} if k in used else state["arrays"]
        obj = statistics_class(t["kind"]).from_sums(sums, n_updates=state["n_updates"], **t["params"])
        used.add(k)
        out.append(from_state(t).merge(obj) if _holds_rows(t) else obj)
    return out


# ---------------------------------------------------------------------------------------------
# quantile bins, exactly, by extra passes (strategy="quantile" of the binned and truthful measures)
# ---------------------------------------------------------------------------------------------
#: statistics class -> the kind of quantile bins of its in-memory function
_QUANTILE_KINDS = {
    BinnedStatistics: "percentile",
    TopLabelStatistics: "top_label",
    ClasswiseStatistics: "classwise",
}


def _row_offsets(y, partitions, scheduler):
    """Global index of each partition's first row (dask arrays: from the chunks; frames: one pass)."""
    if is_dask_frame(y):
        lengths = dask.compute(*[dask.delayed(len)(part[0]) for part in partitions], scheduler=scheduler)
    else:
        lengths = (y if isinstance(y, da.Array) else da.asarray(np.asarray(y))).chunks[0]
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if lengths.size else lengths


def _quantile_passes(specs, y, partitions, labels, pos_label, split_every, scheduler):
    """Resolve ``strategy=`` of the binned / truthful measures in ``specs`` (in place).

    ``strategy="uniform"`` is dropped (the statistics' default); ``strategy="quantile"`` runs the
    passes of :class:`skcal.stats.QuantileSelector` for all such measures together: the
    histogram pass reduced with ``_reduce``, then the edge-cell passes (which need the global row
    index) until every bin edge / threshold is exact; the measure's kwargs then carry ``edges=``
    (binned) or ``thresholds=`` (truthful). Returns ``(use_offset, offsets)`` for the main pass.
    """
    use_offset = [False] * len(specs)
    selectors = []
    for i, (name, spec, kw) in enumerate(specs):
        if "strategy" not in kw:
            continue
        kind = _QUANTILE_KINDS.get(spec.klass)
        strategy = kw["strategy"]
        if kind is None:
            raise ValueError(f"{name!r} takes no strategy= (only the binned and truthful measures do).")
        if strategy not in ("uniform", "quantile"):
            raise ValueError(f'strategy of {name!r} must be "uniform" or "quantile"; got {strategy!r}.')
        rest = {k: v for k, v in kw.items() if k != "strategy"}
        if strategy == "quantile" and rest.get("edges") is None and rest.get("thresholds") is None:
            n_bins = rest.pop("n_bins", spec.kwargs.get("n_bins"))
            rest.pop("edges", None)
            sel = QuantileSelector(
                kind=kind,
                n_bins=n_bins,
                labels=labels if kind != "percentile" else None,
                pos_label=pos_label if kind == "percentile" else None,
            )
            selectors.append((i, kind, sel))
        specs[i] = (name, spec, rest)
    # bins given as (value, global index) thresholds split ties by global row index: the passes
    # of such measures need each partition's first row index, whoever computed the thresholds
    for i, (_, spec, kw) in enumerate(specs):
        if kw.get("thresholds") is not None and _QUANTILE_KINDS.get(spec.klass) != "percentile":
            use_offset[i] = True
    if not selectors:
        return use_offset, (_row_offsets(y, partitions, scheduler) if any(use_offset) else None)
    firsts = [sel.next_statistics().get_state() for _, _, sel in selectors]
    for (_, _, sel), st in zip(selectors, _reduce(firsts, partitions, split_every, scheduler), strict=True):
        sel.advance(st)
    # the truthful bins break ties by global row index: their passes need each partition's
    # first row index (the percentile edges do not: their cells are split by value only)
    by_index = any(kind != "percentile" for _, kind, _ in selectors)
    offsets = _row_offsets(y, partitions, scheduler) if by_index or any(use_offset) else None
    while active := [sel for _, _, sel in selectors if not sel.done]:
        templates = [sel.next_statistics().get_state() for sel in active]
        flags = [by_index] * len(active)
        merged = _reduce(templates, partitions, split_every, scheduler, offsets=offsets, use_offset=flags)
        for sel, st in zip(active, merged, strict=True):
            sel.advance(st)
    for i, kind, sel in selectors:
        name, spec, rest = specs[i]
        key = "edges" if kind == "percentile" else "thresholds"
        specs[i] = (name, spec, {**rest, key: sel.result()})
        use_offset[i] = kind != "percentile"
    return use_offset, offsets


# ---------------------------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------------------------
def _specs(measures):
    out = []
    if isinstance(measures, str):
        measures = [measures]
    for item in measures:
        name, kwargs = (item, {}) if isinstance(item, str) else item
        if name not in MEASURES:
            raise ValueError(f"Unknown measure {name!r}; known measures: {sorted(MEASURES)}.")
        spec, kwargs = MEASURES[name], dict(kwargs)
        for key in ("strategy", "edges", "thresholds"):
            if key in kwargs and kwargs[key] is None:
                del kwargs[key]  # None means "not given", as in the in-memory functions
        if spec.strategy is not None and not {"strategy", "edges", "thresholds"} & set(kwargs):
            kwargs["strategy"] = spec.strategy  # the in-memory function's default bins
        out.append((name, spec, kwargs))
    if not out:
        raise ValueError("measures must name at least one measure.")
    kinds = {spec.inputs for _, spec, _ in out}
    if len(kinds) > 1:
        raise ValueError(
            "evaluate computes measures of one input kind per call; "
            f"{[n for n, s, _ in out if s.inputs == 'second_order']} take snapshots and second-order "
            "scores, the others labels and probabilities."
        )
    return out


def _resolve_auto_degrees(specs, partitions, split_every, scheduler):
    """``degree="auto"`` (CE2 / CE1): one cheap pass for Kish's effective sample size first.

    The degree rule of :func:`skcal.chebyshev.auto_degree` needs the effective sample size
    ``(sum w)^2 / sum w^2``; it is reduced with degree-0 statistics (which also validate the
    inputs), then the degree is fixed as :func:`skcal.ce2.ce2_score` fixes it in memory.
    """
    todo = [(i, spec, kw) for i, (_, spec, kw) in enumerate(specs) if kw.get("degree") == "auto"]
    if not todo:
        return
    templates = []
    for _, spec, kw in todo:
        plain = {k: v for k, v in kw.items() if k != "bandwidth"}
        templates.append(spec.make(**{**plain, "degree": 0}).get_state())
    counts = _reduce(templates, partitions, split_every, scheduler)
    for (i, spec, kw), st in zip(todo, counts, strict=True):
        basis = "1d" if isinstance(st, CE1Statistics) else kw.get("basis", "tensor")
        n_eff = check_auto_sample_size(
            st.effective_sample_size(), basis, name="the effective sample size (sum w)^2 / sum w^2"
        )
        h = kw.get("bandwidth", 2**-6)
        # a measure's own keyword: checked here (evaluate's validation does not reach into measures)
        validate_parameter_constraints({"bandwidth": POSITIVE_REAL}, {"bandwidth": h}, caller_name="evaluate")
        new = {k: v for k, v in kw.items() if k != "bandwidth"}
        new["degree"] = auto_degree(n_eff, h, basis)
        specs[i] = (specs[i][0], spec, new)


_COLLECTION = ["array-like"]  # dask arrays and dataframes are array-like, as numpy and pandas are
_MEASURES_ARG = ["array-like", str]


@validate_params(
    {
        "y": _COLLECTION,
        "p": _COLLECTION,
        "measures": _MEASURES_ARG,
        "sample_weight": SAMPLE_WEIGHT,
        "pos_label": POS_LABEL,
        "labels": LABELS,
        "split_every": SPLIT_EVERY,
        "scheduler": SCHEDULER,
        "return_statistics": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def evaluate(
    y,
    p,
    measures=("brier", "log_loss", "accuracy"),
    *,
    sample_weight=None,
    pos_label=None,
    labels=None,
    split_every=8,
    scheduler=None,
    return_statistics=False,
):
    """Compute several calibration measures over Dask collections in one pass over the data.

    Each partition becomes the states of every requested measure's statistics object; the
    states are merged up a tree and the measures computed at the root, so the values equal the
    in-memory functions on all rows (up to round-off) for any partitioning. The polynomial CE2
    / CE1 estimators make a second pass for their plug-in sums.

    Parameters
    ----------
    y : dask array, dask Series/DataFrame or array-like of shape (n,) or (n, k)
        Labels (first-order measures; CE1 also accepts snapshots) or snapshots (CE2).
    p : dask array, dask Series/DataFrame or array-like of shape (n,) or (n, k)
        Probabilities (``(n,)`` positive class, ``(n, 2)`` or ``(n, k)`` ``predict_proba``
        output), the score ``m`` (CE1), or second-order scores ``(m, sigma2)`` (CE2). Its rows
        are aligned with ``y``'s partitions (a dask array is rechunked to ``y``'s row chunks).
    measures : sequence of str or (str, dict), default=("brier", "log_loss", "accuracy")
        Names in :data:`MEASURES`, optionally with constructor arguments overriding the
        defaults, e.g. ``("ce2", {"degree": 8})``. All must take the same kind of input. CE2 /
        CE1 also accept ``{"degree": "auto", "bandwidth": h}``: one cheap extra pass reduces
        Kish's effective sample size and the degree is chosen as
        :func:`skcal.ce2.ce2_score` chooses it (``cv`` selection is not available here).
        The binned and truthful measures accept ``{"strategy": "quantile"}`` or
        ``"uniform"``; without ``strategy`` or ``edges`` they bin as their in-memory functions
        do by default (:attr:`MeasureSpec.strategy`: quantile bins for
        ``debiased_l2_calibration_error`` and the five truthful measures, uniform for the other
        binned ones), so the values equal the in-memory defaults. The exact quantile bins
        (scikit-learn's percentile edges for the binned measures; equal-mass bins with ties
        broken by global row index for the truthful ones) are found first by extra passes
        (a histogram, then the values in the edge cells; see :class:`skcal.stats.QuantileSelector`),
        never approximated. Explicit ``edges`` (binned) or ``thresholds`` (truthful, from
        :func:`skcal.stats.quantile_thresholds`) take precedence over ``strategy``; ``None`` means
        not given.
    sample_weight : dask array, dask Series or array-like of shape (n,), default=None
        Non-negative weights (zero weights are allowed in any partition).
    pos_label : int, float, bool, str or None, default=None
        Positive class of binary labels (not needed for ``{0, 1}``, ``{-1, 1}``, booleans).
    labels : array-like or None, default=None
        The class of each probability column for multiclass ``p``. When ``None`` and ``p``
        has 3 or more columns, one extra pass collects the sorted label set of ``y`` (as
        scikit-learn does in memory), so that a partition missing a class cannot misalign
        the columns.
    split_every : int, default=8
        Fan-in of the merge tree.
    scheduler : str or None, default=None
        Passed to :func:`dask.compute` (``None``: the current default, e.g. a
        ``distributed.Client``).
    return_statistics : bool, default=False
        Also return the merged statistics objects.

    Returns
    -------
    dict
        Measure name -> value (and, with ``return_statistics``, a second dict name -> the
        merged statistics object: for CE2 / CE1 the second-pass object).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from skcal.dask import evaluate
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> out = evaluate(da.from_array(y, chunks=300), da.from_array(p, chunks=300), scheduler="sync")
    >>> from sklearn.metrics import brier_score_loss
    >>> bool(np.isclose(out["brier"], brier_score_loss(y, p), rtol=1e-12))
    True
    """
    specs = _specs(measures)
    split_every = int(split_every)
    partitions = _partitions(y, p, sample_weight)
    needs_labels = any("labels" in spec.label_args for _, spec, _ in specs)
    if needs_labels and labels is None and _n_columns(p) >= 3:
        (labels,) = dask.compute(
            _label_set([part[0] for part in partitions], split_every), scheduler=scheduler
        )
        labels = labels.tolist()
    _resolve_auto_degrees(specs, partitions, split_every, scheduler)
    use_offset, offsets = _quantile_passes(specs, y, partitions, labels, pos_label, split_every, scheduler)
    templates = []
    for _, spec, kwargs in specs:
        extra = {}
        if "pos_label" in spec.label_args and pos_label is not None:
            extra["pos_label"] = pos_label
        if "labels" in spec.label_args and labels is not None:
            extra["labels"] = labels
        templates.append(spec.make(**extra, **kwargs).get_state())
    stats = _reduce(templates, partitions, split_every, scheduler, offsets=offsets, use_offset=use_offset)
    second = [i for i, s in enumerate(stats) if hasattr(s, "plug_in")]
    if second:
        plug = _reduce([stats[i].plug_in().get_state() for i in second], partitions, split_every, scheduler)
        for i, s in zip(second, plug, strict=True):
            stats[i] = s
    values = {name: s.compute() for (name, _, _), s in zip(specs, stats, strict=True)}
    if return_statistics:
        return values, {name: s for (name, _, _), s in zip(specs, stats, strict=True)}
    return values


@validate_params(
    {
        "df": [HasMethods(["__getitem__"])],
        "y": [str, list],
        "p": [str, list],
        "measures": _MEASURES_ARG,
        "sample_weight": [str, None],
    },
    # the other arguments are evaluate's, checked by it: its validation must not be skipped
    prefer_skip_nested_validation=False,
)
def evaluate_dataframe(df, *, y, p, measures=("brier", "log_loss", "accuracy"), sample_weight=None, **kwargs):
    """Compute calibration measures from the columns of a dask dataframe (e.g. ``dd.read_parquet``).

    Parameters
    ----------
    df : dask.dataframe.DataFrame
        One row per scored example.
    y : str or list of str
        The label column (or the snapshot columns for CE2).
    p : str or list of str
        The probability column(s) (``predict_proba`` columns in class order) or the score
        columns ``[m, sigma2]``.
    measures : sequence of str or (str, dict), default=("brier", "log_loss", "accuracy")
        As in :func:`evaluate`.
    sample_weight : str or None, default=None
        The weight column.
    **kwargs : dict
        Passed to :func:`evaluate` (``pos_label``, ``labels``, ``split_every``, ``scheduler``,
        ``return_statistics``).

    Returns
    -------
    dict
        Measure name -> value.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd
    >>> from skcal.dask import evaluate_dataframe
    >>> pdf = pd.DataFrame({"y": [0, 1, 1, 0, 1], "p": [0.1, 0.8, 0.6, 0.3, 0.9]})
    >>> out = evaluate_dataframe(dd.from_pandas(pdf, npartitions=2), y="y", p="p", scheduler="sync")
    >>> round(out["accuracy"], 6)
    1.0
    """
    ww = None if sample_weight is None else df[sample_weight]
    return evaluate(df[y], df[p], measures, sample_weight=ww, **kwargs)


@validate_params(
    {
        "snapshots": _COLLECTION,
        "scores": _COLLECTION,
        "degree": DEGREE,
        "alpha": ALPHA,
        "basis": BASIS,
        "sample_weight": SAMPLE_WEIGHT,
        "split_every": SPLIT_EVERY,
        "scheduler": SCHEDULER,
    },
    prefer_skip_nested_validation=True,
)
def fit_second_order_calibrator(
    snapshots,
    scores,
    *,
    degree=12,
    alpha=1e-12,
    basis="tensor",
    sample_weight=None,
    split_every=8,
    scheduler=None,
):
    """Fit :class:`skcal.platt.SecondOrderPlattCalibrator` from distributed moment statistics.

    The Chebyshev moment statistics are reduced as a tree over the partitions (one pass; the
    ``n x d`` design matrix never exists) and the calibrator is fitted from them with
    :meth:`~skcal.platt.SecondOrderPlattCalibrator.fit_statistics` (primal ridge form). The
    fitted calibrator is a plain in-memory estimator; apply it to a dask array with
    ``scores.map_blocks(cal.transform, ...)``.

    Parameters
    ----------
    snapshots : dask array or dask DataFrame of shape (n, k)
        ``k >= 2`` binary labels per input (NaN marks a missing vote).
    scores : dask array or dask DataFrame of shape (n, 2)
        Second-order scores ``(m, sigma2)``.
    degree : int, default=12
        Chebyshev degree.
    alpha : float, default=1e-12
        Ridge multiplier.
    basis : {"tensor", "total"}, default="tensor"
        The basis.
    sample_weight : dask array or dask Series of shape (n,), default=None
        Non-negative weights.
    split_every : int, default=8
        Fan-in of the merge tree.
    scheduler : str or None, default=None
        Passed to :func:`dask.compute`.

    Returns
    -------
    SecondOrderPlattCalibrator
        Fitted (``order=2``).
    """
    template = CE2Statistics(degree=degree, alpha=alpha, basis=basis).get_state()
    (stats,) = _reduce([template], _partitions(snapshots, scores, sample_weight), int(split_every), scheduler)
    cal = SecondOrderPlattCalibrator(degree=degree, alpha=alpha, basis=basis, order=2)
    return cal.fit_statistics(stats)
