"""
=================================================
A calibration report of several classifiers
=================================================

:func:`~skcal.calibration_report` scores every model on the same validation data, with paired
bootstrap intervals and ranks; ``report.table`` holds the numbers, ``report.to_html(path)``
writes a self-contained page (the same one ``skcal report`` writes) and returns its path, and
``report.to_markdown()`` gives the table. This example prints the table and draws four of the
intervals from ``report.table`` by hand.
"""

# %%
# Three classifiers fitted on half of the breast-cancer data
# -----------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import calibration_report

X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
models = {
    "logistic": make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr),
    "naive Bayes": GaussianNB().fit(X_tr, y_tr),
    "forest": RandomForestClassifier(n_estimators=100, random_state=0).fit(X_tr, y_tr),
}

# %%
# The report, scored on the other half
# ------------------------------------
# Every model is scored on the same rows, and each bootstrap replicate resamples those rows once
# for all models (a paired bootstrap), so the intervals can be compared across models.
report = calibration_report(models, X_te, y_te, n_bootstrap=40, random_state=0)
print(report.to_markdown())  # also: report.to_html("report.html"), report.table

# %%
# Intervals drawn from ``report.table``
# -------------------------------------
# ``report.table`` has one row per model and ``(metric, field)`` columns with the fields
# ``value``, ``low``, ``high``, ``rank`` and ``p_best``; ``report.metric_details["scdl"]`` holds
# SCDL's selected grid ``m*``, the unfloored ``SCDL_m*`` on it and ``at_floor`` (whether SCDL
# equals ``1/m*``, where models on one grid tie). The figure shows SCDL, the smooth ECE, the
# Lipschitz smooth calibration error smCE and the Brier score.
for name, det in report.metric_details["scdl"].items():
    print(f"{name}: m* = {det['m*']}, SCDL_m* = {det['SCDL_m*']:.4f}, at_floor = {det['at_floor']}")
metrics = ["scdl", "smooth_ece", "smooth_calibration_error", "brier"]
fig, axes = plt.subplots(1, len(metrics), figsize=(13, 2.6), layout="constrained", sharey=True)
for ax, metric in zip(axes, metrics, strict=True):
    t = report.table[metric]
    pos = np.arange(len(t))
    ax.errorbar(t["value"], pos, xerr=[t["value"] - t["low"], t["high"] - t["value"]], fmt="o", capsize=3)
    ax.set_yticks(pos, t.index)
    ax.set_title(f"{report.metric_labels[metric]} (90% interval)")
plt.show()
