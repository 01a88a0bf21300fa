"""Smoke test of ``benchmarks/report_scale.py`` (quick mode), compared with its stored quick result.

The quick sizes (2000 and 10000 rows) check the machinery: every kind's report and its floor
are timed side by side, with the CPU time, the bootstrap's share and the peak memory recorded;
the report's values are deterministic and must equal the stored ones (``benchmarks.verify``).
The targets (the report within 10x its measures at 1e5 and 1e6 rows) are the full run's; at the
quick sizes the report's fixed costs dominate, so only the budget check itself is exercised.
"""

import json

import pytest

from benchmarks import _harness as harness
from benchmarks import report_scale
from benchmarks._harness import QUICK_DIR
from benchmarks.verify import assert_matches_stored, compare


def test_report_scale_quick(tmp_path):
    result = report_scale.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "report_scale_quick.json").read_text())
    assert saved["provenance"]["command"].startswith("python -m benchmarks.report_scale --quick")
    assert {(r["kind"], r["n"]) for r in result["rows"]} == {
        (k, n) for k in report_scale.KINDS for n in (2000, 10_000)
    }
    for row in result["rows"]:
        t = row["timings"]
        assert row["n_bootstrap"] == 200 and len(row["models"]) == 3
        assert t["time_ratio"] > 0 and t["within_target"] == (t["time_ratio"] <= report_scale.MAX_RATIO)
        once = t["one_report"]
        assert 0 < once["bootstrap_seconds"] <= once["wall_seconds"] and once["cpu_seconds"] > 0
    assert_matches_stored("report_scale", tmp_path / "report_scale_quick.json")


def test_report_scale_budget_mode(tmp_path):
    """``--max-seconds``: one budgeted report per case, beside the stored full run's interval."""
    stored = {
        "results": [
            {
                "kind": "first-order",
                "n": 3000,
                "n_bootstrap": 200,
                "intervals": {"scdl": [0.0, 1.0]},
                "timings": {"report_seconds_median": 1.0},
            }
        ]
    }
    (tmp_path / "report_scale.json").write_text(json.dumps(stored))
    argv = ["--max-seconds", "0.001,1e3", "--sizes", "3000", "--kinds", "first-order", "--out", str(tmp_path)]
    row, unlimited = report_scale.main(argv)["rows"]
    saved = json.loads((tmp_path / "report_scale_budget.json").read_text())
    assert saved["config"]["max_seconds"] == [0.001, 1000.0]
    assert saved["results"][0]["n_bootstrap"] == row["n_bootstrap"]
    assert unlimited["n_bootstrap"] == unlimited["n_bootstrap_requested"] == 200
    # the budget keeps the first timed block only, and says how many were asked for
    assert row["n_bootstrap"] < row["n_bootstrap_requested"] == 200
    assert row["full_run"]["n_bootstrap"] == 200 and row["full_run"]["width_ratio"] > 0
    low, high = row["interval"]
    assert low <= row["value"] <= high


def test_report_scale_without_compiled_kernels(tmp_path):
    # a fresh interpreter without numba: the numpy paths give the stored values (the kernels'
    # and numpy's arithmetic agree), and the file says which paths ran
    harness.run_module(
        report_scale.__file__, "--quick", "--kinds", "first-order", "--without-compiled", "--out", tmp_path
    )
    saved = json.loads((tmp_path / "report_scale_quick_without_compiled.json").read_text())
    assert saved["config"]["compiled_kernels"] is False
    stored = json.loads((QUICK_DIR / "report_scale_quick.json").read_text())
    stored_rows = {(r["kind"], r["n"]): r for r in stored["results"]}
    for row in saved["results"]:
        ref = stored_rows[(row["kind"], row["n"])]
        assert row["metrics"] == ref["metrics"]
        assert compare(ref["values"], row["values"], rtol=1e-9) == []
        assert compare(ref["intervals"], row["intervals"], rtol=1e-9) == []


def test_report_scale_without_compiled_needs_a_process_without_numba():
    pytest.importorskip("numba")
    with pytest.raises(SystemExit):
        report_scale.main(["--quick", "--without-compiled"])
