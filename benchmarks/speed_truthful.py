"""Speed and peak memory of the multiclass (truthful) measures against their floors and netcal.

Side by side in one run, on the same data (softmax of Gaussian logits, labels drawn from the
probabilities: ``multiclass_predictions`` of the harness):

* ``classwise_lince`` (15 quantile bins, the default) at ``k = 100`` classes, by the compiled
  kernel (numba, ``skcal[fast]``) and by the numpy path (one sort per column; the kernel
  switched off), and on the same values in a pandas DataFrame (Fortran-ordered values, read
  column by column; the frame is made once, outside the timing), against one ``np.sort`` of
  the ``n x k`` array (``np.sort(P)``, the default
  last axis, and ``np.sort(P, axis=0)``, the column sort that stable-sort quantile bins need)
  and one ``np.bincount`` over the ``n k`` entries. The kernel's first call in a process
  (importing numba and loading or compiling the kernel) is timed apart, before the rounds, and
  its passes are timed one by one after them (min of 3, beside one more ``np.sort(P)``);
* ``truthful_conf_ce`` (15 quantile bins, and 15 uniform bins) and ``conf_ece`` (15 uniform
  bins) at ``k = 10`` against netcal's top-label ECE (``netcal.metrics.ECE(bins=15)``) and
  the floors ``np.sort`` / ``np.bincount`` of the confidences.

Timings are medians over ``--rounds`` rounds; in each round every function runs once, and the
order of the functions is rotated from round to round so that no function always runs first
(or last) on a machine whose load changes (``time_rotated`` of the harness). Ratios are ratios of
medians. Peak memory is
measured per function in a fresh subprocess with ``tracemalloc`` (numpy reports its buffers to
it), started after the data exist: the peak of the allocations made by the call, reported
against the input size (``P`` and ``y``). numba's allocations are not traced, so the same
subprocess also records the growth of its peak resident set size over the call (Linux: the
peak ``VmHWM`` is reset through ``/proc/self/clear_refs`` after the data exist), which counts
everything, numba's import and kernel load included.

netcal 1.4 is installed without its dependencies (``pip install --no-deps netcal``); its
package ``__init__`` imports torch, which the ECE code path does not use, so this script loads
``netcal.metrics.confidence.ECE`` with a stub ``torch`` module (only ``torch.Tensor`` for
isinstance checks) and skips netcal's package ``__init__``. If netcal is not installed the
netcal rows are left out (and the JSON says so).

Usage (from the repository root)::

    nice python -m benchmarks.speed_truthful            # full: n = 1e6 (k = 100) and 1e7 (k = 10)
    python -m benchmarks.speed_truthful --quick         # smoke run: small n, two rounds

Writes ``speed_truthful.json`` and ``speed_truthful.png`` (``speed_truthful_quick.*`` with
``--quick``) to ``--out``, with provenance.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
import types

import numpy as np

import skcal.truthful as _truthful
from benchmarks import _harness as harness
from skcal.truthful import classwise_lince, conf_ece, truthful_conf_ce


def kernel_available():
    return _truthful.compiled("classwise") is not None


def classwise_lince_numpy_path(y, P, labels):
    """``classwise_lince`` with the compiled kernel switched off (one sort per column)."""
    load = _truthful.compiled
    _truthful.compiled = lambda *args, **kwargs: None
    try:
        return classwise_lince(y, P, labels=labels)
    finally:
        _truthful.compiled = load


def load_netcal_ece():
    """Return ``netcal.metrics.confidence.ECE`` loaded without torch, or None."""
    spec = importlib.util.find_spec("netcal")
    if spec is None or spec.origin is None:
        return None
    root = os.path.dirname(spec.origin)
    saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.split(".")[0] == "netcal"}
    try:
        if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
            stub = types.ModuleType("torch")
            stub.Tensor = type("Tensor", (), {})
            sys.modules["torch"] = stub
        pkg = types.ModuleType("netcal")
        pkg.__path__ = [root]
        sys.modules["netcal"] = pkg
        for sub in ("Decorator", "Stats", "Helper"):
            mod = importlib.import_module(f"netcal.{sub}")
            for name in dir(mod):
                if not name.startswith("_"):
                    setattr(pkg, name, getattr(mod, name))
        for sub, path in (("metrics", ("metrics",)), ("metrics.confidence", ("metrics", "confidence"))):
            m = types.ModuleType(f"netcal.{sub}")
            m.__path__ = [os.path.join(root, *path)]
            sys.modules[f"netcal.{sub}"] = m
        return importlib.import_module("netcal.metrics.confidence.ECE").ECE
    finally:  # leave sys.modules as it was (no stub torch, no partial netcal) for other code
        for k in [k for k in sys.modules if k == "torch" or k.split(".")[0] == "netcal"]:
            del sys.modules[k]
        sys.modules.update(saved)


make_data = harness.multiclass_predictions


def cases(quick):
    if quick:
        return [
            {"name": "classwise_k100", "n": 5_000, "k": 100},
            {"name": "confidence_k10", "n": 20_000, "k": 10},
        ]
    return [
        {"name": "classwise_k100", "n": 1_000_000, "k": 100},
        {"name": "confidence_k10", "n": 1_000_000, "k": 10},
        {"name": "confidence_k10", "n": 10_000_000, "k": 10},
    ]


_FRAMES = {}


def as_frame(P):
    """``P`` as a pandas DataFrame, made once per array (its values are Fortran-ordered)."""
    import pandas as pd

    key = id(P)
    if key not in _FRAMES:
        _FRAMES.clear()
        _FRAMES[key] = (P, pd.DataFrame(P))
    return _FRAMES[key][1]


def functions(case, netcal_ece):
    """Name -> callable(y, P) for one case; the floors first."""
    labels = np.arange(case["k"])
    if case["name"] == "classwise_k100":
        return {
            "floor_np_sort": lambda y, P: np.sort(P),
            "floor_np_sort_axis0": lambda y, P: np.sort(P, axis=0),
            "floor_np_bincount": lambda y, P: np.bincount(
                (np.arange(P.size) % 1500), weights=P.ravel(), minlength=1500
            ),
            "skcal_classwise_lince": lambda y, P: classwise_lince(y, P, labels=labels),
            "skcal_classwise_lince_numpy_path": lambda y, P: classwise_lince_numpy_path(y, P, labels),
            "skcal_classwise_lince_dataframe": lambda y, P: classwise_lince(y, as_frame(P), labels=labels),
        }
    out = {
        "floor_np_sort": lambda y, P: np.sort(P.max(axis=1)),
        "floor_np_bincount": lambda y, P: np.bincount(
            np.minimum((P.max(axis=1) * 15).astype(np.intp), 14), weights=P[:, 0], minlength=15
        ),
        "skcal_truthful_conf_ce_quantile": lambda y, P: truthful_conf_ce(y, P, labels=labels),
        "skcal_truthful_conf_ce_uniform": lambda y, P: truthful_conf_ce(
            y, P, labels=labels, strategy="uniform"
        ),
        "skcal_conf_ece_uniform": lambda y, P: conf_ece(y, P, labels=labels, strategy="uniform"),
    }
    if netcal_ece is not None:
        ece = netcal_ece(bins=15)
        out["netcal_ECE_15"] = lambda y, P: ece.measure(P, y)
    return out


def time_case(case, netcal_ece, rounds):
    y, P = make_data(case["n"], case["k"])
    funcs = functions(case, netcal_ece)
    first_call = {}
    if "skcal_classwise_lince" in funcs:  # numba import + kernel load (or compile), once
        t0 = time.perf_counter()
        funcs["skcal_classwise_lince"](y, P)
        first_call["skcal_classwise_lince"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        funcs["skcal_classwise_lince_dataframe"](y, P)  # the column kernel; makes the frame
        first_call["skcal_classwise_lince_dataframe_incl_frame"] = time.perf_counter() - t0
    timings = harness.time_rotated(funcs, y, P, rounds=rounds)
    return {
        **case,
        "input_bytes": int(P.nbytes + y.nbytes),
        "times_s": timings.times,
        "median_s": timings.median,
        "values": timings.values,
        "first_call_s": first_call,
    }


def kernel_breakdown(case, repeat=3):
    """Min-of-``repeat`` times of the compiled kernel's passes on the case's data (or None)."""
    kernel = _truthful.compiled("classwise")
    if kernel is None:
        return None
    y, P = make_data(case["n"], case["k"])
    codes = y.astype(np.intp)
    n, k = P.shape
    n_bins = 15

    def best(fn):
        return harness.best_of(fn, repeat)

    t_hist, (counts, _, _) = best(lambda: kernel.histogram(P))
    n_edge, members = kernel._count_edge_cells(counts, n, n_bins)
    dtype = np.int16 if max(n_bins, n_edge) <= np.iinfo(np.int16).max else np.int32
    table = np.empty((k, kernel.N_CELLS), dtype=dtype)
    column, below = np.empty(n_edge, np.int64), np.empty(n_edge, np.int64)
    offsets = np.empty(n_edge + 1, np.int64)
    t_tables, _ = best(lambda: kernel._fill_tables(counts, n, n_bins, table, column, below, offsets))
    t_scatter, (sums, labels, values, is_label, _) = best(
        lambda: kernel._scatter(P, codes, table, offsets, n_bins)
    )
    t_resolve, _ = best(
        lambda: kernel._resolve(
            sums.copy(), labels.copy(), values, is_label, offsets, column, below, n, n_bins
        )
    )
    t_sort, _ = best(lambda: np.sort(P))
    return {
        "np_sort_s": t_sort,
        "pass1_histogram_s": t_hist,
        "tables_s": t_tables,
        "pass2_scatter_s": t_scatter,
        "boundary_sorts_s": t_resolve,
        "boundary_cells": int(n_edge),
        "boundary_members": int(members),
        "boundary_member_fraction": members / P.size,
        "repeat": repeat,
    }


def memory_of(case, name):
    """Peak traced allocation and peak RSS growth (bytes) of one call, in a fresh subprocess."""
    out = harness.run_module(__file__, "--_memory", json.dumps({"case": case, "name": name}))
    traced, rss = out.strip().splitlines()[-1].split()
    return int(traced), int(rss)


def _memory_child(spec):
    case, name = spec["case"], spec["name"]
    netcal_ece = load_netcal_ece() if name.startswith("netcal") else None
    y, P = make_data(case["n"], case["k"])
    fn = functions(case, netcal_ece)[name]
    if name.endswith("_dataframe"):
        as_frame(P)  # the frame is input, made before the measurement
    rss0 = harness.reset_peak_rss()
    peak = harness.traced_peak(fn, y, P)
    rss1 = harness.status_kib("VmHWM")
    print(peak, -1 if rss0 is None or rss1 is None else (rss1 - rss0) * 1024)


def summarize(rows):
    summary = {}
    for row in rows:
        med = row["median_s"]
        key = f"{row['name']}_n{row['n']}"
        if row["name"] == "classwise_k100":
            s = med["skcal_classwise_lince"]
            s_np = med["skcal_classwise_lince_numpy_path"]
            v = row["values"]
            summary[key] = {
                "compiled_kernel": kernel_available(),
                "classwise_lince_over_np_sort": s / med["floor_np_sort"],
                "classwise_lince_over_np_sort_axis0": s / med["floor_np_sort_axis0"],
                "classwise_lince_over_np_bincount": s / med["floor_np_bincount"],
                "numpy_path_over_np_sort": s_np / med["floor_np_sort"],
                "dataframe_over_np_sort": med["skcal_classwise_lince_dataframe"] / med["floor_np_sort"],
                "numpy_path_over_kernel": s_np / s,
                "rel_diff_kernel_numpy_path": abs(
                    v["skcal_classwise_lince"] - v["skcal_classwise_lince_numpy_path"]
                )
                / abs(v["skcal_classwise_lince_numpy_path"]),
                "target_time": "classwise_lince <= 2x np.sort of the n x k array",
            }
        else:
            s = {k: v for k, v in med.items() if k.startswith("skcal")}
            d = {f"{k}_over_np_sort": v / med["floor_np_sort"] for k, v in s.items()}
            if "netcal_ECE_15" in med:
                d.update({f"netcal_ECE_over_{k}": med["netcal_ECE_15"] / v for k, v in s.items()})
                d["abs_conf_ece_uniform_minus_netcal"] = abs(
                    row["values"]["skcal_conf_ece_uniform"] - row["values"]["netcal_ECE_15"]
                )
            d["target_time"] = "netcal_ECE / truthful_conf_ce >= 1 at n = 1e7"
            summary[key] = d
        if "peak_bytes" in row:
            summary[key]["peak_over_input"] = {
                k: v / row["input_bytes"] for k, v in row["peak_bytes"].items()
            }
            summary[key]["peak_rss_growth_over_input"] = {
                k: v / row["input_bytes"] for k, v in row["peak_rss_growth_bytes"].items()
            }
    return summary


def plot(rows, path):
    fig, axes = harness.subplots(1, len(rows), figsize=(5 * len(rows), 4), squeeze=False)
    for ax, row in zip(axes[0], rows, strict=True):
        names = list(row["median_s"])
        ax.barh(names, [row["median_s"][k] for k in names], color="tab:blue")
        ax.set_xlabel("median time (s)")
        ax.set_title(f"{row['name']}, n = {row['n']:.0e}, k = {row['k']}", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    harness.save_figure(fig, path, dpi=110)


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="small sizes, two rounds (smoke test)")
    ap.add_argument("--rounds", type=int, default=None, help="rotated rounds (default 5, quick 2)")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    ap.add_argument("--_memory", default=None, help=argparse.SUPPRESS)
    args = harness.parse_args(ap, argv)
    if args._memory is not None:
        _memory_child(json.loads(args._memory))
        return None
    clock = harness.Timer()
    rounds = args.rounds or (2 if args.quick else 5)
    netcal_ece = load_netcal_ece()
    rows = []
    for case in cases(args.quick):
        row = time_case(case, netcal_ece, rounds)
        if case["name"] == "classwise_k100":
            row["kernel_breakdown"] = kernel_breakdown(case)
        if not args.no_memory:
            mem = {
                name: memory_of(case, name)
                for name in row["median_s"]
                if name.startswith(("skcal", "netcal", "floor_np_sort"))
            }
            row["peak_bytes"] = {name: m[0] for name, m in mem.items()}
            row["peak_rss_growth_bytes"] = {name: m[1] for name, m in mem.items() if m[1] >= 0}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("name", "n", "k", "median_s")}), flush=True)
    result = {"benchmark": "speed_truthful", "rows": rows, "summary": summarize(rows)}
    config = {
        "quick": args.quick,
        "rounds": rounds,
        "memory": not args.no_memory,
        "cases": cases(args.quick),
        "n_bins": 15,
        "netcal": "1.4 (loaded without torch)" if netcal_ece is not None else "not installed",
        "classwise_compiled_kernel": kernel_available(),
    }
    result["provenance"] = harness.provenance(__file__, argv, config=config, clock=clock)
    stem = "speed_truthful_quick" if args.quick else "speed_truthful"
    harness.write_json(args.out / f"{stem}.json", result)
    plot(rows, args.out / f"{stem}.png")
    print(json.dumps(result["summary"], indent=2))
    return result


if __name__ == "__main__":
    main()
