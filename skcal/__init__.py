"""skcal: measure and repair the calibration of probabilistic classifiers, the scikit-learn way.

The public API is re-exported here, grouped by task; each concept lives in its own module (see
the package listing in the README). Importing ``skcal`` also registers skcal's scorers with
scikit-learn (``scoring="scdl"``, ...; the table is in :mod:`skcal.scorers`).

The Chebyshev engine behind ``ce2_score`` and ``SecondOrderPlattCalibrator``
(``ChebyshevMoments``, ``ChebyshevRidge``, ``auto_degree``, ``degree_cap``) is an internal of
those estimators and is imported from :mod:`skcal.chebyshev`, not from here.
"""

# one sorted import block (isort); ``__all__`` below groups the names by task.
# The subpackages ``skcal.datasets`` (load_*) and ``skcal.stats`` (*Statistics) are attributes.
from skcal import datasets as datasets
from skcal import stats as stats
from skcal.binned_ece import binned_ece
from skcal.binned_measures import (
    average_calibration_error,
    debiased_l2_calibration_error,
    max_calibration_error,
    rms_calibration_error,
)
from skcal.binning import assign_bins
from skcal.calibration_test import CalibrationTestResult, calibration_test
from skcal.ce2 import CE2Result, ce1_score, ce2_details, ce2_score
from skcal.ce2_baselines import baseline_ce2
from skcal.cutoff import cutoff_calibration_error
from skcal.display import ReliabilityDisplay, SecondOrderDisplay
from skcal.ensemble import EnsembleMoments, ensemble_moments
from skcal.ks_calibration_error import ks_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.perturbation import SechPerturber
from skcal.platt import SecondOrderPlattCalibrator
from skcal.reliability_curve import (
    ReliabilityCurve,
    SmoothReliabilityCurve,
    reliability_curve,
    smooth_reliability_curve,
)
from skcal.report import CalibrationReport, calibration_report
from skcal.rounding import SoftBinRounder, expected_swap_regret, soft_bin_weights, swap_regret
from skcal.scdl import SCDLCurve, scdl_curve, scdl_score
from skcal.scorers import get_skcal_scorer_names, register_scorer
from skcal.sech import sech_cdf, sech_pdf, sech_ppf, sech_sample
from skcal.second_order_classifier import SecondOrderCalibratedClassifier
from skcal.smooth_ece import smooth_ece
from skcal.temperature import apply_temperature, fit_temperature, temperature_nll
from skcal.truthful import (
    brier_over_k,
    classwise_ece,
    classwise_lince,
    conf_ce,
    conf_ece,
    confidence_proper_loss,
    lince_score,
    truthful_conf_ce,
    truthful_decomposition,
)
from skcal.votes import Snapshots, VoteCounts

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # first-order calibration errors of binary classifiers
    "SCDLCurve",
    "average_calibration_error",
    "binned_ece",
    "cutoff_calibration_error",
    "debiased_l2_calibration_error",
    "ks_calibration_error",
    "max_calibration_error",
    "rms_calibration_error",
    "scdl_curve",
    "scdl_score",
    "smooth_calibration_error",
    "smooth_ece",
    # per-bin reliability data and calibration hypothesis tests
    "CalibrationTestResult",
    "ReliabilityCurve",
    "SmoothReliabilityCurve",
    "calibration_test",
    "reliability_curve",
    "smooth_reliability_curve",
    # recalibration by soft-bin rounding and swap regret
    "SoftBinRounder",
    "expected_swap_regret",
    "soft_bin_weights",
    "swap_regret",
    # truthful multiclass calibration errors and their proper losses
    "assign_bins",
    "brier_over_k",
    "classwise_ece",
    "classwise_lince",
    "conf_ce",
    "conf_ece",
    "confidence_proper_loss",
    "lince_score",
    "truthful_conf_ce",
    "truthful_decomposition",
    # temperature scaling of stored logits
    "apply_temperature",
    "fit_temperature",
    "temperature_nll",
    # repeated labels as vote counts (the bundled crowd data: skcal.datasets)
    "Snapshots",
    "VoteCounts",
    # second-order scores
    "EnsembleMoments",
    "SechPerturber",
    "ensemble_moments",
    "sech_cdf",
    "sech_pdf",
    "sech_ppf",
    "sech_sample",
    # second-order calibration error and recalibration
    "CE2Result",
    "SecondOrderCalibratedClassifier",
    "SecondOrderPlattCalibrator",
    "baseline_ce2",
    "ce1_score",
    "ce2_details",
    "ce2_score",
    # reports and displays
    "CalibrationReport",
    "ReliabilityDisplay",
    "SecondOrderDisplay",
    "calibration_report",
    # scorers
    "get_skcal_scorer_names",
    "register_scorer",
]
