"""Speed of the second-order Chebyshev engine against a dense design and a grid search, side by side.

1. ``stats_vs_dense``: tensor degree 44 at n = 5e4, the sufficient-statistics ridge fit
   (``skcal.chebyshev.ChebyshevRidge``) against a dense-design ridge that builds the n x d matrix
   ``Phi`` and forms ``Phi.T @ Phi``; both solve the same system with the same Cholesky code, and
   both run under the same BLAS thread limit. Reports both times, the speed-up and the relative
   difference of the estimates (coefficients and fitted values).
2. ``large_n``: tensor degree 44 at n = 1e6, fitting ``SecondOrderPlattCalibrator`` in a fresh
   subprocess that reports its wall time and its peak resident memory (``VmHWM``, which
   includes the interpreter, the libraries and the data).
3. ``grid_search``: ``GridSearchCV(Pipeline([SechPerturber, SecondOrderPlattCalibrator]))`` over
   5 degrees x 7 ridge values x 5 folds at n = 2e4 with ``--n-jobs`` workers, next to
   ``ce2_details(cv=5)`` selecting over the same grid from additive fold statistics.

The data: calibrated second-order scores with two snapshots (``second_order_snapshots`` of the
harness).

Usage (from the repository root)::

    python -m benchmarks.speed_second_order            # full run, writes benchmarks/results/
    python -m benchmarks.speed_second_order --quick    # small smoke run
    python -m benchmarks.speed_second_order --n-jobs 2 --out /tmp/x

Outputs ``speed_second_order.json`` and ``speed_second_order.png`` in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks import _harness as harness

FULL = {"dense_n": 50_000, "dense_degree": 44, "large_n": 1_000_000, "large_degree": 44, "grid_n": 20_000}
QUICK = {"dense_n": 3_000, "dense_degree": 10, "large_n": 20_000, "large_degree": 10, "grid_n": 1_500}
GRID_DEGREES_FULL = [5, 11, 22, 33, 44]
GRID_DEGREES_QUICK = [2, 3, 4, 5, 6]
GRID_ALPHAS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]


simulate = harness.second_order_snapshots


# ------------------------------------------------------------------------------- part 1
def bench_stats_vs_dense(n, degree, alpha=1e-6, threads=1):
    import scipy.linalg
    from threadpoolctl import threadpool_limits

    from skcal.chebyshev import ChebyshevRidge, chebyshev_design
    from skcal.votes import snapshot_targets

    S, Y = simulate(n, seed=1)
    t1, t2, _ = snapshot_targets(Y)
    T = np.column_stack([t1, t2])
    with threadpool_limits(limits=threads, user_api="blas"):
        import skcal._threads

        old = skcal._threads.BLAS_THREADS
        skcal._threads.BLAS_THREADS = threads  # skcal's own limit: the same count as the dense ridge
        try:
            t0 = time.perf_counter()
            model = ChebyshevRidge(degree, alpha, "tensor", dual=False).fit(S, T)
            t_stats = time.perf_counter() - t0

            t0 = time.perf_counter()
            Phi = chebyshev_design(S, degree, "tensor")
            G = Phi.T @ Phi
            b = Phi.T @ T
            lam = alpha * np.trace(G) / G.shape[0]
            G.flat[:: G.shape[0] + 1] += lam
            beta = scipy.linalg.cho_solve(scipy.linalg.cho_factor(G, lower=True), b)
            t_dense = time.perf_counter() - t0
            fitted_dense = Phi @ beta
            design_bytes = Phi.nbytes
            del Phi, G
        finally:
            skcal._threads.BLAS_THREADS = old
    fitted_stats = model.predict(S)
    coef_rel = float(np.linalg.norm(model.coef_ - beta) / np.linalg.norm(beta))
    fit_rel = float(np.abs(fitted_stats - fitted_dense).max() / np.abs(fitted_dense).max())
    return {
        "n": n,
        "degree": degree,
        "d": int(model.coef_.shape[0]),
        "alpha": alpha,
        "blas_threads": threads,
        "time_stats_s": t_stats,
        "time_dense_s": t_dense,
        "speedup": t_dense / t_stats,
        "coef_rel_diff": coef_rel,
        "fitted_rel_diff": fit_rel,
        "dense_design_MB": design_bytes / 2**20,
    }


# ------------------------------------------------------------------------------- part 2
def _child_large(n, degree):
    """Run in a fresh process: fit, report time and peak RSS."""
    from skcal import SecondOrderPlattCalibrator, Snapshots

    rss0 = harness.peak_rss_mib()
    S, Y = simulate(n, seed=2)
    rss_data = harness.peak_rss_mib()
    t0 = time.perf_counter()
    cal = SecondOrderPlattCalibrator(degree=degree, alpha=1e-6).fit(S, Snapshots(Y))
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = cal.transform(S)
    t_transform = time.perf_counter() - t0
    peak = harness.peak_rss_mib()
    return {
        "n": n,
        "degree": degree,
        "d": int(cal.coef_.shape[0]),
        "solver": cal.solver_,
        "time_fit_s": t_fit,
        "time_transform_s": t_transform,
        "peak_rss_MB": peak,
        "rss_after_imports_MB": rss0,
        "rss_after_data_MB": rss_data,
        "dense_design_would_need_GB": n * cal.coef_.shape[0] * 8 / 2**30,
        "finite_output": bool(np.isfinite(out).all()),
    }


def bench_large(n, degree):
    """``_child_large`` in a fresh interpreter (its peak memory is its own)."""
    out = harness.run_module(__file__, "--_child-large", n, degree)
    return json.loads(out.strip().splitlines()[-1])


# ------------------------------------------------------------------------------- part 3
def bench_grid(n, degrees, alphas, n_jobs):
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import Pipeline

    from skcal import SechPerturber, SecondOrderPlattCalibrator, Snapshots, ce2_details

    S, Y = simulate(n, seed=3)
    pipe = Pipeline([("sech", SechPerturber(random_state=0)), ("platt", SecondOrderPlattCalibrator())])
    grid = {"platt__degree": degrees, "platt__alpha": alphas}
    cv = KFold(5, shuffle=True, random_state=0)
    t0 = time.perf_counter()
    search = GridSearchCV(pipe, grid, cv=cv, n_jobs=n_jobs).fit(S, Snapshots(Y))
    t_grid = time.perf_counter() - t0

    Sp = SechPerturber(random_state=0).fit_transform(S)
    t0 = time.perf_counter()
    res = ce2_details(Snapshots(Y), Sp, degree=degrees, alphas=alphas, cv=cv)
    t_stats = time.perf_counter() - t0
    return {
        "n": n,
        "degrees": degrees,
        "alphas": alphas,
        "folds": 5,
        "n_fits": len(degrees) * len(alphas) * 5 + 1,
        "n_jobs": n_jobs,
        "time_gridsearch_s": t_grid,
        "best_params": {k: float(v) for k, v in search.best_params_.items()},
        "time_ce2_cv_from_statistics_s": t_stats,
        "ce2_cv_selected": {"degree": res.degree, "alpha": res.alpha},
    }


# ------------------------------------------------------------------------------- plot / main
def plot(results, path):
    fig, axes = harness.subplots(1, 3, figsize=(13, 4))
    a = results["stats_vs_dense"]
    axes[0].bar(
        ["sufficient\nstatistics", "dense\ndesign"],
        [a["time_stats_s"], a["time_dense_s"]],
        color=["C0", "C3"],
    )
    axes[0].set_ylabel("fit time (s)")
    axes[0].set_title(f"n={a['n']:.0e}, tensor degree {a['degree']} (d={a['d']}): {a['speedup']:.1f}x")
    b = results["large_n"]
    axes[1].bar(["fit (s)", "peak RSS (GB)"], [b["time_fit_s"], b["peak_rss_MB"] / 1024], color=["C0", "C2"])
    axes[1].axhline(10, color="C0", ls="--", lw=1)
    axes[1].axhline(1.5, color="C2", ls="--", lw=1)
    axes[1].set_title(f"n={b['n']:.0e}, degree {b['degree']} (targets: 10 s, 1.5 GB)")
    c = results["grid_search"]
    axes[2].bar(
        ["GridSearchCV\n(pipeline)", "ce2_details(cv=5)\n(fold statistics)"],
        [c["time_gridsearch_s"], c["time_ce2_cv_from_statistics_s"]],
        color=["C1", "C0"],
    )
    axes[2].axhline(60, color="C1", ls="--", lw=1)
    axes[2].set_ylabel("time (s)")
    axes[2].set_title(f"{len(c['degrees'])} degrees x {len(c['alphas'])} alphas x 5 folds, n={c['n']:.0e}")
    harness.save_figure(fig, path, dpi=110)


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="small sizes (CI smoke test)")
    parser.add_argument("--n-jobs", type=int, default=2, help="GridSearchCV workers (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for the stats-vs-dense part")
    parser.add_argument("--_child-large", nargs=2, type=int, help=argparse.SUPPRESS)
    args = harness.parse_args(parser, argv)
    if args._child_large:
        print(json.dumps(_child_large(*args._child_large)))
        return 0
    sizes = QUICK if args.quick else FULL
    degrees = GRID_DEGREES_QUICK if args.quick else GRID_DEGREES_FULL
    t_start = time.perf_counter()
    results = {
        "mode": "quick" if args.quick else "full",
        "load_average": {"before": harness.load_average()},
    }
    results["stats_vs_dense"] = bench_stats_vs_dense(
        sizes["dense_n"], sizes["dense_degree"], threads=args.threads
    )
    print("stats_vs_dense", json.dumps(results["stats_vs_dense"]), flush=True)
    results["large_n"] = bench_large(sizes["large_n"], sizes["large_degree"])
    print("large_n", json.dumps(results["large_n"]), flush=True)
    results["grid_search"] = bench_grid(sizes["grid_n"], degrees, GRID_ALPHAS, args.n_jobs)
    print("grid_search", json.dumps(results["grid_search"]), flush=True)
    results["load_average"]["after"] = harness.load_average()
    results["total_time_s"] = time.perf_counter() - t_start
    config = harness.args_config(args, sizes=sizes, degrees=degrees)
    path = args.out / "speed_second_order.json"
    harness.write_result(__file__, argv, path, results, config=config, wall_time_s=results["total_time_s"])
    plot(results, args.out / "speed_second_order.png")
    print(f"wrote {args.out / 'speed_second_order.json'} and .png in {results['total_time_s']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
