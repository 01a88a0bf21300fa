"""Second-order inputs are read from what they are said to be, never guessed (issue 37, item 1).

Regression tests of the issue's examples: a plain count table read as class-label snapshots, the
three layouts of a two-class predictor giving two numbers, and ``ce1_score(Y, S[:, :, None])``
reading a reshaped binary input as two classes.
"""

import pickle

import numpy as np
import pytest

from skcal import (
    SechPerturber,
    SecondOrderCalibratedClassifier,
    SecondOrderPlattCalibrator,
    Snapshots,
    VoteCounts,
    ce1_score,
    ce2_details,
    ce2_score,
    ensemble_moments,
)
from skcal.display import SecondOrderDisplay
from skcal.stats import CE1Statistics, CE2Statistics
from skcal.votes import check_class_votes, check_snapshots, refuse_ambiguous_votes

BOTH_READINGS = r"reads two ways.*snapshots.*counts per class.*Snapshots\(.*VoteCounts\(counts="


def _ten_classes(n=5000, votes=5, seed=0):
    """The issue's first example: 10 classes, 5 votes per row counted per class (all below 10)."""
    rng = np.random.default_rng(seed)
    M = rng.dirichlet(np.full(10, 0.3), n)
    s2 = rng.uniform(0, 1, (n, 10)) * M * (1 - M) * 0.5
    C = rng.multinomial(votes, M)
    return C, np.stack([M, s2], axis=2)


def _two_classes(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.05, 0.95, n)
    s = rng.uniform(0, 0.05, n)
    f = np.clip(m + rng.choice([-1.0, 1.0], n) * np.sqrt(s), 0, 1)
    Y = (rng.uniform(size=(n, 3)) < f[:, None]).astype(float)
    S = np.column_stack([m, s])
    S22 = np.stack([np.column_stack([1 - m, s]), S], axis=1)
    S4 = np.column_stack([1 - m, m, s, s])
    return Y, S, S22, S4


# ---------------------------------------------------------------------------------------------
# a plain count table is refused, not read as snapshots
# ---------------------------------------------------------------------------------------------
def test_a_count_table_of_ten_classes_is_refused_naming_both_readings():
    C, S3 = _ten_classes()
    assert C.max() < 10  # every count is also a class code: the table passes as snapshots
    counted = ce2_score(VoteCounts(counts=C), S3, degree=4)
    misread = ce2_score(Snapshots(C), S3, degree=4)  # what the plain array used to give
    assert counted < 0.05 < 0.2 < misread  # the 0.0147 against 0.2347, on these data
    for call in (
        lambda: ce2_score(C, S3, degree=4),
        lambda: ce2_details(C, S3, degree=4, multiclass="top_label"),
        lambda: ce1_score(C, S3, degree=4),
        lambda: check_class_votes(C, 10),
    ):
        with pytest.raises(ValueError, match=BOTH_READINGS):
            call()


def test_the_classifier_refuses_a_count_table_too():
    C, S3 = _ten_classes(n=600)
    X = S3.reshape(600, -1)[:, np.r_[0:20:2, 1:20:2]]  # (n, 2k): the means, then the variances
    clf = SecondOrderCalibratedClassifier("precomputed", degree=2)
    with pytest.raises(ValueError, match=BOTH_READINGS):
        clf.fit(X, C)
    by_counts = clf.fit(X, VoteCounts(counts=C)).predict_proba(X)
    by_votes = SecondOrderCalibratedClassifier("precomputed", degree=2).fit(X, Snapshots(C)).predict_proba(X)
    assert not np.allclose(by_counts, by_votes)


def test_snapshots_of_class_labels_that_cannot_be_counts_stay_plain():
    # 5 votes of 10 classes per row: no table of 10 classes has 5 columns, so one reading exists
    C, S3 = _ten_classes(n=800)
    V = VoteCounts(counts=C)
    Y = V.to_snapshots()  # (n, 5) class codes
    assert ce2_score(Y, S3, degree=3) == ce2_score(V, S3, degree=3) == ce2_score(Snapshots(Y), S3, degree=3)
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 10, (800, 3)).astype(float)
    assert ce2_score(codes, S3, degree=3) == ce2_score(Snapshots(codes), S3, degree=3)


def test_two_binary_votes_per_row_are_refused_whatever_their_values():
    # a table of counts of two classes holds the same 0/1 entries (rows of one vote beside rows of
    # two: doubly-labelled data), so a plain two-column array is refused, its values unread
    Y, S, _, _ = _two_classes()
    Y2 = Y[:, :2].copy()
    for call in (
        lambda y: ce2_score(y, S, degree=3),
        lambda y: ce1_score(y, S, degree=3),
        lambda y: SecondOrderPlattCalibrator(degree=3).fit(S, y),
        lambda y: CE2Statistics(degree=3).update(y, S),
        lambda y: check_snapshots(y, min_votes=1),
    ):
        with pytest.raises(ValueError, match=BOTH_READINGS):
            call(Y2)
    as_votes = ce2_score(Snapshots(Y2), S, degree=3)
    voted = Y2.sum(axis=1) > 0  # as counts, a row [0, 0] would have no vote
    as_counts = ce2_score(VoteCounts(counts=Y2[voted].astype(int)), S[voted], degree=3)
    assert as_votes != as_counts  # the two readings give two numbers
    # one verdict for the array, its chunks and its samples: even a chunk of two negative votes
    with pytest.raises(ValueError, match=BOTH_READINGS):
        check_snapshots(np.zeros((3, 2)))
    # three votes a row cannot be counts of two classes: a plain array is snapshots
    assert ce2_score(Y, S, degree=3) == ce2_score(Snapshots(Y), S, degree=3)
    assert refuse_ambiguous_votes(Y, "y", 2) is Y


def test_a_snapshots_container_gives_the_numbers_of_the_plain_array():
    Y, S, _, _ = _two_classes()
    ref = ce2_details(Y, S, degree=4)
    got = ce2_details(Snapshots(Y), S, degree=4)
    assert got.ce2 == ref.ce2
    assert ce1_score(Snapshots(Y), S, degree=3) == ce1_score(Y, S, degree=3)
    a = SecondOrderPlattCalibrator(degree=3).fit(S, Y)
    b = SecondOrderPlattCalibrator(degree=3).fit(S, Snapshots(Y))
    np.testing.assert_array_equal(a.transform(S), b.transform(S))
    assert a.score(S, Y) == b.score(S, Snapshots(Y))
    for cls in (CE2Statistics, CE1Statistics):
        np.testing.assert_array_equal(
            cls(degree=3).update(Snapshots(Y), S).compute(), cls(degree=3).update(Y, S).compute()
        )


def test_the_snapshots_container():
    Y = Snapshots([[1, 0, np.nan], [True, True, False]])
    assert len(Y) == 2 and Y.shape == (2, 3) and repr(Y) == "Snapshots(n=2, votes=5, columns=3)"
    with pytest.raises(AttributeError, match="immutable"):
        Y.votes = None
    with pytest.raises(ValueError, match="read-only"):
        Y.votes[0, 0] = 0.0
    with pytest.raises(TypeError, match="not an array"):
        np.asarray(Y)
    assert Y[1].votes.tolist() == [[1.0, 1.0, 0.0]]
    back = pickle.loads(pickle.dumps(Y))
    np.testing.assert_array_equal(back.votes, Y.votes)
    assert Y.to_counts().positive.tolist() == [1, 2]
    assert Snapshots(np.array([0, 2, 1])).shape == (3, 1)  # one vote per item
    bad_votes = (([["a", "b"]], "could not|must"), ([[np.inf, 1]], "infinity|finite"), ([[1j, 0]], "complex"))
    for bad, match in bad_votes:
        with pytest.raises(ValueError, match=match):
            Snapshots(bad)
    with pytest.raises(ValueError, match="binary votes 0/1"):
        ce2_score(Snapshots([[2, 0], [1, 1]]), [[0.5, 0.01], [0.4, 0.02]], degree=1)


# ---------------------------------------------------------------------------------------------
# two classes: the binary number through every entry point
# ---------------------------------------------------------------------------------------------
def test_two_classes_give_the_binary_number_through_every_entry_point():
    Y, S, S22, S4 = _two_classes()
    binary = ce2_score(Y, S, degree=4)
    # the (n, 2) against (n, 2, 2) and (n, 4): one number (it was 0.0415 against 0.0434)
    assert ce2_score(Y, S22, degree=4) == ce2_score(Y, S4, degree=4) == binary
    assert ce2_score(Y, S, degree=4, multiclass="classwise") == binary
    assert ce2_details(Y, S4, degree=4).ce2 == binary
    counts = VoteCounts.from_snapshots(Y)
    C = np.column_stack([counts.total - counts.positive, counts.positive])
    assert ce2_score(VoteCounts(counts=C), S22, degree=4) == binary
    assert ce1_score(Y, S22, degree=3) == ce1_score(Y, S4, degree=3) == ce1_score(Y, S, degree=3)


def test_ensemble_moments_says_its_layout_and_every_layout_gives_one_number():
    rng = np.random.default_rng(4)
    p = rng.beta(2, 2, size=(5, 2000))
    P = np.stack([1 - p, p], axis=2)  # 5 members, 2 classes
    flat, classes, binary = (ensemble_moments(P, layout=lay) for lay in ("flat", "classes", "binary"))
    assert flat.shape == (2000, 4) and classes.shape == (2000, 2, 2) and binary.shape == (2000, 2)
    np.testing.assert_array_equal(binary, classes[:, 1])
    f = p.mean(axis=0)
    Y = (rng.uniform(size=(2000, 3)) < f[:, None]).astype(float)
    perturbed = [SechPerturber(random_state=0).fit_transform(x) for x in (flat, classes, binary)]
    # the perturber draws each class's pair as the binary pair: class 1's perturbed scores agree
    np.testing.assert_array_equal(perturbed[0][:, [1, 3]], perturbed[2])
    np.testing.assert_array_equal(perturbed[1][:, 1], perturbed[2])
    values = [ce2_score(Y, x, degree=4) for x in perturbed]
    assert values[0] == values[1] == values[2]
    with pytest.raises(ValueError, match="two-class"):
        ensemble_moments(np.full((2, 3, 3), 1 / 3), layout="binary")


def test_the_classifier_on_two_class_layouts_is_the_binary_model():
    Y, S, S22, S4 = _two_classes(n=1500)
    out = []
    for X in (S, S4, S22):
        clf = SecondOrderCalibratedClassifier("precomputed", degree=3).fit(X, Y)
        out.append((clf.predict_proba(X), clf.predict_second_order(X), clf.classes_.tolist()))
    for proba, second, classes in out[1:]:
        np.testing.assert_array_equal(proba, out[0][0])
        np.testing.assert_array_equal(second, out[0][1])
        assert classes == [0, 1]


def test_the_display_of_two_class_layouts_shows_class_1():
    _, S, S22, S4 = _two_classes(n=400)
    new = np.clip(S + 0.01, 0, 0.25)
    new[:, 0] = np.clip(S[:, 0] * 0.9 + 0.05, 0, 1)
    new22 = np.stack([np.column_stack([1 - new[:, 0], new[:, 1]]), new], axis=1)
    ref = SecondOrderDisplay.from_predictions(S, new, true_sigma2=S[:, 1], plot=False)
    got = SecondOrderDisplay.from_predictions(S22, new22, true_sigma2=S[:, 1], plot=False)
    assert got.pearson_raw == ref.pearson_raw and got.pearson_recalibrated == ref.pearson_recalibrated
    np.testing.assert_array_equal(got.raw_scores, S)


def test_ce1_refuses_a_reshaped_binary_score():
    # (n, 2, 1): the means of two classes, or (m, sigma2) with an extra axis (the example)
    Y, S, _, _ = _two_classes()
    with pytest.raises(ValueError, match=r"reads two ways.*means m of two classes.*\(m, sigma2\)"):
        ce1_score(Y, S[:, :, None])
    C, S3 = _ten_classes(n=500)
    V = VoteCounts(counts=C)
    assert ce1_score(V, S3[..., :1], degree=3) == ce1_score(V, S3, degree=3)  # k >= 3: one reading


def test_the_report_of_two_class_layouts_is_the_binary_report():
    from skcal import CalibrationReport

    Y, S, S22, S4 = _two_classes(n=800)
    counts = VoteCounts.from_snapshots(Y)
    C = VoteCounts(counts=np.column_stack([counts.total - counts.positive, counts.positive]))
    ref = CalibrationReport.from_predictions(Snapshots(Y), {"m": S}, n_bootstrap=0, random_state=0)
    assert ref.order == "second-order"
    for y, s in ((Snapshots(Y), S22), (Snapshots(Y), S4), (C, S22), (counts, S4)):
        rep = CalibrationReport.from_predictions(y, {"m": s}, n_bootstrap=0, random_state=0)
        assert rep.order == "second-order"
        got, want = rep.table.to_numpy(dtype=float), ref.table.to_numpy(dtype=float)
        np.testing.assert_allclose(got, want, rtol=1e-12)
