"""Second-order Platt scaling on a simulated problem whose truth f* is known."""

import numpy as np

from skcal import SecondOrderDisplay, SecondOrderPlattCalibrator

rng = np.random.default_rng(0)
n = 6000
# A predictor whose mean is off by a hidden subtype: f* = m +- delta, and whose sigma2 is
# uninformative (uniform noise) -- the calibrator must learn the variance from two labels.
m = rng.uniform(0.1, 0.9, n)
delta = np.where(rng.uniform(size=n) < 0.5, -1, 1) * 0.3 * m * (1 - m) * 4 * (m > 0.5)
f_star = np.clip(m + delta, 0, 1)
sigma2 = rng.uniform(0, 0.02, n)
scores = np.column_stack([m, sigma2])
snapshots = (rng.uniform(size=(n, 2)) < f_star[:, None]).astype(float)  # two labels per input

cal = SecondOrderPlattCalibrator(degree=4, alpha=1e-4).fit(scores[:3000], snapshots[:3000])
SecondOrderDisplay.from_estimator(cal, scores[3000:], true_prob=f_star[3000:], name="simulated")
