"""Exact quantile bins over chunks by extra passes (skcal.stats._quantile).

The multi-pass edges must equal ``np.percentile`` bitwise, the ``(value, global index)``
thresholds must reproduce ``assign_bins(..., strategy="quantile")`` exactly, and the measures
computed with them must equal the in-memory functions, for any chunking (empty and one-row
chunks), merge order and tree, heavy ties, values exactly 0 and 1 and values on cell edges; with
small cells and collection budgets so that every refinement path (value ranges, tied values split
by row index) is exercised.
"""

import numpy as np
import pytest
from _stats_helpers import chunkings, merge_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skcal.binned_ece import binned_ece
from skcal.binned_measures import debiased_l2_calibration_error, max_calibration_error
from skcal.binning import assign_bins
from skcal.stats import (
    BinnedStatistics,
    ClasswiseStatistics,
    QuantileCellStatistics,
    QuantileHistogramStatistics,
    QuantileSelector,
    TopLabelStatistics,
    from_state,
    quantile_edges,
    quantile_thresholds,
)
from skcal.stats._quantile import (
    _cell_bit_range,
    boundary_ranks,
    percentile_edges,
    percentile_ranks,
    threshold_bin_ids,
)
from skcal.truthful import classwise_ece, classwise_lince, conf_ece, truthful_conf_ce

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: (n_cells, n_sub, max_collect): the default, and tiny ones that force many refinement passes
CONFIGS = [(4096, 1024, 1 << 20), (4, 2, 1), (2, 3, 2), (8, 4, 5), (2, 2, 1)]

#: values that stress the cell arithmetic: 0, 1, cell edges of C = 2, 4, 8 and 4096, their
#: neighbours, the smallest subnormal and a tiny normal value
SPECIAL = np.array(
    [0.0, 1.0, 0.5, 0.25, 0.75, 0.125, 0.875, np.nextafter(0.5, 0), np.nextafter(0.5, 1),
     np.nextafter(1.0, 0), 5e-324, 1e-300, np.nextafter(0.25, 0),
     3 / 4096, np.nextafter(3 / 4096, 1), 4095 / 4096, np.nextafter(4095 / 4096, 0)]
)


@st.composite
def binary_case(draw, max_n=60):
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    pool = draw(st.sampled_from(["special", "ties", "uniform", "mixed"]))
    if pool == "special":
        p = rng.choice(SPECIAL, n)
    elif pool == "ties":
        p = rng.choice(np.array([0.0, 0.3, 1.0]), n)
    elif pool == "uniform":
        p = rng.uniform(size=n)
    else:
        p = np.where(rng.uniform(size=n) < 0.5, rng.choice(SPECIAL, n), rng.uniform(size=n))
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 1.0, 2.5], n)
    w[0] = 1.0  # some positive weight
    return y, p, w, draw(chunkings(n)), draw(st.sampled_from(CONFIGS))


#: probability vectors over 3 classes with exact ties, zeros and ones, and values on cell edges
ROWS = np.array(
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25],
     [0.125, 0.75, 0.125], [0.2, 0.3, 0.5], [1 / 3, 1 / 3, 1 / 3]]
)


@st.composite
def multiclass_case(draw, max_n=60):
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    P = ROWS[rng.integers(0, len(ROWS), n)]
    if draw(st.booleans()):
        mix = rng.uniform(size=n) < 0.5
        P[mix] = rng.dirichlet(np.ones(3), int(mix.sum()))
    y = rng.integers(0, 3, n)
    w = rng.choice([0.0, 1.0, 2.0], n)
    w[0] = 1.0
    return y, P, w, draw(chunkings(n)), draw(st.sampled_from(CONFIGS))


def _run(sel, arrays, cuts, data):
    """Run the selector's passes: one object per chunk (with its row_offset), merged along a
    hypothesis-chosen tree in a shuffled order, one state round trip per pass."""
    while (template := sel.next_statistics()) is not None:
        parts = []
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            obj = from_state(template.get_state())
            parts.append(obj.update(*(x[a:b] for x in arrays), row_offset=a))
        order = data.draw(st.permutations(range(len(parts))))
        merged = merge_tree([parts[i] for i in order], data)
        sel.advance(from_state(merged.get_state()))
    return sel


def _main(stats, arrays, w, cuts, offsets=True):
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        obj = type(stats)(**stats.get_params())
        kw = {"row_offset": a} if offsets else {}
        parts.append(obj.update(*(x[a:b] for x in arrays), sample_weight=w[a:b], **kw))
    return sum(parts[1:], parts[0])


def _kw(cfg):
    return dict(zip(("n_cells", "n_sub", "max_collect"), cfg, strict=True))


# ---------------------------------------------------------------------------------------------
# (a) scikit-learn's percentile edges of the binary binned measures
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 11, 100, 1001])
@pytest.mark.parametrize("n_bins", [1, 2, 3, 5, 10, 11, 15, 64, 2000])
def test_percentile_formula_is_bitwise_np_percentile(n, n_bins):
    rng = np.random.default_rng(n * 7919 + n_bins)
    p = rng.uniform(size=n) ** 3
    s = np.sort(p)
    edges = percentile_edges({int(r): s[r] for r in percentile_ranks(n, n_bins)}, n, n_bins)
    ref = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    assert edges.tobytes() == ref.tobytes()
    assert percentile_ranks(n, n_bins).size <= 2 * (n_bins + 1)


@SETTINGS
@given(case=binary_case(), n_bins=st.integers(1, 70), data=st.data())
def test_multipass_percentile_edges_equal_np_percentile(case, n_bins, data):
    y, p, w, cuts, cfg = case
    sel = _run(QuantileSelector(kind="percentile", n_bins=n_bins, **_kw(cfg)), (y, p), cuts, data)
    edges = sel.result()
    ref = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    assert edges.tobytes() == ref.tobytes()
    # the measures with those edges equal the in-memory quantile functions
    for measure, f in (("ece", binned_ece), ("mce", max_calibration_error),
                       ("debiased_l2", debiased_l2_calibration_error)):
        got = _main(sel.make_statistics(measure=measure), (y, p), w, cuts, offsets=False).compute()
        want = f(y, p, n_bins=n_bins, strategy="quantile", sample_weight=w)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_quantile_edges_driver_and_pos_label():
    rng = np.random.default_rng(3)
    p = rng.beta(0.3, 3.0, 20000)
    y = np.where(rng.uniform(size=p.size) < p, "yes", "no")
    chunks = lambda: ((y[a : a + 999], p[a : a + 999]) for a in range(0, p.size, 999))  # noqa: E731
    e = quantile_edges(chunks, 10, pos_label="yes")
    assert np.array_equal(e, np.percentile(p, np.linspace(0, 1, 11) * 100))
    got = BinnedStatistics(edges=e, pos_label="yes")
    for yc, pc in chunks():
        got.update(yc, pc)
    assert got.compute() == pytest.approx(binned_ece(y, p, n_bins=10, strategy="quantile", pos_label="yes"),
                                          rel=1e-12)


# ---------------------------------------------------------------------------------------------
# (b) rank-based equal-mass bins of the truthful measures (ties broken by global row index)
# ---------------------------------------------------------------------------------------------
@SETTINGS
@given(case=multiclass_case(), n_bins=st.integers(1, 70), data=st.data())
def test_top_label_thresholds_reproduce_assign_bins(case, n_bins, data):
    y, P, w, cuts, cfg = case
    n = P.shape[0]
    sel = QuantileSelector(kind="top_label", n_bins=n_bins, labels=[0, 1, 2], **_kw(cfg))
    sel = _run(sel, (y, P), cuts, data)
    tv, tg = sel.result()
    c = P.max(axis=1)
    ids = threshold_bin_ids(c, np.arange(n), tv, tg)
    np.testing.assert_array_equal(ids, assign_bins(c, n_bins, strategy="quantile"))
    for measure, f in (("truthful_conf_ce", truthful_conf_ce), ("conf_ece", conf_ece)):
        got = _main(sel.make_statistics(measure=measure), (y, P), w, cuts).compute()
        want = f(y, P, n_bins=n_bins, sample_weight=w, labels=[0, 1, 2])
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@SETTINGS
@given(case=multiclass_case(), n_bins=st.integers(1, 70), data=st.data())
def test_classwise_thresholds_reproduce_assign_bins(case, n_bins, data):
    y, P, w, cuts, cfg = case
    n = P.shape[0]
    sel = QuantileSelector(kind="classwise", n_bins=n_bins, labels=[0, 1, 2], **_kw(cfg))
    sel = _run(sel, (y, P), cuts, data)
    tv, tg = sel.result()
    assert tv.shape == tg.shape == (3, n_bins - 1)
    ref = assign_bins(P, n_bins, strategy="quantile")
    for j in range(3):
        np.testing.assert_array_equal(threshold_bin_ids(P[:, j], np.arange(n), tv[j], tg[j]), ref[:, j])
    for measure, f in (("classwise_lince", classwise_lince), ("classwise_ece", classwise_ece)):
        got = _main(sel.make_statistics(measure=measure), (y, P), w, cuts).compute()
        want = f(y, P, n_bins=n_bins, sample_weight=w, labels=[0, 1, 2])
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_binary_probability_input_for_truthful_measures():
    rng = np.random.default_rng(5)
    p = rng.choice([0.0, 0.5, 0.7, 1.0], 3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    chunks = lambda: ((y[a : a + 450], p[a : a + 450]) for a in range(0, 3000, 450))  # noqa: E731
    thr = quantile_thresholds(chunks, 15, labels=[0, 1])
    st_ = TopLabelStatistics(labels=[0, 1], thresholds=thr)
    for a in range(0, 3000, 450):
        st_.update(y[a : a + 450], p[a : a + 450], row_offset=a)
    assert st_.compute() == pytest.approx(truthful_conf_ce(y, p), rel=1e-12)


def test_boundary_ranks_are_array_split_starts():
    for n in (0, 1, 5, 14, 15, 16, 100, 101):
        for nb in (1, 2, 3, 15, 40):
            sizes = [len(a) for a in np.array_split(np.arange(n), nb)]
            starts = np.cumsum([0, *sizes])[1:-1]
            np.testing.assert_array_equal(boundary_ranks(n, nb), starts)


# ---------------------------------------------------------------------------------------------
# larger data: pass counts, state sizes and equality with the default parameters
# ---------------------------------------------------------------------------------------------
def _loop(sel, y, P, rows):
    sizes = []
    while (st_ := sel.next_statistics()) is not None:
        for a in range(0, len(y), rows):
            st_.update(y[a : a + rows], P[a : a + rows], row_offset=a)
        sizes.append(sum(v.nbytes for v in st_.stats_.values()))
        sel.advance(st_)
    return sizes


def test_softmax_columns_default_parameters():
    rng = np.random.default_rng(11)
    n, k = 60000, 6
    L = rng.normal(size=(n, k)) * 4
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    sel = QuantileSelector(kind="classwise", n_bins=15, labels=list(range(k)))
    sizes = _loop(sel, y, P, 7000)
    assert sel.n_passes_ == len(sizes) <= 3
    assert max(sizes) <= 24 * (1 << 20) + 3 * 8 * 1024 * 15 * k  # collected members + sub-histograms
    m = sel.make_statistics()
    for a in range(0, n, 7000):
        m.update(y[a : a + 7000], P[a : a + 7000], row_offset=a)
    assert m.compute() == pytest.approx(classwise_lince(y, P), rel=1e-12)


def test_refinement_by_value_then_by_row_index():
    # one value tied 5000 times across a bin boundary, more than max_collect: the cell is refined
    # by value until it holds the single value, then by global row index
    rng = np.random.default_rng(2)
    n = 20000
    c = np.where(rng.uniform(size=n) < 0.25, 0.6, 0.5 + 0.5 * rng.uniform(size=n))
    P = np.column_stack([c, 1 - c])
    y = rng.integers(0, 2, n)
    sel = QuantileSelector(kind="top_label", n_bins=15, labels=[0, 1], n_sub=4, max_collect=50)
    _loop(sel, y, P, 3001)
    assert sel.n_passes_ > 3
    tv, tg = sel.result()
    np.testing.assert_array_equal(threshold_bin_ids(c, np.arange(n), tv, tg), assign_bins(c, 15))


# ---------------------------------------------------------------------------------------------
# protocol, state and errors
# ---------------------------------------------------------------------------------------------
def test_pass_statistics_state_round_trip_and_merge():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    h = QuantileHistogramStatistics(n_cells=16).update(y, p)
    h2 = from_state(h.get_state())
    np.testing.assert_array_equal(h2.stats_["count"], h.stats_["count"])
    assert int(h.stats_["count"].sum()) == 500
    lo, hi = _cell_bit_range(3, 16)
    c = QuantileCellStatistics(n_cells=16, boxes=[[0, lo, hi, 0, 500, 0, 1]])
    a = type(c)(**c.get_params()).update(y[:200], p[:200], row_offset=0)
    b = type(c)(**c.get_params()).update(y[200:], p[200:], row_offset=200)
    whole = c.update(y, p)
    merged = from_state((b + a).get_state())
    np.testing.assert_array_equal(np.sort(merged.stats_["g"]), np.sort(whole.stats_["g"]))
    np.testing.assert_array_equal(np.sort(merged.stats_["g"]), np.flatnonzero((p >= 3 / 16) & (p < 4 / 16)))


def test_thresholds_params_round_trip_and_default_behaviour_unchanged():
    P = np.array([[0.7, 0.3], [0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])
    y = [0, 1, 0, 0]
    s = TopLabelStatistics(labels=[0, 1], thresholds=([0.5, np.inf], [2, 0]))
    s.update(y, P, row_offset=0)
    again = from_state(s.get_state())
    assert again.thresholds == s.thresholds and again.compute() == s.compute()
    # without thresholds, row_offset changes nothing
    a = TopLabelStatistics(labels=[0, 1], n_bins=3).update(y, P).compute()
    assert TopLabelStatistics(labels=[0, 1], n_bins=3).update(y, P, row_offset=7).compute() == a
    cw = ClasswiseStatistics(labels=[0, 1], thresholds=([[0.5], [0.3]], [[1], [0]]))
    assert cw.n_bins == 2


@pytest.mark.parametrize(
    "thresholds, match",
    [
        (([0.5, 0.4], [0, 0]), "strictly increasing"),
        (([0.5, 0.5], [3, 3]), "strictly increasing"),
        (([0.5], [0, 1]), "shape"),
        (([np.nan], [0]), "finite"),
        (([0.5], [-1]), "non-negative"),
        (([0.5], [0.5]), "integers"),
        ("ab", r"'thresholds' parameter of TopLabelStatistics.__init__ must be a pair \(values, indices\)"),
        (0.5, r"'thresholds' parameter of TopLabelStatistics.__init__ must be a pair \(values, indices\)"),
        ([[0.5]], "pair"),
    ],
)
def test_bad_thresholds(thresholds, match):
    with pytest.raises(ValueError, match=match):
        TopLabelStatistics(labels=[0, 1], thresholds=thresholds)


def test_errors():
    with pytest.raises(ValueError, match="not both"):
        TopLabelStatistics(labels=[0, 1], edges=[0, 1], thresholds=([], []))
    with pytest.raises(ValueError, match="row_offset"):
        TopLabelStatistics(labels=[0, 1]).update([0], [[0.6, 0.4]], row_offset=-1)
    with pytest.raises(ValueError, match="kind"):
        QuantileSelector(kind="median", n_bins=3)
    with pytest.raises(ValueError, match="n_cells"):
        QuantileSelector(kind="percentile", n_bins=3, n_cells=1000)
    with pytest.raises(ValueError, match="labels"):
        QuantileSelector(kind="classwise", n_bins=3)
    with pytest.raises(ValueError, match="n_bins"):
        QuantileSelector(kind="percentile", n_bins=True)
    sel = QuantileSelector(kind="percentile", n_bins=3)
    with pytest.raises(ValueError, match="no rows"):
        sel.advance(sel.next_statistics().update([], []))
    with pytest.raises(RuntimeError, match="not finished"):
        QuantileSelector(kind="percentile", n_bins=3).result()
    # the data changed between passes
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (p > 0.5).astype(int)
    sel = QuantileSelector(kind="percentile", n_bins=4)
    sel.advance(sel.next_statistics().update(y, p))
    with pytest.raises(ValueError, match="changed between passes"):
        sel.advance(sel.next_statistics().update(y[:200], p[:200]))
    with pytest.raises(TypeError, match="QuantileCellStatistics"):
        sel.advance(QuantileHistogramStatistics())
    with pytest.raises(ValueError, match="last next_statistics"):
        sel.advance(QuantileCellStatistics())
