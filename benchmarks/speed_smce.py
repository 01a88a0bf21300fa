"""Speed of the exact Lipschitz smooth calibration error against the linear program (HiGHS).

Times ``skcal.lipschitz.smooth_calibration_error`` (exact, through the dual isotonic regression)
and the primal linear program over the sorted distinct predictions solved by
``scipy.optimize.linprog(method="highs")`` on the same data, best of ``--repeats`` consecutive
runs each, and records both values (their difference checks exactness on the timed data). The LP
is timed only up to ``--lp-max`` samples (it is the slow one). The data: ``binary_predictions`` of
the harness, ``p ~ Beta(2, 2)``, ``y ~ Bernoulli(clip(p + 0.1 sin(6 p)))`` (a mildly
miscalibrated predictor), predictions distinct. Timings run serially.

Usage (from the repository root)::

    nice python -m benchmarks.speed_smce            # full: T = 1e3 .. 1e6, LP up to 3e4
    python -m benchmarks.speed_smce --quick         # smoke run: T = 1e3, 1e4, one repeat

Writes ``speed_smce.json`` (with provenance) and ``speed_smce.png`` to ``--out``.
"""

from __future__ import annotations

import json

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from benchmarks import _harness as harness
from skcal.lipschitz import smooth_calibration_error


def linprog_smce(y, p):
    """The primal LP: max sum r_i w_i, |w_i| <= 1, |w_{i+1} - w_i| <= p_{i+1} - p_i (HiGHS)."""
    values, inv = np.unique(p, return_inverse=True)
    r = np.bincount(inv, weights=y - p, minlength=values.size) / len(p)
    n = values.size
    if n == 1:
        return abs(float(r[0]))
    d = np.diff(values)
    D = sparse.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
    A = sparse.vstack([D, -D]).tocsr()
    res = linprog(-r, A_ub=A, b_ub=np.concatenate([d, d]), bounds=(-1, 1), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return float(-res.fun)


def run(sizes, lp_max, repeats):
    rows = []
    for T in sizes:
        y, p = harness.binary_predictions(T)
        row = {"T": T, "seconds": {}, "values": {}}
        r = repeats if T < 10**6 else min(repeats, 3)
        sec, val = harness.best_of(lambda y=y, p=p: smooth_calibration_error(y, p), r)
        row["seconds"]["skcal"], row["values"]["skcal"] = sec, float(val)
        print(f"T={T:>8d}  skcal   {sec * 1e3:10.2f} ms   value {val:.10f}", flush=True)
        if T <= lp_max:
            sec, val = harness.best_of(lambda y=y, p=p: linprog_smce(y, p), 1 if T > 10**4 else r)
            row["seconds"]["linprog_highs"], row["values"]["linprog_highs"] = sec, float(val)
            print(f"T={T:>8d}  linprog {sec * 1e3:10.2f} ms   value {val:.10f}", flush=True)
        rows.append(row)
    return rows


def plot(rows, path):
    fig, ax = harness.subplots(figsize=(6.5, 4.2))
    for name, label in (("skcal", "skcal (exact, dual isotonic)"), ("linprog_highs", "linprog (HiGHS)")):
        pts = [(r["T"], r["seconds"][name]) for r in rows if name in r["seconds"]]
        ax.plot(*zip(*pts, strict=True), marker="o", label=label)
    ax.axhline(2.0, color="grey", ls=":", lw=1, label="target at T = 1e5: 2 s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sample size T (distinct predictions)")
    ax.set_ylabel("seconds (best of repeats)")
    ax.set_title("Lipschitz smooth calibration error: run time")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="smoke run: T = 1e3, 1e4, one repeat")
    parser.add_argument("--repeats", type=int, default=5, help="runs per T (the best is kept)")
    parser.add_argument("--lp-max", type=int, default=None, help="largest T timed with linprog")
    args = harness.parse_args(parser, argv)
    sizes = [10**3, 10**4] if args.quick else [10**3, 10**4, 3 * 10**4, 10**5, 10**6]
    lp_max = args.lp_max if args.lp_max is not None else (10**3 if args.quick else 3 * 10**4)
    repeats = 1 if args.quick else args.repeats
    clock = harness.Timer()
    rows = run(sizes, lp_max, repeats)
    both = [r for r in rows if "linprog_highs" in r["values"]]
    last = both[-1]["seconds"]
    summary = {
        "max_abs_skcal_minus_linprog": max(
            abs(r["values"]["skcal"] - r["values"]["linprog_highs"]) for r in both
        ),
        "skcal_seconds_by_T": {str(r["T"]): r["seconds"]["skcal"] for r in rows},
        "linprog_over_skcal_at_largest_common_T": last["linprog_highs"] / last["skcal"],
    }
    at_1e5 = [r["seconds"]["skcal"] for r in rows if r["T"] == 10**5]
    if at_1e5:
        summary["target_T_1e5_under_2s"] = bool(at_1e5[0] < 2.0)
    result = {"quick": args.quick, "rows": rows, "summary": summary}
    config = harness.args_config(
        args,
        sizes=sizes,
        lp_max_used=lp_max,
        repeats_used=repeats,
        data=f"{harness.BINARY_PREDICTIONS}, seed 0",
    )
    harness.write_result(__file__, argv, args.out / "speed_smce.json", result, config=config, clock=clock)
    plot(rows, args.out / "speed_smce.png")
    print(json.dumps(summary, indent=2))
    return result


if __name__ == "__main__":
    main()
