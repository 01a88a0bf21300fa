"""One stable sort per prediction array per report (skcal.report._orders)."""

import numpy as np
import pytest

import skcal.report._orders as orders_module
from skcal.calibration_test import calibration_test
from skcal.report import CalibrationReport
from skcal.report._orders import SortOrders


def test_the_order_is_the_stable_argsort_made_once():
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(size=5000), 2)  # many ties: the stable order matters
    orders = SortOrders()
    a = orders.of(p)
    np.testing.assert_array_equal(a, np.argsort(p, kind="stable"))
    assert orders.of(p) is a
    # an equal array that is another object gets its own entry (identity, not value)
    assert orders.of(p.copy()) is not a
    assert len(orders) == 2


def test_an_identity_is_never_lent_while_the_cache_lives():
    """The cache holds every array it sorted, so a new array cannot take a freed array's id
    and get its order (the bug fixed in 4e398a9 for the engine's jobs)."""
    orders = SortOrders()
    seen = set()
    for k in range(50):
        p = np.full(10, 0.5) if k % 2 else np.linspace(1, 0, 10)
        expected = np.argsort(p, kind="stable")
        np.testing.assert_array_equal(orders.of(p), expected)
        seen.add(id(p))
        del p
    assert len(orders) == len(seen) == 50


def test_a_report_sorts_each_models_predictions_once(monkeypatch):
    """The bootstrap's sorted view, smCE's value and the calibration test share one sort of each
    model's ``p``; the tests' statistics are ``calibration_test``'s on the cutoff error exactly."""
    calls = []
    real = orders_module.stable_argsort

    def counted(values):
        calls.append(values.shape[0])
        return real(values)

    monkeypatch.setattr(orders_module, "stable_argsort", counted)
    rng = np.random.default_rng(1)
    n = 700
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"a": p, "ties": np.round(p, 1), "b": np.clip(p + 0.05, 0, 1)}
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=8, n_resamples=99, random_state=0)
    assert calls == [n] * len(preds)
    for model, q in preds.items():
        # the statistic does not depend on the test's seed (the p-values are compared with a
        # report that sorts for each stage below, and with calibration_test in its own tests)
        direct = calibration_test(y, q, measure="cutoff", n_resamples=99, random_state=0)
        assert rep.calibration_tests.loc[model, "statistic"] == direct.statistic


@pytest.mark.parametrize("n_bootstrap", [0, 5])
def test_the_report_is_the_same_with_and_without_the_shared_sorts(monkeypatch, n_bootstrap):
    """Without the shared sorts (each stage sorting for itself, as before) the report's table and
    tests are identical."""
    rng = np.random.default_rng(2)
    n = 600
    p = np.round(rng.uniform(size=n), 2)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"a": p, "b": np.clip(p * 1.1, 0, 1)}
    kw = dict(n_bootstrap=n_bootstrap, n_resamples=49, random_state=3)
    shared = CalibrationReport.from_predictions(y, preds, **kw)

    class Unshared(SortOrders):
        def of(self, values):  # a fresh sort each time, nothing remembered
            return np.argsort(values, kind="stable")

    import skcal.report._compute as compute

    monkeypatch.setattr(compute, "SortOrders", Unshared)
    alone = CalibrationReport.from_predictions(y, preds, **kw)
    np.testing.assert_array_equal(shared.table.to_numpy(float), alone.table.to_numpy(float))
    np.testing.assert_array_equal(shared.bootstrap_values, alone.bootstrap_values)
    assert shared.calibration_tests.equals(alone.calibration_tests)
