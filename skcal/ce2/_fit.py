"""The polynomial fit of CE2's moment regressions: degree and ridge candidates, their choice, the plug-in.

The candidates of ``degree`` (the rule of ``degree="auto"``, an explicit degree checked against
the memory of its solve, or a list for cross-validation) and of ``alpha``; the choice among them by
K-fold or held-out squared error from additive statistics (each candidate one ridge solve); the
fit (through the mergeable statistics of :mod:`skcal.stats` at a fixed degree) and the clipped
in-sample plug-in.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, check_cv

from skcal._constraints import ALPHA, DEGREE, MAX_DEGREE_LIMIT, check_elements
from skcal.chebyshev import (
    ChebyshevMoments,
    ChebyshevRidge,
    auto_degree,
    check_auto_sample_size,
    degree_cap,
    degree_schedule,
    n_basis_functions,
    ridge_solve,
)
from skcal.stats import CE1Statistics, CE2PlugInStatistics, CE2Statistics, effective_sample_size

__all__ = [
    "CV_SAMPLES_PER_FEATURE",
    "DEFAULT_ALPHAS",
    "HOLDOUT_FRACTION",
    "MAX_SOLVE_FLOATS",
    "candidate_alphas",
    "candidate_degrees",
    "check_degree_for_data",
    "cv_splits",
    "fit_moments",
    "is_partition",
    "plug_in",
    "select_by_cv",
]

#: Ridge multipliers ``alpha`` of the data-driven selection schedule (*Minimax Rate*).
DEFAULT_ALPHAS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: With ``cv`` and ``degree="auto"``, schedule degrees whose basis has more than
#: ``n_train / CV_SAMPLES_PER_FEATURE`` features are skipped (they cost O(d^3) per candidate and
#: fit mostly noise; tensor degree 88 alone would take ~35 Cholesky factorisations of 7921 x 7921).
CV_SAMPLES_PER_FEATURE = 10
#: Test fraction of ``cv="holdout"``.
HOLDOUT_FRACTION = 0.3
#: The ridge solve of an explicit degree may use at most this many float64 numbers (2 GiB):
#: ``d^2`` for the primal Gram matrix, ``n d + n^2`` for the dual form (``d > n``).
MAX_SOLVE_FLOATS = 2**28


def check_degree_for_data(degree, n, basis, name="degree"):
    """An explicit degree (within ``DEGREE``) must fit a ridge solve of at most MAX_SOLVE_FLOATS."""

    def floats(deg):
        d = n_basis_functions(deg, basis)
        return d * d if d <= n else n * d + n * n

    if floats(degree) > MAX_SOLVE_FLOATS:
        ok = [deg for deg in range(MAX_DEGREE_LIMIT + 1) if floats(deg) <= MAX_SOLVE_FLOATS]
        d = n_basis_functions(degree, basis)
        raise ValueError(
            f"{name}={degree} gives d={d} {basis} basis functions; with n={n} samples its ridge solve "
            f"needs {floats(degree) * 8 / 2**30:.3g} GiB (at most {MAX_SOLVE_FLOATS * 8 / 2**30:g} GiB, "
            f"MAX_SOLVE_FLOATS). The largest degree these data support is {max(ok) if ok else 0}."
        )
    return degree


def candidate_degrees(degree, n, bandwidth, basis, cv, n_eff=None, caller="ce2_score"):
    if isinstance(degree, str):  # "auto" (the only string validate_params lets through)
        if cv is None:
            n_eff = float(n) if n_eff is None else n_eff
            n_eff = check_auto_sample_size(n_eff, basis, name="the effective sample size (sum w)^2 / sum w^2")
            return [auto_degree(n_eff, bandwidth, basis)]
        return degree_schedule(degree_cap(bandwidth, basis))
    degs = np.atleast_1d(np.asarray(degree, dtype=object)).tolist()
    if len(degs) == 0:
        raise ValueError("degree must be 'auto', an integer or a non-empty list of integers; got [].")
    check_elements("degree", degs, DEGREE, caller)
    if len(degs) > 1 and cv is None:
        raise ValueError("A list of degrees needs cv to choose among them; pass cv= or a single degree.")
    for d in degs:
        check_degree_for_data(int(d), n, basis)
    return sorted({int(d) for d in degs}, reverse=True)


def candidate_alphas(alpha, alphas, cv, caller="ce2_score"):
    if cv is None:
        return [float(alpha)]  # checked by validate_params (ALPHA)
    if alphas is None:
        return list(DEFAULT_ALPHAS)
    vals = np.atleast_1d(np.asarray(alphas, dtype=object)).tolist()
    if not vals:
        raise ValueError("alphas must not be empty.")
    check_elements("alphas", vals, ALPHA, caller)
    return [float(a) for a in vals]


def cv_splits(cv, n, random_state):
    """Return a list of ``(train, test)`` index pairs (``cv`` checked by ``validate_params``)."""
    if isinstance(cv, str):  # "holdout"
        cv = HOLDOUT_FRACTION
    if isinstance(cv, numbers.Real) and not isinstance(cv, (numbers.Integral, bool)):
        splitter = ShuffleSplit(n_splits=1, test_size=float(cv), random_state=random_state)
    elif isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv > n:
            raise ValueError(f"cv={cv} folds need at least {cv} samples; got {n}.")
        splitter = KFold(n_splits=int(cv), shuffle=True, random_state=random_state)
    else:
        splitter = check_cv(cv)
    out = [(np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)))]
    if not out:
        raise ValueError("cv produced no splits.")
    return out


# ---------------------------------------------------------------------------------------------
# the fit shared by ce2 and ce1
# ---------------------------------------------------------------------------------------------
def is_partition(tr, te, n):
    """True when the indices ``tr`` and ``te`` together hold each row ``0 .. n - 1`` exactly once.

    One ``bincount`` (O(n)); an index outside ``[0, n)`` (a negative one counting from the end)
    makes it False, so such a split's training statistics are computed directly.
    """
    if len(tr) + len(te) != n:
        return False
    both = np.concatenate([np.asarray(tr, dtype=np.intp).ravel(), np.asarray(te, dtype=np.intp).ravel()])
    if both.size and (both.min() < 0 or both.max() >= n):
        return False
    return bool((np.bincount(both, minlength=n) == 1).all())


def select_by_cv(S, T, w, degrees, alphas, basis, splits):
    """K-fold / held-out selection of (degree, alpha) from additive sufficient statistics.

    For every split the held-out statistics are computed once at the largest degree; the
    training statistics are ``total - held-out`` when the split is a partition (otherwise they
    are computed directly); lower degrees are sub-blocks. Each candidate costs one ridge solve,
    and its held-out squared error ``tt - 2 beta.b + beta^T G beta`` comes from the held-out
    statistics (the raw polynomial fits, before clipping).
    """
    n = S.shape[0]
    L = max(degrees)
    total = ChebyshevMoments.from_data(S, T, L, w)
    per_split = []
    for tr, te in splits:
        wte = None if w is None else w[te]
        st_te = ChebyshevMoments.from_data(S[te], T[te], L, wte)
        if is_partition(tr, te, n):
            st_tr = total - st_te
        else:
            st_tr = ChebyshevMoments.from_data(S[tr], T[tr], L, None if w is None else w[tr])
        if st_te.sum_w <= 0 or st_tr.sum_w <= 0:
            raise ValueError("A cross-validation split has an empty (or zero-weight) train or test part.")
        per_split.append((st_tr, st_te))
    rows = []
    for deg in degrees:
        errs = np.empty((len(per_split), len(alphas)))
        for k, (st_tr, st_te) in enumerate(per_split):
            G = st_tr.gram(basis, deg)
            b = st_tr.cross(basis, deg)
            tr_G = float(np.trace(G))
            G_te = st_te.gram(basis, deg)
            for a, alpha in enumerate(alphas):
                beta = ridge_solve(G, b, alpha * tr_G / G.shape[0])
                sse = st_te.sse(beta, basis, deg, gram=G_te)
                errs[k, a] = float(sse.sum()) / st_te.sum_w
        for a, alpha in enumerate(alphas):
            rows.append((deg, alpha, errs[:, a].mean(), errs[:, a].std()))
    res = {
        "degree": np.array([r[0] for r in rows]),
        "alpha": np.array([r[1] for r in rows]),
        "mean_test_mse": np.array([r[2] for r in rows]),
        "std_test_mse": np.array([r[3] for r in rows]),
    }
    # Smallest error; ties go to the smaller degree, then the larger alpha (the simpler fit).
    order = np.lexsort((-res["alpha"], res["degree"], res["mean_test_mse"]))
    best = int(order[0])
    return int(res["degree"][best]), float(res["alpha"][best]), res


def fit_moments(S, T, w, *, degree, alpha, bandwidth, basis, cv, random_state, alphas, caller):
    """Choose (degree, alpha) and fit; return ``(model, degree, alpha, cv_results, plug_in)``.

    ``plug_in`` is the empty second-pass statistics object when the fit went through the
    mergeable statistics (fixed degree and alpha, primal form), else ``None``.
    """
    n = S.shape[0]
    eff_basis = "1d" if S.shape[1] == 1 else basis
    n_eff = effective_sample_size(w, n)
    degrees = candidate_degrees(degree, n, bandwidth, eff_basis, cv, n_eff=n_eff, caller=caller)
    cand_alphas = candidate_alphas(alpha, alphas, cv, caller=caller)
    cv_results = None
    if cv is None:
        deg, alph = degrees[0], cand_alphas[0]
    else:
        splits = cv_splits(cv, n, random_state)
        if degree == "auto":
            n_train = min(effective_sample_size(None if w is None else w[tr], len(tr)) for tr, _ in splits)
            fit = [d for d in degrees if n_basis_functions(d, eff_basis) * CV_SAMPLES_PER_FEATURE <= n_train]
            degrees = fit or [degrees[-1]]
        deg, alph, cv_results = select_by_cv(S, T, w, degrees, cand_alphas, eff_basis, splits)
    ridge_basis = basis if basis != "1d" else "tensor"
    if n_basis_functions(deg, eff_basis) <= n and S.shape[1] == T.shape[1]:
        # the mergeable statistics path (skcal.stats), the one skcal.dask uses
        if S.shape[1] == 2 and T.shape[1] == 2:
            stats = CE2Statistics.from_validated(T, S, w, degree=deg, alpha=alph, basis=ridge_basis)
        else:
            stats = CE1Statistics.from_validated(T, S, w, degree=deg, alpha=alph)
        model = stats.fit_ridge()
        plug = CE2PlugInStatistics(coef=model.coef_grid(), order=T.shape[1] if S.shape[1] == 2 else 1)
        return model, deg, alph, cv_results, plug
    model = ChebyshevRidge(deg, alph, ridge_basis).fit(S, T, w)
    return model, deg, alph, cv_results, None


def plug_in(model, plug, S, w):
    """Clipped fits at ``S`` and the plug-in terms, through the statistics object when there is one."""
    E = np.clip(model.predict(S), 0.0, 1.0)
    if plug is None:
        coef, order = model.coef_grid(), (E.shape[1] if S.shape[1] == 2 else 1)
    else:
        coef, order = plug.coef, plug.order
    scores = S if order == 2 else S[:, :1]
    plug = CE2PlugInStatistics.from_validated(scores, w, fitted=E, coef=coef, order=order)
    return E, plug.terms()
