"""Smoke runs of the second-order experiment scripts (experiments 6.1-6.4) and checks of their machinery.

The scripts are modules of the package ``benchmarks`` (the repository root is on ``sys.path``
under pytest, as under ``python -m``); their ``main(argv)`` is run in quick mode, writing to
``tmp_path``.
"""

import importlib
import json
import os

import numpy as np
import pytest
from scipy import integrate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name):
    """The script ``benchmarks/<name>.py`` as the module ``benchmarks.<name>``."""
    return importlib.import_module(f"benchmarks.{name}")


@pytest.fixture(scope="module")
def common():
    return _load("_mixture_problem")


# ---------------------------------------------------------------------------------------------
# ground-truth machinery
# ---------------------------------------------------------------------------------------------
def test_cloud_in_cell_deposit_preserves_mass_and_first_moments(common):
    g = common.SechGroundTruth(1 / 16, 65, 17)
    rng = np.random.default_rng(0)
    m, s = rng.uniform(0, 1, 500), rng.uniform(0, 0.25, 500)
    w = rng.uniform(0.5, 2.0, 500)
    D = g.deposit(m, s, w[:, None])[0]
    assert D.sum() == pytest.approx(w.sum(), rel=1e-12)
    assert (D * g.TM).sum() == pytest.approx((w * m).sum(), rel=1e-12)
    assert (D * g.TS).sum() == pytest.approx((w * s).sum(), rel=1e-12)


def test_ground_truth_ce2_of_a_point_mass_matches_quadrature(common):
    """A constant predictor at a grid node with f* = p: CE2 is an explicit double integral."""
    from skcal.sech import sech_pdf

    h, m0, s0, p = 1 / 16, 0.5, 0.0625, 0.7
    g = common.SechGroundTruth(h)
    got = g.ce2(g.fields(np.array([m0]), np.array([s0]), np.array([p])))
    k1 = lambda t: sech_pdf(t, m0, h)  # noqa: E731
    k2 = lambda t: sech_pdf(t, s0, h, 0.0, 0.25)  # noqa: E731
    term1 = integrate.quad(lambda t: k1(t) * abs(p - t), 0, 1, points=[p], limit=200)[0]

    # term2: integrate over t2 in closed pieces for each t1 (kink where t2 = p^2 - t1^2)
    def inner(t1):
        c = p * p - t1 * t1
        pts = [c] if 0 < c < 0.25 else None
        return k1(t1) * integrate.quad(lambda t2: k2(t2) * abs(c - t2), 0, 0.25, points=pts, limit=200)[0]

    term2 = integrate.quad(inner, 0, 1, limit=400, points=[np.sqrt(p * p - 0.25), p])[0]
    assert got["mass"] == pytest.approx(1.0, abs=1e-5)
    assert got["term1"] == pytest.approx(term1, abs=2e-5)
    assert got["term2"] == pytest.approx(term2, abs=2e-5)


def test_component_stratified_sobol_sample(common):
    prob = common.MixtureProblem(seed=0)
    X = prob.sobol_sample(6, seed=1)
    assert X.shape == (10 * 64, 4)
    # each block of 64 rows is centred on its component
    for k in range(10):
        assert np.allclose(X[64 * k : 64 * (k + 1)].mean(axis=0), prob.centres[k], atol=0.3)
    assert not np.allclose(X, prob.sobol_sample(6, seed=2))


# ---------------------------------------------------------------------------------------------
# quick runs
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_decision_utility_quick(tmp_path):
    out = _load("decision_utility").main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "decision_utility_quick.png").stat().st_size > 0
    _load("verify").assert_matches_stored("decision_utility", tmp_path / "decision_utility_quick.json")
    saved = json.loads((tmp_path / "decision_utility_quick.json").read_text())
    assert saved["repeats"] == out["repeats"] == 10
    best = {k: v["best_mean_gain"] for k, v in out["best"].items()}
    # the oracle dominates; 2-D second-order Platt is close to it; first-order and 1-D lag far behind
    assert best["oracle"] >= max(v for k, v in best.items() if k != "oracle") - 1e-9
    assert best["2-D second-order Platt"] > 0.8 * best["oracle"]
    assert best["2-D first-order Platt"] < 0.5 * best["oracle"]
    assert best["1-D second-order Platt"] < 0.7 * best["oracle"]


@pytest.mark.slow
def test_weather_amt_quick(tmp_path):
    out = _load("weather_amt").main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "weather_amt_quick.png").stat().st_size > 0
    _load("verify").assert_matches_stored("weather_amt", tmp_path / "weather_amt_quick.json")
    assert out["data"]["judgments_raw"] == 6030 and out["data"]["judgments_kept"] == 6025
    auc = out["mean_auc"]
    assert auc["oracle 2theta(1-theta)"] >= auc["2-D second-order Platt"] > auc["raw 2m(1-m)"]
    assert auc["2-D second-order Platt"] > auc["2-D first-order Platt"]


def test_weather_amt_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="--data"):
        _load("weather_amt").main(["--quick", "--out", str(tmp_path), "--data", str(tmp_path / "none")])


def test_weather_amt_bundled_data_equals_the_shared_copy():
    # The default (no --data) is the copy bundled with skcal; the shared copy must count the same.
    shared = os.path.join(os.path.dirname(ROOT), "shared", "data", "weather_sentiment_amt")
    if not os.path.isfile(os.path.join(shared, "responses.csv")):
        pytest.skip("../shared/data/weather_sentiment_amt is absent (the bundled copy is tested above)")
    mod = _load("weather_amt")
    c0, a0, info0 = mod.load_votes()
    c1, a1, info1 = mod.load_votes(shared)
    np.testing.assert_array_equal(c0, c1)
    np.testing.assert_array_equal(a0, a1)
    assert info0["judgments_raw"] == info1["judgments_raw"] == 6030


def test_weather_amt_snapshots_from_counts():
    mod = _load("weather_amt")
    Y = mod.snapshots_from_counts(np.array([2, 0]), np.array([3, 2]))
    np.testing.assert_array_equal(Y, [[1.0, 1.0, 0.0], [0.0, 0.0, np.nan]])


@pytest.mark.slow
def test_recalibration_quick(tmp_path):
    out = _load("recalibration").main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "recalibration_quick.png").stat().st_size > 0
    # another BLAS kernel family with no stored result: its reason is printed, the rest runs
    _load("verify").assert_matches_stored(
        "recalibration", tmp_path / "recalibration_quick.json", missing_ok=True
    )
    assert out["pearson_recal"]["mean"] > out["pearson_raw"]["mean"]
    assert out["ce2_after"]["mean"] < out["ce2_before"]["mean"]


@pytest.mark.slow
def test_rate_quick(tmp_path):
    out = _load("rate").main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "rate_quick.png").stat().st_size > 0
    # another BLAS kernel family with no stored result: its reason is printed, the rest runs
    _load("verify").assert_matches_stored("rate", tmp_path / "rate_quick.json", missing_ok=True)
    for key in ("1/16", "1/64"):
        assert out["ground_truth"][key]["replicate_abs_diff"] < 2e-3
        for name in ("poly_heldout", "poly_cv", "bucketing", "nadaraya_watson"):
            err = np.asarray(out["summary"]["in_sample"][key][name]["mean_abs_error"])
            assert np.all(np.isfinite(err)) and np.all(err < 0.2)
        for name in ("poly_heldout", "poly_cv"):  # polynomial fits are also plugged in on valid
            assert np.all(np.isfinite(out["summary"]["valid"][key][name]["mean_abs_error"]))
    assert "bucketing" not in out["summary"]["valid"]["1/16"]
