"""Mergeable calibration statistics: one object per measure.

Each object accumulates the additive sufficient statistics of a measure chunk by chunk
(``update``), combines with others built with the same parameters (``merge`` or ``+``), returns
the measure (``compute``) and round-trips through a versioned, pickle-free state
(``get_state`` / :func:`from_state`). Every in-memory metric function of skcal is computed
through its statistics object, so the streaming, distributed and in-memory paths cannot drift.
"""

from skcal.stats._base import BaseStatistics, from_state

__all__ = ["BaseStatistics", "from_state"]

# SCDL and smECE statistics (scdl engineer)
from skcal.stats._scdl import ScdlStatistics  # noqa: E402
from skcal.stats._smooth_ece import SmoothECEStatistics  # noqa: E402

__all__ += ["ScdlStatistics", "SmoothECEStatistics"]
