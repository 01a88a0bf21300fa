"""skcal.monitor: the test martingale, the e-detector, the bands, batching, state and input (issue 22)."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skcal._compat import InvalidParameterError
from skcal.binned_ece import binned_ece
from skcal.monitor import CalibrationMonitor
from skcal.monitor._bands import _hull_outside, _superlevel, residual_bands
from skcal.monitor._betting import (
    BET_CAP,
    bernstein_log_factors,
    bets,
    function_levels,
    function_weights,
    n_functions,
    product_log_factors,
    psi_e,
    to_functions,
)
from skcal.monitor._blocks import block_sums, fine_ids
from skcal.stats import BinnedStatistics


def _stream(n, seed, shift=0.0, beta=(2, 2)):
    rng = np.random.default_rng(seed)
    p = rng.beta(*beta, size=n)
    y = rng.uniform(size=n) < np.clip(p + shift, 0, 1)
    return y, p


def _path(m):
    return m._block("log_e"), m._block("log_m")


def _state_text(m):
    return json.dumps(m.get_state(), sort_keys=True, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# the bets, the factors, the test functions
# ---------------------------------------------------------------------------------------------
def test_the_family_of_test_functions():
    assert n_functions(16) == 31
    assert function_levels(8) == [(0, 1), (1, 2), (3, 4), (7, 8)]
    w = function_weights(16)
    assert w.shape == (1, 31) and np.isclose(w.sum(), 1.0)
    assert np.isclose(w[0, 0], 1 / 5) and np.isclose(w[0, 15:].sum(), 1 / 5)
    assert np.isclose(function_weights(4, n_classes=3).sum(), 1.0)
    fine = np.arange(8.0).reshape(1, 8)
    f = to_functions(fine)
    assert f[0, 0] == fine.sum() and list(f[0, 1:3]) == [6.0, 22.0] and list(f[0, 7:]) == list(fine[0])


@pytest.mark.parametrize("y", [0, 1])
@pytest.mark.parametrize("p", [0.0, 1e-300, 0.3, 0.5, 1 - 1e-16, 1.0])
@pytest.mark.parametrize("lam", [-BET_CAP, -0.2, 0.0, 0.37, BET_CAP])
def test_every_factor_is_positive_and_the_bernstein_factor_is_below_the_product(y, p, lam):
    x = y - p
    product = 1.0 + lam * x
    assert 0.5 <= product <= 1.5
    bern = np.exp(lam * x - psi_e(abs(lam)) * x * x)
    assert bern > 0
    assert bern <= product * (1 + 1e-15)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=30),
    st.floats(-BET_CAP, BET_CAP),
)
def test_bernstein_block_factor_is_at_most_the_product_of_the_row_factors(rows, lam):
    p = np.array([r[0] for r in rows])
    x = np.array([r[1] for r in rows]) - p
    lf = bernstein_log_factors(np.array(lam), x.sum(), (x * x).sum())
    exact = np.log1p(lam * x).sum()
    assert lf <= exact + 1e-12


def test_bets_are_clipped_and_predictable():
    # extreme past sums still give bets in [-1/2, 1/2]; the first block's bet is 0
    S = np.array([[[1e6, -1e6, 0.0]]] * 3)
    Q = np.array([[[0.0, 0.0, 0.0]]] * 3)
    lam, tail = bets(np.zeros((1, 2, 1, 3)), S, Q, None)
    assert np.all(np.abs(lam) <= BET_CAP) and np.all(lam[0] == 0)
    assert lam[1, 0, 0] == BET_CAP and lam[1, 0, 1] == -BET_CAP
    # a block's bet does not depend on the block itself
    S2 = S.copy()
    S2[2] = -S2[2]
    assert np.array_equal(bets(np.zeros((1, 2, 1, 3)), S2, Q, None)[0], lam)


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
        np.testing.assert_allclose(
            s["sum_p"][b], np.bincount(ids[sl], weights=p[sl], minlength=16), atol=1e-12
        )
        np.testing.assert_allclose(s["sum_x"][b], np.bincount(ids[sl], weights=x, minlength=16), atol=1e-12)
        np.testing.assert_allclose(
            s["sum_x2"][b], np.bincount(ids[sl], weights=x * x, minlength=16), atol=1e-12
        )
    fine = fine_ids(p, 16, 1000)
    np.testing.assert_array_equal(fine % 16, ids)
    np.testing.assert_array_equal(fine // 16, np.repeat(np.arange(3), 1000))


def test_product_log_factors_are_the_log_of_the_row_by_row_product():
    rng = np.random.default_rng(1)
    K, B, nb = 4, 50, 3
    p = rng.uniform(size=B * nb)
    y = rng.uniform(size=B * nb) < p
    lam = rng.uniform(-0.5, 0.5, size=(nb, n_functions(K)))
    got = product_log_factors(fine_ids(p, K, B), y - p, lam, K)
    ids = BinnedStatistics(n_bins=K).bin_ids(p)
    for j in range(nb):
        for off, k in function_levels(K):
            for b in range(k):
                rows = slice(j * B, (j + 1) * B)
                coarse = ids[rows] // (K // k)
                x = (y[rows] - p[rows])[coarse == b]
                assert np.isclose(got[j, off + b], np.log(np.prod(1 + lam[j, off + b] * x)), atol=1e-12)


# ---------------------------------------------------------------------------------------------
# the martingale property
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("capital", ["product", "bernstein"])
@pytest.mark.parametrize("mode", ["test", "detect"])
def test_the_expected_e_value_is_one_exactly_by_enumeration(capital, mode):
    """Every label sequence of a short stream, weighted by its null probability: E[E_t] = 1
    for the product martingale (<= 1 for the Bernstein capital) at every block boundary, and
    E[M_t] <= t for the e-detector (M_t - t is a supermartingale)."""
    p = np.array([0.0, 0.2, 0.9, 0.5, 1.0, 0.35, 0.7, 0.05, 0.6])  # p exactly 0 and 1 included
    n = p.size
    mean_e = np.zeros(3)
    mean_m = np.zeros(3)
    for labels in itertools.product([0, 1], repeat=n):
        y = np.array(labels)
        prob = np.prod(np.where(y == 1, p, 1 - p))
        if prob == 0:
            continue
        m = CalibrationMonitor(block_size=3, n_bins=2, capital=capital, mode=mode, memory=None).update(y, p)
        mean_e += prob * np.exp(m._block("log_e"))
        if mode == "detect":
            mean_m += prob * np.exp(m._block("log_m"))
    if capital == "product":
        np.testing.assert_allclose(mean_e, 1.0, rtol=1e-12)
    else:
        assert np.all(mean_e <= 1.0 + 1e-12) and mean_e[-1] < 1.0
    if mode == "detect":
        assert np.all(mean_m <= np.arange(1, 4) + 1e-12)


@pytest.mark.parametrize("capital", ["product", "bernstein"])
def test_mean_e_value_under_the_null_is_at_most_one_over_seeded_streams(capital):
    # p from real-looking confidences and from an adaptive rule reading the past labels
    ends = []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        m = CalibrationMonitor(block_size=100, capital=capital)
        p_next = rng.beta(5, 2, size=100)
        for _ in range(10):
            y = rng.uniform(size=100) < p_next
            m.update(y, p_next)
            p_next = np.clip(rng.beta(5, 2, size=100) + 0.3 * (y.mean() - 0.7), 0, 1)
        ends.append(m.e_value_)
    ends = np.array(ends)
    se = ends.std(ddof=1) / np.sqrt(ends.size)
    assert ends.mean() <= 1.0 + 3 * se, (ends.mean(), se)


# ---------------------------------------------------------------------------------------------
# type-I control, power, change location
# ---------------------------------------------------------------------------------------------
def test_type_one_error_in_a_quick_simulation():
    """200 calibrated streams of 20,000 rows (half with p chosen from past labels): the share
    that ever alarms at alpha = 0.05 stays within the binomial noise of 0.05 (the full
    simulation, 1,000 streams of 1e5 rows, is benchmarks/monitor.py)."""
    alarms = 0
    n_streams = 200
    for seed in range(n_streams):
        rng = np.random.default_rng(10_000 + seed)
        m = CalibrationMonitor(block_size=500)
        if seed % 2:
            y, p = _stream(20_000, seed, beta=(0.7, 0.7))
            m.update(y, p)
        else:
            p_next = rng.uniform(size=500)
            for _ in range(40):  # adversarial: move p toward the recent label rate, anywhere in [0, 1]
                y = rng.uniform(size=500) < p_next
                m.update(y, p_next)
                p_next = np.clip(rng.uniform(size=500) * 0.5 + 0.5 * y.mean(), 0, 1)
        alarms += m.alarm_
    rate = alarms / n_streams
    # one-sided binomial bound: 0.05 + 2.33 sqrt(0.05 * 0.95 / 200) = 0.086
    assert rate <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / n_streams), rate


@pytest.mark.parametrize("capital", ["bernstein", "product"])
def test_power_against_a_known_shift(capital):
    found = 0
    for seed in range(10):
        y, p = _stream(30_000, seed, shift=0.05)
        m = CalibrationMonitor(capital=capital).update(y, p)
        found += m.alarm_ and m.alarm_at_ <= 30_000
    assert found == 10


def test_miscalibration_confined_to_one_region_is_found_by_the_fine_bins():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=60_000)
    q = np.where((p > 0.7) & (p <= 0.9), p - 0.1, p)  # the truth is lower in [0.7, 0.9]
    y = rng.uniform(size=p.size) < q
    m = CalibrationMonitor().update(y, p)
    assert m.alarm_
    # after the stream, the test function with the most weighted evidence is a bin of [0.7, 0.9]
    score = (m._engine.logw + m._engine.path.log_capital).ravel()
    f = int(np.argmax(score))
    off, k = max((o, kk) for o, kk in function_levels(16) if o <= f)
    lo, hi = (f - off) / k, (f - off + 1) / k
    assert k >= 4 and lo >= 0.6 and hi <= 1.0, (f, lo, hi)
    bands = m.reliability_bands()
    inside = (bands["bin_low"] >= 0.75) & (bands["bin_high"] <= 0.875)
    assert np.all(bands.loc[inside, "upper"] < 0) and np.all(
        bands.loc[bands["bin_high"] <= 0.625, "lower"] < 0
    )


def test_detect_mode_locates_the_change():
    errors = []
    for seed in range(5):
        y0, p0 = _stream(50_000, seed)
        y1, p1 = _stream(50_000, 100 + seed, shift=0.06)
        m = CalibrationMonitor(mode="detect", alpha=1e-3).update(y0, p0)
        assert not m.alarm_
        m.update(y1, p1)
        assert m.alarm_ and m.alarm_at_ > 50_000
        errors.append(abs(m.change_at_ - 50_000))
    assert np.median(errors) <= 3_000, errors


def test_detect_alarms_only_after_the_change_in_most_streams_and_resets_its_bets():
    # memory="auto" forgets: a detector that saw 200,000 calibrated rows still reacts quickly
    y0, p0 = _stream(200_000, 7)
    y1, p1 = _stream(40_000, 8, shift=0.05)
    slow = CalibrationMonitor(memory=None, mode="detect", alpha=1e-3).update(y0, p0).update(y1, p1)
    fast = CalibrationMonitor(mode="detect", alpha=1e-3).update(y0, p0).update(y1, p1)
    assert fast.alarm_ and fast.alarm_at_ > 200_000
    assert slow.alarm_at_ is None or fast.alarm_at_ <= slow.alarm_at_


# ---------------------------------------------------------------------------------------------
# invariance to batching, state
# ---------------------------------------------------------------------------------------------
SPLITS = [
    [20_000],
    [1, 998, 1, 1, 999, 18_000],
    [999, 1000, 1001, 17_000],
    [7] * 100 + [19_300],
    [12_345, 7_655],
]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"capital": "product"},
        {"mode": "detect"},
        {"mode": "detect", "memory": 3, "block_size": 700, "n_bins": 4},
    ],
)
def test_the_e_value_path_does_not_depend_on_how_the_rows_are_split(params):
    y, p = _stream(20_000, 0, shift=0.01)
    t = np.arange(20_000) * 60.0
    reference = None
    for split in SPLITS:
        m = CalibrationMonitor(**params)
        s = 0
        for size in split:
            m.update(y[s : s + size], p[s : s + size], time=t[s : s + size])
            s += size
        got = (_path(m), _state_text(m))
        if reference is None:
            reference = got
        else:  # bit for bit: the paths and the whole state
            assert np.array_equal(got[0][0], reference[0][0])
            assert np.array_equal(got[0][1], reference[0][1], equal_nan=True)
            assert got[1] == reference[1]


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
    "params", [{}, {"capital": "product", "mode": "detect"}, {"multiclass": "classwise"}]
)
def test_state_round_trip_through_json_resumes_bit_for_bit(params):
    rng = np.random.default_rng(2)
    if params.get("multiclass"):
        p = rng.dirichlet(np.ones(3), size=30_000)
        y = np.array([rng.choice(3, p=row) for row in p])
    else:
        y, p = _stream(30_000, 2, shift=0.03)
    t = pd.date_range("2024-01-01", periods=30_000, freq="min").to_numpy()
    whole = CalibrationMonitor(**params).update(y, p, time=t)
    first = CalibrationMonitor(**params).update(y[:12_345], p[:12_345], time=t[:12_345])
    state = json.loads(json.dumps(first.get_state(), allow_nan=False))
    assert state["kind"] == "skcal.CalibrationMonitor" and state["state_version"] == 1
    resumed = CalibrationMonitor.from_state(state)
    assert resumed.n_buffered_ == 345 and resumed.n_seen_ == 12_345
    assert _state_text(resumed) == _state_text(first)
    resumed.update(y[12_345:], p[12_345:], time=t[12_345:])
    assert _state_text(resumed) == _state_text(whole)
    pd.testing.assert_frame_equal(resumed.history_, whole.history_)
    assert resumed.get_params() == whole.get_params()


def test_from_state_rejects_other_versions_and_broken_states():
    m = CalibrationMonitor().update(*_stream(3_000, 0))
    state = m.get_state()
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


def test_the_state_says_which_rows_wait_in_the_buffer():
    y, p = _stream(2_500, 1)
    m = CalibrationMonitor().update(y, p)
    st = m.get_state()
    assert m.n_blocks_ == 2 and m.n_buffered_ == 500
    assert st["buffer"]["p"]["shape"] == [1, 500]
    np.testing.assert_array_equal(np.array(st["buffer"]["p"]["data"]), p[2_000:])


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
    attrs = (m.n_seen_, m.e_value_, m.pvalue_, m.n_buffered_)
    y, p, t = batch(last)
    with pytest.raises(ValueError, match=match):
        m.update(y, p, time=t)
    assert _state_text(m) == before
    assert (m.n_seen_, m.e_value_, m.pvalue_, m.n_buffered_) == attrs


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
    CalibrationMonitor(capital="product").update(y, p)
    assert np.array_equal(y, y2) and np.array_equal(p, p2)


# ---------------------------------------------------------------------------------------------
# scikit-learn conventions
# ---------------------------------------------------------------------------------------------
def test_scikit_learn_conventions():
    m = CalibrationMonitor(alpha=0.01, mode="detect")
    assert m.get_params()["alpha"] == 0.01
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "n_seen_")
    m.set_params(block_size=500)
    assert m.block_size == 500
    with pytest.raises(TypeError):
        CalibrationMonitor(0.05)  # keyword-only
    # the constraints are checked on update, not in __init__ (which only stores)
    bad = CalibrationMonitor(alpha=1.5)
    with pytest.raises(InvalidParameterError, match="alpha"):
        bad.update([1], [0.5])
    with pytest.raises(ValueError, match="power of two"):
        CalibrationMonitor(n_bins=10).update([1], [0.5])
    with pytest.raises(InvalidParameterError, match="capital"):
        CalibrationMonitor(capital="exact").update([1], [0.5])


def test_parameters_are_fixed_once_rows_were_seen():
    y, p = _stream(2_000, 0)
    m = CalibrationMonitor().update(y, p)
    m.set_params(block_size=10)
    with pytest.raises(ValueError, match="block_size 1000 -> 10"):
        m.update(y, p)
    m.set_params(block_size=1000)
    m.update(y, p)
    assert m.n_seen_ == 4_000


# ---------------------------------------------------------------------------------------------
# the history, the measures, multiclass, time
# ---------------------------------------------------------------------------------------------
def test_history_holds_the_measures_of_each_block():
    y, p = _stream(5_000, 9, shift=0.02)
    m = CalibrationMonitor().update(y, p)
    h = m.history_
    assert list(h.index) == list(range(5))
    assert {"rows", "e_value", "log_e_value", "p_value", "above", "ece", "brier", "mean_residual"} <= set(h)
    assert [f"residual_{j}" for j in range(16)] == [c for c in h if c.startswith("residual_")]
    assert list(h["rows"]) == [1000, 2000, 3000, 4000, 5000]
    for b in range(5):
        rows = slice(b * 1000, (b + 1) * 1000)
        assert np.isclose(h["ece"].iloc[b], binned_ece(y[rows], p[rows], n_bins=16), atol=1e-12)
        assert np.isclose(h["brier"].iloc[b], np.mean((y[rows] - p[rows]) ** 2))
        assert np.isclose(h["mean_residual"].iloc[b], np.mean(y[rows] - p[rows]))
    np.testing.assert_allclose(
        h["p_value"], np.minimum(1, 1 / np.maximum.accumulate(np.maximum(h["e_value"], 1)))
    )
    assert h["p_value"].iloc[-1] == m.pvalue_ and np.isclose(h["e_value"].iloc[-1], m.e_value_)


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
    assert h["time_end"].iloc[2] == pd.Timestamp("2024-02-29 23:49:59")
    st = m.status()
    assert st["alarm"] and st["alarm_time"].startswith("2024-02-29T23:") and st["last_time"].endswith("49:59")
    with pytest.raises(ValueError, match="time is numeric but this monitor received datetime"):
        m.update([1], [0.5], time=[1e12])


# ---------------------------------------------------------------------------------------------
# the time-uniform reliability bands
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
    for seed in range(n_streams):
        rng = np.random.default_rng(500 + seed)
        B, nb = 200, 40
        p = rng.uniform(size=B * nb)
        bias = np.where(p > 0.5, -0.05, 0.05)
        q = np.clip(p + bias, 0, 1)
        y = rng.uniform(size=p.size) < q
        sums = block_sums(y, p, 4, B)
        # the true mean residual of each bin: E[q - p | bin]
        edges = np.linspace(0, 1, 5)
        grid = np.linspace(0, 1, 200_001)[1:]
        truth = np.array(
            [
                np.mean(np.clip(g + np.where(g > 0.5, -0.05, 0.05), 0, 1) - g)
                for g in (grid[(grid > a) & (grid <= b)] for a, b in zip(edges[:-1], edges[1:], strict=True))
            ]
        )
        for j in range(1, nb + 1):
            lo, hi = residual_bands(sums["count"][:j], sums["sum_x"][:j], sums["sum_x2"][:j], 0.05 / 4)
            if np.any((truth < lo) | (truth > hi)):
                misses += 1
                break
    assert misses / n_streams <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / n_streams)


def test_bands_shrink_and_hold_the_sample_mean():
    y, p = _stream(200_000, 21, shift=0.03, beta=(1, 1))
    m = CalibrationMonitor().update(y, p)
    early = m.reliability_bands(stop=10_000)
    late = m.reliability_bands()
    assert np.all((late["upper"] - late["lower"]) < (early["upper"] - early["lower"]))
    assert np.all((late["lower"] <= late["mean_residual"]) & (late["mean_residual"] <= late["upper"]))
    inner = late.iloc[:15]  # the truth is 0.03 in every bin but the last (clipped at 1)
    assert np.all((inner["lower"] <= 0.03) & (0.03 <= inner["upper"]))
    assert (late["lower"] > 0).sum() >= 12  # the shift is visible bin by bin


# ---------------------------------------------------------------------------------------------
# the docstrings follow numpydoc (the codes tests/test_docstrings.py checks for skcal.__all__)
# ---------------------------------------------------------------------------------------------
def _monitor_public_paths():
    paths = ["skcal.monitor._page.render_html", "skcal.monitor._monitor.CalibrationMonitor"]
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
