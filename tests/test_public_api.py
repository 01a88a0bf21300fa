"""The public face of skcal follows scikit-learn's conventions (issue 13).

- every estimator in ``skcal.__all__`` has a keyword-only ``__init__`` (a meta-estimator may
  take its ``estimator`` positionally, as scikit-learn's own do), ``_parameter_constraints``
  covering every parameter, and is run through ``parametrize_with_checks`` in some test module;
- every public function in ``skcal.__all__`` declares its arguments with scikit-learn's
  ``validate_params`` (visible as the ``_skl_parameter_constraints`` that scikit-learn sets on
  the wrapped function), covering every parameter.

A case that fails because of a file another engineer owns is marked
``xfail(strict=True, reason="<file>: <what>; owner: <branch>")``: when the fix is merged the case
passes, the strict mark turns it into a failure, and the mark is removed.
"""

import inspect
import re
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

import skcal

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def _public():
    for name in sorted(skcal.__all__):
        if not name.startswith("_"):
            yield name, getattr(skcal, name)


ESTIMATORS = [name for name, obj in _public() if inspect.isclass(obj) and issubclass(obj, BaseEstimator)]
FUNCTIONS = [name for name, obj in _public() if inspect.isfunction(obj)]


def _xfail(file, what, owner):
    return pytest.mark.xfail(strict=True, reason=f"{file}: {what}; owner: {owner}")


_NO_VALIDATE_PARAMS = "no validate_params"
_PENDING_FUNCTIONS = {}
_PENDING_KEYWORD_ONLY = {}
_PENDING_COMMON_CHECKS = {}


def _params(names, pending):
    return [pytest.param(n, marks=pending[n]) if n in pending else n for n in names]


def test_the_public_api_has_estimators_and_functions():
    expected = {"SechPerturber", "EnsembleMoments", "SoftBinRounder", "SecondOrderPlattCalibrator"}
    assert expected <= set(ESTIMATORS)
    assert {"scdl_score", "fit_temperature", "register_scorer"} <= set(FUNCTIONS)
    # the Chebyshev engine is an internal of ce2_score / SecondOrderPlattCalibrator
    for internal in ("ChebyshevMoments", "ChebyshevRidge", "auto_degree", "degree_cap"):
        assert internal not in skcal.__all__


def test_pending_marks_name_public_callables():
    # a stale entry (a renamed or removed name) would hide nothing and must be dropped
    for table in (_PENDING_FUNCTIONS,):
        assert set(table) <= set(FUNCTIONS)
    for table in (_PENDING_KEYWORD_ONLY, _PENDING_COMMON_CHECKS):
        assert set(table) <= set(ESTIMATORS)


@pytest.mark.parametrize("name", _params(ESTIMATORS, _PENDING_KEYWORD_ONLY))
def test_estimator_init_is_keyword_only(name):
    sig = inspect.signature(getattr(skcal, name).__init__)
    positional = [
        p.name
        for p in list(sig.parameters.values())[1:]
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    # scikit-learn's meta-estimators take the wrapped estimator positionally (FrozenEstimator,
    # SelfTrainingClassifier, CalibratedClassifierCV); every other parameter is keyword-only
    assert positional in ([], ["estimator"]), f"{name}.__init__ has positional parameters {positional}"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_declares_parameter_constraints(name):
    cls = getattr(skcal, name)
    constraints = cls.__dict__.get("_parameter_constraints")
    assert isinstance(constraints, dict), f"{name} has no _parameter_constraints of its own"
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    assert params <= set(constraints), f"{name}: no constraint for {sorted(params - set(constraints))}"


def _common_check_calls():
    """The argument text of every ``parametrize_with_checks(`` / ``check_estimator(`` call in tests/."""
    calls = []
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\b(parametrize_with_checks|check_estimator)\(", text):
            rest = text[match.end() :]
            end = re.search(r"\n(def|class) ", rest)
            calls.append(rest[: end.start() if end else len(rest)])
    return calls


@pytest.mark.parametrize("name", _params(ESTIMATORS, _PENDING_COMMON_CHECKS))
def test_estimator_runs_the_common_checks(name):
    pattern = re.compile(r"\b" + name + r"\(")
    assert any(pattern.search(call) for call in _common_check_calls()), (
        f"{name} is not in any parametrize_with_checks([...]) of tests/test_*.py"
    )


@pytest.mark.parametrize("name", _params(FUNCTIONS, _PENDING_FUNCTIONS))
def test_function_uses_validate_params(name):
    func = getattr(skcal, name)
    inner = getattr(func, "__wrapped__", None)
    constraints = getattr(inner, "_skl_parameter_constraints", None)
    assert isinstance(constraints, dict), (
        f"skcal.{name} does not declare its arguments with validate_params (see skcal/_constraints.py)"
    )
    params = set(inspect.signature(inner).parameters) - {"args", "kwargs"}
    assert params <= set(constraints), f"{name}: no constraint for {sorted(params - set(constraints))}"


# ---------------------------------------------------------------------------------------------
# every public module, not only the top-level namespace (issue 20)
# ---------------------------------------------------------------------------------------------
def _public_modules():
    import pkgutil

    names = ["skcal"]
    for info in pkgutil.walk_packages(skcal.__path__, "skcal."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return names


def _exported():
    """``(path, object)`` for every function and class in the ``__all__`` of a public module."""
    import importlib

    seen, out = set(), []
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if id(obj) in seen or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            seen.add(id(obj))
            out.append((f"{name}.{attr}", obj))
    return out


def _declared(func):
    """The constraints ``validate_params`` declared for ``func`` (``None`` without the decorator)."""
    inner = getattr(func, "__wrapped__", None)
    return getattr(inner, "_skl_parameter_constraints", None), inner or func


def _parameters(func):
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    params = inspect.signature(func).parameters.items()
    return {n for n, p in params if n not in ("self", "cls") and p.kind not in skip}


EXPORTED_FUNCTIONS = [path for path, obj in _exported() if inspect.isfunction(obj)]


def _methods():
    """``(path, class, name, function)`` of every public method (and ``__init__``) of the exported
    classes that are not estimators (those declare ``_parameter_constraints``, checked by ``fit``)."""
    out = []
    for path, cls in _exported():
        if not inspect.isclass(cls) or issubclass(cls, BaseEstimator):
            continue
        for klass in reversed(cls.__mro__):  # a subclass's own method replaces its parent's below
            if not klass.__module__.startswith("skcal"):
                continue
            for name, value in vars(klass).items():
                if name.startswith("_") and name != "__init__":
                    continue
                func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                if inspect.isfunction(func) and _parameters(_declared(func)[1]):
                    out.append((f"{path}.{name}", cls, name, func))
    return sorted({p: (p, c, n, f) for p, c, n, f in out}.values(), key=lambda r: r[0])


#: result containers: dataclasses that the functions build, whose fields are documented, not checked
RESULTS = {
    "SCDLCurve",
    "CE2Result",
    "CalibrationTestResult",
    "ReliabilityCurve",
    "SmoothReliabilityCurve",
    "MeasureSpec",
}
_PENDING_METHODS: dict = {}
METHODS = {path: (cls, name, func) for path, cls, name, func in _methods() if cls.__name__ not in RESULTS}


@pytest.mark.parametrize("path", EXPORTED_FUNCTIONS)
def test_every_public_function_of_every_public_module_uses_validate_params(path):
    obj = dict(_exported())[path]
    constraints, inner = _declared(obj)
    assert isinstance(constraints, dict), f"{path} does not declare its arguments with validate_params"
    missing = _parameters(inner) - set(constraints)
    assert not missing, f"{path}: no constraint for {sorted(missing)}"


@pytest.mark.parametrize("path", _params(sorted(METHODS), _PENDING_METHODS))
def test_every_public_method_is_declared(path):
    cls, name, func = METHODS[path]
    constraints, inner = _declared(func)
    if constraints is None and name == "__init__":
        constraints = getattr(cls, "_parameter_constraints", None)
    assert isinstance(constraints, dict), (
        f"{path} declares its arguments neither with validate_params nor in _parameter_constraints"
    )
    missing = _parameters(inner) - set(constraints)
    assert not missing, f"{path}: no constraint for {sorted(missing)}"


def test_the_issue_20_functions_are_declared():
    from skcal import dask as skcal_dask
    from skcal import stats

    for func in (
        skcal_dask.evaluate,
        skcal_dask.evaluate_dataframe,
        skcal_dask.fit_second_order_calibrator,
        stats.from_state,
        stats.merge_all,
        stats.quantile_edges,
        stats.quantile_thresholds,
    ):
        assert isinstance(_declared(func)[0], dict), func.__name__
