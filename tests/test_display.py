"""Displays: computed arrays against their definitions (and scikit-learn's), drawing under Agg, errors."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skcal.display import ReliabilityDisplay, SecondOrderDisplay
from skcal.platt import SecondOrderPlattCalibrator
from skcal.reliability_curve import reliability_curve
from skcal.scdl import scdl_curve
from skcal.smooth_ece import smooth_ece


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


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [3, 7, 10])
def test_hard_bins_match_sklearn_calibration_curve(strategy, n_bins):
    y, p = _binary(n=500, distort=lambda q: q**2)
    disp = ReliabilityDisplay.from_predictions(
        y, p, n_bins=n_bins, strategy=strategy, n_bootstrap=0, plot=False
    )
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose(disp.prob_true, prob_true)
    np.testing.assert_allclose(disp.prob_pred, prob_pred)
    assert disp.bin_weights.sum() == pytest.approx(1.0)
    assert disp.n_bins == n_bins and disp.strategy == strategy


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("weighted", [False, True])
def test_hard_bins_come_from_reliability_curve(strategy, weighted, monkeypatch):
    """The display's bins are skcal.reliability_curve's (equal numbers; the function is called)."""
    import skcal.display as display_module

    y, p = _binary(n=600, seed=3, distort=lambda q: q**1.5)
    p = np.round(p, 1)  # many predictions exactly on the edges of 10 uniform bins
    w = np.random.default_rng(4).uniform(0.2, 2.0, size=p.size) if weighted else None
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return reliability_curve(*args, **kwargs)

    monkeypatch.setattr(display_module, "reliability_curve", spy)
    disp = ReliabilityDisplay.from_predictions(
        y, p, strategy=strategy, sample_weight=w, n_bootstrap=30, random_state=0, plot=False
    )
    assert len(calls) == 1 and calls[0]["n_bins"] == 10 and calls[0]["strategy"] == strategy
    rc = reliability_curve(y, p, n_bins=10, strategy=strategy, sample_weight=w)
    keep = rc.nonempty
    assert disp.n_bins == 10 and disp.prob_true.shape == (int(keep.sum()),)
    np.testing.assert_array_equal(disp.prob_true, rc.observed_frequency[keep])
    np.testing.assert_array_equal(disp.prob_pred, rc.mean_predicted[keep])
    np.testing.assert_allclose(disp.bin_weights, rc.weight[keep] / rc.weight.sum())
    # every bootstrap interval brackets its bin's value (the rows' bins agree with the curve's)
    assert np.all(disp.prob_true_low <= disp.prob_true + 1e-12)
    assert np.all(disp.prob_true <= disp.prob_true_high + 1e-12)


def test_soft_bins_match_scdl_curve():
    y, p = _binary()
    disp = ReliabilityDisplay.from_predictions(y, p, strategy="soft", n_bins=None, n_bootstrap=0, plot=False)
    curve = scdl_curve(y, p)
    m = curve.selected_n_bins
    pi, q, _ = curve.grid(m)
    keep = pi > 0
    assert disp.n_bins == m
    np.testing.assert_allclose(disp.prob_true, q[keep])
    np.testing.assert_allclose(disp.prob_pred, (np.arange(m + 1) / m)[keep])
    assert disp.scdl == pytest.approx(curve.scdl)
    assert disp.scdl_m_star == pytest.approx(curve.selected_scdl_m)
    assert disp.scdl_at_floor is curve.at_floor
    disp4 = ReliabilityDisplay.from_predictions(y, p, strategy="soft", n_bins=4, n_bootstrap=0, plot=False)
    np.testing.assert_allclose(disp4.prob_true, scdl_curve(y, p, max_bins=4).grid(4)[1])
    with pytest.raises(ValueError, match="power of two"):
        ReliabilityDisplay.from_predictions(y, p, strategy="soft", n_bins=6, plot=False)


def test_bootstrap_band_is_seeded_covers_and_optional():
    y, p = _binary(n=800)
    a = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=40, random_state=0, plot=False)
    b = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=40, random_state=0, plot=False)
    np.testing.assert_array_equal(a.prob_true_low, b.prob_true_low)
    assert (a.prob_true_low <= a.prob_true + 1e-12).all() and (a.prob_true <= a.prob_true_high + 1e-12).all()
    ok = np.isfinite(a.smooth_curve) & np.isfinite(a.smooth_low)
    assert np.mean((a.smooth_low[ok] <= a.smooth_curve[ok]) & (a.smooth_curve[ok] <= a.smooth_high[ok])) > 0.9
    c = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    assert np.isnan(c.prob_true_low).all() and np.isnan(c.smooth_low).all()


def test_smooth_curve_tracks_truth_and_uses_smece_bandwidth():
    y, p = _binary(n=20000, distort=lambda q: q**2)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    smece, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert disp.smooth_ece == pytest.approx(smece) and disp.smooth_bandwidth == pytest.approx(sigma)
    ok = np.isfinite(disp.smooth_curve) & (disp.smooth_grid > 0.2) & (disp.smooth_grid < 0.8)
    assert np.max(np.abs(disp.smooth_curve[ok] - disp.smooth_grid[ok] ** 2)) < 0.05


def test_plot_draws_histogram_legend_outside_and_unclipped_markers():
    y, p = _binary(n=600)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=20, random_state=0, name="m")
    assert disp.hist_ax_ is not None and len(disp.hist_ax_.patches) == 10
    assert disp.line_.get_clip_on() is False
    legend = disp.ax_.get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 > disp.ax_.get_window_extent().x1 - 1
    assert disp.smooth_line_ is not None and disp.smooth_band_ is not None
    fig, ax = plt.subplots()
    disp.plot(ax=ax, legend=False, show_values=False)
    assert ax.get_legend() is None and disp.hist_ax_ is None


def test_from_estimator_uses_classes_and_plot_false_needs_no_axes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = np.where(X[:, 0] + rng.normal(size=400) > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    disp = ReliabilityDisplay.from_estimator(clf, X, y, n_bootstrap=0, plot=False)
    assert disp.estimator_name == "LogisticRegression"
    prob_true, _ = calibration_curve(y == "yes", clf.predict_proba(X)[:, 1], n_bins=10)
    np.testing.assert_allclose(disp.prob_true, prob_true)
    assert not hasattr(disp, "ax_")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_bins": 0}, "n_bins"),
        ({"n_bins": True}, "n_bins"),
        ({"n_bins": 10_000}, "exceeds the number of samples"),
        ({"strategy": "kmeans"}, "strategy"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"confidence_level": 1.5}, "confidence_level"),
    ],
)
def test_reliability_errors(kwargs, match):
    y, p = _binary(n=100)
    with pytest.raises(ValueError, match=match):
        ReliabilityDisplay.from_predictions(y, p, plot=False, **kwargs)


def test_init_only_stores():
    disp = ReliabilityDisplay(
        prob_true=np.array([0.5]),
        prob_pred=np.array([0.5]),
        prob_true_low=np.array([np.nan]),
        prob_true_high=np.array([np.nan]),
        bin_weights=np.array([1.0]),
        y_prob=np.array([0.5]),
        smooth_grid=np.linspace(0, 1, 3),
        smooth_curve=np.full(3, np.nan),
        smooth_low=np.full(3, np.nan),
        smooth_high=np.full(3, np.nan),
        smooth_ece=0.0,
        smooth_bandwidth=0.1,
        n_bins=1,
        strategy="uniform",
    )
    assert disp.prob_true.tolist() == [0.5] and not hasattr(disp, "ax_")


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
    assert not hasattr(SecondOrderDisplay(raw_scores=raw, recalibrated_scores=new), "axes_")
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


def test_plot_without_matplotlib_says_how_to_install(monkeypatch):
    import builtins

    y, p = _binary(n=200)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"ReliabilityDisplay.plot needs matplotlib.*pip install"):
        disp.plot()
    raw = np.array([[0.2, 0.01], [0.5, 0.05]])
    with pytest.raises(ImportError, match=r"SecondOrderDisplay.plot needs matplotlib"):
        SecondOrderDisplay.from_predictions(raw, raw)
