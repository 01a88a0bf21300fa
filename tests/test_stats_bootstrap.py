"""skcal.stats.PoissonBootstrap: the weight stream, the replicates of every statistics class, merging."""

import numpy as np
import pytest
from _stats_helpers import chunkings, merge_tree
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from skcal.stats import (
    AccuracyStatistics,
    BinnedStatistics,
    BrierScoreStatistics,
    CE1Statistics,
    CE2Statistics,
    ClasswiseStatistics,
    CutoffGridStatistics,
    CutoffStatistics,
    LogLossStatistics,
    MeanStatistics,
    PoissonBootstrap,
    ScdlStatistics,
    SmoothCEGridStatistics,
    SmoothCEStatistics,
    SmoothECEStatistics,
    TopLabelStatistics,
    _replicate,
    from_state,
    merge_all,
    poisson_weights,
)
from skcal.stats._bootstrap import POISSON_THRESHOLDS, update_together
from skcal.stats._replicate import (
    LoopPlan,
    add_sparse_sums,
    sharing_tile_copies,
    stable_argsort,
    tile_copies,
    tile_rows,
)
from skcal.votes import Snapshots

R = 6


# ---------------------------------------------------------------------------------------------
# the counter-based Poisson(1) stream
# ---------------------------------------------------------------------------------------------
def test_thresholds_are_the_poisson_distribution_function():
    k = np.arange(POISSON_THRESHOLDS.size)
    np.testing.assert_allclose(
        POISSON_THRESHOLDS.astype(float) / 2.0**64, sps.poisson.cdf(k, 1.0), rtol=1e-15
    )
    t = [int(v) for v in POISSON_THRESHOLDS]
    assert all(a < b for a, b in zip(t[:-1], t[1:], strict=True)) and t[-1] < 2**64


def test_weights_are_poisson_one():
    W = poisson_weights(7, range(20), range(50_000))  # 10**6 draws
    counts = np.bincount(W.ravel(), minlength=8)
    expected = W.size * sps.poisson.pmf(np.arange(8), 1.0)
    expected[-1] = W.size - expected[:-1].sum()  # 7 or more
    observed = np.append(counts[:7], counts[7:].sum())
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert sps.chi2.sf(chi2, df=7) > 1e-3, (observed, expected)
    assert abs(W.mean() - 1.0) < 4 / np.sqrt(W.size) and abs(W.var() - 1.0) < 10 / np.sqrt(W.size)


def test_weights_are_uncorrelated_across_replicates_and_rows():
    W = poisson_weights(3, range(50), range(20_000)).astype(float)
    C = np.corrcoef(W)  # replicates
    off = C[~np.eye(50, dtype=bool)]
    assert np.abs(off).max() < 5 / np.sqrt(20_000)
    lag = np.mean([np.corrcoef(w[:-1], w[1:])[0, 1] for w in W])  # neighbouring rows
    assert abs(lag) < 4 / np.sqrt(50 * 20_000)


def test_weights_depend_only_on_seed_replicate_and_row():
    rng = np.random.default_rng(0)
    rows = rng.permutation(5000)
    reps = np.array([4, 0, 9])
    W = poisson_weights(11, range(10), range(5000))
    np.testing.assert_array_equal(poisson_weights(11, reps, rows), W[reps][:, rows])
    assert not np.array_equal(poisson_weights(12, range(10), range(5000)), W)
    # a block of replicates of a bootstrap is the same stream
    b = PoissonBootstrap(MeanStatistics(), n_replicates=3, first_replicate=4, seed=11)
    np.testing.assert_array_equal(b.replicate_weights(5000), W[4:7])


def test_weights_refuse_bad_input():
    with pytest.raises(ValueError, match="rows must be non-negative integers"):
        poisson_weights(0, [0], [-1])
    with pytest.raises(ValueError, match="seed"):
        PoissonBootstrap(MeanStatistics(), seed=-1)


# ---------------------------------------------------------------------------------------------
# every class: the bootstrap equals the statistics of each resample (rows repeated W[r, i] times)
# ---------------------------------------------------------------------------------------------
def _binary(n=1500, ties=False, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if ties:
        p = np.round(p, 2)
    y = (rng.uniform(size=n) < p**1.2).astype(int)
    return y, p


def _multiclass(n=1500, k=4, seed=1):
    rng = np.random.default_rng(seed)
    P = np.exp(1.5 * rng.normal(size=(n, k)))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    return y, P


def _second_order(n=1500, seed=2):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.05, 0.95, n)
    S = np.column_stack([m, rng.uniform(0, 0.05, n)])
    f = np.clip(m + rng.normal(0, 0.15, n), 0, 1)
    return (rng.uniform(size=(n, 2)) < f[:, None]).astype(float), S


CASES = {
    "scdl": (lambda: ScdlStatistics(max_bins=256), "binary"),
    "smooth_ece": (SmoothECEStatistics, "binary"),
    "cutoff": (CutoffStatistics, "binary"),
    "ks": (lambda: CutoffStatistics(measure="ks"), "binary"),
    "cutoff_grid": (lambda: CutoffGridStatistics(n_cells=512), "binary"),
    "smce": (SmoothCEStatistics, "binary"),
    "smce_grid": (lambda: SmoothCEGridStatistics(n_cells=512), "binary"),
    "binned_ece": (BinnedStatistics, "binary"),
    "binned_mce": (lambda: BinnedStatistics(n_bins=7, measure="mce"), "binary"),
    "binned_ace": (lambda: BinnedStatistics(n_bins=7, measure="ace"), "binary"),
    "binned_rms": (lambda: BinnedStatistics(n_bins=7, measure="rms"), "binary"),
    "binned_debiased": (lambda: BinnedStatistics(n_bins=7, measure="debiased_l2_squared"), "binary"),
    "brier": (BrierScoreStatistics, "binary"),
    "log_loss": (LogLossStatistics, "binary"),
    "accuracy": (AccuracyStatistics, "binary"),
    "mean": (MeanStatistics, "mean"),
    "truthful_conf_ce": (lambda: TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=6), "multiclass"),
    "conf_ece": (lambda: TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=6, measure="conf_ece"), "multiclass"),
    "classwise_lince": (lambda: ClasswiseStatistics(labels=[0, 1, 2, 3], n_bins=6), "multiclass"),
    "multiclass_brier": (lambda: BrierScoreStatistics(labels=[0, 1, 2, 3]), "multiclass"),
}


def _arrays(kind, ties=False):
    if kind == "binary":
        return _binary(ties=ties)
    if kind == "mean":
        y, p = _binary()
        return ((p - y) ** 2,)
    return _multiclass()


def _resampled(make, arrays, w, counts):
    rows = [np.repeat(a, counts, axis=0) for a in arrays]
    sw = None if w is None else np.repeat(w, counts)
    return make().update(*rows, sample_weight=sw).compute()


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("presorted", [False, True])
def test_replicates_equal_the_statistics_of_each_resample(name, weighted, presorted):
    make, kind = CASES[name]
    arrays = _arrays(kind, ties=name in ("cutoff", "smce"))
    n = arrays[0].shape[0]
    w = np.random.default_rng(5).uniform(0.2, 2.0, n) if weighted else None
    if presorted and kind == "binary":  # the fast paths of sorted rows
        order = np.argsort(arrays[1], kind="stable")
        arrays = tuple(a[order] for a in arrays)
        w = None if w is None else w[order]
    boot = PoissonBootstrap(make(), n_replicates=R, seed=3).update(*arrays, sample_weight=w)
    values = boot.compute()
    W = boot.replicate_weights(n).astype(int)
    direct = np.array([_resampled(make, arrays, w, W[r]) for r in range(R)])
    np.testing.assert_allclose(values, direct, rtol=1e-12, atol=1e-15)


def test_the_default_plan_is_the_definition():
    """LoopPlan (repeat the rows, call _sums) and a vectorised plan give the same replicates."""
    y, p = _binary()
    t = BinnedStatistics(n_bins=9, measure="rms")
    checked = t._check_chunk(y, p)
    W = PoissonBootstrap(t, n_replicates=R, seed=1).replicate_weights(y.shape[0])
    loop = LoopPlan(t, checked)
    a = t._replicate_compute(loop.add(loop.empty(R), W, 0, y.shape[0]))
    plan = t._replicate_plan(*checked)
    b = t._replicate_compute(plan.finish(plan.add(plan.empty(R), W, 0, y.shape[0])))
    np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ScdlStatistics(max_bins=64),
        lambda: BinnedStatistics(n_bins=7),
        lambda: CutoffGridStatistics(n_cells=64),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_label_blocked_plans_are_the_definition(make, weighted):
    """SCDL, binned and cutoff-grid plans: the label picks a block of cells, two entries a row
    (four for weighted bins) instead of four, five and three; equal to :class:`LoopPlan`."""
    y, p = _binary()
    w = np.random.default_rng(8).uniform(0.2, 2.0, y.shape[0]) if weighted else None
    t = make()
    checked = t._check_chunk(y, p, sample_weight=w)
    W = PoissonBootstrap(t, n_replicates=R, seed=2).replicate_weights(y.shape[0])
    loop = LoopPlan(t, checked)
    a = t._replicate_compute(loop.add(loop.empty(R), W, 0, y.shape[0]))
    plan = t._replicate_plan(*checked)
    assert plan.rows.shape[1] == (4 if weighted and isinstance(t, BinnedStatistics) else 2)
    b = t._replicate_compute(plan.finish(plan.add(plan.empty(R), W, 0, y.shape[0])))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("compiled", [True, False])
def test_ce2_replicates_through_the_moments_and_the_plug_in_pass(compiled, monkeypatch):
    from skcal.ce2 import ce1_score, ce2_score

    if not compiled:  # the numpy path of the plug-in pass's weighted gaps
        monkeypatch.setattr("skcal.stats._ce2.load_replicate_kernel", lambda: None)
    Y, S = _second_order()
    boot = PoissonBootstrap(CE2Statistics(degree=3, alpha=1e-3), n_replicates=4, seed=2)
    boot = boot.update(Snapshots(Y), S)
    coefs = boot.compute()
    assert coefs.shape == (4, 2, 4, 4)
    values = boot.plug_in().update(Snapshots(Y), S).compute()
    W = boot.replicate_weights(Y.shape[0]).astype(int)
    direct = [
        ce2_score(Snapshots(np.repeat(Y, W[r], axis=0)), np.repeat(S, W[r], axis=0), degree=3, alpha=1e-3)
        for r in range(4)
    ]
    np.testing.assert_allclose(values, direct, rtol=1e-12)
    b1 = PoissonBootstrap(CE1Statistics(degree=3), n_replicates=4, seed=2).update(Y[:, 0], S[:, 0])
    v1 = b1.plug_in().update(Y[:, 0], S[:, 0]).compute()
    direct1 = [ce1_score(np.repeat(Y[:, 0], W[r]), np.repeat(S[:, 0], W[r]), degree=3) for r in range(4)]
    np.testing.assert_allclose(v1, direct1, rtol=1e-12)
    with pytest.raises(ValueError, match="one fit per bootstrap replicate"):
        from skcal.stats import CE2PlugInStatistics

        CE2PlugInStatistics(coef=coefs).update(Snapshots(Y), S)


# ---------------------------------------------------------------------------------------------
# the fine-grid forms of the exact measures: within their stated bounds
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_cells", [64, 1024, 4096])
def test_smce_grid_replicates_within_their_bound_of_the_exact_smce(n_cells):
    from skcal.lipschitz import smooth_calibration_error

    y, p = _binary(n=3000)
    boot = PoissonBootstrap(SmoothCEGridStatistics(n_cells=n_cells), n_replicates=R, seed=4).update(y, p)
    values, bounds = boot.compute(), boot.bounds()
    W = boot.replicate_weights(y.shape[0]).astype(int)
    exact = np.array([smooth_calibration_error(np.repeat(y, W[r]), np.repeat(p, W[r])) for r in range(R)])
    assert (np.abs(values - exact) <= bounds + 1e-15).all()
    mean_abs_resid = np.array([np.mean(np.abs(np.repeat(y - p, W[r]))) for r in range(R)])
    assert (bounds <= mean_abs_resid / (2 * n_cells) + 1e-15).all()


@pytest.mark.parametrize("digits", [None, 4, 1])
def test_exact_cutoff_replicates_over_many_tiles(digits):
    """The sums per value are written by the first tile that reaches a value: over many tiles,
    with runs of ties inside tiles and across their boundaries (``digits``: p rounded), the
    replicates equal the statistics of each resample as frequency weights, and tiles given out
    of order (the plan then adds everywhere) give the same sums."""
    n = 3 * tile_rows(R) + 17
    y, p = _binary(n=n, seed=7)
    if digits is not None:
        p = np.round(p, digits)
    w = np.random.default_rng(2).uniform(0.5, 1.5, n)
    boot = PoissonBootstrap(CutoffStatistics(), n_replicates=R, seed=1)
    prepared = boot.prepare(y, p, sample_weight=w)
    values = boot.update(prepared, workspace={}).compute()
    W = boot.replicate_weights(n)
    direct = [CutoffStatistics().update(y, p, sample_weight=W[r] * w).compute() for r in range(R)]
    np.testing.assert_allclose(values, direct, rtol=1e-12)
    plan = prepared.plan
    Wo = W[:, plan.order]
    part = plan.empty(R)
    step = tile_rows(R)
    for start in range(0, n, step)[::-1]:
        part = plan.add(part, Wo[:, start : start + step], start, min(n, start + step))
    np.testing.assert_allclose(
        PoissonBootstrap(CutoffStatistics(), n_replicates=R)._combine(boot.stats_, plan.finish(part))[
            "resid"
        ],
        2 * boot.stats_["resid"],
        rtol=1e-12,
    )


def test_cutoff_grid_replicates_within_their_bound_of_the_exact_cutoff():
    from skcal.cutoff import cutoff_calibration_error

    y, p = _binary(n=3000)
    boot = PoissonBootstrap(CutoffGridStatistics(n_cells=256), n_replicates=R, seed=4).update(y, p)
    values, bounds = boot.compute(), boot.bounds()
    W = boot.replicate_weights(y.shape[0]).astype(int)
    exact = np.array([cutoff_calibration_error(np.repeat(y, W[r]), np.repeat(p, W[r])) for r in range(R)])
    assert (values <= exact + 1e-15).all() and (exact <= values + bounds + 1e-15).all()


# ---------------------------------------------------------------------------------------------
# any chunking, any order, any merge tree: the same replicates
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_any_chunking_gives_the_same_replicates(name, data):
    make, kind = CASES[name]
    arrays = _arrays(kind, ties=name == "cutoff")
    n = arrays[0].shape[0]
    whole = PoissonBootstrap(make(), n_replicates=R, seed=9).update(*arrays)
    cuts = data.draw(chunkings(n))
    parts = [
        PoissonBootstrap(make(), n_replicates=R, seed=9).update(*(x[a:b] for x in arrays), row_offset=a)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    order = data.draw(st.permutations(range(len(parts))))
    merged = merge_tree([parts[i] for i in order], data)
    np.testing.assert_allclose(merged.compute(), whole.compute(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        from_state(merged.get_state()).compute(), whole.compute(), rtol=1e-12, atol=1e-15
    )


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_ce2_replicates_in_any_chunking_equal_the_whole(data):
    """Both passes of CE2 (the moments, then each replicate's plug-in) merge across chunks."""
    Y, S = _second_order(n=600)
    n = Y.shape[0]
    make = lambda: CE2Statistics(degree=3, alpha=1e-3)  # noqa: E731
    whole = PoissonBootstrap(make(), n_replicates=4, seed=7).update(Snapshots(Y), S)
    cuts = data.draw(chunkings(n))
    spans = list(zip(cuts[:-1], cuts[1:], strict=True))
    boots = [PoissonBootstrap(make(), n_replicates=4, seed=7) for _ in spans]
    first = merge_tree(
        [
            b.update(Snapshots(Y[lo:hi]), S[lo:hi], row_offset=lo)
            for b, (lo, hi) in zip(boots, spans, strict=True)
        ],
        data,
    )
    coef = whole.compute()  # the fits' coefficients: to 1e-12 of their scale (sums in another order)
    np.testing.assert_allclose(first.compute(), coef, rtol=1e-12, atol=1e-12 * np.abs(coef).max())
    parts = [first.plug_in().update(Snapshots(Y[a:b]), S[a:b], row_offset=a) for a, b in spans]
    second = merge_tree(parts, data)
    expected = whole.plug_in().update(Snapshots(Y), S).compute()
    np.testing.assert_allclose(second.compute(), expected, rtol=1e-12, atol=1e-15)


def test_rows_in_any_order_with_their_global_index():
    y, p = _binary()
    order = np.random.default_rng(2).permutation(y.shape[0])
    a = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=1).update(y, p).compute()
    b = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=1).update(
        y[order], p[order], row_index=order
    )
    np.testing.assert_allclose(b.compute(), a, rtol=1e-12)


def test_blocks_of_replicates_concatenate_to_the_whole():
    y, p = _binary()
    whole = PoissonBootstrap(CutoffStatistics(), n_replicates=10, seed=5).update(y, p).compute()
    blocks = [
        PoissonBootstrap(CutoffStatistics(), n_replicates=c, first_replicate=r0, seed=5)
        .update(y, p)
        .compute()
        for r0, c in ((0, 3), (3, 5), (8, 2))
    ]
    np.testing.assert_allclose(np.concatenate(blocks), whole, rtol=1e-13)


def test_given_weights_equal_the_drawn_ones_and_prepared_rows_are_reused():
    y, p = _binary()
    t = ScdlStatistics(max_bins=128)
    drawn = PoissonBootstrap(t, n_replicates=R, seed=2).update(y, p)
    W = drawn.replicate_weights(y.shape[0])
    given_w = PoissonBootstrap(t, n_replicates=R, seed=2).update(y, p, replicate_weights=W)
    np.testing.assert_array_equal(drawn.compute(), given_w.compute())
    prepared = given_w.prepare(y, p)
    again = PoissonBootstrap(t, n_replicates=R, seed=2).update(prepared, replicate_weights=W.astype(np.uint8))
    np.testing.assert_array_equal(again.compute(), drawn.compute())
    ws = {}
    for _ in range(2):  # a workspace reused by two updates gives the same result
        w_obj = PoissonBootstrap(t, n_replicates=R, seed=2).update(prepared, workspace=ws)
        np.testing.assert_array_equal(w_obj.compute(), drawn.compute())


@pytest.mark.parametrize("presorted", [False, True])
def test_updates_together_equal_the_updates_one_by_one(presorted):
    """Tiles shared by every plan of the same rows give each bootstrap its own update, bit for bit.

    Every binary template at once (several of one plan class, which need their own scratch in
    the lent workspace; unsorted rows, whose plans visit them in their own order), two chunks.
    """
    y, p = _binary(ties=True)
    if presorted:
        order = np.argsort(p, kind="stable")
        y, p = y[order], p[order]
    names = [k for k, (_, kind) in CASES.items() if kind == "binary"]
    n, half = y.shape[0], y.shape[0] // 2
    W = PoissonBootstrap(BrierScoreStatistics(), n_replicates=R, seed=4).replicate_weights(n)
    alone = []
    for k in names:
        b = PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=4)
        for sl in (slice(0, half), slice(half, n)):
            b.update(b.prepare(y[sl], p[sl], row_offset=sl.start), replicate_weights=W[:, sl])
        alone.append(b.compute())
    boots = [PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=4) for k in names]
    ws = {}
    for sl in (slice(0, half), slice(half, n)):
        jobs = [(b, b.prepare(y[sl], p[sl], row_offset=sl.start)) for b in boots]
        assert update_together(jobs, W[:, sl], workspace=ws) == boots
        # the statistics live in the workspace: keep each chunk's before the next one reuses it
        for b in boots:
            b._stats = {key: np.array(v, copy=True) for key, v in b.stats_.items()}
    assert all(b.n_updates_ == 2 for b in boots)
    for k, b, a in zip(names, boots, alone, strict=True):
        np.testing.assert_array_equal(b.compute(), a, err_msg=k)
    with pytest.raises(ValueError, match=r"replicate_weights must have shape \(6, 5\)"):
        update_together([(boots[0], boots[0].prepare(y[:5], p[:5]))], W[:, :4])
    # what update refuses, update_together refuses too; and one bootstrap twice would drop rows
    b = PoissonBootstrap(BinnedStatistics(n_bins=5), n_replicates=R)
    other = PoissonBootstrap(BinnedStatistics(n_bins=10), n_replicates=R).prepare(y[:5], p[:5])
    with pytest.raises(ValueError, match="made for another template"):
        update_together([(b, other)], W[:, :5])
    with pytest.raises(ValueError, match="real numbers"):
        update_together([(b, b.prepare(y[:5], p[:5]))], W[:, :5].astype(str))
    with pytest.raises(ValueError, match="Each bootstrap may appear once"):
        update_together(
            [(b, b.prepare(y[:5], p[:5])), (b, b.prepare(y[5:10], p[5:10], row_offset=5))], W[:, :5]
        )
    fresh = PoissonBootstrap(BinnedStatistics(n_bins=5), n_replicates=R)
    update_together([(fresh, fresh.prepare(y[:0], p[:0]))], W[:, :0])  # no rows: empty statistics
    assert fresh.n_updates_ == 1 and fresh.stats_["count"].shape[0] == R


@pytest.mark.parametrize("layout", ["by_row", "by_replicate"])
def test_updates_together_from_gathered_counts_equal_float_weights_in_that_order(layout):
    """Counts gathered tile by tile (``rows=``) give the statistics of the float weights in that order.

    The report passes a block's uint8 counts once, as the (replicates, rows) view of a (rows,
    replicates) array, with each model's sorted order as ``rows``: every template, tiles of
    several sizes (the plans' widths differ), bit for bit the update with the float weights
    already gathered into that order.
    """
    y, p = _binary(ties=True)
    n = y.shape[0]
    order = np.argsort(p, kind="stable")
    ys, ps = y[order], p[order]
    counts = poisson_weights(7, np.arange(R), np.arange(n))  # (R, n) uint8
    W8 = np.ascontiguousarray(counts.T).T if layout == "by_row" else counts
    names = [k for k, (_, kind) in CASES.items() if kind == "binary"]
    ref = [PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=7) for k in names]
    update_together([(b, b.prepare(ys, ps, row_index=order)) for b in ref], counts[:, order].astype(float))
    got = [PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=7) for k in names]
    update_together([(b, b.prepare(ys, ps, row_index=order)) for b in got], W8, rows=order)
    for k, a, b in zip(names, ref, got, strict=True):
        np.testing.assert_array_equal(b.compute(), a.compute(), err_msg=k)
    # the identity when rows is None (unsorted rows: plans that sort gather in their own order);
    # the counts are not modified; the same weights in another memory layout sum in another order
    before = counts.copy()
    same = [PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=7) for k in names]
    update_together([(b, b.prepare(y, p)) for b in same], W8)
    np.testing.assert_array_equal(counts, before)
    for k, b in zip(names, same, strict=True):
        direct = PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=7).update(y, p)
        np.testing.assert_allclose(b.compute(), direct.compute(), rtol=1e-13, err_msg=k)
    b = PoissonBootstrap(BinnedStatistics(n_bins=5), n_replicates=R)
    with pytest.raises(ValueError, match="rows must index the"):
        update_together([(b, b.prepare(y[:5], p[:5]))], W8, rows=np.array([0, 1, 2, 3, n]))
    with pytest.raises(ValueError, match="rows must be a 1-d array"):
        update_together([(b, b.prepare(y[:5], p[:5]))], W8, rows=np.zeros((5, 1), dtype=int))
    with pytest.raises(ValueError, match="rows 5 entries"):
        update_together([(b, b.prepare(y[:5], p[:5]))], W8, rows=np.arange(4))


@pytest.mark.parametrize(
    "a, b",
    [
        (lambda: BinnedStatistics(n_bins=7), lambda: BinnedStatistics(n_bins=7, measure="rms")),
        (CutoffStatistics, lambda: CutoffStatistics(measure="ks")),
        (lambda: CutoffGridStatistics(n_cells=64), lambda: CutoffGridStatistics(n_cells=64, measure="ks")),
    ],
)
def test_compute_as_another_measure_of_the_same_statistics(a, b):
    """One bootstrap's replicate statistics give every measure of them, bit for bit."""
    y, p = _binary(ties=True)
    boot = PoissonBootstrap(a(), n_replicates=R, seed=5).update(y, p)
    other = PoissonBootstrap(b(), n_replicates=R, seed=5).update(y, p)
    np.testing.assert_array_equal(boot.compute_as(b()), other.compute())
    np.testing.assert_array_equal(boot.compute_as(a()), boot.compute())
    with pytest.raises(ValueError, match="template must hold the statistics of"):
        boot.compute_as(SmoothECEStatistics())
    with pytest.raises(ValueError, match="'template' parameter"):
        boot.compute_as("ece")


def test_compute_as_refuses_other_parameters():
    y, P = _multiclass()
    t = TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=6)
    boot = PoissonBootstrap(t, n_replicates=R, seed=5).update(y, P)
    conf = PoissonBootstrap(
        TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=6, measure="conf_ece"), n_replicates=R, seed=5
    )
    np.testing.assert_array_equal(
        boot.compute_as(TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=6, measure="conf_ece")),
        conf.update(y, P).compute(),
    )
    with pytest.raises(ValueError, match="template must hold the statistics of"):
        boot.compute_as(TopLabelStatistics(labels=[0, 1, 2, 3], n_bins=5, measure="conf_ece"))


def test_a_plans_lent_workspace_is_kept_per_thread():
    """Threads may update bootstraps of one shared plan at once, each with its own scratch."""
    import threading

    y, p = _binary()
    plan = PoissonBootstrap(CutoffStatistics(), n_replicates=R).prepare(y, p).plan
    mine, seen = {}, []
    plan.workspace = mine
    t = threading.Thread(target=lambda: seen.append(plan.workspace))
    t.start()
    t.join()
    assert plan.workspace is mine and seen == [None]
    plan.workspace = None
    assert plan.workspace is None


def test_plans_of_one_tile_share_its_copies():
    """While an update visits a tile, its copies ``W @ 1`` are formed once for all its plans.

    Outside an update, or for another array (even one equal to it), they are formed afresh;
    an update lets its last tile go when it ends, whatever happens. (That the shared copies
    leave every statistic as it was is the bit-for-bit test above.)
    """
    W = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]])
    sharing_tile_copies(W)
    first = tile_copies(W)
    assert tile_copies(W) is first and first.tolist() == [3.0, 4.0]
    assert tile_copies(W.copy()) is not first
    sharing_tile_copies(None)
    assert tile_copies(W) is not first
    y, p = _binary()
    boots = [PoissonBootstrap(CASES[k][0](), n_replicates=R, seed=1) for k in ("scdl", "cutoff", "brier")]
    jobs = [(b, b.prepare(y, p)) for b in boots]
    update_together(jobs, boots[0].replicate_weights(y.shape[0]))
    assert getattr(_replicate._LENT, "tile", None) is None

    class Failing(type(jobs[2][1].plan)):
        def add(self, out, W, start, stop):
            assert tile_copies(W) is tile_copies(W)  # shared inside the update
            raise RuntimeError("a plan that fails")

    failing = jobs[2][1]
    failing.plan.__class__ = Failing
    with pytest.raises(RuntimeError, match="a plan that fails"):
        update_together([jobs[0], (boots[2], failing)], boots[0].replicate_weights(y.shape[0]))
    assert getattr(_replicate._LENT, "tile", None) is None


def test_votes_share_their_row_weight():
    """Rows sharing a global index (the votes of one input) get the same weights."""
    y, p = _binary(n=200)
    rows = np.repeat(np.arange(100), 2)
    b = PoissonBootstrap(BrierScoreStatistics(), n_replicates=R, seed=3).update(y, p, row_index=rows)
    W = b.replicate_weights(row_index=rows)
    np.testing.assert_array_equal(W[:, 0::2], W[:, 1::2])
    direct = [BrierScoreStatistics().update(y, p, sample_weight=W[r]).compute() for r in range(R)]
    np.testing.assert_allclose(b.compute(), direct, rtol=1e-12)


def test_merging_refuses_different_bootstraps():
    y, p = _binary(n=100)
    a = PoissonBootstrap(BinnedStatistics(), n_replicates=R, seed=1).update(y, p)
    for other in (
        PoissonBootstrap(BinnedStatistics(), n_replicates=R, seed=2),
        PoissonBootstrap(BinnedStatistics(n_bins=5), n_replicates=R, seed=1),
        PoissonBootstrap(BinnedStatistics(), n_replicates=R + 1, seed=1),
        PoissonBootstrap(BinnedStatistics(), n_replicates=R, first_replicate=1, seed=1),
    ):
        with pytest.raises(ValueError, match="Cannot merge PoissonBootstrap"):
            a + other
    with pytest.raises(TypeError):
        a + BinnedStatistics()
    np.testing.assert_allclose(merge_all([a]).compute(), a.compute())
    np.testing.assert_allclose(sum([a]).compute(), a.compute())


def test_bad_arguments_are_refused():
    y, p = _binary(n=50)
    with pytest.raises(ValueError, match="not a PoissonBootstrap"):
        PoissonBootstrap(PoissonBootstrap(MeanStatistics()))
    b = PoissonBootstrap(BinnedStatistics(), n_replicates=R)
    with pytest.raises(ValueError, match=r"replicate_weights must have shape \(6, 50\)"):
        b.update(y, p, replicate_weights=np.ones((R, 49)))
    with pytest.raises(ValueError, match="finite and non-negative"):
        b.update(y, p, replicate_weights=-np.ones((R, 50)))
    with pytest.raises(ValueError, match="finite and non-negative"):
        b.update(y, p, replicate_weights=np.full((R, 50), np.nan))
    with pytest.raises(ValueError, match=r"replicate_weights must have shape \(6, 50\)"):
        b.update(y, p, replicate_weights=np.ones((R, 49)), check_input=False)  # the shape, always
    with pytest.raises(ValueError, match="check_input"):
        b.update(y, p, replicate_weights=np.ones((R, 50)), check_input="no")

    with pytest.raises(ValueError, match="row_index must have shape"):
        b.update(y, p, row_index=np.arange(3))
    with pytest.raises(ValueError, match="row_offset or row_index"):
        b.update(y, p, row_offset=2, row_index=np.arange(50))
    with pytest.raises(ValueError, match="no second pass"):
        b.plug_in()
    with pytest.raises(ValueError, match="states no error bound"):
        b.bounds()
    with pytest.raises(NotImplementedError):
        PoissonBootstrap.from_validated(y, p)


def test_unchecked_weights_give_the_checked_statistics():
    # check_input=False skips only the value checks of replicate_weights (the report's own draws)
    y, p = _binary(n=80)
    W = PoissonBootstrap(BinnedStatistics(), n_replicates=R, seed=3).replicate_weights(80).astype(np.float64)
    a = PoissonBootstrap(BinnedStatistics(), n_replicates=R).update(y, p, replicate_weights=W)
    b = PoissonBootstrap(BinnedStatistics(), n_replicates=R).update(
        y, p, replicate_weights=W, check_input=False
    )
    np.testing.assert_array_equal(a.compute(), b.compute())


def test_state_round_trip_and_empty_chunks():
    y, p = _binary(n=300)
    b = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=8).update(y[:0], p[:0]).update(y, p)
    state = b.get_state()
    assert state["params"]["template"]["kind"] == "skcal.SmoothECEStatistics"
    c = from_state(state)
    assert isinstance(c, PoissonBootstrap) and c.seed == 8 and c.n_updates_ == 2
    np.testing.assert_array_equal(c.compute(), b.compute())
    state["arrays"].pop("N")
    with pytest.raises(ValueError, match="do not match"):
        from_state(state)


@pytest.mark.parametrize(
    "ids",
    [[0, 2, 2], [1, 1, 3], [0, 1, 2], [4], [0, 0, 0, 0, 0, 0, 0, 0, 1], [5, 3, 3, 0], [2, 2, 2, 3, 3, 4, 6]],
)
def test_add_bin_sums_equals_a_bincount_per_replicate(ids):
    """Every path (long runs, one row per bin, sorted ids, unsorted ids) adds the same sums."""
    from skcal.stats._replicate import add_bin_sums

    ids = np.array(ids)
    X = np.random.default_rng(0).uniform(size=(3, ids.size))
    out = add_bin_sums(np.ones((3, 8)), ids, X)
    expected = 1.0 + np.stack([np.bincount(ids, weights=x, minlength=8) for x in X])
    np.testing.assert_allclose(out, expected, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_sparse_sums_with_int32_or_int64_rows_equal_a_dense_loop(dtype):
    # the plans may store their accumulator rows as int32 (half the memory): the same sums
    rng = np.random.default_rng(5)
    n, m, R, nb = 700, 3, 5, 40
    rows = rng.integers(0, nb, (n, m)).astype(dtype)
    vals = rng.normal(size=(n, m))
    W = rng.poisson(1.0, (R, n)).astype(float)
    expected = np.zeros((nb, R))
    for i in range(n):
        for e in range(m):
            expected[rows[i, e]] += vals[i, e] * W[:, i]
    got = add_sparse_sums(np.zeros((nb, R)), rows, vals, W)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    assert rows.dtype == dtype  # the caller's rows are not converted in place


@pytest.mark.parametrize("presorted", [False, True])
def test_smooth_ece_replicates_per_unit_on_rows_at_every_grid_node(presorted):
    """smECE's replicate sums are kept per unit (a special fine cell, or a run of the others):
    rows on the nodes of every grid the bandwidth search visits, just below them, on fine-cell
    edges and in one crowded cell give the exact smECE of each resample."""
    from skcal.smooth_ece import smooth_ece
    from skcal.stats._smooth_ece import FINE_CELLS, fine_cell_units, smece_grid_points

    rng = np.random.default_rng(11)
    nodes = np.concatenate([np.arange(E) / (E - 1) for E in smece_grid_points()])
    parts = [
        rng.choice(nodes, 1500),
        np.nextafter(rng.choice(nodes, 500), 0.0),
        rng.integers(0, FINE_CELLS + 1, 500) / FINE_CELLS,
        np.full(300, 0.3),
        rng.uniform(size=700),
    ]
    p = np.clip(np.concatenate(parts), 0.0, 1.0)
    y = (rng.uniform(size=p.size) < p**1.2).astype(float)
    index = np.arange(p.size)
    if presorted:
        index = np.argsort(p, kind="stable")
        y, p = y[index], p[index]
    boot = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=6).update(y, p, row_index=index)
    unit, first = fine_cell_units()
    assert (
        first.size == 28_666
        and boot.stats_["cells"].size <= np.unique(unit[(p * FINE_CELLS).astype(int) % FINE_CELLS]).size
    )
    W = boot.replicate_weights(row_index=index).astype(int)
    direct = [smooth_ece(np.repeat(y, W[r]), np.repeat(p, W[r])) for r in range(R)]
    np.testing.assert_allclose(boot.compute(), direct, rtol=1e-12)


@pytest.mark.parametrize("p0", [0.0, 0.001])
def test_smooth_ece_replicates_of_searches_that_stay_at_one(p0):
    """smECE(1) is computed only for replicates whose bandwidth search never leaves 1 (every
    check holds): a predictor that is wrong on every row, where the search stays at 1 (p = 0)
    or stops just below it, gives the exact smECE of each resample."""
    from skcal.smooth_ece import smooth_ece

    n = 2000
    p = np.full(n, p0)
    y = np.ones(n)
    boot = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=0).update(y, p)
    W = boot.replicate_weights(n).astype(int)
    direct = [smooth_ece(np.repeat(y, W[r]), np.repeat(p, W[r])) for r in range(R)]
    np.testing.assert_allclose(boot.compute(), direct, rtol=1e-12)
    assert smooth_ece(y, p, return_bandwidth=True)[1] == (1.0 if p0 == 0.0 else 0.9990234375)


@pytest.mark.parametrize("sigma", [1.0, 0.5, 0.0625, 0.013, 0.004])
def test_smooth_ece_density_sum_is_the_smoothed_deposit_summed_over_the_mesh(sigma):
    """The replicates' denominator of smECE, the smoothed and interpolated weight summed over
    the mesh, is a linear function of the deposit: equal to smoothing it and summing."""
    from skcal.stats._smooth_ece import (
        _density_weights,
        _grid_size,
        _interpolate,
        _reflected_fft_size,
        reflected_gaussian,
    )

    E, n_mesh = _grid_size(sigma)
    N = np.random.default_rng(3).exponential(size=(4, E)) * (np.arange(E) % 7 != 0)
    t = np.linspace(0.0, 1.0, E)
    ker = np.exp(-((t - 0.5) ** 2) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    nfft = _reflected_fft_size(E)
    c = _density_weights(E, n_mesh, [sigma], np.fft.rfft(ker, nfft)[None, :], nfft)[0]
    mesh = np.linspace(0.0, 1.0, n_mesh)
    direct = [np.sum(_interpolate(mesh, row)) for row in reflected_gaussian(N, sigma)]
    np.testing.assert_allclose(N @ c, direct, rtol=1e-13)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0.0, 1.0), min_size=0, max_size=40))
def test_stable_argsort_is_numpys_stable_order_with_and_without_ties(values):
    v = np.array(values, dtype=float)
    np.testing.assert_array_equal(stable_argsort(v), np.argsort(v, kind="stable"))


@pytest.mark.parametrize("tied", [0.0, 0.03, 0.2, 1.0])
def test_stable_argsort_mends_the_order_inside_runs_of_ties(tied):
    """Clipped predictions (a few runs of ties among distinct values) take the fast sort and
    the mended runs; rounded ones (mostly ties) the stable sort: numpy's stable order either way."""
    rng = np.random.default_rng(8)
    v = rng.uniform(size=20_000)
    at = rng.uniform(size=v.size) < tied
    v[at] = rng.choice([0.0, 0.5, 1.0, v[0]], size=int(at.sum()))
    np.testing.assert_array_equal(stable_argsort(v), np.argsort(v, kind="stable"))


@pytest.mark.parametrize("p0", [0.001, 0.5, 0.999])
@pytest.mark.parametrize("y0", [0.0, 1.0])
def test_smooth_ece_replicates_of_predictions_near_their_labels_or_far_from_them(p0, y0):
    """smECE's replicate sums are the residuals' per label (not differences of sums of ``p``):
    rows all near one prediction, right or wrong, give the exact smECE of each resample."""
    from skcal.smooth_ece import smooth_ece

    n = 2000
    p = np.clip(p0 + np.random.default_rng(1).normal(0.0, 1e-4, n), 0.0, 1.0)
    y = np.full(n, y0)
    boot = PoissonBootstrap(SmoothECEStatistics(), n_replicates=R, seed=0).update(y, p)
    W = boot.replicate_weights(n).astype(int)
    direct = [smooth_ece(np.repeat(y, W[r]), np.repeat(p, W[r])) for r in range(R)]
    np.testing.assert_allclose(boot.compute(), direct, rtol=1e-12)


@pytest.mark.parametrize("pattern", [np.repeat, np.tile])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("broken", [False, True])
def test_stable_argsort_of_rows_given_k_times(pattern, k, broken):
    """Every value k times, side by side (the votes of k snapshots, sorted through one of each)
    or in k copies; and the same with one block broken (no longer a repeat)."""
    u = np.round(np.random.default_rng(9).uniform(size=6000), 2)  # ties between blocks too
    v = pattern(u, k)
    if broken:
        v[3001] = -1.0
    np.testing.assert_array_equal(stable_argsort(v), np.argsort(v, kind="stable"))


@pytest.mark.parametrize("compiled", [True, False])
def test_poisson_weights_into_a_row_major_block_are_the_stream(compiled, monkeypatch):
    """The report's blocks draw the weights straight into ``(rows, replicates)`` (here with a
    spare last column, as the block with a weighting of ones has): the same stream."""
    from skcal.stats._bootstrap import poisson_weights_into

    if not compiled:
        monkeypatch.setattr("skcal.stats._bootstrap.load_replicate_kernel", lambda: None)
    reps, rows = np.arange(3, 40), np.arange(70_000, 72_000)
    out = np.full((rows.size, reps.size + 1), 9, dtype=np.uint8)
    poisson_weights_into(5, reps, rows, out[:, :-1])
    np.testing.assert_array_equal(out[:, :-1], poisson_weights(5, reps, rows).T)
    assert (out[:, -1] == 9).all()
