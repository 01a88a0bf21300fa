"""Smoke run of ``benchmarks/doubly_labelled.py`` (CE2 error against the number of doubly-labelled rows)."""

import importlib.util
import json
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")


def _load(name="doubly_labelled"):
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", os.path.join(BENCH, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"_bench_{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_doubly_labelled_quick(tmp_path):
    out = _load().main(["--quick", "--seeds", "2", "--out", str(tmp_path)])
    assert (tmp_path / "doubly_labelled_quick.png").stat().st_size > 0
    saved = json.loads((tmp_path / "doubly_labelled_quick.json").read_text())
    prov = saved["provenance"]
    assert {"commit", "command", "config", "cpu_count", "date", "wall_time_s"} <= set(prov)
    assert prov["config"]["n_seeds"] == 2 and "--quick" in prov["command"]
    # the same run as `python benchmarks/verify.py doubly_labelled`: a moved number fails here
    _load("verify").assert_matches_stored("doubly_labelled", tmp_path / "doubly_labelled_quick.json")
    truth = out["ground_truth"]
    assert truth["replicate_abs_diff"] < 0.01 and 0 < truth["ce2"] < 2
    for est in ("doubly_only", "hybrid"):
        err = np.asarray(out["summary"][est]["abs_error_mean"])
        assert err.shape == (len(out["n2"]),) and np.isfinite(err).all()
        assert err[-1] < err[0]  # more doubly-labelled rows, smaller error
    # the hybrid uses all N single labels for eta1: with few pairs it is the better estimate
    assert (
        out["summary"]["hybrid"]["abs_error_mean"][0]
        < 1.5 * out["summary"]["doubly_only"]["abs_error_mean"][0]
    )
