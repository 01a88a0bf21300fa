"""Mergeable calibration statistics: one object per measure.

Each object accumulates the additive sufficient statistics of a measure chunk by chunk
(``update``), combines with others built with the same parameters (``merge`` or ``+``), returns
the measure (``compute``) and round-trips through a versioned, pickle-free state
(``get_state`` / :func:`from_state`). The in-memory metric functions of skcal share their
statistics objects' formulas, so the streaming, distributed and in-memory paths cannot drift:
the formulas live here, with the statistics, and a metric function validates its inputs once
and computes through its class (:meth:`BaseStatistics.compute_validated`, by default
``from_validated(...).compute()``; a class whose one batch of rows has a shorter path to the same
value overrides it). Each class declares its parameters' constraints (``_parameter_constraints``),
checked when an object is constructed.

This package is the statistics' one face: the other layers of skcal import from
``skcal.stats`` only, never from its private modules (``tests/test_architecture.py``).
"""

from skcal.stats._base import BaseStatistics, effective_sample_size, from_state, merge_all, statistics_class
from skcal.stats._binned import BinnedStatistics
from skcal.stats._bootstrap import (
    PoissonBootstrap,
    PreparedRows,
    poisson_weights,
    poisson_weights_into,
    update_together,
)
from skcal.stats._ce2 import CE1Statistics, CE2PlugInStatistics, CE2Statistics
from skcal.stats._cutoff import CutoffGridStatistics, CutoffStatistics, SortedCutoffStatistics
from skcal.stats._grid import GridReplicates, ReplicateGrid
from skcal.stats._lipschitz import SmoothCEGridStatistics, SmoothCEStatistics, smce_grid_cells
from skcal.stats._quantile import (
    QuantileCellStatistics,
    QuantileHistogramStatistics,
    QuantileSelector,
    quantile_edges,
    quantile_thresholds,
)
from skcal.stats._scdl import ScdlStatistics, scdl_on_grid, scfdl
from skcal.stats._scdl_rules import SCDLCurve, default_max_bins, max_supported_bins, theory_max_bins
from skcal.stats._scores import AccuracyStatistics, BrierScoreStatistics, LogLossStatistics, MeanStatistics
from skcal.stats._smooth_ece import SmoothECEStatistics
from skcal.stats._truthful import ClasswiseStatistics, TopLabelStatistics, classwise_value, top_label_value

__all__ = [
    # protocol
    "BaseStatistics",
    "from_state",
    "merge_all",
    "statistics_class",
    "effective_sample_size",
    # bootstrap replicates of any statistics object
    "PoissonBootstrap",
    "PreparedRows",
    "poisson_weights",
    "poisson_weights_into",
    "update_together",
    # the out-of-core report's replicates of several binary measures on one grid of units
    "GridReplicates",
    "ReplicateGrid",
    # scores
    "AccuracyStatistics",
    "BrierScoreStatistics",
    "LogLossStatistics",
    "MeanStatistics",
    # binned measures (binned ECE, MCE, RMS, ACE, debiased l2) and the cutoff error
    "BinnedStatistics",
    "CutoffGridStatistics",
    "CutoffStatistics",
    "SortedCutoffStatistics",
    # the Lipschitz smCE, exact and on a grid (and the grid its bootstrap replicates use)
    "SmoothCEGridStatistics",
    "SmoothCEStatistics",
    "smce_grid_cells",
    # SCDL (and its curve, SoftBinRounder.fit_statistics), its grid rules and formulas, and smECE
    "SCDLCurve",
    "ScdlStatistics",
    "default_max_bins",
    "max_supported_bins",
    "scdl_on_grid",
    "scfdl",
    "theory_max_bins",
    "SmoothECEStatistics",
    # truthful multiclass errors
    "ClasswiseStatistics",
    "TopLabelStatistics",
    "classwise_value",
    "top_label_value",
    # CE2 / CE1 polynomial estimators (pass 1: moments; pass 2: plug-in sums)
    "CE1Statistics",
    "CE2PlugInStatistics",
    "CE2Statistics",
    # exact quantile bins by extra passes (histogram, then the values in the edge cells)
    "QuantileCellStatistics",
    "QuantileHistogramStatistics",
    "QuantileSelector",
    "quantile_edges",
    "quantile_thresholds",
]
