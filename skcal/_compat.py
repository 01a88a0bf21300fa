"""Every private scikit-learn import skcal relies on, in one place.

scikit-learn does not promise stability for these names; keeping them here means a future
rename is a one-file fix. The other modules of skcal import them from here under public names
(``fit_context``, ``SklearnScorer``), so that no module reaches into a private name of another.
"""

import functools
import inspect
import re

import numpy as np
from sklearn._config import _get_threadlocal_config
from sklearn.base import _fit_context as fit_context
from sklearn.metrics import _scorer as _sk_scorer
from sklearn.metrics._scorer import _Scorer as SklearnScorer
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    _NoneConstraint,
    make_constraint,
)
from sklearn.utils._param_validation import _ArrayLikes as _ArrayLikeConstraint
from sklearn.utils._param_validation import (
    validate_parameter_constraints as _sk_validate_parameter_constraints,
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


class _Binder:
    """Map a call's ``*args, **kwargs`` to ``{name: value}`` as ``Signature.bind`` +
    ``apply_defaults`` would, in the signature's order, without ``self``, ``cls`` and variadic
    parameters (the dict scikit-learn's ``validate_params`` checks).

    Plain signatures (no ``*args``, ``**kwargs`` or positional-only parameters) take a fast
    path; any call it cannot map (a missing or unknown argument, one given twice, too many
    positional ones) goes through ``Signature.bind``, which raises the usual ``TypeError``.
    """

    def __init__(self, func):
        self.signature = inspect.signature(func)
        params = list(self.signature.parameters.values())
        kinds = {p.kind for p in params}
        self.plain = not kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
                                  inspect.Parameter.POSITIONAL_ONLY}
        self.names = [p.name for p in params]
        self.positional = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
        self.defaults = {p.name: p.default for p in params}
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        self.ignore = {p.name for p in params if p.kind in variadic} | {"self", "cls"}
        self.kept = [name for name in self.names if name not in self.ignore]

    def __call__(self, args, kwargs):
        if self.plain and len(args) <= len(self.positional):
            values = dict(zip(self.positional, args, strict=False))  # args may be fewer
            if len(values) + len(kwargs) <= len(self.names):
                for k, v in kwargs.items():
                    if k in values or k not in self.defaults:
                        break
                    values[k] = v
                else:
                    empty = inspect.Parameter.empty
                    out = {}
                    for name in self.kept:
                        v = values[name] if name in values else self.defaults[name]
                        if v is empty:
                            break
                        out[name] = v
                    else:
                        return out
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k not in self.ignore}


def _satisfied(entry, value):
    """Whether ``value`` meets one of the compiled constraints ``entry``."""
    if value is None and entry[0]:
        return True
    if entry[1] and type(value) is np.ndarray:
        return True
    for constraint in entry[2]:
        if constraint.is_satisfied_by(value):
            return True
    return False


def validate_parameter_constraints(parameter_constraints, params, caller_name, *, compiled=None):
    """scikit-learn's ``validate_parameter_constraints``, with the constraint objects built once.

    The same checks and, for an invalid parameter, the same ``InvalidParameterError`` (raised by
    scikit-learn's own function). ``compiled`` is the constraint objects of
    ``parameter_constraints`` built beforehand (by :func:`class_constraints` for a class's
    ``_parameter_constraints``, or once by :func:`validate_params` for a function's), so that an
    object checked many times does not rebuild them; without it they are built for this call.

    Parameters
    ----------
    parameter_constraints : dict
        ``name -> list of constraints`` (or ``"no_validation"``).
    params : dict
        ``name -> value``.
    caller_name : str
        The name in the error message.
    compiled : dict or None, default=None
        What :func:`compile_constraints` made of ``parameter_constraints``.
    """
    if compiled is None:
        compiled = compile_constraints(parameter_constraints)
    for name, value in params.items():
        entry = compiled.get(name)
        if entry is not None and not _satisfied(entry, value):
            _sk_validate_parameter_constraints(parameter_constraints, params, caller_name=caller_name)


def class_constraints(cls):
    """The constraint objects of ``cls._parameter_constraints``, built once and kept on the class.

    Kept as the class attribute ``_compiled_constraints`` beside the dict they were built from,
    and rebuilt when a subclass declares its own dict.
    """
    source = cls._parameter_constraints
    kept = cls.__dict__.get("_compiled_constraints")
    if kept is None or kept[0] is not source:
        kept = (source, compile_constraints(source))
        cls._compiled_constraints = kept
    return kept[1]


def compile_constraints(parameter_constraints):
    """``name -> (None allowed, ndarray allowed, constraint objects)`` of a constraints dict."""
    out = {}
    for name, constraints in parameter_constraints.items():
        if isinstance(constraints, str) and constraints == "no_validation":
            continue
        objs = [make_constraint(c) for c in constraints]
        out[name] = (
            any(isinstance(c, _NoneConstraint) for c in objs),
            any(isinstance(c, _ArrayLikeConstraint) for c in objs),
            objs,
        )
    return out


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params`` decorator, with the same checks at a fraction of the cost.

    Behaves as :func:`sklearn.utils._param_validation.validate_params`: the function gets
    ``_skl_parameter_constraints``; every argument is checked against its constraints unless
    scikit-learn's configuration says ``skip_parameter_validation``; an invalid one raises the
    very same ``InvalidParameterError`` (the message is made by scikit-learn's own
    ``validate_parameter_constraints``); nested validation is skipped during the call when
    ``prefer_skip_nested_validation`` is true; and an ``InvalidParameterError`` raised inside has
    the callee's name replaced by the function's. What it saves per call (measured in
    ``docs/benchmarks/speed_overhead.md``): ``inspect.signature`` and ``Signature.bind`` per call,
    every constraint object rebuilt per call, ``config_context``. The signature and the
    constraint objects are built once (at the first call), arguments are mapped by a
    precomputed table, ``None`` and ndarray values meet their ``None`` / ``"array-like"``
    constraint without a call, and the flag that skips nested validation is set in
    scikit-learn's thread-local configuration directly (as ``config_context`` sets it, and
    reset afterwards).
    """

    def decorator(func):
        func._skl_parameter_constraints = parameter_constraints
        state = {}
        caller = func.__qualname__

        def check(args, kwargs):
            if not state:  # built at the first call, not at import
                state["binder"] = _Binder(func)
                state["compiled"] = compile_constraints(parameter_constraints)
            params = state["binder"](args, kwargs)
            validate_parameter_constraints(parameter_constraints, params, caller, compiled=state["compiled"])

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            config = _get_threadlocal_config()
            if config["skip_parameter_validation"]:
                return func(*args, **kwargs)
            check(args, kwargs)
            config["skip_parameter_validation"] = bool(prefer_skip_nested_validation)
            try:
                return func(*args, **kwargs)
            except InvalidParameterError as e:
                # a wrapper delegating validation to an estimator: the function's name, not the
                # estimator's, in the message (as scikit-learn's decorator does)
                msg = re.sub(r"parameter of \w+ must be", f"parameter of {caller} must be", str(e))
                raise InvalidParameterError(msg) from e
            finally:
                config["skip_parameter_validation"] = False

        return wrapper

    return decorator


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
    "class_constraints",
    "compile_constraints",
    "validate_params",
]
