"""The degree rule of the Chebyshev estimators: the bandwidth cap, the sample-size guard, the schedule."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import (
    ENGINE_BASIS,
    MAX_DEGREE_LIMIT,
    NON_NEGATIVE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    StrictInterval,
)
from skcal.chebyshev._basis import n_basis_functions

__all__ = [
    "AUTO_FEATURES",
    "AUTO_SAMPLES_PER_FEATURE",
    "MAX_AUTO_DEGREE",
    "auto_degree",
    "check_auto_sample_size",
    "degree_cap",
    "degree_schedule",
    "theta",
]

#: Largest degree the automatic rule uses for the two-dimensional bases (tensor d = 7921): the
#: spec's cap (44 at ``h = 1/16``, 88 at ``h = 1/64``).
MAX_AUTO_DEGREE = 88
#: The sample-size guard of :func:`auto_degree`: the basis has at most ``c n^(1/3)`` features,
#: with ``c`` per basis, the constants under which the default degree measured best against a
#: known truth (``benchmarks/ce2_degree.py``; ``docs/benchmarks/ce2_degree.md``).
AUTO_FEATURES = {"tensor": 1.25, "total": 1.25, "1d": 0.35}
#: The linear guard of ``samples_per_feature=100`` (at most ``n / 100`` features), the default of
#: skcal 0.1, kept for comparison: it let the cap through at large ``n``, where it measured worst.
AUTO_SAMPLES_PER_FEATURE = 100


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
        "samples_per_feature": [StrOptions({"auto"}), *POSITIVE_REAL, None],
    },
    prefer_skip_nested_validation=True,
)
def auto_degree(n_samples, bandwidth, basis="tensor", samples_per_feature="auto"):
    """Return the degree of ``degree="auto"``: the analytic rule, the bandwidth cap and a sample-size guard.

    The degree is the smallest of three:

    * the analytic rule ``l = ceil(2 log n / log theta)`` of *The Minimax Rate of Second-Order
      Calibration* (``theta`` of :func:`theta`);
    * the bandwidth cap :func:`degree_cap` (44 at ``h = 1/16``, 88 at ``h = 1/64``);
    * a sample-size guard: the largest degree whose basis has at most ``c n^(1/3)`` features
      (``d = (l + 1)^2`` for the tensor basis), ``c = 1.25`` for the two-dimensional bases and
      ``0.35`` for the one-dimensional one (:data:`AUTO_FEATURES`).

    At ``h = 1/64`` the analytic rule exceeds the cap for every ``n >= 10``, so the guard decides:
    tensor degree 4 at ``n = 1e4``, 6 at ``1e5`` and 10 at ``1e6``. It was set by measurement
    (``benchmarks/ce2_degree.py``, ``docs/benchmarks/ce2_degree.md``): on three problems with a
    known population CE2 and ``n = 2e3`` to ``1e6``, the estimator's error fell and then rose with
    the degree; the in-sample plug-in of a high degree measures mostly the noise of its fit. The
    guard's degree erred within a small factor of the best measured degree in every cell, the
    linear guard of skcal 0.1 (``n / 100`` features) and the capped rule without a guard many times
    more (the page gives the numbers). This deviates from the cap of 88 (44) that the analytic
    rule reaches: the cap stays, and the guard keeps the degree far below it.

    The smallest degree returned is 1, and a sample with fewer (effective) rows than the basis
    of degree 1 has functions (4 tensor, 3 total, 2 one-dimensional) supports no degree at all,
    so such an ``n_samples`` is refused (:func:`check_auto_sample_size`) rather than answered
    with 1.

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
    samples_per_feature : "auto", float or None, default="auto"
        The sample-size guard. ``"auto"``: at most ``c n^(1/3)`` features (above). A number
        ``s``: at most ``n / s`` features (``AUTO_SAMPLES_PER_FEATURE = 100`` was skcal 0.1's
        default). ``None``: no guard (the spec's capped rule).

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> auto_degree(10**4, 1 / 64), auto_degree(10**5, 1 / 64), auto_degree(10**6, 1 / 64)
    (4, 6, 10)
    >>> auto_degree(10**6, 1 / 64, basis="1d"), auto_degree(10**6, 1 / 64, samples_per_feature=None)
    (34, 88)
    >>> auto_degree(10**6, 1 / 64, samples_per_feature=100)  # skcal 0.1's guard
    88
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
        if isinstance(samples_per_feature, str):  # "auto"
            features = AUTO_FEATURES[basis] * float(np.cbrt(n))  # exact for perfect cubes
        else:
            features = n / float(samples_per_feature)
        guard = _largest_degree_with_features(features, basis)
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
