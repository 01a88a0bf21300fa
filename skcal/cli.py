"""The ``skcal`` command line: calibration reports from a CSV file of predictions, and the demo.

Commands
--------
``skcal report PREDICTIONS.csv [--out report.html]``
    A calibration report (see :func:`skcal.calibration_report`) over a CSV file of predictions.
``skcal report LOGS/ [--dask | --scheduler ADDRESS] [--format html]``
    The same first-order report from a parquet file or a folder of parquet files, past memory:
    read in batches (:func:`skcal.report.report_from_batches`), or on Dask with ``--dask`` (a
    local threaded scheduler) or ``--scheduler ADDRESS`` (a running ``distributed`` scheduler;
    :func:`skcal.dask.calibration_report_dask`).
``skcal report --demo [--out report.html]``
    Fits several scikit-learn classifiers and a bagged ensemble on data bundled with
    scikit-learn, recalibrates the ensemble to second order, writes the report and prints the
    table.
``skcal demo``
    The same as ``skcal report --demo``.
``skcal monitor LOG --time COL [--out monitor.html]``
    Anytime-valid calibration monitoring of a CSV or parquet log (see :mod:`skcal.monitor`);
    exit status 1 on an alarm, 0 without, 2 on bad input.

Run ``skcal report --help`` for the CSV column convention.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
from importlib.metadata import PackageNotFoundError, version

import pandas as pd

from skcal import __version__, _io
from skcal._columns import CSVFormatError, read_predictions_csv
from skcal._compat import validate_params
from skcal._constraints import open_unit_interval
from skcal._demo import run_demo
from skcal.monitor._cli import add_parser as add_monitor_parser
from skcal.monitor._cli import run as run_monitor
from skcal.report import CalibrationReport, render_html, render_json, report_from_batches

__all__ = ["main", "read_predictions_csv", "CSVFormatError"]

CSV_CONVENTION = """\
CSV column convention (comma-separated; one row per validation example, a header row naming the columns):

  first-order report (one label per row):
    y            the label: 0/1 (or true/false, -1/1; other pairs of values with --pos-label)
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

  A file has either a "y" column or snapshot columns "y1", "y2", ... (the label name "y" can be
  changed with --label); columns listed with --ignore (e.g. an id column) are skipped, and with
  --models only the named models are read (an allow-list); every other column must be a model.
  Probabilities must be numbers without empty cells.

  example (first order):            example (second order):
    y,logistic,forest                 y1,y2,ensemble:m,ensemble:sigma2
    1,0.91,0.85                       1,0,0.42,0.031
    0,0.12,0.30                       1,1,0.88,0.004

  example (multiclass, classes a, b, c):
    y,logistic[a],logistic[b],logistic[c]
    b,0.2,0.7,0.1
"""


#: Default bootstrap replicates of a CSV report and of the demo (the demo's smECE bootstrap over
#: five models is its most expensive step; 100 replicates keep it well under a minute on 2 cores).
CSV_N_BOOTSTRAP = 200
DEMO_N_BOOTSTRAP = 100


# ----------------------------------------------------------------------------------------------
# argument parsing
# ----------------------------------------------------------------------------------------------
def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {v}")
    return v


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (v > 0.0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive finite number of seconds, got {text}")
    return v


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
            f"paired bootstrap replicates for the intervals (default: {CSV_N_BOOTSTRAP} for a CSV report, "
            f"{DEMO_N_BOOTSTRAP} for the demo; 0 skips them)"
        ),
    )
    p.add_argument(
        "--confidence", type=open_unit_interval, default=0.9, help="interval coverage (default: %(default)s)"
    )
    p.add_argument(
        "--n-jobs",
        type=int,
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
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the table, no progress lines")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="skcal",
        description="skcal: measure the calibration of probabilistic classifiers.",
    )
    parser.add_argument("--version", action="version", version=f"skcal {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    rep = sub.add_parser(
        "report",
        help="calibration report of several models (from a CSV file, or --demo)",
        description=(
            "Write a self-contained HTML calibration report (table of metrics with paired-bootstrap "
            "intervals and ranks, reliability diagrams) for the models in PREDICTIONS.csv, and print "
            "the table. With --demo, fit scikit-learn models on bundled data instead."
        ),
        epilog=CSV_CONVENTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "csv",
        nargs="?",
        metavar="PREDICTIONS",
        help=(
            "labels and predictions: a CSV file (see below), or a parquet file or folder of parquet "
            "files (a first-order report made past memory: one label column, one probability column "
            "per model)"
        ),
    )
    rep.add_argument(
        "--demo", action="store_true", help="run the built-in demo instead of reading a CSV file"
    )
    rep.add_argument("--label", default="y", help="name of the label column (default: %(default)s)")
    rep.add_argument("--pos-label", default=None, help="the positive class, for labels other than 0/1")
    rep.add_argument(
        "--ignore", action="append", default=[], metavar="COL", help="skip column COL (repeatable)"
    )
    rep.add_argument(
        "--models",
        default=None,
        metavar="NAME,...",
        help="allow-list: read only these comma-separated models (other model columns are skipped)",
    )
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
        help="parquet input: compute on Dask with a local threaded scheduler (default: batches in order)",
    )
    rep.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="parquet input: compute on the running Dask distributed scheduler at ADDRESS (tcp://host:port)",
    )
    rep.add_argument(
        "--batch-rows",
        type=_positive_int,
        default=_io.BATCH_ROWS,
        help="parquet input without Dask: rows per batch read (default: %(default)s)",
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
    add_monitor_parser(sub)  # skcal monitor (skcal/monitor/_cli.py)
    return parser


def _version():
    try:
        return version("skcal")
    except PackageNotFoundError:  # run from a checkout, not installed
        return __version__


def _check_writable(path, option):
    """Fail fast, before any computing, when ``path`` cannot be written."""
    p = pathlib.Path(path)
    if p.is_dir():
        raise CSVFormatError(f"{option} {path}: is a directory; expected a file name.")
    parent = p.parent if str(p.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise CSVFormatError(f"{option} {path}: the directory {str(parent)!r} does not exist.")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise CSVFormatError(f"{option} {path}: not writable (permission denied).")


def _run_report_csv(args):
    models = None if args.models is None else [m.strip() for m in args.models.split(",") if m.strip()]
    y, preds, labels = read_predictions_csv(
        args.csv,
        label=args.label,
        pos_label=args.pos_label,
        ignore=args.ignore,
        models=models,
        return_labels=True,
    )
    metrics = None if args.metrics is None else [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not args.quiet:
        kind = "vote counts" if not hasattr(y, "ndim") else "snapshots" if y.ndim == 2 else (
            "class labels" if labels else "labels"
        )
        print(
            f"[skcal] {args.csv}: {y.shape[0]} rows, {kind}, {len(preds)} models: {', '.join(preds)}",
            file=sys.stderr,
        )
    report = CalibrationReport.from_predictions(
        y,
        preds,
        metrics=metrics,
        n_bootstrap=CSV_N_BOOTSTRAP if args.n_bootstrap is None else args.n_bootstrap,
        confidence_level=args.confidence,
        n_bins=args.n_bins if args.n_bins else None,
        strategy=args.strategy,
        test_calibration=args.n_resamples > 0,
        n_resamples=max(args.n_resamples, 1),
        n_jobs=args.n_jobs,
        random_state=args.seed,
        labels=None if labels is None else list(range(len(labels))),
        title=args.title or f"Calibration report: {args.csv}",
        verbose=0 if args.quiet else 1,
        max_seconds=args.max_seconds,
        primary=args.primary,
    )
    return [report], report.title, []


def _is_parquet_input(path):
    """Whether PREDICTIONS is read in batches: a .parquet / .pq file, or a folder (of any log files)."""
    return os.path.isdir(path) or path.lower().endswith((".parquet", ".pq"))


def _parquet_columns(args):
    """``(files, label, models)`` of a log read in batches, every name checked."""
    try:
        files = _io.list_files(args.csv)
        columns = _io.read_columns(args.csv)
    except _io.LogFormatError as exc:
        raise CSVFormatError(f"PREDICTIONS {exc}") from None
    if args.label not in columns:
        raise CSVFormatError(
            f"--label {args.label}: {files[0]} has no column {args.label!r} (its columns: {columns})."
        )
    if args.models is not None:
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        missing = [m for m in models if m not in columns]
        if missing:
            raise CSVFormatError(
                f"--models: {files[0]} has no column {missing[0]!r} (its columns: {columns})."
            )
    else:
        models = [c for c in columns if c != args.label and c not in args.ignore]
    if not models:
        raise CSVFormatError(f"PREDICTIONS {args.csv}: no probability column besides {args.label!r}.")
    return files, args.label, models


def _pos_label(args, files, label):
    """--pos-label in the type of the label column (a number for a numeric column)."""
    if args.pos_label is None:
        return None
    first = next(_io.iter_batches(files[0], columns=[label], batch_rows=1), None)
    if first is not None and pd.api.types.is_numeric_dtype(first[2][label]):
        try:
            return float(args.pos_label)
        except ValueError:
            raise CSVFormatError(
                f"--pos-label {args.pos_label}: the label column {label!r} is numeric; expected a number."
            ) from None
    return args.pos_label


def _connect(address):
    """A ``distributed.Client`` of the scheduler at ``address``, or a clear error."""
    try:
        from distributed import Client  # distributed is optional (the dask extra)
    except ImportError:
        raise CSVFormatError("--scheduler needs dask.distributed; pip install 'skcal[dask]'.") from None
    try:
        return Client(address, timeout="5s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise CSVFormatError(f"--scheduler {address}: no Dask scheduler answered ({exc}).") from None


def _run_report_parquet(args):
    """A first-order report of a parquet file or folder, in batches or on Dask."""
    if args.max_seconds is not None:
        raise CSVFormatError("--max-seconds is not available for parquet input.")
    files, label, models = _parquet_columns(args)
    metrics = None if args.metrics is None else [m.strip() for m in args.metrics.split(",") if m.strip()]
    pos_label = _pos_label(args, files, label)
    common = dict(
        metrics=metrics,
        n_bootstrap=CSV_N_BOOTSTRAP if args.n_bootstrap is None else args.n_bootstrap,
        confidence_level=args.confidence,
        n_bins=args.n_bins if args.n_bins else None,
        strategy=args.strategy,
        test_calibration=args.n_resamples > 0,
        n_resamples=max(args.n_resamples, 1),
        random_state=args.seed,
        pos_label=pos_label,
        title=args.title or f"Calibration report: {args.csv}",
        verbose=0 if args.quiet else 1,
        primary=args.primary,
    )
    if args.dask or args.scheduler:
        try:
            from skcal.dask import calibration_report_dask  # dask is optional (the dask extra)
        except ImportError as exc:
            raise CSVFormatError(f"--dask / --scheduler: {exc}") from None
        client = None if args.scheduler is None else _connect(args.scheduler)
        try:
            where = "threads" if client is None else client
            if not args.quiet:
                print(f"[skcal] {args.csv}: {len(files)} parquet file(s) on Dask ({where})", file=sys.stderr)
            report = calibration_report_dask(args.csv, y=label, models=models, scheduler=where, **common)
        finally:
            if client is not None:
                client.close()
        return [report], report.title, []
    offsets, n = {}, 0
    for f in files:  # the global index of each file's first row (parquet metadata, no rows read)
        offsets[f] = n
        n += _io.count_rows(f)
    if not args.quiet:
        print(
            f"[skcal] {args.csv}: {n} rows in {len(files)} file(s), {len(models)} models: "
            f"{', '.join(models)}",
            file=sys.stderr,
        )
    columns = [label, *models]

    def batches():
        for f in files:
            for _, first_row, frame in _io.iter_batches(f, columns=columns, batch_rows=args.batch_rows):
                yield (
                    first_row + offsets[f],
                    frame[label].to_numpy(),
                    {m: frame[m].to_numpy() for m in models},
                )

    report = report_from_batches(batches, n_samples=n, models=models, **common)
    return [report], report.title, []


def _write(reports, title, intro, fmt, path):
    if fmt == "html":
        return render_html(reports, path=path, title=title, intro=intro)
    if fmt == "json":
        text = render_json(reports)
    else:
        text = "\n".join([f"# {title}", "", *intro, "", *(r.to_markdown() for r in reports)])
    path = pathlib.Path(path)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return path


@validate_params({"argv": [list, tuple, None]}, prefer_skip_nested_validation=True)
def main(argv=None):
    """Run the ``skcal`` command line; return the exit status (0 on success, 2 on bad input).

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
    args = parser.parse_args(argv)
    if args.command == "monitor":
        return run_monitor(args)
    if args.command == "report":
        if args.demo and args.csv:
            parser.error("give either PREDICTIONS.csv or --demo, not both")
        if not args.demo and not args.csv:
            parser.error("give PREDICTIONS.csv (or --demo for the built-in demo)")
    demo = args.command == "demo" or args.demo
    if args.out is None:
        args.out = f"report.{args.format}"
    try:  # everything that can be checked before computing is checked first
        _check_writable(args.out, "--out")
        if args.markdown:
            _check_writable(args.markdown, "--markdown")
        if not demo and (args.dask or args.scheduler) and not _is_parquet_input(args.csv):
            raise CSVFormatError(
                f"--dask / --scheduler: PREDICTIONS {args.csv} is not parquet; Dask reads a parquet file "
                "or folder."
            )
    except CSVFormatError as exc:
        print(f"skcal report: error: {exc}", file=sys.stderr)
        return 2
    try:
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
        elif _is_parquet_input(args.csv):
            reports, title, intro = _run_report_parquet(args)
        else:
            reports, title, intro = _run_report_csv(args)
    except (ValueError, TypeError) as exc:
        if demo:  # the demo has no user input: a ValueError there is a bug, keep its traceback
            raise
        print(f"skcal report: error: {exc}", file=sys.stderr)
        return 2
    _write(reports, title, intro, args.format, args.out)
    for r in reports:
        print(f"\n{r.title}")
        print(r.to_text())
    if args.markdown:
        _write(reports, title, intro, "md", args.markdown)
    if not args.quiet:
        print(f"\n[skcal] report written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
