"""Tests of EnsembleMoments (SPEC section 3)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    BaggingClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
    VotingClassifier,
)
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_array

from skcal import EnsembleMoments, SechPerturber
from skcal.votes import Snapshots


class _FixedMember(ClassifierMixin, BaseEstimator):
    """A fitted classifier that takes any number of features: p = sigmoid(mean(x) + offset)."""

    def __init__(self, offset=0.0):
        self.offset = offset

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        X = check_array(X)
        p = 1.0 / (1.0 + np.exp(-(X.mean(axis=1) + self.offset)))
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


class _ConstantMember(ClassifierMixin, BaseEstimator):
    """A fitted classifier predicting a constant positive-class probability."""

    def __init__(self, p=0.5, classes=(0, 1)):
        self.p = p
        self.classes = classes

    def fit(self, X=None, y=None):
        self.classes_ = np.asarray(self.classes)
        return self

    def predict_proba(self, X):
        n = len(X)
        if len(self.classes_) == 1:
            return np.ones((n, 1))
        return np.tile([1 - self.p, self.p], (n, 1))


def _frozen_members():
    X, y = np.zeros((2, 1)), [0, 1]
    return [FrozenEstimator(_FixedMember(o).fit(X, y)) for o in (-1.0, 0.0, 1.0)]


# Members that accept any number of features, frozen so that the checks' clones keep them.
@parametrize_with_checks([EnsembleMoments(_frozen_members())])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=6, n_informative=4, random_state=0)
    return X, y


def _manual(probas):
    P = np.column_stack(probas)
    m = P.mean(axis=1)
    v = np.clip(P.var(axis=1, ddof=1), 0, m * (1 - m))
    return np.column_stack([m, v])


def test_list_of_members_matches_the_definition(data):
    X, y = data
    members = [LogisticRegression(C=c).fit(X[i::3], y[i::3]) for i, c in enumerate([0.01, 1.0, 100.0])]
    out = EnsembleMoments(members).fit_transform(X)
    np.testing.assert_allclose(out, _manual([mem.predict_proba(X)[:, 1] for mem in members]), rtol=1e-12)
    em = EnsembleMoments(members).fit(X)
    np.testing.assert_allclose(em.transform(X), out, rtol=1e-15)
    assert em.n_members_ == 3 and em.pos_label_ == 1
    assert em.get_feature_names_out().tolist() == ["m", "sigma2"]


def test_bagging_with_feature_subsets_and_string_labels(data):
    X, y = data
    labels = np.array(["neg", "pos"])[y]
    bag = BaggingClassifier(
        LogisticRegression(), n_estimators=7, max_features=3, max_samples=0.5, random_state=0
    ).fit(X, labels)
    em = EnsembleMoments(bag).fit(X)
    out = em.transform(X)
    probas = [
        est.predict_proba(X[:, feats])[:, 1]
        for est, feats in zip(bag.estimators_, bag.estimators_features_, strict=True)
    ]
    np.testing.assert_allclose(out, _manual(probas), rtol=1e-12)
    # the mean is exactly bagging's own soft vote
    np.testing.assert_allclose(out[:, 0], bag.predict_proba(X)[:, 1], rtol=1e-12)
    assert em.pos_label_ == "pos"
    em_neg = EnsembleMoments(bag, pos_label="neg").fit(X)
    np.testing.assert_allclose(em_neg.transform(X)[:, 0], 1 - out[:, 0], atol=1e-12)
    np.testing.assert_allclose(em_neg.transform(X)[:, 1], out[:, 1], atol=1e-12)
    # a DataFrame goes to the members as arrays (they were fitted without names)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    np.testing.assert_allclose(EnsembleMoments(bag).fit_transform(df), out, rtol=1e-15)
    # sparse input reaches the members with the same column subsets
    from scipy import sparse

    np.testing.assert_allclose(EnsembleMoments(bag).fit_transform(sparse.csr_matrix(X)), out, rtol=1e-12)


def test_bagging_member_that_missed_a_class():
    # tiny bootstrap samples: some members see a single class and return one column
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    y = np.array([1, 2])[(X[:, 0] > 1.2).astype(int)]  # rare positive class 2
    bag = BaggingClassifier(_FixedMember(), n_estimators=30, max_samples=3, random_state=1).fit(X, y)
    seen = [len(est.classes_) for est in bag.estimators_]
    assert min(seen) == 1  # the situation under test occurs
    em = EnsembleMoments(bag).fit(X)
    assert (em.pos_columns_ == -1).any()
    np.testing.assert_allclose(em.transform(X)[:, 0], bag.predict_proba(X)[:, 1], rtol=1e-12)


def test_random_forest_and_voting(data):
    X, y = data
    rf = RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y + 5)
    out = EnsembleMoments(rf).fit_transform(X)
    np.testing.assert_allclose(out, _manual([t.predict_proba(X)[:, 1] for t in rf.estimators_]), rtol=1e-12)
    np.testing.assert_allclose(out[:, 0], rf.predict_proba(X)[:, 1], rtol=1e-12)
    vote = VotingClassifier(
        [("a", LogisticRegression(C=0.01)), ("b", LogisticRegression(C=10.0))], voting="soft"
    ).fit(X, y)
    np.testing.assert_allclose(EnsembleMoments(vote).fit_transform(X)[:, 0], vote.predict_proba(X)[:, 1])
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    vote_df = clone(vote).fit(df, y)  # its members see the column names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = EnsembleMoments(vote_df).fit_transform(df)[:, 0]
    np.testing.assert_allclose(got, vote_df.predict_proba(df)[:, 1], rtol=1e-12)


def test_frozen_estimator_survives_cloning(data):
    X, y = data
    bag = BaggingClassifier(LogisticRegression(), n_estimators=5, random_state=0).fit(X, y)
    frozen = EnsembleMoments(FrozenEstimator(bag))
    ref = EnsembleMoments(bag).fit_transform(X)
    np.testing.assert_allclose(clone(frozen).fit_transform(X), ref, rtol=1e-15)
    # a plain fitted ensemble loses its fit when cloned: a clear error says what to do
    with pytest.raises(NotFittedError, match="FrozenEstimator"):
        clone(EnsembleMoments(bag)).fit(X)
    members = [LogisticRegression().fit(X, y), LogisticRegression(C=0.1).fit(X, y)]
    with pytest.raises(NotFittedError, match="FrozenEstimator"):
        clone(EnsembleMoments(members)).fit(X)
    frozen_list = EnsembleMoments([FrozenEstimator(m) for m in members])
    np.testing.assert_allclose(
        clone(frozen_list).fit_transform(X), EnsembleMoments(members).fit_transform(X), rtol=1e-15
    )


def test_fit_does_not_refit_members(data):
    X, y = data
    members = [LogisticRegression().fit(X[:100], y[:100]), LogisticRegression().fit(X[100:], y[100:])]
    coefs = [m.coef_.copy() for m in members]
    EnsembleMoments(members).fit(X, 1 - y)
    for m, c in zip(members, coefs, strict=True):
        np.testing.assert_array_equal(m.coef_, c)


def test_feasibility_clipping():
    # two members at 0 and 1: mean 1/2, unbiased variance 1/2 > m(1 - m) = 1/4 -> clipped
    X = np.zeros((3, 1))
    members = [_ConstantMember(0.0).fit(), _ConstantMember(1.0).fit()]
    em = EnsembleMoments(members).fit(X)
    np.testing.assert_allclose(em.transform(X), [[0.5, 0.25]] * 3)
    assert em.clipped_fraction_ == 1.0
    # three members 0.2, 0.4, 0.9: exact mean and unbiased variance, no clipping
    members = [_ConstantMember(p).fit() for p in (0.2, 0.4, 0.9)]
    em = EnsembleMoments(members).fit(X)
    np.testing.assert_allclose(em.transform(X)[0], [0.5, np.var([0.2, 0.4, 0.9], ddof=1)], rtol=1e-14)
    assert em.clipped_fraction_ == 0.0
    # identical members: zero variance
    np.testing.assert_allclose(
        EnsembleMoments([_ConstantMember(0.3).fit()] * 4).fit_transform(X), [[0.3, 0.0]] * 3, atol=1e-15
    )


def test_pipeline_from_raw_features(data):
    X, y = data
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(df, y)
    pipe = Pipeline(
        [("moments", EnsembleMoments(FrozenEstimator(rf))), ("sech", SechPerturber(random_state=0))]
    ).set_output(transform="pandas")
    with warnings.catch_warnings():
        # the forest saw names but its trees did not: they must get arrays, without a warning
        warnings.simplefilter("error")
        out = pipe.fit_transform(df)
        np.testing.assert_allclose(pipe[0].transform(df)["m"], rf.predict_proba(df)[:, 1], rtol=1e-12)
    with pytest.raises(ValueError, match="feature names"):
        pipe.transform(df.rename(columns={"x0": "renamed"}))
    assert out.columns.tolist() == ["m", "sigma2"]
    assert out["m"].between(0, 1).all() and out["sigma2"].between(0, 0.25).all()
    # cloning inside cross-validation keeps the frozen members
    from sklearn.linear_model import LinearRegression

    reg = Pipeline([("moments", EnsembleMoments(FrozenEstimator(rf))), ("lr", LinearRegression())])
    scores = cross_val_score(reg, df, y.astype(float), cv=3)
    assert np.all(np.isfinite(scores))


def test_multiclass_one_vs_rest():
    X, y = make_classification(n_samples=200, n_classes=3, n_informative=4, random_state=1)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    out = EnsembleMoments(rf, pos_label=2).fit_transform(X)
    np.testing.assert_allclose(out[:, 0], rf.predict_proba(X)[:, 2], rtol=1e-12)
    # without pos_label: the moments of every class, (n, 2k), the class-2 pair equal to pos_label=2
    every = EnsembleMoments(rf).fit(X)
    both = every.transform(X)
    assert both.shape == (200, 6)
    np.testing.assert_array_equal(both[:, [2, 5]], out)


def test_bad_input(data):
    X, y = data
    lr = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="at least 2"):
        EnsembleMoments([lr]).fit(X)
    with pytest.raises(ValueError, match="does not expose estimators_"):
        EnsembleMoments(lr).fit(X)
    with pytest.raises(ValueError, match="list of fitted classifiers"):
        EnsembleMoments("forest").fit(X)
    with pytest.raises(NotFittedError, match="not fitted"):
        EnsembleMoments([lr, LogisticRegression()]).fit(X)
    with pytest.raises(ValueError, match="pos_label=7 is not one of the classes"):
        EnsembleMoments([lr, lr], pos_label=7).fit(X)
    gb = GradientBoostingClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="boosting stages"):
        EnsembleMoments(gb).fit(X)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fitted on 6 features"):
        EnsembleMoments(rf).fit(X[:, :4])
    em = EnsembleMoments(rf).fit(X)
    with pytest.raises(ValueError, match="features"):
        em.transform(X[:, :4])
    with pytest.raises(ValueError, match="NaN"):  # the members validate X (trees would accept NaN)
        EnsembleMoments([lr, lr]).fit(X).transform(np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="2-dimensional"):
        em.transform(X[0])
    multi = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, np.column_stack([y, 1 - y]))
    with pytest.raises(ValueError, match="Multi-output"):
        EnsembleMoments(multi).fit(X)
    with pytest.raises(ValueError, match="no predict_proba"):
        EnsembleMoments([lr, object()]).fit(X)


def test_grid_search_over_the_full_pipeline_is_reproducible(data):
    from sklearn.model_selection import GridSearchCV

    from skcal import SecondOrderPlattCalibrator

    X, y = data
    rng = np.random.RandomState(0)
    f = 1 / (1 + np.exp(-X[:, 0]))
    Y = (rng.uniform(size=(300, 2)) < f[:, None]).astype(float)
    forest = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X[:100], y[:100])
    pipe = Pipeline(
        [
            ("moments", EnsembleMoments(FrozenEstimator(forest))),
            ("sech", SechPerturber(random_state=0)),
            ("platt", SecondOrderPlattCalibrator()),
        ]
    )
    grid = {"platt__degree": [2, 4], "platt__alpha": [1e-6, 1e-2]}
    a = GridSearchCV(pipe, grid, cv=3).fit(X[100:], Snapshots(Y[100:]))
    b = GridSearchCV(pipe, grid, cv=3).fit(X[100:], Snapshots(Y[100:]))
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    out = a.best_estimator_.transform(X[:5])
    assert out.shape == (5, 2) and np.all(out[:, 1] <= out[:, 0] * (1 - out[:, 0]) + 1e-15)


# ------------------------------------------------------------------------------ every class
def test_every_class_moments_match_the_soft_vote_and_the_stored_outputs():
    from skcal import ensemble_moments

    X, y = make_classification(n_samples=300, n_classes=4, n_informative=5, random_state=2)
    tree = DecisionTreeClassifier(max_depth=3)
    bag = BaggingClassifier(tree, n_estimators=8, max_samples=0.2, max_features=0.7, random_state=0).fit(X, y)
    em = EnsembleMoments(bag).fit(X)
    S = em.transform(X)
    assert S.shape == (300, 8) and em.pos_label_ is None and em.class_columns_.shape == (8, 4)
    np.testing.assert_allclose(S[:, :4], bag.predict_proba(X), atol=1e-12)  # a missing class counts 0
    np.testing.assert_allclose(S[:, :4].sum(axis=1), 1.0)
    assert (S[:, 4:] <= S[:, :4] * (1 - S[:, :4]) + 1e-15).all()
    names = em.get_feature_names_out().tolist()
    assert names[:2] == ["m[0]", "m[1]"] and names[4:6] == ["sigma2[0]", "sigma2[1]"]
    # the stored-output function: the same moments from the members' probabilities
    P = np.stack([_member_proba(bag, i, X) for i in range(8)])
    np.testing.assert_allclose(ensemble_moments(P), S, atol=1e-12)
    S3 = ensemble_moments(P, layout="classes")
    np.testing.assert_array_equal(S3[..., 0], ensemble_moments(P)[:, :4])


def _member_proba(bag, i, X):
    mem, cols = bag.estimators_[i], bag.estimators_features_[i]
    out = np.zeros((X.shape[0], 4))
    out[:, mem.classes_.astype(int)] = mem.predict_proba(X[:, cols])
    return out


def test_two_classes_reproduce_the_binary_moments(data):
    from skcal import ensemble_moments

    X, y = data
    members = [LogisticRegression(C=c).fit(X, y) for c in (0.1, 1.0, 10.0)]
    binary = EnsembleMoments(members).fit_transform(X)
    P = np.stack([m.predict_proba(X) for m in members])
    np.testing.assert_allclose(ensemble_moments(P, layout="classes")[:, 1], binary, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "P, match",
    [
        (np.full((1, 5, 3), 1 / 3), "at least 2 members"),
        (np.full((2, 5, 1), 1.0), "2 classes"),
        (np.full((2, 5, 3), 0.5), "sum to 1"),
        (np.full((2, 5), 0.5), "3-dimensional"),
        (np.stack([np.full((5, 2), [1.5, -0.5])] * 2), r"lie in \[0, 1\]"),
    ],
)
def test_ensemble_moments_bad_input(P, match):
    from skcal import ensemble_moments

    with pytest.raises(ValueError, match=match):
        ensemble_moments(P)
