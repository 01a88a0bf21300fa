"""Chebyshev moments of the same rows under many weightings: the bootstrap replicates of CE2's statistics."""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import DEGREE
from skcal._threads import one_blas_thread
from skcal.chebyshev._basis import (
    CHUNK_FLOATS,
    check_engine_scores,
    check_engine_targets,
    map_validated,
    vander_rows,
)

__all__ = ["replicate_moments"]

#: :func:`replicate_moments` forms the cross moments from the rows with a nonzero target alone
#: where fewer than this fraction of a chunk's rows have one (the threshold where the gather
#: pays for itself, measured in ``docs/benchmarks/report_scale.md``).
_SPARSE_TARGETS = 0.65


@validate_params(
    {
        "scores": ["array-like"],
        "targets": ["array-like"],
        "weights": ["array-like"],
        "degree": DEGREE,
        "check_input": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def replicate_moments(scores, targets, weights, degree, *, check_input=True):
    """The moments ``M`` and ``AtB`` of :class:`ChebyshevMoments` for several weightings of the same rows.

    For weightings ``w_r`` (rows of ``weights``) of the rows ``(x_n, y_n)`` with targets
    ``t_n``, ``M[r, p, q] = sum_n w_rn T_p(x_n) T_q(y_n)`` (``p, q <= 2L``) and
    ``AtB[r, k, i, j] = sum_n w_rn t_nk T_i(x_n) T_j(y_n)`` (``i, j <= L``), exactly what
    :meth:`ChebyshevMoments.update` adds with ``sample_weight=w_r``. The Chebyshev values of
    the rows are formed once (two ``(2L + 1) x n`` recurrences, no gathered design matrix), and
    every weighting's ``M`` is one matrix product (one more per target gives ``AtB``), a
    sub-chunk of rows at a time: with fewer weightings ``R`` than ``2L + 1`` the weighted
    ``T_q(y_n)`` of every weighting side by side times the ``T_p(x_n)``, otherwise the weights
    times the rows' products ``T_p(x_n) T_q(y_n)`` (whichever temporary is smaller). Where every
    row has the same second score (a first-order model, ``sigma2 = 0``), ``T_q(y_n)`` is one
    number per ``q`` and the weights meet the ``2L + 1`` values of ``x`` alone (about ``2L + 1``
    times fewer operations; the same moments up to round-off). Rows whose targets are all 0
    add nothing to ``AtB``: where they are many (votes with no positive label), the cross
    moments are formed from the other rows' weights alone. This is how the bootstrap replicates
    of CE2's statistics are made.

    Parameters
    ----------
    scores : array-like of shape (n, 1) or (n, 2)
        Scores ``m`` or ``(m, sigma2)`` (``m`` in [0, 1], ``sigma2`` in [0, 1/4]).
    targets : array-like of shape (n, n_targets) or (n,)
        Finite regression targets.
    weights : array-like of shape (R, n)
        Finite non-negative weights, one row per weighting.
    degree : int
        The degree ``L``.
    check_input : bool, default=True
        Check that the weights are finite and non-negative (two passes over them). Pass
        ``False`` only for weights that cannot be otherwise, such as the bootstrap's Poisson
        counts (as :meth:`skcal.stats.PoissonBootstrap.update` takes ``check_input``); the
        shapes are checked either way.

    Returns
    -------
    M : ndarray of shape (R, 2L + 1, 2L + 1) or (R, 2L + 1, 1)
        The moment matrices (one column for one-column scores).
    AtB : ndarray of shape (R, n_targets, L + 1, L + 1) or (R, n_targets, L + 1, 1)
        The cross moments.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.chebyshev import ChebyshevMoments, replicate_moments
    >>> S = np.array([[0.1, 0.01], [0.5, 0.2], [0.9, 0.05]])
    >>> t = np.array([0.0, 1.0, 1.0])
    >>> W = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]])
    >>> M, AtB = replicate_moments(S, t, W, degree=1)
    >>> one = ChebyshevMoments.from_data(S, t, degree=1, sample_weight=W[1])
    >>> bool(np.allclose(M[1], one.M)), bool(np.allclose(AtB[1], one.AtB)), M.shape, AtB.shape
    (True, True, (2, 3, 3), (2, 1, 2, 2))
    """
    S = check_engine_scores(scores)
    n = S.shape[0]
    T = check_engine_targets(targets, n)
    X = np.asarray(weights)
    if X.dtype.kind not in "biuf":
        raise ValueError(f"weights must be real numbers; got dtype {X.dtype}.")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != n:
        raise ValueError(f"weights must have shape (R, {n}), one row per weighting; got {X.shape}.")
    if check_input and X.size and not (np.isfinite(X).all() and X.min() >= 0):
        raise ValueError("weights must be finite and non-negative.")
    L = int(degree)
    R, K = X.shape[0], 2 * L + 1
    qy, qb = (K, L + 1) if S.shape[1] == 2 else (1, 1)
    M = np.zeros((R, K, qy))
    AtB = np.zeros((R, T.shape[1], L + 1, qb))
    if n == 0 or R == 0:
        return M, AtB
    x, y = map_validated(S)
    if y is not None and y.min() == y.max():
        return _replicate_moments_constant_y(x, y[0], T, X, L, M, AtB)
    # Two layouts of the same products, whichever temporary is smaller: with fewer weightings
    # than values per row (R < 2L + 1) the weighted values of every weighting side by side,
    # (R, q, rows); otherwise the rows' tensor values T_p(x) T_q(y), (rows, (2L + 1) q), and one
    # product with the weights. A sub-chunk of rows keeps the temporary near 16 MB.
    side_by_side = R < K
    nb = (L + 1) * qb  # cross moments per target
    width = R * qy if side_by_side else K * qy
    step = max(1, CHUNK_FLOATS // width)
    Mf = np.zeros((K, R * qy)) if side_by_side else np.zeros((R, K * qy))
    Af = np.zeros((T.shape[1], L + 1, R * qb)) if side_by_side else np.zeros((T.shape[1], R, (L + 1) * qb))
    with one_blas_thread():
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            m = sl.stop - sl.start
            Vx = vander_rows(x[sl], 2 * L, np.empty(K * m))  # (2L + 1, m)
            Vy = vander_rows(y[sl], 2 * L, np.empty(K * m)) if y is not None else np.ones((1, m))
            # C order for the products below (weights often come replicate-fastest, as the
            # bootstrap's tiles do, and the products of a strided Xs are slower)
            Xs = np.ascontiguousarray(X[:, sl]) if side_by_side else X[:, sl]
            if side_by_side:
                B = Xs[:, None, :] * Vy[None, :, :]  # B[r, q, :] = w_r T_q(y)
                Mf += Vx @ B.reshape(R * qy, m).T
                Bb = (
                    (Xs[:, None, :] * Vy[None, :qb, :]).reshape(R * qb, m).T
                    if qb != qy
                    else B.reshape(R * qb, m).T
                )
                for k in range(T.shape[1]):
                    Af[k] += (Vx[: L + 1] * T[sl, k]) @ Bb
            else:
                D = (Vx.T[:, :, None] * Vy.T[:, None, :]).reshape(m, K * qy)  # T_p(x) T_q(y) per row
                Mf += Xs @ D
                # t_k T_i(x) T_j(y) (i, j <= L) of every target side by side: one product with the
                # weights (the targets multiply the rows' values, not every weighting's). A row
                # whose targets are all 0 adds nothing: where many are (labels with no positive
                # vote), the product runs over the other rows' weights alone
                Ts, Vxb, Vyb, Xb = T[sl], Vx[: L + 1], Vy[:qb], Xs
                live = np.flatnonzero(Ts.any(axis=1))
                if live.size < _SPARSE_TARGETS * m:
                    Ts, Vxb, Vyb = Ts[live], Vxb[:, live], Vyb[:, live]
                    # the weights' columns of those rows, gathered as rows of their transpose
                    # where that is C-contiguous (the bootstrap's tiles)
                    Xb = Xs.T[live].T if Xs.T.flags.c_contiguous else Xs[:, live]
                Db = (Vxb.T[:, :, None] * Vyb.T[:, None, :]).reshape(Vxb.shape[1], nb)
                G = (Ts[:, :, None] * Db[:, None, :]).reshape(Db.shape[0], T.shape[1] * nb)
                Af += (Xb @ G).reshape(R, T.shape[1], nb).transpose(1, 0, 2)
    if side_by_side:
        M[:] = Mf.reshape(K, R, qy).transpose(1, 0, 2)
        AtB[:] = Af.reshape(T.shape[1], L + 1, R, qb).transpose(2, 0, 1, 3)
    else:
        M[:] = Mf.reshape(R, K, qy)
        AtB[:] = Af.reshape(T.shape[1], R, L + 1, qb).transpose(1, 0, 2, 3)
    return M, AtB


def _replicate_moments_constant_y(x, y0, T, X, L, M, AtB):
    """:func:`replicate_moments` where every row has the same second score (``sigma2`` constant).

    Then ``T_q(y_n) = T_q(y0)`` for every row, so ``M[r, p, q] = (sum_n w_rn T_p(x_n)) T_q(y0)``
    and ``AtB[r, k, i, j] = (sum_n w_rn t_nk T_i(x_n)) T_j(y0)``: one product of the weights with
    the ``2L + 1`` values of each row instead of ``(2L + 1)^2`` (a first-order model in a
    second-order report: ``sigma2 = 0``). Equal to the general products up to round-off.
    """
    R, K = X.shape[0], 2 * L + 1
    n = x.shape[0]
    vy = vander_rows(np.array([y0]), 2 * L, np.empty(K))[:, 0]  # T_q(y0), q <= 2L
    step = max(1, CHUNK_FLOATS // K)
    Mx = np.zeros((R, K))
    Ax = np.zeros((R, T.shape[1], L + 1))
    with one_blas_thread():
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            m = sl.stop - sl.start
            Vx = vander_rows(x[sl], 2 * L, np.empty(K * m))  # (2L + 1, m)
            Xs = X[:, sl]
            Mx += Xs @ Vx.T
            # t_k T_i(x) of every target side by side, one product with the weights (as the
            # general path: the targets multiply the rows' values, not every weighting's)
            G = (T[sl][:, :, None] * Vx[: L + 1].T[:, None, :]).reshape(m, T.shape[1] * (L + 1))
            Ax += (Xs @ G).reshape(R, T.shape[1], L + 1)
    M[:] = Mx[:, :, None] * vy[None, None, : M.shape[2]]
    AtB[:] = Ax[:, :, :, None] * vy[None, None, None, : AtB.shape[3]]
    return M, AtB
