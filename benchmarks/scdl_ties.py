"""How often does ``GridSearchCV(scoring=scdl)`` tie, under the "auto" and the "theory" grid rules?

A grid search over 8 candidates: ``CalibratedClassifierCV(method in {sigmoid, isotonic}, cv=3)``
around 4 base models (logistic regression with C = 1 and C = 0.01, Gaussian naive Bayes, a depth-4
decision tree), 5-fold CV, on ``make_classification`` data (20 features, 5 informative, 5% label
noise) of n rows, for n in {500, 1000, 2000, 5000} and ``--seeds`` data sets each. Each search is
scored with SCDL under both rules (``skcal.scdl.scdl_score`` through ``make_scorer``) and with
smECE and the Brier score for comparison (one fit, multi-metric scoring, no refit).

Reported per rule and n:

* ``best_tie``: fraction of searches whose best mean CV score is shared by two or more
  candidates (exact equality; ``GridSearchCV`` then refits the first of them).
* ``fold_tie``: fraction of (search, fold) pairs whose best fold score is shared.
* ``distinct``: mean number of distinct mean CV scores among the 8 candidates.
* ``floor``: fraction of fold scores that sit on their grid's floor ``1/m*`` (those are the
  values that tie).

Usage (from the repository root)::

    nice python -m benchmarks.scdl_ties --n-jobs 2        # full: 10 seeds
    python -m benchmarks.scdl_ties --quick                # smoke

Writes ``scdl_ties.json`` to ``--out``, after every finished search.
"""

from __future__ import annotations

import datetime

import numpy as np
from joblib import Parallel, delayed
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, make_scorer
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from benchmarks import _harness as harness
from skcal.scdl import scdl_curve, scdl_score
from skcal.smooth_ece import smooth_ece

SIZES = (500, 1000, 2000, 5000)
RULES = ("auto", "theory")


def _scdl_floor(y, p, max_bins):
    """1.0 when SCDL sits on its grid's floor 1/m* (a value other models can share)."""
    return float(scdl_curve(y, p, max_bins=max_bins).at_floor)


def scorers():
    out = {}
    for rule in RULES:
        out[f"scdl_{rule}"] = make_scorer(
            scdl_score, greater_is_better=False, response_method="predict_proba", max_bins=rule
        )
        out[f"floor_{rule}"] = make_scorer(_scdl_floor, response_method="predict_proba", max_bins=rule)
    out["smooth_ece"] = make_scorer(smooth_ece, greater_is_better=False, response_method="predict_proba")
    out["brier"] = make_scorer(brier_score_loss, greater_is_better=False, response_method="predict_proba")
    return out


def one_search(n, seed):
    X, y = make_classification(
        n_samples=n, n_features=20, n_informative=5, flip_y=0.05, random_state=seed
    )
    grid = {
        "estimator": [
            LogisticRegression(C=1.0, max_iter=1000),
            LogisticRegression(C=0.01, max_iter=1000),
            GaussianNB(),
            DecisionTreeClassifier(max_depth=4, random_state=0),
        ],
        "method": ["sigmoid", "isotonic"],
    }
    search = GridSearchCV(
        CalibratedClassifierCV(cv=3),
        grid,
        scoring=scorers(),
        refit=False,
        cv=StratifiedKFold(5, shuffle=True, random_state=seed),
    ).fit(X, y)
    res = search.cv_results_
    out = {"n": n, "seed": seed}
    for name in (*(f"scdl_{r}" for r in RULES), "smooth_ece", "brier"):
        mean = res[f"mean_test_{name}"]
        folds = np.array([res[f"split{k}_test_{name}"] for k in range(5)])  # (5, 8)
        out[name] = {
            "best_tie": bool(np.sum(mean == mean.max()) >= 2),
            "fold_tie": float(np.mean([np.sum(f == f.max()) >= 2 for f in folds])),
            "distinct": int(np.unique(mean).size),
        }
        if name.startswith("scdl_"):
            out[name]["floor"] = float(np.mean([res[f"split{k}_test_floor_{name[5:]}"] for k in range(5)]))
    return out


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run: n = 500, one data set", n_jobs="joblib workers over searches"
    )
    parser.add_argument("--seeds", type=int, default=10, help="data sets per n")
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    sizes = (500,) if args.quick else SIZES
    seeds = 1 if args.quick else args.seeds
    config = harness.args_config(args, sizes=list(sizes), seeds_used=seeds, candidates=8)
    # the git state is read before the first write: the result file itself is tracked, and its
    # partial versions must not mark the tree dirty
    prov = harness.provenance(__file__, argv, config=config)
    runs = []
    # results are written after every finished search, so a stopped run keeps what it measured
    for run in Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(one_search)(n, s) for s in range(seeds) for n in sizes
    ):
        runs.append(run)
        result = _result(runs, sizes, seeds)
        prov = {**prov, "wall_time_s": round(clock.elapsed(), 3), "date": _now()}
        prov["load_average"] = harness.load_average()
        harness.write_json(args.out / "scdl_ties.json", result, provenance=prov)
        print(f"done n={run['n']} seed={run['seed']} ({len(runs)} of {len(sizes) * seeds})", flush=True)
    _print(result)
    print(f"wall {prov['wall_time_s']:.1f} s")
    return result


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _result(runs, sizes, seeds):
    summary = {}
    for name in (*(f"scdl_{r}" for r in RULES), "smooth_ece", "brier"):
        summary[name] = {}
        for n in sizes:
            cell = [r[name] for r in runs if r["n"] == n]
            if not cell:
                continue
            summary[name][str(n)] = {k: float(np.mean([c[k] for c in cell])) for k in cell[0]}
            summary[name][str(n)]["searches"] = len(cell)
    runs = sorted(runs, key=lambda r: (r["n"], r["seed"]))  # the finishing order is not a result
    return {
        "seeds": seeds,
        "sizes": list(sizes),
        "candidates": 8,
        "summary": summary,
        "runs": runs,
    }


def _print(result):
    for name, cells in result["summary"].items():
        print(
            f"{name:12s} "
            + "  ".join(
                f"n={n}: best_tie {c['best_tie']:.2f} fold_tie {c['fold_tie']:.2f} "
                f"distinct {c['distinct']:.1f}"
                + (f" floor {c['floor']:.2f}" if "floor" in c else "")
                for n, c in cells.items()
            )
        )


if __name__ == "__main__":
    main()
