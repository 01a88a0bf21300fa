"""Smoke run of ``benchmarks/truthful_bins.py`` (experiment 6.6) and its clear error without data."""

import importlib
import json

import pytest


def _load(name="truthful_bins"):
    """The script ``benchmarks/<name>.py`` as the module ``benchmarks.<name>``."""
    return importlib.import_module(f"benchmarks.{name}")


@pytest.mark.slow
def test_quick_run_writes_json_and_figures(tmp_path):
    mod = _load()
    argv = ["--quick", "--out", str(tmp_path)]
    has_data = mod.DEFAULT_DATA.is_dir()
    if not has_data:  # the real outputs live outside the repository; run the other two parts
        argv.append("--skip-real")
    result = mod.main(argv)
    data = json.loads((tmp_path / "truthful_bins_quick.json").read_text())
    assert set(data["simulation"]["minimiser"]) == {f"{m}@{b}" for m in mod.MEASURES for b in mod.BINS}
    # the truthful measures are minimised by the honest report in the simulation
    for key, winner in data["simulation"]["minimiser"].items():
        if key.startswith(("ConfCE_corr", "LinCE_cw")):
            assert winner == "honest", key
    # and the uncorrected ConfCE with one sample per bin is gamed by the strategic report
    assert data["simulation"]["minimiser"]["ConfCE@2000"] != "honest"
    if has_data:
        models = data["real"]["models"]
        assert {m["dataset"] for m in models} == {"cifar10", "cifar100"}
        for m in models:  # temperature scaling keeps the argmax, so the error is unchanged
            assert m["before"]["error"] == m["after"]["error"]
            assert 0.1 < m["temperature"] < 10
    for fig in result["figures"]:  # file names beside the JSON
        assert (tmp_path / fig).stat().st_size > 1000
    # the parts `python benchmarks/verify.py truthful_bins` reruns (without the real outputs) have not
    # moved from the stored quick result: a changed number fails here
    verify = _load("verify")
    stored = json.loads((verify.QUICK_DIR / "truthful_bins_quick.json").read_text())
    for part in ("digits", "simulation"):
        diffs = verify.compare(stored[part], data[part])
        assert not diffs, f"truthful_bins {part} moved: {diffs[:10]}"


def test_missing_data_gives_clear_error(tmp_path):
    mod = _load()
    with pytest.raises(SystemExit, match="not found"):
        mod.main(["--quick", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path)])
