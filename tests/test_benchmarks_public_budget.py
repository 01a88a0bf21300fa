"""Smoke tests of the budget sweep over every public callable and of the overhead benchmark (quick)."""

import importlib
import json

import pytest


def _load(name):
    return importlib.import_module(f"benchmarks.{name}")


@pytest.mark.slow
def test_public_budget_quick(tmp_path):
    mod = _load("public_budget")
    result = mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "public_budget_quick.json").read_text())
    assert "provenance" in saved and saved["n"] == 1000
    # every case ran, none failed, and at 1000 rows every one is far inside the budget
    assert result["errors"] == []
    assert result["over_budget"] == []
    for name, row in result["cases"].items():
        assert row["status"] == "done", name
        assert row["cpu_s"] >= 0 and row["within_budget"] is True, name


def test_every_public_callable_is_a_case_or_excluded():
    mod = _load("public_budget")
    cases = mod.cases()
    names = set(cases)
    excluded = " ".join(mod.EXCLUDED)
    missing = []
    for key in mod.public_names():
        owner, _, method = key.partition(".")
        if key in names or any(c.startswith(key + "(") for c in names):
            continue
        if method and (method in excluded or f"{owner}.{method}" in excluded):
            continue
        if key in excluded:
            continue
        if method.startswith("set_") and method.endswith("_request") and "set_*_request" in excluded:
            continue
        missing.append(key)
    assert missing == [], f"public callables neither measured nor excluded with a reason: {missing}"
    # and every exclusion names its reason
    assert all(isinstance(v, str) and len(v) > 20 for v in mod.EXCLUDED.values())


def test_child_measurement_reports_cpu_and_memory():
    mod = _load("public_budget")
    row = mod.measure("cutoff_calibration_error", 5000)
    assert row["status"] == "done" and row["cpu_s"] >= 0
    if "peak_rss_mib" in row:  # Linux /proc
        assert row["peak_rss_mib"] > 0 and row["peak_growth_mib"] >= 0


def test_speed_overhead_quick(tmp_path):
    mod = _load("speed_overhead")
    result = mod.main(
        ["--quick", "--rounds", "1", "--sizes", "1000", "--test-n", "2000", "--test-rounds", "1",
         "--out", str(tmp_path)]
    )
    assert (tmp_path / "speed_overhead_quick.json").exists()
    assert (tmp_path / "speed_overhead_quick.png").exists()
    row = result["rows"][0]
    assert {"cutoff", "binned_ece", "scdl"} <= set(row["ratios"])
    assert all(v["ratio"] > 0 for v in row["ratios"].values())
    if "relplot_smECE" in row["values"]:  # the same smECE as relplot on the timed data
        assert row["values"]["skcal_smooth_ece"] == pytest.approx(row["values"]["relplot_smECE"], abs=1e-9)
    assert any(k.startswith("scdl_peak_memory_within_2x_input") for k in result["targets"])
    test = result["calibration_test"]  # calibration_test(cutoff) beside one np.sort of p
    assert test["n"] == 2000 and test["ratio_test_over_sort"] > 0
    assert 0 < test["p_value"] <= 1
    assert result["targets"]["calibration_test_cutoff_within_10x_one_sort_n_2e3"]["ratio"] > 0
