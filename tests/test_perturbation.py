"""Tests of SechPerturber (SPEC section 1)."""

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal import SechPerturber
from skcal.sech import sech_cdf, sech_pdf

_RANDOM_DRAW = (
    "SechPerturber draws random noise per row: transforming the rows in another order or a "
    "subset of them gives other draws (the same input array always gets the same draw)."
)
EXPECTED_FAILED_CHECKS = {
    "check_methods_sample_order_invariance": _RANDOM_DRAW,
    "check_methods_subset_invariance": _RANDOM_DRAW,
}


def _scores(n=500, seed=0):
    rng = np.random.RandomState(seed)
    m = rng.uniform(0, 1, n)
    return np.column_stack([m, rng.uniform(0, 1, n) * m * (1 - m)])


# The default bounds accept only 1 or 2 columns (the SPEC's scores), while the common checks
# feed 3 to 10 columns; bounds=(lo, hi) perturbs any number of columns on one interval, so the
# checks exercise the same code (validation, seeding, sampling, set_output, pickling).
@parametrize_with_checks(
    [
        SechPerturber(random_state=0, bounds=(-1e3, 1e3)),
        SechPerturber(random_state=0, bounds=(0.0, 1.0), out_of_bounds="clip", bandwidth=0.25),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_draws_stay_in_the_box_and_follow_the_kernel():
    h = 2.0**-6
    S = np.tile([[0.0, 0.0], [1.0, 0.25], [0.5, 0.1]], (3000, 1))
    out = SechPerturber(bandwidth=h, random_state=1).fit_transform(S)
    assert out.shape == S.shape
    assert out[:, 0].min() >= 0 and out[:, 0].max() <= 1
    assert out[:, 1].min() >= 0 and out[:, 1].max() <= 0.25
    # each coordinate follows its own truncated kernel (m on [0, 1], sigma2 on [0, 1/4])
    u_m = sech_cdf(out[:, 0], S[:, 0], h, 0.0, 1.0)
    u_v = sech_cdf(out[:, 1], S[:, 1], h, 0.0, 0.25)
    assert stats.kstest(u_m, "uniform").pvalue > 1e-3
    assert stats.kstest(u_v, "uniform").pvalue > 1e-3
    # and independently of each other
    assert abs(stats.spearmanr(u_m, u_v).statistic) < 0.05


def test_one_column_scores_and_1d_names():
    m = np.linspace(0, 1, 400)[:, None]
    pert = SechPerturber(bandwidth=0.25, random_state=0).fit(m)
    out = pert.transform(m)
    assert out.shape == (400, 1) and out.min() >= 0 and out.max() <= 1
    assert pert.get_feature_names_out().tolist() == ["m"]
    u = sech_cdf(out[:, 0], m[:, 0], 0.25)
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_int_seed_reproducible_none_fresh_randomstate_advances():
    S = _scores(200)
    a = SechPerturber(random_state=7).fit(S)
    np.testing.assert_array_equal(a.transform(S), a.transform(S))
    np.testing.assert_array_equal(a.transform(S), clone(a).fit(S).transform(S))
    assert not np.array_equal(a.transform(S), SechPerturber(random_state=8).fit(S).transform(S))
    # different input of the same size gets different uniforms, not the same ones
    S2 = _scores(200, seed=1)
    u1 = sech_cdf(a.transform(S)[:, 0], S[:, 0], 2.0**-6)
    u2 = sech_cdf(a.transform(S2)[:, 0], S2[:, 0], 2.0**-6)
    assert abs(np.corrcoef(u1, u2)[0, 1]) < 0.3
    # None: fresh noise on every call (numpy's global RandomState)
    b = SechPerturber(random_state=None).fit(S)
    assert not np.array_equal(b.transform(S), b.transform(S))
    np.random.seed(3)  # noqa: NPY002 (None means the global RandomState, as in scikit-learn)
    x1 = b.transform(S)
    np.random.seed(3)  # noqa: NPY002 (None means the global RandomState, as in scikit-learn)
    np.testing.assert_array_equal(x1, b.transform(S))
    # a RandomState instance is advanced
    c = SechPerturber(random_state=np.random.RandomState(0)).fit(S)
    assert not np.array_equal(c.transform(S), c.transform(S))
    assert c.__sklearn_tags__().non_deterministic and not a.__sklearn_tags__().non_deterministic


def test_pandas_in_and_out():
    S = _scores(50)
    df = pd.DataFrame(S, columns=["mean", "var"], index=np.arange(100, 150))
    pert = SechPerturber(random_state=0).set_output(transform="pandas")
    out = pert.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert out.columns.tolist() == ["mean", "var"]
    assert out.index.tolist() == df.index.tolist()
    np.testing.assert_array_equal(out.to_numpy(), SechPerturber(random_state=0).fit_transform(S))
    plain = SechPerturber(random_state=0).set_output(transform="pandas").fit_transform(S)
    assert plain.columns.tolist() == ["m", "sigma2"]
    assert pert.get_feature_names_out(["mean", "var"]).tolist() == ["mean", "var"]
    with pytest.raises(ValueError, match="input_features is not equal"):
        pert.get_feature_names_out(["a", "b"])


def test_bad_input():
    with pytest.raises(ValueError, match=r"X \(scores\)\[:, 0\] \(m\) must lie in \[0, 1\]"):
        SechPerturber().fit([[1.2, 0.1]])
    with pytest.raises(ValueError, match=r"sigma2\) must lie in \[0, 0.25\]"):
        SechPerturber().fit([[0.5, 0.3]])
    with pytest.raises(ValueError, match="1 column .* 2 columns .* or 2k columns"):
        SechPerturber().fit(np.full((4, 3), 0.1))
    with pytest.raises(ValueError, match="NaN"):
        SechPerturber().fit([[0.5, np.nan]])
    with pytest.raises(ValueError, match="bandwidth"):
        SechPerturber(bandwidth=0.0).fit([[0.5, 0.1]])
    with pytest.raises(ValueError, match="bounds must be a pair"):
        SechPerturber(bounds=[(0, 1)] * 3).fit([[0.5, 0.1]])
    with pytest.raises(ValueError, match="lo < hi"):
        SechPerturber(bounds=(1, 0)).fit([[0.5, 0.1]])
    pert = SechPerturber().fit([[0.5, 0.1]])
    with pytest.raises(ValueError, match="features"):
        pert.transform([[0.5]])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        pert.transform([[-0.1, 0.1]])
    # clip instead of raising
    out = SechPerturber(out_of_bounds="clip", random_state=0).fit_transform([[1.2, 0.3], [-1, -1]])
    assert out[:, 0].min() >= 0 and out[:, 0].max() <= 1 and out[:, 1].max() <= 0.25


def test_input_not_mutated():
    S = _scores(30)
    S0 = S.copy()
    SechPerturber(random_state=0).fit_transform(S)
    np.testing.assert_array_equal(S, S0)


def test_density_is_the_product_kernel():
    h = 0.05
    pert = SechPerturber(bandwidth=h)
    T = np.array([[0.1, 0.02], [0.9, 0.2], [1.5, 0.1]])
    S = np.array([[0.0, 0.0], [1.0, 0.25], [0.5, 0.1]])
    d = pert.density(T, S)
    expected = sech_pdf(T[:, 0], S[:, 0], h) * sech_pdf(T[:, 1], S[:, 1], h, 0.0, 0.25)
    np.testing.assert_allclose(d, expected, rtol=1e-15)
    assert d[2] == 0.0  # outside the box
    # integrates to one over the rectangle
    total, _ = integrate.dblquad(lambda v, m: pert.density([m, v], [0.3, 0.05]), 0, 1, 0, 0.25, epsabs=1e-10)
    assert total == pytest.approx(1.0, abs=1e-7)
    # kernel matrix by broadcasting
    K = pert.density(T[:, None, :], S[None, :2, :])
    assert K.shape == (3, 2)
    with pytest.raises(ValueError, match="same last axis"):
        pert.density(T, S[:, :1])


def test_in_a_pipeline_with_cross_validation_is_reproducible():
    # a regressor after the perturber: the perturbed scores feed a downstream model, and an int
    # random_state makes the cross-validated score reproducible
    from sklearn.linear_model import Ridge

    S = _scores(300)
    y = S[:, 0] + 0.1 * np.random.RandomState(0).normal(size=300)
    pipe = make_pipeline(SechPerturber(random_state=0), Ridge(alpha=1e-3))
    a = cross_val_score(pipe, S, y, cv=3)
    b = cross_val_score(pipe, S, y, cv=3)
    np.testing.assert_array_equal(a, b)


# --- issue 13 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("bandwidth", [1e-310, 5e-324, True, "0.1", None, np.nan, 0.0])
def test_bad_bandwidth_is_rejected_naming_bandwidth(bandwidth):
    # a subnormal bandwidth used to give all-NaN output; True was taken as h = 1 and failed later naming h
    with pytest.raises(ValueError, match="'bandwidth' parameter of SechPerturber"):
        SechPerturber(bandwidth=bandwidth).fit([[0.5, 0.1]])
    with pytest.raises(ValueError, match="'bandwidth' parameter of SechPerturber"):
        SechPerturber(bandwidth=bandwidth).density([[0.5, 0.1]], [[0.5, 0.1]])


def test_smallest_normal_bandwidth_gives_finite_output():
    h = float(np.finfo(np.float64).tiny)
    out = SechPerturber(bandwidth=h, random_state=0).fit_transform([[0.5, 0.1], [0.0, 0.0], [1.0, 0.25]])
    assert np.isfinite(out).all()


def test_init_is_keyword_only():
    with pytest.raises(TypeError):
        SechPerturber(0.1)


def test_complex_scores_are_rejected():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="(?i)complex"):  # scikit-learn: "Complex data not supported"
            SechPerturber().fit(np.array([[0.5 + 1j, 0.1]]))
        with pytest.raises(ValueError, match="X \\(scores\\) must be numeric; got strings"):
            SechPerturber().fit(np.array([["0.5", "0.1"]], dtype=object))
        with pytest.raises(ValueError, match="T is complex"):
            SechPerturber().density(np.array([[0.5 + 1j, 0.1]]), [[0.5, 0.1]])


def test_k_class_scores_are_perturbed_class_by_class_as_their_binary_tasks():
    from skcal import ensemble_moments

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=(5, 300))
    flat = ensemble_moments(P)
    pert = SechPerturber(random_state=7).fit(flat)
    T = pert.transform(flat)
    assert T.shape == (300, 8) and pert.n_features_in_ == 8
    for c in range(4):
        alone = SechPerturber(random_state=7).fit_transform(flat[:, [c, 4 + c]])
        np.testing.assert_array_equal(T[:, [c, 4 + c]], alone)  # the binary chain's draw, exactly
    assert (T[:, :4] >= 0).all() and (T[:, :4] <= 1).all() and (T[:, 4:] <= 0.25).all()
    S3 = ensemble_moments(P, layout="classes")
    T3 = SechPerturber(random_state=7).fit_transform(S3)
    assert T3.shape == (300, 4, 2)
    np.testing.assert_array_equal(T3[..., 0], T[:, :4])
    assert pert.get_feature_names_out()[[0, 4]].tolist() == ["m[0]", "sigma2[0]"]
    assert SechPerturber(bandwidth=0.1).density(T[:3], flat[:3]).shape == (3,)
    with pytest.raises(ValueError, match="2k columns"):
        SechPerturber().fit(np.full((3, 5), 0.1))
