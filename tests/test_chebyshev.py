import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial.chebyshev import chebval, chebval2d

from skcal.chebyshev import (
    ChebyshevMoments,
    ChebyshevRidge,
    auto_degree,
    basis_powers,
    chebyshev_design,
    chebyshev_evaluate,
    degree_cap,
    degree_schedule,
    map_scores,
    n_basis_functions,
    replicate_moments,
    ridge_solve,
    theta,
)

BASES = ["tensor", "total", "1d"]


def _scores(n, seed=0, cols=2):
    rng = np.random.default_rng(seed)
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    return S[:, :cols].copy()


def _data(n, seed=0, cols=2, r=2):
    rng = np.random.default_rng(seed + 1000)
    return _scores(n, seed, cols), rng.uniform(0, 1, (n, r))


# ------------------------------------------------------------------------------- degree rule
def test_theta_and_caps_reproduce_the_paper():
    h = 1 / 16
    assert theta(h) == pytest.approx(h * math.pi + math.sqrt(h**2 * math.pi**2 + 1))
    assert degree_cap(1 / 16) == 44
    assert degree_cap(1 / 64) == 88
    assert degree_cap(1 / 4) == 22
    # never above 88 for the 2-D bases; the 1-D basis follows 11 / sqrt(h)
    assert degree_cap(2**-10) == 88
    assert degree_cap(2**-10, basis="1d") == 352


def test_auto_degree_is_the_spec_rule_when_no_cap_binds():
    for n, h in [(50, 0.5), (1000, 0.25), (10**5, 1.0)]:
        rule = math.ceil(2 * math.log(n) / math.log(theta(h)))
        got = auto_degree(n, h, basis="1d", samples_per_feature=None)
        assert got == min(rule, degree_cap(h, "1d"))
    # the spec's capped rule without a guard: the cap at every practical n
    assert auto_degree(10**6, 1 / 64, samples_per_feature=None) == 88
    assert auto_degree(10**6, 1 / 16, samples_per_feature=None) == 44


def test_auto_degree_sample_size_guard():
    # the default guard: the basis has at most c n^(1/3) features (c per basis, AUTO_FEATURES)
    from skcal.chebyshev import AUTO_FEATURES

    for basis in ("tensor", "total", "1d"):
        for n in [10, 100, 1000, 20000, 10**6, 10**8]:
            deg = auto_degree(n, 1 / 64, basis)
            limit = AUTO_FEATURES[basis] * np.cbrt(n)
            assert deg == 1 or n_basis_functions(deg, basis) <= limit
            assert deg == degree_cap(1 / 64, basis) or n_basis_functions(deg + 1, basis) > limit
    assert [auto_degree(n, 1 / 64) for n in (10**4, 10**5, 10**6)] == [4, 6, 10]
    assert auto_degree(10**6, 1 / 64, basis="1d") == 34
    # the linear guard of skcal 0.1 (n / s features) on request
    assert auto_degree(792100, 1 / 64, samples_per_feature=100) == 88
    assert auto_degree(792099, 1 / 64, samples_per_feature=100) == 87
    assert auto_degree(20000, 1 / 64, samples_per_feature=10) == 43
    assert auto_degree(1000, 1 / 64, samples_per_feature=None) == 88


def test_degree_schedule():
    assert degree_schedule(44) == [44, 22, 11, 5]
    assert degree_schedule(88) == [88, 44, 22, 11, 5]
    assert degree_schedule(3) == [3]
    assert degree_schedule(8) == [8, 4]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: theta(0), "bandwidth"),
        (lambda: theta(-1.0), "bandwidth"),
        (lambda: theta(float("nan")), "bandwidth"),
        (lambda: degree_cap(0.1, basis="cubic"), "basis"),
        (lambda: auto_degree(0, 0.1), "n_samples"),
        (lambda: auto_degree(0.5, 0.1), "n_samples"),
        (lambda: auto_degree(True, 0.1), "n_samples"),
        (lambda: auto_degree(10, 0.1, samples_per_feature=0), "samples_per_feature"),
        (lambda: degree_schedule(0), "cap"),
        (lambda: basis_powers(-1), "degree"),
        (lambda: basis_powers(2.0), "degree"),
        (lambda: n_basis_functions(3, "spline"), "basis"),
        (lambda: map_scores(np.zeros((3, 3))), "shape"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------- features
@pytest.mark.parametrize("basis", BASES)
def test_design_matches_numpy_chebval(basis):
    S = _scores(7, cols=1 if basis == "1d" else 2)
    L = 4
    Phi = chebyshev_design(S, L, basis)
    P = basis_powers(L, basis)
    assert Phi.shape == (7, n_basis_functions(L, basis))
    x = 2 * S[:, 0] - 1
    for k, (i, j) in enumerate(P):
        ci = np.zeros(i + 1)
        ci[i] = 1
        expected = chebval(x, ci)
        if basis != "1d":
            cj = np.zeros(j + 1)
            cj[j] = 1
            expected = expected * chebval(8 * S[:, 1] - 1, cj)
        np.testing.assert_allclose(Phi[:, k], expected, rtol=1e-12, atol=1e-12)


def test_total_basis_is_a_subset_of_tensor():
    T = {tuple(p) for p in basis_powers(6, "tensor")}
    P = basis_powers(6, "total")
    assert {tuple(p) for p in P} <= T
    assert (P.sum(axis=1) <= 6).all()
    assert len(P) == n_basis_functions(6, "total") == 28


# ------------------------------------------------------------------------------- statistics
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("degree", [0, 1, 5, 12])
@pytest.mark.parametrize("weighted", [False, True])
def test_sufficient_statistics_gram_equals_explicit(basis, degree, weighted):
    S, T = _data(700, seed=degree, cols=1 if basis == "1d" else 2)
    w = np.random.default_rng(3).uniform(0.1, 3, 700) if weighted else None
    st = ChebyshevMoments.from_data(S, T, degree, w, chunk_size=97)
    Phi = chebyshev_design(S, degree, basis)
    W = np.ones(700) if w is None else w
    G0 = Phi.T @ (Phi * W[:, None])
    G = st.gram(basis)
    assert np.abs(G - G0).max() <= 1e-10 * np.abs(G0).max()
    b0 = Phi.T @ (T * W[:, None])
    assert np.abs(st.cross(basis) - b0).max() <= 1e-10 * np.abs(b0).max()
    assert st.gram_trace(basis) == pytest.approx(np.trace(G0), rel=1e-10)
    np.testing.assert_allclose(st.tt, (W[:, None] * T**2).sum(axis=0), rtol=1e-12)
    assert st.sum_w == pytest.approx(W.sum())
    assert st.n_samples == 700


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 60),
    degree=st.integers(0, 7),
    seed=st.integers(0, 2**16),
    basis=st.sampled_from(["tensor", "total"]),
)
def test_gram_property(n, degree, seed, basis):
    S, T = _data(n, seed=seed)
    # include the corners of the score box
    S[0] = [0.0, 0.0]
    if n > 1:
        S[-1] = [1.0, 0.25]
    st_ = ChebyshevMoments.from_data(S, T, degree)
    Phi = chebyshev_design(S, degree, basis)
    G0 = Phi.T @ Phi
    assert np.abs(st_.gram(basis) - G0).max() <= 1e-10 * max(np.abs(G0).max(), 1.0)


def test_statistics_add_subtract_and_restrict():
    S, T = _data(900)
    full = ChebyshevMoments.from_data(S, T, 9)
    a = ChebyshevMoments.from_data(S[:400], T[:400], 9)
    b = ChebyshevMoments.from_data(S[400:], T[400:], 9)
    s = a + b
    np.testing.assert_allclose(s.M, full.M, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(s.AtB, full.AtB, rtol=1e-12, atol=1e-9)
    d = full - a
    np.testing.assert_allclose(d.gram("tensor"), b.gram("tensor"), rtol=1e-9, atol=1e-8)
    assert d.n_samples == 500
    low = ChebyshevMoments.from_data(S, T, 4)
    r = full.restrict(4)
    np.testing.assert_allclose(r.gram("total"), low.gram("total"), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(r.cross("tensor"), low.cross("tensor"), rtol=1e-12, atol=1e-9)
    # gram(degree=...) of the full statistics equals the restricted gram
    np.testing.assert_allclose(full.gram("tensor", degree=4), low.gram("tensor"), rtol=1e-12, atol=1e-9)
    # the originals are untouched by + and -
    np.testing.assert_allclose(a.M, ChebyshevMoments.from_data(S[:400], T[:400], 9).M)


def test_chunk_size_does_not_change_statistics():
    S, T = _data(1000)
    ref = ChebyshevMoments.from_data(S, T, 6, chunk_size=1000)
    for cs in [1, 7, 333]:
        other = ChebyshevMoments.from_data(S, T, 6, chunk_size=cs)
        np.testing.assert_allclose(other.M, ref.M, rtol=1e-11, atol=1e-10)
        np.testing.assert_allclose(other.AtB, ref.AtB, rtol=1e-11, atol=1e-10)


def test_sse_from_statistics_equals_explicit_residuals():
    S, T = _data(300)
    st_ = ChebyshevMoments.from_data(S, T, 3)
    beta = np.random.default_rng(1).normal(size=(16, 2))
    Phi = chebyshev_design(S, 3)
    np.testing.assert_allclose(st_.sse(beta), ((T - Phi @ beta) ** 2).sum(axis=0), rtol=1e-9)


def test_statistics_bad_input():
    S, T = _data(10)
    with pytest.raises(ValueError, match="n_dims"):
        ChebyshevMoments(3, n_dims=3)
    with pytest.raises(ValueError, match="n_targets"):
        ChebyshevMoments(3, n_targets=0)
    st_ = ChebyshevMoments(3, 2, 2)
    with pytest.raises(ValueError, match="scores must have shape"):
        st_.update(S[:, :1], T)
    with pytest.raises(ValueError, match="targets must have shape"):
        st_.update(S, T[:5])
    with pytest.raises(ValueError, match="chunk_size"):
        st_.update(S, T, chunk_size=0)
    with pytest.raises(ValueError, match="different shapes"):
        st_ + ChebyshevMoments(4, 2, 2)
    with pytest.raises(ValueError, match="exceeds"):
        st_.restrict(5)
    with pytest.raises(ValueError, match="exceeds"):
        st_.gram("tensor", degree=5)


# ------------------------------------------------------------------------------- ridge
@pytest.mark.parametrize("basis", ["tensor", "total"])
def test_polynomial_target_recovered_exactly(basis):
    rng = np.random.default_rng(5)
    S = _scores(400, seed=5)
    L = 4
    C = np.zeros((L + 1, L + 1))
    for i, j in basis_powers(L, basis):
        C[i, j] = rng.normal()
    x, y = map_scores(S)
    t = chebval2d(x, y, C)
    for fit_degree in [L, L + 3]:
        model = ChebyshevRidge(degree=fit_degree, alpha=0.0, basis=basis).fit(S, t)
        grid = model.coef_grid()[0]
        np.testing.assert_allclose(grid[: L + 1, : L + 1], C, atol=1e-9)
        assert np.abs(grid[L + 1 :]).max(initial=0) < 1e-9
        np.testing.assert_allclose(model.predict(S)[:, 0], t, atol=1e-10)


def test_1d_polynomial_target_recovered_exactly():
    S = _scores(100, cols=1)
    c = np.array([0.3, -0.2, 0.5, 0.1])
    t = chebval(2 * S[:, 0] - 1, c)
    model = ChebyshevRidge(degree=3, alpha=0.0).fit(S, t)
    assert model.basis_ == "1d"
    np.testing.assert_allclose(model.coef_[:, 0], c, atol=1e-11)


@pytest.mark.parametrize("basis", ["tensor", "total"])
@pytest.mark.parametrize("n", [40, 500])
def test_primal_and_dual_agree(basis, n):
    S, T = _data(n, seed=n)
    w = np.random.default_rng(2).uniform(0.5, 2, n)
    kw = dict(degree=8, alpha=1e-3, basis=basis)
    primal = ChebyshevRidge(dual=False, **kw).fit(S, T, w)
    dual = ChebyshevRidge(dual=True, **kw).fit(S, T, w)
    assert (primal.solver_, dual.solver_) == ("primal", "dual")
    assert primal.lam_ == pytest.approx(dual.lam_, rel=1e-10)
    np.testing.assert_allclose(primal.coef_, dual.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(primal.predict(S), dual.predict(S), atol=1e-8)
    # and the explicit dense ridge
    Phi = chebyshev_design(S, 8, basis)
    G = Phi.T @ (Phi * w[:, None])
    lam = 1e-3 * np.trace(G) / G.shape[0]
    beta = np.linalg.solve(G + lam * np.eye(G.shape[0]), Phi.T @ (T * w[:, None]))
    np.testing.assert_allclose(primal.coef_, beta, rtol=1e-6, atol=1e-8)


def test_auto_dual_switch():
    S, T = _data(50)
    assert ChebyshevRidge(degree=10).fit(S, T).solver_ == "dual"  # d = 121 > 50
    assert ChebyshevRidge(degree=5).fit(S, T).solver_ == "primal"  # d = 36 <= 50


def test_partial_fit_equals_fit():
    S, T = _data(3000, seed=9)
    one = ChebyshevRidge(degree=10, alpha=1e-6).fit(S, T)
    chunked = ChebyshevRidge(degree=10, alpha=1e-6)
    for part in np.array_split(np.arange(3000), 7):
        chunked.partial_fit(S[part], T[part])
    np.testing.assert_allclose(chunked.coef_, one.coef_, rtol=1e-7, atol=1e-9)
    assert chunked.stats_.n_samples == 3000
    # a new alpha takes effect at the next batch
    chunked.alpha = 1e-2
    chunked.partial_fit(S[:0], T[:0])
    ref = ChebyshevRidge(degree=10, alpha=1e-2).fit(S, T)
    np.testing.assert_allclose(chunked.predict(S), ref.predict(S), atol=1e-9)
    with pytest.raises(ValueError, match="partial_fit"):
        chunked.partial_fit(S[:, :1], T)


def test_fit_stats_from_higher_degree():
    S, T = _data(2000, seed=4)
    st_ = ChebyshevMoments.from_data(S, T, 12)
    a = ChebyshevRidge(degree=6, alpha=1e-5).fit_stats(st_)
    b = ChebyshevRidge(degree=6, alpha=1e-5).fit(S, T)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)


def test_predict_chunked_equals_design_product():
    S, T = _data(1000)
    model = ChebyshevRidge(degree=7, alpha=1e-6, chunk_size=64).fit(S, T)
    Phi = chebyshev_design(S, 7)
    np.testing.assert_allclose(model.predict(S), Phi @ model.coef_, atol=1e-10)
    np.testing.assert_allclose(
        chebyshev_evaluate(S, model.coef_grid(), chunk_size=3), Phi @ model.coef_, atol=1e-10
    )


@pytest.mark.parametrize("basis", ["tensor", "total"])
def test_gram_of_a_lower_degree_equals_explicit(basis):
    # the row-slice assembly reads moments of a higher-degree statistics object
    S, T = _data(400, seed=11)
    st = ChebyshevMoments.from_data(S, T, 9)
    for degree in (0, 1, 4):
        Phi = chebyshev_design(S, degree, basis)
        G0 = Phi.T @ Phi
        G = st.gram(basis, degree)
        assert G.shape == G0.shape
        assert np.abs(G - G0).max() <= 1e-10 * np.abs(G0).max()
        np.testing.assert_array_equal(G, G.T)  # exactly symmetric: ridge_solve factors G.T


def test_ridge_solve_leaves_the_callers_arrays_and_matches_lstsq():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 9))
    G, b = X.T @ X, X.T @ rng.normal(size=(40, 2))
    G_before, b_before = G.copy(), b.copy()
    beta = ridge_solve(G, b, 0.5)
    np.testing.assert_array_equal(G, G_before)
    np.testing.assert_array_equal(b, b_before)
    np.testing.assert_allclose(beta, np.linalg.solve(G + 0.5 * np.eye(9), b), rtol=1e-12)


def test_ridge_solve_falls_back_to_min_norm_for_singular_gram():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 6))
    G = X.T @ X  # rank 3
    b = X.T @ rng.normal(size=(3, 1))
    beta = ridge_solve(G, b, 0.0)
    np.testing.assert_allclose(beta, np.linalg.pinv(G) @ b, rtol=1e-6, atol=1e-8)


def test_ridge_bad_parameters():
    S, T = _data(20)
    with pytest.raises(ValueError, match="alpha"):
        ChebyshevRidge(alpha=-1).fit(S, T)
    with pytest.raises(ValueError, match="basis"):
        ChebyshevRidge(basis="1d").fit(S, T)
    with pytest.raises(ValueError, match="dual"):
        ChebyshevRidge(dual="yes").fit(S, T)
    with pytest.raises(ValueError, match="degree"):
        ChebyshevRidge(degree=-2).fit(S, T)
    with pytest.raises(ValueError, match="targets"):
        ChebyshevRidge().fit(S, T[:3])
    model = ChebyshevRidge(degree=2).fit(S, T)
    with pytest.raises(ValueError, match="scores must have shape"):
        model.predict(S[:, :1])


@pytest.mark.parametrize("n_dims", [1, 2])
@pytest.mark.parametrize("degree", [0, 1, 5])
def test_replicate_moments_equal_one_weighted_update_each(n_dims, degree):
    from skcal.chebyshev import replicate_moments

    rng = np.random.default_rng(degree + 10 * n_dims)
    n = 300
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])[:, :n_dims]
    T = rng.uniform(0, 1, (n, 2))
    W = rng.poisson(1.0, (4, n)).astype(float) * rng.uniform(0.5, 2.0, n)
    W[2] = 0.0  # a weighting with no weight: zero moments
    M, AtB = replicate_moments(S, T, W, degree)
    for r in range(W.shape[0]):
        one = ChebyshevMoments(degree, n_dims=n_dims, n_targets=2).update(S, T, sample_weight=W[r])
        np.testing.assert_allclose(M[r], one.M, rtol=1e-12, atol=1e-12 * n)
        np.testing.assert_allclose(AtB[r], one.AtB, rtol=1e-12, atol=1e-12 * n)
    assert not M[2].any() and not AtB[2].any()
    # no rows, or no weightings: zeros of the documented shapes
    M0, A0 = replicate_moments(S[:0], T[:0], W[:, :0], degree)
    assert M0.shape == M.shape and A0.shape == AtB.shape and not M0.any()


@pytest.mark.parametrize("R", [3, 40])  # fewer weightings than 2L + 1 = 11, and more
@pytest.mark.parametrize("layout", ["C", "F"])
def test_replicate_moments_in_both_layouts_and_unchecked(R, layout):
    """Weightings side by side or as rows, in C order or as the bootstrap's transposed tiles,
    checked or not (``check_input=False``): the same moments."""
    from skcal.chebyshev import replicate_moments

    rng = np.random.default_rng(R)
    n, degree = 500, 5
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    T = rng.uniform(0, 1, (n, 2))
    W = rng.poisson(1.0, (R, n)).astype(float)
    X = np.ascontiguousarray(W.T).T if layout == "F" else W
    M, AtB = replicate_moments(S, T, X, degree, check_input=False)
    for r in (0, R - 1):
        one = ChebyshevMoments(degree, n_dims=2, n_targets=2).update(S, T, sample_weight=W[r])
        np.testing.assert_allclose(M[r], one.M, rtol=1e-12, atol=1e-12 * n)
        np.testing.assert_allclose(AtB[r], one.AtB, rtol=1e-12, atol=1e-12 * n)
    M2, A2 = replicate_moments(S, T, W, degree)
    np.testing.assert_allclose(M, M2, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(AtB, A2, rtol=1e-13, atol=1e-12)
    with pytest.raises(ValueError, match="check_input"):
        replicate_moments(S, T, W, degree, check_input="no")


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("zero_share", [0.0, 0.38, 0.95, 1.0])
@pytest.mark.parametrize("threshold", [0.0, 1.01])  # never, always the rows with a nonzero target
def test_replicate_moments_with_rows_whose_targets_are_all_zero(layout, zero_share, threshold, monkeypatch):
    """Targets of two votes (``a / 2`` and ``a (a - 1) / 2``: both 0 where no vote is positive).

    The cross moments skip the rows whose targets are all 0 when there are many of them; with
    that path forced on and off, every share of such rows, in either memory order of the
    weights, gives each weighting's moments.
    """
    import skcal.chebyshev._replicate
    from skcal.chebyshev import replicate_moments

    monkeypatch.setattr(skcal.chebyshev._replicate, "_SPARSE_TARGETS", threshold)

    rng = np.random.default_rng(int(100 * zero_share))
    n, degree, R = 700, 4, 12  # R > 2L + 1 = 9: the weights times the rows' products
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    a = np.where(rng.uniform(size=n) < zero_share, 0, rng.integers(1, 3, n)).astype(float)
    T = np.column_stack([a / 2, a * (a - 1) / 2])
    W = rng.poisson(1.0, (R, n)).astype(float)
    X = np.ascontiguousarray(W.T).T if layout == "F" else W
    M, AtB = replicate_moments(S, T, X, degree, check_input=False)
    for r in (0, 5, R - 1):
        one = ChebyshevMoments(degree, n_dims=2, n_targets=2).update(S, T, sample_weight=W[r])
        np.testing.assert_allclose(M[r], one.M, rtol=1e-12, atol=1e-12 * n)
        np.testing.assert_allclose(AtB[r], one.AtB, rtol=1e-12, atol=1e-12 * n)
    assert AtB.any() == (zero_share < 1.0)


def test_replicate_moments_refuse_bad_weights():
    from skcal.chebyshev import replicate_moments

    S = np.array([[0.2, 0.1], [0.7, 0.05]])
    t = np.array([0.0, 1.0])
    with pytest.raises(ValueError, match=r"weights must have shape \(R, 2\)"):
        replicate_moments(S, t, np.ones((3, 5)), 2)
    with pytest.raises(ValueError, match="finite and non-negative"):
        replicate_moments(S, t, -np.ones((1, 2)), 2)
    with pytest.raises(ValueError, match="finite and non-negative"):
        replicate_moments(S, t, np.full((1, 2), np.nan), 2)
    with pytest.raises(ValueError, match="real numbers"):
        replicate_moments(S, t, np.array([["a", "b"]]), 2)
    with pytest.raises(ValueError, match="degree"):
        replicate_moments(S, t, np.ones((1, 2)), -1)


@pytest.mark.parametrize("R", [3, 16, 41])
def test_replicate_moments_do_not_depend_on_the_weights_memory_order(R):
    # the bootstrap's tiles come replicate-fastest (Fortran order); the moments are the same
    from skcal.chebyshev import replicate_moments

    rng = np.random.default_rng(R)
    n = 5000
    S = np.column_stack([rng.uniform(size=n), rng.uniform(0, 0.25, n)])
    T = rng.uniform(size=(n, 2))
    W = rng.poisson(1.0, (R, n)).astype(float)
    for a, b in zip(
        replicate_moments(S, T, np.asfortranarray(W), 8), replicate_moments(S, T, W, 8), strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-9)


@pytest.mark.parametrize("sigma2", [0.0, 0.02, 0.25])
@pytest.mark.parametrize("degree", [1, 6])
def test_replicate_moments_and_evaluation_at_one_sigma2(sigma2, degree):
    """Rows that share one ``sigma2`` (a first-order model in a second-order report) take the
    products with the ``2L + 1`` values of ``m`` alone: the same moments and evaluations."""
    rng = np.random.default_rng(7)
    n = 1500
    S = np.column_stack([rng.uniform(size=n), np.full(n, sigma2)])
    t = rng.uniform(size=(n, 2))
    W = rng.poisson(1.0, (4, n)).astype(float)
    M, AtB = replicate_moments(S, t, W, degree)
    for r in range(W.shape[0]):
        one = ChebyshevMoments.from_data(S, t, degree=degree, sample_weight=W[r])
        np.testing.assert_allclose(M[r], one.M, rtol=1e-13, atol=1e-13 * np.abs(one.M).max())
        np.testing.assert_allclose(AtB[r], one.AtB, rtol=1e-13, atol=1e-13 * np.abs(one.AtB).max())
    C = rng.normal(size=(3 * (degree + 2), degree + 1, degree + 1))  # more targets than L + 1
    each = np.column_stack([chebyshev_evaluate(S, C[k : k + 1]) for k in range(C.shape[0])])
    np.testing.assert_allclose(chebyshev_evaluate(S, C), each, rtol=1e-12, atol=1e-12)
