"""Every private scikit-learn import skcal relies on, in one place.

scikit-learn does not promise stability for these names; keeping them here means a future
rename is a one-file fix. The other modules of skcal import them from here under public names
(``fit_context``, ``SklearnScorer``), so that no module reaches into a private name of another.
"""

from sklearn.base import _fit_context as fit_context
from sklearn.metrics import _scorer as _sk_scorer
from sklearn.metrics._scorer import _Scorer as SklearnScorer
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import check_is_fitted, validate_data

#: Modules whose import-time constraints contain the set of scorer names.
SKLEARN_MODULES_WITH_SCORING_CONSTRAINTS = (
    "sklearn.metrics._scorer",
    "sklearn.model_selection",
    "sklearn.model_selection._validation",
    "sklearn.model_selection._search",
    "sklearn.model_selection._search_successive_halving",
    "sklearn.model_selection._classification_threshold",
    "sklearn.inspection",
    "sklearn.feature_selection",
    "sklearn.linear_model",
    "sklearn.calibration",
)


def sklearn_scorer_registry():
    """scikit-learn's name -> scorer dict (``sklearn.metrics._scorer._SCORERS``), mutable."""
    return _sk_scorer._SCORERS


__all__ = [
    "SKLEARN_MODULES_WITH_SCORING_CONSTRAINTS",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "SklearnScorer",
    "StrOptions",
    "check_is_fitted",
    "fit_context",
    "sklearn_scorer_registry",
    "validate_data",
    "validate_parameter_constraints",
    "validate_params",
]
