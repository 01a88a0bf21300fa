"""The protocol every mergeable calibration statistics object follows.

A statistics object holds the additive sufficient statistics of one measure. ``update`` adds
a chunk of rows, ``merge`` (and ``+``) combines two objects built with the same parameters,
``compute`` returns the measure, and ``get_state`` / ``from_state`` turn the object into a
versioned dict of numpy arrays and plain scalars (no pickle), so that states cross processes,
machines and library versions.

Merging adds statistics, never per-chunk metric values: a mean of per-chunk means is wrong
when chunks differ in size, a sum of sums is not.

**Parameters are checked at construction.** Every subclass declares ``_parameter_constraints``
(scikit-learn's constraint objects, most of them from :mod:`skcal._constraints`), and
:class:`BaseStatistics` checks the constructor's arguments against them before the subclass's
``__init__`` runs, once per object (a subclass's ``__init__`` then only stores and normalises).
Unlike an estimator, whose ``fit`` checks its parameters (``set_params`` may change them in
between), a statistics object never changes its parameters and its state's layout depends on
them, so a wrong parameter is refused before any chunk is added and before a template is sent to
the workers; :meth:`BaseStatistics.from_state` checks the parameters a state carries the same way.

**Statistics of validated rows.** A metric function validates its inputs once (with
:mod:`skcal._validation`) and builds its statistics object with
:meth:`BaseStatistics.from_validated`, which skips the checks of ``update``; the result equals
``update`` on the raw inputs. A function that needs only the value computes through
:meth:`BaseStatistics.compute_validated`, ``from_validated(...).compute()``, which a class
overrides where one batch of rows has a shorter path to the same value than the mergeable state
(the cutoff error's running sums, smECE's occupied cells, SCDL's compiled search).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers

import numpy as np

from skcal._compat import HasMethods, class_constraints, validate_parameter_constraints, validate_params
from skcal._constraints import NON_NEGATIVE_INT, SAMPLE_WEIGHT, SPLIT_EVERY
from skcal._docstrings import fill
from skcal._validation import check_binary_probabilities
from skcal.stats._replicate import LoopPlan, stack_empty

__all__ = [
    "BaseStatistics",
    "BinaryStatistics",
    "STATE_FORMAT_VERSION",
    "VALIDATED_ROWS",
    "VALIDATED_ROWS_DOCS",
    "check_binary_chunk",
    "count_rows",
    "effective_sample_size",
    "kish_size",
    "from_state",
    "merge_all",
    "params_equal",
    "plain_value",
    "statistics_class",
]

#: Version of the dict layout produced by :meth:`BaseStatistics.get_state`.
STATE_FORMAT_VERSION = 1

_REGISTRY: dict[str, type] = {}
#: The constraints of the validated rows a binary class's ``from_validated`` and
#: ``compute_validated`` take (with the class's own parameters added).
VALIDATED_ROWS = {"y": ["array-like"], "p": ["array-like"], "sample_weight": SAMPLE_WEIGHT}

#: The description of :data:`VALIDATED_ROWS` (``{validated_rows}`` in a docstring, see
#: :func:`skcal._docstrings.fill`) and of a classmethod's ``pos_label`` (``{validated_pos_label}``).
VALIDATED_ROWS_DOCS = {
    "validated_rows": """y : ndarray of shape (n,)
    Labels in {0, 1}, float64, as :func:`skcal._validation.check_binary_probabilities` returns
    them.
p : ndarray of shape (n,)
    Probabilities in [0, 1], float64.
sample_weight : ndarray of shape (n,) or None, default=None
    Validated non-negative weights.""",
    "validated_pos_label": """pos_label : int, float, bool or str, default=None
    The constructor's argument (the labels are validated already).""",
}


def _checking_init(init):
    """Wrap a subclass's ``__init__``: its arguments are checked against ``_parameter_constraints`` first.

    Only the outermost constructor checks (``type(self).__init__`` is the wrapper being called),
    so a subclass ``__init__`` that calls another wrapped ``__init__`` is checked once.
    """
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if type(self).__init__ is __init__:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            params = {k: v for k, v in bound.arguments.items() if k != "self"}
            # named "Class.__init__", as validate_params names a method: a validated function
            # that builds the object (from_state, skcal.dask.evaluate) then keeps the name
            validate_parameter_constraints(
                type(self)._parameter_constraints,
                params,
                caller_name=f"{type(self).__name__}.__init__",
                compiled=class_constraints(type(self)),
            )
        init(self, *args, **kwargs)

    return __init__


class BaseStatistics:
    """Additive sufficient statistics of a calibration measure (base class).

    Subclasses declare ``_param_names`` (the constructor's keyword arguments, which must match
    for two objects to merge) and ``_parameter_constraints`` (one list of constraints per
    constructor argument, checked when an object is constructed: see the module
    documentation), and implement ``_empty()`` (the identity: a dict of zero arrays),
    ``_check_chunk(*arrays, sample_weight)`` (the chunk's arrays validated, the weights last,
    or ``None`` for a chunk of no rows), ``_sums(*validated)`` (the statistics of validated
    rows, a dict with the keys and shapes of ``_empty()``) and ``_compute()``. A subclass whose
    statistics are not simply added overrides ``_combine(a, b)`` (and ``_combine_many`` when
    merging many states at once is cheaper than one after the other).

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded into this object (merges add them up).
    """

    _param_names: tuple[str, ...] = ()
    #: Constructor arguments that only ``compute`` reads (which measure of the statistics is
    #: returned): two objects differing in them hold the same statistics, so one bootstrap's
    #: replicate statistics serve both (:meth:`~skcal.stats.PoissonBootstrap.compute_as`).
    _compute_only_params: tuple[str, ...] = ()
    #: One list of scikit-learn constraints per constructor argument (see ``_constraints``).
    _parameter_constraints: dict = {}
    #: Bump when the meaning or layout of the arrays changes; ``from_state`` refuses others.
    _state_version: int = 1
    #: Whether the statistics' shapes grow with the rows (sums are checked by keys, not shapes).
    _variable_shape: bool = False
    #: Whether the replicate statistics' shapes grow with the rows (see ``PoissonBootstrap``).
    _replicate_variable_shape: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls._empty is not BaseStatistics._empty:  # a concrete kind of statistics, not a base
            _REGISTRY[cls._kind()] = cls
        if "__init__" in cls.__dict__:
            cls.__init__ = _checking_init(cls.__init__)

    @classmethod
    def _kind(cls):
        return f"skcal.{cls.__name__}"

    # -- to implement ----------------------------------------------------------------------
    def _empty(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_chunk(self, *arrays, sample_weight=None):  # pragma: no cover - abstract
        """The chunk's arrays validated (weights last), or ``None`` for a chunk of no rows."""
        raise NotImplementedError

    def _sums(self, *validated):  # pragma: no cover - abstract
        """The statistics of validated rows (a dict with the keys and shapes of ``_empty()``)."""
        raise NotImplementedError

    def _compute(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _chunk(self, *arrays, sample_weight=None):
        checked = self._check_chunk(*arrays, sample_weight=sample_weight)
        return self._empty() if checked is None else self._sums(*checked)

    def _combine(self, a, b):
        """Combine two statistics dicts (default: add key by key)."""
        return {k: a[k] + b[k] for k in a}

    def _combine_many(self, parts):
        """Combine any number of statistics dicts (default: one after the other)."""
        acc = parts[0]
        for part in parts[1:]:
            acc = self._combine(acc, part)
        return acc

    @classmethod
    @validate_params({"sample_weight": SAMPLE_WEIGHT}, prefer_skip_nested_validation=True)
    def from_validated(cls, *arrays, sample_weight=None, **params):
        """Build the statistics of rows that the caller has already validated.

        The constructor from validated arrays that the in-memory metric functions use: they
        validate their inputs once with :mod:`skcal._validation` and hand the arrays over, and
        the checks of :meth:`update` are skipped. The result equals
        ``cls(**params).update(*raw_arrays, sample_weight=...)`` on the raw inputs those arrays
        were validated from (``n_updates_`` is 1). The parameters are checked as for any
        construction; the arrays are not checked, not copied and not modified.

        Parameters
        ----------
        *arrays : ndarray
            The arrays of :meth:`update`, in its order, as the class's validation returns them
            (each subclass states the form: for the binary measures ``y`` in {0, 1} and ``p`` in
            [0, 1], both float64 of shape ``(n,)``, from
            :func:`skcal._validation.check_binary_probabilities`).
        sample_weight : ndarray of shape (n,) or None, default=None
            Validated non-negative float64 weights (:func:`skcal._validation.check_sample_weight`).
        **params : dict
            The constructor's arguments.

        Returns
        -------
        BaseStatistics
            A new object holding the statistics of the rows.
        """
        obj = cls(**params)
        obj._stats = obj._sums(*arrays, sample_weight)
        obj.n_updates_ = 1
        return obj

    @classmethod
    @validate_params({"sample_weight": SAMPLE_WEIGHT}, prefer_skip_nested_validation=True)
    def compute_validated(cls, *arrays, sample_weight=None, **params):
        """Return the measure of rows that the caller has already validated.

        ``cls.from_validated(*arrays, sample_weight=sample_weight, **params).compute()``: the
        value of one batch of rows, as the in-memory metric functions compute it. A class
        overrides it where one batch has a shorter path to the same value than the mergeable
        state (no state is kept). The arrays are not checked, not copied and not modified.

        Parameters
        ----------
        *arrays : ndarray
            The validated arrays, as :meth:`from_validated` takes them.
        sample_weight : ndarray of shape (n,) or None, default=None
            Validated non-negative float64 weights.
        **params : dict
            The constructor's arguments.

        Returns
        -------
        float or object
            The measure.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.stats import BrierScoreStatistics
        >>> y, p = np.array([0.0, 1.0, 1.0]), np.array([0.2, 0.6, 0.9])
        >>> round(BrierScoreStatistics.compute_validated(y, p), 6)
        0.07
        """
        return cls.from_validated(*arrays, sample_weight=sample_weight, **params).compute()

    # -- public protocol -------------------------------------------------------------------
    @property
    def stats_(self):
        """The statistics as a dict of arrays (created empty on first access)."""
        if "_stats" not in self.__dict__:
            self._stats = self._empty()
            self.n_updates_ = 0
        return self._stats

    def get_params(self):
        """Return the parameters that define the statistics, as a dict.

        Returns
        -------
        dict
            Constructor keyword arguments.
        """
        return {name: getattr(self, name) for name in self._param_names}

    @validate_params({"sample_weight": SAMPLE_WEIGHT}, prefer_skip_nested_validation=True)
    def update(self, *arrays, sample_weight=None):
        """Add the statistics of one chunk of rows; return ``self``.

        An empty chunk (zero rows) leaves the statistics unchanged, and rows of weight zero
        contribute nothing (a chunk whose weights are all zero is allowed).

        Parameters
        ----------
        *arrays : array-like
            The chunk's inputs, in the order of the measure's in-memory function (for example
            ``y_true, y_prob``).
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights of the chunk's rows.

        Returns
        -------
        BaseStatistics
            The updated object.
        """
        chunk = self._chunk(*arrays, sample_weight=sample_weight)
        self._stats = self._combine(self.stats_, chunk)
        self.n_updates_ += 1
        return self

    def _check_mergeable(self, other):
        if type(other) is not type(self):
            raise TypeError(
                f"Cannot merge {type(self).__name__} with {type(other).__name__}; "
                "both must be the same kind of statistics."
            )
        if not params_equal(self.get_params(), other.get_params()):
            raise ValueError(
                f"Cannot merge {type(self).__name__} objects built with different parameters: "
                f"{self.get_params()} vs {other.get_params()}."
            )

    @validate_params({"other": [HasMethods(["merge", "get_state"])]}, prefer_skip_nested_validation=True)
    def merge(self, other):
        """Return a new object holding the statistics of ``self`` and ``other`` combined.

        Neither operand is modified. Merging is associative and commutative up to round-off,
        and an object that was never updated is its identity.

        Parameters
        ----------
        other : BaseStatistics
            An object of the same class built with the same parameters.

        Returns
        -------
        BaseStatistics
            A new object.
        """
        return self._merged([self, other])

    def _merged(self, objects):
        """A new object holding the statistics of ``objects`` (this class, these parameters)."""
        for other in objects:
            self._check_mergeable(other)
        out = type(self)(**self.get_params())
        if len(objects) == 2:
            out._stats = self._combine(objects[0].stats_, objects[1].stats_)
        else:
            out._stats = self._combine_many([o.stats_ for o in objects])
        out.n_updates_ = sum(o.n_updates_ for o in objects)
        return out

    def __add__(self, other):
        if isinstance(other, numbers.Number) and other == 0:
            return self.merge(type(self)(**self.get_params()))
        return self.merge(other)

    def __radd__(self, other):  # so that ``sum(list_of_stats)`` works
        return self.__add__(other)

    def compute(self):
        """Return the measure computed from the accumulated statistics.

        Returns
        -------
        float or object
            The measure (a float for every scalar measure).
        """
        return self._compute()

    @validate_params({"copy": ["boolean"]}, prefer_skip_nested_validation=True)
    def get_state(self, *, copy=True):
        """Return a versioned, pickle-free state: a dict of numpy arrays and plain scalars.

        Parameters
        ----------
        copy : bool, default=True
            Copy the arrays. ``copy=False`` hands out the object's own arrays, for a caller that
            discards the object (for example a worker that ships the state and forgets it).

        Returns
        -------
        dict
            Keys ``"kind"``, ``"state_version"``, ``"format_version"``, ``"params"`` (plain
            Python values), ``"n_updates"`` and ``"arrays"`` (name -> ndarray).
        """
        stats = self.stats_
        return {
            "kind": self._kind(),
            "format_version": STATE_FORMAT_VERSION,
            "state_version": self._state_version,
            "params": {k: plain_value(v) for k, v in self.get_params().items()},
            "n_updates": int(self.n_updates_),
            "arrays": {k: np.array(v, copy=True if copy else None) for k, v in stats.items()},
        }

    @classmethod
    @validate_params({"state": [dict], "copy": ["boolean"]}, prefer_skip_nested_validation=True)
    def from_state(cls, state, *, copy=True):
        """Rebuild an object from :meth:`get_state` output (any subclass's, via the base).

        The parameters the state carries are checked as for any construction.

        Parameters
        ----------
        state : dict
            The output of :meth:`get_state`.
        copy : bool, default=True
            Copy the arrays. ``copy=False`` lets the object read the state's arrays (copied only
            where the dtype must change), for a caller that never reuses the state.

        Returns
        -------
        BaseStatistics
            A new object of the class named in the state.
        """
        if not isinstance(state, dict) or "kind" not in state or "arrays" not in state:
            raise ValueError(f"state must be a dict made by get_state(); got {type(state).__name__}.")
        target = _REGISTRY.get(state["kind"])
        if target is None:
            raise ValueError(f"Unknown statistics kind {state['kind']!r}.")
        if cls is not BaseStatistics and target is not cls:
            raise ValueError(f"state holds {state['kind']!r}, not {cls._kind()!r}.")
        if (
            state.get("format_version") != STATE_FORMAT_VERSION
            or state.get("state_version") != target._state_version
        ):
            raise ValueError(
                f"state of {state['kind']!r} has format {state.get('format_version')}, version "
                f"{state.get('state_version')}; this skcal reads format {STATE_FORMAT_VERSION}, "
                f"version {target._state_version}."
            )
        if hasattr(target, "_from_state"):  # a state that nests another (PoissonBootstrap)
            return target._from_state(state, copy)
        obj = target(**state["params"])
        obj._stats = obj._checked_sums(state["arrays"], copy)
        obj.n_updates_ = int(state.get("n_updates", 0))
        return obj

    @classmethod
    @validate_params(
        {"sums": [dict], "n_updates": NON_NEGATIVE_INT},
        prefer_skip_nested_validation=True,
    )
    def from_sums(cls, sums, *, n_updates=1, **params):
        """Build a statistics object that holds the given sums: the documented way to make one from sums.

        For code that forms a measure's sums itself (per-bin sums kept by a monitor, the
        replicate statistics of a block summed on a grid) and wants the class's own formula of
        the measure: ``sums`` must hold exactly the arrays of the class's layout, the keys of
        ``cls(**params).get_state()["arrays"]`` with their shapes (a class whose statistics grow
        with the rows, such as :class:`CutoffStatistics`, checks the keys only). They are
        converted to the layout's dtypes and not copied where they have them.

        Parameters
        ----------
        sums : dict of array-like
            The statistics, by name.
        n_updates : int, default=1
            The count of updates the object reports (``n_updates_``).
        **params : dict
            The constructor's arguments.

        Returns
        -------
        BaseStatistics
            A new object holding ``sums``.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.stats import BinnedStatistics
        >>> st = BinnedStatistics.from_sums(
        ...     {"count": np.array([2, 2]), "weight": np.array([2.0, 2.0]), "sum_wp": np.array([0.3, 1.8]),
        ...      "sum_wy": np.array([1.0, 2.0]), "sum_w2": np.array([2.0, 2.0])}, n_bins=2)
        >>> round(st.compute(), 6)
        0.225
        """
        obj = cls(**params)
        obj._stats = obj._checked_sums(sums, copy=False)
        obj.n_updates_ = int(n_updates)
        return obj

    def _checked_sums(self, sums, copy):
        """``sums`` in this object's layout (keys, shapes unless ``_variable_shape``, dtypes)."""
        empty = self._empty()
        arrays = {k: np.asarray(v) for k, v in sums.items()}
        if set(arrays) != set(empty):
            raise ValueError(
                f"the arrays {sorted(arrays)} do not match the layout {sorted(empty)} of {self!r}."
            )
        for k in () if self._variable_shape else empty:
            if arrays[k].shape != np.shape(empty[k]):
                shape = np.shape(empty[k])
                raise ValueError(f"array {k!r} has shape {arrays[k].shape}; {self!r} holds {shape}.")
        mode = True if copy else None  # None: copy only where the dtype must change
        return {k: np.array(arrays[k], dtype=np.asarray(empty[k]).dtype, copy=mode) for k in empty}

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    # -- bootstrap replicates (see skcal.stats.PoissonBootstrap) ----------------------------
    def _replicate_plan(self, *validated, index=None):
        """The per-row work of a chunk for its bootstrap replicates (:mod:`skcal.stats._replicate`).

        ``validated`` is what ``_check_chunk`` returns (weights last) and ``index`` the rows'
        global indices. The default repeats the rows of each replicate and calls ``_sums``
        (:class:`~skcal.stats._replicate.LoopPlan`): exact for any class of fixed-size
        statistics, one replicate at a time. Classes whose statistic is a weighted histogram
        override it with a plan that adds a whole block of replicates at once.
        """
        return LoopPlan(self, validated)

    # the grid form (skcal.stats._grid): what a template needs of the shared grid of units; a
    # class with one also defines ``_grid_statistics(units, column)`` (its replicate statistics
    # from the units' sums) and, optionally, ``_grid_dense(y, p)`` and ``_grid_bin_ids(values)``
    def _grid_cells(self):
        """The cells of the dyadic grid its replicate statistics are summed on (None: none)."""
        return None

    def _grid_fine_starts(self):
        """The fine cells that start a unit of their own (a boolean mask, or None)."""
        return None

    def _replicate_empty(self, n_replicates):
        """The statistics of ``n_replicates`` empty replicates (a leading replicate axis)."""
        return stack_empty(self._empty(), n_replicates)

    def _replicate_combine(self, a, b):
        """Combine two replicate statistics dicts (default: add key by key)."""
        return {k: a[k] + b[k] for k in a}

    def _replicate_compute(self, stats):
        """The measure of every replicate: an array with one entry per replicate.

        The default rebuilds an object per replicate and calls ``_compute``; classes override it
        with a vectorised form where one exists.
        """
        n = next(iter(stats.values())).shape[0]
        out = []
        for r in range(n):
            obj = type(self)(**self.get_params())
            obj._stats = {k: v[r] for k, v in stats.items()}
            obj.n_updates_ = 1
            try:
                out.append(obj._compute())
            except ValueError:  # a replicate with no row of positive weight: undefined
                out.append(None)
        shaped = [np.shape(v) for v in out if v is not None]
        shape = shaped[0] if shaped else ()
        if shape == ():
            return np.array([np.nan if v is None else float(v) for v in out])
        return np.stack([np.full(shape, np.nan) if v is None else np.asarray(v, dtype=float) for v in out])


class BinaryStatistics(BaseStatistics):
    """Base class of the statistics of binary labels and positive-class probabilities.

    ``update(y_true, y_prob, sample_weight)`` takes a chunk as the binary measures take their
    inputs (validated by :func:`check_binary_chunk`, with the object's ``pos_label``), and
    :meth:`from_validated` the arrays :func:`skcal._validation.check_binary_probabilities`
    returns. Subclasses implement ``_empty``, ``_sums(y, p, w)`` and ``_compute``.
    """

    def _check_chunk(self, y_true, y_prob, sample_weight=None):
        return check_binary_chunk(y_true, y_prob, sample_weight, self.pos_label)

    @classmethod
    @validate_params(VALIDATED_ROWS, prefer_skip_nested_validation=True)
    @fill(**VALIDATED_ROWS_DOCS)
    def from_validated(cls, y, p, sample_weight=None, **params):
        """Build the statistics of validated rows (the constructor the in-memory measures use).

        Equals ``cls(**params).update(y_true, y_prob, sample_weight)`` on the raw inputs; the
        arrays are not checked again (see :meth:`BaseStatistics.from_validated`).

        Parameters
        ----------
        {validated_rows}
        **params : dict
            The constructor's arguments.

        Returns
        -------
        BinaryStatistics
            The statistics of the rows.
        """
        return super().from_validated(y, p, sample_weight=sample_weight, **params)

    @validate_params(
        {"y_true": ["array-like"], "y_prob": ["array-like"], "sample_weight": SAMPLE_WEIGHT},
        prefer_skip_nested_validation=True,
    )
    def update(self, y_true, y_prob, sample_weight=None):
        """Add a chunk of labels and positive-class probabilities; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Binary labels (``n`` may be 0); ``{0, 1}``, ``{-1, 1}`` or booleans unless the object
            has a ``pos_label``.
        y_prob : array-like of shape (n,) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights (a chunk whose weights are all zero is allowed).

        Returns
        -------
        BinaryStatistics
            The updated object.
        """
        return super().update(y_true, y_prob, sample_weight=sample_weight)


def same_statistics(a, b):
    """Whether two statistics objects hold the same statistics of the same rows.

    True when they are of one class and their parameters are equal except those that only
    ``compute`` reads (the class's ``_compute_only_params``, such as ``measure``).

    Parameters
    ----------
    a, b : BaseStatistics
        Two statistics objects (templates).

    Returns
    -------
    bool
        Whether ``a``'s statistics are ``b``'s.

    Examples
    --------
    >>> from skcal.stats import BinnedStatistics
    >>> same_statistics(BinnedStatistics(n_bins=5), BinnedStatistics(n_bins=5, measure="mce"))
    True
    >>> same_statistics(BinnedStatistics(n_bins=5), BinnedStatistics(n_bins=6))
    False
    """
    if type(a) is not type(b):
        return False
    skip = set(type(a)._compute_only_params)
    pa = {k: v for k, v in a.get_params().items() if k not in skip}
    pb = {k: v for k, v in b.get_params().items() if k not in skip}
    return params_equal(pa, pb)


def params_equal(a, b):
    """Whether two parameter dicts are equal (arrays compared by value).

    Parameters
    ----------
    a, b : dict
        ``get_params()`` of two statistics objects.

    Returns
    -------
    bool
        True when both have the same keys and equal values.

    Examples
    --------
    >>> import numpy as np
    >>> params_equal({"edges": np.array([0.0, 1.0])}, {"edges": np.array([0.0, 1.0])})
    True
    """
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(np.asarray(x), np.asarray(y)):
                return False
        elif x != y:
            return False
    return True


def plain_value(value):
    """A parameter as a plain Python value (lists for arrays, Python scalars for numpy ones).

    Parameters
    ----------
    value : object
        A parameter.

    Returns
    -------
    object
        Its plain form (what a state's ``params`` hold).

    Examples
    --------
    >>> import numpy as np
    >>> plain_value(np.array([1, 2])), plain_value(np.float64(0.5))
    ([1, 2], 0.5)
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [plain_value(v) for v in value]
    return value


@validate_params({"state": [dict], "copy": ["boolean"]}, prefer_skip_nested_validation=True)
def from_state(state, *, copy=True):
    """Rebuild any skcal statistics object from its :meth:`~BaseStatistics.get_state` dict.

    Parameters
    ----------
    state : dict
        The output of :meth:`BaseStatistics.get_state`.
    copy : bool, default=True
        Copy the arrays (see :meth:`BaseStatistics.from_state`).

    Returns
    -------
    BaseStatistics
        A new object of the class named in the state.

    Examples
    --------
    >>> from skcal.stats import BrierScoreStatistics, from_state
    >>> st = BrierScoreStatistics().update([0, 1], [0.2, 0.6])
    >>> round(from_state(st.get_state()).compute(), 6)
    0.1
    """
    return BaseStatistics.from_state(state, copy=copy)


@validate_params({"objects": ["array-like"], "split_every": SPLIT_EVERY}, prefer_skip_nested_validation=True)
def merge_all(objects, split_every=8):
    """Merge statistics objects as a balanced tree (``split_every`` at a time).

    The result equals ``objects[0] + objects[1] + ...`` up to round-off; the tree keeps the
    depth (and the accumulated round-off) logarithmic in the number of objects. Each group of
    ``split_every`` objects is merged in one step (the exact cutoff statistics merge a group's
    sorted runs with one sort).

    Parameters
    ----------
    objects : sequence of BaseStatistics
        Objects of one class built with the same parameters (at least one).
    split_every : int, default=8
        Fan-in of the tree (at least 2).

    Returns
    -------
    BaseStatistics
        A new object.

    Examples
    --------
    >>> from skcal.stats import AccuracyStatistics, merge_all
    >>> parts = [AccuracyStatistics().update([1], [p]) for p in (0.9, 0.2, 0.7)]
    >>> round(merge_all(parts).compute(), 6)
    0.666667
    """
    objs = list(objects)
    if not objs:
        raise ValueError("merge_all needs at least one statistics object.")
    bad = [type(o).__name__ for o in objs if not isinstance(o, BaseStatistics)]
    if bad:
        raise TypeError(f"merge_all merges skcal statistics objects; got {bad[0]}.")
    k = int(split_every)
    if len(objs) == 1:
        return objs[0].merge(type(objs[0])(**objs[0].get_params()))
    while len(objs) > 1:
        objs = [
            objs[i] if i + 1 == len(objs) else objs[i]._merged(objs[i : i + k])
            for i in range(0, len(objs), k)
        ]
    return objs[0]


@validate_params({"kind": [str]}, prefer_skip_nested_validation=True)
def statistics_class(kind):
    """Return the statistics class that a state's ``"kind"`` names.

    Parameters
    ----------
    kind : str
        A state's ``"kind"`` (``"skcal.<ClassName>"``).

    Returns
    -------
    type
        The :class:`BaseStatistics` subclass.

    Examples
    --------
    >>> statistics_class("skcal.BrierScoreStatistics").__name__
    'BrierScoreStatistics'
    """
    target = _REGISTRY.get(kind)
    if target is None:
        raise ValueError(f"Unknown statistics kind {kind!r}.")
    return target


@validate_params(
    {"sample_weight": SAMPLE_WEIGHT, "n_samples": NON_NEGATIVE_INT}, prefer_skip_nested_validation=True
)
def effective_sample_size(sample_weight, n_samples):
    """Return Kish's effective sample size ``(sum w)^2 / sum w^2`` (``n_samples`` without weights).

    Rows of weight zero count as dropped rows; weights that are all zero give 0. The grid rule
    of SCDL and the degree rule of the Chebyshev estimators use it.

    Parameters
    ----------
    sample_weight : ndarray of shape (n,) or None
        Validated non-negative weights.
    n_samples : int
        The number of rows.

    Returns
    -------
    float
        The effective sample size.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import effective_sample_size
    >>> effective_sample_size(None, 4), effective_sample_size(np.array([1.0, 1.0, 0.0, 0.0]), 4)
    (4.0, 2.0)
    """
    if sample_weight is None:
        return float(n_samples)
    with np.errstate(over="ignore"):
        sw2 = float(np.dot(sample_weight, sample_weight))
    return kish_size(float(sample_weight.sum()), sw2)


def kish_size(sum_w, sum_w2):
    """``sum_w^2 / sum_w2`` (0 when ``sum_w2`` is 0), the same number wherever it is computed.

    Squared as ``sum_w * sum_w``, not ``sum_w ** 2``: C's ``pow`` may differ from the product
    in the last bit, and the grid rules compare the size with powers of 4, so the functions and
    the statistics objects must agree bit for bit. Weights whose squares overflow raise a
    ``ValueError`` (the size is invariant to the weights' scale: rescale them).

    Parameters
    ----------
    sum_w, sum_w2 : float
        The sums of the weights and of their squares.

    Returns
    -------
    float
        ``sum_w * sum_w / sum_w2``.

    Examples
    --------
    >>> kish_size(3.0, 5.0)
    1.8
    """
    sum_w, sum_w2 = float(sum_w), float(sum_w2)
    if sum_w2 <= 0:
        return 0.0
    size = sum_w * sum_w / sum_w2
    if not math.isfinite(size):
        raise ValueError(
            f"sample_weight is too large: the sum of the squared weights is {sum_w2!r}, so the "
            "effective sample size (sum w)^2 / sum w^2 is undefined in float64. The measures do "
            "not depend on the weights' scale: divide the weights by their maximum."
        )
    return size


# ---------------------------------------------------------------------------------------------
# chunk validation shared by the statistics objects
# ---------------------------------------------------------------------------------------------
def check_binary_chunk(y_true, y_prob, sample_weight, pos_label):
    """Validate one chunk of binary rows for a statistics object, or return ``None`` if it is empty.

    As :func:`skcal._validation.check_binary_probabilities` validates a metric's inputs, except
    that a chunk may hold no rows (it adds nothing) and its weights may sum to zero.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Positive-class probabilities, or ``predict_proba`` output.
    sample_weight : array-like of shape (n,) or None
        Non-negative weights.
    pos_label : int, float, bool, str or None
        The positive class.

    Returns
    -------
    tuple of (ndarray, ndarray, ndarray or None) or None
        ``(y, p, w)`` as :func:`~skcal._validation.check_binary_probabilities` returns them, or
        ``None`` for a chunk of no rows.
    """
    if count_rows(y_prob) == 0 and count_rows(y_true) == 0:
        return None
    return check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, allow_zero_total=True
    )


def count_rows(x):
    """Number of rows of an array-like (0 for an empty one), without converting it to float.

    The statistics objects use it to recognise a chunk of no rows before validating it.

    Parameters
    ----------
    x : array-like
        An array, a list or a pandas object.

    Returns
    -------
    int
        ``x.shape[0]``, or ``len(x)``.

    Examples
    --------
    >>> count_rows([[1, 2], [3, 4]]), count_rows([])
    (2, 0)
    """
    if hasattr(x, "shape") and len(getattr(x, "shape", ())) > 0:
        return int(x.shape[0])
    return len(x)
