"""Scorer objects and their registration by name with scikit-learn.

scikit-learn validates ``scoring="..."`` strings against ``StrOptions`` constraints built from
``get_scorer_names()`` when each of its modules is imported. Registering a name therefore has
two parts: put the scorer in ``sklearn.metrics._scorer._SCORERS`` (so ``get_scorer`` finds it)
and add the name to every already-built ``StrOptions`` that lists the scorer names (so
parameter validation accepts it). To make the import order irrelevant, skcal imports the
scikit-learn modules that carry such constraints before patching them; any module imported
later builds its constraints from the (already extended) ``get_scorer_names()``.

Loss scorers negate, as in scikit-learn: ``scoring="scdl"`` and ``scoring="neg_scdl"`` both
return ``-scdl_score`` so that greater is better.
"""

from __future__ import annotations

import importlib
import sys

from sklearn.metrics import _scorer as _sk_scorer
from sklearn.utils._param_validation import StrOptions

from skcal._compat import _Scorer

__all__ = ["register_scorer", "get_skcal_scorer_names", "make_classes_aware_loss_scorer"]

# Modules whose import-time constraints contain the set of scorer names.
_MODULES_WITH_SCORING_CONSTRAINTS = (
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
# Names every scikit-learn version has; a StrOptions holding them is a scorer-name set.
_MARKERS = {"accuracy", "neg_log_loss", "roc_auc"}

_SKCAL_SCORERS: dict = {}


def _scorer_name_options():
    """Yield every StrOptions in loaded scikit-learn modules that enumerates scorer names."""
    seen = set()
    for modname, module in list(sys.modules.items()):
        if module is None or not modname.startswith("sklearn"):
            continue
        for obj in list(vars(module).values()):
            constraints = getattr(obj, "_skl_parameter_constraints", None)
            if constraints is None and isinstance(obj, type):
                constraints = obj.__dict__.get("_parameter_constraints")
            if not isinstance(constraints, dict):
                continue
            for options in constraints.values():
                if not isinstance(options, list):
                    continue
                for c in options:
                    if isinstance(c, StrOptions) and id(c) not in seen and _MARKERS <= c.options:
                        seen.add(id(c))
                        yield c


def _patch_constraints():
    for modname in _MODULES_WITH_SCORING_CONSTRAINTS:
        try:
            importlib.import_module(modname)
        except ImportError:  # pragma: no cover - module absent in this scikit-learn
            pass
    names = set(_SKCAL_SCORERS)
    for c in _scorer_name_options():
        c.options |= names


class _ClassesAwareScorer(_Scorer):
    """A ``make_scorer``-style scorer that tells the metric which class is which.

    ``classes_kwarg="labels"`` passes ``labels=estimator.classes_`` (multiclass metrics: the
    probability columns line up with the labels even when a test fold misses a class or the
    labels are strings); ``classes_kwarg="pos_label"`` passes ``pos_label=estimator.classes_[1]``
    (binary metrics: the column scikit-learn hands over is that of ``classes_[1]``, so the labels
    ``{1, 2}`` or ``{"no", "yes"}`` are scored against the right column).
    """

    def __init__(self, score_func, sign, kwargs, response_method, classes_kwarg):
        super().__init__(score_func, sign, kwargs, response_method)
        self._classes_kwarg = classes_kwarg

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        classes = getattr(estimator, "classes_", None)
        key = self._classes_kwarg
        if classes is not None and key not in kwargs and key not in self._kwargs:
            value = classes if key == "labels" else (classes[1] if len(classes) == 2 else None)
            if value is not None:
                kwargs = {**kwargs, key: value}
        return super()._score(method_caller, estimator, X, y_true, **kwargs)


def make_classes_aware_loss_scorer(score_func, *, classes_kwarg, response_method="predict_proba"):
    """Return a negated (loss) scorer that passes the estimator's classes to ``score_func``.

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_pred, **kwargs)``, lower is better.
    classes_kwarg : {"labels", "pos_label"}
        ``"labels"`` passes ``labels=estimator.classes_``; ``"pos_label"`` passes
        ``pos_label=estimator.classes_[1]`` for a binary estimator.
    response_method : str, default="predict_proba"

    Returns
    -------
    scorer : callable
        Use it as ``scoring=scorer`` or register it with :func:`register_scorer`.
    """
    if classes_kwarg not in ("labels", "pos_label"):
        raise ValueError(f"classes_kwarg must be 'labels' or 'pos_label'; got {classes_kwarg!r}.")
    return _ClassesAwareScorer(score_func, -1, {}, response_method, classes_kwarg)


def register_scorer(name, scorer):
    """Register ``scorer`` under ``name`` so that ``scoring=name`` works everywhere.

    Parameters
    ----------
    name : str
        The scoring string.
    scorer : callable
        A scorer object, as made by :func:`sklearn.metrics.make_scorer`.
    """
    _SKCAL_SCORERS[name] = scorer
    _sk_scorer._SCORERS[name] = scorer
    _patch_constraints()


def get_skcal_scorer_names():
    """Return the sorted names of the scorers skcal registers.

    Examples
    --------
    >>> import skcal
    >>> "scdl" in skcal.get_skcal_scorer_names()
    True
    """
    return sorted(_SKCAL_SCORERS)
