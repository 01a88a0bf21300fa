"""The protocol every mergeable calibration statistics object follows.

A statistics object holds the additive sufficient statistics of one measure. ``update`` adds
a chunk of rows, ``merge`` (and ``+``) combines two objects built with the same parameters,
``compute`` returns the measure, and ``get_state`` / ``from_state`` turn the object into a
versioned dict of numpy arrays and plain scalars (no pickle), so that states cross processes,
machines and library versions.

Merging adds statistics, never per-chunk metric values: a mean of per-chunk means is wrong
when chunks differ in size, a sum of sums is not.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["BaseStatistics", "from_state", "merge_all", "STATE_FORMAT_VERSION"]

#: Version of the dict layout produced by :meth:`BaseStatistics.get_state`.
STATE_FORMAT_VERSION = 1

_REGISTRY: dict[str, type] = {}


class BaseStatistics:
    """Additive sufficient statistics of a calibration measure (base class).

    Subclasses declare ``_param_names`` (the constructor's keyword arguments, which must match
    for two objects to merge), implement ``_empty()`` (the identity: a dict of zero arrays),
    ``_chunk(*arrays, sample_weight)`` (the statistics of one validated chunk, a dict with the
    same keys and shapes) and ``_compute()``. A subclass whose statistics are not simply added
    overrides ``_combine(a, b)``; one whose statistics grow (for example sorted values)
    overrides it too.

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded into this object (merges add them up).
    """

    _param_names: tuple[str, ...] = ()
    #: Bump when the meaning or layout of the arrays changes; ``from_state`` refuses others.
    _state_version: int = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls._kind()] = cls

    @classmethod
    def _kind(cls):
        return f"skcal.{cls.__name__}"

    # -- to implement ----------------------------------------------------------------------
    def _empty(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _chunk(self, *arrays, sample_weight=None):  # pragma: no cover - abstract
        raise NotImplementedError

    def _compute(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _combine(self, a, b):
        """Combine two statistics dicts (default: add key by key)."""
        return {k: a[k] + b[k] for k in a}

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
        if not _params_equal(self.get_params(), other.get_params()):
            raise ValueError(
                f"Cannot merge {type(self).__name__} objects built with different parameters: "
                f"{self.get_params()} vs {other.get_params()}."
            )

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
        self._check_mergeable(other)
        out = type(self)(**self.get_params())
        out._stats = self._combine(self.stats_, other.stats_)
        out.n_updates_ = self.n_updates_ + other.n_updates_
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

    def get_state(self):
        """Return a versioned, pickle-free state: a dict of numpy arrays and plain scalars.

        Returns
        -------
        dict
            Keys ``"kind"``, ``"state_version"``, ``"format_version"``, ``"params"`` (plain
            Python values), ``"n_updates"`` and ``"arrays"`` (name -> ndarray copy).
        """
        return self._get_state(copy=True)

    def _get_state(self, copy=True):
        # copy=False: the arrays are the object's own (for a caller that discards the object)
        stats = self.stats_
        return {
            "kind": self._kind(),
            "format_version": STATE_FORMAT_VERSION,
            "state_version": self._state_version,
            "params": {k: _plain(v) for k, v in self.get_params().items()},
            "n_updates": int(self.n_updates_),
            "arrays": {k: np.array(v, copy=True if copy else None) for k, v in stats.items()},
        }

    @classmethod
    def from_state(cls, state):
        """Rebuild an object from :meth:`get_state` output (any subclass's, via the base).

        Parameters
        ----------
        state : dict
            The output of :meth:`get_state`.

        Returns
        -------
        BaseStatistics
            A new object of the class named in the state.
        """
        return cls._from_state(state, copy=True)

    @classmethod
    def _from_state(cls, state, copy=True):
        # copy=False: the object reads the state's arrays (for a caller that never reuses them)
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
        obj = target(**state["params"])
        empty = obj._empty()
        arrays = {k: np.asarray(v) for k, v in state["arrays"].items()}
        if set(arrays) != set(empty):
            raise ValueError(
                f"state arrays {sorted(arrays)} do not match {sorted(empty)} for {state['kind']!r}."
            )
        mode = True if copy else None  # None: copy only where the dtype must change
        obj._stats = {k: np.array(arrays[k], dtype=np.asarray(empty[k]).dtype, copy=mode) for k in empty}
        obj.n_updates_ = int(state.get("n_updates", 0))
        return obj

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


def _params_equal(a, b):
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


def _plain(value):
    """Parameters as plain Python values (lists for arrays, Python scalars for numpy ones)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def from_state(state):
    """Rebuild any skcal statistics object from its :meth:`~BaseStatistics.get_state` dict.

    Parameters
    ----------
    state : dict
        The output of :meth:`BaseStatistics.get_state`.

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
    return BaseStatistics.from_state(state)


def merge_all(objects, split_every=8):
    """Merge statistics objects as a balanced tree (``split_every`` at a time).

    The result equals ``objects[0] + objects[1] + ...`` up to round-off; the tree keeps the
    depth (and the accumulated round-off) logarithmic in the number of objects.

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
    if int(split_every) < 2:
        raise ValueError(f"split_every must be at least 2; got {split_every!r}.")
    k = int(split_every)
    if len(objs) == 1:
        return objs[0].merge(type(objs[0])(**objs[0].get_params()))
    while len(objs) > 1:
        nxt = []
        for i in range(0, len(objs), k):
            group = objs[i : i + k]
            acc = group[0]
            for o in group[1:]:
                acc = acc.merge(o)
            nxt.append(acc)
        objs = nxt
    return objs[0]


# ---------------------------------------------------------------------------------------------
# chunk validation shared by the statistics objects
# ---------------------------------------------------------------------------------------------
def _n_rows(x):
    """Number of rows of an array-like (0 for an empty one), without converting it to float."""
    if hasattr(x, "shape") and len(getattr(x, "shape", ())) > 0:
        return int(x.shape[0])
    return len(x)


def _chunk_weight(sample_weight, n_rows):
    """Validate a chunk's weights: finite, non-negative, one per row; all zeros allowed.

    Returns ``None`` for unit weights.
    """
    if sample_weight is None:
        return None
    if hasattr(sample_weight, "to_numpy"):
        sample_weight = sample_weight.to_numpy()
    raw = np.asarray(sample_weight)
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numeric; got dtype {raw.dtype}.")
    w = np.array(raw, dtype=np.float64, copy=True)
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ValueError(f"sample_weight must have shape ({n_rows},) (one per row); got {w.shape}.")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinity; expected finite values.")
    if (w < 0).any():
        raise ValueError(f"sample_weight must be non-negative; got a minimum of {w.min():.6g}.")
    return w


def _check_n_bins(n_bins):
    """``n_bins`` as an int, or a ValueError: an integer from 1 to ``2**24`` (the shared bound)."""
    from skcal._constraints import MAX_BINS_LIMIT

    integer = isinstance(n_bins, (int, np.integer)) and not isinstance(n_bins, bool)
    if not integer or not 1 <= n_bins <= MAX_BINS_LIMIT:
        raise ValueError(f"n_bins must be an integer in [1, 2**24]; got {n_bins!r}.")
    return int(n_bins)
