"""The CE2 degree chosen by accuracy: the polynomial estimators' error against a known truth.

For each problem below the population CE2 (and CE1) of the sech-perturbed predictor is known, so
the error ``CE2_hat - CE2`` of ``ce2_score``'s default estimator (in-sample plug-in, ``alpha =
1e-6``, tensor basis, no ``cv``) can be measured at every degree and sample size, and so can
``ce1_score``'s (the 1-D basis of ``m``); the rule of ``degree="auto"``
(``skcal.chebyshev.auto_degree``) is set so that it picks the degree that measures best.

Problems:

* ``rate-1/64`` and ``rate-1/16``: experiment 6.1 (``benchmarks/rate.py``): inputs from the
  10-component Gaussian mixture of ``benchmarks/_mixture_problem.py``, ``f* = sigmoid(w . x)``, the
  5-MLP ensemble's ``(m, sigma2)`` (trained as in ``rate.py``), two label snapshots per row, scores
  perturbed with ``SechPerturber(bandwidth=h)``. The truth is rate.py's quasi-Monte-Carlo grid
  integral (``SechGroundTruth``; the mean of two scrambles, their difference reported).
* ``cifar10h-1/64`` (when the data are present; ``--data``, default ``<repo>/../shared/data``):
  CIFAR-10H-shaped. The population is the 100,000 (image, class) pairs of the CIFAR-10 test set,
  each with the 11-model ensemble's ``(m, sigma2)`` of that class (``skcal.ensemble_moments``; the
  models of ``benchmarks/cifar10h.py``) and ``f*`` the share of the image's human annotators who
  chose the class (CIFAR-10H). A sample draws pairs uniformly with replacement and 50 votes per row
  from ``Binomial(50, f*)`` (about the 47-63 annotators of an image), perturbed at ``h = 1/64``. The
  truth is the grid integral of that population (exact up to the grid: the difference to a grid
  of twice the resolution is reported).

Per problem, sample size ``n`` and seed: a fresh sample, the Chebyshev statistics at the largest
degree once (``ChebyshevMoments``; lower degrees are sub-blocks), and at each degree the ridge fit
and the clipped in-sample plug-in: the same number as ``ce2_score(Y, S, degree=d, bandwidth=h)``
(``tests/test_benchmarks_second_order.py`` checks it). Besides the listed degrees, each ``n``
measures the degrees of three rules (:data:`RULES`): skcal's default, skcal 0.1's guard (at most
``n / 100`` features) and the specification's capped analytic rule (no guard). Reported per
problem, ``n`` and degree: the mean signed and absolute error over seeds with a 90% t-interval, the
best degree, each rule's degree and error, and per rule the ratio of its error to the best degree's
(geometric mean and largest over the cells).

Usage (from the repository root)::

    nice -n 10 python -m benchmarks.ce2_degree --n-jobs 2   # full: n = 2e3 .. 1e6, 5 seeds
    python -m benchmarks.ce2_degree --quick                  # smoke run: rate-1/16 at n = 2e3, 5e3
    python -m benchmarks.ce2_degree --tables benchmarks/results/ce2_degree.json  # the page's tables

Writes ``ce2_degree.json`` and ``ce2_degree.png`` (``ce2_degree_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness

DEFAULT_DATA = harness.REPO_ROOT.parent / "shared" / "data"
ALPHA = 1e-6
FULL = {
    "n_grid": [2_000, 5_000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
    "degrees": [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 22, 33, 44, 66, 88],
    "degrees_1d": [*range(2, 41), 44, 48, 56, 64, 88],
    "seeds": 5,
    "problems": ["rate-1/64", "rate-1/16", "cifar10h-1/64"],
    "sobol_log2": 15,
    "grid": (1025, 257),
    "ensemble": (5000, 30),
}
QUICK = {
    "n_grid": [2_000, 5_000],
    "degrees": [2, 4, 8],
    "degrees_1d": [2, 8, 32],
    "seeds": 1,
    "problems": ["rate-1/16"],
    "sobol_log2": 10,
    "grid": (257, 65),
    "ensemble": (2000, 10),
}
CIFAR_VOTES = 50
#: The rules compared at every n, as ``auto_degree``'s ``samples_per_feature``: skcal's default,
#: skcal 0.1's guard (at most n / 100 features) and the spec's capped analytic rule (no guard).
RULES = {"default": "auto", "skcal 0.1": 100, "spec": None}


# ----------------------------------------------------------------------------------------------
# problems: a sampler of (scores, targets) and the population CE2 of the perturbed predictor
# ----------------------------------------------------------------------------------------------
def ce1_truth(grid, N):
    """CE1 of the perturbed mean: ``integral |N1(t1) - t1 N0(t1)| dt1``, the fields summed over ``t2``."""
    ws = np.full(grid.n_s, grid.ts[-1] / (grid.n_s - 1))  # trapezoid weights of each axis
    ws[[0, -1]] *= 0.5
    wm = np.full(grid.n_m, 1.0 / (grid.n_m - 1))
    wm[[0, -1]] *= 0.5
    M0, M1 = N[0] @ ws, N[1] @ ws
    return float(np.sum(wm * np.abs(M1 - grid.tm * M0)))


class RateProblem:
    """Experiment 6.1's problem and MLP ensemble at bandwidth ``h`` (two snapshots per row)."""

    def __init__(self, h, cfg, n_jobs=1):
        from benchmarks._mixture_problem import (
            MixtureProblem,
            SechGroundTruth,
            qmc_fields,
            train_mlp_ensemble,
        )

        self.h = h
        self.problem = MixtureProblem(seed=0)
        rng = np.random.default_rng(1)  # as rate.py with --seed 0
        n_train, epochs = cfg["ensemble"]
        Xe = self.problem.sample(n_train, rng)
        ye = self.problem.labels(Xe, rng)[:, 0]
        self.members = train_mlp_ensemble(Xe, ye, n_members=5, epochs=epochs, seed=2000, n_jobs=n_jobs)
        grid = SechGroundTruth(h, *cfg["grid"])
        fields = qmc_fields(grid, self.problem, self.members, cfg["sobol_log2"], seed=20_000)
        reps = [grid.ce2(N)["ce2"] for N in fields]
        reps1 = [ce1_truth(grid, N) for N in fields]
        self.truth = 0.5 * (reps[0] + reps[1])
        self.truth_ce1 = 0.5 * (reps1[0] + reps1[1])
        self.truth_info = {
            "ce2": self.truth,
            "replicates": reps,
            "replicate_abs_diff": abs(reps[0] - reps[1]),
            "ce1": self.truth_ce1,
            "ce1_replicate_abs_diff": abs(reps1[0] - reps1[1]),
        }

    def sample(self, n, seed):
        from benchmarks._mixture_problem import ensemble_scores
        from skcal import SechPerturber
        from skcal.votes import snapshot_targets

        rng = np.random.default_rng([seed, n])
        X = self.problem.sample(n, rng)
        S = ensemble_scores(self.members, X)
        Y = self.problem.labels(X, rng, k=2)
        Sp = SechPerturber(bandwidth=self.h, random_state=seed).fit_transform(S)
        t1, t2, _ = snapshot_targets(Y)
        return Sp, np.column_stack([t1, t2]), Y


class CifarProblem:
    """The (image, class) pairs of CIFAR-10 with the ensemble's scores and the humans' shares as f*."""

    def __init__(self, h, cfg, data):
        from benchmarks._mixture_problem import SechGroundTruth
        from benchmarks.cifar10h import load
        from skcal import ensemble_moments

        self.h = h
        counts, P, _, _ = load(data)
        S3 = ensemble_moments(P, layout="classes")  # (n_images, 10, 2)
        self.S = S3.reshape(-1, 2)
        self.f = (counts / counts.sum(axis=1, keepdims=True)).reshape(-1)
        truths, truths1 = [], []
        for scale in (1, 2):
            n_m, n_s = cfg["grid"]
            grid = SechGroundTruth(h, (n_m - 1) * scale + 1, (n_s - 1) * scale + 1)
            N = grid.fields(self.S[:, 0], self.S[:, 1], self.f)
            truths.append(grid.ce2(N)["ce2"])
            truths1.append(ce1_truth(grid, N))
        self.truth, self.truth_ce1 = truths[0], truths1[0]
        self.truth_info = {
            "ce2": truths[0],
            "ce2_finer_grid": truths[1],
            "grid_abs_diff": abs(truths[0] - truths[1]),
            "ce1": truths1[0],
            "ce1_finer_grid": truths1[1],
        }

    def sample(self, n, seed):
        from skcal import SechPerturber, VoteCounts
        from skcal.votes import snapshot_targets

        rng = np.random.default_rng([seed, n])
        idx = rng.integers(0, self.S.shape[0], n)
        S = self.S[idx]
        votes = VoteCounts(rng.binomial(CIFAR_VOTES, self.f[idx]), np.full(n, CIFAR_VOTES))
        Sp = SechPerturber(bandwidth=self.h, random_state=seed).fit_transform(S)
        t1, t2, _ = snapshot_targets(votes)
        return Sp, np.column_stack([t1, t2]), votes


def make_problem(name, cfg, data, n_jobs):
    kind, inv_h = name.split("-")
    h = 1.0 / float(inv_h.split("/")[1])
    if kind == "rate":
        return RateProblem(h, cfg, n_jobs)
    return CifarProblem(h, cfg, data)


# ----------------------------------------------------------------------------------------------
# the estimates at every degree from one pass of statistics
# ----------------------------------------------------------------------------------------------
def estimates_by_degree(S, T, degrees, alpha=ALPHA, measure="ce2"):
    """``{degree: estimate}``: the in-sample plug-in of ``ce2_score(..., degree=d)`` at each degree.

    The statistics are computed once at the largest degree; each degree's fit is a sub-block of
    them (``ChebyshevRidge.fit_stats``), clipped to [0, 1] and plugged in at the same scores.
    ``measure="ce1"``: ``ce1_score(t1, S[:, 0], degree=d)`` (the 1-D basis of ``m`` alone).
    """
    from skcal.chebyshev import ChebyshevMoments, ChebyshevRidge

    if measure == "ce1":
        S, T = S[:, :1], T[:, :1]
    stats = ChebyshevMoments.from_data(S, T, max(degrees))
    m = S[:, 0]
    out = {}
    for d in degrees:
        model = ChebyshevRidge(d, alpha, "tensor").fit_stats(stats)
        E = np.clip(model.predict(S), 0.0, 1.0)
        out[d] = float(np.mean(np.abs(E[:, 0] - m)))
        if measure == "ce2":
            out[d] += float(np.mean(np.abs(E[:, 1] - (m * m + S[:, 1]))))
    return out


def rule_degrees(n, h, basis):
    """``{rule: degree}`` of :data:`RULES` at sample size ``n`` and bandwidth ``h``."""
    from skcal.chebyshev import auto_degree

    return {rule: int(auto_degree(n, h, basis, samples_per_feature=s)) for rule, s in RULES.items()}


def one(problem, name, n, seed, degrees, degrees_1d):
    """The rows of one (problem, n, seed): every degree's estimate of CE2 (tensor) and CE1 (1-D)."""
    S, T, _ = problem.sample(n, seed)
    rows = []
    for measure, basis, degs, truth in (
        ("ce2", "tensor", degrees, problem.truth),
        ("ce1", "1d", degrees_1d, problem.truth_ce1),
    ):
        degs = sorted(set(degs) | set(rule_degrees(n, problem.h, basis).values()))
        for d, e in estimates_by_degree(S, T, degs, measure=measure).items():
            row = {"problem": name, "measure": measure, "n": n, "seed": seed, "degree": d}
            rows.append({**row, "estimate": e, "error": e - truth})
    print(f"[ce2_degree] {name} n={n} seed={seed} done", file=sys.stderr, flush=True)
    return rows


def summarize(rows, problems, n_grid, h_of, measure="ce2"):
    """Per problem and ``n``: every degree's error, the best degree, each rule's degree and error."""
    basis = "tensor" if measure == "ce2" else "1d"
    out = {}
    for name in problems:
        mine = [r for r in rows if r["problem"] == name and r["measure"] == measure]
        if not mine:
            continue
        out[name] = {}
        for n in n_grid:
            per = {}
            for d in sorted({r["degree"] for r in mine if r["n"] == n}):
                err = np.array([r["error"] for r in mine if r["n"] == n and r["degree"] == d])
                mean_abs, half = harness.t_interval(np.abs(err), level=0.90)
                per[str(d)] = {
                    "mean_error": float(err.mean()),
                    "mean_abs_error": float(mean_abs),
                    "t90_halfwidth": float(half) if np.isfinite(half) else None,
                    "seeds": int(err.size),
                }
            if not per:
                continue
            best = min(per, key=lambda d: per[d]["mean_abs_error"])
            rules = {
                rule: {"degree": d, "mean_abs_error": per[str(d)]["mean_abs_error"]}
                for rule, d in rule_degrees(n, h_of[name], basis).items()
            }
            out[name][str(n)] = {
                "by_degree": per,
                "best_degree": int(best),
                "best_mean_abs_error": per[best]["mean_abs_error"],
                "rules": rules,
            }
    return out


def regret(summary):
    """Per rule, its error over the best degree's across the cells: geometric mean and largest."""
    ratios = {}
    for per_n in summary.values():
        for s in per_n.values():
            for rule, r in s["rules"].items():
                ratios.setdefault(rule, []).append(r["mean_abs_error"] / s["best_mean_abs_error"])
    return {
        rule: {
            "geometric_mean_ratio": float(np.exp(np.mean(np.log(v)))),
            "max_ratio": float(max(v)),
            "cells": len(v),
        }
        for rule, v in ratios.items()
    }


def main(argv=None):
    parser = harness.parser(__file__, __doc__, n_jobs="joblib workers over (problem, n, seed)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding cifar10h/")
    parser.add_argument("--problems", default=None, help="comma-separated subset of the problems")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per (problem, n)")
    parser.add_argument("--n-grid", default=None, help="comma-separated sample sizes")
    parser.add_argument("--degrees", default=None, help="comma-separated tensor degrees (CE2)")
    parser.add_argument("--degrees-1d", default=None, help="comma-separated 1-D degrees (CE1)")
    parser.add_argument(
        "--tag", default=None, help="output file stem (default ce2_degree / ce2_degree_quick)"
    )
    parser.add_argument(
        "--tables", type=Path, default=None, help="print the Markdown tables of a result JSON"
    )
    args = harness.parse_args(parser, argv)
    if args.tables is not None:
        print(tables(json.loads(args.tables.read_text())))
        return 0
    cfg = dict(QUICK if args.quick else FULL)
    if args.problems:
        cfg["problems"] = args.problems.split(",")
    if args.seeds:
        cfg["seeds"] = args.seeds
    if args.n_grid:
        cfg["n_grid"] = [int(float(x)) for x in args.n_grid.split(",")]
    if args.degrees:
        cfg["degrees"] = [int(x) for x in args.degrees.split(",")]
    if args.degrees_1d:
        cfg["degrees_1d"] = [int(x) for x in args.degrees_1d.split(",")]
    clock = harness.Timer()
    problems, skipped = {}, {}
    for name in cfg["problems"]:
        if name.startswith("cifar10h") and not (Path(args.data) / "cifar10h").is_dir():
            skipped[name] = "the CIFAR-10H data are absent under --data"
            continue
        problems[name] = make_problem(name, cfg, args.data, args.n_jobs)
    jobs = [(name, n, s) for name in problems for n in cfg["n_grid"] for s in range(cfg["seeds"])]
    parts = Parallel(n_jobs=args.n_jobs)(
        delayed(one)(problems[name], name, n, s, cfg["degrees"], cfg["degrees_1d"]) for name, n, s in jobs
    )
    rows = [r for part in parts for r in part]
    h_of = {name: p.h for name, p in problems.items()}
    summary = summarize(rows, list(problems), cfg["n_grid"], h_of)
    summary_ce1 = summarize(rows, list(problems), cfg["n_grid"], h_of, "ce1")
    result = {
        "alpha": ALPHA,
        "n_grid": cfg["n_grid"],
        "seeds": cfg["seeds"],
        "cifar_votes_per_row": CIFAR_VOTES,
        "rules": {k: str(v) for k, v in RULES.items()},
        "truth": {name: p.truth_info for name, p in problems.items()},
        "skipped": skipped,
        "regret": {"ce2": regret(summary), "ce1": regret(summary_ce1)},
        "summary": summary,
        "summary_ce1": summary_ce1,
        "rows": rows,
    }
    stem = args.tag or ("ce2_degree_quick" if args.quick else "ce2_degree")
    harness.write_result(__file__, argv, args.out / f"{stem}.json", result, config=dict(cfg), clock=clock)
    plot(summary, summary_ce1, args.out / f"{stem}.png")
    for label, summ in (("CE2", summary), ("CE1", summary_ce1)):
        for name, per_n in summ.items():
            for n, s in per_n.items():
                rules = ", ".join(
                    f"{k} {r['degree']} ({r['mean_abs_error']:.5f})" for k, r in s["rules"].items()
                )
                print(
                    f"{label} {name} n={n}: best {s['best_degree']} ({s['best_mean_abs_error']:.5f}); {rules}"
                )
    for label, reg in result["regret"].items():
        for rule, r in reg.items():
            ratio, worst = r["geometric_mean_ratio"], r["max_ratio"]
            print(f"{label} {rule}: error / best {ratio:.3f} geometric mean, max {worst:.2f}")
    return 0


#: Degrees shown in the page's tables (every measured degree is in the JSON).
TABLE_DEGREES = {
    "ce2": [2, 3, 4, 5, 6, 8, 10, 12, 16, 22, 44, 88],
    "ce1": [2, 4, 6, 8, 12, 16, 24, 32, 44, 88],
}


def tables(result):
    """Markdown tables of a result: mean |error| by degree and n, and each rule's degree and error."""
    out = []
    for measure, key in (("ce2", "summary"), ("ce1", "summary_ce1")):
        label = measure.upper()
        for name, per_n in result[key].items():
            degs = TABLE_DEGREES[measure]
            out.append(
                f"\n{label}, {name} (truth {result['truth'][name][measure]:.5f}): mean |error| x 1e4\n"
            )
            out.append("| n | " + " | ".join(str(d) for d in degs) + " | best | default | skcal 0.1 | spec |")
            out.append("|---" * (len(degs) + 5) + "|")
            for n, s in per_n.items():
                cells = []
                for d in degs:
                    v = s["by_degree"].get(str(d))
                    cells.append("" if v is None else f"{1e4 * v['mean_abs_error']:.2f}")
                rules = [f"{r['degree']}: {1e4 * r['mean_abs_error']:.2f}" for r in s["rules"].values()]
                best = f"{s['best_degree']}: {1e4 * s['best_mean_abs_error']:.2f}"
                out.append(
                    f"| {int(n):,} | " + " | ".join(cells) + f" | {best} | " + " | ".join(rules) + " |"
                )
        out.append(f"\n{label}: error / best degree's error over the (problem, n) cells\n")
        out.append("| rule | geometric mean | largest | cells |")
        out.append("|---|---|---|---|")
        for rule, r in result["regret"][measure].items():
            out.append(f"| {rule} | {r['geometric_mean_ratio']:.2f} | {r['max_ratio']:.2f} | {r['cells']} |")
    return "\n".join(out)


def plot(summary, summary_ce1, path):
    names = list(summary)
    cols = max(1, len(names))
    fig, axes = harness.subplots(2, cols, figsize=(5.5 * cols, 8.4), squeeze=False)
    for row, (label, basis, summ) in enumerate((("CE2", "tensor", summary), ("CE1", "1-D", summary_ce1))):
        for ax, name in zip(axes[row], names, strict=False):
            for n, s in summ.get(name, {}).items():
                ds = [int(d) for d in s["by_degree"]]
                line = ax.plot(ds, [s["by_degree"][str(d)]["mean_abs_error"] for d in ds], "o-", ms=3)[0]
                default = s["rules"]["default"]
                line.set_label(f"n = {int(n):,} (default: degree {default['degree']})")
                ax.plot([default["degree"]], [default["mean_abs_error"]], "*", ms=11, color=line.get_color())
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(f"{basis} degree")
            ax.set_ylabel(f"mean |{label}_hat - {label}|")
            ax.set_title(f"{label}, {name} (star: the default degree)", fontsize=10)
            ax.legend(fontsize=7)
    harness.save_figure(fig, path)


if __name__ == "__main__":
    sys.exit(main())
