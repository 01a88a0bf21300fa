"""SCDL: the soft-binned calibration decision loss.

Defined in *Testable and Actionable Calibration for Full Swap Regret*.

For a grid ``G_m = {0, 1/m, ..., 1}`` the soft-bin weights are the triangular kernel
``w_i(p) = max(0, 1 - |m p - i|)``; with ``pi_i = E[w_i(p)]`` and ``q_i = E[w_i(p) y] / pi_i``::

    SCFDL_{m,i} = sum_{j <= i} pi_j (q_j - (i + 1)/m)_+  +  sum_{j > i} pi_j (i/m - q_j)_+
    SCDL_m      = max_i SCFDL_{m,i}
    SCDL        = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)

Implementation: one pass deposits the rows' soft-bin masses on the nodes of the finest grid
``M = m_max`` (:class:`skcal.stats.ScdlStatistics`, which holds every formula of this
docstring); every coarser dyadic grid is folded from it exactly in
``O(m)``. ``SCFDL_{m,i}`` for all ``i`` costs ``O(m)`` too: bin ``j`` contributes
to row ``i`` through ``(a_j - pi_j (i+1)/m)_+`` (``j <= i``), which is positive exactly for
``i < m q_j - 1``, and through ``(pi_j i/m - a_j)_+`` (``j > i``), positive exactly for
``i > m q_j``; each is a linear function of ``i`` on an interval of rows, so all rows follow
from two difference arrays and a cumulative sum. Total cost ``O(T + M)``, never a T-by-m matrix.

**Grid rules.** ``m_max`` is chosen by ``max_bins``:

* ``"auto"`` (default): ``m_max`` = the smallest power of two ``>= 4 sqrt(T)``. The plug-in
  ``SCDL_m`` of a calibrated predictor is noise that grows with ``m`` and crosses the floor
  ``1/m`` near ``m = 2 sqrt(T)``; once ``SCDL_m >= 1/m`` no finer grid can win, so with this cap
  the search reaches the crossing and SCDL is set by the data, not by the cap. In a study on the
  distribution of experiment 6.5 (SCDL on synthetic data: ``X ~ U[0, 1]``,
  ``Y ~ Bernoulli(alpha (1 - 2X)^2 + (1 - alpha) X)``; ``docs/guide/scdl.md``) the ``4 sqrt(T)``
  cap gave the same value as the largest grid the data support in every run, while ``2 sqrt(T)``
  still bound at ``T = 1000``.
* ``"theory"``: the largest dyadic ``m`` with ``m ln(m) <= sqrt(T)``, the cap of the rate theorem
  (8 below 1,968 samples, so SCDL cannot go below 1/8 there).
* an integer: the largest power of two not above it.

``T`` is the sample size, or Kish's effective size ``(sum w)^2 / sum w^2`` with weights. An
explicit ``max_bins`` may not exceed :func:`max_supported_bins` of the number of rows.
"""

from __future__ import annotations

from skcal._compat import validate_params
from skcal._constraints import BINARY_INPUTS, SCDL_MAX_BINS
from skcal._docstrings import BINARY_DOCS, fill
from skcal._validation import check_binary_probabilities
from skcal.stats import SCDLCurve, ScdlStatistics, default_max_bins, max_supported_bins, theory_max_bins

__all__ = [
    "SCDLCurve",
    "scdl_curve",
    "scdl_score",
    "default_max_bins",
    "theory_max_bins",
    "max_supported_bins",
]

# The formulas (the grid rules, the soft-bin masses, SCFDL, the dyadic search and its result
# SCDLCurve) live with the statistics, skcal.stats.ScdlStatistics; this module validates the
# inputs and computes through it (the grid rules and SCDLCurve stay importable here).
_PARAMS = {**BINARY_INPUTS, "max_bins": SCDL_MAX_BINS}


@fill(**BINARY_DOCS)
@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def scdl_curve(y_true, y_prob, *, max_bins="auto", sample_weight=None, pos_label=None):
    """Compute the SCDL search in full: ``SCDL_m`` per dyadic grid, ``m*`` and every bin.

    Parameters
    ----------
    {y_true}
    {y_prob}
    max_bins : {"auto", "theory"}, int or None, default="auto"
        Largest grid searched. ``"auto"`` (or ``None``): the smallest power of two
        ``>= 4 sqrt(T)``, so that the search reaches the grid where the noise of ``SCDL_m``
        crosses the floor ``1/m``. ``"theory"``: the rate theorem's ``m ln(m) <= sqrt(T)``
        (natural logarithm). ``T`` is the sample size or, with ``sample_weight``, Kish's
        effective sample size. An integer caps the search at the largest power of two not above
        it; it must lie in ``[2, max(1024, 4 n)]`` for ``n`` rows.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights; expectations become weighted means.
    {pos_label}

    Returns
    -------
    SCDLCurve
        Holds ``pi``, ``q`` and ``SCFDL_{m,i}`` for every searched grid, the selected grid
        ``selected_n_bins`` (``m*``) and the unfloored ``selected_scdl_m`` (``SCDL_{m*}``).

    See Also
    --------
    scdl_score : the number alone.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> curve = scdl_curve(y, p)
    >>> curve.n_bins.tolist()
    [2, 4, 8, 16, 32, 64, 128, 256]
    >>> curve.selected_n_bins, round(curve.selected_scdl_m, 4), round(curve.scdl, 4)
    (128, 0.0087, 0.0087)
    >>> theory = scdl_curve(y, p, max_bins="theory")   # m ln m <= sqrt(2000): m_max = 16
    >>> theory.n_bins.tolist(), theory.scdl, theory.at_floor
    ([2, 4, 8, 16], 0.0625, True)
    """
    # read only by the deposit: the caller's arrays need no copy
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    return ScdlStatistics.curve_validated(y, p, w, max_bins=max_bins)


@fill(**BINARY_DOCS)
@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def scdl_score(y_true, y_prob, *, max_bins="auto", sample_weight=None, pos_label=None):
    """Compute the soft-binned calibration decision loss (SCDL) of binary probabilities.

    ``SCDL = min over m in {2, 4, ..., m_max} of max(SCDL_m, 1/m)``, with ``SCDL_m`` the largest
    soft-binned threshold decision loss on the grid ``{0, 1/m, ..., 1}`` (*Full Swap Regret*). It
    lies in (0, 1), lower is better, and bounds the swap regret of every bounded decision task: a
    decision maker who rounds ``p`` to the selected grid and best-responds has swap regret at most
    ``4 SCDL`` (utilities in [0, 1]); see :class:`skcal.rounding.SoftBinRounder`.

    With numba installed (the ``fast`` extra) the deposit and the whole dyadic search run in one
    compiled call, from ``2^16`` rows on and, where numba is imported already, at any size, with
    the numpy search's arithmetic operation for operation: the value is ``scdl_curve(...).scdl``
    bit for bit.

    Parameters
    ----------
    {y_true}
    {y_prob}
    max_bins : {"auto", "theory"}, int or None, default="auto"
        The grid rule (see :func:`scdl_curve`). ``"auto"`` (or ``None``) searches up to the
        smallest power of two ``>= 4 sqrt(T)``; ``"theory"`` up to the largest ``m`` with
        ``m ln(m) <= sqrt(T)``; an integer caps the search (rounded down to a power of two, at
        least 2, at most ``max(1024, 4 n)``).
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    {pos_label}

    Returns
    -------
    float
        SCDL; it lies in ``[1/m*, 2/m*)`` for the selected grid ``m*``.

    See Also
    --------
    scdl_curve : the whole search (``SCDL_m`` per grid, ``m*``, ``pi``, ``q``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.scdl import scdl_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5000)
    >>> y = (rng.uniform(size=5000) < p).astype(int)
    >>> round(scdl_score(y, p), 4)                   # calibrated: set by the noise of 5000 rows
    0.005
    >>> scdl_score(y, p, max_bins="theory")           # the theorem's cap m_max = 16: the floor
    0.0625
    >>> round(scdl_score(y, 1 - p), 4)                # anti-calibrated
    0.1935
    """
    # read only by the deposit: the caller's arrays need no copy
    y, p, w = check_binary_probabilities(
        y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight, copy=False
    )
    return ScdlStatistics.compute_validated(y, p, w, max_bins=max_bins)
