"""The ``skcal`` command line: calibration reports of a log of predictions, monitoring, the demo.

``skcal report LOG`` (or ``--demo``; ``skcal demo``) writes a calibration report
(:func:`skcal.calibration_report`) of a log read in memory, in batches past memory
(:func:`skcal.report.report_from_batches`) or on Dask (:func:`skcal.dask.calibration_report_dask`);
``skcal monitor LOG`` monitors it (:mod:`skcal.monitor`). Both read a log through the same file
layer and column convention, take the same column flags and exit with :data:`EXIT_STATUSES`. The
commands, their flags and the log convention are said once, in the parser's help texts (rendered
in ``docs/cli.md``).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

import numpy as np

from skcal import __version__, _io
from skcal._columns import (
    CLASS_COLUMN,
    add_column_arguments,
    model_names,
    probability_column,
    read_log,
    read_predictions_csv,
    scan_labels,
)
from skcal._compat import validate_params
from skcal._constraints import open_unit_interval
from skcal._demo import run_demo
from skcal._io import CSVFormatError, Rows
from skcal._labels import BinaryLabels
from skcal._validation import plain
from skcal.monitor._cli import add_parser as add_monitor_parser
from skcal.monitor._cli import check_flag_columns, number_type, progress
from skcal.monitor._cli import run as run_monitor
from skcal.report import CalibrationReport, render_html, render_json, report_from_batches
from skcal.report._render import skcal_version
from skcal.report._verdict import TEST_LEVEL

__all__ = ["main", "read_predictions_csv", "CSVFormatError", "EXIT_STATUSES"]

#: The exit statuses of every ``skcal`` command.
EXIT_STATUSES = {
    0: "fine (no alarm; the --fail-on conditions do not hold)",
    1: "the condition: monitor, the alarm; report, a --fail-on condition holds",
    2: "bad input or usage (the message names the file, row, column or flag)",
    3: "an unexpected internal error (a bug: the traceback is printed)",
}

#: Rows a report needs at least (and at least one per bin of the reliability diagrams).
MIN_REPORT_ROWS = 10

CSV_CONVENTION = """\
Log column convention (a CSV or parquet file, or a folder of them; one row per validation
example, a header row naming the columns):

  first-order report (one label per row):
    y            the label: 0/1, true/false or -1/1 (other pairs of values with --pos-label)
    NAME         one column per model: its predicted probability of the positive class in [0, 1];
                 the column header is the model's name in the report

  second-order report (several independent labels per row):
    y1, y2, ...  two or more snapshot columns holding 0/1 votes for the same input; an empty cell
                 is a missing vote (every row needs at least two votes)
    NAME:m       one pair of columns per model: its mean m in [0, 1] ...
    NAME:sigma2  ... and its epistemic variance sigma2 in [0, 1/4]

  second-order report from vote counts (several labels per row, counted):
    y:positive, y:total    binary counts: positive votes and all votes (models: NAME:m, NAME:sigma2)
    y[CLASS]    one column of votes per class (k >= 2; rows may have different totals); models give
                NAME[CLASS]:m and NAME[CLASS]:sigma2 for every class (classwise and top-label CE2)

  multiclass report (one of k > 2 classes per row):
    y            the class label (any text or number)
    NAME[CLASS]  one column per class per model: the model's probability of CLASS; every model
                 gives the same classes, each row sums to 1, every label of y is one of them

  A log has either a "y" column or snapshot columns "y1", "y2", ... (the label column is named
  with --label); a time column is given with --time, other columns are skipped with --ignore
  COL (an id column), and with --model only the named models are read; every other column must
  be a model. Probabilities must be numbers without empty cells. A report needs at least 10 rows
  (and one per bin of the reliability diagrams, --n-bins).

  columns of a second-order log:      columns of a multiclass log (classes a, b, c):
    y1,y2,ensemble:m,ensemble:sigma2    y,logistic[a],logistic[b],logistic[c]
    1,0,0.42,0.031                      b,0.2,0.7,0.1

Exit status: 0 fine, 1 a --fail-on condition holds, 2 bad input or usage, 3 an internal error.

example: a file val.csv
  y,logistic,forest
  1,0.91,0.85
  0,0.12,0.30
  1,0.78,0.64
  0,0.35,0.41
  1,0.66,0.90
  0,0.08,0.22
  1,0.57,0.48
  0,0.44,0.15
  1,0.83,0.71
  0,0.21,0.37

  $ skcal report val.csv --out report.html --n-bootstrap 50
  $ skcal report val.csv --model logistic --format json --out report.json --fail-on miscalibrated
"""


#: Default bootstrap replicates of a CSV report and of the demo (the demo's smECE bootstrap over
#: five models is its most expensive step; 100 replicates keep it well under a minute on 2 cores).
CSV_N_BOOTSTRAP = 200
DEMO_N_BOOTSTRAP = 100


class CommandError(ValueError):
    """A usage error found after parsing (a flag that does not fit the input); exit status 2."""


#: What ends a command with exit status 2 (bad input or usage): the errors the commands and the
#: file layer raise in command-line words, and the library's ValueError for bad input.
BAD_INPUT = (CSVFormatError, _io.LogFormatError, _io.OutputError, CommandError, ValueError)


# ----------------------------------------------------------------------------------------------
# argument parsing
# ----------------------------------------------------------------------------------------------
_positive_int = number_type(int, lambda v: v >= 0, ("an integer", "a non-negative integer"))
_positive_float = number_type(
    float,
    lambda v: 0.0 < v < float("inf"),
    ("a number of seconds", "a positive finite number of seconds"),
)
_n_jobs = number_type(
    int, lambda v: v != 0, ("an integer",), "0 jobs do nothing: give a positive count, or -1 for every core"
)


def _fail_on(text):
    if text == "miscalibrated":
        return ("miscalibrated", None)
    kind, sep, name = text.partition("=")
    if kind == "worse-than" and sep and name.strip():
        return ("worse-than", name.strip())
    raise argparse.ArgumentTypeError(f"expected 'miscalibrated' or 'worse-than=NAME', got {text!r}")


def _add_common(p):
    p.add_argument(
        "--format",
        choices=("html", "md", "json"),
        default="html",
        help="what to write: a self-contained HTML page, Markdown or JSON (default: %(default)s)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="file to write (default: report.html, report.md or report.json by --format)",
    )
    p.add_argument("--markdown", metavar="PATH", help="also write the report as Markdown to PATH")
    p.add_argument(
        "--n-bins",
        type=_positive_int,
        default=10,
        help="bins of the reliability diagrams (default: %(default)s)",
    )
    p.add_argument(
        "--strategy",
        choices=("uniform", "quantile", "soft"),
        default="uniform",
        help="binning of the reliability diagrams: equal width, equal count or SCDL's soft bins "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--n-resamples",
        type=_positive_int,
        default=1000,
        help="resamples of each model's calibration test, 0 skips the tests (default: %(default)s)",
    )
    p.add_argument(
        "--n-bootstrap",
        type=_positive_int,
        default=None,
        help=(
            f"paired bootstrap replicates for the intervals (default: {CSV_N_BOOTSTRAP} for a report of a "
            f"log, {DEMO_N_BOOTSTRAP} for the demo; 0 skips them)"
        ),
    )
    p.add_argument(
        "--confidence", type=open_unit_interval, default=0.9, help="interval coverage (default: %(default)s)"
    )
    p.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        help=(
            "threads over blocks of bootstrap replicates, -1 for every core (default: 1; results do not "
            "depend on it)"
        ),
    )
    p.add_argument(
        "--max-seconds",
        type=_positive_float,
        default=None,
        help=(
            "time budget of each report in seconds: the first block of bootstrap replicates is timed "
            "and the number of replicates lowered to fit (the report says how many it used; the "
            "intervals' Monte Carlo error grows as 1/sqrt(replicates)); default: no budget"
        ),
    )
    p.add_argument(
        "--fail-on",
        type=_fail_on,
        action="append",
        default=[],
        metavar="CONDITION",
        help=(
            "exit with status 1 when CONDITION holds (repeatable), for a CI step: 'miscalibrated' (some "
            "model's calibration test rejects at the verdict's 5%% level) or 'worse-than=NAME' (some model "
            "is worse than model NAME on the report's primary measure: the paired-bootstrap interval of "
            "the difference at --confidence lies on the worse side; without the bootstrap, the values)"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the table, no progress lines")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="skcal",
        description="skcal: measure and monitor the calibration of probabilistic classifiers.",
        epilog="Exit status (every command): "
        + "; ".join(f"{k} {v.split(' (')[0]}" for k, v in EXIT_STATUSES.items())
        + ".",
    )
    parser.add_argument("--version", action="version", version=f"skcal {skcal_version(__version__)}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    rep = sub.add_parser(
        "report",
        help="calibration report of several models (from a log of predictions, or --demo)",
        description=(
            "Write a self-contained HTML calibration report (table of metrics with paired-bootstrap "
            "intervals and ranks, reliability diagrams) for the models of a log of predictions, and "
            "print the table. With --demo, fit scikit-learn models on bundled data instead."
        ),
        epilog=CSV_CONVENTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "log",
        nargs="?",
        metavar="PREDICTIONS",
        help=(
            "labels and predictions: a CSV (.csv, .csv.gz) or parquet file, or a folder of them (read "
            "whole, in the sorted order of their paths; a first-order log in a parquet file or a folder "
            "is read in batches, past memory)"
        ),
    )
    rep.add_argument("--demo", action="store_true", help="run the built-in demo instead of reading a log")
    add_column_arguments(rep, several_models=True)
    rep.add_argument(
        "--metrics",
        default=None,
        help=(
            "comma-separated metric names; first order: scdl, smooth_ece, smooth_calibration_error, "
            "cutoff, binned_ece, accuracy, brier, log_loss, roc_auc (default: all but roc_auc); second "
            "order adds ce2, second_moment_mse, variance_bias (default: ce2, scdl, brier, "
            "second_moment_mse, variance_bias); multiclass: truthful_conf_ce, classwise_lince, conf_ece, "
            "accuracy, brier, log_loss (default: these six), smooth_calibration_error (top-label)"
        ),
    )
    rep.add_argument(
        "--primary",
        default=None,
        metavar="METRIC",
        help=(
            "the primary measure, one of the report's metrics: the table is ranked by it and the verdict "
            "speaks of it (default: smooth_ece for first order, ce2 for second order, truthful_conf_ce "
            "for multiclass)"
        ),
    )
    rep.add_argument("--title", default=None, help="report title")
    rep.add_argument(
        "--dask",
        action="store_true",
        help="a first-order parquet log: compute on Dask with a local threaded scheduler (default: "
        "batches in order)",
    )
    rep.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="a first-order parquet log: compute on the running Dask distributed scheduler at ADDRESS "
        "(tcp://host:port)",
    )
    rep.add_argument(
        "--batch-rows",
        type=_positive_int,
        default=_io.BATCH_ROWS,
        help="a log read in batches: rows per batch (default: %(default)s)",
    )
    _add_common(rep)
    demo = sub.add_parser(
        "demo",
        help="the built-in demo (same as 'skcal report --demo')",
        description=(
            "Fit several scikit-learn classifiers and a bagged ensemble on data bundled with "
            "scikit-learn, print a table of SCDL (with its selected grid m*), smECE, the Lipschitz "
            "smCE, cutoff error, binned ECE, accuracy, Brier and log loss per model, recalibrate the "
            "ensemble to second order, and write the HTML report. The same as 'skcal report --demo'."
        ),
    )
    _add_common(demo)
    mon = add_monitor_parser(sub)  # skcal monitor (skcal/monitor/_cli.py)
    parser.commands = {"report": rep, "demo": demo, "monitor": mon}
    return parser


# ----------------------------------------------------------------------------------------------
# reading the log
# ----------------------------------------------------------------------------------------------
def _metrics(args):
    return None if args.metrics is None else [m.strip() for m in args.metrics.split(",") if m.strip()]


def _settings(args):
    """The report options every path takes."""
    return dict(
        metrics=_metrics(args),
        n_bootstrap=CSV_N_BOOTSTRAP if args.n_bootstrap is None else args.n_bootstrap,
        confidence_level=args.confidence,
        n_bins=args.n_bins if args.n_bins else None,
        strategy=args.strategy,
        test_calibration=args.n_resamples > 0,
        n_resamples=max(args.n_resamples, 1),
        random_state=args.seed,
        title=args.title or f"Calibration report: {args.log}",
        verbose=0 if args.quiet else 1,
        primary=args.primary,
    )


def _check_rows(n, args):
    need = max(MIN_REPORT_ROWS, args.n_bins or 0)
    if n < need:
        raise CSVFormatError(
            f"{args.log}: {n} row{'s' if n != 1 else ''}; a report needs at least {need} (at least "
            f"{MIN_REPORT_ROWS} rows, and one per bin of the reliability diagrams, --n-bins "
            f"{args.n_bins or 10})."
        )


def _time_notes(span, column):
    if span is None:
        return []
    return [f"The rows span {span[0]} to {span[1]} (the time column {column!r}, --time)."]


def _first_order_columns(args, header, models):
    """The model columns of a first-order log (one label column, one probability column per model),
    or None for a log of another kind; the flags' column names checked against ``header``."""
    check_flag_columns(args.log, header, ignore=args.ignore, time=args.time)
    if args.label not in header:
        return None
    skip = {args.label, *args.ignore, *([args.time] if args.time else [])}
    cols = [c for c in header if c not in skip]
    if any(CLASS_COLUMN.match(c) or c.endswith((":m", ":sigma2")) for c in cols):
        return None
    if models is not None:
        missing = [m for m in models if m not in cols]
        if missing:
            raise CSVFormatError(
                f"--model: {args.log} has no model {missing[0]!r} (its model columns: {cols})."
            )
        cols = [c for c in cols if c in models]
    if not cols:
        raise CSVFormatError(f"{args.log}: no model column besides the label column {args.label!r}.")
    return cols


def _in_memory(args, models):
    log = read_log(
        args.log,
        label=args.label,
        pos_label=args.pos_label,
        labels=args.labels,
        ignore=args.ignore,
        models=models,
        time=args.time,
    )
    _check_rows(log.n_rows, args)
    y, preds, classes = log.y, log.predictions, log.classes
    kind = (
        "vote counts"
        if not hasattr(y, "ndim")
        else "snapshots"
        if y.ndim == 2
        else ("class labels" if classes else "labels")
    )
    progress(args, f"{args.log}: {log.n_rows} rows, {kind}, {len(preds)} model(s): {', '.join(preds)}")
    settings = _settings(args)
    return CalibrationReport.from_predictions(
        y,
        preds,
        labels=None if classes is None else list(range(len(classes))),
        n_jobs=args.n_jobs,
        max_seconds=args.max_seconds,
        notes=_time_notes(log.time_span(), args.time),
        **settings,
    )


def _scan(args, files):
    """One pass over the label (and time) column: rows, the label rule, the time span."""
    n, seen, span = scan_labels(args.log, args.label, time=args.time, batch_rows=args.batch_rows)
    _check_rows(n, args)
    rule = BinaryLabels.from_seen(
        args.label, seen, pos_label=args.pos_label, labels=args.labels, source=str(args.log)
    )
    return n, rule, span


def _connect(address):
    """A ``distributed.Client`` of the scheduler at ``address``, or a clear error."""
    try:
        from distributed import Client  # distributed is optional (the dask extra)
    except ImportError:
        raise CommandError("--scheduler needs dask.distributed; pip install 'skcal[dask]'.") from None
    try:
        return Client(address, timeout="5s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise CommandError(f"--scheduler {address}: no Dask scheduler answered ({exc}).") from None


def _typed_labels(args, files, rule):
    """The label set and positive class in the type of the parquet label column (for Dask)."""
    first = next(_io.iter_batches(files[0], columns=[args.label], batch_rows=1), None)
    dtype = None if first is None else first[2][args.label].dtype

    def typed(c):
        if dtype is not None and dtype.kind == "b":
            return c == "true"
        if dtype is not None and dtype.kind in "iuf":
            return float(c)
        return c

    return [typed(c) for c in rule.labels], typed(rule.positive)


def _on_dask(args, files, models):
    """A first-order report of a parquet log on Dask."""
    csv = [str(f) for f in files if _io.file_format(f) != "parquet"]
    if csv:
        raise CommandError(
            f"--dask / --scheduler: {args.log} holds CSV files ({len(csv)}, first {csv[0]}); Dask reads "
            "parquet logs only. Convert them to parquet, or make the report in batches without --dask."
        )
    n, rule, span = _scan(args, files)
    labels, positive = _typed_labels(args, files, rule)
    try:
        from skcal.dask import calibration_report_dask  # dask is optional (the dask extra)
    except ImportError as exc:
        raise CommandError(f"--dask / --scheduler: {exc}") from None
    client = None if args.scheduler is None else _connect(args.scheduler)
    try:
        where = "threads" if client is None else client
        progress(args, f"{args.log}: {n:,} rows in {len(files)} parquet file(s) on Dask ({where})")
        return calibration_report_dask(
            str(args.log),
            y=args.label,
            models=models,
            scheduler=where,
            labels=labels,
            pos_label=positive,
            notes=_time_notes(span, args.time),
            **_settings(args),
        )
    finally:
        if client is not None:
            client.close()


def _in_batches(args, files, models):
    """A first-order report of a parquet file or a folder, read in batches (past memory)."""
    if args.max_seconds is not None:
        raise CommandError(
            f"--max-seconds: {args.log} is read in batches (past memory), where the time budget is not "
            "available; give a CSV file, or drop --max-seconds."
        )
    n, rule, span = _scan(args, files)
    progress(
        args, f"{args.log}: {n:,} rows in {len(files)} file(s), {len(models)} model(s): {', '.join(models)}"
    )
    columns = [args.label, *models]

    def batches():
        file, start = None, 0
        for f, first, frame in _io.iter_batches(args.log, columns=columns, batch_rows=args.batch_rows):
            if f != file:
                file, start = f, first
            rows = Rows.of_batch(f, first - start, len(frame), args.log)
            y = rule.encode(frame[args.label], rows)
            preds = {m: probability_column(frame, m, rows) for m in models}
            yield first, y, preds

    return report_from_batches(
        batches,
        n_samples=n,
        models=models,
        labels=[0.0, 1.0],
        notes=_time_notes(span, args.time),
        **_settings(args),
    )


def _report_of_log(args):
    models = model_names(args.model)
    try:
        files = _io.list_files(args.log)
        header = _io.read_columns(args.log)
    except _io.LogFormatError as exc:
        raise CSVFormatError(f"PREDICTIONS {exc}") from None
    first_order = _first_order_columns(args, header, models)
    batched = os.path.isdir(args.log) or _io.file_format(args.log) == "parquet"
    if args.dask or args.scheduler:
        if first_order is None:
            raise CommandError(
                f"--dask / --scheduler: {args.log} is not a first-order log (one label column, one "
                "probability column per model); Dask makes first-order reports only."
            )
        if not batched:
            raise CommandError(
                f"--dask / --scheduler: PREDICTIONS {args.log} is not parquet; Dask reads a parquet file or "
                "folder."
            )
        return _on_dask(args, files, first_order)
    if first_order is not None and batched:
        return _in_batches(args, files, first_order)
    return _in_memory(args, models)


# ----------------------------------------------------------------------------------------------
# --fail-on
# ----------------------------------------------------------------------------------------------
def _worse_than(report, ref, confidence):
    """``[(model, what)]``: the models worse than ``ref`` on the primary measure (see ``--fail-on``)."""
    metric = report.primary_metric
    j = report.metric_names.index(metric)
    names = list(report.model_names)
    r = names.index(ref)
    sign = -1.0 if report.greater_is_better[metric] else 1.0

    def loss(v):
        return np.abs(v) if report.rank_by_abs[metric] else sign * v

    label = report.metric_labels[metric]
    values = report.table[metric]["value"]
    reps = report.bootstrap_values
    out = []
    for i, m in enumerate(names):
        if i == r:
            continue
        if reps is not None and np.size(reps) and reps.shape[0] > 1:
            d = loss(reps[:, i, j]) - loss(reps[:, r, j])
            d = d[np.isfinite(d)]
            if not d.size:
                continue
            lo = float(np.quantile(d, (1 - confidence) / 2))
            if lo > 0:
                out.append(
                    (
                        m,
                        f"{label} {plain(values[m]):.4g} against {plain(values[ref]):.4g}; the paired "
                        f"bootstrap's {100 * confidence:g}% interval of the difference excludes 0",
                    )
                )
        elif loss(values[m]) > loss(values[ref]):
            out.append((m, f"{label} {plain(values[m]):.4g} against {plain(values[ref]):.4g} (no bootstrap)"))
    return out


def _check_fail_on(args):
    for kind, _ in args.fail_on:
        if kind == "miscalibrated" and args.n_resamples == 0:
            raise CommandError(
                "--fail-on miscalibrated needs the calibration tests; --n-resamples 0 skips them."
            )


def _fail_on_status(reports, args):
    """1 when a ``--fail-on`` condition holds in some report (each is said on stderr), else 0."""
    status = 0
    for kind, name in args.fail_on:
        for rep in reports:
            if kind == "miscalibrated":
                level = TEST_LEVEL  # the level of the verdict's "miscalibrated"
                tests = rep.calibration_tests
                bad = [] if tests is None else [m for m in rep.model_names if tests.loc[m, "pvalue"] < level]
                if bad:
                    status = 1
                    shown = ", ".join(f"{m} (p = {plain(tests.loc[m, 'pvalue']):.3g})" for m in bad)
                    print(
                        f"skcal report: --fail-on miscalibrated holds: {shown} "
                        f"{'fails' if len(bad) == 1 else 'fail'} the calibration test at the "
                        f"{100 * level:g}% level.",
                        file=sys.stderr,
                    )
            else:
                if name not in rep.model_names:
                    if len(reports) > 1:
                        continue  # the demo's parts: the model is in one of them
                    raise CommandError(
                        f"--fail-on worse-than={name}: the report has no model {name!r} (its models: "
                        f"{', '.join(rep.model_names)})."
                    )
                worse = _worse_than(rep, name, rep.confidence_level)
                if worse:
                    status = 1
                    for m, what in worse:
                        print(
                            f"skcal report: --fail-on worse-than={name} holds: {m} is worse ({what}).",
                            file=sys.stderr,
                        )
    return status


# ----------------------------------------------------------------------------------------------
# the commands
# ----------------------------------------------------------------------------------------------
def _write(reports, title, intro, fmt, path):
    if fmt == "html":
        return render_html(reports, path=path, title=title, intro=intro)
    if fmt == "json":
        text = render_json(reports)
    else:
        text = "\n".join([f"# {title}", "", *intro, "", *(r.to_markdown() for r in reports)])
    return _io.write_atomic(path, text if text.endswith("\n") else text + "\n")


def _run_report(args, parser):
    demo = args.command == "demo" or args.demo
    parser = parser.commands[args.command]
    if args.command == "report":
        if args.demo and args.log:
            parser.error("give either PREDICTIONS or --demo, not both")
        if not args.demo and not args.log:
            parser.error("give PREDICTIONS (a log file or folder; or --demo for the built-in demo)")
    if args.out is None:
        args.out = f"report.{args.format}"
    # everything that can be checked before computing is checked first
    _io.check_writable(args.out, "--out")
    if args.markdown:
        _io.check_writable(args.markdown, "--markdown")
    _check_fail_on(args)
    if demo:
        reports, title, intro = run_demo(
            n_bootstrap=DEMO_N_BOOTSTRAP if args.n_bootstrap is None else args.n_bootstrap,
            confidence_level=args.confidence,
            n_jobs=args.n_jobs,
            random_state=args.seed,
            verbose=0 if args.quiet else 1,
            n_resamples=max(args.n_resamples, 1),
            n_bins=args.n_bins if args.n_bins else None,
            strategy=args.strategy,
            max_seconds=args.max_seconds,
        )
    else:
        report = _report_of_log(args)
        reports, title, intro = [report], report.title, []
    _write(reports, title, intro, args.format, args.out)
    for r in reports:
        print(f"\n{r.title}")
        print(r.to_text())
    if args.markdown:
        _write(reports, title, intro, "md", args.markdown)
    progress(args, f"report written to {args.out}", "\n")
    return _fail_on_status(reports, args)


def run_command(name, run, *args):
    """Run a command; return its exit status, with every error turned into status 2 or 3.

    Bad input or usage (the commands' errors in command-line words, the library's ``ValueError``,
    a file that cannot be written) prints ``skcal NAME: error: ...`` and gives 2; anything else
    is a bug: its traceback is printed and the status is 3 (never 1, the condition's status).

    Parameters
    ----------
    name : str
        The command (``report``, ``monitor``), for the messages.
    run : callable
        The command; returns 0 or 1.
    *args
        Its arguments.

    Returns
    -------
    int
    """
    try:
        return run(*args)
    except BAD_INPUT as exc:
        print(f"skcal {name}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output that cannot be written (disk full, permissions)
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"skcal {name}: error:{where} {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 - a bug: say so, with the traceback, and exit 3 (never 1)
        traceback.print_exc()
        print(
            f"skcal {name}: internal error (exit status 3): this is a bug in skcal, not in the input; "
            "please report it with the traceback above.",
            file=sys.stderr,
        )
        return 3


@validate_params({"argv": [list, tuple, None]}, prefer_skip_nested_validation=True)
def main(argv=None):
    """Run the ``skcal`` command line; return the exit status.

    0 fine, 1 the condition (``report --fail-on``, the monitor's alarm), 2 bad input or usage
    (argparse's own usage errors exit with 2 too), 3 an unexpected internal error.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    int
        The exit status.
    """
    parser = _build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    if args.command == "monitor":
        return run_command("monitor", run_monitor, args)
    return run_command("report", _run_report, args, parser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
