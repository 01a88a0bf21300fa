"""The binned calibration measures users of the peer libraries expect (binary predictions).

All of them are functions of the per-bin sums of :class:`skcal.stats.BinnedStatistics`, and
share :func:`skcal.binned_ece.binned_ece`'s bins: ``n_bins`` equal-width bins on [0, 1]
(``strategy="uniform"``), scikit-learn's percentile edges (``"quantile"``), or explicit
``edges``. Edge rule (every binned measure of skcal): right-closed like scikit-learn's
``calibration_curve``, ``np.searchsorted(edges[1:-1], p)`` -- a prediction on an inner edge goes
to the bin on its left and ``p = 0`` to the first bin. With bin weight ``W_b`` (the number of
rows without ``sample_weight``), total weight ``W`` and gap ``g_b = mean_b(y) - mean_b(p)``
(weighted means) over the non-empty bins:

* :func:`max_calibration_error` (MCE; Naeini et al. 2015, Guo et al. 2017): ``max_b |g_b|``;
* :func:`rms_calibration_error` (the binned l2 error): ``sqrt(sum_b (W_b / W) g_b^2)``;
* :func:`average_calibration_error` (ACE as netcal defines it): ``mean_b |g_b|``, every non-empty
  bin counting equally;
* :func:`debiased_l2_calibration_error` (Kumar, Liang and Ma 2019):
  ``sqrt(max(0, sum_b (W_b / W) [g_b^2 - ybar_b (1 - ybar_b) / (n_b - 1)]))``, the plug-in
  squared error minus the estimated variance of each bin's label mean; bins with fewer than
  two rows contribute 0 (as in their ``unbiased_square_ce``). With weights, ``n_b`` becomes the
  effective size ``W_b^2 / sum_b w^2``, which keeps the correction unbiased.
"""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._docstrings import BINARY_DOCS, fill, sections
from skcal.binned_ece import BINNED_CONSTRAINTS, binned_statistics

__all__ = [
    "max_calibration_error",
    "rms_calibration_error",
    "average_calibration_error",
    "debiased_l2_calibration_error",
]

#: The parameters the measures share, described once (see :func:`skcal._docstrings.fill`).
_DOCS = {
    **BINARY_DOCS,
    "n_bins": """n_bins : int, default=15
    Number of bins.""",
    "edges": """edges : array-like of shape (n_bins + 1,), default=None
    Explicit non-decreasing bin edges (right-closed); overrides ``n_bins`` and ``strategy``.""",
    "sample_weight": """sample_weight : array-like of shape (n,), default=None
    Non-negative weights; they enter the bin means and bin weights.""",
}


def _parameters(strategy):
    """The Parameters section of the measures whose ``strategy`` defaults to ``strategy``."""
    text = f"""strategy : {{"uniform", "quantile"}}, default="{strategy}"
    Equal-width bins on [0, 1], or the edges ``np.percentile(y_prob, linspace(0, 100,
    n_bins + 1))`` of ``sklearn.calibration.calibration_curve``."""
    names = ("y_true", "y_prob", "n_bins", "strategy", "edges", "sample_weight", "pos_label")
    return sections(_DOCS, *names, strategy=text)


@fill(parameters=_parameters("uniform"))
@validate_params(BINNED_CONSTRAINTS, prefer_skip_nested_validation=True)
def max_calibration_error(
    y_true, y_prob, *, n_bins=15, strategy="uniform", edges=None, sample_weight=None, pos_label=None
):
    """Maximum calibration error (MCE): the largest gap ``max_b |mean_b(y) - mean_b(p)|``.

    Over the non-empty bins (right-closed edges, ``p = 0`` in the first bin; see
    :mod:`skcal.binned_measures`). Every bin counts, however few rows it holds, so the MCE is
    noisy when bins are sparse.

    {parameters}

    Returns
    -------
    float
        The MCE, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.binned_measures import max_calibration_error
    >>> max_calibration_error([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    0.35
    """
    return binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label, measure="mce",
    ).compute()


@fill(parameters=_parameters("uniform"))
@validate_params(BINNED_CONSTRAINTS, prefer_skip_nested_validation=True)
def rms_calibration_error(
    y_true, y_prob, *, n_bins=15, strategy="uniform", edges=None, sample_weight=None, pos_label=None
):
    """Root-mean-square binned calibration error ``sqrt(sum_b (W_b / W) g_b^2)``.

    ``g_b = mean_b(y) - mean_b(p)`` over the non-empty bins (right-closed edges, ``p = 0`` in the
    first bin); the plug-in binned l2 error, biased upwards by the label noise in each bin (see
    :func:`debiased_l2_calibration_error`).

    {parameters}

    Returns
    -------
    float
        The RMS calibration error, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.binned_measures import rms_calibration_error
    >>> round(rms_calibration_error([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2), 6)
    0.257391
    """
    return binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label, measure="rms",
    ).compute()


@fill(parameters=_parameters("uniform"))
@validate_params(BINNED_CONSTRAINTS, prefer_skip_nested_validation=True)
def average_calibration_error(
    y_true, y_prob, *, n_bins=15, strategy="uniform", edges=None, sample_weight=None, pos_label=None
):
    """Average calibration error (ACE): the unweighted mean gap over the non-empty bins.

    ``ACE = (1 / B') sum_b |mean_b(y) - mean_b(p)|`` over the ``B'`` non-empty bins
    (right-closed edges, ``p = 0`` in the first bin), as netcal's ``ACE`` defines it: unlike the
    ECE, a bin holding one row weighs as much as a bin holding thousands. (Nixon et al. 2019 use
    the name for the ECE over equal-mass bins: that is ``binned_ece(..., strategy="quantile")``.)

    {parameters}

    Returns
    -------
    float
        The ACE, in [0, 1]; lower is better.

    Examples
    --------
    >>> from skcal.binned_measures import average_calibration_error
    >>> average_calibration_error([0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9], n_bins=2)
    0.225
    """
    return binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label, measure="ace",
    ).compute()


@fill(parameters=_parameters("quantile"))
@validate_params({**BINNED_CONSTRAINTS, "squared": ["boolean"]}, prefer_skip_nested_validation=True)
def debiased_l2_calibration_error(
    y_true,
    y_prob,
    *,
    n_bins=15,
    strategy="quantile",
    edges=None,
    sample_weight=None,
    pos_label=None,
    squared=False,
):
    """Debiased l2 calibration error of Kumar, Liang and Ma (2019).

    ``sq = sum_b (W_b / W) [g_b^2 - ybar_b (1 - ybar_b) / (n_b - 1)]`` with
    ``g_b = mean_b(y) - mean_b(p)`` and ``ybar_b = mean_b(y)``: each bin's squared gap minus the
    unbiased estimate of the variance of its label mean, so that ``sq`` is an unbiased estimate
    of the binned squared error of the population (bins with fewer than two rows contribute 0,
    as in their ``unbiased_square_ce``). The error is ``sqrt(max(sq, 0))``. With
    ``sample_weight``, ``n_b`` is the effective bin size ``W_b^2 / sum_{i in b} w_i^2``. Bins:
    right-closed edges, ``p = 0`` in the first bin; the default is equal-mass bins as in their
    paper, with scikit-learn's percentile edges (Kumar et al.'s ``get_equal_bins`` places the
    edges at order statistics instead: pass ``edges=`` to reproduce theirs exactly).

    {parameters}
    squared : bool, default=False
        Return the debiased squared error ``sq`` itself (it can be negative) instead of
        ``sqrt(max(sq, 0))``.

    Returns
    -------
    float
        The debiased l2 calibration error (or its square); lower is better.

    Examples
    --------
    >>> from skcal.binned_measures import debiased_l2_calibration_error
    >>> y, p = [0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9]
    >>> round(debiased_l2_calibration_error(y, p, n_bins=2, strategy="uniform", squared=True), 6)
    -0.05875
    """
    return binned_statistics(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, edges=edges,
        sample_weight=sample_weight, pos_label=pos_label,
        measure="debiased_l2_squared" if squared else "debiased_l2",
    ).compute()
