"""SPEC 5 references (tests/reference/truthful_ref.py) against skcal's truthful errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import truthful_ref as R

import skcal

SETTINGS = dict(
    max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
TOL = dict(abs=1e-12, rel=1e-10)


def _multiclass(seed, weighted=False):
    """Small (n, k) probability rows with ties (equal rows, tied top classes, one-hot rows,
    probabilities exactly 0 and 1, confidences on uniform bin edges) and integer labels."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    k = int(rng.integers(2, 5))
    P = rng.dirichlet(np.ones(k), size=n)
    kind = rng.integers(0, 3)
    if kind == 1:  # coarse values: many ties, exact edges like 0.5, 0.25
        P = rng.integers(0, 4, size=(n, k)).astype(float) + 1e-300
        P = np.round(P / P.sum(1, keepdims=True) * 4) / 4
        bad = np.abs(P.sum(1) - 1) > 1e-9
        P[bad] = np.eye(k)[0]
    elif kind == 2:
        P[rng.uniform(size=n) < 0.3] = np.full(k, 1.0 / k)  # every class tied
    one_hot = rng.uniform(size=n) < 0.15
    P[one_hot] = np.eye(k)[rng.integers(0, k, size=one_hot.sum())]
    if n > 3:
        P[1] = P[0]  # duplicated row
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    return y, P, w


BIN_CASES = st.tuples(
    st.integers(0, 10**6),
    st.sampled_from(["uniform", "quantile"]),
    st.sampled_from([1, 2, 3, 5, 7, 40]),
    st.booleans(),
)


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_assign_bins(case):
    seed, strategy, n_bins, _ = case
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    v = rng.choice([rng.uniform(), 0.0, 1.0, 0.5, 0.25, 2 / 3], size=n) if seed % 2 else rng.uniform(size=n)
    v[rng.uniform(size=n) < 0.2] = 1.0
    np.testing.assert_array_equal(
        skcal.assign_bins(v, n_bins=n_bins, strategy=strategy), R.bins(v, n_bins, strategy)
    )
    V = np.column_stack([v, rng.permutation(v)])  # 2-D: each column on its own
    got = skcal.assign_bins(V, n_bins=n_bins, strategy=strategy)
    for col in range(2):
        np.testing.assert_array_equal(got[:, col], R.bins(V[:, col], n_bins, strategy))


def test_assign_bins_docstring_examples():
    assert R.uniform_bins([0.0, 0.2, 0.5, 0.51, 1.0], 2).tolist() == [0, 0, 0, 1, 1]
    assert R.quantile_bins([0.9, 0.1, 0.5, 0.5, 0.3], 2).tolist() == [1, 0, 0, 1, 0]


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_lince_score_1d(case):
    seed, strategy, n_bins, weighted = case
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    u = np.round(rng.uniform(size=n), 1 + seed % 2)
    phi = rng.integers(0, 2, size=n).astype(float)
    w = rng.uniform(0.1, 2, size=n) if weighted else None
    ref = R.lince(u, phi, R.bins(u, n_bins, strategy), w)
    got = skcal.lince_score(u, phi, n_bins=n_bins, strategy=strategy, sample_weight=w)
    assert got == pytest.approx(ref, **TOL)


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_lince_score_vector_with_bin_on(case):
    seed, strategy, n_bins, weighted = case
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    u = rng.uniform(size=(n, 3))
    phi = rng.normal(size=(n, 3))
    b = u[:, 0]
    w = rng.uniform(0.1, 2, size=n) if weighted else None
    ref = R.lince(u, phi, R.bins(b, n_bins, strategy), w)
    got = skcal.lince_score(u, phi, n_bins=n_bins, strategy=strategy, bin_on=b, sample_weight=w)
    assert got == pytest.approx(ref, **TOL)


def test_lince_score_callable_bins():
    rng = np.random.default_rng(0)
    u = rng.uniform(size=20)
    phi = rng.integers(0, 2, size=20)
    rule = lambda v, nb: (np.asarray(v) > 0.5).astype(int) * 7  # noqa: E731  ids need not be < n_bins
    ids = rule(u, 3)
    assert skcal.lince_score(u, phi, n_bins=3, strategy=rule) == pytest.approx(R.lince(u, phi, ids), **TOL)


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_classwise_lince(case):
    seed, strategy, n_bins, weighted = case
    y, P, w = _multiclass(seed, weighted)
    ref = R.classwise_lince(y, P, n_bins, strategy, w)
    got = skcal.classwise_lince(
        y, P, n_bins=n_bins, strategy=strategy, sample_weight=w, labels=list(range(P.shape[1]))
    )
    assert got == pytest.approx(ref, **TOL)


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_confidence_errors(case):
    seed, strategy, n_bins, weighted = case
    y, P, w = _multiclass(seed, weighted)
    labels = list(range(P.shape[1]))
    kw = dict(n_bins=n_bins, strategy=strategy, sample_weight=w, labels=labels)
    assert skcal.truthful_conf_ce(y, P, **kw) == pytest.approx(
        R.conf_ce_corr(y, P, n_bins, strategy, w), **TOL
    )
    assert skcal.conf_ce(y, P, **kw) == pytest.approx(R.conf_ce(y, P, n_bins, strategy, w), **TOL)
    assert skcal.conf_ece(y, P, **kw) == pytest.approx(R.conf_ece(y, P, n_bins, strategy, w), **TOL)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), weighted=st.booleans())
def test_proper_losses(seed, weighted):
    y, P, w = _multiclass(seed, weighted)
    labels = list(range(P.shape[1]))
    assert skcal.brier_over_k(y, P, sample_weight=w, labels=labels) == pytest.approx(
        R.brier_over_k(y, P, w), **TOL
    )
    assert skcal.confidence_proper_loss(y, P, sample_weight=w, labels=labels) == pytest.approx(
        R.confidence_proper_loss(y, P, w), **TOL
    )


def test_unit_weights_equal_unweighted_spec_formula():
    y, P, _ = _multiclass(11)
    ones = np.ones(len(y))
    for strategy in ("uniform", "quantile"):
        a = R.conf_ce_corr(y, P, 5, strategy, ones)
        _, c, z = R.top_label(y, P)
        n = len(y)
        ids = R.bins(c, 5, strategy)
        spec = (
            sum(np.sum(c[ids == b] - z[ids == b]) ** 2 for b in set(ids.tolist())) / n**2 + (1 - z.mean()) / n
        )
        assert a == pytest.approx(spec, **TOL)
        assert skcal.truthful_conf_ce(
            y, P, n_bins=5, strategy=strategy, labels=list(range(P.shape[1]))
        ) == pytest.approx(spec, **TOL)


def test_binary_1d_proba_and_string_labels():
    rng = np.random.default_rng(5)
    p1 = np.round(rng.uniform(size=25), 1)
    P = np.column_stack([1 - p1, p1])
    y = rng.integers(0, 2, size=25)
    names = np.array(["neg", "pos"])[y]
    for strategy in ("uniform", "quantile"):
        ref = R.conf_ce_corr(y, P, 4, strategy)
        assert skcal.truthful_conf_ce(names, p1, n_bins=4, strategy=strategy) == pytest.approx(ref, **TOL)
        assert skcal.classwise_lince(names, P, n_bins=4, strategy=strategy) == pytest.approx(
            R.classwise_lince(y, P, 4, strategy), **TOL
        )


def test_docstring_examples_with_reference():
    Pd = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    assert R.conf_ce_corr([0, 1, 2, 1], Pd, 2, "quantile") == pytest.approx(0.07875)
    assert R.classwise_lince([0, 1, 2, 1], Pd, 2, "quantile") == pytest.approx(0.036667, abs=1e-6)
    assert R.lince(
        [0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], R.quantile_bins([0.2, 0.4, 0.6, 0.8], 2)
    ) == pytest.approx(0.02)


# ---------------------------------------------------------------- SPEC 5 expectations
def _qp(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 5)), int(rng.integers(2, 4))
    Q = rng.dirichlet(np.ones(k), size=n)
    P = rng.dirichlet(np.ones(k), size=n)
    return Q, P


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_truthful_decomposition_against_enumeration(seed, strategy):
    Q, P = _qp(seed)
    n = len(Q)
    nb = 2
    e_corr = R.expectation_by_enumeration(lambda y, P_: R.conf_ce_corr(y, P_, nb, strategy), Q, P)
    out = skcal.truthful_decomposition(Q, P, measure="truthful_conf_ce", n_bins=nb, strategy=strategy)
    assert out["expected_cal"] == pytest.approx(e_corr, abs=1e-12)
    e_loss = R.expectation_by_enumeration(lambda y, P_: R.confidence_proper_loss(y, P_), Q, P)
    assert out["expected_proper_loss"] == pytest.approx(e_loss, abs=1e-12)
    # SPEC 5: E = bias + (1/n^2) sum_i (1 - s_i^2), s_i the true probability of the reported top class
    r, c, _ = R.top_label(np.zeros(n, dtype=int), P)
    s = Q[np.arange(n), r]
    ids = R.bins(c, nb, strategy)
    bias = sum(np.sum((c - s)[ids == b]) ** 2 for b in set(ids.tolist())) / n**2
    assert e_corr == pytest.approx(bias + np.sum(1 - s**2) / n**2, abs=1e-12)
    e_cw = R.expectation_by_enumeration(lambda y, P_: R.classwise_lince(y, P_, nb, strategy), Q, P)
    out = skcal.truthful_decomposition(Q, P, measure="classwise_lince", n_bins=nb, strategy=strategy)
    assert out["expected_cal"] == pytest.approx(e_cw, abs=1e-12)
    e_brier = R.expectation_by_enumeration(lambda y, P_: R.brier_over_k(y, P_), Q, P)
    assert out["expected_proper_loss"] == pytest.approx(e_brier, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_honest_reports_minimise_expected_truthful_errors(seed):
    Q, _ = _qp(seed)
    rng = np.random.default_rng(seed + 100)
    for strategy in ("uniform", "quantile"):
        honest_corr = R.expectation_by_enumeration(
            lambda y, P_, s=strategy: R.conf_ce_corr(y, P_, 2, s), Q, Q
        )
        honest_cw = R.expectation_by_enumeration(
            lambda y, P_, s=strategy: R.classwise_lince(y, P_, 2, s), Q, Q
        )
        for _ in range(4):
            P = rng.dirichlet(np.ones(Q.shape[1]), size=len(Q))
            assert (
                honest_corr
                <= R.expectation_by_enumeration(lambda y, P_, s=strategy: R.conf_ce_corr(y, P_, 2, s), Q, P)
                + 1e-12
            )
            assert (
                honest_cw
                <= R.expectation_by_enumeration(
                    lambda y, P_, s=strategy: R.classwise_lince(y, P_, 2, s), Q, P
                )
                + 1e-12
            )


def test_uncorrected_conf_ce_is_not_truthful():
    """SPEC 5: a flatter report moving the top label to a class far from 1/2 lowers ConfCE."""
    Q = np.array([[0.5, 0.45, 0.05]])
    flat = np.array([[0.33, 0.33, 0.34]])
    labels = [0, 1, 2]
    honest = R.expectation_by_enumeration(lambda y, P_: R.conf_ce(y, P_, 1, "uniform"), Q, Q)
    cheat = R.expectation_by_enumeration(lambda y, P_: R.conf_ce(y, P_, 1, "uniform"), Q, flat)
    assert cheat < honest
    skc = lambda P_: sum(Q[0, y] * skcal.conf_ce([y], P_, n_bins=1, labels=labels) for y in range(3))  # noqa: E731
    assert skc(flat) == pytest.approx(cheat, abs=1e-12) and skc(Q) == pytest.approx(honest, abs=1e-12)
    corr = lambda P_: R.expectation_by_enumeration(lambda y, P2: R.conf_ce_corr(y, P2, 1, "uniform"), Q, P_)  # noqa: E731
    assert corr(Q) < corr(flat)


@settings(**SETTINGS)
@given(case=BIN_CASES)
def test_classwise_ece(case):
    seed, strategy, n_bins, weighted = case
    y, P, w = _multiclass(seed, weighted)
    ww = np.ones(len(y)) if w is None else w
    ref = 0.0
    for r in range(P.shape[1]):
        ids = R.bins(P[:, r], n_bins, strategy)
        res = ww * (P[:, r] - (y == r))
        ref += sum(abs(res[ids == b].sum()) for b in set(ids.tolist())) / ww.sum()
    ref /= P.shape[1]
    got = skcal.classwise_ece(
        y, P, n_bins=n_bins, strategy=strategy, sample_weight=w, labels=list(range(P.shape[1]))
    )
    assert got == pytest.approx(ref, **TOL)


def test_labels_fix_the_column_order():
    """`labels=` gives the class of each column (scikit-learn's convention)."""
    y, P, w = _multiclass(21, weighted=True)
    k = P.shape[1]
    names = np.array([f"c{r}" for r in range(k)])
    perm = np.random.default_rng(0).permutation(k)
    Pp = P[:, perm]  # column j now holds class perm[j]
    labels = names[perm]
    for strategy in ("uniform", "quantile"):
        assert skcal.classwise_lince(
            names[y], Pp, n_bins=3, strategy=strategy, sample_weight=w, labels=labels
        ) == pytest.approx(R.classwise_lince(y, P, 3, strategy, w), **TOL)
    assert skcal.brier_over_k(names[y], Pp, sample_weight=w, labels=labels) == pytest.approx(
        R.brier_over_k(y, P, w), **TOL
    )
    # the top-label measures depend on ties through the column order, so compare on the permuted problem
    inv = np.argsort(perm)
    yp = inv[y]  # label index in the permuted column order
    assert skcal.truthful_conf_ce(names[y], Pp, n_bins=3, sample_weight=w, labels=labels) == pytest.approx(
        R.conf_ce_corr(yp, Pp, 3, "quantile", w), **TOL
    )
