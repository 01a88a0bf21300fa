"""
=================================================
Reliability diagrams with SCDL's soft bins
=================================================

:class:`~skcal.ReliabilityDisplay` with ``strategy="soft"`` draws the observed frequency ``q_i``
of each non-empty soft bin of an SCDL grid at its grid point ``i / m`` with a bootstrap
interval, the smooth calibration curve at smECE's bandwidth with its band, and a histogram of
the predictions. With ``n_bins=None`` the grid is the ``m*`` that SCDL selects; on these 285
validation rows ``m*`` is 64 or 128, about two to four rows per soft bin, too fine to read, so
the diagrams use the coarser soft grid ``m = 16`` and the titles give SCDL's own ``m*``, the
unfloored ``SCDL_{m*}`` and whether SCDL sits on its floor ``1/m*`` (from
:func:`~skcal.scdl_curve`). Naive Bayes is famously overconfident: its points bend away from
the diagonal.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import ReliabilityDisplay, scdl_curve

X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
logistic = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)
bayes = GaussianNB().fit(X_tr, y_tr)

fig, axes = plt.subplots(2, 2, figsize=(10, 5.8), height_ratios=(3, 1), sharex="col", layout="constrained")
for col, (name, model) in enumerate([("logistic regression", logistic), ("naive Bayes", bayes)]):
    disp = ReliabilityDisplay.from_estimator(
        model,
        X_te,
        y_te,
        n_bins=16,
        strategy="soft",
        n_bootstrap=100,
        random_state=0,
        name="",
        ax=axes[0, col],
        hist_ax=axes[1, col],
        legend=False,
        show_values=False,
    )
    curve = scdl_curve(y_te, model.predict_proba(X_te)[:, 1])
    floor = ", on its floor 1/m*" if curve.at_floor else ""
    axes[0, col].set_title(
        f"{name}: SCDL {curve.scdl:.4f}{floor}\nm* = {curve.selected_n_bins}, "
        f"SCDL_m* = {curve.selected_scdl_m:.4f}; smECE {disp.smooth_ece:.3f}"
    )
fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
plt.show()
