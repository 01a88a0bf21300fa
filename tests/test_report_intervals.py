"""The report's bootstrap intervals, ranks and p_best (skcal.report._bootstrap)."""

import numpy as np
import pytest

from skcal.report import CalibrationReport
from skcal.report._bootstrap import intervals, p_best, ranks


def test_bc_percentile_formula_and_containment():
    values = np.array([1.0, 5.0])
    # replicates all above the value (resampling bias), skewed
    rep = np.column_stack([1.2 + np.linspace(0, 1, 101) ** 2, 5.5 + np.linspace(0, 2, 101)])
    lo_p, hi_p = intervals(values, rep, 0.9, "percentile")
    assert (lo_p > values).all()  # the old interval excludes the value
    lo, hi = intervals(values, rep, 0.9, "bc-percentile")
    q5, q50, q95 = np.quantile(rep, [0.05, 0.5, 0.95], axis=0)
    np.testing.assert_allclose(lo, values - (q50 - q5))
    np.testing.assert_allclose(hi, values + (q95 - q50))
    assert ((lo <= values) & (values <= hi)).all()
    np.testing.assert_allclose(hi - lo, hi_p - lo_p)  # same width: the spread is kept
    lo_b, hi_b = intervals(values, rep, 0.9, "basic")
    np.testing.assert_allclose(lo_b, 2 * values - q95)
    lo_c, _ = intervals(values, rep, 0.9, "bc-percentile", bounds=(0.9, None))
    assert lo_c[0] >= 0.9


def test_no_replicates_gives_nan():
    lo, hi = intervals(np.array([1.0]), np.empty((0, 1)), 0.9)
    assert np.isnan(lo).all() and np.isnan(hi).all()
    assert np.isnan(p_best(np.empty((0, 2)), False)).all()


def test_the_demo_case_where_the_percentile_interval_excluded_the_value():
    """A calibrated predictor on 300 rows: the percentile intervals of smECE, the cutoff error and
    ECE-11 all lie above their values; the bias-corrected interval contains each value."""
    rng = np.random.default_rng(1)
    n = 300
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p).astype(int)
    kw = {"metrics": ["smooth_ece", "cutoff", "binned_ece"], "n_bootstrap": 100, "random_state": 0}
    old = CalibrationReport.from_predictions(
        y, {"a": p}, interval_method="percentile", test_calibration=False, **kw
    )
    new = CalibrationReport.from_predictions(y, {"a": p}, test_calibration=False, **kw)
    for m in kw["metrics"]:
        v, lo_old = old.table.loc["a", (m, "value")], old.table.loc["a", (m, "low")]
        assert lo_old > v, m
        lo, hi = new.table.loc["a", (m, "low")], new.table.loc["a", (m, "high")]
        assert lo <= v <= hi, m
        assert lo >= 0.0
    np.testing.assert_array_equal(old.bootstrap_values, new.bootstrap_values)


def test_ranks_and_p_best():
    assert ranks(np.array([0.3, 0.1, 0.1]), False).tolist() == [3, 1, 1]
    assert ranks(np.array([0.3, 0.1, np.nan]), True).tolist() == [1, 2, 3]
    assert ranks(np.array([-0.05, 0.01]), False, by_abs=True).tolist() == [2, 1]
    rep = np.array([[0.1, 0.2], [0.3, 0.2], [0.1, 0.1]])
    np.testing.assert_allclose(p_best(rep, False), [2 / 3, 2 / 3])


@pytest.mark.parametrize("method", ["percentile", "bc-percentile", "basic"])
def test_interval_method_in_the_report(method):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    rep = CalibrationReport.from_predictions(
        y,
        {"a": p},
        metrics=["brier"],
        n_bootstrap=30,
        interval_method=method,
        random_state=0,
        test_calibration=False,
    )
    assert rep.interval_method == method
    assert rep.table.loc["a", ("brier", "low")] < rep.table.loc["a", ("brier", "high")]


def test_benchmark_quick_smoke(tmp_path):
    """benchmarks/report_intervals.py --quick writes its JSON (with provenance) and its PNG."""
    import importlib.util
    import json
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "report_intervals.py"
    spec = importlib.util.spec_from_file_location("report_intervals", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--quick", "--repeats", "2", "--metrics", "brier,cutoff", "--out", str(tmp_path)])
    doc = json.loads(Path(out["json"]).read_text())
    assert set(doc["provenance"]) >= {"commit", "command", "date", "cpu_count", "wall_time_s"}
    assert doc["config"]["metrics"] == ["brier", "cutoff"]
    for scenario in ("miscalibrated", "calibrated"):
        cov = doc["results"][scenario]["coverage"]["bc-percentile"]
        assert set(cov) == {"brier", "cutoff"} and cov["brier"]["contains_value"] == 1.0
    assert Path(out["figure"]).stat().st_size > 1000
