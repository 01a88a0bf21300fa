"""Every private scikit-learn import skcal relies on, in one place.

scikit-learn does not promise stability for these names; keeping them here means a future
rename is a one-file fix.
"""

from sklearn.base import _fit_context
from sklearn.metrics._scorer import _Scorer
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "StrOptions",
    "_Scorer",
    "_check_sample_weight",
    "_fit_context",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
