"""Exact 0/1 outputs of first-order Platt scaling (order=1), before and after the margin.

On the experiment 6.4 Weather Sentiment AMT protocol (bundled data; XOR-mode scores as in
``benchmarks/weather_amt.py``; 59 + 59 balanced items, 41 for calibration and 77 for
evaluation per repeat, here without the unused selection split), the 2-D first-order
calibrator (total degree 3, ``alpha = 1e-3``) is fitted on vote counts for 200 repeats.
"Before" is the projected polynomial ``eta1`` (what ``transform`` returned before the margin;
still ``predict_moments``), "after" is ``transform`` (clipped to ``[1 / (n + 2), 1 - 1 / (n + 2)]``).
Reported: exact 0/1 outputs, and repeats whose mean per-vote log loss against the evaluation
items' votes is infinite.

Usage::

    nice python benchmarks/first_order_margin_audit.py
"""

import os
import sys

import numpy as np
from scipy.special import xlogy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weather_amt as w  # noqa: E402

from skcal import SecondOrderPlattCalibrator  # noqa: E402
from skcal.votes import VoteCounts  # noqa: E402


def main(repeats=200):
    c, a, _ = w.load_votes()
    alea, hidden = w.cohorts(c, a)
    n_out = n01_old = n01_new = 0
    ll_old, ll_new = [], []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        n_each = min(len(alea), len(hidden))
        items = np.concatenate(
            [rng.choice(alea, n_each, replace=False), rng.choice(hidden, n_each, replace=False)]
        )
        is_alea = np.arange(len(items)) < n_each
        cc, aa = c[items], a[items]
        b = rng.random(len(items)) < 0.5
        m = np.clip(np.where(b, 0.675, 0.325) + rng.normal(0, 0.06, len(items)), 0, 1)
        s = np.clip(np.where(is_alea == b, 0.675, 0.325) + rng.normal(0, 0.08, len(items)), 0, 1)
        perm = rng.permutation(len(items))
        cal, ev = perm[:41], perm[41:]
        V = VoteCounts(aa, cc)
        S = np.column_stack([m, s / 4])
        platt = SecondOrderPlattCalibrator(alpha=1e-3, order=1, degree=3, basis="total").fit(S[cal], V[cal])
        old, new = platt.predict_moments(S[ev])[:, 0], platt.transform(S[ev])[:, 0]
        n_out += len(ev)
        n01_old += int(((old == 0) | (old == 1)).sum())
        n01_new += int(((new == 0) | (new == 1)).sum())
        t1 = aa[ev] / cc[ev]
        with np.errstate(divide="ignore"):
            ll_old.append(float(np.mean(-(xlogy(t1, old) + xlogy(1 - t1, 1 - old)))))
            ll_new.append(float(np.mean(-(xlogy(t1, new) + xlogy(1 - t1, 1 - new)))))
    print(f"outputs {n_out}: exact 0/1 before the margin {n01_old}, after {n01_new}")
    print(
        f"repeats with infinite per-vote log loss: before {int(np.sum(~np.isfinite(ll_old)))}/{repeats}, "
        f"after {int(np.sum(~np.isfinite(ll_new)))}/{repeats}; mean after {np.mean(ll_new):.3f}"
    )


if __name__ == "__main__":
    main()
