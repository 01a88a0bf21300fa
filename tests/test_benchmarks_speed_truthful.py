"""Smoke tests of the speed benchmarks of the binned and truthful measures (quick mode)."""

import importlib
import json

import pytest


def _load(name):
    """The script ``benchmarks/<name>.py`` as the module ``benchmarks.<name>``."""
    return importlib.import_module(f"benchmarks.{name}")


def test_speed_truthful_quick(tmp_path):
    mod = _load("speed_truthful")
    result = mod.main(["--quick", "--no-memory", "--rounds", "1", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "speed_truthful_quick.json").read_text())
    assert (tmp_path / "speed_truthful_quick.png").exists()
    prov = saved["provenance"]
    for key in ("commit", "command", "config", "cpu_count", "wall_time_s", "date"):
        assert key in prov
    assert {r["name"] for r in result["rows"]} == {"classwise_k100", "confidence_k10"}
    cw = next(r for r in result["rows"] if r["name"] == "classwise_k100")
    assert result["summary"]["classwise_k100_n5000"]["rel_diff_kernel_numpy_path"] <= 1e-12
    breakdown = cw["kernel_breakdown"]
    if mod.kernel_available():  # the compiled passes, timed one by one
        assert breakdown["pass1_histogram_s"] > 0 and 0 < breakdown["boundary_member_fraction"] < 1
    else:
        assert breakdown is None
    conf = next(r for r in result["rows"] if r["name"] == "confidence_k10")
    if "netcal_ECE_15" in conf["values"]:  # same top-label ECE as netcal, where it is installed
        netcal = conf["values"]["netcal_ECE_15"]
        assert conf["values"]["skcal_conf_ece_uniform"] == pytest.approx(netcal, abs=1e-12)


def test_speed_binned_quick(tmp_path):
    mod = _load("speed_binned")
    rows = mod.bench_cutoff_binned(ns=(2000,), rounds=1)
    assert rows[0]["cutoff_time_over_floor"] > 0 and rows[0]["binned_ece_peak_over_sklearn"] > 0
    mod.main(["--quick", "--rounds", "1", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "speed_binned_quick.json").read_text())
    assert saved["provenance"]["commit"] is not None or saved["provenance"]["command"]
