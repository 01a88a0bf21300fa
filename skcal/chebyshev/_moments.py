"""Additive sufficient statistics of a Chebyshev ridge regression (:class:`ChebyshevMoments`)."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import Options, validate_params
from skcal._constraints import DEGREE, ENGINE_BASIS, POSITIVE_INT, SAMPLE_WEIGHT
from skcal._docstrings import fill
from skcal._threads import one_blas_thread
from skcal._validation import check_sample_weight
from skcal.chebyshev._basis import (
    CHUNK_SIZE,
    basis_powers,
    check_engine_scores,
    check_engine_targets,
    chunk_rows,
    map_validated,
    vander_rows,
)

__all__ = ["ChebyshevMoments"]

#: The data of a pass, its constraints and its description (see :func:`skcal._docstrings.fill`).
DATA_CONSTRAINTS = {"scores": ["array-like"], "targets": ["array-like"], "sample_weight": SAMPLE_WEIGHT}
DATA_DOCS = {
    "scores": """scores : array-like of shape (n, n_dims)
    Scores (``m`` in [0, 1], ``sigma2`` in [0, 1/4]; finite).""",
    "targets": """targets : array-like of shape (n, n_targets) or (n,)
    Finite regression targets.""",
    "sample_weight": """sample_weight : array-like of shape (n,) or None, default=None
    Finite non-negative weights.""",
}
DATA_DOCS["data"] = "\n".join(DATA_DOCS.values())
#: The basis and degree of a quantity derived from the moments.
_DERIVED = {"basis": ENGINE_BASIS, "degree": [*DEGREE, None]}
#: Their description, written once (see :func:`skcal._docstrings.fill`).
_DERIVED_DOCS = {
    "basis_degree": """basis : {"tensor", "total", "1d"}, default="tensor"
    The basis (``"1d"`` is used for one-dimensional statistics).
degree : int or None, default=None
    A degree up to the statistics' degree (``None``: theirs)."""
}


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
    >>> from skcal.chebyshev import ChebyshevMoments, chebyshev_design
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
    @fill(**DATA_DOCS)
    @validate_params(
        {**DATA_CONSTRAINTS, "degree": DEGREE, "chunk_size": CHUNK_SIZE}, prefer_skip_nested_validation=True
    )
    def from_data(cls, scores, targets, degree, sample_weight=None, chunk_size=None):
        """Return the statistics of ``(scores, targets)``; see :meth:`update`.

        Parameters
        ----------
        {scores}
        {targets}
        degree : int
            The maximum degree.
        {sample_weight}
        chunk_size : int or None, default=None
            Rows per chunk.

        Returns
        -------
        ChebyshevMoments
            A new object.
        """
        S = check_engine_scores(scores)
        T = check_engine_targets(targets, S.shape[0])
        return cls(degree, S.shape[1], T.shape[1]).update(S, T, sample_weight, chunk_size)

    @fill(**DATA_DOCS)
    @validate_params({**DATA_CONSTRAINTS, "chunk_size": CHUNK_SIZE}, prefer_skip_nested_validation=True)
    def update(self, scores, targets, sample_weight=None, chunk_size=None):
        """Add the statistics of a batch in place (chunked) and return ``self``.

        Parameters
        ----------
        {data}
        chunk_size : int or None, default=None
            Rows per chunk; ``None`` picks about ``2^21 / (2L + 1)`` rows (16 MB per
            Vandermonde block).

        Returns
        -------
        ChebyshevMoments
            The updated object.
        """
        S = check_engine_scores(scores, self.n_dims)
        T = check_engine_targets(targets, S.shape[0], self.n_targets)
        w = check_sample_weight(sample_weight, S.shape[0], allow_zero_total=True)
        L = self.degree
        step = int(chunk_size) if chunk_size is not None else chunk_rows(L)
        x, y = map_validated(S)
        K = 2 * L + 1
        rows = min(step, S.shape[0])
        # Buffers reused by every chunk of this call: the (2L+1) x chunk Vandermonde blocks are
        # the large temporaries of the pass (16 MB each by default). Allocating them per chunk
        # costs page faults whenever the allocator returns them to the OS at once, as it does
        # under dask.distributed's MALLOC_TRIM_THRESHOLD_=65536 (see docs/benchmarks/scale_dask.md).
        buf_x, buf_y, buf_w = np.empty(K * rows), np.empty(K * rows), np.empty(K * rows)
        buf_t = np.empty((L + 1) * rows)
        ones = np.ones((1, rows))
        with one_blas_thread():
            for start in range(0, S.shape[0], step):
                sl = slice(start, start + step)
                # (2L+1, n_chunk) C-contiguous blocks of T_k at the chunk's scores
                Vx = vander_rows(x[sl], 2 * L, buf_x)
                m = Vx.shape[1]
                Vy = vander_rows(y[sl], 2 * L, buf_y) if y is not None else ones[:, :m]
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
        degree = self._degree(degree)
        new = ChebyshevMoments(degree, self.n_dims, self.n_targets)
        new.M = self.M[: 2 * degree + 1, : new.M.shape[1]].copy()
        new.AtB = self.AtB[:, : degree + 1, : new.AtB.shape[2]].copy()
        new.tt = self.tt.copy()
        new.sum_w = self.sum_w
        new.n_samples = self.n_samples
        return new

    # -- derived quantities ---------------------------------------------------------------
    def _degree(self, degree):
        """``degree`` as an int, at most the statistics' degree (``None``: theirs)."""
        L = self.degree if degree is None else int(degree)
        if L > self.degree:
            raise ValueError(f"degree {L} exceeds the statistics' degree {self.degree}.")
        return L

    def _powers(self, basis, degree):
        """The checked degree, the basis (``"1d"`` for one-dimensional statistics) and its powers."""
        L = self._degree(degree)
        basis = "1d" if self.n_dims == 1 else basis
        return L, basis, basis_powers(L, basis)

    @fill(**_DERIVED_DOCS)
    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def gram(self, basis="tensor", degree=None):
        """The Gram matrix ``G = Phi^T W Phi`` (``d x d``) assembled from the moment matrix.

        ``G[(i,j), (i',j')] = (M[i+i', j+j'] + M[i+i', |j-j'|] + M[|i-i'|, j+j'] +
        M[|i-i'|, |j-j'|]) / 4``: the x-sums are folded first (``Q = M[i+i'] + M[|i-i'|]``);
        then each row ``(i, j)`` of ``G`` is the sum of two contiguous slices of ``Q[i]`` (the
        loop runs over the ``d`` basis functions, never over samples).

        Parameters
        ----------
        {basis_degree}

        Returns
        -------
        ndarray of shape (d, d)
            The Gram matrix.
        """
        L, basis, P = self._powers(basis, degree)
        M = self.M
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

    @fill(**_DERIVED_DOCS)
    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def gram_trace(self, basis="tensor", degree=None):
        """Return ``trace(G)`` from the moments (no Gram assembly).

        Parameters
        ----------
        {basis_degree}

        Returns
        -------
        float
            The trace.
        """
        P = self._powers(basis, degree)[2]
        i, j = 2 * P[:, 0], 2 * P[:, 1]
        M = self.M
        if self.n_dims == 1:
            return float(0.5 * (M[i, 0] + M[0, 0]).sum())
        return float(0.25 * (M[i, j] + M[i, 0] + M[0, j] + M[0, 0]).sum())

    @fill(**_DERIVED_DOCS)
    @validate_params(_DERIVED, prefer_skip_nested_validation=True)
    def cross(self, basis="tensor", degree=None):
        """Return the cross products ``Phi^T W t`` as a ``(d, n_targets)`` array.

        Parameters
        ----------
        {basis_degree}

        Returns
        -------
        ndarray of shape (d, n_targets)
            The cross products.
        """
        P = self._powers(basis, degree)[2]
        return self.AtB[:, P[:, 0], P[:, 1]].T.copy()

    @fill(**_DERIVED_DOCS)
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
        {basis_degree}
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
