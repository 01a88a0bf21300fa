"""Ridge regression on a Chebyshev basis from sufficient statistics (:class:`ChebyshevRidge`)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from skcal._compat import StrOptions, class_constraints, validate_parameter_constraints, validate_params
from skcal._constraints import ALPHA, BASIS, DEGREE, NON_NEGATIVE_REAL
from skcal._docstrings import fill
from skcal._threads import one_blas_thread
from skcal._validation import check_sample_weight
from skcal.chebyshev._basis import (
    CHUNK_SIZE,
    basis_powers,
    chebyshev_design,
    check_engine_scores,
    check_engine_targets,
    effective_basis,
    evaluate_grid,
)
from skcal.chebyshev._moments import DATA_CONSTRAINTS, DATA_DOCS, ChebyshevMoments

__all__ = ["ChebyshevRidge", "ridge_solve"]


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
    with one_blas_thread():
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
        "chunk_size": CHUNK_SIZE,
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
        compiled = class_constraints(type(self))
        validate_parameter_constraints(
            self._parameter_constraints, params, caller_name=type(self).__name__, compiled=compiled
        )

    def _setup(self, n_dims, n_targets):
        self._check_params()
        self.degree_ = int(self.degree)
        self.alpha_ = float(self.alpha)
        self.basis_ = effective_basis(self.basis, n_dims)
        self.powers_ = basis_powers(self.degree_, self.basis_)
        self.n_dims_ = n_dims
        self.stats_ = ChebyshevMoments(self.degree_, n_dims, n_targets)

    @staticmethod
    def _prep(scores, targets, sample_weight):
        S = check_engine_scores(scores)
        T = check_engine_targets(targets, S.shape[0])
        w = check_sample_weight(sample_weight, S.shape[0], allow_zero_total=True)
        return S, T, w

    @fill(**DATA_DOCS)
    @validate_params(DATA_CONSTRAINTS, prefer_skip_nested_validation=True)
    def fit(self, scores, targets, sample_weight=None):
        """Fit from scratch; the dual form is used when ``d > n`` (``dual="auto"``).

        Parameters
        ----------
        {data}

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

    @fill(**DATA_DOCS)
    @validate_params(DATA_CONSTRAINTS, prefer_skip_nested_validation=True)
    def partial_fit(self, scores, targets, sample_weight=None):
        """Add a batch to the statistics; the ridge is solved when ``coef_`` is next read.

        Parameters
        ----------
        {data}

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
        with one_blas_thread():
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
        S = check_engine_scores(scores, self.n_dims_)
        return evaluate_grid(S, self.coef_grid(), chunk_size=self.chunk_size)
