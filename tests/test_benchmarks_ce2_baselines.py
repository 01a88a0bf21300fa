"""Smoke run of ``python -m benchmarks.speed_ce2_baselines --quick`` (as a user runs it, at the root)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_speed_ce2_baselines_quick(tmp_path):
    cmd = [sys.executable, "-m", "benchmarks.speed_ce2_baselines", "--quick", "--out", str(tmp_path)]
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    out = json.loads((tmp_path / "speed_ce2_baselines.json").read_text())
    assert (tmp_path / "speed_ce2_baselines.png").stat().st_size > 0
    assert out["mode"] == "quick" and len(out["rows"]) == 8
    for row in out["rows"]:
        assert row["seconds"] > 0 and 0 <= row["ce2"] <= 2
        assert row["n_constants_tried"] >= 6
