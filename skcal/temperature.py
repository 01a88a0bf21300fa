"""Temperature scaling of logits (Guo et al., 2017), for arrays of stored model outputs.

Temperature scaling divides the logits by one scalar ``T > 0`` fitted by minimising the
cross-entropy on a validation split; it never changes the argmax, so accuracy is unchanged.
For a fitted scikit-learn classifier use
``sklearn.calibration.CalibratedClassifierCV(FrozenEstimator(clf), method="temperature")``;
the functions here serve stored logits (or log-probabilities) with no estimator behind them.

The fit optimises ``log T`` (so ``T`` stays positive and the problem is well scaled) with
``scipy.optimize.minimize(method="L-BFGS-B")`` and an analytic gradient. With
``z_i = x_i / T`` the per-sample loss is ``logsumexp(z_i) - z_i[y_i]`` (a stable log-softmax)
and its derivative in ``log T`` is ``z_i[y_i] - sum_j softmax(z_i)_j z_ij``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from skcal._compat import validate_params
from skcal._constraints import POSITIVE_REAL, SAMPLE_WEIGHT
from skcal._validation import (
    as_float_array,
    check_consistent_length,
    check_multiclass_labels,
    check_sample_weight,
    reject_nonfinite,
)

__all__ = ["fit_temperature", "apply_temperature", "temperature_nll"]


def _check_logits(logits, name="logits"):
    Z = as_float_array(logits, name, ndim=(2,))
    reject_nonfinite(Z, name)
    if Z.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 columns (one per class); got shape {Z.shape}.")
    return Z


def _check_bounds(bounds):
    """``bounds`` as ``(lo, hi)`` floats with ``0 < lo < hi < inf``, or a clear ValueError."""
    try:
        b = np.asarray(bounds)
    except (TypeError, ValueError):
        b = np.empty(0)
    ok = b.shape == (2,) and b.dtype.kind in "iuf"
    if ok:
        lo, hi = float(b[0]), float(b[1])
        ok = bool(0 < lo < hi < np.inf)
    if not ok:
        raise ValueError(
            f"bounds must be a pair of numbers (low, high) with 0 < low < high < inf; got {bounds!r}."
        )
    return lo, hi


_COMMON = {"logits": ["array-like"], "y": ["array-like"], "labels": ["array-like", None]}


def _nll_and_grad(log_t, Z, codes, w):
    """Weighted mean cross-entropy of softmax(Z / T) and its derivative in log T."""
    z = Z * np.exp(-log_t[0])
    lse = logsumexp(z, axis=1)
    zy = z[np.arange(z.shape[0]), codes]
    nll = np.average(lse - zy, weights=w)
    s = np.exp(z - lse[:, None])
    grad = np.average(zy - (s * z).sum(axis=1), weights=w)
    return float(nll), np.array([grad])


@validate_params(
    {**_COMMON, "temperature": POSITIVE_REAL, "sample_weight": SAMPLE_WEIGHT},
    prefer_skip_nested_validation=True,
)
def temperature_nll(logits, y, temperature, *, labels=None, sample_weight=None):
    """Mean cross-entropy (natural log) of ``softmax(logits / temperature)``.

    Parameters
    ----------
    logits : array-like of shape (n, k)
        Pre-softmax scores (or log-probabilities), ``k >= 2``.
    y : array-like of shape (n,)
        Class labels. Integer labels are column indices of ``logits`` and must lie in
        ``range(k)`` unless ``labels`` is given; other labels are matched to the sorted
        labels, or to ``labels``.
    temperature : float
        Positive finite temperature.
    labels : array-like of shape (k,), default=None
        The label of each column of ``logits``.
    sample_weight : array-like of shape (n,), default=None
        Weights of the average.

    Returns
    -------
    float
        The weighted mean negative log-likelihood.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.temperature import temperature_nll
    >>> bool(abs(temperature_nll([[0.0, 0.0]], [1], 1.0) - np.log(2)) < 1e-12)
    True
    """
    Z = _check_logits(logits)
    codes = check_multiclass_labels(np.asarray(y), Z.shape[1], labels=labels, name="y", integer_codes=True)
    check_consistent_length(logits=Z, y=codes)
    w = check_sample_weight(sample_weight, Z.shape[0])
    return _nll_and_grad(np.array([np.log(float(temperature))]), Z, codes, w)[0]


@validate_params(
    {**_COMMON, "sample_weight": SAMPLE_WEIGHT, "bounds": ["array-like"], "tol": POSITIVE_REAL},
    prefer_skip_nested_validation=True,
)
def fit_temperature(logits, y, *, labels=None, sample_weight=None, bounds=(1e-2, 1e2), tol=1e-10):
    """Fit the temperature ``T`` minimising the cross-entropy of ``softmax(logits / T)``.

    Parameters
    ----------
    logits : array-like of shape (n, k)
        Pre-softmax scores. Log-probabilities work as well (softmax ignores per-row shifts).
    y : array-like of shape (n,)
        Labels; the columns are the sorted labels unless ``labels`` gives the order (integer
        labels in ``range(k)`` are column indices).
    labels : array-like of shape (k,), default=None
        The label of each column of ``logits``.
    sample_weight : array-like of shape (n,), default=None
        Weights of the cross-entropy average.
    bounds : tuple of two floats, default=(1e-2, 1e2)
        The search interval for ``T``; the optimum is clipped to it (a perfectly separable
        split drives the unconstrained optimum to ``T -> 0``).
    tol : float, default=1e-10
        ``ftol`` and ``gtol`` of L-BFGS-B, a positive finite number.

    Returns
    -------
    float
        The fitted temperature, inside ``bounds``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.temperature import apply_temperature, fit_temperature
    >>> rng = np.random.default_rng(0)
    >>> logits = 3.0 * rng.normal(size=(4000, 3))
    >>> cdf = np.cumsum(apply_temperature(logits, 3.0), axis=1)  # labels drawn at T = 3
    >>> y = (rng.random((4000, 1)) > cdf).sum(axis=1)
    >>> round(fit_temperature(logits, y), 1)
    3.0
    """
    Z = _check_logits(logits)
    codes = check_multiclass_labels(np.asarray(y), Z.shape[1], labels=labels, name="y", integer_codes=True)
    check_consistent_length(logits=Z, y=codes)
    w = check_sample_weight(sample_weight, Z.shape[0])
    lo, hi = _check_bounds(bounds)
    start = np.array([np.clip(0.0, np.log(lo), np.log(hi))])
    res = minimize(
        _nll_and_grad,
        start,
        args=(Z, codes, w),
        jac=True,
        method="L-BFGS-B",
        bounds=[(np.log(lo), np.log(hi))],
        options={"ftol": tol, "gtol": tol, "maxiter": 200},
    )
    return float(np.exp(res.x[0]))


@validate_params({"logits": ["array-like"], "temperature": POSITIVE_REAL}, prefer_skip_nested_validation=True)
def apply_temperature(logits, temperature):
    """Return ``softmax(logits / temperature)`` row by row (computed stably).

    Parameters
    ----------
    logits : array-like of shape (n, k)
        Pre-softmax scores, ``k >= 2``.
    temperature : float
        Positive finite temperature.

    Returns
    -------
    ndarray of shape (n, k)
        The tempered probabilities; each row sums to one.

    Examples
    --------
    >>> from skcal.temperature import apply_temperature
    >>> apply_temperature([[0.0, 2.0]], 2.0).round(4).tolist()
    [[0.2689, 0.7311]]
    """
    Z = _check_logits(logits)
    return softmax(Z / float(temperature), axis=1)
