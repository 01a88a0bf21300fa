"""ReliabilityDisplay: its numbers are the public functions', drawing under Agg, clear errors."""

import base64
import pickle
import sys
import zlib

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.linear_model import LogisticRegression

import skcal
from skcal.display import ReliabilityDisplay
from skcal.reliability_curve import reliability_curve, smooth_reliability_curve
from skcal.scdl import scdl_curve
from skcal.smooth_ece import smooth_ece

#: the module the display lives in (``skcal.display._reliability``), for spying on its calls
MODULE = sys.modules[ReliabilityDisplay.__module__]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=1500, seed=0, distort=lambda p: p):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < distort(p)).astype(int)
    return y, p


def _spy(monkeypatch, name):
    calls = []
    real = getattr(MODULE, name)

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(MODULE, name, spy)
    return calls


def test_backend_is_agg():
    assert matplotlib.get_backend().lower() == "agg"


def test_public_import_paths():
    from skcal import ReliabilityDisplay as top
    from skcal.display import ReliabilityDisplay as sub

    assert top is sub is skcal.display.ReliabilityDisplay is ReliabilityDisplay
    assert skcal.display.__all__ == ["ReliabilityDisplay", "SecondOrderDisplay"]


# ---------------------------------------------------------------------------------------------
# the numbers come from the public functions
# ---------------------------------------------------------------------------------------------
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
def test_hard_bins_and_their_intervals_come_from_reliability_curve(strategy, weighted, monkeypatch):
    y, p = _binary(n=600, seed=3, distort=lambda q: q**1.5)
    p = np.round(p, 1)  # many predictions exactly on the edges of 10 uniform bins
    w = np.random.default_rng(4).uniform(0.2, 2.0, size=p.size) if weighted else None
    calls = _spy(monkeypatch, "reliability_curve")
    disp = ReliabilityDisplay.from_predictions(
        y, p, strategy=strategy, sample_weight=w, n_bootstrap=30, confidence_level=0.8, random_state=0,
        plot=False,
    )
    assert len(calls) == 1
    assert calls[0]["n_bins"] == 10 and calls[0]["strategy"] == strategy
    assert calls[0]["interval"] == "bootstrap" and calls[0]["confidence"] == 0.8
    rc = reliability_curve(
        y, p, n_bins=10, strategy=strategy, sample_weight=w, interval="bootstrap", confidence=0.8,
        n_bootstrap=30, random_state=0,
    )
    keep = rc.nonempty
    assert disp.n_bins == 10 and disp.prob_true.shape == (int(keep.sum()),)
    np.testing.assert_array_equal(disp.prob_true, rc.observed_frequency[keep])
    np.testing.assert_array_equal(disp.prob_pred, rc.mean_predicted[keep])
    np.testing.assert_array_equal(disp.prob_true_low, rc.lower[keep])
    np.testing.assert_array_equal(disp.prob_true_high, rc.upper[keep])
    np.testing.assert_allclose(disp.bin_weights, rc.weight[keep] / rc.weight.sum())
    assert np.all(disp.prob_true_low <= disp.prob_true + 1e-12)
    assert np.all(disp.prob_true <= disp.prob_true_high + 1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_smooth_curve_and_band_come_from_smooth_reliability_curve(weighted, monkeypatch):
    y, p = _binary(n=2000, seed=1, distort=lambda q: q**2)
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=p.size) if weighted else None
    calls = _spy(monkeypatch, "smooth_reliability_curve")
    disp = ReliabilityDisplay.from_predictions(
        y, p, sample_weight=w, n_bootstrap=25, confidence_level=0.8, random_state=5, plot=False
    )
    smece, sigma = smooth_ece(y, p, sample_weight=w, return_bandwidth=True)
    assert len(calls) == 1 and calls[0]["bandwidth"] == sigma
    c = smooth_reliability_curve(
        y, p, sample_weight=w, bandwidth=sigma, n_bootstrap=25, confidence=0.8, random_state=5
    )
    np.testing.assert_array_equal(disp.smooth_grid, c.grid)
    np.testing.assert_array_equal(disp.smooth_curve, c.curve)
    np.testing.assert_array_equal(disp.smooth_low, c.lower)
    np.testing.assert_array_equal(disp.smooth_high, c.upper)
    assert disp.smooth_ece == smece and disp.smooth_bandwidth == sigma
    assert disp.smooth_grid.shape == (201,)


def test_soft_bins_match_scdl_curve_and_their_band_is_the_unsmoothed_curve(monkeypatch):
    y, p = _binary()
    calls = _spy(monkeypatch, "smooth_reliability_curve")
    disp = ReliabilityDisplay.from_predictions(
        y, p, strategy="soft", n_bins=None, n_bootstrap=20, random_state=2, plot=False
    )
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
    soft = [c for c in calls if c["bandwidth"] == 0.0]
    assert len(soft) == 1 and soft[0]["grid_points"] == m + 1 and soft[0]["min_density"] == 0.0
    band = smooth_reliability_curve(
        y, p, bandwidth=0.0, grid_points=m + 1, min_density=0.0, n_bootstrap=20, random_state=2
    )
    np.testing.assert_allclose(band.curve[keep], disp.prob_true, rtol=1e-10)  # the same heights
    np.testing.assert_array_equal(disp.prob_true_low, band.lower[keep])
    np.testing.assert_array_equal(disp.prob_true_high, band.upper[keep])
    assert np.all(disp.prob_true_low <= disp.prob_true + 1e-9)
    assert np.all(disp.prob_true <= disp.prob_true_high + 1e-9)
    disp4 = ReliabilityDisplay.from_predictions(y, p, strategy="soft", n_bins=4, n_bootstrap=0, plot=False)
    np.testing.assert_allclose(disp4.prob_true, scdl_curve(y, p, max_bins=4).grid(4)[1])
    with pytest.raises(ValueError, match="power of two"):
        ReliabilityDisplay.from_predictions(y, p, strategy="soft", n_bins=6, plot=False)


def test_bootstrap_is_seeded_and_optional():
    y, p = _binary(n=800)
    a = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=40, random_state=0, plot=False)
    b = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=40, random_state=0, plot=False)
    np.testing.assert_array_equal(a.prob_true_low, b.prob_true_low)
    np.testing.assert_array_equal(a.smooth_low, b.smooth_low)
    ok = np.isfinite(a.smooth_curve) & np.isfinite(a.smooth_low)
    assert np.mean((a.smooth_low[ok] <= a.smooth_curve[ok]) & (a.smooth_curve[ok] <= a.smooth_high[ok])) > 0.9
    c = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    assert np.isnan(c.prob_true_low).all() and np.isnan(c.smooth_low).all()
    np.testing.assert_array_equal(c.smooth_curve, a.smooth_curve)


def test_weighted_intervals_contain_the_weighted_values():
    """A resampled row keeps its weight once (before, it was weighted twice, which moved the
    intervals towards sum w^2 y / sum w^2 and off the points they belong to)."""
    n = 3000
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    w = np.where(y == 1, 4.0, 1.0)  # weights that move every bin's frequency up
    disp = ReliabilityDisplay.from_predictions(
        y, p, n_bins=5, sample_weight=w, n_bootstrap=100, random_state=0, plot=False
    )
    assert np.all(disp.prob_true_low < disp.prob_true) and np.all(disp.prob_true < disp.prob_true_high)
    mid = (disp.prob_true_low + disp.prob_true_high) / 2
    assert np.max(np.abs(mid - disp.prob_true)) < 0.02


def test_smooth_curve_tracks_truth_and_uses_smece_bandwidth():
    y, p = _binary(n=20000, distort=lambda q: q**2)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    smece, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert disp.smooth_ece == pytest.approx(smece) and disp.smooth_bandwidth == pytest.approx(sigma)
    ok = np.isfinite(disp.smooth_curve) & (disp.smooth_grid > 0.2) & (disp.smooth_grid < 0.8)
    assert np.max(np.abs(disp.smooth_curve[ok] - disp.smooth_grid[ok] ** 2)) < 0.05


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


#: ``pickle.dumps(ReliabilityDisplay(...), protocol=4)`` made by skcal before the display became
#: a subpackage (``skcal/display.py``), zlib-compressed and base64-encoded
OLD_PICKLE = (
    "eNqVU81KJDEQnh91dceRYWHFR9DLXPayh4U+KCzYMAdfIKS7M9PBdNIkaYc+LKwHWYXcLA/rG+wjzCMIK3j1JnhR8OAb"
    "aLrTrTsyKluHFKmqr6q+SuXn3Mmk3SjFdNVuiFk/oiplOAfzaYcwigPKqM63KuMxbOzDD1g3S6kUAdIyI2BWeZakeR+F"
    "QpJ+kjFNsZRFhmUkSSi4smGhtlgzX0aC+cAjF3IMfuMANpsB/IIdWPebfusA4iUzH+k8JQWkNfwKR4fO2zbNbzAYDLYf"
    "rJSH39AQHG32HIULz+kbD6y56jGVJIJ4Me4UleLuv3U+W+Tp70LOPKdvHbL7xA4xMX4XPfG+lHLt0CvP6JiO4nfhl97"
    "530LuHLwTUI7GxCK1egPrqF55tS6xCzkqiv8v345KhNAxGkk6a1Zth11rTEld+t7lWK5yhJncI28kqUdWJ5ni/rFKMnv"
    "qL/uoxzeTyyujn27j7OnlprjUbZCQwHfvTxl6anqVNcA8GtNIx9Y3qXwLHNlnU+C3zKLdd6zJqNjzjNOhkAmYORVGDAa"
    "2O6tRgpTG0l675RVrNGRCFIae/S9DGhEe2tUje4TZGnflhM7NClGaJlgLiThO7MdrJpAF/Ueot3OJ"
)


def test_pickles_of_the_old_module_load_and_round_trip():
    old = pickle.loads(zlib.decompress(base64.b64decode(OLD_PICKLE)))
    assert type(old) is ReliabilityDisplay
    assert old.prob_true.tolist() == [0.25, 0.75] and old.estimator_name == "m"
    assert old.smooth_bandwidth == 0.1 and old.strategy == "uniform"
    y, p = _binary(n=300)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=5, random_state=0, plot=False)
    again = pickle.loads(pickle.dumps(disp))
    assert vars(again).keys() == vars(disp).keys()
    np.testing.assert_array_equal(again.smooth_curve, disp.smooth_curve)


# ---------------------------------------------------------------------------------------------
# drawing
# ---------------------------------------------------------------------------------------------
def test_plot_draws_histogram_legend_outside_and_unclipped_markers():
    y, p = _binary(n=600)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=20, random_state=0, name="m")
    assert disp.hist_ax_ is not None and len(disp.hist_ax_.patches) == 10
    assert disp.line_.get_clip_on() is False
    legend = disp.ax_.get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 > disp.ax_.get_window_extent().x1 - 1
    assert disp.smooth_line_ is not None and disp.smooth_band_ is not None
    np.testing.assert_array_equal(disp.smooth_line_.get_ydata(), disp.smooth_curve)
    fig, ax = plt.subplots()
    disp.plot(ax=ax, legend=False, show_values=False)
    assert ax.get_legend() is None and disp.hist_ax_ is None
    fig, (ax, hax) = plt.subplots(2, 1)
    disp.plot(ax=ax, hist_ax=hax)
    assert disp.hist_ax_ is hax and len(hax.patches) == 10


def test_line_keywords_and_their_aliases_reach_the_line():
    y, p = _binary(n=300)
    disp = ReliabilityDisplay.from_predictions(
        y, p, n_bootstrap=0, linewidth=3, c="red", marker="s", clip_on=True
    )
    assert disp.line_.get_linewidth() == 3 and disp.line_.get_color() == "red"
    assert disp.line_.get_marker() == "s" and disp.line_.get_clip_on() is True
    disp.plot(lw=2, ms=9)
    assert disp.line_.get_linewidth() == 2 and disp.line_.get_markersize() == 9


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
    with pytest.raises(ImportError, match=r"ReliabilityDisplay.from_predictions needs matplotlib"):
        ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0)
    ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)  # computing needs none


def test_reliability_diagram_image(tmp_path):
    """The figure renders (a PNG with ink in the diagram's area)."""
    y, p = _binary(n=5000, distort=lambda q: q**2)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=50, random_state=0, name="model")
    out = tmp_path / "reliability.png"
    disp.figure_.savefig(out, dpi=60)
    img = plt.imread(out)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert (img[..., :3] < 0.5).any()


# ---------------------------------------------------------------------------------------------
# bad input: a clear error naming the argument (the display's cases of the input sweep)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_bins": 0}, "n_bins"),
        ({"n_bins": True}, "n_bins"),
        ({"n_bins": 10_000}, "exceeds the number of samples"),
        ({"strategy": "kmeans"}, "strategy"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"n_bootstrap": 10**12}, "n_bootstrap"),
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"name": 3}, "name"),
        ({"plot": "yes"}, "plot"),
    ],
)
def test_reliability_errors(kwargs, match):
    y, p = _binary(n=100)
    kwargs.setdefault("plot", False)
    with pytest.raises(ValueError, match=match):
        ReliabilityDisplay.from_predictions(y, p, **kwargs)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        # issue 20's sweep leftover: max_bins (removed) reached matplotlib's Line2D.set()
        ({"max_bins": 1}, TypeError, r"unexpected keyword argument 'max_bins' \(max_bins was removed: "
                                     r"pass n_bins \(a power of two\) with strategy='soft'\)"),
        ({"foo": 1}, TypeError, r"from_predictions got an unexpected keyword argument 'foo'.*Line2D"),
        ({"ax": 5}, TypeError, r"ax of ReliabilityDisplay.from_predictions must be a matplotlib Axes; got"),
        ({"ax": "x"}, TypeError, "ax of ReliabilityDisplay.from_predictions must be a matplotlib Axes"),
        ({"hist_ax": 5}, TypeError, "hist_ax of ReliabilityDisplay.from_predictions must be a matplotlib"),
        ({"legend": "no"}, ValueError, "'legend' parameter of ReliabilityDisplay.plot"),
        ({"xlabel": 3}, ValueError, "'xlabel' parameter of ReliabilityDisplay.plot"),
        ({"ref_line": None}, ValueError, "'ref_line' parameter of ReliabilityDisplay.plot"),
        ({"color": "no-such-colour"}, ValueError, "color"),
    ],
)
def test_drawing_arguments_are_checked(kwargs, error, match):
    y, p = _binary(n=100)
    with pytest.raises(error, match=match):
        ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, **kwargs)


def test_drawing_arguments_are_checked_before_computing(monkeypatch):
    calls = _spy(monkeypatch, "smooth_reliability_curve")
    y, p = _binary(n=100)
    with pytest.raises(TypeError, match="max_bins"):
        ReliabilityDisplay.from_predictions(y, p, max_bins=1)
    assert calls == []


@pytest.mark.parametrize("kwargs", [{"max_bins": 1}, {"color": "red"}, {"ax": "x"}, {"hist_ax": None}])
def test_drawing_arguments_with_plot_false_are_refused(kwargs):
    y, p = _binary(n=100)
    name = next(iter(kwargs))
    with pytest.raises(TypeError, match=rf"from_predictions got '{name}' with plot=False"):
        ReliabilityDisplay.from_predictions(y, p, plot=False, **kwargs)


def test_from_estimator_drawing_arguments():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(TypeError, match=r"from_estimator got an unexpected keyword argument 'max_bins'"):
        ReliabilityDisplay.from_estimator(clf, X, y, max_bins=1)
    with pytest.raises(TypeError, match=r"'pos_label' \(from_estimator takes the positive class from"):
        ReliabilityDisplay.from_estimator(clf, X, y, pos_label=1)
    with pytest.raises(TypeError, match="with plot=False"):
        ReliabilityDisplay.from_estimator(clf, X, y, plot=False, lw=2)
    with pytest.raises(ValueError, match="estimator"):
        ReliabilityDisplay.from_estimator("clf", X, y)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_bins": 1}, TypeError, r"ReliabilityDisplay.plot got an unexpected keyword argument 'max_bin"),
        ({"hist_ax": None, "n_bins": 4}, TypeError, "'n_bins'"),
        ({"ax": 5}, TypeError, "ax of ReliabilityDisplay.plot must be a matplotlib Axes"),
        ({"name": 3}, ValueError, "'name' parameter of ReliabilityDisplay.plot"),
        ({"show_smooth": "yes"}, ValueError, "'show_smooth' parameter"),
        ({"ylabel": 1.0}, ValueError, "'ylabel' parameter"),
        ({"lw": 1, "linewidth": 2}, TypeError, "linewidth"),
    ],
)
def test_plot_arguments_are_checked(kwargs, error, match):
    y, p = _binary(n=100)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    with pytest.raises(error, match=match):
        disp.plot(**kwargs)


def test_hist_ax_needs_ax():
    y, p = _binary(n=100)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, plot=False)
    _, hax = plt.subplots()
    with pytest.raises(ValueError, match="hist_ax is used only with ax"):
        disp.plot(hist_ax=hax)
    with pytest.raises(ValueError, match="hist_ax is used only with ax"):
        ReliabilityDisplay.from_predictions(y, p, n_bootstrap=0, hist_ax=hax)
    _, ax = plt.subplots()
    with pytest.raises(TypeError, match="hist_ax of ReliabilityDisplay.plot must be a matplotlib Axes"):
        disp.plot(ax=ax, hist_ax=5)
