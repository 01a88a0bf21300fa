import pickle

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.base import clone  # noqa: E402
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
