import numpy as np
import pandas as pd
import pytest

from skcal._validation import (
    check_binary_probabilities,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_sample_weight,
    check_scores,
)
from skcal.votes import Snapshots, check_snapshots, snapshot_targets


def test_binary_accepts_list_numpy_pandas_identically():
    y = [0, 1, 1, 0]
    p = [0.1, 0.8, 0.6, 0.3]
    ref = check_binary_probabilities(y, p)
    for yy, pp in [
        (np.array(y), np.array(p)),
        (pd.Series(y), pd.Series(p)),
        (pd.DataFrame({"y": y}), pd.DataFrame({"p": p})),
    ]:
        out = check_binary_probabilities(yy, pp)
        np.testing.assert_array_equal(out[0], ref[0])
        np.testing.assert_array_equal(out[1], ref[1])


def test_binary_predict_proba_uses_column_one():
    y, p, _ = check_binary_probabilities([0, 1], [[0.7, 0.3], [0.2, 0.8]])
    np.testing.assert_allclose(p, [0.3, 0.8])


def test_binary_does_not_mutate():
    p = np.array([0.2, 1.0])
    p0 = p.copy()
    _, out, _ = check_binary_probabilities([0, 1], p)
    out[0] = 5
    np.testing.assert_array_equal(p, p0)


@pytest.mark.parametrize(
    "y, p, match",
    [
        ([0, 1], [0.1, np.nan], "y_prob contains NaN"),
        ([0, 1], [0.1, np.inf], "y_prob contains NaN or infinity"),
        ([0, 1], [0.1, 1.2], r"y_prob must lie in \[0, 1\]"),
        ([0, 1], [-0.1, 0.2], r"y_prob must lie in \[0, 1\]"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "binary labels"),
        ([0, 1, 1], [0.1, 0.2], "Inconsistent numbers of samples"),
        ([], [], "y_prob is empty"),
        (["a", "b"], [0.1, 0.2], "pos_label"),
        ([0, 1], [[0.5, 0.6], [0.2, 0.8]], "rows must sum to 1"),
        ([0, 1], [[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]], "shape"),
    ],
)
def test_binary_errors(y, p, match):
    with pytest.raises(ValueError, match=match):
        check_binary_probabilities(y, p)


def test_binary_pos_label_and_clip():
    y, p, _ = check_binary_probabilities(
        ["a", "b", "b"], [0.1, 0.9, 1.1], pos_label="b", out_of_bounds="clip"
    )
    np.testing.assert_array_equal(y, [0, 1, 1])
    assert p.max() == 1.0


def test_sample_weight():
    assert check_sample_weight(None, 3) is None
    np.testing.assert_array_equal(check_sample_weight(2, 2), [2.0, 2.0])
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        check_sample_weight([1, -1], 2)
    with pytest.raises(ValueError, match="expected 3"):
        check_sample_weight([1, 1], 3)


def test_multiclass():
    P = check_multiclass_probabilities([[0.2, 0.8], [0.5, 0.5]])
    assert P.shape == (2, 2)
    with pytest.raises(ValueError, match="rows of y_proba must sum to 1"):
        check_multiclass_probabilities([[0.2, 0.7], [0.5, 0.5]])
    with pytest.raises(ValueError, match="at least 2 columns"):
        check_multiclass_probabilities([[1.0], [1.0]])
    np.testing.assert_array_equal(check_multiclass_labels(["b", "a", "c"], 3), [1, 0, 2])
    np.testing.assert_array_equal(check_multiclass_labels(["b", "a"], 2, labels=["b", "a"]), [0, 1])
    with pytest.raises(ValueError, match="not in labels"):
        check_multiclass_labels(["z", "a"], 2, labels=["b", "a"])


def test_scores():
    S = check_scores([[0.5, 0.1], [0.2, 0.0]])
    assert S.shape == (2, 2)
    assert check_scores([0.1, 0.2]).shape == (2, 1)
    with pytest.raises(ValueError, match=r"sigma2\) must lie in \[0, 0.25\]"):
        check_scores([[0.5, 0.3]])
    with pytest.raises(ValueError, match=r"\(m\) must lie"):
        check_scores([[1.5, 0.1]])
    with pytest.raises(ValueError, match="1 column"):
        check_scores(np.zeros((2, 3)))


def test_snapshots_and_targets():
    Y = check_snapshots(Snapshots(np.array([[True, True], [True, False]])))  # two votes: said
    t1, t2, c = snapshot_targets(Y)
    np.testing.assert_allclose(t1, [1.0, 0.5])
    np.testing.assert_allclose(t2, [1.0, 0.0])
    Y = check_snapshots([[1, 1, 0, np.nan], [0, 1, np.nan, np.nan]])
    t1, t2, c = snapshot_targets(Y)
    np.testing.assert_allclose(t1, [2 / 3, 0.5])
    np.testing.assert_allclose(t2, [2 * 1 / (3 * 2), 0.0])
    with pytest.raises(ValueError, match="at least 2 votes"):
        check_snapshots(Snapshots([[1, np.nan], [0, 1]]))
    with pytest.raises(ValueError, match="reads two ways"):  # plain, 2 columns: votes or counts
        check_snapshots([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="at least 2 columns"):
        check_snapshots([[1], [0]])
    with pytest.raises(ValueError, match="binary votes"):
        check_snapshots([[1, 2], [0, 1]])


# --- check_probabilities (added with the SCDL slice) ---


def test_check_probabilities_shapes_and_errors():
    from skcal._validation import check_probabilities

    ref = np.array([0.25, 0.5])
    for given in ([0.25, 0.5], np.array([[0.25], [0.5]]), [[0.75, 0.25], [0.5, 0.5]], pd.Series(ref)):
        np.testing.assert_array_equal(check_probabilities(given), ref)
    src = np.array([0.2, 0.4])
    out = check_probabilities(src)
    out[0] = 9.0
    assert src[0] == 0.2  # a fresh copy
    with pytest.raises(ValueError, match=r"X must lie in \[0, 1\]"):
        check_probabilities([0.2, 1.2], name="X")
    np.testing.assert_array_equal(check_probabilities([-0.5, 1.2], out_of_bounds="clip"), [0.0, 1.0])
    with pytest.raises(ValueError, match="rows must sum to 1"):
        check_probabilities([[0.5, 0.2]])
    with pytest.raises(ValueError, match=r"got shape \(1, 3\)"):
        check_probabilities([[0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="NaN"):
        check_probabilities([np.nan])
    with pytest.raises(ValueError, match="empty"):
        check_probabilities([])


def test_multiclass_labels_missing_class_is_ambiguous_without_labels():
    # classes {1, 2, 3} seen as {1, 2}: reading them as columns 1 and 2 would be silently wrong
    with pytest.raises(ValueError, match="pass labels="):
        check_multiclass_labels([1, 2, 2, 1], 3)
    np.testing.assert_array_equal(check_multiclass_labels([1, 2, 2, 1], 3, labels=[1, 2, 3]), [0, 1, 1, 0])


# --- issue 13: no silent wrong numbers, clear label errors ----------------------------------------


def test_complex_input_is_rejected_not_cut_to_its_real_part():
    import warnings

    import skcal

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either
        with pytest.raises(ValueError, match="y_prob is complex"):
            skcal.binned_ece([0, 1, 1], np.array([0.2, 0.7, 0.9]) + 0.5j)
        with pytest.raises(ValueError, match="is complex"):
            check_multiclass_probabilities(np.array([[0.5, 0.5]], dtype=complex))
        with pytest.raises(ValueError, match="sample_weight is complex"):
            check_sample_weight(np.array([1.0 + 1j]), 1)
        with pytest.raises(ValueError, match="is complex"):
            check_scores(np.array([0.5 + 0j], dtype=object))
        with pytest.raises(ValueError, match="y_true is complex"):
            check_binary_probabilities(np.array([0, 1]) + 1j, [0.2, 0.3])


def test_numeric_strings_are_not_probabilities():
    with pytest.raises(ValueError, match="y_prob must be numeric"):
        check_binary_probabilities([0, 1], ["0.2", "0.7"])
    with pytest.raises(ValueError, match="must be numeric; got the string"):
        check_binary_probabilities([0, 1], np.array([0.2, "0.7"], dtype=object))


def test_object_dtype_integer_labels_mean_the_integers():
    y_obj = np.array([0, 1, 1, 0], dtype=object)
    y, _, _ = check_binary_probabilities(y_obj, [0.1, 0.8, 0.6, 0.3])
    np.testing.assert_array_equal(y, [0, 1, 1, 0])
    y, _, _ = check_binary_probabilities(pd.Series([0, 1], dtype=object), [0.1, 0.8])
    np.testing.assert_array_equal(y, [0, 1])
    codes = check_multiclass_labels(np.array([2, 0, 1], dtype=object), 3)
    np.testing.assert_array_equal(codes, [2, 0, 1])


def test_missing_labels_give_a_clear_error():
    for y in ([0, None, 1], np.array([0, None, 1], dtype=object), pd.Series([0, pd.NA, 1], dtype=object)):
        with pytest.raises(ValueError, match="y_true contains missing labels"):
            check_binary_probabilities(y, [0.1, 0.2, 0.3])
        with pytest.raises(ValueError, match="y_true contains missing labels"):
            check_multiclass_labels(y, 2)
    with pytest.raises(ValueError, match="mixes labels of different types"):
        check_multiclass_labels(np.array([0, "a"], dtype=object), 2)


def test_pos_label_is_suggested_only_where_it_exists():
    with pytest.raises(ValueError, match="pass pos_label"):
        check_binary_probabilities(["a", "b"], [0.1, 0.2])
    with pytest.raises(ValueError, match="these are not") as info:
        check_binary_probabilities(["a", "b"], [0.1, 0.2], has_pos_label=False)
    assert "pos_label" not in str(info.value)
    with pytest.raises(ValueError) as info:
        check_binary_probabilities([0, -1], [0.1, 0.2], has_pos_label=False)
    assert "pos_label" not in str(info.value)


def test_wrong_length_labels_are_blamed_on_labels():
    with pytest.raises(ValueError, match="^labels has 3 entries"):
        check_multiclass_labels([0, 1], 2, labels=[0, 1, 2])
    with pytest.raises(ValueError, match="^labels has 3 entries but y_proba has 2 columns"):
        check_multiclass_probabilities([[0.5, 0.5]], n_classes=3, n_classes_from="labels")


def test_integer_codes_reject_labels_outside_the_columns():
    with pytest.raises(ValueError, match=r"integer labels \[5\] outside range\(3\)"):
        check_multiclass_labels([0, 1, 5], 3, integer_codes=True)
    np.testing.assert_array_equal(check_multiclass_labels([0, 1, 5], 3, labels=[0, 1, 5]), [0, 1, 2])


def test_nullable_pandas_missing_values_are_nan():
    # a nullable column with pd.NA reads as NaN (rejected where NaN is, accepted where NaN votes are)
    s = pd.Series([0.2, pd.NA, 0.4], dtype="Float64")
    with pytest.raises(ValueError, match="contains NaN"):
        check_binary_probabilities([0, 1, 0], s)
    snaps = pd.DataFrame(
        {"a": pd.array([1, 0, pd.NA, 1], dtype="Int64"), "b": [1, 0, 1, 1], "c": [0, 1, 1, 1]}
    )
    Y = check_snapshots(snaps)
    assert np.isnan(Y[2, 0]) and np.isfinite(np.delete(Y.ravel(), 6)).all()
    obj = np.array([[1, pd.NA, 0], [0, 1, 1]], dtype=object)
    assert np.isnan(check_snapshots(obj)[0, 1])


def test_sample_weight_zero_total_only_where_allowed():
    # metrics need a positive total; a chunk of a statistics object may weigh nothing
    with pytest.raises(ValueError, match="sample_weight sums to zero"):
        check_sample_weight([0.0, 0.0], 2)
    np.testing.assert_array_equal(check_sample_weight([0.0, 0.0], 2, allow_zero_total=True), [0.0, 0.0])
    assert check_sample_weight([], 0, allow_zero_total=True).shape == (0,)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        check_sample_weight([1.0, -1.0], 2, allow_zero_total=True)


@pytest.mark.parametrize(
    "weights, match",
    [
        ([1.0, -1.0], "sample_weight must be non-negative; got a minimum of -1"),
        ([1.0], r"sample_weight has 1 entries; expected 2 \(one per sample\)"),
        ([1.0, np.nan], "sample_weight contains NaN or infinity"),
        ([[1.0], [1.0]], "sample_weight must be 1-dimensional"),
        (["1", "2"], "sample_weight must be numeric"),
    ],
)
def test_one_sample_weight_check_for_metrics_statistics_and_the_engine(weights, match):
    # the metric, its statistics object and the Chebyshev engine give the same message
    import skcal
    from skcal.chebyshev import ChebyshevMoments
    from skcal.stats import BinnedStatistics, CE1Statistics, CutoffStatistics, ScdlStatistics

    y, p = [0, 1], [0.2, 0.7]
    calls = [
        lambda: skcal.binned_ece(y, p, sample_weight=weights),
        lambda: BinnedStatistics().update(y, p, sample_weight=weights),
        lambda: ScdlStatistics().update(y, p, sample_weight=weights),
        lambda: CutoffStatistics().update(y, p, sample_weight=weights),
        lambda: CE1Statistics(degree=1).update(y, p, sample_weight=weights),
        lambda: ChebyshevMoments(1, 1).update(np.array([[0.2], [0.7]]), np.array([0.0, 1.0]), weights),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=match):
            call()


def test_statistics_accept_a_chunk_of_zero_weight():
    from skcal.stats import BinnedStatistics, SmoothECEStatistics, TopLabelStatistics

    st_ = BinnedStatistics(n_bins=2).update([0, 1], [0.2, 0.7], sample_weight=[0.0, 0.0])
    assert st_.stats_["count"].sum() == 2 and st_.stats_["weight"].sum() == 0.0
    SmoothECEStatistics().update([0, 1], [0.2, 0.7], sample_weight=[0.0, 0.0])
    TopLabelStatistics(labels=[0, 1]).update([0, 1], [[0.8, 0.2], [0.3, 0.7]], sample_weight=[0, 0])
