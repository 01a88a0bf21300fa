"""Mergeable statistics of the binned, cutoff and truthful measures (issue 11)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.binned_ece import binned_ece
from skcal.binned_measures import (
    average_calibration_error,
    debiased_l2_calibration_error,
    max_calibration_error,
    rms_calibration_error,
)
from skcal.cutoff import cutoff_calibration_error
from skcal.ks_calibration_error import ks_calibration_error
from skcal.stats import (
    BinnedStatistics,
    ClasswiseStatistics,
    CutoffGridStatistics,
    CutoffStatistics,
    TopLabelStatistics,
    from_state,
)
from skcal.truthful import classwise_ece, classwise_lince, conf_ce, conf_ece, truthful_conf_ce

_P = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.1]), st.floats(0, 1))
_ROW = st.tuples(_P, st.integers(0, 1), st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]))


@st.composite
def chunked(draw, min_rows=1):
    rows = draw(st.lists(_ROW, min_size=min_rows, max_size=40))
    n = len(rows)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))  # repeats give empty chunks
    bounds = [0, *cuts, n]
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    if w.sum() == 0:
        w[0] = 1.0
    order = draw(st.permutations(range(len(bounds) - 1)))
    return y, p, w, [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)], order


def _merged(make, y, p, w, chunks, order, weighted):
    parts = []
    for a, b in chunks:
        s = make()
        s.update(y[a:b], p[a:b], sample_weight=w[a:b] if weighted else None)
        parts.append(s)
    parts = [parts[i] for i in order]
    left = sum(parts[1:], parts[0])  # left fold, permuted order
    tree = parts
    while len(tree) > 1:  # pairwise tree
        tree = [tree[i] + tree[i + 1] if i + 1 < len(tree) else tree[i] for i in range(0, len(tree), 2)]
    return left, tree[0]


def _assert_same_stats(a, b):
    for k in a.stats_:
        np.testing.assert_allclose(a.stats_[k], b.stats_[k], rtol=1e-12, atol=1e-12)


_BINNED = {
    "ece": binned_ece,
    "mce": max_calibration_error,
    "rms": rms_calibration_error,
    "ace": average_calibration_error,
    "debiased_l2_squared": lambda *a, **k: debiased_l2_calibration_error(*a, squared=True, **k),
}


@settings(max_examples=60, deadline=None)
@given(chunked(), st.sampled_from(sorted(_BINNED)), st.booleans(), st.integers(1, 6))
def test_binned_statistics_merge_equals_one_update(data, measure, weighted, n_bins):
    y, p, w, chunks, order = data
    edges = np.array([0.0, 0.25, 0.5, 0.75, 1.0])

    for kw in ({"n_bins": n_bins}, {"edges": edges}):

        def make(kw=kw):
            return BinnedStatistics(measure=measure, **kw)

        one = make().update(y, p, sample_weight=w if weighted else None)
        left, tree = _merged(make, y, p, w, chunks, order, weighted)
        _assert_same_stats(left, one)
        _assert_same_stats(tree, one)
        ref = _BINNED[measure](
            y,
            p,
            sample_weight=w if weighted else None,
            **({"n_bins": n_bins, "strategy": "uniform"} if "n_bins" in kw else kw),
        )
        assert left.compute() == pytest.approx(ref, rel=1e-9, abs=1e-12)
        back = from_state(left.get_state())
        assert type(back) is BinnedStatistics and back.compute() == left.compute()


@settings(max_examples=60, deadline=None)
@given(chunked(), st.sampled_from(["cutoff", "ks"]), st.booleans())
def test_cutoff_statistics_exact_merge_and_grid_bound(data, measure, weighted):
    y, p, w, chunks, order = data
    one = CutoffStatistics(measure=measure).update(y, p, sample_weight=w if weighted else None)
    left, tree = _merged(lambda: CutoffStatistics(measure=measure), y, p, w, chunks, order, weighted)
    _assert_same_stats(left, one)
    _assert_same_stats(tree, one)
    func = cutoff_calibration_error if measure == "cutoff" else ks_calibration_error
    exact = func(y, p, sample_weight=w if weighted else None)
    assert left.compute() == pytest.approx(exact, rel=1e-9, abs=1e-12)
    assert from_state(left.get_state()).compute() == left.compute()
    for m in (1, 3, 64):
        g_one = CutoffGridStatistics(n_cells=m, measure=measure).update(y, p, w if weighted else None)
        g, _ = _merged(
            lambda m=m: CutoffGridStatistics(n_cells=m, measure=measure), y, p, w, chunks, order, weighted
        )
        _assert_same_stats(g, g_one)
        assert g.compute() <= exact + 1e-12
        assert exact <= g.compute() + g.bound() + 1e-12


def test_grid_bound_is_attained_in_order_of_magnitude_and_shrinks():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20000)
    y = (rng.uniform(size=20000) < p**2).astype(int)
    exact = cutoff_calibration_error(y, p)
    gaps = []
    for m in (16, 256, 4096):
        g = CutoffGridStatistics(n_cells=m).update(y, p)
        assert g.compute() <= exact <= g.compute() + g.bound()
        gaps.append(g.bound())
    assert gaps[0] > gaps[1] > gaps[2]


@st.composite
def multiclass_chunked(draw):
    n = draw(st.integers(1, 30))
    k = draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    P = rng.dirichlet(np.ones(k), size=n)
    if draw(st.booleans()):  # ties, edges, exact 0 and 1
        P = np.round(P * 4) / 4
        P[:, -1] = 1 - P[:, :-1].sum(axis=1)
        P = np.clip(P, 0, 1)
        P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, size=n)
    w = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
    if w.sum() == 0:
        w[0] = 1.0
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    bounds = [0, *cuts, n]
    chunks = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    order = draw(st.permutations(range(len(chunks))))
    return y, P, w, chunks, order


_TOP = {"truthful_conf_ce": truthful_conf_ce, "conf_ce": conf_ce, "conf_ece": conf_ece}
_CW = {"classwise_lince": classwise_lince, "classwise_ece": classwise_ece}


@settings(max_examples=60, deadline=None)
@given(multiclass_chunked(), st.booleans(), st.integers(1, 5), st.data())
def test_truthful_statistics_merge_and_equal_in_memory(data, weighted, n_bins, draw):
    y, P, w, chunks, order = data
    k = P.shape[1]
    labels = list(range(k))
    measure = draw.draw(st.sampled_from(sorted(_TOP) + sorted(_CW)))
    cls = TopLabelStatistics if measure in _TOP else ClasswiseStatistics

    def make():
        return cls(labels=labels, n_bins=n_bins, measure=measure)

    one = make().update(y, P, sample_weight=w if weighted else None)
    left, tree = _merged(make, y, P, w, chunks, order, weighted)
    _assert_same_stats(left, one)
    _assert_same_stats(tree, one)
    func = {**_TOP, **_CW}[measure]
    ref = func(y, P, n_bins=n_bins, strategy="uniform", labels=labels, sample_weight=w if weighted else None)
    assert left.compute() == pytest.approx(ref, rel=1e-9, abs=1e-14)
    back = from_state(left.get_state())
    assert type(back) is cls and back.compute() == left.compute()


def test_labels_fixed_at_construction_keep_columns_aligned():
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    y = np.array(["a", "c", "b", "c"])
    labels = ["a", "b", "c"]
    s = ClasswiseStatistics(labels=labels, n_bins=3)
    parts = [
        ClasswiseStatistics(labels=labels, n_bins=3).update(y[i : i + 1], P[i : i + 1]) for i in range(4)
    ]
    assert sum(parts[1:], parts[0]).compute() == pytest.approx(
        s.update(y, P).compute(), rel=1e-12
    )  # single-class chunks do not shift the columns
    assert s.compute() == pytest.approx(classwise_lince(y, P, n_bins=3, strategy="uniform", labels=labels))
    with pytest.raises(ValueError, match="labels"):
        ClasswiseStatistics(n_bins=3)
    with pytest.raises(ValueError, match="labels"):
        TopLabelStatistics(labels=["a", "b"]).update(["z"], [[0.5, 0.5]])


def test_parameters_must_match_to_merge():
    a = BinnedStatistics(n_bins=3).update([0, 1], [0.2, 0.9])
    with pytest.raises(ValueError, match="different parameters"):
        a + BinnedStatistics(n_bins=4)
    with pytest.raises(TypeError):
        a + CutoffStatistics()
    with pytest.raises(ValueError, match="no rows"):
        BinnedStatistics().compute()
