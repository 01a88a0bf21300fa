"""Smooth ECE (smECE) of Blasiok and Nakkiran, as computed by ``relplot.smECE``.

The smECE at bandwidth ``sigma`` kernel-smooths the residuals ``p - y`` against ``p`` with a
Gaussian kernel reflected at 0 and 1, and integrates the absolute smoothed residual against the
smoothed density; ``smECE`` is its value at the bandwidth ``sigma*`` where ``smECE(sigma) =
sigma`` (found by bisection). This module reproduces ``relplot.smECE`` (version 1.x, default
configuration: reflected Gaussian kernel, 200-point evaluation mesh) step by step, with two
changes that make it faster and leave the value unchanged to well within 1e-3:

* The data are deposited **once** on a fine grid of ``2^18`` cells (per cell: total weight, its
  first moment in ``p``, total residual and its first moment), held by
  :class:`skcal.stats.SmoothECEStatistics`, so chunks of rows merge (it holds the formulas
  below, and this function computes through it). relplot re-deposits all
  samples on a grid of ``E`` points for every bandwidth it tries; here each bandwidth re-deposits
  the occupied fine cells instead, placing each at its centre of mass. The linear (hat-function)
  deposit is exact for every fine cell that does not straddle a node of the ``E``-point grid
  (in particular for every cell holding one distinct prediction value), and off by at most
  ``(E - 1) / 2^18`` of the straddling cells' mass otherwise.
* The reflected convolution uses an FFT instead of a direct ``O(E^2)`` convolution.

relplot is *not* imported at run time (it is used only in the tests that check agreement).
"""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats import SmoothECEStatistics

__all__ = ["smooth_ece"]

# relplot's configuration and the fine grid, held by the statistics (they stay importable here)
FINE_CELLS = SmoothECEStatistics.FINE_CELLS
MESH_POINTS = SmoothECEStatistics.MESH_POINTS
DENSITY_EPS = SmoothECEStatistics.DENSITY_EPS


@fill(**BINARY_DOCS)
@validate_params({**BINARY_INPUTS, "return_bandwidth": ["boolean"]}, prefer_skip_nested_validation=True)
def smooth_ece(y_true, y_prob, *, sample_weight=None, pos_label=None, return_bandwidth=False):
    """Compute the smooth calibration error smECE (Blasiok and Nakkiran, 2023), as ``relplot.smECE``.

    The bandwidth ``sigma`` is found as relplot finds it: if ``smECE(1) >= 1`` is false the
    interval [0, 1] is bisected 10 times for the crossing ``smECE(sigma) = sigma``, and the value
    is reported at the lower end of the final interval that fails ``sigma < smECE(sigma)``.

    Parameters
    ----------
    {y_true}
    {y_prob}
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights (relplot has none). They are rescaled to sum to ``n``, so that unit
        weights reproduce the unweighted value exactly (relplot's density regulariser ``1e-4``
        is on the scale of counts).
    {pos_label}
    return_bandwidth : bool, default=False
        Also return the selected bandwidth ``sigma``.

    Returns
    -------
    float or tuple of float
        The smECE, or ``(smECE, sigma)`` with ``return_bandwidth=True``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> round(smooth_ece(y, p), 3)
    0.168
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return SmoothECEStatistics.compute_validated(y, p, w, return_bandwidth=return_bandwidth)
