"""Tests of the baseline CE2 estimators (SPEC section 2)."""

import numpy as np
import pytest
from scipy import integrate

from skcal.ce2_baselines import (
    C_GRID,
    _bucketing_predict,
    _nw_predict,
    baseline_ce2,
    n_buckets,
    nw_bandwidth,
)


def test_bucket_count_and_kernel_bandwidth_formulas():
    assert n_buckets(1.0, 16, 0.25) == 4  # ceil((16 / (1/16))^(1/4)) = ceil(4)
    assert n_buckets(0.25, 16, 0.25) == 2  # ceil(1) = 1, clipped up to 2
    assert n_buckets(8.0, 10**6, 2.0**-6) == 200  # clipped down to 200
    assert n_buckets(0.5, 10**4, 1 / 16) == 20  # ceil(0.5 * (1.6e5)^(1/4)) = ceil(19.99)
    assert nw_bandwidth(2.0, 10**4, 0.25) == pytest.approx(2 * 0.5 * 0.1)


def test_bucketing_by_hand_2d():
    scores = np.array([[0.1, 0.0], [0.2, 0.0], [0.9, 0.1], [0.8, 0.1], [0.7, 0.2]])
    t1 = np.array([0.0, 0.5, 1.0, 1.0, 0.0])
    t2 = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    # n = 5, h = 1/4, c = 0.25: K = 2; the sigma2 axis is scaled by 4 (0.1 -> 0.4, 0.2 -> 0.8)
    res = baseline_ce2(scores, t1, t2, method="bucketing", bandwidth=0.25, c=0.25)
    assert res["n_cells"] == 2 and res["c"] == 0.25 and res["validation_loss"] == {}
    np.testing.assert_allclose(res["eta1"], [0.25, 0.25, 1.0, 1.0, 0.0])
    np.testing.assert_allclose(res["eta2"], [0.0, 0.0, 0.5, 0.5, 0.0])
    m, s = scores.T
    term1 = np.mean(np.abs(np.array([0.25, 0.25, 1.0, 1.0, 0.0]) - m))
    term2 = np.mean(np.abs(np.array([0.0, 0.0, 0.5, 0.5, 0.0]) - m**2 - s))
    assert res["term1"] == pytest.approx(term1, abs=1e-15)  # = (0.15 + 0.05 + 0.1 + 0.2 + 0.7) / 5
    assert res["term1"] == pytest.approx(0.24, abs=1e-15)
    assert res["term2"] == pytest.approx(term2, abs=1e-15)
    assert res["ce2"] == pytest.approx(term1 + term2, abs=1e-15)


def test_bucketing_by_hand_1d_and_edges():
    # one-column scores: K cells on [0, 1]; sigma2 is taken as 0; m = 1 falls in the last cell
    m = np.array([0.1, 0.2, 0.6, 1.0])
    t1 = np.array([0.0, 1.0, 1.0, 1.0])
    t2 = np.array([0.0, 0.0, 1.0, 0.0])
    res = baseline_ce2(m[:, None], t1, t2, method="bucketing", bandwidth=0.25, c=0.25)
    assert res["n_cells"] == 2
    np.testing.assert_allclose(res["eta1"], [0.5, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(res["eta2"], [0.0, 0.0, 0.5, 0.5])
    assert res["term1"] == pytest.approx(np.mean([0.4, 0.3, 0.4, 0.0]))
    assert res["term2"] == pytest.approx(np.mean([0.01, 0.04, 0.14, 0.5]))
    # a 1-d array of scores is m alone as well
    res1 = baseline_ce2(m, t1, t2, method="bucketing", bandwidth=0.25, c=0.25)
    np.testing.assert_allclose(res1["eta1"], res["eta1"])


def test_empty_cells_and_neighbourhoods_get_the_global_mean():
    Z_fit = np.array([[0.1, 0.1], [0.2, 0.1]])
    T_fit = np.array([[0.0, 0.0], [1.0, 0.5]])
    Z_query = np.array([[0.15, 0.1], [0.9, 0.9]])
    out = _bucketing_predict(Z_fit, T_fit, Z_query, 4)
    np.testing.assert_allclose(out, [[0.5, 0.25], [0.5, 0.25]])
    out = _nw_predict(Z_fit, T_fit, Z_query, 0.02)
    np.testing.assert_allclose(out[1], [0.5, 0.25])  # nothing within 5b = 0.1
    np.testing.assert_allclose(out[0], [0.5, 0.25])  # equidistant from both


def test_nadaraya_watson_by_hand():
    # two points 0.01 apart, a third far away; n = 3, h = 1/4, c = 1 -> b = 0.5 * 3^-1/4
    scores = np.array([[0.10, 0.0], [0.11, 0.0], [0.95, 0.25]])
    t1 = np.array([0.0, 1.0, 0.5])
    t2 = np.array([0.0, 1.0, 0.25])
    b = 0.5 * 3**-0.25
    res = baseline_ce2(scores, t1, t2, method="nadaraya_watson", bandwidth=0.25, c=1.0)
    assert res["kernel_bandwidth"] == pytest.approx(b)
    d_far = np.hypot(0.85, 1.0), np.hypot(0.84, 1.0)  # sigma2 axis scaled by 4
    assert min(d_far) < 5 * b  # the far point is inside the truncation radius here
    w_near = np.exp(-0.5 * (0.01 / b) ** 2)
    w0, w1 = (np.exp(-0.5 * (d / b) ** 2) for d in d_far)
    eta1_0 = (0.0 + w_near * 1.0 + w0 * 0.5) / (1 + w_near + w0)
    assert res["eta1"][0] == pytest.approx(eta1_0, rel=1e-13)
    eta2_1 = (w_near * 0.0 + 1.0 + w1 * 0.25) / (w_near + 1 + w1)
    assert res["eta2"][1] == pytest.approx(eta2_1, rel=1e-13)
    # with c = 0.1 the far point is beyond 5 b and drops out exactly
    res = baseline_ce2(scores, t1, t2, method="nadaraya_watson", bandwidth=0.25, c=0.1)
    b = 0.1 * 0.5 * 3**-0.25
    w_near = np.exp(-0.5 * (0.01 / b) ** 2)
    assert res["eta1"][0] == pytest.approx(w_near / (1 + w_near), rel=1e-13)
    assert res["eta1"][2] == 0.5 and res["eta2"][2] == 0.25


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("b", [1e-3, 0.02, 0.08, 0.5])
def test_nadaraya_watson_equals_the_dense_definition(d, b):
    rng = np.random.RandomState(d)
    Z_fit = rng.uniform(size=(1500, d)) ** 2
    T_fit = rng.uniform(size=(1500, 2))
    Z_q = rng.uniform(size=(300, d))
    D2 = ((Z_q[:, None, :] - Z_fit[None, :, :]) ** 2).sum(-1)
    W = np.exp(-D2 / (2 * b * b)) * (D2 <= 25 * b * b)
    den = W.sum(1)
    safe = np.where(den > 0, den, 1.0)
    ref = np.where(den[:, None] > 0, (W @ T_fit) / safe[:, None], T_fit.mean(0))
    np.testing.assert_allclose(_nw_predict(Z_fit, T_fit, Z_q, b), ref, rtol=1e-12, atol=1e-14)


def _simulate(n, seed):
    """m, sigma2 uniform on R; f* = g(m, sigma2) exactly, two snapshots per row."""
    rng = np.random.RandomState(seed)
    m = rng.uniform(0, 1, n)
    s = rng.uniform(0, 0.25, n)
    f = 0.2 + 0.6 * m + 0.8 * s
    y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    return np.column_stack([m, s]), y.mean(1), y[:, 0] * y[:, 1]


def _true_ce2():
    def g(s, m):
        return 0.2 + 0.6 * m + 0.8 * s

    t1, _ = integrate.dblquad(lambda s, m: abs(g(s, m) - m) * 4, 0, 1, 0, 0.25, epsabs=1e-10)
    t2, _ = integrate.dblquad(lambda s, m: abs(g(s, m) ** 2 - m**2 - s) * 4, 0, 1, 0, 0.25, epsabs=1e-10)
    return t1 + t2


@pytest.mark.parametrize(
    ("method", "n_small", "n_large", "tol"),
    [("bucketing", 400, 40000, 0.02), ("nadaraya_watson", 300, 3000, 0.03)],
)
def test_converges_to_the_true_ce2(method, n_small, n_large, tol):
    truth = _true_ce2()
    errs = {}
    for n in (n_small, n_large):
        errs[n] = np.mean(
            [
                abs(
                    baseline_ce2(*_simulate(n, seed), method=method, bandwidth=0.25, random_state=seed)["ce2"]
                    - truth
                )
                for seed in range(3)
            ]
        )
    assert errs[n_large] < errs[n_small]
    assert errs[n_large] < tol


def test_auto_selection_is_reproducible_and_reported():
    scores, t1, t2 = _simulate(1000, 0)
    for method in ("bucketing", "nadaraya_watson"):
        a = baseline_ce2(scores, t1, t2, method=method, bandwidth=1 / 16, random_state=5)
        b = baseline_ce2(scores, t1, t2, method=method, bandwidth=1 / 16, random_state=5)
        assert a["c"] == b["c"] and a["ce2"] == b["ce2"]
        assert set(C_GRID) <= set(a["validation_loss"])
        assert a["validation_loss"][a["c"]] == min(a["validation_loss"].values())
        assert a["eta1"].shape == (1000,) and 0 <= a["eta1"].min() and a["eta2"].max() <= 1


def test_bucketing_extends_the_grid_at_its_ends():
    # noise-free targets with fine structure: finer cells always help -> c grows beyond 8
    rng = np.random.RandomState(0)
    m = rng.uniform(size=8000)
    eta = 0.5 + 0.5 * np.sin(60 * m)
    res = baseline_ce2(m, eta, eta**2, method="bucketing", bandwidth=0.25, random_state=0)
    assert res["c"] > 8 and max(res["validation_loss"]) > 8
    # pure-noise targets: coarse cells tend to win; the grid is extended below 0.25 exactly when
    # 0.25 is the best of the initial grid, and stops once K is clipped at 2
    for seed in range(5):
        rng = np.random.RandomState(seed)
        m = rng.uniform(size=3000)
        t1 = (rng.uniform(size=3000) < 0.5).astype(float)
        res = baseline_ce2(m, t1, t1 / 2, method="bucketing", bandwidth=0.25, random_state=0)
        losses = res["validation_loss"]
        initial_best = min(C_GRID, key=lambda c: (losses[c], c))
        assert (0.125 in losses) == (initial_best == 0.25)
        assert 0.0625 not in losses  # K(0.125) = 2 already: no further extension
        if seed == 3:
            assert res["c"] == 0.125 and res["n_cells"] == 2


def test_bad_input():
    scores, t1, t2 = _simulate(50, 0)
    kw = {"method": "bucketing", "bandwidth": 0.1}
    with pytest.raises(ValueError, match="'method' parameter"):
        baseline_ce2(scores, t1, t2, method="knn", bandwidth=0.1)
    for bad in (0.0, np.nan, np.inf, True, "0.1", None, 1e-310):
        with pytest.raises(ValueError, match="'bandwidth' parameter"):
            baseline_ce2(scores, t1, t2, method="bucketing", bandwidth=bad)
    for bad in (-1.0, "best", True, np.nan, None):
        with pytest.raises(ValueError, match="'c' parameter"):
            baseline_ce2(scores, t1, t2, **{**kw, "c": bad})
    for bad in (1.0, 0.0, True, "0.3"):
        with pytest.raises(ValueError, match="'validation_fraction' parameter"):
            baseline_ce2(scores, t1, t2, validation_fraction=bad, **kw)
    with pytest.raises(ValueError, match="scores is complex"):
        baseline_ce2(scores + 0j, t1, t2, **kw)
    with pytest.raises(ValueError, match=r"sigma2\) must lie in"):
        baseline_ce2(scores + [0, 0.3], t1, t2, **kw)
    with pytest.raises(ValueError, match=r"t1 must lie in \[0, 1\]"):
        baseline_ce2(scores, t1 + 1, t2, **kw)
    with pytest.raises(ValueError, match="t2 contains NaN"):
        baseline_ce2(scores, t1, np.full(50, np.nan), **kw)
    with pytest.raises(ValueError, match="Inconsistent numbers of samples"):
        baseline_ce2(scores, t1[:-1], t2, **kw)
    with pytest.raises(ValueError, match="at least 2 samples"):
        baseline_ce2(scores[:1], t1[:1], t2[:1], **kw)


def test_inputs_not_mutated():
    scores, t1, t2 = _simulate(100, 0)
    copies = [a.copy() for a in (scores, t1, t2)]
    baseline_ce2(scores, t1, t2, method="nadaraya_watson", bandwidth=0.1, random_state=0)
    for a, b in zip((scores, t1, t2), copies, strict=True):
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------------------------
# the grid method of Nadaraya-Watson (large inputs) and its certified bound
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("b", [0.02, 0.06])
def test_nw_grid_error_is_within_its_bound(d, b):
    from skcal.ce2_baselines import NW_GRID_MAX, NW_GRID_STEP, _nw_grid_predict, _nw_predict

    rng = np.random.default_rng(int(b * 100) + d)
    n = 3000
    Z = rng.uniform(size=(n, d)) ** np.array([1.0, 2.0])[:d]  # uneven density
    T = np.column_stack([rng.uniform(size=n), rng.uniform(size=n) ** 2])
    Zq = np.vstack([Z[:500], rng.uniform(size=(300, d))])  # fitted rows and fresh queries
    G = int(min(NW_GRID_MAX[d], np.ceil(1 / (NW_GRID_STEP * b))))
    exact = _nw_predict(Z, T, Zq, b)
    grid, bound = _nw_grid_predict(Z, T, Zq, b, G)
    err = np.abs(grid - exact).max(axis=1)
    assert np.all(err <= bound)
    assert bound[:500].max() < 0.02  # at the fitted rows the bound is tight enough to matter


def test_nadaraya_watson_switches_to_the_grid_and_reports_its_bound(monkeypatch):
    import skcal.ce2_baselines as cb

    rng = np.random.default_rng(0)
    n = 2000
    S = np.column_stack([rng.uniform(size=n), rng.uniform(0, 0.25, size=n)])
    t1 = rng.uniform(size=n)
    t2 = t1 * rng.uniform(size=n)
    exact = cb.baseline_ce2(S, t1, t2, method="nadaraya_watson", bandwidth=2**-6, c=2.0)
    assert exact["nw_method"] == "exact" and exact["ce2_error_bound"] == 0.0
    monkeypatch.setattr(cb, "NW_EXACT_WEIGHTS", 0)
    grid = cb.baseline_ce2(S, t1, t2, method="nadaraya_watson", bandwidth=2**-6, c=2.0)
    assert grid["nw_method"] == "grid" and grid["grid_spacing"] > 0
    assert 0 < grid["ce2_error_bound"] < 0.05
    assert abs(grid["ce2"] - exact["ce2"]) <= grid["ce2_error_bound"]
