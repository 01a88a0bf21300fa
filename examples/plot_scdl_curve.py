"""
=====================================
How SCDL chooses its grid
=====================================

SCDL measures calibration through decisions: for a grid ``{0, 1/m, ..., 1}``, ``SCDL_m`` is the
largest gain any decision maker can make by second-guessing the rounded predictions, and

.. code-block:: text

    SCDL = min over m in {2, 4, 8, ..., m_max} of max(SCDL_m, 1/m).

``SCDL_m`` grows with ``m`` (finer grids reveal more) while ``1/m`` falls, so SCDL sits where the
two curves cross. :func:`~skcal.scdl_curve` returns the whole search. This example draws it for a
calibrated predictor and two overconfident ones, on the same 20,000 simulated samples. The search
stops at the largest dyadic ``m`` with ``m ln m <= sqrt(n)`` (here ``m_max = 32``), so SCDL cannot
go below ``1/32``: the calibrated and the mildly overconfident predictor both sit at that floor,
while the smooth ECE tells them apart.
"""

# %%
# Two predictors of the same labels
# ---------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcal import scdl_curve, smooth_ece

rng = np.random.default_rng(0)
n = 20_000
p_true = rng.beta(2, 2, n)  # the true P(y = 1 | x)
y = (rng.uniform(size=n) < p_true).astype(int)
logit = np.log(p_true / (1 - p_true))
predictors = {  # overconfident: logits multiplied by 2 or 4, pushed towards 0 and 1
    "calibrated": p_true,
    "overconfident x2": 1 / (1 + np.exp(-2.0 * logit)),
    "overconfident x4": 1 / (1 + np.exp(-4.0 * logit)),
}

# %%
# The grid search
# ---------------
# Each curve is ``SCDL_m`` against the grid size; the dashed line is the floor ``1/m``. The
# selected grid ``m*`` is where the larger of the two is smallest.
fig, ax = plt.subplots(figsize=(6.4, 4), layout="constrained")
for name, p in predictors.items():
    curve = scdl_curve(y, p)
    label = f"{name}: SCDL {curve.scdl:.3f}, m* = {curve.selected_n_bins}"
    ax.plot(curve.n_bins, curve.scdl_m, "o-", label=label)
    print(f"{name:>16}: SCDL {curve.scdl:.4f} at m* = {curve.selected_n_bins}; smECE {smooth_ece(y, p):.4f}")
m = curve.n_bins
ax.plot(m, 1 / m, "k--", label="floor 1/m")
ax.set(xscale="log", xlabel="grid size m", ylabel="SCDL_m")
ax.set_xticks(m, [str(int(v)) for v in m])
ax.legend(loc="upper right", fontsize="small")
plt.show()
