"""SortedCutoffStatistics: the exact cutoff error of rows in order of their predictions, fixed state."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.cutoff import cutoff_calibration_error
from skcal.stats import CutoffStatistics, PoissonBootstrap, SortedCutoffStatistics, from_state, merge_all


def _rows(n=3000, ties=False, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if ties:
        p = np.round(p, 2)
    y = (rng.uniform(size=n) < p**1.3).astype(int)
    return y, p


@pytest.mark.parametrize("measure", ["cutoff", "ks"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_the_exact_statistics_in_any_value_ordered_chunking(measure, ties, weighted):
    y, p = _rows(ties=ties)
    w = np.random.default_rng(1).uniform(0.1, 3.0, y.shape[0]) if weighted else None
    exact = CutoffStatistics(measure=measure).update(y, p, sample_weight=w).compute()
    whole = SortedCutoffStatistics(measure=measure).update(y, p, sample_weight=w)
    assert whole.compute() == pytest.approx(exact, rel=1e-12)
    order = np.argsort(p, kind="stable")
    # value-ordered chunks, cut inside runs of ties too, merged in any order
    cuts = [0, 7, 400, 401, 1500, 2999, 3000]
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        sl = order[a:b]
        parts.append(
            SortedCutoffStatistics(measure=measure).update(
                y[sl], p[sl], sample_weight=None if w is None else w[sl]
            )
        )
    tree = ((parts[1] + parts[0]) + (parts[3] + parts[2])) + (parts[5] + parts[4])  # neighbours, any side
    for merged in (merge_all(parts), merge_all(parts[::-1]), tree):
        assert merged.compute() == pytest.approx(exact, rel=1e-12)
    # chunks 1 and 3 merged span chunk 2's predictions: it can no longer be placed
    with pytest.raises(ValueError, match="interleave"):
        parts[1] + parts[3] + parts[2]
    restored = from_state(whole.get_state())
    assert restored.compute() == whole.compute()


def test_interleaving_chunks_are_refused_with_the_reason():
    y, p = _rows()
    a = SortedCutoffStatistics().update(y[:100], p[:100])
    b = SortedCutoffStatistics().update(y[100:200], p[100:200])
    with pytest.raises(ValueError, match="increasing order of their predictions: these interleave"):
        a + b
    with pytest.raises(ValueError, match="interleave"):
        a.update(y[200:300], p[200:300])
    empty = SortedCutoffStatistics()
    assert (empty + a).compute() == a.compute()
    with pytest.raises(ValueError, match="no rows with positive weight"):
        SortedCutoffStatistics().update(y[:3], p[:3], sample_weight=np.zeros(3)).compute()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6)), min_size=1, max_size=40),
    st.integers(1, 39),
)
def test_ties_across_a_chunk_boundary(rows, cut):
    """A run of tied predictions split between two chunks is one run (no running sum inside it)."""
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows]) / 6.0
    order = np.argsort(p, kind="stable")
    y, p = y[order], p[order]
    cut = min(cut, len(rows))
    whole = cutoff_calibration_error(y, p)
    parts = [SortedCutoffStatistics().update(y[:cut], p[:cut])]
    if cut < len(rows):
        parts.append(SortedCutoffStatistics().update(y[cut:], p[cut:]))
    assert merge_all(parts).compute() == pytest.approx(whole, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("presorted", [False, True])
def test_replicates_equal_the_exact_measure_of_each_resample(ties, weighted, presorted):
    y, p = _rows(n=2500, ties=ties, seed=2)
    w = np.random.default_rng(3).uniform(0.2, 2.0, y.shape[0]) if weighted else None
    index = np.arange(y.shape[0])
    if presorted:
        order = np.argsort(p, kind="stable")
        y, p, index = y[order], p[order], order
        w = None if w is None else w[order]
    boot = PoissonBootstrap(SortedCutoffStatistics(), n_replicates=7, seed=4).update(
        y, p, sample_weight=w, row_index=index
    )
    W = boot.replicate_weights(row_index=index)
    direct = [
        CutoffStatistics().update(y, p, sample_weight=W[r] if w is None else W[r] * w).compute()
        for r in range(7)
    ]
    np.testing.assert_allclose(boot.compute(), direct, rtol=1e-12)
    per_value = PoissonBootstrap(CutoffStatistics(), n_replicates=7, seed=4).update(
        y, p, sample_weight=w, row_index=index
    )
    np.testing.assert_allclose(boot.compute(), per_value.compute(), rtol=1e-12)


@pytest.mark.parametrize("compiled", [False, True])
def test_replicates_in_value_ordered_chunks_and_both_paths(compiled, monkeypatch):
    """Chunks of the sorted rows (tiles of many sizes) give the whole's replicates, with or without numba."""
    import skcal.stats._cutoff as cut

    if compiled:
        pytest.importorskip("numba")
        monkeypatch.setattr(cut, "_KERNEL_MIN_FOLD", 1)
    else:
        monkeypatch.setattr(cut, "_KERNEL_MIN_FOLD", 10**12)
    y, p = _rows(n=40_000, ties=True, seed=5)
    order = np.argsort(p, kind="stable")
    ys, ps = y[order], p[order]
    whole = PoissonBootstrap(SortedCutoffStatistics(), n_replicates=5, seed=9).update(ys, ps, row_index=order)
    parts = []
    for a, b in ((0, 13_000), (13_000, 13_001), (13_001, 40_000)):
        parts.append(
            PoissonBootstrap(SortedCutoffStatistics(), n_replicates=5, seed=9).update(
                ys[a:b], ps[a:b], row_index=order[a:b]
            )
        )
    exact = PoissonBootstrap(CutoffStatistics(), n_replicates=5, seed=9).update(y, p).compute()
    np.testing.assert_allclose(whole.compute(), exact, rtol=1e-12)
    np.testing.assert_allclose(merge_all(parts[::-1]).compute(), exact, rtol=1e-12)


def test_plan_refuses_tiles_out_of_order():
    y, p = _rows(n=100)
    plan = SortedCutoffStatistics()._replicate_plan(y.astype(float), np.sort(p), None)
    out = plan.empty(2)
    W = np.ones((2, 100))
    plan.add(out, W[:, :50], 0, 50, W[:, :50].sum(axis=1))
    with pytest.raises(ValueError, match="tiles of sorted rows must come in order"):
        plan.add(out, W[:, :10], 60, 70, W[:, :10].sum(axis=1))
