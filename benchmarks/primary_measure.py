"""Which calibration measure should a first-order report rank by? The one that orders models right.

A report names one *primary* measure: its table is ranked by it and its verdict speaks of it.
This script measures, for each candidate, how often it puts the better calibrated of two models
first, on pairs whose order is not a matter of definition: the two models distort the same true
probabilities ``q`` by the same monotone family, one more than the other, so the first is better
calibrated by every calibration measure's population value (the l1 and l2 calibration errors, the
distance to calibration, the calibration decision loss).

* true probabilities ``q ~ Beta(2, 2)`` (moderate) or ``Beta(0.5, 0.5)`` (confident);
  labels ``y ~ Bernoulli(q)``, shared by both models of a pair (a paired comparison, as in the
  report's paired bootstrap);
* families: temperature ``p = sigmoid(a logit q)`` (``a > 1`` over-confident, ``a < 1``
  under-confident) and bias ``p = sigmoid(logit q + b)``;
* pairs: neighbours in a family, ``(1.15, 1.3)``, ``(1.3, 1.6)``, ``(0.85, 0.7)`` in ``a``,
  ``(0.1, 0.2)``, ``(0.2, 0.4)`` in ``b``, and the calibrated model against ``a = 1.15``;
* sizes ``n`` in {300, 1000, 3000, 10000}; ``--reps`` data sets per (distribution, pair, n).

A measure scores 1 when it ranks the better model first, 0 when it ranks it second, 1/2 on a tie.
Reported per measure and ``n``: the rate over every pair and distribution, with its 95% Wilson
interval; the measure with the highest rate at the sizes of a typical validation set
(1,000 to 3,000 rows) is the report's default primary measure (``docs/benchmarks/primary_measure.md``).

Usage (from the repository root)::

    nice python -m benchmarks.primary_measure            # full: 400 data sets per cell
    python -m benchmarks.primary_measure --quick         # smoke: 20 per cell, two sizes

Writes ``primary_measure.json`` (``primary_measure_quick.json`` with ``--quick``) to ``--out``.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.special import expit, logit
from sklearn.metrics import brier_score_loss

from benchmarks import _harness as harness
from skcal.binned_ece import binned_ece
from skcal.binned_measures import debiased_l2_calibration_error
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_score
from skcal.smooth_ece import smooth_ece

#: The candidates, by the report's metric names.
MEASURES = {
    "scdl": scdl_score,
    "smooth_ece": smooth_ece,
    "smooth_calibration_error": smooth_calibration_error,
    "cutoff": cutoff_calibration_error,
    "binned_ece": binned_ece,
    "debiased_l2": debiased_l2_calibration_error,
    "brier": brier_score_loss,
}
#: (family, better, worse): the better model distorts q less.
PAIRS = (
    ("temperature", 1.0, 1.15),
    ("temperature", 1.15, 1.3),
    ("temperature", 1.3, 1.6),
    ("temperature", 0.85, 0.7),
    ("bias", 0.1, 0.2),
    ("bias", 0.2, 0.4),
)
DISTRIBUTIONS = {"beta(2,2)": (2.0, 2.0), "beta(0.5,0.5)": (0.5, 0.5)}
SIZES = (300, 1000, 3000, 10000)
TYPICAL = (1000, 3000)


def distort(q, family, value):
    z = logit(np.clip(q, 1e-9, 1 - 1e-9))
    return expit(z * value) if family == "temperature" else expit(z + value)


def one_cell(dist, pair, n, reps, seed):
    """Scores (1, 0 or 1/2) of every measure on ``reps`` data sets of one cell."""
    a, b = DISTRIBUTIONS[dist]
    family, better, worse = pair
    rng = np.random.default_rng(seed)
    out = {name: np.empty(reps) for name in MEASURES}
    for r in range(reps):
        q = rng.beta(a, b, size=n)
        y = (rng.uniform(size=n) < q).astype(np.int64)
        p_good, p_bad = distort(q, family, better), distort(q, family, worse)
        for name, fn in MEASURES.items():
            good, bad = fn(y, p_good), fn(y, p_bad)
            out[name][r] = 1.0 if good < bad else 0.5 if good == bad else 0.0
    return out


def main(argv=None):
    p = harness.parser(__file__, __doc__, quick="20 data sets per cell, n in {300, 3000}")
    p.add_argument("--reps", type=int, default=400, help="data sets per cell (default: %(default)s)")
    args = harness.parse_args(p, argv)
    reps = 20 if args.quick else args.reps
    sizes = (300, 3000) if args.quick else SIZES
    start = time.perf_counter()
    scores = {name: {n: [] for n in sizes} for name in MEASURES}
    cells = []
    for d_i, dist in enumerate(DISTRIBUTIONS):
        for p_i, pair in enumerate(PAIRS):
            for n in sizes:
                cell = one_cell(dist, pair, n, reps, seed=[d_i, p_i, n])
                row = {"distribution": dist, "family": pair[0], "better": pair[1], "worse": pair[2], "n": n}
                row["rate"] = {name: float(v.mean()) for name, v in cell.items()}
                cells.append(row)
                for name, v in cell.items():
                    scores[name][n].append(v)
    summary = {}
    for name in MEASURES:
        summary[name] = {}
        for n in sizes:
            v = np.concatenate(scores[name][n])
            k = float(v.sum())
            low, high = harness.binomial_interval(round(k), v.size, level=0.95, method="wilson")
            summary[name][n] = {"rate": k / v.size, "low": low, "high": high, "trials": int(v.size)}
    typical = [n for n in sizes if n in TYPICAL] or list(sizes)
    typical_rate = {
        name: float(np.mean([summary[name][n]["rate"] for n in typical]))
        for name in MEASURES
        if name != "brier"
    }
    best = max(typical_rate, key=typical_rate.get)
    payload = {
        "summary": summary,
        "typical_sizes": typical,
        "typical_rate": typical_rate,
        "best_calibration_measure": best,
        "cells": cells,
    }
    out = args.out / ("primary_measure_quick.json" if args.quick else "primary_measure.json")
    harness.write_result(
        __file__,
        argv,
        out,
        payload,
        config=harness.args_config(args, reps=reps, sizes=list(sizes)),
        wall_time_s=time.perf_counter() - start,
    )
    width = max(len(n) for n in MEASURES)
    print(f"{'measure':<{width}}  " + "  ".join(f"n={n:<17}" for n in sizes))
    for name in MEASURES:
        cells_text = [
            f"{summary[name][n]['rate']:.3f} [{summary[name][n]['low']:.3f}, {summary[name][n]['high']:.3f}]"
            for n in sizes
        ]
        print(f"{name:<{width}}  " + "  ".join(f"{c:<19}" for c in cells_text))
    print(f"best calibration measure at n in {typical}: {best} ({typical_rate[best]:.3f})")
    print(f"wrote {harness.repo_relative(out)}")
    return payload


if __name__ == "__main__":
    main()
