"""Per-call cost of the binary measures against their peers and floors, 1e3 to 1e7 rows, in one run.

Side by side on the same data (``binary_predictions`` of the harness), in the same rotated
rounds (``time_rotated``: every callable once per round, the order rotated each round; medians
per call):

* ``skcal.smooth_ece`` against ``relplot.smECE`` (if installed), ratio ``relplot / skcal``;
* ``skcal.cutoff_calibration_error`` against the floor ``np.cumsum((y - p)[np.argsort(p)])``,
  ratio ``floor / skcal``;
* ``skcal.binned_ece`` (11 uniform bins) against ``sklearn.calibration.calibration_curve``
  (11 bins), ratio ``sklearn / skcal``;
* ``skcal.scdl_score`` (the whole dyadic search, default ``"auto"`` rule) against one
  ``np.bincount`` of the rows' cell ids on SCDL's finest grid (the ids computed beforehand, so
  the floor is the bincount alone), ratio ``skcal / bincount``; and SCDL's peak memory
  (``tracemalloc``, one untimed call) against the input's bytes (``y`` int64 and ``p``
  float64), with ``calibration_curve`` with 16,384 bins beside it at the largest size.

A second part times ``skcal.calibration_test(y, p, measure="cutoff")`` with its default 1000
consistency resamples against one ``np.sort(p)`` of the same ``p`` (``--test-n`` rows, default
1e6), side by side in rotated rounds (``--test-rounds``, default 3) after one untimed warm-up call
(the compiled null is loaded from numba's cache or compiled there); the target is a ratio of at
most 10. Whether the compiled null (numba) or the numpy one ran is recorded.

numba, when installed (the ``bench`` extra has it), is imported before the timings, as in any
process that has run a report, a calibration test or a bootstrap: the cutoff error then takes its
compiled passes at every size. A process that has not imported numba keeps the cutoff error's
numpy passes below 2^16 rows (importing numba, about 0.5 s once, would cost more than the call);
``"numba_imported_before_timing"`` in the configuration records which state was timed.

Small sizes repeat each call so that one timed call lasts about 10^5 rows' worth of work (a
1e3-row measure runs 100 times per timed call; the time reported is per call). The targets, in
``"targets"`` with their numbers: every measure at least as fast as its peer or floor (ratio
at least 1) at every size, SCDL within 10x one bincount and its peak memory within 2x the
input's.

Usage (from the repository root)::

    nice python -m benchmarks.speed_overhead            # 1e3, 1e4, 1e5, 1e6, 1e7 rows, 5 rounds
    python -m benchmarks.speed_overhead --quick         # smoke run: 1e3, 1e4 rows, 2 rounds

Writes ``speed_overhead.json`` (with provenance) and ``speed_overhead.png`` to ``--out``
(``speed_overhead_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import json
import sys

import numpy as np
from sklearn.calibration import calibration_curve

from benchmarks import _harness as harness
from skcal import binned_ece, calibration_test, cutoff_calibration_error, scdl_curve, scdl_score, smooth_ece

#: Rows' worth of work per timed call at small sizes (a call of n rows is repeated 1e5 / n times).
WORK_PER_CALL = 10**5

#: measure -> (skcal callable name, peer callable name, how the ratio reads)
PAIRS = {
    "smooth_ece": ("skcal_smooth_ece", "relplot_smECE", "peer_over_skcal"),
    "cutoff": ("skcal_cutoff", "floor_argsort_cumsum", "peer_over_skcal"),
    "binned_ece": ("skcal_binned_ece", "sklearn_calibration_curve", "peer_over_skcal"),
    "scdl": ("skcal_scdl", "floor_np_bincount", "skcal_over_floor"),
}


def _relplot():
    try:
        import relplot
    except ImportError:  # pragma: no cover - relplot is in the test and bench extras
        print("relplot is not installed: smooth_ece has no peer in this run", file=sys.stderr)
        return None
    return relplot.smECE


def _import_numba():
    """Import numba if installed (see the module docstring); whether it is imported."""
    try:
        import numba  # noqa: F401  (the compiled paths' state of a process that has loaded it)
    except ImportError:  # pragma: no cover - numba is in the test and bench extras
        return False
    return True


def _repeat(fn, k):
    """``fn`` called ``k`` times per call (the last value returned)."""
    if k == 1:
        return fn

    def many(y, p):
        for _ in range(k - 1):
            fn(y, p)
        return fn(y, p)

    return many


def functions(y, p, smece):
    """Name -> callable(y, p) at one size (the floor's cell ids computed here, outside the timing)."""
    M = int(scdl_curve(y, p).n_bins[-1])
    ids = np.minimum((p * M).astype(np.intp), M - 1)
    out = {
        "skcal_smooth_ece": lambda y, p: smooth_ece(y, p),
        "skcal_cutoff": lambda y, p: cutoff_calibration_error(y, p),
        "floor_argsort_cumsum": lambda y, p: np.cumsum((y - p)[np.argsort(p)]),
        "skcal_binned_ece": lambda y, p: binned_ece(y, p),
        "sklearn_calibration_curve": lambda y, p: calibration_curve(y, p, n_bins=11),
        "skcal_scdl": lambda y, p: scdl_score(y, p),
        "floor_np_bincount": lambda y, p: np.bincount(ids, minlength=M + 1),
    }
    if smece is not None:
        out["relplot_smECE"] = lambda y, p: float(smece(p, y))
    return out, M


def run_size(n, rounds, smece):
    y, p = harness.binary_predictions(n)
    funcs, M = functions(y, p, smece)
    k = max(1, WORK_PER_CALL // n)
    timings = harness.time_rotated({name: _repeat(f, k) for name, f in funcs.items()}, y, p, rounds=rounds)
    per_call = {name: t / k for name, t in timings.median.items()}
    ratios = {}
    for measure, (ours, peer, kind) in PAIRS.items():
        if peer not in per_call:
            continue
        r = per_call[peer] / per_call[ours] if kind == "peer_over_skcal" else per_call[ours] / per_call[peer]
        ratios[measure] = {"kind": kind, "ratio": r}
    values = {name: timings.values[name] for name in timings.values}
    row = {
        "n": int(n),
        "repeats_per_timed_call": k,
        "scdl_finest_grid": M,
        "median_s_per_call": per_call,
        "times_s": timings.times,
        "ratios": ratios,
        "values": values,
        "input_bytes": int(y.nbytes + p.nbytes),
        "scdl_peak_bytes": harness.traced_peak(scdl_score, y, p),
    }
    row["scdl_peak_over_input"] = row["scdl_peak_bytes"] / row["input_bytes"]
    print(
        f"n={n:>9d}  "
        + "  ".join(f"{m} {v['ratio']:.2f}x" for m, v in ratios.items())
        + f"  scdl memory {row['scdl_peak_over_input']:.2f}x input",
        flush=True,
    )
    return row


def calibration_test_part(n, rounds):
    """``calibration_test(measure="cutoff")`` (1000 resamples) against one ``np.sort(p)``, side by side."""
    import importlib.util

    y, p = harness.binary_predictions(n)
    test = lambda y, p: calibration_test(y, p, measure="cutoff", random_state=0).pvalue  # noqa: E731
    test(*harness.binary_predictions(1000))  # warm-up: the compiled null loaded (or compiled) here
    funcs = {"calibration_test_cutoff": test, "floor_np_sort": lambda y, p: np.sort(p)}
    timings = harness.time_rotated(funcs, y, p, rounds=rounds)
    med = timings.median
    ratio = med["calibration_test_cutoff"] / med["floor_np_sort"]
    print(f"calibration_test(cutoff, 1000 resamples) at n={n}: {ratio:.2f}x one np.sort", flush=True)
    return {
        "n": int(n),
        "n_resamples": 1000,
        "compiled_null": importlib.util.find_spec("numba") is not None,
        "median_s_per_call": med,
        "times_s": timings.times,
        "p_value": timings.values.get("calibration_test_cutoff"),
        "ratio_test_over_sort": ratio,
    }


def targets(rows, test=None):
    out = {}
    for row in rows:
        n = f"{row['n']:.0e}".replace("+0", "")
        for measure, r in row["ratios"].items():
            ratio = r["ratio"]
            if r["kind"] == "peer_over_skcal":
                out[f"{measure}_at_least_as_fast_as_peer_n_{n}"] = {"ratio": ratio, "met": bool(ratio >= 1.0)}
            else:
                out[f"scdl_within_10x_one_bincount_n_{n}"] = {"ratio": ratio, "met": bool(ratio <= 10.0)}
        ratio = row["scdl_peak_over_input"]
        out[f"scdl_peak_memory_within_2x_input_n_{n}"] = {"ratio": ratio, "met": bool(ratio <= 2.0)}
    if test is not None:
        n = f"{test['n']:.0e}".replace("+0", "")
        ratio = test["ratio_test_over_sort"]
        key = f"calibration_test_cutoff_within_10x_one_sort_n_{n}"
        out[key] = {"ratio": ratio, "met": bool(ratio <= 10.0)}
    return out


def plot(rows, path):
    fig, axes = harness.subplots(1, 2, figsize=(12, 4.5))
    ns = [r["n"] for r in rows]
    ax = axes[0]
    for measure, (_, peer, kind) in PAIRS.items():
        if kind != "peer_over_skcal":
            continue
        pts = [(r["n"], r["ratios"][measure]["ratio"]) for r in rows if measure in r["ratios"]]
        if pts:
            ax.plot(*zip(*pts, strict=True), "o-", label=f"{peer} / skcal {measure}")
    ax.axhline(1.0, color="grey", ls=":", lw=1, label="target: at least 1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("peer time / skcal time (median per call)")
    ax.set_title("Measures against their peers (higher: skcal faster)")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(ns, [r["ratios"]["scdl"]["ratio"] for r in rows], "o-", label="scdl_score / np.bincount (time)")
    ax.plot(ns, [r["scdl_peak_over_input"] for r in rows], "s-", label="scdl_score peak memory / input bytes")
    ax.axhline(10.0, color="grey", ls=":", lw=1, label="time target: 10x")
    ax.axhline(2.0, color="grey", ls="--", lw=1, label="memory target: 2x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("ratio")
    ax.set_title("SCDL against one bincount and against its input")
    ax.legend(fontsize=7)
    harness.save_figure(fig, path)


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="smoke run: 1e3, 1e4 rows, 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rotated rounds (default 5, quick 2)")
    parser.add_argument("--sizes", type=float, nargs="*", default=None, help="row counts (default 1e3..1e7)")
    parser.add_argument(
        "--test-n", type=float, default=None, help="rows of the calibration_test part (1e6; quick 1e4)"
    )
    parser.add_argument(
        "--test-rounds", type=int, default=3, help="rotated rounds of the calibration_test part"
    )
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    if args.sizes:
        sizes = [int(s) for s in args.sizes]
    else:
        sizes = [10**3, 10**4] if args.quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    rounds = args.rounds or (2 if args.quick else 5)
    smece = _relplot()
    numba_imported = _import_numba()
    rows = [run_size(n, rounds, smece) for n in sizes]
    big = harness.binary_predictions(sizes[-1])
    cc_peak = harness.traced_peak(lambda y, p: calibration_curve(y, p, n_bins=16384), *big)
    del big
    test_n = int(args.test_n) if args.test_n else (10**4 if args.quick else 10**6)
    test = calibration_test_part(test_n, args.test_rounds)
    result = {
        "quick": args.quick,
        "rows": rows,
        "calibration_curve_16384_bins_peak_bytes_at_largest_n": cc_peak,
        "calibration_test": test,
        "targets": targets(rows, test),
    }
    config = harness.args_config(
        args,
        sizes_used=sizes,
        rounds_used=rounds,
        test_n_used=test_n,
        work_per_call=WORK_PER_CALL,
        numba_imported_before_timing=numba_imported,
        data=f"{harness.BINARY_PREDICTIONS}, seed 0",
        peers={
            "smooth_ece": "relplot.smECE",
            "cutoff": "np.cumsum((y - p)[np.argsort(p)])",
            "binned_ece": "sklearn.calibration.calibration_curve(n_bins=11)",
            "scdl": "np.bincount of precomputed cell ids on SCDL's finest grid",
        },
    )
    stem = "speed_overhead_quick" if args.quick else "speed_overhead"
    harness.write_result(__file__, argv, args.out / f"{stem}.json", result, config=config, clock=clock)
    plot(rows, args.out / f"{stem}.png")
    print(json.dumps({k: v for k, v in result["targets"].items()}, indent=1))
    return result


if __name__ == "__main__":
    main()
