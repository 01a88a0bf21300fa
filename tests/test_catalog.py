"""The catalogue of measures (skcal._catalog): one entry per measure, every table built from it."""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from skcal._catalog import CATALOG, INPUTS, Measure, measure, measures

PACKAGE = Path(__file__).resolve().parents[1] / "skcal"


def test_entries_are_unique_per_input_and_consistent():
    keys = [(m.name, m.input) for m in CATALOG]
    assert len(keys) == len(set(keys))
    for m in CATALOG:
        assert m.input in INPUTS and m.label and m.description, m.name
        if m.dask or m.out_of_core:
            assert m.statistics is not None, m.name
        if m.calibration_test or m.scorer:
            assert m.function is not None, m.name
        if m.out_of_core or m.calibration_test:
            assert m.input == "binary", m.name
        if m.statistics is not None:
            m.make(**({"labels": [0, 1, 2]} if "labels" in m.label_args and m.input == "multiclass" else {}))


def test_measures_select_by_input_and_flags():
    assert list(measures("binary", report=True))[:3] == ["scdl", "smooth_ece", "smooth_calibration_error"]
    assert "ce2" in measures("second_order", report=True) and "ce2" not in measures("binary")
    assert set(measures(dask=True)) >= {"brier", "ce2", "truthful_conf_ce", "cutoff_grid"}
    assert measure("brier", "multiclass") is not measure("brier")
    with pytest.raises(KeyError, match="no measure 'nope'"):
        measure("nope")
    with pytest.raises(ValueError, match="input must be one of"):
        Measure("x", "ternary", None, "x", "x")


def test_an_entry_pickles_by_reference():
    m = measure("smooth_calibration_error")
    assert pickle.loads(pickle.dumps(m)) is m  # its functions (lambdas) need not pickle


def test_binary_templates_follow_the_rows():
    from skcal.stats import (
        CutoffGridStatistics,
        CutoffStatistics,
        SmoothCEGridStatistics,
        SmoothCEStatistics,
        SortedCutoffStatistics,
    )

    cutoff = measure("cutoff")
    assert type(cutoff.value_template(10)) is CutoffStatistics
    assert type(cutoff.replicate_template(10)) is CutoffStatistics
    assert type(cutoff.replicate_template(10, sorted_rows=True)) is SortedCutoffStatistics
    assert type(cutoff.value_template(10, exact=False)) is CutoffGridStatistics
    smce = measure("smooth_calibration_error")
    assert type(smce.value_template(10)) is SmoothCEStatistics
    assert smce.replicate_template(10**6).get_params()["n_cells"] == 4096
    assert type(smce.value_template(10**7, exact=False)) is SmoothCEGridStatistics
    assert measure("scdl").value_template(10_000).get_params()["max_bins"] == 512
    assert measure("roc_auc").value_template(10) is None


# ---------------------------------------------------------------------------------------------
# a new measure is its statistics file, its function file and one catalogue entry
# ---------------------------------------------------------------------------------------------
TOY_STATISTICS = '''
"""A toy measure's statistics: |sum w (y - p)| / sum w, the bias of the predictions."""

import numpy as np

from skcal._constraints import POS_LABEL
from skcal.stats._base import BinaryStatistics


class ToyStatistics(BinaryStatistics):
    _param_names = ("pos_label",)
    _parameter_constraints: dict = {"pos_label": POS_LABEL}

    def __init__(self, *, pos_label=None):
        self.pos_label = pos_label

    def _empty(self):
        return {"resid": np.zeros(()), "weight": np.zeros(())}

    def _sums(self, y, p, w):
        w = np.ones_like(p) if w is None else w
        return {"resid": np.array(float(np.dot(w, y - p))), "weight": np.array(float(w.sum()))}

    def _compute(self):
        s = self.stats_
        return abs(float(s["resid"])) / float(s["weight"])
'''

TOY_FUNCTION = '''
"""A toy measure: the absolute bias of the predictions."""

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._validation import check_binary_probabilities
from skcal.stats._toy import ToyStatistics


@validate_params(BINARY_INPUTS, prefer_skip_nested_validation=True)
def toy_bias(y_true, y_prob, *, sample_weight=None, pos_label=None):
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return ToyStatistics.from_validated(y, p, w).compute()
'''

TOY_ENTRY = '''

from skcal.stats._toy import ToyStatistics  # noqa: E402
from skcal.toy import toy_bias  # noqa: E402

CATALOG = CATALOG + (
    Measure("toy_bias", "binary", toy_bias, "bias", "absolute mean of y - p", ToyStatistics,
            scorer="pos_label", report=True, dask="exact", calibration_test=True),
)
'''

TOY_USE = '''
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import get_scorer

import dask.array as da
from skcal.calibration_test import calibration_test
from skcal.dask import evaluate
from skcal.report import CalibrationReport
from skcal.toy import toy_bias

rng = np.random.default_rng(0)
X = rng.normal(size=(400, 2))
y = (rng.uniform(size=400) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
model = LogisticRegression().fit(X, y)
p = model.predict_proba(X)[:, 1]
value = toy_bias(y, p)
# a scorer
assert get_scorer("toy_bias")(model, X, y) == -value
assert get_scorer("neg_toy_bias")(model, X, y) == -value
# a report metric with intervals (its replicates through the generic loop of its statistics)
report = CalibrationReport.from_predictions(y, {"m": p}, metrics=["toy_bias", "brier"], n_bootstrap=30,
                                            random_state=0, test_calibration=False)
row = report.table.loc["m", "toy_bias"]
assert abs(row["value"] - value) < 1e-12 and row["low"] < row["high"], row
# Dask
out = evaluate(da.from_array(y, chunks=150), da.from_array(p, chunks=150), ["toy_bias"], scheduler="sync")
assert abs(out["toy_bias"] - value) < 1e-12
# the calibration test
res = calibration_test(y, p, measure="toy_bias", n_resamples=49, random_state=0)
assert res.measure == "toy_bias" and res.statistic == value and 0 < res.pvalue <= 1
print("toy measure: scorer, report, dask and calibration test")
'''


def test_a_toy_measure_through_the_catalogue_alone(tmp_path):
    """A new binary measure is its statistics file, its function file and one catalogue entry:
    with no other module touched, it has a scorer, a report metric with intervals, Dask and the
    calibration test (a copy of the package, in a fresh process)."""
    pytest.importorskip("dask")
    copy = tmp_path / "skcal"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "stats" / "_toy.py").write_text(textwrap.dedent(TOY_STATISTICS))
    (copy / "toy.py").write_text(textwrap.dedent(TOY_FUNCTION))
    catalog = copy / "_catalog.py"
    catalog.write_text(catalog.read_text() + TOY_ENTRY)
    run = subprocess.run(
        [sys.executable, "-c", TOY_USE],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "toy measure" in run.stdout
    np.testing.assert_equal(run.returncode, 0)
