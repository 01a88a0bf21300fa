"""Second-order recalibration at a glance: is the stated uncertainty right, and what was fitted.

``from_predictions`` compares raw and recalibrated scores ``(m, sigma2)`` against a known truth;
``from_estimator`` adds the fitted calibrator's maps, computed through its public
``transform`` and ``predict_moments``.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import MAX_BINS_LIMIT, Integral, Real, StrictInterval
from skcal._plotting import (
    COLOR_DATA,
    COLOR_REFERENCE,
    SMALL_SIZE,
    check_axes,
    check_matplotlib,
    style_axes,
    subplots,
)
from skcal._validation import check_scores
from skcal.display._common import NAME, check_no_drawing_arguments, estimator_name
from skcal.votes import check_class_scores, class_scores_layout

__all__ = ["SecondOrderDisplay"]

#: The constraints of the arguments both constructors of :class:`SecondOrderDisplay` take.
_COMPUTE = {
    "true_sigma2": ["array-like", None],
    "true_prob": ["array-like", None],
    "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both")],
    "name": NAME,
    "ax": "no_validation",
    "plot": ["boolean"],
}


def _axes_list(ax, caller):
    """``ax`` (one Axes or a sequence of them) as a flat object array of checked Axes."""
    axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
    for a in axes:
        check_axes(a, "ax", caller)
    return axes


def _check_drawing(caller, plot, ax):
    if not plot:
        check_no_drawing_arguments(caller, ax, {})
    elif ax is not None:
        _axes_list(ax, caller)


class _ScoresOf:
    """The score-producing part of a SecondOrderCalibratedClassifier, as a ``transform``."""

    def __init__(self, estimator, label=None):
        self.estimator = estimator
        self.label = label

    def transform(self, X):
        out = self.estimator._raw_scores(X, self.label)
        return out[0] if isinstance(out, tuple) else out  # the top label's scores


def _find_calibrator(estimator, pos_label=None, multiclass="classwise"):
    """Split a fitted estimator into (score-producing prefix or None, second-order calibrator)."""
    if hasattr(estimator, "predict_moments"):
        return None, estimator
    if hasattr(estimator, "predict_second_order") and hasattr(estimator, "calibrators_"):
        # a k-class SecondOrderCalibratedClassifier: one calibrator per class
        classes = list(np.asarray(estimator.classes_).tolist())
        if multiclass == "top_label" or pos_label is None:
            raise ValueError(
                f"estimator calibrates each of its {len(classes)} classes: pass pos_label (one of "
                f"{classes[:10]}) to show that class's calibrator (a classifier fitted with "
                "multiclass='top_label' shows the top label)."
            )
        if pos_label not in classes:
            raise ValueError(f"pos_label={pos_label!r} is not one of the classes {classes[:10]}.")
        j = classes.index(pos_label)
        return _ScoresOf(estimator, j), estimator.calibrators_[j]
    if hasattr(estimator, "predict_second_order") and hasattr(estimator, "calibrator_"):
        # SecondOrderCalibratedClassifier: raw features -> perturbed ensemble scores -> calibrator
        # (of the binary task, or of the top-label task)
        if pos_label is not None:
            raise ValueError("pos_label applies to a classifier fitted with one calibrator per class.")
        return _ScoresOf(estimator), estimator.calibrator_
    steps = getattr(estimator, "steps", None)
    if steps:
        for k in range(len(steps) - 1, -1, -1):
            if hasattr(steps[k][1], "predict_moments"):
                prefix = estimator[:k] if k > 0 else None
                return prefix, steps[k][1]
    raise ValueError(
        f"estimator {type(estimator).__name__} is neither a fitted SecondOrderPlattCalibrator nor a "
        "Pipeline containing one (an object with predict_moments)."
    )


def _check_true(values, name, n, lo, hi):
    if values is None:
        return None
    arr = np.array(values, dtype=float)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) (one value per sample); got shape {arr.shape}.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; expected finite values.")
    if arr.min() < lo or arr.max() > hi:
        raise ValueError(
            f"{name} must lie in [{lo:g}, {hi:g}]; got values in [{arr.min():.6g}, {arr.max():.6g}]."
        )
    return arr


def _binned_error(sigma2, err, n_bins):
    """Equal-mass bins of ``sigma2``: mean ``sigma2`` and mean ``err`` per bin."""
    order = np.argsort(sigma2, kind="stable")
    groups = [g for g in np.array_split(order, min(n_bins, sigma2.shape[0])) if g.size]
    return (np.array([sigma2[g].mean() for g in groups]), np.array([err[g].mean() for g in groups]))


def _pearson(a, b):
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _select_task(raw, new, true_sigma2, true_prob, pos_label, multiclass):
    """k-class scores ``(n, k, 2)`` / ``(n, 2k)``: one class's, or each row's top label's, as ``(n, 2)``."""
    if class_scores_layout(raw) is None and class_scores_layout(new) is None:
        if pos_label is not None or multiclass != "classwise":
            raise ValueError("pos_label and multiclass='top_label' apply to k-class scores only.")
        return raw, new, true_sigma2, true_prob
    R = check_class_scores(raw, name="raw_scores")
    N = check_class_scores(new, name="recalibrated_scores", n_classes=R.shape[1])
    n, k = R.shape[:2]
    rows = np.arange(n)
    if multiclass == "top_label":
        if pos_label is not None:
            raise ValueError("pass pos_label or multiclass='top_label', not both.")
        col = np.argmax(R[..., 0], axis=1)  # the raw scores' top class, for both
    else:
        if pos_label is None and k == 2:
            pos_label = 1  # two classes: class 1's scores, as the binary (n, 2) scores give them
        if pos_label is None:
            raise ValueError(
                f"raw_scores hold {k} classes: pass pos_label (a column 0..{k - 1}) or "
                "multiclass='top_label'."
            )
        if isinstance(pos_label, bool) or not 0 <= pos_label < k:
            raise ValueError(
                f"pos_label must be a column 0..{k - 1} of the k-class scores; got {pos_label!r}."
            )
        col = np.full(n, int(pos_label))

    def pick(values):
        if values is None:
            return None
        arr = np.asarray(values, dtype=float)
        return arr[rows, col] if arr.ndim == 2 and arr.shape == (n, k) else arr

    return R[rows, col], N[rows, col], pick(true_sigma2), pick(true_prob)


def _second_order_numbers(raw, new, true_sigma2, true_prob, n_bins):
    """Checked arrays and the comparisons against a known truth, as keyword arguments of __init__."""
    raw = check_scores(raw, name="raw_scores")
    new = check_scores(new, name="recalibrated_scores")
    for arr, nm in ((raw, "raw_scores"), (new, "recalibrated_scores")):
        if arr.shape[1] != 2:
            raise ValueError(f"{nm} must have 2 columns (m, sigma2); got shape {arr.shape}.")
    if raw.shape[0] != new.shape[0]:
        raise ValueError(
            f"raw_scores has {raw.shape[0]} rows but recalibrated_scores has {new.shape[0]}; expected "
            "the same samples."
        )
    n = raw.shape[0]
    ts = _check_true(true_sigma2, "true_sigma2", n, 0.0, 0.25)
    tp = _check_true(true_prob, "true_prob", n, 0.0, 1.0)
    kw = {"raw_scores": raw, "recalibrated_scores": new, "true_sigma2": ts, "true_prob": tp}
    if ts is not None:
        kw["pearson_raw"] = _pearson(raw[:, 1], ts)
        kw["pearson_recalibrated"] = _pearson(new[:, 1], ts)
    if tp is not None:
        kw["bin_sigma2_raw"], kw["bin_error_raw"] = _binned_error(raw[:, 1], (tp - raw[:, 0]) ** 2, n_bins)
        kw["bin_sigma2_recalibrated"], kw["bin_error_recalibrated"] = _binned_error(
            new[:, 1], (tp - new[:, 0]) ** 2, n_bins
        )
    return kw


class SecondOrderDisplay:
    """Second-order recalibration at a glance: is the stated uncertainty right, and what was fitted.

    The first panel checks the uncertainty a predictor states. With ``true_prob`` (the true
    probability ``f*`` at each input, known in a simulation) it shows, in equal-mass bins of the
    stated variance ``sigma2``, the realised squared error of the mean, ``(f* - m)^2``: a
    predictor whose uncertainty is right lies on the diagonal (``E[(f* - eta1)^2 | S] = eta2 -
    eta1^2``); points above it are over-confident, below it under-confident. With
    ``true_sigma2`` (the true conditional variance) it plots the stated against the true
    variance with their Pearson correlations; with neither, the recalibrated against the raw
    ``sigma2``.

    The other two panels (only from a fitted calibrator) are maps over the scores ``(m,
    sigma2)``: the recalibrated probability ``eta1_hat = E[Y | S]`` (where a prediction ``m`` is
    moved to) and the recalibrated variance ``eta2_hat - eta1_hat^2`` (how uncertain the
    recalibrated predictor says it is), over ``m`` in [0, 1] and ``sigma2`` up to 1.25 times the
    largest raw ``sigma2``. The dashed curve ``sigma2 = m (1 - m)`` is the largest variance a
    probability with mean ``m`` can have; the dots are the raw scores.

    Create it with :meth:`from_predictions` or :meth:`from_estimator`; ``__init__`` only stores.

    Parameters
    ----------
    raw_scores : ndarray of shape (n, 2)
        ``(m, sigma2)`` before recalibration.
    recalibrated_scores : ndarray of shape (n, 2)
        ``(m, sigma2)`` after recalibration.
    true_sigma2 : ndarray of shape (n,), default=None
        Known conditional variance.
    true_prob : ndarray of shape (n,), default=None
        Known ``f*``.
    pearson_raw : float, default=None
        Correlation of the raw ``sigma2`` with ``true_sigma2``.
    pearson_recalibrated : float, default=None
        Correlation of the recalibrated ``sigma2`` with ``true_sigma2``.
    bin_sigma2_raw : ndarray, default=None
        With ``true_prob``: mean raw ``sigma2`` per equal-mass bin.
    bin_error_raw : ndarray, default=None
        With ``true_prob``: mean ``(f* - m)^2`` of the raw scores per bin.
    bin_sigma2_recalibrated : ndarray, default=None
        As ``bin_sigma2_raw``, recalibrated.
    bin_error_recalibrated : ndarray, default=None
        As ``bin_error_raw``, recalibrated.
    grid_m : ndarray, default=None
        The ``m`` axis of the maps.
    grid_sigma2 : ndarray, default=None
        The ``sigma2`` axis of the maps.
    eta1_grid : ndarray of shape (len(grid_sigma2), len(grid_m)), default=None
        ``eta1_hat`` on the grid.
    eta2_grid : ndarray of shape (len(grid_sigma2), len(grid_m)), default=None
        ``eta2_hat`` on the grid.
    estimator_name : str, default=None
        Title prefix.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        Set by :meth:`plot`.
    figure_ : matplotlib Figure
        Set by :meth:`plot`.
    """

    @validate_params(
        {
            "raw_scores": ["array-like"],
            "recalibrated_scores": ["array-like"],
            **{
                k: ["array-like", None]
                for k in (
                    "true_sigma2",
                    "true_prob",
                    "bin_sigma2_raw",
                    "bin_error_raw",
                    "bin_sigma2_recalibrated",
                    "bin_error_recalibrated",
                    "grid_m",
                    "grid_sigma2",
                    "eta1_grid",
                    "eta2_grid",
                )
            },
            "pearson_raw": [Real, None],
            "pearson_recalibrated": [Real, None],
            "estimator_name": [str, None],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(
        self,
        *,
        raw_scores,
        recalibrated_scores,
        true_sigma2=None,
        true_prob=None,
        pearson_raw=None,
        pearson_recalibrated=None,
        bin_sigma2_raw=None,
        bin_error_raw=None,
        bin_sigma2_recalibrated=None,
        bin_error_recalibrated=None,
        grid_m=None,
        grid_sigma2=None,
        eta1_grid=None,
        eta2_grid=None,
        estimator_name=None,
    ):
        self.raw_scores = raw_scores
        self.recalibrated_scores = recalibrated_scores
        self.true_sigma2 = true_sigma2
        self.true_prob = true_prob
        self.pearson_raw = pearson_raw
        self.pearson_recalibrated = pearson_recalibrated
        self.bin_sigma2_raw = bin_sigma2_raw
        self.bin_error_raw = bin_error_raw
        self.bin_sigma2_recalibrated = bin_sigma2_recalibrated
        self.bin_error_recalibrated = bin_error_recalibrated
        self.grid_m = grid_m
        self.grid_sigma2 = grid_sigma2
        self.eta1_grid = eta1_grid
        self.eta2_grid = eta2_grid
        self.estimator_name = estimator_name

    @classmethod
    @validate_params(
        {
            "raw_scores": ["array-like"],
            "recalibrated_scores": ["array-like"],
            **_COMPUTE,
            "pos_label": [Integral, None],
            "multiclass": [StrOptions({"classwise", "top_label"})],
        },
        prefer_skip_nested_validation=True,
    )
    def from_predictions(
        cls,
        raw_scores,
        recalibrated_scores,
        *,
        true_sigma2=None,
        true_prob=None,
        n_bins=10,
        name=None,
        ax=None,
        plot=True,
        pos_label=None,
        multiclass="classwise",
    ):
        """Compare raw and recalibrated scores (no maps: no calibrator is given), then plot.

        Parameters
        ----------
        raw_scores : array-like of shape (n, 2), (n, k, 2) or (n, 2k)
            ``(m, sigma2)`` before recalibration (per class for k-class scores).
        recalibrated_scores : array-like of the shape of ``raw_scores``
            ``(m, sigma2)`` after recalibration, for the same samples.
        true_sigma2 : array-like of shape (n,) or (n, k), default=None
            Known conditional variance of ``f*`` at each score, in [0, 1/4] (per class: the
            shown class's column is used).
        true_prob : array-like of shape (n,) or (n, k), default=None
            Known ``f*`` at each sample, in [0, 1].
        n_bins : int, default=10
            Equal-mass bins for the ``true_prob`` panel.
        name : str, default=None
            Title prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw the display (``False`` only computes it; ``ax`` is then refused).
        pos_label : int, default=None
            For k-class scores, the class (column) whose one-vs-rest scores are shown. Two classes
            (``(n, 2, 2)`` or ``(n, 4)``) show class 1 by default: the same display as their
            binary ``(n, 2)`` scores.
        multiclass : {"classwise", "top_label"}, default="classwise"
            For k-class scores, ``"top_label"`` shows, per row, the class of largest raw ``m`` (in
            both the raw and the recalibrated scores) instead of one class.

        Returns
        -------
        SecondOrderDisplay
            The computed (and drawn) display.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.display import SecondOrderDisplay
        >>> raw = np.array([[0.2, 0.01], [0.5, 0.05], [0.7, 0.02], [0.9, 0.0]])
        >>> new = np.array([[0.25, 0.03], [0.5, 0.06], [0.6, 0.01], [0.85, 0.02]])
        >>> disp = SecondOrderDisplay.from_predictions(raw, new, true_sigma2=[0.02, 0.09, 0.03, 0.01],
        ...                                            plot=False)
        >>> round(disp.pearson_raw, 3), round(disp.pearson_recalibrated, 3)
        (0.987, 0.859)
        """
        _check_drawing("SecondOrderDisplay.from_predictions", plot, ax)
        raw_scores, recalibrated_scores, true_sigma2, true_prob = _select_task(
            raw_scores, recalibrated_scores, true_sigma2, true_prob, pos_label, multiclass
        )
        kw = _second_order_numbers(raw_scores, recalibrated_scores, true_sigma2, true_prob, n_bins)
        disp = cls(estimator_name=name, **kw)
        return disp.plot(ax=ax) if plot else disp

    @classmethod
    @validate_params(
        {
            "estimator": "no_validation",
            "X": ["array-like"],
            **_COMPUTE,
            "grid_size": [StrictInterval(Integral, 2, 1000, closed="both")],
            "pos_label": "no_validation",
        },
        prefer_skip_nested_validation=True,
    )
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        true_sigma2=None,
        true_prob=None,
        n_bins=10,
        grid_size=41,
        name=None,
        ax=None,
        plot=True,
        pos_label=None,
    ):
        """Compute from a fitted second-order calibrator (or a pipeline containing one), then plot.

        Parameters
        ----------
        estimator : fitted SecondOrderPlattCalibrator, Pipeline or SecondOrderCalibratedClassifier
            A calibrator (then ``X`` are its input scores), or a pipeline with a calibrator step
            (then ``X`` are the pipeline's inputs: the raw scores are the output of the steps
            before the calibrator, and the recalibrated scores the calibrator's output on them),
            or a fitted ``SecondOrderCalibratedClassifier`` (its binary or top-label calibrator;
            for a k-class classwise one the calibrator of class ``pos_label``).
        X : array-like
            Scores ``(m, sigma2)`` or the pipeline's inputs.
        true_sigma2 : array-like of shape (n,), default=None
            As in :meth:`from_predictions`.
        true_prob : array-like of shape (n,), default=None
            As in :meth:`from_predictions`.
        n_bins : int, default=10
            As in :meth:`from_predictions`.
        grid_size : int, default=41
            Points per axis of the maps.
        name : str, default=None
            Title prefix; the estimator's class name when None.
        ax : sequence of 3 matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw the display (``False`` only computes it; ``ax`` is then refused).
        pos_label : object, default=None
            A k-class ``SecondOrderCalibratedClassifier`` fitted with ``multiclass="classwise"``:
            the class (one of ``classes_``) whose calibrator is shown. One fitted with
            ``multiclass="top_label"`` shows its top-label calibrator.

        Returns
        -------
        SecondOrderDisplay
            The computed (and drawn) display.
        """
        _check_drawing("SecondOrderDisplay.from_estimator", plot, ax)
        prefix, calibrator = _find_calibrator(estimator, pos_label)
        raw = X if prefix is None else prefix.transform(X)
        raw = check_scores(raw, name="raw scores")
        if raw.shape[1] != 2:
            raise ValueError(f"the raw scores must have 2 columns (m, sigma2); got shape {raw.shape}.")
        width = getattr(calibrator, "n_features_in_", 2)
        new = np.asarray(calibrator.transform(raw[:, :width]))
        kw = _second_order_numbers(raw, new, true_sigma2, true_prob, n_bins)
        # The maps cover the region of the data: sigma2 up to 1.25 times the largest raw sigma2
        # (at most 1/4); beyond it the polynomials extrapolate.
        gm = np.linspace(0.0, 1.0, grid_size)
        gs = np.linspace(0.0, min(0.25, max(1.25 * float(raw[:, 1].max()), 1e-3)), grid_size)
        MM, SS = np.meshgrid(gm, gs)
        grid_scores = np.column_stack([MM.ravel(), SS.ravel()])
        if getattr(calibrator, "n_features_in_", 2) == 1:
            grid_scores = grid_scores[:, :1]
        E = np.asarray(calibrator.predict_moments(grid_scores))
        disp = cls(
            grid_m=gm,
            grid_sigma2=gs,
            eta1_grid=E[:, 0].reshape(MM.shape),
            eta2_grid=E[:, 1].reshape(MM.shape),
            estimator_name=estimator_name(estimator, name),
            **kw,
        )
        return disp.plot(ax=ax) if plot else disp

    @validate_params({"ax": "no_validation", "name": NAME}, prefer_skip_nested_validation=True)
    def plot(self, ax=None, *, name=None):
        """Draw the panels: the uncertainty check, then (if computed) the two maps.

        Parameters
        ----------
        ax : sequence of matplotlib Axes, default=None
            One Axes per panel (1, or 3 with maps); a new figure when None. A single Axes is
            accepted when there is one panel.
        name : str, default=None
            Title prefix; ``estimator_name`` when None.

        Returns
        -------
        SecondOrderDisplay
            The display, with ``axes_`` and ``figure_`` set.
        """
        caller = "SecondOrderDisplay.plot"
        check_matplotlib(caller)
        n_panels = 1 if self.eta1_grid is None else 3
        if ax is None:
            fig, axes = subplots(
                "SecondOrderDisplay.plot", 1, n_panels, figsize=(5.0 * n_panels, 4.2), squeeze=False
            )
            axes = axes.ravel()
        else:
            axes = _axes_list(ax, caller)
            if axes.shape[0] != n_panels:
                raise ValueError(f"ax must hold {n_panels} Axes (one per panel); got {axes.shape[0]}.")
            fig = axes[0].figure
        name = self.estimator_name if name is None else name
        prefix = f"{name}: " if name else ""
        a = axes[0]
        raw_s2, new_s2 = self.raw_scores[:, 1], self.recalibrated_scores[:, 1]
        if self.true_prob is not None:
            top = 1.1 * max(
                self.bin_sigma2_raw.max(),
                self.bin_error_raw.max(),
                self.bin_sigma2_recalibrated.max(),
                self.bin_error_recalibrated.max(),
                1e-4,
            )
            a.plot([0, top], [0, top], ls=":", color=COLOR_REFERENCE, lw=1, label="uncertainty right")
            a.plot(
                self.bin_sigma2_raw, self.bin_error_raw, "o-", color="0.55", lw=1, label="raw", clip_on=False
            )
            a.plot(
                self.bin_sigma2_recalibrated,
                self.bin_error_recalibrated,
                "o-",
                color=COLOR_DATA,
                lw=1,
                label="recalibrated",
                clip_on=False,
            )
            a.set(
                xlabel="stated variance sigma2 (bin mean)",
                ylabel="realised squared error (f* - m)^2",
                xlim=(0, top),
                ylim=(0, top),
            )
            style_axes(a, title=prefix + "is the stated uncertainty right?")
        elif self.true_sigma2 is not None:
            top = 1.05 * max(self.true_sigma2.max(), raw_s2.max(), new_s2.max(), 1e-4)
            a.plot([0, top], [0, top], ls=":", color=COLOR_REFERENCE, lw=1)
            a.scatter(
                self.true_sigma2,
                raw_s2,
                s=6,
                color="0.55",
                alpha=0.5,
                label=f"raw (r={self.pearson_raw:.3f})",
            )
            a.scatter(
                self.true_sigma2,
                new_s2,
                s=6,
                color=COLOR_DATA,
                alpha=0.6,
                label=f"recalibrated (r={self.pearson_recalibrated:.3f})",
            )
            a.set(xlabel="true conditional variance", ylabel="stated variance sigma2")
            style_axes(a, title=prefix + "stated vs. true variance")
        else:
            top = 1.05 * max(raw_s2.max(), new_s2.max(), 1e-4)
            a.plot([0, top], [0, top], ls=":", color=COLOR_REFERENCE, lw=1)
            a.scatter(raw_s2, new_s2, s=6, color=COLOR_DATA, alpha=0.6, label="samples")
            a.set(xlabel="raw sigma2", ylabel="recalibrated sigma2")
            style_axes(a, title=prefix + "recalibrated vs. raw sigma2")
        a.legend(loc="upper left", fontsize=SMALL_SIZE, framealpha=0.9)
        self.surfaces_ = []
        if n_panels == 3:
            MM, SS = np.meshgrid(self.grid_m, self.grid_sigma2)
            feasible_m = np.linspace(0, 1, 201)
            for axk, Z, title, levels in (
                (axes[1], self.eta1_grid, "recalibrated probability E[Y | m, sigma2]", np.linspace(0, 1, 11)),
                (axes[2], self.eta2_grid - self.eta1_grid**2, "recalibrated variance", None),
            ):
                cs = axk.contourf(MM, SS, Z, levels=levels if levels is not None else 10, cmap="viridis")
                fig.colorbar(cs, ax=axk, shrink=0.9)
                axk.plot(
                    feasible_m,
                    feasible_m * (1 - feasible_m),
                    ls="--",
                    color="w",
                    lw=1,
                    label="largest variance m(1-m)",
                )
                axk.scatter(
                    self.raw_scores[:, 0],
                    self.raw_scores[:, 1],
                    s=2,
                    color="k",
                    alpha=0.3,
                    label="raw scores",
                )
                axk.set(
                    xlabel="raw mean m",
                    ylabel="raw variance sigma2",
                    xlim=(0, 1),
                    ylim=(0, self.grid_sigma2[-1]),
                )
                style_axes(axk, title=title)
                axk.grid(False)
                self.surfaces_.append(cs)
            axes[2].legend(loc="upper right", fontsize="x-small", framealpha=0.8)
        self.axes_ = axes
        self.figure_ = fig
        return self
