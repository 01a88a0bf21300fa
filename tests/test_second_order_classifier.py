import pickle

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.ensemble import BaggingClassifier  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.metrics import get_scorer, log_loss  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from skcal import (  # noqa: E402
    EnsembleMoments,
    ReliabilityDisplay,
    SechPerturber,
    SecondOrderDisplay,
    SecondOrderPlattCalibrator,
    calibration_report,
)
from skcal.platt import project_to_simplex  # noqa: E402
from skcal.second_order_classifier import SecondOrderCalibratedClassifier  # noqa: E402
from skcal.votes import VoteCounts  # noqa: E402


def _problem(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    f = 1 / (1 + np.exp(-2 * X[:, 0] - np.sin(3 * X[:, 1])))
    y = (rng.uniform(size=n) < f).astype(int)
    ens = BaggingClassifier(DecisionTreeClassifier(), n_estimators=12, random_state=0)  # overconfident
    ens.fit(X[:1000], y[:1000])
    c = rng.integers(2, 5, n)
    votes = VoteCounts(rng.binomial(c, f), c)
    return X, y, f, ens, votes


@pytest.fixture(scope="module")
def problem():
    return _problem()


@pytest.fixture(scope="module")
def fitted(problem):
    X, y, f, ens, votes = problem
    cal = np.arange(1000, 3000)
    return SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3).fit(X[cal], votes[cal])


def test_is_the_chain(problem, fitted):
    X, y, f, ens, votes = problem
    cal = np.arange(1000, 3000)
    S = EnsembleMoments(ens).fit_transform(X[cal])
    pert = SechPerturber(random_state=0).fit(S)
    platt = SecondOrderPlattCalibrator(degree=3, alpha=1e-6).fit(pert.transform(S), votes[cal])
    ref = platt.transform(pert.transform(EnsembleMoments(ens).fit_transform(X[3000:])))
    np.testing.assert_array_equal(fitted.predict_second_order(X[3000:]), ref)
    P = fitted.predict_proba(X[3000:])
    np.testing.assert_allclose(P[:, 1], np.clip(ref[:, 0], fitted.margin_, 1 - fitted.margin_))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(fitted.classes_, [0, 1])
    np.testing.assert_array_equal(fitted.predict(X[3000:]), (P[:, 1] > 0.5).astype(int))
    assert fitted.n_features_in_ == 3 and fitted.margin_ == 1 / 2002


def test_counts_and_snapshots_identical(problem, fitted):
    X, y, f, ens, votes = problem
    cal = np.arange(1000, 3000)
    snap = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3).fit(
        X[cal], votes[cal].to_snapshots()
    )
    np.testing.assert_array_equal(snap.predict_proba(X[3000:]), fitted.predict_proba(X[3000:]))


def test_recalibration_helps_on_fresh_data(problem, fitted):
    X, y, f, ens, votes = problem
    ev = np.arange(3000, 4000)
    assert log_loss(y[ev], fitted.predict_proba(X[ev])) < log_loss(y[ev], ens.predict_proba(X[ev]))


def test_clone_and_pickle(problem, fitted):
    X, y, f, ens, votes = problem
    cal = np.arange(1000, 3000)
    again = clone(fitted).fit(X[cal], votes[cal])
    np.testing.assert_array_equal(again.predict_proba(X[3000:]), fitted.predict_proba(X[3000:]))
    back = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(back.predict_proba(X[3000:]), fitted.predict_proba(X[3000:]))
    # a bare (not frozen) ensemble is unfitted after clone: a clear error, not a silent refit
    bare = SecondOrderCalibratedClassifier(ens, degree=3)
    with pytest.raises(NotFittedError, match="FrozenEstimator"):
        clone(bare).fit(X[cal], votes[cal])


def test_in_reports_displays_and_scorers(problem, fitted):
    X, y, f, ens, votes = problem
    ev = np.arange(3000, 4000)
    rep = calibration_report(
        {"recalibrated": fitted, "raw": ens},
        X[ev],
        y[ev],
        metrics=["brier", "log_loss"],
        n_bootstrap=5,
        random_state=0,
    )
    assert rep.table["log_loss"]["rank"]["recalibrated"] == 1
    raw_pipe = make_pipeline(EnsembleMoments(FrozenEstimator(ens)), SechPerturber(random_state=0))
    rep2 = calibration_report(
        {"recalibrated": fitted, "raw": raw_pipe.fit(X[ev])},
        X[ev],
        votes[ev],
        metrics=["ce2", "brier"],
        n_bootstrap=0,
    )
    assert rep2.table["ce2"]["value"]["recalibrated"] < rep2.table["ce2"]["value"]["raw"]
    disp = ReliabilityDisplay.from_estimator(fitted, X[ev], y[ev])
    assert disp.estimator_name == "SecondOrderCalibratedClassifier"
    sod = SecondOrderDisplay.from_estimator(fitted, X[ev], true_prob=f[ev])
    np.testing.assert_array_equal(sod.recalibrated_scores, fitted.predict_second_order(X[ev]))
    assert sod.eta1_grid is not None
    for name in ("neg_log_loss", "neg_brier_score", "roc_auc", "accuracy", "neg_scdl"):
        assert np.isfinite(get_scorer(name)(fitted, X[ev], y[ev]))


def test_order1_on_single_labels_log_loss_finite(problem):
    X, y, f, ens, votes = problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 4000)
    clf = SecondOrderCalibratedClassifier(FrozenEstimator(ens), order=1, degree=8).fit(X[cal], y[cal])
    P = clf.predict_proba(X[ev])
    assert P.min() >= clf.margin_ > 0
    assert np.isfinite(log_loss(y[ev], P))
    np.testing.assert_array_equal(clf.predict_second_order(X[ev])[:, 1], 0.0)
    with pytest.raises(ValueError, match="single label"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens)).fit(X[cal], y[cal])
    with pytest.raises(ValueError, match="not classes of the ensemble"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens), order=1).fit(X[cal], y[cal] + 5)


def test_bad_parameters():
    X, y, f, ens, votes = _problem(n=1200)
    for params in [{"degree": -1}, {"bandwidth": 0.0}, {"order": 3}, {"basis": "2d"}, {"alpha": -1}]:
        with pytest.raises(ValueError, match=list(params)[0]):
            SecondOrderCalibratedClassifier(FrozenEstimator(ens), **params).fit(X, votes)
    with pytest.raises(NotFittedError):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens)).predict_proba(X)


# ------------------------------------------------------------------------------ common checks
def _first_column(X):
    return np.asarray(X, dtype=float)[:, :1]


def _frozen_any_width_ensemble():
    """A fitted 3-member ensemble that reads only the first column: it takes the checks' data."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 1))
    members = []
    for s in range(3):
        yy = (Z[:, 0] + rng.normal(0, 1 + s, 200) > 0).astype(int)
        fitted = make_pipeline(FunctionTransformer(_first_column), GaussianNB()).fit(Z, yy)
        members.append(FrozenEstimator(fitted))  # stays fitted under clone
    return members


_Y_LABELS = (
    "the check's y takes labels outside the ensemble's classes [0, 1] ({1, 2} or strings); the "
    "wrapped ensemble is fitted already and defines the classes, so other labels are a ValueError"
)
_RANDOM = (
    "the sech perturbation is a random function of the input array (an int random_state seeds "
    "it with a hash of the array), so a subset, a reordering or repeated rows get other draws "
    "(SechPerturber has the same expected failures)"
)
_EXPECTED = {
    "check_estimators_dtypes": _Y_LABELS,
    "check_sample_weights_pandas_series": _Y_LABELS,
    "check_sample_weights_not_an_array": _Y_LABELS,
    "check_sample_weights_shape": _Y_LABELS,
    "check_sample_weights_not_overwritten": _Y_LABELS,
    "check_classifier_data_not_an_array": _Y_LABELS,
    "check_classifiers_classes": _Y_LABELS,
    "check_fit2d_1feature": _Y_LABELS,
    "check_sample_weight_equivalence_on_dense_data": _RANDOM,
    "check_methods_sample_order_invariance": _RANDOM,
    "check_methods_subset_invariance": _RANDOM,
    "check_classifiers_train": (
        "the ensemble is fitted before and never refitted (here on other data), so the wrapper "
        "cannot reach the accuracy the check demands on the check's own blobs"
    ),
    "check_supervised_y_2d": (
        "a 2-D y is snapshots (k >= 2 votes per row), not a multi-output target: the check's "
        "2-column y of 0/1 is a valid 2-snapshot input and is fitted without the warning it expects"
    ),
}


@parametrize_with_checks(
    [SecondOrderCalibratedClassifier(_frozen_any_width_ensemble(), order=1, degree=2)],
    expected_failed_checks=lambda est: _EXPECTED,
    xfail_strict=True,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------------ k classes
K = 3


def _k_problem(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    logits = np.column_stack([2 * X[:, 0], -X[:, 0] + np.sin(3 * X[:, 1]), X[:, 1] - X[:, 2]])
    F = np.exp(logits)
    F /= F.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in F])
    ens = BaggingClassifier(DecisionTreeClassifier(), n_estimators=10, random_state=0)  # overconfident
    ens.fit(X[:1000], y[:1000])
    c = rng.integers(2, 5, n)
    counts = np.stack([rng.multinomial(int(t), p) for t, p in zip(c, F, strict=True)])
    return X, y, F, ens, VoteCounts(counts=counts)


@pytest.fixture(scope="module")
def k_problem():
    return _k_problem()


@pytest.fixture(scope="module")
def k_fitted(k_problem):
    X, y, F, ens, votes = k_problem
    cal = np.arange(1000, 3000)
    return SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3).fit(X[cal], votes[cal])


class _OneVsRest(ClassifierMixin, BaseEstimator):
    """A fitted k-class member seen as the binary classifier of class ``j``."""

    def __init__(self, member=None, j=0):
        self.member = member
        self.j = j

    def fit(self, X, y=None):  # never called: it wraps a fitted member
        return self

    def predict_proba(self, X):
        p = self.member.predict_proba(X)[:, self.j]
        return np.column_stack([1 - p, p])

    def __sklearn_is_fitted__(self):
        return True

    @property
    def classes_(self):
        return np.array([0, 1])


def test_k_class_outputs_and_the_simplex(k_problem, k_fitted):
    X, y, F, ens, votes = k_problem
    ev = np.arange(3000, 5000)
    assert len(k_fitted.calibrators_) == K and k_fitted.classes_.tolist() == [0, 1, 2]
    out = k_fitted.predict_second_order(X[ev])
    one = k_fitted.predict_second_order(X[ev], project=False)
    assert out.shape == one.shape == (2000, K, 2)
    np.testing.assert_allclose(out[..., 0].sum(axis=1), 1.0, atol=1e-12)
    assert np.abs(one[..., 0].sum(axis=1) - 1).max() > 1e-3  # the one-vs-rest means do not sum to 1
    np.testing.assert_allclose(out, project_to_simplex(one, method="logit_shift"))
    P = k_fitted.predict_proba(X[ev])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert P.min() > k_fitted.margin_ / 2
    np.testing.assert_array_equal(k_fitted.predict(X[ev]), np.argmax(P, axis=1))
    assert log_loss(y[ev], P) < log_loss(y[ev], ens.predict_proba(X[ev]))


def test_per_class_equals_the_binary_classifier_on_the_one_vs_rest_task(k_problem, k_fitted):
    X, y, F, ens, votes = k_problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 3500)
    one = k_fitted.predict_second_order(X[ev], project=False)
    for j in range(K):
        members = [_OneVsRest(FrozenEstimator(t), j) for t in ens.estimators_]
        binary = SecondOrderCalibratedClassifier(members, degree=3).fit(X[cal], votes[cal].one_vs_rest(j))
        np.testing.assert_array_equal(one[:, j], binary.predict_second_order(X[ev]))
        np.testing.assert_array_equal(k_fitted.calibrators_[j].coef_, binary.calibrator_.coef_)


def test_k_class_counts_snapshots_and_precomputed_give_identical_results(k_problem, k_fitted):
    X, y, F, ens, votes = k_problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 3500)
    snap = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3)
    snap.fit(X[cal], votes[cal].to_snapshots())
    np.testing.assert_array_equal(snap.predict_proba(X[ev]), k_fitted.predict_proba(X[ev]))
    moments = EnsembleMoments(ens).fit(X)
    pre = SecondOrderCalibratedClassifier("precomputed", degree=3).fit(moments.transform(X[cal]), votes[cal])
    np.testing.assert_array_equal(pre.predict_proba(moments.transform(X[ev])), k_fitted.predict_proba(X[ev]))
    assert pre.moments_ is None and pre.classes_.tolist() == [0, 1, 2]


def test_projection_leaves_a_calibrated_ensemble_unchanged_within_noise():
    # a calibrated 4-class predictor with known truth: m = f* (sigma2 = 0), votes drawn from f*
    rng = np.random.default_rng(1)
    n, k = 8000, 4
    M = rng.dirichlet(np.full(k, 0.7), n)
    S = np.concatenate([M, np.zeros_like(M)], axis=1)
    counts = rng.multinomial(3, M)
    votes = VoteCounts(counts=counts)
    cal, ev = np.arange(5000), np.arange(5000, n)
    for order in (1, 2):
        for projection in ("logit_shift", "renormalize"):
            clf = SecondOrderCalibratedClassifier(  # a small bandwidth: the scores barely move
                "precomputed", basis="1d", degree=4, order=order, projection=projection, bandwidth=2**-10
            ).fit(S[cal], votes[cal])
            out = clf.predict_second_order(S[ev])
            one = clf.predict_second_order(S[ev], project=False)
            # the recalibration moves the truth by its estimation noise only; the projection by less
            assert np.abs(out[..., 0] - M[ev]).mean() < 0.01
            assert np.abs(out[..., 0] - one[..., 0]).mean() < 0.004
            assert out[..., 1].mean() < 0.005  # no invented epistemic variance
            np.testing.assert_allclose(out[..., 0].sum(axis=1), 1.0, atol=1e-12)


def test_top_label_task_alone(k_problem):
    X, y, F, ens, votes = k_problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 5000)
    clf = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3, multiclass="top_label")
    clf.fit(X[cal], votes[cal])
    assert "calibrators_" not in clf.__dict__
    S = EnsembleMoments(ens).fit(X).transform(X)
    top_c, top_e = np.argmax(S[cal, :K], axis=1), np.argmax(S[ev, :K], axis=1)
    rows = np.arange(2000)
    pairs_cal = np.column_stack([S[cal, top_c], S[cal, K + top_c]])
    pert = SechPerturber(random_state=0)
    ref = SecondOrderPlattCalibrator(degree=3, alpha=1e-6)
    ref.fit(pert.fit_transform(pairs_cal), votes[cal].one_vs_rest(top_c))
    pairs_ev = np.column_stack([S[ev, top_e], S[ev, K + top_e]])
    expect = ref.transform(pert.transform(pairs_ev))
    np.testing.assert_array_equal(clf.predict_second_order(X[ev], project=False), expect)
    out = clf.predict_second_order(X[ev])
    np.testing.assert_allclose(out[..., 0].sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(out[rows, top_e], expect)
    other = np.ones((2000, K), bool)
    other[rows, top_e] = False
    other[S[ev, top_e] == 1.0] = False  # every member sure: nothing to share
    with np.errstate(divide="ignore", invalid="ignore"):  # those rows' shares are 0 / 0, not compared
        raw_share = S[ev, :K] / (1 - S[ev, top_e])[:, None]
        expected_other = (raw_share * (1 - expect[:, :1]))[other]
    np.testing.assert_allclose(out[..., 0][other], expected_other, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X[ev]).sum(axis=1), 1.0)
    # two classes: the top label of a binary ensemble is defined too
    Xb, yb, fb, ensb, votesb = _problem(n=2000)
    two = SecondOrderCalibratedClassifier(FrozenEstimator(ensb), degree=2, multiclass="top_label")
    assert two.fit(Xb[1000:], votesb[1000:]).predict_second_order(Xb[:5]).shape == (5, 2, 2)


def test_k_class_mixed_label_counts(k_problem):
    X, y, F, ens, votes = k_problem
    cal = np.arange(1000, 3000)
    counts = votes[cal].counts.copy()
    single = np.arange(2000) % 3 != 0  # two rows in three with a single vote
    counts[single] = np.eye(K, dtype=int)[np.argmax(counts[single], axis=1)]
    clf = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=3)
    clf.fit(X[cal], VoteCounts(counts=counts))
    assert all("pairs_engine_" in c.__dict__ for c in clf.calibrators_)
    np.testing.assert_allclose(clf.predict_proba(X[:10]).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="No item of y has 2 votes"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens)).fit(X[cal], y[cal])
    first = SecondOrderCalibratedClassifier(FrozenEstimator(ens), order=1, degree=3).fit(X[cal], y[cal])
    np.testing.assert_allclose(first.predict_second_order(X[:10])[..., 1], 0.0)


def test_k_class_bad_labels(k_problem):
    import pandas as pd

    X, y, F, ens, votes = k_problem
    cal = np.arange(1000, 1600)
    clf = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=2)
    with pytest.raises(ValueError, match="votes of 2 classes, but the scores have 3"):
        C = votes[cal].counts
        clf.fit(X[cal], VoteCounts(counts=np.column_stack([C[:, 0], C[:, 1] + C[:, 2]])))
    named = VoteCounts(counts=pd.DataFrame(votes[cal].counts, columns=[0, 1, 5]))
    with pytest.raises(ValueError, match=r"missing \[2\].*not a class of the model: \[5\]"):
        clf.fit(X[cal], named)
    with pytest.raises(ValueError, match="not among the classes"):
        clf.fit(X[cal], np.where(votes[cal].to_snapshots() == 2, 7, votes[cal].to_snapshots()))
    with pytest.raises(ValueError, match="not classes of the ensemble"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens), order=1).fit(X[cal], y[cal] + 5)
    with pytest.raises(ValueError, match=r"counts row 0 sums to .* but total\[0\]"):
        VoteCounts(counts=votes[cal].counts, total=votes[cal].total + 1)
    with pytest.raises(ValueError, match="non-negative integers"):
        VoteCounts(counts=votes[cal].counts - 3)
    # named columns in another order are matched by name
    shuffled = VoteCounts(counts=pd.DataFrame(votes[cal].counts[:, [2, 0, 1]], columns=[2, 0, 1]))
    a = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=2).fit(X[cal], shuffled)
    b = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=2).fit(X[cal], votes[cal])
    np.testing.assert_array_equal(a.predict_proba(X[:20]), b.predict_proba(X[:20]))
    with pytest.raises(ValueError, match="projection"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens), projection="softmax").fit(X[cal], votes[cal])
    with pytest.raises(ValueError, match="multiclass"):
        SecondOrderCalibratedClassifier(FrozenEstimator(ens), multiclass="ovr").fit(X[cal], votes[cal])


def test_k_class_clone_pickle_grid_search_reports_and_displays(k_problem, k_fitted):
    from sklearn.model_selection import GridSearchCV, KFold

    X, y, F, ens, votes = k_problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 4000)
    again = clone(k_fitted).fit(X[cal], votes[cal])
    np.testing.assert_array_equal(again.predict_proba(X[ev]), k_fitted.predict_proba(X[ev]))
    back = pickle.loads(pickle.dumps(k_fitted))
    np.testing.assert_array_equal(back.predict_second_order(X[ev]), k_fitted.predict_second_order(X[ev]))
    search = GridSearchCV(
        SecondOrderCalibratedClassifier(FrozenEstimator(ens)),
        {"degree": [1, 3], "alpha": [1e-6, 1e-2]},
        scoring="ce2",
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X[cal], votes[cal])
    assert search.best_params_["degree"] in (1, 3) and np.isfinite(search.best_score_)
    for name in ("ce2", "ce2_classwise", "ce2_top_label", "neg_ce2_top_label"):
        assert np.isfinite(get_scorer(name)(k_fitted, X[ev], votes[ev]))
    score = get_scorer("ce2")(k_fitted, X[ev], votes[ev])
    assert score == get_scorer("ce2_classwise")(k_fitted, X[ev], votes[ev])
    raw = make_pipeline(EnsembleMoments(FrozenEstimator(ens)), SechPerturber(random_state=0)).fit(X[ev])
    models = {"recalibrated": k_fitted, "raw": raw}
    rep = calibration_report(models, X[ev], votes[ev], n_bootstrap=3, random_state=0)
    assert rep.order == "second-order (k classes)"
    assert rep.table["ce2_classwise"]["value"]["recalibrated"] < rep.table["ce2_classwise"]["value"]["raw"]
    assert rep.table["ce2_top_label"]["value"]["recalibrated"] < rep.table["ce2_top_label"]["value"]["raw"]
    disp = SecondOrderDisplay.from_estimator(k_fitted, X[ev], pos_label=2, plot=False)
    np.testing.assert_array_equal(
        disp.recalibrated_scores, k_fitted.predict_second_order(X[ev], project=False)[:, 2]
    )
    with pytest.raises(ValueError, match="pass pos_label"):
        SecondOrderDisplay.from_estimator(k_fitted, X[ev], plot=False)
    top = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=2, multiclass="top_label")
    top.fit(X[cal], votes[cal])
    disp = SecondOrderDisplay.from_estimator(top, X[ev], plot=False)
    np.testing.assert_array_equal(disp.recalibrated_scores, top.predict_second_order(X[ev], project=False))
    # the 1-D calibrators (m alone) in the display
    oned = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=4, basis="1d").fit(X[cal], votes[cal])
    assert SecondOrderDisplay.from_estimator(oned, X[ev], pos_label=0, plot=False).eta1_grid is not None


_K_EXPECTED = {
    **{
        k: v
        for k, v in _EXPECTED.items()
        if v is not _Y_LABELS  # the three-class ensemble takes the checks' labels 0, 1, 2
    },
    "check_classifiers_classes": (
        "the check's labels are strings or other classes than the fitted ensemble's [0, 1, 2]; the "
        "wrapped ensemble defines the classes, so other labels are a ValueError"
    ),
    "check_dtype_object": (
        "the check's y has labels 0..3; the wrapped ensemble is fitted already on [0, 1, 2] and "
        "defines the classes, so another label is a ValueError"
    ),
}
_TOP_EXPECTED = {
    **_K_EXPECTED,
    "check_classifiers_one_label": (
        "the top-label task keeps the fitted ensemble's classes: the calibrated confidence of its "
        "top class moves the probabilities, not the class predicted for a single-class y"
    ),
}


def _frozen_three_class_ensemble():
    """A fitted 3-class, 3-member ensemble reading the first column: it takes the checks' data."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 1))
    members = []
    for s in range(3):
        yy = np.digitize(Z[:, 0] + rng.normal(0, 1 + s, 300), [-0.5, 0.5])
        fitted = make_pipeline(FunctionTransformer(_first_column), GaussianNB()).fit(Z, yy)
        members.append(FrozenEstimator(fitted))
    return members


@parametrize_with_checks(
    [
        SecondOrderCalibratedClassifier(_frozen_three_class_ensemble(), order=1, degree=2),
        SecondOrderCalibratedClassifier(
            _frozen_three_class_ensemble(), order=1, degree=2, multiclass="top_label"
        ),
    ],
    expected_failed_checks=lambda est: _TOP_EXPECTED if est.multiclass == "top_label" else _K_EXPECTED,
    xfail_strict=True,
)
def test_sklearn_compatible_k_classes(estimator, check):
    check(estimator)


def test_two_class_counts_reproduce_the_binary_classifier_exactly(problem, fitted):
    # k = 2 through the k-class input (per-class counts) is the binary classifier, bit for bit
    X, y, f, ens, votes = problem
    cal, ev = np.arange(1000, 3000), np.arange(3000, 3500)
    C = np.column_stack([votes.total - votes.positive, votes.positive])
    two = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=4, random_state=0)
    two.fit(X[cal], VoteCounts(counts=C[cal]))
    binary = SecondOrderCalibratedClassifier(FrozenEstimator(ens), degree=4, random_state=0)
    binary.fit(X[cal], votes[cal])
    np.testing.assert_array_equal(two.predict_proba(X[ev]), binary.predict_proba(X[ev]))
    np.testing.assert_array_equal(two.predict_second_order(X[ev]), binary.predict_second_order(X[ev]))
    np.testing.assert_array_equal(two.calibrator_.coef_, binary.calibrator_.coef_)
    assert two.predict_second_order(X[ev]).shape == (500, 2)  # the binary (m, sigma2), no class axis
