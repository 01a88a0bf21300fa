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

# --- reports and displays ---
