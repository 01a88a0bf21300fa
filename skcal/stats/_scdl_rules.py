"""SCDL's grid rules (the finest dyadic grid its search reaches for a sample of a given size) and
the result of the search, :class:`SCDLCurve`.

:func:`skcal.scdl.scdl_curve` searches the dyadic grids ``m = 2, 4, ..., m_max``; ``m_max`` follows
a named rule of the (effective) sample size ``T`` (``"auto"``, ``"theory"``), or an explicit
integer, and never goes past what the rows support (:func:`max_supported_bins`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import MAX_BINS_LIMIT, NON_NEGATIVE_INT, NON_NEGATIVE_REAL, PowerOfTwoInterval

__all__ = [
    "AUTO_FACTOR",
    "SCDLCurve",
    "default_max_bins",
    "max_supported_bins",
    "resolve_max_bins",
    "theory_max_bins",
]

#: The ``"auto"`` rule: ``m_max`` is the smallest power of two ``>= AUTO_FACTOR * sqrt(T)``.
AUTO_FACTOR = 4.0


@validate_params({"n_effective": NON_NEGATIVE_REAL}, prefer_skip_nested_validation=True)
def theory_max_bins(n_effective):
    """Largest dyadic ``m >= 2`` with ``m ln(m) <= sqrt(T)``: the rate theorem's cap in *Full Swap Regret*.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size ``T``.

    Returns
    -------
    int
        That ``m`` (2 when no larger power of two qualifies); the ``"theory"`` rule of
        :func:`default_max_bins`.

    Examples
    --------
    >>> from skcal.scdl import theory_max_bins
    >>> [theory_max_bins(T) for T in (1_000, 10_000, 1_000_000)]
    [8, 16, 128]
    """
    root = math.sqrt(max(float(n_effective), 0.0))
    m = 2
    while 2 * m * math.log(2 * m) <= root and 2 * m <= MAX_BINS_LIMIT:
        m *= 2
    return m


@validate_params({"n_rows": NON_NEGATIVE_INT}, prefer_skip_nested_validation=True)
def max_supported_bins(n_rows):
    """Largest ``max_bins`` accepted for ``n_rows`` rows: ``max(1024, 4 n_rows)``, at most ``2**24``.

    A grid with far more cells than rows puts every row in a cell of its own; finer grids only
    lower the floor ``1/m`` below any resolution the sample has, and cost memory.

    Parameters
    ----------
    n_rows : int
        Number of rows.

    Returns
    -------
    int
        The bound (not necessarily a power of two).

    Examples
    --------
    >>> from skcal.scdl import max_supported_bins
    >>> max_supported_bins(2), max_supported_bins(10_000)
    (1024, 40000)
    """
    return int(min(MAX_BINS_LIMIT, max(1024, 4 * int(n_rows))))


@validate_params(
    {"n_effective": NON_NEGATIVE_REAL, "rule": [StrOptions({"auto", "theory"})]},
    prefer_skip_nested_validation=True,
)
def default_max_bins(n_effective, rule="auto"):
    """The largest grid ``m_max`` searched by a named rule for a sample of (effective) size ``T``.

    Parameters
    ----------
    n_effective : float
        The (effective) sample size ``T``.
    rule : {"auto", "theory"}, default="auto"
        ``"auto"``: the smallest power of two ``>= 4 sqrt(T)`` (at least 2). ``"theory"``: the
        largest power of two with ``m ln(m) <= sqrt(T)`` (see :func:`theory_max_bins`).

    Returns
    -------
    int
        A power of two, at least 2.

    Examples
    --------
    >>> from skcal.scdl import default_max_bins
    >>> default_max_bins(1_000), default_max_bins(10_000), default_max_bins(1_000_000)
    (128, 512, 4096)
    >>> default_max_bins(1_000, rule="theory")
    8
    """
    if rule == "theory":
        return theory_max_bins(n_effective)
    target = AUTO_FACTOR * math.sqrt(max(float(n_effective), 0.0))
    m = 2
    while m < target and 2 * m <= MAX_BINS_LIMIT:
        m *= 2
    return m


def resolve_max_bins(max_bins, n_effective, n_rows):
    """The finest dyadic grid that SCDL's search reaches: a power of two, checked against the data.

    Parameters
    ----------
    max_bins : {"auto", "theory"}, int or None
        The grid rule (``None`` is ``"auto"``; see :func:`skcal.scdl.scdl_curve`), already checked
        against :data:`skcal._constraints.SCDL_MAX_BINS`.
    n_effective : float
        The (effective) sample size ``T`` of the rule.
    n_rows : int
        The number of rows, which bounds the grid (:func:`max_supported_bins`).

    Returns
    -------
    int
        A power of two, at least 2: the rule's grid lowered to what the rows support, or the
        largest power of two not above an explicit ``max_bins``.

    Examples
    --------
    >>> resolve_max_bins("auto", 10_000, 10_000), resolve_max_bins(100, 10_000, 10_000)
    (512, 64)
    """
    if max_bins is None or isinstance(max_bins, str):
        rule = "auto" if max_bins is None else max_bins
        M = default_max_bins.__wrapped__(n_effective, rule)
        # a rule never asks for more than the rows support
        bound = max_supported_bins.__wrapped__(n_rows)  # checked inputs: no validation
        while M > bound and M > 2:
            M //= 2
        return M
    bound = max_supported_bins.__wrapped__(n_rows)  # checked inputs: no validation
    if max_bins > bound:
        raise ValueError(
            f"max_bins={max_bins} is larger than {n_rows} rows support: at most max(1024, 4 n_rows) = "
            f"{bound} (a finer grid puts every row in a cell of its own). Use max_bins='auto'."
        )
    return 1 << (int(max_bins).bit_length() - 1)  # largest power of two <= max_bins


@dataclass(frozen=True)
class SCDLCurve:
    """Everything :func:`scdl_curve` computes.

    Parameters
    ----------
    n_bins : ndarray of int, shape (g,)
        The dyadic grids searched, ``2, 4, ..., m_max``.
    scdl_m : ndarray of shape (g,)
        ``SCDL_m`` for each grid (non-decreasing in ``m``).
    scdl : float
        ``min_m max(SCDL_m, 1/m)``.
    selected_n_bins : int
        The selected grid ``m*`` (the smallest ``m`` attaining the minimum); ``scdl`` lies in
        ``[1/m*, 2/m*)``.
    pi : list of ndarray
        ``pi[g]`` holds ``pi_i`` (``i = 0..m``) for grid ``n_bins[g]``; it sums to 1.
    q : list of ndarray
        ``q[g]`` holds ``q_i``; NaN for an empty bin (``pi_i = 0``).
    scfdl : list of ndarray
        ``scfdl[g]`` holds ``SCFDL_{m,i}`` for ``i = 0..m``; its maximum is ``scdl_m[g]``.
    n_effective : float
        The sample size ``T`` used by the grid rule.
    selected_scdl_m : float
        The unfloored ``SCDL_{m*}`` on the selected grid; ``scdl = max(selected_scdl_m, 1/m*)``,
        so ``selected_scdl_m < 1/m*`` means SCDL sits on the floor of its grid.
    max_bins : int
        The finest grid searched, ``n_bins[-1]``.
    max_bins_rule : str
        How ``max_bins`` was chosen: ``"auto"``, ``"theory"`` or ``"fixed"`` (an integer).
    at_floor : bool
        Whether ``scdl`` equals the floor ``1/m*`` (then models with the same ``m*`` tie).
    """

    n_bins: np.ndarray
    scdl_m: np.ndarray
    scdl: float
    selected_n_bins: int
    pi: list = field(repr=False)
    q: list = field(repr=False)
    scfdl: list = field(repr=False)
    n_effective: float = float("nan")
    selected_scdl_m: float = float("nan")
    max_bins: int = 0
    max_bins_rule: str = "auto"
    at_floor: bool = False

    @validate_params({"n_bins": [PowerOfTwoInterval(2, MAX_BINS_LIMIT)]}, prefer_skip_nested_validation=True)
    def grid(self, n_bins):
        """Return ``(pi, q, scfdl)`` for the grid with ``n_bins`` bins.

        Parameters
        ----------
        n_bins : int
            One of the searched grids ``self.n_bins``.

        Returns
        -------
        pi : ndarray of shape (n_bins + 1,)
            Bin masses.
        q : ndarray of shape (n_bins + 1,)
            Bin label means (NaN for empty bins).
        scfdl : ndarray of shape (n_bins + 1,)
            ``SCFDL_{m,i}`` per threshold ``i``.
        """
        idx = np.flatnonzero(self.n_bins == n_bins)
        if idx.size == 0:
            raise ValueError(f"n_bins={n_bins} is not one of the searched grids {self.n_bins.tolist()}.")
        g = int(idx[0])
        return self.pi[g], self.q[g], self.scfdl[g]
