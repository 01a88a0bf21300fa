"""The truncated sech kernel, as plain vectorised functions.

The sech perturbation of *The Minimax Rate of Second-Order Calibration*: for a score ``s`` in
``[lo, hi]`` and a bandwidth ``h > 0`` the perturbed score has density

.. code-block:: text

    k_h(t | s) = sech((t - s) / h) / Z(s, h)          for t in [lo, hi], 0 elsewhere,
    Z(s, h)    = h * (gd((hi - s) / h) - gd((lo - s) / h)),

with the Gudermannian ``gd(x) = 2 arctan(tanh(x / 2))``, the integral of ``sech`` from 0 to ``x``.

Every function broadcasts its array arguments against each other with numpy's rules, so
``sech_pdf(t[:, None], s[None, :], h)`` is the kernel matrix of a grid convolution. The
bandwidth and the interval ends are scalars.

Numerics
--------
The quantity everything rests on is the integral of ``sech`` between two points ``x0 <= x1``,

.. code-block:: text

    gd(x1) - gd(x0) = 2 arctan( sinh((x1 - x0) / 2) / cosh((x1 + x0) / 2) ),

an identity (the arctan subtraction formula applied to ``gd(x) = 2 arctan(e^x) - pi / 2``) that
needs no difference of two nearly equal numbers. skcal evaluates it in log space,
``log sinh(d) - log cosh(m) = d - |m| + log(-expm1(-2 d)) - log1p(exp(-2 |m|))``, and takes
``arctan(exp(L))`` as ``pi / 2 - arctan(exp(-L))`` for ``L > 0``, so nothing overflows for any
bandwidth and the half-widths ``d = (x1 - x0) / 2`` come straight from ``(t - lo) / (2 h)``. The
result has full relative accuracy even when both ends lie far in the tail, where the naive
``gd(x1) - gd(x0)`` (two numbers next to ``+-pi / 2``) would lose every digit. The CDF takes
the smaller of the two tail integrals (:func:`sech_sf` gives the upper tail) and the inverse
CDF solves for the distance from the nearer end of the interval (see :func:`sech_ppf`), so both
tails and the neighbourhood of each end are resolved to relative precision at ``h = 2**-10``
and for scores on the boundary.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from skcal._compat import validate_params
from skcal._constraints import BANDWIDTH, FINITE_REAL, RANDOM_STATE
from skcal._docstrings import fill, sections
from skcal._validation import as_float_array

__all__ = [
    "gd",
    "gd_inv",
    "sech_normalizer",
    "sech_pdf",
    "sech_cdf",
    "sech_sf",
    "sech_ppf",
    "sech_sample",
    "uniform_draws",
]

_HALF_PI = np.pi / 2
#: Points (``t``, ``s``, ``u``): an array-like or a real scalar.
_POINTS = ["array-like", numbers.Real]
#: The constraints of the scores, the bandwidth and the interval, which every kernel function takes.
_INTERVAL = {"s": _POINTS, "h": BANDWIDTH, "lo": FINITE_REAL, "hi": FINITE_REAL}
#: The parameters the kernel functions share, described once (see :func:`skcal._docstrings.fill`).
_DOCS = {
    "t": """t : array-like or float
    Points at which to evaluate (any real number).""",
    "s": """s : array-like or float
    Scores in ``[lo, hi]``, broadcast against ``t``.""",
    "interval": """h : float
    Bandwidth, ``h > 0``.
lo : float, default=0.0
    Lower end of the interval, finite.
hi : float, default=1.0
    Upper end of the interval, finite, ``lo < hi``.""",
}
_DOCS["points"] = sections(_DOCS, "t", "s", "interval")


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
def _check_interval(h, lo, hi, h_name="h"):
    """The relations between the bandwidth and the interval.

    The types and ranges of ``h`` (at least the smallest normal float64: a subnormal bandwidth
    overflows ``1 / h``), ``lo`` and ``hi`` (finite) are declared with ``validate_params`` by
    each public function (``_parameter_constraints`` for :class:`~skcal.SechPerturber`); what
    remains is ``lo < hi`` and a finite ``(hi - lo) / h``.
    """
    if not lo < hi:
        raise ValueError(f"lo must be smaller than hi; got lo={lo!r}, hi={hi!r}.")
    if not np.isfinite((float(hi) - float(lo)) / float(h)):
        raise ValueError(f"(hi - lo) / {h_name} must be finite; got hi - lo = {hi - lo!r}, {h_name} = {h!r}.")
    return float(h), float(lo), float(hi)


def _as_array(x, name):
    arr = as_float_array(x, name, ensure_non_empty=False)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; expected finite values.")
    return arr


def _check_s(s, lo, hi):
    s = _as_array(s, "s")
    if s.size and (s.min() < lo or s.max() > hi):
        raise ValueError(
            f"s (the score) must lie in [lo, hi] = [{lo:g}, {hi:g}]; got values in "
            f"[{s.min():.6g}, {s.max():.6g}]."
        )
    return s


# ----------------------------------------------------------------------------------------------
# building blocks
# ----------------------------------------------------------------------------------------------
def _arctan_exp(x):
    """``arctan(exp(x))`` without overflow, to full relative precision."""
    a = np.arctan(np.exp(-np.abs(x)))
    return np.where(x > 0, _HALF_PI - a, a)


def _gd_span(d, m):
    """``gd(m + d) - gd(m - d)`` for ``d >= 0``: the integral of sech over ``[m - d, m + d]``."""
    am = np.abs(m)
    with np.errstate(divide="ignore"):  # d = 0 gives log(0) = -inf, i.e. an empty integral
        log_ratio = d - am + np.log(-np.expm1(-2.0 * d)) - np.log1p(np.exp(-2.0 * am))
    return 2.0 * _arctan_exp(log_ratio)


def _sech(x):
    """``sech(x) = 2 e^-|x| / (1 + e^-2|x|)`` without overflow."""
    e = np.exp(-np.abs(x))
    return 2.0 * e / (1.0 + e * e)


def _mass(s, h, lo, hi):
    """``gd((hi - s)/h) - gd((lo - s)/h)`` (so that ``Z = h * _mass``), in (0, pi)."""
    return _gd_span((hi - lo) / (2.0 * h), (hi + lo - 2.0 * s) / (2.0 * h))


def _check_broadcast(a, b, name_a, name_b):
    """Raise a ValueError naming both arguments unless their shapes broadcast together."""
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"{name_a} and {name_b} must broadcast together (equal lengths, or one of them a scalar "
            f"or of length 1); got shapes {a.shape} and {b.shape}."
        ) from None


def _check_points(x, s, h, lo, hi, name):
    """Check the points ``x`` (named ``name``), the scores ``s`` (broadcast together) and ``h, lo, hi``."""
    h, lo, hi = _check_interval(h, lo, hi)
    s = _check_s(s, lo, hi)
    x = _as_array(x, name)
    _check_broadcast(x, s, name, "s")
    return x, s, h, lo, hi


def _scalar_or_array(x):
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


# ----------------------------------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------------------------------
@validate_params({"x": ["array-like", numbers.Real]}, prefer_skip_nested_validation=True)
def gd(x):
    """The Gudermannian function ``gd(x) = 2 arctan(tanh(x / 2))``, the integral of sech on [0, x].

    Parameters
    ----------
    x : array-like
        Real numbers (infinities map to ``+-pi / 2``).

    Returns
    -------
    ndarray or float
        Values in ``[-pi / 2, pi / 2]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.sech import gd
    >>> float(gd(0.0)), bool(np.isclose(gd(1.0), 2 * np.arctan(np.tanh(0.5))))
    (0.0, True)
    """
    x = as_float_array(x, "x", ensure_non_empty=False)
    return _scalar_or_array(2.0 * np.arctan(np.tanh(x / 2.0)))


@validate_params({"g": ["array-like", numbers.Real]}, prefer_skip_nested_validation=True)
def gd_inv(g):
    """The inverse Gudermannian ``gd_inv(g) = arcsinh(tan(g))`` on ``[-pi / 2, pi / 2]``.

    Parameters
    ----------
    g : array-like
        Values in ``[-pi / 2, pi / 2]``; the ends map to ``-+inf``.

    Returns
    -------
    ndarray or float
        ``arcsinh(tan(g))``, of the shape of ``g``.

    Examples
    --------
    >>> from skcal.sech import gd, gd_inv
    >>> round(float(gd_inv(gd(0.75))), 12)
    0.75
    """
    g = as_float_array(g, "g", ensure_non_empty=False)
    if np.isnan(g).any() or (np.abs(g) > _HALF_PI).any():
        raise ValueError("g must lie in [-pi/2, pi/2] (the range of gd) and not be NaN.")
    out = np.arcsinh(np.tan(g))
    out = np.where(g == _HALF_PI, np.inf, np.where(g == -_HALF_PI, -np.inf, out))
    return _scalar_or_array(out)


@fill(**_DOCS)
@validate_params(_INTERVAL, prefer_skip_nested_validation=True)
def sech_normalizer(s, h, lo=0.0, hi=1.0):
    """The normaliser ``Z(s, h) = h (gd((hi - s)/h) - gd((lo - s)/h))`` of the truncated kernel.

    Parameters
    ----------
    s : array-like
        Scores in ``[lo, hi]``.
    {interval}

    Returns
    -------
    ndarray or float
        ``Z`` in ``(0, pi h)``; it equals ``pi h / 2`` at an end of a wide interval.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.sech import sech_normalizer
    >>> bool(np.isclose(sech_normalizer(0.0, 2**-10), np.pi / 2 * 2**-10))
    True
    """
    h, lo, hi = _check_interval(h, lo, hi)
    s = _check_s(s, lo, hi)
    return _scalar_or_array(h * _mass(s, h, lo, hi))


@fill(**_DOCS)
@validate_params({"t": _POINTS, **_INTERVAL}, prefer_skip_nested_validation=True)
def sech_pdf(t, s, h, lo=0.0, hi=1.0):
    """Density ``k_h(t | s)`` of the sech-perturbed score.

    ``k_h(t | s) = sech((t - s) / h) / Z(s, h)`` on ``[lo, hi]`` and 0 elsewhere, with
    ``Z(s, h) = h (gd((hi - s) / h) - gd((lo - s) / h))``.

    Parameters
    ----------
    t : array-like
        Points at which to evaluate the density (any real number; the density is 0 outside
        ``[lo, hi]``).
    s : array-like
        Scores in ``[lo, hi]``; broadcast against ``t``.
    {interval}

    Returns
    -------
    ndarray or float
        The density, of the broadcast shape of ``t`` and ``s``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.sech import sech_pdf
    >>> t = np.linspace(0, 1, 5)
    >>> K = sech_pdf(t[:, None], np.array([0.0, 0.5])[None, :], 0.25)  # kernel matrix
    >>> K.shape
    (5, 2)
    """
    t, s, h, lo, hi = _check_points(t, s, h, lo, hi, "t")
    z = h * _mass(s, h, lo, hi)  # computed on the shape of s only, then broadcast
    dens = _sech((t - s) / h) / z
    return _scalar_or_array(np.where((t >= lo) & (t <= hi), dens, 0.0))


def _tail_probability(t, s, h, lo, hi, upper):
    """``F(t | s)``, or ``1 - F(t | s)`` if ``upper``, from the smaller of the two tail integrals."""
    t, s, h, lo, hi = _check_points(t, s, h, lo, hi, "t")
    tc = np.clip(t, lo, hi)
    below = _gd_span((tc - lo) / (2.0 * h), (tc + lo - 2.0 * s) / (2.0 * h))
    above = _gd_span((hi - tc) / (2.0 * h), (hi + tc - 2.0 * s) / (2.0 * h))
    if upper:
        below, above = above, below
    total = _mass(s, h, lo, hi)
    return _scalar_or_array(np.where(below <= above, below / total, 1.0 - above / total))


@fill(**_DOCS)
@validate_params({"t": _POINTS, **_INTERVAL}, prefer_skip_nested_validation=True)
def sech_cdf(t, s, h, lo=0.0, hi=1.0):
    """CDF ``F(t | s)`` of the truncated sech kernel.

    ``F = (gd((t - s)/h) - gd((lo - s)/h)) / (gd((hi - s)/h) - gd((lo - s)/h))``, evaluated as
    the lower tail integral when it is the smaller one and as one minus the upper tail
    otherwise (see the module notes). 0 below ``lo`` and 1 above ``hi``.

    {points}

    Returns
    -------
    ndarray or float
        ``F(t | s)`` in [0, 1], of the broadcast shape of ``t`` and ``s``.

    Examples
    --------
    >>> from skcal.sech import sech_cdf
    >>> float(sech_cdf(0.5, 0.5, 2**-6))
    0.5
    """
    return _tail_probability(t, s, h, lo, hi, upper=False)


@fill(**_DOCS)
@validate_params({"t": _POINTS, **_INTERVAL}, prefer_skip_nested_validation=True)
def sech_sf(t, s, h, lo=0.0, hi=1.0):
    """Survival function ``1 - F(t | s)``, accurate in the upper tail.

    {points}

    Returns
    -------
    ndarray or float
        ``1 - F(t | s)`` in [0, 1], of the broadcast shape of ``t`` and ``s``.

    Examples
    --------
    >>> from skcal.sech import sech_cdf, sech_sf
    >>> float(sech_sf(0.3, 0.5, 0.1) + sech_cdf(0.3, 0.5, 0.1))
    1.0
    """
    return _tail_probability(t, s, h, lo, hi, upper=True)


def _offset_from_end(a, delta):
    """``x - a`` where ``arctan(e^x) = arctan(e^a) + delta``, for ``a <= 0``, ``0 <= delta <= pi/4``.

    From ``tan(p + q) = (tan p + tan q) / (1 - tan p tan q)``:
    ``x - a = log(1 + tan(delta) e^-a) - log(1 - tan(delta) e^a)``, the first log as
    ``logaddexp(0, log tan(delta) - a)`` so that nothing overflows. The distance from the end is
    then accurate to relative precision, however close to the end it is.
    """
    q = np.tan(delta)
    with np.errstate(divide="ignore"):  # delta = 0 gives log(0) = -inf and an offset of 0
        logq = np.log(q)
    return np.logaddexp(0.0, logq - a) - np.log1p(-np.exp(a) * q)


@fill(**_DOCS)
@validate_params({"u": _POINTS, **_INTERVAL}, prefer_skip_nested_validation=True)
def sech_ppf(u, s, h, lo=0.0, hi=1.0):
    """Inverse CDF of the truncated sech kernel: the ``t`` in ``[lo, hi]`` with ``F(t | s) = u``.

    Exact inversion of the CDF (``t = s + h gd_inv(gd(A) + u (gd(B) - gd(A)))`` with
    ``A = (lo - s)/h``, ``B = (hi - s)/h``), solved from the nearer end so that both tails keep
    their relative precision: with ``G = (gd(B) - gd(A)) / 2 = arctan(e^B) - arctan(e^A)``,

    - for ``u <= 1/2``: ``t = lo + h D(A, u G)``,
    - for ``u > 1/2``:  ``t = hi - h D(-B, (1 - u) G)``,

    where ``D(a, delta) = log(1 + tan(delta) e^-a) - log(1 - tan(delta) e^a)`` is the distance
    (in bandwidths) from the end at which ``arctan(e^x)`` has grown by ``delta``. The result is
    clipped to ``[lo, hi]`` against rounding.

    Parameters
    ----------
    u : array-like
        Probabilities in ``[0, 1]``.
    s : array-like
        Scores in ``[lo, hi]``, broadcast against ``u``.
    {interval}

    Returns
    -------
    ndarray or float
        The quantiles in ``[lo, hi]``, of the broadcast shape of ``u`` and ``s``.

    Examples
    --------
    >>> from skcal.sech import sech_cdf, sech_ppf
    >>> t = sech_ppf(0.9, 0.2, 0.05)
    >>> round(float(sech_cdf(t, 0.2, 0.05)), 12)
    0.9
    """
    u, s, h, lo, hi = _check_points(u, s, h, lo, hi, "u")
    if u.size and (u.min() < 0.0 or u.max() > 1.0):
        raise ValueError(f"u must lie in [0, 1]; got values in [{u.min():.6g}, {u.max():.6g}].")
    half_mass = _mass(s, h, lo, hi) / 2.0  # arctan(e^B) - arctan(e^A)
    left = u <= 0.5
    from_lo = lo + h * _offset_from_end((lo - s) / h, np.where(left, u, 0.0) * half_mass)
    from_hi = hi - h * _offset_from_end((s - hi) / h, np.where(left, 0.0, 1.0 - u) * half_mass)
    return _scalar_or_array(np.clip(np.where(left, from_lo, from_hi), lo, hi))


@validate_params(
    {"random_state": [*RANDOM_STATE, np.random.Generator], "size": [numbers.Integral, tuple]},
    prefer_skip_nested_validation=True,
)
def uniform_draws(random_state, size):
    """Uniform draws on [0, 1) from a seed, a ``RandomState``, a ``Generator`` or ``None``.

    One draw per entry of ``size``; ``None`` and integers go through scikit-learn's
    ``check_random_state`` (``None``: numpy's global RandomState), a ``Generator`` is used as it
    is. The inversion sampling of :func:`sech_sample` and :class:`skcal.SechPerturber` draws
    through it.

    Parameters
    ----------
    random_state : int, RandomState instance, numpy Generator or None
        The source of randomness.
    size : int or tuple of int
        The shape of the draws.

    Returns
    -------
    ndarray of shape ``size``
        The draws.

    Examples
    --------
    >>> uniform_draws(0, 2).round(4).tolist()
    [0.5488, 0.7152]
    """
    if isinstance(random_state, np.random.Generator):
        return random_state.random(size)
    return check_random_state(random_state).random_sample(size)


@fill(**_DOCS)
@validate_params(
    {**_INTERVAL, "random_state": [*RANDOM_STATE, np.random.Generator]}, prefer_skip_nested_validation=True
)
def sech_sample(s, h, lo=0.0, hi=1.0, random_state=None):
    """Draw one perturbed score from ``k_h(. | s)`` for every entry of ``s`` (exact inversion).

    Parameters
    ----------
    s : array-like
        Scores in ``[lo, hi]``.
    {interval}
    random_state : int, RandomState instance, numpy Generator or None, default=None
        Source of the uniform draws (``None``: numpy's global RandomState, as in scikit-learn).

    Returns
    -------
    ndarray or float
        Draws in ``[lo, hi]`` of the shape of ``s``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.sech import sech_sample
    >>> t = sech_sample(np.zeros(1000), 2**-6, random_state=0)
    >>> bool(t.min() >= 0.0 and t.max() <= 1.0)
    True
    """
    h, lo, hi = _check_interval(h, lo, hi)
    s = _check_s(s, lo, hi)
    u = uniform_draws(random_state, s.shape)
    return sech_ppf(u, s, h, lo, hi)
