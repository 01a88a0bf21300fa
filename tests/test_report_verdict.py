"""The report's primary measure: the table is ranked by it and the verdict speaks of it."""

import numpy as np
import pytest

from skcal._demo import run_demo
from skcal.report import CalibrationReport
from skcal.report._render import TEXT_WIDTH, formatted_table, table_order


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    return y, {"biased": np.clip(p + 0.12, 0, 1), "honest": p, "sharp": np.clip(1.4 * p - 0.2, 0, 1)}


def _agrees(report):
    """The verdict's first sentence names the primary measure and the table's first row and column."""
    head = report.primary_metric
    label = report.metric_labels[head]
    models, metrics = table_order(report)
    assert metrics[0] == head
    assert list(formatted_table(report).columns)[0] == label
    ranks = report.table[head]["rank"]
    assert list(ranks[models]) == sorted(ranks)  # rows ranked by the primary measure
    first = report.verdict[0]
    assert f"by {label} (the primary measure)" in first or f"by {label}, the primary measure" in first
    best = [m for m in models if ranks[m] == 1]
    if len(best) == 1 and len(models) > 1:
        assert first.split(": ", 1)[1].startswith(best[0])


def test_the_verdict_speaks_of_the_measure_the_table_is_ranked_by():
    y, preds = _data()
    report = CalibrationReport.from_predictions(y, preds, n_bootstrap=20, n_resamples=100, random_state=0)
    assert report.primary_metric == "smooth_ece"
    _agrees(report)
    assert any(line.startswith("Supporting evidence") for line in report.verdict)


@pytest.mark.parametrize("primary", ["scdl", "cutoff", "brier"])
def test_a_primary_measure_asked_for_ranks_the_table_and_leads_the_verdict(primary):
    y, preds = _data(seed=1)
    report = CalibrationReport.from_predictions(
        y, preds, n_bootstrap=10, n_resamples=50, random_state=0, primary=primary
    )
    assert report.primary_metric == primary
    _agrees(report)
    if primary == "brier":
        assert report.verdict[0].startswith("Best by Brier")


def test_a_primary_measure_not_in_the_report_is_refused_before_computing():
    y, preds = _data(n=100)
    with pytest.raises(ValueError, match=r"primary: 'roc_auc' is not one of the report's metrics"):
        CalibrationReport.from_predictions(y, preds, primary="roc_auc", n_bootstrap=0)
    with pytest.raises(ValueError, match="primary"):
        CalibrationReport.from_predictions(y, preds, primary=3, n_bootstrap=0)


def test_a_one_model_report_speaks_of_calibration_not_of_winning():
    y, preds = _data(seed=2)
    report = CalibrationReport.from_predictions(
        y, {"honest": preds["honest"]}, n_bootstrap=20, n_resamples=200, random_state=0
    )
    text = " ".join(report.verdict).lower()
    for word in ("best", "winner", "contention", "choose"):
        assert word not in text
    assert report.verdict[0].startswith("Calibration error of honest by smECE, the primary measure: ")
    _agrees(report)
    assert "#" not in report.to_text().split("\n\n", 1)[1]  # no ranks when there is nothing to rank


def test_the_terminal_table_fits_100_columns():
    y, preds = _data()
    preds = {f"{name} with a rather long model name": p for name, p in preds.items()}
    report = CalibrationReport.from_predictions(y, preds, n_bootstrap=5, n_resamples=20, random_state=0)
    lines = report.to_text().splitlines()
    assert max(len(line) for line in lines) <= TEXT_WIDTH
    assert sum(line.startswith("model ") for line in lines) >= 2  # cut into blocks of columns


def test_the_demo_verdicts_agree_with_their_tables():
    reports, _, _ = run_demo(n_bootstrap=5, n_resamples=20, random_state=0, verbose=0)
    for report in reports:
        _agrees(report)
        assert max(len(line) for line in report.to_text().splitlines()) <= TEXT_WIDTH
