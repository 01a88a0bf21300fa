"""Mergeable statistics of the polynomial CE2 / CE1 estimators at a fixed degree and ridge.

The polynomial estimator of *The Minimax Rate of Second-Order Calibration* needs two passes
over the data:

1. :class:`CE2Statistics` (:class:`CE1Statistics` for a score ``m`` alone) accumulates the
   Chebyshev moment statistics of the two moment regressions (the moment matrix ``M``, the cross
   products ``A^T diag(w t) B``, ``sum w t^2``, ``sum w``, ``sum w^2``). They add over chunks;
   :meth:`CE2Statistics.compute` solves the ridge and returns the coefficients, and
   :meth:`CE2Statistics.plug_in` returns the (empty) statistics of the second pass.
2. :class:`CE2PlugInStatistics` accumulates ``sum w |eta1_hat(S) - m|`` and
   ``sum w |eta2_hat(S) - (m^2 + sigma2)|`` for the fitted (clipped) functions; ``compute``
   returns ``CE2_hat`` (or ``CE1_hat``).

The ridge is always solved in its primal form from the statistics (``G + lam I`` with
``lam = alpha trace(G) / d``); :func:`skcal.ce2.ce2_score` uses exactly these objects at a fixed
degree whenever the primal form applies (``d <= n``), so the in-memory and the chunked paths
cannot drift.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import ALPHA, BASIS, DEGREE, ORDER, SAMPLE_WEIGHT
from skcal._validation import check_consistent_length, check_sample_weight, check_scores
from skcal.chebyshev import ChebyshevMoments, ChebyshevRidge, chebyshev_evaluate, replicate_moments
from skcal.stats._base import BaseStatistics, count_rows
from skcal.stats._replicate import ReplicatePlan, load_replicate_kernel, stack_empty, tile_copies
from skcal.votes import check_snapshots, first_order_targets, snapshot_targets

__all__ = ["CE1Statistics", "CE2PlugInStatistics", "CE2Statistics", "MomentStatistics"]

_UPDATE = {"y_true": ["array-like", None], "scores": ["array-like"], "sample_weight": SAMPLE_WEIGHT}


def _first_order_targets(y_true):
    """``t1`` from binary labels, snapshots (``Snapshots`` or an ``(n, k >= 2)`` array) or counts."""
    return first_order_targets(y_true, "y_true")


class MomentStatistics(BaseStatistics):
    """Chebyshev moment statistics of ridge regressions: the first pass of CE2 and CE1 (base class).

    :class:`CE2Statistics` and :class:`CE1Statistics` are its two kinds; it is what
    :meth:`skcal.platt.SecondOrderPlattCalibrator.fit_statistics` takes.
    """

    _n_dims = 2
    _n_targets = 2

    def _empty(self):
        L = self.degree
        qy = 2 * L + 1 if self._n_dims == 2 else 1
        qb = L + 1 if self._n_dims == 2 else 1
        return {
            "M": np.zeros((2 * L + 1, qy)),
            "AtB": np.zeros((self._n_targets, L + 1, qb)),
            "tt": np.zeros(self._n_targets),
            "sum_weight": np.zeros(()),
            "sum_weight_sq": np.zeros(()),
            "n_samples": np.zeros((), dtype=np.int64),
        }

    def _sums(self, T, S, w):
        """Statistics of validated targets ``T`` ``(n, r)``, scores ``S`` and weights (or None)."""
        mom = ChebyshevMoments(self.degree, self._n_dims, self._n_targets).update(S, T, w)
        return {
            "M": mom.M,
            "AtB": mom.AtB,
            "tt": mom.tt,
            "sum_weight": np.asarray(mom.sum_w),
            "sum_weight_sq": np.asarray(float(S.shape[0]) if w is None else float(w @ w)),
            "n_samples": np.asarray(S.shape[0], dtype=np.int64),
        }

    @classmethod
    @validate_params(
        {"targets": ["array-like"], "scores": ["array-like"], "sample_weight": SAMPLE_WEIGHT},
        prefer_skip_nested_validation=True,
    )
    def from_validated(cls, targets, scores, sample_weight=None, **params):
        """Build the moment statistics of validated rows (the constructor :func:`skcal.ce2.ce2_score` uses).

        Equals ``update`` on the raw inputs the arrays were validated from; they are not checked
        again (see :meth:`BaseStatistics.from_validated`).

        Parameters
        ----------
        targets : ndarray of shape (n, r)
            The regression targets: ``(t1, t2)`` of the snapshots for :class:`CE2Statistics`
            (:func:`skcal.votes.snapshot_targets`), ``t1`` (binary labels or the snapshots'
            ``t1``) as one column for :class:`CE1Statistics`.
        scores : ndarray of shape (n, 2) or (n, 1)
            Validated scores (:func:`skcal._validation.check_scores`): ``(m, sigma2)``, or ``m``.
        sample_weight : ndarray of shape (n,) or None, default=None
            Validated non-negative weights.
        **params : dict
            The constructor's arguments (``degree``, ``alpha``, ``basis``).

        Returns
        -------
        MomentStatistics
            The statistics of the rows.
        """
        return super().from_validated(targets, scores, sample_weight=sample_weight, **params)

    @validate_params(_UPDATE, prefer_skip_nested_validation=True)
    def update(self, y_true, scores, sample_weight=None):
        """Add one chunk of rows; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n, k), skcal.votes.VoteCounts or array-like of shape (n,)
            Snapshots or vote counts (:class:`CE2Statistics`); binary labels, snapshots or vote
            counts (:class:`CE1Statistics`).
        scores : array-like of shape (n, 2) or (n,)
            The scores ``(m, sigma2)`` (CE2) or ``m`` (CE1; column 0 of two-column scores).
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights (zeros allowed).

        Returns
        -------
        MomentStatistics
            The updated object.
        """
        return super().update(y_true, scores, sample_weight=sample_weight)

    def to_moments(self):
        """Return the statistics as a :class:`skcal.chebyshev.ChebyshevMoments` object.

        Returns
        -------
        ChebyshevMoments
            A copy, usable by ``ChebyshevRidge.fit_stats``.
        """
        st = self.stats_
        mom = ChebyshevMoments(self.degree, self._n_dims, self._n_targets)
        mom.M = st["M"].copy()
        mom.AtB = st["AtB"].copy()
        mom.tt = st["tt"].copy()
        mom.sum_w = float(st["sum_weight"])
        mom.n_samples = int(st["n_samples"])
        return mom

    def effective_sample_size(self):
        """Return Kish's effective sample size ``(sum w)^2 / sum w^2`` (``n`` for unit weights).

        Rows of weight zero count as dropped rows, which is what ``degree="auto"`` uses.

        Returns
        -------
        float
            0 when no row has positive weight.
        """
        sw, sw2 = float(self.stats_["sum_weight"]), float(self.stats_["sum_weight_sq"])
        return sw * sw / sw2 if sw2 > 0 else 0.0

    def fit_ridge(self):
        """Return the ridge regression solved from the statistics (primal form).

        ``lam = alpha trace(G) / d``; :meth:`compute` returns its coefficients.

        Returns
        -------
        ChebyshevRidge
            The fitted engine (``predict``, ``coef_grid``).
        """
        if not float(self.stats_["sum_weight"]) > 0:
            raise ValueError(
                f"{type(self).__name__} has no rows of positive weight; update it with data first."
            )
        return ChebyshevRidge(self.degree, self.alpha, self.basis).fit_stats(self.to_moments())

    def _compute(self):
        return self.fit_ridge().coef_grid()

    def plug_in(self):
        """Return the empty second-pass statistics for the coefficients fitted here.

        Returns
        -------
        CE2PlugInStatistics
            Update it with the same rows (``update(y, scores, sample_weight)``) and call
            ``compute`` for the estimate.
        """
        return CE2PlugInStatistics(coef=self.compute(), order=self._n_targets if self._n_dims == 2 else 1)

    # -- bootstrap replicates: the moments of every replicate, then one fit each -----------
    def _replicate_plan(self, T, S, w, index=None):
        return _MomentPlan(self, T, S, w)

    def _replicate_second_pass(self, coefs):
        """The plug-in template of the replicates' fits (see :meth:`PoissonBootstrap.plug_in`)."""
        return CE2PlugInStatistics(coef=coefs, order=self._n_targets if self._n_dims == 2 else 1)


class _MomentPlan(ReplicatePlan):
    """Replicates of the Chebyshev moments: per tile the rows' Chebyshev values, one product a replicate."""

    def __init__(self, stats, T, S, w):
        self.stats, self.T, self.S, self.w = stats, T, S, w
        self.n_rows = S.shape[0]
        # tiles of 2^18 / R rows: a tile's Chebyshev values are two (2L + 1, rows) recurrences, and
        # each replicate's moments one BLAS product of them (skcal.chebyshev.replicate_moments)

    def empty(self, n_replicates):
        return stack_empty(self.stats._empty(), n_replicates)

    def add(self, out, W, start, stop):
        sl = slice(start, stop)
        st = self.stats
        L = st.degree
        S, T = self.S[sl], self.T[sl]
        X = W if self.w is None else W * self.w[sl]
        # one product of the tile's Chebyshev values with every replicate's weights (counts, or
        # counts times the validated row weights: nothing to check)
        M, AtB = replicate_moments(S, T, X, L, check_input=False)
        out["M"] += M
        out["AtB"] += AtB
        out["tt"] += X @ (T * T)
        # W @ 1 shared by the tile's plans (a product, not a sum along the strided axis of W);
        # exact for counts
        copies = tile_copies(W)
        out["sum_weight"] += copies if self.w is None else W @ self.w[sl]
        out["sum_weight_sq"] += copies if self.w is None else X @ self.w[sl]
        out["n_samples"] += np.rint(copies).astype(np.int64)
        return out


class CE2Statistics(MomentStatistics):
    """First pass of the polynomial CE2 estimator: Chebyshev moment statistics (mergeable).

    ``update(snapshots, scores, sample_weight=None)`` adds the statistics of the regressions of the
    unbiased snapshot targets ``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))`` (``a`` positive
    votes out of ``c``) on the tensor (or total-degree) Chebyshev basis of the scores
    ``(m, sigma2)``. ``compute`` solves the ridge (``lam = alpha trace(G) / d``, primal form) and returns
    the coefficients; :meth:`plug_in` starts the second pass.

    Parameters
    ----------
    degree : int
        The Chebyshev degree ``l`` (fixed; at most ``MAX_DEGREE_LIMIT``).
    alpha : float, default=1e-6
        The ridge multiplier.
    basis : {"tensor", "total"}, default="tensor"
        The two-dimensional basis.

    Attributes
    ----------
    stats_ : dict
        ``"M"`` ``(2l+1, 2l+1)``, ``"AtB"`` ``(2, l+1, l+1)``, ``"tt"`` ``(2,)``,
        ``"sum_weight"``, ``"sum_weight_sq"`` and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    CE2PlugInStatistics : The second pass.
    skcal.ce2.ce2_score : The in-memory estimate, computed through these objects.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import CE2Statistics
    >>> rng = np.random.default_rng(0)
    >>> S = np.column_stack([rng.uniform(0, 1, 400), rng.uniform(0, 0.25, 400)])
    >>> from skcal import Snapshots
    >>> Y = Snapshots(rng.uniform(size=(400, 2)) < S[:, :1])  # two votes a row
    >>> a, b = slice(0, 150), slice(150, None)
    >>> st = CE2Statistics(degree=2).update(Y[a], S[a]) + CE2Statistics(degree=2).update(Y[b], S[b])
    >>> plug = st.plug_in().update(Y[a], S[a]) + st.plug_in().update(Y[b], S[b])
    >>> from skcal.ce2 import ce2_score
    >>> bool(np.isclose(plug.compute(), ce2_score(Y, S, degree=2), rtol=1e-10))
    True
    """

    _param_names = ("degree", "alpha", "basis")
    _parameter_constraints: dict = {"degree": DEGREE, "alpha": ALPHA, "basis": BASIS}
    _n_dims = 2
    _n_targets = 2

    def __init__(self, *, degree, alpha=1e-6, basis="tensor"):
        self.degree = int(degree)
        self.alpha = float(alpha)
        self.basis = basis

    def _check_chunk(self, snapshots, scores, sample_weight=None):
        n = count_rows(scores)
        if n == 0:
            if count_rows(snapshots) != 0:
                raise ValueError(f"snapshots has {count_rows(snapshots)} rows but scores has none.")
            return None
        S = check_scores(scores, name="scores")
        if S.shape[1] != 2:
            raise ValueError(f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}.")
        Y = check_snapshots(snapshots, name="snapshots", n_samples=n)
        t1, t2, _ = snapshot_targets(Y)
        return np.column_stack([t1, t2]), S, check_sample_weight(sample_weight, n, allow_zero_total=True)


class CE1Statistics(MomentStatistics):
    """First pass of the polynomial CE1 estimator: 1-D Chebyshev moment statistics (mergeable).

    ``update(y_true, scores, sample_weight=None)`` with binary labels (or snapshots, whose
    ``t1`` is used) and the score ``m`` (shape ``(n,)``, ``(n, 1)``, or ``(n, 2)`` second-order
    scores of which column 0 is used), as :func:`skcal.ce2.ce1_score` takes them.

    Parameters
    ----------
    degree : int
        The Chebyshev degree ``l`` (fixed; at most ``MAX_DEGREE_LIMIT``).
    alpha : float, default=1e-6
        The ridge multiplier.

    Attributes
    ----------
    stats_ : dict
        ``"M"`` ``(2l+1, 1)``, ``"AtB"`` ``(1, l+1, 1)``, ``"tt"`` ``(1,)``, ``"sum_weight"``,
        ``"sum_weight_sq"`` and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    CE2Statistics : The second-order version.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import CE1Statistics
    >>> rng = np.random.default_rng(0)
    >>> m = rng.uniform(0, 1, 500)
    >>> y = (rng.uniform(size=500) < m).astype(int)
    >>> st = CE1Statistics(degree=3).update(y, m)
    >>> from skcal.ce2 import ce1_score
    >>> bool(np.isclose(st.plug_in().update(y, m).compute(), ce1_score(y, m, degree=3), rtol=1e-10))
    True
    """

    _param_names = ("degree", "alpha")
    _parameter_constraints: dict = {"degree": DEGREE, "alpha": ALPHA}
    _n_dims = 1
    _n_targets = 1
    basis = "tensor"  # ignored by the 1-D engine

    def __init__(self, *, degree, alpha=1e-6):
        self.degree = int(degree)
        self.alpha = float(alpha)

    def _check_chunk(self, y_true, scores, sample_weight=None):
        n = count_rows(scores)
        if n == 0:
            if count_rows(y_true) != 0:
                raise ValueError(f"y_true has {count_rows(y_true)} rows but scores has none.")
            return None
        S = check_scores(scores, name="scores")[:, :1]
        t1 = _first_order_targets(y_true)
        check_consistent_length(y_true=t1, scores=S)
        return t1[:, None], S, check_sample_weight(sample_weight, n, allow_zero_total=True)


class CE2PlugInStatistics(BaseStatistics):
    """Second pass of the polynomial CE2 / CE1 estimator: the plug-in sums (mergeable).

    For fitted coefficients ``coef`` (from :meth:`CE2Statistics.compute`) the statistics are
    ``sum w``, ``sum w |eta1_hat(S) - m|`` and ``sum w |eta2_hat(S) - (m^2 + sigma2)|`` with
    each fitted function clipped to [0, 1]; ``compute`` returns their ratio sum, the in-sample
    plug-in ``CE2_hat`` (``order=1``: ``CE1_hat``, the first term alone, from ``m`` only).
    ``update(y, scores, sample_weight=None)`` takes the labels for symmetry with the first pass;
    they are not used.

    Parameters
    ----------
    coef : array-like of shape (r, l + 1, l + 1) or (r, l + 1, 1)
        Chebyshev coefficients of ``eta1_hat`` (and ``eta2_hat``).
    order : {1, 2}, default=2
        2 for CE2 (two fitted functions, two-column scores), 1 for CE1.

    Attributes
    ----------
    stats_ : dict
        ``"sum_weight"``, ``"sum_abs"`` ``(order,)`` and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    CE2Statistics : The first pass.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import CE2PlugInStatistics
    >>> coef = np.zeros((2, 1, 1)); coef[:, 0, 0] = 0.5  # eta1 = eta2 = 1/2
    >>> st = CE2PlugInStatistics(coef=coef).update(None, np.array([[0.5, 0.25]]))
    >>> st.terms()
    (0.0, 0.0)
    """

    _param_names = ("coef", "order")
    _parameter_constraints: dict = {"coef": ["array-like"], "order": ORDER}

    def __init__(self, *, coef, order=2):
        C = np.array(coef, dtype=np.float64)
        core = C.shape[1:] if C.ndim == 4 else C.shape
        if C.ndim not in (3, 4) or core[0] < order or core[1] < 1 or not np.isfinite(C).all():
            raise ValueError(
                f"coef must be a finite (r, l + 1, l + 1) array with r >= {order}, or one such array per "
                f"bootstrap replicate; got {C.shape}."
            )
        self.coef = C
        self.order = int(order)

    def _empty(self):
        return {
            "sum_weight": np.zeros(()),
            "sum_abs": np.zeros(self.order),
            "n_samples": np.zeros((), dtype=np.int64),
        }

    def _sums(self, S, w, E=None):
        """The plug-in sums at validated scores ``S`` of the clipped fits ``E`` (evaluated if None)."""
        if self.coef.ndim == 4:
            raise ValueError(
                "coef holds one fit per bootstrap replicate: this object is the template of "
                "PoissonBootstrap.plug_in() and is updated through that bootstrap."
            )
        if E is None:
            E = self._evaluate(S)
        m = S[:, 0]
        dev = [np.abs(E[:, 0] - m)]
        if self.order == 2:
            dev.append(np.abs(E[:, 1] - (m * m + S[:, 1])))
        D = np.column_stack(dev)
        n = S.shape[0]
        return {
            "sum_weight": np.asarray(float(n) if w is None else float(w.sum())),
            "sum_abs": D.sum(axis=0) if w is None else w @ D,
            "n_samples": np.asarray(n, dtype=np.int64),
        }

    def _evaluate(self, S):
        C = self.coef if self.order == 2 else self.coef[:1]
        return np.clip(chebyshev_evaluate(S, C), 0.0, 1.0)

    def _check_chunk(self, y, scores, sample_weight=None):
        n = count_rows(scores)
        if n == 0:
            return None
        S = check_scores(scores, name="scores")
        if self.order == 2 and S.shape[1] != 2:
            raise ValueError(f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}.")
        if self.order == 1:
            S = S[:, :1]
        core = self.coef.shape[-3:]
        if core[1] > 1 and (core[2] > 1) != (S.shape[1] == 2):
            raise ValueError(
                f"coef of shape {self.coef.shape} does not match scores with {S.shape[1]} column(s)."
            )
        return S, check_sample_weight(sample_weight, n, allow_zero_total=True)

    @classmethod
    @validate_params(
        {"scores": ["array-like"], "sample_weight": SAMPLE_WEIGHT, "fitted": ["array-like", None]},
        prefer_skip_nested_validation=True,
    )
    def from_validated(cls, scores, sample_weight=None, *, fitted=None, **params):
        """Build the plug-in sums of validated rows (the constructor :func:`skcal.ce2.ce2_score` uses).

        Equals ``CE2PlugInStatistics(**params).update(None, scores, sample_weight)`` on the raw
        scores; the arrays are not checked again (see :meth:`BaseStatistics.from_validated`).

        Parameters
        ----------
        scores : ndarray of shape (n, 2) or (n, 1)
            Validated scores, two columns for ``order=2``, ``m`` alone for ``order=1``.
        sample_weight : ndarray of shape (n,) or None, default=None
            Validated non-negative weights.
        fitted : ndarray of shape (n, r), default=None
            The clipped fitted functions at ``scores`` when the caller has them (the in-memory
            estimator evaluates its model once and uses the values twice); ``None`` evaluates
            ``coef``.
        **params : dict
            ``coef`` and ``order``.

        Returns
        -------
        CE2PlugInStatistics
            The statistics of the rows.
        """
        obj = cls(**params)
        obj._stats = obj._sums(scores, sample_weight, fitted)
        obj.n_updates_ = 1
        return obj

    @validate_params(_UPDATE, prefer_skip_nested_validation=True)
    def update(self, y_true, scores, sample_weight=None):
        """Add one chunk of rows; return ``self``.

        Parameters
        ----------
        y_true : array-like or None
            The labels (not used: the plug-in sums depend on the scores only).
        scores : array-like of shape (n, 2) or (n,)
            The scores at which the fitted functions are evaluated.
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights (zeros allowed).

        Returns
        -------
        CE2PlugInStatistics
            The updated object.
        """
        return super().update(y_true, scores, sample_weight=sample_weight)

    def terms(self):
        """Return the plug-in terms ``(term1, term2)`` (``term2 = 0.0`` for ``order=1``).

        Returns
        -------
        tuple of float
            ``mean_w |eta1_hat - m|`` and ``mean_w |eta2_hat - v|``.
        """
        sw = float(self.stats_["sum_weight"])
        if not sw > 0:
            raise ValueError("CE2PlugInStatistics has no rows of positive weight; update it with data first.")
        t = self.stats_["sum_abs"] / sw
        return float(t[0]), float(t[1]) if self.order == 2 else 0.0

    def _compute(self):
        t1, t2 = self.terms()
        return t1 + t2

    # -- bootstrap replicates: replicate r's fit evaluated for replicate r's weights ----------
    def _replicate_plan(self, S, w, index=None):
        if self.coef.ndim != 4:
            raise ValueError(
                "The replicates of the plug-in pass need one fit per replicate: use "
                "PoissonBootstrap(CE2Statistics(...)).plug_in()."
            )
        return _PlugInPlan(self, S, w)

    def _replicate_compute(self, stats):
        sw = stats["sum_weight"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sw > 0, stats["sum_abs"].sum(axis=1) / np.where(sw > 0, sw, 1.0), np.nan)


class _PlugInPlan(ReplicatePlan):
    """Every replicate's clipped fit at the tile's scores: one product of the basis with all the fits."""

    def __init__(self, stats, S, w):
        self.stats, self.S, self.w = stats, S, w
        self.n_rows = S.shape[0]
        C = stats.coef[:, : stats.order]
        # (order * R, L + 1, L + 1), order by order: each order's fits a block of the evaluations
        self.grids = np.ascontiguousarray(C.transpose(1, 0, 2, 3))
        self.grids = self.grids.reshape(stats.order * C.shape[0], *C.shape[2:])
        self.kernel = load_replicate_kernel()

    def empty(self, n_replicates):
        if self.grids.shape[0] != n_replicates * self.stats.order:
            raise ValueError(
                f"coef holds {self.grids.shape[0] // self.stats.order} fits for {n_replicates} replicates."
            )
        return stack_empty(self.stats._empty(), n_replicates)

    def add(self, out, W, start, stop):
        sl = slice(start, stop)
        S = self.S[sl]
        X = W if self.w is None else W * self.w[sl]
        R, order = X.shape[0], self.stats.order
        # every replicate's fits at the tile's scores (rows, order * R), without the (rows,
        # (L + 1)^2) design matrix; then per order the weighted |clipped fit - target| summed
        E = chebyshev_evaluate(S, self.grids)
        m = S[:, 0]
        targets = np.stack([m] if order == 1 else [m, m * m + S[:, 1]])
        if self.kernel is not None:  # one fused pass (numpy: a clipped copy and a temporary)
            gaps = np.zeros((order, R))
            self.kernel.weighted_abs_gaps(E, targets, np.ascontiguousarray(X.T), gaps)
            out["sum_abs"] += gaps.T
        else:
            np.clip(E, 0.0, 1.0, out=E)
            for k in range(order):
                gap = np.abs(E[:, k * R : (k + 1) * R] - targets[k][:, None])
                out["sum_abs"][:, k] += np.einsum("rn,nr->r", X, gap)
        copies = tile_copies(W)  # W @ 1, shared by the tile's plans
        out["sum_weight"] += copies if self.w is None else W @ self.w[sl]
        out["n_samples"] += np.rint(copies).astype(np.int64)
        return out
