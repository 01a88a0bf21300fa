import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal import SoftBinRounder, expected_swap_regret, scdl_curve, soft_bin_weights, swap_regret
from skcal.rounding import best_response
from skcal.stats._scdl import scdl_on_grid

probs = st.one_of(st.floats(0, 1, allow_nan=False), st.sampled_from([0.0, 0.25, 0.5, 1.0]))


@st.composite
def samples(draw, max_size=40):
    n = draw(st.integers(1, max_size))
    p = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    return y, p


# --- soft-bin weights --------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(probs, min_size=1, max_size=30), st.integers(1, 40))
def test_weights_preserve_the_mean_exactly(p, m):
    p = np.array(p)
    index, weights = soft_bin_weights(p, m)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-15)
    assert np.all((index[:, 0] >= 0) & (index[:, 1] == index[:, 0] + 1) & (index[:, 1] <= m))
    np.testing.assert_allclose((weights * index / m).sum(axis=1), p, atol=1e-14)
    dense = soft_bin_weights(p, m, dense=True)
    expected = np.maximum(0.0, 1.0 - np.abs(m * p[:, None] - np.arange(m + 1)))  # SPEC definition
    np.testing.assert_allclose(dense, expected, atol=1e-14)


def test_weights_bad_input():
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="'n_bins' parameter of soft_bin_weights"):
            soft_bin_weights([0.5], bad)
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]"):
        soft_bin_weights([1.5], 4)


# --- the transformer ---------------------------------------------------------------------


def _data(n=4000, seed=0, power=1.0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**power).astype(int)
    return p, y


def test_fit_selects_the_scdl_grid():
    p, y = _data(power=1.5)
    rounder = SoftBinRounder().fit(p, y)
    curve = scdl_curve(y, p)
    assert rounder.n_bins_ == curve.selected_n_bins
    assert rounder.scdl_ == curve.scdl
    assert 1 / rounder.n_bins_ <= rounder.scdl_ < 2 / rounder.n_bins_
    assert rounder.scdl_n_bins_ == pytest.approx(scdl_on_grid(p, y.astype(float), None, rounder.n_bins_)[0])
    assert rounder.swap_regret_bound_ == pytest.approx(2 * rounder.scdl_n_bins_ + 2 / rounder.n_bins_)
    assert rounder.bin_weights_.sum() == pytest.approx(1.0)
    assert rounder.n_features_in_ == 1


def test_fixed_grid_and_fit_without_labels():
    p, y = _data(n=500)
    rounder = SoftBinRounder(n_bins=5).fit(p, y)
    assert rounder.n_bins_ == 5 and np.isfinite(rounder.scdl_n_bins_)
    unlabeled = SoftBinRounder(n_bins=3, random_state=0).fit(p)
    assert unlabeled.n_bins_ == 3 and np.isnan(unlabeled.scdl_) and unlabeled.curve_ is None
    assert set(np.round(unlabeled.transform(p)[:, 0] * 3, 9)) <= {0.0, 1.0, 2.0, 3.0}
    with pytest.raises(ValueError, match="requires y to be passed"):
        SoftBinRounder().fit(p)
    with pytest.raises(ValueError, match="sample_weight has 3 entries"):
        SoftBinRounder(n_bins=3).fit(p, sample_weight=[1.0, 2.0, 3.0])


def test_transform_is_expectation_preserving_in_distribution():
    # 200 copies of each of 5 probabilities, rounded 200 times: the frequency of the upper
    # neighbour matches its weight (seeded, so the test is deterministic).
    p = np.repeat([0.0, 0.1, 0.37, 0.5, 1.0], 200)
    rounder = SoftBinRounder(n_bins=4, random_state=np.random.RandomState(0)).fit(p)
    draws = np.stack([rounder.transform(p)[:, 0] for _ in range(200)])
    assert set(np.unique(draws * 4)) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    # each draw is a neighbour of its p
    assert np.all(np.abs(draws - p) < 0.25 + 1e-12)
    means = draws.reshape(200, 5, 200).mean(axis=(0, 2))
    se = 0.25 / np.sqrt(200 * 200)
    np.testing.assert_allclose(means, [0.0, 0.1, 0.37, 0.5, 1.0], atol=5 * se)
    # points on the grid never move
    assert np.all(draws[:, p == 0.5] == 0.5) and np.all(draws[:, p == 1.0] == 1.0)


def test_random_state_semantics():
    p, y = _data(n=300)
    a = SoftBinRounder(n_bins=4, random_state=7).fit(p)
    np.testing.assert_array_equal(a.transform(p), a.transform(p))  # int: re-seeded each call
    b = SoftBinRounder(n_bins=4, random_state=np.random.RandomState(7)).fit(p)
    first, second = b.transform(p), b.transform(p)
    np.testing.assert_array_equal(first, a.transform(p))
    assert not np.array_equal(first, second)  # instance: advanced by each call
    U = np.array([[1.0, 0.0], [0.4, 0.6], [0.0, 1.0]])
    # decide uses the same draws as transform
    np.testing.assert_array_equal(a.decide(p, U), best_response(a.transform(p)[:, 0], U))


def test_predict_proba_layout_and_feature_names():
    p, y = _data(n=400)
    P = np.column_stack([1 - p, p])
    rounder = SoftBinRounder(random_state=0).fit(P, y)
    out = rounder.transform(P)
    assert out.shape == (400, 2)
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    np.testing.assert_array_equal(out[:, 1], SoftBinRounder(random_state=0).fit(p, y).transform(p)[:, 0])
    df = pd.DataFrame({"proba": p})
    fitted = SoftBinRounder(random_state=0).fit(df, pd.Series(y))
    assert fitted.get_feature_names_out().tolist() == ["proba"]
    assert fitted.n_bins_ == SoftBinRounder().fit(p.tolist(), y.tolist()).n_bins_


def test_string_labels_use_the_greater_class():
    p, y = _data(n=400)
    labels = np.where(y == 1, "spam", "ham")  # "spam" > "ham", as predict_proba orders them
    assert SoftBinRounder().fit(p, labels).scdl_ == SoftBinRounder().fit(p, y).scdl_


def test_out_of_bounds():
    p = np.array([-0.2, 0.3, 1.4])
    y = np.array([0, 1, 1])
    with pytest.raises(ValueError, match=r"X must lie in \[0, 1\]"):
        SoftBinRounder(n_bins=2).fit(p, y)
    rounder = SoftBinRounder(n_bins=2, out_of_bounds="clip", random_state=0).fit(p, y)
    out = rounder.transform(p)[:, 0]
    assert out[0] == 0.0 and out[2] == 1.0
    with pytest.raises(ValueError, match="3 columns"):
        SoftBinRounder(n_bins=2).fit(np.full((3, 3), 0.3), y)
    with pytest.raises(ValueError, match="binary labels"):
        SoftBinRounder().fit([0.1, 0.2, 0.3], [0, 1, 2])


def test_decide_proba_is_exact_distribution():
    p, y = _data(n=200, seed=3)
    U = np.array([[0.9, 0.1], [0.5, 0.5], [0.0, 1.0]])
    rounder = SoftBinRounder(n_bins=4).fit(p)
    P = rounder.decide_proba(p, U)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    W = rounder.predict_weights(p, dense=True)
    r = rounder.grid_responses(U)
    np.testing.assert_allclose(P, W @ np.eye(3)[r])
    assert swap_regret(y, P, U) == pytest.approx(expected_swap_regret(y, p, U, 4), abs=1e-14)


# --- swap regret -------------------------------------------------------------------------


def brute_force_swap_regret(y, actions, U):
    """Maximise over all |A|^|A| maps sigma (small action sets only)."""
    A = U.shape[0]
    yi = np.asarray(y, dtype=int)
    base = U[actions, yi].mean()
    return max(
        U[np.array(sigma)[actions], yi].mean() - base for sigma in itertools.product(range(A), repeat=A)
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 25), st.integers(0, 2**32 - 1))
def test_swap_regret_equals_brute_force(n_actions, n, seed):
    rng = np.random.default_rng(seed)
    U = rng.uniform(size=(n_actions, 2))
    y = rng.integers(0, 2, size=n)
    actions = rng.integers(0, n_actions, size=n)
    assert swap_regret(y, actions, U) == pytest.approx(brute_force_swap_regret(y, actions, U), abs=1e-12)
    onehot = np.eye(n_actions)[actions]
    assert swap_regret(y, onehot, U) == pytest.approx(swap_regret(y, actions, U), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(samples(), st.integers(2, 6), st.sampled_from([1, 2, 3, 4, 8, 16, 32]), st.integers(0, 2**32 - 1))
def test_expected_swap_regret_bound(data, n_actions, m, seed):
    """SPEC 4: expected swap regret <= 2 SCDL_m + 2/m for every sample and bounded task."""
    y, p = data
    U = np.random.default_rng(seed).uniform(size=(n_actions, 2))
    sr = expected_swap_regret(y, p, U, m)
    scdl_m = scdl_on_grid(p, y, None, m)[0]
    assert 0.0 <= sr <= 2 * scdl_m + 2 / m + 1e-12
    # and with the SCDL-selected grid, SR <= 4 SCDL
    rounder = SoftBinRounder(max_bins=32).fit(p, y)
    assert expected_swap_regret(y, p, U, rounder.n_bins_) <= 4 * rounder.scdl_ + 1e-12


def test_expected_swap_regret_of_an_adversarial_predictor():
    # Predicting 1 - eta on a calibrated-looking grid: the guess-the-label task loses a lot,
    # and the regret is recovered exactly by swapping the two actions.
    y = np.array([1, 1, 1, 0, 0, 0])
    p = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    U = [[1.0, 0.0], [0.0, 1.0]]
    assert expected_swap_regret(y, p, U, 2) == pytest.approx(1.0)
    assert swap_regret(y, 1 - y, U) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "actions, utility, match",
    [
        ([0, 3], [[1, 0], [0, 1]], "integer action indices in 0..1"),
        ([0.5, 1], [[1, 0], [0, 1]], "integer action indices"),
        ([0, 1], [[1, 0, 0], [0, 1, 0]], r"utility must have shape \(n_actions, 2\)"),
        ([0, 1], [[1, np.nan], [0, 1]], "utility contains NaN"),
        ([[0.5, 0.6], [1, 0]], [[1, 0], [0, 1]], "probability rows"),
        ([[0.5, 0.5, 0], [1, 0, 0]], [[1, 0], [0, 1]], "actions has 3 columns"),
        ([0, 1, 1], [[1, 0], [0, 1]], "Inconsistent numbers of samples"),
    ],
)
def test_swap_regret_bad_input(actions, utility, match):
    with pytest.raises(ValueError, match=match):
        swap_regret([0, 1], actions, utility)


def test_input_types_give_identical_results():
    p, y = _data(n=300, seed=5)
    U = np.array([[0.2, 0.7], [0.6, 0.3]])
    ref = expected_swap_regret(y, p, U, 8)
    assert expected_swap_regret(y.tolist(), p.tolist(), U.tolist(), 8) == ref
    assert expected_swap_regret(pd.Series(y), pd.Series(p), pd.DataFrame(U), 8) == ref


# --- scikit-learn common checks ----------------------------------------------------------

_COLUMNS = (
    "X is a column of probabilities (or predict_proba's two columns); this check fits on a "
    "matrix with 3 or more feature columns, which SoftBinRounder rejects with a ValueError"
)
EXPECTED_FAILED_CHECKS = {
    "check_fit1d": "1-D X is accepted by design: it is the natural shape of a probability vector",
    **{
        name: _COLUMNS
        for name in (
            "check_all_zero_sample_weights_error",
            "check_dict_unchanged",
            "check_dont_overwrite_parameters",
            "check_dtype_object",
            "check_estimators_dtypes",
            "check_estimators_nan_inf",
            "check_estimators_pickle",
            "check_f_contiguous_array_estimator",
            "check_fit2d_1sample",
            "check_fit2d_predict1d",
            "check_fit_score_takes_y",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_n_features_in_after_fitting",
            "check_pipeline_consistency",
            "check_positive_only_tag_during_fit",
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weights_list",
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_transformer_preserve_dtypes",
        )
    },
}


@parametrize_with_checks(
    # n_bins="auto" is the path with the most validation (labels required); the fixed-grid
    # path is covered by test_fixed_grid_and_fit_without_labels.
    [SoftBinRounder(out_of_bounds="clip", random_state=0)],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_expected_failures_are_the_stated_ones():
    """Every listed failure (but check_fit1d) is the column-count rejection, nothing else."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = rng.integers(0, 2, size=20)
    with pytest.raises(ValueError, match="got 3 columns"):
        SoftBinRounder(out_of_bounds="clip").fit(X, y)
    # with one column the same data are fine
    SoftBinRounder(out_of_bounds="clip").fit(X[:, :1], y).transform(X[:, :1])


def test_score_is_the_negated_swap_regret_bound_and_drives_grid_search():
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(3)
    p = rng.uniform(size=6000)
    y = (rng.uniform(size=6000) < np.clip(p + 0.08, 0, 1)).astype(int)
    r = SoftBinRounder(n_bins=8).fit(p, y)
    curve = scdl_curve(y, p, max_bins=8)
    assert r.score(p, y) == pytest.approx(-(2 * curve.scdl_m[-1] + 2 / 8), rel=1e-12)
    # the bound really bounds the exact expected swap regret of a random task
    U = rng.uniform(size=(4, 2))
    assert expected_swap_regret(y, p, U, 8) <= -r.score(p, y) + 1e-12
    search = GridSearchCV(SoftBinRounder(), {"n_bins": [2, 4, 8, 16, 32]}, cv=3).fit(p[:, None], y)
    means = search.cv_results_["mean_test_score"]
    assert np.isfinite(means).all()
    assert search.best_params_["n_bins"] == [2, 4, 8, 16, 32][int(np.argmax(means))]
