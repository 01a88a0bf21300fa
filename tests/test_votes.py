"""Vote counts as a first-class input: identical results to the equivalent snapshots everywhere."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GridSearchCV, KFold

from skcal import (
    SechPerturber,
    SecondOrderPlattCalibrator,
    calibration_report,
    ce1_score,
    ce2_details,
    ce2_score,
)
from skcal.report import CalibrationReport
from skcal.votes import (
    Snapshots,
    VoteCounts,
    check_class_scores,
    check_class_votes,
    check_snapshots,
    class_scores_layout,
    flat_class_scores,
    snapshot_targets,
    snapshot_votes,
)


def _data(n=600, seed=0, cmin=2, cmax=6):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.05, 0.95, n)
    s2 = rng.uniform(0, 0.25, n) * m * (1 - m)
    f = np.clip(m + rng.choice([-1.0, 1.0], n) * np.sqrt(s2), 0, 1)
    c = rng.integers(cmin, cmax + 1, n)
    a = rng.binomial(c, f)
    return np.column_stack([m, s2]), VoteCounts(a, c)


# ------------------------------------------------------------------------------ the type
def test_targets_and_snapshots_round_trip():
    v = VoteCounts([3, 0, 2, 1], [4, 2, 2, 1])
    t1, t2 = v.targets()
    np.testing.assert_allclose(t1, [0.75, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(t2[:3], [0.5, 0.0, 1.0])
    assert np.isnan(t2[3])  # one vote: no pair
    Y = v.to_snapshots()
    assert Y.shape == (4, 4)
    back = VoteCounts.from_snapshots(Y)
    np.testing.assert_array_equal(back.positive, v.positive)
    np.testing.assert_array_equal(back.total, v.total)
    rows, vals = v.votes()
    np.testing.assert_array_equal(rows, [0, 0, 0, 0, 1, 1, 2, 2, 3])
    np.testing.assert_array_equal(vals, [1, 1, 1, 0, 0, 0, 1, 1, 1])
    assert len(v) == 4 and v.shape == (4, 2)
    sub = v[[2, 0]]
    np.testing.assert_array_equal(sub.positive, [2, 3])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(2, 30)), min_size=1, max_size=30))
def test_targets_match_the_snapshot_formula(pairs):
    a = np.array([min(p, c) for p, c in pairs])
    c = np.array([c for _, c in pairs])
    v = VoteCounts(a, c)
    Y = v.to_snapshots()
    ta = snapshot_targets(check_snapshots(Snapshots(Y)))
    tv = snapshot_targets(check_snapshots(v))
    for x, y in zip(ta, tv, strict=True):
        np.testing.assert_array_equal(x, y)
    rows_a, vals_a = snapshot_votes(check_snapshots(Snapshots(Y)))
    rows_v, vals_v = snapshot_votes(v)
    np.testing.assert_array_equal(rows_a, rows_v)
    np.testing.assert_array_equal(vals_a, vals_v)


@pytest.mark.parametrize(
    "pos, tot, match",
    [
        ([1, 2], [2], "entries"),
        ([3], [2], "exceeds"),
        ([-1], [2], "non-negative"),
        ([0.5], [2], "integers"),
        ([np.nan], [2], "NaN"),
        ([1], [0], "at least 1"),
        ([[1]], [[2]], "1-dimensional"),
        ([], [], "empty"),
        ([True], [2], "booleans"),
        (np.array([1 + 1j]), [2], "complex"),
        (None, [2], "None"),
    ],
)
def test_bad_counts(pos, tot, match):
    with pytest.raises(ValueError, match=match):
        VoteCounts(pos, tot)


def test_immutable_pickle_and_not_an_array():
    v = VoteCounts([1, 2], [2, 3])
    with pytest.raises(AttributeError):
        v.positive = np.array([0, 0])
    with pytest.raises(ValueError):
        v.positive[0] = 5  # read-only
    w = pickle.loads(pickle.dumps(v))
    np.testing.assert_array_equal(w.total, v.total)
    with pytest.raises(TypeError, match="to_snapshots"):
        np.asarray(v)


def test_inputs_are_copied():
    a, c = np.array([1, 2]), np.array([2, 3])
    v = VoteCounts(a, c)
    a[0] = 2
    assert v.positive[0] == 1


def test_single_vote_rows_and_the_message():
    v = VoteCounts([1, 0], [1, 2])
    with pytest.raises(ValueError, match="at least 2 votes.*ce1_score.*order=1"):
        check_snapshots(v)
    # ce2_score takes rows with one vote beside rows with pairs (the mixed rule), not single votes only
    assert np.isfinite(ce2_score(v, np.array([[0.5, 0.1], [0.5, 0.1]]), degree=1))
    with pytest.raises(ValueError, match="No item of snapshots has 2 votes.*ce1_score.*order=1"):
        ce2_score(VoteCounts([1, 0], [1, 1]), np.array([[0.5, 0.1], [0.5, 0.1]]), degree=1)
    assert check_snapshots(v, min_votes=1) is v


# ------------------------------------------------------------------------------ entry points
def test_ce2_score_details_and_baselines_identical():
    S, v = _data()
    Y = v.to_snapshots()
    assert ce2_score(v, S, degree=4) == ce2_score(Y, S, degree=4)
    a, b = (
        ce2_details(v, S, degree=[2, 4], cv=3, random_state=0),
        ce2_details(Y, S, degree=[2, 4], cv=3, random_state=0),
    )
    assert (a.ce2, a.degree, a.alpha) == (b.ce2, b.degree, b.alpha)
    np.testing.assert_array_equal(a.eta2(S), b.eta2(S))
    for method in ("bucketing", "nadaraya_watson"):
        assert ce2_score(v, S, method=method, random_state=0) == ce2_score(
            Y, S, method=method, random_state=0
        )
    w = np.random.default_rng(1).uniform(size=len(v))
    assert ce2_score(v, S, degree=3, sample_weight=w) == ce2_score(Y, S, degree=3, sample_weight=w)


def test_ce1_score_identical_and_accepts_single_votes():
    S, v = _data(cmin=1)
    Y = v.to_snapshots()
    assert ce1_score(v, S, degree=3) == ce1_score(Y, S, degree=3)
    ones = VoteCounts((S[:, 0] > 0.5).astype(int), np.ones(len(v), int))
    assert ce1_score(ones, S, degree=3) == ce1_score((S[:, 0] > 0.5).astype(int), S, degree=3)


@pytest.mark.parametrize("order", [1, 2])
def test_platt_fit_partial_fit_and_score_identical(order):
    S, v = _data()
    Y = v.to_snapshots()
    a = SecondOrderPlattCalibrator(degree=4, alpha=1e-6, order=order).fit(S, v)
    b = SecondOrderPlattCalibrator(degree=4, alpha=1e-6, order=order).fit(S, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.transform(S), b.transform(S))
    assert a.score(S, v) == b.score(S, Y)
    p = SecondOrderPlattCalibrator(degree=4, alpha=1e-6, order=order)
    p.partial_fit(S[:300], v[np.arange(300)]).partial_fit(S[300:], v[np.arange(300, len(v))])
    np.testing.assert_allclose(p.coef_, a.coef_, rtol=1e-8, atol=1e-10)


def test_platt_order1_takes_single_vote_counts_order2_the_mixed_rule():
    S, v = _data(cmin=1, cmax=3)
    assert (v.total == 1).any() and (v.total >= 2).any()
    SecondOrderPlattCalibrator(degree=3, order=1).fit(S, v)
    # order=2: eta1 from every row, eta2 from the rows with two votes or more
    mixed = SecondOrderPlattCalibrator(degree=3, order=2, alpha=1e-6).fit(S, v)
    pairs = np.flatnonzero(v.total >= 2)
    eta1 = SecondOrderPlattCalibrator(degree=3, order=1, alpha=1e-6).fit(S, v)
    eta2 = SecondOrderPlattCalibrator(degree=3, order=2, alpha=1e-6).fit(S[pairs], v[pairs])
    raw = mixed.predict_moments(S, project=False)
    np.testing.assert_allclose(raw[:, 0], eta1.predict_moments(S, project=False)[:, 0], rtol=1e-10)
    np.testing.assert_allclose(raw[:, 1], eta2.predict_moments(S, project=False)[:, 1], rtol=1e-10)
    assert mixed.coef_.shape == (16, 2) and np.isfinite(mixed.score(S, v))
    with pytest.raises(ValueError, match="partial_fit with order=2 needs two votes"):
        SecondOrderPlattCalibrator(degree=3).partial_fit(S, v)
    single = VoteCounts(v.positive.clip(0, 1), np.ones(len(v), int))
    with pytest.raises(ValueError, match="No item of y .* has 2 votes"):
        SecondOrderPlattCalibrator(degree=3, order=2).fit(S, single)


def test_grid_search_with_counts():
    S, v = _data(n=900)
    grid = {"degree": [2, 4]}
    a = GridSearchCV(SecondOrderPlattCalibrator(), grid, cv=KFold(3)).fit(S, v)
    b = GridSearchCV(SecondOrderPlattCalibrator(), grid, cv=KFold(3)).fit(S, v.to_snapshots())
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_report_from_predictions_and_calibration_report_identical():
    S, v = _data()
    Y = v.to_snapshots()
    preds = {"raw": S, "flat": np.column_stack([S[:, 0], np.zeros(len(v))])}
    metrics = ["ce2", "brier", "scdl", "second_moment_mse", "variance_bias"]
    a = CalibrationReport.from_predictions(v, preds, metrics=metrics, n_bootstrap=10, random_state=0)
    b = CalibrationReport.from_predictions(Y, preds, metrics=metrics, n_bootstrap=10, random_state=0)
    assert a.table.equals(b.table)
    cal = SecondOrderPlattCalibrator(degree=3).fit(S, v)
    ra = calibration_report({"platt": cal}, S, v, metrics=["ce2", "brier"], n_bootstrap=5, random_state=0)
    rb = calibration_report({"platt": cal}, S, Y, metrics=["ce2", "brier"], n_bootstrap=5, random_state=0)
    assert ra.table.equals(rb.table)


def test_report_vote_order_within_rows_does_not_matter():
    S, v = _data(n=300)
    Y = v.to_snapshots()
    rng = np.random.default_rng(3)
    Yp = np.take_along_axis(Y, np.argsort(rng.uniform(size=Y.shape), axis=1), axis=1)  # shuffle votes
    a = CalibrationReport.from_predictions(v, {"raw": S}, metrics=["ce2", "brier"], n_bootstrap=0)
    b = CalibrationReport.from_predictions(Yp, {"raw": S}, metrics=["ce2", "brier"], n_bootstrap=0)
    for col in ("ce2", "brier"):
        np.testing.assert_allclose(a.table[col]["value"], b.table[col]["value"], rtol=1e-12)


def test_scorer_with_counts():
    from sklearn.metrics import get_scorer
    from sklearn.pipeline import make_pipeline

    import skcal  # noqa: F401  (registers the scorers)

    ce2_scorer = get_scorer("ce2")
    S, v = _data()
    pipe = make_pipeline(SechPerturber(random_state=0), SecondOrderPlattCalibrator(degree=3)).fit(S, v)
    assert ce2_scorer(pipe, S, v) == ce2_scorer(pipe, S, v.to_snapshots())


def test_nullable_pandas_snapshots_read_na_as_missing():
    import pandas as pd

    Y = pd.DataFrame({"y1": [1, 0, 1], "y2": [1, pd.NA, 0], "y3": [0, 1, pd.NA]}, dtype="Int64")
    got = check_snapshots(Y)
    np.testing.assert_array_equal(got, [[1, 1, 0], [0, np.nan, 1], [1, 0, np.nan]])
    v = VoteCounts(pd.Series([2, 1, 1], dtype="Int64"), pd.Series([3, 2, 2], dtype="Int64"))
    for x, y in zip(snapshot_targets(v), snapshot_targets(got), strict=True):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="NaN"):
        VoteCounts(pd.Series([1, pd.NA], dtype="Int64"), [2, 2])


def test_one_label_per_row_errors_name_the_first_order_tools():
    S, v = _data(n=50)
    with pytest.raises(ValueError, match="one label per row.*ce1_score"):
        ce2_score(v.positive.clip(0, 1), S)
    with pytest.raises(ValueError, match="order=1"):
        SecondOrderPlattCalibrator().fit(S, v.positive.clip(0, 1))


# ------------------------------------------------------------------------------ k classes
def _class_data(n=500, k=4, seed=0, cmin=2, cmax=6):
    rng = np.random.default_rng(seed)
    M = rng.dirichlet(np.ones(k), n)
    s2 = rng.uniform(0, 0.5, (n, k)) * M * (1 - M)
    c = rng.integers(cmin, cmax + 1, n)
    counts = np.stack([rng.multinomial(int(t), p) for t, p in zip(c, M, strict=True)])
    return np.stack([M, s2], axis=2), VoteCounts(counts=counts)


def test_class_counts_targets_are_the_one_vs_rest_targets():
    S, V = _class_data()
    t1, t2 = V.targets()
    assert t1.shape == t2.shape == (500, 4)
    np.testing.assert_allclose(t1.sum(axis=1), 1.0)
    for j in range(4):
        b = V.one_vs_rest(j)
        a, c = V.counts[:, j].astype(float), V.total.astype(float)
        np.testing.assert_array_equal(b.positive, V.counts[:, j])
        np.testing.assert_allclose(t1[:, j], a / c)
        np.testing.assert_allclose(t2[:, j], a * (a - 1) / (c * (c - 1)))
        np.testing.assert_array_equal(b.targets()[1], t2[:, j])
        assert VoteCounts.from_class_counts(V.counts, j).positive.tolist() == b.positive.tolist()
    per_row = V.one_vs_rest(np.argmax(V.counts, axis=1))
    np.testing.assert_array_equal(per_row.positive, V.counts.max(axis=1))
    assert V.n_classes == 4 and V.shape == (500, 4) and V.positive is None and repr(V).endswith("classes=4)")


def test_class_snapshots_round_trip_to_the_same_counts():
    S, V = _class_data(n=60, k=3, cmin=1)
    Y = V.to_snapshots()
    assert np.array_equal((~np.isnan(Y)).sum(axis=1), V.total)
    back = check_class_votes(Y, 3)
    np.testing.assert_array_equal(back.counts, V.counts)
    np.testing.assert_array_equal(VoteCounts.from_snapshots(Y, n_classes=3).counts, V.counts)
    rows, codes = V.votes()
    np.testing.assert_array_equal(codes, Y[~np.isnan(Y)])
    np.testing.assert_array_equal(rows, np.nonzero(~np.isnan(Y))[0])
    V2 = pickle.loads(pickle.dumps(V))
    np.testing.assert_array_equal(V2.counts, V.counts)
    assert not V2.counts.flags.writeable and V[[0, 5]].counts.tolist() == V.counts[[0, 5]].tolist()
    # one class label per row: counts with one vote each
    np.testing.assert_array_equal(check_class_votes(np.array([2, 0, 1]), 3).counts, np.eye(3)[[2, 0, 1]])


def test_two_class_counts_are_binary_counts():
    rng = np.random.default_rng(0)
    C = rng.integers(0, 4, (50, 2))
    C[:, 0] += 2
    V = VoteCounts(counts=C)
    b = check_snapshots(V)
    np.testing.assert_array_equal(b.positive, C[:, 1])
    np.testing.assert_array_equal(b.total, C.sum(axis=1))
    S = np.column_stack([rng.uniform(0, 1, 50), rng.uniform(0, 0.05, 50)])
    assert ce2_score(V, S, degree=2) == ce2_score(VoteCounts(C[:, 1], C.sum(axis=1)), S, degree=2)


def test_class_counts_classes_by_name():
    import pandas as pd

    df = pd.DataFrame({"cat": [1, 0, 2], "dog": [1, 3, 0], "eel": [0, 0, 1]})
    V = VoteCounts(counts=df)
    assert V.classes.tolist() == ["cat", "dog", "eel"]
    re = check_class_votes(V, 3, classes=["eel", "cat", "dog"])
    np.testing.assert_array_equal(re.counts, df[["eel", "cat", "dog"]].to_numpy())
    with pytest.raises(ValueError, match=r"missing \['fox'\].*not a class of the model: \['eel'\]"):
        check_class_votes(V, 3, classes=["cat", "dog", "fox"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"counts": [[1, 2], [3, 0]], "total": [3, 4]}, r"counts row 1 sums to 3 votes but total\[1\] is 4"),
        ({"counts": [[1, -2], [3, 0]]}, r"counts\[:, 1\] must hold non-negative integers"),
        ({"counts": [[1, 0.5], [3, 0]]}, "non-negative integers"),
        ({"counts": [[0, 0], [3, 0]]}, "row 0 has no votes"),
        ({"counts": [[1], [3]]}, r"shape \(n, k\).*k >= 2"),
        ({"counts": [[1, 2]], "positive": [1]}, "either positive and total"),
        ({"counts": [[1, 2]], "classes": ["a"]}, "one label per column"),
        ({"counts": [[1, 2]], "classes": ["a", "a"]}, "distinct"),
        ({"positive": [1], "total": [2], "classes": ["a", "b"]}, "binary counts"),
    ],
)
def test_class_counts_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        VoteCounts(**kwargs)


def test_class_votes_and_scores_bad_input():
    S, V = _class_data(n=30, k=3)
    with pytest.raises(ValueError, match="votes of 3 classes, but the scores have 4"):
        check_class_votes(V, 4)
    with pytest.raises(ValueError, match=r"class codes 0..2 .*VoteCounts\(counts=C\)"):
        check_class_votes(np.array([[0, 3], [1, 2]]), 3)
    with pytest.raises(ValueError, match="binary counts"):
        check_class_votes(VoteCounts([1], [2]), 3)
    with pytest.raises(ValueError, match="votes of 3 classes, but this takes binary votes"):
        check_snapshots(V)
    with pytest.raises(ValueError, match="not among the classes"):
        check_class_votes(np.array([[5.0, 7.0]]), 2, classes=[5, 6])
    with pytest.raises(ValueError, match=r"\(n, 2k\).*k >= 2"):
        check_class_scores(np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"scores \(m\) must lie in \[0, 1\]"):
        check_class_scores(S + 1.0)
    with pytest.raises(ValueError, match=r"scores \(sigma2\) must lie in \[0, 0.25\]"):
        check_class_scores(np.stack([S[..., 0], S[..., 1] + 0.3], axis=2))
    with pytest.raises(ValueError, match="has 3 classes; expected 2"):
        check_class_scores(S, n_classes=2)


def test_class_scores_layouts_agree():
    S, _ = _class_data(n=20, k=3)
    flat = flat_class_scores(S)
    assert flat.shape == (20, 6) and class_scores_layout(flat) == "flat"
    assert class_scores_layout(S) == "classes"
    assert class_scores_layout(S[:, 0]) is None and class_scores_layout(S[:, 0, :1]) is None
    np.testing.assert_array_equal(check_class_scores(flat), S)
    np.testing.assert_array_equal(check_class_scores(S), S)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_class_votes_from_snapshots_match_counts_property(seed, k):
    rng = np.random.default_rng(seed)
    n = 12
    c = rng.integers(1, 6, n)
    Y = np.full((n, 5), np.nan)
    for i in range(n):
        Y[i, : c[i]] = rng.integers(0, k, c[i])
    V = check_class_votes(Snapshots(Y), k)
    np.testing.assert_array_equal(V.total, c)
    for j in range(k):
        np.testing.assert_array_equal(V.counts[:, j], (Y == j).sum(axis=1))
