"""benchmarks/monitor.py: the quick mode runs, says what it should, and matches the stored result."""

import importlib
import json

import numpy as np
import pytest

from benchmarks import verify

BOUND = 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / 20)  # one-sided binomial bound for 20 streams at alpha


def _load(name):
    return importlib.import_module(f"benchmarks.{name}")


@pytest.mark.slow
def test_quick_run(tmp_path):
    mod = _load("monitor")
    mod.main(["--quick", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "monitor_quick.json").read_text())
    assert data["provenance"]["command"].startswith("python -m benchmarks.monitor --quick")
    assert (tmp_path / "monitor_quick.png").exists()
    assert len(data["null"]) == 2 * 3 * 3  # tolerances x errors (0, eps/2, eps) x shapes
    for entry in data["null"].values():  # the null holds in every cell: at most alpha, within noise
        assert entry["test"]["rate"] <= BOUND and entry["detect_horizon"]["rate"] <= BOUND
        assert entry["lcb_above_error"]["rate"] <= BOUND
    for entry in data["coverage"].values():
        assert entry["lcb_ever_above"]["rate"] <= BOUND
    assert data["coverage"]["ce_0.05/bias"]["lcb_end_median"] > 0.02  # informative
    expected = {"bias_0.02", "bias_0.05", "overconfident", "underconfident", "region_0.7_0.9", "prior_shift"}
    assert set(data["delay"]) == expected
    bias = data["delay"]["bias_0.05"]["detectors"]
    assert bias["skcal_detect_horizon"]["detected"] >= 8 and bias["skcal_detect"]["detected"] >= 8
    assert data["delay"]["overconfident"]["detectors"]["skcal_detect"]["detected"] >= 8
    assert set(data["tolerance"]["candidates"]) == {"0.01", "0.02"}
    t = data["speed"]["timings"]
    assert t["ratio_to_bincount"]["monitor_test"] > 0 and t["rows_per_second"]["monitor_detect"] > 0
    if mod.DEFAULT_DATA.is_dir():  # the stored quick result was made with the real outputs present
        assert "skipped" not in data["delay"]["prior_shift"] and len(data["real"]) == 11
        verify.assert_matches_stored("monitor", tmp_path / "monitor_quick.json")
    else:
        assert "skipped" in data["delay"]["prior_shift"]


def test_the_river_peers_run_on_a_short_stream():
    pytest.importorskip("river", reason="river is in the bench extra (pip install -e '.[bench]')")
    mod = _load("monitor")
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 0.3, 3_000), rng.normal(1.0, 0.3, 3_000)])
    for kind in ("adwin", "ph"):
        at = mod.river_alarm(kind, x, None)
        assert at is not None and at > 3_000


def test_the_streams_have_the_calibration_error_they_claim():
    mod = _load("monitor")
    for shape in ("bias", "overconfident"):
        for ce in (0.0, 0.02):
            y, p = mod.null_stream(shape, ce, 1, 400_000)
            resid = y - p
            if shape == "bias":
                assert abs(resid.mean() + ce) < 0.003
            else:  # the residual leans down above 1/2 and up below: l1 error ce, mean residual 0
                assert abs(resid.mean()) < 0.003
                assert abs(resid[p > 0.5].mean() + ce) < 0.004 and abs(resid[p < 0.5].mean() - ce) < 0.004
    streams = mod.adversarial_streams([5, 6, 7], 20_000, 0.02)
    y, p = streams[0]
    assert len(streams) == 3 and 0.1 <= p.min() and p.max() <= 0.9
    assert abs(np.mean((y - p) * np.sign(p - 0.5)) + 0.02) < 0.01
    for name in ("bias_0.05", "overconfident", "underconfident", "region_0.7_0.9"):
        y, p, change, _ = mod.scenario_stream(name, 1, 200_000, {}, change=100_000)
        assert abs(np.mean(y[:change] - p[:change])) < 0.005, name
        after = (y[change:] - p[change:]) * np.sign(p[change:] - 0.5)
        assert abs(np.mean(after)) > 0.004 or abs(np.mean(y[change:] - p[change:])) > 0.004, name
        assert mod.scenario_error(name) > 0.009, name
    assert np.isclose(mod.scenario_error("bias_0.05"), 0.05, atol=0.002)
