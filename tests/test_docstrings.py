"""numpydoc validation of every public name, as scikit-learn's ``test_docstrings.py`` does.

Every name in ``skcal.__all__`` (functions and classes) and every public method a skcal class
defines is validated with :func:`numpydoc.validate.validate`; none may report the error codes
of the developer guide: GL01-GL03, GL06-GL08 (layout), PR01-PR10 (every parameter documented
individually, with a type and a description), RT01-RT05 (a Returns section with a type and a
description), SS01-SS06 (the summary line) and YD01 (Yields).

A name whose docstring cannot be fixed yet is listed in ``PENDING`` with the precise reason (the
file and the numpydoc codes it fails) and marked ``xfail(strict=True, reason=...)``; once fixed
it passes, the strict mark fails, and the entry is removed.
"""

import importlib.util
import inspect
import re

import pytest

import skcal

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpydoc") is None, reason="numpydoc is not installed"
)

CODES = re.compile(r"^(GL0[1-3]|GL0[6-8]|PR(0[1-9]|10)|RT0[1-5]|SS0[1-6]|YD01)$")

#: public name -> why its docstring still fails ("skcal/<file>.py: <codes and what is missing>");
#: fix the docstring, then delete the entry
PENDING: dict = {}


def public_names():
    """Import paths of every public function, class and public method a skcal class defines."""
    paths = []
    for name in sorted(skcal.__all__):
        if name.startswith("_"):
            continue
        obj = getattr(skcal, name)
        if not (inspect.isclass(obj) or callable(obj)):
            continue
        path = f"{obj.__module__}.{obj.__qualname__}"
        paths.append(path)
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if callable(value) or isinstance(value, (classmethod, staticmethod)):
                    paths.append(f"{path}.{attr}")
    return paths


def _param(path):
    if path not in PENDING:
        return path
    return pytest.param(path, marks=pytest.mark.xfail(strict=True, reason=PENDING[path]))


def test_pending_entries_are_public_names():
    assert set(PENDING) <= set(public_names())
    assert all(isinstance(r, str) and r.startswith("skcal/") for r in PENDING.values())


@pytest.mark.parametrize("path", [_param(p) for p in public_names()])
def test_docstring(path):
    from numpydoc.validate import validate

    errors = [f"{code}: {msg}" for code, msg in validate(path)["errors"] if CODES.match(code)]
    assert not errors, f"{path}:\n" + "\n".join(errors)
