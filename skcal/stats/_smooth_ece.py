"""Mergeable statistics of smECE: the one fine-grid deposit of :mod:`skcal.smooth_ece`.

Per cell of a fixed grid of ``2^18`` cells on [0, 1]: the total weight ``N``, its first moment
in ``p`` (``F``), the total residual ``R = sum w (p - y)`` and its first moment ``RF``; plus the
row count and total weight (the weights are rescaled to sum to the row count, as
:func:`skcal.smooth_ece.smooth_ece` does). All are sums over rows, so chunks merge by addition.
"""

from __future__ import annotations

import numpy as np

from skcal.stats._base import BaseStatistics
from skcal.stats._scdl import check_chunk

__all__ = ["SmoothECEStatistics"]

#: Cells of the grid the data are deposited on (``skcal.smooth_ece.FINE_CELLS``).
FINE_CELLS = 1 << 18


def fine_deposit(p, r, w, K=FINE_CELLS):
    """``(N, F, R, RF)`` per cell of the ``K``-cell grid for predictions ``p`` and residuals ``r``."""
    c = np.minimum((p * K).astype(np.intp), K - 1)
    wp = p if w is None else w * p
    wr = r if w is None else w * r
    N = np.bincount(c, weights=w, minlength=K).astype(np.float64)
    F = np.bincount(c, weights=wp, minlength=K)
    R = np.bincount(c, weights=wr, minlength=K)
    RF = np.bincount(c, weights=wr * p, minlength=K)
    return N, F, R, RF


class SmoothECEStatistics(BaseStatistics):
    """Mergeable sufficient statistics of smECE: weight and residual deposited on a fine grid.

    :func:`skcal.smooth_ece.smooth_ece` computes through this object, so :meth:`compute` on
    merged chunks equals it on all the rows. The state holds four arrays of ``2^18`` floats
    (8 MiB).

    Parameters
    ----------
    pos_label : int, float, bool or str, default=None
        The positive class; give it when labels are not ``{0, 1}``, ``{-1, 1}`` or booleans.

    Attributes
    ----------
    n_updates_ : int
        Number of ``update`` calls folded in.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.stats import SmoothECEStatistics
    >>> from skcal.smooth_ece import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)
    >>> s = SmoothECEStatistics().update(y[:500], p[:500]) + SmoothECEStatistics().update(y[500:], p[500:])
    >>> bool(abs(s.compute() - smooth_ece(y, p)) < 1e-12)
    True
    """

    _param_names = ("pos_label",)

    def __init__(self, *, pos_label=None):
        self.pos_label = pos_label

    def _empty(self):
        z = np.zeros(FINE_CELLS)
        return {
            "N": z,
            "F": z.copy(),
            "R": z.copy(),
            "RF": z.copy(),
            "sum_w": np.zeros(()),
            "n_rows": np.zeros((), dtype=np.int64),
        }

    @staticmethod
    def _chunk_arrays(y, p, w):
        N, F, R, RF = fine_deposit(p, p - y, w)
        n = p.shape[0]
        return {
            "N": N,
            "F": F,
            "R": R,
            "RF": RF,
            "sum_w": np.array(float(n) if w is None else float(w.sum())),
            "n_rows": np.array(n, dtype=np.int64),
        }

    def _chunk(self, y_true, y_prob, sample_weight=None):
        y, p, w = check_chunk(y_true, y_prob, sample_weight, self.pos_label)
        return self._chunk_arrays(y, p, w)

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
        SmoothECEStatistics
            The updated object.
        """
        return super().update(y_true, y_prob, sample_weight=sample_weight)

    def _compute(self, return_bandwidth=False):
        from skcal.smooth_ece import _FineGrid, _smooth_ece_from_grid

        s = self.stats_
        if int(s["n_rows"]) == 0 or float(s["sum_w"]) <= 0:
            raise ValueError("The statistics hold no rows with positive weight; smECE is undefined.")
        grid = _FineGrid.from_sums(s["N"], s["F"], s["R"], s["RF"], float(s["n_rows"]) / float(s["sum_w"]))
        return _smooth_ece_from_grid(grid, return_bandwidth)

    def compute(self, return_bandwidth=False):
        """Return smECE of the accumulated rows (see :func:`skcal.smooth_ece.smooth_ece`).

        Parameters
        ----------
        return_bandwidth : bool, default=False
            Also return the selected bandwidth.

        Returns
        -------
        float or tuple of float
            The smECE, or ``(smECE, sigma)`` with ``return_bandwidth=True``.
        """
        return self._compute(return_bandwidth)
