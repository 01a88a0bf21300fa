"""Displays: computed arrays against their definitions, drawing under Agg, errors."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skcal import (
    ReliabilityDisplay,
    SecondOrderDisplay,
    SecondOrderPlattCalibrator,
    scdl_curve,
    smooth_ece,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=1500, seed=0, distort=lambda p: p):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < distort(p)).astype(int)
    return y, p


def test_backend_is_agg():
    assert matplotlib.get_backend().lower() == "agg"


def test_reliability_arrays_match_scdl_curve():
    y, p = _binary(distort=lambda p: p**2)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=30, random_state=0)
    curve = scdl_curve(y, p)
    m = curve.selected_n_bins
    pi, q, _ = curve.grid(m)
    assert disp.n_bins == m
    assert disp.scdl == pytest.approx(curve.scdl)
    np.testing.assert_allclose(disp.bin_centers, np.arange(m + 1) / m)
    np.testing.assert_allclose(disp.bin_weights, pi)
    np.testing.assert_allclose(disp.bin_frequencies, q)
    assert disp.bin_weights.sum() == pytest.approx(1.0)
    assert disp.smooth_ece == pytest.approx(smooth_ece(y, p))
    assert disp.bootstrap_frequencies.shape == (30, m + 1)
    ok = np.isfinite(disp.band_low)
    assert ok.any()
    assert np.all(disp.band_low[ok] <= disp.band_high[ok])
    # the point estimate lies inside the band for a well-populated bin
    i = int(np.argmax(disp.bin_weights))
    assert disp.band_low[i] <= disp.bin_frequencies[i] <= disp.band_high[i]


def test_reliability_bootstrap_is_seeded_and_optional():
    y, p = _binary()
    a = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=10, random_state=3)
    b = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=10, random_state=3)
    np.testing.assert_array_equal(a.bootstrap_frequencies, b.bootstrap_frequencies)
    c = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0)
    assert np.isnan(c.band_low).all() and c.band_ is None


def test_reliability_smooth_curve_tracks_truth():
    # y ~ Bernoulli(p^2): the smooth curve estimates E[y | p] = p^2 where data are dense.
    y, p = _binary(n=20000, seed=1, distort=lambda p: p**2)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0)
    inner = (disp.smooth_grid > 0.2) & (disp.smooth_grid < 0.8)
    err = np.abs(disp.smooth_curve[inner] - disp.smooth_grid[inner] ** 2)
    assert np.nanmax(err) < 0.06
    # the curve of a calibrated predictor is close to the diagonal instead
    y2, p2 = _binary(n=20000, seed=2)
    d2 = ReliabilityDisplay.from_predictions(y2, p2, n_bootstrap=0)
    assert np.nanmax(np.abs(d2.smooth_curve[inner] - d2.smooth_grid[inner])) < 0.05


def test_reliability_plot_returns_self_and_artists():
    y, p = _binary()
    fig, ax = plt.subplots()
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=20, random_state=0, ax=ax, name="model")
    assert disp.ax_ is ax and disp.figure_ is fig
    assert disp.line_.get_label().startswith("model: soft bins")
    assert disp.smooth_line_ is not None and disp.band_ is not None
    # the curve is cut where data are scarce, and the legend says so
    assert "shown where data density \u2265 2% of peak" in disp.smooth_line_.get_label()
    assert any("data density" in t.get_text() for t in ax.get_legend().get_texts())
    again = disp.plot(show_band=False, show_smooth=False)
    assert again is disp and disp.band_ is None and disp.smooth_line_ is None
    assert disp.ax_ is not ax  # a new figure when ax is None
    assert disp.ax_.get_ylabel() == "observed frequency of the positive class"  # the default
    disp.plot(xlabel="confidence", ylabel="accuracy of the top label")
    assert (disp.ax_.get_xlabel(), disp.ax_.get_ylabel()) == ("confidence", "accuracy of the top label")


def test_reliability_from_estimator_uses_classes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = np.where(X[:, 0] + rng.normal(size=400) > 0, "spam", "ham")
    clf = LogisticRegression().fit(X, y)
    disp = ReliabilityDisplay.from_estimator(clf, X, y, n_bootstrap=0)
    ref = ReliabilityDisplay.from_predictions(
        (y == "spam").astype(int), clf.predict_proba(X)[:, 1], n_bootstrap=0
    )
    np.testing.assert_allclose(disp.bin_frequencies, ref.bin_frequencies)
    assert disp.estimator_name == "LogisticRegression"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"confidence_level": 1.5}, "confidence_level"),
    ],
)
def test_reliability_errors(kwargs, match):
    y, p = _binary(n=50)
    with pytest.raises(ValueError, match=match):
        ReliabilityDisplay.from_predictions(y, p, **kwargs)
    with pytest.raises(ValueError, match="y_prob"):
        ReliabilityDisplay.from_predictions(y, p + 1.0)


def _second_order_problem(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.1, 0.9, n)
    s2 = rng.uniform(0.0, 0.02, n)
    f = np.clip(m + np.where(rng.uniform(size=n) < 0.5, -1, 1) * 0.25 * (m > 0.5), 0, 1)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    return np.column_stack([m, s2]), Y, f


def test_second_order_from_predictions_truth_sigma2():
    raw = np.array([[0.2, 0.01], [0.5, 0.05], [0.7, 0.02], [0.9, 0.0]])
    new = np.array([[0.25, 0.02], [0.5, 0.1], [0.6, 0.03], [0.85, 0.01]])
    truth = np.array([0.02, 0.09, 0.03, 0.01])
    disp = SecondOrderDisplay.from_predictions(raw, new, true_sigma2=truth)
    assert disp.pearson_raw == pytest.approx(np.corrcoef(raw[:, 1], truth)[0, 1])
    assert disp.pearson_recalibrated == pytest.approx(np.corrcoef(new[:, 1], truth)[0, 1])
    assert disp.eta1_grid is None and len(disp.axes_) == 1


def test_second_order_from_predictions_truth_prob_bins():
    raw = np.column_stack([np.full(8, 0.5), np.arange(8) / 100])
    new = raw.copy()
    f = np.array([0.5, 0.5, 0.6, 0.6, 0.3, 0.3, 0.9, 0.9])
    disp = SecondOrderDisplay.from_predictions(raw, new, true_prob=f, n_bins=4)
    np.testing.assert_allclose(disp.bin_sigma2_raw, [0.005, 0.025, 0.045, 0.065])
    np.testing.assert_allclose(disp.bin_error_raw, [0.0, 0.01, 0.04, 0.16])


def test_second_order_from_estimator_surfaces_match_calibrator():
    S, Y, f = _second_order_problem()
    cal = SecondOrderPlattCalibrator(degree=3, alpha=1e-4).fit(S, Y)
    disp = SecondOrderDisplay.from_estimator(cal, S, true_prob=f, grid_size=11)
    assert disp.eta1_grid.shape == (11, 11) and len(disp.axes_) == 3
    MM, SS = np.meshgrid(disp.grid_m, disp.grid_sigma2)
    E = cal.predict_moments(np.column_stack([MM.ravel(), SS.ravel()]))
    np.testing.assert_allclose(disp.eta1_grid.ravel(), E[:, 0])
    np.testing.assert_allclose(disp.eta2_grid.ravel(), E[:, 1])
    np.testing.assert_allclose(disp.recalibrated_scores, cal.transform(S))
    # the hidden subtype makes the realised error large for m > 1/2; recalibration learns it
    assert disp.bin_error_recalibrated[-1] > 0.03
    assert disp.bin_sigma2_recalibrated[-1] > 3 * disp.bin_sigma2_raw.max() / 2


def test_second_order_from_pipeline_uses_prefix_as_raw_scores():
    S, Y, _ = _second_order_problem(n=1000)
    shift = FunctionTransformer(lambda Z: np.column_stack([Z[:, 0], Z[:, 1] / 2]))
    pipe = Pipeline([("shift", shift), ("cal", SecondOrderPlattCalibrator(degree=2, alpha=1e-3))])
    pipe.fit(S, Y)
    disp = SecondOrderDisplay.from_estimator(pipe, S, grid_size=5)
    np.testing.assert_allclose(disp.raw_scores[:, 1], S[:, 1] / 2)
    np.testing.assert_allclose(disp.recalibrated_scores, pipe.transform(S))
    assert disp.estimator_name == "SecondOrderPlattCalibrator"


def test_second_order_errors():
    raw = np.array([[0.2, 0.01], [0.5, 0.05]])
    with pytest.raises(ValueError, match="same samples"):
        SecondOrderDisplay.from_predictions(raw, raw[:1])
    with pytest.raises(ValueError, match="true_prob must lie"):
        SecondOrderDisplay.from_predictions(raw, raw, true_prob=[0.5, 1.5])
    with pytest.raises(ValueError, match="true_sigma2 must have shape"):
        SecondOrderDisplay.from_predictions(raw, raw, true_sigma2=[0.1])
    with pytest.raises(ValueError, match="2 columns"):
        SecondOrderDisplay.from_predictions(raw[:, :1], raw[:, :1])
    with pytest.raises(ValueError, match="predict_moments"):
        SecondOrderDisplay.from_estimator(LogisticRegression(), raw)
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="ax must hold 1"):
        SecondOrderDisplay.from_predictions(raw, raw, ax=[ax, ax])
