"""Smoke run of ``benchmarks/doubly_labelled.py`` (CE2 error against the number of doubly-labelled rows)."""

import json

import numpy as np
import pytest

from benchmarks import doubly_labelled
from benchmarks.verify import assert_matches_stored


@pytest.mark.slow
def test_doubly_labelled_quick(tmp_path):
    out = doubly_labelled.main(["--quick", "--seeds", "2", "--out", str(tmp_path)])
    assert (tmp_path / "doubly_labelled_quick.png").stat().st_size > 0
    saved = json.loads((tmp_path / "doubly_labelled_quick.json").read_text())
    prov = saved["provenance"]
    assert {"commit", "command", "config", "cpu_count", "date", "wall_time_s"} <= set(prov)
    assert prov["config"]["n_seeds"] == 2 and "--quick" in prov["command"]
    # the same run as `python benchmarks/verify.py doubly_labelled`: a moved number fails here
    # another BLAS kernel family with no stored result: its reason is printed, the rest runs
    assert_matches_stored("doubly_labelled", tmp_path / "doubly_labelled_quick.json", missing_ok=True)
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
