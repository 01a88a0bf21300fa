"""Scorer objects and their registration by name with scikit-learn.

scikit-learn validates ``scoring="..."`` strings against ``StrOptions`` constraints built from
``get_scorer_names()`` when each of its modules is imported. Registering a name therefore has
two parts: put the scorer in scikit-learn's private scorer dict
(``skcal._compat.sklearn_scorer_registry()``, so ``get_scorer`` finds it) and add the name
to every already-built ``StrOptions`` that lists the scorer names (so parameter validation
accepts it). To make the import order irrelevant, skcal imports the
scikit-learn modules that carry such constraints before patching them; any module imported
later builds its constraints from the (already extended) ``get_scorer_names()``.

Loss scorers negate, as in scikit-learn: ``scoring="scdl"`` and ``scoring="neg_scdl"`` both
return ``-scdl_score`` so that greater is better.

The dependency points one way: the metric modules (:mod:`skcal.scdl`, :mod:`skcal.truthful`,
...) are pure functions that know nothing of scorers; this module sits above them and builds
the one table of skcal's scorers (:data:`SCORER_TABLE`) from the catalogue's measures
(:mod:`skcal._catalog`), registered when ``skcal`` is imported (any ``import skcal...`` runs the
package ``__init__`` first).

:func:`register_scorer` refuses to replace a scikit-learn scorer (a name in
``sklearn.metrics.get_scorer_names()`` before skcal registered anything) or a name registered
earlier unless ``overwrite=True`` is passed, so a typo cannot silently change what
``scoring="accuracy"`` means for the whole process.
"""

from __future__ import annotations

import importlib
import sys

from sklearn.metrics import get_scorer_names, make_scorer

from skcal._catalog import CATALOG
from skcal._compat import (
    SKLEARN_MODULES_WITH_SCORING_CONSTRAINTS,
    SklearnScorer,
    StrOptions,
    sklearn_scorer_registry,
    validate_params,
)

__all__ = ["SCORER_TABLE", "get_skcal_scorer_names", "make_classes_aware_loss_scorer", "register_scorer"]

#: scikit-learn's own scorer names, read before skcal registers anything.
_SKLEARN_SCORER_NAMES = frozenset(get_scorer_names())

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
    for modname in SKLEARN_MODULES_WITH_SCORING_CONSTRAINTS:
        try:
            importlib.import_module(modname)
        except ImportError:  # pragma: no cover - module absent in this scikit-learn
            pass
    names = set(_SKCAL_SCORERS)
    for c in _scorer_name_options():
        c.options |= names


class _ClassesAwareScorer(SklearnScorer):
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


@validate_params(
    {
        "score_func": [callable],
        "classes_kwarg": [StrOptions({"labels", "pos_label"})],
        "response_method": [str, tuple],
    },
    prefer_skip_nested_validation=True,
)
def make_classes_aware_loss_scorer(score_func, *, classes_kwarg, response_method="predict_proba"):
    """Return a negated (loss) scorer that passes the estimator's classes to ``score_func``.

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_pred, **kwargs)``, lower is better.
    classes_kwarg : {"labels", "pos_label"}
        ``"labels"`` passes ``labels=estimator.classes_``; ``"pos_label"`` passes
        ``pos_label=estimator.classes_[1]`` for a binary estimator.
    response_method : str or tuple of str, default="predict_proba"
        The estimator method(s) whose output is scored, as in
        :func:`sklearn.metrics.make_scorer`.

    Returns
    -------
    callable
        A scorer ``scorer(estimator, X, y)``; use it as ``scoring=scorer`` or register it
        with :func:`register_scorer`.

    Examples
    --------
    >>> from skcal.scdl import scdl_score
    >>> from skcal.scorers import make_classes_aware_loss_scorer
    >>> scorer = make_classes_aware_loss_scorer(scdl_score, classes_kwarg="pos_label")
    >>> callable(scorer)
    True
    """
    return _ClassesAwareScorer(score_func, -1, {}, response_method, classes_kwarg)


@validate_params(
    {"name": [str], "scorer": [callable], "overwrite": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def register_scorer(name, scorer, *, overwrite=False):
    """Register ``scorer`` under ``name`` so that ``scoring=name`` works everywhere.

    Parameters
    ----------
    name : str
        The scoring string, non-empty.
    scorer : callable
        A scorer object, as made by :func:`sklearn.metrics.make_scorer`
        (``scorer(estimator, X, y)``, greater is better).
    overwrite : bool, default=False
        Whether ``name`` may replace a scorer that already exists: one of scikit-learn's own
        (``"accuracy"``, ...) or one registered earlier. Without it such a name is an error, so
        that a typo cannot change what an existing ``scoring=`` string means. Registering the
        very same scorer object again under its name is always allowed.

    Returns
    -------
    None
        The scorer is registered as a side effect.

    Examples
    --------
    >>> from sklearn.metrics import get_scorer_names, make_scorer
    >>> from skcal import register_scorer, scdl_score
    >>> scorer = make_scorer(scdl_score, greater_is_better=False, response_method="predict_proba")
    >>> register_scorer("my_scdl", scorer)
    >>> "my_scdl" in get_scorer_names()
    True
    >>> register_scorer("accuracy", scorer)
    Traceback (most recent call last):
    ...
    ValueError: 'accuracy' is already a scikit-learn scorer; pass overwrite=True to replace it.
    """
    if not name.strip():
        raise ValueError(f"name must be a non-empty string; got {name!r}.")
    registry = sklearn_scorer_registry()
    if name in registry and registry[name] is not scorer and not overwrite:
        owner = "a scikit-learn scorer" if name in _SKLEARN_SCORER_NAMES else "a registered scorer"
        raise ValueError(f"{name!r} is already {owner}; pass overwrite=True to replace it.")
    _SKCAL_SCORERS[name] = scorer
    registry[name] = scorer
    _patch_constraints()


@validate_params({}, prefer_skip_nested_validation=True)
def get_skcal_scorer_names():
    """Return the sorted names of the scorers registered through skcal.

    Returns
    -------
    list of str
        The names: skcal's own scorers (see :data:`SCORER_TABLE`) and any registered with
        :func:`register_scorer`.

    Examples
    --------
    >>> import skcal
    >>> "scdl" in skcal.get_skcal_scorer_names()
    True
    """
    return sorted(_SKCAL_SCORERS)


# ---------------------------------------------------------------------------------------------
# the scorer table: every scorer skcal registers, built from the catalogue
# ---------------------------------------------------------------------------------------------
#: The estimator methods whose second-order output a second-order scorer scores, the first the
#: estimator has: ``predict_second_order`` (a SecondOrderCalibratedClassifier), ``predict`` (a
#: pipeline ending in the Platt calibrator), ``transform`` (one ending in ``SechPerturber``).
_SECOND_ORDER_METHODS = ("predict_second_order", "predict", "transform")


def _scorer(m):
    if m.scorer == "second_order":
        return make_scorer(m.function, greater_is_better=False, response_method=_SECOND_ORDER_METHODS)
    return make_classes_aware_loss_scorer(m.function, classes_kwarg=m.scorer)


def _build_table():
    table = {}
    for m in CATALOG:
        if m.scorer is not None:
            scorer = _scorer(m)
            table.update({m.name: scorer, f"neg_{m.name}": scorer})
    return table


#: name -> scorer for every scorer skcal registers (the catalogue's measures with a ``scorer``).
#: All are losses, negated (greater is better); ``name`` and ``neg_name`` are the same scorer.
SCORER_TABLE = _build_table()

for _name, _scorer_object in SCORER_TABLE.items():
    register_scorer(_name, _scorer_object)
del _name, _scorer_object
