"""The ``skcal monitor`` command: a log of predictions in, a status line, a page and an exit status.

``skcal monitor LOG --time COL --out monitor.html`` reads a CSV or parquet file or folder in
order (through :mod:`skcal._io`, the file layer every command shares), feeds it batch by batch
to a :class:`~skcal.monitor.CalibrationMonitor`,
writes the page (or JSON), saves the state when ``--state`` is given, prints one status line and
exits with 1 when the alarm is raised, 0 when not and 2 on bad input or usage (as ``diff`` and
``grep`` do), so a cron job or a CI step can fail on it.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

import numpy as np
import pandas as pd

from skcal import _io
from skcal._constraints import open_unit_interval
from skcal.monitor._monitor import CalibrationMonitor
from skcal.monitor._page import render_html

__all__ = ["add_parser", "run", "LOG_CONVENTION", "JSON_SCHEMA_VERSION"]

#: Version of the JSON document ``--format json`` writes.
JSON_SCHEMA_VERSION = "skcal.monitor/1"

LOG_CONVENTION = """\
Log convention (CSV or parquet; one row per prediction whose label has arrived):

  y            the label: 0/1 or true/false (other pairs with --labels NEG,POS); for a
               multiclass model, one of the CLASS names of its columns
  NAME         one model column: the predicted probability of the positive class, or
  NAME[CLASS]  one column per class of a multiclass model (monitored through the top label,
               or one monitor per class with --classwise)
  COL          the time column given with --time: datetimes (ISO 8601 text) or numbers,
               non-decreasing over the whole log (a folder is read in sorted order of its
               file paths, so name the files by date)

  Other columns must be skipped with --ignore COL, or the model chosen with --model NAME.

Exit status: 0 no alarm, 1 alarm (the monitor rejected calibration, or in --mode detect found
a change), 2 bad input or usage. With --state FILE the monitor resumes from FILE when it
exists (LOG then holds the new rows only: earlier times are an error) and saves itself there.

example:
  skcal monitor logs/ --time ts --out monitor.html --state monitor.json
"""


def _count(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def add_parser(subparsers):
    """Register ``skcal monitor`` on the ``skcal`` command's subparsers.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``monitor`` subcommand's parser.
    """
    p = subparsers.add_parser(
        "monitor",
        help="anytime-valid calibration monitoring of a log of predictions (CSV or parquet)",
        description=(
            "Monitor the calibration of a deployed model from a log of its predictions and labels: "
            "test the null 'calibrated at every step' by betting (false-alarm probability at most "
            "--alpha over an unbounded horizon), or detect a change with an e-detector "
            "(--mode detect). Prints the status in one line, writes an HTML page (or JSON) and exits "
            "with 1 on an alarm, 0 without, 2 on bad input."
        ),
        epilog=LOG_CONVENTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "log", metavar="LOG", help="a CSV or parquet file, or a folder of them (read in sorted order)"
    )
    p.add_argument("--time", metavar="COL", default=None, help="the time column (rows must be in time order)")
    p.add_argument("--label", default="y", help="name of the label column (default: %(default)s)")
    p.add_argument(
        "--model", default=None, metavar="NAME", help="the model to monitor when the log has several"
    )
    p.add_argument(
        "--ignore", action="append", default=[], metavar="COL", help="skip column COL (repeatable)"
    )
    p.add_argument("--labels", default=None, metavar="NEG,POS", help="the two binary labels when not 0/1")
    p.add_argument(
        "--classwise",
        action="store_true",
        help="multiclass: one monitor per class instead of the top label",
    )
    p.add_argument(
        "--format",
        choices=("html", "json"),
        default="html",
        help="what --out holds and how the status line is printed (default: %(default)s)",
    )
    p.add_argument("--out", default=None, help="file to write (default: monitor.html or monitor.json)")
    p.add_argument(
        "--state",
        default=None,
        metavar="FILE",
        help="resume from FILE when it exists, and save the monitor there (JSON)",
    )
    p.add_argument(
        "--alpha",
        type=open_unit_interval,
        default=None,
        help="false-alarm level (default: 0.05, or the state's)",
    )
    p.add_argument(
        "--mode",
        choices=("test", "detect"),
        default=None,
        help="test: calibrated since the start? detect: has it changed? (default: test, or the state's)",
    )
    p.add_argument(
        "--block-size", type=_count, default=None, help="rows per block (default: 1000, or the state's)"
    )
    p.add_argument(
        "--n-bins",
        type=_count,
        default=None,
        help="finest bins, a power of two (default: 16, or the state's)",
    )
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    return p


class _BadInput(ValueError):
    pass


def _check_writable(path, option):
    p = pathlib.Path(path)
    if p.is_dir():
        raise _BadInput(f"{option} {path}: is a directory; expected a file name.")
    parent = p.parent if str(p.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise _BadInput(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise _BadInput(f"{option} {path}: not writable (permission denied).")


def _columns(args, header):
    """``(model, p_columns, classes)``: the model's probability columns (and classes, multiclass)."""
    if args.label not in header:
        raise _BadInput(
            f"{args.log}: no label column {args.label!r} (columns: {header}); name it with --label."
        )
    if args.time is not None and args.time not in header:
        raise _BadInput(f"{args.log}: no time column {args.time!r} (columns: {header}).")
    missing = [c for c in args.ignore if c not in header]
    if missing:
        raise _BadInput(f"{args.log}: --ignore names columns that do not exist: {missing}.")
    skip = {args.label, args.time, *args.ignore}
    models = {}
    for c in header:
        if c in skip:
            continue
        base, cls = c, None
        if c.endswith("]") and "[" in c:
            base, _, rest = c.partition("[")
            cls = rest[:-1]
        models.setdefault(base, []).append((c, cls))
    if not models:
        raise _BadInput(f"{args.log}: no model column besides {sorted(s for s in skip if s)}.")
    if args.model is None:
        if len(models) > 1:
            raise _BadInput(
                f"{args.log}: {len(models)} models ({', '.join(models)}); choose one with --model NAME "
                "(or skip columns with --ignore)."
            )
        name = next(iter(models))
    elif args.model not in models:
        raise _BadInput(f"{args.log}: no model {args.model!r} (models: {', '.join(models)}).")
    else:
        name = args.model
    cols = models[name]
    if len(cols) == 1 and cols[0][1] is None:
        return name, [cols[0][0]], None
    if any(cls is None for _, cls in cols) or len(cols) < 3:
        raise _BadInput(
            f"{args.log}: model {name!r} has columns {[c for c, _ in cols]}; expected one probability column "
            "NAME, or NAME[CLASS] columns for at least 3 classes."
        )
    return name, [c for c, _ in cols], [cls for _, cls in cols]


def _labels(values, classes, binary_labels):
    """The label column as the monitor reads it (0/1, booleans or the named classes)."""
    s = pd.Series(values)
    if classes is not None:
        return s.astype(str).str.strip().to_numpy(dtype=object)
    if binary_labels is not None:
        return s.astype(str).str.strip().to_numpy(dtype=object)
    if s.dtype == object:
        low = s.astype(str).str.strip().str.lower()
        if low.isin(["true", "false"]).all():
            return (low == "true").to_numpy()
        num = pd.to_numeric(low, errors="coerce")
        if num.isna().any():
            i = int(np.flatnonzero(num.isna().to_numpy())[0])
            raise ValueError(
                f"y holds the label {values.iloc[i]!r} at row {i} of this batch; expected 0/1 or true/false "
                "(or name the two labels with --labels NEG,POS)."
            )
        return num.to_numpy(dtype=np.float64)
    return s.to_numpy()


def _times(values):
    if pd.api.types.is_datetime64_any_dtype(values) or pd.api.types.is_numeric_dtype(values):
        if pd.api.types.is_bool_dtype(values):
            raise ValueError("the time column holds booleans; expected datetimes or numbers.")
        return values
    try:
        t = pd.to_datetime(values, format="ISO8601", utc=True)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the time column cannot be read as ISO 8601 datetimes ({exc}).") from None
    return t.dt.tz_localize(None)


def _jsonable(status):
    """The status with JSON's numbers: an infinite e-value or log becomes None."""
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in status.items()}


def _status_line(monitor, fmt):
    st = monitor.status()
    if fmt == "json":
        return json.dumps(_jsonable(st), allow_nan=False)

    def when(row, key):
        t = st.get(key)
        return f"row {row:,}" + (f" ({t})" if t is not None else "")

    what = "e-detector" if st["mode"] == "detect" else "e-value"
    threshold = st["threshold"]
    level = f"1/alpha = {threshold:g}" if st["mode"] == "test" else f"its threshold {threshold:.4g}"
    now = f"10^{st['log10_evidence']:.2f}"
    if st["alarm"]:
        text = (
            f"ALARM at {when(st['alarm_at'], 'alarm_time')}: the {what} reached {level}"
            f" (alpha {st['alpha']:g}, now {now}); estimated change at "
            f"{when(st['change_at'], 'change_time')}; {st['rows']:,} rows, p-value {st['pvalue']:.3g}"
        )
    else:
        text = (  # below the threshold, so a float
            f"no alarm: {what} {st['e_value']:.4g} < {level} after {st['rows']:,} rows "
            f"(p-value {st['pvalue']:.3g})"
        )
    return f"skcal monitor: {text}"


def _json_document(monitor):
    h = monitor.history_.reset_index()
    keep = [c for c in h.columns if not c.startswith("residual")]
    records = json.loads(h[keep].to_json(orient="records", date_format="iso"))
    return {
        "schema": JSON_SCHEMA_VERSION,
        "status": _jsonable(monitor.status()),
        "params": {k: v for k, v in monitor.get_state()["params"].items()},
        "history": records,
    }


def _monitor_from(args):
    given = {
        "alpha": args.alpha,
        "mode": args.mode,
        "block_size": args.block_size,
        "n_bins": args.n_bins,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if args.state is not None and os.path.exists(args.state):
        try:
            with open(args.state, encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise _BadInput(f"--state {args.state}: cannot be read as JSON ({exc}).") from None
        monitor = CalibrationMonitor.from_state(state)
        params = monitor.get_params()
        differ = [
            f"--{k.replace('_', '-')} {v} (the state has {params[k]})"
            for k, v in given.items()
            if params[k] != v
        ]
        if differ:
            raise _BadInput(f"--state {args.state}: was built with other parameters: {'; '.join(differ)}.")
        return monitor, True
    return CalibrationMonitor(**given), False


def run(args):
    """Run ``skcal monitor``; return the exit status (0 no alarm, 1 alarm, 2 bad input).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of :func:`add_parser`'s parser.

    Returns
    -------
    int
    """
    if args.out is None:
        args.out = f"monitor.{args.format}"

    def fail(msg):
        print(f"skcal monitor: error: {msg}", file=sys.stderr)
        return 2

    try:
        _check_writable(args.out, "--out")
        if args.state is not None:
            _check_writable(args.state, "--state")
        header = _io.read_columns(args.log)
        name, p_cols, classes = _columns(args, header)
        monitor, resumed = _monitor_from(args)
        binary_labels = None
        if args.labels is not None:
            binary_labels = [s.strip() for s in args.labels.split(",")]
            if len(binary_labels) != 2 or classes is not None:
                raise _BadInput("--labels takes the two binary labels NEG,POS (a binary model only).")
        labels = classes if classes is not None else binary_labels
        if not resumed:
            monitor.set_params(labels=labels, multiclass="classwise" if args.classwise else "top-label")
        elif monitor.get_params()["labels"] != labels:
            raise _BadInput(
                f"--state {args.state}: was built for labels {monitor.labels}, the log has {labels}."
            )
    except (ValueError, OSError) as exc:
        return fail(exc)
    columns = [args.label, *p_cols] + ([args.time] if args.time else [])
    n_rows = 0
    try:
        for f, first, frame in _io.iter_batches(args.log, columns=columns):
            try:
                y = _labels(frame[args.label], classes, binary_labels)
                p = frame[p_cols[0]] if classes is None else frame[p_cols]
                p = p.to_numpy(dtype=np.float64, na_value=np.nan)
                t = None if args.time is None else _times(frame[args.time])
                monitor.update(y, p, time=t)
            except (ValueError, TypeError) as exc:
                raise _BadInput(f"{f}, rows {first:,}-{first + len(frame) - 1:,} of the log: {exc}") from None
            n_rows += len(frame)
            if not args.quiet:
                print(f"[skcal] {f}: {n_rows:,} rows, e-value {monitor.e_value_:.4g}", file=sys.stderr)
    except (ValueError, OSError) as exc:
        return fail(exc)
    if not hasattr(monitor, "n_seen_"):
        return fail(f"{args.log}: the log holds no rows.")
    title = args.title or f"Calibration monitor: {args.log} ({name})"
    if args.format == "html":
        render_html(monitor, path=args.out, title=title)
    else:
        _io.write_atomic(args.out, json.dumps(_json_document(monitor), indent=1, allow_nan=False) + "\n")
    if args.state is not None:
        _io.write_atomic(args.state, json.dumps(monitor.get_state(), allow_nan=False))
    print(_status_line(monitor, args.format))
    if not args.quiet:
        print(f"[skcal] {args.format} written to {args.out}", file=sys.stderr)
    return 1 if monitor.alarm_ else 0
