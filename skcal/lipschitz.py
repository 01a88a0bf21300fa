"""Lipschitz smooth calibration error smCE.

A comparison measure of *Testable and Actionable Calibration for Full Swap Regret*.

``smCE = sup E[w(p) (y - p)]`` over 1-Lipschitz ``w: [0, 1] -> [-1, 1]`` (Blasiok, Gopalan, Hu and
Nakkiran 2023). On a sample it is the linear program over the sorted distinct predictions
``p_1 < ... < p_n`` with merged residuals ``r_i`` (the weighted sum of ``y - p`` over the samples
predicting ``p_i``, divided by the total weight)::

    maximise   sum_i r_i w_i
    subject to |w_i| <= 1,   |w_{i+1} - w_i| <= d_i = p_{i+1} - p_i.

This module solves it exactly without an LP solver, in ``O(n log n)`` vectorised numpy, through
its dual. With the running sums ``R_k = r_1 + ... + r_k`` (``R_0 = 0``), linear programming duality
gives the flat-norm form

    smCE = min over nu with nu_0 = 0, nu_n = R_n of  sum_{i=1}^{n} |nu_i - nu_{i-1}|
                                                    + sum_{i=1}^{n-1} d_i |R_i - nu_i|.

The total variation term is at least ``|R_n|``, with equality exactly when ``nu`` is monotone from
0 to ``R_n``. A non-monotone ``nu`` is never better: by the coarea formula the objective is the
integral over levels ``lambda`` of a binary problem in which each extra pair of level crossings
costs 2 while saving at most ``sum_i d_i <= p_n - p_1 <= 1``. Hence

    smCE = |R_n| + min over monotone nu (from 0 to R_n) of sum_i d_i |R_i - nu_i|,

a weighted L1 isotonic regression of the running sums on the band between 0 and ``R_n``. Points
outside the band cost their distance to it; inside it, the isotonic regression is computed by
recursive partitioning on the sorted distinct values (Stout 2013): at each split value the optimal
two-level solution is one prefix minimum of a cumulative sum, and any of its minimisers separates
an optimal solution into values at most and at least the split. All segments of one recursion
level are processed together with segmented numpy reductions, so there are ``O(log n)`` levels of
``O(n)`` array work and no Python loop over samples. The tests check the result against
``scipy.optimize.linprog(method="highs")``.
"""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities

# the solver lives beside the statistics (which solve many problems at once, for the bootstrap);
# the measure is the statistics of its rows, computed
from skcal.stats import SmoothCEStatistics

__all__ = ["smooth_calibration_error"]


@fill(**BINARY_DOCS)
@validate_params(BINARY_INPUTS, prefer_skip_nested_validation=True)
def smooth_calibration_error(y_true, y_prob, *, sample_weight=None, pos_label=None):
    """Lipschitz smooth calibration error ``sup_w E[w(p) (y - p)]``, computed exactly.

    The supremum is over 1-Lipschitz functions ``w: [0, 1] -> [-1, 1]`` (Blasiok, Gopalan, Hu
    and Nakkiran 2023, the "smCE"; not relplot's kernel-smoothed smECE, though the two are within
    constant factors of each other). On a sample it is a linear program over the sorted distinct
    predictions (ties merged), solved here exactly through its dual, a weighted L1 isotonic
    regression of the running residual sums, in ``O(n log n)`` time and linear memory (see the
    module docstring for the derivation).

    Parameters
    ----------
    {y_true}
    {y_prob}
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: ``E`` is the weighted mean.
    {pos_label}

    Returns
    -------
    float
        The smooth calibration error, in ``[0, 1]``; 0 exactly when every merged residual is 0.

    See Also
    --------
    skcal.cutoff.cutoff_calibration_error : The supremum over interval indicators instead.

    Notes
    -----
    For a constant predictor the value is ``|mean(y - p)|``; in general it lies between
    ``|mean(y - p)|`` and ``mean |E[y - p | p]|`` (the ECE of the empirical distribution), and it is
    at most the cutoff calibration error plus ``|mean(y - p)|``.

    Examples
    --------
    >>> from skcal.lipschitz import smooth_calibration_error
    >>> smooth_calibration_error([0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5])
    0.25
    >>> round(smooth_calibration_error([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]), 6)
    0.26
    """
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return SmoothCEStatistics.compute_validated(y, p, w)
