"""How the sample-size guard of ``degree="auto"`` affects the polynomial CE2 estimate.

The analytic rule ``ceil(2 log n / log theta)`` is above its cap for every practical ``n`` at small
bandwidths, so the cap alone would fit tensor degree 88 (7921 features) to any sample. This
script simulates scores whose true CE2 is (nearly) zero before perturbation: ``m ~ U(0, 1)``,
``sigma2 = u min(m, 1 - m)^2`` with ``u ~ U(0, 1)`` and ``f* = m -+ sqrt(sigma2)`` with equal odds,
so ``E[f* | S] = m`` and ``Var[f* | S] = sigma2`` exactly (no clipping is needed;
``second_order_snapshots(variance="symmetric")`` of the harness), perturbs them with
``SechPerturber(bandwidth=2**-6)`` and estimates CE2 with two snapshots per input at the degree
``auto_degree(n, h, samples_per_feature=s)`` for several ``s``, and with ``cv=5``. The
perturbation itself adds a small true CE2; a larger estimate is the estimator's noise floor.

Usage (from the repository root)::

    python -m benchmarks.ce2_degree_guard            # n = 5e3, 2e4, 1e5, three seeds
    python -m benchmarks.ce2_degree_guard --quick    # smoke run: n = 2e3, 5e3, one seed

Writes ``ce2_degree_guard.json`` and ``ce2_degree_guard.png`` (``ce2_degree_guard_quick.*`` with
``--quick``).
"""

from __future__ import annotations

import json
import sys

import numpy as np

from benchmarks import _harness as harness

H = 2**-6
GUARDS = [10, 30, 100, 300]


def simulate(n, seed):
    from skcal import SechPerturber

    S, Y = harness.second_order_snapshots(n, seed, variance="symmetric")
    return SechPerturber(bandwidth=H, random_state=seed).fit_transform(S), Y


def one(n, seed, max_degree):
    from skcal import ce2_details
    from skcal.chebyshev import auto_degree

    Sp, Y = simulate(n, seed)
    row = {"n": n, "seed": seed}
    for s in GUARDS:
        deg = auto_degree(n, H, samples_per_feature=s)
        if deg > max_degree:
            row[f"guard_{s}"] = None
            continue
        row[f"guard_{s}"] = {"degree": deg, "ce2": ce2_details(Y, Sp, degree=deg, bandwidth=H).ce2}
    res = ce2_details(Y, Sp, bandwidth=H, cv=5, random_state=seed)
    row["cv5"] = {"degree": res.degree, "alpha": res.alpha, "ce2": res.ce2}
    return row


def main(argv=None):
    from joblib import Parallel, delayed

    parser = harness.parser(__file__, __doc__, n_jobs="joblib workers over (n, seed)")
    args = harness.parse_args(parser, argv)
    ns = [2000, 5000] if args.quick else [5000, 20000, 100000]
    seeds = [0] if args.quick else [0, 1, 2]
    max_degree = 20 if args.quick else 60
    clock = harness.Timer()
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one)(n, s, max_degree) for n in ns for s in seeds)
    summary = {}
    for n in ns:
        summ = {}
        for key in [f"guard_{s}" for s in GUARDS] + ["cv5"]:
            vals = [r[key] for r in rows if r["n"] == n and r[key] is not None]
            if vals:
                summ[key] = {
                    "degree": sorted({v["degree"] for v in vals}),
                    "ce2_mean": float(np.mean([v["ce2"] for v in vals])),
                    "ce2_std": float(np.std([v["ce2"] for v in vals])),
                }
        summary[str(n)] = summ
    out = {
        "bandwidth": H,
        "seeds": seeds,
        "rows": rows,
        "summary": summary,
        "time_s": clock.elapsed(),
    }
    stem = "ce2_degree_guard_quick" if args.quick else "ce2_degree_guard"
    config = harness.args_config(args)
    path = args.out / f"{stem}.json"
    harness.write_result(__file__, argv, path, out, config=config, wall_time_s=out["time_s"])
    plot(summary, ns, args.out / f"{stem}.png")
    print(json.dumps(summary, indent=1))
    return 0


def plot(summary, ns, path):
    fig, ax = harness.subplots(figsize=(6, 4))
    for key in [f"guard_{s}" for s in GUARDS] + ["cv5"]:
        xs = [n for n in ns if key in summary[str(n)]]
        ax.errorbar(
            xs,
            [summary[str(n)][key]["ce2_mean"] for n in xs],
            yerr=[summary[str(n)][key]["ce2_std"] for n in xs],
            marker="o",
            label=key.replace("guard_", "samples/feature = "),
        )
    ax.set_xscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("CE2 estimate (true CE2 ~ 0 before perturbation)")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
