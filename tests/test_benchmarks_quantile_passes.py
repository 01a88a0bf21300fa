"""Smoke test of ``benchmarks/quantile_passes.py`` (quick mode)."""

import json

import pytest

from benchmarks import quantile_passes


def test_quantile_passes_quick(tmp_path):
    result = quantile_passes.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "quantile_passes_quick.json").read_text())
    assert saved["provenance"]["command"].startswith("python -m benchmarks.quantile_passes --quick")
    for row in result["rows"]:
        assert row["extra_passes"] >= 1
        if row["kind"] == "percentile":
            assert row["edges_bitwise_equal_np_percentile"]
            assert row["value"] == row["chunked_with_in_memory_edges_value"]
        assert row["value"] == pytest.approx(row["in_memory_value"], rel=1e-10)
