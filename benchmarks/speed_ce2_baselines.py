"""Wall time of the baseline CE2 estimators (``skcal.baseline_ce2``) against n.

For each n, sech bandwidth h in {1/16, 1/64} and method in {bucketing, nadaraya_watson}, one
``baseline_ce2(..., c="auto")`` call (choice of c on a 30% held-out split over the six constants,
then the refit on all n) on simulated calibrated second-order scores with two snapshots each
(``second_order_snapshots`` of the harness, sech-perturbed).
Bucketing is O(n); the exact truncated Nadaraya-Watson costs in proportion to the number of
sample pairs within 5 b, i.e. of order n^2 for the largest constants. The machine load is
recorded next to the times (wall times scale with it on a shared machine); each configuration is
run ``--repeats`` times and the minimum wall and CPU (process) times are reported, the plot shows
the CPU time.

Usage (from the repository root)::

    python -m benchmarks.speed_ce2_baselines            # full run, writes benchmarks/results/
    python -m benchmarks.speed_ce2_baselines --quick    # small smoke run
    python -m benchmarks.speed_ce2_baselines --n-jobs 2 --out /tmp/x

Outputs ``speed_ce2_baselines.json`` and ``speed_ce2_baselines.png`` in ``--out``.
"""

from __future__ import annotations

import time

from benchmarks import _harness as harness

FULL_N = [2_000, 5_000, 10_000, 20_000, 50_000]
QUICK_N = [300, 1_000]
BANDWIDTHS = [1 / 16, 1 / 64]
METHODS = ["bucketing", "nadaraya_watson"]


def simulate(n, h, seed=0):
    """Perturbed calibrated scores (m, sigma2) and the snapshot targets of 2 labels per row."""
    from skcal import SechPerturber

    S, Y = harness.second_order_snapshots(n, seed)
    scores = SechPerturber(bandwidth=h, random_state=seed).fit_transform(S)
    return scores, Y.mean(axis=1), Y[:, 0] * Y[:, 1]


def run_one(n, h, method, repeats, seed=0):
    from skcal import baseline_ce2

    scores, t1, t2 = simulate(n, h, seed)
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        res = baseline_ce2(scores, t1, t2, method=method, bandwidth=h, random_state=seed)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {
        "n": n,
        "h": h,
        "method": method,
        "seconds": min(walls),
        "cpu_seconds": min(cpus),
        "all_seconds": walls,
        "c": res["c"],
        "ce2": res["ce2"],
        "n_constants_tried": len(res["validation_loss"]),
    }


def plot(rows, path):
    fig, ax = harness.subplots(figsize=(6, 4))
    for method in METHODS:
        for h, style in zip(BANDWIDTHS, ["-", "--"], strict=True):
            sel = sorted((r for r in rows if r["method"] == method and r["h"] == h), key=lambda r: r["n"])
            ax.loglog(
                [r["n"] for r in sel],
                [r["cpu_seconds"] for r in sel],
                style,
                marker="o",
                label=f"{method}, h=1/{round(1 / h)}",
            )
    ax.set_xlabel("n")
    ax.set_ylabel("CPU seconds per baseline_ce2 call (c='auto')")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="small smoke run", n_jobs="joblib workers (timings then overlap)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="calls per configuration (min reported)")
    args = harness.parse_args(parser, argv)

    from joblib import Parallel, delayed

    ns = QUICK_N if args.quick else FULL_N
    configs = [(n, h, method) for n in ns for h in BANDWIDTHS for method in METHODS]
    start = time.perf_counter()
    rows = Parallel(n_jobs=args.n_jobs)(
        delayed(run_one)(n, h, method, args.repeats) for n, h, method in configs
    )
    total = time.perf_counter() - start
    out = args.out
    result = {
        "benchmark": "speed_ce2_baselines",
        "mode": "quick" if args.quick else "full",
        "n_jobs": args.n_jobs,
        "repeats": args.repeats,
        "load_average_at_end": harness.load_average(),
        "total_seconds": total,
        "rows": rows,
    }
    config = harness.args_config(args, ns=ns)
    path = out / "speed_ce2_baselines.json"
    harness.write_result(__file__, argv, path, result, config=config, wall_time_s=total)
    plot(rows, out / "speed_ce2_baselines.png")
    for r in rows:
        print(
            f"n={r['n']:>6} h=1/{round(1 / r['h']):<3} {r['method']:<16} {r['seconds']:8.2f} s wall "
            f"{r['cpu_seconds']:8.2f} s cpu  c={r['c']}"
        )
    print(f"total {total:.1f} s; load average {harness.load_average()}")
    return result


if __name__ == "__main__":
    main()
