"""Smoke test of benchmarks/scale_dask.py (quick mode: synchronous scheduler, 1e5 rows)."""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_quick_mode_agrees_with_in_memory(tmp_path):
    import scale_dask

    record = scale_dask.main(["--quick", "--out", str(tmp_path)])
    for bundle in ("first", "ce2"):
        res = record[bundle]
        assert res["max_rel_diff"] < 1e-10
        for k, v in res["numpy_statistics_values"].items():
            assert v == pytest.approx(res["dask_values"][k], rel=1e-10)
    runs = json.loads((tmp_path / "scale_dask.json").read_text())
    assert len(runs) == 1 and runs[0]["rows"] == 100000
