"""Displays in scikit-learn's style: compute in ``from_estimator`` / ``from_predictions``, draw in ``plot``.

Every display stores what it computed as plain attributes (numpy arrays and floats), so the
numbers behind a figure can be read, tested or re-plotted. ``plot(ax=None, ...)`` draws on the
given axes (or new ones), stores the matplotlib artists in attributes ending in ``_`` and returns
the display. matplotlib is imported only inside ``plot``; it is an optional dependency
(``pip install "skcal[plot]"``).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from skcal._validation import check_binary_probabilities, check_scores

__all__ = ["ReliabilityDisplay", "SecondOrderDisplay"]


def _check_confidence(confidence_level):
    if not isinstance(confidence_level, numbers.Real) or not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must lie in (0, 1); got {confidence_level!r}.")


def _check_n_bootstrap(n_bootstrap):
    if not isinstance(n_bootstrap, numbers.Integral) or isinstance(n_bootstrap, bool) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a non-negative integer; got {n_bootstrap!r}.")


def _get_axes(ax):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    return ax


def _estimator_name(estimator, name):
    if name is not None:
        return name
    if hasattr(estimator, "steps"):
        return type(estimator.steps[-1][1]).__name__
    return type(estimator).__name__


class ReliabilityDisplay:
    """Reliability diagram built on SCDL's soft bins, with a bootstrap band and the smooth curve.

    The soft bins are those of the grid ``m*`` that :func:`~skcal.scdl_curve` selects (SPEC 4):
    bin ``i`` sits at the grid point ``i / m*``, the point a decision maker who rounds with
    :class:`~skcal.SoftBinRounder` acts on, and its height is
    ``q_i = E[w_i(p) y] / E[w_i(p)]``; its weight is ``pi_i = E[w_i(p)]`` (drawn as the marker
    area). A calibrated predictor has ``q_i`` close to ``i / m*``. The band is the bootstrap
    percentile interval of each ``q_i`` on the same grid (rows resampled with replacement,
    expressed as multinomial sample weights; with ``sample_weight`` rows are drawn with
    probability proportional to their weight). The smooth curve is the kernel-smoothed
    calibration curve behind smECE (Blasiok and Nakkiran), at the bandwidth smECE selects; it is
    drawn only where the smoothed density of predictions is at least ``SMOOTH_MIN_DENSITY``
    (2%) of its peak (NaN in ``smooth_curve`` elsewhere, where a kernel average of almost no data
    means nothing), and its legend entry says so.

    Do not instantiate it directly: use :meth:`from_predictions` or :meth:`from_estimator`.

    Attributes
    ----------
    n_bins : int
        The selected grid ``m*``.
    scdl : float
        SCDL of the predictions; it lies in ``[1 / m*, 2 / m*)``.
    bin_centers : ndarray of shape (m* + 1,)
        The grid points ``i / m*``.
    bin_weights : ndarray of shape (m* + 1,)
        ``pi_i``; they sum to 1.
    bin_frequencies : ndarray of shape (m* + 1,)
        ``q_i``; NaN for an empty bin.
    band_low, band_high : ndarray of shape (m* + 1,)
        Bootstrap percentile interval of ``q_i`` (NaN where a bin was empty in too many
        replicates, or without bootstrap).
    bootstrap_frequencies : ndarray of shape (n_bootstrap, m* + 1)
        ``q_i`` on every replicate.
    smooth_ece : float
        smECE of the predictions.
    smooth_bandwidth : float
        The kernel bandwidth smECE selects.
    smooth_grid, smooth_curve : ndarray
        The smooth calibration curve: the smoothed outcome frequency at each grid point; NaN
        where the smoothed density of predictions is below ``SMOOTH_MIN_DENSITY`` of its peak.
    confidence_level : float
    estimator_name : str or None
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    line_, band_, smooth_line_ : matplotlib artists
        Set by :meth:`plot` (``band_`` and ``smooth_line_`` are None when not drawn).
    """

    def __init__(
        self,
        *,
        bin_centers,
        bin_weights,
        bin_frequencies,
        band_low,
        band_high,
        bootstrap_frequencies,
        scdl,
        smooth_grid,
        smooth_curve,
        smooth_ece,
        smooth_bandwidth,
        confidence_level=0.9,
        estimator_name=None,
    ):
        self.bin_centers = bin_centers
        self.bin_weights = bin_weights
        self.bin_frequencies = bin_frequencies
        self.band_low = band_low
        self.band_high = band_high
        self.bootstrap_frequencies = bootstrap_frequencies
        self.n_bins = int(bin_centers.shape[0] - 1)
        self.scdl = scdl
        self.smooth_grid = smooth_grid
        self.smooth_curve = smooth_curve
        self.smooth_ece = smooth_ece
        self.smooth_bandwidth = smooth_bandwidth
        self.confidence_level = confidence_level
        self.estimator_name = estimator_name

    @classmethod
    def _compute(
        cls,
        y_true,
        y_prob,
        *,
        max_bins=None,
        n_bootstrap=100,
        confidence_level=0.9,
        sample_weight=None,
        pos_label=None,
        random_state=None,
        name=None,
    ):
        from skcal import scdl_curve

        _check_n_bootstrap(n_bootstrap)
        _check_confidence(confidence_level)
        y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
        curve = scdl_curve(y, p, max_bins=max_bins, sample_weight=w)
        m = curve.selected_n_bins
        pi, q, _ = curve.grid(m)
        rng = check_random_state(random_state)
        n = p.shape[0]
        base = np.full(n, 1.0 / n) if w is None else w / w.sum()
        boot = np.full((n_bootstrap, m + 1), np.nan)
        for b in range(n_bootstrap):
            counts = rng.multinomial(n, base).astype(float)
            boot[b] = scdl_curve(y, p, max_bins=m, sample_weight=counts).grid(m)[1]
        alpha = (1.0 - confidence_level) / 2.0
        low = np.full(m + 1, np.nan)
        high = np.full(m + 1, np.nan)
        if n_bootstrap:
            # A bin needs values on most replicates for a meaningful interval.
            ok = np.isfinite(boot).mean(axis=0) >= 0.5
            if ok.any():
                low[ok] = np.nanquantile(boot[:, ok], alpha, axis=0)
                high[ok] = np.nanquantile(boot[:, ok], 1.0 - alpha, axis=0)
        grid, smooth, smece, bandwidth = _smooth_calibration_curve(y, p, w)
        return cls(
            bin_centers=np.arange(m + 1) / m,
            bin_weights=np.asarray(pi, dtype=float),
            bin_frequencies=np.asarray(q, dtype=float),
            band_low=low,
            band_high=high,
            bootstrap_frequencies=boot,
            scdl=float(curve.scdl),
            smooth_grid=grid,
            smooth_curve=smooth,
            smooth_ece=smece,
            smooth_bandwidth=bandwidth,
            confidence_level=confidence_level,
            estimator_name=name,
        )

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        max_bins=None,
        n_bootstrap=100,
        confidence_level=0.9,
        sample_weight=None,
        pos_label=None,
        random_state=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Compute the diagram from labels and probabilities, then plot it.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Binary labels.
        y_prob : array-like of shape (n,) or (n, 2)
            Positive-class probabilities (or ``predict_proba`` output).
        max_bins : int, default=None
            Caps SCDL's dyadic search (see :func:`~skcal.scdl_curve`).
        n_bootstrap : int, default=100
            Bootstrap replicates for the band (0: no band).
        confidence_level : float, default=0.9
            Coverage of the band.
        sample_weight : array-like of shape (n,), default=None
        pos_label : int, float, bool or str, default=None
        random_state : int, RandomState instance or None, default=None
            Seeds the bootstrap.
        name : str, default=None
            Legend label.
        ax : matplotlib Axes, default=None
            Axes to draw on; new ones when None.
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        display : ReliabilityDisplay

        Examples
        --------
        >>> import numpy as np
        >>> from skcal import ReliabilityDisplay
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=1000)
        >>> y = (rng.uniform(size=1000) < p).astype(int)
        >>> disp = ReliabilityDisplay.from_predictions(y, p, n_bootstrap=20, random_state=0)
        >>> disp.n_bins, disp.bin_centers.shape, disp.bin_frequencies.shape
        (8, (9,), (9,))
        >>> 1 / disp.n_bins <= disp.scdl < 2 / disp.n_bins
        True
        """
        disp = cls._compute(
            y_true,
            y_prob,
            max_bins=max_bins,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            sample_weight=sample_weight,
            pos_label=pos_label,
            random_state=random_state,
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        max_bins=None,
        n_bootstrap=100,
        confidence_level=0.9,
        sample_weight=None,
        random_state=None,
        name=None,
        ax=None,
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
        max_bins, n_bootstrap, confidence_level, sample_weight, random_state, ax, **kwargs
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend label; the estimator's class name when None.

        Returns
        -------
        display : ReliabilityDisplay
        """
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(f"estimator {type(estimator).__name__} has no predict_proba.")
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
            max_bins=max_bins,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            sample_weight=sample_weight,
            pos_label=pos_label.item() if hasattr(pos_label, "item") else pos_label,
            random_state=random_state,
            name=_estimator_name(estimator, name),
            ax=ax,
            **kwargs,
        )

    def plot(
        self,
        ax=None,
        *,
        name=None,
        show_band=True,
        show_smooth=True,
        ref_line=True,
        xlabel=None,
        ylabel=None,
        **kwargs,
    ):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; new ones when None.
        name : str, default=None
            Legend label; ``estimator_name`` when None.
        show_band : bool, default=True
            Draw the bootstrap band.
        show_smooth : bool, default=True
            Draw the smooth calibration curve (only where the smoothed density of predictions
            is at least ``SMOOTH_MIN_DENSITY`` of its peak; the legend says so).
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        xlabel, ylabel : str, default=None
            Axis labels; by default ``"rounded prediction i/m* (soft bin)"`` and
            ``"observed frequency of the positive class"``. Pass e.g. ``"confidence (soft bin)"``
            and ``"accuracy of the top label"`` for a top-label (confidence) diagram of a
            multiclass model, where the "label" is whether the most probable class is correct.
        **kwargs
            Passed to the soft-bin markers' ``plot`` call.

        Returns
        -------
        display : ReliabilityDisplay
        """
        ax = _get_axes(ax)
        name = self.estimator_name if name is None else name
        if ref_line:
            ax.plot([0, 1], [0, 1], ls=":", color="0.5", lw=1, label="perfectly calibrated")
        self.band_ = None
        if show_band and np.isfinite(self.band_low).any():
            ok = np.isfinite(self.band_low)
            level = int(round(100 * self.confidence_level))
            self.band_ = ax.fill_between(
                self.bin_centers[ok],
                self.band_low[ok],
                self.band_high[ok],
                alpha=0.25,
                color="C0",
                lw=0,
                label=f"{level}% bootstrap band",
            )
        self.smooth_line_ = None
        if show_smooth:
            (self.smooth_line_,) = ax.plot(
                self.smooth_grid,
                self.smooth_curve,
                color="C1",
                lw=1.5,
                label=(
                    f"smooth curve (smECE {self.smooth_ece:.3g}),\nshown where data density "
                    f"\u2265 {100 * SMOOTH_MIN_DENSITY:g}% of peak"
                ),
            )
        ok = np.isfinite(self.bin_frequencies)
        label = f"soft bins, m*={self.n_bins} (SCDL {self.scdl:.3g})"
        if name:
            label = f"{name}: {label}"
        line_kw = {"marker": "o", "color": "C0", "lw": 1, "label": label}
        line_kw.update(kwargs)
        (self.line_,) = ax.plot(self.bin_centers[ok], self.bin_frequencies[ok], **line_kw)
        # Marker area proportional to the bin weight pi_i.
        sizes = 400.0 * self.bin_weights[ok] / max(self.bin_weights.max(), 1e-12)
        ax.scatter(self.bin_centers[ok], self.bin_frequencies[ok], s=sizes, color="C0", alpha=0.35, lw=0)
        ax.set(
            xlim=(-0.02, 1.02),
            ylim=(-0.02, 1.02),
            xlabel="rounded prediction i/m* (soft bin)" if xlabel is None else xlabel,
            ylabel="observed frequency of the positive class" if ylabel is None else ylabel,
        )
        ax.legend(loc="upper left", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


#: Points of the grid the smooth calibration curve is evaluated on.
SMOOTH_GRID_POINTS = 201
#: The curve is drawn only where the smoothed density of predictions is at least this fraction
#: of its maximum (elsewhere a kernel average of almost no data means nothing).
SMOOTH_MIN_DENSITY = 0.02


def _reflect_smooth(values, grid, sigma):
    """Gaussian smoothing of grid values with reflection at 0 and 1 (an (E, E) kernel, E small)."""
    d = grid[:, None] - grid[None, :]
    s = grid[:, None] + grid[None, :]
    ker = (
        np.exp(-(d**2) / (2 * sigma**2))
        + np.exp(-(s**2) / (2 * sigma**2))
        + np.exp(-((2 - s) ** 2) / (2 * sigma**2))
    )
    return ker @ values


def _smooth_calibration_curve(y, p, w):
    """The smooth calibration curve at smECE's bandwidth: a reflected-Gaussian kernel average of y.

    The data are deposited linearly on a ``SMOOTH_GRID_POINTS`` grid (O(n)), the deposited
    weights and label sums are smoothed with the Gaussian kernel of bandwidth ``sigma*`` (the one
    :func:`~skcal.smooth_ece` selects) reflected at 0 and 1, and the curve is their ratio: the
    Nadaraya-Watson estimate of ``E[y | p = t]``. It is NaN where the smoothed density is below
    ``SMOOTH_MIN_DENSITY`` of its maximum.

    Returns ``(grid, curve, smece, sigma)``.
    """
    from skcal import smooth_ece

    smece, sigma = smooth_ece(y, p, sample_weight=w, return_bandwidth=True)
    E = SMOOTH_GRID_POINTS
    grid = np.linspace(0.0, 1.0, E)
    ww = np.ones_like(p) if w is None else w
    pos = p * (E - 1)
    lo = np.clip(np.floor(pos).astype(np.intp), 0, E - 2)
    frac = pos - lo
    dens = np.bincount(lo, ww * (1 - frac), E) + np.bincount(lo + 1, ww * frac, E)
    ysum = np.bincount(lo, ww * y * (1 - frac), E) + np.bincount(lo + 1, ww * y * frac, E)
    sigma_eff = max(float(sigma), 1.0 / (E - 1))  # the grid cannot resolve a narrower kernel
    sd = _reflect_smooth(dens, grid, sigma_eff)
    sy = _reflect_smooth(ysum, grid, sigma_eff)
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.where(sd >= SMOOTH_MIN_DENSITY * sd.max(), sy / sd, np.nan)
    return grid, curve, float(smece), float(sigma)


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


class SecondOrderDisplay:
    """Second-order recalibration at a glance: recalibrated against raw ``sigma2``, ``eta1`` and ``eta2``.

    The first panel shows every sample's recalibrated ``sigma2'`` against its raw ``sigma2``
    (recalibration moves points off the diagonal). When a known truth is given it shows instead

    * with ``true_sigma2`` (the true conditional variance of ``f*`` at each score): raw and
      recalibrated ``sigma2`` against it, with their Pearson correlations (SPEC 6.2);
    * with ``true_prob`` (``f*`` at each input): the realised squared error of the mean,
      ``(f* - m)^2``, averaged in equal-mass bins of the predicted ``sigma2``, for the raw and
      the recalibrated predictor. ``E[(f* - eta1)^2 | S] = eta2 - eta1^2``, so a second-order
      calibrated predictor lies on the diagonal.

    The other two panels (only from a fitted calibrator) show the fitted ``eta1_hat`` (estimate
    of ``E[Y | S]``) and ``eta2_hat - eta1_hat^2`` (the recalibrated variance) over the
    region of the scores (``m`` in [0, 1], ``sigma2`` up to 1.25 times the largest raw
    ``sigma2``), with the feasible boundary ``sigma2 = m (1 - m)`` dashed and the raw scores as
    dots.

    Attributes
    ----------
    raw_scores, recalibrated_scores : ndarray of shape (n, 2)
    true_sigma2, true_prob : ndarray of shape (n,) or None
    pearson_raw, pearson_recalibrated : float or None
        Correlations of the raw and recalibrated ``sigma2`` with ``true_sigma2``.
    bin_sigma2_raw, bin_error_raw, bin_sigma2_recalibrated, bin_error_recalibrated : ndarray or None
        With ``true_prob``: per equal-mass bin of predicted ``sigma2``, its mean and the mean of
        ``(f* - m)^2``.
    grid_m, grid_sigma2 : ndarray or None
        The evaluation grid of the surfaces (``grid_size`` points each).
    eta1_grid, eta2_grid : ndarray of shape (grid_size, grid_size) or None
        Projected ``eta1_hat`` and ``eta2_hat`` on the grid (rows follow ``grid_sigma2``).
    estimator_name : str or None
    axes_, figure_ : matplotlib Axes array and Figure
        Set by :meth:`plot`.
    """

    def __init__(
        self,
        *,
        raw_scores,
        recalibrated_scores,
        true_sigma2=None,
        true_prob=None,
        grid_m=None,
        grid_sigma2=None,
        eta1_grid=None,
        eta2_grid=None,
        n_bins=10,
        estimator_name=None,
    ):
        self.raw_scores = raw_scores
        self.recalibrated_scores = recalibrated_scores
        self.true_sigma2 = true_sigma2
        self.true_prob = true_prob
        self.grid_m = grid_m
        self.grid_sigma2 = grid_sigma2
        self.eta1_grid = eta1_grid
        self.eta2_grid = eta2_grid
        self.estimator_name = estimator_name
        self.pearson_raw = self.pearson_recalibrated = None
        if true_sigma2 is not None:
            self.pearson_raw = _pearson(raw_scores[:, 1], true_sigma2)
            self.pearson_recalibrated = _pearson(recalibrated_scores[:, 1], true_sigma2)
        self.bin_sigma2_raw = self.bin_error_raw = None
        self.bin_sigma2_recalibrated = self.bin_error_recalibrated = None
        if true_prob is not None:
            self.bin_sigma2_raw, self.bin_error_raw = _binned_error(
                raw_scores[:, 1], (true_prob - raw_scores[:, 0]) ** 2, n_bins
            )
            self.bin_sigma2_recalibrated, self.bin_error_recalibrated = _binned_error(
                recalibrated_scores[:, 1], (true_prob - recalibrated_scores[:, 0]) ** 2, n_bins
            )

    @classmethod
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
    ):
        """Compare raw and recalibrated scores (no surfaces: no calibrator is given), then plot.

        Parameters
        ----------
        raw_scores, recalibrated_scores : array-like of shape (n, 2)
            ``(m, sigma2)`` before and after recalibration, for the same samples.
        true_sigma2 : array-like of shape (n,), default=None
            Known conditional variance of ``f*`` at each score, in [0, 1/4].
        true_prob : array-like of shape (n,), default=None
            Known ``f*`` at each sample, in [0, 1].
        n_bins : int, default=10
            Equal-mass bins for the ``true_prob`` panel.
        name : str, default=None
        ax : matplotlib Axes or sequence of Axes, default=None

        Returns
        -------
        display : SecondOrderDisplay

        Examples
        --------
        >>> import numpy as np
        >>> from skcal import SecondOrderDisplay
        >>> raw = np.array([[0.2, 0.01], [0.5, 0.05], [0.7, 0.02], [0.9, 0.0]])
        >>> new = np.array([[0.25, 0.03], [0.5, 0.06], [0.6, 0.01], [0.85, 0.02]])
        >>> disp = SecondOrderDisplay.from_predictions(raw, new, true_sigma2=[0.02, 0.09, 0.03, 0.01])
        >>> round(disp.pearson_raw, 3), round(disp.pearson_recalibrated, 3)
        (0.987, 0.859)
        """
        disp = cls._compute(
            raw_scores,
            recalibrated_scores,
            true_sigma2=true_sigma2,
            true_prob=true_prob,
            n_bins=n_bins,
            name=name,
        )
        return disp.plot(ax=ax)

    @classmethod
    def _compute(
        cls,
        raw_scores,
        recalibrated_scores,
        *,
        true_sigma2=None,
        true_prob=None,
        n_bins=10,
        name=None,
        calibrator=None,
        grid_size=41,
    ):
        raw = check_scores(raw_scores, name="raw_scores")
        new = check_scores(recalibrated_scores, name="recalibrated_scores")
        for arr, nm in ((raw, "raw_scores"), (new, "recalibrated_scores")):
            if arr.shape[1] != 2:
                raise ValueError(f"{nm} must have 2 columns (m, sigma2); got shape {arr.shape}.")
        if raw.shape[0] != new.shape[0]:
            raise ValueError(
                f"raw_scores has {raw.shape[0]} rows but recalibrated_scores has {new.shape[0]}; expected "
                "the same samples."
            )
        if not isinstance(n_bins, numbers.Integral) or n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
        n = raw.shape[0]
        ts = _check_true(true_sigma2, "true_sigma2", n, 0.0, 0.25)
        tp = _check_true(true_prob, "true_prob", n, 0.0, 1.0)
        kw = {}
        if calibrator is not None:
            # The surfaces cover the region of the data: sigma2 up to 1.25 times the largest raw
            # sigma2 (at most 1/4); beyond it the polynomials extrapolate.
            gm = np.linspace(0.0, 1.0, grid_size)
            gs = np.linspace(0.0, min(0.25, max(1.25 * float(raw[:, 1].max()), 1e-3)), grid_size)
            MM, SS = np.meshgrid(gm, gs)
            grid_scores = np.column_stack([MM.ravel(), SS.ravel()])
            if getattr(calibrator, "n_features_in_", 2) == 1:
                grid_scores = grid_scores[:, :1]
            E = np.asarray(calibrator.predict_moments(grid_scores))
            kw = {
                "grid_m": gm,
                "grid_sigma2": gs,
                "eta1_grid": E[:, 0].reshape(MM.shape),
                "eta2_grid": E[:, 1].reshape(MM.shape),
            }
        return cls(
            raw_scores=raw,
            recalibrated_scores=new,
            true_sigma2=ts,
            true_prob=tp,
            n_bins=n_bins,
            estimator_name=name,
            **kw,
        )

    @classmethod
    def from_estimator(
        cls, estimator, X, *, true_sigma2=None, true_prob=None, n_bins=10, grid_size=41, name=None, ax=None
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
        true_sigma2, true_prob, n_bins, name, ax
            As in :meth:`from_predictions`.
        grid_size : int, default=41
            Points per axis of the surfaces.

        Returns
        -------
        display : SecondOrderDisplay
        """
        prefix, calibrator = _find_calibrator(estimator)
        raw = X if prefix is None else prefix.transform(X)
        raw = check_scores(raw, name="raw scores")
        if raw.shape[1] != 2:
            raise ValueError(f"the raw scores must have 2 columns (m, sigma2); got shape {raw.shape}.")
        new = np.asarray(calibrator.transform(raw))
        disp = cls._compute(
            raw,
            new,
            true_sigma2=true_sigma2,
            true_prob=true_prob,
            n_bins=n_bins,
            name=_estimator_name(estimator, name),
            calibrator=calibrator,
            grid_size=grid_size,
        )
        return disp.plot(ax=ax)

    def plot(self, ax=None, *, name=None):
        """Draw the panels: the ``sigma2`` comparison, then (if computed) the two surfaces.

        Parameters
        ----------
        ax : sequence of matplotlib Axes, default=None
            One Axes per panel (1, or 3 with surfaces); a new figure when None. A single Axes is
            accepted when there is one panel.
        name : str, default=None
            Title prefix; ``estimator_name`` when None.

        Returns
        -------
        display : SecondOrderDisplay
        """
        n_panels = 1 if self.eta1_grid is None else 3
        if ax is None:
            import matplotlib.pyplot as plt

            fig, axes = plt.subplots(
                1, n_panels, figsize=(4.6 * n_panels, 4.0), layout="constrained", squeeze=False
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
            a.plot([0, top], [0, top], ls=":", color="0.5", lw=1)
            a.plot(self.bin_sigma2_raw, self.bin_error_raw, "o-", color="0.5", lw=1, label="raw")
            a.plot(
                self.bin_sigma2_recalibrated,
                self.bin_error_recalibrated,
                "o-",
                color="C3",
                lw=1,
                label="recalibrated",
            )
            a.set(xlabel="predicted sigma2 (bin mean)", ylabel="mean (f* - m)^2 (known truth)")
            a.set_title(prefix + "variance vs. realised error", fontsize="medium")
        elif self.true_sigma2 is not None:
            top = 1.05 * max(self.true_sigma2.max(), raw_s2.max(), new_s2.max(), 1e-4)
            a.plot([0, top], [0, top], ls=":", color="0.5", lw=1)
            a.scatter(
                self.true_sigma2, raw_s2, s=6, color="0.5", alpha=0.5, label=f"raw (r={self.pearson_raw:.3f})"
            )
            a.scatter(
                self.true_sigma2,
                new_s2,
                s=6,
                color="C3",
                alpha=0.6,
                label=f"recalibrated (r={self.pearson_recalibrated:.3f})",
            )
            a.set(xlabel="true conditional variance", ylabel="sigma2")
            a.set_title(prefix + "sigma2 vs. the truth", fontsize="medium")
        else:
            top = 1.05 * max(raw_s2.max(), new_s2.max(), 1e-4)
            a.plot([0, top], [0, top], ls=":", color="0.5", lw=1)
            a.scatter(raw_s2, new_s2, s=6, color="C3", alpha=0.6, label="samples")
            a.set(xlabel="raw sigma2", ylabel="recalibrated sigma2")
            a.set_title(prefix + "recalibrated vs. raw sigma2", fontsize="medium")
        a.legend(loc="upper left", fontsize="small")
        self.surfaces_ = []
        if n_panels == 3:
            MM, SS = np.meshgrid(self.grid_m, self.grid_sigma2)
            feasible_m = np.linspace(0, 1, 201)
            for axk, Z, title, levels in (
                (axes[1], self.eta1_grid, "eta1_hat = E[Y | S]", np.linspace(0, 1, 11)),
                (
                    axes[2],
                    self.eta2_grid - self.eta1_grid**2,
                    "eta2_hat - eta1_hat^2 (recalibrated sigma2)",
                    None,
                ),
            ):
                cs = axk.contourf(MM, SS, Z, levels=levels if levels is not None else 10, cmap="viridis")
                fig.colorbar(cs, ax=axk)
                axk.plot(feasible_m, feasible_m * (1 - feasible_m), ls="--", color="w", lw=1)
                axk.scatter(self.raw_scores[:, 0], self.raw_scores[:, 1], s=2, color="k", alpha=0.3)
                axk.set(xlabel="m", ylabel="sigma2", xlim=(0, 1), ylim=(0, self.grid_sigma2[-1]))
                axk.set_title(title, fontsize="medium")
                self.surfaces_.append(cs)
        self.axes_ = axes
        self.figure_ = fig
        return self


def _pearson(a, b):
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])
