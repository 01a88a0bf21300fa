"""Experiment 6.2: second-order Platt scaling recalibrates a faint epistemic-variance signal.

Problem: the Gaussian-mixture task of experiment 6.1 (``benchmarks/_mixture_problem.py``). A
20-member ensemble of MLPs 4-64-64-1 (ReLU, Adam 1e-3, no weight decay) is trained for 60 epochs
on the *same* 24 samples (full batch, members differ only in their initialisation), so its
``sigma2`` carries only a faint signal about the true conditional variance of ``f*``. Its scores
``(m, sigma2)`` (``skcal.EnsembleMoments``) are perturbed by ``skcal.SechPerturber`` with
``h = 1/64``.

Ground truth: the perturbed-score fields ``N0, N1, N2`` on the 1025 x 257 grid (sech-smoothed
deposit of ``(1, f*, f*^2)``, ``SechGroundTruth``) give ``eta1 = N1 / N0``, ``eta2 = N2 / N0`` and
the true conditional variance ``var(f* | S') = eta2 - eta1^2`` at every grid node, interpolated
bilinearly at held-out perturbed scores; and the true CE2 of any predictor that is a function of
the perturbed score. Two QMC replicates (different scrambles) are averaged; their difference is
reported.

For each of 20 calibration seeds: draw ``2e4`` fresh inputs with two label snapshots each,
perturb, fit ``skcal.SecondOrderPlattCalibrator(degree=12, alpha=1e-12, basis="tensor")`` (169
features, ridge ``1e-12 trace(G) / 169``), then on a fresh held-out set of ``2e4`` inputs report the
Pearson correlation of the raw ``sigma2'`` and of the recalibrated ``sigma2`` with the true
conditional variance. CE2 before is the ground truth of the perturbed predictor (the same for
every seed: the ensemble is fixed); CE2 after is the ground truth of the recalibrated predictor
``T(S') = (eta1_hat, max(0, eta2_hat - eta1_hat^2))`` computed on the grid as
``E|eta1(S') - m_T(S')| + E|eta2(S') - v_T(S')|``. This equals CE2(T) when ``T`` is injective and is
an upper bound otherwise (conditioning on a coarser sigma-field can only lower it, by Jensen).

Usage (from the repository root)::

    python -m benchmarks.recalibration           # full protocol
    python -m benchmarks.recalibration --quick   # smoke run

Writes ``recalibration.json`` and ``recalibration.png`` (``recalibration_quick.*`` with ``--quick``).
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


def one_seed(seed, members, problem, grid, fields, var_true, h, n_cal, n_test, degree, alpha, keep_scatter):
    from skcal import SechPerturber, SecondOrderPlattCalibrator, Snapshots

    rng = np.random.default_rng(seed)
    X = problem.sample(n_cal + n_test, rng)
    S = ensemble_scores(members, X)
    Sp = SechPerturber(bandwidth=h, random_state=seed).fit_transform(S)
    Y = Snapshots(problem.labels(X, rng, k=2))  # two votes a row, said (not counts)
    cal, test = slice(0, n_cal), slice(n_cal, None)
    platt = SecondOrderPlattCalibrator(degree=degree, alpha=alpha, basis="tensor", order=2)
    platt.fit(Sp[cal], Y[cal])
    recal = platt.transform(Sp[test])
    truth = grid.interpolate(var_true, Sp[test, 0], Sp[test, 1])
    r_raw = float(np.corrcoef(Sp[test, 1], truth)[0, 1])
    r_recal = float(np.corrcoef(recal[:, 1], truth)[0, 1])
    # ground-truth CE2 of the recalibrated predictor on the grid
    nodes = np.column_stack([grid.TM.ravel(), grid.TS.ravel()])
    T = platt.transform(nodes)
    mT = T[:, 0].reshape(grid.TM.shape)
    vT = (T[:, 0] ** 2 + T[:, 1]).reshape(grid.TM.shape)
    after = grid.ce2(fields, mT, vT)
    out = {
        "seed": seed,
        "pearson_raw": r_raw,
        "pearson_recal": r_recal,
        "ce2_after": after["ce2"],
        "ce2_after_term1": after["term1"],
        "ce2_after_term2": after["term2"],
        "solver": platt.solver_,
    }
    if keep_scatter:
        k = min(3000, n_test)
        out["scatter"] = {"truth": truth[:k], "raw": Sp[test, 1][:k], "recal": recal[:k, 1]}
    return out


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over seeds", seed=True
    )
    parser.add_argument("--seeds", type=int, default=None, help="override the number of calibration seeds")
    args = harness.parse_args(parser, argv)
    quick = args.quick
    h = 1 / 64
    n_seeds = args.seeds or (2 if quick else 20)
    n_cal = 5000 if quick else 20000
    n_test = 5000 if quick else 20000
    sobol_log2 = 11 if quick else 15
    grid_shape = (257, 65) if quick else (1025, 257)
    tag = "recalibration_quick" if quick else "recalibration"

    clock = harness.Timer()
    problem = MixtureProblem(seed=args.seed)
    with harness.Timer() as t_total:
        with harness.Timer() as t_train:
            members = small_data_ensemble(problem, args.seed, n_jobs=args.n_jobs)
        with harness.Timer() as t_truth:
            grid = SechGroundTruth(h, *grid_shape)
            reps = qmc_fields(grid, problem, members, sobol_log2, seed=10_000)
            ce2_reps = [grid.ce2(N)["ce2"] for N in reps]
            fields = 0.5 * (reps[0] + reps[1])
            before = grid.ce2(fields)
            N0, N1, N2 = fields
            eta1 = N1 / N0
            var_true = N2 / N0 - eta1**2
        with harness.Timer() as t_seeds:
            res = Parallel(n_jobs=args.n_jobs)(
                delayed(one_seed)(
                    args.seed * 1000 + s,
                    members,
                    problem,
                    grid,
                    fields,
                    var_true,
                    h,
                    n_cal,
                    n_test,
                    12,
                    1e-12,
                    s == 0,
                )
                for s in range(n_seeds)
            )
    pr = np.array([r["pearson_raw"] for r in res])
    pc = np.array([r["pearson_recal"] for r in res])
    after = np.array([r["ce2_after"] for r in res])

    def ms(x):
        return {"mean": float(np.mean(x)), "std": float(np.std(x, ddof=1)) if len(x) > 1 else 0.0}

    payload = {
        "experiment": "SPEC 6.2 recalibration",
        "bandwidth": h,
        "n_seeds": n_seeds,
        "n_cal": n_cal,
        "n_test": n_test,
        "degree": 12,
        "alpha": 1e-12,
        "grid": grid_shape,
        "sobol_points_per_replicate": problem.n_components * 2**sobol_log2,
        "ground_truth": {
            "ce2_replicates": ce2_reps,
            "replicate_abs_diff": abs(ce2_reps[0] - ce2_reps[1]),
            "ce2_before": before,
            "true_var_range_at_nodes_with_mass": [
                float(np.percentile(var_true[N0 > 1e-3 * N0.max()], 1)),
                float(np.percentile(var_true[N0 > 1e-3 * N0.max()], 99)),
            ],
        },
        "pearson_raw": ms(pr),
        "pearson_recal": ms(pc),
        "ce2_before": {"mean": before["ce2"], "std": 0.0, "term1": before["term1"], "term2": before["term2"]},
        "ce2_after": ms(after),
        "ce2_after_terms": {
            "term1": ms([r["ce2_after_term1"] for r in res]),
            "term2": ms([r["ce2_after_term2"] for r in res]),
        },
        "per_seed": [{k: v for k, v in r.items() if k != "scatter"} for r in res],
        "seconds": {
            "total": t_total.seconds,
            "train_ensemble": t_train.seconds,
            "ground_truth": t_truth.seconds,
            "seeds": t_seeds.seconds,
        },
        "n_jobs": args.n_jobs,
    }
    config = {"quick": quick, "bandwidth": h, "n_seeds": n_seeds, "n_cal": n_cal, "n_test": n_test}
    config.update(
        degree=12, alpha=1e-12, grid=grid_shape, sobol_log2=sobol_log2, seed=args.seed, n_jobs=args.n_jobs
    )
    harness.write_result(__file__, argv, args.out / f"{tag}.json", payload, config=config, clock=clock)
    plot(res[0]["scatter"], payload, args.out / f"{tag}.png")
    print(f"{tag}: {n_seeds} seeds in {t_total.seconds:.1f}s")
    print(f"  ground truth CE2 replicates {ce2_reps} (diff {abs(ce2_reps[0] - ce2_reps[1]):.2e})")
    print(f"  Pearson raw   {pr.mean():.3f} +- {payload['pearson_raw']['std']:.3f}")
    print(f"  Pearson recal {pc.mean():.3f} +- {payload['pearson_recal']['std']:.3f}")
    print(f"  CE2 before {before['ce2']:.4f}; after {after.mean():.4f} +- {payload['ce2_after']['std']:.4f}")
    return payload


def plot(sc, payload, path):
    fig, axes = harness.subplots(1, 2, figsize=(9, 4.2), sharey=True)
    for ax, key, title in [
        (axes[0], "raw", "raw sigma2 (perturbed)"),
        (axes[1], "recal", "second-order Platt sigma2"),
    ]:
        x = np.asarray(sc[key])
        y = np.asarray(sc["truth"])
        ax.scatter(x, y, s=3, alpha=0.3)
        r = payload["pearson_" + key]["mean"]
        ax.set_title(f"{title}\nPearson (mean over seeds) {r:.3f}", fontsize=10)
        ax.set_xlabel("predicted sigma2")
    axes[0].set_ylabel("true Var(f* | perturbed score)")
    fig.suptitle(
        f"Experiment 6.2: CE2 before {payload['ce2_before']['mean']:.4f}, after "
        f"{payload['ce2_after']['mean']:.4f} +- {payload['ce2_after']['std']:.4f}",
        fontsize=10,
    )
    harness.save_figure(fig, path)


if __name__ == "__main__":
    main()
