"""Estimating the second-order calibration error CE2 of *The Minimax Rate of Second-Order Calibration*.

``CE2 = E|eta1(S) - m| + E|eta2(S) - (m^2 + sigma2)|`` with ``eta1(s) = E[Y | S = s]`` and
``eta2(s) = E[f*(X)^2 | S = s]``. The polynomial estimator regresses the unbiased snapshot
targets ``t1`` and ``t2`` on a Chebyshev basis of the (already sech-perturbed) scores, clips each
fitted function to [0, 1] and plugs it in:

    CE2_hat = mean_i |eta1_hat(S_i) - m_i| + mean_i |eta2_hat(S_i) - (m_i^2 + sigma2_i)|.
"""

from skcal.ce2._fit import CV_SAMPLES_PER_FEATURE as CV_SAMPLES_PER_FEATURE  # the rules' constants
from skcal.ce2._fit import DEFAULT_ALPHAS
from skcal.ce2._fit import HOLDOUT_FRACTION as HOLDOUT_FRACTION
from skcal.ce2._fit import MAX_SOLVE_FLOATS as MAX_SOLVE_FLOATS
from skcal.ce2._functions import MULTICLASS, ce1_score, ce2_details, ce2_score
from skcal.ce2._result import CE2Result

__all__ = ["CE2Result", "DEFAULT_ALPHAS", "MULTICLASS", "ce1_score", "ce2_details", "ce2_score"]
