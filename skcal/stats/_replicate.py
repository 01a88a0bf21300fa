"""Bootstrap replicates of the statistics objects: the plan protocol and the weighted-histogram kernels.

A bootstrap replicate of a statistics object is its statistics on a *resample*: the rows of a
chunk, row ``i`` repeated ``W[r, i]`` times in replicate ``r`` (:class:`skcal.stats.PoissonBootstrap`
draws the ``W`` and holds the replicates). Every statistics class turns a chunk into a
:class:`ReplicatePlan` once (``_replicate_plan``: bin ids, per-row products, sort orders, all that
does not depend on the replicate weights), and the plan then adds the statistics of any tile of
rows for a whole block of replicates at once (``add``), with the replicate axis first. Where a
statistic is a weighted histogram (binned, SCDL's soft bins, smECE's fine grid, the truthful
bins, the cutoff grid) a tile of ``R`` replicates is one sparse product
(:func:`add_sparse_sums`: the rows' cells times the tile's weights).

**Frequency weights.** ``W[r, i]`` counts copies of row ``i`` (row weights ``w_i``, when given,
stay on every copy). Where a statistic is linear in the weights (almost all of them), the
replicate equals the statistics updated with ``sample_weight = W[r] * w``. Where it is not, the
copies decide: a row's ``w^2`` terms (Kish's effective size, the truthful correction, the
debiased binned error) add ``W[r, i] w_i^2`` and the row counts add ``W[r, i]``, exactly as the
statistics of the resample with its repeated rows would. :class:`LoopPlan`, the default plan of
every class, computes exactly that (it repeats the rows), replicate by replicate; the vectorised
plans of the classes are tested against it.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = [
    "TILE_ENTRIES",
    "LoopPlan",
    "ReplicatePlan",
    "add_sparse_sums",
    "frequency_rows",
    "is_sorted",
    "stack_empty",
    "tile_rows",
]


#: Largest number of entries (replicates x rows) of one tile of replicate weights.
TILE_ENTRIES = 1 << 18


def tile_rows(n_replicates, width=1):
    """Rows per tile for ``n_replicates`` replicates and ``width`` values per row (at least 256).

    Parameters
    ----------
    n_replicates : int
        Replicates of a tile.
    width : int, default=1
        Values per row and replicate that the plan forms at once (for example ``k`` class columns).

    Returns
    -------
    int
        The number of rows.

    Examples
    --------
    >>> tile_rows(16)
    16384
    """
    return max(256, TILE_ENTRIES // max(1, int(n_replicates) * int(width)))


def is_sorted(values):
    """Whether a 1-d array is non-decreasing.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The array.

    Returns
    -------
    bool
        True for arrays of fewer than two entries.

    Examples
    --------
    >>> import numpy as np
    >>> is_sorted(np.array([0, 0, 2])), is_sorted(np.array([1, 0]))
    (True, False)
    """
    return values.shape[0] < 2 or bool(np.all(values[1:] >= values[:-1]))


try:  # the in-place product of scipy's sparse kernels (Y += A X); the public path is the fallback
    from scipy.sparse._sparsetools import csc_matvecs as _csc_matvecs
except ImportError:  # pragma: no cover - a scipy without it
    _csc_matvecs = None


def add_sparse_sums(acc, rows, vals, W):
    """Add weighted bin sums for every replicate: ``acc[rows[i, e], r] += vals[i, e] * W[r, i]``.

    The rows of a tile are the columns of a sparse matrix (one entry per ``e``) whose product
    with the weights' transpose is added to ``acc`` in place; its inner loop runs over the
    replicates of a row, contiguous when ``W`` is a transposed (Fortran order) array. Several
    quantities binned alike (a weight and its moments) are stacked as row blocks of ``acc``.

    Parameters
    ----------
    acc : ndarray of shape (n_bins, R)
        The accumulator, C-contiguous, with the replicate axis *last* (a plan transposes it
        once, in ``finish``); modified in place.
    rows : ndarray of int64 or int32 of shape (n, m)
        The row of ``acc`` of each entry of each data row (C-contiguous; int32 is used as it is,
        half the memory of int64, when ``acc`` has fewer than 2^31 rows).
    vals : ndarray of shape (n, m)
        The value of each entry (row weights already applied; C-contiguous).
    W : ndarray of shape (R, n)
        Replicate weights.

    Returns
    -------
    ndarray
        ``acc``.

    Examples
    --------
    >>> import numpy as np
    >>> acc = np.zeros((3, 2))
    >>> W = np.array([[1.0, 2.0], [0.0, 1.0]])
    >>> add_sparse_sums(acc, np.array([[0, 2], [2, 2]]), np.array([[1.0, 5.0], [1.0, 1.0]]), W).tolist()
    [[1.0, 0.0], [0.0, 0.0], [9.0, 2.0]]
    """
    n, m = rows.shape
    if n == 0:
        return acc
    R = W.shape[0]
    WT = W.T if W.T.flags.c_contiguous else np.ascontiguousarray(W.T)
    # int32 rows (a plan's choice: half the memory) stay int32 when the tile's entries fit
    index = np.int32 if rows.dtype == np.int32 and n * m < 2**31 else np.int64
    rows = np.ascontiguousarray(rows, dtype=index)
    vals = np.ascontiguousarray(vals, dtype=np.float64)
    indptr = np.arange(0, n * m + 1, m, dtype=index)
    if _csc_matvecs is not None and acc.flags.c_contiguous and acc.dtype == np.float64:
        _csc_matvecs(acc.shape[0], n, R, indptr, rows.ravel(), vals.ravel(), WT.ravel(), acc.reshape(-1))
        return acc
    lo, hi = int(rows.min()), int(rows.max())  # pragma: no cover - the public path
    S = sparse.csc_matrix((vals.ravel(), (rows - lo).ravel(), indptr), shape=(hi - lo + 1, n))
    acc[lo : hi + 1] += S @ WT
    return acc


def stack_empty(empty, n_replicates):
    """``n_replicates`` copies of a statistics dict, stacked along a new first axis (zeros).

    Parameters
    ----------
    empty : dict of ndarray
        A statistics object's ``_empty()``.
    n_replicates : int
        The number of replicates.

    Returns
    -------
    dict of ndarray
        Zero arrays of shape ``(n_replicates,) + shape`` with the dtypes of ``empty``.
    """
    return {k: np.zeros((n_replicates, *np.shape(v)), dtype=np.asarray(v).dtype) for k, v in empty.items()}


def frequency_rows(arrays, counts):
    """The rows of ``arrays`` repeated ``counts`` times (the resample of frequency weights).

    Parameters
    ----------
    arrays : sequence of ndarray or None
        Arrays with the rows on the first axis (``None`` entries stay ``None``).
    counts : ndarray of shape (n,)
        Non-negative integer copies of each row.

    Returns
    -------
    list
        The repeated arrays.

    Examples
    --------
    >>> import numpy as np
    >>> frequency_rows([np.array([1.0, 2.0]), None], np.array([0, 2]))[0].tolist()
    [2.0, 2.0]
    """
    c = np.asarray(counts).astype(np.intp)
    return [None if a is None else np.repeat(a, c, axis=0) for a in arrays]


class ReplicatePlan:
    """What a statistics object precomputes from one chunk to add its bootstrap replicates fast.

    Subclasses set ``n_rows`` and implement :meth:`empty` and :meth:`add`; ``order`` (a
    permutation of the chunk's rows, or ``None``) says in which order the tiles visit the rows,
    so that the caller draws the weights of the right rows.
    """

    #: Rows of the chunk.
    n_rows = 0
    #: Order in which ``add`` visits the chunk's rows (``None``: as given).
    order = None
    #: Values per row and replicate that ``add`` forms at once (sizes the tiles).
    width = 1

    def zeros(self, scratch, key, shape):
        """A zero array of ``shape``: fresh, or a reused array of the caller's ``scratch`` dict.

        Large fresh arrays cost their first touch (a page fault per 4 KiB) on every update; a
        caller that discards each update's statistics before the next one passes a scratch dict
        (``PoissonBootstrap.update(workspace=...)``), whose arrays then hold the statistics.
        """
        out, fresh = self._scratch_array(scratch, key, shape, np.zeros)
        if not fresh:
            out.fill(0.0)
        return out

    def uninitialised(self, scratch, key, shape):
        """As :meth:`zeros`, but not zeroed: for a plan that writes every entry before it reads it."""
        return self._scratch_array(scratch, key, shape, np.empty)[0]

    def _scratch_array(self, scratch, key, shape, make):
        """``(array, fresh)``: the scratch dict's array of ``key`` (one per role, grown to the
        largest need), or a new one ``make(shape)`` without a scratch dict."""
        if scratch is None:
            return make(shape), True
        k = (type(self).__name__, key)
        size = int(np.prod(shape))
        buf = scratch.get(k)
        if buf is None or buf.size < size:
            buf = scratch[k] = make(size)
            return buf.reshape(shape), True
        return buf[:size].reshape(shape), False

    def empty(self, n_replicates, scratch=None):
        """The statistics of no replicate row: a dict with a leading axis of ``n_replicates``.

        ``scratch`` (a dict or None) lends reused arrays (:meth:`zeros`).
        """
        raise NotImplementedError

    def add(self, out, weights, start, stop, copies):
        """Add rows ``start..stop-1`` (in plan order) with replicate weights ``(R, stop - start)``.

        ``copies`` is ``weights @ 1``, the copies of the tile's rows in each replicate (formed
        once per tile for every plan that reads it). Returns the accumulator (modified in place
        where the statistics have a fixed size).
        """
        raise NotImplementedError

    def finish(self, out):
        """The accumulator as replicate statistics (a plan may accumulate in another layout)."""
        return out


class LoopPlan(ReplicatePlan):
    """The default plan: each replicate's statistics computed from its resample, one at a time.

    Exact by construction for every statistics class whose statistics have a fixed shape: the
    rows of a tile are repeated as the replicate weights say (:func:`frequency_rows`) and the
    class's own ``_sums`` adds them. The vectorised plans are tested against it.

    Parameters
    ----------
    stats : BaseStatistics
        The template.
    arrays : tuple
        The chunk's validated arrays, the weights (or ``None``) last.
    """

    def __init__(self, stats, arrays):
        self.stats = stats
        self.arrays = tuple(arrays)
        first = next(a for a in self.arrays if a is not None)
        self.n_rows = int(np.shape(first)[0])

    def empty(self, n_replicates, scratch=None):
        return stack_empty(self.stats._empty(), n_replicates)

    def add(self, out, weights, start, stop, copies):
        parts = [None if a is None else a[start:stop] for a in self.arrays]
        *data, w = parts
        for r in range(weights.shape[0]):
            rows = frequency_rows([*data, w], weights[r])
            sums = self.stats._sums(*rows[:-1], rows[-1]) if rows[0].shape[0] else self.stats._empty()
            for k, v in sums.items():
                if np.shape(v) != out[k].shape[1:]:
                    raise NotImplementedError(
                        f"{type(self.stats).__name__} has no replicate plan and its statistics change shape "
                        "with the rows; it cannot be bootstrapped."
                    )
                out[k][r] += v
        return out
