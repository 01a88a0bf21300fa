"""Two-pass mergeable statistics of the polynomial CE2 / CE1 estimators."""

import time

import numpy as np
import pytest
from _stats_helpers import assert_stats_close, chunked, chunkings
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.ce2 import ce1_score, ce2_details, ce2_score
from skcal.chebyshev import ChebyshevMoments, ChebyshevRidge, auto_degree
from skcal.stats import CE1Statistics, CE2PlugInStatistics, CE2Statistics, from_state
from skcal.votes import Snapshots


def _data(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0, 1, n)
    m[rng.uniform(size=n) < 0.1] = 1.0  # scores on the edges, and ties
    m[rng.uniform(size=n) < 0.1] = 0.0
    s2 = rng.uniform(0, 0.25, n)
    s2[: n // 5] = 0.25
    S = np.column_stack([m, s2])
    f = np.clip(m + rng.normal(0, 0.1, n), 0, 1)
    Y = (rng.uniform(size=(n, 3)) < f[:, None]).astype(float)
    Y[rng.uniform(size=n) < 0.3, 2] = np.nan  # rows with 2 votes
    w = rng.choice([0.0, 1.0, 0.5, 2.0], n)
    w[:3] = 1.0
    return S, Y, w


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    weighted=st.booleans(),
    basis=st.sampled_from(["tensor", "total"]),
    data=st.data(),
)
def test_ce2_two_passes_chunked_equal_in_memory(seed, weighted, basis, data):
    n = 80
    S, Y, w = _data(n, seed)
    w = w if weighted else None
    make = lambda: CE2Statistics(degree=3, alpha=1e-6, basis=basis)  # noqa: E731
    merged = chunked(make, (Y, S), w, data.draw(chunkings(n)), data)
    whole = make().update(Snapshots(Y), S, sample_weight=w)
    assert_stats_close(merged.stats_, whole.stats_)
    state = merged.get_state()
    assert set(state["arrays"]) == {"M", "AtB", "tt", "sum_weight", "sum_weight_sq", "n_samples"}
    merged = from_state(state)
    plug = chunked(merged.plug_in, (Y, S), w, data.draw(chunkings(n)), data)
    plug = from_state(plug.get_state())
    ref = ce2_details(Snapshots(Y), S, degree=3, alpha=1e-6, basis=basis, sample_weight=w)
    t1, t2 = plug.terms()
    assert t1 == pytest.approx(ref.term1, rel=1e-9, abs=1e-12)
    assert t2 == pytest.approx(ref.term2, rel=1e-9, abs=1e-12)
    ref_score = ce2_score(Snapshots(Y), S, degree=3, alpha=1e-6, basis=basis, sample_weight=w)
    assert plug.compute() == pytest.approx(ref_score, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), labels=st.booleans(), data=st.data())
def test_ce1_two_passes_chunked_equal_in_memory(seed, labels, data):
    n = 60
    S, Y, w = _data(n, seed)
    y = (Y[:, 0] > 0).astype(int) if labels else Y
    m = S[:, 0]
    make = lambda: CE1Statistics(degree=5, alpha=1e-8)  # noqa: E731
    merged = chunked(make, (y, m), w, data.draw(chunkings(n)), data)
    assert_stats_close(merged.stats_, make().update(y, m, sample_weight=w).stats_)
    plug = chunked(merged.plug_in, (y, m), w, data.draw(chunkings(n)), data)
    assert plug.compute() == pytest.approx(ce1_score(y, m, degree=5, alpha=1e-8, sample_weight=w), rel=1e-9)


def test_in_memory_path_goes_through_the_statistics(monkeypatch):
    """ce2_score at a fixed degree (d <= n) is computed by the statistics objects."""
    S, Y, _ = _data(300, 1)
    calls = []
    orig = CE2PlugInStatistics._sums
    monkeypatch.setattr(CE2PlugInStatistics, "_sums", lambda self, *a: calls.append(1) or orig(self, *a))
    ce2_score(Snapshots(Y), S, degree=4)
    ce1_score(Snapshots(Y), S, degree=4)
    assert len(calls) == 2


def test_auto_degree_counts_effective_sample_size():
    """Zero weights are dropped rows for degree='auto' (issue 13)."""
    S, Y, _ = _data(3000, 2)
    w = np.ones(3000)
    w[1000:] = 0.0
    kept = slice(0, 1000)
    a = ce2_details(Snapshots(Y), S, sample_weight=w, bandwidth=1 / 16)
    b = ce2_details(Snapshots(Y[kept]), S[kept], bandwidth=1 / 16)
    assert a.degree == b.degree == auto_degree(1000, 1 / 16)
    assert a.ce2 == pytest.approx(b.ce2, rel=1e-9)
    y = (Y[:, 0] > 0).astype(int)
    assert ce1_score(y, S, sample_weight=w) == pytest.approx(ce1_score(y[kept], S[kept]), rel=1e-9)
    # Kish: weights 1 and 3 on halves of 2000 rows -> (4000)^2 / (1000 + 9000) = 1600 rows
    w2 = np.repeat([1.0, 3.0], 1000)
    st_ = CE2Statistics(degree=1).update(Snapshots(Y[:2000]), S[:2000], sample_weight=w2)
    assert st_.effective_sample_size() == pytest.approx(1600.0, rel=1e-12)


def test_tiny_bandwidth_does_not_hang():
    S, Y, _ = _data(2000, 3)
    y = (Y[:, 0] > 0).astype(int)
    t0 = time.perf_counter()
    assert ce1_score(y, S, bandwidth=1e-16) >= 0
    assert ce1_score(y, S, bandwidth=5e-324) >= 0  # subnormal
    assert ce2_score(Snapshots(Y), S, bandwidth=1e-16) >= 0
    assert auto_degree(10**12, 1e-300, basis="1d") == 512
    assert time.perf_counter() - t0 < 20


def test_absurd_degrees_are_bounded():
    S, Y, _ = _data(50, 4)
    with pytest.raises(ValueError, match="degree"):
        ce2_score(Snapshots(Y), S, degree=10**5)
    with pytest.raises(ValueError, match="degree"):
        ce1_score(Snapshots(Y), S, degree=10**5)
    # each candidate is checked against the one degree constraint (skcal._constraints.DEGREE)
    in_range = r"must be an int in the range \[0, 512\]"
    with pytest.raises(ValueError, match=r"'degree' parameter of ce2_score " + in_range):
        ce2_score(Snapshots(Y), S, degree=[3, 10**5], cv=2)
    S2, Y2, _ = _data(20000, 5)
    with pytest.raises(ValueError, match=r"largest degree these data support is \d+"):
        ce2_score(Y2, S2, degree=200)
    with pytest.raises(ValueError, match=r"'degree' parameter of CE2Statistics.__init__ " + in_range):
        CE2Statistics(degree=10**5)


def test_engine_validates_its_input():
    S, Y, w = _data(30, 6)
    T = np.column_stack([Y[:, 0], Y[:, 1]])
    bad_S = S.copy()
    bad_S[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ChebyshevMoments.from_data(bad_S, T, 2)
    with pytest.raises(ValueError, match="non-negative"):
        ChebyshevMoments(2, 2, 2).update(S, T, -w)
    with pytest.raises(ValueError, match="NaN"):
        ChebyshevRidge(degree=2).fit(S, np.where(T > 0, np.nan, T))
    with pytest.raises(ValueError, match="sigma2"):
        ChebyshevRidge(degree=2).fit(S * [1, 4], T)
    with pytest.raises(ValueError, match="complex|real"):
        ChebyshevMoments(2, 2, 2).update(S + 0.5j, T)


def test_bad_statistics_input():
    S, Y, _ = _data(20, 7)
    with pytest.raises(ValueError, match="2 columns"):
        CE2Statistics(degree=2).update(Snapshots(Y), S[:, :1])
    with pytest.raises(ValueError, match="rows"):
        CE2Statistics(degree=2).update(Snapshots(Y[:5]), S)
    with pytest.raises(ValueError, match="basis"):
        CE2Statistics(degree=2, basis="1d")
    with pytest.raises(ValueError, match="alpha"):
        CE1Statistics(degree=2, alpha=-1)
    with pytest.raises(ValueError, match="no rows of positive weight"):
        CE2Statistics(degree=2).compute()
    st_ = CE2Statistics(degree=2).update(Snapshots(Y[:0]), S[:0])  # an empty chunk is fine
    assert st_.n_updates_ == 1 and float(st_.stats_["sum_weight"]) == 0.0
    with pytest.raises(ValueError, match="different parameters"):
        CE2Statistics(degree=2) + CE2Statistics(degree=3)
