"""A report at production sizes: its time against its calibration measures computed once.

For each report kind and size, three models' predictions on the same validation rows, and, side
by side in rotated rounds (:func:`benchmarks._harness.time_rotated`):

* the **report** with the defaults, ``CalibrationReport.from_predictions(y, predictions)``: the
  values, 200 paired bootstrap replicates through the statistics objects, a calibration test of
  1000 resamples per model (figures are drawn on first access, so they are not part of it);
* its **floor**: the report's calibration measures computed once per model on the same data.
  First order: SCDL, smECE, the Lipschitz smCE, the cutoff error and the 11-bin ECE. Multiclass
  (``k = 10``): the truthful ConfCE-corr and classwise LinCE and the top-label ECE. Second order
  (two snapshots per row): CE2 as the report computes it (degree and ridge chosen by 5-fold CV,
  then the estimate) and SCDL of the mean against every vote.

The target is a report within ``10x`` its floor (median over the rounds). Also recorded, for one
report of each kind and size in this process: wall time, CPU time (``time.process_time``, all
threads), the bootstrap's share and the growth of the peak resident memory. The data: the
harness's ``binary_predictions`` (models ``p``, ``1.1 p - 0.05`` and ``p + 0.03``, clipped),
``multiclass_predictions`` (models ``P``, ``P^1.3`` and ``P^0.8``, renormalised) and
``second_order_snapshots`` (models ``(m, s2)``, ``(m, 0)`` and ``(m, 2 s2)``, clipped to the
feasible box).

With ``--max-seconds S1,S2,...`` the script measures the time budget instead: one report of
each kind, size and budget ``S`` with ``max_seconds=S``, its wall time, the replicates it kept
and its interval of model ``a`` beside the full run's stored in ``report_scale.json`` in
``--out`` (same seed: the budgeted replicates are the first ``B`` of the full run's, to round-off).

Usage (from the repository root)::

    nice python -m benchmarks.report_scale            # 1e5 and 1e6 rows, every kind (about 30 min)
    python -m benchmarks.report_scale --quick         # CI smoke: 2000 and 10000 rows, one round
    nice python -m benchmarks.report_scale --max-seconds 5,30 --kinds first-order

Writes ``report_scale.json`` (``report_scale_quick.json`` with ``--quick``;
``report_scale_budget.json`` with ``--max-seconds``) to ``--out``.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from benchmarks import _harness as harness
from skcal.binned_ece import binned_ece
from skcal.ce2 import ce2_score
from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.report import CalibrationReport
from skcal.report._kinds import SecondOrderData, ce2_prepare
from skcal.scdl import scdl_score
from skcal.smooth_ece import smooth_ece
from skcal.truthful import classwise_lince, conf_ece, truthful_conf_ce

KINDS = ("first-order", "multiclass", "second-order")
#: The target: the report within this many times its measures computed once.
MAX_RATIO = 10.0
K_CLASSES = 10


def data(kind, n, seed=0):
    """``(y, predictions)`` of three models for a report of ``kind`` on ``n`` rows."""
    if kind == "first-order":
        y, p = harness.binary_predictions(n, seed)
        return y, {"a": p, "b": np.clip(1.1 * p - 0.05, 0, 1), "c": np.clip(p + 0.03, 0, 1)}
    if kind == "multiclass":
        y, P = harness.multiclass_predictions(n, K_CLASSES, seed)
        out = {"a": P}
        for name, power in (("b", 1.3), ("c", 0.8)):
            Q = P**power
            Q /= Q.sum(axis=1, keepdims=True)
            out[name] = Q
        return y, out
    from skcal import Snapshots

    S, Y = harness.second_order_snapshots(n, seed)
    Y = Snapshots(Y)  # two votes a row, said (not counts)
    m, s2 = S[:, 0], S[:, 1]
    feasible = m * (1 - m)
    return Y, {
        "a": S,
        "b": np.column_stack([m, np.zeros(n)]),
        "c": np.column_stack([m, np.minimum(2 * s2, feasible)]),
    }


def floor(kind, y, preds):
    """The report's calibration measures, once per model (see the module docstring)."""
    if kind == "first-order":
        for p in preds.values():
            scdl_score(y, p)
            smooth_ece(y, p)
            smooth_calibration_error(y, p)
            cutoff_calibration_error(y, p)
            binned_ece(y, p, n_bins=11)
    elif kind == "multiclass":
        labels = np.arange(K_CLASSES)
        for P in preds.values():
            truthful_conf_ce(y, P, labels=labels)
            classwise_lince(y, P, labels=labels)
            conf_ece(y, P, labels=labels)
    else:
        d = SecondOrderData(y)
        for S in preds.values():
            ce2_score(d.Y, S, **ce2_prepare(d, S))
            scdl_score(d.votes, S[d.vote_rows, 0])


def report(y, preds):
    return CalibrationReport.from_predictions(y, preds, random_state=0)


def measure_once(y, preds):
    """One report: wall, CPU, bootstrap seconds and peak-memory growth; the report."""
    before = harness.reset_peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    rep = report(y, preds)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = harness.status_kib("VmHWM")
    growth = None if before is None or peak is None else (peak - before) / 1024.0
    return rep, {
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "bootstrap_seconds": float(rep.results.bootstrap_seconds),
        "peak_rss_growth_mib": growth,
    }


def run(kinds, sizes, rounds):
    rows = []
    for kind in kinds:
        for n in sizes:
            y, preds = data(kind, n)
            rep, once = measure_once(y, preds)
            timings = harness.time_rotated(
                {"report": report, "measures_once": lambda y, preds, k=kind: floor(k, y, preds)},
                y,
                preds,
                rounds=rounds,
            )
            ratio = timings.ratio("report", "measures_once")
            med = timings.median
            head = rep.metric_names[0]
            row = {
                "kind": kind,
                "n": n,
                "models": list(preds),
                "n_bootstrap": int(rep.n_bootstrap),
                "metrics": rep.metric_names,
                # the report's numbers are deterministic (seeded): verify.py compares them
                "values": {m: float(rep.table.loc["a", (m, "value")]) for m in rep.metric_names},
                "intervals": {
                    head: [float(rep.table.loc["a", (head, f)]) for f in ("low", "high")],
                },
                "timings": {
                    "report_seconds_median": med["report"],
                    "measures_once_seconds_median": med["measures_once"],
                    "time_ratio": ratio,
                    "within_target": bool(ratio <= MAX_RATIO),
                    "rounds": timings.times,
                    "one_report": once,
                    "load_average": harness.load_average(),
                },
            }
            rows.append(row)
            print(
                f"{kind:13s} n={n:>8d}  report {med['report']:8.2f} s  measures once "
                f"{med['measures_once']:7.2f} s  ratio {ratio:6.1f}x (target <= {MAX_RATIO:g}x)  "
                f"CPU {once['cpu_seconds']:.1f} s  bootstrap {once['bootstrap_seconds']:.1f} s  "
                f"peak +{once['peak_rss_growth_mib'] or float('nan'):.0f} MiB",
                flush=True,
            )
    return rows


def budget(kinds, sizes, budgets, stored):
    """One report per kind, size and budget in ``budgets``, beside the stored full run's intervals."""
    full = {(r["kind"], r["n"]): r for r in (stored or {}).get("results", [])}
    rows = []
    for kind, n, max_seconds in ((k, n, s) for k in kinds for n in sizes for s in budgets):
        y, preds = data(kind, n)
        t0, c0 = time.perf_counter(), time.process_time()
        rep = CalibrationReport.from_predictions(y, preds, random_state=0, max_seconds=max_seconds)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        head = rep.metric_names[0]
        low, high = (float(rep.table.loc["a", (head, f)]) for f in ("low", "high"))
        row = {
            "kind": kind,
            "n": n,
            "max_seconds": max_seconds,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "bootstrap_seconds": float(rep.results.bootstrap_seconds),
            "n_bootstrap": int(rep.n_bootstrap),
            "n_bootstrap_requested": int(rep.n_bootstrap_requested),
            "metric": head,
            "value": float(rep.table.loc["a", (head, "value")]),
            "interval": [low, high],
            "load_average": harness.load_average(),
        }
        ref = full.get((kind, n))
        if ref is not None and head in ref["intervals"]:
            flo, fhi = ref["intervals"][head]
            row["full_run"] = {
                "n_bootstrap": ref["n_bootstrap"],
                "interval": [flo, fhi],
                "report_seconds_median": ref["timings"]["report_seconds_median"],
                "width_ratio": (high - low) / (fhi - flo) if fhi > flo else None,
            }
        rows.append(row)
        print(
            f"{kind:13s} n={n:>8d}  max_seconds {max_seconds:g}: wall {wall:7.2f} s, "
            f"B = {row['n_bootstrap']} of {row['n_bootstrap_requested']}, {head} "
            f"[{low:.5f}, {high:.5f}]" + (f" (full run [{flo:.5f}, {fhi:.5f}])" if "full_run" in row else ""),
            flush=True,
        )
    return rows


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="2000 and 10000 rows, one round (CI smoke)")
    ap.add_argument("--sizes", default=None, help="comma-separated row counts (default 1e5,1e6)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="report kinds")
    ap.add_argument("--rounds", type=int, default=3, help="rotated rounds (default: %(default)s)")
    ap.add_argument(
        "--max-seconds",
        default=None,
        help="comma-separated budgets: one report per case and budget (report_scale_budget.json)",
    )
    ap.add_argument(
        "--without-compiled",
        action="store_true",
        help="run as a process without numba (the numpy paths of the optional kernels); "
        "writes report_scale_without_compiled.json",
    )
    args = harness.parse_args(ap, argv)
    if args.without_compiled:
        if "numba" in sys.modules:
            ap.error("--without-compiled needs a process that has not imported numba yet")
        sys.modules["numba"] = None  # `import numba` now fails: skcal keeps its numpy paths
    sizes = [2000, 10_000] if args.quick else [100_000, 1_000_000]
    if args.sizes:
        sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    rounds = 1 if args.quick else args.rounds
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"unknown kinds {unknown}; choose from {list(KINDS)}")
    clock = harness.Timer()
    if args.max_seconds is not None:
        try:
            budgets = [float(s) for s in args.max_seconds.split(",") if s.strip()]
        except ValueError:
            budgets = []
        if not budgets or not all(np.isfinite(b) and b > 0 for b in budgets):
            ap.error("--max-seconds takes positive numbers of seconds, separated by commas")
        stored_path = args.out / "report_scale.json"
        stored = json.loads(stored_path.read_text()) if stored_path.exists() else None
        rows = budget(kinds, sizes, budgets, stored)
        doc = {"config": {"sizes": sizes, "kinds": kinds, "max_seconds": budgets}, "results": rows}
        path = args.out / "report_scale_budget.json"
        harness.write_result(__file__, argv, path, doc, config=doc["config"], clock=clock)
        return {"json": str(path), "rows": rows}
    rows = run(kinds, sizes, rounds)
    doc = {
        "config": {
            "sizes": sizes,
            "kinds": kinds,
            "rounds": rounds,
            "k_classes": K_CLASSES,
            "models": 3,
        },
        "target": {"max_time_ratio": MAX_RATIO},
        "results": rows,
    }
    stem = "report_scale_quick" if args.quick else "report_scale"
    if args.without_compiled:
        stem += "_without_compiled"
        doc["config"]["compiled_kernels"] = False
    path = args.out / f"{stem}.json"
    harness.write_result(
        __file__, argv, path, doc, config={**doc["config"], "quick": args.quick}, clock=clock
    )
    return {"json": str(path), "rows": rows}


if __name__ == "__main__":
    main()
