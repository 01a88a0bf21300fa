"""Estimating the second-order calibration error CE2 of *The Minimax Rate of Second-Order Calibration*.

``CE2 = E|eta1(S) - m| + E|eta2(S) - (m^2 + sigma2)|`` with ``eta1(s) = E[Y | S = s]`` and
``eta2(s) = E[f*(X)^2 | S = s]``. The polynomial estimator regresses the unbiased snapshot
targets ``t1`` and ``t2`` on a Chebyshev basis of the (already sech-perturbed) scores, clips each
fitted function to [0, 1] and plugs it in:

    CE2_hat = mean_i |eta1_hat(S_i) - m_i| + mean_i |eta2_hat(S_i) - (m_i^2 + sigma2_i)|.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, check_cv

from skcal._compat import StrOptions, validate_params
from skcal._constraints import (
    ALPHA,
    BASIS,
    DEGREE,
    MAX_DEGREE_LIMIT,
    POSITIVE_REAL,
    RANDOM_STATE,
    SAMPLE_WEIGHT,
    StrictInterval,
    check_elements,
)
from skcal._validation import binary_labels, check_consistent_length, check_sample_weight, check_scores
from skcal.ce2_baselines import baseline_ce2, baseline_predict
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
from skcal.stats._base import effective_sample_size
from skcal.stats._ce2 import CE1Statistics, CE2PlugInStatistics, CE2Statistics
from skcal.votes import (
    VoteCounts,
    check_class_scores,
    check_class_votes,
    check_snapshots,
    class_scores_layout,
    require_pairs,
    snapshot_targets,
)

__all__ = ["CE2Result", "DEFAULT_ALPHAS", "MULTICLASS", "ce1_score", "ce2_details", "ce2_score"]

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
_METHODS = ("polynomial", "bucketing", "nadaraya_watson")


@dataclass
class CE2Result:
    """The result of :func:`ce2_details`: the estimate, its two terms and the fitted functions.

    Every method fills every field with the same meaning: ``eta1`` / ``eta2`` are always
    callables on new scores and ``eta1_values`` / ``eta2_values`` always the fits at the
    samples; ``degree``, ``alpha`` and ``basis`` describe the polynomial estimator and are
    ``None`` for the baselines, whose tuned constant is ``c`` (``None`` for the polynomial).

    Parameters
    ----------
    ce2 : float
        The estimate ``term1 + term2``.
    term1 : float
        ``mean |eta1_hat(S) - m|``.
    term2 : float
        ``mean |eta2_hat(S) - (m^2 + sigma2)|``.
    method : str
        ``"polynomial"``, ``"bucketing"`` or ``"nadaraya_watson"``.
    n_samples : int
        Number of rows.
    eta1 : callable
        ``eta1(scores) -> ndarray (n,)``, the fitted ``E[Y | S]`` clipped to [0, 1] at new
        (validated) scores. For the baselines: the cell mean (bucketing) or the kernel average
        (Nadaraya-Watson) of the fitted targets, with the chosen ``c``.
    eta2 : callable
        ``eta2(scores) -> ndarray (n,)``, the fitted ``E[f*^2 | S]`` clipped to [0, 1].
    eta1_values : ndarray of shape (n,)
        ``eta1`` at the sample's scores (what ``term1`` averages).
    eta2_values : ndarray of shape (n,)
        ``eta2`` at the sample's scores.
    degree : int or None
        The Chebyshev degree used (``None`` for the baselines).
    alpha : float or None
        The ridge multiplier used (``None`` for the baselines).
    basis : str or None
        The Chebyshev basis (``None`` for the baselines).
    c : float or None
        The baselines' constant (``None`` for the polynomial method).
    cv_results : dict or None
        With ``cv``: arrays ``"degree"``, ``"alpha"``, ``"mean_test_mse"``, ``"std_test_mse"``
        over the candidates (held-out squared error of both moment regressions).
    extra : dict
        Diagnostics only: ``"model"`` (the fitted :class:`~skcal.chebyshev.ChebyshevRidge`) for
        the polynomial method; ``"validation_loss"`` and ``"n_cells"`` or
        ``"kernel_bandwidth"`` for the baselines. With rows of a single vote (the mixed rule):
        ``"n_pairs"`` (rows with two votes or more), ``"eta2_model"``, ``"eta2_degree"``,
        ``"eta2_alpha"`` (and ``"eta2_cv_results"``) of the second-moment regression; ``degree``
        and ``alpha`` are then those of ``eta1``. For ``multiclass="top_label"``:
        ``"top_class"``, the column of each row's top label.
    multiclass : {"classwise", "top_label"} or None
        The k-class task (``None`` for binary scores).
    per_class : list of CE2Result or None
        ``multiclass="classwise"``: the one-vs-rest result of every class (each with its own
        degree and ridge); ``ce2``, ``term1`` and ``term2`` are their (weighted) means, and
        ``eta1`` / ``eta2`` take k-class scores and return ``(n, k)``.
    class_weights : ndarray of shape (k,) or None
        ``multiclass="classwise"``: the weights of the classes in the mean (summing to 1).
    """

    ce2: float
    term1: float
    term2: float
    method: str
    n_samples: int
    eta1: Any
    eta2: Any
    eta1_values: Any
    eta2_values: Any
    degree: int | None = None
    alpha: float | None = None
    basis: str | None = None
    c: float | None = None
    cv_results: dict | None = None
    extra: dict = field(default_factory=dict)
    multiclass: str | None = None
    per_class: list | None = None
    class_weights: Any = None


def _check_degree_for_data(degree, n, basis, name="degree"):
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


# ---------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------
def _check_second_order_scores(scores, n_samples=None):
    S = check_scores(scores, name="scores")
    if S.shape[1] != 2:
        raise ValueError(
            f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}. For a score m "
            "alone use ce1_score."
        )
    if n_samples is not None:
        check_consistent_length(snapshots=np.empty(n_samples), scores=S)
    return S


def _candidate_degrees(degree, n, bandwidth, basis, cv, n_eff=None, caller="ce2_score"):
    if isinstance(degree, str):  # "auto" (the only string validate_params lets through)
        if cv is None:
            n_eff = float(n) if n_eff is None else n_eff
            n_eff = check_auto_sample_size(
                n_eff, basis, name="the effective sample size (sum w)^2 / sum w^2"
            )
            return [auto_degree(n_eff, bandwidth, basis)]
        return degree_schedule(degree_cap(bandwidth, basis))
    degs = np.atleast_1d(np.asarray(degree, dtype=object)).tolist()
    if len(degs) == 0:
        raise ValueError("degree must be 'auto', an integer or a non-empty list of integers; got [].")
    check_elements("degree", degs, DEGREE, caller)
    if len(degs) > 1 and cv is None:
        raise ValueError("A list of degrees needs cv to choose among them; pass cv= or a single degree.")
    for d in degs:
        _check_degree_for_data(int(d), n, basis)
    return sorted({int(d) for d in degs}, reverse=True)


def _candidate_alphas(alpha, alphas, cv, caller="ce2_score"):
    if cv is None:
        return [float(alpha)]  # checked by validate_params (ALPHA)
    if alphas is None:
        return list(DEFAULT_ALPHAS)
    vals = np.atleast_1d(np.asarray(alphas, dtype=object)).tolist()
    if not vals:
        raise ValueError("alphas must not be empty.")
    check_elements("alphas", vals, ALPHA, caller)
    return [float(a) for a in vals]


def _splits(cv, n, random_state):
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
def _is_partition(tr, te, n):
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


def _select(S, T, w, degrees, alphas, basis, splits):
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
        if _is_partition(tr, te, n):
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


def _fit_moments(S, T, w, *, degree, alpha, bandwidth, basis, cv, random_state, alphas, caller):
    """Choose (degree, alpha) and fit; return ``(model, degree, alpha, cv_results, plug_in)``.

    ``plug_in`` is the empty second-pass statistics object when the fit went through the
    mergeable statistics (fixed degree and alpha, primal form), else ``None``.
    """
    n = S.shape[0]
    eff_basis = "1d" if S.shape[1] == 1 else basis
    n_eff = effective_sample_size(w, n)
    degrees = _candidate_degrees(degree, n, bandwidth, eff_basis, cv, n_eff=n_eff, caller=caller)
    cand_alphas = _candidate_alphas(alpha, alphas, cv, caller=caller)
    cv_results = None
    if cv is None:
        deg, alph = degrees[0], cand_alphas[0]
    else:
        splits = _splits(cv, n, random_state)
        if degree == "auto":
            n_train = min(effective_sample_size(None if w is None else w[tr], len(tr)) for tr, _ in splits)
            fit = [d for d in degrees if n_basis_functions(d, eff_basis) * CV_SAMPLES_PER_FEATURE <= n_train]
            degrees = fit or [degrees[-1]]
        deg, alph, cv_results = _select(S, T, w, degrees, cand_alphas, eff_basis, splits)
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


def _plug_in(model, plug, S, w):
    """Clipped fits at ``S`` and the plug-in terms, through the statistics object when there is one."""
    E = np.clip(model.predict(S), 0.0, 1.0)
    if plug is None:
        coef, order = model.coef_grid(), (E.shape[1] if S.shape[1] == 2 else 1)
    else:
        coef, order = plug.coef, plug.order
    scores = S if order == 2 else S[:, :1]
    plug = CE2PlugInStatistics.from_validated(scores, w, fitted=E, coef=coef, order=order)
    return E, plug.terms()


def _clipped_function(model, column, n_columns):
    def eta(scores):
        Sn = check_scores(scores, name="scores")
        if Sn.shape[1] != n_columns:
            raise ValueError(f"scores must have {n_columns} column(s); got shape {Sn.shape}.")
        return np.clip(model.predict(Sn)[:, column], 0.0, 1.0)

    eta.__doc__ = f"Fitted calibration function eta{column + 1}(scores), clipped to [0, 1]."
    return eta


def _baseline_function(method, S, T, c, h, column):
    Z_fit = S.copy()
    Z_fit[:, 1] *= 4.0  # both axes of unit length, as baseline_ce2 maps them

    def eta(scores):
        Sn = check_scores(scores, name="scores")
        if Sn.shape[1] != 2:
            raise ValueError(f"scores must have 2 column(s); got shape {Sn.shape}.")
        Zq = Sn.copy()
        Zq[:, 1] *= 4.0
        return baseline_predict(method, Z_fit, T, Zq, c, h)[:, column]

    eta.__doc__ = f"Fitted calibration function eta{column + 1}(scores) of the {method} baseline."
    return eta


# ---------------------------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------------------------
#: The k-class tasks of ``multiclass`` (``"auto"``: binary scores stay binary, k-class ones
#: are classwise).
MULTICLASS = ("auto", "classwise", "top_label")


_PARAMS = {
    # an integer degree, "auto", or candidates for cv (each checked against DEGREE)
    "degree": [StrOptions({"auto"}), *DEGREE, "array-like"],
    "alpha": ALPHA,
    # the bandwidth enters only log(theta) = asinh(h pi): any positive number, subnormal ones too
    "bandwidth": POSITIVE_REAL,
    "cv": [None, StrictInterval(Real, 0, 1, closed="neither"), StrOptions({"holdout"}), "cv_object"],
    "random_state": RANDOM_STATE,
    "alphas": ["array-like", None],
    "sample_weight": SAMPLE_WEIGHT,
    "multiclass": [StrOptions(set(MULTICLASS))],
    "average": [StrOptions({"macro", "weighted"}), "array-like"],
}
_CE2_PARAMS = {
    "snapshots": ["array-like"],
    "scores": ["array-like"],
    "method": [StrOptions(set(_METHODS))],
    "basis": BASIS,
    **_PARAMS,
}


# ---------------------------------------------------------------------------------------------
# one binary (one-vs-rest) task: all rows with pairs, or the mixed rule
# ---------------------------------------------------------------------------------------------
def _polynomial_result(t1, t2, S, w, fit):
    """The polynomial CE2 of binary targets; ``t2`` is NaN on the rows with a single vote."""
    pairs = ~np.isnan(t2)
    if pairs.all():
        T = np.column_stack([t1, t2])
        model, deg, alph, cv_results, plug = _fit_moments(S, T, w, **fit)
        E, (term1, term2) = _plug_in(model, plug, S, w)
        return CE2Result(
            ce2=term1 + term2,
            term1=term1,
            term2=term2,
            method="polynomial",
            n_samples=S.shape[0],
            eta1=_clipped_function(model, 0, 2),
            eta2=_clipped_function(model, 1, 2),
            eta1_values=E[:, 0],
            eta2_values=E[:, 1],
            degree=deg,
            alpha=alph,
            basis=model.basis_,
            cv_results=cv_results,
            extra={"model": model},
        )
    # The mixed rule: E[Y | S] from every row (t1 = a / c exists for one vote), E[f*^2 | S] from
    # the rows with two votes or more only; each regression has its own degree (the "auto" rule
    # counts its own rows) and both plug-in averages run over every row.
    model1, deg1, alph1, cv1, _ = _fit_moments(S, t1[:, None], w, **fit)
    wp = None if w is None else w[pairs]
    if wp is not None and not wp.sum() > 0:
        raise ValueError("sample_weight is zero on every row with two votes; E[f*^2] has no data.")
    model2, deg2, alph2, cv2, _ = _fit_moments(S[pairs], t2[pairs, None], wp, **fit)
    E1 = np.clip(model1.predict(S)[:, 0], 0.0, 1.0)
    E2 = np.clip(model2.predict(S)[:, 0], 0.0, 1.0)
    m = S[:, 0]
    term1 = float(np.average(np.abs(E1 - m), weights=w))
    term2 = float(np.average(np.abs(E2 - (m * m + S[:, 1])), weights=w))
    extra = {"model": model1, "n_pairs": int(pairs.sum()), "eta2_model": model2, "eta2_degree": deg2}
    extra["eta2_alpha"] = alph2
    if cv2 is not None:
        extra["eta2_cv_results"] = cv2
    return CE2Result(
        ce2=term1 + term2,
        term1=term1,
        term2=term2,
        method="polynomial",
        n_samples=S.shape[0],
        eta1=_clipped_function(model1, 0, 2),
        eta2=_clipped_function(model2, 0, 2),
        eta1_values=E1,
        eta2_values=E2,
        degree=deg1,
        alpha=alph1,
        basis=model1.basis_,
        cv_results=cv1,
        extra=extra,
    )


def _binary_result(t1, t2, S, w, sample_weight, params, caller):
    """CE2 of one binary task: validated scores ``S`` ``(n, 2)``, targets and weights."""
    method = params["method"]
    if method != "polynomial":
        if np.isnan(t2).any():
            raise ValueError(
                f"method={method!r} needs two votes on every row; rows with a single vote (the mixed "
                "rule: eta1 from every row, eta2 from the rows with pairs) need method='polynomial'."
            )
        return _baseline(
            method,
            S,
            t1,
            t2,
            params["bandwidth"],
            sample_weight,
            params["random_state"],
            params["degree"],
            params["cv"],
        )
    fit = {k: params[k] for k in ("degree", "alpha", "bandwidth", "basis", "cv", "random_state", "alphas")}
    return _polynomial_result(t1, t2, S, w, {**fit, "caller": caller})


# ---------------------------------------------------------------------------------------------
# k classes: classwise (one-vs-rest per class) and top label
# ---------------------------------------------------------------------------------------------
def _k_class_inputs(labels, scores, *, labels_name, mean_only=False, min_votes=1):
    """``(VoteCounts of k classes, (n, k, 2) scores)``; binary scores become the k = 2 view."""
    if class_scores_layout(scores) is None:
        S = check_scores(scores, name="scores")
        if S.shape[1] == 1 and not mean_only:
            raise ValueError(
                f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}. For a score m "
                "alone use ce1_score."
            )
        m = S[:, :1]
        # binary scores of class 1 as the two-class scores: class 0 has 1 - m and the same sigma2
        S3 = np.stack([np.concatenate([1.0 - m, S[:, 1:]], axis=1), S], axis=1)
    else:
        S3 = check_class_scores(scores, name="scores", allow_mean_only=mean_only)
    n, k = S3.shape[:2]
    V = check_class_votes(labels, k, name=labels_name, n_samples=None, min_votes=min_votes)
    check_consistent_length(**{labels_name: np.empty(len(V)), "scores": S3})
    return V, S3


def _class_weights(average, t1, w, k):
    if isinstance(average, str):
        if average == "macro":
            return np.full(k, 1.0 / k)
        share = np.average(t1, axis=0, weights=w)  # the classes' shares of the votes
        return share / share.sum()
    a = np.asarray(average, dtype=object)
    if a.ndim != 1 or a.shape[0] != k:
        raise ValueError(f"average must be 'macro', 'weighted' or {k} class weights; got {average!r}.")
    try:
        a = a.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"average must hold {k} non-negative numbers; got {average!r}.") from None
    if not np.isfinite(a).all() or (a < 0).any() or not a.sum() > 0:
        raise ValueError(f"average must hold {k} finite non-negative weights, not all zero; got {average!r}.")
    return a / a.sum()


def _class_function(per, name):
    def eta(scores):
        S3 = check_class_scores(scores, name="scores", n_classes=len(per))
        return np.column_stack([getattr(r, name)(S3[:, j]) for j, r in enumerate(per)])

    eta.__doc__ = f"Fitted {name}(scores) of every class: k-class scores in, (n, k) out."
    return eta


def _classwise_result(per, weights, n, method):
    terms = np.array([[r.ce2, r.term1, r.term2] for r in per])
    ce2, term1, term2 = (float(x) for x in weights @ terms)
    return CE2Result(
        ce2=ce2,
        term1=term1,
        term2=term2,
        method=method,
        n_samples=n,
        eta1=_class_function(per, "eta1"),
        eta2=_class_function(per, "eta2"),
        eta1_values=np.column_stack([r.eta1_values for r in per]),
        eta2_values=np.column_stack([r.eta2_values for r in per]),
        multiclass="classwise",
        per_class=per,
        class_weights=weights,
    )


def _k_class_details(snapshots, scores, multiclass, average, sample_weight, params):
    V, S3 = _k_class_inputs(snapshots, scores, labels_name="snapshots")
    n, k = S3.shape[:2]
    require_pairs(V.total, "snapshots")
    t1, t2 = V.targets()
    w = check_sample_weight(sample_weight, n) if params["method"] == "polynomial" else None
    if multiclass == "top_label":
        top = np.argmax(S3[..., 0], axis=1)  # ties: the lowest class index
        rows = np.arange(n)
        res = _binary_result(
            t1[rows, top], t2[rows, top], S3[rows, top], w, sample_weight, params, "ce2_details"
        )
        res.multiclass = "top_label"
        res.extra["top_class"] = top
        return res
    per = [
        _binary_result(t1[:, j], t2[:, j], S3[:, j], w, sample_weight, params, "ce2_details")
        for j in range(k)
    ]
    weights = _class_weights(average, t1, w, k)
    return _classwise_result(per, weights, n, params["method"])


# ---------------------------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------------------------
@validate_params(_CE2_PARAMS, prefer_skip_nested_validation=True)
def ce2_details(
    snapshots,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    method="polynomial",
    cv=None,
    random_state=None,
    basis="tensor",
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate CE2 and return the fitted calibration functions with it.

    Parameters
    ----------
    snapshots : array-like of shape (n, r), skcal.votes.VoteCounts
        Binary scores: ``r >= 2`` binary labels per input (NaN marks a missing vote) or binary
        vote counts. k-class scores: snapshots of class labels (codes ``0..k-1``, NaN for a
        missing vote) or counts per class (``VoteCounts(counts=C)``; the same results). Rows with
        a single vote are allowed beside rows with several (the mixed rule, see Notes).
    scores : array-like of shape (n, 2), (n, k, 2) or (n, 2k)
        The second-order scores ``(m, sigma2)`` of the predictor being measured, *already*
        sech-perturbed (the perturbed predictor is the one that is measured; see
        ``skcal.SechPerturber``): binary, or k-class (``m`` at ``[..., 0]``, ``sigma2`` at
        ``[..., 1]``, or the ``(n, 2k)`` layout of ``EnsembleMoments``: the k means, then the k
        variances).
    degree : "auto", int or list of int, default="auto"
        ``"auto"``: the analytic rule ``ceil(2 log n / log theta)`` capped at
        ``ceil(11 / sqrt(bandwidth))`` (44 at ``h = 1/16``, 88 at ``h = 1/64``; at most 88), and
        lowered until the basis has at most ``n / 100`` features (a sample-size guard: at
        ``h = 1/64`` the bare rule gives 88, i.e. 7921 tensor features, for every ``n``); see
        :func:`skcal.chebyshev.auto_degree`. With ``cv`` the candidates are the schedule from
        the cap halving down to 4 (e.g. 88, 44, 22, 11, 5), without the degrees whose basis has
        more than ``n_train / 10`` features (``CV_SAMPLES_PER_FEATURE``; if none is left, the
        smallest schedule degree). An int fixes the degree; a list
        gives the candidates for ``cv``. With ``sample_weight``, ``n`` in these rules is Kish's
        effective sample size ``(sum w)^2 / sum w^2``, so rows of weight zero count as dropped.
        When ``d > n`` the ridge is solved in its dual form, so a moderate explicit degree works
        for any ``n`` (a high degree for small ``n`` simply fits noisily; use ``cv`` to choose).
        An explicit degree is bounded by ``MAX_DEGREE_LIMIT`` (512) and by the data: its ridge
        solve may hold at most ``MAX_SOLVE_FLOATS`` numbers (2 GiB: ``d^2`` primal, ``n d + n^2``
        dual); the error names the largest degree the data support. At a fixed degree with
        ``d <= n`` the estimate is computed through :class:`skcal.stats.CE2Statistics` and
        :class:`skcal.stats.CE2PlugInStatistics`, the objects ``skcal.dask`` merges. For k
        classes every one-vs-rest task makes its own choice.
    alpha : float, default=1e-6
        Ridge multiplier (``lam = alpha * trace(G) / d``), used when ``cv`` is None.
    bandwidth : float, default=2**-6
        The sech bandwidth ``h`` the scores were perturbed with (drives the degree rule and
        the baselines).
    method : {"polynomial", "bucketing", "nadaraya_watson"}, default="polynomial"
        The baselines (cells of a ``K x K`` grid, a Gaussian kernel) are computed by
        :func:`skcal.ce2_baselines.baseline_ce2` (they choose their constant ``c`` on a held-out
        split with ``random_state``).
    cv : None, int, float, "holdout" or CV splitter, default=None
        Select ``degree`` and ``alpha`` (candidates: the degree schedule and ``alphas``) by the
        held-out squared error of both moment regressions. An int ``K`` is shuffled K-fold
        (seeded by ``random_state``); a float in (0, 1) or ``"holdout"`` (= 0.3) is one
        held-out split of that fraction; any scikit-learn splitter is accepted. Fold statistics
        are additive, so each candidate costs one ridge solve. After selection the chosen
        model is refitted on all data.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the CV folds / held-out split and of the baselines' split.
    basis : {"tensor", "total"}, default="tensor"
    alphas : sequence of float, default=None
        Candidate ridge multipliers for ``cv`` (default ``1e-6, 1e-5, ..., 1``).
    sample_weight : array-like of shape (n,), default=None
        Weights for the regressions and the averages (polynomial method only).
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        The task for k-class scores (see Notes). ``"auto"``: binary scores give the binary CE2,
        k-class scores the classwise one. ``"classwise"`` or ``"top_label"`` with binary scores
        treat them as two classes (class 1 with ``(m, sigma2)``, class 0 with ``(1 - m,
        sigma2)``).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        ``multiclass="classwise"``: the weights of the classes' CE2 in the mean. ``"macro"``:
        equal weights; ``"weighted"``: each class's share of the votes (``mean_w t1[:, j]``);
        an array: the given non-negative weights (normalised to sum 1).

    Returns
    -------
    CE2Result
        ``ce2``, ``term1``, ``term2``, the ``degree`` and ``alpha`` used, the callables
        ``eta1`` and ``eta2`` (fitted calibration functions on new scores) and, with ``cv``,
        ``cv_results``; for ``"classwise"`` also ``per_class`` (the result of every class)
        and ``class_weights``.

    Notes
    -----
    **k classes.** With ``a_j`` votes for class ``j`` out of ``c``, the one-vs-rest task of class
    ``j`` has the scores ``(m_j, sigma2_j)`` and the targets ``t1 = a_j / c``,
    ``t2 = a_j (a_j - 1) / (c (c - 1))``, and ``CE2_j`` is the binary estimate on it.
    ``"classwise"`` is ``sum_j w_j CE2_j`` with the weights of ``average`` (``1 / k`` each by
    default), every class with its own degree choice. ``"top_label"`` is the binary estimate on
    the top-label task: per row the class ``J = argmax_j m_j`` (ties: the lowest index), its
    ``(m_J, sigma2_J)`` and its votes ``a_J`` of ``c``. Snapshots of class labels are counted
    per class first (counts are sufficient), so they give the same numbers as the counts.

    **Rows with a single vote** (mixed data): ``t1 = a / c`` exists for every row, ``t2`` only for
    rows with ``c >= 2``. ``eta1_hat`` is then fitted on every row and ``eta2_hat`` on the rows
    with pairs only, each with its own degree (``"auto"`` counts that regression's rows), and
    both averages of the plug-in run over every row. ``benchmarks/mixed_labels.py`` measures this
    rule's error against the number of rows with pairs (``docs/benchmarks/second_order_multiclass.md``):
    on the experiment-6.2 problem (20,000 rows with one label, true CE2 0.214) the mean absolute
    error is 0.022 with 100 doubly-labelled rows, 0.015 with 1,000 and 0.005 with 5,000, at most
    that of the doubly-labelled rows alone at every count. At least one row needs two votes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ce2_details
    >>> rng = np.random.default_rng(0)
    >>> S = np.column_stack([rng.uniform(0, 1, 3000), rng.uniform(0, 0.25, 3000)])
    >>> Y = (rng.uniform(size=(3000, 2)) < S[:, :1]).astype(float)  # f* = m: first-order calibrated
    >>> res = ce2_details(Y, S, degree=3)
    >>> res.term1 < 0.03, res.term2 > 0.05  # but sigma2 > 0 overstates the spread of f* = m
    (True, True)
    >>> res.eta1(np.array([[0.5, 0.1]])).round(1)
    array([0.5])
    """
    params = {
        "degree": degree,
        "alpha": alpha,
        "bandwidth": bandwidth,
        "method": method,
        "cv": cv,
        "random_state": random_state,
        "basis": basis,
        "alphas": alphas,
    }
    if multiclass != "auto" or class_scores_layout(scores) is not None:
        return _k_class_details(snapshots, scores, multiclass, average, sample_weight, params)
    Y = check_snapshots(snapshots, name="snapshots", min_votes=1)
    S = _check_second_order_scores(scores, Y.shape[0])
    t1, t2, c = snapshot_targets(Y)
    require_pairs(c, "snapshots")
    w = check_sample_weight(sample_weight, S.shape[0]) if method == "polynomial" else None
    return _binary_result(t1, t2, S, w, sample_weight, params, "ce2_details")


def _baseline(method, S, t1, t2, bandwidth, sample_weight, random_state, degree, cv):
    if sample_weight is not None:
        raise ValueError(f"sample_weight is not supported by method={method!r}; use method='polynomial'.")
    if degree != "auto" or cv is not None:
        raise ValueError(
            f"degree and cv apply to method='polynomial' only; method={method!r} chooses its "
            "constant c on a held-out split itself."
        )
    out = baseline_ce2(S, t1, t2, method=method, bandwidth=bandwidth, random_state=random_state)
    extra = {k: v for k, v in out.items() if k not in ("ce2", "term1", "term2", "eta1", "eta2", "c")}
    T = np.column_stack([t1, t2])
    c = float(out["c"])
    return CE2Result(
        ce2=float(out["ce2"]),
        term1=float(out["term1"]),
        term2=float(out["term2"]),
        method=method,
        n_samples=S.shape[0],
        eta1=_baseline_function(method, S, T, c, float(bandwidth), 0),
        eta2=_baseline_function(method, S, T, c, float(bandwidth), 1),
        eta1_values=np.asarray(out["eta1"]),
        eta2_values=np.asarray(out["eta2"]),
        c=c,
        extra=extra,
    )


@validate_params(_CE2_PARAMS, prefer_skip_nested_validation=True)
def ce2_score(
    snapshots,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    method="polynomial",
    cv=None,
    random_state=None,
    basis="tensor",
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate the second-order calibration error CE2 (lower is better).

    ``CE2 = E|eta1(S) - m| + E|eta2(S) - (m^2 + sigma2)|``. The polynomial estimator fits
    ``eta1_hat`` on ``t1`` and ``eta2_hat`` on ``t2`` (the snapshot targets ``t1 = a / c``,
    ``t2 = a (a - 1) / (c (c - 1))`` for ``a`` positive votes out of ``c``) by Chebyshev ridge
    regression on the scores, clips both to [0, 1] and averages the absolute
    deviations over the sample (in-sample plug-in). For k-class scores it is the classwise
    (one-vs-rest) or the top-label CE2 (``multiclass``; the formulas are in
    :func:`ce2_details`).

    Parameters
    ----------
    snapshots : array-like of shape (n, r) or skcal.votes.VoteCounts
        Binary scores: ``r >= 2`` binary labels per input (NaN marks a missing vote), or vote
        counts (same results, no padded array). k-class scores: snapshots of class labels (codes
        ``0..k-1``) or counts per class (``VoteCounts(counts=C)``). Rows with a single vote are
        allowed beside rows with several (``eta2`` is then fitted on the rows with pairs; see
        :func:`ce2_details`).
    scores : array-like of shape (n, 2), (n, k, 2) or (n, 2k)
        The second-order scores ``(m, sigma2)`` of the predictor being measured, *already*
        sech-perturbed (the perturbed predictor is the one that is measured; see
        ``skcal.SechPerturber``): binary, or per class.
    degree : "auto", int or list of int, default="auto"
        ``"auto"``: the analytic rule ``ceil(2 log n / log theta)`` capped at
        ``ceil(11 / sqrt(bandwidth))`` (44 at ``h = 1/16``, 88 at ``h = 1/64``; at most 88), and
        lowered until the basis has at most ``n / 100`` features (a sample-size guard: at
        ``h = 1/64`` the bare rule gives 88, i.e. 7921 tensor features, for every ``n``); see
        :func:`skcal.chebyshev.auto_degree`. With ``cv`` the candidates are the schedule from
        the cap halving down to 4 (e.g. 88, 44, 22, 11, 5), without the degrees whose basis has
        more than ``n_train / 10`` features (``CV_SAMPLES_PER_FEATURE``; if none is left, the
        smallest schedule degree). An int fixes the degree; a list
        gives the candidates for ``cv``. With ``sample_weight``, ``n`` in these rules is Kish's
        effective sample size ``(sum w)^2 / sum w^2``, so rows of weight zero count as dropped.
        When ``d > n`` the ridge is solved in its dual form, so a moderate explicit degree works
        for any ``n`` (a high degree for small ``n`` simply fits noisily; use ``cv`` to choose).
        An explicit degree is bounded by ``MAX_DEGREE_LIMIT`` (512) and by the data: its ridge
        solve may hold at most ``MAX_SOLVE_FLOATS`` numbers (2 GiB: ``d^2`` primal, ``n d + n^2``
        dual); the error names the largest degree the data support. At a fixed degree with
        ``d <= n`` the estimate is computed through :class:`skcal.stats.CE2Statistics` and
        :class:`skcal.stats.CE2PlugInStatistics`, the objects ``skcal.dask`` merges.
    alpha : float, default=1e-6
        Ridge multiplier (``lam = alpha * trace(G) / d``), used when ``cv`` is None.
    bandwidth : float, default=2**-6
        The sech bandwidth ``h`` the scores were perturbed with (drives the degree rule and
        the baselines).
    method : {"polynomial", "bucketing", "nadaraya_watson"}, default="polynomial"
        The baselines (cells of a ``K x K`` grid, a Gaussian kernel) are computed by
        :func:`skcal.ce2_baselines.baseline_ce2` (they choose their constant ``c`` on a held-out
        split with ``random_state``).
    cv : None, int, float, "holdout" or CV splitter, default=None
        Select ``degree`` and ``alpha`` (candidates: the degree schedule and ``alphas``) by the
        held-out squared error of both moment regressions. An int ``K`` is shuffled K-fold
        (seeded by ``random_state``); a float in (0, 1) or ``"holdout"`` (= 0.3) is one
        held-out split of that fraction; any scikit-learn splitter is accepted. Fold statistics
        are additive, so each candidate costs one ridge solve. After selection the chosen
        model is refitted on all data.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the CV folds / held-out split and of the baselines' split.
    basis : {"tensor", "total"}, default="tensor"
    alphas : sequence of float, default=None
        Candidate ridge multipliers for ``cv`` (default ``1e-6, 1e-5, ..., 1``).
    sample_weight : array-like of shape (n,), default=None
        Weights for the regressions and the averages (polynomial method only).
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        For k-class scores: the (weighted) mean of the one-vs-rest CE2 over the classes
        (``"classwise"``, what ``"auto"`` gives) or the CE2 of the top-label task
        (``"top_label"``: each row's class of largest ``m``, its ``(m, sigma2)`` and its votes).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        The class weights of ``"classwise"`` (equal, the classes' shares of the votes, or given).

    Returns
    -------
    float
        The estimate ``CE2_hat`` (in-sample plug-in).

    See Also
    --------
    ce2_details : the same estimate with the fitted calibration functions and both terms.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ce2_score
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> m = rng.uniform(0.3, 0.7, n)
    >>> f = m + rng.choice([-0.25, 0.25], n)  # f* = m -+ 0.25: variance 1/16 given m
    >>> Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    >>> honest = np.column_stack([m, np.full(n, 1 / 16)])
    >>> overconfident = np.column_stack([m, np.zeros(n)])
    >>> ce2_score(Y, honest, degree=4) < ce2_score(Y, overconfident, degree=4)
    True

    Three classes, counts per class (the classwise mean of the one-vs-rest CE2, and the top label):

    >>> from skcal.votes import VoteCounts
    >>> M = rng.dirichlet(np.ones(3), n)  # a calibrated predictor: votes drawn from m itself
    >>> counts = np.stack([rng.multinomial(3, p) for p in M])
    >>> scores = np.stack([M, np.zeros_like(M)], axis=2)  # (n, 3, 2), sigma2 = 0
    >>> bool(ce2_score(VoteCounts(counts=counts), scores, degree=3) < 0.05)
    True
    >>> bool(ce2_score(VoteCounts(counts=counts), scores, degree=3, multiclass="top_label") < 0.05)
    True
    """
    return ce2_details(
        snapshots,
        scores,
        degree=degree,
        alpha=alpha,
        bandwidth=bandwidth,
        method=method,
        cv=cv,
        random_state=random_state,
        basis=basis,
        alphas=alphas,
        sample_weight=sample_weight,
        multiclass=multiclass,
        average=average,
    ).ce2


def _ce1(t1, m, w, fit):
    """CE1 of binary targets ``t1`` against the score ``m`` ``(n, 1)``."""
    model, _, _, _, plug = _fit_moments(m, t1[:, None], w, basis="tensor", **fit)
    return _plug_in(model, plug, m, w)[1][0]


@validate_params(
    {"y_true": ["array-like"], "scores": ["array-like"], **_PARAMS}, prefer_skip_nested_validation=True
)
def ce1_score(
    y_true,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    cv=None,
    random_state=None,
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate the first-order calibration error ``CE1 = E|E[Y | m] - m|`` (lower is better).

    ``eta1_hat`` is the 1-D Chebyshev ridge regression of the labels (or of ``t1``) on ``m``,
    clipped to [0, 1]; ``CE1_hat = mean |eta1_hat(m_i) - m_i|``. For k-class scores it is the
    (weighted) mean of the one-vs-rest CE1 over the classes (``"classwise"``) or the CE1 of the
    top-label task (``"top_label"``), as in :func:`ce2_details`.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, r), or skcal.votes.VoteCounts
        Binary scores: binary labels (``{0, 1}``, ``{-1, 1}`` or booleans), or snapshots or vote
        counts (``t1`` is used; one vote per row suffices). k-class scores: class labels (codes
        ``0..k-1``), one per row or as snapshots, or counts per class (``VoteCounts(counts=C)``).
    scores : array-like of shape (n,), (n, 1), (n, 2), (n, k, 2), (n, k, 1) or (n, 2k)
        The (perturbed) score ``m``; for ``(n, 2)`` second-order scores ``(m, sigma2)`` only
        column 0 is used. Note: an ``(n, 2)`` array is read as ``(m, sigma2)``, *not* as
        ``predict_proba`` output. k-class scores give ``m`` per class (``[..., 0]``; the ``(n,
        2k)`` layout holds the k means, then the k variances).
    degree : "auto", int or list of int, default="auto"
        As in :func:`ce2_score`, with the 1-D basis (degree cap ``ceil(11 / sqrt(h))``, not
        limited to 88 but to ``MAX_DEGREE_LIMIT`` = 512; the sample-size guard counts the
        effective sample size).
    alpha : float, default=1e-6
        Ridge multiplier, used when ``cv`` is None.
    bandwidth : float, default=2**-6
        The sech bandwidth ``h`` the scores were perturbed with.
    cv : None, int, float, "holdout" or CV splitter, default=None
        Select ``degree`` and ``alpha`` as in :func:`ce2_score`.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the CV folds / held-out split.
    alphas : sequence of float, default=None
        Candidate ridge multipliers for ``cv``.
    sample_weight : array-like of shape (n,), default=None
        Weights for the regression and the average.
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        As in :func:`ce2_score` (``"auto"``: binary for binary scores, classwise for k classes).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        The class weights of ``"classwise"``.

    Returns
    -------
    float
        The estimate ``CE1_hat``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ce1_score
    >>> rng = np.random.default_rng(0)
    >>> m = rng.uniform(0, 1, 5000)
    >>> y = (rng.uniform(size=5000) < m).astype(int)
    >>> ce1_score(y, m, degree=3) < 0.02 < ce1_score(y, m**2, degree=3)
    True
    """
    fit = {
        "degree": degree,
        "alpha": alpha,
        "bandwidth": bandwidth,
        "cv": cv,
        "random_state": random_state,
        "alphas": alphas,
        "caller": "ce1_score",
    }
    if multiclass != "auto" or class_scores_layout(scores) is not None:
        V, S3 = _k_class_inputs(y_true, scores, labels_name="y_true", mean_only=True)
        n, k = S3.shape[:2]
        t1 = V.targets()[0]
        w = check_sample_weight(sample_weight, n)
        if multiclass == "top_label":
            top = np.argmax(S3[..., 0], axis=1)
            rows = np.arange(n)
            return _ce1(t1[rows, top], S3[rows, top, :1], w, fit)
        per = np.array([_ce1(t1[:, j], S3[:, j, :1], w, fit) for j in range(k)])
        return float(_class_weights(average, t1, w, k) @ per)
    S = check_scores(scores, name="scores")[:, :1]
    arr = y_true if isinstance(y_true, VoteCounts) else (
        y_true.to_numpy() if hasattr(y_true, "to_numpy") else np.asarray(y_true)
    )
    if isinstance(arr, VoteCounts) or (arr.ndim == 2 and arr.shape[1] >= 2):
        t1 = snapshot_targets(check_snapshots(arr, name="y_true (snapshots)", min_votes=1))[0]
    else:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        t1 = binary_labels(arr, None, "y_true", has_pos_label=False)
    check_consistent_length(y_true=t1, scores=S)
    w = check_sample_weight(sample_weight, S.shape[0])
    return _ce1(t1, S, w, fit)
