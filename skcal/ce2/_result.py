"""The result of CE2's estimators (:class:`CE2Result`) and the estimate of one binary task.

One binary (or one-vs-rest) task: the polynomial estimator with every row's pairs, the mixed rule
(``eta1`` from every row, ``eta2`` from the rows with two votes or more), or a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skcal._validation import check_consistent_length, check_scores
from skcal.ce2._fit import fit_moments, plug_in
from skcal.ce2_baselines import baseline_ce2, baseline_predict

__all__ = ["CE2Result", "METHODS", "binary_result", "check_second_order_scores"]

METHODS = ("polynomial", "bucketing", "nadaraya_watson")


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


def check_second_order_scores(scores, n_samples=None):
    S = check_scores(scores, name="scores")
    if S.shape[1] != 2:
        raise ValueError(
            f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}. For a score m "
            "alone use ce1_score."
        )
    if n_samples is not None:
        check_consistent_length(snapshots=np.empty(n_samples), scores=S)
    return S


def clipped_function(model, column, n_columns):
    def eta(scores):
        Sn = check_scores(scores, name="scores")
        if Sn.shape[1] != n_columns:
            raise ValueError(f"scores must have {n_columns} column(s); got shape {Sn.shape}.")
        return np.clip(model.predict(Sn)[:, column], 0.0, 1.0)

    eta.__doc__ = f"Fitted calibration function eta{column + 1}(scores), clipped to [0, 1]."
    return eta


def baseline_function(method, S, T, c, h, column):
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


def polynomial_result(t1, t2, S, w, fit):
    """The polynomial CE2 of binary targets; ``t2`` is NaN on the rows with a single vote."""
    pairs = ~np.isnan(t2)
    if pairs.all():
        model, deg, alph, cv_results, plug = fit_moments(S, np.column_stack([t1, t2]), w, **fit)
        E, (term1, term2) = plug_in(model, plug, S, w)
        eta2, E1, E2, extra = clipped_function(model, 1, 2), E[:, 0], E[:, 1], {"model": model}
    else:
        # The mixed rule: E[Y | S] from every row (t1 = a / c exists for one vote), E[f*^2 | S]
        # from the rows with two votes or more only; each regression has its own degree (the
        # "auto" rule counts its own rows) and both plug-in averages run over every row.
        model, deg, alph, cv_results, _ = fit_moments(S, t1[:, None], w, **fit)
        wp = None if w is None else w[pairs]
        if wp is not None and not wp.sum() > 0:
            raise ValueError("sample_weight is zero on every row with two votes; E[f*^2] has no data.")
        model2, deg2, alph2, cv2, _ = fit_moments(S[pairs], t2[pairs, None], wp, **fit)
        E1 = np.clip(model.predict(S)[:, 0], 0.0, 1.0)
        E2 = np.clip(model2.predict(S)[:, 0], 0.0, 1.0)
        m = S[:, 0]
        term1 = float(np.average(np.abs(E1 - m), weights=w))
        term2 = float(np.average(np.abs(E2 - (m * m + S[:, 1])), weights=w))
        eta2 = clipped_function(model2, 0, 2)
        extra = {"model": model, "n_pairs": int(pairs.sum()), "eta2_model": model2, "eta2_degree": deg2}
        extra["eta2_alpha"] = alph2
        if cv2 is not None:
            extra["eta2_cv_results"] = cv2
    return CE2Result(
        ce2=term1 + term2,
        term1=term1,
        term2=term2,
        method="polynomial",
        n_samples=S.shape[0],
        eta1=clipped_function(model, 0, 2),
        eta2=eta2,
        eta1_values=E1,
        eta2_values=E2,
        degree=deg,
        alpha=alph,
        basis=model.basis_,
        cv_results=cv_results,
        extra=extra,
    )


def binary_result(t1, t2, S, w, sample_weight, params, caller):
    """CE2 of one binary task: validated scores ``S`` ``(n, 2)``, targets and weights."""
    method = params["method"]
    if method != "polynomial":
        if np.isnan(t2).any():
            raise ValueError(
                f"method={method!r} needs two votes on every row; rows with a single vote (the mixed "
                "rule: eta1 from every row, eta2 from the rows with pairs) need method='polynomial'."
            )
        return baseline_result(
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
    return polynomial_result(t1, t2, S, w, {**fit, "caller": caller})


def baseline_result(method, S, t1, t2, bandwidth, sample_weight, random_state, degree, cv):
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
        eta1=baseline_function(method, S, T, c, float(bandwidth), 0),
        eta2=baseline_function(method, S, T, c, float(bandwidth), 1),
        eta1_values=np.asarray(out["eta1"]),
        eta2_values=np.asarray(out["eta2"]),
        c=c,
        extra=extra,
    )
