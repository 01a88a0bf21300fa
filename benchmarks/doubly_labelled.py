"""How few doubly-labelled rows does CE2 need? Error of CE2 against their number (experiment 6.2 problem).

Problem and predictor: those of ``benchmarks/recalibration.py`` (experiment 6.2): the Gaussian-mixture
task of experiment 6.1, a 20-member MLP ensemble trained 60 epochs on the same 24 samples, its scores
``(m, sigma2)`` sech-perturbed with ``h = 1/64``. The ground-truth CE2 of the perturbed predictor
comes from the same grid machinery (``benchmarks/_mixture_problem.py``: a scrambled Sobol
sample of ``(1, f*, f*^2)`` deposited on the grid and sech-smoothed; two replicates averaged).

Labels: ``N`` calibration rows, every row with one label, and the first ``n2`` of them (a random
subset, since rows are i.i.d.) with a second, independent label. For every ``n2`` in the grid and
every seed, two estimates of CE2:

* **doubly-labelled rows only**: ``skcal.ce2_score`` on the ``n2`` rows with two labels (the
  library default: ``degree="auto"``, ``alpha=1e-6``). This is what ``ce2_score`` can do when the
  singly-labelled rows are thrown away.
* **hybrid**: ``eta1_hat`` from *all* ``N`` rows (one label each: ``t1 = y``, a first-order
  regression on ``(m, sigma2)``: ``SecondOrderPlattCalibrator(order=1)`` with the auto degree for
  ``N`` rows and ``alpha=1e-6``, raw polynomial clipped to [0, 1]), ``eta2_hat`` from the ``n2``
  doubly-labelled rows (``ce2_details(...).eta2``, clipped to [0, 1]), and both averages
  ``mean |eta1_hat - m|`` and ``mean |eta2_hat - (m^2 + sigma2)|`` taken over all ``N`` rows.
  Only ``eta2`` needs pairs of labels; ``eta1`` and every first-order measure use single labels.

Reported per ``n2``: ``|CE2_hat - CE2|`` (mean and Student-t 90% interval over seeds) for both
estimates, and the smallest ``n2`` whose mean error is within a factor 2 of the error with every
row doubly labelled (``n2 = N``).

Usage (from the repository root)::

    nice python -m benchmarks.doubly_labelled            # full run (N = 20000, 10 seeds)
    nice python -m benchmarks.doubly_labelled --quick    # smoke run

Writes ``doubly_labelled.json`` and ``doubly_labelled.png`` (``doubly_labelled_quick.*`` with
``--quick``).
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

H = 1 / 64
ALPHA = 1e-6


def one_seed(seed, members, problem, n_total, n2_grid):
    from skcal import SechPerturber, SecondOrderPlattCalibrator, Snapshots, ce2_details
    from skcal.chebyshev import auto_degree

    rng = np.random.default_rng(seed)
    X = problem.sample(n_total, rng)
    S = SechPerturber(bandwidth=H, random_state=seed).fit_transform(ensemble_scores(members, X))
    Y = problem.labels(X, rng, k=2)  # second label used on the first n2 rows only
    m, v = S[:, 0], S[:, 0] ** 2 + S[:, 1]
    deg1 = auto_degree(n_total, H, "tensor")
    first = SecondOrderPlattCalibrator(degree=deg1, alpha=ALPHA, order=1).fit(S, Y[:, 0])
    eta1_all = np.clip(first.predict_moments(S, project=False)[:, 0], 0.0, 1.0)
    term1_all = float(np.mean(np.abs(eta1_all - m)))
    rows = []
    for n2 in n2_grid:
        res = ce2_details(Snapshots(Y[:n2]), S[:n2], alpha=ALPHA, bandwidth=H)
        term2_all = float(np.mean(np.abs(res.eta2(S) - v)))
        rows.append(
            {
                "n2": int(n2),
                "doubly_only": res.ce2,
                "doubly_only_degree": res.degree,
                "hybrid": term1_all + term2_all,
                "hybrid_term1": term1_all,
                "hybrid_term2": term2_all,
            }
        )
    return {"seed": seed, "eta1_degree": deg1, "rows": rows}


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over seeds", seed=True
    )
    parser.add_argument("--seeds", type=int, default=None, help="override the number of seeds")
    args = harness.parse_args(parser, argv)
    quick = args.quick
    clock = harness.Timer()
    n_seeds = args.seeds or (3 if quick else 10)
    n_total = 4000 if quick else 20000
    n2_grid = [100, 300, 1000, 4000] if quick else [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
    sobol_log2 = 11 if quick else 15
    grid_shape = (257, 65) if quick else (1025, 257)
    tag = "doubly_labelled_quick" if quick else "doubly_labelled"
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
    }

    problem = MixtureProblem(seed=args.seed)
    with harness.Timer() as t_train:
        members = small_data_ensemble(problem, args.seed, n_jobs=args.n_jobs)
    with harness.Timer() as t_truth:
        grid = SechGroundTruth(H, *grid_shape)
        reps = qmc_fields(grid, problem, members, sobol_log2, seed=10_000)
        ce2_reps = [grid.ce2(N)["ce2"] for N in reps]
        truth = grid.ce2(0.5 * (reps[0] + reps[1]))
    with harness.Timer() as t_seeds:
        res = Parallel(n_jobs=args.n_jobs)(
            delayed(one_seed)(args.seed * 1000 + s, members, problem, n_total, n2_grid)
            for s in range(n_seeds)
        )

    summary = {}
    for est in ("doubly_only", "hybrid"):
        err = np.array([[abs(r[est] - truth["ce2"]) for r in s["rows"]] for s in res])  # (seeds, n2)
        mean, half = harness.t_interval(err, level=0.90, axis=0)
        ref = mean[-1]  # every row doubly labelled
        enough = [n2 for n2, e in zip(n2_grid, mean, strict=True) if e <= 2 * ref]
        summary[est] = {
            "abs_error_mean": mean,
            "abs_error_t90_halfwidth": half,
            "estimate_mean": np.mean([[r[est] for r in s["rows"]] for s in res], axis=0),
            "smallest_n2_within_2x_of_all_doubly": min(enough) if enough else None,
        }
    config["n_jobs"] = args.n_jobs
    payload = {
        "experiment": "CE2 error against the number of doubly-labelled rows (SPEC 6.2 problem)",
        "wall_seconds": {
            "train_ensemble": t_train.seconds,
            "ground_truth": t_truth.seconds,
            "seeds": t_seeds.seconds,
        },
        "ground_truth": {
            "ce2": truth["ce2"],
            "term1": truth["term1"],
            "term2": truth["term2"],
            "ce2_replicates": ce2_reps,
            "replicate_abs_diff": abs(ce2_reps[0] - ce2_reps[1]),
        },
        "n2": n2_grid,
        "summary": summary,
        "per_seed": res,
    }
    harness.write_result(__file__, argv, args.out / f"{tag}.json", payload, config=config, clock=clock)
    plot(payload, config, args.out / f"{tag}.png")
    print(f"{tag}: {n_seeds} seeds, N = {n_total}, true CE2 {truth['ce2']:.4f}, {clock.elapsed():.1f}s")
    for est, s in summary.items():
        errs = " ".join(f"{n2}:{e:.4f}" for n2, e in zip(n2_grid, s["abs_error_mean"], strict=True))
        print(
            f"  {est:12s} |error| by n2  {errs}  "
            f"(within 2x from n2 = {s['smallest_n2_within_2x_of_all_doubly']})"
        )
    return payload


def plot_error_curves(payload, labels, title, path, *, legend_fontsize=8):
    """|CE2_hat - CE2| against n2 (log-log, mean with its 90% t-interval) for each estimate in ``labels``."""
    n2 = np.asarray(payload["n2"])
    fig, ax = harness.subplots(figsize=(6.4, 4.4))
    for est, lab in labels.items():
        s = payload["summary"][est]
        mean, half = np.asarray(s["abs_error_mean"]), np.asarray(s["abs_error_t90_halfwidth"])
        ax.errorbar(n2, mean, yerr=half, marker="o", capsize=3, label=lab)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of doubly-labelled rows n2")
    ax.set_ylabel("|CE2_hat - CE2| (mean, 90% t-interval)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=legend_fontsize)
    harness.save_figure(fig, path)


def plot(payload, cfg, path):
    labels = {
        "doubly_only": "ce2_score on the doubly-labelled rows only",
        "hybrid": "hybrid: eta1 from all N single labels, eta2 from the n2 pairs",
    }
    title = (
        f"Experiment 6.2 problem, N = {cfg['n_total']} rows, {cfg['n_seeds']} seeds; true CE2 = "
        f"{payload['ground_truth']['ce2']:.3f}"
    )
    plot_error_curves(payload, labels, title, path)


if __name__ == "__main__":
    main()
