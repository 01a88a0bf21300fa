"""The report's per-model calibration p-value (skcal.report._pvalues)."""

import numpy as np
import pytest
from scipy import stats

from skcal.cutoff import cutoff_calibration_error
from skcal.report._pvalues import calibration_pvalue


def test_pvalues_are_uniform_under_calibration_and_small_under_bias():
    rng = np.random.default_rng(0)
    pvals = []
    for _ in range(60):
        p = rng.uniform(0.05, 0.95, 200)
        y = (rng.uniform(size=200) < p).astype(float)
        seed = int(rng.integers(2**31 - 1))
        pvals.append(calibration_pvalue(y, p, n_resamples=200, random_state=seed).pvalue)
    assert stats.kstest(pvals, "uniform").pvalue > 0.01
    p = rng.uniform(0.05, 0.95, 500)
    y = (rng.uniform(size=500) < np.clip(p + 0.12, 0, 1)).astype(float)
    res = calibration_pvalue(y, p, n_resamples=200, random_state=0)
    assert res.pvalue < 0.01 and res.pvalue >= 1 / 201
    assert res.n_resamples == 200 and res.measure == "cutoff"
    # the test computes its statistic in the null's arithmetic (sorted rows): the measure to rounding
    assert res.statistic == pytest.approx(cutoff_calibration_error(y, p), rel=1e-12, abs=1e-15)


def test_calibration_pvalue_is_seeded():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=150)
    y = (rng.uniform(size=150) < p).astype(float)
    a = calibration_pvalue(y, p, n_resamples=100, random_state=3)
    b = calibration_pvalue(y, p, n_resamples=100, random_state=3)
    assert a == b and 0 < a.pvalue <= 1
