"""skcal.dask: measures over dask collections equal the in-memory functions."""

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")
dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")

from sklearn.metrics import accuracy_score, brier_score_loss, log_loss  # noqa: E402

from skcal.ce2 import ce1_score, ce2_score  # noqa: E402
from skcal.dask import MEASURES, evaluate, evaluate_dataframe, fit_second_order_calibrator  # noqa: E402
from skcal.platt import SecondOrderPlattCalibrator  # noqa: E402
from skcal.votes import Snapshots  # noqa: E402

RAGGED = (1, 0, 250, 17, 1, 431, 300)  # an empty and one-row blocks


def _binary(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    p[:20] = 0.0
    p[20:40] = 1.0
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 1.0, 2.0], n)
    return y, p, w


def _second_order(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    f = np.clip(S[:, 0] + rng.normal(0, 0.1, n), 0, 1)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    return S, Y


def test_ragged_chunks_equal_in_memory_binary():
    y, p, w = _binary()
    yd, pd_, wd = (da.from_array(a, chunks=(RAGGED,)) for a in (y, p, w))
    out = evaluate(yd, pd_, ["brier", "log_loss", "accuracy", "ce1"], sample_weight=wd, scheduler="sync")
    assert out["brier"] == pytest.approx(brier_score_loss(y, p, sample_weight=w), rel=1e-12)
    assert out["log_loss"] == pytest.approx(log_loss(y, p, sample_weight=w), rel=1e-12)
    assert out["accuracy"] == pytest.approx(accuracy_score(y, p > 0.5, sample_weight=w), rel=1e-12)
    assert out["ce1"] == pytest.approx(ce1_score(y, p, degree=12, sample_weight=w), rel=1e-10)


def test_p_rechunked_to_y_and_multiclass_label_pass():
    rng = np.random.default_rng(1)
    labels = np.array([3, 7, 9])
    P = rng.dirichlet(np.ones(3), 600)
    y = labels[rng.integers(0, 3, 600)]
    y[:300] = 3  # the first blocks miss classes 7 and 9
    yd = da.from_array(y, chunks=100)
    Pd = da.from_array(P, chunks=((250, 350), (2, 1)))  # other row chunks, split columns
    out = evaluate(yd, Pd, ["brier", "log_loss", "accuracy"], scheduler="sync")
    assert out["log_loss"] == pytest.approx(log_loss(y, P), rel=1e-12)
    assert out["brier"] == pytest.approx(brier_score_loss(y, P, labels=labels), rel=1e-12)
    assert out["accuracy"] == pytest.approx(accuracy_score(y, labels[P.argmax(axis=1)]), rel=1e-12)
    given = evaluate(yd, Pd, ["log_loss"], labels=[3, 7, 9], scheduler="sync")
    assert given["log_loss"] == out["log_loss"]


def test_ce2_two_passes_and_calibrator_from_distributed_statistics():
    S, Y = _second_order(1200, seed=2)
    Sd = da.from_array(S, chunks=((500, 0, 1, 699), (2,)))
    Yd = da.from_array(Y, chunks=((100, 1100), (2,)))
    out, stats = evaluate(
        Yd, Sd, [("ce2", {"degree": 6, "alpha": 1e-6})], scheduler="sync", return_statistics=True
    )
    assert out["ce2"] == pytest.approx(ce2_score(Snapshots(Y), S, degree=6, alpha=1e-6), rel=1e-10)
    assert stats["ce2"].n_updates_ == 2  # the row chunks of y rule; scores are rechunked to them
    cal = fit_second_order_calibrator(Yd, Sd, degree=5, alpha=1e-8, scheduler="sync")
    ref = SecondOrderPlattCalibrator(degree=5, alpha=1e-8).fit(S, Snapshots(Y))
    np.testing.assert_allclose(cal.transform(S), ref.transform(S), atol=1e-9)


def test_auto_degree_counts_the_effective_sample_size_first():
    S, Y = _second_order(3000, seed=7)
    w = np.where(np.arange(3000) < 1000, 1.0, 0.0)
    Sd, Yd, wd = (da.from_array(a, chunks=(700,) + a.shape[1:]) for a in (S, Y, w))
    out, stats = evaluate(
        Yd,
        Sd,
        [("ce2", {"degree": "auto", "bandwidth": 1 / 16})],
        sample_weight=wd,
        scheduler="sync",
        return_statistics=True,
    )
    ref = ce2_score(Snapshots(Y), S, bandwidth=1 / 16, sample_weight=w)
    assert out["ce2"] == pytest.approx(ref, rel=1e-10)
    y = (Y[:, 0] > 0).astype(int)
    got = evaluate(
        da.from_array(y, chunks=500), Sd[:, 0].rechunk(500), [("ce1", {"degree": "auto"})], scheduler="sync"
    )
    assert got["ce1"] == pytest.approx(ce1_score(y, S[:, 0]), rel=1e-10)


def test_dask_dataframe_from_pandas():
    y, p, w = _binary(900, seed=3)
    pdf = pd.DataFrame({"label": np.where(y == 1, "spam", "ham"), "p": p, "w": w})
    ddf = dd.from_pandas(pdf, npartitions=4)
    out = evaluate_dataframe(ddf, y="label", p="p", sample_weight="w", pos_label="spam", scheduler="sync")
    assert out["brier"] == pytest.approx(brier_score_loss(y, p, sample_weight=w), rel=1e-12)
    assert out["accuracy"] == pytest.approx(accuracy_score(y, p > 0.5, sample_weight=w), rel=1e-12)
    S, Y = _second_order(800, seed=4)
    sdf = dd.from_pandas(
        pd.DataFrame({"m": S[:, 0], "s2": S[:, 1], "y1": Y[:, 0], "y2": Y[:, 1]}), npartitions=3
    )
    res = evaluate_dataframe(
        sdf, y=["y1", "y2"], p=["m", "s2"], measures=[("ce2", {"degree": 4})], scheduler="sync"
    )
    assert res["ce2"] == pytest.approx(ce2_score(Snapshots(Y), S, degree=4), rel=1e-10)
    cal = fit_second_order_calibrator(sdf[["y1", "y2"]], sdf[["m", "s2"]], degree=3, scheduler="sync")
    ref = SecondOrderPlattCalibrator(degree=3).fit(S, Snapshots(Y))
    np.testing.assert_allclose(cal.transform(S), ref.transform(S), atol=1e-9)


def test_parquet_folder(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is needed to write parquet")
    y, p, _ = _binary(700, seed=5)
    for i, part in enumerate(np.array_split(np.arange(700), 3)):
        pd.DataFrame({"y": y[part], "p": p[part]}).to_parquet(tmp_path / f"part{i}.parquet")
    out = evaluate_dataframe(dd.read_parquet(str(tmp_path)), y="y", p="p", scheduler="sync")
    assert out["log_loss"] == pytest.approx(log_loss(y, p), rel=1e-12)


def test_errors():
    y, p, _ = _binary(100)
    yd, pd_ = da.from_array(y, chunks=30), da.from_array(p, chunks=30)
    with pytest.raises(ValueError, match="Unknown measure"):
        evaluate(yd, pd_, ["nope"])
    with pytest.raises(ValueError, match="one input kind"):
        evaluate(yd, pd_, ["brier", "ce2"])
    with pytest.raises(ValueError, match="rows"):
        evaluate(yd, pd_[:50])
    with pytest.raises(ValueError, match="split_every"):
        evaluate(yd, pd_, split_every=1)
    with pytest.raises(ValueError, match="pos_label"):
        evaluate(da.from_array(np.array(["a", "b"] * 50), chunks=30), pd_, scheduler="sync")
    with pytest.raises(TypeError, match="all as dask arrays"):
        evaluate(dd.from_pandas(pd.Series(y), npartitions=2), pd_)


def test_public_functions_declare_their_arguments():
    # issue 20: validate_params on evaluate, evaluate_dataframe and fit_second_order_calibrator
    y, p, _ = _binary(100)
    yd, pd_ = da.from_array(y, chunks=30), da.from_array(p, chunks=30)
    with pytest.raises(ValueError, match="'return_statistics' parameter of evaluate must be"):
        evaluate(yd, pd_, return_statistics="yes")
    with pytest.raises(ValueError, match="'scheduler' parameter of evaluate must be"):
        evaluate(yd, pd_, scheduler=3)
    df = dd.from_pandas(pd.DataFrame({"y": y, "p": p}), npartitions=2)
    with pytest.raises(ValueError, match="'y' parameter of evaluate_dataframe must be"):
        evaluate_dataframe(df, y=1, p="p")
    # the keyword arguments evaluate_dataframe passes on are checked by evaluate (named for the caller)
    with pytest.raises(ValueError, match="'split_every' parameter of evaluate_dataframe must be"):
        evaluate_dataframe(df, y="y", p="p", split_every=1)
    S, Y = _second_order(100)
    with pytest.raises(ValueError, match="'degree' parameter of fit_second_order_calibrator must be"):
        fit_second_order_calibrator(
            da.from_array(Y, chunks=(30, 2)), da.from_array(S, chunks=(30, 2)), degree=600
        )
    # a measure's own arguments are checked by its statistics object or here, before any pass
    with pytest.raises(ValueError, match="'bandwidth' parameter of evaluate must be"):
        evaluate(da.from_array(Y, chunks=(30, 2)), da.from_array(S, chunks=(30, 2)),
                 [("ce2", {"degree": "auto", "bandwidth": -1.0})], scheduler="sync")
    with pytest.raises(ValueError, match=r"'n_bins' parameter of BinnedStatistics.__init__ must be"):
        evaluate(yd, pd_, [("binned_ece", {"n_bins": 0})], scheduler="sync")


def test_table_entries_build_their_statistics():
    for name, spec in MEASURES.items():
        # multiclass statistics need their label set up front (evaluate passes it)
        obj = spec.make(labels=[0, 1, 2]) if spec.label_args == ("labels",) else spec.make()
        assert hasattr(obj, "update") and hasattr(obj, "get_state"), name
        assert spec.inputs in ("first_order", "second_order") and spec.status


def test_local_cluster_smoke():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    y, p, w = _binary(2000, seed=6)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as lc:
        with distributed.Client(lc):
            out = evaluate(
                da.from_array(y, chunks=333),
                da.from_array(p, chunks=333),
                sample_weight=da.from_array(w, chunks=333),
            )
    assert out["brier"] == pytest.approx(brier_score_loss(y, p, sample_weight=w), rel=1e-12)


def test_clear_import_error_without_dask(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "dask", None)  # makes `import dask` fail
    monkeypatch.setitem(sys.modules, "dask.array", None)
    monkeypatch.delitem(sys.modules, "skcal.dask")
    with pytest.raises(ImportError, match=r"pip install 'skcal\[dask\]'"):
        importlib.import_module("skcal.dask")
