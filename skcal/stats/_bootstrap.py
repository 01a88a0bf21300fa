"""The Poisson bootstrap of any statistics object: replicate statistics that merge like the statistics.

:class:`PoissonBootstrap` wraps a statistics *template* (any object of :mod:`skcal.stats`) and
holds ``n_replicates`` copies of its statistics, stacked along a leading replicate axis. In
replicate ``r`` each row counts ``W[r, i] ~ Poisson(1)`` times: that is the Poisson bootstrap
(Hanley and MacGibbon 2006; Chamandy et al. 2012), whose resamples need no knowledge of ``n``
and whose replicate statistics of disjoint chunks add, so the same replicates come out of one
pass in memory, of chunks read one after the other, and of partitions merged on a cluster.

The weights come from a **counter-based stream**: ``W[r, i]`` is a fixed function of
``(seed, r, i)``, where ``i`` is the row's *global* index, so any chunking of the rows, in any
order, draws the same weights. The function is SplitMix64 (Steele, Lea and Flood 2014), a
64-bit hash that passes BigCrush: replicate ``r`` gets the key ``k_r``, the ``(r + 1)``-th
SplitMix64 output from the scrambled seed, and row ``i`` the uniform 64-bit word
``u = mix64(k_r + (i + 1) * 0x9E3779B97F4A7C15)`` (the ``(i + 1)``-th output of the stream
seeded ``k_r``). The weight is ``u`` inverted through the Poisson(1) distribution function:
the number of thresholds ``T_k = floor(2^64 P(X <= k))`` at or below ``u`` (computed once with
40-digit decimal arithmetic, so they are the same on every platform). A table of the top 16 bits
of ``u`` resolves all but 8 of its 65,536 slots; the rest are resolved by a binary search.

Merging and the Dask contract
-----------------------------
Replicate statistics of disjoint rows add (or combine as the template's statistics combine),
so a partitioned computation is:

1. build one template and ``boot = PoissonBootstrap(template, n_replicates=B, seed=s)``;
2. on each partition, ``boot_k = PoissonBootstrap(...same arguments...)`` and
   ``boot_k.update(*arrays, row_offset=o_k)``, where ``o_k`` is the global index of the
   partition's first row (or ``row_index=`` the global index of every row), then ship
   ``boot_k.get_state()``;
3. merge the states (``merge_all`` / ``+``) and call ``compute()``: ``(B,)`` replicate values,
   the same as one ``update`` with all rows.

Replicates can be split as well as rows: ``PoissonBootstrap(template, n_replicates=b,
first_replicate=r0, seed=s)`` holds replicates ``r0 .. r0 + b - 1`` of the same stream, so the
replicates of a measure with a large state (smECE's fine grid: 8 MiB per replicate) can be
computed in blocks.
"""

from __future__ import annotations

import decimal
import numbers

import numpy as np

from skcal._compat import validate_params
from skcal._compiled import compiled
from skcal._constraints import MAX_REPLICATES, NON_NEGATIVE_INT, SAMPLE_WEIGHT, StrictInterval
from skcal.stats._base import (
    STATE_FORMAT_VERSION,
    BaseStatistics,
    params_equal,
    plain_value,
    same_statistics,
    statistics_class,
)
from skcal.stats._replicate import tile_rows

__all__ = [
    "POISSON_THRESHOLDS",
    "PoissonBootstrap",
    "PreparedRows",
    "poisson_weights",
    "poisson_weights_into",
    "update_together",
    "replicate_keys",
]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S48 = (np.uint64(s) for s in (30, 27, 31, 48))
_MASK64 = (1 << 64) - 1


def _poisson_thresholds():
    """``T_k = floor(2^64 P(X <= k))`` for Poisson(1), while below ``2^64`` (40-digit decimals)."""
    ctx = decimal.Context(prec=40)
    e_inv = ctx.exp(decimal.Decimal(-1))
    out, term, cdf, k = [], e_inv, e_inv, 0
    two64 = decimal.Decimal(2) ** 64
    while True:
        t = int(ctx.multiply(cdf, two64).to_integral_value(rounding=decimal.ROUND_FLOOR))
        if t > _MASK64:
            break
        out.append(t)
        k += 1
        term = ctx.divide(term, k)
        cdf = ctx.add(cdf, term)
        if out[-1] == _MASK64 or k > 64:
            break
    return np.array(out, dtype=np.uint64)


#: The Poisson(1) inversion thresholds: a weight is the number of them at or below ``u``.
POISSON_THRESHOLDS = _poisson_thresholds()


def _lookup_table():
    lo = np.arange(1 << 16, dtype=np.uint64) << _S48
    hi = lo | np.uint64((1 << 48) - 1)
    k_lo = np.searchsorted(POISSON_THRESHOLDS, lo, side="right")
    k_hi = np.searchsorted(POISSON_THRESHOLDS, hi, side="right")
    table = np.full(1 << 16, 255, dtype=np.uint8)
    table[k_lo == k_hi] = k_lo[k_lo == k_hi]
    return table


_TABLE = _lookup_table()


def _mix64(z, tmp):
    """SplitMix64's output function, in place on a uint64 array (``tmp``: scratch of its shape)."""
    np.right_shift(z, _S30, out=tmp)
    z ^= tmp
    z *= _M1
    np.right_shift(z, _S27, out=tmp)
    z ^= tmp
    z *= _M2
    np.right_shift(z, _S31, out=tmp)
    z ^= tmp
    return z


def _check_seed(seed):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= _MASK64:
        raise ValueError(f"seed must be an integer in [0, 2**64 - 1]; got {seed!r}.")
    return int(seed)


def replicate_keys(seed, replicates):
    """The 64-bit key of each replicate's weight stream.

    Parameters
    ----------
    seed : int
        The bootstrap's seed, in ``[0, 2**64 - 1]``.
    replicates : array-like of int
        Global replicate indices (non-negative).

    Returns
    -------
    ndarray of uint64
        ``k_r``, the ``(r + 1)``-th SplitMix64 output from the scrambled seed.

    Examples
    --------
    >>> replicate_keys(0, [0, 1]).dtype
    dtype('uint64')
    """
    seed = _check_seed(seed)
    r = np.asarray(replicates, dtype=np.int64)
    if r.size and r.min() < 0:
        raise ValueError("replicate indices must be non-negative.")
    base = np.array([seed], dtype=np.uint64)
    with np.errstate(over="ignore"):
        base += _GAMMA
        _mix64(base, np.empty_like(base))
        z = (r.astype(np.uint64) + np.uint64(1)) * _GAMMA + base[0]
    return _mix64(z, np.empty_like(z))


#: From this many weights (replicates x rows) on, the compiled stream is used when numba is
#: installed (:func:`skcal._replicate_kernel.poisson_weights`: one fused pass where numpy makes ten).
_KERNEL_MIN_WEIGHTS = 1 << 16


def _weights_from_keys(keys, rows, use_kernel=None):
    """Poisson(1) weights, uint8 of shape ``(len(keys), len(rows))``.

    The compiled stream (with numba, from :data:`_KERNEL_MIN_WEIGHTS` weights on, or when
    ``use_kernel`` is True) and numpy's give the same weights, bit for bit.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if use_kernel is None:
        use_kernel = keys.shape[0] * rows.shape[0] >= _KERNEL_MIN_WEIGHTS
    kernel = compiled("replicate") if use_kernel else None
    if kernel is not None:
        return kernel.poisson_weights(keys, np.ascontiguousarray(rows), _TABLE, POISSON_THRESHOLDS)
    rows = rows.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (rows + np.uint64(1))[None, :] * _GAMMA + keys[:, None]
    tmp = np.empty_like(z)
    _mix64(z, tmp)
    np.right_shift(z, _S48, out=tmp)
    k = _TABLE[tmp]
    amb = k == 255
    if amb.any():
        k[amb] = np.searchsorted(POISSON_THRESHOLDS, z[amb], side="right")
    return k


@validate_params(
    {
        "seed": [StrictInterval(numbers.Integral, 0, _MASK64, closed="both")],
        "replicates": ["array-like"],
        "rows": [np.ndarray],
        "out": [np.ndarray],
    },
    prefer_skip_nested_validation=True,
)
def poisson_weights_into(seed, replicates, rows, out):
    """:func:`poisson_weights` of ``rows`` written transposed into ``out``: a row's weights side by side.

    The layout :func:`update_together` gathers fastest (the report draws each block of
    replicates this way, a slice of rows at a time, into one reused array). Compiled with numba
    where installed; numpy transposes the ``(R, n)`` draw.

    Parameters
    ----------
    seed : int
        In ``[0, 2**64 - 1]``.
    replicates : array-like of int
        Global replicate indices (``R`` of them).
    rows : ndarray of int64 of shape (n,)
        Global row indices (non-negative; not checked again).
    out : ndarray of uint8 of shape (n, R)
        Written in place (it may be a strided view of a larger array).

    Returns
    -------
    ndarray
        ``out``, equal to ``poisson_weights(seed, replicates, rows).T``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import poisson_weights, poisson_weights_into
    >>> out = np.empty((5, 3), dtype=np.uint8)
    >>> rows = np.arange(10, 15, dtype=np.int64)
    >>> bool((poisson_weights_into(7, [0, 1, 2], rows, out) == poisson_weights(7, [0, 1, 2], rows).T).all())
    True
    """
    keys = replicate_keys(seed, replicates)
    kernel = compiled("replicate") if keys.shape[0] * rows.shape[0] >= _KERNEL_MIN_WEIGHTS else None
    if kernel is not None:
        kernel.poisson_weights_by_row(
            keys, np.ascontiguousarray(rows, dtype=np.int64), _TABLE, POISSON_THRESHOLDS, out
        )
    else:
        out[...] = _weights_from_keys(keys, rows, use_kernel=False).T
    return out


@validate_params(
    {
        "seed": [StrictInterval(numbers.Integral, 0, _MASK64, closed="both")],
        "replicates": ["array-like"],
        "rows": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def poisson_weights(seed, replicates, rows):
    """The Poisson(1) bootstrap weights of ``rows`` in ``replicates``: a counter-based stream.

    ``W[r, i]`` depends only on ``(seed, r, i)``: the same rows in any chunking and order get
    the same weights (see the module documentation for the stream).

    Parameters
    ----------
    seed : int
        In ``[0, 2**64 - 1]``.
    replicates : array-like of int
        Global replicate indices.
    rows : array-like of int
        Global row indices (non-negative).

    Returns
    -------
    ndarray of uint8 of shape (len(replicates), len(rows))
        The weights (copies of each row in each replicate).

    Examples
    --------
    >>> W = poisson_weights(0, range(3), range(100_000))
    >>> W.shape, round(float(W.mean()), 2), round(float(W.var()), 2)
    ((3, 100000), 1.0, 1.0)
    >>> (poisson_weights(0, [2], [70_000, 5]) == W[2:, [70_000, 5]]).all()
    np.True_
    """
    rows = np.asarray(rows)
    if rows.size and (rows.dtype.kind not in "iu" or rows.min() < 0):
        raise ValueError("rows must be non-negative integers (global row indices).")
    return _weights_from_keys(replicate_keys(seed, replicates), rows.ravel())


class PreparedRows:
    """A chunk validated and planned once for a :class:`PoissonBootstrap` (:meth:`PoissonBootstrap.prepare`).

    Reusable by every bootstrap of the same template (for example several blocks of replicates):
    :meth:`PoissonBootstrap.update` and :func:`update_together` take it instead of the arrays.
    Made by :meth:`PoissonBootstrap.prepare`; a caller that holds the template's replicate plan
    of rows it validated itself (the report) builds it from the plan directly.

    Parameters
    ----------
    template : BaseStatistics
        The template the rows were planned for.
    plan : object or None
        The template's replicate plan of the rows (``None``: a chunk of no rows).
    index : ndarray of int64
        Global index of each row, in the plan's order.

    Attributes
    ----------
    n_rows : int
        Rows of the chunk.
    index : ndarray of int64
        Global index of each row, in the plan's order.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import BinnedStatistics, PoissonBootstrap
    >>> y, p = np.array([0, 1, 1, 0]), np.array([0.2, 0.7, 0.9, 0.4])
    >>> boot = PoissonBootstrap(BinnedStatistics(n_bins=2), n_replicates=3)
    >>> prepared = boot.prepare(y, p)
    >>> prepared.n_rows
    4
    >>> again = PoissonBootstrap(BinnedStatistics(n_bins=2), n_replicates=3).update(y, p)
    >>> bool(np.array_equal(boot.update(prepared).compute(), again.compute()))
    True
    """

    @validate_params(
        {"template": [BaseStatistics], "plan": [object, None], "index": [np.ndarray]},
        prefer_skip_nested_validation=True,
    )
    def __init__(self, template, plan, index):
        self.template = template
        self.plan = plan
        self.index = index
        self.n_rows = int(plan.n_rows) if plan is not None else 0


class PoissonBootstrap(BaseStatistics):
    """Poisson-bootstrap replicates of a statistics object, mergeable like the statistics themselves.

    Holds the statistics of ``n_replicates`` resamples of the rows it is updated with, replicate
    ``r`` counting row ``i`` ``W[r, i] ~ Poisson(1)`` times (the weights of
    :func:`poisson_weights`, keyed by the row's global index: any chunking gives the same
    replicates). ``compute()`` returns the template's measure on every replicate. The replicate
    statistics are exactly those of the resamples with their repeated rows (row weights, when
    given, stay on every copy), which the statistics classes compute for a block of replicates
    at once where their statistic is a weighted histogram (see :mod:`skcal.stats._replicate`).

    Contract for partitioned data: every partition updates its own object (same arguments) with
    ``row_offset`` = the global index of its first row, or ``row_index`` = the global index of
    every row; the states merge (``+``, :func:`~skcal.stats.merge_all`, ``get_state`` /
    :func:`~skcal.stats.from_state`), and ``compute`` of the merged object equals one update
    with all the rows. ``first_replicate`` selects a block of the same stream, so replicates can
    be split across objects as well as rows.

    Parameters
    ----------
    template : BaseStatistics
        An (empty) statistics object whose parameters every replicate uses; it is not modified.
    n_replicates : int, default=200
        Number of replicates (at most ``10**5``).
    first_replicate : int, default=0
        Global index of the first replicate held.
    seed : int, default=0
        Key of the weight stream, in ``[0, 2**64 - 1]``.

    Attributes
    ----------
    stats_ : dict of ndarray
        The template's statistics with a leading axis of ``n_replicates``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    poisson_weights : The weight stream.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import BinnedStatistics, PoissonBootstrap
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < p).astype(int)
    >>> boot = PoissonBootstrap(BinnedStatistics(n_bins=10), n_replicates=50, seed=1)
    >>> values = boot.update(y, p).compute()
    >>> values.shape
    (50,)
    >>> a = PoissonBootstrap(BinnedStatistics(n_bins=10), n_replicates=50, seed=1).update(y[:400], p[:400])
    >>> b = PoissonBootstrap(BinnedStatistics(n_bins=10), n_replicates=50, seed=1).update(
    ...     y[400:], p[400:], row_offset=400)
    >>> bool(np.allclose((a + b).compute(), values, rtol=1e-12))
    True
    """

    _param_names = ("template", "n_replicates", "first_replicate", "seed")
    _parameter_constraints: dict = {
        "template": [BaseStatistics],
        "n_replicates": [StrictInterval(numbers.Integral, 1, MAX_REPLICATES, closed="both")],
        "first_replicate": [StrictInterval(numbers.Integral, 0, 1 << 62, closed="both")],
        "seed": [StrictInterval(numbers.Integral, 0, _MASK64, closed="both")],
    }

    def __init__(self, template, *, n_replicates=200, first_replicate=0, seed=0):
        if isinstance(template, PoissonBootstrap):
            raise ValueError("template must be a statistics object, not a PoissonBootstrap.")
        self.template = template
        self.n_replicates = int(n_replicates)
        self.first_replicate = int(first_replicate)
        self.seed = int(seed)
        self._keys = replicate_keys(self.seed, np.arange(self.n_replicates) + self.first_replicate)

    @classmethod
    def _kind(cls):
        return "skcal.PoissonBootstrap"

    # -- the protocol ----------------------------------------------------------------------
    def _empty(self):
        return self.template._replicate_empty(self.n_replicates)

    def _check_chunk(self, *arrays, sample_weight=None):
        return self.template._check_chunk(*arrays, sample_weight=sample_weight)

    def _combine(self, a, b):
        return self.template._replicate_combine(a, b)

    def _compute(self):
        return self.template._replicate_compute(self.stats_)

    @classmethod
    @validate_params({"sample_weight": SAMPLE_WEIGHT}, prefer_skip_nested_validation=True)
    def from_validated(cls, *arrays, sample_weight=None, **params):
        """Not available: build the object and call :meth:`update` (the weights need row indices)."""
        raise NotImplementedError("PoissonBootstrap is built with its constructor and update().")

    def _check_mergeable(self, other):
        if type(other) is not type(self):
            raise TypeError(f"Cannot merge PoissonBootstrap with {type(other).__name__}.")
        t, u = self.template, other.template
        same = (
            type(t) is type(u)
            and params_equal(t.get_params(), u.get_params())
            and (self.n_replicates, self.first_replicate, self.seed)
            == (other.n_replicates, other.first_replicate, other.seed)
        )
        if not same:
            raise ValueError(
                "Cannot merge PoissonBootstrap objects with different templates, replicates or seeds: "
                f"{self!r} vs {other!r}."
            )

    def _merged(self, objects):
        for other in objects:
            self._check_mergeable(other)
        out = PoissonBootstrap(
            self.template,
            n_replicates=self.n_replicates,
            first_replicate=self.first_replicate,
            seed=self.seed,
        )
        acc = {k: np.array(v, copy=True) for k, v in objects[0].stats_.items()}
        for o in objects[1:]:
            acc = self._combine(acc, o.stats_)
        out._stats = acc
        out.n_updates_ = sum(o.n_updates_ for o in objects)
        return out

    def __add__(self, other):
        if isinstance(other, numbers.Number) and other == 0:
            return self._merged([self])
        return self.merge(other)

    # -- rows and weights ------------------------------------------------------------------
    def _global_index(self, n, row_offset, row_index):
        if row_index is None:
            return np.arange(n, dtype=np.int64) + int(row_offset)
        idx = np.asarray(row_index)
        if idx.ndim != 1 or idx.shape[0] != n:
            raise ValueError(f"row_index must have shape ({n},), one global index per row; got {idx.shape}.")
        if idx.size and (idx.dtype.kind not in "iu" or int(idx.min()) < 0):
            raise ValueError("row_index must hold non-negative integers (global row indices).")
        if row_offset:
            raise ValueError("Pass row_offset or row_index, not both.")
        return idx.astype(np.int64, copy=False)

    @validate_params(
        {
            "n_rows": [StrictInterval(numbers.Integral, 0, None, closed="left"), None],
            "row_offset": NON_NEGATIVE_INT,
            "row_index": ["array-like", None],
        },
        prefer_skip_nested_validation=True,
    )
    def replicate_weights(self, n_rows=None, *, row_offset=0, row_index=None):
        """The weights of rows in this object's replicates: ``(n_replicates, n)`` float64.

        Parameters
        ----------
        n_rows : int, default=None
            Rows ``row_offset .. row_offset + n_rows - 1`` (``None``: the rows of ``row_index``).
        row_offset : int, default=0
            Global index of the first row.
        row_index : array-like of int, default=None
            Global index of every row (instead of ``n_rows`` and ``row_offset``).

        Returns
        -------
        ndarray of shape (n_replicates, n)
            Copies of each row in each replicate.
        """
        if row_index is None:
            if n_rows is None:
                raise ValueError("Pass n_rows or row_index.")
            idx = self._global_index(int(n_rows), row_offset, None)
        else:
            idx = self._global_index(np.shape(row_index)[0], row_offset, row_index)
        return _weights_from_keys(self._keys, idx).astype(np.float64)

    @validate_params(
        {"sample_weight": SAMPLE_WEIGHT, "row_offset": NON_NEGATIVE_INT, "row_index": ["array-like", None]},
        prefer_skip_nested_validation=True,
    )
    def prepare(self, *arrays, sample_weight=None, row_offset=0, row_index=None):
        """Validate and plan a chunk once, for :meth:`update` of this and other bootstraps of the template.

        Parameters
        ----------
        *arrays : array-like
            The chunk, as the template's ``update`` takes it.
        sample_weight : array-like of shape (n,), default=None
            Row weights (kept on every copy of a row).
        row_offset : int, default=0
            Global index of the chunk's first row.
        row_index : array-like of int of shape (n,), default=None
            Global index of every row (instead of ``row_offset``).

        Returns
        -------
        PreparedRows
            The validated, planned chunk.
        """
        checked = self.template._check_chunk(*arrays, sample_weight=sample_weight)
        if checked is None:
            return PreparedRows(self.template, None, np.zeros(0, dtype=np.int64))
        n = next(a for a in checked if a is not None).shape[0]
        idx = self._global_index(n, row_offset, row_index)
        plan = self.template._replicate_plan(*checked, index=idx)
        index = idx if plan.order is None else idx[plan.order]
        return PreparedRows(self.template, plan, index)

    @validate_params(
        {
            "sample_weight": SAMPLE_WEIGHT,
            "row_offset": NON_NEGATIVE_INT,
            "row_index": ["array-like", None],
            "replicate_weights": ["array-like", None],
            "workspace": [dict, None],
            "check_input": ["boolean"],
        },
        prefer_skip_nested_validation=True,
    )
    def update(
        self,
        *arrays,
        sample_weight=None,
        row_offset=0,
        row_index=None,
        replicate_weights=None,
        workspace=None,
        check_input=True,
    ):
        """Add the replicate statistics of one chunk of rows; return ``self``.

        Parameters
        ----------
        *arrays : array-like or PreparedRows
            The chunk, as the template's ``update`` takes it, or one :class:`PreparedRows`
            (from :meth:`prepare`; then ``sample_weight``, ``row_offset`` and ``row_index`` were
            given there).
        sample_weight : array-like of shape (n,), default=None
            Row weights (kept on every copy of a row).
        row_offset : int, default=0
            Global index of the chunk's first row (the key of its weights).
        row_index : array-like of int of shape (n,), default=None
            Global index of every row, instead of ``row_offset`` (rows in any order; several
            rows may share an index and then share their weights, as the votes of one input do).
        replicate_weights : array-like of shape (n_replicates, n), default=None
            The replicate weights of the chunk's rows, when the caller has drawn them already
            (:meth:`replicate_weights`; several statistics of the same rows can share one draw).
            Any non-negative weights are accepted and counted as copies.
        workspace : dict, default=None
            Scratch arrays lent by a caller that makes many bootstraps one after the other and
            discards each one's statistics before the next update with the same dict (the
            report does, a block of replicates at a time): the large accumulators are reused
            instead of allocated and first touched every time. The statistics of this update
            then live in the workspace's arrays.
        check_input : bool, default=True
            Check that ``replicate_weights`` are finite and non-negative (two passes over them).
            Pass ``False`` only for weights that cannot be otherwise, such as counts drawn by
            :func:`poisson_weights` and converted to float, as the report does for every
            statistic of a block of replicates (as scikit-learn's trees take ``check_input``).
            The shape is checked either way.

        Returns
        -------
        PoissonBootstrap
            The updated object.
        """
        if len(arrays) == 1 and isinstance(arrays[0], PreparedRows):
            prepared = self._check_prepared(arrays[0])
        else:
            prepared = self.prepare(
                *arrays, sample_weight=sample_weight, row_offset=row_offset, row_index=row_index
            )
        tiles = None
        if prepared.plan is not None and prepared.n_rows:
            if replicate_weights is None:
                tiles = _drawn_tiles(self._keys, prepared)
            else:
                W = np.asarray(replicate_weights)
                _check_weights_shape(self, prepared, W)
                # two reductions (no temporary): a NaN fails the min, an infinity the sum
                if W.dtype.kind not in "uif" or (
                    check_input and W.dtype.kind != "u" and not (W.min() >= 0 and np.isfinite(W.sum()))
                ):
                    raise ValueError("replicate_weights must be finite and non-negative.")
                tiles = _given_tiles(W)
        _update_plans([(self, prepared)], tiles, workspace)
        return self

    def _absorb(self, part):
        """Count one update, whose replicate statistics are ``part`` (``None``: it added no rows)."""
        if part is None:
            self.stats_  # noqa: B018 - the property creates the empty statistics (count 0)
        elif "_stats" not in self.__dict__ or self.n_updates_ == 0:
            self._stats = part  # the first chunk's statistics are the state (no copy into zeros)
        else:
            self._stats = self._combine(self._stats, part)
        self.n_updates_ = getattr(self, "n_updates_", 0) + 1

    def _check_prepared(self, prepared):
        if prepared.template is not self.template and not (
            type(prepared.template) is type(self.template)
            and params_equal(prepared.template.get_params(), self.template.get_params())
        ):
            raise ValueError("The prepared rows were made for another template.")
        return prepared

    def compute(self):
        """Return the template's measure on every replicate.

        Returns
        -------
        ndarray of shape (n_replicates,)
            One value per replicate (for a template whose ``compute`` returns an array, such as
            :class:`~skcal.stats.CE2Statistics`' coefficients, those arrays stacked).
        """
        return self._compute()

    @validate_params({"template": [BaseStatistics]}, prefer_skip_nested_validation=True)
    def compute_as(self, template):
        """Return another template's measure on every replicate of these statistics.

        Several measures of one statistics class differ only in ``compute`` (the truthful
        ConfCE-corr and ConfECE of one binning, the binned ECE and MCE of one set of bins): one
        bootstrap's replicate statistics serve all of them, updated once.

        Parameters
        ----------
        template : BaseStatistics
            A template equal to this bootstrap's up to the parameters only ``compute`` reads
            (such as ``measure``).

        Returns
        -------
        ndarray of shape (n_replicates,)
            ``template``'s measure on each replicate.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.stats import BinnedStatistics, PoissonBootstrap
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=500)
        >>> y = (rng.uniform(size=500) < p).astype(int)
        >>> boot = PoissonBootstrap(BinnedStatistics(n_bins=5), n_replicates=4).update(y, p)
        >>> mce = PoissonBootstrap(BinnedStatistics(n_bins=5, measure="mce"), n_replicates=4).update(y, p)
        >>> bool(np.array_equal(boot.compute_as(BinnedStatistics(n_bins=5, measure="mce")), mce.compute()))
        True
        """
        if not same_statistics(template, self.template):
            raise ValueError(
                f"template must hold the statistics of {self.template!r} (the same class and parameters "
                f"but those only compute reads); got {template!r}."
            )
        return template._replicate_compute(self.stats_)

    def bounds(self):
        """Per replicate, the stated error bound of a fine-grid template (``template.bound()``).

        Returns
        -------
        ndarray of shape (n_replicates,)
            The bound of each replicate's value (for example ``exact - value`` of
            :class:`~skcal.stats.CutoffGridStatistics` lies in ``[0, bound]``).
        """
        fn = getattr(self.template, "_replicate_bounds", None)
        if fn is None:
            raise ValueError(f"{type(self.template).__name__} states no error bound.")
        return fn(self.stats_)

    @property
    def two_pass(self):
        """Whether the template has a second pass (:meth:`plug_in`: CE2's and CE1's plug-in sums)."""
        return getattr(self.template, "_replicate_second_pass", None) is not None

    def plug_in(self):
        """The second pass of a two-pass template (CE2, CE1): replicate ``r`` with replicate ``r``'s fit.

        Returns
        -------
        PoissonBootstrap
            An empty bootstrap of the template's second pass (same replicates and seed); update it
            with the same rows and compute it for the replicate values.
        """
        second = getattr(self.template, "_replicate_second_pass", None)
        if second is None:
            raise ValueError(f"{type(self.template).__name__} has no second pass.")
        return PoissonBootstrap(
            second(self.compute()),
            n_replicates=self.n_replicates,
            first_replicate=self.first_replicate,
            seed=self.seed,
        )

    # -- states ----------------------------------------------------------------------------
    def get_params(self):
        """Return the constructor's arguments.

        Returns
        -------
        dict
            ``template`` (the object), ``n_replicates``, ``first_replicate``, ``seed``.
        """
        return {
            "template": self.template,
            "n_replicates": self.n_replicates,
            "first_replicate": self.first_replicate,
            "seed": self.seed,
        }

    @validate_params({"copy": ["boolean"]}, prefer_skip_nested_validation=True)
    def get_state(self, *, copy=True):
        """Return a versioned, pickle-free state (the template as its kind and parameters).

        Parameters
        ----------
        copy : bool, default=True
            Copy the arrays.

        Returns
        -------
        dict
            As :meth:`BaseStatistics.get_state`, with ``params`` holding ``template`` (a dict
            ``{"kind", "params"}``), ``n_replicates``, ``first_replicate`` and ``seed``.
        """
        t = self.template
        return {
            "kind": self._kind(),
            "format_version": STATE_FORMAT_VERSION,
            "state_version": self._state_version,
            "params": {
                "template": {
                    "kind": t._kind(),
                    "state_version": t._state_version,
                    "params": {k: plain_value(v) for k, v in t.get_params().items()},
                },
                "n_replicates": self.n_replicates,
                "first_replicate": self.first_replicate,
                "seed": self.seed,
            },
            "n_updates": int(self.n_updates_),
            "arrays": {k: np.array(v, copy=True if copy else None) for k, v in self.stats_.items()},
        }

    @classmethod
    def _from_state(cls, state, copy):
        params = dict(state["params"])
        tspec = params.pop("template")
        if not isinstance(tspec, dict) or "kind" not in tspec:
            raise ValueError("state of a PoissonBootstrap must describe its template as {'kind', 'params'}.")
        tcls = statistics_class(tspec["kind"])
        if tspec.get("state_version", tcls._state_version) != tcls._state_version:
            raise ValueError(
                f"template state version {tspec.get('state_version')} of {tspec['kind']!r} is not "
                f"this skcal's {tcls._state_version}."
            )
        obj = cls(tcls(**tspec["params"]), **params)
        obj._stats = obj._checked_sums(state["arrays"], copy)
        obj.n_updates_ = int(state.get("n_updates", 0))
        return obj

    @property
    def _variable_shape(self):
        return self.template._replicate_variable_shape

    def __repr__(self):
        return (
            f"PoissonBootstrap({self.template!r}, n_replicates={self.n_replicates}, "
            f"first_replicate={self.first_replicate}, seed={self.seed})"
        )


@validate_params(
    {
        "jobs": [list],
        "replicate_weights": ["array-like"],
        "rows": ["array-like", None],
        "workspace": [dict, None],
    },
    prefer_skip_nested_validation=True,
)
def update_together(jobs, replicate_weights, *, rows=None, workspace=None):
    """:meth:`PoissonBootstrap.update` of several bootstraps of the same rows, tile by tile.

    Each ``(bootstrap, prepared)`` of ``jobs`` gets exactly the update
    ``bootstrap.update(prepared, replicate_weights=replicate_weights, workspace=...,
    check_input=False)`` would give it (the same tiles in the same order, so the same
    statistics bit for bit), but the loop over tiles of rows is the outer one: a tile of the
    weights is read from memory once and then serves every plan while it is in cache, instead
    of every plan streaming the whole ``(n_replicates, n)`` array.

    Parameters
    ----------
    jobs : list of (PoissonBootstrap, PreparedRows)
        Distinct bootstraps with their prepared rows (made for each bootstrap's template);
        every ``prepared`` has ``n`` rows, every bootstrap ``R`` replicates.
    replicate_weights : ndarray of shape (R, n) or (R, N)
        The weights: counts (``uint8``, as :func:`poisson_weights` draws them) or counts
        converted to float, as :meth:`PoissonBootstrap.update` with ``check_input=False`` takes
        them; not checked again. Counts are converted to float a tile at a time, into one reused
        buffer (an ``(R, n)`` float copy of a block is 8 bytes a weight written and read back
        from memory); they are gathered fastest from the transposed view of an ``(N, R)``
        C-contiguous array, a row's ``R`` weights side by side.
    rows : ndarray of int of shape (n,), default=None
        Column of ``replicate_weights`` holding the weights of each prepared row (``None``: row
        ``j``'s are column ``j``, and ``replicate_weights`` has ``n`` columns): a caller whose
        statistics visit the rows in another order (sorted by a prediction) gathers them tile by
        tile instead of copying the block into that order.
    workspace : dict, default=None
        Scratch arrays lent as :meth:`PoissonBootstrap.update` lends them. Plans of the same
        class in ``jobs`` get their own sub-dictionaries (``("slot", i)``), since they hold
        their accumulators at the same time.

    Returns
    -------
    list of PoissonBootstrap
        The bootstraps, updated.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import BinnedStatistics, BrierScoreStatistics, PoissonBootstrap
    >>> from skcal.stats import poisson_weights, update_together
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=200)
    >>> y = (rng.uniform(size=200) < p).astype(int)
    >>> W = poisson_weights(3, range(4), range(200))
    >>> templates = (BinnedStatistics(), BrierScoreStatistics())
    >>> boots = [PoissonBootstrap(t, n_replicates=4, seed=3) for t in templates]
    >>> together = update_together([(b, b.prepare(y, p)) for b in boots], W)
    >>> alone = PoissonBootstrap(BinnedStatistics(), n_replicates=4, seed=3).update(y, p)
    >>> bool(np.allclose(together[0].compute(), alone.compute(), rtol=1e-12))
    True
    """
    W = np.asarray(replicate_weights)
    if W.dtype.kind not in "uif":
        raise ValueError(f"replicate_weights must be real numbers; got dtype {W.dtype}.")
    boots = [boot for boot, _ in jobs]
    if any(b is c for i, b in enumerate(boots) for c in boots[:i]):
        raise ValueError("Each bootstrap may appear once in jobs (update it again in another call).")
    if rows is not None:
        rows = np.asarray(rows)
        if rows.ndim != 1 or rows.dtype.kind not in "iu":
            raise ValueError(
                f"rows must be a 1-d array of column indices; got shape {rows.shape}, dtype {rows.dtype}."
            )
        if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= W.shape[-1]):
            raise ValueError(f"rows must index the {W.shape[-1]} columns of replicate_weights.")
    for boot, prepared in jobs:
        boot._check_prepared(prepared)
        if prepared.plan is not None and prepared.n_rows:
            if rows is None:
                _check_weights_shape(boot, prepared, W)
            elif W.ndim != 2 or W.shape[0] != boot.n_replicates or rows.shape[0] != prepared.n_rows:
                raise ValueError(
                    f"replicate_weights must have {boot.n_replicates} rows and rows {prepared.n_rows} "
                    f"entries; got {W.shape} and {rows.shape}."
                )
    _update_plans(jobs, _given_tiles(W, rows), workspace)
    return [boot for boot, _ in jobs]


def _check_weights_shape(boot, prepared, W):
    if W.shape != (boot.n_replicates, prepared.n_rows):
        raise ValueError(
            f"replicate_weights must have shape ({boot.n_replicates}, {prepared.n_rows}); got {W.shape}."
        )


def _given_tiles(W, rows=None):
    """Tiles of given weights ``W`` (``(R, N)``): the columns of the rows a plan visits.

    ``rows`` maps the prepared rows to columns of ``W`` (``None``: the identity). Float weights
    are sliced as they are. Counts (an integer dtype) are converted to float a tile at a time
    into one reused ``(rows, R)`` buffer, returned as its ``(R, rows)`` transposed view (the
    layout of the statistics' sparse products): every tile is consumed before the next is made.
    """
    counts = W.dtype.kind in "iu"
    by_row = counts and W.ndim == 2 and W.T.flags.c_contiguous  # (N, R): a row's weights together
    buffers = {}

    def tile(order, start, stop):
        if order is None:
            cols = slice(start, stop) if rows is None else rows[start:stop]
        else:
            cols = order[start:stop] if rows is None else rows[order[start:stop]]
        if not counts:
            return np.asarray(W[:, cols], dtype=np.float64)
        t = stop - start
        if by_row:
            out = buffers.get("f")
            if out is None or out.shape[0] < t:
                out = buffers["f"] = np.empty((t, W.shape[0]))
                buffers["c"] = np.empty((t, W.shape[0]), dtype=W.dtype)
            out = out[:t]
            if isinstance(cols, slice):
                np.copyto(out, W.T[cols])
            else:
                gathered = buffers["c"][:t]
                np.take(W.T, cols, axis=0, out=gathered)
                np.copyto(out, gathered)
            return out.T
        return np.asarray(W[:, cols], dtype=np.float64)

    return tile


def _drawn_tiles(keys, prepared):
    """Tiles of weights drawn from the stream (``prepared.index`` is in the plan's order already)."""

    def tile(order, start, stop):
        return _weights_from_keys(keys, prepared.index[start:stop]).astype(np.float64)

    return tile


def _update_plans(jobs, tile, workspace):
    """Add each ``(bootstrap, prepared)``'s rows, tile by tile, and count the update.

    ``tile(order, start, stop)`` gives the weights of a tile; plans that visit the rows in the
    same order and tiles of the same size read each tile once, while it is in cache, and share
    its copies (``W @ 1``). The workspace, a dict of scratch arrays, is handed to each plan's
    accumulator (plans of one class get their own ``("slot", i)`` sub-dictionary: they hold
    their accumulators at the same time).
    """
    live = []  # [job index, plan, accumulator]
    groups = []  # [rows per tile, order, indices into live]: the plans that read the same tiles
    slots = {}
    for index, (boot, prepared) in enumerate(jobs):
        plan = prepared.plan
        if plan is None or not prepared.n_rows:
            continue
        scratch = None
        if workspace is not None:
            slot = slots[type(plan)] = slots.get(type(plan), -1) + 1
            scratch = workspace if slot == 0 else workspace.setdefault(("slot", slot), {})
        step = tile_rows(boot.n_replicates, plan.width)
        group = next((g for g in groups if g[0] == step and g[1] is plan.order), None)
        if group is None:
            group = [step, plan.order, []]
            groups.append(group)
        group[2].append(len(live))
        live.append([index, plan, plan.empty(boot.n_replicates, scratch)])
    for step, order, members in groups:
        n = live[members[0]][1].n_rows
        for start in range(0, n, step):
            stop = min(n, start + step)
            W = tile(order, start, stop)
            copies = W @ np.ones(W.shape[1])
            for k in members:
                live[k][2] = live[k][1].add(live[k][2], W, start, stop, copies)
    parts = [None] * len(jobs)
    for index, plan, part in live:
        parts[index] = plan.finish(part)
    for (boot, _), part in zip(jobs, parts, strict=True):
        boot._absorb(part)
