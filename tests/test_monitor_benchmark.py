"""benchmarks/monitor.py: the quick mode runs, says what it should, and matches the stored result."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
STORED = BENCH / "results" / "quick" / "monitor_quick.json"


def _load(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"_bench_{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_quick_run(tmp_path):
    pytest.importorskip("pyarrow", reason="the scale part reads parquet (pyarrow, the parquet extra)")
    mod = _load("monitor")
    mod.main(["--quick", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "monitor_quick.json").read_text())
    assert (tmp_path / "monitor_quick.png").exists()
    for entry in data["null"].values():
        skcal = entry["detectors"]["skcal_test"]
        # at the quick sizes: no calibrated stream may alarm much more often than alpha
        assert skcal["rate"] <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / skcal["streams"])
    assert {"bias_0.02", "bias_0.05", "temperature", "region_0.7_0.9"} <= set(data["delay"])
    assert data["delay"]["bias_0.05"]["detectors"]["skcal_test"]["detected"] >= 8
    t = data["speed"]["timings"]
    assert t["ratio_to_bincount_min"]["bincount"] == 1.0 and t["rows_per_second"]["monitor_test"] > 0
    assert data["speed"]["scale"]["exit_status"] == 0 and data["speed"]["scale"]["status_line"].startswith(
        "skcal monitor: no alarm"
    )
    has_data = mod.DEFAULT_DATA.is_dir()
    if has_data and STORED.exists():  # the stored quick result was made with the real outputs present
        verify = _load("verify")
        diffs = verify.compare(json.loads(STORED.read_text()), data)
        assert not diffs, "\n".join(diffs[:20])


def test_the_river_peers_run_on_a_short_stream():
    pytest.importorskip("river", reason="river is in the bench extra (pip install -e '.[bench]')")
    mod = _load("monitor")
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 0.3, 3_000), rng.normal(1.0, 0.3, 3_000)])
    for kind in ("adwin", "ph"):
        at = mod.river_alarm(kind, x, None)
        assert at is not None and at > 3_000
    assert mod.river_alarm("kswin", x[2_700:3_300], None) is not None


def test_the_streams_are_calibrated_before_the_change_and_not_after():
    mod = _load("monitor")
    for name in ("bias_0.05", "temperature", "region_0.7_0.9"):
        y, p, change, _ = mod.scenario_stream(name, 1, 200_000, {}, change=100_000)
        before = np.mean(y[:change] - p[:change])
        assert abs(before) < 0.005, (name, before)
        assert abs(np.mean((y[change:] - p[change:]) * (p[change:] > 0.5))) > 0.004, name
    y, p = mod.adversarial_null([5, 6, 7], 20_000)
    assert y.shape == p.shape == (3, 20_000) and 0 <= p.min() and p.max() <= 1
    assert abs(np.mean(y - p)) < 0.01
