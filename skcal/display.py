"""Displays in scikit-learn's style: ``from_predictions`` computes, ``__init__`` stores, ``plot`` draws.

As in :class:`sklearn.calibration.CalibrationDisplay`, ``from_predictions`` and
``from_estimator`` compute every number (through skcal's public functions, such as
:func:`~skcal.scdl_curve` and :func:`~skcal.smooth_ece`) and hand them to ``__init__``, which
only stores them; ``plot(ax=None, ...)`` draws, stores the matplotlib artists in attributes
ending in ``_`` and returns the display. matplotlib is imported only when drawing; it is an
optional dependency (``pip install "skcal[plot]"``).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from skcal._compat import HasMethods, StrOptions, validate_params
from skcal._constraints import (
    MAX_BINS_LIMIT,
    N_BOOTSTRAP,
    POS_LABEL,
    PROBABILITY_OPEN,
    RANDOM_STATE,
    SAMPLE_WEIGHT,
    Integral,
    StrictInterval,
)
from skcal._plotting import (
    COLOR_DATA,
    COLOR_REFERENCE,
    COLOR_SMOOTH,
    SMALL_SIZE,
    check_matplotlib,
    outside_legend,
    style_axes,
    subplots,
)
from skcal._validation import check_binary_probabilities, check_scores
from skcal.reliability_curve import reliability_curve
from skcal.scdl import scdl_curve
from skcal.smooth_ece import smooth_ece

__all__ = ["ReliabilityDisplay", "SecondOrderDisplay"]

#: Points of the grid the smooth calibration curve is evaluated on.
SMOOTH_GRID_POINTS = 201
#: The curve is drawn only where the smoothed density of predictions is at least this fraction
#: of its maximum (elsewhere a kernel average of almost no data means nothing).
SMOOTH_MIN_DENSITY = 0.02
#: Bootstrap replicates processed at once (memory ``BOOTSTRAP_CHUNK * n`` floats).
BOOTSTRAP_CHUNK = 25
#: Bins of the prediction histogram under a soft-bin diagram.
HISTOGRAM_BINS = 20

_N_BOOTSTRAP = N_BOOTSTRAP
_NAME = [str, None]


def _estimator_name(estimator, name):
    if name is not None:
        return name
    if hasattr(estimator, "steps"):
        return type(estimator.steps[-1][1]).__name__
    return type(estimator).__name__


# ----------------------------------------------------------------------------------------------
# computations behind the reliability diagram (vectorised over rows and bootstrap replicates)
# ----------------------------------------------------------------------------------------------
def _deposit_matrix(p):
    """Sparse ``(n, E)`` linear (hat-function) deposit of each prediction on the smoothing grid."""
    E = SMOOTH_GRID_POINTS
    pos = p * (E - 1)
    lo = np.clip(np.floor(pos).astype(np.intp), 0, E - 2)
    frac = pos - lo
    n = p.shape[0]
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([lo, lo + 1]).ravel()
    vals = np.column_stack([1.0 - frac, frac]).ravel()
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n, E))


def _smoothing_kernel(sigma):
    """Gaussian kernel matrix on the grid, reflected at 0 and 1."""
    grid = np.linspace(0.0, 1.0, SMOOTH_GRID_POINTS)
    d = grid[:, None] - grid[None, :]
    s = grid[:, None] + grid[None, :]
    return (
        np.exp(-(d**2) / (2 * sigma**2))
        + np.exp(-(s**2) / (2 * sigma**2))
        + np.exp(-((2 - s) ** 2) / (2 * sigma**2))
    )


def _curve_from_deposits(dens, ysum, K):
    """Nadaraya-Watson curves (one per row of ``dens``), NaN where the density is too low."""
    sd = dens @ K
    sy = ysum @ K
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = sd >= SMOOTH_MIN_DENSITY * sd.max(axis=-1, keepdims=True)
        return np.where(ok, sy / sd, np.nan)


def _bin_frequencies(bin_w, bin_wy):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bin_w > 0, bin_wy / np.where(bin_w > 0, bin_w, 1.0), np.nan)


def _bootstrap_curves(y, p, w, onehot, D, K, n_bootstrap, random_state):
    """Bin frequencies and smooth curves on ``n_bootstrap`` row resamples (multinomial weights)."""
    rng = check_random_state(random_state)
    n = p.shape[0]
    base = np.full(n, 1.0 / n) if w is None else w / w.sum()
    ww = np.ones(n) if w is None else w
    freqs, curves = [], []
    for start in range(0, n_bootstrap, BOOTSTRAP_CHUNK):
        b = min(BOOTSTRAP_CHUNK, n_bootstrap - start)
        counts = rng.multinomial(n, base, size=b).astype(float) * ww  # (b, n) resampling weights
        cw, cwy = counts, counts * y
        if onehot is not None:
            freqs.append(_bin_frequencies((onehot.T @ cw.T).T, (onehot.T @ cwy.T).T))
        curves.append(_curve_from_deposits((D.T @ cw.T).T, (D.T @ cwy.T).T, K))
    width = 0 if onehot is None else onehot.shape[1]
    f = np.concatenate(freqs) if freqs else np.empty((0, width))
    c = np.concatenate(curves) if curves else np.empty((0, SMOOTH_GRID_POINTS))
    return f, c


def _pointwise_interval(values, confidence_level):
    """Percentile band of each column; NaN where fewer than half the replicates have a value."""
    k = values.shape[1]
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    if values.shape[0]:
        ok = np.isfinite(values).mean(axis=0) >= 0.5
        if ok.any():
            alpha = (1.0 - confidence_level) / 2.0
            low[ok] = np.nanquantile(values[:, ok], alpha, axis=0)
            high[ok] = np.nanquantile(values[:, ok], 1.0 - alpha, axis=0)
    return low, high


class ReliabilityDisplay:
    """Reliability diagram with bootstrap intervals, the smooth calibration curve and its band.

    The binned points are those of :func:`~skcal.reliability_curve`, which equal
    :func:`sklearn.calibration.calibration_curve`'s (``strategy`` ``"uniform"`` or
    ``"quantile"``, same right-closed bins, same values) or, with ``strategy="soft"``, the
    soft bins of SCDL (:func:`~skcal.scdl_curve`): bin ``i`` sits at the grid point ``i / m``,
    the point a decision maker who rounds with :class:`~skcal.SoftBinRounder` acts on, with
    height ``q_i = E[w_i(p) y] / E[w_i(p)]``. Each point carries a paired-bootstrap percentile
    interval (rows resampled with replacement; with ``sample_weight`` rows are drawn with
    probability proportional to their weight). The smooth curve is the kernel-smoothed
    calibration curve behind smECE (Blasiok and Nakkiran), at the bandwidth smECE selects, with
    its pointwise bootstrap band; it is drawn only where the smoothed density of predictions is
    at least ``SMOOTH_MIN_DENSITY`` (2%) of its peak. A histogram of the predictions is drawn
    under the diagram.

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
    """

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
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_prob": ["array-like"],
            "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both"), None],
            "strategy": [StrOptions({"uniform", "quantile", "soft"})],
            "n_bootstrap": _N_BOOTSTRAP,
            "confidence_level": PROBABILITY_OPEN,
            "sample_weight": SAMPLE_WEIGHT,
            "pos_label": POS_LABEL,
            "random_state": RANDOM_STATE,
            "name": _NAME,
            "ax": "no_validation",
            "plot": ["boolean"],
        },
        prefer_skip_nested_validation=True,
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

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Binary labels.
        y_prob : array-like of shape (n,) or (n, 2)
            Positive-class probabilities (or ``predict_proba`` output).
        n_bins : int or None, default=None
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
            Non-negative sample weights.
        pos_label : int, float, bool or str, default=None
            The positive class.
        random_state : int, RandomState instance or None, default=None
            Seeds the bootstrap.
        name : str, default=None
            Legend label.
        ax : matplotlib Axes, default=None
            Axes of the diagram; a new figure with a histogram under the diagram when None.
        plot : bool, default=True
            Draw the display (``False`` only computes it, without matplotlib).
        **kwargs : dict
            Passed to :meth:`plot`.

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
        y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
        n = p.shape[0]
        ww = np.ones(n) if w is None else w
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
            centers = np.arange(m + 1) / m
            # the soft-bin weights w_i(p) of every row: linear interpolation between grid points
            pos = p * m
            lo = np.clip(np.floor(pos).astype(np.intp), 0, m - 1)
            frac = pos - lo
            rows = np.repeat(np.arange(n), 2)
            onehot = sparse.csr_matrix(
                (np.column_stack([1 - frac, frac]).ravel(), (rows, np.column_stack([lo, lo + 1]).ravel())),
                shape=(n, m + 1),
            )
            keep = np.asarray(pi) > 0
            prob_pred = centers[keep]
            prob_true = np.asarray(q, dtype=float)[keep]
            weights = np.asarray(pi, dtype=float)[keep]
            n_out = m
        else:
            if n_bins is None:
                n_bins = 10  # CalibrationDisplay's default
            if n_bins > n:
                raise ValueError(f"n_bins={n_bins} exceeds the number of samples ({n}); pass n_bins <= {n}.")
            # the per-bin numbers come from reliability_curve; each row's bin (for the bootstrap)
            # follows its documented right-closed rule on the same edges
            rc = reliability_curve(y, p, n_bins=n_bins, strategy=strategy, sample_weight=w)
            ids = np.searchsorted(rc.edges[1:-1], p)
            onehot = sparse.csr_matrix((np.ones(n), (np.arange(n), ids)), shape=(n, n_bins))
            keep = rc.nonempty
            prob_true = rc.observed_frequency[keep]
            prob_pred = rc.mean_predicted[keep]
            weights = rc.weight[keep] / rc.weight.sum()
            n_out = n_bins
        smece, sigma = smooth_ece(y, p, sample_weight=w, return_bandwidth=True)
        sigma_eff = max(float(sigma), 1.0 / (SMOOTH_GRID_POINTS - 1))  # the grid's resolution
        D = _deposit_matrix(p)
        K = _smoothing_kernel(sigma_eff)
        with threadpool_limits(limits=1):  # small dense products: one BLAS thread is fastest
            smooth = _curve_from_deposits(D.T @ ww, D.T @ (ww * y), K)
            boot_f, boot_c = _bootstrap_curves(y, p, w, onehot, D, K, n_bootstrap, random_state)
        flo, fhi = _pointwise_interval(boot_f[:, keep], confidence_level)
        slo, shi = _pointwise_interval(boot_c, confidence_level)
        disp = cls(
            prob_true=prob_true,
            prob_pred=prob_pred,
            prob_true_low=flo,
            prob_true_high=fhi,
            bin_weights=weights,
            y_prob=p,
            smooth_grid=np.linspace(0.0, 1.0, SMOOTH_GRID_POINTS),
            smooth_curve=smooth,
            smooth_low=slo,
            smooth_high=shi,
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
    @validate_params(
        {
            "estimator": [HasMethods(["predict_proba"])],
            "X": ["array-like", "sparse matrix"],
            "y": ["array-like"],
            "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both"), None],
            "strategy": [StrOptions({"uniform", "quantile", "soft"})],
            "n_bootstrap": _N_BOOTSTRAP,
            "confidence_level": PROBABILITY_OPEN,
            "sample_weight": SAMPLE_WEIGHT,
            "random_state": RANDOM_STATE,
            "name": _NAME,
            "ax": "no_validation",
            "plot": ["boolean"],
        },
        prefer_skip_nested_validation=True,
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
        n_bins : int or None, default=None
            As in :meth:`from_predictions`.
        strategy : {"uniform", "quantile", "soft"}, default="uniform"
            As in :meth:`from_predictions`.
        n_bootstrap : int, default=100
            As in :meth:`from_predictions`.
        confidence_level : float, default=0.9
            As in :meth:`from_predictions`.
        sample_weight : array-like of shape (n,), default=None
            As in :meth:`from_predictions`.
        random_state : int, RandomState instance or None, default=None
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend label; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            As in :meth:`from_predictions`.
        plot : bool, default=True
            As in :meth:`from_predictions`.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        ReliabilityDisplay
            The computed (and drawn) display.
        """
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
            name=_estimator_name(estimator, name),
            ax=ax,
            plot=plot,
            **kwargs,
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
            Axes of the histogram when ``ax`` is given (no histogram when None).
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
            Passed to the binned points' ``plot`` call.

        Returns
        -------
        ReliabilityDisplay
            The display, with the artists stored.
        """
        check_matplotlib("ReliabilityDisplay.plot")
        if ax is None:
            _, (ax, hist_ax) = subplots(
                "ReliabilityDisplay.plot", 2, 1, figsize=(6.4, 5.2), height_ratios=(3, 1), sharex=True
            )
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
        line_kw = {"marker": "o", "color": COLOR_DATA, "lw": 1, "ms": 5, "label": label, "zorder": 5}
        line_kw.update(kwargs)
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, clip_on=False, **line_kw)
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
            hist_ax.yaxis.set_major_locator(_max_n_locator(3))
            style_axes(hist_ax)
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xlabel(xlabel)
        if legend:
            outside_legend(ax)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


def _max_n_locator(n):
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=n, integer=True)


# ----------------------------------------------------------------------------------------------
# second order
# ----------------------------------------------------------------------------------------------
class _ScoresOf:
    """The score-producing part of a SecondOrderCalibratedClassifier, as a ``transform``."""

    def __init__(self, estimator):
        self.estimator = estimator

    def transform(self, X):
        return self.estimator._raw_scores(X)


def _find_calibrator(estimator):
    """Split a fitted estimator into (score-producing prefix or None, second-order calibrator)."""
    if hasattr(estimator, "predict_moments"):
        return None, estimator
    if hasattr(estimator, "predict_second_order") and hasattr(estimator, "calibrator_"):
        # SecondOrderCalibratedClassifier: raw features -> perturbed ensemble scores -> calibrator
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
            "true_sigma2": ["array-like", None],
            "true_prob": ["array-like", None],
            "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both")],
            "name": _NAME,
            "ax": "no_validation",
            "plot": ["boolean"],
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
    ):
        """Compare raw and recalibrated scores (no maps: no calibrator is given), then plot.

        Parameters
        ----------
        raw_scores : array-like of shape (n, 2)
            ``(m, sigma2)`` before recalibration.
        recalibrated_scores : array-like of shape (n, 2)
            ``(m, sigma2)`` after recalibration, for the same samples.
        true_sigma2 : array-like of shape (n,), default=None
            Known conditional variance of ``f*`` at each score, in [0, 1/4].
        true_prob : array-like of shape (n,), default=None
            Known ``f*`` at each sample, in [0, 1].
        n_bins : int, default=10
            Equal-mass bins for the ``true_prob`` panel.
        name : str, default=None
            Title prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw the display (``False`` only computes it).

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
        kw = _second_order_numbers(raw_scores, recalibrated_scores, true_sigma2, true_prob, n_bins)
        disp = cls(estimator_name=name, **kw)
        return disp.plot(ax=ax) if plot else disp

    @classmethod
    @validate_params(
        {
            "estimator": "no_validation",
            "X": ["array-like"],
            "true_sigma2": ["array-like", None],
            "true_prob": ["array-like", None],
            "n_bins": [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both")],
            "grid_size": [StrictInterval(Integral, 2, 1000, closed="both")],
            "name": _NAME,
            "ax": "no_validation",
            "plot": ["boolean"],
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
    ):
        """Compute from a fitted second-order calibrator (or a pipeline containing one), then plot.

        Parameters
        ----------
        estimator : fitted SecondOrderPlattCalibrator or Pipeline
            A calibrator (then ``X`` are its input scores), or a pipeline with a calibrator step
            (then ``X`` are the pipeline's inputs: the raw scores are the output of the steps
            before the calibrator, and the recalibrated scores the calibrator's output on them).
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
            Draw the display (``False`` only computes it).

        Returns
        -------
        SecondOrderDisplay
            The computed (and drawn) display.
        """
        prefix, calibrator = _find_calibrator(estimator)
        raw = X if prefix is None else prefix.transform(X)
        raw = check_scores(raw, name="raw scores")
        if raw.shape[1] != 2:
            raise ValueError(f"the raw scores must have 2 columns (m, sigma2); got shape {raw.shape}.")
        new = np.asarray(calibrator.transform(raw))
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
            estimator_name=_estimator_name(estimator, name),
            **kw,
        )
        return disp.plot(ax=ax) if plot else disp

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
        check_matplotlib("SecondOrderDisplay.plot")
        n_panels = 1 if self.eta1_grid is None else 3
        if ax is None:
            fig, axes = subplots(
                "SecondOrderDisplay.plot", 1, n_panels, figsize=(5.0 * n_panels, 4.2), squeeze=False
            )
            axes = axes.ravel()
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
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
