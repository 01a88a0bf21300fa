"""Smoke test of benchmarks/scale_dask.py (quick mode: synchronous scheduler, 1e5 rows)."""

import json

import pytest

pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")


def test_quick_mode_agrees_with_in_memory(tmp_path):
    from benchmarks import scale_dask

    record = scale_dask.main(["--quick", "--out", str(tmp_path)])
    for bundle in ("first", "ce2"):
        res = record[bundle]
        assert res["max_rel_diff"] < 1e-10
        for k, v in res["numpy_statistics_values"].items():
            assert v == pytest.approx(res["dask_values"][k], rel=1e-10)
    # the full first-order bundle: every binary first-order measure of skcal.dask.MEASURES
    assert set(record["first"]["dask_values"]) == set(scale_dask.FIRST_ORDER)
    assert record["first"]["cutoff_grid_within_bound"]
    runs = json.loads((tmp_path / "scale_dask.json").read_text())
    assert len(runs) == 1 and runs[0]["rows"] == 100000
    assert "provenance" in runs[0] and "loadavg_before" in runs[0]["first"]["repeats"][0]


def test_first_fixed_leaves_out_the_growing_states(tmp_path):
    from benchmarks import scale_dask

    names = [m if isinstance(m, str) else m[0] for m in scale_dask.measures("first-fixed", 12)]
    assert "cutoff_grid" in names and not set(scale_dask.GROWING) & set(names)
    assert set(names) | set(scale_dask.GROWING) == set(scale_dask.FIRST_ORDER)


def test_partial_fit_timing_is_stored_with_provenance(tmp_path):
    from benchmarks import scale_dask

    scale_dask.main(["--partial-fit", "3", "--out", str(tmp_path)])
    record = json.loads((tmp_path / "scale_dask_partial_fit.json").read_text())
    assert record["degree"] == 3 and len(record["partial_fit_s"]) == record["batches"] == 4
    assert record["first_transform_s"] > 0 and record["provenance"]["commit"]
