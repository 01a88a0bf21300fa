import numpy as np
import pytest
from scipy.stats import kstest

from skcal.binned_ece import binned_ece
from skcal.calibration_test import CalibrationTestResult, _run, calibration_test
from skcal.cutoff import cutoff_calibration_error
from skcal.scdl import scdl_score
from skcal.smooth_ece import smooth_ece

FUNCS = {
    "scdl": scdl_score,
    "binned_ece": binned_ece,
    "cutoff": cutoff_calibration_error,
    "smooth_ece": smooth_ece,
}


def _data(n, seed, bias=0.0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    return y, np.clip(p + bias, 0, 1)


@pytest.mark.parametrize("measure", ["scdl", "binned_ece", "cutoff", "smooth_ece"])
@pytest.mark.parametrize("weighted", [False, True])
def test_vectorised_path_equals_loop_path(measure, weighted):
    y, p = _data(700, 1)
    p[:20] = np.round(p[:20], 1)  # ties and grid points
    p[0], p[1] = 0.0, 1.0
    w = np.random.default_rng(2).uniform(0, 2, size=700) if weighted else None
    w = None if w is None else np.where(np.arange(700) % 17 == 0, 0.0, w)
    R = 12 if measure == "smooth_ece" else 40
    a = _run(y.astype(float), p, w, measure, R, 5, None)
    b = _run(y.astype(float), p, w, measure, R, 5, None, vectorise=False)
    np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=0, atol=1e-12)
    assert a.statistic == pytest.approx(FUNCS[measure](y, p, sample_weight=w), abs=1e-12)
    assert a.pvalue == b.pvalue


def test_result_fields_and_reproducibility():
    y, p = _data(500, 3)
    res = calibration_test(y, p, measure="cutoff", n_resamples=99, random_state=0)
    assert isinstance(res, CalibrationTestResult)
    assert res.measure == "cutoff" and res.n_resamples == 99
    null = res.null_distribution
    assert null.shape == (99,)
    assert res.pvalue == (1 + np.sum(null >= res.statistic)) / 100
    assert res.null_mean == pytest.approx(null.mean()) and res.null_std == pytest.approx(null.std(ddof=1))
    assert set(res.null_quantiles) == {0.5, 0.9, 0.95, 0.99}
    again = calibration_test(y, p, measure="cutoff", n_resamples=99, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(again.null_distribution, null)  # n_jobs does not change results
    other = calibration_test(y, p, measure="cutoff", n_resamples=99, random_state=1)
    assert not np.array_equal(other.null_distribution, null)
    assert res.rejects(1.0) and not res.rejects(0.0)


def test_callable_measure_and_string_labels():
    y, p = _data(300, 4)
    labels = np.where(y == 1, "yes", "no")

    def my_brier(y_true, y_prob):
        return float(np.mean((y_true - y_prob) ** 2))

    res = calibration_test(labels, p, measure=my_brier, n_resamples=30, random_state=0, pos_label="yes")
    assert res.measure == "my_brier"
    assert res.statistic == pytest.approx(my_brier(y, p))


@pytest.mark.parametrize("measure", ["cutoff", "binned_ece"])
def test_pvalues_are_uniform_under_h0(measure):
    # 300 calibrated data sets of 200 rows, 199 resamples each: the p-values must look uniform
    rng = np.random.default_rng(10)
    pvals = []
    for k in range(300):
        p = rng.beta(2, 3, size=200)
        y = (rng.uniform(size=200) < p).astype(float)
        pvals.append(_run(y, p, None, measure, 199, k, None).pvalue)
    pvals = np.array(pvals)
    # Monte Carlo p-values live on {1/200, ..., 1}: jitter within a step for the KS check
    jittered = pvals - rng.uniform(0, 1 / 200, size=pvals.size)
    assert kstest(jittered, "uniform").pvalue > 0.01
    assert 0.01 <= np.mean(pvals <= 0.05) <= 0.11


@pytest.mark.parametrize("measure", ["scdl", "smooth_ece", "cutoff", "binned_ece"])
def test_a_clearly_biased_predictor_is_rejected(measure):
    # SCDL is a decision loss: a shift by b costs threshold tasks only about b^2 / 2
    y, p = _data(3000, 5, bias=0.2 if measure == "scdl" else 0.08)
    res = calibration_test(y, p, measure=measure, n_resamples=199, random_state=0)
    assert res.pvalue < 0.01
    assert res.statistic > res.null_quantiles[0.99]


def test_bad_arguments():
    y, p = _data(50, 6)
    with pytest.raises(ValueError, match="measure"):
        calibration_test(y, p, measure="brier")
    with pytest.raises(ValueError, match="n_resamples"):
        calibration_test(y, p, n_resamples=0)
    with pytest.raises(ValueError, match="n_resamples"):
        calibration_test(y, p, n_resamples=True)
    with pytest.raises(ValueError, match="y_prob must lie"):
        calibration_test(y, p + 1)


def test_lipschitz_measure_when_available():
    pytest.importorskip("skcal.lipschitz", reason="skcal.lipschitz is written on another branch")
    y, p = _data(200, 7)
    res = calibration_test(y, p, measure="smooth_calibration_error", n_resamples=19, random_state=0)
    assert 0 < res.pvalue <= 1
