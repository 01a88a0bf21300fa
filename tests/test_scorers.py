import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import get_scorer, get_scorer_names
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate

import skcal
from skcal import scdl_score, smooth_ece

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    return X, y


def test_names_are_registered():
    for name in ("scdl", "neg_scdl", "smooth_ece", "neg_smooth_ece"):
        assert name in get_scorer_names()
        assert name in skcal.get_skcal_scorer_names()


def test_cross_val_score_negates_the_loss(data):
    X, y = data
    clf = LogisticRegression()
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(clf, X, y, scoring="scdl", cv=cv)
    expected = []
    for train, test in cv.split(X):
        proba = LogisticRegression().fit(X[train], y[train]).predict_proba(X[test])[:, 1]
        expected.append(-scdl_score(y[test], proba))
    np.testing.assert_allclose(scores, expected)
    np.testing.assert_allclose(cross_val_score(clf, X, y, scoring="neg_scdl", cv=cv), expected)
    assert get_scorer("smooth_ece")(clf.fit(X, y), X, y) == pytest.approx(
        -smooth_ece(y, clf.predict_proba(X)[:, 1])
    )


def test_string_labels_with_pos_label_scorer(data):
    X, y = data
    labels = np.where(y == 1, "b", "a")
    clf = LogisticRegression().fit(X, labels)
    from sklearn.metrics import make_scorer

    scorer = make_scorer(scdl_score, greater_is_better=False, response_method="predict_proba", pos_label="b")
    assert scorer(clf, X, labels) == pytest.approx(-scdl_score(y, clf.predict_proba(X)[:, 1]))


def test_multi_metric_and_grid_search(data):
    X, y = data
    res = cross_validate(LogisticRegression(), X, y, cv=3, scoring={"cal": "scdl", "sm": "neg_smooth_ece"})
    assert np.all(res["test_cal"] < 0) and np.all(res["test_sm"] <= 0)
    res = cross_validate(LogisticRegression(), X, y, cv=3, scoring=["scdl", "accuracy"])
    assert set(res) >= {"test_scdl", "test_accuracy"}
    gs = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, scoring="scdl", cv=3).fit(X, y)
    assert gs.best_score_ == max(gs.cv_results_["mean_test_score"])
    gs = GridSearchCV(
        LogisticRegression(),
        {"C": [0.01, 1.0]},
        scoring={"scdl": "scdl", "acc": "accuracy"},
        refit="scdl",
        cv=3,
    ).fit(X, y)
    assert "mean_test_scdl" in gs.cv_results_


SCRIPT = """
{first}
{second}
import numpy as np
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
X, y = make_classification(n_samples=120, random_state=0)
s = cross_val_score(LogisticRegression(), X, y, cv=3, scoring="scdl")
assert s.shape == (3,) and (s < 0).all()
r = cross_validate(LogisticRegression(), X, y, cv=3, scoring={{"a": "scdl", "b": "neg_smooth_ece"}})
assert "test_a" in r and "test_b" in r
r = cross_validate(LogisticRegression(), X, y, cv=3, scoring=["neg_scdl", "smooth_ece"])
assert "test_neg_scdl" in r
GridSearchCV(LogisticRegression(), {{"C": [0.1, 1.0]}}, scoring="scdl", cv=3).fit(X, y)
print("OK")
"""


@pytest.mark.parametrize(
    "first, second",
    [
        ("import skcal", "import sklearn.model_selection"),
        ("from sklearn.model_selection import GridSearchCV", "from skcal import scdl_score"),
    ],
)
def test_import_order(first, second):
    code = textwrap.dedent(SCRIPT.format(first=first, second=second))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OK"


@pytest.mark.parametrize("scoring", ["scdl", "neg_scdl", "smooth_ece", "neg_smooth_ece"])
def test_binary_scorers_use_the_estimators_positive_class(scoring):
    # labels {1, 2}: the scorer must pass pos_label=classes_[1], not return NaN or score column 0
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    import skcal

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y01 = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    s12 = cross_val_score(LogisticRegression(), X, y01 + 1, scoring=scoring, cv=3)
    s01 = cross_val_score(LogisticRegression(), X, y01, scoring=scoring, cv=3)
    np.testing.assert_allclose(s12, s01)
    sab = cross_val_score(LogisticRegression(), X, np.where(y01 == 1, "yes", "no"), scoring=scoring, cv=3)
    np.testing.assert_allclose(sab, s01)
    assert np.isfinite(s12).all()
    assert skcal.scdl_score(y01, np.full(300, 0.5)) >= 0


# --- issue 13: the scorer table and a validating register_scorer ---------------------------------

README_SCORERS = [
    "scdl",
    "neg_scdl",
    "smooth_ece",
    "neg_smooth_ece",
    "ce2",
    "neg_ce2",
    "truthful_conf_ce",
    "neg_truthful_conf_ce",
    "classwise_lince",
    "neg_classwise_lince",
]


def test_every_readme_scorer_is_registered_from_the_one_table():
    from sklearn.metrics._scorer import _SCORERS

    from skcal.scorers import SCORER_TABLE

    assert set(README_SCORERS) <= set(SCORER_TABLE)
    for name in README_SCORERS:
        assert name in get_scorer_names()
        assert _SCORERS[name] is SCORER_TABLE[name]


def test_metric_modules_do_not_depend_on_the_scorers():
    for module in ("scdl.py", "smooth_ece.py", "ce2", "truthful.py"):
        path = ROOT / "skcal" / module
        for f in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            src = f.read_text(encoding="utf-8")
            assert "skcal.scorers" not in src and "register_scorer" not in src, f


def test_register_scorer_rejects_bad_arguments_without_breaking_sklearn():
    from skcal._compat import InvalidParameterError

    before = get_scorer_names()
    with pytest.raises(InvalidParameterError, match="'name' parameter"):
        skcal.register_scorer(123, None)
    with pytest.raises(InvalidParameterError, match="'scorer' parameter"):
        skcal.register_scorer("x_not_callable", None)
    with pytest.raises(ValueError, match="non-empty"):
        skcal.register_scorer("  ", get_scorer("scdl"))
    with pytest.raises(InvalidParameterError, match="'overwrite' parameter"):
        skcal.register_scorer("x_new", get_scorer("scdl"), overwrite="yes")
    assert get_scorer_names() == before  # still callable and unchanged


def test_register_scorer_refuses_to_replace_sklearn_scorers():
    from sklearn.metrics import make_scorer
    from sklearn.metrics._scorer import _SCORERS

    from skcal.scorers import SCORER_TABLE

    accuracy = _SCORERS["accuracy"]
    fake = make_scorer(scdl_score, greater_is_better=False, response_method="predict_proba")
    with pytest.raises(ValueError, match="'accuracy' is already a scikit-learn scorer; pass overwrite=True"):
        skcal.register_scorer("accuracy", fake)
    assert _SCORERS["accuracy"] is accuracy
    with pytest.raises(ValueError, match="already a registered scorer"):
        skcal.register_scorer("scdl", fake)
    skcal.register_scorer("scdl", SCORER_TABLE["scdl"])  # the same object again: a no-op


def test_register_scorer_overwrite_and_new_names(data):
    from sklearn.metrics import make_scorer
    from sklearn.metrics._scorer import _SCORERS

    X, y = data
    scorer = make_scorer(scdl_score, greater_is_better=False, response_method="predict_proba")
    name = "test_register_scorer_overwrite_and_new_names"
    try:
        skcal.register_scorer(name, scorer)
        assert name in skcal.get_skcal_scorer_names() and name in get_scorer_names()
        assert cross_val_score(LogisticRegression(), X, y, scoring=name, cv=3).shape == (3,)
        other = make_scorer(smooth_ece, greater_is_better=False, response_method="predict_proba")
        skcal.register_scorer(name, other, overwrite=True)
        assert _SCORERS[name] is other
    finally:
        _SCORERS.pop(name, None)
        from skcal import scorers

        scorers._SKCAL_SCORERS.pop(name, None)
