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

__all__ = ["register_scorer", "get_skcal_scorer_names"]

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
