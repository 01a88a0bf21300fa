"""Parameter constraints shared by every public function and estimator.

Public functions declare their arguments with scikit-learn's ``validate_params`` (as
``sklearn.calibration.calibration_curve`` does) and estimators with
``_parameter_constraints``; the constraints that recur are defined once here so that the same
argument is checked by the same rule everywhere. Array contents (NaN, ranges, shapes) are
checked by :mod:`skcal._validation`; sizes that depend on the data (for example a number of
bins against the sample size) are checked in the function, which names the bound.
"""

from numbers import Integral, Real

import numpy as np

from skcal._compat import Interval, StrOptions

__all__ = [
    "ARRAY",
    "BANDWIDTH",
    "BOOLEAN",
    "FINITE_REAL",
    "N_BINS",
    "N_JOBS",
    "POS_LABEL",
    "POSITIVE_INT",
    "POSITIVE_REAL",
    "PROBABILITY_OPEN",
    "RANDOM_STATE",
    "SAMPLE_WEIGHT",
    "VERBOSE",
    "MAX_BINS_LIMIT",
    "MAX_REPLICATES",
    "N_BOOTSTRAP",
    "MAX_DEGREE_LIMIT",
    "MIN_BANDWIDTH",
    "Integral",
    "Real",
    "Interval",
    "StrOptions",
    "StrictInterval",
]

class StrictInterval(Interval):
    """An ``Interval`` that, unlike scikit-learn's, rejects booleans for numeric types.

    ``True`` is an ``Integral`` in Python, so ``Interval(Integral, 1, None)`` accepts
    ``n_bins=True`` as one bin; a flag passed where a count is expected is a mistake.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, bool):
            return False
        return super().is_satisfied_by(val)


#: Largest number of bins any binned measure accepts (memory is linear in it).
MAX_BINS_LIMIT = 1 << 24
#: Largest Chebyshev degree accepted anywhere (the moment matrix is (2l+1)^2).
MAX_DEGREE_LIMIT = 512
#: Smallest kernel bandwidth: the smallest normal float64 (a subnormal ``h`` overflows ``1 / h``).
MIN_BANDWIDTH = float(np.finfo(np.float64).tiny)

ARRAY = ["array-like"]
SAMPLE_WEIGHT = ["array-like", None]
POS_LABEL = [Real, str, "boolean", None]
RANDOM_STATE = ["random_state"]
N_JOBS = [Integral, None]
VERBOSE = ["verbose"]
BOOLEAN = ["boolean"]
POSITIVE_INT = [StrictInterval(Integral, 1, None, closed="left")]
POSITIVE_REAL = [StrictInterval(Real, 0, None, closed="neither")]
PROBABILITY_OPEN = [StrictInterval(Real, 0, 1, closed="neither")]
N_BINS = [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both")]
#: Largest number of bootstrap or resampling replicates accepted (time and memory are linear in
#: it; 10**5 replicates already resolve a 90% interval's end points far below any noise).
MAX_REPLICATES = 10**5
N_BOOTSTRAP = [StrictInterval(Integral, 0, MAX_REPLICATES, closed="both")]
#: A kernel bandwidth: a positive finite number, not subnormal, not a bool.
BANDWIDTH = [StrictInterval(Real, MIN_BANDWIDTH, None, closed="left")]
#: Any finite real number (not NaN, not infinite, not a bool).
FINITE_REAL = [StrictInterval(Real, None, None, closed="neither")]
