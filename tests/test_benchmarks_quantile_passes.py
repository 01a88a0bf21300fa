"""Smoke test of benchmarks/quantile_passes.py (quick mode)."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_quantile_passes_quick(tmp_path):
    path = ROOT / "benchmarks" / "quantile_passes.py"
    spec = importlib.util.spec_from_file_location("quantile_passes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "quantile_passes_quick.json").read_text())
    assert "command" in saved["provenance"]
    for row in result["rows"]:
        assert row["extra_passes"] >= 1
        if row["kind"] == "percentile":
            assert row["edges_bitwise_equal_np_percentile"]
            assert row["value"] == row["chunked_with_in_memory_edges_value"]
        assert row["value"] == pytest.approx(row["in_memory_value"], rel=1e-10)
