"""Compiled consistency resamples: Bernoulli labels from a counter-based stream, and the cutoff null.

This module needs numba (``pip install "skcal[fast]"``; the ``test`` and ``bench`` extras have
it too) and is imported lazily by :mod:`skcal.calibration_test`, whose numpy path draws the
very same labels (bit for bit) and computes the same null values when numba is missing. The
generator (SplitMix64 words, one byte per row and replicate, a byte equal to ``p``'s first byte
decided by the next bytes) and the bounds are defined in :mod:`skcal.calibration_test`; this
module is their compiled form:

* :func:`splitmix64` is the SplitMix64 output function (Steele, Lea and Flood, 2014); word
  ``j`` of a test's stream is ``splitmix64(key + (j + 1) * GAMMA)`` (uint64 arithmetic).
* :func:`draw_labels` writes the labels of a block of replicates (rows in sorted order).
* :func:`cutoff_null` computes the cutoff statistic of a block of replicates without writing
  their labels (its docstring says how the work per row is kept to a byte comparison).

The tables come from :func:`skcal.calibration_test.group_tables`: per group of eight sorted
rows, ``Q1`` / ``Q2`` (the packed first and second bytes of ``p``'s 64-bit expansion),
``VALID`` (rows present with ``p < 1``) and ``ONE`` (rows with ``p = 1``) as the top bit of
each byte; per row, ``P64 = floor(p 2^64)``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import intrinsic

__all__ = ["CHUNK_GROUPS", "GAMMA", "cutoff_null", "draw_labels", "splitmix64"]

#: The golden-ratio increment of SplitMix64.
GAMMA = np.uint64(0x9E3779B97F4A7C15)
#: Groups of eight rows per chunk: a chunk's tables stay in the cache for every replicate.
CHUNK_GROUPS = 512
#: Groups per super-group, the step of the first sweep's running count.
SUPER = 8

_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)
_H = np.uint64(0x8080808080808080)
_L7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S7 = np.uint64(7)
_FF = np.uint64(0xFF)
_ONE = np.uint64(1)
_EIGHT = np.uint64(8)
_SIXTY_FOUR = np.uint64(64)
_BIG = np.int64(2**62)


@intrinsic
def _popcount(typingctx, x):
    """LLVM's ``ctpop`` of an integer (one instruction, vectorised where the CPU has it)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@numba.njit(nogil=True, cache=True, inline="always")
def splitmix64(z):
    """The SplitMix64 output function of the state ``z`` (uint64)."""
    z = (z ^ (z >> _S30)) * _C1
    z = (z ^ (z >> _S27)) * _C2
    return z ^ (z >> _S31)


@numba.njit(nogil=True, cache=True, inline="always")
def _compare(x, q):
    """Bytes of ``x`` against bytes of ``q``: ``(x_b < q_b, x_b == q_b)`` as the top bit of byte ``b``.

    No carry crosses a byte: ``(x | H) - (q & L7)`` holds ``x_b & 0x7F >= q_b & 0x7F`` in each
    top bit, and ``(e & L7) + L7`` sets it for a nonzero low part of ``e = x ^ q``.
    """
    d = (x | _H) - (q & _L7)
    lt = ((~x & q) | (~(x ^ q) & ~d)) & _H
    e = x ^ q
    eq = ~(((e & _L7) + _L7) | e) & _H
    return lt, eq


@numba.njit(nogil=True, cache=True)
def _first_pass(base, m1, g0, Q1, Q2, VALID, ONE, LT, TIE, PC):
    """Labels of the groups ``g0, g0 + 1, ...`` (one entry of the tables each, sliced from
    group ``g0``) decided by two bytes, and their number of ones ``PC``.

    ``LT`` gets the rows decided 1 and ``TIE`` the rows whose first two bytes equal ``p``'s
    (about one row in 65,536, decided by :func:`_resolve`). The second word is computed for every
    group (vectorised) rather than for the one in 32 that holds a tie of the first byte.
    """
    for j in range(Q1.shape[0]):
        g = np.uint64(g0 + j)
        x1 = splitmix64(base + GAMMA * g)
        x2 = splitmix64(base + GAMMA * (m1 + g))
        lt1, eq1 = _compare(x1, Q1[j])
        lt2, eq2 = _compare(x2, Q2[j])
        eq1 = eq1 & VALID[j]
        lt = (lt1 & VALID[j]) | (eq1 & lt2) | ONE[j]
        LT[j] = lt
        TIE[j] = eq1 & eq2
        PC[j] = np.int64(_popcount(lt))


@numba.njit(nogil=True, cache=True)
def _resolve(lt, tie, base, m1, g, P64):
    """Decide the rows of group ``g`` tied through two bytes: byte ``l`` (3..8) of row
    ``8 g + b`` is byte ``b`` of word ``(l - 1) m1 + g`` of the replicate's stream (state
    ``base``), compared with byte ``l`` of ``P64``; a row tied through all eight bytes
    (``U = floor(p 2^64) / 2^64``) is 0."""
    for b in range(8):
        bit = np.uint64(0x80) << (_EIGHT * np.uint64(b))
        if not (tie & bit):
            continue
        shift = _EIGHT * np.uint64(b)
        pv = P64[8 * g + b]
        for level in range(3, 9):
            word = splitmix64(base + GAMMA * (np.uint64(level - 1) * m1 + np.uint64(g)))
            xb = (word >> shift) & _FF
            pb = (pv >> (_SIXTY_FOUR - _EIGHT * np.uint64(level))) & _FF
            if xb < pb:
                lt |= bit
                break
            if xb > pb:
                break
    return lt


@numba.njit(nogil=True, cache=True)
def _chunk_labels(base, m1, c0, c1, Q1, Q2, VALID, ONE, P64, LT, TIE, PC):
    """The label words ``LT`` (and counts ``PC``) of the groups ``c0 .. c1 - 1``, ties decided."""
    _first_pass(base, m1, c0, Q1[c0:c1], Q2[c0:c1], VALID[c0:c1], ONE[c0:c1], LT, TIE, PC)
    any_tie = np.uint64(0)
    for j in range(c1 - c0):
        any_tie |= TIE[j]
    if any_tie:  # about one chunk in 16
        for j in range(c1 - c0):
            if TIE[j]:
                LT[j] = _resolve(LT[j], TIE[j], base, m1, c0 + j, P64)
                PC[j] = np.int64(_popcount(LT[j]))


@numba.njit(nogil=True, cache=True, inline="always")
def _super_count(PC, j0, k):
    """Ones in the groups ``j0 .. min(j0 + SUPER, k) - 1`` of a chunk."""
    if j0 + SUPER <= k:
        a = PC[j0] + PC[j0 + 1] + PC[j0 + 2] + PC[j0 + 3]
        return a + PC[j0 + 4] + PC[j0 + 5] + PC[j0 + 6] + PC[j0 + 7]
    t = np.int64(0)
    for j in range(j0, k):
        t += PC[j]
    return t


@numba.njit(nogil=True, cache=True)
def draw_labels(key, r0, L, Q1, Q2, VALID, ONE, P64, n, out):
    """Labels of replicates ``r0 .. r0 + B - 1`` into ``out`` (uint8, shape ``(B, n)``, sorted rows).

    Replicate ``r`` uses the words ``r L .. (r + 1) L - 1`` of the stream (``L = 8 m1`` for
    ``m1`` groups of eight rows).
    """
    B = out.shape[0]
    ng = Q1.shape[0]
    m1 = np.uint64(ng)
    LT = np.empty(CHUNK_GROUPS, np.uint64)
    TIE = np.empty(CHUNK_GROUPS, np.uint64)
    PC = np.empty(CHUNK_GROUPS, np.int64)
    for rr in range(B):
        base = key + GAMMA * (_ONE + np.uint64(r0 + rr) * L)
        for c0 in range(0, ng, CHUNK_GROUPS):
            c1 = min(ng, c0 + CHUNK_GROUPS)
            _chunk_labels(base, m1, c0, c1, Q1, Q2, VALID, ONE, P64, LT, TIE, PC)
            for j in range(c1 - c0):
                g8 = 8 * (c0 + j)
                lt = LT[j]
                for b in range(min(8, n - g8)):
                    out[rr, g8 + b] = np.uint8((lt >> (_EIGHT * np.uint64(b) + _S7)) & _ONE)


@numba.njit(nogil=True, cache=True)
def _walk(lt, ca, g8, stop, last, P, h, l_):
    """Running sums of the rows of one group (count ``ca`` before it) at the ends of tie runs."""
    for b in range(stop):
        ca += np.int64((lt >> (_EIGHT * np.uint64(b) + _S7)) & _ONE)
        if last[g8 + b]:
            s = np.float64(ca) - P[g8 + b]
            if s > h:
                h = s
            if s < l_:
                l_ = s
    return h, l_


@numba.njit(nogil=True, cache=True)
def cutoff_null(key, r0, L, Q1, Q2, VALID, ONE, P64, BND, BS, P, last, w, n, out):
    """``max(S, 0) - min(S, 0)`` of each replicate's running sums, into ``out`` (float64, ``(B,)``).

    ``P`` is the running sum of ``w p`` in sorted order, ``last`` marks the last row of each run
    of tied predictions (where ``S_i = C_i - P_i`` is evaluated, ``C_i`` the running sum of
    ``w y*``), ``w`` the sorted weights or an empty array for unit weights. Unweighted only:
    ``BND`` holds per group of eight rows and ``BS`` per super-group of :data:`SUPER` groups, as
    int64, ``floor(P)`` at the first run end and ``ceil(P)`` at the last run end (``BND`` and
    ``BS``, columns 0 and 1), ``ceil(P)`` plus the rows after the last run end, and ``floor(P)``,
    at the last run end (``BS``, columns 2 and 3); ``+-2**62`` where there is no run end.

    The rows go in chunks of :data:`CHUNK_GROUPS` groups of eight, every replicate of the block
    taking a chunk before the next one is read (so that its tables stay in the cache); each
    group's labels are decided by two random words (vectorised over the groups). Weighted, the
    rows are then walked one by one. Unweighted, a first sweep keeps integers only: the running
    count ``C`` at the end of every super-group, hence per chunk the outer bounds
    ``C_end - floor(P_first)`` (above every running sum of a super-group: ``C`` and ``P``
    increase along the rows, and a rounded difference never passes an integer that bounds the
    exact one) and ``C_start - ceil(P_last)`` (below them), and per replicate the inner bounds
    ``C_end - rows after - ceil(P)`` (below the running sum at a super-group's last run end) and
    ``C_end - floor(P)`` (above it). A second sweep draws again only the chunks whose outer
    bounds reach the inner ones (the stream is counter-based: no label is stored) and walks row
    by row only their groups whose own bounds do; the largest and the smallest running sums lie
    in those groups, so the result is that of walking every row.
    """
    B = out.shape[0]
    ng = Q1.shape[0]
    nc = (ng + CHUNK_GROUPS - 1) // CHUNK_GROUPS
    m1 = np.uint64(ng)
    weighted = w.shape[0] > 0
    bases = np.empty(B, np.uint64)
    for rr in range(B):
        bases[rr] = key + GAMMA * (_ONE + np.uint64(r0 + rr) * L)
    C = np.zeros(B, np.int64)
    Cw = np.zeros(B, np.float64)
    hi = np.zeros(B, np.float64)
    lo = np.zeros(B, np.float64)
    thi = np.zeros(B, np.int64)
    tlo = np.zeros(B, np.int64)
    c_start = np.empty((B, nc), np.int64)
    umax = np.empty((B, nc), np.int64)
    lmin = np.empty((B, nc), np.int64)
    LT = np.empty(CHUNK_GROUPS, np.uint64)
    TIE = np.empty(CHUNK_GROUPS, np.uint64)
    PC = np.empty(CHUNK_GROUPS, np.int64)
    for ci in range(nc):
        c0 = ci * CHUNK_GROUPS
        c1 = min(ng, c0 + CHUNK_GROUPS)
        k = c1 - c0
        s0 = c0 // SUPER
        for rr in range(B):
            base = bases[rr]
            _chunk_labels(base, m1, c0, c1, Q1, Q2, VALID, ONE, P64, LT, TIE, PC)
            if weighted:
                cw = Cw[rr]
                h = hi[rr]
                l_ = lo[rr]
                for i in range(8 * c0, min(n, 8 * c1)):
                    if (LT[(i >> 3) - c0] >> (_EIGHT * np.uint64(i & 7) + _S7)) & _ONE:
                        cw = cw + w[i]
                    if last[i]:
                        s = cw - P[i]
                        if s > h:
                            h = s
                        if s < l_:
                            l_ = s
                Cw[rr] = cw
                hi[rr] = h
                lo[rr] = l_
                continue
            c = C[rr]
            c_start[rr, ci] = c
            um = -_BIG
            lm = _BIG
            th = thi[rr]
            tl = tlo[rr]
            for s in range((k + SUPER - 1) // SUPER):
                lm = min(lm, c - BS[s0 + s, 1])
                c += _super_count(PC, SUPER * s, k)
                um = max(um, c - BS[s0 + s, 0])
                th = max(th, c - BS[s0 + s, 2])
                tl = min(tl, c - BS[s0 + s, 3])
            C[rr] = c
            umax[rr, ci] = um
            lmin[rr, ci] = lm
            thi[rr] = th
            tlo[rr] = tl
    if not weighted:
        for rr in range(B):
            base = bases[rr]
            th = thi[rr]
            tl = tlo[rr]
            h = 0.0
            l_ = 0.0
            for ci in range(nc):
                if umax[rr, ci] < th and lmin[rr, ci] > tl:
                    continue
                c0 = ci * CHUNK_GROUPS
                c1 = min(ng, c0 + CHUNK_GROUPS)
                k = c1 - c0
                s0 = c0 // SUPER
                _chunk_labels(base, m1, c0, c1, Q1, Q2, VALID, ONE, P64, LT, TIE, PC)
                c = c_start[rr, ci]
                for s in range((k + SUPER - 1) // SUPER):
                    cs = c
                    c += _super_count(PC, SUPER * s, k)
                    if c - BS[s0 + s, 0] < th and cs - BS[s0 + s, 1] > tl:
                        continue
                    for j in range(SUPER * s, min(k, SUPER * s + SUPER)):
                        g = c0 + j
                        ce = cs + PC[j]
                        if ce - BND[g, 0] >= th or cs - BND[g, 1] <= tl:
                            h, l_ = _walk(LT[j], cs, 8 * g, min(8, n - 8 * g), last, P, h, l_)
                        cs = ce
            hi[rr] = h
            lo[rr] = l_
    for rr in range(B):
        out[rr] = hi[rr] - lo[rr]
