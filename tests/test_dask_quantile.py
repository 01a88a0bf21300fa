"""skcal.dask.evaluate with strategy="quantile": the extra passes give the in-memory bins exactly."""

import numpy as np
import pandas as pd
import pytest
from _stats_helpers import chunkings
from hypothesis import given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")
dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")

from skcal.binned_ece import binned_ece  # noqa: E402
from skcal.binned_measures import (  # noqa: E402
    average_calibration_error,
    debiased_l2_calibration_error,
    max_calibration_error,
    rms_calibration_error,
)
from skcal.dask import MEASURES, evaluate, evaluate_dataframe  # noqa: E402
from skcal.truthful import classwise_ece, classwise_lince, conf_ce, conf_ece, truthful_conf_ce  # noqa: E402

RAGGED = (1, 0, 250, 17, 1, 431, 300)  # an empty and one-row blocks
BINNED = {
    "binned_ece": (binned_ece, 11),
    "max_calibration_error": (max_calibration_error, 15),
    "rms_calibration_error": (rms_calibration_error, 15),
    "average_calibration_error": (average_calibration_error, 15),
    "debiased_l2_calibration_error": (debiased_l2_calibration_error, 15),
}
TRUTHFUL = {
    "truthful_conf_ce": truthful_conf_ce,
    "conf_ce": conf_ce,
    "conf_ece": conf_ece,
    "classwise_lince": classwise_lince,
    "classwise_ece": classwise_ece,
}


def _binary(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.choice([0.0, 0.2, 0.5, 0.75, 1.0], n)  # heavy ties, 0, 1 and values on cell edges
    p[: n // 2] = rng.uniform(size=n // 2)
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 1.0, 2.0], n)
    return y, p, w


def _multiclass(n=1000, k=4, seed=1):
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.ones(k), n), 1)  # many exact ties, zeros
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    w = rng.choice([0.0, 1.0, 2.0], n)
    return y, P, w


def test_binned_quantile_ragged_chunks_equal_in_memory():
    y, p, w = _binary()
    yd, pd_, wd = (da.from_array(a, chunks=(RAGGED,)) for a in (y, p, w))
    measures = [(m, {"strategy": "quantile"}) for m in BINNED] + [("brier", {})]
    out, stats = evaluate(yd, pd_, measures, sample_weight=wd, scheduler="sync", return_statistics=True)
    for m, (f, n_bins) in BINNED.items():
        want = f(y, p, n_bins=n_bins, strategy="quantile", sample_weight=w)
        assert out[m] == pytest.approx(want, rel=1e-12, abs=1e-15), m
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
        assert stats[m].bin_edges().tobytes() == edges.tobytes()
    # explicit n_bins, and uniform as a no-op strategy
    out = evaluate(yd, pd_, [("binned_ece", {"strategy": "quantile", "n_bins": 7}),
                             ("max_calibration_error", {"strategy": "uniform"})], scheduler="sync")
    assert out["binned_ece"] == pytest.approx(binned_ece(y, p, n_bins=7, strategy="quantile"), rel=1e-12)
    assert out["max_calibration_error"] == pytest.approx(max_calibration_error(y, p), rel=1e-12)


def test_truthful_quantile_ragged_chunks_equal_in_memory():
    y, P, w = _multiclass()
    yd = da.from_array(y, chunks=(RAGGED,))
    Pd = da.from_array(P, chunks=((500, 500), (2, 2)))  # other row chunks: rechunked to y's
    wd = da.from_array(w, chunks=(RAGGED,))
    measures = [(m, {"strategy": "quantile"}) for m in TRUTHFUL] + [("brier", {})]
    out = evaluate(yd, Pd, measures, sample_weight=wd, scheduler="sync")
    for m, f in TRUTHFUL.items():
        assert out[m] == pytest.approx(f(y, P, sample_weight=w), rel=1e-12, abs=1e-15), m
    out = evaluate(yd, Pd, [("classwise_lince", {"strategy": "quantile", "n_bins": 40})], scheduler="sync")
    assert out["classwise_lince"] == pytest.approx(classwise_lince(y, P, n_bins=40), rel=1e-12)


def test_refinement_passes_through_the_dask_path(monkeypatch):
    # tiny cells and collection budget: the values are refined over several passes and the tied
    # values split by global row index across partitions, all through evaluate's tree reductions
    from skcal.stats._quantile import QuantileSelector

    defaults = dict(QuantileSelector.__init__.__kwdefaults__)
    monkeypatch.setattr(
        QuantileSelector.__init__, "__kwdefaults__", {**defaults, "n_cells": 2, "n_sub": 2, "max_collect": 3}
    )
    passes = []
    advance = QuantileSelector.advance

    def counting(self, stats):
        out = advance(self, stats)
        passes.append(self.n_passes_)
        return out

    monkeypatch.setattr(QuantileSelector, "advance", counting)
    y, P, w = _multiclass(n=400, k=3, seed=7)
    yb, p, wb = _binary(n=400, seed=8)
    chunks = (40, 0, 1, 99, 60, 200)
    args = {"sample_weight": da.from_array(w, chunks=(chunks,)), "scheduler": "sync", "split_every": 2}
    ms = [(m, {"strategy": "quantile"}) for m in ("truthful_conf_ce", "classwise_ece")]
    out = evaluate(da.from_array(y, chunks=(chunks,)), da.from_array(P, chunks=(chunks, (3,))), ms, **args)
    assert out["truthful_conf_ce"] == pytest.approx(truthful_conf_ce(y, P, sample_weight=w), rel=1e-12)
    assert out["classwise_ece"] == pytest.approx(classwise_ece(y, P, sample_weight=w), rel=1e-12)
    args["sample_weight"] = da.from_array(wb, chunks=(chunks,))
    out = evaluate(da.from_array(yb, chunks=(chunks,)), da.from_array(p, chunks=(chunks,)),
                   [("binned_ece", {"strategy": "quantile"})], **args)
    want = binned_ece(yb, p, strategy="quantile", sample_weight=wb)
    assert out["binned_ece"] == pytest.approx(want, rel=1e-12)
    assert max(passes) > 3  # the refinements did happen


def test_quantile_on_a_dask_dataframe():
    y, P, w = _multiclass(n=700, k=3, seed=4)
    pdf = pd.DataFrame(P, columns=["a", "b", "c"]).assign(y=y, w=w)
    df = dd.from_pandas(pdf, npartitions=5)
    measures = [(m, {"strategy": "quantile"}) for m in ("truthful_conf_ce", "classwise_lince")]
    out = evaluate_dataframe(
        df, y="y", p=["a", "b", "c"], sample_weight="w", measures=measures, scheduler="sync"
    )
    assert out["truthful_conf_ce"] == pytest.approx(truthful_conf_ce(y, P, sample_weight=w), rel=1e-12)
    assert out["classwise_lince"] == pytest.approx(classwise_lince(y, P, sample_weight=w), rel=1e-12)


def test_quantile_strategy_errors_and_status():
    y, p, _ = _binary(n=50)
    yd, pd_ = da.from_array(y, chunks=10), da.from_array(p, chunks=10)
    with pytest.raises(ValueError, match="takes no strategy"):
        evaluate(yd, pd_, [("brier", {"strategy": "quantile"})], scheduler="sync")
    with pytest.raises(ValueError, match="uniform"):
        evaluate(yd, pd_, [("binned_ece", {"strategy": "median"})], scheduler="sync")
    for m in (*BINNED, *TRUTHFUL):
        assert "quantile" in MEASURES[m].status and "extra passes" in MEASURES[m].status
        assert f"{MEASURES[m].strategy} bins by default" in MEASURES[m].status or m in TRUTHFUL


def test_local_cluster_smoke():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    y, P, w = _multiclass(n=600, k=3, seed=9)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as lc:
        with distributed.Client(lc):
            out = evaluate(
                da.from_array(y, chunks=150),
                da.from_array(P, chunks=(150, 3)),
                [("classwise_lince", {"strategy": "quantile"})],
                sample_weight=da.from_array(w, chunks=150),
            )
    assert out["classwise_lince"] == pytest.approx(classwise_lince(y, P, sample_weight=w), rel=1e-12)


@settings(max_examples=12, deadline=None)
@given(cuts=chunkings(300, max_cuts=6), seed=st.integers(0, 2**16))
def test_hypothesis_chunkings_through_dask(cuts, seed):
    y, P, w = _multiclass(n=300, k=3, seed=seed)
    chunks = tuple(int(b - a) for a, b in zip(cuts[:-1], cuts[1:], strict=True))
    out = evaluate(
        da.from_array(y, chunks=(chunks,)),
        da.from_array(P, chunks=(chunks, (3,))),
        [(m, {"strategy": "quantile"}) for m in ("truthful_conf_ce", "classwise_lince")],
        sample_weight=da.from_array(w, chunks=(chunks,)),
        scheduler="sync",
    )
    assert out["truthful_conf_ce"] == pytest.approx(truthful_conf_ce(y, P, sample_weight=w), rel=1e-12)
    assert out["classwise_lince"] == pytest.approx(classwise_lince(y, P, sample_weight=w), rel=1e-12)


def _tied_multiclass(n=800, k=3, seed=0):
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.ones(k), n), 1)
    P[:, -1] = 0.0
    P[:, -1] = np.clip(1.0 - P.sum(axis=1), 0.0, 1.0)
    P /= P.sum(axis=1, keepdims=True)
    return rng.integers(0, k, n), P


def test_user_thresholds_split_ties_by_global_row_index():
    """Thresholds computed elsewhere (quantile_thresholds) need each partition's global offset."""
    from skcal.stats import quantile_thresholds

    y, P = _tied_multiclass()
    labels = [0, 1, 2]
    yd, Pd = da.from_array(y, chunks=100), da.from_array(P, chunks=(100, 3))
    for name, kind in (("truthful_conf_ce", "top_label"), ("classwise_lince", "classwise")):
        thr = quantile_thresholds(lambda: iter([(y, P)]), 15, labels=labels, kind=kind)
        for extra in ({}, {"strategy": "uniform"}, {"strategy": "quantile"}):
            out = evaluate(yd, Pd, [(name, {"thresholds": thr, **extra})], labels=labels, scheduler="sync")
            assert out[name] == pytest.approx(TRUTHFUL[name](y, P, labels=labels), rel=1e-12), (name, extra)


def test_explicit_thresholds_take_precedence_over_strategy():
    from skcal.stats import quantile_thresholds

    y, P = _tied_multiclass(seed=1)
    labels = [0, 1, 2]
    yd, Pd = da.from_array(y, chunks=150), da.from_array(P, chunks=(150, 3))
    thr5 = quantile_thresholds(lambda: iter([(y, P)]), 5, labels=labels)
    spec = ("truthful_conf_ce", {"thresholds": thr5, "strategy": "quantile"})
    out = evaluate(yd, Pd, [spec], labels=labels, scheduler="sync")
    want = truthful_conf_ce(y, P, n_bins=5, labels=labels)
    assert out["truthful_conf_ce"] == pytest.approx(want, rel=1e-12)


def test_none_means_not_given_as_in_memory():
    y, p, _ = _binary(n=sum(RAGGED))
    yd, pd_ = da.from_array(y, chunks=(RAGGED,)), da.from_array(p, chunks=(RAGGED,))
    out = evaluate(yd, pd_, [("debiased_l2_calibration_error", {"edges": None})], scheduler="sync")
    want = debiased_l2_calibration_error(y, p, edges=None)
    assert out["debiased_l2_calibration_error"] == pytest.approx(want, rel=1e-12, abs=1e-15)
    yy, P = _tied_multiclass(n=sum(RAGGED), seed=2)
    Pd, yyd = da.from_array(P, chunks=(RAGGED, 3)), da.from_array(yy, chunks=(RAGGED,))
    out = evaluate(yyd, Pd, [("truthful_conf_ce", {"thresholds": None, "edges": None})], labels=[0, 1, 2],
                   scheduler="sync")
    assert out["truthful_conf_ce"] == pytest.approx(truthful_conf_ce(yy, P, labels=[0, 1, 2]), rel=1e-12)


def test_n_bins_is_bounded_before_any_allocation():
    y, p, _ = _binary()
    yd, pd_ = da.from_array(y, chunks=500), da.from_array(p, chunks=500)
    bounded = r"'n_bins' parameter of \w+\.__init__ must be an int in the range \[1, 16777216\]"
    for name in ("binned_ece", "debiased_l2_calibration_error"):
        with pytest.raises(ValueError, match=bounded):
            evaluate(yd, pd_, [(name, {"n_bins": 2**30})], scheduler="sync")
