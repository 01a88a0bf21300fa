"""SecondOrderDisplay: computed arrays against their definitions, drawing under Agg, errors."""

import base64
import pickle
import zlib

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

import skcal
from skcal.display import SecondOrderDisplay
from skcal.platt import SecondOrderPlattCalibrator
from skcal.votes import Snapshots


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_public_import_paths():
    from skcal import SecondOrderDisplay as top

    assert top is SecondOrderDisplay is skcal.display.SecondOrderDisplay


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
    cal = SecondOrderPlattCalibrator(degree=3, alpha=1e-4).fit(S, Snapshots(Y))
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
    pipe.fit(S, Snapshots(Y))
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


def test_second_order_maps_are_drawn():
    S, Y, f = _second_order_problem(n=800)
    cal = SecondOrderPlattCalibrator(degree=2, alpha=1e-3).fit(S, Snapshots(Y))
    disp = SecondOrderDisplay.from_estimator(cal, S, true_prob=f, grid_size=7, name="cal")
    assert len(disp.surfaces_) == 2 and disp.axes_[0].get_title().startswith("cal: ")
    fig, axes = plt.subplots(1, 3)
    disp.plot(ax=axes)
    assert disp.figure_ is fig and list(disp.axes_) == list(axes)


#: ``pickle.dumps(SecondOrderDisplay(...), protocol=4)`` made by skcal before the display became
#: a subpackage (``skcal/display.py``), zlib-compressed and base64-encoded
OLD_PICKLE = (
    "eNptUT9Lw0AcbatVa20RrXUTx7oErIuDkKFCwUBEnSVckmsTbP5wd0GqCApWLdzWn4MOfgTnfgU3v4IILi5+A81d05KC"
    "bwj5vd97L+8u17OPp7mMBC/RMwt1FNulYQd1ga+cYCvw7UNiY7KfkAPYuoErqPFFgs4NagUEU+BVP/LCrmKIUfGiDnMR"
    "ISJiySAigzISWSw287xUAp/37ZFkAFqmB42sCfdwDDUtq+W03B04BZ63WTfEwpRr7UL/YbSf4dk90HX94DeGfGgZBma/"
    "sfn8JPCmXlZemx8Xt2pL4iuZQYVYxlfjPqjjmgQxbI/7OwtOUbRwStMd1uLU0d28T1J2JD7V4Ubv+2j4MkotxufDBnXb"
    "Hqr/l9aTWcvjjClvQXpDEpig82KIEaGBb8S3C031J/kzlQmdap/al03XTz4vnTovCQYTEpCEWE9L0ik6r6a005u5NnFt"
    "wxPF5FtyQp0XMEPbhuCSoT4eypgy10MsDvORh4FnLYhM5Q/wrvCq"
)


def test_pickles_of_the_old_module_load_and_round_trip():
    old = pickle.loads(zlib.decompress(base64.b64decode(OLD_PICKLE)))
    assert type(old) is SecondOrderDisplay
    assert old.raw_scores.shape == (2, 2) and old.estimator_name == "c" and old.eta1_grid is None
    raw = np.array([[0.2, 0.01], [0.5, 0.05], [0.7, 0.02]])
    disp = SecondOrderDisplay.from_predictions(raw, raw, true_sigma2=[0.02, 0.04, 0.03], plot=False)
    again = pickle.loads(pickle.dumps(disp))
    assert vars(again).keys() == vars(disp).keys()
    np.testing.assert_array_equal(again.raw_scores, raw)


def test_plot_without_matplotlib_says_how_to_install(monkeypatch):
    import builtins

    raw = np.array([[0.2, 0.01], [0.5, 0.05]])
    disp = SecondOrderDisplay.from_predictions(raw, raw, plot=False)
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"SecondOrderDisplay.plot needs matplotlib.*pip install"):
        SecondOrderDisplay.from_predictions(raw, raw)
    with pytest.raises(ImportError, match=r"SecondOrderDisplay.plot needs matplotlib"):
        disp.plot()


# ---------------------------------------------------------------------------------------------
# bad drawing arguments: a clear error naming the argument (the display's sweep cases)
# ---------------------------------------------------------------------------------------------
RAW = np.array([[0.2, 0.01], [0.5, 0.05], [0.7, 0.02]])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, ax=5), TypeError,
         "ax of SecondOrderDisplay.from_predictions must be a matplotlib Axes; got int"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, ax="x"), TypeError,
         "ax of SecondOrderDisplay.from_predictions must be a matplotlib Axes; got str"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, ax=[5, 6, 7]), TypeError,
         "ax of SecondOrderDisplay.from_predictions must be a matplotlib Axes"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, plot=False, ax=plt.subplots()[1]), TypeError,
         r"from_predictions got 'ax' with plot=False"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, foo=1), TypeError, "'foo'"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, name=3), ValueError, "'name' parameter"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, n_bins=True), ValueError, "'n_bins' param"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, plot=None), ValueError, "'plot' parameter"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, plot=False).plot(ax=5), TypeError,
         "ax of SecondOrderDisplay.plot must be a matplotlib Axes"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, plot=False).plot(name=3), ValueError,
         "'name' parameter of SecondOrderDisplay.plot"),
        (lambda: SecondOrderDisplay.from_predictions(RAW, RAW, plot=False).plot(color="r"), TypeError,
         "'color'"),
    ],
)
def test_drawing_arguments_are_checked(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_from_estimator_drawing_arguments():
    S, Y, _ = _second_order_problem(n=300)
    cal = SecondOrderPlattCalibrator(degree=2, alpha=1e-3).fit(S, Snapshots(Y))
    with pytest.raises(TypeError, match="ax of SecondOrderDisplay.from_estimator must be a matplotlib Axes"):
        SecondOrderDisplay.from_estimator(cal, S, ax=5)
    with pytest.raises(TypeError, match="from_estimator got 'ax' with plot=False"):
        SecondOrderDisplay.from_estimator(cal, S, ax=plt.subplots()[1], plot=False)
    with pytest.raises(ValueError, match="grid_size"):
        SecondOrderDisplay.from_estimator(cal, S, grid_size=1)
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="ax must hold 3 Axes"):
        SecondOrderDisplay.from_estimator(cal, S, ax=ax)
