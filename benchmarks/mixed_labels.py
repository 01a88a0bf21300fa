"""The mixed rule of ``ce2_score``: rows with one label beside rows with two, on the 6.2 problem.

The problem, predictor, ground truth and label draws are those of ``benchmarks/doubly_labelled.py``
(the experiment-6.2 ensemble, ``N`` rows with one label each, the first ``n2`` of them with a
second, independent label; ``h = 1/64``). This script measures what ``skcal.ce2_score`` now does
with such data given as one ``VoteCounts`` (``total = 2`` on the first ``n2`` rows, 1 on the
others): ``t1 = a / c`` from every row fits ``eta1``, ``t2`` from the ``n2`` rows with pairs fits
``eta2``, each with its own ``degree="auto"``, and both plug-in averages run over all ``N`` rows.
Beside it, for every ``n2`` and seed, the two estimates of ``doubly_labelled.py`` (recomputed
here on the same draws): ``ce2_score`` on the ``n2`` doubly-labelled rows only, and the hybrid
whose ``eta1`` sees only the first label of every row.

Reported per ``n2``: ``|CE2_hat - CE2|`` (mean and Student-t 90% interval over seeds) for the
three estimates.

Usage (from the repository root)::

    nice python -m benchmarks.mixed_labels --n-jobs 2     # full run (N = 20000, 10 seeds)
    python -m benchmarks.mixed_labels --quick              # smoke run

Writes ``mixed_labels.json`` and ``mixed_labels.png`` (``mixed_labels_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness
from benchmarks._mixture_problem import (
    MixtureProblem,
    SechGroundTruth,
    ensemble_scores,
    qmc_fields,
    small_data_ensemble,
)
from benchmarks.doubly_labelled import ALPHA, H, plot_error_curves
from benchmarks.doubly_labelled import one_seed as doubly_labelled_seed

ESTIMATES = ("mixed", "doubly_only", "hybrid")


def one_seed(seed, members, problem, n_total, n2_grid):
    from skcal import SechPerturber, VoteCounts, ce2_details

    reference = doubly_labelled_seed(seed, members, problem, n_total, n2_grid)
    # the same draws as doubly_labelled.one_seed (its generator, in its order)
    rng = np.random.default_rng(seed)
    X = problem.sample(n_total, rng)
    S = SechPerturber(bandwidth=H, random_state=seed).fit_transform(ensemble_scores(members, X))
    Y = problem.labels(X, rng, k=2)
    rows = []
    for n2, ref in zip(n2_grid, reference["rows"], strict=True):
        total = np.where(np.arange(n_total) < n2, 2, 1)
        positive = Y[:, 0] + np.where(total == 2, Y[:, 1], 0.0)
        res = ce2_details(VoteCounts(positive, total), S, alpha=ALPHA, bandwidth=H)
        rows.append(
            {
                "n2": int(n2),
                "mixed": res.ce2,
                "mixed_eta1_degree": res.degree,
                "mixed_eta2_degree": res.extra.get("eta2_degree", res.degree),
                "doubly_only": ref["doubly_only"],
                "hybrid": ref["hybrid"],
            }
        )
    return {"seed": seed, "rows": rows}


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over seeds", seed=True
    )
    parser.add_argument("--seeds", type=int, default=None, help="override the number of seeds")
    args = harness.parse_args(parser, argv)
    quick = args.quick
    clock = harness.Timer()
    n_seeds = args.seeds or (2 if quick else 10)
    n_total = 4000 if quick else 20000
    n2_grid = [100, 300, 1000, 4000] if quick else [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
    sobol_log2 = 11 if quick else 15
    grid_shape = (257, 65) if quick else (1025, 257)
    tag = "mixed_labels_quick" if quick else "mixed_labels"
    config = {
        "bandwidth": H,
        "alpha": ALPHA,
        "n_total": n_total,
        "n2_grid": n2_grid,
        "n_seeds": n_seeds,
        "seed": args.seed,
        "grid": grid_shape,
        "sobol_points_per_replicate": 10 * 2**sobol_log2,
        "ensemble": "20 MLPs 4-64-64-1, 60 epochs on the same 24 samples (experiment 6.2)",
        "estimate": "skcal.ce2_details(VoteCounts(positive, total), scores): total 2 on the first n2 "
        "rows, 1 on the others",
    }
    problem = MixtureProblem(seed=args.seed)
    members = small_data_ensemble(problem, args.seed, n_jobs=args.n_jobs)
    grid = SechGroundTruth(H, *grid_shape)
    reps = qmc_fields(grid, problem, members, sobol_log2, seed=10_000)
    truth = grid.ce2(0.5 * (reps[0] + reps[1]))
    res = Parallel(n_jobs=args.n_jobs)(
        delayed(one_seed)(args.seed * 1000 + s, members, problem, n_total, n2_grid) for s in range(n_seeds)
    )
    summary = {}
    for est in ESTIMATES:
        err = np.array([[abs(r[est] - truth["ce2"]) for r in s["rows"]] for s in res])  # (seeds, n2)
        mean, half = harness.t_interval(err, level=0.90, axis=0)
        summary[est] = {
            "abs_error_mean": mean,
            "abs_error_t90_halfwidth": half,
            "estimate_mean": np.mean([[r[est] for r in s["rows"]] for s in res], axis=0),
        }
    d_mixed = np.array(
        [[abs(r["mixed"] - truth["ce2"]) - abs(r["hybrid"] - truth["ce2"]) for r in s["rows"]] for s in res]
    )
    mean, half = harness.t_interval(d_mixed, level=0.90, axis=0)
    summary["mixed_minus_hybrid_abs_error"] = {"mean": mean, "t90_halfwidth": half}
    config["n_jobs"] = args.n_jobs
    payload = {
        "experiment": "CE2 of mixed single and double labels (the rule of ce2_score), SPEC 6.2 problem",
        "ground_truth": {"ce2": truth["ce2"], "term1": truth["term1"], "term2": truth["term2"]},
        "n2": n2_grid,
        "summary": summary,
        "per_seed": res,
    }
    harness.write_result(__file__, argv, args.out / f"{tag}.json", payload, config=config, clock=clock)
    plot(payload, config, args.out / f"{tag}.png")
    print(f"{tag}: {n_seeds} seeds, N = {n_total}, true CE2 {truth['ce2']:.4f}, {clock.elapsed():.1f}s")
    for est in ESTIMATES:
        s = summary[est]
        errs = " ".join(
            f"{n2}:{e:.4f}+-{h:.4f}"
            for n2, e, h in zip(n2_grid, s["abs_error_mean"], s["abs_error_t90_halfwidth"], strict=True)
        )
        print(f"  {est:12s} |error| by n2  {errs}")
    return payload


def plot(payload, cfg, path):
    labels = {
        "mixed": "ce2_score on the mixed counts (eta1: all rows, eta2: pairs)",
        "doubly_only": "ce2_score on the doubly-labelled rows only",
        "hybrid": "hybrid of doubly_labelled.py (eta1 from the first label of every row)",
    }
    title = (
        f"Mixed labels, N = {cfg['n_total']} rows, {cfg['n_seeds']} seeds; true CE2 = "
        f"{payload['ground_truth']['ce2']:.3f}"
    )
    plot_error_curves(payload, labels, title, path, legend_fontsize=7)


if __name__ == "__main__":
    main()
