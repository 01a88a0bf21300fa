"""Passes, time and state size of the exact quantile bins over chunks (skcal.stats.QuantileSelector).

For each case the rows are fed in chunks (``--chunk`` rows) through the passes of
:class:`skcal.stats.QuantileSelector` (the histogram, then the edge-cell passes), then the main
pass of the measure's statistics with the exact bins; the value is compared with the in-memory
function on all rows (which must agree to relative 1e-12) and the edges with ``np.percentile``
(bitwise). Reported per case: the number of extra passes, the time of each pass, the size of
each pass's merged state (the bytes of its arrays; a chunk's state is at most this), the main
pass's time and the in-memory function's time. One process, one thread; timings are single
runs (``nice`` on a shared machine: read them as rough).

Cases: binary predictions (``binned_ece``, 11 quantile bins) uniform, skewed (Beta(0.2, 3)) and
tied (5 distinct values); the truthful measures (15 quantile bins) on the softmax of Gaussian
logits (``truthful_conf_ce``, ``classwise_lince``) and on probabilities rounded to 0.1 (heavy ties
split by row index).

Usage (from the repository root)::

    nice python -m benchmarks.quantile_passes             # n = 1e7 binary, 1e6 x 10 multiclass
    python -m benchmarks.quantile_passes --quick          # smoke run

Writes ``quantile_passes.json`` (``quantile_passes_quick.json`` with ``--quick``) to ``--out``, with
provenance.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks import _harness as harness
from skcal.binned_ece import binned_ece
from skcal.stats import QuantileSelector
from skcal.truthful import classwise_lince, truthful_conf_ce


def _softmax(rng, n, k, scale=3.0):
    L = rng.normal(size=(n, k)) * scale
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P


def cases(n_binary, n_multi, k, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n_binary)
    yield "binary_uniform", "percentile", (rng.uniform(size=n_binary) < p).astype(np.int8), p
    p = rng.beta(0.2, 3.0, n_binary)
    yield "binary_skewed", "percentile", (rng.uniform(size=n_binary) < p).astype(np.int8), p
    p = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0], n_binary)
    yield "binary_tied", "percentile", (rng.uniform(size=n_binary) < p).astype(np.int8), p
    P = _softmax(rng, n_multi, k)
    y = rng.integers(0, k, n_multi)
    yield "softmax_top_label", "top_label", y, P
    yield "softmax_classwise", "classwise", y, P
    R = np.round(P, 1)
    R[:, 0] += 1.0 - R.sum(axis=1)
    R = np.clip(R, 0.0, 1.0)
    R /= R.sum(axis=1, keepdims=True)
    yield "rounded_top_label", "top_label", y, R
    yield "rounded_classwise", "classwise", y, R


def run_case(name, kind, y, P, chunk):
    n = len(y)
    labels = None if kind == "percentile" else list(range(P.shape[1]))
    n_bins = 11 if kind == "percentile" else 15
    sel = QuantileSelector(kind=kind, n_bins=n_bins, labels=labels)
    passes = []
    while (st := sel.next_statistics()) is not None:
        t0 = time.perf_counter()
        for a in range(0, n, chunk):
            st.update(y[a : a + chunk], P[a : a + chunk], row_offset=a)
        sel.advance(st)
        passes.append(
            {
                "statistics": type(st).__name__,
                "seconds": time.perf_counter() - t0,
                "state_bytes": int(sum(v.nbytes for v in st.stats_.values())),
            }
        )
    main = sel.make_statistics()
    t0 = time.perf_counter()
    for a in range(0, n, chunk):
        if kind == "percentile":
            main.update(y[a : a + chunk], P[a : a + chunk])
        else:
            main.update(y[a : a + chunk], P[a : a + chunk], row_offset=a)
    value = main.compute()
    t_main = time.perf_counter() - t0
    f = {"percentile": lambda: binned_ece(y, P, n_bins=11, strategy="quantile"),
         "top_label": lambda: truthful_conf_ce(y, P),
         "classwise": lambda: classwise_lince(y, P)}[kind]
    t0 = time.perf_counter()
    ref = f()
    t_mem = time.perf_counter() - t0
    row = {
        "name": name,
        "kind": kind,
        "n": n,
        "columns": 1 if P.ndim == 1 else P.shape[1],
        "extra_passes": len(passes),
        "passes": passes,
        "main_pass_seconds": t_main,
        "in_memory_seconds": t_mem,
        "value": value,
        "in_memory_value": ref,
        "relative_difference": abs(value - ref) / abs(ref) if ref else abs(value - ref),
    }
    if kind == "percentile":
        edges = np.percentile(P, np.linspace(0, 1, n_bins + 1) * 100)
        row["edges_bitwise_equal_np_percentile"] = bool(sel.result().tobytes() == edges.tobytes())
        # the same chunked sums with the in-memory edges: any difference from the in-memory value
        # is the summation order of the chunks, not the bins
        same = type(main)(**{**main.get_params(), "edges": edges})
        for a in range(0, n, chunk):
            same.update(y[a : a + chunk], P[a : a + chunk])
        row["chunked_with_in_memory_edges_value"] = same.compute()
    return row


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="small n (smoke run)")
    ap.add_argument("--chunk", type=int, default=1 << 20, help="rows per chunk")
    args = harness.parse_args(ap, argv)
    clock = harness.Timer()
    n_binary, n_multi, k = (20000, 5000, 4) if args.quick else (10**7, 10**6, 10)
    chunk = min(args.chunk, 3001) if args.quick else args.chunk
    rows = []
    for name, kind, y, P in cases(n_binary, n_multi, k):
        row = run_case(name, kind, y, P, chunk)
        rows.append(row)
        print(
            f"{name:20s} n={row['n']:>9d} passes={row['extra_passes']} "
            f"pass_s={[round(p['seconds'], 2) for p in row['passes']]} "
            f"state_B={[p['state_bytes'] for p in row['passes']]} main_s={row['main_pass_seconds']:.2f} "
            f"in_memory_s={row['in_memory_seconds']:.2f} rel_diff={row['relative_difference']:.1e}"
        )
    result = {"rows": rows}
    stem = "quantile_passes_quick" if args.quick else "quantile_passes"
    config = harness.args_config(args, chunk=chunk)
    harness.write_result(__file__, argv, args.out / f"{stem}.json", result, config=config, clock=clock)
    return result


if __name__ == "__main__":
    main()
