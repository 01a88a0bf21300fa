"""SPEC 0, 2, 3 references (tests/reference/ce2_ref.py) against skcal's CE2, Platt and ensembles."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import ce2_ref as R

import skcal

SETTINGS = dict(
    max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _data(seed, n=None, k=None, nan=True):
    """Scores on the rectangle R (ends 0, 1, 1/4 included, infeasible points allowed) and
    k-snapshot labels with NaN-padded missing votes (>= 2 votes per row)."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(40, 150))
    k = k or int(rng.integers(2, 6))
    m = rng.uniform(size=n)
    s2 = rng.uniform(0, 0.25, size=n)
    m[rng.uniform(size=n) < 0.08] = 0.0
    m[rng.uniform(size=n) < 0.08] = 1.0
    s2[rng.uniform(size=n) < 0.08] = 0.0
    s2[rng.uniform(size=n) < 0.08] = 0.25
    f = np.clip(m + rng.normal(0, 0.2, size=n), 0, 1)
    Y = (rng.uniform(size=(n, k)) < f[:, None]).astype(float)
    if nan and k > 2:
        for r in range(n):
            drop = rng.integers(0, k - 1)  # keep at least 2 votes
            Y[r, rng.choice(k, size=drop, replace=False)] = np.nan
    return np.column_stack([m, s2]), Y, rng


def test_snapshot_targets():
    from skcal.votes import snapshot_targets

    _, Y, _ = _data(0, n=50, k=5)
    t1, t2 = R.snapshot_targets(Y)
    got = snapshot_targets(Y)
    np.testing.assert_allclose(got[0], t1, atol=1e-15)
    np.testing.assert_allclose(got[1], t2, atol=1e-15)
    np.testing.assert_array_equal(got[2], (~np.isnan(Y)).sum(1))
    # 2-snapshots: ((y1 + y2) / 2, y1 y2); boolean input must be numeric first
    Yb = np.array([[True, True], [True, False], [False, False]])
    t1, t2 = R.snapshot_targets(Yb.astype(float))
    assert t1.tolist() == [1.0, 0.5, 0.0] and t2.tolist() == [1.0, 0.0, 0.0]
    g1, g2, _ = snapshot_targets(Yb)
    assert g1.tolist() == [1.0, 0.5, 0.0] and g2.tolist() == [1.0, 0.0, 0.0]


def test_reference_design_is_chebyshev():
    S = np.array([[0.0, 0.0], [1.0, 0.25], [0.3, 0.1]])
    Phi = R.design(S, 2)
    x, y = 2 * S[:, 0] - 1, 8 * S[:, 1] - 1
    T = [lambda v: np.ones_like(v), lambda v: v, lambda v: 2 * v**2 - 1]
    expect = np.column_stack([T[i](x) * T[j](y) for i in range(3) for j in range(3)])
    np.testing.assert_allclose(Phi, expect, atol=1e-14)


@settings(**SETTINGS)
@given(
    seed=st.integers(0, 10**6),
    degree=st.integers(1, 4),
    alpha=st.sampled_from([1e-6, 1e-3, 0.1, 1.0]),
    weighted=st.booleans(),
)
def test_ce2_score_fixed_degree(seed, degree, alpha, weighted):
    S, Y, rng = _data(seed)
    w = rng.uniform(0.2, 3.0, size=len(S)) if weighted else None
    ce2, t1, t2, e1, e2 = R.ce2_hat(Y, S, degree, alpha, sample_weight=w)
    got = skcal.ce2_score(skcal.Snapshots(Y), S, degree=degree, alpha=alpha, sample_weight=w)
    assert got == pytest.approx(ce2, abs=1e-8)
    res = skcal.ce2_details(skcal.Snapshots(Y), S, degree=degree, alpha=alpha, sample_weight=w)
    assert res.degree == degree and res.alpha == alpha
    assert res.term1 == pytest.approx(t1, abs=1e-8) and res.term2 == pytest.approx(t2, abs=1e-8)
    np.testing.assert_allclose(res.eta1(S), e1, atol=1e-8)
    np.testing.assert_allclose(res.eta2(S), e2, atol=1e-8)
    S_new = np.column_stack([rng.uniform(size=10), rng.uniform(0, 0.25, size=10)])
    model = R.DenseRidge(degree, alpha).fit(S, np.column_stack(R.snapshot_targets(Y)), w)
    np.testing.assert_allclose(res.eta1(S_new), np.clip(model.predict(S_new)[:, 0], 0, 1), atol=1e-8)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), degree=st.integers(1, 4))
def test_ce2_score_total_basis(seed, degree):
    S, Y, _ = _data(seed)
    ce2 = R.ce2_hat(Y, S, degree, 1e-4, basis="total")[0]
    got = skcal.ce2_score(skcal.Snapshots(Y), S, degree=degree, alpha=1e-4, basis="total")
    assert got == pytest.approx(ce2, abs=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_ce2_dual_form_when_d_exceeds_n(seed):
    S, Y, _ = _data(seed, n=20, k=3)
    degree, alpha = 5, 1e-2  # d = 36 > n = 20
    t = np.column_stack(R.snapshot_targets(Y))
    primal = R.DenseRidge(degree, alpha).fit(S, t)
    np.testing.assert_allclose(
        R.design(S, degree) @ R.dual_ridge(S, t, degree, alpha), primal.predict(S), atol=1e-9
    )
    ce2 = R.ce2_hat(Y, S, degree, alpha)[0]
    assert skcal.ce2_score(skcal.Snapshots(Y), S, degree=degree, alpha=alpha) == pytest.approx(ce2, abs=1e-7)


@settings(**SETTINGS)
@given(
    seed=st.integers(0, 10**6),
    degree=st.integers(1, 4),
    alpha=st.sampled_from([1e-8, 1e-4, 0.1]),
    basis=st.sampled_from(["tensor", "total"]),
    weighted=st.booleans(),
)
def test_second_order_platt(seed, degree, alpha, basis, weighted):
    S, Y, rng = _data(seed)
    w = rng.uniform(0.2, 3.0, size=len(S)) if weighted else None
    S_new = np.vstack(
        [
            S[:5],
            [[0.0, 0.0], [1.0, 0.25], [0.5, 0.25], [0.02, 0.2]],
            np.column_stack([rng.uniform(size=8), rng.uniform(0, 0.25, size=8)]),
        ]
    )
    out, moments, raw = R.platt_transform(Y, S, S_new, degree, alpha, basis, sample_weight=w)
    cal = skcal.SecondOrderPlattCalibrator(degree=degree, alpha=alpha, basis=basis)
    cal.fit(S, skcal.Snapshots(Y), sample_weight=w)
    np.testing.assert_allclose(cal.transform(S_new), out, atol=1e-8)
    np.testing.assert_allclose(cal.predict(S_new), out, atol=1e-8)
    np.testing.assert_allclose(cal.predict_moments(S_new), moments, atol=1e-8)
    np.testing.assert_allclose(cal.predict_moments(S_new, project=False), raw, atol=1e-7)
    np.testing.assert_allclose(cal.eta1(S_new), moments[:, 0], atol=1e-8)
    np.testing.assert_allclose(cal.eta2(S_new), moments[:, 1], atol=1e-8)
    model = R.DenseRidge(degree, alpha, basis).fit(S, np.column_stack(R.snapshot_targets(Y)), w)
    assert cal.lam_ == pytest.approx(model.lam, rel=1e-10)
    # score: -(mean_w (t1 - eta1)^2 + mean_w (t2 - eta2)^2) with projected moments
    t1, t2 = R.snapshot_targets(Y)
    _, mom, _ = R.platt_transform(Y, S, S, degree, alpha, basis, sample_weight=w)
    ww = np.ones(len(S)) if w is None else w
    expect = -(np.sum(ww * (t1 - mom[:, 0]) ** 2) + np.sum(ww * (t2 - mom[:, 1]) ** 2)) / ww.sum()
    assert cal.score(S, skcal.Snapshots(Y), sample_weight=w) == pytest.approx(expect, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_first_order_and_one_dimensional_platt(seed):
    S, Y, rng = _data(seed)
    S_new = np.column_stack([rng.uniform(size=10), rng.uniform(0, 0.25, size=10)])
    out, moments, _ = R.platt_transform(Y, S, S_new, 3, 1e-4, order=1)
    # documented convention beyond the SPEC: order=1 outputs keep the margin 1 / (n + 2) from 0
    # and 1 (n fitted rows; Laplace's rule of succession), so log loss stays finite
    margin = 1.0 / (S.shape[0] + 2)
    out[:, 0] = np.clip(out[:, 0], margin, 1.0 - margin)
    cal = skcal.SecondOrderPlattCalibrator(degree=3, alpha=1e-4, order=1).fit(S, skcal.Snapshots(Y))
    assert cal.margin_ == margin
    np.testing.assert_allclose(cal.transform(S_new), out, atol=1e-9)
    np.testing.assert_allclose(cal.predict_moments(S_new), moments, atol=1e-9)
    assert np.all(out[:, 1] == 0)
    # 1-D scores (m alone): basis T_i(2m - 1)
    out1, mom1, _ = R.platt_transform(Y, S[:, :1], S_new[:, :1], 5, 1e-4)
    cal1 = skcal.SecondOrderPlattCalibrator(degree=5, alpha=1e-4).fit(S[:, :1], skcal.Snapshots(Y))
    np.testing.assert_allclose(cal1.transform(S_new[:, :1]), out1, atol=1e-9)
    np.testing.assert_allclose(cal1.predict_moments(S_new[:, :1]), mom1, atol=1e-9)


# ---------------------------------------------------------------- SPEC 3 ensembles
def _members(seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    members = [LogisticRegression(C=c).fit(X, y) for c in (0.01, 1.0, 100.0)]
    members.append(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    members.append(DecisionTreeClassifier(random_state=0).fit(X, 1 - y))  # disagrees: 0/1 probas
    return X, members


@pytest.mark.parametrize("n_members", [2, 3, 5])
def test_ensemble_moments(n_members):
    X, members = _members(n_members)
    members = members[-n_members:]  # include the anti-correlated tree so clipping happens
    Xt = np.random.default_rng(1).normal(size=(40, 3))
    probs = np.column_stack([mem.predict_proba(Xt)[:, list(mem.classes_).index(1)] for mem in members])
    ref = R.ensemble_moments(probs)
    got = skcal.EnsembleMoments(members).fit(X).transform(Xt)
    np.testing.assert_allclose(got, ref, atol=1e-12)
    raw_var = probs.var(axis=1, ddof=1)
    m = probs.mean(axis=1)
    if n_members == 2:
        assert np.any(raw_var > m * (1 - m))  # the clip was exercised


def test_ensemble_moments_bagging():
    from sklearn.ensemble import BaggingClassifier
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    bag = BaggingClassifier(LogisticRegression(), n_estimators=6, random_state=0).fit(X, y)
    probs = np.column_stack([est.predict_proba(X)[:, 1] for est in bag.estimators_])
    np.testing.assert_allclose(
        skcal.EnsembleMoments(bag).fit_transform(X), R.ensemble_moments(probs), atol=1e-12
    )


# ---------------------------------------------------------------- degree rule and selection
@pytest.mark.parametrize("basis", ["tensor", "total", "1d"])
@pytest.mark.parametrize("spf", [100, 10, None])
def test_auto_degree(basis, spf):
    minimum = skcal.chebyshev.n_basis_functions(1, basis)  # a sample fitting degree 1 at least
    for n in [1, 2, 3, 4, 10, 100, 1000, 20000, 10**6]:
        for h in [2**-10, 1 / 64, 1 / 16, 1 / 4, 1.0]:
            if n < minimum:  # no degree fits: refused (the reference would say 1)
                with pytest.raises(ValueError, match=f"at least {minimum}"):
                    skcal.chebyshev.auto_degree(n, h, basis=basis, samples_per_feature=spf)
                continue
            assert skcal.chebyshev.auto_degree(n, h, basis=basis, samples_per_feature=spf) == R.auto_degree(
                n, h, basis, spf
            )
    # the paper's caps (SPEC 2)
    assert R.auto_degree(10**9, 1 / 16, basis, None) == 44 and R.auto_degree(10**9, 1 / 64, basis, None) == 88


def test_ce2_score_auto_degree():
    S, Y, _ = _data(2, n=1600, k=2)
    for h in (1 / 4, 1 / 64):
        deg = R.auto_degree(len(S), h)
        res = skcal.ce2_details(skcal.Snapshots(Y), S, bandwidth=h)
        assert res.degree == deg
        assert res.ce2 == pytest.approx(R.ce2_hat(Y, S, deg, 1e-6)[0], abs=1e-8)


def test_ce2_cv_selection_with_explicit_folds():
    """The CV criterion: mean over folds of the held-out MSE of both regressions. skcal uses the
    raw (unclipped) polynomials here (the SPEC only says 'squared error of both moment
    regressions'); the clipped variant differs in the 3rd digit on this sample."""
    from sklearn.model_selection import KFold

    S, Y, _ = _data(5, n=400, k=3)
    degrees, alphas = [1, 2, 4], [1e-4, 1e-1]
    table, best = R.cv_select(Y, S, degrees, alphas, list(KFold(3).split(S)))
    res = skcal.ce2_details(skcal.Snapshots(Y), S, degree=degrees, alphas=alphas, cv=KFold(3))
    got = {
        (int(d), float(a)): v
        for d, a, v in zip(
            res.cv_results["degree"], res.cv_results["alpha"], res.cv_results["mean_test_mse"], strict=False
        )
    }
    for d, a, v in table:
        assert got[(d, a)] == pytest.approx(v, abs=1e-9)
    assert (res.degree, res.alpha) == best[:2]
    assert res.ce2 == pytest.approx(R.ce2_hat(Y, S, best[0], best[1])[0], abs=1e-8)  # refit on all data


@pytest.mark.parametrize("seed", range(3))
def test_ce1_score_fixed_degree(seed):
    S, Y, rng = _data(seed, k=2, nan=False)
    y = Y[:, 0].astype(int)
    m = S[:, 0]
    model = R.DenseRidge(4, 1e-5).fit(m[:, None], y.astype(float))
    ref = np.mean(np.abs(np.clip(model.predict(m[:, None])[:, 0], 0, 1) - m))
    assert skcal.ce1_score(y, m, degree=4, alpha=1e-5) == pytest.approx(ref, abs=1e-9)
    # with snapshots, t1 is the target
    t1, _ = R.snapshot_targets(Y)
    model = R.DenseRidge(4, 1e-5).fit(m[:, None], t1)
    ref = np.mean(np.abs(np.clip(model.predict(m[:, None])[:, 0], 0, 1) - m))
    assert skcal.ce1_score(skcal.Snapshots(Y), m, degree=4, alpha=1e-5) == pytest.approx(ref, abs=1e-9)


# ---------------------------------------------------------------- SPEC 2 baselines (fixed c)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("c", [0.25, 1.0, 4.0])
@pytest.mark.parametrize("one_d", [False, True])
def test_baseline_ce2_fixed_c(seed, c, one_d):
    from skcal.ce2_baselines import baseline_ce2

    S, Y, rng = _data(seed, n=120)
    S = np.column_stack([rng.uniform(size=len(S)), rng.uniform(0, 0.25, size=len(S))])  # off cell edges
    if one_d:
        S = S[:, :1]
    t1, t2 = R.snapshot_targets(Y)
    h = 1 / 16
    ref, K, e1, e2 = R.bucketing_ce2(S, t1, t2, h, c)
    got = baseline_ce2(S, t1, t2, method="bucketing", bandwidth=h, c=c)
    assert got["n_cells"] == K
    np.testing.assert_allclose(got["eta1"], e1, atol=1e-12)
    np.testing.assert_allclose(got["eta2"], e2, atol=1e-12)
    assert got["ce2"] == pytest.approx(ref, abs=1e-12)
    ref, b, e1, e2 = R.nadaraya_watson_ce2(S, t1, t2, h, c)
    got = baseline_ce2(S, t1, t2, method="nadaraya_watson", bandwidth=h, c=c)
    assert got["kernel_bandwidth"] == pytest.approx(b, rel=1e-12)
    np.testing.assert_allclose(got["eta1"], e1, atol=1e-10)
    np.testing.assert_allclose(got["eta2"], e2, atol=1e-10)
    assert got["ce2"] == pytest.approx(ref, abs=1e-10)


def test_bucketing_points_on_cell_edges():
    """Scores exactly on inner cell edges (0.5 of K = 2) and on the ends: with the reference's
    left-closed cells (last one closed) skcal agrees."""
    from skcal.ce2_baselines import baseline_ce2

    S = np.array([[0.5, 0.125], [0.4, 0.1], [0.6, 0.2], [0.5, 0.0], [1.0, 0.25], [0.0, 0.0]])
    t1 = np.array([1, 0, 0.5, 1, 0, 1.0])
    t2 = t1 * 0.5
    ref, K, e1, e2 = R.bucketing_ce2(S, t1, t2, 0.25, 0.25)
    got = baseline_ce2(S, t1, t2, method="bucketing", bandwidth=0.25, c=0.25)
    assert K == got["n_cells"] == 2
    np.testing.assert_allclose(got["eta1"], e1, atol=1e-15)
    assert got["ce2"] == pytest.approx(ref, abs=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_weighted_dual_min_norm_and_partial_fit(seed):
    S, Y, rng = _data(seed, n=20, k=3)
    w = rng.uniform(0.2, 3, size=20)
    # d = 36 > n = 20 with weights: the dual form must give the weighted primal minimiser
    assert skcal.ce2_score(skcal.Snapshots(Y), S, degree=5, alpha=1e-2, sample_weight=w) == pytest.approx(
        R.ce2_hat(Y, S, 5, 1e-2, sample_weight=w)[0], abs=1e-9
    )
    # alpha = 0 with d > n: the minimum-norm least-squares fit (pseudo-inverse)
    t = np.column_stack(R.snapshot_targets(Y))
    beta = np.linalg.pinv(R.design(S, 5)) @ t
    S_new = np.column_stack([rng.uniform(size=5), rng.uniform(0, 0.25, size=5)])
    cal = skcal.SecondOrderPlattCalibrator(degree=5, alpha=0).fit(S, skcal.Snapshots(Y))
    np.testing.assert_allclose(
        cal.predict_moments(S_new, project=False), R.design(S_new, 5) @ beta, atol=1e-6
    )
    # partial_fit in two batches = one fit on the concatenation (reference: one dense fit)
    S2, Y2, _ = _data(seed + 50, n=60, k=3)
    cal = skcal.SecondOrderPlattCalibrator(degree=3, alpha=1e-4)
    cal.partial_fit(S2[:30], Y2[:30]).partial_fit(S2[30:], Y2[30:])
    np.testing.assert_allclose(cal.transform(S_new), R.platt_transform(Y2, S2, S_new, 3, 1e-4)[0], atol=1e-10)


def test_boolean_snapshots_are_numeric():
    """SPEC 0: boolean votes are converted to numbers before any arithmetic."""
    S, Y, _ = _data(3, n=100, k=3, nan=False)
    Yb = Y.astype(bool)
    assert skcal.ce2_score(skcal.Snapshots(Yb), S, degree=2, alpha=1e-4) == pytest.approx(
        R.ce2_hat(Y, S, 2, 1e-4)[0], abs=1e-10
    )
    cal = skcal.SecondOrderPlattCalibrator(degree=2, alpha=1e-4).fit(S, skcal.Snapshots(Yb))
    np.testing.assert_allclose(cal.transform(S), R.platt_transform(Y, S, S, 2, 1e-4)[0], atol=1e-10)


def test_ensemble_member_without_the_positive_class():
    """A member that never saw the positive class contributes probability 0 (docstring)."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    mem = [
        DecisionTreeClassifier(max_depth=1).fit(X, y),
        DecisionTreeClassifier().fit(X, np.zeros(50, int)),
        DecisionTreeClassifier(max_depth=2).fit(X, y),
    ]
    probs = np.column_stack([mem[0].predict_proba(X)[:, 1], np.zeros(50), mem[2].predict_proba(X)[:, 1]])
    got = skcal.EnsembleMoments(mem, pos_label=1).fit_transform(X)
    np.testing.assert_allclose(got, R.ensemble_moments(probs), atol=1e-12)
