"""SPEC 1 references: the truncated sech kernel by numerical quadrature (scipy.integrate.quad).

Quadrature is done in the scaled variable x = (t - s) / h, where the integrand sech(x) is smooth
and O(1) wide, so quad resolves it for any bandwidth (h = 2^-10 included) and gives relative
accuracy in the tails (epsabs=0).
"""

import math
import warnings

import numpy as np
from scipy import integrate, optimize


def sech(x):
    """sech without overflow: 2 e^-|x| / (1 + e^-2|x|)."""
    ax = abs(x)
    return 2.0 * math.exp(-ax) / (1.0 + math.exp(-2.0 * ax))


def _int_sech(x0, x1):
    """Integral of sech over [x0, x1] by adaptive quadrature, split at 0 (the peak)."""
    if x1 <= x0:
        return 0.0
    pieces = [x0] + [v for v in (0.0,) if x0 < v < x1] + [x1]
    total = 0.0
    for lo, hi in zip(pieces[:-1], pieces[1:], strict=False):
        # sech decays like 2 e^-|x|: for a far-tail piece integrate in log-scale form
        with warnings.catch_warnings():  # quad warns when it cannot certify 1e-13; fine
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            val, _ = integrate.quad(sech, lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)
        total += val
    return total


def normaliser(s, h, a=0.0, b=1.0):
    """Z(s, h) = integral over [a, b] of sech((t - s) / h) dt = h * int_{(a-s)/h}^{(b-s)/h} sech."""
    return h * _int_sech((a - s) / h, (b - s) / h)


def pdf(t, s, h, a=0.0, b=1.0):
    if t < a or t > b:
        return 0.0
    return sech((t - s) / h) / normaliser(s, h, a, b)


def cdf(t, s, h, a=0.0, b=1.0):
    """F(t) by quadrature of the density (lower tail over the total)."""
    if t <= a:
        return 0.0
    if t >= b:
        return 1.0
    return _int_sech((a - s) / h, (t - s) / h) / _int_sech((a - s) / h, (b - s) / h)


def sf(t, s, h, a=0.0, b=1.0):
    """1 - F(t), as the upper-tail quadrature (keeps relative accuracy near b)."""
    if t <= a:
        return 1.0
    if t >= b:
        return 0.0
    return _int_sech((t - s) / h, (b - s) / h) / _int_sech((a - s) / h, (b - s) / h)


def ppf(u, s, h, a=0.0, b=1.0):
    """Inverse CDF by root finding on the quadrature CDF (lower tail for u <= 1/2, upper
    tail for u > 1/2, so both ends keep their precision)."""
    if u <= 0.0:
        return a
    if u >= 1.0:
        return b
    if u <= 0.5:
        f = lambda t: cdf(t, s, h, a, b) - u  # noqa: E731
    else:
        f = lambda t: (1.0 - u) - sf(t, s, h, a, b)  # noqa: E731
    return optimize.brentq(f, a, b, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)


def cdf_vectorised_spec(t, s, h, a=0.0, b=1.0):
    """The SPEC's closed form with gd(x) = 2 arctan(tanh(x / 2)), for KS tests (moderate h)."""
    gd = lambda x: 2.0 * np.arctan(np.tanh(x / 2.0))  # noqa: E731
    t = np.clip(t, a, b)
    return (gd((t - s) / h) - gd((a - s) / h)) / (gd((b - s) / h) - gd((a - s) / h))
