"""The verdict: a few sentences in plain words at the top of a report.

The report has one primary measure (the ``primary`` parameter, by default the kind's headline:
smECE for first-order reports, see ``docs/benchmarks/primary_measure.md``). The verdict says
which model it ranks best and how sure that is (from ``p_best``), names the other calibration
measures as supporting evidence, which models are miscalibrated at the 5% level (from the
per-model calibration test), what to try next (from the report kind), and which model the
proper scores prefer. A report of one model says how calibrated it is, not that it wins.
"""

from __future__ import annotations

import numpy as np

#: Level of the per-model calibration test in the verdict.
TEST_LEVEL = 0.05


def _certainty(p_best):
    if not np.isfinite(p_best):
        return "no bootstrap was run, so how sure this is is unknown"
    pct = f"the best in {100 * p_best:.0f}% of the bootstrap resamples"
    if p_best >= 0.9:
        return f"{pct}: a clear winner"
    if p_best >= 0.6:
        return f"{pct}: probably, not certainly, the best"
    return f"{pct}: not clearly better than the others on this sample"


def format_pvalue(p):
    """``p = 0.012`` style, with ``p < 0.001`` below a thousandth."""
    if not np.isfinite(p):
        return "p = nan"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3g}"


def primary_metric(kind, metric_names, metric_is_calibration, requested=None):
    """The report's primary measure: the one its table is ranked by and its verdict speaks of.

    Parameters
    ----------
    kind : ReportKind
        The report kind; its ``headline`` is the default primary measure.
    metric_names : sequence of str
        The report's metrics.
    metric_is_calibration : dict
        Metric name -> whether it is a calibration error.
    requested : str or None, default=None
        The ``primary`` the user asked for (one of ``metric_names``).

    Returns
    -------
    str or None
        ``requested``; else the kind's headline when the report has it; else its first
        calibration error; else its first metric (None without metrics).
    """
    if requested is not None:
        if requested not in metric_names:
            raise ValueError(
                f"primary: {requested!r} is not one of the report's metrics {list(metric_names)}; "
                "name one of them (or add it to metrics)."
            )
        return requested
    if kind.headline in metric_names:
        return kind.headline
    for name in metric_names:
        if metric_is_calibration[name]:
            return name
    return metric_names[0] if len(metric_names) else None


def miscalibrated_models(results):
    """Models whose calibration-test p-value is below :data:`TEST_LEVEL`."""
    tests = results.calibration_tests
    if tests is None:
        return []
    return [m for m in results.model_names if tests.loc[m, "pvalue"] < TEST_LEVEL]


def _ranked_by(results, name):
    """The models ranked first by metric ``name`` (several on a tie)."""
    t = results.table[name]
    return [m for m in results.model_names if t.loc[m, "rank"] == 1]


def _interval(results, name, model):
    t = results.table[name]
    lo, hi = t.loc[model, "low"], t.loc[model, "high"]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return ""
    return f" [{results.format_value(lo)}, {results.format_value(hi)}]"


def _primary_lines(results, head):
    """What the primary measure says: the best model and how sure, or one model's value."""
    fmt = results.format_value
    t = results.table[head]
    label = results.metric_labels[head]
    is_cal = results.metric_is_calibration[head]
    if len(results.model_names) == 1:
        (m,) = results.model_names
        what = "Calibration error" if is_cal else "Score"
        value = f"{fmt(t.loc[m, 'value'])}{_interval(results, head, m)}"
        return [f"{what} of {m} by {label}, the primary measure: {value}."]
    best = _ranked_by(results, head)
    title = "Best calibrated" if is_cal else "Best"
    if len(best) != 1:
        return [f"{title} by {label} (the primary measure): tied between {', '.join(best)}."]
    b = best[0]
    lines = [
        f"{title} by {label} (the primary measure): {b} ({fmt(t.loc[b, 'value'])}"
        f"{_interval(results, head, b)}; {_certainty(t.loc[b, 'p_best'])})."
    ]
    close = [
        m
        for m in results.model_names
        if m != b and np.isfinite(t.loc[m, "p_best"]) and t.loc[m, "p_best"] >= 0.1
    ]
    if close:
        lines.append(
            "Also in contention: "
            + ", ".join(f"{m} (best in {100 * t.loc[m, 'p_best']:.0f}%)" for m in close)
            + "."
        )
    others = [n for n in results.metric_names if n != head and results.metric_is_calibration[n]]
    if others:
        ranks = [f"#{int(results.table[n].loc[b, 'rank'])} by {results.metric_labels[n]}" for n in others]
        agree = all(results.table[n].loc[b, "rank"] == 1 for n in others)
        lines.append(
            f"Supporting evidence, the other calibration measures: {b} ranks {', '.join(ranks)}"
            + (
                " (they agree)."
                if agree
                else " (the measures weigh miscalibration differently; the primary measure decides)."
            )
        )
    return lines


def build_verdict(kind, results, primary=None):
    """The verdict's sentences (a list of str) from a report kind and its computed results.

    The verdict speaks of one measure, the report's primary measure (:func:`primary_metric`):
    which model it ranks best and how sure that is, with the other calibration measures named
    as supporting evidence. A report of one model says how calibrated that model is, not that
    it wins.

    Parameters
    ----------
    kind : ReportKind
        The report kind (its headline metric, test description and advice).
    results : ReportResults
        The computed table and calibration tests.
    primary : str or None, default=None
        The primary measure asked for (None: the kind's default).

    Returns
    -------
    list of str
        The sentences.
    """
    fmt = results.format_value
    head = primary_metric(kind, results.metric_names, results.metric_is_calibration, primary)
    lines = [] if head is None else _primary_lines(results, head)
    tests = results.calibration_tests
    mis = miscalibrated_models(results)
    if tests is not None:
        what = kind.test_description()
        if mis:
            lines.append(
                f"Miscalibrated at the {100 * TEST_LEVEL:g}% level (calibration test of {what}): "
                + ", ".join(f"{m} ({format_pvalue(tests.loc[m, 'pvalue'])})" for m in mis)
                + "."
            )
        elif len(results.model_names) == 1:
            lines.append(
                f"{results.model_names[0]} is not detectably miscalibrated at the {100 * TEST_LEVEL:g}% "
                f"level (calibration test of {what}; {format_pvalue(tests['pvalue'].min())})."
            )
        else:
            lines.append(
                f"No model is detectably miscalibrated at the {100 * TEST_LEVEL:g}% level (calibration "
                f"test of {what}; smallest {format_pvalue(tests['pvalue'].min())})."
            )
    if len(results.model_names) > 1 or mis:  # one calibrated model: nothing to choose between
        lines += kind.advice(results, mis)
    if results.budget_limited:
        B, asked = results.n_bootstrap, results.n_bootstrap_requested
        lines.append(
            f"The intervals and P(best) come from {B} bootstrap replicates, not the {asked} asked, to fit "
            f"the time budget (max_seconds): their Monte Carlo error grows as 1/sqrt(B), about "
            f"{np.sqrt(asked / B):.1f} times that of {asked} replicates."
        )
    for proper in ("log_loss", "brier"):
        if proper in results.metric_names and len(results.model_names) > 1 and proper != head:
            t = results.table[proper]
            best = [m for m in results.model_names if t.loc[m, "rank"] == 1]
            who = best[0] if len(best) == 1 else "tied between " + ", ".join(best)
            lines.append(
                f"By {results.metric_labels[proper]}, which rewards calibration and sharpness together, the "
                f"best is {who} ({fmt(t.loc[best[0], 'value'])})."
            )
            break
    return lines
