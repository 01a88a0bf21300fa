"""Tests of the truncated sech kernel (SPEC section 1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from skcal.sech import (
    gd,
    gd_inv,
    sech_cdf,
    sech_normalizer,
    sech_pdf,
    sech_ppf,
    sech_sample,
    sech_sf,
)

BANDWIDTHS = [2.0**-10, 2.0**-6, 0.25]
SCORES = [0.0, 1e-9, 2.0**-11, 0.3, 0.5, 1 - 2.0**-11, 1.0]


def _sech_integral(a, b, s, h):
    """Reference integral of sech((x - s)/h) over [a, b] by adaptive quadrature (relative tol)."""
    if b <= a:
        return 0.0
    pts = [s] if a < s < b else None
    with np.errstate(over="ignore"):  # cosh overflows far in the tail, where sech is 0 anyway
        val, _ = integrate.quad(
            lambda x: 1.0 / np.cosh((x - s) / h), a, b, points=pts, epsabs=0.0, epsrel=1e-13, limit=500
        )
    return val


def test_gd_closed_form_and_inverse():
    x = np.linspace(-30, 30, 121)
    np.testing.assert_allclose(gd(x), np.arctan(np.sinh(x)), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(gd_inv(gd(np.linspace(-15, 15, 61))), np.linspace(-15, 15, 61), atol=1e-9)
    assert gd_inv(np.pi / 2) == np.inf and gd_inv(-np.pi / 2) == -np.inf
    with pytest.raises(ValueError, match="g must lie"):
        gd_inv(2.0)


@pytest.mark.parametrize("h", BANDWIDTHS)
@pytest.mark.parametrize("s", SCORES)
def test_normaliser_cdf_and_sf_against_quadrature_in_both_tails(h, s):
    z = _sech_integral(0.0, 1.0, s, h)
    assert sech_normalizer(s, h) == pytest.approx(z, rel=1e-11)
    for t in [1e-6, 1e-3, 0.1, s, 0.7, 1 - 1e-3, 1 - 1e-6]:
        below = _sech_integral(0.0, t, s, h)
        above = _sech_integral(t, 1.0, s, h)
        # relative accuracy in each tail, far beyond what 1 - F would give
        if below > 1e-290:
            assert sech_cdf(t, s, h) == pytest.approx(below / z, rel=1e-10)
        if above > 1e-290:
            assert sech_sf(t, s, h) == pytest.approx(above / z, rel=1e-10)
    assert sech_cdf(0.0, s, h) == 0.0 and sech_cdf(1.0, s, h) == 1.0
    assert sech_cdf(-1.0, s, h) == 0.0 and sech_cdf(2.0, s, h) == 1.0


@pytest.mark.parametrize("h", BANDWIDTHS)
@pytest.mark.parametrize("s", [0.0, 2.0**-12, 0.5, 1.0])
def test_density_integrates_to_one_and_to_the_cdf(h, s):
    pts = [s] if 0 < s < 1 else None
    total, _ = integrate.quad(lambda t: sech_pdf(t, s, h), 0.0, 1.0, points=pts, limit=200, epsabs=1e-13)
    assert total == pytest.approx(1.0, abs=1e-9)
    for t in [0.01, 0.3, 0.5 + h, 0.99]:
        inner = [s] if 0 < s < t else None
        part, _ = integrate.quad(lambda x: sech_pdf(x, s, h), 0.0, t, points=inner, limit=200, epsabs=1e-13)
        assert part == pytest.approx(sech_cdf(t, s, h), abs=1e-9)


def test_pdf_broadcasts_to_a_kernel_matrix_and_vanishes_outside():
    t = np.linspace(-0.1, 1.1, 13)
    s = np.array([0.0, 0.25, 1.0])
    K = sech_pdf(t[:, None], s[None, :], 2.0**-6)
    assert K.shape == (13, 3)
    assert np.all(K[(t < 0) | (t > 1)] == 0)
    for j, sj in enumerate(s):
        np.testing.assert_allclose(K[:, j], [sech_pdf(v, sj, 2.0**-6) for v in t], rtol=1e-15)
    # exact value: at t = s = 0 on [0, 1] with tiny h the kernel is sech(0) / (h pi / 2)
    h = 2.0**-10
    assert sech_pdf(0.0, 0.0, h) == pytest.approx(2 / (np.pi * h), rel=1e-14)
    # a general interval: integrates to one on [lo, hi]
    val, _ = integrate.quad(lambda x: sech_pdf(x, 0.05, 0.02, 0.0, 0.25), 0.0, 0.25, points=[0.05])
    assert val == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("h", BANDWIDTHS)
@pytest.mark.parametrize("s", [0.0, 2.0**-12, 0.5, 1 - 2.0**-12, 1.0])
def test_ppf_inverts_cdf(h, s):
    u = np.concatenate([[0.0, 1e-300, 1e-12], np.linspace(0.001, 0.999, 37), [1 - 1e-12, 1.0]])
    t = sech_ppf(u, s, h)
    assert np.all((t >= 0) & (t <= 1))
    assert np.all(np.diff(t) >= 0)
    lower = u <= 0.5
    # relative accuracy next to lo = 0, where floats resolve t to relative precision ...
    np.testing.assert_allclose(sech_cdf(t[lower], s, h), u[lower], rtol=1e-9, atol=1e-300)
    # ... and next to hi = 1 up to the spacing of floats near 1 (times the density there)
    np.testing.assert_allclose(sech_sf(t[~lower], s, h), 1 - u[~lower], rtol=1e-9, atol=1e-12)
    assert sech_ppf(0.0, s, h) == 0.0 and sech_ppf(1.0, s, h) == 1.0


@pytest.mark.parametrize("h", BANDWIDTHS)
@pytest.mark.parametrize("s", [0.0, 2.0**-12, 0.37, 1.0])
def test_sampler_matches_cdf_kolmogorov_smirnov(h, s):
    draws = sech_sample(np.full(4000, s), h, random_state=np.random.RandomState(12345))
    assert np.all((draws >= 0) & (draws <= 1))
    res = stats.kstest(draws, lambda t: sech_cdf(t, s, h))
    assert res.pvalue > 1e-3


def test_sampler_on_other_interval_and_a_mixed_vector():
    s = np.array([0.0, 0.1, 0.25] * 2000)
    h = 2.0**-6
    d = sech_sample(s, h, 0.0, 0.25, random_state=3)
    assert d.shape == s.shape and d.min() >= 0 and d.max() <= 0.25
    # the probability integral transform of a vector of different scores is uniform
    u = sech_cdf(d, s, h, 0.0, 0.25)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # a numpy Generator also works, and a seed reproduces
    g = sech_sample(s, h, 0.0, 0.25, random_state=np.random.default_rng(0))
    assert g.shape == s.shape
    np.testing.assert_array_equal(sech_sample(s, h, 0.0, 0.25, random_state=3), d)


def test_sampler_reaches_the_tails_at_small_bandwidth():
    # at h = 2**-10 and s = 1 the mass within 5h of 1 is about 1 - 2 e^-5 / (pi / 2) ... by the cdf
    h = 2.0**-10
    d = sech_sample(np.ones(20000), h, random_state=0)
    frac = np.mean(d >= 1 - 5 * h)
    assert frac == pytest.approx(sech_sf(1 - 5 * h, 1.0, h), abs=0.01)
    assert d.min() > 0.95  # 1 - 0.05 is ~51 bandwidths away: probability ~ 1e-22


@settings(max_examples=60, deadline=None)
@given(
    s=st.floats(0.0, 1.0),
    logh=st.floats(-10.0, -2.0),
    u=st.floats(0.0, 1.0),
)
def test_property_cdf_of_ppf(s, logh, u):
    h = 2.0**logh
    t = sech_ppf(u, s, h)
    assert 0.0 <= t <= 1.0
    assert sech_cdf(t, s, h) == pytest.approx(u, abs=1e-9)
    assert 0.0 <= sech_cdf(t, s, h) <= 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="'h' parameter of sech_pdf must be a float in the range"):
        sech_pdf(0.5, 0.5, 0.0)
    with pytest.raises(ValueError, match="'h' parameter"):
        sech_sample([0.5], -1.0)
    with pytest.raises(ValueError, match="'h' parameter"):
        sech_cdf(0.5, 0.5, np.inf)
    with pytest.raises(ValueError, match="lo must be smaller"):
        sech_cdf(0.5, 0.5, 0.1, lo=1.0, hi=0.0)
    with pytest.raises(ValueError, match=r"s \(the score\) must lie in"):
        sech_pdf(0.5, 1.5, 0.1)
    with pytest.raises(ValueError, match=r"s \(the score\) must lie in"):
        sech_sample([0.1, -0.01], 0.1)
    with pytest.raises(ValueError, match="s contains NaN"):
        sech_normalizer(np.nan, 0.1)
    with pytest.raises(ValueError, match="t contains NaN"):
        sech_cdf(np.nan, 0.5, 0.1)
    with pytest.raises(ValueError, match="u must lie in"):
        sech_ppf(1.5, 0.5, 0.1)
    with pytest.raises(ValueError, match="'h' parameter"):
        sech_pdf(0.5, 0.5, "wide")


@pytest.mark.parametrize("func", [sech_pdf, sech_cdf])
def test_subnormal_and_boolean_bandwidths_are_rejected(func):
    # a subnormal h overflowed 1 / h and gave all-NaN output; True was read as h = 1
    for h in (1e-310, 5e-324, True):
        with pytest.raises(ValueError, match="'h' parameter"):
            func(0.5, 0.5, h)
    h = np.finfo(np.float64).tiny  # the smallest accepted bandwidth still gives finite numbers
    assert np.isfinite(func(np.array([0.0, 0.5, 1.0]), 0.5, h)).all()
    assert np.isfinite(sech_ppf(np.array([0.1, 0.5, 0.9]), np.array([0.0, 0.5, 1.0]), h)).all()


def test_complex_and_string_points_are_rejected():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="t is complex"):
            sech_cdf(np.array([0.5 + 1j]), 0.5, 0.1)
        with pytest.raises(ValueError, match="'s' parameter"):
            sech_pdf(0.5, 0.5 + 0j, 0.1)
        with pytest.raises(ValueError, match="s must be numeric"):
            sech_pdf(0.5, ["0.5"], 0.1)
    with pytest.raises(ValueError, match=r"\(hi - lo\) / h must be finite"):
        sech_pdf(0.5, 0.5, 1e-300, lo=-1e300, hi=1e300)


def test_inputs_not_mutated_and_scalars_returned():
    s = np.array([0.2, 0.8])
    s0 = s.copy()
    sech_sample(s, 0.1, random_state=0)
    sech_pdf(s, s, 0.1)
    np.testing.assert_array_equal(s, s0)
    assert isinstance(sech_cdf(0.2, 0.3, 0.1), float)
