"""The reliability diagram: binned points with bootstrap intervals, the smooth curve and its band.

Every number comes from a public function: the hard bins and their intervals from
:func:`~skcal.reliability_curve` (``interval="bootstrap"``), the soft bins from
:func:`~skcal.scdl_curve` with their band from :func:`~skcal.smooth_reliability_curve` at
``bandwidth=0``, and the smooth curve with its band from
:func:`~skcal.smooth_reliability_curve` at the bandwidth :func:`~skcal.smooth_ece` selects.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from skcal._compat import HasMethods, StrOptions, validate_params
from skcal._constraints import (
    MAX_BINS_LIMIT,
    N_BOOTSTRAP,
    POS_LABEL,
    PROBABILITY_OPEN,
    RANDOM_STATE,
    SAMPLE_WEIGHT,
    Integral,
    Real,
    StrictInterval,
)
from skcal._docstrings import fill
from skcal._plotting import (
    COLOR_DATA,
    COLOR_REFERENCE,
    COLOR_SMOOTH,
    check_axes,
    check_matplotlib,
    integer_locator,
    outside_legend,
    style_axes,
    subplots,
)
from skcal._validation import check_binary_probabilities
from skcal.display._common import NAME, check_no_drawing_arguments, estimator_name
from skcal.reliability_curve import reliability_curve, smooth_reliability_curve
from skcal.scdl import scdl_curve
from skcal.smooth_ece import smooth_ece

__all__ = ["ReliabilityDisplay"]

#: Bins of the prediction histogram under a quantile or soft-bin diagram.
HISTOGRAM_BINS = 20

#: The keyword parameters of :meth:`ReliabilityDisplay.plot` (the rest go to the line's Line2D).
_PLOT_KEYWORDS = (
    "hist_ax",
    "ref_line",
    "show_intervals",
    "show_smooth",
    "legend",
    "show_values",
    "xlabel",
    "ylabel",
)
_HIST_AX_NEEDS_AX = (
    "hist_ax is used only with ax: without ax the display makes its own figure with the histogram "
    "under the diagram."
)
#: Hints for keywords that are easy to pass by mistake.
_HINTS = {
    "max_bins": "max_bins was removed: pass n_bins (a power of two) with strategy='soft'",
    "pos_label": "from_estimator takes the positive class from estimator.classes_[1]",
}

#: The constraints of the arguments both constructors take.
_COMPUTE = {
    "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both"), None],
    "strategy": [StrOptions({"uniform", "quantile", "soft"})],
    "n_bootstrap": N_BOOTSTRAP,
    "confidence_level": PROBABILITY_OPEN,
    "sample_weight": SAMPLE_WEIGHT,
    "random_state": RANDOM_STATE,
    "name": NAME,
    "ax": "no_validation",
    "plot": ["boolean"],
}
#: Their description, written once (see :func:`skcal._docstrings.fill`).
_DOCS = {
    "bins": """n_bins : int or None, default=None
    Number of bins, as in :class:`~sklearn.calibration.CalibrationDisplay` (``None``:
    10). For ``strategy="soft"`` it is the SCDL grid ``m`` (a power of two), and
    ``None`` uses the grid ``m*`` that :func:`~skcal.scdl_curve` selects.
strategy : {"uniform", "quantile", "soft"}, default="uniform"
    Equal-width bins, equal-count bins (both as in
    :func:`~sklearn.calibration.calibration_curve`) or SCDL's soft bins.
n_bootstrap : int, default=100
    Bootstrap replicates for the intervals and the band (0: none; at most 10**5).
confidence_level : float, default=0.9
    Coverage of the intervals and the band.
sample_weight : array-like of shape (n,), default=None
    Non-negative sample weights.""",
    "random_state": """random_state : int, RandomState instance or None, default=None
    Seeds the bootstrap.""",
    "drawing": """ax : matplotlib Axes, default=None
    Axes of the diagram; a new figure with a histogram under the diagram when None.
plot : bool, default=True
    Draw the display (``False`` only computes it, without matplotlib; ``ax`` and
    ``**kwargs`` are then refused).
**kwargs : dict
    Passed to :meth:`plot`: its keywords (``hist_ax``, ``ref_line``, ...) or properties
    of the binned points' matplotlib ``Line2D``; anything else raises a ``TypeError``
    naming it before anything is computed.""",
}


@lru_cache(maxsize=1)
def _line_properties():
    """The settable properties of matplotlib's ``Line2D`` (``color``, ``marker``, ...)."""
    from matplotlib.artist import ArtistInspector
    from matplotlib.lines import Line2D

    return frozenset(ArtistInspector(Line2D).get_setters())


def _line_keywords(kwargs):
    """``kwargs`` with matplotlib's aliases (``lw``, ``c``, ...) replaced by the property names."""
    from matplotlib import cbook
    from matplotlib.lines import Line2D

    return cbook.normalize_kwargs(kwargs, Line2D)


def _check_line_kwargs(caller, kwargs, plot_keywords=()):
    """Refuse keyword arguments that are neither ``plot_keywords`` nor ``Line2D`` properties.

    The binned points are drawn by ``Axes.plot``; anything else that reached it would fail
    there with matplotlib's ``Line2D.set() got an unexpected keyword argument``.
    """
    check_matplotlib(caller)
    props = _line_properties()
    unknown = [
        k for k in kwargs if k not in plot_keywords and next(iter(_line_keywords({k: None}))) not in props
    ]
    if unknown:
        hints = "".join(f" ({_HINTS[k]})" for k in unknown if k in _HINTS)
        own = f"plot's keywords ({', '.join(plot_keywords)}) or " if plot_keywords else ""
        raise TypeError(
            f"{caller} got an unexpected keyword argument {', '.join(repr(k) for k in unknown)}{hints}. "
            f"Extra keyword arguments must be {own}properties of the binned points' matplotlib "
            "Line2D (color, marker, linewidth, ...)."
        )


def _check_drawing(caller, plot, ax, kwargs):
    """The drawing arguments of ``from_predictions`` / ``from_estimator``, before computing."""
    if not plot:
        check_no_drawing_arguments(caller, ax, kwargs)
        return
    _check_line_kwargs(caller, kwargs, _PLOT_KEYWORDS)
    if ax is not None:
        check_axes(ax, "ax", caller)
    if kwargs.get("hist_ax") is not None:
        check_axes(kwargs["hist_ax"], "hist_ax", caller)
        if ax is None:
            raise ValueError(_HIST_AX_NEEDS_AX)


class ReliabilityDisplay:
    """Reliability diagram with bootstrap intervals, the smooth calibration curve and its band.

    The binned points are those of :func:`~skcal.reliability_curve`, which equal
    :func:`sklearn.calibration.calibration_curve`'s (``strategy`` ``"uniform"`` or
    ``"quantile"``, same right-closed bins, same values) or, with ``strategy="soft"``, the
    soft bins of SCDL (:func:`~skcal.scdl_curve`): bin ``i`` sits at the grid point ``i / m``,
    the point a decision maker who rounds with :class:`~skcal.SoftBinRounder` acts on, with
    height ``q_i = E[w_i(p) y] / E[w_i(p)]``. Each point carries a percentile bootstrap
    interval (rows resampled with replacement, a resampled row keeping its sample weight; the
    bins stay those of the full sample). The smooth curve is the kernel-smoothed calibration
    curve behind smECE (Blasiok and Nakkiran), at the bandwidth smECE selects (at least the
    grid spacing 1/200), with its pointwise bootstrap band (:func:`~skcal.smooth_reliability_curve`);
    it is drawn only where the smoothed density of predictions is at least 2% of its peak. A
    histogram of the predictions is drawn under the diagram.

    Create it with :meth:`from_predictions` or :meth:`from_estimator`; ``__init__`` only stores
    the numbers.

    Parameters
    ----------
    prob_true : ndarray of shape (n_nonempty,)
        Observed frequency of the positive class in each non-empty bin.
    prob_pred : ndarray of shape (n_nonempty,)
        Mean prediction of each non-empty bin (the grid point ``i / m`` for soft bins).
    prob_true_low : ndarray of shape (n_nonempty,)
        Lower end of the bootstrap interval of ``prob_true`` (NaN without bootstrap).
    prob_true_high : ndarray of shape (n_nonempty,)
        Upper end of the bootstrap interval of ``prob_true``.
    bin_weights : ndarray of shape (n_nonempty,)
        Fraction of the (weighted) samples in each non-empty bin.
    y_prob : ndarray of shape (n,)
        The predictions, for the histogram.
    smooth_grid : ndarray of shape (201,)
        Grid of the smooth curve.
    smooth_curve : ndarray of shape (201,)
        Smoothed frequency of the positive class (NaN where the data are too sparse).
    smooth_low : ndarray of shape (201,)
        Lower end of the pointwise bootstrap band of the smooth curve.
    smooth_high : ndarray of shape (201,)
        Upper end of that band.
    smooth_ece : float
        The smECE of the predictions.
    smooth_bandwidth : float
        The kernel bandwidth smECE selects.
    n_bins : int
        Number of bins (``m`` for soft bins).
    strategy : {"uniform", "quantile", "soft"}
        How the bins were made.
    scdl : float or None
        SCDL of the predictions (soft bins only).
    scdl_m_star : float or None
        The unfloored ``SCDL_{m*}`` on the selected grid (soft bins only).
    scdl_at_floor : bool or None, default=None
        Whether SCDL sits on the floor ``1/m*`` of its selected grid (soft bins only).
    confidence_level : float, default=0.9
        Coverage of the intervals and the band.
    estimator_name : str, default=None
        Name shown in the legend.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The diagram's axes (set by :meth:`plot`).
    hist_ax_ : matplotlib Axes or None
        The histogram's axes.
    figure_ : matplotlib Figure
        The figure drawn on.
    line_ : matplotlib Line2D
        The binned points.

    See Also
    --------
    sklearn.calibration.CalibrationDisplay : The hard-binned diagram of scikit-learn.
    skcal.reliability_curve : The binned points and their intervals.
    skcal.smooth_reliability_curve : The smooth curve and its band.
    """

    @validate_params(
        {
            **{
                k: ["array-like"]
                for k in (
                    "prob_true",
                    "prob_pred",
                    "prob_true_low",
                    "prob_true_high",
                    "bin_weights",
                    "y_prob",
                    "smooth_grid",
                    "smooth_curve",
                    "smooth_low",
                    "smooth_high",
                )
            },
            "smooth_ece": [Real],
            "smooth_bandwidth": [Real],
            "n_bins": [Integral, None],
            "strategy": [str],
            "scdl": [Real, None],
            "scdl_m_star": [Real, None],
            "scdl_at_floor": ["boolean", None],
            "confidence_level": [Real],
            "estimator_name": [str, None],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(
        self,
        *,
        prob_true,
        prob_pred,
        prob_true_low,
        prob_true_high,
        bin_weights,
        y_prob,
        smooth_grid,
        smooth_curve,
        smooth_low,
        smooth_high,
        smooth_ece,
        smooth_bandwidth,
        n_bins,
        strategy,
        scdl=None,
        scdl_m_star=None,
        scdl_at_floor=None,
        confidence_level=0.9,
        estimator_name=None,
    ):
        self.prob_true = prob_true
        self.prob_pred = prob_pred
        self.prob_true_low = prob_true_low
        self.prob_true_high = prob_true_high
        self.bin_weights = bin_weights
        self.y_prob = y_prob
        self.smooth_grid = smooth_grid
        self.smooth_curve = smooth_curve
        self.smooth_low = smooth_low
        self.smooth_high = smooth_high
        self.smooth_ece = smooth_ece
        self.smooth_bandwidth = smooth_bandwidth
        self.n_bins = n_bins
        self.strategy = strategy
        self.scdl = scdl
        self.scdl_m_star = scdl_m_star
        self.scdl_at_floor = scdl_at_floor
        self.confidence_level = confidence_level
        self.estimator_name = estimator_name

    @classmethod
    @fill(**_DOCS)
    @validate_params(
        {"y_true": ["array-like"], "y_prob": ["array-like"], "pos_label": POS_LABEL, **_COMPUTE},
        # plot(**kwargs) validates the drawing keywords passed through
        prefer_skip_nested_validation=False,
    )
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        n_bins=None,
        strategy="uniform",
        n_bootstrap=100,
        confidence_level=0.9,
        sample_weight=None,
        pos_label=None,
        random_state=None,
        name=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Compute the diagram from labels and probabilities, then plot it.

        The hard bins and their intervals are :func:`~skcal.reliability_curve`'s
        (``interval="bootstrap"``); the soft bins are :func:`~skcal.scdl_curve`'s, with the band
        of :func:`~skcal.smooth_reliability_curve` at ``bandwidth=0`` on the same grid; the
        smooth curve and its band are :func:`~skcal.smooth_reliability_curve`'s at the bandwidth
        of :func:`~skcal.smooth_ece`. With an integer ``random_state`` all of them resample the
        same rows.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Binary labels.
        y_prob : array-like of shape (n,) or (n, 2)
            Positive-class probabilities (or ``predict_proba`` output).
        {bins}
        pos_label : int, float, bool or str, default=None
            The positive class.
        {random_state}
        name : str, default=None
            Legend label.
        {drawing}

        Returns
        -------
        ReliabilityDisplay
            The computed (and drawn) display.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.display import ReliabilityDisplay
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=1000)
        >>> y = (rng.uniform(size=1000) < p).astype(int)
        >>> disp = ReliabilityDisplay.from_predictions(y, p, n_bins=5, n_bootstrap=20,
        ...                                            random_state=0, plot=False)
        >>> disp.prob_true.shape, disp.strategy
        ((5,), 'uniform')
        >>> bool(np.all(np.abs(disp.prob_true - disp.prob_pred) < 0.1))
        True
        """
        _check_drawing("ReliabilityDisplay.from_predictions", plot, ax, kwargs)
        y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
        n = p.shape[0]
        boot = {"n_bootstrap": n_bootstrap, "confidence": confidence_level, "random_state": random_state}
        scdl = scdl_star = at_floor = None
        if strategy == "soft":
            if n_bins is not None and n_bins & (n_bins - 1):
                raise ValueError(
                    f"n_bins must be a power of two (or None) for strategy='soft'; got {n_bins}."
                )
            if n_bins is not None and n_bins < 2:
                raise ValueError(f"n_bins must be at least 2 for strategy='soft'; got {n_bins}.")
            # SCDL, m* and the floor from the default search; the bins from the grid drawn
            curve = scdl_curve(y, p, sample_weight=w)
            scdl = float(curve.scdl)
            scdl_star = float(curve.selected_scdl_m)
            at_floor = bool(curve.at_floor)
            m = curve.selected_n_bins if n_bins is None else n_bins
            if m not in curve.n_bins:
                curve = scdl_curve(y, p, sample_weight=w, max_bins=m)
            pi, q, _ = curve.grid(m)
            keep = np.asarray(pi) > 0
            prob_pred = (np.arange(m + 1) / m)[keep]
            prob_true = np.asarray(q, dtype=float)[keep]
            weights = np.asarray(pi, dtype=float)[keep]
            # the soft bins unsmoothed on the same grid: their heights are q, their band the bins'
            band = smooth_reliability_curve(
                y, p, sample_weight=w, bandwidth=0.0, grid_points=m + 1, min_density=0.0, **boot
            )
            low, high = band.lower[keep], band.upper[keep]
            n_out = m
        else:
            if n_bins is None:
                n_bins = 10  # CalibrationDisplay's default
            if n_bins > n:
                raise ValueError(f"n_bins={n_bins} exceeds the number of samples ({n}); pass n_bins <= {n}.")
            rc = reliability_curve(
                y, p, n_bins=n_bins, strategy=strategy, sample_weight=w, interval="bootstrap", **boot
            )
            keep = rc.nonempty
            prob_true = rc.observed_frequency[keep]
            prob_pred = rc.mean_predicted[keep]
            weights = rc.weight[keep] / rc.weight.sum()
            low, high = rc.lower[keep], rc.upper[keep]
            n_out = n_bins
        smece, sigma = smooth_ece(y, p, sample_weight=w, return_bandwidth=True)
        smooth = smooth_reliability_curve(y, p, sample_weight=w, bandwidth=float(sigma), **boot)
        disp = cls(
            prob_true=prob_true,
            prob_pred=prob_pred,
            prob_true_low=low,
            prob_true_high=high,
            bin_weights=weights,
            y_prob=p,
            smooth_grid=smooth.grid,
            smooth_curve=smooth.curve,
            smooth_low=smooth.lower,
            smooth_high=smooth.upper,
            smooth_ece=float(smece),
            smooth_bandwidth=float(sigma),
            n_bins=int(n_out),
            strategy=strategy,
            scdl=scdl,
            scdl_m_star=scdl_star,
            scdl_at_floor=at_floor,
            confidence_level=confidence_level,
            estimator_name=name,
        )
        return disp.plot(ax=ax, **kwargs) if plot else disp

    @classmethod
    @fill(**_DOCS)
    @validate_params(
        {
            "estimator": [HasMethods(["predict_proba"])],
            "X": ["array-like", "sparse matrix"],
            "y": ["array-like"],
            **_COMPUTE,
        },
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        n_bins=None,
        strategy="uniform",
        n_bootstrap=100,
        confidence_level=0.9,
        sample_weight=None,
        random_state=None,
        name=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Compute the diagram from a fitted binary classifier, then plot it.

        Parameters
        ----------
        estimator : fitted classifier with ``predict_proba``
            Its ``classes_[1]`` is the positive class.
        X : array-like
            Inputs.
        y : array-like of shape (n,)
            Binary labels.
        {bins}
        {random_state}
        name : str, default=None
            Legend label; the estimator's class name when None.
        {drawing}

        Returns
        -------
        ReliabilityDisplay
            The computed (and drawn) display.
        """
        _check_drawing("ReliabilityDisplay.from_estimator", plot, ax, kwargs)
        proba = np.asarray(estimator.predict_proba(X))
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise ValueError(
                f"estimator.predict_proba returned shape {proba.shape}; expected a binary classifier."
            )
        classes = getattr(estimator, "classes_", None)
        pos_label = None if classes is None else classes[1]
        return cls.from_predictions(
            y,
            proba[:, 1],
            n_bins=n_bins,
            strategy=strategy,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            sample_weight=sample_weight,
            pos_label=pos_label.item() if hasattr(pos_label, "item") else pos_label,
            random_state=random_state,
            name=estimator_name(estimator, name),
            ax=ax,
            plot=plot,
            **kwargs,
        )

    @validate_params(
        {
            "ax": "no_validation",
            "hist_ax": "no_validation",
            "name": NAME,
            "ref_line": ["boolean"],
            "show_intervals": ["boolean"],
            "show_smooth": ["boolean"],
            "legend": ["boolean"],
            "show_values": ["boolean"],
            "xlabel": [str, None],
            "ylabel": [str, None],
        },
        prefer_skip_nested_validation=True,
    )
    def plot(
        self,
        ax=None,
        *,
        hist_ax=None,
        name=None,
        ref_line=True,
        show_intervals=True,
        show_smooth=True,
        legend=True,
        show_values=True,
        xlabel=None,
        ylabel=None,
        **kwargs,
    ):
        """Draw the diagram (and the prediction histogram).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes of the diagram. When None, a new figure holds the diagram and, under it, the
            histogram of the predictions.
        hist_ax : matplotlib Axes, default=None
            Axes of the histogram when ``ax`` is given (no histogram when None; with
            ``ax=None`` the display makes both axes and ``hist_ax`` is refused).
        name : str, default=None
            Legend label; ``estimator_name`` when None.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        show_intervals : bool, default=True
            Draw the bootstrap intervals of the bins and the band of the smooth curve.
        show_smooth : bool, default=True
            Draw the smooth calibration curve.
        legend : bool, default=True
            Draw a legend to the right of the diagram, outside the data.
        show_values : bool, default=True
            Write smECE (and SCDL) in the legend labels; ``False`` keeps them generic, for one
            legend shared by several panels.
        xlabel : str, default=None
            Label of the x axis (default ``"predicted probability"``).
        ylabel : str, default=None
            Label of the y axis (default ``"observed frequency of the positive class"``).
        **kwargs : dict
            Properties of the binned points' matplotlib ``Line2D`` (``color``, ``marker``,
            ``linewidth`` or ``lw``, ...), passed to their ``plot`` call; anything else raises a
            ``TypeError`` naming it.

        Returns
        -------
        ReliabilityDisplay
            The display, with the artists stored.
        """
        caller = "ReliabilityDisplay.plot"
        _check_line_kwargs(caller, kwargs)
        if ax is None:
            if hist_ax is not None:
                raise ValueError(_HIST_AX_NEEDS_AX)
            _, (ax, hist_ax) = subplots(
                "ReliabilityDisplay.plot", 2, 1, figsize=(6.4, 5.2), height_ratios=(3, 1), sharex=True
            )
        else:
            check_axes(ax, "ax", caller)
            if hist_ax is not None:
                check_axes(hist_ax, "hist_ax", caller)
        name = self.estimator_name if name is None else name
        level = int(round(100 * self.confidence_level))
        if ref_line:
            ax.plot([0, 1], [0, 1], ls=":", color=COLOR_REFERENCE, lw=1, label="perfectly calibrated")
        self.smooth_band_ = self.smooth_line_ = None
        if show_smooth:
            if show_intervals and np.isfinite(self.smooth_low).any():
                self.smooth_band_ = ax.fill_between(
                    self.smooth_grid,
                    self.smooth_low,
                    self.smooth_high,
                    color=COLOR_SMOOTH,
                    alpha=0.22,
                    lw=0,
                    label=f"{level}% band of the smooth curve",
                )
            (self.smooth_line_,) = ax.plot(
                self.smooth_grid,
                self.smooth_curve,
                color=COLOR_SMOOTH,
                lw=2.2,
                zorder=4,
                label=f"smooth curve (smECE {self.smooth_ece:.3g})"
                if show_values
                else "smooth calibration curve",
            )
        if self.strategy == "soft":
            label = f"soft bins, m={self.n_bins}"
            if self.scdl is not None and show_values:
                floor = ", on its floor" if getattr(self, "scdl_at_floor", None) else ""
                label += f" (SCDL {self.scdl:.3g}{floor})"
        else:
            label = f"{self.n_bins} {self.strategy} bins"
        if name:
            label = f"{name}: {label}"
        line_kw = {
            "marker": "o",
            "color": COLOR_DATA,
            "linewidth": 1,
            "markersize": 5,
            "label": label,
            "zorder": 5,
            "clip_on": False,
        }
        line_kw.update(_line_keywords(kwargs))  # "lw=2" overrides the default linewidth
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, **line_kw)
        self.errorbar_ = None
        ok = np.isfinite(self.prob_true_low)
        if show_intervals and ok.any():
            err = np.vstack(
                [
                    np.maximum(self.prob_true[ok] - self.prob_true_low[ok], 0),
                    np.maximum(self.prob_true_high[ok] - self.prob_true[ok], 0),
                ]
            )
            self.errorbar_ = ax.errorbar(
                self.prob_pred[ok],
                self.prob_true[ok],
                yerr=err,
                fmt="none",
                ecolor=line_kw["color"],
                elinewidth=1,
                capsize=2,
                zorder=5,
                label=f"{level}% bootstrap interval",
            )
            for artist in self.errorbar_.lines[2] + self.errorbar_.lines[1]:
                artist.set_clip_on(False)
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.margins(0)
        ax.set_ylabel("observed frequency of the positive class" if ylabel is None else ylabel)
        style_axes(ax)
        self.hist_ax_ = hist_ax
        xlabel = "predicted probability" if xlabel is None else xlabel
        if hist_ax is not None:
            if self.strategy == "uniform":
                edges = np.linspace(0.0, 1.0, self.n_bins + 1)
            else:  # equal-count bins would draw a flat histogram
                edges = np.linspace(0.0, 1.0, HISTOGRAM_BINS + 1)
            hist_ax.hist(self.y_prob, bins=edges, color=COLOR_DATA, alpha=0.55, lw=0)
            hist_ax.set(xlim=(0, 1), xlabel=xlabel, ylabel="count")
            hist_ax.yaxis.set_major_locator(integer_locator(3))
            style_axes(hist_ax)
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xlabel(xlabel)
        if legend:
            outside_legend(ax)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
