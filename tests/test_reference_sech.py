"""SPEC 1 references (quadrature of the sech density) against skcal.sech_pdf / cdf / ppf / sample."""

import numpy as np
import pytest
from reference import sech_ref as R
from scipy import stats

import skcal

H = [2**-10, 2**-6, 0.05, 0.4]
INTERVALS = [(0.0, 1.0), (0.0, 0.25)]  # m on [0, 1], sigma2 on [0, 1/4]


def _scores(a, b):
    w = b - a
    return [a, b, a + 0.5 * w, a + 0.3 * w, a + 1e-4 * w, b - 2**-12 * w]


def _points(s, h, a, b, rng):
    t = np.concatenate(
        [[a, b, s], s + h * np.array([-3, -1, -0.1, 0.1, 1, 3, 20, 60]), rng.uniform(a, b, size=4)]
    )
    return t[(t >= a) & (t <= b)]


@pytest.mark.parametrize("h", H)
@pytest.mark.parametrize("a,b", INTERVALS)
def test_pdf_cdf_against_quadrature(h, a, b):
    rng = np.random.default_rng(int(h * 1e6))
    for s in _scores(a, b):
        for t in _points(s, h, a, b, rng):
            ref_p = R.pdf(t, s, h, a, b)
            got_p = float(skcal.sech_pdf(t, s, h, lo=a, hi=b))
            if ref_p > 1e-290:
                assert got_p == pytest.approx(ref_p, rel=1e-12), (s, t)
            else:
                assert abs(got_p) <= 1e-280
            ref_c = R.cdf(t, s, h, a, b)
            got_c = float(skcal.sech_cdf(t, s, h, lo=a, hi=b))
            if ref_c <= 0.5:  # lower tail: relative accuracy
                assert got_c == pytest.approx(ref_c, rel=1e-12, abs=1e-290), (s, t)
            else:  # upper tail: compare 1 - F with the upper-tail quadrature
                assert 1.0 - got_c == pytest.approx(R.sf(t, s, h, a, b), rel=1e-6, abs=2e-16), (s, t)


@pytest.mark.parametrize("h", H)
def test_outside_the_interval(h):
    for s in (0.0, 0.5, 1.0):
        assert float(skcal.sech_pdf(-0.1, s, h)) == 0.0 and float(skcal.sech_pdf(1.1, s, h)) == 0.0
        assert float(skcal.sech_cdf(-0.1, s, h)) == 0.0 and float(skcal.sech_cdf(1.1, s, h)) == 1.0


@pytest.mark.parametrize("h", H)
@pytest.mark.parametrize("a,b", INTERVALS)
def test_ppf_against_root_of_quadrature_cdf(h, a, b):
    rng = np.random.default_rng(3)
    for s in _scores(a, b):
        for u in np.concatenate([[0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, 1e-300, 0.01, 0.99], rng.uniform(size=4)]):
            ref = R.ppf(u, s, h, a, b)
            got = float(skcal.sech_ppf(u, s, h, lo=a, hi=b))
            assert a <= got <= b
            assert got == pytest.approx(ref, abs=1e-11 * h), (s, u)


def test_broadcasting_kernel_matrix():
    t = np.linspace(0, 1, 7)
    s = np.array([0.0, 0.4, 1.0])
    K = skcal.sech_pdf(t[:, None], s[None, :], 0.1)
    ref = np.array([[R.pdf(ti, si, 0.1) for si in s] for ti in t])
    np.testing.assert_allclose(K, ref, rtol=1e-12)


def test_density_integrates_to_one_and_cdf_is_its_integral():
    from scipy import integrate

    for h in (2**-6, 0.2):
        for s in (0.0, 0.37, 1.0):
            total, _ = integrate.quad(
                lambda t, s=s, h=h: float(skcal.sech_pdf(t, s, h)), 0, 1, points=[s], limit=200
            )
            assert total == pytest.approx(1.0, abs=1e-9)
            part, _ = integrate.quad(
                lambda t, s=s, h=h: float(skcal.sech_pdf(t, s, h)), 0, 0.6, points=[min(s, 0.6)], limit=200
            )
            assert part == pytest.approx(float(skcal.sech_cdf(0.6, s, h)), abs=1e-9)


@pytest.mark.parametrize(
    "h,a,b,s",
    [
        (2**-6, 0.0, 1.0, 0.0),
        (2**-6, 0.0, 1.0, 1.0),
        (2**-6, 0.0, 1.0, 0.42),
        (0.05, 0.0, 0.25, 0.25),
        (0.3, 0.0, 1.0, 0.8),
        (2**-10, 0.0, 1.0, 0.5),
        (2**-10, 0.0, 1.0, 0.0),
    ],
)
def test_sample_ks(h, a, b, s):
    draws = skcal.sech_sample(np.full(4000, s), h, lo=a, hi=b, random_state=12345)
    assert draws.shape == (4000,) and draws.min() >= a and draws.max() <= b
    cdf = lambda t: R.cdf_vectorised_spec(t, s, h, a, b)  # noqa: E731  # noqa: B023
    assert stats.kstest(draws, cdf).pvalue > 1e-3


def test_sample_ks_mixed_scores():
    """Probability integral transform with per-sample scores: F(draw_i | s_i) ~ U(0, 1)."""
    rng = np.random.default_rng(0)
    s = rng.choice([0.0, 1.0, rng.uniform()], size=3000)
    s[:1000] = rng.uniform(size=1000)
    h = 0.1
    draws = skcal.sech_sample(s, h, random_state=7)
    u = np.array([R.cdf_vectorised_spec(d, si, h) for d, si in zip(draws, s, strict=False)])
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_sech_perturber_coordinatewise_on_the_rectangle():
    """SPEC 1: (m, sigma2) perturbed independently, m on [0, 1] and sigma2 on [0, 1/4]."""
    n, h = 3000, 0.05
    S = np.column_stack([np.full(n, 0.9), np.full(n, 0.24)])  # sigma2 > m(1 - m): infeasible allowed
    out = skcal.SechPerturber(bandwidth=h, random_state=0).fit_transform(S)
    assert out[:, 0].min() >= 0 and out[:, 0].max() <= 1 and out[:, 1].min() >= 0 and out[:, 1].max() <= 0.25
    assert stats.kstest(out[:, 0], lambda t: R.cdf_vectorised_spec(t, 0.9, h, 0.0, 1.0)).pvalue > 1e-3
    assert stats.kstest(out[:, 1], lambda t: R.cdf_vectorised_spec(t, 0.24, h, 0.0, 0.25)).pvalue > 1e-3
    assert abs(stats.spearmanr(out[:, 0], out[:, 1])[0]) < 0.06  # independent coordinates
    one = skcal.SechPerturber(bandwidth=h, random_state=0).fit_transform(np.full((n, 1), 0.0))
    assert stats.kstest(one[:, 0], lambda t: R.cdf_vectorised_spec(t, 0.0, h)).pvalue > 1e-3
