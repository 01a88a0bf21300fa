"""skcal.monitor: the tolerance test, the lower bound, the e-detector, segments, state and input."""

import itertools
import json
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skcal._compat import InvalidParameterError
from skcal.binned_ece import binned_ece
from skcal.monitor import CalibrationMonitor, render_html
from skcal.monitor._bands import _hull_outside, _superlevel, residual_bands
from skcal.monitor._betting import (
    CONSTANT_WEIGHT,
    GRID,
    chord_tables,
    component_bets,
    component_weights,
    function_names,
    log_factors,
    memory_sums,
    n_components,
    pattern_signs,
    to_functions,
)
from skcal.monitor._blocks import block_sums, sum_x
from skcal.monitor._detector import bound_terms, log_e_at, start_weights
from skcal.stats import BinnedStatistics


def _stream(n, seed, shift=0.0, beta=(2, 2)):
    rng = np.random.default_rng(seed)
    p = rng.beta(*beta, size=n)
    y = rng.uniform(size=n) < np.clip(p + shift, 0, 1)
    return y, p


def _overconfident(n, seed, ce):
    """``p`` uniform on [0, 1], truth ``p - ce sign(p - 1/2)`` (clipped): l1 error ``ce`` for ce <= 1/2."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    truth = np.clip(p - ce * np.sign(p - 0.5), 0, 1)
    return rng.uniform(size=n) < truth, p


def _path(m):
    return m._block("log_e"), m._block("log_m")


def _state_text(m):
    return json.dumps(m.get_state(), sort_keys=True, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# the family, the chords, the factors
# ---------------------------------------------------------------------------------------------
def test_the_family_of_components():
    assert function_names(16) == ["+1", "-1", "pattern 2", "pattern 4", "pattern 8", "pattern 16"]
    assert n_components(16) == 6 * GRID.size and n_components(1) == 2 * GRID.size
    np.testing.assert_array_equal(GRID, [0.5, 0.25, 0.125, 0.0625, 0.03125])
    w = component_weights(16)
    assert w.shape == (1, n_components(16)) and np.isclose(w.sum(), 1.0)
    assert np.isclose(w[0, : 2 * GRID.size].sum(), CONSTANT_WEIGHT)
    assert np.isclose(component_weights(4, n_classes=3).sum(), 1.0)
    assert np.isclose(component_weights(1).sum(), 1.0)
    np.testing.assert_array_equal(component_bets(4)[: 2 * GRID.size], np.tile(GRID, 2))
    fine = np.arange(8.0).reshape(1, 8)
    f = to_functions(fine)
    assert f[0, 0] == fine.sum() and list(f[0, 1:3]) == [6.0, 22.0] and list(f[0, 7:]) == list(fine[0])
    np.testing.assert_array_equal(to_functions(fine.T[None], axis=-2)[0, :, 0], f[0])


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 15),
    st.floats(0, 1),
    st.integers(0, 1),
    st.integers(0, GRID.size - 1),
    st.sampled_from([1.0, -1.0]),
)
def test_every_chord_lies_below_the_log_factor(k, u, y, i, g):
    """The chord over a row's bin is below log(1 + lambda g (y - p)) (both logs are concave in p)."""
    K = 16
    p = (k + u) / K if k or u else 0.0
    p = min(max(p, k / K), (k + 1) / K)
    tab = chord_tables(K)
    j = i if g > 0 else GRID.size + i
    s = 2 * y
    chord = tab[k, s, j] + tab[k, s + 1, j] * p
    exact = np.log1p(GRID[i] * g * (y - p))
    assert chord <= exact + 1e-15
    assert exact - chord <= GRID[i] ** 2 / (1 - GRID[i]) ** 2 / (8 * K * K) + 1e-15  # the chord's error bound


def test_log_factors_are_the_sum_of_the_rows_chords():
    rng = np.random.default_rng(1)
    K, B, nb = 8, 60, 3
    p = rng.uniform(size=B * nb)
    p[:4] = [0.0, 1.0, 0.5, 0.125]
    y = (rng.uniform(size=B * nb) < p).astype(np.int8)
    sums = block_sums(y, p, K, B)
    stats = np.stack(
        [
            sums["count"] - sums["positives"],
            sums["sum_p"] - sums["sum_p_pos"],
            sums["positives"],
            sums["sum_p_pos"],
        ],
        axis=-1,
    )[:, None].astype(float)
    signs = rng.choice([-1.0, 0.0, 1.0], size=(nb, 1, 2 * K - 1))
    got = log_factors(stats, signs, K)
    ids = BinnedStatistics(n_bins=K).bin_ids(p)
    tab = chord_tables(K)
    G = GRID.size
    for j in range(nb):
        rows = slice(j * B, (j + 1) * B)
        for c in range(n_components(K)):
            f, i = divmod(c, G)
            total = 0.0
            for pr, yr, kr in zip(p[rows], y[rows], ids[rows], strict=True):
                if f < 2:
                    g = 1.0 if f == 0 else -1.0
                else:
                    level = f - 1
                    g = signs[j, 0, (1 << level) - 1 + (kr >> (int(np.log2(K)) - level))]
                if g == 0:
                    continue
                col = i if g > 0 else G + i
                total += tab[kr, 2 * yr, col] + tab[kr, 2 * yr + 1, col] * pr
            assert np.isclose(got[j, 0, c], total, rtol=1e-12, atol=1e-12)


def test_patterns_follow_the_memory_with_a_dead_zone():
    S = np.array([[[10.0, -10.0, 1.0]]] * 3)
    Q = np.array([[[4.0, 4.0, 4.0]]] * 3)
    mem, tail = memory_sums(np.zeros((1, 2, 1, 3)), S, Q, None)
    signs = pattern_signs(mem)
    assert np.all(signs[0] == 0)  # the first block has no past
    np.testing.assert_array_equal(signs[1, 0], [1.0, -1.0, 0.0])  # 1 is within 1.5 standard errors
    # a block's pattern does not depend on the block itself
    S2 = S.copy()
    S2[2] = -S2[2]
    np.testing.assert_array_equal(pattern_signs(memory_sums(np.zeros((1, 2, 1, 3)), S2, Q, None)[0]), signs)
    short, _ = memory_sums(np.zeros((1, 2, 1, 3)), S, Q, 1)
    np.testing.assert_array_equal(short[2, 0], S[1])  # memory=1: the block before only


def test_block_sums_follow_the_right_closed_bins_of_binned_statistics():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=3000)
    p[:40] = np.repeat([0.0, 1.0, 0.5, 0.0625, 0.9375, np.nextafter(0.5, 1), 1e-300, 0.25], 5)
    y = (rng.uniform(size=3000) < p).astype(np.int8)
    s = block_sums(y, p, 16, 1000)
    ids = BinnedStatistics(n_bins=16).bin_ids(p)
    for b in range(3):
        sl = slice(b * 1000, (b + 1) * 1000)
        x = y[sl] - p[sl]
        np.testing.assert_array_equal(s["count"][b], np.bincount(ids[sl], minlength=16))
        np.testing.assert_array_equal(s["positives"][b], np.bincount(ids[sl], weights=y[sl], minlength=16))
        np.testing.assert_allclose(
            s["sum_p"][b], np.bincount(ids[sl], weights=p[sl], minlength=16), atol=1e-12
        )
        np.testing.assert_allclose(
            s["sum_p_pos"][b], np.bincount(ids[sl], weights=p[sl] * y[sl], minlength=16), atol=1e-12
        )
        np.testing.assert_allclose(sum_x(s)[b], np.bincount(ids[sl], weights=x, minlength=16), atol=1e-12)
        np.testing.assert_allclose(
            s["sum_x2"][b], np.bincount(ids[sl], weights=x * x, minlength=16), atol=1e-12
        )


# ---------------------------------------------------------------------------------------------
# the supermartingale property, the tolerance, the lower bound
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["test", "detect"])
def test_the_expected_capital_is_at_most_one_by_enumeration(mode):
    """Every label sequence of a short stream, weighted by its null probability: the test
    statistic's mean is at most the weight of the starts so far, sum_{j <= t} pi_j <= 1, at every
    block boundary (the chords are below the martingale's factors, by a little), and E[M_t] <= t
    for the e-detector (M_t - t is a supermartingale)."""
    p = np.array([0.0, 0.2, 0.9, 0.5, 1.0, 0.35, 0.7, 0.05, 0.6])  # p exactly 0 and 1 included
    mean_e = np.zeros(3)
    mean_m = np.zeros(3)
    for labels in itertools.product([0, 1], repeat=p.size):
        y = np.array(labels)
        prob = np.prod(np.where(y == 1, p, 1 - p))
        if prob == 0:
            continue
        m = CalibrationMonitor(block_size=3, n_bins=2, mode=mode).update(y, p)
        mean_e += prob * np.exp(m._block("log_e"))
        if mode == "detect":
            mean_m += prob * np.exp(m._block("log_m"))
    started = np.cumsum(np.exp(start_weights(np.arange(1, 4))))
    assert np.all(mean_e <= started) and np.all(mean_e > 0.99 * started)  # tight: the chords lose little
    if mode == "detect":
        assert np.all(mean_m <= np.arange(1, 4))


@pytest.mark.parametrize("shape", ["bias", "overconfident"])
def test_the_capital_at_the_true_error_is_a_supermartingale(shape):
    """Streams whose l1 calibration error is exactly eps: every component's mean capital at
    eps stays at most one (over 300 seeded streams, within noise), and the best is near one
    (so the test could fail); at eps / 2 the same capitals grow."""
    eps, n = 0.03, 3_000
    caps, half = [], []
    for seed in range(300):
        if shape == "bias":
            rng = np.random.default_rng(seed)
            p = rng.uniform(0.1, 0.9, size=n)
            y = rng.uniform(size=n) < p + eps
        else:
            y, p = _overconfident(n, seed, eps)
        m = CalibrationMonitor(tolerance=eps, block_size=100).update(y, p)
        L0 = m._engine.path.log_capital[0]
        caps.append(np.exp(L0 - n * np.log1p(m._engine.bets * eps)))
        half.append(np.exp(L0 - n * np.log1p(m._engine.bets * eps / 2)))
    caps, half = np.array(caps), np.array(half)
    mean, se = caps.mean(axis=0), caps.std(axis=0, ddof=1) / np.sqrt(caps.shape[0])
    assert np.all(mean <= 1.0 + 3 * se), (mean, se)
    assert mean.max() > 0.25  # tight enough that the test could fail
    assert half.mean(axis=0).max() > 1.5


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0, 0.99), st.floats(0, 0.99))
def test_the_mixture_decreases_in_the_tolerance(seed, a, b):
    rng = np.random.default_rng(seed)
    C = n_components(16)
    L0 = rng.normal(0, 30, size=(5, 2, C))
    rows = rng.integers(1, 10_000, size=5).astype(float)
    logw = np.log(component_weights(16, 2))
    lo, hi = sorted((a, b))
    bets = component_bets(16)
    assert np.all(
        log_e_at(L0, rows, logw, bets, np.full(5, hi)) <= log_e_at(L0, rows, logw, bets, np.full(5, lo))
    )


@pytest.mark.parametrize("ce", [0.02, 0.2])
def test_the_bound_is_the_largest_tolerance_whose_process_crossed(ce):
    """Newton's steps from the left reach the root that a fine bisection finds, and stay on its
    crossing side (checked at the block that set the bound)."""
    rng = np.random.default_rng(1)
    p = 0.1 + 0.8 * rng.beta(2, 2, size=100_000)
    y = rng.uniform(size=p.size) < p - ce
    full = CalibrationMonitor(tolerance=0.01).update(y, p)
    lcb = full._block("lcb")
    j = int(np.flatnonzero(lcb == lcb[-1])[0])  # the block whose r set the final bound
    B = full.block_size
    m = CalibrationMonitor(tolerance=0.01).update(y[: (j + 1) * B], p[: (j + 1) * B])
    assert m.calibration_error_lcb_ == full.calibration_error_lcb_
    eng, path = m._engine, m._engine.path
    D0, drows, base = bound_terms(
        path.log_capital[None],
        np.array([path.n_blocks * float(eng.block_size)]),
        path.start_log_capital0[None],
        path.start_block[None],
        start_weights(path.start_block + 1)[None],
        eng.logw,
        eng.block_size,
    )
    bets = np.concatenate([eng.bets, eng.bets])
    thr = -np.log(m.alpha)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if log_e_at(D0, drows, base, bets, np.array([mid]))[0] >= thr else (lo, mid)
    assert m.calibration_error_lcb_ <= lo + 1e-15 and m.calibration_error_lcb_ >= lo - 1e-9
    assert log_e_at(D0, drows, base, bets, np.array([m.calibration_error_lcb_]))[0] >= thr
    assert 0.7 * ce < m.calibration_error_lcb_ < ce


def test_the_start_weights_sum_to_one():
    pi = np.exp(start_weights(np.arange(1, 2_000_001)))
    assert pi[0] == 0.5 and np.all(np.diff(pi) < 0)
    tail = 0.5 * np.log(2) / np.log(2_000_001)  # the telescoping sum's remainder
    assert np.isclose(pi.sum() + tail, 1.0, rtol=1e-9)


def test_the_monitor_is_monotone_in_the_tolerance():
    """The same stream at several tolerances: the same eps = 0 capitals, evidence decreasing in
    eps, alarms nested, and the bound the same whatever the tolerance (to its precision)."""
    y, p = _overconfident(40_000, 3, 0.04)
    monitors = [CalibrationMonitor(tolerance=t).update(y, p) for t in (0.0, 0.01, 0.02, 0.03, 0.05)]
    base = monitors[0]._engine.path.log_capital
    assert all(np.array_equal(m._engine.path.log_capital, base) for m in monitors)
    paths = np.array([m._block("log_e") for m in monitors])
    assert np.all(np.diff(paths, axis=0) <= 0)
    alarms = [m.alarm_ for m in monitors]
    assert alarms == sorted(alarms, reverse=True) and alarms[0] and not alarms[-1]
    lcbs = np.array([m.calibration_error_lcb_ for m in monitors])
    assert np.ptp(lcbs) <= 2e-9 and 0.01 < lcbs[0] < 0.04
    for m in monitors:  # the alarm and the bound agree
        assert m.alarm_ == (m.calibration_error_lcb_ >= m.tolerance)


def test_tolerance_zero_is_the_exact_test():
    """At tolerance 0 the capital is the product of 1 + lambda g (y - p): no penalty, the exact
    null; any alarm of a tolerance monitor is also one of the exact test, at the same block or
    later."""
    y, p = _stream(30_000, 5, shift=0.03)
    exact = CalibrationMonitor().update(y, p)
    tol = CalibrationMonitor(tolerance=0.01).update(y, p)
    assert np.array_equal(exact._engine.path.log_capital, tol._engine.path.log_capital)
    assert exact.alarm_ and tol.alarm_ and exact.alarm_at_ <= tol.alarm_at_
    assert np.all(tol._block("log_e") <= exact._block("log_e"))
    rows = 30_000 // exact.block_size * exact.block_size
    assert np.array_equal(
        tol._engine.path.log_capital - rows * np.log1p(tol._engine.bets * 0.01),
        exact._engine.path.log_capital - rows * np.log1p(exact._engine.bets * 0.01),
    )


def test_type_one_error_of_the_tolerance_test_in_a_quick_simulation():
    """Streams with calibration error 0, eps / 2 and eps at tolerance eps: the share that ever
    alarms stays within the binomial noise of alpha (the full simulation is benchmarks/monitor.py)."""
    eps, n_streams, bound = 0.02, 120, 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / 120)
    for ce in (0.0, eps / 2, eps):
        alarms = sum(
            CalibrationMonitor(tolerance=eps).update(*_overconfident(20_000, 1_000 + s, ce)).alarm_
            for s in range(n_streams)
        )
        assert alarms / n_streams <= bound, (ce, alarms)


def test_coverage_of_the_lower_bound_in_a_quick_simulation():
    """The bound ever exceeds the true calibration error in at most alpha of the streams (within
    noise), and it is informative: most streams bound the error away from zero."""
    ce, n_streams = 0.04, 120
    above, informative = 0, 0
    for s in range(n_streams):
        m = CalibrationMonitor().update(*_overconfident(20_000, 5_000 + s, ce))
        lcb = m.history_["calibration_error_lcb"].to_numpy()
        above += bool(np.any(lcb > ce))
        informative += lcb[-1] > ce / 4
    assert above / n_streams <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / n_streams)
    assert informative >= 0.9 * n_streams


def test_power_against_a_bias_an_overconfidence_and_a_region():
    for seed in range(5):
        y, p = _stream(30_000, seed, shift=-0.05)
        assert CalibrationMonitor().update(y, p).alarm_
        y, p = _overconfident(30_000, seed, 0.03)  # a mean residual of 0: invisible to a bias test
        m = CalibrationMonitor(tolerance=0.01).update(y, p)
        assert abs(np.mean(y - p)) < 0.01 and m.alarm_
    rng = np.random.default_rng(3)
    p = rng.uniform(size=60_000)
    q = np.where((p > 0.7) & (p <= 0.9), p - 0.1, p)  # the truth is lower in [0.7, 0.9]
    m = CalibrationMonitor().update(rng.uniform(size=p.size) < q, p)
    assert m.alarm_
    bands = m.reliability_bands()
    inside = (bands["bin_low"] >= 0.75) & (bands["bin_high"] <= 0.875)
    assert np.all(bands.loc[inside, "upper"] < 0) and np.all(bands.loc[inside, "above_tolerance"])
    assert np.all(bands.loc[bands["bin_high"] <= 0.625, "lower"] < 0)


# ---------------------------------------------------------------------------------------------
# the e-detector: false alarms in rows, the change
# ---------------------------------------------------------------------------------------------
def test_false_alarm_rows_sets_the_detectors_threshold():
    m = CalibrationMonitor(mode="detect", block_size=500)
    assert np.isclose(m._detect_threshold(), 10_000_000 / 500 / 0.05)  # the default: 1e7 rows at 1 - alpha
    m.set_params(false_alarm_rows=2e8)
    assert np.isclose(m._detect_threshold(), 4e5)
    m.set_params(false_alarm_rows=(1_000_001, 0.01))  # rows rounded up to blocks
    assert np.isclose(m._detect_threshold(), 2_001 / 0.01)
    y, p = _stream(2_000, 0)
    m.update(y, p)
    assert np.isclose(m.false_alarm_rows_, 2_001 * 500 / 0.01)
    assert "once every 100,050,000 rows" in m.guarantee()
    with pytest.raises(ValueError, match="false_alarm_rows is for mode='detect'"):
        CalibrationMonitor(false_alarm_rows=1e8).update(y, p)
    with pytest.raises(ValueError, match="shorter than one block"):
        CalibrationMonitor(mode="detect", false_alarm_rows=10).update(y, p)
    with pytest.raises(ValueError, match="as a pair"):
        CalibrationMonitor(mode="detect", false_alarm_rows=(1e6, 1.5)).update(y, p)


def test_the_average_run_length_to_a_false_alarm_is_at_least_the_guarantee():
    """A detector guaranteeing a false alarm at most every 30 blocks on average, run on calibrated
    streams until it alarms: the mean run length is at least 30 blocks."""
    runs = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        p = rng.beta(2, 2, size=300 * 100)
        y = rng.uniform(size=p.size) < p
        m = CalibrationMonitor(mode="detect", block_size=100, false_alarm_rows=3_000).update(y, p)
        runs.append(m.alarm_at_ / 100 if m.alarm_ else 300)
    assert np.mean(runs) >= 30, np.mean(runs)


def test_detect_mode_locates_the_change_and_follows_it_after_a_long_calibrated_stretch():
    errors, delays = [], []
    for seed in range(5):
        y0, p0 = _stream(200_000, seed)
        y1, p1 = _stream(40_000, 100 + seed, shift=-0.05)
        m = CalibrationMonitor(mode="detect").update(y0, p0)
        assert not m.alarm_
        m.update(y1, p1)
        assert m.alarm_ and m.alarm_at_ > 200_000
        errors.append(abs(m.change_at_ - 200_000))
        delays.append(m.alarm_at_ - 200_000)
    assert np.median(errors) <= 1_000, errors
    assert np.median(delays) <= 4_000, delays


# ---------------------------------------------------------------------------------------------
# invariance to batching, state
# ---------------------------------------------------------------------------------------------
SPLITS = [
    [20_000],
    [1, 998, 1, 1, 999, 18_000],
    [499, 500, 501, 18_500],
    [7] * 100 + [19_300],
    [12_345, 7_655],
]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"tolerance": 0.01},
        {"mode": "detect"},
        {"mode": "detect", "memory": 3, "block_size": 700, "n_bins": 4, "tolerance": 0.02},
    ],
)
def test_every_path_does_not_depend_on_how_the_rows_are_split(params):
    y, p = _stream(20_000, 0, shift=-0.05)
    t = np.arange(20_000) * 60.0
    reference = None
    for split in SPLITS:
        m = CalibrationMonitor(**params)
        s = 0
        for size in split:
            m.update(y[s : s + size], p[s : s + size], time=t[s : s + size])
            s += size
        got = (_path(m), m._block("lcb"), _state_text(m))
        if reference is None:
            reference = got
            assert m.alarm_ and m.calibration_error_lcb_ > 0  # the bound is exercised
        else:  # bit for bit: the paths, the bound and the whole state
            assert np.array_equal(got[0][0], reference[0][0])
            assert np.array_equal(got[0][1], reference[0][1], equal_nan=True)
            assert np.array_equal(got[1], reference[1])
            assert got[2] == reference[2]


def test_batching_invariance_for_classwise_and_top_label_monitors():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4), size=9_000)
    y = np.array([rng.choice(4, p=row) for row in P])
    for multiclass in ("top-label", "classwise"):
        a = CalibrationMonitor(multiclass=multiclass, block_size=400).update(y, P)
        b = CalibrationMonitor(multiclass=multiclass, block_size=400)
        for s in range(0, 9_000, 1_234):
            b.update(y[s : s + 1_234], P[s : s + 1_234])
        assert _state_text(a) == _state_text(b)


@pytest.mark.parametrize(
    "params",
    [{}, {"mode": "detect", "tolerance": 0.01, "false_alarm_rows": (1e6, 0.01)}, {"multiclass": "classwise"}],
)
def test_state_round_trip_through_json_resumes_bit_for_bit(params):
    rng = np.random.default_rng(2)
    if params.get("multiclass"):
        p = rng.dirichlet(np.ones(3), size=30_000)
        y = np.array([rng.choice(3, p=row) for row in p])
    else:
        y, p = _stream(30_000, 2, shift=0.03)
    t = pd.date_range("2024-01-01", periods=30_000, freq="min").to_numpy()
    whole = CalibrationMonitor(model_name="churn", **params).update(y, p, time=t)
    first = CalibrationMonitor(model_name="churn", **params).update(y[:12_345], p[:12_345], time=t[:12_345])
    first.source_ = {"files": [{"path": "logs/a.parquet", "rows": 12_345}], "watermark": "2024-01-09"}
    state = json.loads(json.dumps(first.get_state(), allow_nan=False))
    assert state["kind"] == "skcal.CalibrationMonitor" and state["state_version"] == 2
    assert state["params"]["model_name"] == "churn" and state["params"]["mode"] == params.get("mode", "test")
    assert state["params"]["tolerance"] == params.get("tolerance", 0.0)
    resumed = CalibrationMonitor.from_state(state)
    assert resumed.n_buffered_ == 345 and resumed.n_seen_ == 12_345
    assert resumed.source_ == first.source_ and resumed.source_ is not first.source_
    assert _state_text(resumed) == _state_text(first)
    resumed.source_ = {}
    resumed.update(y[12_345:], p[12_345:], time=t[12_345:])
    assert _state_text(resumed) == _state_text(whole)
    pd.testing.assert_frame_equal(resumed.history_, whole.history_)
    assert resumed.get_params() == whole.get_params()


def test_source_must_be_json():
    m = CalibrationMonitor().update(*_stream(1_000, 0))
    assert m.source_ == {} and m.get_state()["source"] == {}
    m.source_ = {"bad": np.float64(np.nan)}
    with pytest.raises(ValueError, match="JSON types"):
        m.get_state()
    m.source_ = ["not a dict"]
    with pytest.raises(ValueError, match="must be a dict"):
        m.get_state()


def test_from_state_rejects_other_versions_and_broken_states():
    m = CalibrationMonitor().update(*_stream(3_000, 0))
    state = m.get_state()
    with pytest.raises(ValueError, match="version 1; this skcal reads version 2.*start a new one"):
        CalibrationMonitor.from_state({**state, "state_version": 1})
    with pytest.raises(ValueError, match="version"):
        CalibrationMonitor.from_state({**state, "state_version": 99})
    with pytest.raises(ValueError, match="kind"):
        CalibrationMonitor.from_state({"kind": "other"})
    broken = json.loads(json.dumps(state))
    broken["blocks"]["log_e"]["shape"] = [5]
    with pytest.raises(ValueError, match="log_e"):
        CalibrationMonitor.from_state(broken)
    broken = json.loads(json.dumps(state))
    del broken["carry"]
    with pytest.raises(ValueError, match="malformed"):
        CalibrationMonitor.from_state(broken)
    broken = json.loads(json.dumps(state))
    broken["segments"][0]["extra"] = 1
    with pytest.raises(ValueError, match="unknown key"):
        CalibrationMonitor.from_state(broken)


def test_check_compatible_names_every_mismatch():
    m = CalibrationMonitor.from_state(
        CalibrationMonitor(tolerance=0.02, model_name="p", labels=["no", "yes"])
        .update(["yes", "no"] * 600, [0.6, 0.4] * 600)
        .get_state()
    )
    assert m.check_compatible(tolerance=0.02, model_name="p", labels=["no", "yes"], mode=None) is m
    with pytest.raises(ValueError) as info:
        m.check_compatible(model_name="q", tolerance=0.05, labels=["n", "y"], mode="test")
    text = str(info.value)
    assert "model_name 'p' but this run has 'q'" in text
    assert "tolerance 0.02 but this run has 0.05" in text
    assert "labels ['no', 'yes'] but this run has ['n', 'y']" in text and "mode 'test'" not in text
    with pytest.raises(TypeError, match="unknown parameters"):
        m.check_compatible(column="p")


def test_the_state_says_which_rows_wait_in_the_buffer():
    y, p = _stream(2_250, 1)
    m = CalibrationMonitor(block_size=500).update(y, p)
    st = m.get_state()
    assert m.n_blocks_ == 4 and m.n_buffered_ == 250
    assert st["buffer"]["p"]["shape"] == [1, 250]
    np.testing.assert_array_equal(np.array(st["buffer"]["p"]["data"]), p[2_000:])


# ---------------------------------------------------------------------------------------------
# segments
# ---------------------------------------------------------------------------------------------
def test_a_new_segment_starts_again_and_keeps_the_history():
    y0, p0 = _stream(20_250, 1, shift=-0.08)
    y1, p1 = _stream(20_000, 2)
    t = pd.date_range("2024-01-01", periods=40_250, freq="min").to_numpy()
    m = CalibrationMonitor(tolerance=0.01).update(y0, p0, time=t[:20_250])
    assert m.alarm_ and m.n_buffered_ == 250
    first_alarm, first_lcb = m.alarm_at_, m.calibration_error_lcb_
    m.new_segment("v2")
    assert not m.alarm_ and m.calibration_error_lcb_ == 0.0 and m.n_buffered_ == 0 and m.segment_ == 1
    m.update(y1, p1, time=t[20_250:])
    assert not m.alarm_ and m.n_seen_ == 40_250
    fresh = CalibrationMonitor(tolerance=0.01).update(y1, p1)
    h = m.history_
    B = m.block_size
    assert len(h) == 20_000 // B + 20_000 // B and list(h["segment"].unique()) == [0, 1]
    seg1 = h[h["segment"] == 1]
    assert seg1["rows"].iloc[0] == 20_250 + B and seg1["rows"].iloc[-1] == 40_250
    np.testing.assert_array_equal(
        seg1["log10_e_value"].to_numpy(), fresh.history_["log10_e_value"].to_numpy()
    )
    segs = m.segments_
    assert list(segs["label"]) == [None, "v2"] and list(segs["dropped"]) == [0, 250]
    assert segs["alarm_at"].iloc[0] == first_alarm and segs["alarm_at"].iloc[1] is None
    assert segs["calibration_error_lcb"].iloc[0] == first_lcb and list(segs["first_row"]) == [0, 20_250]
    assert segs["time_start"].iloc[1] == pd.Timestamp(t[20_250])
    page = render_html(m)
    assert "<h2>Segments</h2>" in page and "Current segment: v2" in page
    # the state round trip and the batching invariance hold across segments
    again = CalibrationMonitor.from_state(json.loads(json.dumps(m.get_state())))
    assert _state_text(again) == _state_text(m)
    pieces = CalibrationMonitor(tolerance=0.01)
    for s in range(0, 20_250, 4_000):
        pieces.update(
            y0[s : min(s + 4_000, 20_250)], p0[s : min(s + 4_000, 20_250)], time=t[s : min(s + 4_000, 20_250)]
        )
    pieces.new_segment("v2")
    for s in range(0, 20_000, 3_333):
        e = min(s + 3_333, 20_000)
        pieces.update(y1[s:e], p1[s:e], time=t[20_250 + s : 20_250 + e])
    assert _state_text(pieces) == _state_text(m)


def test_a_segment_label_before_any_row_names_the_first_segment():
    m = CalibrationMonitor().new_segment("v1").update(*_stream(1_000, 0))
    assert list(m.segments_["label"]) == ["v1"] and m.segment_ == 0
    with pytest.raises(ValueError, match="label must be a string"):
        m.new_segment(3)


# ---------------------------------------------------------------------------------------------
# threads, log10 evidence
# ---------------------------------------------------------------------------------------------
def test_update_is_safe_from_several_threads():
    """Eight threads feed the same batches concurrently: with the lock, no batch is lost and the
    result is the sequential one (identical batches, so the order does not matter)."""
    y, p = _stream(700, 4, shift=-0.05)
    n_threads, n_batches = 8, 30
    m = CalibrationMonitor(block_size=100)
    start = threading.Barrier(n_threads)

    def feed():
        start.wait()
        for _ in range(n_batches):
            m.update(y, p)

    threads = [threading.Thread(target=feed) for _ in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    sequential = CalibrationMonitor(block_size=100)
    for _ in range(n_threads * n_batches):
        sequential.update(y, p)
    assert m.n_seen_ == 700 * n_threads * n_batches
    assert _state_text(m) == _state_text(sequential)


def test_a_strongly_miscalibrated_stream_keeps_its_evidence_in_log10_without_warnings():
    rng = np.random.default_rng(0)
    p = np.full(200_000, 0.95)
    y = rng.uniform(size=p.size) < 0.05
    t = pd.date_range("2024-01-01", periods=p.size, freq="s").to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for mode in ("test", "detect"):
            m = CalibrationMonitor(mode=mode).update(y, p, time=t)
            st = m.status()
            assert st["log10_evidence"] > 5_000 and np.isfinite(st["log10_evidence"])
            assert np.isfinite(st["log10_e_value"]) and st["pvalue"] == 0.0 and st["e_value"] == np.inf
            assert 0.85 < st["calibration_error_lcb"] <= 0.9
            h = m.history_
            described = [c for c in h if not c.startswith("residual_")]  # empty bins' residuals are NaN
            assert np.isfinite(h["log10_evidence"]).all() and not h[described].isna().any().any()
            page = render_html(m)
            assert "nan" not in page.replace("nan-", "").lower().split("<img")[0]
            assert "10^" in page
            json.dumps(m.get_state(), allow_nan=False)


# ---------------------------------------------------------------------------------------------
# bad input leaves the state unchanged; an empty batch is a no-op
# ---------------------------------------------------------------------------------------------
def _started():
    y, p = _stream(2_500, 3)
    t = np.arange(2_500.0)
    return CalibrationMonitor().update(y, p, time=t), t[-1]


@pytest.mark.parametrize(
    "batch, match",
    [
        (lambda last: ([1, 0, 1], [0.2, 0.5, 0.7], [last + 1, last + 3, last + 2]), "time goes backwards"),
        (
            lambda last: ([1, 0], [0.2, 0.5], [last - 5, last + 1]),
            "time goes backwards.*before the last time",
        ),
        (lambda last: ([1, 2, 0], [0.2, 0.5, 0.7], [last + 1] * 3), "y holds labels outside"),
        (
            lambda last: ([1, np.nan, 0], [0.2, 0.5, 0.7], [last + 1] * 3),
            r"y has missing labels \(NaN\): row 1",
        ),
        (lambda last: ([1, 0, 0], [0.2, np.nan, 0.7], [last + 1] * 3), "p must hold probabilities"),
        (lambda last: ([1, 0, 0], [0.2, 1.2, 0.7], [last + 1] * 3), r"p must hold probabilities in \[0, 1\]"),
        (lambda last: ([1, 0, 0], [0.2, -1e-9, 0.7], [last + 1] * 3), "row 1 of this batch"),
        (lambda last: ([1, 0], [0.2, 0.5, 0.7], [last + 1] * 3), "y has 2 rows but p has 3"),
        (lambda last: ([1, 0, 0], [0.2, 0.5, 0.7], [last + 1, np.nan, last + 2]), "time must be finite"),
        (lambda last: ([1, 0, 0], [0.2, 0.5, 0.7], None), "time is missing"),
        (lambda last: ([1, 0, 0], [[0.2, 0.3, 0.5]] * 3, [last + 1] * 3), "monitor started with binary"),
        (lambda last: (["a", "b", "a"], [0.2, 0.5, 0.7], [last + 1] * 3), "labels="),
        (lambda last: ([1, 0, 0], ["0.2", "0.5", "0.7"], [last + 1] * 3), "p must hold numbers"),
    ],
)
def test_bad_input_gets_a_clear_error_and_leaves_the_state_unchanged(batch, match):
    m, last = _started()
    before = _state_text(m)
    attrs = (m.n_seen_, m.log10_evidence_, m.pvalue_, m.n_buffered_, m.calibration_error_lcb_)
    y, p, t = batch(last)
    with pytest.raises(ValueError, match=match):
        m.update(y, p, time=t)
    assert _state_text(m) == before
    assert (m.n_seen_, m.log10_evidence_, m.pvalue_, m.n_buffered_, m.calibration_error_lcb_) == attrs


def test_equal_times_are_fine():
    y, p = _stream(3_000, 2)
    t = np.repeat(np.arange(3.0), 1_000)
    m = (
        CalibrationMonitor()
        .update(y[:1_500], p[:1_500], time=t[:1_500])
        .update(y[1_500:], p[1_500:], time=t[1_500:])
    )
    assert m.n_seen_ == 3_000


def test_labels_outside_a_named_label_set_are_an_error():
    m = CalibrationMonitor(labels=["no", "yes"]).update(["yes", "no"] * 600, [0.6, 0.4] * 600)
    before = _state_text(m)
    with pytest.raises(ValueError, match="not in labels"):
        m.update(["yes", "maybe"], [0.5, 0.5])
    assert _state_text(m) == before
    P = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match="outside range"):
        CalibrationMonitor().update([0, 1, 3, 2], P)


def test_an_empty_batch_is_a_no_op():
    m, last = _started()
    before = _state_text(m)
    m.update([], [], time=[])
    m.update(np.array([], dtype=bool), np.empty(0))
    assert _state_text(m) == before
    fresh = CalibrationMonitor().update([], [])
    assert not hasattr(fresh, "n_seen_")
    with pytest.raises(ValueError, match="has not seen any rows"):
        fresh.get_state()


def test_the_callers_arrays_are_not_modified():
    y, p = _stream(3_500, 4)
    y2, p2 = y.copy(), p.copy()
    CalibrationMonitor(tolerance=0.01, mode="detect").update(y, p)
    assert np.array_equal(y, y2) and np.array_equal(p, p2)


# ---------------------------------------------------------------------------------------------
# scikit-learn conventions
# ---------------------------------------------------------------------------------------------
def test_scikit_learn_conventions():
    m = CalibrationMonitor(alpha=0.01, mode="detect", tolerance=0.02)
    assert m.get_params()["alpha"] == 0.01 and m.get_params()["tolerance"] == 0.02
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "n_seen_")
    m.set_params(block_size=1000)
    assert m.block_size == 1000
    with pytest.raises(TypeError):
        CalibrationMonitor(0.05)  # keyword-only
    # the constraints are checked on update, not in __init__ (which only stores)
    with pytest.raises(InvalidParameterError, match="alpha"):
        CalibrationMonitor(alpha=1.5).update([1], [0.5])
    with pytest.raises(InvalidParameterError, match="tolerance"):
        CalibrationMonitor(tolerance=1.0).update([1], [0.5])
    with pytest.raises(InvalidParameterError, match="tolerance"):
        CalibrationMonitor(tolerance=-0.01).update([1], [0.5])
    with pytest.raises(ValueError, match="power of two"):
        CalibrationMonitor(n_bins=10).update([1], [0.5])
    import pickle

    fitted = CalibrationMonitor().update(*_stream(1_200, 0))
    back = pickle.loads(pickle.dumps(fitted))
    assert _state_text(back) == _state_text(fitted)
    back.update(*_stream(600, 1))  # the lock is rebuilt after unpickling


def test_parameters_are_fixed_once_rows_were_seen():
    y, p = _stream(2_000, 0)
    m = CalibrationMonitor().update(y, p)
    m.set_params(tolerance=0.1)
    with pytest.raises(ValueError, match="tolerance 0.0 -> 0.1"):
        m.update(y, p)
    m.set_params(tolerance=0.0)
    m.update(y, p)
    assert m.n_seen_ == 4_000


# ---------------------------------------------------------------------------------------------
# the history, the measures, multiclass, time
# ---------------------------------------------------------------------------------------------
def test_history_holds_the_measures_of_each_block():
    y, p = _stream(2_500, 9, shift=0.02)
    m = CalibrationMonitor(block_size=500).update(y, p)
    h = m.history_
    assert list(h.index) == list(range(5))
    assert {
        "rows",
        "segment",
        "log10_evidence",
        "log10_e_value",
        "e_value",
        "p_value",
        "calibration_error_lcb",
        "above",
        "ece",
        "brier",
        "mean_residual",
    } <= set(h)
    assert [f"residual_{j}" for j in range(16)] == [c for c in h if c.startswith("residual_")]
    assert list(h["rows"]) == [500, 1000, 1500, 2000, 2500]
    for b in range(5):
        rows = slice(b * 500, (b + 1) * 500)
        assert np.isclose(h["ece"].iloc[b], binned_ece(y[rows], p[rows], n_bins=16), atol=1e-12)
        assert np.isclose(h["brier"].iloc[b], np.mean((y[rows] - p[rows]) ** 2))
        assert np.isclose(h["mean_residual"].iloc[b], np.mean(y[rows] - p[rows]))
    np.testing.assert_allclose(
        h["p_value"], np.minimum(1, 1 / np.maximum.accumulate(np.maximum(h["e_value"], 1)))
    )
    assert h["p_value"].iloc[-1] == m.pvalue_ and np.isclose(h["log10_evidence"].iloc[-1], m.log10_evidence_)


def test_top_label_monitor_is_the_binary_monitor_of_confidence_and_correctness():
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(5) * 0.5, size=8_000)
    y = np.array([rng.choice(5, p=row) for row in P])
    top = CalibrationMonitor().update(y, P)
    binary = CalibrationMonitor().update(y == P.argmax(1), P.max(1))
    assert np.array_equal(_path(top)[0], _path(binary)[0])
    names = [f"c{i}" for i in range(5)]
    named = CalibrationMonitor(labels=names).update(np.array(names)[y], P)
    assert np.array_equal(_path(named)[0], _path(binary)[0])


def test_classwise_evidence_is_the_average_of_the_classes():
    rng = np.random.default_rng(12)
    P = rng.dirichlet(np.ones(3), size=6_000)
    y = np.array([rng.choice(3, p=row) for row in P])
    cw = CalibrationMonitor(multiclass="classwise").update(y, P)
    per = [np.exp(_path(CalibrationMonitor().update(y == c, P[:, c]))[0]) for c in range(3)]
    np.testing.assert_allclose(np.exp(_path(cw)[0]), np.mean(per, axis=0), rtol=1e-10)
    h = cw.history_
    assert {"ece[0]", "ece[2]", "residual[1]_15", "brier"} <= set(h)
    bands = cw.reliability_bands()
    assert list(bands["class"].unique()) == [0, 1, 2]


def test_binary_predict_proba_and_label_names():
    y, p = _stream(3_000, 13)
    a = CalibrationMonitor().update(y, p)
    b = CalibrationMonitor(labels=["neg", "pos"]).update(
        np.where(y, "pos", "neg"), np.column_stack([1 - p, p])
    )
    assert np.array_equal(_path(a)[0], _path(b)[0])
    assert list(b.classes_) == ["neg", "pos"]


def test_datetimes_are_recorded_per_block_and_timezones_are_read_as_utc():
    y, p = _stream(3_000, 14, shift=0.2)
    t = pd.Series(pd.date_range("2024-03-01", periods=3_000, freq="s", tz="Europe/Paris"))
    m = CalibrationMonitor().update(y, p, time=t)
    h = m.history_
    assert h["time_start"].iloc[0] == pd.Timestamp("2024-02-29 23:00:00")
    assert h["time_end"].iloc[-1] == pd.Timestamp("2024-02-29 23:49:59")
    st = m.status()
    assert st["alarm"] and st["alarm_time"].startswith("2024-02-29T23:") and st["last_time"].endswith("49:59")
    assert np.isclose(st["rows_per_day"], 3_000 / (2_999 / 86_400))
    with pytest.raises(ValueError, match="time is numeric but this monitor received datetime"):
        m.update([1], [0.5], time=[1e12])


def test_the_guarantee_in_rows_and_in_time():
    y, p = _stream(10_000, 1)
    t = pd.date_range("2024-01-01", periods=10_000, freq="min").to_numpy()  # 1,440 rows a day
    m = CalibrationMonitor(mode="detect", false_alarm_rows=1e8).update(y, p, time=t)
    text = m.status()["guarantee"]
    assert "once every 100,000,000 rows" in text and "1,440 rows per day" in text
    assert f"once every {1e8 / (10_000 / (9_999 / 1_440)):,.0f} days" in text
    assert "probability at most 0.1" in text  # 1e7 rows against a run length of 1e8
    assert "however long the stream runs" in CalibrationMonitor(tolerance=0.01).guarantee()


# ---------------------------------------------------------------------------------------------
# the time-uniform reliability bands (the per-bin version of the tolerance test)
# ---------------------------------------------------------------------------------------------
def test_superlevel_sets_and_hulls():
    lo, hi = _superlevel(np.array([-1.0]), np.array([0.0]), np.array([0.25]))  # 1/4 - m^2 >= 0
    assert np.allclose([lo[0], hi[0]], [-0.5, 0.5])
    lo, hi = _superlevel(np.array([0.0, 0.0, 0.0]), np.array([2.0, -2.0, 0.0]), np.array([-1.0, -1.0, -1.0]))
    assert (lo[0], hi[0]) == (0.5, np.inf) and (lo[1], hi[1]) == (-np.inf, -0.5) and lo[2] > hi[2]
    low, high = _hull_outside(np.array([-2.0]), np.array([-0.3]), np.array([0.4]), np.array([2.0]))
    assert (low[0], high[0]) == (-0.3, 0.4)
    low, high = _hull_outside(np.array([-2.0]), np.array([0.1]), np.array([0.0]), np.array([2.0]))
    assert np.isnan(low[0]) and np.isnan(high[0])


def test_bands_cover_the_mean_residual_at_all_times_in_a_stationary_stream():
    """Each bin's residual has a known mean; the share of streams in which some band of the
    diagram misses its mean at some block boundary is at most alpha (within noise)."""
    misses = 0
    n_streams = 60
    edges = np.linspace(0, 1, 5)
    grid = np.linspace(0, 1, 200_001)[1:]
    truth = np.array(
        [
            np.mean(np.clip(g + np.where(g > 0.5, -0.05, 0.05), 0, 1) - g)
            for g in (grid[(grid > a) & (grid <= b)] for a, b in zip(edges[:-1], edges[1:], strict=True))
        ]
    )
    for seed in range(n_streams):
        rng = np.random.default_rng(500 + seed)
        B, nb = 200, 40
        p = rng.uniform(size=B * nb)
        q = np.clip(p + np.where(p > 0.5, -0.05, 0.05), 0, 1)
        y = rng.uniform(size=p.size) < q
        sums = block_sums(y, p, 4, B)
        for j in range(1, nb + 1):
            lo, hi = residual_bands(sums["count"][:j], sum_x(sums)[:j], sums["sum_x2"][:j], 0.05 / 4)
            if np.any((truth < lo) | (truth > hi)):
                misses += 1
                break
    assert misses / n_streams <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / n_streams)


def test_bands_shrink_hold_the_sample_mean_and_bound_each_bins_error():
    y, p = _stream(200_000, 21, shift=0.03, beta=(1, 1))
    m = CalibrationMonitor(tolerance=0.01).update(y, p)
    early = m.reliability_bands(stop=10_000)
    late = m.reliability_bands()
    assert np.all((late["upper"] - late["lower"]) < (early["upper"] - early["lower"]))
    assert np.all((late["lower"] <= late["mean_residual"]) & (late["mean_residual"] <= late["upper"]))
    inner = late.iloc[:15]  # the truth is 0.03 in every bin but the last (clipped at 1)
    assert np.all((inner["lower"] <= 0.03) & (0.03 <= inner["upper"]))
    assert (late["lower"] > 0).sum() >= 12  # the shift is visible bin by bin
    np.testing.assert_allclose(late["error_lcb"], np.maximum(0, np.maximum(late["lower"], -late["upper"])))
    assert np.all(inner["error_lcb"] <= 0.03) and late["above_tolerance"].sum() >= 10
    assert m.status()["bins_above_tolerance"] == late["above_tolerance"].sum()


# ---------------------------------------------------------------------------------------------
# the docstrings follow numpydoc (the codes tests/test_docstrings.py checks for skcal.__all__)
# ---------------------------------------------------------------------------------------------
def _monitor_public_paths():
    paths = [
        "skcal.monitor._page.render_html",
        "skcal.monitor._prometheus.render_prometheus",
        "skcal.monitor._monitor.CalibrationMonitor",
    ]
    for attr, value in vars(CalibrationMonitor).items():
        if not attr.startswith("_") and (callable(value) or isinstance(value, (classmethod, staticmethod))):
            paths.append(f"skcal.monitor._monitor.CalibrationMonitor.{attr}")
    return paths


@pytest.mark.parametrize("path", _monitor_public_paths())
def test_numpydoc(path):
    validate = pytest.importorskip("numpydoc.validate", reason="numpydoc is not installed").validate
    from test_docstrings import CODES

    errors = [f"{code}: {msg}" for code, msg in validate(path)["errors"] if CODES.match(code)]
    assert not errors, f"{path}:\n" + "\n".join(errors)
