"""Smoke run of ``benchmarks/mixed_labels.py``: the mixed rule of ``ce2_score`` (single and double labels)."""

import json

import numpy as np
import pytest

from benchmarks import mixed_labels
from benchmarks.verify import assert_matches_stored


@pytest.mark.slow
def test_mixed_labels_quick(tmp_path):
    out = mixed_labels.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "mixed_labels_quick.json").read_text())
    prov = saved["provenance"]
    assert {"commit", "command", "config", "cpu_count", "date", "wall_time_s"} <= set(prov)
    assert "--quick" in prov["command"]
    # the same run as `python benchmarks/verify.py mixed_labels`: a moved number fails here
    # another BLAS kernel family with no stored result: its reason is printed, the rest runs
    assert_matches_stored("mixed_labels", tmp_path / "mixed_labels_quick.json", missing_ok=True)
    err = {e: np.asarray(out["summary"][e]["abs_error_mean"]) for e in mixed_labels.ESTIMATES}
    assert all(v.shape == (len(out["n2"]),) and np.isfinite(v).all() for v in err.values())
    # every row labelled twice: the mixed rule is the doubly-labelled estimate, exactly
    assert out["n2"][-1] == prov["config"]["n_total"] and err["mixed"][-1] == err["doubly_only"][-1]
    # with few pairs the single-label rows make eta1 better than the pairs alone do
    assert err["mixed"][0] <= err["doubly_only"][0]
