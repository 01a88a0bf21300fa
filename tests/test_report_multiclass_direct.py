"""The report's shortcuts give what they replace, bit for bit.

The report's log loss and Brier score (binary and multiclass) and binary accuracy are computed
directly (not through scikit-learn's validation and one-hot matrices), the quantile thresholds
from the linear-time bin ids, the truthful replicate plans from ids lent by the report
(``_hint_plan``), and :func:`skcal.binning.threshold_bin_ids` counts the thresholds below each
value by comparisons. Each is checked against the computation it replaces with exact equality.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from skcal.binning import _count_below, assign_bins, quantile_bin_starts, threshold_bin_ids
from skcal.report._kinds import MulticlassData, mc_brier, mc_log_loss, mc_log_loss_rows
from skcal.report._metrics import (
    TruthfulReplicates,
    accuracy,
    binary_log_loss,
    brier,
    quantile_bin_thresholds,
)
from skcal.stats import ClasswiseStatistics, PoissonBootstrap, TopLabelStatistics

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
    d = MulticlassData(y, k)
    labels = np.arange(k)
    assert mc_log_loss(d, P) == log_loss(y, P, labels=labels)
    assert mc_brier(d, P) == brier_score_loss(y, P, labels=labels)


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
    # the report's ConfCE-corr, ConfECE and accuracy from the kept top classes and bins
    from sklearn.metrics import accuracy_score

    from skcal.report._kinds import mc_accuracy, mc_conf_ece, mc_truthful_conf_ce
    from skcal.truthful import conf_ece, truthful_conf_ce

    rng = np.random.default_rng(n)
    k = 5
    P = _probabilities(rng, n, k, zeros=variant == "zeros", ties=variant == "ties")
    y = rng.integers(0, k, n)
    d = MulticlassData(y, k)
    labels = np.arange(k)
    top_before = d.top(P)[1].copy()
    assert mc_truthful_conf_ce(d, P) == truthful_conf_ce(y, P, labels=labels)
    assert mc_conf_ece(d, P) == conf_ece(y, P, labels=labels)
    assert mc_accuracy(d, P) == accuracy_score(y, np.argmax(P, axis=1))
    np.testing.assert_array_equal(d.top(P)[1], top_before)  # the kept arrays are not modified
    if n >= 15:  # the bins are found once for both measures and the replicates' thresholds
        assert d.top_bins(P, 15)[0] is d.top_bins(P, 15)[0]


@pytest.mark.parametrize("variant", ["plain", "zeros", "fortran"])
def test_log_loss_rows_are_the_terms_of_the_value(variant):
    # the per-row losses of the replicates: scikit-learn's clipped true-class terms, whose mean is
    # the value (no renormalisation: a replicate of unit weights is the value itself)
    rng = np.random.default_rng(3)
    P = _probabilities(rng, 4000, 6, zeros=variant == "zeros")
    if variant == "fortran":
        P = np.asfortranarray(P)
    y = rng.integers(0, 6, 4000)
    d = MulticlassData(y, 6)
    eps = np.finfo(np.float64).eps
    rows = mc_log_loss_rows(d, P)
    np.testing.assert_array_equal(rows, -np.log(np.clip(P[np.arange(4000), y], eps, 1 - eps)))
    assert np.mean(rows) == mc_log_loss(d, P) == log_loss(y, P, labels=np.arange(6))
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


def _plan_arrays(plan):
    keep = ("rows", "vals", "resid", "corr")
    return {k: np.asarray(getattr(plan, k)) for k in keep if hasattr(plan, k)}


def _spec(measure, P, y, n_bins=15):
    return TruthfulReplicates(measure, n_bins)(MulticlassData(y, P.shape[1]), P)


@pytest.mark.parametrize("measure", ["truthful_conf_ce", "conf_ece", "classwise_lince"])
@pytest.mark.parametrize("ties", [False, True])
def test_lent_ids_give_the_plan_the_thresholds_give(measure, ties):
    rng = np.random.default_rng(7)
    n, k = 3000, 5
    P = _probabilities(rng, n, k, ties=ties)
    y = rng.integers(0, k, n)
    spec = _spec(measure, P, y)
    template = spec.template
    assert "_plan_parts" in template.__dict__
    lent = template._replicate_plan(P, y, None, index=np.arange(n))
    assert "_plan_parts" not in template.__dict__  # used once, then dropped
    found = template._replicate_plan(P, y, None, index=np.arange(n))  # from the thresholds
    a, b = _plan_arrays(lent), _plan_arrays(found)
    assert a.keys() == b.keys() and a
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    # the replicates of the report's spec equal a fresh template's (no lent ids)
    fresh = type(template)(**template.get_params())
    assert "_plan_parts" not in fresh.__dict__
    boots = []
    for tpl in (_spec(measure, P, y).template, fresh):
        boot = PoissonBootstrap(tpl, n_replicates=20, seed=3)
        boots.append(boot.update(boot.prepare(*spec.arrays)).compute())
    np.testing.assert_array_equal(boots[0], boots[1])


@pytest.mark.parametrize("measure", ["truthful_conf_ce", "classwise_lince"])
def test_lent_ids_are_ignored_for_another_array_or_other_rows(measure):
    rng = np.random.default_rng(11)
    n, k = 2000, 4
    P = _probabilities(rng, n, k, ties=True)
    y = rng.integers(0, k, n)
    # another array object with the same values: the ids are found again (the same ones)
    template = _spec(measure, P, y).template
    copy = P.copy()
    assert template._hinted(copy, None) is None
    # the ids were computed for global rows 0..n-1: other indices break ties otherwise
    template = _spec(measure, P, y).template
    assert template._hinted(P, np.arange(n) + 5) is None
    template = _spec(measure, P, y).template
    assert template._hinted(P, None) is not None


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
    template = _spec("conf_ece", P, y).template
    c = P[np.arange(1000), np.argmax(P, axis=1)]
    tv, tg = quantile_bin_thresholds(c, 15)
    want = TopLabelStatistics(labels=[0, 1, 2], n_bins=15, measure="conf_ece", thresholds=(tv, tg))
    assert template.get_params() == want.get_params()
    assert _spec("classwise_lince", P[:10], y[:10]) is None


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


def test_the_top_class_is_kept_per_prediction_and_not_pickled():
    import pickle

    rng = np.random.default_rng(5)
    P = _probabilities(rng, 500, 4, ties=True)
    y = rng.integers(0, 4, 500)
    d = MulticlassData(y, 4)
    r, c = d.top(P)
    np.testing.assert_array_equal(r, np.argmax(P, axis=1))
    np.testing.assert_array_equal(c, P.max(axis=1))
    assert d.top(P)[0] is r  # kept for this array
    assert d.top(P.copy())[0] is not r  # an equal array of its own is another prediction
    back = pickle.loads(pickle.dumps(d))
    assert back._top == {} and back.top(P)[0].tolist() == r.tolist()
    # a report pickled before the top classes were kept (no "_top" in its state) still works
    old = MulticlassData.__new__(MulticlassData)
    old.__setstate__({k: v for k, v in vars(d).items() if k != "_top"})
    np.testing.assert_array_equal(old.top(P)[0], r)
