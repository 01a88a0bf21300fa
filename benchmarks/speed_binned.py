"""Cutoff error and binned ECE against their floors, time and peak memory, in one run.

* ``cutoff_calibration_error`` against the floor ``o = np.argsort(p); np.cumsum((y - p)[o])``;
* ``binned_ece`` (11 uniform bins) against ``sklearn.calibration.calibration_curve`` (11 bins),
  whose memory it must not exceed.

Times are medians over ``--rounds`` rounds with the order of the functions rotated each round;
ratios are ratios of medians. Peak memory is the ``tracemalloc`` peak of one call (numpy reports
its buffers to tracemalloc), measured in separate, untimed calls.

Usage::

    nice python benchmarks/speed_binned.py            # n = 1e6, 1e7
    python benchmarks/speed_binned.py --quick         # smoke run: n = 1e4, 1e5

Writes ``speed_binned.json`` (with provenance) to ``--out`` (default benchmarks/results/).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import Clock, provenance, write_json  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402

from skcal.binned_ece import binned_ece  # noqa: E402
from skcal.cutoff import cutoff_calibration_error  # noqa: E402


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.1 * np.sin(6 * p), 0, 1)).astype(np.int64)
    return y, p


def _floor_cutoff(y, p):
    o = np.argsort(p)
    return np.cumsum((y - p)[o])


def _peak(fn, *args):
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def bench_cutoff_binned(ns=(10**6, 10**7), rounds=5):
    """Time and peak memory of the cutoff error and binned ECE against their floors.

    Parameters
    ----------
    ns : sequence of int, default=(10**6, 10**7)
        Sample sizes.
    rounds : int, default=5
        Rotated rounds per size; the medians are reported.

    Returns
    -------
    rows : list of dict
        Per size: median times, peak bytes, the ratios against the floors and the values.
    """
    funcs = {
        "floor_argsort_cumsum": _floor_cutoff,
        "skcal_cutoff": lambda y, p: cutoff_calibration_error(y, p),
        "sklearn_calibration_curve": lambda y, p: calibration_curve(y, p, n_bins=11),
        "skcal_binned_ece": lambda y, p: binned_ece(y, p, n_bins=11),
    }
    names = list(funcs)
    rows = []
    for n in ns:
        y, p = make_data(n)
        times = {k: [] for k in names}
        for r in range(rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                t0 = time.perf_counter()
                funcs[name](y, p)
                times[name].append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) for k, v in times.items()}
        peak = {k: _peak(funcs[k], y, p) for k in names}
        rows.append(
            {
                "n": int(n),
                "input_bytes": int(y.nbytes + p.nbytes),
                "median_s": med,
                "times_s": times,
                "peak_bytes": peak,
                "cutoff_time_over_floor": med["skcal_cutoff"] / med["floor_argsort_cumsum"],
                "cutoff_peak_over_floor": peak["skcal_cutoff"] / peak["floor_argsort_cumsum"],
                "binned_ece_time_over_sklearn": med["skcal_binned_ece"] / med["sklearn_calibration_curve"],
                "binned_ece_peak_over_sklearn": peak["skcal_binned_ece"] / peak["sklearn_calibration_curve"],
                "values": {"cutoff": cutoff_calibration_error(y, p), "binned_ece": binned_ece(y, p)},
            }
        )
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1e4, 1e5 and two rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args(argv)
    clock = Clock()
    ns = (10**4, 10**5) if args.quick else (10**6, 10**7)
    rounds = args.rounds or (2 if args.quick else 5)
    rows = bench_cutoff_binned(ns, rounds)
    config = {"quick": args.quick, "ns": list(ns), "rounds": rounds, "n_bins": 11}
    result = {
        "benchmark": "speed_binned",
        "rows": rows,
        "provenance": provenance(__file__, argv, config=config, clock=clock),
    }
    stem = "speed_binned_quick" if args.quick else "speed_binned"
    write_json(args.out / f"{stem}.json", result)
    for row in rows:
        print(json.dumps({k: row[k] for k in row if k.endswith(("over_floor", "over_sklearn")) or k == "n"}))
    return result


if __name__ == "__main__":
    main()
