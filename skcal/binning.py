"""Binning rules that look at predictions only (SPEC section 5).

A binning rule maps the values a predictor reports (never the labels) to integer bin ids. The
truthful calibration errors of :mod:`skcal.truthful` stay truthful for *any* such rule, because
the bins are then fixed given the reports, so the expected error splits into a bias term that
vanishes for honest reports and a variance term that the reports cannot influence.

Three rules are provided:

``"uniform"``
    Equal-width bins on [0, 1]: value ``v`` goes to ``min(floor(v * n_bins), n_bins - 1)``. The
    bins are left-closed, ``[j / n_bins, (j + 1) / n_bins)``, except the last, which is closed,
    ``[1 - 1 / n_bins, 1]``, so the right edge 1.0 belongs to the last bin. Values outside
    [0, 1] are rejected.
``"quantile"``
    Equal mass by sorted order: the values are sorted with a *stable* sort (ties keep their
    index order), and the sorted positions ``0..n-1`` are cut into ``n_bins`` contiguous groups
    whose sizes differ by at most one. As in :func:`numpy.array_split`, the first
    ``n % n_bins`` groups (those holding the smallest values) receive one extra sample. When
    ``n < n_bins`` the first ``n`` bins hold one sample each and the rest are empty. Tied values
    may therefore fall into different bins; which one depends only on their index.
callable
    ``f(values, n_bins) -> ids`` returning one non-negative integer per value. The ids are used
    as they are (they need not be below ``n_bins`` or contiguous).

All rules run in ``O(n log n)`` time and ``O(n)`` memory.
"""

from __future__ import annotations

import numbers

import numpy as np

from skcal._validation import _as_float_array, _reject_nonfinite

__all__ = ["assign_bins", "BINNING_STRATEGIES"]

#: Names of the built-in binning rules.
BINNING_STRATEGIES = ("uniform", "quantile")


def _check_n_bins(n_bins):
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral):
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins!r}.")
    if n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins}.")
    return int(n_bins)


def _uniform_ids(values, n_bins):
    if values.min() < 0.0 or values.max() > 1.0:
        raise ValueError(
            'strategy="uniform" bins [0, 1], so the values to bin must lie in [0, 1]; got values in '
            f'[{values.min():.6g}, {values.max():.6g}]. Use strategy="quantile" or a callable.'
        )
    ids = np.floor(values * n_bins).astype(np.intp)
    np.minimum(ids, n_bins - 1, out=ids)
    return ids


def _quantile_ids_from_ranks(ranks, n, n_bins):
    """Map sorted positions ``0..n-1`` to array_split-style group ids."""
    q, rem = divmod(n, n_bins)
    big = rem * (q + 1)  # positions covered by the first `rem` groups of size q + 1
    if q == 0:
        return ranks.astype(np.intp, copy=True)
    return np.where(ranks < big, ranks // (q + 1), rem + (ranks - big) // q).astype(np.intp)


def _quantile_ids(values, n_bins):
    n = values.shape[0]
    order = np.argsort(values, axis=0, kind="stable")
    ranks = np.empty_like(order)
    if values.ndim == 1:
        ranks[order] = np.arange(n)
    else:
        np.put_along_axis(ranks, order, np.arange(n)[:, None], axis=0)
    return _quantile_ids_from_ranks(ranks, n, n_bins)


def _callable_ids(strategy, values, n_bins):
    n = values.shape[0]
    ids = strategy(values.copy(), n_bins)
    ids = np.asarray(ids)
    if ids.shape != (n,):
        raise ValueError(
            f"The binning callable must return one bin id per value (shape ({n},)); got shape {ids.shape}."
        )
    if ids.dtype.kind == "b" or ids.dtype.kind not in "iuf":
        raise ValueError(f"The binning callable must return integer bin ids; got dtype {ids.dtype}.")
    if ids.dtype.kind == "f":
        if not np.isfinite(ids).all() or (ids != np.round(ids)).any():
            raise ValueError("The binning callable must return integer bin ids; got non-integer floats.")
    if ids.min() < 0:
        raise ValueError(
            f"The binning callable must return non-negative bin ids; got a minimum of {ids.min()}."
        )
    return ids.astype(np.intp)


def assign_bins(values, n_bins=15, strategy="quantile", *, name="values"):
    """Assign each value to a bin with a rule that sees the values only.

    Parameters
    ----------
    values : array-like of shape (n,) or (n, m)
        The reported values to bin (for example top-label confidences). A 2-D array is binned
        column by column, each column on its own (used for classwise errors).
    n_bins : int, default=15
        Number of bins (>= 1). It may exceed the number of values (bins are then empty).
    strategy : {"quantile", "uniform"} or callable, default="quantile"
        The binning rule; see the module docstring for the exact edge and remainder
        conventions. A callable is called as ``strategy(values_1d, n_bins)`` (once per column
        for 2-D input) and must return one non-negative integer per value.
    name : str, default="values"
        Name used in error messages.

    Returns
    -------
    ids : ndarray of intp, same shape as ``values``
        Bin ids. For the built-in rules they lie in ``range(n_bins)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.binning import assign_bins
    >>> assign_bins([0.0, 0.2, 0.5, 1.0], n_bins=2, strategy="uniform").tolist()
    [0, 0, 1, 1]
    >>> assign_bins([0.9, 0.1, 0.5, 0.5, 0.3], n_bins=2, strategy="quantile").tolist()
    [1, 0, 0, 1, 0]
    """
    n_bins = _check_n_bins(n_bins)
    v = _as_float_array(values, name, ndim=(1, 2))
    _reject_nonfinite(v, name)
    if callable(strategy):
        if v.ndim == 1:
            return _callable_ids(strategy, v, n_bins)
        return np.stack([_callable_ids(strategy, v[:, j], n_bins) for j in range(v.shape[1])], axis=1)
    if strategy == "uniform":
        return _uniform_ids(v, n_bins)
    if strategy == "quantile":
        return _quantile_ids(v, n_bins)
    raise ValueError(f'strategy must be "quantile", "uniform" or a callable; got {strategy!r}.')
