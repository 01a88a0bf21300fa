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

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS
from skcal._validation import check_binary_probabilities

__all__ = ["smooth_calibration_error"]


def _isotonic_l1_cost(x, w):
    """Minimum of ``sum_i w_i |x_i - v_i|`` over non-decreasing ``v`` (``w > 0``), vectorised.

    Recursive partitioning (Stout 2013, "Isotonic regression via partitioning"): a segment of
    indices whose solution values lie in the distinct values ``vals[lo..hi]`` is split at
    ``mid = (lo + hi) // 2`` by the best two-level fit with levels ``vals[mid] < vals[mid + 1]``,
    which puts a prefix of the segment at the lower level; the prefix keeps ``vals[lo..mid]`` and
    the rest ``vals[mid + 1..hi]``. A segment with one admissible value is finished.
    """
    vals, rank = np.unique(x, return_inverse=True)
    rank = rank.ravel()
    if vals.size == 1:
        return float(w @ np.abs(x - vals[0]))
    cost = 0.0
    # Active elements (in index order) and the segments they form.
    er, ew, ex = rank, w, x
    seg_start = np.array([0], dtype=np.intp)
    seg_lo = np.array([0], dtype=np.intp)
    seg_hi = np.array([vals.size - 1], dtype=np.intp)
    while er.size:
        n_act = er.size
        seg_len = np.diff(np.append(seg_start, n_act))
        seg_id = np.repeat(np.arange(seg_start.size), seg_len)
        mid = (seg_lo + seg_hi) // 2
        upper = er > mid[seg_id]
        # Cost of putting the first k elements of a segment at the lower level, up to a constant:
        # the prefix sums of w * (+1 if the element prefers the upper level else -1).
        z = np.where(upper, ew, -ew)
        C = np.cumsum(z)
        rel = C - (C[seg_start] - z[seg_start])[seg_id]
        seg_min = np.minimum.reduceat(rel, seg_start)
        # First position attaining the segment minimum (k >= 1), or k = 0 (empty prefix) when
        # no prefix has a negative sum.
        pos = np.arange(n_act)
        at_min = np.where(rel == seg_min[seg_id], pos, n_act)
        first = np.minimum.reduceat(at_min, seg_start)
        k = np.where(seg_min < 0, first - seg_start + 1, 0)
        # Children, interleaved in index order: (prefix, lower values), (rest, upper values).
        child_start = np.column_stack([seg_start, seg_start + k]).ravel()
        child_len = np.column_stack([k, seg_len - k]).ravel()
        child_lo = np.column_stack([seg_lo, mid + 1]).ravel()
        child_hi = np.column_stack([mid, seg_hi]).ravel()
        done = child_lo == child_hi
        # Finished children: every element takes the single admissible value.
        child_of = np.repeat(np.arange(child_start.size), child_len)
        elem_done = done[child_of]
        if elem_done.any():
            v = vals[child_lo[child_of[elem_done]]]
            cost += float(ew[elem_done] @ np.abs(ex[elem_done] - v))
        keep_child = (~done) & (child_len > 0)
        keep_elem = ~elem_done
        er, ew, ex = er[keep_elem], ew[keep_elem], ex[keep_elem]
        kept_len = child_len[keep_child]
        seg_start = np.concatenate([[0], np.cumsum(kept_len)[:-1]]).astype(np.intp)
        seg_lo, seg_hi = child_lo[keep_child], child_hi[keep_child]
    return cost


def _smce_from_sorted(r, p):
    """smCE of merged residuals ``r`` (already divided by the total weight) at sorted distinct ``p``."""
    R = np.cumsum(r)
    Rn = float(R[-1])
    if r.shape[0] == 1:
        return abs(Rn)
    d = np.diff(p)
    lo, hi = min(0.0, Rn), max(0.0, Rn)
    inner = R[:-1]
    x = np.clip(inner, lo, hi)
    value = abs(Rn) + float(d @ np.abs(inner - x))
    if hi > lo:
        value += _isotonic_l1_cost(x if Rn > 0 else -x, d)
    return value


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
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Predicted probabilities of the positive class, or ``predict_proba`` output (column 1 is
        used).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights: ``E`` is the weighted mean.
    pos_label : int, float, bool or str, default=None
        The positive class; ``{0, 1}``, ``{-1, 1}`` and boolean labels need none.

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
    resid = y - p if w is None else w * (y - p)
    total = float(p.shape[0]) if w is None else float(w.sum())
    values, inverse = np.unique(p, return_inverse=True)
    r = np.bincount(inverse.ravel(), weights=resid, minlength=values.size) / total
    return _smce_from_sorted(r, values)
