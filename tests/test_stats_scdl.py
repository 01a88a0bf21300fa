"""Mergeable statistics of SCDL and smECE: chunkings, merge orders, compute paths, state."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.rounding import SoftBinRounder
from skcal.scdl import scdl_curve, scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.stats import ScdlStatistics, SmoothECEStatistics, from_state

# predictions: exact 0 and 1, cell edges of fine grids, ties, and generic values
probs = st.one_of(
    st.floats(0, 1, allow_nan=False),
    st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.125, 1 / 1024, 3 / 64, 1 - 2**-16]),
)


@st.composite
def chunked(draw, max_size=60):
    n = draw(st.integers(1, max_size))
    p = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    w = None
    if draw(st.booleans()):
        w = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7]), min_size=n, max_size=n)))
        if w.sum() == 0:
            w[0] = 1.0
    # cut points (with repeats: empty chunks; adjacent: one-row chunks)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    bounds = [0, *cuts, n]
    order = draw(st.permutations(range(len(bounds) - 1)))
    return y, p, w, bounds, list(order)


def _chunks(y, p, w, bounds):
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        yield y[a:b], p[a:b], (None if w is None else w[a:b])


def _assert_states_close(s1, s2, rtol=1e-12):
    a, b = s1.stats_, s2.stats_
    assert a.keys() == b.keys()
    for k in a:
        x, z = np.asarray(a[k], dtype=float), np.asarray(b[k], dtype=float)
        scale = max(1.0, float(np.abs(x).max(initial=0.0)))
        np.testing.assert_allclose(x, z, rtol=0, atol=rtol * scale, err_msg=k)


def _make(kind):
    return ScdlStatistics(max_bins=1024) if kind == "scdl" else SmoothECEStatistics()


@pytest.mark.parametrize("kind", ["scdl", "smooth_ece"])
@settings(max_examples=40, deadline=None)
@given(data=chunked(), tree=st.booleans())
def test_chunked_merges_equal_one_update(kind, data, tree):
    y, p, w, bounds, order = data
    whole = _make(kind).update(y, p, sample_weight=w)
    parts = [_make(kind).update(cy, cp, sample_weight=cw) for cy, cp, cw in _chunks(y, p, w, bounds)]
    parts = [parts[i] for i in order]
    if tree:  # pairwise tree of merges
        while len(parts) > 1:
            parts = [sum(parts[i : i + 2]) for i in range(0, len(parts), 2)]
        merged = parts[0]
    else:  # left fold, starting from the identity (an empty object) via sum()
        merged = sum(parts)
    _assert_states_close(whole, merged)
    # state round trip through the generic from_state
    back = from_state(merged.get_state())
    assert type(back) is type(merged) and back.get_params() == merged.get_params()
    _assert_states_close(back, merged, rtol=0)
    # compute() equals the in-memory function on all the rows
    if kind == "scdl":
        ref = scdl_curve(y, p, sample_weight=w, max_bins=1024)
        got = merged.curve(max_bins=1024)
        np.testing.assert_allclose(got.scdl_m, ref.scdl_m, rtol=0, atol=1e-12)
        assert got.scdl == pytest.approx(ref.scdl, abs=1e-12)
    else:
        assert merged.compute() == pytest.approx(smooth_ece(y, p, sample_weight=w), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(data=chunked(max_size=40))
def test_scdl_statistics_default_rule_equals_scdl_score(data):
    y, p, w, bounds, _ = data
    stats = sum(ScdlStatistics().update(cy, cp, sample_weight=cw) for cy, cp, cw in _chunks(y, p, w, bounds))
    assert stats.compute() == pytest.approx(scdl_score(y, p, sample_weight=w), abs=1e-12)
    assert stats.curve("theory").scdl == pytest.approx(
        scdl_score(y, p, sample_weight=w, max_bins="theory"), abs=1e-12
    )


def test_scdl_statistics_on_large_data_and_grid_masses():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=50_000)
    y = (rng.uniform(size=50_000) < p**1.1).astype(int)
    stats = ScdlStatistics()
    for k in range(0, 50_000, 7_000):
        stats.update(y[k : k + 7_000], p[k : k + 7_000])
    curve = stats.curve()
    ref = scdl_curve(y, p)
    np.testing.assert_allclose(curve.scdl_m, ref.scdl_m, rtol=0, atol=1e-13)
    assert curve.selected_n_bins == ref.selected_n_bins
    assert stats.n_effective_ == 50_000 and stats.n_updates_ == 8
    pi, a = stats.grid_masses(ref.selected_n_bins)
    ref_pi, ref_q, _ = ref.grid(ref.selected_n_bins)
    np.testing.assert_allclose(pi, ref_pi, atol=1e-14)
    np.testing.assert_allclose(a[pi > 0] / pi[pi > 0], ref_q[pi > 0], atol=1e-12)


def test_scdl_statistics_params_and_errors():
    with pytest.raises(ValueError, match="power of two"):
        ScdlStatistics(max_bins=1000).update([0, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="power of two"):
        ScdlStatistics(max_bins=True).update([0, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="different parameters"):
        ScdlStatistics(max_bins=64) + ScdlStatistics(max_bins=128)
    with pytest.raises(ValueError, match="no rows"):
        ScdlStatistics().compute()
    with pytest.raises(ValueError, match="no rows"):
        ScdlStatistics().update([0, 1], [0.2, 0.4], sample_weight=[0.0, 0.0]).compute()
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        ScdlStatistics().update([0, 1], [0.2, 0.4], sample_weight=[1.0, -1.0])
    # a chunk of one class keeps the label coding, with pos_label for string labels
    s = ScdlStatistics(pos_label="yes").update(["yes", "yes"], [0.2, 0.4]).update(["no"], [0.9])
    assert s.compute() == scdl_score(["yes", "yes", "no"], [0.2, 0.4, 0.9], pos_label="yes")


def test_scdl_statistics_warns_when_its_grid_binds():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=20_000) < p).astype(int)
    with pytest.warns(UserWarning, match="finest grid max_bins=16"):
        value = ScdlStatistics(max_bins=16).update(y, p).compute()
    assert value == 1 / 16


def test_soft_bin_rounder_fit_statistics_equals_fit():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=4000)
    y = (rng.uniform(size=4000) < p**1.3).astype(int)
    stats = ScdlStatistics().update(y[:1500], p[:1500]) + ScdlStatistics().update(y[1500:], p[1500:])
    for kwargs in ({}, {"max_bins": "theory"}, {"n_bins": 32}):
        a = SoftBinRounder(**kwargs).fit(p, y)
        b = SoftBinRounder(**kwargs).fit_statistics(stats)
        assert a.n_bins_ == b.n_bins_
        assert b.scdl_ == pytest.approx(a.scdl_, abs=1e-12)
        assert b.scdl_n_bins_ == pytest.approx(a.scdl_n_bins_, abs=1e-12)
        np.testing.assert_allclose(b.bin_weights_, a.bin_weights_, atol=1e-14)
        assert b.swap_regret_bound_ == pytest.approx(a.swap_regret_bound_, abs=1e-12)
    b = SoftBinRounder(random_state=0).fit_statistics(stats)
    assert b.transform(p[:5]).shape == (5, 1)
    with pytest.raises(ValueError, match="power of two"):
        SoftBinRounder(n_bins=12).fit_statistics(stats)
    with pytest.raises(TypeError, match="ScdlStatistics"):
        SoftBinRounder().fit_statistics(SmoothECEStatistics())


def test_soft_bin_rounder_is_keyword_only_and_rejects_bool_bins():
    with pytest.raises(TypeError):
        SoftBinRounder(8)  # the first parameter is keyword-only
    with pytest.raises(ValueError, match="n_bins"):
        SoftBinRounder(n_bins=True).fit([0.2, 0.8], [0, 1])
    with pytest.raises(ValueError, match="n_bins"):
        SoftBinRounder(n_bins=True).fit_statistics(ScdlStatistics().update([0, 1], [0.2, 0.8]))
