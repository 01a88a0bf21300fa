"""Scaling skcal past one machine: the Dask path against in-memory numpy.

Predictions are generated *inside the graph*, one block of ``--chunk-rows`` rows per task, from a
seed per block, so no process ever holds all rows; the in-memory reference regenerates the same
blocks with numpy and concatenates them. The block generators and the functions run on the
workers are defined here, not in the harness: a worker needs skcal importable, not this
repository's ``benchmarks`` package. Bundles:

* ``first``: every binary first-order measure of ``skcal.dask.MEASURES`` (:data:`FIRST_ORDER`):
  Brier, log loss, accuracy, SCDL, smECE, the binned family (ECE on 11 bins; MCE, RMS, ACE,
  debiased l2 on 15 uniform bins), the exact cutoff and KS errors, the cutoff error on its
  65,536-cell grid (checked against the exact one and its bound), and the truthful ConfCE^corr,
  ConfCE, ConfECE, classwise LinCE and ECE (binary 1-D ``p`` with ``labels=[0, 1]``, uniform bins);
* ``first-fixed``: the same without the exact cutoff / KS statistics, whose state holds every
  distinct prediction (24 bytes a row for continuous ``p``: 24 GB at 1e9 rows); every other
  state has a fixed size, so this is the bundle for 1e8 / 1e9 rows;
* ``ce2``: the polynomial CE2 estimator at tensor degree ``--degree`` (two passes);
* ``all``: ``first`` then ``ce2``.

For each it records (a) equality with the in-memory public functions (relative difference per
measure; the target is 1e-10; ``cutoff_grid`` by ``grid <= exact <= grid + bound``), (b) CPU
seconds of the dask path (``time.process_time`` in every worker before and after, minus the
generation measured alone, plus the client process, which runs the LocalCluster scheduler, takes
the root states and computes the measures from them) and of three in-memory references: the
public functions, skcal's statistics objects with one ``update`` on all rows per measure, and
the same with one object per distinct state (``shared``: measures that differ only in
compute-only parameters, e.g. the binned family on the same bins, share one update, as
``evaluate`` shares one state), hence the ratios of rows per CPU-second; ``--repeat`` repeats
the timings (medians are reported; the machine is shared, so single runs drift with its load,
recorded as ``os.getloadavg()`` before and after every run); and (c) the peak resident memory
of every worker (``ru_maxrss``). ``--trim-threshold`` sets ``MALLOC_TRIM_THRESHOLD_`` for the
workers (distributed's default is 65536; ``0`` leaves glibc's own default), to measure how the
large temporary Vandermonde blocks of the CE2 pass interact with the allocator.
``--no-profile`` switches off distributed's statistical profiler in the workers.

Usage (from the repository root)::

    python -m benchmarks.scale_dask --quick                       # smoke run: 1e5 rows, sync scheduler
    nice python -m benchmarks.scale_dask --rows 1e7 --bundle first --repeat 3
    nice python -m benchmarks.scale_dask --rows 1e8 --no-reference --bundle first-fixed   # memory flat?
    nice python -m benchmarks.scale_dask --rows 1e9 --no-reference --bundle first-fixed   # minutes
    nice python -m benchmarks.scale_dask --rows 1e8 --no-reference --bundle ce2
    python -m benchmarks.scale_dask --rows 1e9 --scheduler tcp://host:8786 --no-reference --bundle first-fixed

On a real cluster pass ``--scheduler`` (the address of a running ``dask scheduler``); the
workers need skcal importable. Writes ``scale_dask.json`` (appending one record per run) to
``--out``.
"""

from __future__ import annotations

import json
import os
import resource
import time

import dask
import dask.array as da
import numpy as np

from benchmarks import _harness as harness
from skcal.dask import evaluate


# ---------------------------------------------------------------------------------------------
# data, generated per block from a seed
# ---------------------------------------------------------------------------------------------
def first_order_block(i, rows, seed):
    """Binary labels and miscalibrated probabilities of block ``i`` (as ``binary_predictions``)."""
    rng = np.random.default_rng([seed, i])
    p = rng.beta(2, 2, size=rows)
    y = (rng.uniform(size=rows) < np.clip(p + 0.1 * np.sin(6 * p), 0, 1)).astype(np.int64)
    return y, p


def second_order_block(i, rows, seed):
    """Two snapshots and second-order scores ``(m, sigma2)`` of block ``i``."""
    rng = np.random.default_rng([seed, i])
    m = rng.uniform(0, 1, rows)
    s2 = rng.uniform(0, 0.25, rows) * 4 * m * (1 - m)
    f = np.clip(m + rng.normal(0, 0.1, rows), 0, 1)
    Y = (rng.uniform(size=(rows, 2)) < f[:, None]).astype(np.float64)
    return Y, np.column_stack([m, s2])


def block_sizes(n_rows, chunk_rows):
    n_blocks = -(-n_rows // chunk_rows)
    sizes = [chunk_rows] * n_blocks
    sizes[-1] = n_rows - chunk_rows * (n_blocks - 1)
    return sizes


def dask_inputs(bundle, n_rows, chunk_rows, seed):
    """Two dask arrays whose blocks are made by one generating task each."""
    gen = generator(bundle)
    ys, ps = [], []
    for i, rows in enumerate(block_sizes(n_rows, chunk_rows)):
        t = dask.delayed(gen, pure=True, nout=2)(i, rows, seed)
        if bundle != "ce2":
            ys.append(da.from_delayed(t[0], shape=(rows,), dtype=np.int64))
            ps.append(da.from_delayed(t[1], shape=(rows,), dtype=np.float64))
        else:
            ys.append(da.from_delayed(t[0], shape=(rows, 2), dtype=np.float64))
            ps.append(da.from_delayed(t[1], shape=(rows, 2), dtype=np.float64))
    return da.concatenate(ys), da.concatenate(ps)


def numpy_inputs(bundle, n_rows, chunk_rows, seed):
    gen = generator(bundle)
    parts = [gen(i, rows, seed) for i, rows in enumerate(block_sizes(n_rows, chunk_rows))]
    return np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])


#: Every binary first-order measure of ``skcal.dask.MEASURES``, in the order of the tables.
FIRST_ORDER = [
    "brier",
    "log_loss",
    "accuracy",
    "scdl",
    "smooth_ece",
    "binned_ece",
    "max_calibration_error",
    "rms_calibration_error",
    "average_calibration_error",
    "debiased_l2_calibration_error",
    "cutoff",
    "ks_calibration_error",
    "cutoff_grid",
    "truthful_conf_ce",
    "conf_ce",
    "conf_ece",
    "classwise_lince",
    "classwise_ece",
]
#: The exact cutoff / KS statistics hold every distinct prediction (every row for continuous
#: p: 24 bytes a row, 24 GB at 1e9 rows); ``first-fixed`` leaves them out (fixed-size states
#: only) and keeps the cutoff error on its 65,536-cell grid with its bound.
GROWING = ("cutoff", "ks_calibration_error")
BINARY_LABELS = [0, 1]  # the truthful statistics take binary 1-D p with labels=[0, 1]


def generator(bundle):
    return second_order_block if bundle == "ce2" else first_order_block


#: Measures whose in-memory default is quantile bins (and so skcal.dask's, by extra passes):
#: the bundle bins them uniformly, in the one pass, as the in-memory references below do.
UNIFORM = (
    "debiased_l2_calibration_error",
    "truthful_conf_ce",
    "conf_ce",
    "conf_ece",
    "classwise_lince",
    "classwise_ece",
)


def measures(bundle, degree):
    if bundle == "ce2":
        return [("ce2", {"degree": degree, "alpha": 1e-6})]
    names = FIRST_ORDER if bundle == "first" else [m for m in FIRST_ORDER if m not in GROWING]
    return [(m, {"strategy": "uniform"}) if m in UNIFORM else m for m in names]


def in_memory(bundle, y, p, degree):
    """The in-memory public function of every measure of the bundle (the reference values)."""
    if bundle == "ce2":
        from skcal.ce2 import ce2_score
        from skcal.votes import Snapshots

        c0 = time.process_time()
        out = {"ce2": float(ce2_score(Snapshots(y), p, degree=degree, alpha=1e-6))}
        return out, {"ce2": time.process_time() - c0}
    from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

    from skcal import truthful
    from skcal.binned_ece import binned_ece
    from skcal.binned_measures import (
        average_calibration_error,
        debiased_l2_calibration_error,
        max_calibration_error,
        rms_calibration_error,
    )
    from skcal.cutoff import cutoff_calibration_error
    from skcal.ks_calibration_error import ks_calibration_error
    from skcal.scdl import scdl_score
    from skcal.smooth_ece import smooth_ece

    tr = {"labels": BINARY_LABELS, "strategy": "uniform"}  # skcal.dask bins uniformly (or given edges)
    funcs = {
        "brier": lambda: brier_score_loss(y, p),
        "log_loss": lambda: log_loss(y, p),
        "accuracy": lambda: accuracy_score(y, p > 0.5),
        "scdl": lambda: scdl_score(y, p),
        "smooth_ece": lambda: smooth_ece(y, p),
        "binned_ece": lambda: binned_ece(y, p, n_bins=11),
        "max_calibration_error": lambda: max_calibration_error(y, p),
        "rms_calibration_error": lambda: rms_calibration_error(y, p),
        "average_calibration_error": lambda: average_calibration_error(y, p),
        "debiased_l2_calibration_error": lambda: debiased_l2_calibration_error(y, p, strategy="uniform"),
        "cutoff": lambda: cutoff_calibration_error(y, p),
        "ks_calibration_error": lambda: ks_calibration_error(y, p),
        # cutoff_grid is checked against the exact cutoff error and its bound (see check_values)
        "truthful_conf_ce": lambda: truthful.truthful_conf_ce(y, p, **tr),
        "conf_ce": lambda: truthful.conf_ce(y, p, **tr),
        "conf_ece": lambda: truthful.conf_ece(y, p, **tr),
        "classwise_lince": lambda: truthful.classwise_lince(y, p, **tr),
        "classwise_ece": lambda: truthful.classwise_ece(y, p, **tr),
    }
    out, cpu = {}, {}
    for item in measures(bundle, degree):
        name = item if isinstance(item, str) else item[0]
        if name in funcs:
            c0 = time.process_time()
            out[name] = float(funcs[name]())
            cpu[name] = time.process_time() - c0
    return out, cpu


def _label_kwargs(spec):
    return {"labels": BINARY_LABELS} if "labels" in spec.label_args else {}


def in_memory_statistics(bundle, y, p, degree, shared=False):
    """The same measures through skcal's statistics objects, one update on all rows (numpy).

    ``shared=False``: one object per measure. ``shared=True``: measures whose statistics differ
    only in compute-only parameters (``MeasureSpec.compute_params``, e.g. the binned family on
    the same bins) share one update, as ``skcal.dask.evaluate`` shares one state.
    """
    from skcal.dask import MEASURES
    from skcal.votes import Snapshots

    if np.ndim(y) == 2:
        y = Snapshots(y)  # two votes a row, said (as skcal.dask.evaluate reads them)
    out, cpu, done = {}, {}, {}
    for item in measures(bundle, degree):
        name, kwargs = (item, {}) if isinstance(item, str) else item
        kwargs = {k: v for k, v in kwargs.items() if k != "strategy"}  # uniform: the statistics' bins
        spec = MEASURES[name]
        c0 = time.process_time()
        st = spec.make(**_label_kwargs(spec), **kwargs)
        key = None
        if shared:
            params = {k: v for k, v in st.get_params().items() if k not in spec.compute_params}
            key = repr((spec.statistics, sorted(params.items())))
        if key is not None and key in done:
            state = done[key].get_state()
            state["params"] = {**state["params"], **{k: st.get_params()[k] for k in spec.compute_params}}
            from skcal.stats import from_state

            st = from_state(state)
        else:
            st.update(y, p)
            if hasattr(st, "plug_in"):
                st = st.plug_in().update(y, p)
            if key is not None:
                done[key] = st
        out[name] = float(st.compute())
        cpu[name] = time.process_time() - c0
    return out, cpu


def check_values(values, ref, stats=None):
    """Relative difference of every measure from its in-memory function; cutoff_grid by its bound."""
    rel = {k: abs(values[k] - ref[k]) / max(abs(ref[k]), 1e-300) for k in ref if k in values}
    out = {"rel_diff": rel, "max_rel_diff": max(rel.values()) if rel else None}
    if "cutoff_grid" in values and "cutoff" in ref and stats is not None:
        bound = stats["cutoff_grid"].bound()
        exact, grid = ref["cutoff"], values["cutoff_grid"]
        out["cutoff_grid_bound"] = bound
        out["cutoff_grid_gap"] = exact - grid
        out["cutoff_grid_within_bound"] = bool(grid <= exact + 1e-12 and exact <= grid + bound + 1e-12)
    return out


# ---------------------------------------------------------------------------------------------
# measurement helpers
# ---------------------------------------------------------------------------------------------
def _worker_cpu():
    return time.process_time()


def _install_task_timer():
    """On a worker: time skcal.dask's leaf and merge tasks by their own thread's CPU time.

    The graph refers to the functions by name, so the worker runs the wrapped ones; what the
    worker's CPU time holds beyond them (and the generation) is the Dask runtime: event loop,
    heartbeats, transfers, the statistical profiler.
    """
    import skcal.dask as sd

    if getattr(sd, "_task_cpu", None) is not None:
        return True
    sd._task_cpu = {"leaf": 0.0, "merge": 0.0}

    def timed(func, key):
        def wrapper(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                sd._task_cpu[key] += time.thread_time() - t0

        return wrapper

    sd._partition_states = timed(sd._partition_states, "leaf")
    sd._merge_states = timed(sd._merge_states, "merge")
    return True


def _task_cpu():
    import skcal.dask as sd

    return dict(getattr(sd, "_task_cpu", None) or {"leaf": 0.0, "merge": 0.0})


def _worker_peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def dask_run(bundle, n_rows, chunk_rows, args, client, scheduler):
    """One timed ``evaluate`` on the dask path, then the generation alone, in CPU seconds."""
    one = {"loadavg_before": list(os.getloadavg())}
    y, p = dask_inputs(bundle, n_rows, chunk_rows, args.seed)
    task0 = client.run(_task_cpu) if client else None
    cpu0 = client.run(_worker_cpu) if client else {"main": time.process_time()}
    c0, t0 = time.process_time(), time.perf_counter()
    values, stats = evaluate(
        y,
        p,
        measures(bundle, args.degree),
        scheduler=scheduler,
        return_statistics=True,
        **({} if bundle == "ce2" else {"labels": BINARY_LABELS}),
    )
    one["dask_wall_s"] = time.perf_counter() - t0
    # the client process: graph, scheduler (LocalCluster runs it here), the root states' transfer
    # and the compute() at the root (the SCDL / smECE searches)
    one["dask_client_cpu_s"] = time.process_time() - c0
    cpu1 = client.run(_worker_cpu) if client else {"main": time.process_time()}
    one["dask_cpu_s"] = float(sum(cpu1[k] - cpu0[k] for k in cpu1))
    if client:
        task1 = client.run(_task_cpu)
        for key in ("leaf", "merge"):
            one[f"dask_task_cpu_s_{key}"] = float(sum(task1[w][key] - task0[w][key] for w in task1))
        one["peak_rss_mib_per_worker"] = sorted(client.run(_worker_peak_mib).values())
    one["loadavg_after"] = list(os.getloadavg())
    # generation alone (the same graph reduced by a trivial sum), to separate its cost
    cpu0 = client.run(_worker_cpu) if client else {"main": time.process_time()}
    dask.compute(y.sum(), p.sum(), scheduler=scheduler)
    cpu1 = client.run(_worker_cpu) if client else {"main": time.process_time()}
    one["dask_generation_cpu_s"] = float(sum(cpu1[k] - cpu0[k] for k in cpu1))
    # the dask path generates the rows once per pass (CE2: two passes); numpy once. The
    # synchronous scheduler runs everything in this process: dask_cpu_s already holds the client.
    passes = 2 if bundle == "ce2" else 1
    client_cpu = one["dask_client_cpu_s"] if client else 0.0
    one["dask_net_cpu_s"] = one["dask_cpu_s"] - passes * one["dask_generation_cpu_s"] + client_cpu
    one["rows_per_cpu_s_dask"] = n_rows / one["dask_net_cpu_s"]
    one["values"], one["stats"] = values, stats
    return one


def run(args):
    n_rows, chunk_rows = int(float(args.rows)), int(float(args.chunk_rows))
    record = {
        "rows": n_rows,
        "chunk_rows": chunk_rows,
        "bundle": args.bundle,
        "degree": args.degree,
        "dask": dask.__version__,
    }
    client = cluster = None
    if args.quick:
        scheduler = "sync"
        record["scheduler"] = "sync"
    else:
        import distributed

        if args.trim_threshold is not None:
            key = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"
            dask.config.set({key: None if args.trim_threshold == 0 else int(args.trim_threshold)})
        if args.no_profile:
            dask.config.set({"distributed.worker.profile.enabled": False})
        record["worker_profiler"] = not args.no_profile
        if args.scheduler:
            client = distributed.Client(args.scheduler)
        else:
            cluster = distributed.LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(cluster)
        scheduler = None
        record["scheduler"] = args.scheduler or f"LocalCluster({args.workers} workers x 1 thread)"
        record["malloc_trim_threshold"] = dask.config.get(
            "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_", None
        )
        client.run(lambda: __import__("skcal.dask"))  # import cost outside the timings
        client.run(_install_task_timer)
        # what idle workers burn per wall-second (event loop, heartbeats, profiler): on a loaded
        # machine the timed runs take long in wall time, and this cost grows with it
        idle0 = client.run(_worker_cpu)
        time.sleep(5.0)
        idle1 = client.run(_worker_cpu)
        record["idle_worker_cpu_s_per_wall_s"] = float(sum(idle1[k] - idle0[k] for k in idle1)) / 5.0

    for bundle in ["first", "ce2"] if args.bundle == "all" else [args.bundle]:
        res = {"bundle": bundle, "measures": [m if isinstance(m, str) else m[0] for m in measures(bundle, 0)]}
        res["repeats"] = []
        for rep in range(args.repeat):
            one = dask_run(bundle, n_rows, chunk_rows, args, client, scheduler)
            values, stats = one.pop("values"), one.pop("stats")
            if rep == 0:
                res["dask_values"] = values
                if "cutoff_grid" in stats:
                    res["cutoff_grid_bound"] = stats["cutoff_grid"].bound()
            if args.reference:
                c0 = time.process_time()
                yn, pn = numpy_inputs(bundle, n_rows, chunk_rows, args.seed)
                one["numpy_generation_cpu_s"] = time.process_time() - c0
                if rep == 0:  # the public functions: once (the reference values)
                    c1 = time.process_time()
                    ref, ref_cpu = in_memory(bundle, yn, pn, args.degree)
                    res["numpy_cpu_s"] = time.process_time() - c1
                    res["numpy_cpu_s_per_measure"] = ref_cpu
                    res["numpy_values"] = ref
                    res.update(check_values(values, ref, stats))
                c2 = time.process_time()
                ref_stats, ref_stats_cpu = in_memory_statistics(bundle, yn, pn, args.degree)
                c3 = time.process_time()
                in_memory_statistics(bundle, yn, pn, args.degree, shared=True)
                c4 = time.process_time()
                del yn, pn
                one["numpy_statistics_cpu_s"] = c3 - c2
                one["numpy_shared_statistics_cpu_s"] = c4 - c3
                if rep == 0:
                    res["numpy_statistics_cpu_s_per_measure"] = ref_stats_cpu
                    res["numpy_statistics_values"] = ref_stats
                    res["max_rel_diff_vs_statistics"] = max(
                        abs(values[k] - ref_stats[k]) / max(abs(ref_stats[k]), 1e-300) for k in ref_stats
                    )
                d = one["dask_net_cpu_s"]
                one["dask_over_numpy_per_cpu_s"] = res["numpy_cpu_s"] / d
                one["dask_over_numpy_statistics_per_cpu_s"] = one["numpy_statistics_cpu_s"] / d
                one["dask_over_numpy_shared_statistics_per_cpu_s"] = one["numpy_shared_statistics_cpu_s"] / d
                if "dask_task_cpu_s_leaf" in one:
                    # skcal's own work in the leaf and merge tasks against the same work in memory
                    # (which also holds the compute, ~0.1 s at 1e7 rows): the rest of the gap is
                    # the Dask runtime (event loops, transfers, profiler) and the two workers
                    # sharing the machine's caches
                    tasks = one["dask_task_cpu_s_leaf"] + one["dask_task_cpu_s_merge"]
                    one["tasks_over_numpy_shared_statistics_per_cpu_s"] = (
                        one["numpy_shared_statistics_cpu_s"] / tasks
                    )
            print(json.dumps(one, default=float), flush=True)
            res["repeats"].append(one)
        # the medians over the repeats (the machine is shared: single runs drift with its load)
        for key in res["repeats"][0]:
            vals = [r[key] for r in res["repeats"] if isinstance(r.get(key), (int, float))]
            if vals and not key.startswith("loadavg"):
                res[key] = float(np.median(vals))
        res["peak_rss_mib_per_worker"] = res["repeats"][-1].get("peak_rss_mib_per_worker")
        res["rows_per_cpu_s_dask"] = n_rows / res["dask_net_cpu_s"]
        print(json.dumps(res, indent=1, default=float), flush=True)
        record[bundle] = res
    if client:
        client.close()
    if cluster:
        cluster.close()
    return record


def partial_fit_timing(degree, n_rows=20000, n_batches=4, seed=0):
    """Seconds per ``SecondOrderPlattCalibrator.partial_fit`` batch, then of the lazy solve."""
    from skcal.platt import SecondOrderPlattCalibrator
    from skcal.votes import Snapshots

    Y, S = second_order_block(0, n_rows, seed)
    cal = SecondOrderPlattCalibrator(degree=degree, alpha=1e-6)
    per_batch = []
    for part in np.array_split(np.arange(n_rows), n_batches):
        t0 = time.perf_counter()
        cal.partial_fit(S[part], Snapshots(Y[part]))
        per_batch.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    cal.transform(S[:10])
    out = {"degree": degree, "rows": n_rows, "batches": n_batches, "partial_fit_s": per_batch}
    out["first_transform_s"] = time.perf_counter() - t0
    print(json.dumps(out), flush=True)
    return out


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="1e5 rows on the synchronous scheduler", full_doc=True)
    ap.add_argument("--rows", default="1e7")
    ap.add_argument("--chunk-rows", default="1e6")
    ap.add_argument("--bundle", choices=["first", "first-fixed", "ce2", "all"], default="all")
    ap.add_argument("--degree", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", default=None, help="address of a running dask scheduler")
    ap.add_argument("--trim-threshold", type=int, default=None, help="MALLOC_TRIM_THRESHOLD_ (0: glibc's)")
    ap.add_argument("--no-reference", dest="reference", action="store_false", help="skip the numpy path")
    ap.add_argument("--no-profile", action="store_true", help="switch off the workers' statistical profiler")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="timed repeats (the medians are reported)")
    ap.add_argument(
        "--partial-fit",
        type=int,
        default=None,
        metavar="DEGREE",
        help="only time SecondOrderPlattCalibrator.partial_fit batches at this degree "
        "(writes scale_dask_partial_fit.json)",
    )
    args = harness.parse_args(ap, argv)
    if args.partial_fit is not None:
        clock = harness.Timer()
        record = partial_fit_timing(args.partial_fit)
        config = harness.args_config(args)
        record["provenance"] = harness.provenance(__file__, argv, config=config, clock=clock)
        path = args.out / "scale_dask_partial_fit.json"
        harness.write_json(path, record)
        print(f"wrote {path}")
        return record
    if args.quick:
        args.rows, args.chunk_rows = "1e5", "15000"
    clock = harness.Timer()
    record = run(args)
    record["provenance"] = harness.provenance(__file__, argv, config=harness.args_config(args), clock=clock)
    path = args.out / "scale_dask.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(record)
    harness.write_json(path, runs)  # one record per run, each with its own provenance block
    print(f"wrote {path}")
    return record


if __name__ == "__main__":
    main()
