"""Speed of the k-class second-order tools: fitting the 10-class classifier, and classwise CE2 at 1e6 rows.

Two targets, measured side by side in one run (the machine is shared):

1. **Fit time.** ``SecondOrderCalibratedClassifier`` on a 10-class ensemble, fitted on 5,000 rows
   with vote counts per class, against ten binary fits of the same classifier, one per
   one-vs-rest task (target: the 10-class fit within 5x the ten binary fits). Two ensembles: a
   fitted ``RandomForestClassifier`` (50 trees; the binary fits take one-vs-rest views of the same
   trees, so every fit evaluates the members once) and ``"precomputed"`` moments (only the
   perturbation and the calibrators). Both at the defaults (tensor degree 4, second order). Timed
   by ``harness.time_rotated`` (medians over rotated rounds).
2. **Classwise CE2 at scale.** ``ce2_score`` on ``(1e6, 10)`` counts per class (``VoteCounts(counts=
   C)``, 50 votes per row) and ``(1e6, 10, 2)`` scores, in CPU seconds (``time.process_time``: every
   thread of the process), at ``degree="auto"`` (tensor degree 10 at ``h = 1/64`` and ``n = 1e6``,
   the degree rule measured by ``benchmarks/ce2_degree.py``) and at fixed degrees 22, 44 and 88
   (88: the specification's capped rule, 7,921 features per class; target: 30 s of CPU). The scores
   are unperturbed and the votes drawn from ``m`` itself, so the population's classwise CE2 is
   ``mean_j E[sigma2_j]`` (``eta1 = m``, ``eta2 = m^2``): each estimate's error is reported.

Usage (from the repository root)::

    nice python -m benchmarks.speed_multiclass          # full run
    python -m benchmarks.speed_multiclass --quick       # smoke run (1e5 rows, degree 22 and auto)

Writes ``speed_multiclass.json`` (``speed_multiclass_quick.json`` with ``--quick``).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from benchmarks import _harness as harness

K = 10
N_FIT = 5000


class OneVsRest(ClassifierMixin, BaseEstimator):
    """A fitted multiclass member seen as a binary classifier of class ``j`` (benchmark helper)."""

    def __init__(self, member=None, j=0):
        self.member = member
        self.j = j

    def fit(self, X, y=None):  # pragma: no cover - never fitted, it wraps a fitted member
        return self

    def predict_proba(self, X):
        p = self.member.predict_proba(X)[:, self.j]
        return np.column_stack([1.0 - p, p])

    def __sklearn_is_fitted__(self):
        return True

    @property
    def classes_(self):
        return np.array([0, 1])


def _problem(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    logits = X @ rng.normal(size=(X.shape[1], K))
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in P])
    counts = rng.multinomial(5, P)
    return X, y, counts


def fit_times(rounds):
    from sklearn.ensemble import RandomForestClassifier

    from skcal import SecondOrderCalibratedClassifier, VoteCounts, ensemble_moments

    X, y, counts = _problem(3 * N_FIT)
    forest = RandomForestClassifier(n_estimators=50, max_depth=6, random_state=0)
    forest.fit(X[:N_FIT], y[:N_FIT])
    Xc, votes = X[N_FIT : 2 * N_FIT], VoteCounts(counts=counts[N_FIT : 2 * N_FIT])
    ovr = [[OneVsRest(t, j) for t in forest.estimators_] for j in range(K)]
    P = np.stack([t.predict_proba(Xc) for t in forest.estimators_])
    moments = ensemble_moments(P)

    def k_class():
        SecondOrderCalibratedClassifier(forest).fit(Xc, votes)

    def binary():
        for j in range(K):
            SecondOrderCalibratedClassifier(ovr[j]).fit(Xc, votes.one_vs_rest(j))

    def k_class_pre():
        SecondOrderCalibratedClassifier("precomputed").fit(moments, votes)

    def binary_pre():
        for j in range(K):
            pair = moments[:, [j, K + j]]
            SecondOrderCalibratedClassifier("precomputed").fit(pair, votes.one_vs_rest(j))

    out = {}
    for name, (a, b) in {"forest": (k_class, binary), "precomputed": (k_class_pre, binary_pre)}.items():
        t = harness.time_rotated({"10-class": a, "ten binary": b}, rounds=rounds)
        out[name] = {
            "median_s": t.median,
            "ratio_10_class_over_ten_binary": t.ratio("10-class", "ten binary"),
        }
    return out


def ce2_cpu(n, degrees, seed=0):
    from skcal import VoteCounts, ce2_details

    rng = np.random.default_rng(seed)
    M = rng.dirichlet(np.full(K, 0.3), n)
    s2 = rng.uniform(0, 1, (n, K)) * M * (1 - M) * 0.5
    counts = rng.multinomial(50, M)
    votes, scores = VoteCounts(counts=counts), np.stack([M, s2], axis=2)
    truth = float(s2.mean())  # eta1 = m and eta2 = m^2: the classwise CE2 is mean_j E[sigma2_j]
    out = {"truth_classwise_ce2": truth}
    for deg in degrees:
        t0, w0 = time.process_time(), time.perf_counter()
        res = ce2_details(votes, scores, degree=deg)
        out[str(deg)] = {
            "cpu_s": time.process_time() - t0,
            "wall_s": time.perf_counter() - w0,
            "degrees_used": sorted({r.degree for r in res.per_class}),
            "classwise_ce2": res.ce2,
            "error": res.ce2 - truth,
        }
    return out


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="smoke run (1e5 rows, degree 22 and auto)")
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    n = 10**5 if args.quick else 10**6
    degrees = [22, "auto"] if args.quick else ["auto", 22, 44, 88]
    result = {
        "load_average": {"before": harness.load_average()},
        "fit": fit_times(rounds=3 if args.quick else 7),
        "ce2_1e6": {"n": n, "k": K, "votes_per_row": 50, "by_degree": ce2_cpu(n, degrees)},
    }
    result["load_average"]["after"] = harness.load_average()
    tag = "speed_multiclass_quick" if args.quick else "speed_multiclass"
    config = {"quick": args.quick, "n_fit": N_FIT, "k": K, "n_ce2": n, "degrees": degrees}
    harness.write_result(__file__, argv, args.out / f"{tag}.json", result, config=config, clock=clock)
    for name, f in result["fit"].items():
        ratio = f["ratio_10_class_over_ten_binary"]
        print(f"fit {name}: 10-class / ten binary = {ratio:.2f} ({f['median_s']})")
    by_degree = result["ce2_1e6"]["by_degree"]
    truth = by_degree["truth_classwise_ce2"]
    for deg, r in by_degree.items():
        if deg == "truth_classwise_ce2":
            continue
        print(
            f"ce2_score ({n}, {K}) degree={deg} {r['degrees_used']}: {r['cpu_s']:.1f} s CPU, "
            f"{r['wall_s']:.1f} s wall, CE2 {r['classwise_ce2']:.6f} (truth {truth:.6f})"
        )
    return result


if __name__ == "__main__":
    main()
