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

The parts: the degree rule (``_degree``), the bases and their evaluation (``_basis``), the
additive statistics (``_moments``), their bootstrap replicates (``_replicate``) and the ridge
(``_ridge``). Every name is imported from here.
"""

from __future__ import annotations

from skcal._constraints import BASES
from skcal.chebyshev._basis import (
    basis_powers,
    chebyshev_design,
    chebyshev_evaluate,
    map_scores,
    n_basis_functions,
)
from skcal.chebyshev._degree import (
    AUTO_FEATURES,
    AUTO_SAMPLES_PER_FEATURE,
    MAX_AUTO_DEGREE,
    auto_degree,
    check_auto_sample_size,
    degree_cap,
    degree_schedule,
    theta,
)
from skcal.chebyshev._moments import ChebyshevMoments
from skcal.chebyshev._replicate import replicate_moments
from skcal.chebyshev._ridge import ChebyshevRidge, ridge_solve

__all__ = [
    "BASES",
    "AUTO_FEATURES",
    "AUTO_SAMPLES_PER_FEATURE",
    "MAX_AUTO_DEGREE",
    "ChebyshevMoments",
    "ChebyshevRidge",
    "auto_degree",
    "check_auto_sample_size",
    "basis_powers",
    "chebyshev_design",
    "chebyshev_evaluate",
    "degree_cap",
    "degree_schedule",
    "map_scores",
    "n_basis_functions",
    "replicate_moments",
    "ridge_solve",
    "theta",
]
