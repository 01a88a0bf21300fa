"""Smoke runs of the Chebyshev engine's speed script and of the degree-guard study."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import ce2_degree_guard
from benchmarks.verify import assert_matches_stored

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_speed_second_order_quick(tmp_path):
    cmd = [sys.executable, "-m", "benchmarks.speed_second_order", "--quick", "--n-jobs", "1"]
    cmd += ["--out", str(tmp_path)]
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    out = json.loads((tmp_path / "speed_second_order.json").read_text())
    assert (tmp_path / "speed_second_order.png").stat().st_size > 0
    a = out["stats_vs_dense"]
    # the sufficient-statistics fit and the dense-design ridge solve the same problem
    assert a["coef_rel_diff"] < 1e-6 and a["fitted_rel_diff"] < 1e-8
    assert out["large_n"]["finite_output"] and out["large_n"]["peak_rss_MB"] > 0
    g = out["grid_search"]
    assert g["n_fits"] == 5 * 7 * 5 + 1 and g["time_gridsearch_s"] > 0


@pytest.mark.slow
def test_ce2_degree_guard_quick(tmp_path):
    assert ce2_degree_guard.main(["--quick", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "ce2_degree_guard_quick.json").read_text())
    assert (tmp_path / "ce2_degree_guard_quick.png").exists()
    summ = out["summary"]["5000"]
    # fewer samples per feature -> higher degree
    assert summ["guard_30"]["degree"][0] > summ["guard_100"]["degree"][0] > summ["guard_300"]["degree"][0]
    assert all(0 <= v["ce2_mean"] < 1 for v in summ.values())
    # the same run as `python benchmarks/verify.py ce2_degree_guard`: a moved number fails here
    assert_matches_stored("ce2_degree_guard", tmp_path / "ce2_degree_guard_quick.json")
