"""Experiment 6.1: the rate of CE2 estimation, polynomial estimator against bucketing and Nadaraya-Watson.

Problem (``benchmarks/_mixture_problem.py``): X in R^4 from a 10-component isotropic Gaussian
mixture, ``f*(x) = sigmoid(w . x)``. Predictor: 5 MLPs 4-64-64-1 (ReLU, Adam 1e-3, 30 epochs,
batch 256) trained once on 5,000 fresh samples; score ``(m, sigma2)`` = mean and unbiased variance
clipped to the feasible region (``skcal.EnsembleMoments``), sech-perturbed with
``skcal.SechPerturber`` at bandwidth ``h``.

Ground truth (per ``h``): the QMC grid integral of ``SechGroundTruth`` (component-stratified
scrambled Sobol, ``2^15`` points per component, cloud-in-cell deposit on 1025 x 257 nodes, exact
sech convolution, trapezoid rule); two replicates with different scrambles, their mean is the
truth and their difference is reported.

Estimation, per seed: 50,000-sample ``train``, ``hyper`` and ``valid`` splits (fresh inputs, two
label snapshots each, perturbed scores), and for each ``n`` the first ``n`` rows of each split
(nested prefixes). Every estimator gets the same data: it is fitted (and tuned) on
``train[:n] + hyper[:n]`` and its fitted calibration functions are plugged in on ``valid[:n]``,
``CE2_hat = mean |eta1_hat(S) - m| + mean |eta2_hat(S) - (m^2 + sigma2)|`` over ``valid[:n]``
(an out-of-sample plug-in, which keeps the fit's overfitting out of the average):

* ``poly_heldout``: ``skcal.ce2_details(cv=PredefinedSplit)``: candidates (by default the paper's
  degree schedule, halving from the cap down to the floor 4 included: 44, 22, 11, 5, 4 or
  88, 44, 22, 11, 5, 4; ``--degree-schedule skcal`` drops the floor: 44, 22, 11, 5; degrees with
  fewer than 10 training samples per basis function are skipped; ``alpha`` in ``1e-6 .. 1``)
  fitted on ``train[:n]``, scored on ``hyper[:n]`` by the squared error of both moment
  regressions, the best refitted on both;
* ``poly_cv_valid`` (the paper's CV-tuned variant): the same candidates chosen by shuffled K-fold
  CV (K = 5) on ``valid[:n]``, fitted and estimated on ``valid[:n]`` (in-sample plug-in);
* ``poly_cv``: the same candidates chosen by K-fold CV on ``train[:n] + hyper[:n]``, plugged in
  on ``valid[:n]``;
* ``poly_auto``: ``skcal.ce2_details`` with its defaults (``degree="auto"``: the degree rule of
  ``skcal.chebyshev.auto_degree``, ``alpha = 1e-6``, no ``cv``), fitted on ``train[:n] + hyper[:n]``:
  what ``ce2_score`` gives a user who sets nothing (run when named: ``--estimators poly_auto``);
* ``bucketing`` and ``nadaraya_watson``: ``skcal.ce2_details(method=...)`` (the paper's baseline
  estimators, the constant ``c`` chosen on a held-out part of the data they are given).

Reported: ``|CE2_hat - CE2|`` per seed, its mean with a Student-t 90% interval over seeds, and
the log-log slope (least squares of log mean error on log n).

Usage (from the repository root)::

    python -m benchmarks.rate                  # full protocol (20 seeds, 7 n, h = 1/16 and 1/64)
    python -m benchmarks.rate --quick          # smoke run
    python -m benchmarks.rate --bandwidths 16 --seeds 5 --n-grid 500,1000   # a cut run

Writes ``rate.json`` and ``rate.png`` (``rate_quick.*`` with ``--quick``; ``--tag`` names them)
after every finished seed, so a long run can be cut anywhere.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness
from benchmarks._mixture_problem import (
    MixtureProblem,
    SechGroundTruth,
    ensemble_scores,
    qmc_fields,
    train_mlp_ensemble,
)

FULL_N = [500, 1000, 2000, 5000, 10000, 20000, 50000]
ESTIMATORS = ["poly_heldout", "poly_cv_valid", "poly_cv", "bucketing", "nadaraya_watson"]
#: Estimators run only when named in ``--estimators`` (the default list, and so the stored quick
#: results, stay as they were).
EXTRA_ESTIMATORS = ["poly_auto"]
#: Training samples per basis function below which a schedule degree is skipped (as
#: ``skcal.ce2`` does for ``degree="auto"`` with ``cv``): a degree-88 tensor fit has 7,921 features
#: and costs about two minutes per candidate; selection never chose such a degree at these n.
SAMPLES_PER_FEATURE = 10


def paper_degree_schedule(cap, floor=4):
    """The paper's schedule: halve from the cap and end at the floor (44, 22, 11, 5, 4).

    skcal's library schedule (``skcal.chebyshev.degree_schedule``) stops at the last halving that
    is still >= 4 (44, 22, 11, 5); the paper goes "down to a floor of 4", so the floor itself is
    a candidate. Selection lands on the lowest degree in almost every fit, so the floor decides
    the measured slope.
    """
    out = [int(cap)]
    while out[-1] // 2 > floor:
        out.append(out[-1] // 2)
    if out[-1] != floor:
        out.append(int(floor))
    return out


def candidate_degrees(h, n_train, cfg):
    """The degree candidates of one fit: the configured schedule, guarded by the sample size."""
    from skcal.chebyshev import degree_cap, degree_schedule, n_basis_functions

    if cfg["degree"] != "auto":
        return list(cfg["degree"])
    cap = degree_cap(h, "tensor")
    if cfg["degree_schedule"] == "paper":
        sched = paper_degree_schedule(cap, cfg["degree_floor"])
    else:
        sched = degree_schedule(cap, cfg["degree_floor"])
    fit = [d for d in sched if n_basis_functions(d, "tensor") * SAMPLES_PER_FEATURE <= n_train]
    return fit or [sched[-1]]


def plug_in(res, S):
    """Out-of-sample plug-in of fitted calibration functions on scores ``S``."""
    e1, e2 = res.eta1(S), res.eta2(S)
    t1 = float(np.mean(np.abs(e1 - S[:, 0])))
    t2 = float(np.mean(np.abs(e2 - (S[:, 0] ** 2 + S[:, 1]))))
    return t1 + t2, t1, t2


def estimate(name, Y_fit, S_fit, n_train, S_valid, h, seed, cfg, Y_valid=None):
    from sklearn.model_selection import PredefinedSplit

    from skcal import ce2_details

    t0 = time.perf_counter()
    if name == "poly_heldout":
        fold = np.r_[np.full(n_train, -1), np.zeros(S_fit.shape[0] - n_train, dtype=int)]
        degrees = candidate_degrees(h, n_train, cfg)
        res = ce2_details(
            Y_fit, S_fit, bandwidth=h, degree=degrees, alphas=cfg["alphas"], cv=PredefinedSplit(fold)
        )
    elif name in ("poly_cv", "poly_cv_valid"):
        # poly_cv: K-fold CV on train + hyper, plug-in on valid; poly_cv_valid (the paper's
        # protocol): K-fold CV on the validation split, the estimate on that split
        Y_cv, S_cv = (Y_fit, S_fit) if name == "poly_cv" else (Y_valid, S_valid)
        n_cv = S_cv.shape[0]
        res = ce2_details(
            Y_cv,
            S_cv,
            bandwidth=h,
            degree=candidate_degrees(h, n_cv - n_cv // cfg["folds"], cfg),
            alphas=cfg["alphas"],
            cv=cfg["folds"],
            random_state=seed,
        )
    elif name == "poly_auto":  # ce2_score's default: degree="auto", alpha = 1e-6, no cv
        res = ce2_details(Y_fit, S_fit, bandwidth=h)
    else:
        res = ce2_details(Y_fit, S_fit, bandwidth=h, method=name, random_state=seed)
    info = {"seconds": time.perf_counter() - t0, "in_sample_ce2": res.ce2}
    if name == "poly_cv_valid":
        # fitted and estimated on valid itself: its "valid" estimate is its in-sample one
        info["ce2"] = res.ce2
    elif res.method == "polynomial":
        # the polynomial fits are functions: also plug them in on the held-out valid split
        info["ce2"], info["term1"], info["term2"] = plug_in(res, S_valid)
    else:
        # the baselines return their fits at the fit scores only: in-sample plug-in
        info["ce2"] = None
    if res.degree is not None:
        info.update(degree=res.degree, alpha=res.alpha)
    if res.c is not None:
        info["c"] = res.c
    return info


def one_seed(seed, members, problem, bandwidths, n_grid, n_split, estimators, cfg, truths):
    from skcal import SechPerturber, Snapshots

    rng = np.random.default_rng(seed)
    X = problem.sample(3 * n_split, rng)
    S = ensemble_scores(members, X)
    Y = Snapshots(problem.labels(X, rng, k=2))  # two votes a row, said (not counts)
    tr = np.arange(0, n_split)
    hy = np.arange(n_split, 2 * n_split)
    va = np.arange(2 * n_split, 3 * n_split)
    rows = []
    for h in bandwidths:
        Sp = SechPerturber(bandwidth=h, random_state=seed).fit_transform(S)
        for n in n_grid:
            fit_idx = np.r_[tr[:n], hy[:n]]
            for name in estimators:
                info = estimate(name, Y[fit_idx], Sp[fit_idx], n, Sp[va[:n]], h, seed, cfg, Y[va[:n]])
                info.update(
                    seed=seed,
                    h=h,
                    n=n,
                    estimator=name,
                    error_in_sample=abs(info["in_sample_ce2"] - truths[h]),
                    error_valid=None if info["ce2"] is None else abs(info["ce2"] - truths[h]),
                )
                rows.append(info)
                print(
                    f"[rate] seed {seed} h 1/{round(1 / h)} n {n} {name}: "
                    f"error {info['error_in_sample']:.5f} "
                    f"({info['seconds']:.1f}s)",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def combine(paths, out_dir, tag, argv=None):
    """Merge the rows of several runs (same seeds and ground truth) into one table and figure."""
    runs = [json.loads(open(p).read()) for p in paths]
    truth = {}
    for r in runs:
        for key, d in r["ground_truth"].items():
            if key in truth and abs(truth[key] - d["ce2"]) > 1e-12:
                raise ValueError(f"runs disagree on the ground truth at h={key}: {truth[key]} vs {d['ce2']}")
            truth[key] = d["ce2"]
    rows = [row for r in runs for row in r["rows"]]
    truths = {row["h"]: truth[f"1/{round(1 / row['h'])}"] for row in rows}
    bandwidths = sorted({row["h"] for row in rows}, reverse=True)
    estimators = [e for e in ESTIMATORS + EXTRA_ESTIMATORS if any(row["estimator"] == e for row in rows)]
    n_grid = sorted({row["n"] for row in rows})
    payload = {
        "experiment": "SPEC 6.1 rate (combined runs)",
        "combined_from": [os.path.basename(p) for p in paths],
        "commands": [r["command"] for r in runs],
        "ground_truth": {k: v for r in runs for k, v in r["ground_truth"].items()},
        "summary": summarize(rows, bandwidths, estimators, n_grid, truths),
        "seconds": {os.path.basename(p): r["seconds"] for p, r in zip(paths, runs, strict=True)},
    }
    config = {"combine": list(paths)}
    harness.write_result(__file__, argv, out_dir / f"{tag}.json", payload, config=config, wall_time_s=0.0)
    plot(payload, out_dir / f"{tag}.png")
    return payload


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over seeds", seed=True
    )
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default 20; quick 2)")
    parser.add_argument(
        "--n-grid", default=None, help="comma-separated n values (default 500 to 50000; quick 500,1000)"
    )
    parser.add_argument(
        "--bandwidths", default=None, help="comma-separated inverse bandwidths, e.g. '16,64' (the default)"
    )
    parser.add_argument("--estimators", default=",".join(ESTIMATORS), help="comma-separated subset")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="index of the first seed (to split a run over processes)"
    )
    parser.add_argument("--folds", type=int, default=5, help="K of the CV-tuned polynomial estimators")
    parser.add_argument(
        "--degree-schedule",
        choices=("paper", "skcal"),
        default="paper",
        help="paper: halve from the cap down to the floor, floor included (44, 22, 11, 5, 4); "
        "skcal: skcal.chebyshev.degree_schedule (44, 22, 11, 5)",
    )
    parser.add_argument("--degree-floor", type=int, default=4, help="lowest degree of the schedule")
    parser.add_argument("--tag", default=None, help="output file stem (default rate / rate_quick)")
    parser.add_argument(
        "--combine", default=None, help="comma-separated result JSONs of earlier runs to merge (no new run)"
    )
    args = harness.parse_args(parser, argv)
    if args.combine:
        return combine(args.combine.split(","), args.out, args.tag or "rate", argv)
    quick = args.quick
    n_seeds = args.seeds or (2 if quick else 20)
    n_grid = (
        [int(float(x)) for x in args.n_grid.split(",")] if args.n_grid else ([500, 1000] if quick else FULL_N)
    )
    inv_h = [int(x) for x in args.bandwidths.split(",")] if args.bandwidths else [16, 64]
    bandwidths = [1.0 / k for k in inv_h]
    estimators = args.estimators.split(",")
    n_split = max(n_grid) if quick else 50_000
    if max(n_grid) > n_split:
        raise ValueError(f"n values must not exceed the split size {n_split}")
    cfg = {
        "degree": [8, 4] if quick else "auto",
        "degree_schedule": args.degree_schedule,
        "degree_floor": args.degree_floor,
        "samples_per_feature_guard": SAMPLES_PER_FEATURE,
        "alphas": [1e-6, 1e-3, 1.0] if quick else None,
        "folds": 3 if quick else args.folds,
    }
    sobol_log2 = 10 if quick else 15
    grid_shape = (257, 65) if quick else (1025, 257)
    tag = args.tag or ("rate_quick" if quick else "rate")

    clock = harness.Timer()
    problem = MixtureProblem(seed=args.seed)
    with harness.Timer() as t_total:
        rng = np.random.default_rng(args.seed + 1)
        n_train_ens, epochs = (2000, 10) if quick else (5000, 30)
        Xe = problem.sample(n_train_ens, rng)
        ye = problem.labels(Xe, rng)[:, 0]
        with harness.Timer() as t_train:
            members = train_mlp_ensemble(Xe, ye, n_members=5, epochs=epochs, seed=2000, n_jobs=args.n_jobs)
        truth_info = {}
        truths = {}
        with harness.Timer() as t_truth:
            for h in bandwidths:
                grid = SechGroundTruth(h, *grid_shape)
                fields = qmc_fields(grid, problem, members, sobol_log2, seed=20_000)
                reps = [grid.ce2(N) for N in fields]
                truths[h] = 0.5 * (reps[0]["ce2"] + reps[1]["ce2"])
                truth_info[f"1/{round(1 / h)}"] = {
                    "replicates": reps,
                    "ce2": truths[h],
                    "replicate_abs_diff": abs(reps[0]["ce2"] - reps[1]["ce2"]),
                }
        t_est = time.perf_counter()
        jobs = Parallel(n_jobs=args.n_jobs, return_as="generator")(
            delayed(one_seed)(
                args.seed * 1000 + s, members, problem, bandwidths, n_grid, n_split, estimators, cfg, truths
            )
            for s in range(args.first_seed, args.first_seed + n_seeds)
        )
        rows = []
        done = 0
        for seed_rows in jobs:
            # write the results after every finished seed, so a long run can be cut anywhere
            rows.extend(seed_rows)
            done += 1
            payload = build_payload(
                args,
                argv,
                done,
                n_seeds,
                n_grid,
                n_split,
                bandwidths,
                estimators,
                cfg,
                truth_info,
                grid_shape,
                problem.n_components * 2**sobol_log2,
                rows,
                {
                    "total": t_total.elapsed(),
                    "train_ensemble": t_train.seconds,
                    "ground_truth": t_truth.seconds,
                    "estimation": time.perf_counter() - t_est,
                },
            )
            config = {**cfg, "seeds": n_seeds, "first_seed": args.first_seed, "seed": args.seed}
            config.update(n_grid=n_grid, bandwidths=bandwidths, estimators=estimators, n_jobs=args.n_jobs)
            path = args.out / f"{tag}.json"
            harness.write_result(__file__, argv, path, payload, config=config, clock=clock)
            plot(payload, args.out / f"{tag}.png")
            print(f"[rate] {done}/{n_seeds} seeds written to {tag}.json", file=sys.stderr, flush=True)
    print(f"{tag}: {n_seeds} seeds in {t_total.seconds:.1f}s")
    for key, d in truth_info.items():
        print(f"  h={key}: CE2 {d['ce2']:.6f}, replicate diff {d['replicate_abs_diff']:.2e}")
    for key, s in payload["summary"]["in_sample"].items():
        for name, v in s.items():
            print(
                f"  h={key} {name:16s} slope {v['loglog_slope']}  errors {np.round(v['mean_abs_error'], 5)}"
            )
    return payload


def _row_error(row, mode, truths):
    """|CE2_hat - CE2| of a row: ``mode`` "in_sample" (all estimators) or "valid" (polynomial only)."""
    if mode == "in_sample":
        return abs(row["in_sample_ce2"] - truths[row["h"]])
    ce2 = row.get("ce2")
    return None if ce2 is None else abs(ce2 - truths[row["h"]])


def summarize(rows, bandwidths, estimators, n_grid, truths):
    """Mean |error| with 90% t-intervals and log-log slopes per plug-in mode, bandwidth and estimator.

    ``in_sample``: the estimate is the plug-in average over the fit samples (how ``ce2_score``
    and ``baseline_ce2`` define it), available for all estimators. ``valid``: the polynomial
    fits plugged in on the held-out ``valid[:n]`` split.
    """
    summary = {}
    for mode in ("in_sample", "valid"):
        summary[mode] = {}
        for h in bandwidths:
            key = f"1/{round(1 / h)}"
            summary[mode][key] = {}
            for name in estimators:
                mine = [r for r in rows if r["h"] == h and r["estimator"] == name]
                ns = [n for n in n_grid if any(r["n"] == n for r in mine)]
                err = [[_row_error(r, mode, truths) for r in mine if r["n"] == n] for n in ns]
                if not err or err[0][0] is None:
                    continue
                k = min(len(e) for e in err)  # seeds completed at every n
                err = np.array([e[:k] for e in err], dtype=float)  # (n values, seeds)
                mean, half = harness.t_interval(err, level=0.90, axis=1)
                slope = float(np.polyfit(np.log(ns), np.log(mean), 1)[0]) if len(ns) > 1 else None
                secs = [r["seconds"] for r in rows if r["h"] == h and r["estimator"] == name]
                summary[mode][key][name] = {
                    "n": ns,
                    "seeds": err.shape[1],
                    "mean_abs_error": mean,
                    "t90_halfwidth": half,
                    "loglog_slope": slope,
                    "mean_seconds_per_fit": float(np.mean(secs)),
                }
    return summary


def build_payload(
    args,
    argv,
    done,
    n_seeds,
    n_grid,
    n_split,
    bandwidths,
    estimators,
    cfg,
    truth_info,
    grid_shape,
    n_sobol,
    rows,
    seconds,
):
    truths = {h: truth_info[f"1/{round(1 / h)}"]["ce2"] for h in bandwidths}
    summary = summarize(rows, bandwidths, estimators, n_grid, truths)
    return {
        "experiment": "SPEC 6.1 rate",
        "command": harness.command_line(__file__, argv),
        "seeds": done,
        "seeds_requested": n_seeds,
        "n_grid": n_grid,
        "split_size": n_split,
        "bandwidths": bandwidths,
        "estimators": estimators,
        "config": cfg,
        "ground_truth": truth_info,
        "grid": grid_shape,
        "sobol_points_per_replicate": n_sobol,
        "summary": summary,
        "rows": rows,
        "seconds": seconds,
        "n_jobs": args.n_jobs,
    }


def plot(payload, path):
    summ = payload["summary"]
    keys = list(summ["in_sample"])
    fig, axes = harness.subplots(1, len(keys), figsize=(6.0 * len(keys), 4.8), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        curves = [(name, "in-sample", "o-", v) for name, v in summ["in_sample"][key].items()]
        curves += [(name, "on valid", "s--", v) for name, v in summ["valid"].get(key, {}).items()]
        for name, mode, style, v in curves:
            n = np.asarray(v["n"], float)
            mean = np.asarray(v["mean_abs_error"])
            half = np.asarray(v["t90_halfwidth"])
            slope = v["loglog_slope"]
            slope_txt = f"slope {slope:.2f}, " if slope is not None else ""
            label = f"{name} {mode} ({slope_txt}{v.get('seeds', '?')} seeds)"
            # log axis: the lower band edge is clipped at mean / 10 (wide intervals of few seeds)
            lower = np.maximum(mean - half, mean / 10)
            harness.plot_band(ax, n, mean, lower, mean + half, style, label=label, ms=3, alpha=0.15)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (per split; the estimators fit on train + hyper = 2n)")
        ax.set_ylabel("|CE2_hat - CE2|")
        ax.set_title(f"h = {key}: mean |error|, 90% t-interval over seeds", fontsize=10)
        ax.legend(fontsize=7)
    harness.save_figure(fig, path)


if __name__ == "__main__":
    main()
