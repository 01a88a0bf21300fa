"""
=================================================
Reliability diagrams with SCDL's soft bins
=================================================

:class:`~skcal.ReliabilityDisplay` draws, for the grid ``m*`` that SCDL selects, the observed
frequency ``q_i`` of each soft bin at its grid point ``i / m*`` (marker area: the bin weight
``pi_i``), a bootstrap band around the ``q_i``, and the smooth calibration curve at smECE's
bandwidth. Naive Bayes is famously overconfident: its points bend away from the diagonal.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal import ReliabilityDisplay

X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
logistic = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)
bayes = GaussianNB().fit(X_tr, y_tr)

fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")
for ax, (name, model) in zip(axes, [("logistic regression", logistic), ("naive Bayes", bayes)], strict=True):
    disp = ReliabilityDisplay.from_estimator(
        model, X_te, y_te, strategy="soft", n_bootstrap=100, random_state=0, ax=ax
    )
    ax.set_title(f"{name}: SCDL {disp.scdl:.3f}, m* = {disp.n_bins}")
plt.show()
