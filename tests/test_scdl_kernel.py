"""SCDL's compiled soft-bin deposit (skcal/_scdl_kernel.py) against its numpy path."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.scdl import scdl_curve, scdl_score
from skcal.stats import _scdl

pytest.importorskip("skcal._scdl_kernel", reason="the compiled deposit needs numba (the fast extra)")


def _numpy_deposit(p, y, w, m, monkeypatch):
    monkeypatch.setattr(_scdl, "compiled", lambda *args, **kwargs: None)
    out = _scdl.binary_node_deposit(p, y, w, m)
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("m", [1, 2, 7, 1024])
def test_the_compiled_deposit_equals_the_numpy_one(weighted, m, monkeypatch):
    rng = np.random.default_rng(m + weighted)
    n = (1 << 16) + 17  # above the size from which the kernel is used, not a multiple of a chunk
    p = rng.beta(2, 2, n)
    p[:5] = [0.0, 1.0, 0.5, 1.0 - 1e-17, 1.0 / m]  # the ends, a node, p = 1 in the last cell
    y = (rng.uniform(size=n) < p).astype(np.float64)
    w = rng.uniform(0, 3, n) if weighted else None
    W, A = _scdl.binary_node_deposit(p, y, w, m)
    W0, A0 = _numpy_deposit(p, y, w, m, monkeypatch)
    np.testing.assert_allclose(W, W0, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(A, A0, rtol=1e-12, atol=1e-9)
    total = n if w is None else w.sum()
    assert W.sum() == pytest.approx(total, rel=1e-12)
    assert A.sum() == pytest.approx(y.sum() if w is None else (w * y).sum(), rel=1e-12)


def test_scdl_is_the_same_without_numba(monkeypatch):
    rng = np.random.default_rng(5)
    n = 200_000
    p = rng.beta(2, 2, n)
    y = (rng.uniform(size=n) < np.clip(p + 0.05, 0, 1)).astype(np.int64)
    w = rng.uniform(0.5, 2.0, n)
    with_kernel = [scdl_score(y, p), scdl_score(y, p, sample_weight=w)]
    monkeypatch.setattr(_scdl, "compiled", lambda *args, **kwargs: None)
    without = [scdl_score(y, p), scdl_score(y, p, sample_weight=w)]
    np.testing.assert_allclose(with_kernel, without, rtol=1e-10)


@pytest.mark.parametrize("m", [1, 2, 3, 8, 512, 4096])
def test_the_compiled_grid_maxima_equal_scfdl(m):
    """The replicates' ``SCDL_m`` per row: the compiled difference arrays equal scfdl's maxima."""
    from skcal import _scdl_kernel

    rng = np.random.default_rng(m)
    R = 9
    W = rng.uniform(size=(R, m + 1))
    W[:, ::5] = 0.0  # empty bins
    A = W * rng.uniform(size=(R, m + 1))
    A[0] = W[0]  # q = 1
    A[1] = 0.0  # q = 0
    A[2] = W[2] * (np.arange(m + 1) / m)  # q on the grid: the intervals' ends are integers
    pi, a = _scdl.masses_to_moments(W, A, W.sum(axis=1, keepdims=True))
    expected = _scdl.scfdl(pi, a).max(axis=1)
    got = _scdl_kernel.scdl_grid_maxima(np.ascontiguousarray(pi), np.ascontiguousarray(a))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_scdl_replicates_are_the_same_without_numba(monkeypatch):
    from skcal.stats import PoissonBootstrap, ScdlStatistics

    rng = np.random.default_rng(2)
    p = rng.beta(2, 2, 30_000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    fast = PoissonBootstrap(ScdlStatistics(max_bins=1024), n_replicates=12, seed=1).update(y, p).compute()
    monkeypatch.setattr(_scdl, "compiled", lambda *args, **kwargs: None)
    slow = PoissonBootstrap(ScdlStatistics(max_bins=1024), n_replicates=12, seed=1).update(y, p).compute()
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


@pytest.mark.parametrize("numba_loaded", [False, True])
def test_small_inputs_take_the_compiled_deposit_only_where_numba_is_loaded(numba_loaded, monkeypatch):
    """Below 2^16 rows the compiled deposit is used only where numba is imported already (it
    needs no temporaries of n rows); a process without numba keeps numpy's deposit rather than
    pay numba's import. The masses agree either way."""
    import sys

    loaded = []
    real = _scdl.compiled

    def spy(name, **kwargs):
        module = real(name, **kwargs)
        if module is not None:
            loaded.append(True)
        return module

    monkeypatch.setattr(_scdl, "compiled", spy)
    if not numba_loaded:
        monkeypatch.delitem(sys.modules, "numba", raising=False)
    rng = np.random.default_rng(9)
    p = rng.beta(2, 2, 1000)
    y = (rng.uniform(size=p.size) < p).astype(np.float64)
    W, A = _scdl.binary_node_deposit(p, y, None, 128)
    assert loaded == ([True] if numba_loaded else [])
    monkeypatch.undo()
    W0, A0 = _numpy_deposit(p, y, None, 128, monkeypatch)
    np.testing.assert_allclose(W, W0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, A0, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1000, 10_000])
def test_scdl_peaks_within_twice_the_inputs_memory(n):
    """Issue 21's memory target at small sizes, where numba is loaded (as in any process that has
    run a report): the compiled deposit needs no temporaries of n rows and the dyadic search
    frees its temporaries as it goes, so the peak traced memory of a call stays within 2x the
    input's bytes (y int64 and p float64; 26.9 KB against 16 KB at 1e3 rows when written)."""
    import tracemalloc

    from benchmarks._harness import binary_predictions

    y, p = binary_predictions(n, 0)
    scdl_score(y, p)  # numba's kernel compiled or loaded from its cache first
    tracemalloc.start()
    try:
        scdl_score(y, p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 2 * (y.nbytes + p.nbytes), (peak, y.nbytes + p.nbytes)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 3000),
    st.sampled_from(["auto", "theory", None, 2, 16, 256]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["uniform", "rounded", "grid", "constant"]),
)
def test_the_compiled_score_is_the_curves_value_bit_for_bit(n, max_bins, weighted, seed, shape):
    """scdl_score runs the deposit and the whole search in one compiled call where numba is
    loaded; it repeats the numpy search's arithmetic operation for operation, so its value is
    scdl_curve(...).scdl exactly (ties on the grids' nodes, p at 0 and 1, weights, every rule)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if shape == "rounded":
        p = np.round(p, 1)
    elif shape == "grid":
        p = rng.choice([0.0, 0.125, 0.25, 0.5, 0.75, 1.0], size=n)
    elif shape == "constant":
        p = np.full(n, 0.3)
    y = (rng.uniform(size=n) < np.clip(p + 0.15 * np.sin(6 * p), 0, 1)).astype(int)
    w = rng.uniform(0.05, 4.0, n) if weighted else None
    curve = scdl_curve(y, p, max_bins=max_bins, sample_weight=w)
    assert scdl_score(y, p, max_bins=max_bins, sample_weight=w) == curve.scdl
    # the unfloored SCDL_{m*} and the grid too (the value is often the floor 1/m*, which
    # round-off cannot move): the search itself, on the same node masses
    from skcal import _scdl_kernel

    M = int(curve.n_bins[-1])
    yf = y.astype(np.float64)
    W, A = _scdl.binary_node_deposit(p, yf, w, M)
    total = float(n) if w is None else float(w.sum())
    value, m_star, scdl_m = _scdl_kernel.scdl_search(W, A, total, _scdl.TIE_RTOL)
    assert (value, m_star, scdl_m) == (curve.scdl, curve.selected_n_bins, curve.selected_scdl_m)


@pytest.mark.parametrize("numba_loaded", [False, True])
def test_the_score_takes_the_compiled_search_only_where_the_deposit_is_compiled(numba_loaded, monkeypatch):
    import sys

    calls = []
    from skcal import _scdl_kernel

    real = _scdl_kernel.scdl_of_rows

    def spy(*args):
        calls.append(args[3])
        return real(*args)

    monkeypatch.setattr(_scdl_kernel, "scdl_of_rows", spy)
    if not numba_loaded:
        monkeypatch.delitem(sys.modules, "numba", raising=False)
    rng = np.random.default_rng(3)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    value = scdl_score(y, p)
    assert calls == ([128] if numba_loaded else [])
    monkeypatch.undo()
    assert value == scdl_curve(y, p).scdl


# weights whose Kish size T = (sum w)^2 / sum w^2 lies within an ulp of 16 = 4^2, where the "auto"
# rule (the smallest power of two >= 4 sqrt(T)) changes grid; (sum w) ** 2 by C's pow and
# (sum w) * (sum w) differ in the last bit here (found by a review of the compiled search)
_EDGE_WEIGHTS = [
    float.fromhex(h)
    for h in (
        "0x1.eb48f32def1c6p+1", "0x1.67142fb0901e6p+0", "0x1.54925e78f4bc1p+0", "0x1.1da8b0bfb2ed8p+0",
        "0x1.561a75498eb36p-1", "0x1.dfe667d436da1p-1", "0x1.3a61d54ca7cc0p-1", "0x1.19035dc53bd98p+0",
        "0x1.2cffe7e8e6a14p+0", "0x1.7fec691341de3p+0", "0x1.f6362db7a5726p-1", "0x1.8e6ab907a3abdp-1",
        "0x1.368c8bfb535a1p+0", "0x1.31822e9152eadp+0", "0x1.1a9ec202239efp+0", "0x1.7368ca2006fe2p+0",
        "0x1.2c16dd1169481p+0", "0x1.151fba75233f2p+0", "0x1.927f679d21b40p-1", "0x1.08b009c7cf76cp-1",
        "0x1.5a66e8d5c0988p-1",
    )
]


def test_the_effective_size_is_the_same_number_on_every_path():
    """The grid rule compares T with powers of 4, so the function's T and the statistics' T must
    be the same number: with T one ulp apart the compiled score searched up to 32 cells and the
    curve up to 16 (0.03125 against 0.0625), and the curve warned that its statistics' grid was
    too coarse. Both now square by one product."""
    import warnings

    from skcal.stats import ScdlStatistics
    from skcal.stats._base import effective_sample_size

    w = np.array(_EDGE_WEIGHTS)
    p = (np.arange(w.size) % 2).astype(float)
    y = p.astype(int)
    stats = ScdlStatistics().update(y, p, sample_weight=w)
    assert effective_sample_size(w, w.size) == stats.n_effective_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        curve = scdl_curve(y, p, sample_weight=w)
        assert scdl_score(y, p, sample_weight=w) == curve.scdl == stats.compute()
    rng = np.random.default_rng(0)
    for _ in range(300):
        v = rng.uniform(0.1, 4.0, size=int(rng.integers(1, 60)))
        s = ScdlStatistics().update(np.zeros(v.size, int), np.full(v.size, 0.5), sample_weight=v)
        assert effective_sample_size(v, v.size) == s.n_effective_
