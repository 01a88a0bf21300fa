"""Quick-mode smoke run of benchmarks/primary_measure.py: which measure orders two models right."""

import importlib
import json

import numpy as np
import pytest


@pytest.mark.slow
def test_primary_measure_quick(tmp_path):
    mod = importlib.import_module("benchmarks.primary_measure")
    result = mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "primary_measure_quick.json").read_text())
    assert set(saved["summary"]) == set(mod.MEASURES)
    for cells in saved["summary"].values():
        for cell in cells.values():
            assert 0 <= cell["low"] <= cell["rate"] <= cell["high"] <= 1
    assert saved["best_calibration_measure"] == result["best_calibration_measure"]
    assert saved["provenance"]["command"].startswith("python -m benchmarks.primary_measure --quick")
    importlib.import_module("benchmarks.verify").assert_matches_stored(
        "primary_measure", tmp_path / "primary_measure_quick.json"
    )


def test_the_pairs_are_ordered_by_every_population_measure():
    """The better model of each pair is better calibrated by the true l1 calibration error too."""
    mod = importlib.import_module("benchmarks.primary_measure")
    rng = np.random.default_rng(0)
    for a, b in mod.DISTRIBUTIONS.values():
        q = rng.beta(a, b, size=200_000)
        for family, better, worse in mod.PAIRS:
            good = np.mean(np.abs(mod.distort(q, family, better) - q))
            bad = np.mean(np.abs(mod.distort(q, family, worse) - q))
            assert good < bad
