"""The report's shortcuts give what they replace, bit for bit.

The catalogue's log loss and Brier score (binary and multiclass) and binary accuracy are computed
directly (not through scikit-learn's validation and one-hot matrices), the quantile thresholds
from the linear-time bin ids, and :func:`skcal.binning.threshold_bin_ids` counts the thresholds
below each value by comparisons. Each is checked against the computation it replaces with exact
equality.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from skcal._catalog import (
    accuracy,
    brier,
    measure,
    multiclass_brier,
    multiclass_log_loss,
    multiclass_log_loss_rows,
)
from skcal._catalog import log_loss as binary_log_loss
from skcal.binning import _count_below, assign_bins, quantile_bin_starts, threshold_bin_ids
from skcal.report._kinds import MulticlassData
from skcal.stats import ClasswiseStatistics, TopLabelStatistics
from skcal.stats._truthful import quantile_bin_thresholds

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _probabilities(rng, n, k, *, zeros=False, ties=False):
    P = rng.dirichlet(np.full(k, 0.7), size=n)
    if ties:
        P = np.round(P, 1) + 1e-3
    if zeros:
        P[rng.uniform(size=P.shape) < 0.1] = 0.0
        P[P.sum(axis=1) == 0, 0] = 1.0
    return P / P.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("k", [3, 4, 10, 17])
@pytest.mark.parametrize("variant", ["plain", "zeros", "fortran", "ties"])
def test_log_loss_and_brier_are_scikit_learns_bit_for_bit(k, variant):
    rng = np.random.default_rng(k)
    n = 5000
    P = _probabilities(rng, n, k, zeros=variant == "zeros", ties=variant == "ties")
    if variant == "fortran":
        P = np.asfortranarray(P)
    y = rng.integers(0, k, n)
    labels = np.arange(k)
    assert multiclass_log_loss(y, P) == log_loss(y, P, labels=labels)
    assert multiclass_brier(y, P) == brier_score_loss(y, P, labels=labels)


@pytest.mark.parametrize("variant", ["plain", "ends", "tiny", "ties", "one_class"])
def test_binary_log_loss_brier_and_accuracy_are_scikit_learns_bit_for_bit(variant):
    # the first-order (and second-order votes') values: labels 0.0 / 1.0 as validated
    rng = np.random.default_rng(7)
    n = 5000
    p = rng.uniform(size=n)
    if variant == "ends":
        p[rng.uniform(size=n) < 0.2] = 0.0
        p[rng.uniform(size=n) < 0.2] = 1.0
        p[:3] = [0.5, np.nextafter(0.5, 0), np.nextafter(0.5, 1)]
    elif variant == "tiny":
        p = rng.choice([1e-300, 1e-17, 2.2e-16, 1 - 1e-17, 1 - 2.2e-16, 0.3], size=n)
    elif variant == "ties":
        p = np.round(p, 1)
    y = (rng.uniform(size=n) < p).astype(float)
    if variant == "one_class":
        y[:] = 1.0
    assert brier(y, p) == brier_score_loss(y, p, pos_label=1)
    assert binary_log_loss(y, p) == log_loss(y, p, labels=[0.0, 1.0])
    assert accuracy(y, p) == accuracy_score(y == 1.0, p >= 0.5)


@pytest.mark.parametrize("n", [5, 14, 15, 16, 3000])
@pytest.mark.parametrize("variant", ["plain", "zeros", "ties"])
def test_top_label_values_and_accuracy_are_the_public_functions_bit_for_bit(n, variant):
    # the report's ConfCE-corr, ConfECE and accuracy: the catalogue's functions of the class codes
    from sklearn.metrics import accuracy_score

    from skcal.report._kinds import MulticlassKind
    from skcal.truthful import conf_ece, truthful_conf_ce

    rng = np.random.default_rng(n)
    k = 5
    P = _probabilities(rng, n, k, zeros=variant == "zeros", ties=variant == "ties")
    y = rng.integers(0, k, n)
    d = MulticlassData(y, k)
    labels = np.arange(k)
    catalog = MulticlassKind().catalog()
    assert catalog["truthful_conf_ce"].func(d, P) == truthful_conf_ce(y, P, labels=labels)
    assert catalog["conf_ece"].func(d, P) == conf_ece(y, P, labels=labels)
    assert catalog["accuracy"].func(d, P) == accuracy_score(y, np.argmax(P, axis=1))


@pytest.mark.parametrize("variant", ["plain", "zeros", "fortran"])
def test_log_loss_rows_are_the_terms_of_the_value(variant):
    # the per-row losses of the replicates: scikit-learn's clipped true-class terms, whose mean is
    # the value (no renormalisation: a replicate of unit weights is the value itself)
    rng = np.random.default_rng(3)
    P = _probabilities(rng, 4000, 6, zeros=variant == "zeros")
    if variant == "fortran":
        P = np.asfortranarray(P)
    y = rng.integers(0, 6, 4000)
    eps = np.finfo(np.float64).eps
    rows = multiclass_log_loss_rows(y, P)
    np.testing.assert_array_equal(rows, -np.log(np.clip(P[np.arange(4000), y], eps, 1 - eps)))
    assert np.mean(rows) == multiclass_log_loss(y, P) == log_loss(y, P, labels=np.arange(6))
    w = rng.integers(0, 4, 4000).astype(float)
    np.testing.assert_allclose(
        np.average(rows, weights=w), log_loss(y, P, sample_weight=w, labels=np.arange(6)), rtol=1e-12
    )


@SETTINGS
@given(
    n=st.integers(1, 300),
    n_bins=st.integers(1, 30),
    pool=st.integers(1, 12),
    seed=st.integers(0, 2**31 - 1),
)
def test_quantile_bin_starts_are_the_first_rows_of_the_stable_order(n, n_bins, pool, seed):
    rng = np.random.default_rng(seed)
    v = rng.choice(rng.uniform(size=pool), n) if seed % 2 else rng.uniform(size=n)
    if n_bins > n:
        with pytest.raises(ValueError, match="n_bins must be at most"):
            quantile_bin_starts(v, assign_bins(v, n_bins), n_bins)
        assert quantile_bin_thresholds(v, n_bins) is None
        return
    ids = assign_bins(v, n_bins)
    order = np.argsort(v, kind="stable")
    starts = np.flatnonzero(np.diff(ids[order])) + 1
    got = quantile_bin_starts(v, ids, n_bins)
    np.testing.assert_array_equal(got, order[starts])
    tv, tg = quantile_bin_thresholds(v, n_bins)
    np.testing.assert_array_equal(tg, got)
    np.testing.assert_array_equal(tv, v[got])
    np.testing.assert_array_equal(threshold_bin_ids(v, np.arange(n), tv, tg), ids)


@SETTINGS
@given(
    m=st.integers(0, 90),
    n=st.integers(0, 200),
    pool=st.integers(1, 10),
    nan=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_count_below_is_the_left_search(m, n, pool, nan, seed):
    # comparisons for up to 64 thresholds, the search beyond; NaN values take the search too
    rng = np.random.default_rng(seed)
    grid = np.concatenate([rng.uniform(size=pool), [0.0, 1.0, np.inf]])
    tv = np.sort(rng.choice(grid, m))
    v = rng.choice(np.concatenate([grid, rng.uniform(size=3)]), n)
    if nan and n:
        v[rng.integers(0, n)] = np.nan
    got = _count_below(tv, v)
    assert got.dtype == np.intp
    np.testing.assert_array_equal(got, np.searchsorted(tv, v, side="left"))


def _template(measure_name, P, y):
    return measure(measure_name, "multiclass").replicates(y, P)


def test_classwise_plan_with_weights_is_one_entry_per_class():
    rng = np.random.default_rng(2)
    n, k, nb = 1500, 4, 6
    P = _probabilities(rng, n, k)
    y = rng.integers(0, k, n)
    w = rng.uniform(0.5, 2.0, n)
    s = ClasswiseStatistics(labels=list(range(k)), n_bins=nb)
    plan = s._replicate_plan(P, y, w)
    ids = np.column_stack([s._ids(np.ascontiguousarray(P[:, j])) for j in range(k)])
    flat = ids + np.arange(k)[None, :] * nb
    np.testing.assert_array_equal(plan.rows, flat)
    # one entry per class: the true class's -w folded into its w p (the same accumulator row)
    np.testing.assert_array_equal(plan.vals, (P - np.eye(k)[y]) * w[:, None])
    assert plan.rows.dtype == np.int32 and plan.rows.flags.c_contiguous and plan.vals.flags.c_contiguous


def test_top_label_template_from_the_report_keeps_its_parameters():
    # the thresholds the report builds are those of quantile_bin_thresholds on the top label
    rng = np.random.default_rng(4)
    P = _probabilities(rng, 1000, 3, ties=True)
    y = rng.integers(0, 3, 1000)
    template = _template("conf_ece", P, y)
    c = P[np.arange(1000), np.argmax(P, axis=1)]
    tv, tg = quantile_bin_thresholds(c, 15)
    want = TopLabelStatistics(labels=[0, 1, 2], n_bins=15, measure="conf_ece", thresholds=(tv, tg))
    assert template.get_params() == want.get_params()
    assert _template("classwise_lince", P[:10], y[:10]) is None


@pytest.mark.parametrize(
    "values, ids, n_bins, match",
    [
        (np.zeros(3), np.zeros(4, dtype=int), 2, "same length"),
        (np.zeros((3, 1)), np.zeros(3, dtype=int), 2, "1-d arrays"),
        (np.zeros(3), np.zeros(3), 2, "ids integers"),
        (np.arange(3.0), np.array([0, 1, 2]), 2, r"0..n_bins - 1 = 1"),
        (np.arange(3.0), np.array([0, -1, 1]), 2, r"0..n_bins - 1"),
        (np.arange(3.0), np.array([0, 1, 2]), 4, "at most the number of values"),
    ],
)
def test_quantile_bin_starts_rejects_bad_input(values, ids, n_bins, match):
    with pytest.raises(ValueError, match=match):
        quantile_bin_starts(values, ids, n_bins)
