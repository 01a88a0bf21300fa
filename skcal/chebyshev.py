"""The Chebyshev engine of second-order calibration.

The Chebyshev ridge regressions of *The Minimax Rate of Second-Order Calibration*.

Scores ``(m, sigma2)`` are mapped onto ``[-1, 1]^2`` by ``x = 2 m - 1`` and ``y = 8 sigma2 - 1``
and regressed on Chebyshev polynomials of the first kind:

* ``"tensor"``: ``T_i(x) T_j(y)`` for ``0 <= i, j <= l`` (``d = (l + 1)^2`` features);
* ``"total"``: ``T_i(x) T_j(y)`` for ``i + j <= l`` (``d = (l + 1)(l + 2) / 2``);
* the one-dimensional basis ``T_i(x)``, ``0 <= i <= l``, used automatically for one-column
  scores (``m`` alone) whatever ``basis`` says.

The fit never builds the ``n x d`` design matrix ``Phi``. Because
``T_i T_j = (T_{i+j} + T_{|i-j|}) / 2``, every Gram entry is a quarter of the sum of four entries
of the moment matrix ``M[p, q] = sum_n w_n T_p(x_n) T_q(y_n)`` (``0 <= p, q <= 2l``), which is one
product of two ``(2l+1) x n`` Vandermonde matrices; ``Phi^T t = A^T diag(w t) B`` uses the
degree-``l`` Vandermondes ``A`` and ``B``. Data are processed in chunks, so memory is
``O(chunk * l + l^4)``, and the statistics of disjoint chunks add: that is what makes
``partial_fit``, cheap cross-validation folds (training statistics = total minus the held-out
fold) and lower degrees (a sub-block of the statistics of a higher degree) possible.

The ridge penalty is ``lam = alpha * trace(G) / d``. Both targets share ``G``: it is factored
once (Cholesky, or an eigendecomposition if the Cholesky factorisation fails numerically) and
solved for all targets. When ``d > n`` and the data are at hand, the dual (kernel) form
``beta = Phi^T (Phi Phi^T + lam I)^{-1} t`` is used (it needs ``Phi``, but ``n < d`` keeps it
small). Prediction evaluates ``sum_ij C[i, j] T_i(x) T_j(y)`` as the row sums of
``(A C) * B``, chunked, again without an ``n x d`` matrix.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from numpy.polynomial.chebyshev import chebvander
from threadpoolctl import ThreadpoolController

from skcal._compat import Options, StrOptions, validate_parameter_constraints, validate_params
from skcal._constraints import (
    ALPHA,
    BASES,
    BASIS,
    DEGREE,
    ENGINE_BASIS,
    MAX_DEGREE_LIMIT,
    NON_NEGATIVE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    SAMPLE_WEIGHT,
    StrictInterval,
)
from skcal._validation import check_sample_weight

__all__ = [
    "BASES",
    "AUTO_SAMPLES_PER_FEATURE",
    "MAX_AUTO_DEGREE",
    "ChebyshevMoments",
    "ChebyshevRidge",
    "auto_degree",
    "check_auto_sample_size",
    "basis_powers",
    "chebyshev_design",
    "degree_cap",
    "degree_schedule",
    "map_scores",
    "n_basis_functions",
    "replicate_moments",
    "ridge_solve",
    "theta",
]

#: Largest degree the automatic rule uses for the two-dimensional bases (tensor d = 7921).
MAX_AUTO_DEGREE = 88
#: Sample-size guard of :func:`auto_degree`: at least this many samples per basis function.
AUTO_SAMPLES_PER_FEATURE = 100
#: BLAS threads for the chunked data passes (statistics and prediction). Their products are
#: skinny (``2l + 1`` rows), and on a loaded machine multi-threaded BLAS on them is up to 50x
#: slower than one thread (measured: 2.2 s vs 0.03 s for a 177 x 23000 product at load 12 on
#: 2 cores). Set to ``None`` to let BLAS choose.
DATA_PASS_BLAS_THREADS = 1
#: BLAS threads for the ``d x d`` (or dual ``n x n``) factorisations. On the shared 2-core
#: machine one thread was faster here too (Cholesky of d = 2025: 0.31 s vs 0.99-3.7 s with the
#: default threads at load 11); on an idle multi-core machine ``None`` (BLAS default) can be
#: faster for d in the thousands.
SOLVE_BLAS_THREADS = 1
_CONTROLLER = None


def _blas_limit(limits):
    """Context manager limiting BLAS threads; the library scan is done once per process."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=limits, user_api="blas")


#: Rows per chunk are chosen so that one Vandermonde block holds about this many floats.
_CHUNK_FLOATS = 2**21
#: :func:`replicate_moments` forms the cross moments from the rows with a nonzero target alone
#: where fewer than this fraction of a chunk's rows have one. Measured on second-order reports of
#: 1e5 rows at degree 8 (fresh processes alternately, 4 rounds): with 38% of the rows' targets
#: all 0 the gather saved 2.5%, with 30% it broke even and with 15% it cost 4%.
_SPARSE_TARGETS = 0.65


# ---------------------------------------------------------------------------------------------
# degree rule
# ---------------------------------------------------------------------------------------------
def _log_theta(h):
    # log(h pi + sqrt(h^2 pi^2 + 1)) = asinh(h pi), accurate for tiny h (no cancellation)
    return math.asinh(h * math.pi)


@validate_params({"bandwidth": POSITIVE_REAL}, prefer_skip_nested_validation=True)
def theta(bandwidth):
    """Return ``theta = h pi + sqrt(h^2 pi^2 + 1)``, the Bernstein-ellipse parameter.

    After sech perturbation with bandwidth ``h`` the calibration functions are analytic in a
    strip of half-width ``h pi / 2``; degree-``l`` Chebyshev approximation then errs by
    ``O(theta^-l)``.

    Parameters
    ----------
    bandwidth : float
        The sech bandwidth ``h > 0``.

    Returns
    -------
    float
        Greater than 1.

    Examples
    --------
    >>> round(theta(1 / 16), 4)
    1.2154
    """
    h = float(bandwidth)
    return h * math.pi + math.sqrt(h * h * math.pi * math.pi + 1.0)


@validate_params({"bandwidth": POSITIVE_REAL, "basis": ENGINE_BASIS}, prefer_skip_nested_validation=True)
def degree_cap(bandwidth, basis="tensor"):
    """Return the largest degree the automatic rule may choose for bandwidth ``h``.

    The paper caps the degree at 44 for ``h = 1/16`` and at 88 for ``h = 1/64``. Those two
    values are reproduced by ``cap(h) = ceil(11 / sqrt(h))`` (not by a rule proportional to
    ``1 / h``, which would give 44 and 176). For the two-dimensional bases the cap is further
    limited to :data:`MAX_AUTO_DEGREE` ``= 88`` (the tensor Gram matrix of degree 88 already has
    ``7921^2`` entries, 500 MB); the one-dimensional basis has ``d = l + 1`` features and is
    limited to ``skcal._constraints.MAX_DEGREE_LIMIT`` (512).

    Parameters
    ----------
    bandwidth : float
        The sech bandwidth ``h > 0``.
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis the degree is for.

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> degree_cap(1 / 16), degree_cap(1 / 64), degree_cap(1 / 4)
    (44, 88, 22)
    >>> degree_cap(2**-10), degree_cap(2**-10, basis="1d"), degree_cap(1e-16, basis="1d")
    (88, 352, 512)
    """
    h = float(bandwidth)
    limit = MAX_AUTO_DEGREE if basis != "1d" else MAX_DEGREE_LIMIT
    raw = 11.0 / math.sqrt(h) - 1e-9
    cap = limit if not raw < limit else int(math.ceil(raw))
    return max(min(cap, limit), 1)


def _largest_degree_with_features(max_features, basis):
    """Largest ``l >= 0`` whose basis has at most ``max_features`` functions (-1 if none), O(1)."""
    f = float(max_features)
    if not f >= 1:
        return -1
    f = min(f, 1e30)  # far beyond any degree limit; keeps the integer arithmetic small
    if basis == "tensor":
        deg = math.isqrt(int(f)) - 1
    elif basis == "total":
        deg = int((math.sqrt(1.0 + 8.0 * f) - 3.0) / 2.0)
    else:
        deg = int(f) - 1
    deg = max(deg, -1)
    # float rounding can put the closed form one off: settle it with at most a few checks
    while deg >= 0 and n_basis_functions(deg, basis) > f:
        deg -= 1
    while n_basis_functions(deg + 1, basis) <= f:
        deg += 1
    return deg


@validate_params(
    {"n_effective": NON_NEGATIVE_REAL, "basis": ENGINE_BASIS, "name": [str]},
    prefer_skip_nested_validation=True,
)
def check_auto_sample_size(n_effective, basis="tensor", name="n_samples"):
    """Refuse a sample too small for any degree of :func:`auto_degree`'s rule.

    The smallest degree the rule returns is 1; a sample with fewer (effective) rows than the
    basis of degree 1 has functions (4 tensor, 3 total, 2 one-dimensional) supports no degree.
    :func:`auto_degree` and every ``degree="auto"`` (:func:`skcal.ce2.ce2_score`,
    :func:`skcal.dask.evaluate`) check it here.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size.
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis.
    name : str, default="n_samples"
        What ``n_effective`` is called in the error message.

    Returns
    -------
    float
        ``n_effective``.

    Examples
    --------
    >>> check_auto_sample_size(4.0)
    4.0
    """
    minimum = n_basis_functions(1, basis)
    if not n_effective >= minimum:
        raise ValueError(
            f"degree='auto' needs an effective sample size of at least {minimum} (the {basis} basis "
            f"functions of degree 1, the smallest degree the rule chooses); got {name} = "
            f"{n_effective:.3g}. Pass more rows (or rows of positive weight), or an explicit degree."
        )
    return float(n_effective)


@validate_params(
    {
        "n_samples": [StrictInterval(Real, 1, None, closed="left")],
        "bandwidth": POSITIVE_REAL,
        "basis": ENGINE_BASIS,
        "samples_per_feature": [*POSITIVE_REAL, None],
    },
    prefer_skip_nested_validation=True,
)
def auto_degree(n_samples, bandwidth, basis="tensor", samples_per_feature=AUTO_SAMPLES_PER_FEATURE):
    """Return the analytic degree ``l = ceil(2 log n / log theta)``, capped.

    Two caps apply: the bandwidth cap :func:`degree_cap` (44 at ``h = 1/16``, 88 at
    ``h = 1/64``) and a sample-size guard: the degree is the largest whose basis has at most
    ``n / samples_per_feature`` features (``d = (l + 1)^2`` for the tensor basis), computed in
    closed form. Without the
    guard the rule picks degree 88 (7921 tensor features) at ``h = 1/64`` for *every* ``n``
    (``2 log n / log theta > 88`` already for ``n = 10``), and the in-sample plug-in CE2 estimate
    then measures mostly the noise of the fit: on simulated data whose CE2 is zero before
    perturbation (``benchmarks/ce2_degree_guard.py``, n = 2e4, h = 1/64, mean of 3 seeds) the
    estimate was 0.114 with 10 samples per feature, 0.069 with 30, 0.043 with 100 and 0.031
    with 300 (``cv=5`` selection: 0.027). The default
    of 100 samples per feature reaches the cap 88 from ``n = 792100`` on; pass
    ``samples_per_feature=None`` for the bare analytic rule.

    The smallest degree returned is 1, and a sample with fewer (effective) rows than the basis
    of degree 1 has functions (4 tensor, 3 total, 2 one-dimensional) supports no degree at all,
    so such an ``n_samples`` is refused (:func:`check_auto_sample_size`) rather than answered
    with 1. Between that and ``samples_per_feature`` times it the guard cannot be met and the
    degree is 1.

    Parameters
    ----------
    n_samples : float
        The (effective) sample size, at least the number of functions of the basis of degree 1.
        With sample weights pass Kish's effective sample size ``(sum w)^2 / sum w^2``, so that
        rows of weight zero count as dropped (this is what :func:`skcal.ce2.ce2_score` does).
    bandwidth : float
        The sech bandwidth ``h`` the scores were perturbed with.
    basis : {"tensor", "total", "1d"}, default="tensor"
        The basis the degree is for.
    samples_per_feature : float or None, default=100
        The sample-size guard (``None``: no guard).

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> auto_degree(10**6, 1 / 64), auto_degree(10**6, 1 / 16)
    (88, 44)
    >>> auto_degree(20000, 1 / 64), auto_degree(1000, 1 / 4, samples_per_feature=None)
    (13, 20)
    >>> auto_degree(1000, 1 / 4, basis="1d"), auto_degree(10**6, 1e-16, basis="1d")
    (9, 512)
    """
    h = float(bandwidth)
    n = float(n_samples)
    check_auto_sample_size(n, basis)
    cap = degree_cap(h, basis)
    log_theta = _log_theta(h)
    ratio = 2.0 * math.log(n) / log_theta if log_theta > 0 else math.inf
    rule = cap if not ratio < cap else int(math.ceil(ratio))
    deg = max(1, min(rule, cap))
    if samples_per_feature is not None:
        guard = _largest_degree_with_features(n / float(samples_per_feature), basis)
        deg = max(1, min(deg, guard))
    return int(deg)


@validate_params(
    {
        "cap": [StrictInterval(Integral, 1, MAX_DEGREE_LIMIT, closed="both")],
        "minimum": POSITIVE_INT,
    },
    prefer_skip_nested_validation=True,
)
def degree_schedule(cap, minimum=4):
    """Return the degrees for data-driven selection: ``cap``, ``cap // 2``, ... down to ``minimum``.

    If ``cap`` itself is below ``minimum`` the schedule is ``[cap]``.

    Parameters
    ----------
    cap : int
        The largest degree (at most ``MAX_DEGREE_LIMIT``).
    minimum : int, default=4
        Halving stops before going below this degree.

    Returns
    -------
    list of int
        Decreasing degrees.

    Examples
    --------
    >>> degree_schedule(44)
    [44, 22, 11, 5]
    >>> degree_schedule(88)
    [88, 44, 22, 11, 5]
    """
    out = [int(cap)]
    while out[-1] // 2 >= minimum:
        out.append(out[-1] // 2)
    return out


# ---------------------------------------------------------------------------------------------
# bases and features
# ---------------------------------------------------------------------------------------------
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
    S = _check_engine_scores(scores)
    return _map(S)


def _map(S):
    x = 2.0 * S[:, 0] - 1.0
    y = 8.0 * S[:, 1] - 1.0 if S.shape[1] == 2 else None
    return x, y


def _check_engine_scores(scores, n_dims=None, name="scores"):
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


def _check_engine_targets(targets, n, n_targets=None):
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


def _effective_basis(basis, n_columns):
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
    S = _check_engine_scores(scores)
    x, y = _map(S)
    basis = _effective_basis(basis, S.shape[1])
    P = basis_powers(degree, basis)
    A = chebvander(x, degree)
    if y is None:
        return A[:, P[:, 0]]
    B = chebvander(y, degree)
    return A[:, P[:, 0]] * B[:, P[:, 1]]


def _vander_rows(x, degree, buf):
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


def _chunk_rows(degree):
    return max(256, _CHUNK_FLOATS // (2 * degree + 1))


# ---------------------------------------------------------------------------------------------
# sufficient statistics
# ---------------------------------------------------------------------------------------------
#: Rows per chunk of a data pass (``None``: about ``2^21 / (2L + 1)``).
_CHUNK_SIZE = [*POSITIVE_INT, None]
#: The basis and degree of a quantity derived from the moments.
_DERIVED = {"basis": ENGINE_BASIS, "degree": [*DEGREE, None]}


class ChebyshevMoments:
    """Additive sufficient statistics of a Chebyshev ridge regression.

    For data ``(x_n, y_n)`` (mapped scores), targets ``t_n`` (``r`` columns) and weights ``w_n``
    the statistics at degree ``L`` are

    * ``M[p, q] = sum_n w_n T_p(x_n) T_q(y_n)``, ``0 <= p, q <= 2L`` (``q = 0`` only for 1-D),
    * ``AtB[r, i, j] = sum_n w_n t_nr T_i(x_n) T_j(y_n)``, ``0 <= i, j <= L``,
    * ``tt[r] = sum_n w_n t_nr^2``, ``sum_w = sum_n w_n`` and ``n_samples``.

    They add over disjoint chunks (``+``, ``-``), any lower degree is a sub-block
    (:meth:`restrict`), and they give the Gram matrix :meth:`gram`, the cross products
    :meth:`cross` and the residual sum of squares of any coefficient vector :meth:`sse` without
    the data.

    This is a numerical building block (not a scikit-learn estimator), but it validates what it
    is given: :meth:`update` rejects NaN or infinite scores, targets and weights, scores outside
    ``[0, 1] x [0, 1/4]`` and negative weights. The mergeable, versioned form used by
    ``skcal.stats`` and ``skcal.dask`` is :class:`skcal.stats.CE2Statistics`.

    Parameters
    ----------
    degree : int
        The maximum degree ``L`` (at most ``MAX_DEGREE_LIMIT``).
    n_dims : {1, 2}, default=2
        2 for ``(m, sigma2)`` scores, 1 for ``m`` alone.
    n_targets : int, default=1
        Number of regression targets.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0.1, 0.01], [0.5, 0.2], [0.9, 0.05]])
    >>> t = np.array([[0.0], [1.0], [1.0]])
    >>> st = ChebyshevMoments.from_data(S, t, degree=1)
    >>> G = st.gram("tensor")
    >>> Phi = chebyshev_design(S, 1)
    >>> bool(np.allclose(G, Phi.T @ Phi)), bool(np.allclose(st.cross("tensor")[:, 0], Phi.T @ t[:, 0]))
    (True, True)
    """

    @validate_params(
        {"degree": DEGREE, "n_dims": [Options(Integral, {1, 2})], "n_targets": POSITIVE_INT},
        prefer_skip_nested_validation=True,
    )
    def __init__(self, degree, n_dims=2, n_targets=1):
        self.degree = int(degree)
        self.n_dims = int(n_dims)
        self.n_targets = int(n_targets)
        L = self.degree
        qy = 2 * L + 1 if n_dims == 2 else 1
        qb = L + 1 if n_dims == 2 else 1
        self.M = np.zeros((2 * L + 1, qy))
        self.AtB = np.zeros((n_targets, L + 1, qb))
        self.tt = np.zeros(n_targets)
        self.sum_w = 0.0
        self.n_samples = 0

    # -- construction ---------------------------------------------------------------------
    @classmethod
    @validate_params(
        {
            "scores": ["array-like"],
            "targets": ["array-like"],
            "degree": DEGREE,
            "sample_weight": SAMPLE_WEIGHT,
            "chunk_size": _CHUNK_SIZE,
        },
        prefer_skip_nested_validation=True,
    )
    def from_data(cls, scores, targets, degree, sample_weight=None, chunk_size=None):
        """Return the statistics of ``(scores, targets)``; see :meth:`update`.

        Parameters
        ----------
        scores : array-like of shape (n, n_dims)
            Scores (``m`` in [0, 1], ``sigma2`` in [0, 1/4]).
        targets : array-like of shape (n, n_targets) or (n,)
            Regression targets.
        degree : int
            The maximum degree.
        sample_weight : array-like of shape (n,) or None, default=None
            Non-negative weights.
        chunk_size : int or None, default=None
            Rows per chunk.

        Returns
        -------
        ChebyshevMoments
            A new object.
        """
        S = _check_engine_scores(scores)
        T = _check_engine_targets(targets, S.shape[0])
        return cls(degree, S.shape[1], T.shape[1]).update(S, T, sample_weight, chunk_size)

    @validate_params(
        {
            "scores": ["array-like"],
            "targets": ["array-like"],
            "sample_weight": SAMPLE_WEIGHT,
            "chunk_size": _CHUNK_SIZE,
        },
        prefer_skip_nested_validation=True,
    )
    def update(self, scores, targets, sample_weight=None, chunk_size=None):
        """Add the statistics of a batch in place (chunked) and return ``self``.

        Parameters
        ----------
        scores : array-like of shape (n, n_dims)
            Scores (``m`` in [0, 1], ``sigma2`` in [0, 1/4]; finite).
        targets : array-like of shape (n, n_targets) or (n,)
            Finite regression targets.
        sample_weight : array-like of shape (n,) or None, default=None
            Finite non-negative weights.
        chunk_size : int or None, default=None
            Rows per chunk; ``None`` picks about ``2^21 / (2L + 1)`` rows (16 MB per
            Vandermonde block).

        Returns
        -------
        ChebyshevMoments
            The updated object.
        """
        S = _check_engine_scores(scores, self.n_dims)
        T = _check_engine_targets(targets, S.shape[0], self.n_targets)
        w = check_sample_weight(sample_weight, S.shape[0], allow_zero_total=True)
        L = self.degree
        step = int(chunk_size) if chunk_size is not None else _chunk_rows(L)
        x, y = _map(S)
        K = 2 * L + 1
        rows = min(step, S.shape[0])
        # Buffers reused by every chunk of this call: the (2L+1) x chunk Vandermonde blocks are
        # the large temporaries of the pass (16 MB each by default). Allocating them per chunk
        # costs page faults whenever the allocator returns them to the OS at once, as it does
        # under dask.distributed's MALLOC_TRIM_THRESHOLD_=65536 (see docs/benchmarks/scale_dask.md).
        buf_x, buf_y, buf_w = np.empty(K * rows), np.empty(K * rows), np.empty(K * rows)
        buf_t = np.empty((L + 1) * rows)
        ones = np.ones((1, rows))
        with _blas_limit(DATA_PASS_BLAS_THREADS):
            for start in range(0, S.shape[0], step):
                sl = slice(start, start + step)
                # (2L+1, n_chunk) C-contiguous blocks of T_k at the chunk's scores
                Vx = _vander_rows(x[sl], 2 * L, buf_x)
                m = Vx.shape[1]
                Vy = _vander_rows(y[sl], 2 * L, buf_y) if y is not None else ones[:, :m]
                wc = w[sl] if w is not None else None
                if wc is not None:
                    Vxw = buf_w[: K * m].reshape(K, m)
                    np.multiply(Vx, wc, out=Vxw)
                else:
                    Vxw = Vx
                self.M += Vxw @ Vy.T
                Ax = Vxw[: L + 1]
                By = Vy[: self.AtB.shape[2]]
                Tc = T[sl]
                At = buf_t[: (L + 1) * m].reshape(L + 1, m)
                for r in range(self.n_targets):
                    np.multiply(Ax, Tc[:, r], out=At)
                    self.AtB[r] += At @ By.T
                if wc is None:
                    self.tt += np.einsum("nr,nr->r", Tc, Tc)
                    self.sum_w += Tc.shape[0]
                else:
                    self.tt += np.einsum("n,nr,nr->r", wc, Tc, Tc)
                    self.sum_w += float(wc.sum())
        self.n_samples += S.shape[0]
        return self

    def copy(self):
        """Return a deep copy.

        Returns
        -------
        ChebyshevMoments
            A new object.
        """
        new = ChebyshevMoments(self.degree, self.n_dims, self.n_targets)
        new.M = self.M.copy()
        new.AtB = self.AtB.copy()
        new.tt = self.tt.copy()
        new.sum_w = self.sum_w
        new.n_samples = self.n_samples
        return new

    def _check_compatible(self, other):
        if not isinstance(other, ChebyshevMoments):
            return NotImplemented
        if (self.degree, self.n_dims, self.n_targets) != (other.degree, other.n_dims, other.n_targets):
            raise ValueError(
                "Cannot combine statistics of different shapes: "
                f"(degree, n_dims, n_targets) = {(self.degree, self.n_dims, self.n_targets)} vs "
                f"{(other.degree, other.n_dims, other.n_targets)}."
            )
        return None

    def __add__(self, other):
        if self._check_compatible(other) is NotImplemented:
            return NotImplemented
        new = self.copy()
        new.M += other.M
        new.AtB += other.AtB
        new.tt += other.tt
        new.sum_w += other.sum_w
        new.n_samples += other.n_samples
        return new

    def __sub__(self, other):
        if self._check_compatible(other) is NotImplemented:
            return NotImplemented
        new = self.copy()
        new.M -= other.M
        new.AtB -= other.AtB
        new.tt -= other.tt
        new.sum_w -= other.sum_w
        new.n_samples -= other.n_samples
        return new

    @validate_params({"degree": DEGREE}, prefer_skip_nested_validation=True)
    def restrict(self, degree):
        """Return the statistics of a lower degree (a sub-block; no data pass).

        Parameters
        ----------
        degree : int
            At most the statistics' degree.

        Returns
        -------
        ChebyshevMoments
            A new object.
        """
        degree = int(degree)
        if degree > self.degree:
            raise ValueError(f"degree {degree} exceeds the statistics' degree {self.degree}.")
        new = ChebyshevMoments(degree, self.n_dims, self.n_targets)
        new.M = self.M[: 2 * degree + 1, : new.M.shape[1]].copy()
        new.AtB = self.AtB[:, : degree + 1, : new.AtB.shape[2]].copy()
        new.tt = self.tt.copy()
        new.sum_w = self.sum_w
        new.n_samples = self.n_samples
        return new

    # -- derived quantities ---------------------------------------------------------------
    def _basis(self, basis):
        return "1d" if self.n_dims == 1 else basis

    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def gram(self, basis="tensor", degree=None):
        """The Gram matrix ``G = Phi^T W Phi`` (``d x d``) assembled from the moment matrix.

        ``G[(i,j), (i',j')] = (M[i+i', j+j'] + M[i+i', |j-j'|] + M[|i-i'|, j+j'] +
        M[|i-i'|, |j-j'|]) / 4``: the x-sums are folded first (``Q = M[i+i'] + M[|i-i'|]``);
        then each row ``(i, j)`` of ``G`` is the sum of two contiguous slices of ``Q[i]`` (the
        loop runs over the ``d`` basis functions, never over samples).

        Parameters
        ----------
        basis : {"tensor", "total", "1d"}, default="tensor"
            The basis (``"1d"`` is used for one-dimensional statistics).
        degree : int or None, default=None
            A degree up to the statistics' degree (``None``: theirs).

        Returns
        -------
        ndarray of shape (d, d)
            The Gram matrix.
        """
        L = self.degree if degree is None else int(degree)
        if L > self.degree:
            raise ValueError(f"degree {L} exceeds the statistics' degree {self.degree}.")
        basis = self._basis(basis)
        M = self.M
        P = basis_powers(L, basis)
        if basis == "1d":
            i = P[:, 0]
            return 0.5 * (M[i[:, None] + i[None, :], 0] + M[np.abs(i[:, None] - i[None, :]), 0])
        k = np.arange(L + 1)
        S = k[:, None] + k[None, :]
        D = np.abs(k[:, None] - k[None, :])
        # Q[i, i', q] = (M[i + i', q] + M[|i - i'|, q]) / 4 (scaling by 1/4 is exact); then
        # G[(i, j), (i', j')] = Q[i, i', j + j'] + Q[i, i', |j - j'|]. With U[i, i', s] =
        # Q[i, i', |s - L|], the second term is U[i, i', L - j + j']: both are contiguous slices
        # of length L + 1 in q, so one row block of G (fixed i, j; all i', j') is one add of
        # two (L + 1, L + 1) slices, written in place (no (L + 1)^3 gathers per row).
        Q = M[S] + M[D]
        Q *= 0.25
        U = np.concatenate([Q[:, :, L:0:-1], Q[:, :, : L + 1]], axis=2)
        n1 = L + 1
        if basis == "tensor":
            G = np.empty((n1 * n1, n1 * n1))
            G4 = G.reshape(n1, n1, n1, n1)  # [i, j, i', j']
            for i in range(n1):
                for j in range(n1):
                    np.add(Q[i, :, j : j + n1], U[i, :, L - j : L - j + n1], out=G4[i, j])
            return G
        keep = P[:, 0] * n1 + P[:, 1]  # the total-degree columns (i', j') in the (i', j') grid
        G = np.empty((P.shape[0], P.shape[0]))
        for row, (i, j) in enumerate(P):
            G[row] = (Q[i, :, j : j + n1] + U[i, :, L - j : L - j + n1]).reshape(-1)[keep]
        return G

    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def gram_trace(self, basis="tensor", degree=None):
        """Return ``trace(G)`` from the moments (no Gram assembly).

        Parameters
        ----------
        basis : {"tensor", "total", "1d"}, default="tensor"
            The basis (``"1d"`` is used for one-dimensional statistics).
        degree : int or None, default=None
            A degree up to the statistics' degree (``None``: theirs).

        Returns
        -------
        float
            The trace.
        """
        L = self.degree if degree is None else int(degree)
        P = basis_powers(L, self._basis(basis))
        i, j = 2 * P[:, 0], 2 * P[:, 1]
        M = self.M
        if self.n_dims == 1:
            return float(0.5 * (M[i, 0] + M[0, 0]).sum())
        return float(0.25 * (M[i, j] + M[i, 0] + M[0, j] + M[0, 0]).sum())

    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def cross(self, basis="tensor", degree=None):
        """Return the cross products ``Phi^T W t`` as a ``(d, n_targets)`` array.

        Parameters
        ----------
        basis : {"tensor", "total", "1d"}, default="tensor"
            The basis (``"1d"`` is used for one-dimensional statistics).
        degree : int or None, default=None
            A degree up to the statistics' degree (``None``: theirs).

        Returns
        -------
        ndarray of shape (d, n_targets)
            The cross products.
        """
        L = self.degree if degree is None else int(degree)
        if L > self.degree:
            raise ValueError(f"degree {L} exceeds the statistics' degree {self.degree}.")
        P = basis_powers(L, self._basis(basis))
        return self.AtB[:, P[:, 0], P[:, 1]].T.copy()

    @validate_params(
        {**_DERIVED, "coef": ["array-like"], "gram": ["array-like", None]}, prefer_skip_nested_validation=True
    )
    def sse(self, coef, basis="tensor", degree=None, gram=None):
        """Weighted residual sum of squares ``sum_n w_n (t_n - Phi_n beta)^2`` per target.

        Computed as ``tt - 2 beta . b + beta^T G beta`` from the statistics alone (this is how
        cross-validation scores a held-out fold without touching its data again).

        Parameters
        ----------
        coef : array-like of shape (d,) or (d, n_targets)
            Coefficients in the order of :func:`basis_powers`.
        basis : {"tensor", "total", "1d"}, default="tensor"
            The basis (``"1d"`` is used for one-dimensional statistics).
        degree : int or None, default=None
            A degree up to the statistics' degree (``None``: theirs).
        gram : ndarray of shape (d, d) or None, default=None
            A precomputed :meth:`gram` (saves its assembly).

        Returns
        -------
        ndarray of shape (n_targets,)
            The residual sums of squares.
        """
        coef = np.asarray(coef, dtype=np.float64)
        if coef.ndim == 1:
            coef = coef[:, None]
        G = self.gram(basis, degree) if gram is None else gram
        b = self.cross(basis, degree)
        return self.tt - 2.0 * np.einsum("dr,dr->r", coef, b) + np.einsum("dr,dr->r", coef, G @ coef)


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
    >>> S = np.array([[0.1, 0.01], [0.5, 0.2], [0.9, 0.05]])
    >>> t = np.array([0.0, 1.0, 1.0])
    >>> W = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]])
    >>> M, AtB = replicate_moments(S, t, W, degree=1)
    >>> one = ChebyshevMoments.from_data(S, t, degree=1, sample_weight=W[1])
    >>> bool(np.allclose(M[1], one.M)), bool(np.allclose(AtB[1], one.AtB)), M.shape, AtB.shape
    (True, True, (2, 3, 3), (2, 1, 2, 2))
    """
    S = _check_engine_scores(scores)
    n = S.shape[0]
    T = _check_engine_targets(targets, n)
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
    x, y = _map(S)
    if y is not None and y.min() == y.max():
        return _replicate_moments_constant_y(x, y[0], T, X, L, M, AtB)
    # Two layouts of the same products, whichever temporary is smaller: with fewer weightings
    # than values per row (R < 2L + 1) the weighted values of every weighting side by side,
    # (R, q, rows); otherwise the rows' tensor values T_p(x) T_q(y), (rows, (2L + 1) q), and one
    # product with the weights. A sub-chunk of rows keeps the temporary near 16 MB.
    side_by_side = R < K
    nb = (L + 1) * qb  # cross moments per target
    width = R * qy if side_by_side else K * qy
    step = max(1, _CHUNK_FLOATS // width)
    Mf = np.zeros((K, R * qy)) if side_by_side else np.zeros((R, K * qy))
    Af = np.zeros((T.shape[1], L + 1, R * qb)) if side_by_side else np.zeros((T.shape[1], R, (L + 1) * qb))
    with _blas_limit(DATA_PASS_BLAS_THREADS):
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            m = sl.stop - sl.start
            Vx = _vander_rows(x[sl], 2 * L, np.empty(K * m))  # (2L + 1, m)
            Vy = _vander_rows(y[sl], 2 * L, np.empty(K * m)) if y is not None else np.ones((1, m))
            # C order for the products below (weights often come replicate-fastest, as the
            # bootstrap's tiles do: a strided Xs made them about three times slower)
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
    vy = _vander_rows(np.array([y0]), 2 * L, np.empty(K))[:, 0]  # T_q(y0), q <= 2L
    step = max(1, _CHUNK_FLOATS // K)
    Mx = np.zeros((R, K))
    Ax = np.zeros((R, T.shape[1], L + 1))
    with _blas_limit(DATA_PASS_BLAS_THREADS):
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            m = sl.stop - sl.start
            Vx = _vander_rows(x[sl], 2 * L, np.empty(K * m))  # (2L + 1, m)
            Xs = X[:, sl]
            Mx += Xs @ Vx.T
            # t_k T_i(x) of every target side by side, one product with the weights (as the
            # general path: the targets multiply the rows' values, not every weighting's)
            G = (T[sl][:, :, None] * Vx[: L + 1].T[:, None, :]).reshape(m, T.shape[1] * (L + 1))
            Ax += (Xs @ G).reshape(R, T.shape[1], L + 1)
    M[:] = Mx[:, :, None] * vy[None, None, : M.shape[2]]
    AtB[:] = Ax[:, :, :, None] * vy[None, None, None, : AtB.shape[3]]
    return M, AtB


# ---------------------------------------------------------------------------------------------
# ridge
# ---------------------------------------------------------------------------------------------
@validate_params(
    {"G": ["array-like"], "b": ["array-like"], "lam": NON_NEGATIVE_REAL}, prefer_skip_nested_validation=True
)
def ridge_solve(G, b, lam):
    """Solve ``(G + lam I) beta = b`` for all columns of ``b`` with one factorisation.

    Cholesky is tried first; if it fails (numerically indefinite ``G`` with a tiny ``lam``)
    the symmetric eigendecomposition is used, with eigenvalues below
    ``d * eps * max(eigenvalue)`` treated as zero (a minimum-norm solution).

    Parameters
    ----------
    G : array-like of shape (d, d)
        Symmetric positive semi-definite matrix.
    b : array-like of shape (d, r)
        Right-hand sides.
    lam : float
        Non-negative ridge penalty.

    Returns
    -------
    ndarray of shape (d, r)
        The solutions.

    Examples
    --------
    >>> import numpy as np
    >>> ridge_solve(np.eye(2), np.array([[2.0], [4.0]]), 1.0).ravel().tolist()
    [1.0, 2.0]
    """
    G = np.asarray(G, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1] or b.shape[0] != G.shape[0]:
        raise ValueError(f"G must be square and b must have as many rows; got {G.shape} and {b.shape}.")
    if not (np.isfinite(G).all() and np.isfinite(b).all()):
        raise ValueError("G and b must be finite.")
    with _blas_limit(SOLVE_BLAS_THREADS):
        return _ridge_solve(G, b, float(lam))


def _ridge_solve(G, b, lam):
    G = np.asarray(G, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    A = G.copy()  # the one d x d copy: the caller's G is never written
    A.flat[:: A.shape[0] + 1] += lam
    try:
        # A is symmetric, so its transpose (a free Fortran-ordered view) is the same matrix:
        # LAPACK factors it in place instead of scipy first copying A into Fortran order.
        c = scipy.linalg.cho_factor(A.T, lower=True, overwrite_a=True, check_finite=False)
        return scipy.linalg.cho_solve(c, b, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    ev, Q = scipy.linalg.eigh(G, check_finite=False)
    ev = ev + lam
    tol = G.shape[0] * np.finfo(np.float64).eps * max(abs(ev).max(), 1e-300)
    inv = np.where(ev > tol, 1.0 / np.where(ev > tol, ev, 1.0), 0.0)
    return Q @ (inv[:, None] * (Q.T @ b))


def _penalty(alpha, trace, d):
    return float(alpha) * trace / d


class ChebyshevRidge:
    """Multi-target ridge regression on a Chebyshev basis, fitted from sufficient statistics.

    This is the engine behind :class:`skcal.SecondOrderPlattCalibrator` and
    :func:`skcal.ce2_score`; it is a plain numerical class (not a scikit-learn estimator) and
    expects validated scores.

    Parameters
    ----------
    degree : int, default=12
        The Chebyshev degree ``l``.
    alpha : float, default=1e-12
        Ridge multiplier: ``lam = alpha * trace(G) / d``.
    basis : {"tensor", "total"}, default="tensor"
        Ignored (the 1-D basis is used) for one-column scores.
    dual : {"auto", True, False}, default="auto"
        ``"auto"`` uses the dual (kernel) form in :meth:`fit` when ``d > n``.
    chunk_size : int or None, default=None
        Rows per chunk of the data passes.

    Attributes
    ----------
    coef_ : ndarray of shape (d, n_targets)
    powers_ : ndarray of shape (d, 2)
        Index pairs ``(i, j)`` of the features ``T_i(x) T_j(y)``.
    basis_ : str
        The basis used (``"1d"`` for one-column scores).
    lam_ : float
        The ridge penalty ``alpha * trace(G) / d``.
    stats_ : ChebyshevMoments
        The accumulated statistics (what :meth:`partial_fit` adds to).
    solver_ : {"primal", "dual"}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> S = np.column_stack([rng.uniform(0, 1, 200), rng.uniform(0, 0.25, 200)])
    >>> t = S[:, 0] ** 2 + 3 * S[:, 1]
    >>> model = ChebyshevRidge(degree=2, alpha=0.0).fit(S, t)
    >>> float(np.abs(model.predict(S)[:, 0] - t).max()) < 1e-10
    True
    """

    _parameter_constraints: dict = {
        "degree": DEGREE,
        "alpha": ALPHA,
        "basis": BASIS,
        "dual": [StrOptions({"auto"}), "boolean"],
        "chunk_size": _CHUNK_SIZE,
    }

    def __init__(self, degree=12, alpha=1e-12, basis="tensor", dual="auto", chunk_size=None):
        self.degree = degree
        self.alpha = alpha
        self.basis = basis
        self.dual = dual
        self.chunk_size = chunk_size

    def _check_params(self):
        """Check the parameters against ``_parameter_constraints`` (when fitting, as an estimator does)."""
        params = {k: getattr(self, k) for k in self._parameter_constraints}
        validate_parameter_constraints(self._parameter_constraints, params, caller_name=type(self).__name__)

    def _setup(self, n_dims, n_targets):
        self._check_params()
        self.degree_ = int(self.degree)
        self.alpha_ = float(self.alpha)
        self.basis_ = _effective_basis(self.basis, n_dims)
        self.powers_ = basis_powers(self.degree_, self.basis_)
        self.n_dims_ = n_dims
        self.stats_ = ChebyshevMoments(self.degree_, n_dims, n_targets)

    @staticmethod
    def _prep(scores, targets, sample_weight):
        S = _check_engine_scores(scores)
        T = _check_engine_targets(targets, S.shape[0])
        w = check_sample_weight(sample_weight, S.shape[0], allow_zero_total=True)
        return S, T, w

    @validate_params(
        {"scores": ["array-like"], "targets": ["array-like"], "sample_weight": SAMPLE_WEIGHT},
        prefer_skip_nested_validation=True,
    )
    def fit(self, scores, targets, sample_weight=None):
        """Fit from scratch; the dual form is used when ``d > n`` (``dual="auto"``).

        Parameters
        ----------
        scores : array-like of shape (n, n_dims)
            Scores (``m`` in [0, 1], ``sigma2`` in [0, 1/4]).
        targets : array-like of shape (n, n_targets) or (n,)
            Regression targets.
        sample_weight : array-like of shape (n,) or None, default=None
            Non-negative weights.

        Returns
        -------
        ChebyshevRidge
            The fitted model.
        """
        S, T, w = self._prep(scores, targets, sample_weight)
        self._setup(S.shape[1], T.shape[1])
        d = self.powers_.shape[0]
        use_dual = self.dual is True or (self.dual == "auto" and d > S.shape[0])
        self.stats_.update(S, T, w, self.chunk_size)
        self._solution = None
        if use_dual:
            self._solve_dual(S, T, w)
        else:
            self._solve_primal()
        return self

    @validate_params(
        {"scores": ["array-like"], "targets": ["array-like"], "sample_weight": SAMPLE_WEIGHT},
        prefer_skip_nested_validation=True,
    )
    def partial_fit(self, scores, targets, sample_weight=None):
        """Add a batch to the statistics; the ridge is solved when ``coef_`` is next read.

        Parameters
        ----------
        scores : array-like of shape (n, n_dims)
            Validated scores.
        targets : array-like of shape (n, n_targets) or (n,)
            Regression targets.
        sample_weight : array-like of shape (n,) or None, default=None
            Non-negative weights.

        Returns
        -------
        ChebyshevRidge
            The updated model (always solved in the primal form).
        """
        S, T, w = self._prep(scores, targets, sample_weight)
        if not hasattr(self, "stats_"):
            self._setup(S.shape[1], T.shape[1])
        elif S.shape[1] != self.n_dims_ or T.shape[1] != self.stats_.n_targets:
            raise ValueError(
                f"partial_fit got scores with {S.shape[1]} columns and {T.shape[1]} targets; "
                f"the model was started with {self.n_dims_} and {self.stats_.n_targets}."
            )
        self._check_params()  # alpha may change between batches
        self.alpha_ = float(self.alpha)
        self.stats_.update(S, T, w, self.chunk_size)
        self._solution = None  # solved lazily, on the next read of coef_ / lam_ / solver_
        return self

    @validate_params({"stats": [ChebyshevMoments]}, prefer_skip_nested_validation=True)
    def fit_stats(self, stats):
        """Fit from precomputed statistics (restricted to ``degree`` if they are of higher degree).

        The ridge is solved lazily, on the first read of ``coef_``.

        Parameters
        ----------
        stats : ChebyshevMoments
            Statistics of degree at least ``degree``.

        Returns
        -------
        ChebyshevRidge
            The model.
        """
        if not isinstance(stats, ChebyshevMoments):
            raise TypeError(f"stats must be a ChebyshevMoments object; got {type(stats).__name__}.")
        self._setup(stats.n_dims, stats.n_targets)
        if stats.degree < self.degree_:
            raise ValueError(f"stats have degree {stats.degree}, below the model's degree {self.degree_}.")
        self.stats_ = stats.restrict(self.degree_) if stats.degree != self.degree_ else stats.copy()
        self._solution = None
        return self

    def _solved(self):
        sol = self.__dict__.get("_solution")
        if sol is None:
            if "stats_" not in self.__dict__:
                raise AttributeError(f"This {type(self).__name__} is not fitted yet.")
            sol = self._solve_primal()
        return sol

    @property
    def coef_(self):
        """Coefficients ``(d, n_targets)`` (solved on first access after new data)."""
        return self._solved()[0]

    @property
    def lam_(self):
        """The ridge penalty ``alpha * trace(G) / d`` of the current solution."""
        return self._solved()[1]

    @property
    def solver_(self):
        """``"primal"`` or ``"dual"``."""
        return self._solved()[2]

    def _solve_primal(self):
        st = self.stats_
        G = st.gram(self.basis_)
        b = st.cross(self.basis_)
        d = G.shape[0]
        lam = _penalty(self.alpha_, float(np.trace(G)), d)
        self._solution = (ridge_solve(G, b, lam), lam, "primal")
        return self._solution

    def _solve_dual(self, S, T, w):
        Phi = chebyshev_design(S, self.degree_, self.basis_)
        if w is not None:
            sw = np.sqrt(w)
            Phi = Phi * sw[:, None]
            T = T * sw[:, None]
        with _blas_limit(SOLVE_BLAS_THREADS):
            K = Phi @ Phi.T
        d = Phi.shape[1]
        lam = _penalty(self.alpha_, float(np.trace(K)), d)
        self._solution = (Phi.T @ ridge_solve(K, T, lam), lam, "dual")

    def coef_grid(self):
        """Return the coefficients as a grid indexed by the degrees ``(i, j)``.

        Returns
        -------
        ndarray of shape (n_targets, l + 1, l + 1) or (n_targets, l + 1, 1)
            ``C[r, i, j]`` multiplies ``T_i(x) T_j(y)``.
        """
        L = self.degree_
        r = self.coef_.shape[1]
        C = np.zeros((r, L + 1, L + 1 if self.n_dims_ == 2 else 1))
        C[:, self.powers_[:, 0], self.powers_[:, 1]] = self.coef_.T
        return C

    @validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
    def predict(self, scores):
        """Evaluate the fitted polynomials, chunked, without an ``n x d`` matrix.

        Parameters
        ----------
        scores : array-like of shape (n, n_dims)
            Scores.

        Returns
        -------
        ndarray of shape (n, n_targets)
            The raw (unclipped) polynomial values.
        """
        S = _check_engine_scores(scores, self.n_dims_)
        return _evaluate(S, self.coef_grid(), chunk_size=self.chunk_size)


@validate_params(
    {"scores": ["array-like"], "C": ["array-like"], "chunk_size": _CHUNK_SIZE},
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
    S = _check_engine_scores(scores)
    C = np.asarray(C, dtype=np.float64)
    if (
        C.ndim != 3
        or (C.shape[1] > 1 and (C.shape[2] == 1) != (S.shape[1] == 1))
        or (S.shape[1] == 2 and C.shape[2] != C.shape[1])
    ):
        raise ValueError(f"C of shape {C.shape} does not match scores with {S.shape[1]} column(s).")
    return _evaluate(S, C, chunk_size)


def _evaluate(S, C, chunk_size=None):
    L = C.shape[1] - 1
    x, y = _map(S)
    out = np.empty((S.shape[0], C.shape[0]))
    if y is not None and C.shape[0] > L + 1 and S.shape[0] and y.min() == y.max():
        # every row at one second score (sigma2 constant): sum_ij C_ij T_i(x) T_j(y0) is
        # sum_i (sum_j C_ij T_j(y0)) T_i(x), the coefficients contracted once
        vy = _vander_rows(y[:1], L, np.empty(L + 1))[:, 0]
        Cb = np.einsum("rij,j->ir", C, vy)  # (L + 1, targets)
        step = int(chunk_size) if chunk_size is not None else _chunk_rows(L)
        buf = np.empty((L + 1) * min(step, S.shape[0]))
        with _blas_limit(DATA_PASS_BLAS_THREADS):
            for start in range(0, S.shape[0], step):
                sl = slice(start, start + step)
                out[sl] = _vander_rows(x[sl], L, buf).T @ Cb
        return out
    if y is not None and C.shape[0] > L + 1:
        # many targets (bootstrap replicates' fits): the rows' products T_i(x) T_j(y), a
        # sub-chunk of rows at a time, times all the coefficients in one product
        Cflat = C.reshape(C.shape[0], (L + 1) ** 2).T  # [(i, j), r], i slowest as in the grid
        sub = int(chunk_size) if chunk_size is not None else max(1, _CHUNK_FLOATS // ((L + 1) ** 2))
        va, vb = np.empty((L + 1) * min(sub, S.shape[0])), np.empty((L + 1) * min(sub, S.shape[0]))
        with _blas_limit(DATA_PASS_BLAS_THREADS):
            for start in range(0, S.shape[0], sub):
                sl = slice(start, start + sub)
                A = _vander_rows(x[sl], L, va)
                B = _vander_rows(y[sl], L, vb)
                m = A.shape[1]
                out[sl] = (A.T[:, :, None] * B.T[:, None, :]).reshape(m, (L + 1) ** 2) @ Cflat
        return out
    step = int(chunk_size) if chunk_size is not None else _chunk_rows(L)
    rows = min(step, S.shape[0])
    buf_a, buf_b, buf_c = np.empty((L + 1) * rows), np.empty((L + 1) * rows), np.empty((L + 1) * rows)
    with _blas_limit(DATA_PASS_BLAS_THREADS):
        for start in range(0, S.shape[0], step):
            sl = slice(start, start + step)
            A = _vander_rows(x[sl], L, buf_a)  # (L+1, n_chunk), reused buffer
            if y is None:
                out[sl] = (C[:, :, 0] @ A).T
                continue
            B = _vander_rows(y[sl], L, buf_b)
            CA = buf_c[: A.size].reshape(A.shape)
            for r in range(C.shape[0]):
                np.matmul(C[r].T, A, out=CA)
                CA *= B
                out[sl, r] = CA.sum(axis=0)
    return out
