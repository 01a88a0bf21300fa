"""Report metrics: a small picklable record per metric, built from the catalogue's measures.

Every metric is ``func(data, prediction, **params) -> float`` for one model on one (re)sample,
where ``data`` is the validated validation data of the report kind (see :mod:`._kinds`). A
built-in metric is a measure of the catalogue (:mod:`skcal._catalog`) applied to a *view* of the
data, ``view(data, prediction) -> (y, prediction)``: its value is the measure's own function of
the view. Everything here is a module-level function or a small class, so a report (and its
metrics) can be pickled.

A built-in metric also says how its bootstrap replicates are computed through the statistics
objects of :mod:`skcal.stats` (``Metric.replicates``, returning a :class:`ReplicateSpec`): the
statistics template, the arrays it is updated with and the input row of each array row (the
votes of a second-order report share their input's weight). The replicates' data-driven
choices are made once, on the full validation set: SCDL's finest grid (the ``"auto"`` rule at
``n``), the truthful measures' quantile bins, CE2's degree and ridge; a replicate then moves the
row weights only. smCE's replicates use its fine-grid form (:class:`~skcal.stats.SmoothCEGridStatistics`,
:func:`~skcal.stats.smce_grid_cells` cells, within its stated bound of the exact smCE); every
other replicate is the exact measure of its resample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skcal.stats import MeanStatistics


@dataclass(frozen=True)
class Metric:
    """A report metric.

    ``func(data, prediction, **params)`` scores one model; ``prepare(data, prediction)``
    (optional) returns the ``params`` fixed once per model on the full validation set and reused
    on every bootstrap replicate (for data-driven hyperparameters such as CE2's degree);
    ``details(data, prediction)`` (optional) returns extra numbers shown beside the value (such
    as SCDL's selected grid ``m*`` and the unfloored ``SCDL_{m*}``).
    """

    name: str
    label: str
    func: object
    greater_is_better: bool = False
    description: str = ""
    prepare: object = None
    details: object = None
    #: Rank by the absolute value (zero is ideal, the sign is informative).
    rank_by_abs: bool = False
    #: Range of the metric, used to clip intervals: (low, high), None for unbounded.
    bounds: tuple = (0.0, None)
    #: A calibration error (the verdict's "best calibrated" uses one of these).
    is_calibration: bool = False
    #: ``replicates(data, prediction, **params) -> ReplicateSpec`` (or None): how the bootstrap
    #: computes the metric's replicates through a statistics object. A metric without it (a
    #: user's callable) is recomputed on each resample's rows.
    replicates: object = None
    #: The catalogue's measure behind the metric (None: a user's callable).
    measure: object = None


@dataclass(frozen=True)
class ReplicateSpec:
    """How one model's replicates of one metric are computed: a statistics template and its rows.

    ``template`` is updated with ``arrays`` (as its ``update`` takes them) inside a
    :class:`~skcal.stats.PoissonBootstrap`; ``rows`` gives the validation row (whose bootstrap
    weight applies) of each array row (``None``: array row ``i`` is validation row ``i``);
    ``sort_by`` names the array (a probability) by which the rows are sorted once per model and
    view (``view``: the metrics of one view share the sort). A template with a second pass
    (CE2's plug-in sums) is followed by it on the same rows.
    """

    template: object
    arrays: tuple
    rows: object = None
    sort_by: object = None
    view: object = None


class OnView:
    """``func(*view(data, prediction), **keywords(data), **params)``: a measure on a view of the data.

    ``keywords`` (optional) gives arguments the data fix for every model, such as the class of
    each column of a multiclass prediction (``labels``).
    """

    def __init__(self, func, view, keywords=None):
        self.func = func
        self.view = view
        self.keywords = keywords

    def __call__(self, data, prediction, **params):
        fixed = {} if self.keywords is None else self.keywords(data)
        return float(self.func(*self.view(data, prediction), **fixed, **params))


class _Details:
    """A binary measure's details (``Measure.details``) from the statistics of its view's rows."""

    def __init__(self, measure, view):
        self.measure = measure
        self.view = view

    def __call__(self, data, prediction):
        y, p = self.view(data, prediction)
        template = self.measure.value_template(p.shape[0])
        return self.measure.details(type(template).from_validated(y, p, **template.get_params()))


class _Replicates:
    """The :class:`ReplicateSpec` of a catalogue measure applied through ``view``.

    A binary measure's rows are sorted by the prediction (the metrics of a view share one sort);
    a view may name, in its attribute ``replicate_rows``, the data's attribute holding the
    validation row of each of its rows (the second-order votes view: ``vote_rows``).
    """

    def __init__(self, measure, view):
        self.measure = measure
        self.view = view

    def __call__(self, data, prediction, **params):
        arrays = self.view(data, prediction)
        attr = getattr(self.view, "replicate_rows", None)
        rows = None if attr is None else getattr(data, attr)
        m = self.measure
        if m.rows is not None:
            return ReplicateSpec(MeanStatistics(), (np.asarray(m.rows(*arrays), dtype=float),), rows)
        if m.input != "binary":
            template = None if m.replicates is None else m.replicates(*arrays, **params)
            return None if template is None else ReplicateSpec(template, arrays, rows)
        template = m.replicate_template(arrays[1].shape[0], sorted_rows=True)
        return None if template is None else ReplicateSpec(template, arrays, rows, sort_by=1, view=self.view)


def catalog_metric(measure, view, *, suffix="", func=None, keywords=None, **overrides):
    """The :class:`Metric` of a catalogue measure applied through ``view``.

    ``suffix`` is added to the description (what the view compares); ``func`` replaces the
    measure's function (a kind that computes it its own way, such as the classwise CE2 with a
    degree per class); ``keywords`` are as :class:`OnView`'s; ``overrides`` replace other fields
    (``label``, ``bounds``, ``prepare``).
    """
    m = measure
    fields = {
        "label": m.label,
        "greater_is_better": m.greater_is_better,
        "description": m.description + suffix,
        "details": None if m.details is None else _Details(m, view),
        "rank_by_abs": m.rank_by_abs,
        "bounds": m.bounds,
        "is_calibration": m.is_calibration,
        "replicates": _Replicates(m, view),
        "measure": m,
    }
    fields.update(overrides)
    return Metric(m.name, func=OnView(m.function, view, keywords) if func is None else func, **fields)


class UserMetric:
    """A user's ``callable(y, prediction) -> float`` applied to ``view(data, prediction)``.

    The callable gets its own copies of the report's arrays: the other metrics, the tests and the
    figures read the same arrays, so a callable that wrote into them (clipping in place, sorting
    in place) would change their numbers silently. Copies rather than read-only views, so that a
    callable compiled for writable arrays (numba with an explicit signature) still accepts them.
    """

    def __init__(self, func, view):
        self.func = func
        self.view = view

    def __call__(self, data, prediction, **params):
        return float(self.func(*[_own_copy(a) for a in self.view(data, prediction)]))


def _own_copy(a):
    """A copy of an ndarray (anything else as it is: the votes' containers are read-only)."""
    return a.copy() if isinstance(a, np.ndarray) else a


def user_metric(name, spec, view):
    """A :class:`Metric` from a callable or a ``(callable, greater_is_better)`` pair."""
    gib = False
    func = spec
    if isinstance(spec, tuple):
        if len(spec) != 2 or not callable(spec[0]):
            raise ValueError(f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair.")
        func, gib = spec[0], bool(spec[1])
    if not callable(func):
        raise ValueError(f"metrics[{name!r}] must be a callable or a (callable, greater_is_better) pair.")
    return Metric(str(name), str(name), UserMetric(func, view), gib, "user metric", bounds=(None, None))
