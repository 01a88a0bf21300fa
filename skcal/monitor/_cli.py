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
import re
import sys

import numpy as np
import pandas as pd

from skcal import _io
from skcal._columns import (
    CLASS_COLUMN,
    BinaryLabels,
    CSVFormatError,
    Rows,
    add_column_arguments,
    class_codes,
    model_names,
    parse_times,
    probability_column,
    scan_labels,
)
from skcal._constraints import open_unit_interval
from skcal.monitor._monitor import CalibrationMonitor
from skcal.monitor._page import render_html

__all__ = ["add_parser", "run", "LOG_CONVENTION", "JSON_SCHEMA_VERSION"]

#: Version of the JSON document ``--format json`` writes.
JSON_SCHEMA_VERSION = "skcal.monitor/1"

LOG_CONVENTION = """\
Log convention (CSV or parquet; one row per prediction whose label has arrived):

  y            the label: 0/1, true/false or -1/1 (other pairs with --pos-label VALUE); for
               a multiclass model, one of the CLASS names of its columns
  NAME         one model column: the predicted probability of the positive class, or
  NAME[CLASS]  one column per class of a multiclass model (monitored through the top label,
               or one monitor per class with --classwise)
  COL          the time column given with --time: datetimes (ISO 8601 text) or numbers,
               non-decreasing over the whole log (a folder is read in sorted order of its
               file paths, so name the files by date)

  Other columns must be skipped with --ignore COL, or the model chosen with --model NAME.

Exit status: 0 no alarm, 1 alarm (the monitor rejected calibration, or in --mode detect found
a change), 2 bad input or usage, 3 an unexpected internal error (a bug; the traceback is
printed). With --state FILE the monitor resumes from FILE when it exists (LOG then holds the
new rows only: earlier times are an error) and saves itself there.

example: a folder logs/ with a file logs/2024-06-01.csv
  ts,y,model
  2024-06-01T00:00:00,1,0.81
  2024-06-01T00:05:00,0,0.12
  2024-06-01T00:10:00,1,0.64

  $ skcal monitor logs --time ts --out monitor.html --state monitor.json
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
    add_column_arguments(p, several_models=False)
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


class CommandError(ValueError):
    """A usage error of ``skcal monitor`` found after parsing; exit status 2."""


def _looks_like_time(name, dtype):
    return pd.api.types.is_datetime64_any_dtype(dtype) or bool(
        re.search(r"^(t|ts|time|timestamp|date|datetime|day|hour|when)$|[_ -](time|ts|at|date)$", name, re.I)
    )


def _columns(args, header, dtypes):
    """``(model, p_columns, classes)``: the model's probability columns (and classes, multiclass)."""
    for flag, names in (
        ("--label", [args.label]),
        ("--time", [args.time] if args.time else []),
        ("--ignore", args.ignore),
    ):
        missing = [c for c in names if c not in header]
        if missing:
            raise CSVFormatError(f"{flag}: {args.log} has no column {missing[0]!r} (its columns: {header}).")
    skip = {args.label, args.time, *args.ignore}
    models = {}
    for c in header:
        if c in skip:
            continue
        m = CLASS_COLUMN.match(c)
        base, cls = (m.group(1), m.group(2)) if m else (c, None)
        models.setdefault(base, []).append((c, cls))
    if not models:
        raise CSVFormatError(f"{args.log}: no model column besides {sorted(s for s in skip if s)}.")
    chosen = model_names(args.model)
    if chosen is not None and len(chosen) != 1:
        raise CommandError(f"--model: a monitor watches one model; got {len(chosen)}: {', '.join(chosen)}.")
    if chosen is None:
        if len(models) > 1:
            timed = [c for c in models if args.time is None and _looks_like_time(c, dtypes.get(c))]
            hint = f"; {timed[0]!r} looks like a time column: give it with --time {timed[0]}" if timed else ""
            raise CommandError(
                f"{args.log}: {len(models)} models ({', '.join(models)}); choose one with --model NAME (or "
                f"skip columns with --ignore COL){hint}."
            )
        name = next(iter(models))
    elif chosen[0] not in models:
        raise CommandError(
            f"--model {chosen[0]}: {args.log} has no model {chosen[0]!r} (models: {', '.join(models)})."
        )
    else:
        name = chosen[0]
    cols = models[name]
    if len(cols) == 1 and cols[0][1] is None:
        return name, [cols[0][0]], None
    if any(cls is None for _, cls in cols) or len(cols) < 3:
        raise CSVFormatError(
            f"{args.log}: model {name!r} has columns {[c for c, _ in cols]}; expected one probability column "
            "NAME, or NAME[CLASS] columns for at least 3 classes."
        )
    return name, [c for c, _ in cols], [cls for _, cls in cols]


def _check_order(times, rows, last):
    """Raise naming the row where the time goes backwards (within the batch, or from ``last``)."""
    values = times.to_numpy()
    if last is not None and len(values) and values[0] < last[0]:
        raise CSVFormatError(
            rows.say(
                0,
                f"time column goes backwards at {{at}}: {times.iloc[0]} is earlier than {last[1]}, the "
                "time of the row before it; rows must be in time order (a folder is read in the sorted "
                "order of its file paths: name the files by date).",
            )
        )
    if len(values) > 1:
        back = values[1:] < values[:-1]
        if back.any():
            i = int(np.flatnonzero(back)[0]) + 1
            raise CSVFormatError(
                rows.say(
                    i,
                    f"time column goes backwards at {{at}}: {times.iloc[i]} is earlier than "
                    f"{times.iloc[i - 1]}, the time of the row before it; rows must be in time order.",
                )
            )
    return (values[-1], times.iloc[-1]) if len(values) else last


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
            raise CommandError(f"--state {args.state}: cannot be read as JSON ({exc}).") from None
        try:
            monitor = CalibrationMonitor.from_state(state)
        except ValueError as exc:
            raise CommandError(f"--state {args.state}: not a monitor's state ({exc}).") from None
        params = monitor.get_params()
        differ = [
            f"--{k.replace('_', '-')} {v} (the state has {params[k]})"
            for k, v in given.items()
            if params[k] != v
        ]
        if differ:
            raise CommandError(f"--state {args.state}: was built with other parameters: {'; '.join(differ)}.")
        return monitor, True
    return CalibrationMonitor(**given), False


def _dtypes(args):
    """The column types of the log's first rows (a parquet file's own types; CSV: inferred)."""
    first = next(_io.iter_batches(args.log, batch_rows=64), None)
    return {} if first is None else dict(first[2].dtypes)


def run(args):
    """Run ``skcal monitor``; return the exit status (0 no alarm, 1 alarm).

    Bad input raises an error in command-line words (exit status 2 in :func:`skcal.cli.main`).

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
    _io.check_writable(args.out, "--out")
    if args.state is not None:
        _io.check_writable(args.state, "--state")
    header = _io.read_columns(args.log)
    name, p_cols, classes = _columns(args, header, _dtypes(args))
    monitor, resumed = _monitor_from(args)
    rule = None
    if classes is None:
        # the label set is fixed before the first row: given (--labels) or read by a first pass
        # over the label column only
        _, seen, _ = scan_labels(args.log, args.label)
        rule = BinaryLabels.from_seen(
            args.label, seen, pos_label=args.pos_label, labels=args.labels, source=str(args.log)
        )
    else:
        if args.pos_label is not None:
            raise CommandError(
                f"--pos-label: model {name!r} is multiclass (columns {p_cols}); --pos-label is for a "
                "binary model."
            )
        if args.labels is not None and sorted(args.labels) != sorted(classes):
            raise CommandError(
                f"--labels {','.join(args.labels)}: model {name!r} has the classes {classes} (its "
                "NAME[CLASS] columns); for a multiclass model --labels must name the same classes."
            )
    if not resumed:
        monitor.set_params(labels=classes, multiclass="classwise" if args.classwise else "top-label")
    elif monitor.get_params()["labels"] != classes:
        raise CommandError(
            f"--state {args.state}: was built for the classes {monitor.get_params()['labels']}, but model "
            f"{name!r} of {args.log} has {classes}."
        )
    columns = [args.label, *p_cols] + ([args.time] if args.time else [])
    n_rows, file, start, last = 0, None, 0, None
    for f, first, frame in _io.iter_batches(args.log, columns=columns):
        if f != file:
            file, start = f, first
        rows = Rows.of_batch(f, first - start, len(frame), args.log)
        if rule is not None:
            y = rule.encode(frame[args.label], rows)
        else:
            y, _ = class_codes(frame[args.label], classes, args.label, rows)
        p = np.column_stack([probability_column(frame, c, rows) for c in p_cols])
        p = p[:, 0] if classes is None else p
        t = None
        if args.time is not None:
            t = parse_times(frame[args.time], args.time, rows)
            last = _check_order(t, rows, last)
        try:
            monitor.update(y, p, time=t)
        except ValueError as exc:
            where = f"{f}, rows {first:,}-{first + len(frame) - 1:,} of the log"
            raise CSVFormatError(f"{where}: {exc}") from None
        n_rows += len(frame)
        if not args.quiet:
            print(f"[skcal] {f}: {n_rows:,} rows, e-value {monitor.e_value_:.4g}", file=sys.stderr)
    if not hasattr(monitor, "n_seen_"):
        raise CSVFormatError(f"{args.log}: the log holds no rows.")
    title = args.title or f"Calibration monitor: {args.log} ({name})"
    if monitor.n_blocks_ == 0:  # no complete block yet: no evidence, no page
        print(
            f"skcal monitor: no alarm: {monitor.n_seen_:,} rows, fewer than one block of "
            f"{monitor.block_size:,}: no evidence yet (the {args.format} is written once a block is complete)"
        )
        if args.state is not None:
            _io.write_atomic(args.state, json.dumps(monitor.get_state(), allow_nan=False))
        return 0
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
