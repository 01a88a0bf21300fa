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

__all__ = ["BaseStatistics", "from_state", "STATE_FORMAT_VERSION"]

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
        """Return the parameters that define the statistics, as a dict."""
        return {name: getattr(self, name) for name in self._param_names}

    def update(self, *arrays, sample_weight=None):
        """Add the statistics of one chunk of rows; return ``self``.

        An empty chunk (zero rows) leaves the statistics unchanged.
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
        """Return the measure computed from the accumulated statistics."""
        return self._compute()

    def get_state(self):
        """Return a versioned, pickle-free state: a dict of numpy arrays and plain scalars.

        Returns
        -------
        state : dict
            Keys ``"kind"``, ``"state_version"``, ``"format_version"``, ``"params"`` (plain
            Python values), ``"n_updates"`` and ``"arrays"`` (name -> ndarray copy).
        """
        stats = self.stats_
        return {
            "kind": self._kind(),
            "format_version": STATE_FORMAT_VERSION,
            "state_version": self._state_version,
            "params": dict(self.get_params()),
            "n_updates": int(self.n_updates_),
            "arrays": {k: np.array(v, copy=True) for k, v in stats.items()},
        }

    @classmethod
    def from_state(cls, state):
        """Rebuild an object from :meth:`get_state` output (any subclass's, via the base)."""
        if not isinstance(state, dict) or "kind" not in state or "arrays" not in state:
            raise ValueError(f"state must be a dict made by get_state(); got {type(state).__name__}.")
        target = _REGISTRY.get(state["kind"])
        if target is None:
            raise ValueError(f"Unknown statistics kind {state['kind']!r}.")
        if cls is not BaseStatistics and target is not cls:
            raise ValueError(f"state holds {state['kind']!r}, not {cls._kind()!r}.")
        if state.get("format_version") != STATE_FORMAT_VERSION or state.get(
            "state_version"
        ) != target._state_version:
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
        obj._stats = {k: np.array(arrays[k], dtype=np.asarray(empty[k]).dtype, copy=True) for k in empty}
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


def from_state(state):
    """Rebuild any skcal statistics object from its :meth:`~BaseStatistics.get_state` dict."""
    return BaseStatistics.from_state(state)
