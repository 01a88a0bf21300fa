"""Labels, models and first rows across the chunks of a report past memory (issue 37, item 2).

The label set of :func:`skcal.report.report_from_batches` is that of all chunks, as in memory: given
in advance (``labels=``) or checked chunk by chunk against the labels of the chunks before it, so a
third label, ``{0, 1}`` beside ``{-1, 1}`` or two labels without ``pos_label`` among them are
errors naming the chunk and the row, never rows silently counted as negatives. ``models`` is a list
of names, and every chunk's ``first_row`` is checked against the rows the chunks before it
delivered (it keys the bootstrap weights).
"""

import numpy as np
import pandas as pd
import pytest

from skcal import CalibrationReport
from skcal.report import report_from_batches

N = 600
_rng = np.random.default_rng(3)
P = _rng.uniform(0.05, 0.95, N)
Y = (_rng.uniform(size=N) < P).astype(int)
YES = np.where(Y == 1, "yes", "no").astype(object)
KW = dict(n_bootstrap=20, n_resamples=50, random_state=0)


def _batches(labels, cuts=(0, 200, 400, N), firsts=None):
    def gen():
        for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            yield (a if firsts is None else firsts[k]), labels[a:b], {"m": P[a:b]}

    return gen


def _run(y, **kw):
    return report_from_batches(_batches(y), n_samples=N, models=["m"], **{**KW, **kw})


def test_a_third_label_in_a_later_chunk_is_named_not_counted_as_negative():
    y = YES.copy()
    y[[450, 470]] = "maybe"  # chunk 3 (rows 400-599)
    with pytest.raises(ValueError, match=r"chunk whose first row is 400 holds the label 'maybe' at row 450"):
        _run(y, pos_label="yes")
    # in memory the same labels are an error too
    with pytest.raises(ValueError, match="3 classes"):
        CalibrationReport.from_predictions(y, {"m": P}, pos_label="yes", **KW)


def test_zero_one_and_minus_one_one_mixed_across_chunks_are_rejected():
    y = Y.copy()
    y[400:] = 2 * Y[400:] - 1  # {0, 1} in the first chunks, {-1, 1} in the last
    first_minus = 400 + int(np.flatnonzero(y[400:] == -1)[0])
    with pytest.raises(ValueError, match=rf"first row is 400 holds the label -1 at row {first_minus}"):
        _run(y)
    with pytest.raises(ValueError, match="not in labels"):
        _run(y, labels=[0, 1])


def test_two_labels_without_pos_label_across_chunks():
    y = YES.copy()
    y[:400] = "no"  # the first chunks hold one label only
    with pytest.raises(ValueError, match="pass pos_label"):
        _run(y)


def test_a_given_label_set_names_the_chunk_and_the_row():
    y = YES.copy()
    y[333] = "maybe"
    match = r"first row is 200 holds the label 'maybe' at row 333, which is not in labels \['no', 'yes'\]"
    with pytest.raises(ValueError, match=match):
        _run(y, pos_label="yes", labels=["no", "yes"])


@pytest.mark.parametrize(
    "labels, pos_label, match",
    [
        (["no", "yes"], None, "pass pos_label"),
        (["no", "yes"], "maybe", "pos_label='maybe' is not one of the labels"),
        (["a", "b", "c"], "a", "3 classes"),
        ([0, 1, 1], None, "duplicates"),
        ([], None, "non-empty"),
    ],
)
def test_a_bad_label_set_is_refused(labels, pos_label, match):
    with pytest.raises(ValueError, match=match):
        _run(YES if pos_label else Y, labels=labels, pos_label=pos_label)


def test_valid_label_sets_give_the_in_memory_report():
    ref = CalibrationReport.from_predictions(Y, {"m": P}, **KW)
    for labels, kw in [(Y, {}), (Y, {"labels": [0, 1]}), (2 * Y - 1, {}), (YES, {"pos_label": "yes"})]:
        rep = _run(labels, **kw)
        pd.testing.assert_frame_equal(rep.table, ref.table, rtol=1e-10)
    # a chunk holding one label only is fine: the rule maps it the same way in every chunk
    y = Y.copy()
    y[:200] = 1
    rep = _run(y)
    ref1 = CalibrationReport.from_predictions(y, {"m": P}, **KW)
    pd.testing.assert_frame_equal(rep.table, ref1.table, rtol=1e-10)


@pytest.mark.parametrize("models", ["m", "mm", ["m", 1], ("m", "m")])
def test_models_must_be_a_list_of_names(models):
    with pytest.raises(ValueError, match="'models' parameter .* list or tuple of distinct non-empty names"):
        report_from_batches(_batches(Y), n_samples=N, models=models, **KW)


@pytest.mark.parametrize(
    "firsts, match",
    [
        ((0, 100, 400), "says its first row is 100, but the chunks before it delivered 200 rows"),
        ((0, 200, 401), "says its first row is 401, but the chunks before it delivered 400 rows"),
        ((1, 200, 400), "says its first row is 1, but the chunks before it delivered 0 rows"),
        ((0, 200.0, 400), "first_row must be an integer"),
    ],
)
def test_first_row_is_checked_against_what_the_batches_deliver(firsts, match):
    with pytest.raises(ValueError, match=match):
        report_from_batches(_batches(Y, firsts=firsts), n_samples=N, models=["m"], **KW)


def test_more_or_fewer_rows_than_n_samples():
    with pytest.raises(ValueError, match="more than n_samples=500"):
        report_from_batches(_batches(Y), n_samples=500, models=["m"], **KW)
    with pytest.raises(ValueError, match="held 600 rows in the report's pass, but 700"):
        report_from_batches(_batches(Y), n_samples=700, models=["m"], **KW)


def test_dask_reads_the_label_set_first_and_names_the_partition():
    dd = pytest.importorskip("dask.dataframe")
    from skcal.dask import calibration_report_dask

    y = Y.copy()
    y[400:] = 2 * Y[400:] - 1
    frame = dd.from_pandas(pd.DataFrame({"y": y, "m": P}), npartitions=3)
    with pytest.raises(ValueError, match=r"partition 2 holds the labels \[-1, 1\]"):
        calibration_report_dask(frame, scheduler="sync", **KW)
    with pytest.raises(ValueError, match="not in labels"):
        calibration_report_dask(frame, scheduler="sync", labels=[0, 1], **KW)
    ref = CalibrationReport.from_predictions(Y, {"m": P}, **KW)
    good = dd.from_pandas(pd.DataFrame({"y": YES, "m": P}), npartitions=3)
    rep = calibration_report_dask(good, scheduler="sync", pos_label="yes", **KW)
    pd.testing.assert_frame_equal(rep.table, ref.table, rtol=1e-10)
