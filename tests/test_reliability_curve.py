"""The reliability curve's bootstrap intervals and the smooth curve, against their definitions.

``reliability_curve``'s per-bin values and Wilson intervals are tested with the other binned
measures (``tests/test_binned_measures.py``); here: its ``interval="bootstrap"`` and
:func:`smooth_reliability_curve`, each against a brute force (explicit loops over rows, grid
points and replicates), a closed form where one exists, and the formulas the reliability
display used before it computed through these functions.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

import skcal
from skcal.reliability_curve import (
    MAX_SMOOTH_GRID_POINTS,
    SMOOTH_GRID_POINTS,
    _positives_first,
    _resampled_weights,
    reliability_curve,
    smooth_reliability_curve,
)
from skcal.scdl import scdl_curve
from skcal.smooth_ece import smooth_ece


def _binary(n=2000, seed=0, distort=lambda q: q**2):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < distort(p)).astype(float)
    return y, p


def _phi(d, sigma):
    return np.exp(-(d**2) / (2 * sigma**2))


def _brute_curve(y, p, w, grid_points, sigma, min_density):
    """The definition with explicit loops: hat deposit row by row, then the reflected kernel."""
    L = grid_points - 1
    grid = np.arange(grid_points) / L
    D = np.zeros(grid_points)
    Dy = np.zeros(grid_points)
    for yi, pi, wi in zip(y, p, w, strict=True):
        for k in range(grid_points):
            h = max(0.0, 1.0 - abs(L * pi - k))
            D[k] += wi * h
            Dy[k] += wi * yi * h
    if sigma == 0:
        S, Sy = D, Dy
    else:
        S = np.zeros(grid_points)
        Sy = np.zeros(grid_points)
        for j, t in enumerate(grid):
            for k, s in enumerate(grid):
                kern = _phi(t - s, sigma) + _phi(t + s, sigma) + _phi(2 - t - s, sigma)
                S[j] += kern * D[k]
                Sy[j] += kern * Dy[k]
    out = np.full(grid_points, np.nan)
    for j in range(grid_points):
        if S[j] > 0 and S[j] >= min_density * S.max():
            out[j] = Sy[j] / S[j]
    return out


# ---------------------------------------------------------------------------------------------
# the formulas of the display before it computed through smooth_reliability_curve (skcal 0.1)
# ---------------------------------------------------------------------------------------------
def _old_deposit_matrix(p, E=201):
    pos = p * (E - 1)
    lo = np.clip(np.floor(pos).astype(np.intp), 0, E - 2)
    frac = pos - lo
    n = p.shape[0]
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([lo, lo + 1]).ravel()
    vals = np.column_stack([1.0 - frac, frac]).ravel()
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n, E))


def _old_soft_onehot(p, m):
    n = p.shape[0]
    pos = p * m
    lo = np.clip(np.floor(pos).astype(np.intp), 0, m - 1)
    frac = pos - lo
    rows = np.repeat(np.arange(n), 2)
    return sparse.csr_matrix(
        (np.column_stack([1 - frac, frac]).ravel(), (rows, np.column_stack([lo, lo + 1]).ravel())),
        shape=(n, m + 1),
    )


def _old_kernel(sigma, E=201):
    grid = np.linspace(0.0, 1.0, E)
    d = grid[:, None] - grid[None, :]
    s = grid[:, None] + grid[None, :]
    return np.exp(-(d**2) / (2 * sigma**2)) + np.exp(-(s**2) / (2 * sigma**2)) + np.exp(
        -((2 - s) ** 2) / (2 * sigma**2)
    )


def _old_curves(dens, ysum, K):
    sd = dens @ K
    sy = ysum @ K
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = sd >= 0.02 * sd.max(axis=-1, keepdims=True)
        return np.where(ok, sy / sd, np.nan)


def _old_band(values, confidence_level):
    k = values.shape[1]
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    ok = np.isfinite(values).mean(axis=0) >= 0.5
    alpha = (1.0 - confidence_level) / 2.0
    low[ok] = np.nanquantile(values[:, ok], alpha, axis=0)
    high[ok] = np.nanquantile(values[:, ok], 1.0 - alpha, axis=0)
    return low, high


# ---------------------------------------------------------------------------------------------
# smooth_reliability_curve
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.0, 0.03, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_smooth_curve_equals_brute_force(sigma, weighted):
    y, p = _binary(n=60, seed=1)
    p[:3] = [0.0, 1.0, 0.5]  # both ends and a grid node
    w = np.random.default_rng(2).uniform(0.1, 3.0, p.size) if weighted else np.ones(p.size)
    c = smooth_reliability_curve(
        y, p, sample_weight=w if weighted else None, bandwidth=sigma, grid_points=17,
        min_density=0.05, n_bootstrap=0,
    )
    sigma_used = 0.0 if sigma == 0 else max(sigma, 1 / 16)
    expected = _brute_curve(y, p, w, 17, sigma_used, 0.05)
    assert c.bandwidth == sigma_used
    np.testing.assert_array_equal(np.isnan(c.curve), np.isnan(expected))
    np.testing.assert_allclose(c.curve, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c.grid, np.linspace(0, 1, 17))
    assert c.density.max() == 1.0 and np.all(c.density >= 0)


def test_predictions_on_grid_nodes_give_nadaraya_watson_with_the_reflected_kernel():
    """Closed form: when every prediction is a grid node the deposit is exact, and the curve is
    the Nadaraya-Watson estimate sum_i w_i y_i K(t, p_i) / sum_i w_i K(t, p_i) itself."""
    rng = np.random.default_rng(5)
    p = rng.integers(0, 41, size=300) / 40
    y = (rng.uniform(size=300) < p).astype(float)
    w = rng.uniform(0.5, 2.0, size=300)
    sigma = 0.07
    c = smooth_reliability_curve(
        y, p, sample_weight=w, bandwidth=sigma, grid_points=41, min_density=0.0, n_bootstrap=0
    )
    t = c.grid[:, None]
    K = _phi(t - p, sigma) + _phi(t + p, sigma) + _phi(2 - t - p, sigma)
    np.testing.assert_allclose(c.curve, (K * w * y).sum(1) / (K * w).sum(1), rtol=1e-12)


def test_constant_labels_give_a_constant_curve_and_band():
    p = np.random.default_rng(0).uniform(size=500)
    c = smooth_reliability_curve(np.ones(500), p, n_bootstrap=20, random_state=0)
    ok = np.isfinite(c.curve)
    assert ok.sum() > 150
    np.testing.assert_allclose(c.curve[ok], 1.0)
    np.testing.assert_allclose(c.lower[np.isfinite(c.lower)], 1.0)


def test_default_bandwidth_is_smece_raised_to_the_grid_spacing():
    y, p = _binary(n=3000)
    sigma = smooth_ece(y, p, return_bandwidth=True)[1]
    c = smooth_reliability_curve(y, p, n_bootstrap=0)
    assert c.bandwidth == max(sigma, 1 / 200)
    given = smooth_reliability_curve(y, p, bandwidth=sigma, n_bootstrap=0)
    np.testing.assert_array_equal(c.curve, given.curve)
    # a calibrated predictor: smECE picks a bandwidth below the spacing of a coarse grid
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    sigma = smooth_ece(y, p, return_bandwidth=True)[1]
    assert sigma < 1 / 10
    assert smooth_reliability_curve(y, p, grid_points=11, n_bootstrap=0).bandwidth == 1 / 10


@pytest.mark.parametrize("weighted", [False, True])
def test_smooth_curve_and_band_agree_with_the_old_display_formulas(weighted):
    """The display's sparse-matrix deposit and dense kernel (before skcal.binning.hat_deposit),
    fed the same resampling weights, give the same curve and band to round-off."""
    y, p = _binary(n=1500, seed=3)
    w = np.random.default_rng(1).uniform(0.2, 2.0, p.size) if weighted else None
    sigma = smooth_ece(y, p, sample_weight=w, return_bandwidth=True)[1]
    new = smooth_reliability_curve(y, p, sample_weight=w, bandwidth=sigma, n_bootstrap=40, random_state=7)
    D = _old_deposit_matrix(p)
    K = _old_kernel(max(sigma, 1 / 200))
    ww = np.ones(p.size) if w is None else w
    old = _old_curves(D.T @ ww, D.T @ (ww * y), K)
    np.testing.assert_array_equal(np.isnan(old), np.isnan(new.curve))
    np.testing.assert_allclose(new.curve, old, rtol=1e-12, atol=1e-14)
    # the replicates resample the rows in the order the bootstrap keeps them (positives first)
    _, (y, p, w) = _positives_first(y, y, p, w)
    D = _old_deposit_matrix(p)
    cw = np.concatenate(list(_resampled_weights(7, 40, w, p.size, SMOOTH_GRID_POINTS)))
    assert cw.shape == (40, p.size)
    old_rows = _old_curves((D.T @ cw.T).T, (D.T @ (cw * y).T).T, K)
    lo, hi = _old_band(old_rows, 0.9)
    np.testing.assert_allclose(new.lower, lo, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(new.upper, hi, rtol=1e-12, atol=1e-14)


def test_band_equals_per_replicate_brute_force():
    """Each replicate is the curve of the rows it drew: recomputed one by one, same band."""
    y, p = _binary(n=400, seed=4)
    c = smooth_reliability_curve(y, p, bandwidth=0.08, grid_points=51, n_bootstrap=30, random_state=3)
    _, (y, p) = _positives_first(y, y, p)  # the order the bootstrap keeps the rows in
    reps = []
    for counts in _resampled_weights(3, 30, None, p.size, 51):
        for row in counts:
            idx = np.repeat(np.arange(p.size), row.astype(int))  # the resampled rows, listed
            reps.append(
                smooth_reliability_curve(y[idx], p[idx], bandwidth=0.08, grid_points=51, n_bootstrap=0).curve
            )
    lo, hi = _old_band(np.array(reps), 0.9)
    np.testing.assert_allclose(c.lower, lo, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c.upper, hi, rtol=1e-12, atol=1e-14)
    assert c.confidence == 0.9 and c.n_bootstrap == 30


def test_positives_first_keeps_each_row():
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    n_pos, (a, b, c) = _positives_first(y, y, np.arange(5), None)
    assert n_pos == 3 and a.tolist() == [1, 1, 1, 0, 0] and b.tolist() == [1, 3, 4, 0, 2] and c is None


def test_resampled_weights_are_multinomial_counts_times_weights():
    w = np.linspace(0.5, 2.0, 50)
    blocks = list(_resampled_weights(0, 7, w, 50, 10))
    counts = np.concatenate(blocks) / w
    np.testing.assert_allclose(counts, np.round(counts))
    assert np.all(counts.sum(axis=1).round() == 50)
    # blocks are bounded by BOOTSTRAP_BLOCK replicate-rows; the stream does not depend on them
    again = np.concatenate(list(_resampled_weights(0, 7, w, 50, 10)))
    np.testing.assert_array_equal(again, np.concatenate(blocks))
    assert list(_resampled_weights(0, 0, w, 50, 10)) == []


def test_bandwidth_zero_gives_scdl_soft_bins():
    y, p = _binary(n=3000, seed=6)
    w = np.random.default_rng(0).uniform(0.2, 2.0, p.size)
    for m in (4, 16, 64):
        pi, q, _ = scdl_curve(y, p, sample_weight=w, max_bins=m).grid(m)
        c = smooth_reliability_curve(
            y, p, sample_weight=w, bandwidth=0.0, grid_points=m + 1, min_density=0.0, n_bootstrap=0
        )
        keep = pi > 0
        np.testing.assert_array_equal(np.isfinite(c.curve), keep)
        np.testing.assert_allclose(c.curve[keep], q[keep], rtol=1e-10)
        onehot = _old_soft_onehot(p, m)  # the display's own soft-bin matrix before hat_deposit
        old = (onehot.T @ (w * y)) / (onehot.T @ w)
        np.testing.assert_allclose(c.curve[keep], old[keep], rtol=1e-12)


def test_min_density_masks_sparse_regions():
    rng = np.random.default_rng(0)
    p = np.r_[rng.uniform(0.0, 0.3, 1000), rng.uniform(0.9, 1.0, 5)]
    y = (rng.uniform(size=p.size) < p).astype(float)
    c = smooth_reliability_curve(y, p, bandwidth=0.02, n_bootstrap=0)
    assert np.isnan(c.curve[(c.grid > 0.45) & (c.grid < 0.75)]).all()
    assert np.isfinite(c.curve[c.grid < 0.25]).all()
    c0 = smooth_reliability_curve(y, p, bandwidth=0.02, min_density=0.0, n_bootstrap=0)
    assert np.isfinite(c0.curve[c0.density > 1e-8]).all()
    np.testing.assert_array_equal(np.isfinite(c.curve), c.density >= 0.02)


def test_band_covers_the_curve_at_its_nominal_rate():
    """Over 150 simulated data sets, the 90% band at t = 0.5 holds the population curve (the
    same estimator on 2 million rows) about 90% of the time (binomial sd 2.4%)."""
    def draw(n, seed):
        rng = np.random.default_rng(seed)
        p = rng.uniform(size=n)
        return (rng.uniform(size=n) < p**2).astype(float), p

    kw = {"bandwidth": 0.05, "grid_points": 21}
    j = 10  # t = 0.5
    truth = smooth_reliability_curve(*draw(2_000_000, 0), n_bootstrap=0, **kw).curve[j]
    assert truth == pytest.approx(0.25 + 0.05**2, abs=2e-3)  # E[p^2] under the kernel, no reflection
    hits = 0
    for seed in range(1, 151):
        c = smooth_reliability_curve(*draw(1000, seed), n_bootstrap=100, random_state=seed, **kw)
        hits += c.lower[j] <= truth <= c.upper[j]
    assert 0.82 <= hits / 150 <= 0.97


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=40),
    st.integers(0, 2**31 - 1),
    st.sampled_from([0.0, 0.01, 0.1, 0.5]),
)
def test_curve_is_a_weighted_mean_of_the_labels(p, seed, sigma):
    p = np.array(p)
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=p.size) < 0.5).astype(float)
    c = smooth_reliability_curve(y, p, bandwidth=sigma, grid_points=33, min_density=0.0, n_bootstrap=3,
                                 random_state=seed)
    ok = np.isfinite(c.curve)
    assert ok.any()
    assert np.all((c.curve[ok] >= y.min() - 1e-12) & (c.curve[ok] <= y.max() + 1e-12))
    perm = rng.permutation(p.size)
    d = smooth_reliability_curve(y[perm], p[perm], bandwidth=sigma, grid_points=33, min_density=0.0,
                                 n_bootstrap=0)
    np.testing.assert_allclose(d.curve, c.curve, rtol=1e-9, atol=1e-12)


def test_smooth_inputs_are_checked_and_not_mutated():
    y, p = _binary(n=100)
    y0, p0 = y.copy(), p.copy()
    smooth_reliability_curve(y, p, n_bootstrap=5, random_state=0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(p, p0)
    with pytest.raises(ValueError, match="grid_points"):
        smooth_reliability_curve(y, p, grid_points=1)
    with pytest.raises(ValueError, match="grid_points=4097 is too large for a smoothed curve"):
        smooth_reliability_curve(y, p, grid_points=MAX_SMOOTH_GRID_POINTS * 2 - 1)
    with pytest.raises(ValueError, match="larger than 100 rows support"):
        smooth_reliability_curve(y, p, grid_points=2**12, bandwidth=0.0)
    smooth_reliability_curve(y, p, grid_points=1025, bandwidth=0.0, n_bootstrap=2)  # the bound
    for kw, name in (
        ({"bandwidth": -0.1}, "bandwidth"),
        ({"bandwidth": 1.5}, "bandwidth"),
        ({"min_density": 1.0}, "min_density"),
        ({"confidence": 1.0}, "confidence"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"grid_points": True}, "grid_points"),
    ):
        with pytest.raises(ValueError, match=name):
            smooth_reliability_curve(y, p, **kw)
    with pytest.raises(ValueError, match="y_prob"):
        smooth_reliability_curve(y, p + 1)


def test_public_names():
    assert skcal.smooth_reliability_curve is smooth_reliability_curve
    assert skcal.SmoothReliabilityCurve.__name__ == "SmoothReliabilityCurve"


# ---------------------------------------------------------------------------------------------
# reliability_curve(interval="bootstrap")
# ---------------------------------------------------------------------------------------------
def _brute_bin_band(y, p, w, edges, n_bootstrap, seed, confidence):
    _, (y, p, w) = _positives_first(y, y, p, w)  # the order the bootstrap keeps the rows in
    ids = np.searchsorted(edges[1:-1], p)
    k = edges.shape[0] - 1
    reps = []
    for counts in _resampled_weights(seed, n_bootstrap, w, p.size, k):
        for cw in counts:
            row = np.full(k, np.nan)
            for b in range(k):
                sel = ids == b
                tot = cw[sel].sum()
                if tot > 0:
                    row[b] = (cw[sel] * y[sel]).sum() / tot
            reps.append(row)
    return _old_band(np.array(reps), confidence)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bootstrap_interval_equals_brute_force(strategy, weighted):
    y, p = _binary(n=500, seed=9)
    p = np.round(p, 1)  # predictions on the inner edges of the uniform bins
    w = np.random.default_rng(3).uniform(0.2, 2.0, p.size) if weighted else None
    c = reliability_curve(
        y, p, n_bins=10, strategy=strategy, sample_weight=w, interval="bootstrap", confidence=0.8,
        n_bootstrap=25, random_state=4,
    )
    lo, hi = _brute_bin_band(y, p, w, c.edges, 25, 4, 0.8)
    np.testing.assert_allclose(c.lower, lo, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(c.upper, hi, rtol=1e-12, equal_nan=True)
    assert c.interval == "bootstrap" and c.confidence == 0.8
    plain = reliability_curve(y, p, n_bins=10, strategy=strategy, sample_weight=w)
    np.testing.assert_array_equal(c.observed_frequency, plain.observed_frequency)
    np.testing.assert_array_equal(c.edges, plain.edges)
    keep = c.nonempty
    assert np.all(c.lower[keep] <= c.observed_frequency[keep] + 1e-12)
    assert np.all(c.observed_frequency[keep] <= c.upper[keep] + 1e-12)
    assert np.isnan(c.lower[~keep]).all()


def test_weighted_bootstrap_is_centred_on_the_weighted_frequency():
    """A resampled row keeps its weight once: the replicates centre on sum w y / sum w.

    (Before, the display drew rows with probability proportional to their weight *and* weighted
    them again, which centres the band on sum w^2 y / sum w^2: 0.9 here instead of 0.75.)"""
    n = 4000
    y = np.r_[np.ones(n // 2), np.zeros(n // 2)]
    p = np.full(n, 0.5)
    w = np.r_[np.full(n // 2, 3.0), np.ones(n // 2)]
    c = reliability_curve(y, p, n_bins=1, sample_weight=w, interval="bootstrap", confidence=0.9,
                          n_bootstrap=200, random_state=0)
    assert c.observed_frequency[0] == pytest.approx(0.75)
    assert c.lower[0] < 0.75 < c.upper[0] and c.upper[0] < 0.8
    s = smooth_reliability_curve(y, p, sample_weight=w, n_bootstrap=200, random_state=0)
    ok = np.isfinite(s.lower)
    assert np.all((s.lower[ok] < 0.75) & (0.75 < s.upper[ok]))


def test_bootstrap_interval_options():
    y, p = _binary(n=300)
    none = reliability_curve(y, p, interval="bootstrap", n_bootstrap=0)
    assert np.isnan(none.lower).all() and none.interval == "bootstrap"
    a = reliability_curve(y, p, interval="bootstrap", n_bootstrap=20, random_state=1)
    b = reliability_curve(y, p, interval="bootstrap", n_bootstrap=20, random_state=1)
    np.testing.assert_array_equal(a.lower, b.lower)
    assert reliability_curve(y, p, interval="wilson").interval == "wilson"
    assert reliability_curve(y, p).lower is None
    with pytest.raises(ValueError, match="interval"):
        reliability_curve(y, p, interval="basic")
    with pytest.raises(ValueError, match="n_bootstrap"):
        reliability_curve(y, p, interval="bootstrap", n_bootstrap=10**6)
