"""Mergeable statistics of SCDL: soft-bin masses on a fixed finest grid.

SCDL, the soft-binned calibration decision loss, is defined in *Testable and Actionable
Calibration for Full Swap Regret* (see :mod:`skcal.scdl`).

The statistics of SCDL are, for the finest dyadic grid ``{0, 1/M, ..., 1}``, the soft-bin
masses ``W_i = sum_s w_s w_i(p_s)`` and ``A_i = sum_s w_s w_i(p_s) y_s`` (``i = 0..M``), plus the
total weight, the sum of squared weights (for Kish's effective sample size, which the default
grid rule needs) and the row count. They are sums over rows, so chunks merge by addition.

Every coarser dyadic grid follows exactly: the hat function of node ``i`` on the grid ``m`` is
``h^{2m}_{2i} + (h^{2m}_{2i-1} + h^{2m}_{2i+1}) / 2`` (a piecewise-linear function with nodes on the
coarse grid is piecewise linear on the fine one, with values 1, 1/2, 0 at the fine nodes), so
``W^m_i = W^{2m}_{2i} + (W^{2m}_{2i-1} + W^{2m}_{2i+1}) / 2`` and the same for ``A``. Folding every
grid costs ``O(M)`` in total.
"""

from __future__ import annotations

import numpy as np

from skcal._constraints import MAX_BINS_LIMIT
from skcal._validation import _as_float_array, _binary_labels, check_consistent_length, check_probabilities
from skcal.binning import hat_deposit
from skcal.stats._base import BaseStatistics

__all__ = ["ScdlStatistics", "DEFAULT_STATISTICS_MAX_BINS"]

#: Finest grid of a :class:`ScdlStatistics` built without ``max_bins`` (state: 2 x 65,537 floats).
DEFAULT_STATISTICS_MAX_BINS = 1 << 16


def _check_power_of_two(max_bins, name="max_bins"):
    if (
        isinstance(max_bins, (bool, np.bool_))
        or not isinstance(max_bins, (int, np.integer))
        or max_bins < 2
        or max_bins > MAX_BINS_LIMIT
        or (int(max_bins) & (int(max_bins) - 1))
    ):
        raise ValueError(
            f"{name} must be a power of two between 2 and {MAX_BINS_LIMIT} (2**24); got {max_bins!r}."
        )
    return int(max_bins)


def _node_deposit(p, y, w, m):
    """Soft-bin masses ``W_i`` and ``A_i`` (i = 0..m) of the rows ``(p, y, w)`` on the grid ``m``."""
    wt = np.ones_like(p) if w is None else w
    W, A = hat_deposit(p, m, np.stack([wt, wt * y]))
    return W, A


def _coarsen(V):
    """Masses on the grid ``m`` from those on the grid ``2m`` (last axis of ``V``: ``2m + 1`` entries)."""
    even = V[..., 0::2].copy()
    odd = 0.5 * V[..., 1::2]
    even[..., :-1] += odd
    even[..., 1:] += odd
    return even


def check_chunk(y, p, sample_weight, pos_label, *, y_name="y_true", p_name="y_prob"):
    """Validate one chunk of rows; zero rows and zero total weight are allowed (unlike metrics)."""
    n_y = len(y) if hasattr(y, "__len__") else None
    n_p = len(p) if hasattr(p, "__len__") else None
    if n_y == 0 and n_p == 0:
        return np.zeros(0), np.zeros(0), None if sample_weight is None else np.zeros(0)
    p = check_probabilities(p, name=p_name)
    y = _binary_labels(y, pos_label, y_name)
    check_consistent_length(**{y_name: y, p_name: p})
    w = None
    if sample_weight is not None:
        w = _as_float_array(sample_weight, "sample_weight", ndim=(1,))
        if not np.isfinite(w).all():
            raise ValueError("sample_weight contains NaN or infinity; expected finite values.")
        if w.shape[0] != p.shape[0]:
            raise ValueError(
                f"sample_weight has {w.shape[0]} entries; expected {p.shape[0]} (one per sample)."
            )
        if (w < 0).any():
            raise ValueError(f"sample_weight must be non-negative; got a minimum of {w.min():.6g}.")
    return y, p, w


class ScdlStatistics(BaseStatistics):
    """Mergeable sufficient statistics of SCDL: soft-bin masses on the finest dyadic grid.

    ``update`` deposits the rows' soft-bin weights on the grid ``{0, 1/M, ..., 1}`` with
    ``M = max_bins``; every coarser dyadic grid is folded from it exactly, so :meth:`curve` and
    :meth:`compute` equal :func:`skcal.scdl.scdl_curve` / :func:`skcal.scdl.scdl_score` on all the
    rows (those functions compute through this object). The default grid rule depends on the
    sample size, which is known only at the end, so the finest grid is fixed at construction:
    the search runs on the dyadic grids up to ``min(rule(T), max_bins)``.

    Parameters
    ----------
    max_bins : int, default=65536
        The finest grid ``M`` (a power of two, at most ``2**24``). The state holds two arrays of
        ``M + 1`` floats. The default ``2**16`` covers the ``"auto"`` rule up to about
        ``T = 6.7e7`` effective rows; beyond it the search stops at ``M`` (and :meth:`curve`
        warns if that cap binds).
    pos_label : int, float, bool or str, default=None
        The positive class; give it when labels are not ``{0, 1}``, ``{-1, 1}`` or booleans
        (a chunk may hold only one class).

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded in.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import ScdlStatistics
    >>> from skcal.scdl import scdl_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)
    >>> a = ScdlStatistics().update(y[:1000], p[:1000])
    >>> b = ScdlStatistics().update(y[1000:], p[1000:])
    >>> bool(abs((a + b).compute() - scdl_score(y, p)) < 1e-12)
    True
    """

    _param_names = ("max_bins", "pos_label")

    def __init__(self, *, max_bins=DEFAULT_STATISTICS_MAX_BINS, pos_label=None):
        self.max_bins = max_bins
        self.pos_label = pos_label

    def _empty(self):
        M = _check_power_of_two(self.max_bins)
        return {
            "W": np.zeros(M + 1),
            "A": np.zeros(M + 1),
            "sum_w": np.zeros(()),
            "sum_w2": np.zeros(()),
            "n_rows": np.zeros((), dtype=np.int64),
        }

    def _chunk(self, y_true, y_prob, sample_weight=None):
        M = _check_power_of_two(self.max_bins)
        y, p, w = check_chunk(y_true, y_prob, sample_weight, self.pos_label)
        return self._chunk_arrays(y, p, w, M)

    @staticmethod
    def _chunk_arrays(y, p, w, M):
        W, A = _node_deposit(p, y, w, M)
        n = p.shape[0]
        return {
            "W": W,
            "A": A,
            "sum_w": np.array(float(n) if w is None else float(w.sum())),
            "sum_w2": np.array(float(n) if w is None else float(np.dot(w, w))),
            "n_rows": np.array(n, dtype=np.int64),
        }

    def update(self, y_true, y_prob, sample_weight=None):
        """Add one chunk of rows; return ``self``.

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Binary labels (``n`` may be 0).
        y_prob : array-like of shape (n,) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights (zeros allowed).

        Returns
        -------
        ScdlStatistics
            The updated object.
        """
        return super().update(y_true, y_prob, sample_weight=sample_weight)

    @property
    def n_effective_(self):
        """Kish's effective sample size ``(sum w)^2 / sum w^2`` of the rows folded in."""
        s = self.stats_
        return float(s["sum_w"] ** 2 / s["sum_w2"]) if s["sum_w2"] > 0 else 0.0

    def grid_masses(self, n_bins):
        """Return ``(pi, a)`` on a dyadic grid ``n_bins <= max_bins``: ``pi_i`` and ``a_i = pi_i q_i``.

        Parameters
        ----------
        n_bins : int
            A power of two dividing ``max_bins``.

        Returns
        -------
        pi : ndarray of shape (n_bins + 1,)
            ``E[w_i(p)]``; sums to one.
        a : ndarray of shape (n_bins + 1,)
            ``E[w_i(p) y]``.
        """
        from skcal.scdl import _masses_to_moments

        m = _check_power_of_two(n_bins, "n_bins")
        if m > self.max_bins:
            raise ValueError(f"n_bins={m} exceeds the statistics' finest grid max_bins={self.max_bins}.")
        W, A = self.stats_["W"], self.stats_["A"]
        while W.shape[0] - 1 > m:
            W, A = _coarsen(W), _coarsen(A)
        return _masses_to_moments(W, A, float(self.stats_["sum_w"]))

    def curve(self, max_bins="auto"):
        """The SCDL search on the accumulated rows (see :func:`skcal.scdl.scdl_curve`).

        Parameters
        ----------
        max_bins : "auto", "theory" or int, default="auto"
            The grid rule, as in :func:`skcal.scdl.scdl_curve`; the search never goes past the
            statistics' own ``max_bins``.

        Returns
        -------
        SCDLCurve
            The whole search, with the selected grid and its unfloored ``SCDL_m``.
        """
        from skcal.scdl import _curve_from_statistics

        return _curve_from_statistics(self, max_bins)

    def _compute(self):
        return self.curve().scdl

    def compute(self):
        """Return SCDL (the ``"auto"`` grid rule) of the accumulated rows.

        Returns
        -------
        float
            ``min_m max(SCDL_m, 1/m)`` over the searched dyadic grids.
        """
        return self._compute()
