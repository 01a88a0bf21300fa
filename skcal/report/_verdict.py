"""The verdict: a few sentences in plain words at the top of a report.

Which model is best calibrated and how sure that is (from ``p_best``), which models are
miscalibrated at the 5% level (from the per-model calibration test), what to try next (from the
report kind), and which model the proper scores prefer.
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


def headline_metric(kind, results):
    """The metric deciding "best calibrated": the kind's headline, else the first calibration error."""
    if kind.headline in results.metric_names:
        return kind.headline
    for name in results.metric_names:
        if results.metric_is_calibration[name]:
            return name
    return None


def miscalibrated_models(results):
    """Models whose calibration-test p-value is below :data:`TEST_LEVEL`."""
    tests = results.calibration_tests
    if tests is None:
        return []
    return [m for m in results.model_names if tests.loc[m, "pvalue"] < TEST_LEVEL]


def build_verdict(kind, results):
    """The verdict's sentences (a list of str) from a report kind and its computed results.

    Parameters
    ----------
    kind : ReportKind
        The report kind (its headline metric, test description and advice).
    results : ReportResults
        The computed table and calibration tests.

    Returns
    -------
    list of str
        The sentences.
    """
    lines = []
    fmt = results.format_value
    head = headline_metric(kind, results)
    if head is not None:
        t = results.table[head]
        best = [m for m in results.model_names if t.loc[m, "rank"] == 1]
        label = results.metric_labels[head]
        if len(best) == 1:
            b = best[0]
            lines.append(
                f"Best calibrated: {b} ({label} {fmt(t.loc[b, 'value'])}; {_certainty(t.loc[b, 'p_best'])})."
            )
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
        elif best:
            lines.append(f"Tied for best calibrated by {label}: {', '.join(best)}.")
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
        else:
            lines.append(
                f"No model is detectably miscalibrated at the {100 * TEST_LEVEL:g}% level (calibration "
                f"test of {what}; smallest {format_pvalue(tests['pvalue'].min())})."
            )
    lines += kind.advice(results, mis)
    if results.budget_limited:
        B, asked = results.n_bootstrap, results.n_bootstrap_requested
        lines.append(
            f"The intervals and P(best) come from {B} bootstrap replicates, not the {asked} asked, to fit "
            f"the time budget (max_seconds): their Monte Carlo error grows as 1/sqrt(B), about "
            f"{np.sqrt(asked / B):.1f} times that of {asked} replicates."
        )
    for proper in ("log_loss", "brier"):
        if proper in results.metric_names:
            t = results.table[proper]
            best = [m for m in results.model_names if t.loc[m, "rank"] == 1]
            who = best[0] if len(best) == 1 else "tied between " + ", ".join(best)
            lines.append(
                f"By {results.metric_labels[proper]}, which rewards calibration and sharpness together, the "
                f"best is {who} ({fmt(t.loc[best[0], 'value'])})."
            )
            break
    return lines
