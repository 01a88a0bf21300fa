"""The ``skcal monitor`` command: a log of predictions in, a status line, a page and an exit status.

A nightly job: it feeds the rows it has not read before to a
:class:`~skcal.monitor.CalibrationMonitor`, writes the page (or JSON, or the Prometheus text
format), saves the state with a watermark of the files and rows read (in the monitor's
``source_``) and exits with 1 on an alarm, 0 without, 2 on bad input or usage, 3 on an internal
error. What a run reads, checks and writes is the ``--help`` epilog (:data:`LOG_CONVENTION`) and
the user guide's page ``docs/cli.md``, said once there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from skcal import _io
from skcal._columns import (
    CLASS_COLUMN,
    add_column_arguments,
    looks_like_time,
    model_names,
    parse_times,
    probability_column,
)
from skcal._constraints import open_unit_interval
from skcal._io import CSVFormatError, Rows
from skcal._labels import BinaryLabels, canonical_label, class_codes, first_seen
from skcal.monitor._monitor import DEFAULT_TOLERANCE, CalibrationMonitor
from skcal.monitor._page import render_html, when
from skcal.monitor._prometheus import render_prometheus

__all__ = ["add_parser", "run", "LOG_CONVENTION", "JSON_SCHEMA_VERSION", "SOURCE_VERSION"]

#: Version of the JSON document ``--format json`` writes.
JSON_SCHEMA_VERSION = "skcal.monitor/2"
#: Version of the command's record in the state (the watermark and what the state watches).
SOURCE_VERSION = 1
#: The marker of the command's record in the monitor's ``source_``.
SOURCE_KIND = "skcal monitor"

LOG_CONVENTION = """\
Log convention (CSV or parquet; one row per prediction whose label has arrived):

  y            the label: 0/1, true/false or -1/1 (other pairs with --pos-label VALUE); for
               a multiclass model, one of the CLASS names of its columns
  NAME         one model column: the predicted probability of the positive class, or
  NAME[CLASS]  one column per class of a multiclass model (monitored through the top label,
               or one monitor per class with --classwise)
  COL          the time column given with --time: datetimes (ISO 8601 text) or numbers,
               non-decreasing over the whole log (a folder is read in sorted order of its
               file paths, so name the files by date; equal times are fine)

  Other columns are skipped with --ignore COL, or the model chosen with --model NAME.

A nightly job: with --state FILE the monitor resumes from FILE when it exists and saves
itself there, with a watermark of the files and rows it has read. Running the same command
again reads only what is new: nothing for the same folder ("no new rows"), only the new
files of a grown folder, only the new rows of a file that was appended to; a file read before
that changed otherwise is an error naming it. The state records the model column, the label
mapping, the mode and the tolerance: a run whose flags differ is an error naming both. After
an alarm, --reset starts a new monitoring segment (the page keeps the earlier ones), and
--segment COL starts one at every new value of COL (a model-version column). The state and
the outputs are written atomically, only when every new row has been read.

Exit status: 0 no alarm, 1 alarm (the calibration error exceeded --tolerance, or in --mode
detect it changed to exceed it; it stays up until --reset), 2 bad input or usage, 3 an
unexpected internal error (a bug; the traceback is printed).

example: a folder logs/ with a file logs/2024-06-01.csv
  ts,y,model
  2024-06-01T00:00:00,1,0.81
  2024-06-01T00:05:00,0,0.12
  2024-06-01T00:10:00,1,0.64

  $ skcal monitor logs --time ts --out monitor.html --state monitor.json
  $ skcal monitor logs --time ts --tolerance 0.02 --format prometheus --out skcal.prom --state loose.json
"""

#: ``--block-size``'s default, the monitor's.
_BLOCK_SIZE = CalibrationMonitor().block_size
#: The time units of ``--false-alarm-every``, in days.
_SPAN_UNITS = {
    unit: days
    for days, units in (
        (1 / 24, "h hour hours"),
        (1.0, "d day days"),
        (7.0, "w week weeks"),
        (365.0, "y year years"),
    )
    for unit in units.split()
}
_FALSE_ALARM = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


class CommandError(ValueError):
    """A usage error of ``skcal monitor`` found after parsing; exit status 2."""


def progress(args, text, before=""):
    """A progress line ``[skcal] text`` on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(f"{before}[skcal] {text}", file=sys.stderr)


def number_type(convert, accept, expected, refusal=None):
    """An argparse ``type``: ``convert(text)``, refused unless ``accept(value)``.

    ``expected`` names what is expected, for text that does not convert and (its last item) for
    a value refused; ``refusal``, when given, is the whole message for a value refused.
    """

    def parse(text):
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected[0]}, got {text!r}") from None
        if not accept(v):
            raise argparse.ArgumentTypeError(refusal or f"expected {expected[-1]}, got {text}")
        return v

    return parse


_count = number_type(int, lambda v: v >= 1, ("a positive integer",))
_tolerance = number_type(float, lambda v: 0.0 <= v < 1.0, ("a number in [0, 1)",))


def false_alarm_every(text):
    """``--false-alarm-every``: ``("rows", n)`` (``1e7rows``, ``1e7``) or ``("days", d)`` (``365d``).

    Parameters
    ----------
    text : str

    Returns
    -------
    tuple

    Examples
    --------
    >>> false_alarm_every("1e7rows"), false_alarm_every("365d"), false_alarm_every("2 weeks")
    (('rows', 10000000.0), ('days', 365.0), ('days', 14.0))
    """
    m = _FALSE_ALARM.match(text)
    unit = m.group(2).lower() if m else ""
    if m is None or not (unit in ("", "row", "rows") or unit in _SPAN_UNITS):
        raise argparse.ArgumentTypeError(
            f"expected a number of rows (1e7rows) or a time span (365d, 52w, 1y, 12h), got {text!r}"
        )
    v = float(m.group(1))
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    if unit in ("", "row", "rows"):
        return ("rows", v)
    return ("days", v * _SPAN_UNITS[unit])


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
        help="anytime-valid calibration monitoring of a log of predictions (a nightly job)",
        description=(
            "Monitor the calibration of a deployed model from a log of its predictions and labels: is "
            "its l1 calibration error worse than --tolerance? The test bets against the null 'the "
            "calibration error is at most the tolerance at every step' (a false alarm with probability "
            "at most --alpha, however long the log runs and however often it is read) and gives a "
            "time-uniform lower confidence bound of the calibration error; --mode detect finds a "
            "change instead (at most one false alarm per --false-alarm-every on average). Prints the "
            "status in one line, writes an HTML page (or JSON, or the Prometheus text format) and "
            "exits with 1 on an alarm, 0 without, 2 on bad input, 3 on an internal error."
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
        choices=("html", "json", "prometheus"),
        default="html",
        help=(
            "what --out holds: the HTML page, a JSON document, or the status in the Prometheus text "
            "exposition format (for the node exporter's textfile collector: name --out *.prom in its "
            "folder); the status line is JSON with --format json (default: %(default)s)"
        ),
    )
    p.add_argument(
        "--out", default=None, help="file to write (default: monitor.html, monitor.json or monitor.prom)"
    )
    p.add_argument(
        "--state",
        default=None,
        metavar="FILE",
        help="resume from FILE when it exists, read only the rows not read before, and save there (JSON)",
    )
    p.add_argument(
        "--reset",
        action="store_true",
        help="start a new monitoring segment before the new rows (after an alarm, or a retrained model); "
        "the page keeps the earlier segments",
    )
    p.add_argument(
        "--segment",
        metavar="COL",
        default=None,
        help="a column such as a model version: each new value starts a new monitoring segment, named by it",
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=None,
        help="the l1 calibration error the alarm tolerates, in [0, 1); 0 tests exact calibration, which "
        f"every real model fails given enough rows (default: {DEFAULT_TOLERANCE:g}, or the state's: the "
        "smallest tolerance at which the practically calibrated models of the benchmark, l1 error 0.006 to "
        "0.007, stayed silent over 1e7 rows; docs/benchmarks/monitor.md)",
    )
    p.add_argument(
        "--false-alarm-every",
        type=false_alarm_every,
        default=None,
        metavar="SPAN",
        help="--mode detect: the guaranteed average run length to a false alarm, in rows (1e7rows) or, "
        "with a datetime --time, in time (365d, 52w, 1y; converted to rows at the rate of the first run's "
        "rows per day); default: a calibrated stream of 1e7 rows stays silent with probability 1 - alpha",
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
        help="test: has the calibration error exceeded the tolerance since the start (of the segment)? "
        "detect: has it changed to exceed it? (default: test, or the state's)",
    )
    p.add_argument(
        "--block-size",
        type=_count,
        default=None,
        help=f"rows per block (default: {_BLOCK_SIZE:,}, or the state's)",
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


# ----------------------------------------------------------------------------------------------
# the log's columns
# ----------------------------------------------------------------------------------------------
def check_flag_columns(log, header, **flags):
    """Raise naming the first flag (``--NAME``) whose column (or list of columns) ``log`` lacks."""
    for flag, names in flags.items():
        missing = [c for c in ([names] if isinstance(names, str) else names or []) if c not in header]
        if missing:
            raise CSVFormatError(f"--{flag}: {log} has no column {missing[0]!r} (its columns: {header}).")


def _columns(args, header, dtypes):
    """``(model, p_columns, classes)``: the model's probability columns (and classes, multiclass)."""
    check_flag_columns(
        args.log, header, label=args.label, time=args.time, segment=args.segment, ignore=args.ignore
    )
    skip = {args.label, args.time, args.segment, *args.ignore}
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
            timed = [c for c in models if args.time is None and looks_like_time(c, dtypes.get(c))]
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


def _dtypes(path):
    """The column types of the log's first rows (a parquet file's own types; CSV: inferred)."""
    first = next(_io.iter_batches(path, batch_rows=64), None)
    return {} if first is None else dict(first[2].dtypes)


def _key(log, f):
    """A file's name in the watermark: its path relative to the log's folder (or its name)."""
    root = Path(log)
    return f.name if root.is_file() else f.relative_to(root).as_posix()


def _new_parts(args, files, seen):
    """``[(file, skip, fingerprint)]``: the files to read, the rows of each read before, and the
    fingerprint taken before reading it (a logger that appends meanwhile adds rows after it, which
    the next run finds as new: the rows read are counted, not the bytes).

    ``seen`` maps a file's key to the fingerprint and rows recorded when it was read.
    """
    parts = []
    for f in files:
        key = _key(args.log, f)
        old = seen.get(key)
        st = os.stat(f)
        if old is None:
            parts.append((f, 0, _io.fingerprint(f)))
            continue
        size, rows = int(old["size"]), int(old["rows"])
        if st.st_size == size and st.st_mtime_ns == int(old["mtime_ns"]):
            continue  # unchanged (size and modification time): read before
        now = _io.fingerprint(f)
        if now["size"] == size and now["sha256"] == old["sha256"]:
            parts.append((f, rows, now))  # the same bytes with a new time: nothing new to read
            continue
        if now["size"] > size and _io.sha256_prefix(f, size) == old["sha256"]:
            parts.append((f, rows, now))  # appended to: read its new rows
            continue
        what = (
            "its content differs"
            if now["size"] == size
            else f"it {'shrank' if now['size'] < size else 'grew'} from {size:,} to {now['size']:,} bytes"
            + ("" if now["size"] < size else " and its first bytes differ")
        )
        raise CSVFormatError(
            f"{f}: this file was read by an earlier run ({rows:,} rows; --state {args.state}) and has "
            f"changed since: {what}. The files of a log must not change once read (write new rows to new "
            "files, or append them); to read the log again from the start, remove the state file."
        )
    return parts


def _iter_parts(parts, columns, log):
    """``(file, first row in the file, frame, rows)`` of the new rows of every part, in order."""
    for f, skip, _ in parts:
        for _, first, frame in _io.iter_batches(f, columns=columns):
            if first + len(frame) <= skip:
                continue
            if first < skip:
                frame = frame.iloc[skip - first :].reset_index(drop=True)
                first = skip
            yield f, first, frame, Rows.of_batch(f, first, len(frame), log)


def _scan(parts, args, classes):
    """One pass over the label (and time) column of the new rows: their labels, rows, time span."""
    columns = [args.label] + ([args.time] if args.time else [])
    seen, n, span = {}, 0, None
    for _, _, frame, rows in _iter_parts(parts, columns, args.log):
        if classes is None:
            first_seen(frame[args.label], rows, seen)
        if args.time is not None:
            t = parse_times(frame[args.time], args.time, rows)
            if len(t):
                span = (t.iloc[0] if span is None else span[0], t.iloc[-1])
        n += len(frame)
    return seen, n, span


# ----------------------------------------------------------------------------------------------
# the state: what it watches, and the checks of a resumed run
# ----------------------------------------------------------------------------------------------
def _load_state(args):
    """``(monitor, source)`` of ``--state`` when the file exists, else ``(None, None)``."""
    if args.state is None or not os.path.exists(args.state):
        return None, None
    try:
        with open(args.state, encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"--state {args.state}: cannot be read as JSON ({exc}).") from None
    try:
        monitor = CalibrationMonitor.from_state(state)
    except ValueError as exc:
        raise CommandError(
            f"--state {args.state}: not a monitor's state this skcal can continue ({exc})."
        ) from None
    source = dict(monitor.source_)
    if source.get("kind") != SOURCE_KIND:
        raise CommandError(
            f"--state {args.state}: a monitor saved by a program (CalibrationMonitor.get_state), not by "
            "skcal monitor: it has no watermark of the files it has read, so a run could count rows twice. "
            "skcal monitor resumes its own states only; give another --state to start one."
        )
    if source.get("version") != SOURCE_VERSION:
        raise CommandError(
            f"--state {args.state}: its watermark has version {source.get('version')!r}; this skcal reads "
            f"version {SOURCE_VERSION}."
        )
    return monitor, source


#: The monitor parameters a run may give: (flag, parameter, how the state shows it).
_FLAGS = (
    ("--mode", "mode"),
    ("--tolerance", "tolerance"),
    ("--alpha", "alpha"),
    ("--block-size", "block_size"),
    ("--n-bins", "n_bins"),
)


def _check_against_state(args, monitor, source, name, classes):
    """Every difference between this run's flags and what the state watches, named with both values."""
    differ = []

    def flag(option, value):
        return f"{option} {value}" if value is not None else f"no {option}"

    recorded = {
        "--model": (source.get("model"), name),
        "--label": (source.get("label", {}).get("column"), args.label),
        "--time": (source.get("time", {}).get("column"), args.time),
        "--segment": (source.get("segment", {}).get("column"), args.segment),
    }
    for option, (had, has) in recorded.items():
        if had != has:
            differ.append(f"{flag(option, had)} in the state, {flag(option, has)} in this run")
    rule = source.get("label", {})
    if args.pos_label is not None and rule.get("positive") is not None:
        if canonical_label(args.pos_label) != rule["positive"]:
            differ.append(
                f"--pos-label {rule['positive']} in the state, --pos-label {args.pos_label} in this run"
            )
    if classes is not None and rule.get("classes") is not None and list(rule["classes"]) != list(classes):
        differ.append(f"the classes {rule['classes']} in the state, {classes} in this run")
    params = monitor.get_params(deep=False)
    for option, param in _FLAGS:
        given = getattr(args, param)
        if given is not None and _plain_number(params[param]) != _plain_number(given):
            differ.append(f"{option} {params[param]} in the state, {option} {given} in this run")
    far = source.get("false_alarm_every")
    if args.false_alarm_every is not None and far != list(args.false_alarm_every):
        differ.append(
            f"--false-alarm-every {_far_text(far)} in the state, --false-alarm-every "
            f"{_far_text(args.false_alarm_every)} in this run"
        )
    if differ:
        raise CommandError(
            f"--state {args.state}: the state watches something else than this run: {'; '.join(differ)}. "
            "Give the state's flags, or another --state to start a new monitor."
        )


def _plain_number(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def _far_text(far):
    if far is None:
        return "(the default)"
    kind, v = far
    return f"{v:g}rows" if kind == "rows" else f"{v:g}d"


def _binary_rule(args, seen, source):
    """The label rule of a binary model: this run's labels with those the state has seen."""
    recorded = source.get("label") if source else None
    if recorded:
        for c in recorded.get("labels", []):
            seen.setdefault(c, (c, f"--state {args.state}"))
    pos = args.pos_label
    if pos is None and recorded:
        pos = recorded.get("positive_text")
    rule = BinaryLabels.from_seen(args.label, seen, pos_label=pos, labels=args.labels, source=str(args.log))
    if recorded and recorded.get("positive") not in (None, rule.positive):
        raise CommandError(
            f"--state {args.state}: the positive class was {recorded['positive']!r}; the labels of this run "
            f"make it {rule.positive!r} (labels {rule.labels}). Give --pos-label {recorded['positive']}."
        )
    return rule


def _false_alarm_rows(args, n_rows, span):
    """``false_alarm_rows`` from ``--false-alarm-every`` (a time span at the new rows' rate)."""
    if args.false_alarm_every is None:
        return None
    kind, v = args.false_alarm_every
    if kind == "rows":
        return v
    if args.time is None or span is None or not isinstance(span[0], pd.Timestamp):
        raise CommandError(
            f"--false-alarm-every {_far_text(args.false_alarm_every)}: a time span needs a datetime --time "
            "column (its rows per day turn the span into rows); give the run length in rows (1e7rows)."
        )
    days = (span[1] - span[0]) / pd.Timedelta(days=1)
    if not days > 0:
        raise CommandError(
            f"--false-alarm-every {_far_text(args.false_alarm_every)}: the rows of this run span no time, so "
            "their rate is unknown; give the run length in rows (1e7rows), or start with a longer log."
        )
    return v * n_rows / days


def _new_monitor(args, name, classes, n_rows, span):
    params = {
        "tolerance": DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance,
        "alpha": args.alpha,
        "mode": args.mode,
        "block_size": args.block_size,
        "n_bins": args.n_bins,
    }
    params = {k: v for k, v in params.items() if v is not None}
    far = _false_alarm_rows(args, n_rows, span)
    if far is not None:
        if params.get("mode", "test") != "detect":
            raise CommandError(
                "--false-alarm-every is for --mode detect; --mode test raises a false alarm with probability "
                "at most --alpha over an unbounded horizon."
            )
        params["false_alarm_rows"] = far
    return CalibrationMonitor(
        labels=classes,
        multiclass="classwise" if args.classwise else "top-label",
        model_name=name,
        **params,
    )


def _source(args, name, classes, rule, seen_files, last, rows_at_last, segment_value):
    return {
        "kind": SOURCE_KIND,
        "version": SOURCE_VERSION,
        "model": name,
        "label": (
            {"column": args.label, **rule.state(), "positive_text": args.pos_label}
            if rule is not None
            else {"column": args.label, "classes": list(classes)}
        ),
        "time": {"column": args.time, "last": last, "rows_at_last": rows_at_last},
        "segment": {"column": args.segment, "value": segment_value},
        "false_alarm_every": None if args.false_alarm_every is None else list(args.false_alarm_every),
        "files": seen_files,
    }


# ----------------------------------------------------------------------------------------------
# outputs
# ----------------------------------------------------------------------------------------------
def _jsonable(status):
    """The status with JSON's numbers: an infinite e-value becomes None."""
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in status.items()}


def _status_line(monitor, fmt, note=""):
    st = monitor.status()
    if fmt == "json":
        return json.dumps({**_jsonable(st), "note": note or None}, allow_nan=False)

    level = f"{100 * (1 - st['alpha']):g}%"
    lcb = st["calibration_error_lcb"]
    bound = f"the calibration error is at least {lcb:.3g} ({level} lower bound, valid whenever read)"
    evidence = f"evidence 10^{st['log10_evidence']:.2f} of 10^{st['log10_threshold']:.2f}"
    what = "changed to exceed" if st["mode"] == "detect" else "exceeded"
    seg = (
        ""
        if not st["segment"]
        else f" in segment {st['segment']}" + (f" ({st['segment_label']})" if st["segment_label"] else "")
    )
    if st["alarm"]:
        text = (
            f"ALARM at {when(st['alarm_at'], st, 'alarm_time', 'day')}{seg}: the calibration error {what} "
            f"the tolerance {st['tolerance']:g}; {bound}; estimated change at "
            f"{when(st['change_at'], st, 'change_time', 'day')}; {st['rows']:,} rows, "
            f"p-value {st['pvalue']:.3g}"
        )
    else:
        text = (
            f"no alarm after {st['rows']:,} rows{seg}: tolerance {st['tolerance']:g}, {bound}; {evidence} "
            f"(p-value {st['pvalue']:.3g})"
        )
    return f"skcal monitor: {note}{text}"


def _json_document(monitor):
    h = monitor.history_.reset_index()
    keep = [c for c in h.columns if not c.startswith("residual")]
    records = json.loads(h[keep].to_json(orient="records", date_format="iso"))
    segments = json.loads(monitor.segments_.to_json(orient="records", date_format="iso"))
    return {
        "schema": JSON_SCHEMA_VERSION,
        "status": _jsonable(monitor.status()),
        "params": json.loads(json.dumps(monitor.get_state()["params"])),
        "segments": segments,
        "history": records,
    }


def _write_outputs(args, monitor, title):
    if args.format == "html":
        render_html(monitor, path=args.out, title=title)  # atomically
    elif args.format == "json":
        _io.write_atomic(args.out, json.dumps(_json_document(monitor), indent=1, allow_nan=False) + "\n")
    else:
        _io.write_atomic(args.out, render_prometheus(monitor))


# ----------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------
def _time_value(t):
    """A time as the watermark keeps it: ISO 8601 text for datetimes, a float for numbers."""
    return t.isoformat() if isinstance(t, pd.Timestamp) else float(t)


def _parse_time_value(v):
    return pd.Timestamp(v) if isinstance(v, str) else float(v)


def _check_order(times, rows, last):
    """Raise naming the row where the time goes backwards (within the batch, or from ``last``)."""
    values = times.to_numpy()
    if last is not None and len(values) and values[0] < last[0]:
        raise CSVFormatError(
            rows.say(
                0,
                f"time column goes backwards at {{at}}: {times.iloc[0]} is earlier than {last[1]}, the time "
                "of the last row read before it; rows must be in time order (a folder is read in the sorted "
                "order of its file paths: name the files by date; equal times are fine).",
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
        args.out = "monitor." + {"html": "html", "json": "json", "prometheus": "prom"}[args.format]
    _io.check_writable(args.out, "--out")
    if args.state is not None:
        _io.check_writable(args.state, "--state")
    if args.reset and args.state is None:
        raise CommandError("--reset starts a new segment of a saved monitor; give its --state FILE.")
    files = _io.list_files(args.log)
    header = _io.read_columns(args.log)
    name, p_cols, classes = _columns(args, header, _dtypes(args.log))
    if classes is not None:
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
    monitor, source = _load_state(args)
    if monitor is not None and source:
        _check_against_state(args, monitor, source, name, classes)
    seen_files = dict(source.get("files", {})) if source else {}
    parts = _new_parts(args, files, seen_files)
    # the label set is fixed before the first new row: the state's, this run's --labels, and a first
    # pass over the label column of the new rows only
    seen, n_new, span = _scan(parts, args, classes)
    rule = None if classes is not None else _binary_rule(args, seen, source)
    if monitor is None:
        monitor = _new_monitor(args, name, classes, n_new, span)
    if args.reset:
        monitor.new_segment(f"--reset at row {getattr(monitor, 'n_seen_', 0):,}")
    tsrc = source.get("time", {}) if source else {}
    last = None
    if tsrc.get("last") is not None:
        t = _parse_time_value(tsrc["last"])
        last = (np.datetime64(t.to_datetime64()) if isinstance(t, pd.Timestamp) else t, t)
    rows_at_last = int(tsrc.get("rows_at_last") or 0)
    segment_value = (source or {}).get("segment", {}).get("value")
    started = monitor.__sklearn_is_fitted__()
    columns = [args.label, *p_cols] + [c for c in (args.time, args.segment) if c]
    n_read, done, new_in = 0, {}, {}
    for f, first, frame, rows in _iter_parts(parts, columns, args.log):
        if rule is not None:
            y = rule.encode(frame[args.label], rows)
        else:
            y, _ = class_codes(frame[args.label], classes, args.label, rows)
        p = np.column_stack([probability_column(frame, c, rows) for c in p_cols])
        p = p[:, 0] if classes is None else p
        t = None
        if args.time is not None:
            t = parse_times(frame[args.time], args.time, rows)
            before = last
            last = _check_order(t, rows, last)
            if len(t):  # how many rows have the last time (one timestamp per day: the whole day)
                same = int((t.to_numpy() == last[0]).sum())
                rows_at_last = same + (rows_at_last if before is not None and before[0] == last[0] else 0)
        cuts = [0, len(frame)]
        values = None
        if args.segment is not None:
            values = frame[args.segment].astype(str).str.strip().to_numpy(dtype=object)
            change = np.flatnonzero(values[1:] != values[:-1]) + 1
            cuts = [0, *change.tolist(), len(frame)]
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if values is not None and values[a] != segment_value:
                # a new value starts a segment (the first value of a new monitor names its first one)
                monitor.new_segment(f"{args.segment}={values[a]}")
                segment_value = values[a]
            try:
                monitor.update(y[a:b], p[a:b], time=None if t is None else t.iloc[a:b])
            except ValueError as exc:
                where = f"{f}, rows {first + a + 1:,}-{first + b:,} of the file"
                raise CSVFormatError(f"{where}: {exc}") from None
            started = True
        n_read += len(frame)
        done[f] = first + len(frame)
        new_in[f] = new_in.get(f, 0) + len(frame)
        progress(args, f"{f}: {new_in[f]:,} new rows ({n_read:,} in this run)")
    for f, skip, fp in parts:  # every new row read: the watermark moves
        seen_files[_key(args.log, f)] = {**fp, "rows": int(done.get(f, skip))}
    note = ""
    if n_read == 0:
        note = f"no new rows in {args.log} ({len(seen_files)} file(s) read before); "
    if not started:  # nothing read, ever
        print(f"skcal monitor: {note or ''}no rows yet: nothing to monitor; no state or page written")
        return 0
    monitor.source_ = _source(
        args,
        name,
        classes,
        rule,
        seen_files,
        None if last is None else _time_value(last[1]),
        rows_at_last,
        segment_value,
    )
    title = args.title or f"Calibration monitor: {args.log} ({name})"
    if monitor.n_blocks_ == 0:  # no complete block yet: no evidence, no page
        if args.state is not None:
            _io.write_atomic(args.state, json.dumps(monitor.get_state(), allow_nan=False))
        print(
            f"skcal monitor: {note}no alarm: {monitor.n_seen_:,} rows, fewer than one block of "
            f"{monitor.block_size:,}: no evidence yet (the {args.format} output is written once a block is "
            "complete)"
        )
        return 0
    _write_outputs(args, monitor, title)
    if args.state is not None:
        _io.write_atomic(args.state, json.dumps(monitor.get_state(), allow_nan=False))
    print(_status_line(monitor, args.format, note))
    progress(args, f"{args.format} written to {args.out}")
    return 1 if monitor.alarm_ else 0
