"""The data of a reliability diagram: per-bin points, and the smooth calibration curve.

:func:`reliability_curve` returns, for every bin, the number of rows, the bin weight, the mean
prediction, the observed frequency of the positive class and optionally an interval for that
frequency (Wilson's score interval, or a percentile bootstrap). The bins are those of every
binned measure of skcal (see :mod:`skcal.binned_measures`): equal-width on [0, 1],
scikit-learn's percentile edges, or explicit edges, all right-closed
(``np.searchsorted(edges[1:-1], p)``: a prediction on an inner edge goes to the bin on its
left, ``p = 0`` to the first bin). Unlike ``calibration_curve``, empty bins are kept (with NaN
means) so that the arrays line up with the edges; use ``curve.nonempty`` to drop them.

:func:`smooth_reliability_curve` is the kernel-smoothed calibration curve behind smECE
(Blasiok and Nakkiran) on a uniform grid, with a pointwise bootstrap band; with
``bandwidth=0`` it is the soft-binned frequency of SCDL's grid instead.

Both bootstraps resample the rows with replacement (multinomial counts; a resampled row keeps
its sample weight) and are vectorised: a block of replicates is one ``numpy.bincount`` over
(replicate, bin) or (replicate, grid node) ids, so time and memory are linear in the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from skcal._compat import StrOptions, validate_params
from skcal._constraints import (
    MAX_BINS_LIMIT,
    N_BOOTSTRAP,
    POS_LABEL,
    RANDOM_STATE,
    SAMPLE_WEIGHT,
    StrictInterval,
)
from skcal._threads import one_blas_thread
from skcal._validation import check_binary_probabilities
from skcal.binned_ece import BINNED_CONSTRAINTS, binned_statistics
from skcal.binning import hat_deposit
from skcal.scdl import max_supported_bins
from skcal.smooth_ece import smooth_ece

__all__ = [
    "reliability_curve",
    "ReliabilityCurve",
    "smooth_reliability_curve",
    "SmoothReliabilityCurve",
]

#: Points of the grid the smooth curve is evaluated on by default (200 cells, relplot's mesh).
SMOOTH_GRID_POINTS = 201
#: Largest grid of a smoothed curve: the kernel is a dense ``(grid_points, grid_points)`` matrix.
MAX_SMOOTH_GRID_POINTS = 2049
#: The smooth curve is given only where the smoothed density of the predictions is at least
#: this fraction of its peak by default (elsewhere a kernel average of almost no data).
SMOOTH_MIN_DENSITY = 0.02
#: Replicate-rows processed per bootstrap block (a few float arrays of this many entries).
BOOTSTRAP_BLOCK = 1 << 20
#: A bootstrap band is given where at least this fraction of the replicates have a value.
BAND_MIN_FINITE = 0.5

_CONFIDENCE = [StrictInterval(Real, 0, 1, closed="neither")]


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per-bin data returned by :func:`reliability_curve` (one entry per bin).

    Parameters
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges; bin ``j`` is ``(edges[j], edges[j + 1]]``, the first bin closed.
    count : ndarray of int64, shape (n_bins,)
        Rows per bin.
    weight : ndarray of shape (n_bins,)
        Total sample weight per bin (equal to ``count`` without weights).
    mean_predicted : ndarray of shape (n_bins,)
        Weighted mean prediction per bin (NaN for empty bins).
    observed_frequency : ndarray of shape (n_bins,)
        Weighted frequency of the positive class per bin (NaN for empty bins).
    lower : ndarray of shape (n_bins,) or None
        Lower end of the interval of the observed frequency (``None`` unless requested; NaN
        for empty bins, and for bootstrap bins with a value in fewer than half the replicates).
    upper : ndarray of shape (n_bins,) or None
        Upper end of the interval (``None`` unless requested).
    confidence : float or None
        Coverage of the interval.
    interval : {"wilson", "bootstrap"} or None, default=None
        Which interval ``lower`` and ``upper`` hold.
    """

    edges: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    mean_predicted: np.ndarray
    observed_frequency: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    confidence: float | None = None
    interval: str | None = None

    @property
    def nonempty(self):
        """Boolean mask of the bins holding positive weight."""
        return self.weight > 0


def wilson_interval(frequency, n_eff, confidence=0.95):
    """Wilson score interval for a binomial frequency observed on ``n_eff`` trials.

    Parameters
    ----------
    frequency : array-like
        Observed frequencies in [0, 1].
    n_eff : array-like
        Numbers of trials (effective sample sizes with weights); non-positive entries give NaN.
    confidence : float, default=0.95
        Coverage, in (0, 1).

    Returns
    -------
    tuple of ndarray
        The lower and upper interval ends, ``(f + z^2/2n -+ z sqrt(f(1-f)/n + z^2/4n^2)) / (1 + z^2/n)``.

    Examples
    --------
    >>> from skcal.reliability_curve import wilson_interval
    >>> lo, hi = wilson_interval([0.5], [10])
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (0.2366, 0.7634)
    """
    from scipy.stats import norm

    f = np.asarray(frequency, dtype=np.float64)
    n = np.asarray(n_eff, dtype=np.float64)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 1.0 + z * z / n
        center = (f + z * z / (2.0 * n)) / denom
        half = z / denom * np.sqrt(f * (1.0 - f) / n + z * z / (4.0 * n * n))
        ok = n > 0
        return np.where(ok, center - half, np.nan), np.where(ok, center + half, np.nan)


@validate_params(
    {
        **BINNED_CONSTRAINTS,
        "interval": [StrOptions({"wilson", "bootstrap"}), None],
        "confidence": _CONFIDENCE,
        "n_bootstrap": N_BOOTSTRAP,
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def reliability_curve(
    y_true,
    y_prob,
    *,
    n_bins=10,
    strategy="uniform",
    edges=None,
    sample_weight=None,
    pos_label=None,
    interval=None,
    confidence=0.95,
    n_bootstrap=100,
    random_state=None,
):
    """Per-bin counts, mean prediction and observed frequency of binary predictions.

    The bins and their right-closed edge rule are those of every binned measure of skcal
    (``np.searchsorted(edges[1:-1], p)``; ``p = 0`` in the first bin): without weights and
    restricted to ``curve.nonempty``, ``observed_frequency`` and ``mean_predicted`` are
    ``sklearn.calibration.calibration_curve``'s ``prob_true`` and ``prob_pred``.

    ``interval="bootstrap"`` gives each bin's percentile bootstrap interval: ``n_bootstrap``
    times, the ``n`` rows are resampled with replacement (a resampled row keeps its sample
    weight), the bins stay those of the full sample (also for ``strategy="quantile"``), and
    each bin's observed frequency is recomputed; the interval holds the central
    ``confidence`` of those frequencies. A bin that is empty in more than half of the
    replicates gets NaN.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    n_bins : int, default=10
        Number of bins (scikit-learn's default).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1], or the percentile edges of ``calibration_curve``.
    edges : array-like of shape (n_bins + 1,), default=None
        Explicit non-decreasing bin edges; overrides ``n_bins`` and ``strategy``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights (they enter the means, the bin weights and, through the effective
        bin size ``W_b^2 / sum w^2``, the Wilson interval).
    pos_label : int, float, bool or str, default=None
        The positive class.
    interval : {"wilson", "bootstrap"} or None, default=None
        Add an interval for each bin's observed frequency: Wilson's score interval, or the
        percentile bootstrap described above.
    confidence : float, default=0.95
        Coverage of the interval.
    n_bootstrap : int, default=100
        Bootstrap replicates for ``interval="bootstrap"`` (0 gives NaN intervals; at most
        10**5). Ignored otherwise.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap.

    Returns
    -------
    ReliabilityCurve
        Arrays with one entry per bin (empty bins included, NaN means).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.reliability_curve import reliability_curve
    >>> c = reliability_curve([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    >>> c.count.tolist(), c.mean_predicted.round(3).tolist(), c.observed_frequency.tolist()
    ([2, 2], [0.15, 0.9], [0.5, 1.0])
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p
    >>> b = reliability_curve(y, p, n_bins=5, interval="bootstrap", confidence=0.9,
    ...                       random_state=0)
    >>> bool(np.all((b.lower < b.observed_frequency) & (b.observed_frequency < b.upper)))
    True
    """
    if interval != "bootstrap":
        stats = binned_statistics(
            y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
            sample_weight=sample_weight, pos_label=pos_label, measure="ece",
        )
        return curve_from_statistics(stats, interval=interval, confidence=confidence)
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    stats = binned_statistics(
        y, p, n_bins=n_bins, strategy=strategy, edges=edges, sample_weight=w, pos_label=None, measure="ece"
    )
    curve = curve_from_statistics(stats)
    # each row's bin, by the documented right-closed rule on the curve's edges
    k = curve.edges.shape[0] - 1
    n_pos, (ids, ws) = _positives_first(y, np.searchsorted(curve.edges[1:-1], p), w)
    rows = []
    for cw in _resampled_weights(random_state, n_bootstrap, ws, p.shape[0], k):
        # a block of replicates: one bincount over (replicate, bin) ids for the weights, one for
        # the positive weights (the first n_pos columns)
        b = cw.shape[0]
        offsets = (np.arange(b, dtype=np.intp) * k)[:, None]
        total = np.bincount((ids + offsets).ravel(), weights=cw.ravel(), minlength=b * k)
        positive = np.bincount(
            (ids[:n_pos] + offsets).ravel(), weights=cw[:, :n_pos].ravel(), minlength=b * k
        )
        rows.append(_ratio(positive.reshape(b, k), total.reshape(b, k)))
    lower, upper = _percentile_band(_stack(rows, k), confidence)
    return ReliabilityCurve(
        edges=curve.edges,
        count=curve.count,
        weight=curve.weight,
        mean_predicted=curve.mean_predicted,
        observed_frequency=curve.observed_frequency,
        lower=lower,
        upper=upper,
        confidence=float(confidence),
        interval="bootstrap",
    )


def curve_from_statistics(stats, *, interval=None, confidence=0.95):
    """Build a :class:`ReliabilityCurve` from a filled :class:`~skcal.stats.BinnedStatistics`.

    Parameters
    ----------
    stats : BinnedStatistics
        Accumulated per-bin sums (for example merged over chunks).
    interval : {"wilson"} or None, default=None
        Add a Wilson score interval (a bootstrap needs the rows: :func:`reliability_curve`).
    confidence : float, default=0.95
        Coverage of the interval.

    Returns
    -------
    ReliabilityCurve
        The per-bin data.

    Examples
    --------
    >>> from skcal.stats import BinnedStatistics
    >>> from skcal.reliability_curve import curve_from_statistics
    >>> s = BinnedStatistics(n_bins=2).update([0, 1], [0.2, 0.7])
    >>> curve_from_statistics(s).observed_frequency.tolist()
    [0.0, 1.0]
    """
    c = stats.curve()
    lower = upper = None
    if interval == "wilson":
        s = stats.stats_
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.where(s["sum_w2"] > 0, s["weight"] ** 2 / s["sum_w2"], 0.0)
        lower, upper = wilson_interval(c["observed_frequency"], n_eff, confidence)
    elif interval is not None:
        raise ValueError(f"interval must be 'wilson' or None; got {interval!r}.")
    return ReliabilityCurve(
        edges=c["edges"],
        count=c["count"],
        weight=c["weight"],
        mean_predicted=c["mean_predicted"],
        observed_frequency=c["observed_frequency"],
        lower=lower,
        upper=upper,
        confidence=None if interval is None else float(confidence),
        interval=interval,
    )


# ----------------------------------------------------------------------------------------------
# the smooth calibration curve
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SmoothReliabilityCurve:
    """The smooth calibration curve returned by :func:`smooth_reliability_curve`.

    Parameters
    ----------
    grid : ndarray of shape (grid_points,)
        The evaluation points ``np.linspace(0, 1, grid_points)``.
    curve : ndarray of shape (grid_points,)
        Smoothed frequency of the positive class at each grid point (NaN where the smoothed
        density of the predictions is below ``min_density`` of its peak, or zero).
    lower : ndarray of shape (grid_points,)
        Lower end of the pointwise bootstrap band (NaN without bootstrap, and where fewer than
        half of the replicates have a value).
    upper : ndarray of shape (grid_points,)
        Upper end of the band.
    density : ndarray of shape (grid_points,)
        Smoothed weight of the predictions at each grid point, relative to its peak (1 there).
    bandwidth : float
        The kernel bandwidth used (0: no smoothing).
    confidence : float or None
        Coverage of the band (``None`` without bootstrap).
    n_bootstrap : int
        Number of bootstrap replicates behind the band.
    """

    grid: np.ndarray
    curve: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    density: np.ndarray
    bandwidth: float
    confidence: float | None
    n_bootstrap: int


@validate_params(
    {
        "y_true": ["array-like"],
        "y_prob": ["array-like"],
        "sample_weight": SAMPLE_WEIGHT,
        "pos_label": POS_LABEL,
        "bandwidth": [StrictInterval(Real, 0, 1, closed="both"), None],
        "grid_points": [StrictInterval(Integral, 2, MAX_BINS_LIMIT + 1, closed="both")],
        "min_density": [StrictInterval(Real, 0, 1, closed="left")],
        "n_bootstrap": N_BOOTSTRAP,
        "confidence": _CONFIDENCE,
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def smooth_reliability_curve(
    y_true,
    y_prob,
    *,
    sample_weight=None,
    pos_label=None,
    bandwidth=None,
    grid_points=SMOOTH_GRID_POINTS,
    min_density=SMOOTH_MIN_DENSITY,
    n_bootstrap=100,
    confidence=0.9,
    random_state=None,
):
    """Kernel-smoothed calibration curve with its pointwise bootstrap band.

    The curve behind smECE (Blasiok and Nakkiran): the Nadaraya-Watson estimate of
    ``E[Y | p = t]`` with a Gaussian kernel reflected at 0 and 1, on the grid ``t_j = j / L``,
    ``L = grid_points - 1``. As in smECE, the predictions are first deposited on the grid by
    the hat functions ``h_k(p) = max(0, 1 - |L p - k|)`` (:func:`skcal.binning.hat_deposit`),
    then smoothed:

        curve(t_j) = sum_k K(t_j, t_k) D_y[k] / sum_k K(t_j, t_k) D[k],
        D[k] = sum_i w_i h_k(p_i),   D_y[k] = sum_i w_i y_i h_k(p_i),
        K(t, s) = phi(t - s) + phi(t + s) + phi(2 - t - s),   phi(d) = exp(-d^2 / (2 sigma^2)).

    The curve is given where the smoothed density ``sum_k K(t_j, t_k) D[k]`` is positive and
    at least ``min_density`` of its peak, NaN elsewhere. ``bandwidth=0`` skips the smoothing:
    the curve is then ``D_y[k] / D[k]``, the soft-binned frequency of SCDL's grid with ``L``
    bins (``scdl_curve(...).grid(L)[1]``).

    The band is a pointwise percentile bootstrap: ``n_bootstrap`` times the rows are resampled
    with replacement (a resampled row keeps its sample weight) and the curve is recomputed at
    the same bandwidth; at each grid point the band holds the central ``confidence`` of the
    replicates that have a value there (NaN where fewer than half have one).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    pos_label : int, float, bool or str, default=None
        The positive class.
    bandwidth : float in [0, 1] or None, default=None
        The kernel's ``sigma``. ``None`` uses the bandwidth smECE selects
        (``smooth_ece(..., return_bandwidth=True)``). A positive bandwidth below the grid
        spacing ``1 / L`` is raised to it (the curve is smoothed over at least one grid
        cell); 0 turns the smoothing off.
    grid_points : int, default=201
        Points of the grid, at least 2; at most 2049 with smoothing (the kernel is a dense
        matrix) and at most ``max(1024, 4 n) + 1`` without (the finest grid SCDL accepts).
    min_density : float in [0, 1), default=0.02
        The curve is given where the smoothed density is at least this fraction of its peak.
    n_bootstrap : int, default=100
        Bootstrap replicates of the band (0: no band; at most 10**5).
    confidence : float, default=0.9
        Coverage of the band, in (0, 1).
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap.

    Returns
    -------
    SmoothReliabilityCurve
        The grid, the curve, its band, the relative density and the bandwidth used.

    See Also
    --------
    reliability_curve : The binned points of a reliability diagram.
    smooth_ece : The smooth ECE, whose bandwidth is the default here.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import smooth_ece
    >>> from skcal.reliability_curve import smooth_reliability_curve
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5000)
    >>> y = rng.uniform(size=5000) < p**2
    >>> c = smooth_reliability_curve(y, p, n_bootstrap=50, random_state=0)
    >>> c.grid.shape, c.curve.shape
    ((201,), (201,))
    >>> c.bandwidth == smooth_ece(y, p, return_bandwidth=True)[1]  # smECE's bandwidth
    True
    >>> mid = (c.grid > 0.2) & (c.grid < 0.8)
    >>> bool(np.max(np.abs(c.curve[mid] - c.grid[mid] ** 2)) < 0.05)
    True
    >>> bool(np.all((c.lower[mid] <= c.curve[mid]) & (c.curve[mid] <= c.upper[mid])))
    True
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    n = p.shape[0]
    n_cells = grid_points - 1
    if bandwidth is None:
        bandwidth = float(smooth_ece(y, p, sample_weight=w, return_bandwidth=True)[1])
    bandwidth = float(bandwidth)
    if bandwidth > 0:
        if grid_points > MAX_SMOOTH_GRID_POINTS:
            raise ValueError(
                f"grid_points={grid_points} is too large for a smoothed curve: at most "
                f"{MAX_SMOOTH_GRID_POINTS} (the kernel is a dense grid_points x grid_points matrix); "
                "pass a smaller grid_points, or bandwidth=0 for the unsmoothed soft-binned curve."
            )
        bandwidth = max(bandwidth, 1.0 / n_cells)
        kernel = _reflected_gaussian_kernel(grid_points, bandwidth)
    else:
        bound = max_supported_bins(n)
        if n_cells > bound:
            raise ValueError(
                f"grid_points={grid_points} is larger than {n} rows support: at most max(1024, 4 n) + 1 "
                f"= {bound + 1} (a finer grid puts every row in a cell of its own)."
            )
        kernel = None
    ww = np.ones(n) if w is None else w
    rows = []
    with one_blas_thread(openmp=True):  # small dense products: one BLAS thread is fastest
        sw, sy = _smoothed(hat_deposit(p, n_cells, np.stack([ww, ww * y])), kernel)
        curve, density = (a[0] for a in _curve(sw, sy, min_density))
        n_pos, (ps, ws) = _positives_first(y, p, w)
        for cw in _resampled_weights(random_state, n_bootstrap, ws, n, grid_points):
            # a block of replicates: the weights, then the positive weights (first n_pos columns)
            deposits = np.concatenate(
                [hat_deposit(ps, n_cells, cw), hat_deposit(ps[:n_pos], n_cells, cw[:, :n_pos])]
            )
            bw, by = _smoothed(deposits, kernel, split=cw.shape[0])
            rows.append(_curve(bw, by, min_density)[0])
    lower, upper = _percentile_band(_stack(rows, grid_points), confidence)
    return SmoothReliabilityCurve(
        grid=np.linspace(0.0, 1.0, grid_points),
        curve=curve,
        lower=lower,
        upper=upper,
        density=density,
        bandwidth=bandwidth,
        confidence=float(confidence) if n_bootstrap else None,
        n_bootstrap=int(n_bootstrap),
    )


def _reflected_gaussian_kernel(grid_points, sigma):
    """``K[j, k] = phi(t_j - t_k) + phi(t_j + t_k) + phi(2 - t_j - t_k)`` on the uniform grid."""
    grid = np.linspace(0.0, 1.0, grid_points)
    d = grid[:, None] - grid[None, :]
    s = grid[:, None] + grid[None, :]
    return (
        np.exp(-(d**2) / (2 * sigma**2))
        + np.exp(-(s**2) / (2 * sigma**2))
        + np.exp(-((2 - s) ** 2) / (2 * sigma**2))
    )


def _smoothed(deposits, kernel, split=1):
    """Smooth the rows of ``deposits`` (weights first, then positive weights) by ``kernel``."""
    if kernel is not None:
        deposits = deposits @ kernel  # the kernel is symmetric
    return deposits[:split], deposits[split:]


def _curve(sw, sy, min_density):
    """Curves ``sy / sw`` (one per row) where ``sw`` is positive and dense enough, and the density."""
    peak = sw.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        density = np.where(peak > 0, sw / np.where(peak > 0, peak, 1.0), 0.0)
        ok = (sw > 0) & (density >= min_density)
        curve = np.where(ok, np.clip(sy / np.where(ok, sw, 1.0), 0.0, 1.0), np.nan)
    return curve, density


# ----------------------------------------------------------------------------------------------
# the bootstrap shared by both curves
# ----------------------------------------------------------------------------------------------
def _positives_first(y, *arrays):
    """``(n_pos, arrays)`` with the rows of each array reordered, the positive rows first.

    The bootstrap draws rows uniformly, so their order does not change its distribution; with
    the positives first, the positive weights of a replicate are the first ``n_pos`` columns of
    its row weights, and are summed without forming ``weights * y`` (``None`` stays ``None``).
    """
    positive = y == 1
    order = np.concatenate([np.flatnonzero(positive), np.flatnonzero(~positive)])
    return int(np.count_nonzero(positive)), [None if a is None else a[order] for a in arrays]


def _resampled_weights(random_state, n_bootstrap, w, n, width):
    """Blocks ``(b, n)`` of row weights of ``n_bootstrap`` multinomial resamples of the ``n`` rows.

    Entry ``[r, i]`` is the number of times replicate ``r`` draws row ``i`` (``n`` uniform draws
    with replacement) times the row's sample weight. The draws come from one generator seeded
    by ``random_state``; a block holds at most ``BOOTSTRAP_BLOCK / max(n, width)`` replicates.
    """
    if n_bootstrap == 0:
        return
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    rng = np.random.default_rng(seed)
    per_block = max(1, BOOTSTRAP_BLOCK // max(n, width))
    for start in range(0, n_bootstrap, per_block):
        b = min(per_block, n_bootstrap - start)
        draws = rng.integers(0, n, size=(b, n))
        draws += (np.arange(b, dtype=draws.dtype) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        if w is not None:
            counts *= w
        yield counts


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _stack(rows, width):
    return np.concatenate(rows) if rows else np.empty((0, width))


def _percentile_band(values, confidence):
    """Central ``confidence`` band of each column, NaN where too few replicates have a value."""
    k = values.shape[1]
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    if values.shape[0]:
        ok = np.isfinite(values).mean(axis=0) >= BAND_MIN_FINITE
        if ok.any():
            alpha = (1.0 - confidence) / 2.0
            low[ok] = np.nanquantile(values[:, ok], alpha, axis=0)
            high[ok] = np.nanquantile(values[:, ok], 1.0 - alpha, axis=0)
    return low, high
