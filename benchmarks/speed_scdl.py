"""Speed of SCDL, smECE, the Lipschitz smCE, the cutoff error and binned ECE against their peers.

Times, side by side on the same data (``binary_predictions`` of the harness) at T = 1e4, 1e5, 1e6
(best of ``--repeats`` consecutive runs each): ``skcal.scdl_score`` (the whole dyadic search,
``"auto"`` and ``"theory"`` rules), ``skcal.smooth_ece``, ``skcal.smooth_calibration_error``,
``skcal.cutoff_calibration_error``, ``skcal.binned_ece`` (11 uniform bins), an 11-bin ECE built
from ``sklearn.calibration.calibration_curve``, and ``relplot.smECE`` (if installed). Also
records the values, so that "same value" claims are checked on the timed data; the wall time of
``skcal.calibration_test`` with 1000 resamples at T = 1e5 for SCDL, binned ECE and cutoff; and,
through ``bench_cutoff_binned`` of ``benchmarks/speed_binned.py``, the time and peak memory of
the cutoff error and binned ECE against their floors (n = 1e6, 1e7).

The speed targets are recorded as met or not in ``"targets"``: the Lipschitz smCE at T = 1e5
under 2 s; 1000 resamples of the calibration test of SCDL and of binned ECE at T = 1e5 under
10 s each; the cutoff error within 1.1x the time and 1.5x the peak memory of ``argsort`` +
``cumsum``; binned ECE's peak memory no more than ``calibration_curve``'s. Timings run
serially (parallel runs would disturb each other).

Usage (from the repository root)::

    nice python -m benchmarks.speed_scdl            # full: T = 1e4, 1e5, 1e6
    python -m benchmarks.speed_scdl --quick         # smoke run: T = 1e3, 1e4, one repeat

Writes ``speed_scdl.json`` (with provenance) and ``speed_scdl.png`` to ``--out``.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from sklearn.calibration import calibration_curve

from benchmarks import _harness as harness
from benchmarks.speed_binned import bench_cutoff_binned
from skcal import binned_ece, cutoff_calibration_error, smooth_ece
from skcal.calibration_test import calibration_test
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import scdl_curve, scdl_score


def sklearn_ece(y, p, n_bins=11):
    """11-bin ECE from ``calibration_curve`` (its bin counts recomputed as it bins)."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins)
    ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    counts = np.bincount(ids, minlength=n_bins)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / len(p))


def methods():
    out = {
        "scdl_score": lambda y, p: scdl_score(y, p),
        "scdl_score_theory": lambda y, p: scdl_score(y, p, max_bins="theory"),
        "smooth_ece": lambda y, p: smooth_ece(y, p),
        "smooth_calibration_error": lambda y, p: smooth_calibration_error(y, p),
        "cutoff_calibration_error": lambda y, p: cutoff_calibration_error(y, p),
        "binned_ece": lambda y, p: binned_ece(y, p, n_bins=11),
        "sklearn_calibration_curve_ece": lambda y, p: sklearn_ece(y, p),
    }
    try:
        import relplot

        out["relplot_smECE"] = lambda y, p: float(relplot.smECE(p.astype(float), y.astype(float)))
    except ImportError:  # pragma: no cover - relplot is a test extra
        print("relplot is not installed: its column is skipped", file=sys.stderr)
    return out


def run(sizes, repeats):
    rows = []
    for T in sizes:
        y, p = harness.binary_predictions(T)
        row = {
            "T": T,
            "seconds": {},
            "values": {},
            "m_max": int(scdl_curve(y, p).n_bins[-1]),
            "m_max_theory": int(scdl_curve(y, p, max_bins="theory").n_bins[-1]),
        }
        for name, fn in methods().items():
            r = max(1, repeats if T < 10**6 else min(repeats, 3))
            sec, val = harness.best_of(lambda fn=fn, y=y, p=p: fn(y, p), r)
            row["seconds"][name] = sec
            row["values"][name] = float(val)
            print(f"T={T:>8d}  {name:32s} {sec * 1e3:9.2f} ms   value {val:.6f}", flush=True)
        rows.append(row)
    return rows


def run_calibration_tests(T, n_resamples):
    """Wall time of ``calibration_test`` (one run each; the resampling dominates)."""
    y, p = harness.binary_predictions(T)
    out = {"T": T, "n_resamples": n_resamples, "seconds": {}, "pvalue": {}}
    for measure in ("scdl", "binned_ece", "cutoff"):
        t0 = time.perf_counter()
        res = calibration_test(y, p, measure=measure, n_resamples=n_resamples, random_state=0)
        out["seconds"][measure] = time.perf_counter() - t0
        out["pvalue"][measure] = res.pvalue
        sec = out["seconds"][measure]
        print(f"calibration_test T={T} R={n_resamples} {measure:12s} {sec:7.2f} s", flush=True)
    return out


def plot(rows, path):
    names = list(rows[0]["seconds"])
    fig, ax = harness.subplots(figsize=(7, 4.5))
    Ts = [r["T"] for r in rows]
    for name in names:
        ax.plot(Ts, [r["seconds"][name] for r in rows], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sample size T")
    ax.set_ylabel("seconds (best of repeats)")
    ax.set_title("Calibration measures: run time")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


def targets(rows, tests, floors):
    """Each speed target with its measured value and whether it is met."""
    out = {}
    smce = {r["T"]: r["seconds"]["smooth_calibration_error"] for r in rows}
    if 10**5 in smce:
        out["smce_T_1e5_under_2s"] = {"seconds": smce[10**5], "met": bool(smce[10**5] < 2.0)}
    if tests["T"] == 10**5 and tests["n_resamples"] == 1000:
        for m in ("scdl", "binned_ece"):
            sec = tests["seconds"][m]
            out[f"calibration_test_{m}_1000_resamples_T_1e5_under_10s"] = {
                "seconds": sec,
                "met": bool(sec < 10.0),
            }
    for row in floors:
        n = f"{row['n']:.0e}".replace("+0", "")
        r = row["cutoff_time_over_floor"]
        out[f"cutoff_time_within_1.1x_floor_n_{n}"] = {"ratio": r, "met": bool(r <= 1.1)}
        r = row["cutoff_peak_over_floor"]
        out[f"cutoff_peak_memory_within_1.5x_floor_n_{n}"] = {"ratio": r, "met": bool(r <= 1.5)}
        r = row["binned_ece_peak_over_sklearn"]
        out[f"binned_ece_peak_memory_at_most_calibration_curve_n_{n}"] = {"ratio": r, "met": bool(r <= 1.0)}
    return out


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="smoke run: T = 1e3, 1e4, one repeat")
    parser.add_argument("--repeats", type=int, default=5, help="runs per measure and T (the best is kept)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of bench_cutoff_binned (default 5)")
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    sizes = [10**3, 10**4] if args.quick else [10**4, 10**5, 10**6]
    repeats = 1 if args.quick else args.repeats
    test_T, test_R = (10**3, 50) if args.quick else (10**5, 1000)
    floor_ns = (10**4, 10**5) if args.quick else (10**6, 10**7)
    rounds = args.rounds or (2 if args.quick else 5)
    rows = run(sizes, repeats)
    tests = run_calibration_tests(test_T, test_R)
    floors = bench_cutoff_binned(floor_ns, rounds)
    for row in floors:
        print(json.dumps({k: row[k] for k in row if k.endswith(("over_floor", "over_sklearn")) or k == "n"}))
    summary = {}
    last = rows[-1]
    s = last["seconds"]
    summary["scdl_over_sklearn_binning_at_largest_T"] = s["scdl_score"] / s["sklearn_calibration_curve_ece"]
    if "relplot_smECE" in s:
        summary["relplot_over_smooth_ece_speedup_at_largest_T"] = s["relplot_smECE"] / s["smooth_ece"]
        summary["max_abs_smooth_ece_minus_relplot"] = max(
            abs(r["values"]["smooth_ece"] - r["values"]["relplot_smECE"]) for r in rows
        )
    summary["max_abs_binned_ece_minus_sklearn"] = max(
        abs(r["values"]["binned_ece"] - r["values"]["sklearn_calibration_curve_ece"]) for r in rows
    )
    result = {
        "quick": args.quick,
        "repeats": repeats,
        "rows": rows,
        "calibration_test": tests,
        "cutoff_binned_floors": floors,
        "targets": targets(rows, tests, floors),
        "summary": summary,
    }
    config = harness.args_config(
        args,
        sizes=sizes,
        repeats_used=repeats,
        calibration_test={"T": test_T, "n_resamples": test_R, "random_state": 0},
        floors={"ns": list(floor_ns), "rounds": rounds, "n_bins": 11},
        data=f"{harness.BINARY_PREDICTIONS}, seed 0",
    )
    harness.write_result(__file__, argv, args.out / "speed_scdl.json", result, config=config, clock=clock)
    plot(rows, args.out / "speed_scdl.png")
    print(json.dumps(summary, indent=2))
    print(json.dumps(result["targets"], indent=2))
    return result


if __name__ == "__main__":
    main()
