"""skcal._compat: scikit-learn's parameter checks with the constraint objects built once."""

from numbers import Integral

import pytest
from sklearn.utils._param_validation import Interval, InvalidParameterError

from skcal._compat import (
    class_constraints,
    compile_constraints,
    validate_parameter_constraints,
    validate_params,
)


class _Owner:
    _parameter_constraints = {"n": [Interval(Integral, 1, None, closed="left")], "name": [str, None]}


class _Child(_Owner):
    _parameter_constraints = {"n": [Interval(Integral, 5, None, closed="left")]}


def test_class_constraints_are_built_once_per_class_and_kept_on_it():
    first = class_constraints(_Owner)
    assert class_constraints(_Owner) is first
    assert _Owner.__dict__["_compiled_constraints"][0] is _Owner._parameter_constraints
    child = class_constraints(_Child)  # its own dict: its own objects, not the parent's
    assert child is not first and set(child) == {"n"}
    assert _Child.__dict__["_compiled_constraints"][0] is _Child._parameter_constraints


def test_a_class_that_declares_new_constraints_gets_them_checked():
    class Owner:
        _parameter_constraints = {"n": [Interval(Integral, 1, None, closed="left")]}

    validate_parameter_constraints(
        Owner._parameter_constraints, {"n": 3}, "Owner", compiled=class_constraints(Owner)
    )
    Owner._parameter_constraints = {"n": [Interval(Integral, 5, None, closed="left")]}
    with pytest.raises(InvalidParameterError, match="'n' parameter of Owner"):
        validate_parameter_constraints(
            Owner._parameter_constraints, {"n": 3}, "Owner", compiled=class_constraints(Owner)
        )


@pytest.mark.parametrize("compiled", [None, "built"])
def test_the_same_error_as_scikit_learn_with_or_without_built_constraints(compiled):
    constraints = _Owner._parameter_constraints
    built = compile_constraints(constraints) if compiled else None
    validate_parameter_constraints(constraints, {"n": 2, "name": None}, "f", compiled=built)
    with pytest.raises(
        InvalidParameterError, match=r"The 'name' parameter of f must be an instance of 'str' or None"
    ):
        validate_parameter_constraints(constraints, {"n": 2, "name": 3}, "f", compiled=built)


def test_a_decorated_function_checks_every_call():
    @validate_params({"n": [Interval(Integral, 1, None, closed="left")]}, prefer_skip_nested_validation=True)
    def f(n):
        return n

    assert f(1) == 1 and f(n=2) == 2
    for _ in range(2):  # the first call builds the constraints, the second uses them
        with pytest.raises(InvalidParameterError, match="'n' parameter of .*f must be"):
            f(0)
