"""skcal.dask's graph and merge helpers: small graphs, shared states, no extra passes, exact merges."""

import copy
import pickle

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="dask is not installed (pip install 'skcal[dask]')")
da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")

from skcal.dask import (  # noqa: E402
    MEASURES,
    _holds_rows,
    _merge_states,
    _partition_states,
    _partitions,
    _recipe,
    _reduce,
    _tree_reduce,
    evaluate,
)
from skcal.stats import BrierScoreStatistics, CutoffStatistics, from_state  # noqa: E402

RAGGED = (1, 0, 250, 17, 1, 431, 300)


def _binary(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=n), 3)  # ties within and across chunks
    p[:20], p[20:40] = 0.0, 1.0
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 1.0, 2.0], n)
    return y, p, w


def _template(name, **kw):
    spec = MEASURES[name]
    extra = {"labels": [0, 1]} if "labels" in spec.label_args else {}
    return spec.make(**extra, **kw).get_state()


def test_leaf_tasks_do_not_embed_the_empty_arrays():
    # the empty smECE state alone is 4 x 2^18 floats (8 MiB), SCDL's 2 x 65,537, the grid's 3 x 65,536
    y, p, _ = _binary(300)
    parts = _partitions(da.from_array(y, chunks=50), da.from_array(p, chunks=50), None)
    templates = [_template(n) for n in ("smooth_ece", "scdl", "cutoff_grid")]
    assert sum(a.nbytes for t in templates for a in t["arrays"].values()) > 8e6
    root = _tree_reduce([_recipe(t) for t in templates], parts, 4)
    graph = dict(root.__dask_graph__())
    size = len(pickle.dumps(graph, protocol=5))
    assert size < 200_000, size
    # the recipes are one shared key, read by every leaf
    leaves = [k for k in graph if str(k).startswith("_partition_states")]
    assert len(leaves) == 6


def test_a_template_holding_rows_is_added_once():
    st = BrierScoreStatistics().update([0, 1], [0.2, 0.6])
    assert "arrays" not in _recipe(st.get_state())
    assert _holds_rows(st.get_state()) and not _holds_rows(BrierScoreStatistics().get_state())
    # the template's rows are added once (not once per partition), as one update on everything
    y, p, _ = _binary(200)
    parts = _partitions(da.from_array(y, chunks=70), da.from_array(p, chunks=70), None)
    (out,) = _reduce([st.get_state()], parts, 2, "sync")
    ref = BrierScoreStatistics().update(np.r_[[0, 1], y], np.r_[[0.2, 0.6], p])
    assert out.compute() == pytest.approx(ref.compute(), rel=1e-13)


def test_recipe_from_another_state_version_is_refused(monkeypatch):
    recipe = _recipe(BrierScoreStatistics().get_state())
    recipe["state_version"] = 999
    with pytest.raises(ValueError, match="same skcal on the client and the workers"):
        _partition_states([recipe], np.array([0, 1]), np.array([0.2, 0.6]), None)


@pytest.mark.parametrize("name", sorted(n for n, s in MEASURES.items() if s.compute_params))
def test_compute_only_parameters_do_not_change_the_state(name):
    # the contract that lets measures share one state: guard it for every class that declares it
    spec = MEASURES[name]
    y, p, w = _binary(400, seed=2)
    module, cls = spec.statistics.split(":")
    klass = getattr(__import__(module, fromlist=[cls]), cls)
    choices = {
        "skcal.stats._binned:BinnedStatistics": ["ece", "mce", "rms", "ace", "debiased_l2"],
        "skcal.stats._cutoff:CutoffStatistics": ["cutoff", "ks"],
        "skcal.stats._cutoff:CutoffGridStatistics": ["cutoff", "ks"],
        "skcal.stats._truthful:TopLabelStatistics": ["truthful_conf_ce", "conf_ce", "conf_ece"],
        "skcal.stats._truthful:ClasswiseStatistics": ["classwise_lince", "classwise_ece"],
    }[spec.statistics]
    assert spec.compute_params == ("measure",)
    states = []
    for m in choices:
        kw = {**spec.kwargs, "measure": m}
        if "labels" in spec.label_args:
            kw["labels"] = [0, 1]
        states.append(klass(**kw).update(y, p, sample_weight=w).get_state()["arrays"])
    for s in states[1:]:
        assert s.keys() == states[0].keys()
        for k in s:
            np.testing.assert_array_equal(s[k], states[0][k])


def test_shared_states_give_the_values_of_separate_passes():
    y, p, w = _binary(900, seed=4)
    yd, pd_, wd = (da.from_array(a, chunks=(RAGGED[:-1] + (200,),)) for a in (y, p, w))
    names = [
        "binned_ece",
        "max_calibration_error",
        "rms_calibration_error",
        "average_calibration_error",
        "debiased_l2_calibration_error",
        "cutoff",
        "ks_calibration_error",
        "cutoff_grid",
        "truthful_conf_ce",
        "conf_ce",
        "conf_ece",
        "classwise_lince",
        "classwise_ece",
    ]
    together = evaluate(yd, pd_, names, sample_weight=wd, labels=[0, 1], scheduler="sync")
    for n in names:
        alone = evaluate(yd, pd_, [n], sample_weight=wd, labels=[0, 1], scheduler="sync")[n]
        assert together[n] == alone, n
    # and measures built with different bins are not merged into one state
    out = evaluate(yd, pd_, ["binned_ece", ("max_calibration_error", {"n_bins": 11})], scheduler="sync")
    from skcal.binned_measures import max_calibration_error

    assert out["max_calibration_error"] == pytest.approx(max_calibration_error(y, p, n_bins=11), rel=1e-12)


def test_shared_leaf_holds_one_state_per_distinct_statistics(monkeypatch):
    import skcal.dask as sd

    seen = []
    real = sd._partition_states

    def spy(recipes, y, p, w):
        seen.append(len(recipes))
        return real(recipes, y, p, w)

    monkeypatch.setattr(sd, "_partition_states", spy)
    y, p, _ = _binary(300)
    names = ["binned_ece", "max_calibration_error", "rms_calibration_error", "cutoff", "ks_calibration_error"]
    evaluate(da.from_array(y, chunks=100), da.from_array(p, chunks=100), names, scheduler="sync")
    # binned_ece has 11 bins, the others 15: two binned states, and one exact cutoff state for two
    assert seen == [3, 3, 3]


def test_rows_made_by_one_task_are_made_once():
    # one generating function per block feeds both y and p: it must run once per block, not twice
    calls = []

    def block(i):
        calls.append(i)
        rng = np.random.default_rng(i)
        p = rng.uniform(size=100)
        return (rng.uniform(size=100) < p).astype(int), p

    ys, ps = [], []
    for i in range(4):
        t = dask.delayed(block, pure=True, nout=2)(i)
        ys.append(da.from_delayed(t[0], shape=(100,), dtype=int))
        ps.append(da.from_delayed(t[1], shape=(100,), dtype=float))
    y, p = da.concatenate(ys), da.concatenate(ps)
    out = evaluate(y, p, ["brier", "smooth_ece"], scheduler="sync")
    assert sorted(calls) == [0, 1, 2, 3]
    yn, pn = (np.concatenate(a) for a in zip(*(block(i) for i in range(4)), strict=True))
    from sklearn.metrics import brier_score_loss

    assert out["brier"] == pytest.approx(brier_score_loss(yn, pn), rel=1e-12)


def test_merge_does_not_write_into_its_input_states():
    y, p, w = _binary(600, seed=6)
    recipes = [_recipe(_template(n)) for n in ("brier", "smooth_ece", "cutoff", "cutoff_grid", "scdl")]
    leaves = [_partition_states(recipes, y[s], p[s], w[s]) for s in np.array_split(np.arange(600), 4)]
    before = copy.deepcopy(leaves)
    merged = _merge_states(*leaves)
    for a, b in zip(leaves, before, strict=True):
        for sa, sb in zip(a, b, strict=True):
            for k in sa["arrays"]:
                np.testing.assert_array_equal(sa["arrays"][k], sb["arrays"][k])
    for st, name in zip(merged, ("brier", "smooth_ece", "cutoff", "cutoff_grid", "scdl"), strict=True):
        ref = MEASURES[name].make().update(y, p, sample_weight=w)
        assert from_state(st).compute() == pytest.approx(ref.compute(), rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize("seed", range(5))
def test_cutoff_many_way_merge_equals_one_update(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    p = rng.choice(np.linspace(0, 1, int(rng.integers(2, 60))), n)  # many ties across chunks
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 0.5, 1.0, 3.0], n)
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(1, 9))))
    parts = [
        CutoffStatistics().update(yy, pp, sample_weight=ww)
        for yy, pp, ww in zip(np.split(y, cuts), np.split(p, cuts), np.split(w, cuts), strict=True)
    ]
    one = CutoffStatistics().update(y, p, sample_weight=w)
    many = CutoffStatistics()
    many._stats = many._combine_many([s.stats_ for s in parts])
    pair = parts[0]
    for s in parts[1:]:
        pair = pair + s
    for got in (many.stats_, pair.stats_):
        np.testing.assert_array_equal(got["values"], one.stats_["values"])
        np.testing.assert_allclose(got["resid"], one.stats_["resid"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["weight"], one.stats_["weight"], rtol=1e-12, atol=1e-12)
