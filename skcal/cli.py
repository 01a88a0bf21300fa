"""The ``skcal`` command line: calibration reports from a CSV file of predictions, and the demo.

Commands
--------
``skcal report PREDICTIONS.csv [--out report.html]``
    A calibration report (see :func:`skcal.calibration_report`) over a CSV file of predictions.
``skcal report --demo [--out report.html]``
    Fits several scikit-learn classifiers and a bagged ensemble on data bundled with
    scikit-learn, recalibrates the ensemble to second order, writes the report and prints the
    table.
``skcal demo``
    The same as ``skcal report --demo``.

Run ``skcal report --help`` for the CSV column convention.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys

import numpy as np
import pandas as pd

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

  A file has either a "y" column or snapshot columns "y1", "y2", ... (the label name "y" can be
  changed with --label); columns listed with --ignore (e.g. an id column) are skipped; every
  other column must be a model. Probabilities must be numbers without empty cells.

  example (first order):            example (second order):
    y,logistic,forest                 y1,y2,ensemble:m,ensemble:sigma2
    1,0.91,0.85                       1,0,0.42,0.031
    0,0.12,0.30                       1,1,0.88,0.004
"""


#: Default bootstrap replicates of a CSV report and of the demo (the demo's smECE bootstrap over
#: five models is its most expensive step; 100 replicates keep it well under a minute on 2 cores).
CSV_N_BOOTSTRAP = 200
DEMO_N_BOOTSTRAP = 100


class CSVFormatError(ValueError):
    """A predictions CSV file that does not follow the column convention."""


def _line(row_index):
    """The 1-based file line of a data row (the header is line 1)."""
    return int(row_index) + 2


_ID_NAME = re.compile(r"^(id|ids|index|idx|key|name|names|uid|uuid|row|rows|sample|example)$|[_ -]id$", re.I)


def _looks_like_id(col, raw, bad):
    """Whether a non-numeric column looks like an identifier (by its name, or distinct text cells)."""
    if _ID_NAME.search(col):
        return True
    return bool(bad.all()) and raw.nunique() == raw.shape[0]


def _parse_numeric(df, col, path):
    raw = df[col].astype(str).str.strip()
    empty = (raw == "") | raw.str.lower().isin(["nan", "na", "n/a", "null", "none"])  # missing cells
    values = pd.to_numeric(raw.where(~empty), errors="coerce")
    bad = values.isna() & ~empty
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        hint = ""
        if _looks_like_id(col, raw, bad):
            hint = f" It looks like an identifier: skip it with --ignore {col}."
        raise CSVFormatError(
            f"{path}: column {col!r} must be numeric; line {_line(i)} holds {raw.iloc[i]!r} "
            f"({int(bad.sum())} non-numeric cells in this column).{hint}"
        )
    return values.to_numpy(dtype=float), empty.to_numpy()


def _model_column(df, col, path, lo, hi, what, plural):
    values, empty = _parse_numeric(df, col, path)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise CSVFormatError(
            f"{path}: column {col!r} has {int(empty.sum())} empty or NaN cells (first at line {_line(i)}); "
            f"every model needs a {what} for every row."
        )
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise CSVFormatError(
            f"{path}: column {col!r} has an infinite value at line {_line(i)}; expected a {what}."
        )
    out = (values < lo) | (values > hi)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise CSVFormatError(
            f"{path}: column {col!r} must hold {plural} in [{lo:g}, {hi:g}]; line {_line(i)} holds "
            f"{values[i]:g} ({int(out.sum())} values out of range)."
        )
    return values


def read_predictions_csv(path, *, label="y", pos_label=None, ignore=()):
    """Read a CSV file of labels and model predictions (the column convention of ``skcal report``).

    Parameters
    ----------
    path : str or path-like
        The CSV file.
    label : str, default="y"
        Name of the label column; snapshot columns are ``label`` followed by digits.
    pos_label : str, default=None
        The positive class when the labels are not 0/1, -1/1 or true/false.
    ignore : sequence of str, default=()
        Columns to skip (e.g. an id column).

    Returns
    -------
    y : ndarray of shape (n,) or (n, k)
        Labels (0/1 floats) or snapshots (0/1 floats, NaN for a missing vote).
    predictions : dict
        Model name -> ``(n,)`` probabilities or ``(n, 2)`` scores ``(m, sigma2)``.

    Raises
    ------
    CSVFormatError
        A ``ValueError`` that names the file, the column and the line of the first problem.
    """
    path = str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except FileNotFoundError:
        raise CSVFormatError(f"{path}: no such file.") from None
    except UnicodeDecodeError as exc:
        raise CSVFormatError(f"{path}: not a UTF-8 text file ({exc.reason}).") from None
    if not header or all(not h.strip() for h in header):
        raise CSVFormatError(f"{path}: the file is empty; expected a header row naming the columns.")
    header = [h.strip() for h in header]
    if len(header) == 1:
        for sep, name in ((";", "semicolon"), ("\t", "tab")):
            if sep in header[0]:
                raise CSVFormatError(
                    f"{path}: the header {header[0]!r} is one column holding {name}s; the file must be "
                    "comma-separated (e.g. y,model_a,model_b)."
                )
    if any(h == "" for h in header):
        raise CSVFormatError(f"{path}: column {header.index('') + 1} has an empty name in the header.")
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise CSVFormatError(f"{path}: duplicate column names {dups}; every column needs its own name.")
    missing_ignored = [c for c in ignore if c not in header]
    if missing_ignored:
        raise CSVFormatError(f"{path}: --ignore names columns that do not exist: {missing_ignored}.")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, encoding="utf-8-sig")
    except pd.errors.ParserError as exc:
        raise CSVFormatError(f"{path}: malformed CSV ({exc}).") from None
    df.columns = header
    if df.shape[0] == 0:
        raise CSVFormatError(f"{path}: the file has a header but no data rows.")
    cols = [c for c in header if c not in set(ignore)]
    snap_re = re.compile(rf"^{re.escape(label)}\d+$")
    snap_cols = [c for c in cols if snap_re.match(c)]
    if label in cols and snap_cols:
        raise CSVFormatError(
            f"{path}: found both a label column {label!r} and snapshot columns {snap_cols}; use one or "
            "the other (or --ignore some)."
        )
    if label in cols:
        model_cols = [c for c in cols if c != label]
        if not model_cols:
            raise CSVFormatError(f"{path}: no model columns besides the label column {label!r}.")
        paired = [c for c in model_cols if c.endswith((":m", ":sigma2"))]
        if paired:
            raise CSVFormatError(
                f"{path}: columns {paired} are second-order (NAME:m / NAME:sigma2) but the file has a "
                f"single label column {label!r}; second-order scores need snapshot columns "
                f"{label}1, {label}2, ..."
            )
        y = _labels(df[label].str.strip().to_numpy(dtype=object), path, label, pos_label)
        preds = {c: _model_column(df, c, path, 0.0, 1.0, "probability", "probabilities") for c in model_cols}
        return y, preds
    if len(snap_cols) >= 2:
        Y = np.empty((df.shape[0], len(snap_cols)))
        for j, c in enumerate(snap_cols):
            values, empty = _parse_numeric(df, c, path)
            bad = ~empty & ~np.isin(values, (0.0, 1.0))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise CSVFormatError(
                    f"{path}: snapshot column {c!r} must hold 0/1 votes (empty for missing); line "
                    f"{_line(i)} holds {values[i]:g}."
                )
            Y[:, j] = values
        votes = (~np.isnan(Y)).sum(axis=1)
        if (votes < 2).any():
            i = int(np.flatnonzero(votes < 2)[0])
            raise CSVFormatError(
                f"{path}: every row needs at least 2 votes in {snap_cols}; line {_line(i)} has "
                f"{int(votes[i])}."
            )
        model_cols = [c for c in cols if c not in snap_cols]
        names = []
        for c in model_cols:
            base, sep, kind = c.rpartition(":")
            if not sep or kind not in ("m", "sigma2") or not base:
                raise CSVFormatError(
                    f"{path}: column {c!r} is not a snapshot column and not NAME:m or NAME:sigma2; a "
                    "second-order file pairs every model's m and sigma2 columns (or use --ignore)."
                )
            if base not in names:
                names.append(base)
        if not names:
            raise CSVFormatError(f"{path}: no model columns (NAME:m, NAME:sigma2) besides the snapshots.")
        preds = {}
        for name in names:
            for kind in ("m", "sigma2"):
                if f"{name}:{kind}" not in model_cols:
                    raise CSVFormatError(f"{path}: model {name!r} has no {name}:{kind} column.")
            m = _model_column(df, f"{name}:m", path, 0.0, 1.0, "mean", "means")
            s2 = _model_column(df, f"{name}:sigma2", path, 0.0, 0.25, "variance", "variances")
            preds[name] = np.column_stack([m, s2])
        return Y, preds
    raise CSVFormatError(
        f"{path}: no label column; expected a column named {label!r} (one label per row) or snapshot "
        f"columns {label}1, {label}2, ... (several votes per row). Columns found: {header}. "
        "Use --label to name the label column."
    )


def _labels(raw, path, col, pos_label):
    empty = np.array([s == "" or s.lower() == "nan" for s in raw])
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise CSVFormatError(f"{path}: label column {col!r} has an empty or NaN cell at line {_line(i)}.")
    values = np.unique(raw)
    if len(values) > 2:
        raise CSVFormatError(
            f"{path}: label column {col!r} must hold two classes; found {len(values)}: "
            f"{values[:10].tolist()}{'...' if len(values) > 10 else ''}."
        )
    if pos_label is not None:
        pos = str(pos_label)
        if pos not in values.tolist():
            # numeric labels written differently ("1" vs "1.0")
            try:
                num = np.array([float(v) for v in raw])
                return (num == float(pos)).astype(float)
            except ValueError:
                raise CSVFormatError(
                    f"{path}: --pos-label {pos!r} is not a label in column {col!r}: {values.tolist()}."
                ) from None
        return (raw == pos).astype(float)
    lowered = {v.lower() for v in values}
    if lowered <= {"true", "false"}:
        return np.array([v.lower() == "true" for v in raw], dtype=float)
    try:
        num = np.array([float(v) for v in raw])
    except ValueError:
        raise CSVFormatError(
            f"{path}: label column {col!r} has labels {values.tolist()}; pass --pos-label to say which is "
            "the positive class."
        ) from None
    classes = set(np.unique(num).tolist())
    if classes <= {0.0, 1.0}:
        return num
    if classes <= {-1.0, 1.0}:
        return (num == 1.0).astype(float)
    raise CSVFormatError(
        f"{path}: label column {col!r} has labels {sorted(classes)}; expected 0/1 (or -1/1, true/false), "
        "or pass --pos-label."
    )


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


def _confidence(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {v}")
    return v


def _add_common(p):
    p.add_argument("--out", default="report.html", help="HTML file to write (default: %(default)s)")
    p.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown to PATH")
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
        "--confidence", type=_confidence, default=0.9, help="interval coverage (default: %(default)s)"
    )
    p.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help=(
            "joblib workers over bootstrap replicates, -1 for every core (default: 1; worth raising for "
            "large files or many replicates, not for the small demo)"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the table, no progress lines")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="skcal",
        description="skcal: measure the calibration of probabilistic classifiers.",
    )
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
    rep.add_argument("csv", nargs="?", metavar="PREDICTIONS.csv", help="labels and predictions (see below)")
    rep.add_argument(
        "--demo", action="store_true", help="run the built-in demo instead of reading a CSV file"
    )
    rep.add_argument("--label", default="y", help="name of the label column (default: %(default)s)")
    rep.add_argument("--pos-label", default=None, help="the positive class, for labels other than 0/1")
    rep.add_argument(
        "--ignore", action="append", default=[], metavar="COL", help="skip column COL (repeatable)"
    )
    rep.add_argument(
        "--metrics",
        default=None,
        help=(
            "comma-separated metric names; first order: scdl, smooth_ece, cutoff, binned_ece, accuracy, "
            "brier, log_loss, roc_auc (default: all but roc_auc); second order adds ce2, "
            "second_moment_mse, variance_bias (default: ce2, scdl, brier, second_moment_mse, variance_bias)"
        ),
    )
    rep.add_argument("--title", default=None, help="report title")
    _add_common(rep)
    demo = sub.add_parser(
        "demo",
        help="the built-in demo (same as 'skcal report --demo')",
        description=(
            "Fit several scikit-learn classifiers and a bagged ensemble on data bundled with "
            "scikit-learn, print a table of SCDL, smECE, cutoff error, binned ECE, accuracy, Brier "
            "and log loss per model, recalibrate the ensemble to second order, and write the HTML "
            "report. The same as 'skcal report --demo'."
        ),
    )
    _add_common(demo)
    return parser


def _run_report_csv(args):
    from skcal.report import CalibrationReport

    y, preds = read_predictions_csv(args.csv, label=args.label, pos_label=args.pos_label, ignore=args.ignore)
    metrics = None if args.metrics is None else [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not args.quiet:
        kind = "snapshots" if y.ndim == 2 else "labels"
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
        n_jobs=args.n_jobs,
        random_state=args.seed,
        title=args.title or f"Calibration report: {args.csv}",
        verbose=0 if args.quiet else 1,
    )
    return [report], report.title, []


def main(argv=None):
    """Run the ``skcal`` command line; return the exit status (0 on success, 2 on bad input).

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    int
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        if args.demo and args.csv:
            parser.error("give either PREDICTIONS.csv or --demo, not both")
        if not args.demo and not args.csv:
            parser.error("give PREDICTIONS.csv (or --demo for the built-in demo)")
    demo = args.command == "demo" or args.demo
    try:
        if demo:
            from skcal._demo import run_demo

            reports, title, intro = run_demo(
                n_bootstrap=DEMO_N_BOOTSTRAP if args.n_bootstrap is None else args.n_bootstrap,
                confidence_level=args.confidence,
                n_jobs=args.n_jobs,
                random_state=args.seed,
                verbose=0 if args.quiet else 1,
            )
        else:
            reports, title, intro = _run_report_csv(args)
    except ValueError as exc:
        if demo:  # the demo has no user input: a ValueError there is a bug, keep its traceback
            raise
        print(f"skcal report: error: {exc}", file=sys.stderr)
        return 2
    from skcal.report import render_html

    render_html(reports, path=args.out, title=title, intro=intro)
    for r in reports:
        print(f"\n{r.title}")
        print(r.to_text())
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write("\n".join(r.to_markdown() for r in reports))
    if not args.quiet:
        print(f"\n[skcal] report written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
