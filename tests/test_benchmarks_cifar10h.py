"""The CIFAR-10H benchmark: its quick mode (skipped without the data) and its data helpers."""

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import cifar10h, verify

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def _require_data():
    for folder in ("cifar10h", "multiclass_logits"):
        if not (DATA / folder).is_dir():
            pytest.skip(f"the data folder ../shared/data/{folder} is absent (beside the repository)")


def test_captured_fractions():
    g = np.linspace(0, 1, 200)
    rng = np.random.default_rng(0)
    assert np.allclose(cifar10h.captured_fractions(g, g, rng), 1.0)  # the oracle ordering itself
    worst = cifar10h.captured_fractions(-g, g, rng)
    assert np.all(worst < 0.2)


def test_missing_data_names_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="cifar10h"):
        cifar10h.main(["--quick", "--data", str(tmp_path), "--out", str(tmp_path / "out")])


@pytest.mark.slow
def test_cifar10h_quick(tmp_path):
    _require_data()
    result = cifar10h.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "cifar10h_quick.json").read_text())
    for suffix in ("ce2", "audit", "display"):
        assert (tmp_path / f"cifar10h_quick_{suffix}.png").stat().st_size > 0
    assert saved["config"]["repeats"] == 2 and saved["config"]["tasks"] == list(cifar10h.TASKS)
    assert {"commit", "command", "cpu_count", "date", "wall_time_s", "config"} <= set(saved["provenance"])
    assert saved["data"]["n_images"] == 10000 and len(saved["data"]["models"]) == 11
    # the README's alignment check: majority vote equals y_test on 99.21% of the images
    assert saved["data"]["human_majority_equals_y_test"] == pytest.approx(0.9921, abs=1e-4)
    for task in cifar10h.TASKS:
        for pred in cifar10h.PREDICTORS:
            cell = saved["ce2"][task][pred]["ce2"]
            assert 0 <= cell["p2.5"] <= cell["mean"] <= cell["p97.5"] <= 2
        for name in cifar10h.RANKERS:
            for budget in ("1%", "5%", "10%"):
                assert 0 <= saved["audit_captured_fraction"][task][name][budget]["mean"] <= 1 + 1e-12
    # recalibration must help the raw perturbed ensemble on its own evaluation data
    assert saved["ce2"]["top"]["1-D second-order"]["ce2"]["mean"] < saved["ce2"]["top"]["raw"]["ce2"]["mean"]
    pooled = saved["ten_classes_pooled"]["ce2"]
    assert pooled["1-D first-order"]["mean"] < pooled["raw"]["mean"]
    proj = saved["projection"]["1-D first-order"]
    assert set(proj) == {"none", "logit_shift", "renormalize"}
    assert proj["none"]["mean_abs_row_sum_minus_1"]["mean"] > 0  # one-vs-rest means do not sum to 1
    assert result["ce2"] == saved["ce2"]
    # the same run as `python benchmarks/verify.py cifar10h`: a moved number fails here
    verify.assert_matches_stored("cifar10h", tmp_path / "cifar10h_quick.json")


def test_the_benchmark_has_no_task_code_of_its_own():
    # the one-vs-rest tasks, the top label, the moments and the targets come from skcal
    src = (REPO / "benchmarks" / "cifar10h.py").read_text(encoding="utf-8")
    gone_names = ("task_arrays", "snapshots_from_counts", "ensemble_moments", "fit_calibrators")
    for gone in (f"def {name}" for name in gone_names):
        assert gone not in src
    used_names = ("ensemble_moments(P)", "VoteCounts(counts=", "SecondOrderCalibratedClassifier(")
    for used in (*used_names, "ce2_details("):
        assert used in src


def test_verify_skips_cifar10h_without_the_data(monkeypatch, capsys):
    monkeypatch.setitem(verify.REQUIRES, "cifar10h", ("../no-such-folder/cifar10h",))
    assert verify.missing_data("cifar10h") == (
        "the data folder ../no-such-folder/cifar10h is absent (beside the repository)"
    )
    assert verify.main(["cifar10h"]) == 0  # skipped, not failed
    out = capsys.readouterr().out
    assert "cifar10h: skipped, the data folder ../no-such-folder/cifar10h is absent" in out


def test_the_results_page_tables_are_the_stored_result():
    """Every table ``--tables`` prints from the stored full result is on docs/benchmarks/cifar10h.md."""
    stored = REPO / "benchmarks" / "results" / "cifar10h.json"
    page = (REPO / "docs" / "benchmarks" / "cifar10h.md").read_text(encoding="utf-8")
    tables = cifar10h.tables(json.loads(stored.read_text(encoding="utf-8")))
    missing = [name for name, table in tables.items() if table not in page]
    assert not missing, f"tables not on the page as printed by --tables: {missing}"
