"""Per-block, per-bin sufficient statistics of validated rows: the monitor's hot path.

For complete blocks of ``block_size`` rows, every block's count, positive labels, ``sum p``,
``sum p`` over the positive rows and ``sum x^2`` (``x = y - p``) in each of ``n_bins``
equal-width right-closed bins (the rule of :class:`skcal.stats.BinnedStatistics`: bin ``j`` is
``(j / K, (j + 1) / K]``, the first bin also holds 0). The capital of
:mod:`skcal.monitor._betting` reads the first four split by label (``n0, sum_{y=0} p, n1,
sum_{y=1} p``); the bands and the measures read ``count``, ``sum x = n1 - sum p`` and
``sum x^2``. Three ``np.bincount`` passes cover many blocks at once (the slot of a row is
``block * 2 (K + 1) + 2 ceil(p K) + y``, slot 0 holding ``p = 0`` until it is folded into the
first bin), over slices of ``CHUNK_ROWS`` rows that stay in cache and reuse their buffers.

Every sum adds a block's rows in row order, so a block's sums do not depend on which other
blocks were computed with it: the basis of the monitor's invariance to batching.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CHUNK_ROWS", "block_sums", "SUM_NAMES", "sum_x"]

#: Rows per inner slice (rounded down to whole blocks, at least one block).
CHUNK_ROWS = 1 << 16
#: The per-bin sums of a block, in the order :func:`block_sums` returns them.
SUM_NAMES = ("count", "positives", "sum_p", "sum_p_pos", "sum_x2")


def _chunk(block_size):
    return max(1, CHUNK_ROWS // block_size) * block_size


def block_sums(y, p, n_bins, block_size):
    """Per-block, per-bin sums of rows whose number is a multiple of ``block_size``.

    A row's slot is ``2 ceil(p K) + y`` within its block, so one unweighted ``np.bincount``
    counts the rows and the positive labels of every bin and two weighted ones give ``sum p``
    and ``sum p^2`` split by label; then ``sum x = n_1 - sum p`` and
    ``sum x^2 = n_1 - 2 sum_{y=1} p + sum p^2`` (as ``y^2 = y``): three passes instead of four.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1} (bool, integer or float), validated.
    p : ndarray of float64 of shape (n,)
        Probabilities in [0, 1], validated.
    n_bins, block_size : int

    Returns
    -------
    dict
        ``count`` and ``positives`` (int64), ``sum_p``, ``sum_p_pos`` (``sum p`` over the rows
        with ``y = 1``) and ``sum_x2``, each of shape ``(n // block_size, n_bins)``.
    """
    n = p.shape[0]
    nb = n // block_size
    K = n_bins
    M = 2 * (K + 1)  # slots per block: (ceil(p K), y)
    counts = np.empty((nb, M), dtype=np.int64)
    sum_p = np.empty((nb, M))
    sum_p2 = np.empty((nb, M))
    rows = min(_chunk(block_size), nb * block_size)
    t = np.empty(rows)
    ids = np.empty(rows, dtype=np.intp)
    offsets = np.repeat(np.arange(rows // block_size, dtype=np.float64) * M, block_size)
    for s in range(0, nb * block_size, rows):
        e = min(s + rows, nb * block_size)
        r = e - s
        nbc = r // block_size
        b0 = s // block_size
        pc, tc, ic = p[s:e], t[:r], ids[:r]
        np.multiply(pc, K, out=tc)
        np.ceil(tc, out=tc)  # 0 for p = 0, else the right-closed bin + 1 (exact: K is a power of 2)
        tc += tc
        tc += y[s:e]
        tc += offsets[:r]
        ic[...] = tc
        m = nbc * M
        counts[b0 : b0 + nbc] = np.bincount(ic, minlength=m).reshape(nbc, M)
        sum_p[b0 : b0 + nbc] = np.bincount(ic, weights=pc, minlength=m).reshape(nbc, M)
        np.multiply(pc, pc, out=tc)
        sum_p2[b0 : b0 + nbc] = np.bincount(ic, weights=tc, minlength=m).reshape(nbc, M)
    for a in (counts, sum_p, sum_p2):  # p = 0 belongs to the first bin
        a[:, 2:4] += a[:, 0:2]
    n0, n1 = counts[:, 2::2], counts[:, 3::2]
    p0, p1 = sum_p[:, 2::2], sum_p[:, 3::2]
    return {
        "count": n0 + n1,
        "positives": np.ascontiguousarray(n1),
        "sum_p": p0 + p1,
        "sum_p_pos": np.ascontiguousarray(p1),
        "sum_x2": (n1 - 2.0 * p1) + (sum_p2[:, 2::2] + sum_p2[:, 3::2]),
    }


def sum_x(sums):
    """``sum (y - p)`` per bin from the sums of :func:`block_sums` (``positives - sum_p``)."""
    return sums["positives"] - sums["sum_p"]
