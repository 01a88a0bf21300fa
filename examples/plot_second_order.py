"""
=====================================================
Second-order recalibration against a known truth
=====================================================

A simulated predictor whose mean is right on average but whose errors depend on a hidden
subtype for ``m > 1/2``, with a useless ``sigma2``. :class:`~skcal.SecondOrderPlattCalibrator`
learns from two labels per input that the variance is large where ``m > 1/2``;
:class:`~skcal.SecondOrderDisplay` compares the predicted variance with the realised squared
error ``(f* - m)^2`` (left; the diagonal is second-order calibration) and shows the fitted
calibration functions (middle and right).
"""

import matplotlib.pyplot as plt
import numpy as np

from skcal import SecondOrderDisplay, SecondOrderPlattCalibrator, Snapshots

rng = np.random.default_rng(0)
n = 6000
# A predictor whose mean is off by a hidden subtype: f* = m +- delta, and whose sigma2 is
# uninformative (uniform noise) -- the calibrator must learn the variance from two labels.
m = rng.uniform(0.1, 0.9, n)
delta = np.where(rng.uniform(size=n) < 0.5, -1, 1) * 0.3 * m * (1 - m) * 4 * (m > 0.5)
f_star = np.clip(m + delta, 0, 1)
sigma2 = rng.uniform(0, 0.02, n)
scores = np.column_stack([m, sigma2])
snapshots = Snapshots(rng.uniform(size=(n, 2)) < f_star[:, None])  # two labels per input

cal = SecondOrderPlattCalibrator(degree=4, alpha=1e-4).fit(scores[:3000], snapshots[:3000])
SecondOrderDisplay.from_estimator(cal, scores[3000:], true_prob=f_star[3000:], name="simulated")
plt.show()
