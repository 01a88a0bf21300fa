"""
=====================================================
Truthful calibration errors: no reward for gaming
=====================================================

A predictor that knows the true class probabilities should score best on a calibration error;
otherwise the error rewards reporting something else. The top-label errors in common use are not
truthful in this sense. With ``c_i`` the confidence of the reported top class, ``z_i`` whether
it is correct, and bins ``b`` chosen from the predictions alone,

.. code-block:: text

    ConfECE     = (1 / n) sum_b |sum_{i in b} (c_i - z_i)|
    ConfCE      = (1 / n^2) sum_b (sum_{i in b} (c_i - z_i))^2
    ConfCE^corr = ConfCE + (1 / n) (1 - mean_i z_i)

The correction makes ConfCE truthful: in expectation it is smallest for the honest report. Here
every input has the true class probabilities ``(1/2, 1/3, 1/6)`` in a random order. Three
predictors report them: the honest one; a "gaming" one that reports a nearly flat distribution
whose top class is the truly least likely one, ``(0.32, 0.32, 0.36)`` in the same order; and the
uniform report. Each error is averaged over 50 draws of the labels, with one prediction per bin
(``n_bins = n``), where the label noise matters most.
"""

# %%
# The truth and three reports
# ---------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcal import conf_ce, conf_ece, truthful_conf_ce

rng = np.random.default_rng(0)
n, k, repeats = 2000, 3, 50
order = np.argsort(rng.uniform(size=(n, k)), axis=1)  # a random order of the classes per input
rows = np.arange(n)[:, None]
truth = np.empty((n, k))
truth[rows, order] = [1 / 2, 1 / 3, 1 / 6]
gaming = np.empty((n, k))
gaming[rows, order] = [0.32, 0.32, 0.36]
reports = {"honest": truth, "gaming": gaming, "uniform": np.full((n, k), 1 / k)}

# %%
# Each error, relative to the honest report's
# -------------------------------------------
cum = truth.cumsum(axis=1)
draws = [(rng.uniform(size=(n, 1)) > cum).sum(axis=1) for _ in range(repeats)]
measures = {"ConfECE": conf_ece, "ConfCE": conf_ce, "ConfCE^corr": truthful_conf_ce}
mean = {
    (m, r): np.mean([f(y, p, n_bins=n, labels=range(k)) for y in draws])
    for m, f in measures.items()
    for r, p in reports.items()
}

fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
width = 0.25
for j, r in enumerate(reports):
    ratios = [mean[m, r] / mean[m, "honest"] for m in measures]
    ax.bar(np.arange(len(measures)) + (j - 1) * width, ratios, width, label=r)
    print(f"{r:>8}: " + ", ".join(f"{m} {mean[m, r]:.3g}" for m in measures))
ax.axhline(1.0, color="k", lw=1)
ax.set_xticks(np.arange(len(measures)), list(measures))
ax.set_ylabel("mean error / honest report's")
ax.set_title("below 1: the measure prefers a dishonest report")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
plt.show()
