"""skcal: measure and repair the calibration of probabilistic classifiers, the scikit-learn way.

The public API is re-exported here; each concept lives in its own module (see the package
listing in the README).
"""

from skcal.scorers import get_skcal_scorer_names, register_scorer

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "get_skcal_scorer_names",
    "register_scorer",
]

# --- SCDL slice (SPEC 4) ---
from skcal.binned_ece import binned_ece  # noqa: E402
from skcal.cutoff import cutoff_calibration_error  # noqa: E402
from skcal.rounding import (  # noqa: E402
    SoftBinRounder,
    expected_swap_regret,
    soft_bin_weights,
    swap_regret,
)
from skcal.scdl import SCDLCurve, scdl_curve, scdl_score  # noqa: E402
from skcal.smooth_ece import smooth_ece  # noqa: E402

__all__ += [
    "SCDLCurve",
    "SoftBinRounder",
    "binned_ece",
    "cutoff_calibration_error",
    "expected_swap_regret",
    "scdl_curve",
    "scdl_score",
    "smooth_ece",
    "soft_bin_weights",
    "swap_regret",
]

# --- second-order calibration (SPEC 1-3) ---
from skcal.ce2_baselines import baseline_ce2  # noqa: E402
from skcal.ensemble import EnsembleMoments  # noqa: E402
from skcal.perturbation import SechPerturber  # noqa: E402
from skcal.sech import sech_cdf, sech_pdf, sech_ppf, sech_sample  # noqa: E402

__all__ += ["baseline_ce2", "EnsembleMoments", "SechPerturber"]
__all__ += ["sech_cdf", "sech_pdf", "sech_ppf", "sech_sample"]

from skcal.ce2 import CE2Result, ce1_score, ce2_details, ce2_score  # noqa: E402  (cheb)
from skcal.chebyshev import ChebyshevMoments, ChebyshevRidge, auto_degree, degree_cap  # noqa: E402  (cheb)
from skcal.platt import SecondOrderPlattCalibrator  # noqa: E402  (cheb)

__all__ += ["CE2Result", "ce1_score", "ce2_details", "ce2_score"]  # (cheb)
__all__ += ["ChebyshevMoments", "ChebyshevRidge", "auto_degree", "degree_cap"]  # (cheb)
__all__ += ["SecondOrderPlattCalibrator"]  # (cheb)

# --- truthful multiclass errors (SPEC 5) ---
from skcal.binning import assign_bins  # noqa: E402
from skcal.temperature import apply_temperature, fit_temperature, temperature_nll  # noqa: E402
from skcal.truthful import (  # noqa: E402
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

__all__ += [
    "assign_bins",
    "apply_temperature",
    "fit_temperature",
    "temperature_nll",
    "brier_over_k",
    "classwise_ece",
    "classwise_lince",
    "conf_ce",
    "conf_ece",
    "confidence_proper_loss",
    "lince_score",
    "truthful_conf_ce",
    "truthful_decomposition",
]

# --- reports and displays ---
from skcal.display import ReliabilityDisplay, SecondOrderDisplay  # noqa: E402
from skcal.report import CalibrationReport, calibration_report  # noqa: E402

__all__ += ["CalibrationReport", "ReliabilityDisplay", "SecondOrderDisplay", "calibration_report"]
