"""Chebyshev bases of the scores: the features, the mapping onto [-1, 1], evaluation in chunks."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.polynomial.chebyshev import chebvander

from skcal._compat import validate_params
from skcal._constraints import DEGREE, ENGINE_BASIS, POSITIVE_INT, StrictInterval
from skcal._threads import one_blas_thread

__all__ = ["basis_powers", "chebyshev_design", "chebyshev_evaluate", "map_scores", "n_basis_functions"]

#: Rows per chunk are chosen so that one Vandermonde block holds about this many floats.
CHUNK_FLOATS = 2**21
#: Rows per chunk of a data pass (``None``: about ``2^21 / (2L + 1)``).
CHUNK_SIZE = [*POSITIVE_INT, None]


@validate_params({"degree": DEGREE, "basis": ENGINE_BASIS}, prefer_skip_nested_validation=True)
def basis_powers(degree, basis="tensor"):
    """Return the ``(d, 2)`` integer array of index pairs ``(i, j)`` of ``T_i(x) T_j(y)``.

    The tensor basis is ordered with ``j`` fastest (``(0,0), (0,1), ..., (0,l), (1,0), ...``);
    the total-degree basis is the sub-list with ``i + j <= l`` in the same order; the 1-D basis
    has ``j = 0``.

    Parameters
    ----------
    degree : int
        The degree ``l``.
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis.

    Returns
    -------
    ndarray of shape (d, 2)
        Integer index pairs.

    Examples
    --------
    >>> basis_powers(1, "tensor").tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    >>> basis_powers(1, "total").tolist()
    [[0, 0], [0, 1], [1, 0]]
    >>> basis_powers(2, "1d").tolist()
    [[0, 0], [1, 0], [2, 0]]
    """
    degree = int(degree)
    if basis == "1d":
        i = np.arange(degree + 1)
        return np.stack([i, np.zeros_like(i)], axis=1)
    i, j = np.meshgrid(np.arange(degree + 1), np.arange(degree + 1), indexing="ij")
    P = np.stack([i.ravel(), j.ravel()], axis=1)
    if basis == "total":
        P = P[P.sum(axis=1) <= degree]
    return P


@validate_params(
    # any size (arithmetic only: the sample-size rules count the features of candidate degrees)
    {"degree": [StrictInterval(Integral, 0, None, closed="left")], "basis": ENGINE_BASIS},
    prefer_skip_nested_validation=True,
)
def n_basis_functions(degree, basis="tensor"):
    """Return the number of features ``d`` of a basis.

    Parameters
    ----------
    degree : int
        The degree ``l >= 0`` (any size: this is arithmetic only).
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis.

    Returns
    -------
    int
        ``(l + 1)^2``, ``(l + 1)(l + 2) / 2`` or ``l + 1``.

    Examples
    --------
    >>> n_basis_functions(44), n_basis_functions(44, "total"), n_basis_functions(44, "1d")
    (2025, 1035, 45)
    """
    degree = int(degree)
    if basis == "tensor":
        return (degree + 1) ** 2
    if basis == "total":
        return (degree + 1) * (degree + 2) // 2
    return degree + 1


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def map_scores(scores):
    """Map scores onto ``[-1, 1]``: ``x = 2 m - 1`` and (two columns) ``y = 8 sigma2 - 1``.

    Parameters
    ----------
    scores : array-like of shape (n, 1) or (n, 2)
        Scores ``m`` (one column) or ``(m, sigma2)``; validated (finite, ``m`` in [0, 1],
        ``sigma2`` in [0, 1/4]).

    Returns
    -------
    x : ndarray of shape (n,)
        The mapped ``m``.
    y : ndarray of shape (n,) or None
        The mapped ``sigma2``; ``None`` for one-column scores.

    Examples
    --------
    >>> import numpy as np
    >>> x, y = map_scores(np.array([[0.0, 0.25], [0.5, 0.0]]))
    >>> x.tolist(), y.tolist()
    ([-1.0, 0.0], [1.0, -1.0])
    """
    S = check_engine_scores(scores)
    return map_validated(S)


def map_validated(S):
    x = 2.0 * S[:, 0] - 1.0
    y = 8.0 * S[:, 1] - 1.0 if S.shape[1] == 2 else None
    return x, y


def check_engine_scores(scores, n_dims=None, name="scores"):
    """Validate scores for the engine: 2-D float, finite, ``m`` in [0, 1], ``sigma2`` in [0, 1/4].

    Empty input is allowed (zero rows add nothing to the statistics).
    """
    raw = scores.to_numpy() if hasattr(scores, "to_numpy") else scores
    S = np.asarray(raw)
    if S.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real numbers; got dtype {S.dtype}.")
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] not in (1, 2) or (n_dims is not None and S.shape[1] != n_dims):
        want = f"(n, {n_dims})" if n_dims is not None else "(n, 1) or (n, 2)"
        raise ValueError(f"{name} must have shape {want}; got {S.shape}.")
    if S.size:
        if not np.isfinite(S).all():
            raise ValueError(f"{name} contains NaN or infinity; expected finite scores.")
        if S[:, 0].min() < 0 or S[:, 0].max() > 1:
            raise ValueError(f"{name}[:, 0] (m) must lie in [0, 1].")
        if S.shape[1] == 2 and (S[:, 1].min() < 0 or S[:, 1].max() > 0.25):
            raise ValueError(f"{name}[:, 1] (sigma2) must lie in [0, 0.25].")
    return S


def check_engine_targets(targets, n, n_targets=None):
    T = np.asarray(targets)
    if T.dtype.kind not in "biuf":
        raise ValueError(f"targets must be real numbers; got dtype {T.dtype}.")
    T = np.asarray(T, dtype=np.float64)
    if T.ndim == 1:
        T = T[:, None]
    want = (n, n_targets) if n_targets is not None else None
    if T.ndim != 2 or T.shape[0] != n or (want is not None and T.shape != want):
        raise ValueError(f"targets must have shape ({n}, {n_targets if n_targets else 'r'}); got {T.shape}.")
    if T.size and not np.isfinite(T).all():
        raise ValueError("targets contains NaN or infinity.")
    return T


def effective_basis(basis, n_columns):
    return "1d" if n_columns == 1 else basis


@validate_params(
    {"scores": ["array-like"], "degree": DEGREE, "basis": ENGINE_BASIS}, prefer_skip_nested_validation=True
)
def chebyshev_design(scores, degree, basis="tensor"):
    """Return the explicit ``n x d`` design matrix ``Phi`` (for tests, the dual form, small n).

    The fit path of :class:`ChebyshevRidge` never calls this for ``n >= d``.

    Parameters
    ----------
    scores : array-like of shape (n, 1) or (n, 2)
        Scores ``m`` or ``(m, sigma2)``.
    degree : int
        The degree ``l``.
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis (one-column scores use ``"1d"``).

    Returns
    -------
    ndarray of shape (n, d)
        The features ``T_i(x) T_j(y)`` in the order of :func:`basis_powers`.

    Examples
    --------
    >>> import numpy as np
    >>> chebyshev_design(np.array([[1.0, 0.25]]), 1).tolist()
    [[1.0, 1.0, 1.0, 1.0]]
    """
    S = check_engine_scores(scores)
    x, y = map_validated(S)
    basis = effective_basis(basis, S.shape[1])
    P = basis_powers(degree, basis)
    A = chebvander(x, degree)
    if y is None:
        return A[:, P[:, 0]]
    B = chebvander(y, degree)
    return A[:, P[:, 0]] * B[:, P[:, 1]]


def vander_rows(x, degree, buf):
    """``T_k(x)`` for ``k = 0..degree`` as a C-contiguous ``(degree + 1, n)`` view of ``buf``.

    The recurrence ``T_k = 2 x T_{k-1} - T_{k-2}`` of ``numpy.polynomial.chebyshev.chebvander``
    (bit-for-bit the same values), written into a reused buffer instead of a new array.
    """
    n = x.shape[0]
    V = buf[: (degree + 1) * n].reshape(degree + 1, n)
    V[0] = 1.0
    if degree >= 1:
        V[1] = x
    for k in range(2, degree + 1):
        np.multiply(x, V[k - 1], out=V[k])
        V[k] *= 2.0
        V[k] -= V[k - 2]
    return V


def chunk_rows(degree):
    return max(256, CHUNK_FLOATS // (2 * degree + 1))


@validate_params(
    {"scores": ["array-like"], "C": ["array-like"], "chunk_size": CHUNK_SIZE},
    prefer_skip_nested_validation=True,
)
def chebyshev_evaluate(scores, C, chunk_size=None):
    """Evaluate ``sum_ij C[r, i, j] T_i(x) T_j(y)`` for every row of ``scores`` and target ``r``.

    Parameters
    ----------
    scores : array-like of shape (n, 1) or (n, 2)
        Scores ``m`` or ``(m, sigma2)``.
    C : array-like of shape (r, l + 1, l + 1) or (r, l + 1, 1)
        Coefficient grids (see :meth:`ChebyshevRidge.coef_grid`).
    chunk_size : int or None, default=None
        Rows per chunk.

    Returns
    -------
    ndarray of shape (n, r)
        The polynomial values.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.zeros((1, 2, 2)); C[0, 1, 0] = 1.0  # T_1(2 m - 1)
    >>> chebyshev_evaluate(np.array([[0.75, 0.0]]), C).tolist()
    [[0.5]]
    """
    S = check_engine_scores(scores)
    C = np.asarray(C, dtype=np.float64)
    if (
        C.ndim != 3
        or (C.shape[1] > 1 and (C.shape[2] == 1) != (S.shape[1] == 1))
        or (S.shape[1] == 2 and C.shape[2] != C.shape[1])
    ):
        raise ValueError(f"C of shape {C.shape} does not match scores with {S.shape[1]} column(s).")
    return evaluate_grid(S, C, chunk_size)


def evaluate_grid(S, C, chunk_size=None):
    L = C.shape[1] - 1
    x, y = map_validated(S)
    out = np.empty((S.shape[0], C.shape[0]))
    if y is not None and C.shape[0] > L + 1 and S.shape[0] and y.min() == y.max():
        # every row at one second score (sigma2 constant): sum_ij C_ij T_i(x) T_j(y0) is
        # sum_i (sum_j C_ij T_j(y0)) T_i(x), the coefficients contracted once
        vy = vander_rows(y[:1], L, np.empty(L + 1))[:, 0]
        Cb = np.einsum("rij,j->ir", C, vy)  # (L + 1, targets)
        step = int(chunk_size) if chunk_size is not None else chunk_rows(L)
        buf = np.empty((L + 1) * min(step, S.shape[0]))
        with one_blas_thread():
            for start in range(0, S.shape[0], step):
                sl = slice(start, start + step)
                out[sl] = vander_rows(x[sl], L, buf).T @ Cb
        return out
    if y is not None and C.shape[0] > L + 1:
        # many targets (bootstrap replicates' fits): the rows' products T_i(x) T_j(y), a
        # sub-chunk of rows at a time, times all the coefficients in one product
        Cflat = C.reshape(C.shape[0], (L + 1) ** 2).T  # [(i, j), r], i slowest as in the grid
        sub = int(chunk_size) if chunk_size is not None else max(1, CHUNK_FLOATS // ((L + 1) ** 2))
        va, vb = np.empty((L + 1) * min(sub, S.shape[0])), np.empty((L + 1) * min(sub, S.shape[0]))
        with one_blas_thread():
            for start in range(0, S.shape[0], sub):
                sl = slice(start, start + sub)
                A = vander_rows(x[sl], L, va)
                B = vander_rows(y[sl], L, vb)
                m = A.shape[1]
                out[sl] = (A.T[:, :, None] * B.T[:, None, :]).reshape(m, (L + 1) ** 2) @ Cflat
        return out
    step = int(chunk_size) if chunk_size is not None else chunk_rows(L)
    rows = min(step, S.shape[0])
    buf_a, buf_b, buf_c = np.empty((L + 1) * rows), np.empty((L + 1) * rows), np.empty((L + 1) * rows)
    with one_blas_thread():
        for start in range(0, S.shape[0], step):
            sl = slice(start, start + step)
            A = vander_rows(x[sl], L, buf_a)  # (L+1, n_chunk), reused buffer
            if y is None:
                out[sl] = (C[:, :, 0] @ A).T
                continue
            B = vander_rows(y[sl], L, buf_b)
            CA = buf_c[: A.size].reshape(A.shape)
            for r in range(C.shape[0]):
                np.matmul(C[r].T, A, out=CA)
                CA *= B
                out[sl, r] = CA.sum(axis=0)
    return out
