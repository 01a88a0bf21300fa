"""skcal.dask with the binned, cutoff and truthful statistics: equal to the in-memory functions."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")

from skcal.binned_ece import binned_ece  # noqa: E402
from skcal.binned_measures import (  # noqa: E402
    average_calibration_error,
    debiased_l2_calibration_error,
    max_calibration_error,
    rms_calibration_error,
)
from skcal.cutoff import cutoff_calibration_error  # noqa: E402
from skcal.dask import evaluate  # noqa: E402
from skcal.ks_calibration_error import ks_calibration_error  # noqa: E402
from skcal.truthful import classwise_ece, classwise_lince, conf_ce, conf_ece, truthful_conf_ce  # noqa: E402

RAGGED = (1, 0, 250, 17, 1, 431, 300)  # an empty and one-row blocks


def _binary(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=n), 2)  # ties, and points on the uniform bin edges
    p[:20], p[20:40] = 0.0, 1.0
    y = (rng.uniform(size=n) < p).astype(int)
    w = rng.choice([0.0, 1.0, 2.0], n)
    return y, p, w


def test_binned_and_cutoff_measures_equal_in_memory():
    y, p, w = _binary()
    yd, pd_, wd = (da.from_array(a, chunks=(RAGGED,)) for a in (y, p, w))
    names = [
        "binned_ece",
        "max_calibration_error",
        "rms_calibration_error",
        "average_calibration_error",
        "debiased_l2_calibration_error",
        "cutoff",
        "ks_calibration_error",
    ]
    out = evaluate(yd, pd_, names, sample_weight=wd, scheduler="sync")
    ref = {
        "binned_ece": binned_ece(y, p, n_bins=11, sample_weight=w),
        "max_calibration_error": max_calibration_error(y, p, sample_weight=w),
        "rms_calibration_error": rms_calibration_error(y, p, sample_weight=w),
        "average_calibration_error": average_calibration_error(y, p, sample_weight=w),
        # Kumar et al. bin by quantile, and so does skcal.dask by default (exact, extra passes)
        "debiased_l2_calibration_error": debiased_l2_calibration_error(y, p, sample_weight=w),
        "cutoff": cutoff_calibration_error(y, p, sample_weight=w),
        "ks_calibration_error": ks_calibration_error(y, p, sample_weight=w),
    }
    for name in names:
        assert out[name] == pytest.approx(ref[name], rel=1e-10, abs=1e-14), name


def test_truthful_measures_equal_in_memory_with_uniform_bins():
    rng = np.random.default_rng(1)
    n, k = 900, 4
    P = rng.dirichlet(np.ones(k), n)
    y = np.array([rng.choice(k, p=row) for row in P])
    y[:300] = 0  # the first partitions hold one class only: labels= keeps the columns aligned
    Pd = da.from_array(P, chunks=((300, 0, 1, 599), k))
    yd = da.from_array(y, chunks=((300, 0, 1, 599),))
    names = ["truthful_conf_ce", "conf_ce", "conf_ece", "classwise_lince", "classwise_ece"]
    uniform = [(name, {"strategy": "uniform"}) for name in names]
    out = evaluate(yd, Pd, uniform, labels=np.arange(k), scheduler="sync")
    funcs = {
        "truthful_conf_ce": truthful_conf_ce,
        "conf_ce": conf_ce,
        "conf_ece": conf_ece,
        "classwise_lince": classwise_lince,
        "classwise_ece": classwise_ece,
    }
    for name in names:
        ref = funcs[name](y, P, n_bins=15, strategy="uniform", labels=np.arange(k))
        assert out[name] == pytest.approx(ref, rel=1e-10, abs=1e-15), name
    # without strategy=, each measure bins as its in-memory function does by default (quantile)
    default = evaluate(yd, Pd, names, labels=np.arange(k), scheduler="sync")
    for name in names:
        ref = funcs[name](y, P, labels=np.arange(k))
        assert default[name] == pytest.approx(ref, rel=1e-10, abs=1e-15), name


def test_scdl_and_smooth_ece_equal_in_memory():
    from skcal.scdl import scdl_score
    from skcal.smooth_ece import smooth_ece

    y, p, w = _binary(seed=3)
    yd, pd_, wd = (da.from_array(a, chunks=(RAGGED,)) for a in (y, p, w))
    out = evaluate(yd, pd_, ["scdl", "smooth_ece"], sample_weight=wd, scheduler="sync")
    assert out["scdl"] == pytest.approx(scdl_score(y, p, sample_weight=w), rel=1e-10)
    assert out["smooth_ece"] == pytest.approx(smooth_ece(y, p, sample_weight=w), rel=1e-10)


def test_default_strategy_is_the_in_memory_default():
    """MeasureSpec.strategy must follow the in-memory function's default, so that the two
    paths cannot drift apart when a default changes."""
    import inspect

    import skcal
    from skcal.dask import MEASURES

    binned = {name: spec for name, spec in MEASURES.items() if spec.strategy is not None}
    assert len(binned) == 10
    for name, spec in binned.items():
        default = inspect.signature(getattr(skcal, name)).parameters["strategy"].default
        assert spec.strategy == default, name
