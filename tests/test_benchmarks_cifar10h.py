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


def test_snapshots_from_counts_match_the_unbiased_targets():
    from skcal.votes import snapshot_targets

    a = np.array([0, 3, 5, 2])
    c = np.array([4, 6, 5, 2])
    Y = cifar10h.snapshots_from_counts(a, c)
    assert Y.shape == (4, 6)
    assert np.array_equal(np.nansum(Y, axis=1), a)
    assert np.array_equal((~np.isnan(Y)).sum(axis=1), c)
    t1, t2, _ = snapshot_targets(Y)
    assert np.allclose(t1, a / c)
    assert np.allclose(t2, a * (a - 1) / (c * (c - 1)))


def test_ensemble_moments_and_tasks():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(10), size=(11, 7))
    m, s2 = cifar10h.ensemble_moments(P)
    assert np.allclose(m, P.mean(axis=0))
    assert np.allclose(s2, np.minimum(P.var(axis=0, ddof=1), m * (1 - m)))
    counts = rng.integers(0, 6, size=(7, 10))
    counts[:, 0] += 1
    mt, st, at, ct = cifar10h.task_arrays(m, s2, counts, "top")
    top = m.argmax(axis=1)
    assert np.array_equal(at, counts[np.arange(7), top]) and np.array_equal(ct, counts.sum(axis=1))
    assert np.allclose(mt, m.max(axis=1)) and np.allclose(st, s2[np.arange(7), top])
    mc, _, ac, _ = cifar10h.task_arrays(m, s2, counts, "cat")
    assert np.allclose(mc, m[:, 3]) and np.array_equal(ac, counts[:, 3])


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
    assert saved["config"]["repeats"] == 2 and saved["config"]["tasks"] == ["top", "cat"]
    assert {"commit", "command", "cpu_count", "date", "wall_time_s", "config"} <= set(saved["provenance"])
    assert saved["data"]["n_images"] == 10000 and len(saved["data"]["models"]) == 11
    # the README's alignment check: majority vote equals y_test on 99.21% of the images
    assert saved["data"]["human_majority_equals_y_test"] == pytest.approx(0.9921, abs=1e-4)
    for task in ("top", "cat"):
        for pred in cifar10h.PREDICTORS:
            cell = saved["ce2"][task][pred]["ce2"]
            assert 0 <= cell["p2.5"] <= cell["mean"] <= cell["p97.5"] <= 2
        for name in cifar10h.RANKERS:
            for budget in ("1%", "5%", "10%"):
                assert 0 <= saved["audit_captured_fraction"][task][name][budget]["mean"] <= 1 + 1e-12
    # recalibration must help the raw perturbed ensemble on its own evaluation data
    assert saved["ce2"]["top"]["2-D second-order"]["ce2"]["mean"] < saved["ce2"]["top"]["raw"]["ce2"]["mean"]
    assert result["ce2"] == saved["ce2"]
    # the same run as `python benchmarks/verify.py cifar10h`: a moved number fails here
    verify.assert_matches_stored("cifar10h", tmp_path / "cifar10h_quick.json")


def test_verify_skips_cifar10h_without_the_data(monkeypatch, capsys):
    monkeypatch.setitem(verify.REQUIRES, "cifar10h", ("../no-such-folder/cifar10h",))
    assert verify.missing_data("cifar10h") == (
        "the data folder ../no-such-folder/cifar10h is absent (beside the repository)"
    )
    assert verify.main(["cifar10h"]) == 0  # skipped, not failed
    out = capsys.readouterr().out
    assert "cifar10h: skipped, the data folder ../no-such-folder/cifar10h is absent" in out
