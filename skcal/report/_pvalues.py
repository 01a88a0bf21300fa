"""The p-value per model of H0 "the predictions are calibrated", behind one function.

:func:`calibration_pvalue` runs :func:`skcal.calibration_test.calibration_test` (consistency
resampling, Brocker and Smith 2007: labels ``y* ~ Bernoulli(p)`` are redrawn and the measure
recomputed on each replicate, exactly) on the **cutoff calibration error**. The report tests
the cutoff error rather than its headline smECE because its test is exact and vectorised
(smECE's bandwidth search is redone on every replicate, and a report tests every model; see
``docs/benchmarks/calibration_tests.md``) and because it was the most
powerful of skcal's binary measures against a constant bias in the power study of
``benchmarks/calibration_tests.py`` (0.87 at T = 1000 against 0.75 for smECE; smECE is more
powerful against sharpening, 0.95 against 0.79). Call ``calibration_test(..., measure=...)``
directly to test another measure.
"""

from __future__ import annotations

from dataclasses import dataclass

from skcal.calibration_test import calibration_test

#: The measure the report's calibration test resamples.
REPORT_TEST_MEASURE = "cutoff"


@dataclass(frozen=True)
class PValue:
    """A calibration test of one model: statistic, p-value and how they were obtained."""

    statistic: float
    pvalue: float
    measure: str
    method: str
    n_resamples: int


def calibration_pvalue(y, p, *, n_resamples=1000, random_state=None):
    """The p-value of "``p`` is calibrated for ``y``" by consistency resampling of the cutoff error.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    p : ndarray of shape (n,)
        Probabilities of the label 1.
    n_resamples : int, default=1000
        Resampled label vectors.
    random_state : int, RandomState instance or None, default=None
        Seeds the resampling.

    Returns
    -------
    PValue
        The observed cutoff error, its p-value and how it was obtained.
    """
    res = calibration_test(
        y, p, measure=REPORT_TEST_MEASURE, n_resamples=n_resamples, random_state=random_state
    )
    return PValue(
        float(res.statistic),
        float(res.pvalue),
        REPORT_TEST_MEASURE,
        "consistency resampling (skcal.calibration_test)",
        int(n_resamples),
    )
