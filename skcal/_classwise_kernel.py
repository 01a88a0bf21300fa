"""Compiled classwise quantile-bin sums: two passes over ``P`` instead of a sort per column.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` extra has it too) and is
imported lazily by :mod:`skcal.truthful`, which falls back to its numpy path (one SIMD sort
per column) when numba is missing, the input is small or unusual, or the data are too
concentrated for the two passes to pay (see :func:`bin_sums`). Both paths give the same bins.

The bins are those of :func:`skcal.binning.assign_bins` with ``strategy="quantile"`` and no
weights: each column's sorted positions, ties broken by row index, cut into ``array_split``
groups. Per class column ``j`` and bin ``b`` the result is
``S_jb = sum_{i in b} p_ij - #{i in b : y_i = j}``, what the classwise measures reduce.

How (all exact; ``P`` is read in its memory order, row by row or, for a Fortran-ordered
array such as a pandas frame's values, column by column, so no transpose and no ``(n, k)``
temporary):

1. :func:`histogram` counts every column's values in cells of their IEEE-754 bit patterns:
   for values in ``[2**-40, 1]``, 128 cells per binade (the exponent and the top 7 mantissa
   bits), below that one cell per binade, and one cell for 0 and the subnormals. The cells
   are monotone in the value, so a column's cumulative counts give every cell's first sorted
   position. The same pass validates ``P``: NaN, infinities and values outside ``[0, 1]`` are
   flagged by their bits exactly as the numpy path rejects them (``-0.0`` is 0), and the
   largest ``|row sum - 1|`` is returned (summed in any order: :mod:`skcal.truthful` lets the
   shared validator decide the rows within ``2 k eps`` of its tolerance).
2. A cell whose positions fall in one bin is *inside* that bin; the others (at most
   ``n_bins - 1`` a column) are *edge* cells. :func:`bin_sums` adds every value of an inside
   cell to its bin, counts the labels there, and copies the members of edge cells, in row
   order, to a buffer of exactly the size the counts give (every write is bounded by it, and
   a ``P`` changed since it was counted raises instead).
3. Each edge cell's members are sorted stably by value (so ties keep row order) and take
   the positions that follow the cell's count below; :func:`_bin_of` gives their bins.

The bin sums add the values in row order, where the numpy path adds them in sorted order:
the two agree to round-off (exactly on dyadic data), and the bins and label counts agree
exactly.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["histogram", "bin_sums", "N_CELLS"]

# cell layout, monotone in the value for 0 <= p <= 1 (constants are frozen at compile time)
_FINE_BITS = 7  # 128 cells per binade in the fine range
_FINE_BINADES = 40  # the fine range is [2**-40, 1]
_SHIFT = 52 - _FINE_BITS
_E0 = 1023 - _FINE_BINADES  # biased exponent where the fine range starts (983)
# a value with biased exponent e < _E0 is in coarse cell e (e = 0: zero and subnormals); the
# fine cells follow, 1.0 (exponent 1023, mantissa 0) being the last one
_FINE_BASE = (_E0 << _FINE_BITS) - _E0
N_CELLS = _E0 + (_FINE_BINADES << _FINE_BITS) + 1
# bits read as uint64: the valid values are 0..bits(1.0) and -0.0
_ONE_BITS = np.uint64(0x3FF0000000000000)
_NEG_ZERO_BITS = np.uint64(1 << 63)
_ZERO_BITS = np.uint64(0)


@numba.njit(nogil=True, cache=True, inline="always")
def _cell(x):
    """Cell of a valid value's bits ``x`` (uint64, at most the bits of 1.0; -0.0 mapped to 0)."""
    b = np.int64(x)
    e = b >> 52
    fine = (b >> _SHIFT) - _FINE_BASE
    return fine if e >= _E0 else e


@numba.njit(nogil=True, cache=True, inline="always")
def _bin_of(r, q, rem, big):
    """Bin of sorted position ``r`` in ``array_split`` groups: ``rem`` of size ``q + 1``, then
    of size ``q`` (``big = rem * (q + 1)``), as :func:`skcal.binning.rank_to_bin`."""
    return r // (q + 1) if r < big else rem + (r - big) // q


@numba.njit(nogil=True, cache=True, fastmath=True, inline="always")
def _row_sum(row):
    """Sum of a row in any order (fastmath lets it vectorise; only compared with a tolerance)."""
    s = 0.0
    for v in row:
        s += v
    return s


@numba.njit(nogil=True, cache=True, inline="always")
def _count(counts, j, x):
    """Count the value with bits ``x`` in column ``j``; True if it is invalid (counted as 0).

    Above the bits of 1.0 lie values above 1, infinities, NaN, negative values and -0.0 (which
    is 0 and valid).
    """
    bad = False
    if x > _ONE_BITS:
        bad = x != _NEG_ZERO_BITS
        x = _ZERO_BITS
    counts[j, _cell(x)] += 1
    return bad


@numba.njit(nogil=True, cache=True)
def _histogram_rows(P):
    """:func:`histogram` of a C-contiguous ``P``, read row by row."""
    n, k = P.shape
    bits = P.view(np.uint64)
    counts = np.zeros((k, N_CELLS), np.int32)
    bad = False
    dev = 0.0
    for i in range(n):
        d = abs(_row_sum(P[i]) - 1.0)
        if d > dev or d != d:  # a NaN row sum stays
            dev = d
        for j in range(k):
            bad |= _count(counts, j, bits[i, j])
    return counts, bad, dev


@numba.njit(nogil=True, cache=True)
def _histogram_columns(PT):
    """:func:`histogram` of a Fortran-ordered ``P``, given as ``PT = P.T`` (C-contiguous ``(k, n)``)
    and read column by column."""
    k, n = PT.shape
    bits = PT.view(np.uint64)
    counts = np.zeros((k, N_CELLS), np.int32)
    row_sums = np.zeros(n)
    bad = False
    for j in range(k):
        for i in range(n):
            row_sums[i] += PT[j, i]
        for i in range(n):
            bad |= _count(counts, j, bits[j, i])
    dev = 0.0
    for i in range(n):
        d = abs(row_sums[i] - 1.0)
        if d > dev or d != d:  # a NaN row sum stays
            dev = d
    return counts, bad, dev


def histogram(P):
    """Per-column cell counts of ``P`` (float64, C- or Fortran-contiguous, ``n < 2**31``) and its
    validity, in one pass in ``P``'s memory order.

    Returns ``(counts, bad, max_row_dev)``: ``counts`` of shape ``(k, N_CELLS)`` (int32),
    ``bad`` True if an entry is NaN, infinite or outside ``[0, 1]``, and the largest
    ``|sum_j P_ij - 1|`` (NaN if a row sum is NaN).
    """
    if P.flags.c_contiguous:
        return _histogram_rows(P)
    return _histogram_columns(P.T)


@numba.njit(nogil=True, cache=True, inline="always")
def _lookup(table, j, x):
    """Table entry of column ``j`` for a valid value's bits ``x`` (-0.0 read as 0)."""
    return table[j, _cell(x if x <= _ONE_BITS else _ZERO_BITS)]


@numba.njit(nogil=True, cache=True, inline="always")
def _scatter_buffers(k, n_bins, offsets):
    """Pass 2's outputs and the edge cells' write positions."""
    m = offsets[-1]
    return (
        np.zeros((k, n_bins)),
        np.zeros((k, n_bins), np.int64),
        np.empty(m),
        np.zeros(m, np.bool_),
        offsets[:-1].copy(),
    )


@numba.njit(nogil=True, cache=True, inline="always")
def _all_filled(ptr, offsets):
    """Whether every edge cell received exactly the members its count announced."""
    for g in range(ptr.shape[0]):
        if ptr[g] != offsets[g + 1]:
            return False
    return True


@numba.njit(nogil=True, cache=True)
def _scatter(P, codes, table, offsets, n_bins):
    """Pass 2: inside cells into ``sums`` / ``labels``; edge-cell members into the buffer.

    Every write is bounded by the buffer the counts sized; ``ok`` is False when ``P`` does not
    agree with those counts (it changed between the passes).
    """
    n, k = P.shape
    bits = P.view(np.uint64)
    sums, labels, values, is_label, ptr = _scatter_buffers(k, n_bins, offsets)
    ok = True
    for i in range(n):
        for j in range(k):
            t = _lookup(table, j, bits[i, j])
            if t >= 0:
                sums[j, t] += P[i, j]
            else:
                g = -1 - t
                p = ptr[g]
                if p < offsets[g + 1]:
                    values[p] = P[i, j]
                    ptr[g] = p + 1
                else:
                    ok = False
        r = codes[i]
        t = _lookup(table, r, bits[i, r])
        if t >= 0:
            labels[r, t] += 1
        elif ptr[-1 - t] > offsets[-1 - t]:
            # (i, r) was the last member added to its edge cell (a cell is one column's)
            is_label[ptr[-1 - t] - 1] = True
        else:
            ok = False
    return sums, labels, values, is_label, ok and _all_filled(ptr, offsets)


@numba.njit(nogil=True, cache=True)
def _scatter_columns(PT, members, bounds, table, offsets, n_bins):
    """:func:`_scatter` of a Fortran-ordered ``P`` given as ``PT = P.T``, column by column.

    ``members[bounds[j]:bounds[j + 1]]`` are the increasing rows whose label is column ``j``.
    """
    k, n = PT.shape
    bits = PT.view(np.uint64)
    sums, labels, values, is_label, ptr = _scatter_buffers(k, n_bins, offsets)
    ok = True
    for j in range(k):
        mp = bounds[j]
        nxt = members[mp] if mp < bounds[j + 1] else n
        for i in range(n):
            t = _lookup(table, j, bits[j, i])
            hit = i == nxt
            if hit:
                mp += 1
                nxt = members[mp] if mp < bounds[j + 1] else n
            if t >= 0:
                sums[j, t] += PT[j, i]
                if hit:
                    labels[j, t] += 1
            else:
                g = -1 - t
                p = ptr[g]
                if p < offsets[g + 1]:
                    values[p] = PT[j, i]
                    is_label[p] = hit
                    ptr[g] = p + 1
                else:
                    ok = False
    return sums, labels, values, is_label, ok and _all_filled(ptr, offsets)


@numba.njit(nogil=True, cache=True)
def _resolve(sums, labels, values, is_label, offsets, cell_column, cell_below, n, n_bins):
    """Pass 3: rank each edge cell's members (stable by value: ties keep row order)."""
    q = n // n_bins
    rem = n - q * n_bins
    big = rem * (q + 1)
    for g in range(offsets.shape[0] - 1):
        a = offsets[g]
        seg = values[a : offsets[g + 1]]
        order = np.argsort(seg, kind="mergesort")
        j = cell_column[g]
        for t in range(seg.shape[0]):
            r = cell_below[g] + t
            b = _bin_of(r, q, rem, big)
            o = order[t]
            sums[j, b] += seg[o]
            if is_label[a + o]:
                labels[j, b] += 1


@numba.njit(nogil=True, cache=True)
def _count_edge_cells(counts, n, n_bins):
    """Number of edge cells (positions in more than one bin) and the members they hold."""
    k, n_cells = counts.shape
    q = n // n_bins
    rem = n - q * n_bins
    big = rem * (q + 1)
    n_edge = 0
    total = 0
    for j in range(k):
        below = 0
        for c in range(n_cells):
            m = np.int64(counts[j, c])
            if m:
                r0 = below
                r1 = below + m - 1
                if _bin_of(r0, q, rem, big) != _bin_of(r1, q, rem, big):
                    n_edge += 1
                    total += m
                below += m
    return n_edge, total


@numba.njit(nogil=True, cache=True)
def _fill_tables(counts, n, n_bins, table, cell_column, cell_below, offsets):
    """``table[j, c]``: the bin of an inside cell, ``-1 - g`` for edge cell ``g``; the edge cells'
    columns, counts below and buffer offsets. An empty cell gets a valid bin too."""
    k, n_cells = counts.shape
    q = n // n_bins
    rem = n - q * n_bins
    big = rem * (q + 1)
    g = 0
    offsets[0] = 0
    for j in range(k):
        below = 0
        for c in range(n_cells):
            m = np.int64(counts[j, c])
            r0 = min(below, n - 1)
            r1 = max(below + m - 1, r0)
            b0 = _bin_of(r0, q, rem, big)
            if b0 != _bin_of(r1, q, rem, big):
                table[j, c] = -1 - g
                cell_column[g] = j
                cell_below[g] = below
                offsets[g + 1] = offsets[g] + m
                g += 1
            else:
                table[j, c] = b0
            below += m


def bin_sums(P, codes, counts, n_bins, *, max_members=None, parts=False):
    """``S_jb = sum_{i in b} P_ij - #{i in b: y_i = j}`` of shape ``(k, n_bins)``, or None.

    ``P`` is the array :func:`histogram` counted (valid; C- or Fortran-contiguous), ``codes``
    the labels as column indices (intp), ``1 <= n_bins <= n``. Returns None, having allocated nothing of size
    ``n``, when the edge cells hold more than ``max_members`` values (default ``n k / 4``:
    heavily tied or concentrated columns), for which one sort per column is faster. Besides
    the result and the members' buffer it allocates a table of ``k * N_CELLS`` int16 (int32
    past 32767 bins or edge cells). Raises RuntimeError if ``P`` changed since it was
    counted (every write stays inside its buffer whatever ``P`` holds).
    ``parts=True`` returns the two terms apart: ``sum_{i in b} P_ij`` and the label counts.
    """
    n, k = P.shape
    n_edge, total = _count_edge_cells(counts, n, n_bins)
    if max_members is None:
        max_members = (n * k) // 4
    if total > max_members:
        return None
    dtype = np.int16 if max(n_bins, n_edge) <= np.iinfo(np.int16).max else np.int32
    table = np.empty((k, N_CELLS), dtype=dtype)
    cell_column = np.empty(n_edge, dtype=np.int64)
    cell_below = np.empty(n_edge, dtype=np.int64)
    offsets = np.empty(n_edge + 1, dtype=np.int64)
    _fill_tables(counts, n, n_bins, table, cell_column, cell_below, offsets)
    if P.flags.c_contiguous:
        sums, labels, values, is_label, ok = _scatter(P, codes, table, offsets, n_bins)
    else:  # Fortran order: column by column, with each column's label rows in order
        members = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[members], np.arange(k + 1))
        sums, labels, values, is_label, ok = _scatter_columns(P.T, members, bounds, table, offsets, n_bins)
    if not ok:
        raise RuntimeError(
            "y_proba changed while the classwise measure read it (its two passes disagree); "
            "pass an array that no other thread writes to."
        )
    _resolve(sums, labels, values, is_label, offsets, cell_column, cell_below, n, n_bins)
    if parts:
        return sums, labels
    sums -= labels
    return sums
