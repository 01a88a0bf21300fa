"""Cutoff error and binned ECE against their floors, time and peak memory, in one run.

* ``cutoff_calibration_error`` against the floor ``o = np.argsort(p); np.cumsum((y - p)[o])``;
* ``binned_ece`` (11 uniform bins) against ``sklearn.calibration.calibration_curve`` (11 bins),
  whose memory it must not exceed.

Times are medians over ``--rounds`` rounds with the order of the functions rotated each round
(``time_rotated`` of the harness); ratios are ratios of medians. Peak memory is the
``tracemalloc`` peak of one call (numpy reports its buffers to tracemalloc), measured in
separate, untimed calls. The data: ``binary_predictions`` of the harness.

Usage (from the repository root)::

    nice python -m benchmarks.speed_binned            # n = 1e6, 1e7
    python -m benchmarks.speed_binned --quick         # smoke run: n = 1e4, 1e5

Writes ``speed_binned.json`` (``speed_binned_quick.json`` with ``--quick``), with provenance.
"""

from __future__ import annotations

import json

import numpy as np
from sklearn.calibration import calibration_curve

from benchmarks import _harness as harness
from skcal.binned_ece import binned_ece
from skcal.cutoff import cutoff_calibration_error


def _floor_cutoff(y, p):
    o = np.argsort(p)
    return np.cumsum((y - p)[o])


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
    rows = []
    for n in ns:
        y, p = harness.binary_predictions(n)
        timings = harness.time_rotated(funcs, y, p, rounds=rounds)
        ratio = timings.ratio
        peak = {k: harness.traced_peak(funcs[k], y, p) for k in funcs}
        rows.append(
            {
                "n": int(n),
                "input_bytes": int(y.nbytes + p.nbytes),
                "median_s": timings.median,
                "times_s": timings.times,
                "peak_bytes": peak,
                "cutoff_time_over_floor": ratio("skcal_cutoff", "floor_argsort_cumsum"),
                "cutoff_peak_over_floor": peak["skcal_cutoff"] / peak["floor_argsort_cumsum"],
                "binned_ece_time_over_sklearn": ratio("skcal_binned_ece", "sklearn_calibration_curve"),
                "binned_ece_peak_over_sklearn": peak["skcal_binned_ece"] / peak["sklearn_calibration_curve"],
                "values": {"cutoff": cutoff_calibration_error(y, p), "binned_ece": binned_ece(y, p)},
            }
        )
    return rows


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="n = 1e4, 1e5 and two rounds")
    ap.add_argument("--rounds", type=int, default=None, help="rotated rounds (default 5, quick 2)")
    args = harness.parse_args(ap, argv)
    clock = harness.Timer()
    ns = (10**4, 10**5) if args.quick else (10**6, 10**7)
    rounds = args.rounds or (2 if args.quick else 5)
    rows = bench_cutoff_binned(ns, rounds)
    config = {"quick": args.quick, "ns": list(ns), "rounds": rounds, "n_bins": 11}
    config["data"] = harness.BINARY_PREDICTIONS
    prov = harness.provenance(__file__, argv, config=config, clock=clock)
    stem = "speed_binned_quick" if args.quick else "speed_binned"
    result = {"benchmark": "speed_binned", "rows": rows, "provenance": prov}
    harness.write_json(args.out / f"{stem}.json", result)
    for row in rows:
        print(json.dumps({k: row[k] for k in row if k.endswith(("over_floor", "over_sklearn")) or k == "n"}))
    return result


if __name__ == "__main__":
    main()
