"""Smoke test of ``benchmarks/report_scale.py`` (quick mode), compared with its stored quick result.

The quick sizes (2000 and 10000 rows) check the machinery: every kind's report and its floor
are timed side by side, with the CPU time, the bootstrap's share and the peak memory recorded;
the report's values are deterministic and must equal the stored ones (``benchmarks.verify``).
The targets (the report within 10x its measures at 1e5 and 1e6 rows) are the full run's; at the
quick sizes the report's fixed costs dominate, so only the budget check itself is exercised.
"""

import json

from benchmarks import report_scale
from benchmarks.verify import assert_matches_stored


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
