"""The calibration report past memory: a parquet folder of N rows reported on a Dask LocalCluster.

The script writes a parquet folder of ``--rows`` rows (a label and 3 models' probabilities),
``--chunk-rows`` rows per file, generated one file at a time from a seed per file (no process
ever holds all rows), under ``--scratch`` (default: a fresh folder under /tmp, deleted at the
end unless ``--keep``). It then makes the default first-order report of the 3 models with
:func:`skcal.dask.calibration_report_dask` on a ``distributed.LocalCluster`` of ``--workers``
processes with one thread each and ``--memory-limit`` per worker (default 1 GiB), and records:

* the wall time of the report (and of the generation, apart), the number of passes over the
  data and of replicate blocks;
* the peak resident memory of every worker process, sampled every 0.1 s with psutil by a thread
  of the client (``peak_worker_rss_mib``), and each worker's ``ru_maxrss`` at the end (the peak
  over its lifetime, imports included); the client's own peak (it holds the sample of at most
  ``sample_rows`` rows for the calibration tests and figures, and the merged statistics);
* the report's table (values and intervals), its notes and verdict.

``--quick`` (1e5 rows, 25,000 per file, 20 replicates, 100 test resamples, the synchronous
scheduler, no cluster) is the CI smoke run: it also makes the in-memory report on the same rows
and records the largest relative difference of the table (values and intervals), which must be
below 1e-10.

Usage (from the repository root)::

    python -m benchmarks.report_dask --quick
    nice python -m benchmarks.report_dask --rows 1e6
    nice python -m benchmarks.report_dask --rows 1e7
    nice python -m benchmarks.report_dask --rows 1e8          # about 10x the 1e7 run

The parquet path is what the CLI reads: each file is a partition, read by the task that folds
it, and above ``exact_rows`` each worker folds every file for its own block of replicates.
``--input dataframe`` passes ``dask.dataframe.read_parquet(folder)`` instead: every pass then
computes the frame's partitions as tasks of their own, which the scheduler could run ahead of the
chains that fold them; the record's peak worker memory shows whether it does::

    nice python -m benchmarks.report_dask --rows 1e7 --input dataframe

Each run appends one record (with its provenance) to ``report_dask.json`` in ``--out``.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import _harness as harness

MODELS = ("honest", "overconfident", "shifted")


def chunk(seed, k, rows):
    """File ``k``'s rows: labels and the three models' probabilities (seeded by ``(seed, k)``)."""
    rng = np.random.default_rng([seed, k])
    logit = rng.normal(0.0, 1.5, size=rows)
    p = 1.0 / (1.0 + np.exp(-logit))
    y = (rng.uniform(size=rows) < p).astype(np.int8)
    over = 1.0 / (1.0 + np.exp(-1.6 * logit))
    shifted = np.clip(p + 0.03, 0.0, 1.0)
    return pd.DataFrame({"y": y, "honest": p, "overconfident": over, "shifted": shifted})


def write_folder(folder, rows, chunk_rows, seed):
    """Write the parquet folder one file at a time; return the number of files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    k = 0
    for start in range(0, rows, chunk_rows):
        frame = chunk(seed, k, min(chunk_rows, rows - start))
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / f"part-{k:05d}.parquet")
        k += 1
    return k


class RssSampler:
    """Peak resident memory of some processes, sampled by a thread every ``interval`` seconds."""

    def __init__(self, pids, interval=0.1):
        import psutil

        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.peak = dict.fromkeys(pids, 0)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for pid, proc in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], proc.memory_info().rss)
                except Exception:  # a worker restarted or gone: its peak so far stays
                    pass
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _worker_maxrss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def table_record(report):
    t = report.table
    out = {}
    for model in report.model_names:
        out[model] = {
            name: [float(t.loc[model, (name, f)]) for f in ("value", "low", "high")]
            for name in report.metric_names
        }
    return out


def _data(folder, kind):
    """What the report reads: the parquet folder's path, or a dask dataframe of it."""
    if kind == "dataframe":
        import dask.dataframe as dd

        return dd.read_parquet(str(folder))
    return str(folder)


def run(args):
    from skcal.dask import calibration_report_dask

    rows, chunk_rows = int(float(args.rows)), int(float(args.chunk_rows))
    scratch = (
        Path(args.scratch)
        if args.scratch
        else Path(tempfile.mkdtemp(prefix="skcal_report_dask_", dir="/tmp"))
    )
    folder = scratch / "logs"
    record = {
        "rows": rows,
        "chunk_rows": chunk_rows,
        "n_bootstrap": args.n_bootstrap,
        "models": list(MODELS),
        "input": args.input,
    }
    try:
        t0 = time.perf_counter()
        record["files"] = write_folder(folder, rows, chunk_rows, args.seed)
        record["generate_s"] = round(time.perf_counter() - t0, 3)
        kw = {
            "y": "y",
            "models": list(MODELS),
            "n_bootstrap": args.n_bootstrap,
            "n_resamples": args.n_resamples,
            "random_state": args.seed,
        }
        record["loadavg_before"] = harness.load_average()
        if args.quick:
            t0 = time.perf_counter()
            report = calibration_report_dask(_data(folder, args.input), scheduler="sync", **kw)
            record["report_s"] = round(time.perf_counter() - t0, 3)
            record["scheduler"] = "sync"
            frame = pd.concat(
                [pd.read_parquet(f) for f in sorted(folder.glob("*.parquet"))], ignore_index=True
            )
            from skcal.report import CalibrationReport

            ref = CalibrationReport.from_predictions(
                frame["y"].to_numpy(),
                {m: frame[m].to_numpy() for m in MODELS},
                **{k: kw[k] for k in kw if k not in ("y", "models")},
            )
            a, b = ref.table.to_numpy(float), report.table.to_numpy(float)
            ok = np.isfinite(a)
            record["max_rel_diff_vs_in_memory"] = float(
                np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(a[ok]), 1e-300))
            )
        else:
            import distributed

            cluster = distributed.LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                memory_limit=args.memory_limit,
                dashboard_address=None,
            )
            client = distributed.Client(cluster)
            try:
                client.run(lambda: __import__("skcal.dask"))  # the workers' imports (inside the peaks)
                pids = list(client.run(os.getpid).values())
                with RssSampler(pids) as sampler:
                    t0 = time.perf_counter()
                    data = _data(folder, args.input)
                    report = calibration_report_dask(data, scheduler=client, verbose=1, **kw)
                    record["report_s"] = round(time.perf_counter() - t0, 3)
                record["peak_worker_rss_mib"] = [round(sampler.peak[p] / 2**20, 1) for p in pids]
                record["worker_maxrss_mib"] = [round(v, 1) for v in client.run(_worker_maxrss_mib).values()]
                record["scheduler"] = (
                    f"LocalCluster({args.workers} workers x 1 thread, memory_limit={args.memory_limit})"
                )
            finally:
                client.close()
                cluster.close()
        record["loadavg_after"] = harness.load_average()
        record["client_maxrss_mib"] = round(_worker_maxrss_mib(), 1)
        found = re.search(r"in (\d+) pass", report.notes[0])
        record["passes"] = int(found.group(1)) if found else None
        record["notes"] = report.notes
        record["verdict"] = report.verdict
        record["table"] = table_record(report)
        record["rows_per_second"] = round(rows / record["report_s"], 1)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return record


def main(argv=None):
    ap = harness.parser(
        __file__, __doc__, quick="1e5 rows on the synchronous scheduler, against in memory", full_doc=True
    )
    ap.add_argument("--rows", default="1e7")
    ap.add_argument("--chunk-rows", default="1e6", help="rows per parquet file (and Dask partition)")
    ap.add_argument("--n-bootstrap", type=int, default=200)
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1GiB")
    ap.add_argument(
        "--scratch", default=None, help="folder for the parquet files (default: a new one under /tmp)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the parquet folder")
    ap.add_argument(
        "--input",
        choices=("path", "dataframe"),
        default="path",
        help="pass the folder's path (default) or dask.dataframe.read_parquet of it",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = harness.parse_args(ap, argv)
    if args.quick:
        args.rows, args.chunk_rows, args.n_bootstrap, args.n_resamples = "1e5", "25000", 20, 100
    clock = harness.Timer()
    record = run(args)
    record["provenance"] = harness.provenance(__file__, argv, config=harness.args_config(args), clock=clock)
    path = args.out / "report_dask.json"
    runs = json.loads(path.read_text()) if path.exists() and not args.quick else []
    runs.append(record)
    harness.write_json(path, runs)  # one record per run, each with its own provenance block
    print(f"wrote {path}")
    return record


if __name__ == "__main__":
    main()
