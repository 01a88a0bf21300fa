import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skcal.temperature import apply_temperature, fit_temperature, temperature_nll


def _synthetic(T_true, n=5000, k=4, seed=0):
    rng = np.random.default_rng(seed)
    logits = 2.5 * rng.normal(size=(n, k))
    cdf = np.cumsum(apply_temperature(logits, T_true), axis=1)
    y = (rng.random((n, 1)) > cdf).sum(axis=1)
    return logits, y


@pytest.mark.parametrize("T_true", [0.5, 1.0, 2.5])
def test_recovers_temperature(T_true):
    logits, y = _synthetic(T_true)
    assert fit_temperature(logits, y) == pytest.approx(T_true, rel=0.08)


def test_fit_is_the_minimiser_of_the_nll():
    logits, y = _synthetic(1.7, n=2000, seed=3)
    T = fit_temperature(logits, y)
    grid = np.exp(np.linspace(np.log(0.5), np.log(5), 401))
    nll = [temperature_nll(logits, y, t) for t in grid]
    assert T == pytest.approx(grid[int(np.argmin(nll))], rel=6e-3)
    base = temperature_nll(logits, y, T)
    assert base <= temperature_nll(logits, y, T * 1.001) and base <= temperature_nll(logits, y, T / 1.001)


def test_gradient_matches_finite_differences():
    from skcal.temperature import _nll_and_grad

    logits, y = _synthetic(1.3, n=500, seed=1)
    for log_t in (-0.7, 0.0, 0.9):
        f, g = _nll_and_grad(np.array([log_t]), logits, y, None)
        h = 1e-6
        fd = (
            _nll_and_grad(np.array([log_t + h]), logits, y, None)[0]
            - _nll_and_grad(np.array([log_t - h]), logits, y, None)[0]
        ) / (2 * h)
        assert g[0] == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_nll_closed_form_and_weights():
    logits = np.array([[0.0, 1.0], [2.0, 0.0]])
    y = [1, 1]
    T = 2.0
    per = [np.log(1 + np.exp(-0.5)), np.log(1 + np.exp(1.0))]
    assert temperature_nll(logits, y, T) == pytest.approx(np.mean(per), rel=1e-12)
    assert temperature_nll(logits, y, T, sample_weight=[3, 1]) == pytest.approx(
        (3 * per[0] + per[1]) / 4, rel=1e-12
    )


def test_row_shift_invariance_and_log_probabilities():
    logits, y = _synthetic(2.0, n=1500, seed=4)
    shifted = logits + np.random.default_rng(0).normal(size=(1500, 1)) * 50
    assert fit_temperature(shifted, y) == pytest.approx(fit_temperature(logits, y), rel=1e-6)
    logp = np.log(apply_temperature(logits, 1.0))
    assert fit_temperature(logp, y) == pytest.approx(fit_temperature(logits, y), rel=1e-6)


def test_apply_is_stable_and_keeps_argmax():
    Z = np.array([[1e4, 0.0, -1e4], [3.0, 3.0, 2.0], [-800.0, -801.0, -900.0]])
    P = apply_temperature(Z, 0.3)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(P.argmax(axis=1), Z.argmax(axis=1))
    assert temperature_nll(Z, [0, 1, 0], 0.3) < np.inf


def test_labels_and_bounds():
    logits, y = _synthetic(1.5, n=1000, seed=2)
    names = np.array(["a", "b", "c", "d"])
    assert fit_temperature(logits, names[y]) == pytest.approx(fit_temperature(logits, y), rel=1e-10)
    # separable data drives T to the lower bound
    Z = np.array([[5.0, -5.0], [-5.0, 5.0]] * 10)
    yy = np.array([0, 1] * 10)
    T = fit_temperature(Z, yy, bounds=(0.1, 10))
    assert T < 1.0 and temperature_nll(Z, yy, T) < 1e-8


def test_agrees_with_scikit_learn_temperature_calibration():
    X, y = make_classification(n_samples=1200, n_features=6, n_informative=4, n_classes=3, random_state=0)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0)
    clf = LogisticRegression(C=100.0).fit(Xa, ya)
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(Xb, yb)
    T = fit_temperature(clf.decision_function(Xb), yb)
    np.testing.assert_allclose(
        cal.predict_proba(Xb), apply_temperature(clf.decision_function(Xb), T), atol=1e-6
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fit_temperature([[0.0, np.nan]], [0]), "NaN"),
        (lambda: fit_temperature([[0.0], [1.0]], [0, 0]), "at least 2 columns"),
        (lambda: fit_temperature([[0.0, 1.0]], [0, 1]), "Inconsistent"),
        (lambda: fit_temperature([[0.0, 1.0]], [0], bounds=(2.0, 1.0)), "bounds"),
        (lambda: fit_temperature([[0.0, 1.0], [1.0, 0.0]], ["a", "z"], labels=["a", "b"]), "not in labels"),
        (lambda: apply_temperature([[0.0, 1.0]], 0.0), "temperature"),
        (lambda: apply_temperature([[0.0, 1.0]], np.inf), "temperature"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- issue 13 ------------------------------------------------------------------------------------

L3 = np.array([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0], [0.5, 0.5, 3.0]])


def test_unknown_integer_label_is_not_mapped_to_a_column():
    # label 5 is not a column index of a 3-column logit matrix; it used to be read as column 2
    from skcal.temperature import temperature_nll

    with pytest.raises(ValueError, match=r"integer labels \[5\] outside range\(3\)"):
        temperature_nll(L3, [0, 1, 5], 1.0)
    with pytest.raises(ValueError, match=r"outside range\(3\)"):
        fit_temperature(L3, [0, 1, 5])
    assert temperature_nll(L3, [0, 1, 5], 1.0, labels=[0, 1, 5]) == pytest.approx(
        temperature_nll(L3, [0, 1, 2], 1.0)
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tol": np.nan}, "'tol' parameter"),
        ({"tol": 0.0}, "'tol' parameter"),
        ({"tol": "1e-6"}, "'tol' parameter"),
        ({"tol": None}, "'tol' parameter"),
        ({"tol": True}, "'tol' parameter"),
        ({"bounds": None}, "'bounds' parameter"),
        ({"bounds": "ab"}, "'bounds' parameter"),
        ({"bounds": (1.0,)}, "bounds must be a pair"),
        ({"bounds": (0.0, 1.0)}, "bounds must be a pair"),
        ({"bounds": (1.0, np.inf)}, "bounds must be a pair"),
        ({"bounds": ("a", "b")}, "bounds must be a pair"),
        ({"bounds": [[1.0, 2.0]]}, "bounds must be a pair"),
    ],
)
def test_fit_temperature_rejects_bad_tol_and_bounds(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_temperature(L3, [0, 1, 2], **kwargs)


@pytest.mark.parametrize(
    "temperature", ["2.0", None, np.array([1.0, 2.0]), np.array(2.0), True, np.nan, -1.0]
)
def test_temperature_must_be_a_positive_number(temperature):
    from skcal.temperature import temperature_nll

    for call in (
        lambda: apply_temperature(L3, temperature),
        lambda: temperature_nll(L3, [0, 1, 2], temperature),
    ):
        with pytest.raises(ValueError, match="'temperature' parameter"):
            call()
