"""Mergeable statistics of the cutoff calibration error and the KS calibration error.

Both are functions of the running sums ``S_k`` of ``w (y - p)`` over the distinct values of ``p``
in increasing order (ties merged, ``S_0 = 0``): the cutoff error is
``(max_k S_k - min_k S_k) / W`` and the Kolmogorov-Smirnov error ``max_k |S_k| / W``.

* :class:`CutoffStatistics` is exact: its state is, per distinct prediction, the sum of
  ``w (y - p)`` and of ``w``, sorted by prediction. ``update`` sorts the chunk and merges tied
  predictions; ``merge`` merges the sorted runs (concatenate, sort, add the sums of tied
  values), so the state is the same whatever the chunking. Its size is the number of distinct
  predictions (at most the number of rows).
* :class:`SortedCutoffStatistics` is exact with a fixed size, for rows that arrive in increasing
  order of their predictions (each chunk is sorted by ``update``; chunks merge when their
  predictions do not interleave, in either order): its state is the running sum so far, its
  largest and smallest value at the ends of runs of tied predictions, and the first and last
  prediction. The in-memory report computes the cutoff error's bootstrap replicates with it, on
  its one sort of each model's rows: a block of replicates is one pass over the sorted rows
  that keeps ``5 R`` numbers, not ``R`` numbers per distinct prediction.
* :class:`CutoffGridStatistics` is approximate with a stated bound and a fixed size: it adds
  ``w (y - p)`` and ``w |y - p|`` into ``n_cells`` equal cells ``[j / m, (j + 1) / m)`` of
  [0, 1] (the last closed). Its value takes the supremum over unions of consecutive cells,
  which are intervals, so it never exceeds the exact value; an interval's two partially covered
  end cells change its sum by at most their ``w |y - p|`` mass, so
  ``grid <= exact <= grid + bound()``, with ``bound() = 2 max_j A_j / W`` (cutoff) and
  ``max_j A_j / W`` (KS, whose intervals have one free end), ``A_j = sum_{cell j} w |y - p|``.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._compiled import compiled
from skcal._constraints import N_BINS, POS_LABEL
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats._base import VALIDATED_ROWS, VALIDATED_ROWS_DOCS, BinaryStatistics
from skcal.stats._replicate import (
    ReplicatePlan,
    add_sparse_sums,
    is_sorted,
)

__all__ = [
    "CutoffStatistics",
    "CutoffGridStatistics",
    "SortedCutoffStatistics",
    "combine_replicate_runs",
    "cutoff_from_running_sums",
    "replicate_running_extremes",
    "replicate_running_sum_error",
    "running_sum_extremes",
]

_MEASURES = ("cutoff", "ks")
_MEASURE = [StrOptions(set(_MEASURES))]


def cutoff_from_running_sums(S, W, measure):
    """The cutoff or KS calibration error from the running sums ``S_k`` of ``w (y - p)``.

    The formula that :func:`skcal.cutoff.cutoff_calibration_error`,
    :func:`skcal.ks_calibration_error.ks_calibration_error` and the statistics of this module
    share: ``(max(max_k S_k, 0) - min(min_k S_k, 0)) / W`` (cutoff; ``S_0 = 0`` is included) or
    ``max_k |S_k| / W`` (KS).

    Parameters
    ----------
    S : ndarray
        The running sums at the last row of each group of tied predictions (only their maximum
        and minimum are used, so the extremes alone suffice).
    W : float
        The total weight.
    measure : {"cutoff", "ks"}
        Which error.

    Returns
    -------
    float
        The error.

    Examples
    --------
    >>> import numpy as np
    >>> cutoff_from_running_sums(np.array([0.5, -0.1, 0.6]), 4.0, "cutoff")
    0.175
    """
    if W <= 0:
        raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
    if S.size == 0:
        return 0.0
    if S.size <= 8:  # the extremes themselves (Python floats: no array operation per value)
        values = S.tolist()
        hi, lo = max(values), min(values)
    else:
        hi, lo = float(S.max()), float(S.min())
    # at most 1 (|S_k| <= W); the running sums and W add in different orders, so round-off
    # can exceed it by an ulp (all labels 1, p ~ 0, weighted: 1.0000000000000002)
    if measure == "ks":
        return min(1.0, float(max(abs(hi), abs(lo)) / W))
    return min(1.0, float((max(hi, 0.0) - min(lo, 0.0)) / W))


@fill(**BINARY_DOCS)
def running_sum_extremes(y_true, y_prob, sample_weight=None, pos_label=None):
    """Validate binary inputs; return the extremes of the running sums of ``w (y - p)`` and ``W``.

    The running sums are taken in increasing ``p`` at the last row of each group of tied
    predictions (an interval holds all or none of a tie); the in-memory cutoff and KS errors
    are :func:`cutoff_from_running_sums` of the result (:meth:`CutoffStatistics.compute_validated`).
    The inputs are validated with :func:`skcal._validation.check_binary_probabilities` without
    copies (they are only read; peak memory: a few arrays of ``n`` floats).

    Unweighted, no permutation is formed: each row becomes one 64-bit key, the bit pattern of
    ``p`` (a copy) shifted left by one with the label in the freed lowest bit. For ``p`` in [0, 1] the
    IEEE-754 bit pattern read as an unsigned integer is increasing in ``p`` and below ``2**62``
    (``-0.0``, whose sign bit is shifted out, becomes ``+0.0``, its equal), so one (SIMD) sort of
    the keys orders the rows by ``p`` with the labels alongside, and both are read back exactly
    by a shift and a mask. Ties in ``p`` stay contiguous (they are merged below, so their order
    is irrelevant). With numba (the ``fast`` extra) already imported, or from
    ``_KERNEL_MIN_ROWS`` (2^16) rows on, the keys are packed from the caller's arrays and the sorted
    keys walked once by :mod:`skcal._cutoff_kernel` (no copy of ``p``; the same extremes bit for
    bit, since both add ``y - p`` one row at a time in increasing ``p``); below that size a process
    that has not imported numba keeps the numpy passes, since the import would cost more than
    the call. Weighted, one argsort orders ``p`` and ``w (y - p)`` together, gathered as
    the two columns of one ``(n, 2)`` array. The other rows' running sums are masked out of the
    max / min, not copied.

    Parameters
    ----------
    {y_true}
    {y_prob}
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    {pos_label}

    Returns
    -------
    extremes : ndarray of shape (2,)
        The largest and the smallest running sum.
    W : float
        The total weight.

    Examples
    --------
    >>> extremes, W = running_sum_extremes([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9])
    >>> extremes.round(6).tolist(), W
    ([0.6, 0.5], 4.0)
    """
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    return _extremes_of_validated(y, p, w)


def _extremes_of_validated(y, p, w):
    """:func:`running_sum_extremes` of validated rows (only read: ``copy=False`` validation suffices)."""
    n = p.shape[0]
    kernel = compiled("cutoff", size=n, min_size=_KERNEL_MIN_ROWS) if w is None else None
    if kernel is not None:  # the caller's arrays are only read
        key = kernel.pack_keys(
            np.ascontiguousarray(p), y if y.flags.c_contiguous else np.ascontiguousarray(y)
        )
        key.sort()
        return np.array(kernel.sorted_key_extremes(key)), float(key.shape[0])
    if w is None:
        key = np.array(p, dtype=np.float64).view(np.uint64)  # a copy of p whose bits become the keys
        key <<= np.uint64(1)
        key |= y.astype(np.uint64)  # the labels 0 and 1 in the freed lowest bit
        key.sort()
        ps = (key >> np.uint64(1)).view(np.float64)  # the sorted p, exactly
        key &= np.uint64(1)  # the labels, in the same order
        tied = not (ps[1:] != ps[:-1]).all() if n > 1 else False
        if tied:
            last = np.empty(n, dtype=bool)
            np.not_equal(ps[1:], ps[:-1], out=last[:-1])
            last[-1] = True
        np.subtract(key, ps, out=ps)
        del key
        np.cumsum(ps, out=ps)
        if not tied:  # every row ends a run of equal predictions
            return np.array([ps.max(), ps.min()]), float(n)
        return _masked_extremes(ps, last), float(n)
    A = np.empty((n, 2))
    A[:, 0] = p
    np.subtract(y, p, out=A[:, 1])
    A[:, 1] *= w
    W = float(w.sum())
    order = np.argsort(p)  # ties are merged below, so the order within a tie is irrelevant
    B = A[order]
    del A, order
    S = np.cumsum(B[:, 1])
    last = np.empty(n, dtype=bool)
    np.not_equal(B[1:, 0], B[:-1, 0], out=last[:-1])
    last[-1] = True
    return _masked_extremes(S, last), W


#: From this many rows on, the compiled passes are used when numba is installed even if it is not
#: yet imported: below, importing numba (once per process) costs more than the call.
_KERNEL_MIN_ROWS = 1 << 16


def _masked_extremes(S, last):
    return np.array([S.max(where=last, initial=-np.inf), S.min(where=last, initial=np.inf)])


def _sorted_runs(values, resid, weight):
    """Merge the ties of sorted ``values``: distinct values with their summed ``resid`` and ``weight``."""
    if values.size == 0:
        return {"values": values.copy(), "resid": resid.copy(), "weight": weight.copy()}
    new = np.empty(values.size, dtype=bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    if new.all():  # no ties (continuous predictions): nothing to add up
        return {"values": values, "resid": resid, "weight": weight}
    ids = np.cumsum(new) - 1
    m = int(ids[-1]) + 1
    return {
        "values": values[new],
        "resid": np.bincount(ids, weights=resid, minlength=m),
        "weight": np.bincount(ids, weights=weight, minlength=m),
    }


def _merge_two(a, b):
    """Merge two sorted runs in linear passes (``searchsorted`` places ``b`` among ``a``), ties added."""
    na, nb = a["values"].size, b["values"].size
    pos = np.searchsorted(a["values"], b["values"], side="right")
    pos += np.arange(nb)
    from_b = np.zeros(na + nb, dtype=bool)
    from_b[pos] = True
    from_a = ~from_b
    out = {}
    for k in ("values", "resid", "weight"):
        x = np.empty(na + nb)
        x[pos] = b[k]
        x[from_a] = a[k]
        out[k] = x
    return _sorted_runs(out["values"], out["resid"], out["weight"])


class CutoffStatistics(BinaryStatistics):
    """Exact, mergeable statistics of the cutoff (or KS) calibration error.

    Parameters
    ----------
    measure : {"cutoff", "ks"}, default="cutoff"
        What :meth:`compute` returns.
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``values`` (sorted distinct predictions), ``resid`` (sum of ``w (y - p)`` per value)
        and ``weight`` (sum of ``w`` per value).

    Examples
    --------
    >>> from skcal.stats import CutoffStatistics
    >>> a = CutoffStatistics().update([1, 0], [0.5, 0.5])
    >>> b = CutoffStatistics().update([1, 1], [0.5, 0.9])
    >>> round((a + b).compute(), 12)
    0.15
    """

    _param_names = ("measure", "pos_label")
    _compute_only_params = ("measure",)
    _parameter_constraints: dict = {"measure": _MEASURE, "pos_label": POS_LABEL}

    def __init__(self, *, measure="cutoff", pos_label=None):
        self.measure = measure
        self.pos_label = pos_label

    def _empty(self):
        return {"values": np.zeros(0), "resid": np.zeros(0), "weight": np.zeros(0)}

    @classmethod
    @validate_params(
        {**VALIDATED_ROWS, "measure": _MEASURE, "pos_label": POS_LABEL}, prefer_skip_nested_validation=True
    )
    @fill(**VALIDATED_ROWS_DOCS)
    def compute_validated(cls, y, p, sample_weight=None, *, measure="cutoff", pos_label=None):
        """Return the cutoff (or KS) error of validated rows, as ``from_validated(...).compute()``.

        One batch needs only the extremes of the running sums, not the sums per distinct
        prediction: one sort of packed keys (:func:`running_sum_extremes`), then
        :func:`cutoff_from_running_sums`. :func:`skcal.cutoff.cutoff_calibration_error` and
        :func:`skcal.ks_calibration_error.ks_calibration_error` compute through it. The arrays are
        only read, so they may come from a validation with ``copy=False``.

        Parameters
        ----------
        {validated_rows}
        measure : {"cutoff", "ks"}, default="cutoff"
            Which error.
        {validated_pos_label}

        Returns
        -------
        float
            The error.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.stats import CutoffStatistics
        >>> CutoffStatistics.compute_validated(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.5, 0.5, 0.5, 0.9]))
        0.15
        """
        extremes, W = _extremes_of_validated(y, p, sample_weight)
        return cutoff_from_running_sums(extremes, W, measure)

    @staticmethod
    def _runs(p, r, w):
        order = np.argsort(p)  # ties are merged below, so the order within a tie is irrelevant
        sums = np.empty((p.shape[0], 2))
        sums[:, 0] = r
        sums[:, 1] = w
        sums = np.take(sums, order, axis=0)  # a gather of whole rows, not fancy indexing
        return _sorted_runs(p[order], sums[:, 0], sums[:, 1])

    def _sums(self, y, p, w):
        w = np.ones(p.shape[0]) if w is None else w
        return self._runs(p, w * (y - p), w)

    def _combine(self, a, b):
        return self._combine_many([a, b])

    def _combine_many(self, parts):
        """Merge any number of states at once: one sort of the concatenated runs, then ties merged.

        Pairwise merging of ``k`` runs would re-sort the accumulated run ``k - 1`` times;
        :func:`skcal.stats.merge_all` (and :mod:`skcal.dask`) merge a whole group of states
        with this.
        """
        parts = [s for s in parts if s["values"].size]
        if not parts:
            return self._empty()
        if len(parts) == 1:
            return {k: v.copy() for k, v in parts[0].items()}
        if len(parts) == 2:
            return _merge_two(*parts)
        values = np.concatenate([s["values"] for s in parts])
        order = np.argsort(values, kind="stable")  # timsort merges the concatenated sorted runs
        # the two sums gathered together as the columns of one array: one random access per row
        sums = np.empty((values.size, 2))
        np.concatenate([s["resid"] for s in parts], out=sums[:, 0])
        np.concatenate([s["weight"] for s in parts], out=sums[:, 1])
        sums = np.take(sums, order, axis=0)  # a gather of whole rows, not fancy indexing
        return _sorted_runs(values[order], sums[:, 0], sums[:, 1])

    def _compute(self):
        s = self.stats_
        return cutoff_from_running_sums(np.cumsum(s["resid"]), float(s["weight"].sum()), self.measure)

    # -- bootstrap replicates: the running sums of every replicate on one sort of the chunk --
    #: the statistics and their replicates keep one entry per distinct prediction (they grow with the rows)
    _variable_shape = _replicate_variable_shape = True

    def _replicate_empty(self, n_replicates):
        # ``resid`` is (values, replicates): the layout of the running sums' column blocks
        return {
            "values": np.zeros(0),
            "resid": np.zeros((0, n_replicates)),
            "weight": np.zeros(n_replicates),
        }

    def _replicate_plan(self, y, p, w, index=None):
        return _SortedRunsPlan(y, p, w)

    def _replicate_combine(self, a, b):
        return combine_replicate_runs(a, b)

    def _replicate_compute(self, stats):
        return replicate_running_sum_error(stats["resid"], stats["weight"], self.measure)


def combine_replicate_runs(a, b):
    """Merge two replicate states of sorted runs: the union of the values, the sums added.

    Parameters
    ----------
    a, b : dict of ndarray
        ``values`` ``(D,)`` sorted, ``resid`` ``(D, R)``, ``weight`` ``(R,)``.

    Returns
    -------
    dict of ndarray
        The merged state.
    """
    if a["values"].size == 0 or b["values"].size == 0:
        base = b if a["values"].size == 0 else a
        weight = a["weight"] + b["weight"]
        return {"values": base["values"].copy(), "resid": base["resid"].copy(), "weight": weight}
    values = np.union1d(a["values"], b["values"])
    resid = np.zeros((values.size, a["resid"].shape[1]))
    resid[np.searchsorted(values, a["values"])] = a["resid"]
    resid[np.searchsorted(values, b["values"])] += b["resid"]
    return {"values": values, "resid": resid, "weight": a["weight"] + b["weight"]}


def replicate_running_sum_error(resid, weight, measure):
    """The cutoff or KS error of every replicate from its sums per distinct prediction.

    Parameters
    ----------
    resid : ndarray of shape (D, R)
        ``sum w (y - p)`` at each distinct prediction (in increasing order) and replicate.
    weight : ndarray of shape (R,)
        Total weight of each replicate.
    measure : {"cutoff", "ks"}
        Which error.

    Returns
    -------
    ndarray of shape (R,)
        The error per replicate, as :func:`cutoff_from_running_sums` (NaN without weight).
    """
    D, R = resid.shape
    if D == 0:
        return np.where(weight > 0, 0.0, np.nan)
    hi, lo = replicate_running_extremes(resid)
    return _extremes_error(hi, lo, weight, measure)[:R]


def _extremes_error(hi, lo, W, measure):
    """:func:`cutoff_from_running_sums` of arrays of extremes (NaN where ``W`` is not positive)."""
    if measure == "ks":
        num = np.maximum(np.abs(hi), np.abs(lo))
    else:
        num = np.maximum(hi, 0.0) - np.minimum(lo, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(W > 0, num / np.where(W > 0, W, 1.0), np.nan)


#: From this many entries (values x replicates) on, the compiled walk is used when numba is
#: installed: below, numpy is about as fast and the first call need not import numba.
_KERNEL_MIN_ENTRIES = 1 << 20


def replicate_running_extremes(resid, use_kernel=None):
    """Largest and smallest running sum of each column of ``resid`` (the replicates' walk).

    With numba installed and ``resid`` large (at least ``2^20`` entries) the walk is
    :func:`skcal._replicate_kernel.running_sum_extremes` (one pass over the values);
    otherwise numpy, a tile of values at a time: each tile transposed to replicate-major order
    (a contiguous cumulative sum per replicate) and offset by the running sum so far. The two
    differ only in the order of the floating-point additions.

    Parameters
    ----------
    resid : ndarray of shape (D, R)
        Sums per distinct value (in increasing order) and replicate; ``D >= 1``.
    use_kernel : bool or None, default=None
        Force (``True``, when numba is installed) or avoid (``False``) the compiled walk;
        ``None`` decides by size.

    Returns
    -------
    hi, lo : ndarray of shape (R,)
        The largest and smallest running sum per replicate.

    Examples
    --------
    >>> import numpy as np
    >>> hi, lo = replicate_running_extremes(np.array([[1.0, -1.0], [-3.0, 2.0], [1.0, 0.5]]))
    >>> hi.tolist(), lo.tolist()
    ([1.0, 1.5], [-2.0, -1.0])
    """
    D, R = resid.shape
    if use_kernel is None:
        use_kernel = D * R >= _KERNEL_MIN_ENTRIES
    kernel = compiled("replicate") if use_kernel else None
    if kernel is not None:
        # ascontiguousarray returns resid itself when it is C-ordered float64 already
        return kernel.running_sum_extremes(np.ascontiguousarray(resid, dtype=np.float64))
    hi, lo, carry = np.full(R, -np.inf), np.full(R, np.inf), np.zeros(R)
    step = max(1, (1 << 16) // max(1, R))
    for a in range(0, D, step):
        S = np.cumsum(np.ascontiguousarray(resid[a : a + step].T), axis=1)
        S += carry[:, None]
        np.maximum(hi, S.max(axis=1), out=hi)
        np.minimum(lo, S.min(axis=1), out=lo)
        carry = S[:, -1].copy()
    return hi, lo


def _sorted_chunk(y, p, w):
    """``(order, p, y - p, w)`` of a chunk in increasing ``p`` (``order`` None when it came sorted)."""
    if is_sorted(p):
        return None, p, y - p, w
    order = np.argsort(p)  # the runs merge tied rows: their order does not matter
    return order, p[order], (y - p)[order], None if w is None else w[order]


class _SortedRunsPlan(ReplicatePlan):
    """The chunk sorted once (not at all when it comes sorted); each replicate's sums per distinct value."""

    def __init__(self, y, p, w):
        self.n_rows = p.shape[0]
        self.order, ps, r, ww = _sorted_chunk(y, p, w)
        new = np.empty(ps.shape[0], dtype=bool)
        if ps.size:
            new[0] = True
            np.not_equal(ps[1:], ps[:-1], out=new[1:])
        self.values = ps[new]
        self.gid = (np.cumsum(new) - 1).astype(np.int64)
        self.r, self.w = r, ww

    def empty(self, n_replicates, scratch=None):
        # Rows come in value order, so a tile's values are the previous tile's last one (a run
        # of ties across the boundary) and new ones. The sums of new values are written, not
        # added: no pass to zero the (values, replicates) array and none to read it back.
        # ``_ready``: the first value no tile has written (every value from it on is unwritten;
        # tiles in any order stay exact, since a tile zeroes the unwritten values up to its last)
        return {
            "values": self.values,
            "resid": self.uninitialised(scratch, "resid", (self.values.size, n_replicates)),
            "weight": np.zeros(n_replicates),
            "_ready": [0],
        }

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        r = self.r[sl] if self.w is None else self.r[sl] * self.w[sl]
        gid = self.gid[sl]
        lo, hi = int(gid[0]), int(gid[-1])
        resid, ready = out["resid"], out["_ready"]
        no_ties = hi - lo + 1 == stop - start  # one row per value
        if no_ties and ready[0] == lo:  # all new: write the products
            np.multiply(W.T, r[:, None], out=resid[lo : hi + 1])
        else:
            if ready[0] <= hi:  # new values from ready[0] on (values below lo come zeroed too)
                resid[ready[0] : hi + 1] = 0.0
            if no_ties:
                resid[lo : hi + 1] += W.T * r[:, None]
            else:
                add_sparse_sums(resid, gid[:, None], r[:, None], W)
        ready[0] = max(ready[0], hi + 1)
        out["weight"] += copies if self.w is None else W @ self.w[sl]
        return out

    def finish(self, out):
        ready = out.pop("_ready")
        out["resid"][ready[0] :] = 0.0  # values no tile reached (none when every tile came)
        return out


def _running_state(shape):
    """The running-sum state of no rows, with ``shape`` (``()``, or ``(R,)`` for replicates)."""
    return {
        "first": np.full(shape, np.inf),
        "last": np.full(shape, -np.inf),
        "total": np.zeros(shape),
        "hi": np.full(shape, -np.inf),
        "lo": np.full(shape, np.inf),
        "weight": np.zeros(shape),
        "n_rows": np.zeros(shape, dtype=np.int64),
    }


def _combine_running(a, b):
    """Concatenate two running-sum states whose predictions do not interleave (in either order)."""
    a_first, b_first = float(np.ravel(a["first"])[0]), float(np.ravel(b["first"])[0])
    if a_first == np.inf:  # no rows
        return {k: np.array(v, copy=True) for k, v in b.items()}
    if b_first == np.inf:
        return {k: np.array(v, copy=True) for k, v in a.items()}
    a_last, b_last = float(np.ravel(a["last"])[0]), float(np.ravel(b["last"])[0])
    if b_last <= a_first and not a_last <= b_first:
        a, b = b, a
        a_last, b_first = b_last, a_first
    elif not a_last <= b_first:
        raise ValueError(
            "SortedCutoffStatistics merges chunks in increasing order of their predictions: these "
            f"interleave ([{a_first!r}, {a_last!r}] and [{b_first!r}, {b_last!r}]); use CutoffStatistics "
            "for chunks in any order."
        )
    T = a["total"]
    # the first part's last row ends a run unless the second part starts with the same prediction
    hi = np.maximum(a["hi"], T + b["hi"])
    lo = np.minimum(a["lo"], T + b["lo"])
    if a_last < b_first:
        hi = np.maximum(hi, T)
        lo = np.minimum(lo, T)
    return {
        "first": np.array(a["first"], copy=True),
        "last": np.array(b["last"], copy=True),
        "total": T + b["total"],
        "hi": hi,
        "lo": lo,
        "weight": a["weight"] + b["weight"],
        "n_rows": a["n_rows"] + b["n_rows"],
    }


def _running_error(s, measure):
    """The cutoff or KS error of running-sum states (arrays of any shape), NaN without weight."""
    hi = np.maximum(s["hi"], s["total"])  # the last row ends its run
    lo = np.minimum(s["lo"], s["total"])
    # at most 1, as cutoff_from_running_sums (the sums and W add in different orders)
    out = np.minimum(_extremes_error(hi, lo, s["weight"], measure), 1.0)
    return np.where(s["first"] < np.inf, out, np.nan)


class SortedCutoffStatistics(BinaryStatistics):
    """Exact cutoff (or KS) calibration error of rows in increasing order of their predictions.

    The cutoff error is ``(max_k S_k - min_k S_k) / W`` over the running sums ``S_k`` of
    ``w (y - p)`` at the ends of runs of tied predictions, taken in increasing ``p`` (with
    ``S_0 = 0``). When the rows come in that order, a fixed state holds it: the running sum so
    far, its largest and smallest value at the run ends passed, and the first and last
    prediction (a chunk whose last prediction equals the next chunk's first has not ended its
    run). ``update`` sorts each chunk; two states merge, in either order, when their predictions
    do not interleave (one chunk's largest is at most the other's smallest), as the partitions
    of rows sorted (or range-partitioned) by prediction do, and otherwise raise a
    ``ValueError``: :class:`CutoffStatistics` merges chunks in any order, with a state of one
    entry per distinct prediction.

    Its bootstrap replicates (:class:`~skcal.stats.PoissonBootstrap`) walk the sorted rows once
    per block of replicates, keeping ``5`` numbers per replicate: the in-memory report computes
    the cutoff error's replicates this way, on its one sort of each model's rows.

    Parameters
    ----------
    measure : {"cutoff", "ks"}, default="cutoff"
        What :meth:`compute` returns.
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``first`` and ``last`` (the smallest and largest prediction, ``inf`` and ``-inf`` for no
        rows), ``total`` (the running sum), ``hi`` and ``lo`` (its extremes at the run ends
        before the last row), ``weight`` and ``n_rows``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import CutoffStatistics, SortedCutoffStatistics
    >>> rng = np.random.default_rng(0)
    >>> p = np.sort(rng.uniform(size=1000))
    >>> y = (rng.uniform(size=1000) < p ** 1.3).astype(int)
    >>> a = SortedCutoffStatistics().update(y[:600], p[:600])
    >>> b = SortedCutoffStatistics().update(y[600:], p[600:])
    >>> bool(np.isclose((b + a).compute(), CutoffStatistics().update(y, p).compute(), rtol=1e-12))
    True
    """

    _param_names = ("measure", "pos_label")
    _compute_only_params = ("measure",)
    _parameter_constraints: dict = {"measure": _MEASURE, "pos_label": POS_LABEL}

    def __init__(self, *, measure="cutoff", pos_label=None):
        self.measure = measure
        self.pos_label = pos_label

    def _empty(self):
        return _running_state(())

    def _sums(self, y, p, w):
        plan = _RunningPlan(y, p, w)
        out = plan.empty(1)
        WT = np.ones((plan.n_rows, 1))
        for a in range(0, plan.n_rows, 1 << 16):
            W = WT[a : a + (1 << 16)].T
            plan.add(out, W, a, min(plan.n_rows, a + (1 << 16)), np.full(1, float(W.shape[1])))
        state = plan.finish(out)
        state["weight"] = np.array(float(p.shape[0]) if w is None else float(w.sum()))
        state["n_rows"] = np.array(p.shape[0], dtype=np.int64)
        return {k: np.asarray(v).reshape(()) for k, v in state.items()}

    def _combine(self, a, b):
        return _combine_running(a, b)

    def _compute(self):
        s = self.stats_
        if float(s["weight"]) <= 0:
            raise ValueError("The statistics hold no rows with positive weight; nothing to compute.")
        return float(_running_error(s, self.measure))

    # -- bootstrap replicates: one walk of the sorted rows per block of replicates ---------------
    def _replicate_empty(self, n_replicates):
        return _running_state((n_replicates,))

    def _replicate_plan(self, y, p, w, index=None):
        return _RunningPlan(y, p, w)

    def _replicate_combine(self, a, b):
        return _combine_running(a, b)

    def _replicate_compute(self, stats):
        return _running_error(stats, self.measure)


class _RunningPlan(ReplicatePlan):
    """Rows sorted once (not at all when they come sorted); each tile folded into the running sums.

    The tiles must come in order (the state is sequential); each row's ``w (y - p)`` and whether
    it ends a run of tied predictions (the chunk's last row does not: the next chunk may continue
    its run, see :func:`_combine_running`) are found once.
    """

    def __init__(self, y, p, w):
        self.n_rows = p.shape[0]
        self.order, ps, r, ww = _sorted_chunk(y, p, w)
        self.r = r if ww is None else r * ww
        self.w = ww
        self.ends = np.zeros(self.n_rows, dtype=bool)
        if self.n_rows > 1:
            np.not_equal(ps[1:], ps[:-1], out=self.ends[:-1])
        self.span = (float(ps[0]), float(ps[-1])) if self.n_rows else (np.inf, -np.inf)
        self.kernel = compiled("replicate") if self.n_rows >= _KERNEL_MIN_FOLD else None

    def empty(self, n_replicates, scratch=None):
        out = _running_state((n_replicates,))
        out["_next"] = [0]
        return out

    def add(self, out, W, start, stop, copies):
        if start != out["_next"][0]:
            raise ValueError("The tiles of sorted rows must come in order.")
        out["_next"][0] = stop
        r, ends = self.r[start:stop], self.ends[start:stop]
        WT = W.T  # (rows, replicates): a row's weights side by side
        if self.kernel is not None and WT.flags.c_contiguous and WT.dtype == np.float64:
            self.kernel.fold_sorted_rows(WT, r, ends, out["total"], out["hi"], out["lo"])
        else:  # the same additions in the same order: the carry enters as the first row's
            P = WT * r[:, None]
            P[0] += out["total"]
            S = np.cumsum(P, axis=0, out=P)
            if ends.any():
                np.maximum(out["hi"], S.max(axis=0, where=ends[:, None], initial=-np.inf), out=out["hi"])
                np.minimum(out["lo"], S.min(axis=0, where=ends[:, None], initial=np.inf), out=out["lo"])
            out["total"][:] = S[-1]
        out["weight"] += copies if self.w is None else W @ self.w[start:stop]
        out["n_rows"] += np.rint(copies).astype(np.int64)
        return out

    def finish(self, out):
        out.pop("_next")
        out["first"][:] = self.span[0]
        out["last"][:] = self.span[1]
        return out


#: From this many rows on, the compiled fold is used when numba is installed.
_KERNEL_MIN_FOLD = 1 << 14


class CutoffGridStatistics(BinaryStatistics):
    """Fixed-size statistics of the cutoff (or KS) error on a grid, with a tested error bound.

    Parameters
    ----------
    n_cells : int, default=65536
        Number of equal cells of [0, 1].
    measure : {"cutoff", "ks"}, default="cutoff"
        What :meth:`compute` returns.
    pos_label : int, float, bool or str, default=None
        The positive class, fixed for every chunk.

    Attributes
    ----------
    stats_ : dict of ndarray
        ``resid`` (sum of ``w (y - p)``), ``abs_resid`` (sum of ``w |y - p|``) and ``weight``
        per cell.

    Examples
    --------
    >>> from skcal.stats import CutoffGridStatistics
    >>> s = CutoffGridStatistics(n_cells=4).update([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9])
    >>> round(s.compute(), 12), round(s.bound(), 12)
    (0.15, 0.75)
    """

    _param_names = ("n_cells", "measure", "pos_label")
    _compute_only_params = ("measure",)
    #: ``n_cells`` is a number of bins of [0, 1], bounded as every number of bins is (``N_BINS``)
    _parameter_constraints: dict = {"n_cells": N_BINS, "measure": _MEASURE, "pos_label": POS_LABEL}

    def __init__(self, *, n_cells=65536, measure="cutoff", pos_label=None):
        self.n_cells = int(n_cells)
        self.measure = measure
        self.pos_label = pos_label

    def _empty(self):
        z = np.zeros(self.n_cells)
        return {"resid": z.copy(), "abs_resid": z.copy(), "weight": z.copy()}

    def _sums(self, y, p, w):
        m = self.n_cells
        ids = np.minimum((p * m).astype(np.intp), m - 1)  # [j/m, (j+1)/m), the last closed
        r = y - p
        if w is not None:
            r *= w
        return {
            "resid": np.bincount(ids, weights=r, minlength=m),
            "abs_resid": np.bincount(ids, weights=np.abs(r), minlength=m),
            "weight": np.bincount(ids, minlength=m).astype(np.float64)
            if w is None
            else np.bincount(ids, weights=w, minlength=m),
        }

    def _compute(self):
        s = self.stats_
        return cutoff_from_running_sums(np.cumsum(s["resid"]), float(s["weight"].sum()), self.measure)

    def bound(self):
        """Return the bound ``exact - compute()`` cannot exceed (``compute() <= exact``).

        Returns
        -------
        float
            ``2 max_j A_j / W`` for the cutoff error, ``max_j A_j / W`` for KS.
        """
        s = self.stats_
        W = float(s["weight"].sum())
        factor = 1.0 if self.measure == "ks" else 2.0
        return float(factor * s["abs_resid"].max() / W)

    # -- bootstrap replicates: one histogram per replicate ----------------------------------
    def _replicate_plan(self, y, p, w, index=None):
        return _CutoffGridPlan(self, y, p, w)

    def _replicate_compute(self, stats):
        S = np.cumsum(stats["resid"], axis=1)
        W = stats["weight"].sum(axis=1)
        return _extremes_error(S.max(axis=1), S.min(axis=1), W, self.measure)

    def _grid_cells(self):
        return int(self.n_cells)

    def _grid_statistics(self, units, column):
        """The cells' sums of ``w (y - p)``, ``w |y - p|`` and ``w`` (unit weights, 0/1 labels)."""
        A = units.grid._cells(int(self.n_cells))
        return {
            "resid": np.ascontiguousarray((A @ (units.Y0 - units.P)).T),
            "abs_resid": np.ascontiguousarray((A @ (units.P + units.Y0 - 2.0 * units.YP)).T),
            "weight": np.ascontiguousarray((A @ units.S0).T),
        }

    def _replicate_bounds(self, stats):
        """Per replicate, :meth:`bound` of its statistics."""
        W = stats["weight"].sum(axis=1)
        factor = 1.0 if self.measure == "ks" else 2.0
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(W > 0, factor * stats["abs_resid"].max(axis=1) / np.where(W > 0, W, 1.0), np.nan)


class _CutoffGridPlan(ReplicatePlan):
    """Replicates of the cutoff grid: the rows' cells are found once (one sparse product a tile).

    The label (in {0, 1}, as :func:`~skcal._validation.check_binary_chunk` gives it) picks which
    of two blocks of cells a row adds to: two entries per row, ``w (y - p)`` and ``w``, whose
    blocks add to the residual and the weight, and whose difference (second block minus first)
    is ``sum w |y - p|`` (a row with ``y = 1`` has ``y - p >= 0``, one with ``y = 0`` has
    ``y - p <= 0``).
    """

    def __init__(self, stats, y, p, w):
        self.stats = stats
        self.n_rows = p.shape[0]
        m = stats.n_cells
        ids = np.minimum((p * m).astype(np.intp), m - 1)
        r = y - p if w is None else (y - p) * w
        base = ids.astype(np.int64) + m * y.astype(np.int64)
        self.rows = base[:, None] + (np.arange(2, dtype=np.int64) * 2 * m)[None, :]
        self.vals = np.column_stack([r, np.ones_like(p) if w is None else w])

    def empty(self, n_replicates, scratch=None):
        return {"_acc": self.zeros(scratch, "acc", (4 * self.stats.n_cells, n_replicates))}

    def add(self, out, W, start, stop, copies):
        sl = slice(start, stop)
        add_sparse_sums(out["_acc"], self.rows[sl], self.vals[sl], W)
        return out

    def finish(self, out):
        acc, m = out["_acc"], self.stats.n_cells
        r0, r1, w0, w1 = (acc[i * m : (i + 1) * m] for i in range(4))
        return {
            "resid": np.ascontiguousarray((r0 + r1).T),
            "abs_resid": np.ascontiguousarray((r1 - r0).T),
            "weight": np.ascontiguousarray((w0 + w1).T),
        }
