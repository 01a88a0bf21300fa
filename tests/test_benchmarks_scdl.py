"""Quick-mode smoke runs of the SCDL benchmark scripts (imported, writing to a temporary dir)."""

import importlib
import json

import numpy as np
import pytest


def _load(name):
    """The script ``benchmarks/<name>.py`` as the module ``benchmarks.<name>``."""
    return importlib.import_module(f"benchmarks.{name}")


@pytest.mark.slow
def test_scdl_synthetic_quick(tmp_path):
    mod = _load("scdl_synthetic")
    result = mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "scdl_synthetic_quick.json").read_text())
    assert (tmp_path / "scdl_synthetic_quick.png").stat().st_size > 0
    assert saved["repeats"] == 2 and saved["n_alphas"] == 6
    for pred in ("f", "1-f"):
        for alpha in ("0.0", "0.5", "0.8", "1.0"):
            cell = saved["table"][pred][alpha]
            assert set(cell) == {*mod.MEASURES, *mod.TARGETS}
        for target in mod.TARGETS:
            for rho in saved["spearman_with_true_swap_regret"][target][pred].values():
                assert rho is None or -1 <= rho <= 1
    assert result["table"] == saved["table"]
    prov = saved["provenance"]
    assert prov["command"].startswith("python -m benchmarks.scdl_synthetic --quick")
    assert {"commit", "config", "cpu_count", "wall_time_s", "date"} <= set(prov)
    # the quick mode is deterministic: it must reproduce the stored quick result
    _load("verify").assert_matches_stored("scdl_synthetic", tmp_path / "scdl_synthetic_quick.json")


def test_true_cdl_closed_forms():
    mod = _load("scdl_synthetic")
    # a constant prediction c = sigmoid(b) with mean label e: CDL = 2 * envelope at 1/2 of
    # G(theta) = |e - theta| on (e, c); for c > 1/2 > e the envelope at 1/2 is (c - e) / (2 c)
    b = 0.3
    c = 1 / (1 + np.exp(-b))
    e = 0.5 * (1 / 3) + 0.5 * 0.5  # mean of eta for alpha = 1/2
    assert mod.true_cdl(0.0, b, 0.5, False) == pytest.approx((c - e) / c, abs=1e-3)  # theta grid step 2.5e-4
    # the best single threshold task attains it here
    assert mod.threshold_swap_regret(0.0, b, 0.5, False) == pytest.approx((c - e) / c, abs=1e-3)
    # the concave envelope is exact on small point sets
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(size=25))
    g = rng.uniform(size=25)
    brute = max(
        g[i] + (g[j] - g[i]) * (0.5 - t[i]) / (t[j] - t[i]) if t[j] > t[i] else g[i]
        for i in np.flatnonzero(t <= 0.5)
        for j in np.flatnonzero(t >= 0.5)
    )
    assert mod.concave_envelope_at(t, g, 0.5) == pytest.approx(brute, abs=1e-12)


@pytest.mark.slow
def test_speed_scdl_quick(tmp_path):
    mod = _load("speed_scdl")
    mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "speed_scdl.json").read_text())
    assert (tmp_path / "speed_scdl.png").stat().st_size > 0
    assert [r["T"] for r in saved["rows"]] == [1000, 10000]
    assert saved["summary"]["max_abs_binned_ece_minus_sklearn"] < 1e-12
    assert saved["provenance"]["command"].startswith("python -m benchmarks.speed_scdl --quick")
    assert "smooth_calibration_error" in saved["rows"][0]["seconds"]
    assert [r["n"] for r in saved["cutoff_binned_floors"]] == [10**4, 10**5]
    # every target is recorded with its measured number and whether it was met
    for target in saved["targets"].values():
        assert isinstance(target["met"], bool) and ({"seconds", "ratio"} & set(target))
    if "max_abs_smooth_ece_minus_relplot" in saved["summary"]:
        assert saved["summary"]["max_abs_smooth_ece_minus_relplot"] < 1e-3


def test_cdl_duality_against_linear_programming():
    """sup over mixing measures mu (utilities in [0, 1]) == 2 * concave envelope of G at 1/2."""
    from scipy.optimize import linprog

    mod = _load("scdl_synthetic")
    rng = np.random.default_rng(1)
    p, e = rng.uniform(size=7), rng.uniform(size=7)
    theta = np.linspace(0, 1, 801)
    inside = (theta[:, None] > np.minimum(p, e)) & (theta[:, None] < np.maximum(p, e))
    G = (inside * np.abs(e - theta[:, None])).mean(axis=1)
    lp = linprog(-G, A_ub=np.vstack([1 - theta, theta]), b_ub=[1, 1], bounds=(0, None))
    assert -lp.fun == pytest.approx(2 * mod.concave_envelope_at(theta, G, 0.5), abs=1e-9)


@pytest.mark.slow
def test_scdl_grid_study_quick(tmp_path):
    mod = _load("scdl_synthetic")
    result = mod.main(["--quick", "--grid-study", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "scdl_grid_study_quick.json").read_text())
    assert saved["provenance"]["config"]["grid_study"] is True
    assert len(saved["cells"]) == 4 and saved["repeats"] == 3
    for cell in result["cells"]:
        for pred in ("f", "1-f"):
            c = cell[pred]
            # a finer cap never raises the estimate
            assert c["c4"]["mean"] <= c["theory"]["mean"] + 1e-12
            assert c["max"]["mean"] <= c["c4"]["mean"] + 1e-12


@pytest.mark.slow
def test_calibration_tests_quick(tmp_path):
    mod = _load("calibration_tests")
    mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "calibration_tests_quick.json").read_text())
    assert (tmp_path / "calibration_tests_quick.png").stat().st_size > 0
    prov = saved["provenance"]
    assert {"commit", "command", "config", "cpu_count", "wall_time_s", "date"} <= set(prov)
    assert not any(str(v).startswith("/") for v in prov["config"].values())
    for m in ("scdl", "binned_ece", "cutoff", "smooth_ece"):
        cell = saved["type1"][m]["200"]
        assert 0 <= cell["rate"] <= 1 and cell["band99"][0] <= 0.05 <= cell["band99"][1]
        assert set(saved["power"]["bias"][m]) == {"200", "1000"}
    _load("verify").assert_matches_stored("calibration_tests", tmp_path / "calibration_tests_quick.json")


@pytest.mark.slow
def test_scdl_ties_quick(tmp_path):
    mod = _load("scdl_ties")
    mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "scdl_ties.json").read_text())
    assert saved["provenance"]["command"].startswith("python -m benchmarks.scdl_ties --quick")
    s = saved["summary"]
    # the theorem's cap puts every candidate on the floor 1/8 on folds of 100 rows
    assert s["scdl_theory"]["500"]["best_tie"] == 1.0
    assert s["scdl_auto"]["500"]["distinct"] > s["scdl_theory"]["500"]["distinct"]
