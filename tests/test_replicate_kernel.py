"""The compiled walk of the replicates' running sums (skcal/_replicate_kernel.py) and its numpy path."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skcal.stats import _cutoff
from skcal.stats._cutoff import replicate_running_extremes, replicate_running_sum_error

kernel = pytest.importorskip(
    "skcal._replicate_kernel", reason="the compiled walk needs numba (the fast extra)"
)


def _direct(A):
    S = np.cumsum(A, axis=0)
    return S.max(axis=0), S.min(axis=0)


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 300), st.integers(1, 9)),
        elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    )
)
def test_both_paths_equal_the_cumulative_sum(A):
    hi, lo = _direct(A)
    kh, kl = kernel.running_sum_extremes(np.ascontiguousarray(A))
    # the compiled walk adds in row order, as numpy's cumsum does: the same numbers bit for bit
    np.testing.assert_array_equal(kh, hi)
    np.testing.assert_array_equal(kl, lo)
    nh, nl = replicate_running_extremes(A, use_kernel=False)
    scale = np.abs(A).sum(axis=0) + 1.0
    np.testing.assert_allclose(nh, hi, rtol=0, atol=1e-12 * scale.max())
    np.testing.assert_allclose(nl, lo, rtol=0, atol=1e-12 * scale.max())


def test_tiles_of_the_numpy_path_carry_the_running_sum():
    # a walk longer than one numpy tile (2^16 / R values), whose extremes lie in a later tile
    rng = np.random.default_rng(0)
    A = rng.standard_normal((70_000, 2)) + np.array([0.01, -0.01])
    hi, lo = _direct(A)
    nh, nl = replicate_running_extremes(A, use_kernel=False)
    np.testing.assert_allclose(nh, hi, rtol=1e-12)
    np.testing.assert_allclose(nl, lo, rtol=1e-12)
    assert replicate_running_extremes(A[:, :1].copy(), use_kernel=False)[0].shape == (1,)


def test_non_contiguous_and_float32_input_is_read_correctly():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((50, 6))
    hi, lo = _direct(A[:, ::2])
    kh, kl = replicate_running_extremes(A[:, ::2], use_kernel=True)
    np.testing.assert_array_equal(kh, hi)
    np.testing.assert_array_equal(kl, lo)
    A32 = A.astype(np.float32)
    kh, _ = replicate_running_extremes(A32, use_kernel=True)
    np.testing.assert_allclose(kh, _direct(A32.astype(np.float64))[0], rtol=1e-12)


def test_the_error_is_the_same_without_numba(monkeypatch):
    rng = np.random.default_rng(2)
    D, R = 1 << 17, 8  # above the size from which the kernel is used
    resid = rng.standard_normal((D, R)) * 1e-3
    weight = rng.uniform(1e5, 2e5, R)
    weight[3] = 0.0
    for measure in ("cutoff", "ks"):
        with_kernel = replicate_running_sum_error(resid, weight, measure)
        monkeypatch.setattr(_cutoff, "compiled", lambda *args, **kwargs: None)
        without = replicate_running_sum_error(resid, weight, measure)
        monkeypatch.undo()
        assert np.isnan(with_kernel[3]) and np.isnan(without[3])
        np.testing.assert_allclose(with_kernel, without, rtol=1e-11, equal_nan=True)
        hi, lo = _direct(resid)
        num = np.maximum(np.abs(hi), np.abs(lo)) if measure == "ks" else np.maximum(hi, 0) - np.minimum(lo, 0)
        ok = weight > 0
        np.testing.assert_allclose(with_kernel[ok], num[ok] / weight[ok], rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# the Poisson weight stream
# ---------------------------------------------------------------------------------------------
def test_the_compiled_weights_equal_numpy_bit_for_bit():
    from skcal.stats import _bootstrap

    keys = _bootstrap.replicate_keys(123, np.arange(5))
    # 2e6 rows a replicate: about 1,200 weights fall in the 8 slots that need the binary search
    rows = np.arange(2_000_000, dtype=np.int64)
    fast = _bootstrap._weights_from_keys(keys, rows, use_kernel=True)
    slow = _bootstrap._weights_from_keys(keys, rows, use_kernel=False)
    assert fast.dtype == slow.dtype == np.uint8 and fast.shape == (5, rows.size)
    np.testing.assert_array_equal(fast, slow)
    table = _bootstrap._TABLE
    assert (table == 255).sum() == 8  # the ambiguous slots the search resolves


def test_the_compiled_weights_take_any_rows_in_any_order():
    from skcal.stats import _bootstrap

    keys = _bootstrap.replicate_keys(2**64 - 1, np.array([0, 7, 199]))
    rows = np.random.default_rng(3).integers(0, 2**40, 100_000)[::-1]  # reversed: not contiguous
    np.testing.assert_array_equal(
        _bootstrap._weights_from_keys(keys, rows, use_kernel=True),
        _bootstrap._weights_from_keys(keys, rows, use_kernel=False),
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**64 - 1), st.lists(st.integers(0, 2**62), min_size=1, max_size=50))
def test_the_public_stream_is_the_same_either_way(seed, rows):
    from skcal.stats import _bootstrap, poisson_weights

    keys = _bootstrap.replicate_keys(seed, np.arange(3))
    np.testing.assert_array_equal(
        poisson_weights(seed, range(3), rows), _bootstrap._weights_from_keys(keys, rows, use_kernel=True)
    )
    np.testing.assert_array_equal(
        _bootstrap._weights_from_keys(keys, rows, use_kernel=False),
        _bootstrap._weights_from_keys(keys, rows, use_kernel=True),
    )


# ---------------------------------------------------------------------------------------------
# smCE's isotonic L1 costs
# ---------------------------------------------------------------------------------------------
def _numpy_costs(monkeypatch, X, w):
    from skcal.stats import _lipschitz

    monkeypatch.setattr(_lipschitz, "compiled", lambda *args, **kwargs: None)
    try:
        return _lipschitz.isotonic_l1_costs(X, w)
    finally:
        monkeypatch.undo()


def _brute_isotonic_l1(x, w):
    # an optimal non-decreasing fit takes its values among the data values: dynamic programme
    # over (index, value) with prefix minima, O(n v)
    vals = np.unique(x)
    best = np.zeros(vals.size)
    for xi, wi in zip(x, w, strict=True):
        best = np.minimum.accumulate(best) + wi * np.abs(xi - vals)
    return best.min()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_the_compiled_isotonic_costs_equal_numpy_and_the_optimum(R, n, seed, per_row):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((R, n)) * 2) / 2  # ties on purpose
    w = rng.uniform(0.1, 2.0, (R, n) if per_row else n)
    fast = kernel.isotonic_l1_costs(X, np.broadcast_to(w, X.shape))
    W = np.broadcast_to(w, X.shape)
    brute = np.array([_brute_isotonic_l1(X[r], W[r]) for r in range(R)])
    np.testing.assert_allclose(fast, brute, rtol=1e-12, atol=1e-12)


def test_isotonic_costs_take_the_compiled_path_and_agree_with_numpy(monkeypatch):
    from skcal.stats._lipschitz import isotonic_l1_costs

    rng = np.random.default_rng(4)
    X = np.cumsum(rng.standard_normal((16, 2048)), axis=1)
    X[:, 100:300] = X[:, 100:101]  # a long run of one value
    w = rng.uniform(0.01, 1.0, 2048)
    fast = isotonic_l1_costs(X, w)  # 2^15 values: the compiled path
    slow = _numpy_costs(monkeypatch, X, w)
    np.testing.assert_allclose(fast, slow, rtol=1e-13)
    one = isotonic_l1_costs(X[0].copy(), w)
    assert isinstance(one, float) and one == pytest.approx(slow[0], rel=1e-13)
    flat = np.zeros((2, 20_000))  # one distinct value a row: cost 0
    assert (isotonic_l1_costs(flat, np.ones(20_000)) == 0).all()


def test_smce_is_the_same_without_numba(monkeypatch):
    from skcal import smooth_calibration_error
    from skcal.stats import _lipschitz

    rng = np.random.default_rng(5)
    p = rng.uniform(0, 1, 50_000)
    y = (rng.uniform(0, 1, p.size) < p**1.2).astype(int)
    fast = smooth_calibration_error(y, p)
    monkeypatch.setattr(_lipschitz, "compiled", lambda *args, **kwargs: None)
    slow = smooth_calibration_error(y, p)
    assert fast == pytest.approx(slow, rel=1e-12)
