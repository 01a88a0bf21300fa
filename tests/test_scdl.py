import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.scdl import (
    SCDLCurve,
    default_max_bins,
    max_supported_bins,
    scdl_curve,
    scdl_score,
    theory_max_bins,
)
from skcal.stats._scdl import scdl_on_grid


def brute_force_scdl_m(y, p, m, w=None):
    """Dense, loop-based SCDL_m straight from SPEC section 4 (independent of the binned sums)."""
    n = len(p)
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    W = np.zeros((n, m + 1))
    for s in range(n):
        for i in range(m + 1):
            W[s, i] = max(0.0, 1.0 - abs(m * p[s] - i))
    pi = (w[:, None] * W).sum(axis=0) / w.sum()
    ey = (w[:, None] * W * np.asarray(y)[:, None]).sum(axis=0) / w.sum()
    best = 0.0
    for i in range(m + 1):
        total = 0.0
        for j in range(m + 1):
            if pi[j] == 0:
                continue
            q = ey[j] / pi[j]
            total += pi[j] * max(q - (i + 1) / m, 0.0) if j <= i else pi[j] * max(i / m - q, 0.0)
        best = max(best, total)
    return best


# Probabilities with many exact grid points and ties, plus generic values.
probs = st.one_of(
    st.floats(0, 1, allow_nan=False),
    st.sampled_from([0.0, 0.125, 0.25, 0.5, 0.75, 1.0]),
)


@st.composite
def samples(draw, min_size=1, max_size=40, weighted=False):
    n = draw(st.integers(min_size, max_size))
    p = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.floats(0.01, 10), min_size=n, max_size=n)))
    return y, p, w


@settings(max_examples=60, deadline=None)
@given(samples(weighted=True), st.booleans())
def test_binned_sums_equal_brute_force(data, use_weights):
    y, p, w = data
    w = w if use_weights else None
    curve = scdl_curve(y, p, max_bins=32, sample_weight=w)
    for g, m in enumerate(curve.n_bins):
        assert curve.scdl_m[g] == pytest.approx(brute_force_scdl_m(y, p, int(m), w), abs=1e-12)
    for m in (1, 3, 5):  # non-dyadic grids (used by SoftBinRounder with a fixed n_bins)
        assert scdl_on_grid(p, y, w, m)[0] == pytest.approx(brute_force_scdl_m(y, p, m, w), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(samples(max_size=100))
def test_scdl_properties(data):
    y, p, _ = data
    curve = scdl_curve(y, p, max_bins=64)
    s = scdl_score(y, p, max_bins=64)
    assert s == curve.scdl
    # SCDL in [0, 1]
    assert 0.0 <= s <= 1.0
    assert np.all((curve.scdl_m >= 0) & (curve.scdl_m <= 1))
    # SCDL_{2m} >= SCDL_m on every sample
    assert np.all(np.diff(curve.scdl_m) >= -1e-12)
    # SCDL in [1/m*, 2/m*)
    m = curve.selected_n_bins
    assert 1.0 / m <= s < 2.0 / m
    # pi is a distribution; q is NaN exactly on empty bins and lies in [0, 1] elsewhere
    for pi, q, scfdl, mm in zip(curve.pi, curve.q, curve.scfdl, curve.n_bins, strict=True):
        assert pi.shape == (mm + 1,) and scfdl.shape == (mm + 1,)
        assert pi.sum() == pytest.approx(1.0)
        assert np.array_equal(np.isnan(q), pi == 0)
        assert np.all((q[pi > 0] >= -1e-12) & (q[pi > 0] <= 1 + 1e-12))


def test_pi_and_q_closed_form():
    # p = 0.3 on the grid m = 2: weights 0.4 on 0 and 0.6 on 1/2
    curve = scdl_curve([1, 0], [0.3, 0.3], max_bins=2)
    pi, q, scfdl = curve.grid(2)
    np.testing.assert_allclose(pi, [0.4, 0.6, 0.0])
    np.testing.assert_allclose(q[:2], [0.5, 0.5])
    assert np.isnan(q[2])
    # SCFDL_{2,0} = pi_0 (q_0 - 1/2)_+ + pi_1 (0 - q_1)_+ = 0; SCFDL_{2,1} = 0; SCFDL_{2,2} = 0
    np.testing.assert_allclose(scfdl, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="not one of the searched grids"):
        curve.grid(4)


def test_point_mass_closed_form():
    # All predictions 1/2, all labels 1: SCDL_m = max_i (1 - (i+1)/m) over i <= m/2 = 1/2 - 1/m
    y = np.ones(10)
    p = np.full(10, 0.5)
    curve = scdl_curve(y, p, max_bins=16)
    np.testing.assert_allclose(curve.scdl_m, [0.5 - 1 / m for m in (2, 4, 8, 16)], atol=1e-15)
    # min_m max(1/2 - 1/m, 1/m): 1/4 at m = 4
    assert curve.scdl == pytest.approx(0.25)
    assert curve.selected_n_bins == 4


def test_calibrated_sample_sits_on_the_floor():
    p = np.repeat(np.linspace(0, 1, 11), 100)
    y = (np.tile(np.arange(100), 11) < np.repeat(np.linspace(0, 100, 11), 100)).astype(float)
    # Exactly calibrated: q_j is a mean of predictions within (j - 1)/m..(j + 1)/m, so every
    # (q_j - (i + 1)/m)_+ with j <= i and (i/m - q_j)_+ with j > i vanishes.
    # only on grids that cannot split the 11 prediction values (m = 2, 4, 8): finer grids give
    # soft bins with a single prediction value whose label mean is not exactly that value
    curve = scdl_curve(y, p, max_bins="theory")
    np.testing.assert_allclose(curve.scdl_m, 0.0, atol=1e-12)
    assert curve.scdl == 1.0 / curve.n_bins[-1]
    assert curve.at_floor and curve.selected_scdl_m < curve.scdl


@pytest.mark.parametrize("T, expected", [(1, 2), (4, 2), (100, 4), (1000, 8), (10_000, 16), (10**6, 128)])
def test_theory_max_bins_rule(T, expected):
    m = theory_max_bins(T)
    assert m == expected == default_max_bins(T, rule="theory")
    assert m == 2 or m * math.log(m) <= math.sqrt(T)
    assert 2 * m * math.log(2 * m) > math.sqrt(T)


@pytest.mark.parametrize(
    "T, expected", [(0, 2), (1, 4), (100, 64), (1000, 128), (10_000, 512), (10**6, 4096)]
)
def test_auto_max_bins_rule(T, expected):
    m = default_max_bins(T)
    assert m == expected
    assert m >= 4 * math.sqrt(T) > m / 2 or m == 2


def test_both_rules_on_the_same_data():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=1000)
    y = (rng.uniform(size=1000) < p).astype(int)
    auto = scdl_curve(y, p)
    theory = scdl_curve(y, p, max_bins="theory")
    assert auto.max_bins == 128 and auto.max_bins_rule == "auto"
    assert theory.max_bins == 8 and theory.max_bins_rule == "theory"
    # the theorem's cap holds SCDL at its floor 1/8; the finer search reaches the crossing
    assert theory.scdl == 0.125 and theory.at_floor
    assert auto.scdl < 0.125
    # the searched grids are nested, so the shared grids agree exactly
    np.testing.assert_array_equal(auto.scdl_m[:3], theory.scdl_m)
    assert 1 / auto.selected_n_bins <= auto.scdl < 2 / auto.selected_n_bins
    assert auto.scdl == max(auto.selected_scdl_m, 1 / auto.selected_n_bins)
    assert scdl_curve(y, p, max_bins=None).scdl == auto.scdl


def test_finer_cap_never_raises_scdl_and_stops_mattering_after_the_crossing():
    rng = np.random.default_rng(8)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    values = [scdl_score(y, p, max_bins=m) for m in (2, 8, 32, 128, 512, 2048, 8192)]
    assert all(b <= a for a, b in zip(values, values[1:], strict=False))
    # past the crossing SCDL_m >= 1/m no finer grid can win
    assert values[-1] == values[-2] == values[-3] == scdl_score(y, p)


def test_models_do_not_tie_at_a_few_thousand_rows():
    # five different models on 2000 rows: the theorem's cap gives them all 1/16
    rng = np.random.default_rng(9)
    x = rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < x).astype(int)
    models = [x, np.clip(x + 0.1, 0, 1), x**1.5, x**2, 0.1 + 0.8 * x]
    theory = [scdl_score(y, m, max_bins="theory") for m in models]
    auto = [scdl_curve(y, m) for m in models]
    assert set(theory) == {0.0625}
    assert len({c.scdl for c in auto}) == 5
    # two models whose decision loss is below the noise of 2000 rows still share the floor 1/128
    near = scdl_curve(y, np.clip(x + 0.03, 0, 1))
    assert near.scdl == auto[0].scdl == 1 / 128 and near.at_floor and auto[0].at_floor
    assert near.selected_scdl_m != auto[0].selected_scdl_m


def test_max_bins_is_bounded_by_the_data():
    # issue 13: 2**20 on 2 rows used to run for hours, 2**40 ended in MemoryError
    msg = r"max_bins=1048576 is larger than 2 rows support: at most .* = 1024"
    with pytest.raises(ValueError, match=msg):
        scdl_score([0, 1], [0.2, 0.8], max_bins=2**20)
    with pytest.raises(ValueError, match="max_bins"):
        scdl_score([0, 1], [0.2, 0.8], max_bins=2**40)
    assert max_supported_bins(2) == 1024 and max_supported_bins(10**6) == 4 * 10**6
    assert scdl_curve([0, 1], [0.2, 0.8], max_bins=1024).max_bins == 1024
    # the rules stay within the bound
    assert scdl_curve([0, 1], [0.2, 0.8]).max_bins <= 1024


def test_default_grid_depends_on_effective_sample_size():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=10_000)
    y = (rng.uniform(size=10_000) < p).astype(int)
    assert scdl_curve(y, p).n_bins[-1] == 512
    assert scdl_curve(y, p, max_bins="theory").n_bins[-1] == 16
    # weights concentrated on 100 samples: Kish's effective size is about 100
    w = np.full(10_000, 1e-9)
    w[:100] = 1.0
    curve = scdl_curve(y, p, sample_weight=w)
    assert curve.n_effective == pytest.approx(100, rel=1e-3)
    assert curve.n_bins[-1] == 64
    assert scdl_curve(y, p, sample_weight=w, max_bins="theory").n_bins[-1] == 4


def test_max_bins_caps_the_search():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    assert scdl_curve(y, p, max_bins=100).n_bins.tolist() == [2, 4, 8, 16, 32, 64]
    assert scdl_curve(y, p, max_bins=2).n_bins.tolist() == [2]
    for bad in (1, 0, -4, 2.5, "8", True, "max"):
        with pytest.raises(ValueError, match="max_bins"):
            scdl_score(y, p, max_bins=bad)


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=60)
    y = (rng.uniform(size=60) < p).astype(int)
    k = rng.integers(1, 4, size=60)
    a = scdl_curve(y, p, sample_weight=k, max_bins=32)
    b = scdl_curve(np.repeat(y, k), np.repeat(p, k), max_bins=32)
    np.testing.assert_allclose(a.scdl_m, b.scdl_m, atol=1e-14)


def test_input_types_give_identical_results():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p**2).astype(int)
    ref = scdl_score(y, p)
    assert scdl_score(y.tolist(), p.tolist()) == ref
    assert scdl_score(pd.Series(y), pd.Series(p)) == ref
    assert scdl_score(y, np.column_stack([1 - p, p])) == ref
    assert scdl_score(pd.Series(y), pd.DataFrame({"a": 1 - p, "b": p})) == ref
    assert scdl_score(np.where(y == 1, "yes", "no"), p, pos_label="yes") == ref
    assert scdl_score(y.astype(bool), p) == ref
    assert scdl_score(2 * y - 1, p) == ref


def test_inputs_not_mutated():
    p = np.array([0.2, 0.7, 1.0])
    y = np.array([0, 1, 1])
    w = np.array([1.0, 2.0, 3.0])
    before = (p.copy(), y.copy(), w.copy())
    scdl_curve(y, p, sample_weight=w)
    for a, b in zip((p, y, w), before, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "y, p, kwargs, match",
    [
        ([0, 1], [0.2, np.nan], {}, "y_prob contains NaN"),
        ([0, 1], [0.2, np.inf], {}, "y_prob contains NaN or infinity"),
        ([0, 1], [0.2, 1.5], {}, r"y_prob must lie in \[0, 1\]"),
        ([0, 1], [-0.1, 0.5], {}, r"y_prob must lie in \[0, 1\]"),
        ([0, 1, 1], [0.2, 0.5], {}, "Inconsistent numbers of samples"),
        ([0, 1, 2], [0.2, 0.5, 0.1], {}, "binary labels"),
        ([], [], {}, "empty"),
        ([0, 1], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], {}, r"shape \(n,\), \(n, 1\) or \(n, 2\)"),
        ([0, 1], [[0.2, 0.3], [0.1, 0.9]], {}, "rows must sum to 1"),
        (["a", "b"], [0.2, 0.3], {}, "pass pos_label"),
        ([0, 1], [0.2, 0.3], {"sample_weight": [1.0, -1.0]}, "sample_weight must be non-negative"),
        ([0, 1], [0.2, 0.3], {"sample_weight": [1.0]}, "sample_weight has 1 entries"),
    ],
)
def test_bad_input_errors(y, p, kwargs, match):
    with pytest.raises(ValueError, match=match):
        scdl_score(y, p, **kwargs)


def test_curve_is_a_dataclass_with_documented_fields():
    curve = scdl_curve([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.4])
    assert isinstance(curve, SCDLCurve)
    assert curve.n_bins.tolist() == [2, 4, 8]
    assert curve.scdl == max(curve.selected_scdl_m, 1 / curve.selected_n_bins)
    assert scdl_curve([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.4], max_bins="theory").n_bins.tolist() == [2]


def test_weights_whose_squares_overflow_are_refused_clearly():
    """Kish's size (sum w)^2 / sum w^2 of weights near 1e200 is inf / inf in float64: a clear
    error that says to rescale them, from the function, the statistics and their bootstrap (not a
    grid chosen from NaN, which gave SCDL 0.5, nor Python's OverflowError)."""
    from skcal.stats import PoissonBootstrap, ScdlStatistics

    rng = np.random.default_rng(0)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    w = rng.uniform(0.5, 2.0, 50) * 1e200
    with np.errstate(over="ignore", invalid="ignore"):  # the bootstrap's w^2 products overflow
        for call in (
            lambda: scdl_score(y, p, sample_weight=w),
            lambda: scdl_curve(y, p, sample_weight=w),
            lambda: ScdlStatistics().update(y, p, sample_weight=w).compute(),
            lambda: PoissonBootstrap(ScdlStatistics(), n_replicates=3, seed=0)
            .update(y, p, sample_weight=w)
            .compute(),
        ):
            with pytest.raises(ValueError, match="too large.*divide the weights by their maximum"):
                call()
    rescaled = scdl_score(y, p, sample_weight=w / w.max())
    assert rescaled == pytest.approx(scdl_score(y, p, sample_weight=w / 1e200), rel=1e-12)
