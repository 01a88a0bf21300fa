"""The package's layers, read from its source: no import circle, no upward import.

``LAYERS`` is the map that ``docs/architecture.md`` explains. A module may import modules of its
own layer or of a lower one, at module level or inside a function; an import inside a function is
allowed only where it keeps an optional dependency optional, with a comment on its line or the
line above naming that dependency. Imports count with function bodies included, since an import
inside a function hides a circle but does not remove it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skcal"

#: layer number -> module name prefixes (a prefix names a module and every module below it)
LAYERS = {
    0: [
        "skcal._compat",
        "skcal._constraints",
        "skcal._validation",
        "skcal._io",
        "skcal._docstrings",
        "skcal._threads",
    ],
    1: [
        "skcal.votes",
        "skcal.sech",
        "skcal.chebyshev",
        "skcal.binning",
        "skcal._classwise_kernel",
        "skcal._cutoff_kernel",
        "skcal._resampling_kernel",
        "skcal._replicate_kernel",
        "skcal._scdl_kernel",
        "skcal._compiled",
        "skcal.datasets",
        "skcal._plotting",
        "skcal._html",
        "skcal._labels",
        "skcal._columns",
    ],
    2: ["skcal.stats"],
    3: [
        "skcal.scdl",
        "skcal.smooth_ece",
        "skcal.lipschitz",
        "skcal.cutoff",
        "skcal.binned_ece",
        "skcal.binned_measures",
        "skcal.ks_calibration_error",
        "skcal.reliability_curve",
        "skcal.truthful",
        "skcal.ce2",
        "skcal.ce2_baselines",
    ],
    4: ["skcal._catalog", "skcal.calibration_test"],
    5: [
        "skcal.perturbation",
        "skcal.ensemble",
        "skcal.platt",
        "skcal.second_order_classifier",
        "skcal.rounding",
        "skcal.temperature",
    ],
    6: ["skcal.scorers", "skcal.display", "skcal.report", "skcal.monitor"],
    7: ["skcal.cli", "skcal.dask", "skcal._dask_report", "skcal._demo", "skcal.__main__", "skcal"],
}
LAYER_NAMES = {
    0: "validation, constraints and files",
    1: "data containers and kernels",
    2: "statistics",
    3: "measures",
    4: "the catalogue of measures, and the calibration test that reads it",
    5: "estimators",
    6: "scorers, displays, report, monitor",
    7: "entry points (CLI, Dask, demo, the package namespace)",
}
#: Optional dependencies a function-level import may keep optional.
OPTIONAL = ("matplotlib", "dask", "distributed", "numba", "pyarrow")


def _modules():
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods[name] = path
    return mods


MODULES = _modules()


def layer_of(module):
    best, depth = None, -1
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = layer, prefix.count(".")
    return best


def _targets(cur, node):
    """The skcal modules an import statement loads (``from pkg import mod`` names the module)."""
    is_pkg = MODULES[cur].name == "__init__.py"
    if isinstance(node, ast.Import):
        return _not_own_package(cur, [a.name for a in node.names if a.name in MODULES])
    base = node.module or ""
    if node.level:
        parts = cur.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([base] if base else []))
    out = []
    for a in node.names:
        sub = f"{base}.{a.name}"
        if sub in MODULES:
            out.append(sub)
        elif base in MODULES:
            out.append(base)
    return _not_own_package(cur, out)


def _not_own_package(cur, targets):
    # a package's own submodules import their package's __init__ implicitly; that is not an edge
    # (for ``import skcal`` as for ``from skcal import x``, as ../shared/tools/import_layers.py counts)
    return [
        t for t in targets if t != cur and not (MODULES[t].name == "__init__.py" and cur.startswith(t + "."))
    ]


def _imports():
    """(importer, imported, line, inside a function, the source lines) for every skcal import."""
    out = []
    for mod, path in MODULES.items():
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        in_fn = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_fn.update(id(s) for s in ast.walk(node) if isinstance(s, (ast.Import, ast.ImportFrom)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(mod, node):
                    out.append((mod, t, node.lineno, id(node) in in_fn, lines))
    return out


IMPORTS = _imports()


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if layer_of(m) is None]
    assert not missing, (
        f"modules without a layer in LAYERS (add them, and to docs/architecture.md): {missing}"
    )


def test_no_upward_import():
    bad = [
        f"{PACKAGE.parent / MODULES[a].relative_to(PACKAGE.parent)}:{line} {a} (layer {layer_of(a)}, "
        f"{LAYER_NAMES[layer_of(a)]}) imports {b} (layer {layer_of(b)}, {LAYER_NAMES[layer_of(b)]})"
        for a, b, line, _, _ in IMPORTS
        if layer_of(a) is not None and layer_of(b) is not None and layer_of(b) > layer_of(a)
    ]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_circle():
    edges = {m: set() for m in MODULES}
    for a, b, *_ in IMPORTS:
        edges[a].add(b)
    # Tarjan's strongly connected components
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in MODULES:
        if v not in index:
            visit(v)
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_function_level_imports_only_keep_optional_dependencies_optional():
    pattern = re.compile(r"#.*optional.*\b(" + "|".join(OPTIONAL) + r")\b|#.*\b(" + "|".join(OPTIONAL)
                         + r")\b.*optional", re.IGNORECASE)
    bad = []
    for a, b, line, inner, lines in IMPORTS:
        if not inner:
            continue
        here = lines[line - 1]
        above = lines[line - 2] if line >= 2 else ""
        if not (pattern.search(here) or pattern.search(above)):
            bad.append(f"{MODULES[a]}:{line} imports {b} inside a function")
    assert not bad, (
        "a function-level import of skcal needs a comment naming the optional dependency it keeps "
        "optional (" + ", ".join(OPTIONAL) + "):\n" + "\n".join(bad)
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_layer_is_documented(module):
    doc = PACKAGE.parent / "docs" / "architecture.md"
    if not doc.exists():
        pytest.fail("docs/architecture.md is missing")
    prefix = max(
        (p for ps in LAYERS.values() for p in ps if module == p or module.startswith(p + ".")),
        key=lambda p: p.count("."),
    )
    assert f"`{prefix}`" in doc.read_text(), f"docs/architecture.md does not name `{prefix}`"


#: private names imported from another module that are still waiting for their owner's change:
#: (importing module, imported module, name) -> why; a stale entry fails the test below
PRIVATE_IMPORTS_PENDING: dict = {}


def _private_name_imports():
    """(importer, module, name, line) for ``from skcal.x import _name`` where ``_name`` is no module."""
    out = []
    for mod, path in MODULES.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith("skcal"):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and f"{base}.{name}" not in MODULES:
                    out.append((mod, base, name, node.lineno))
    return out


def test_no_private_name_is_imported_from_another_module():
    # a name another module uses is public (documented in the lower layer) or stays in its module;
    # a private *module* behind a public package __init__ (report._figures) is the layout, not this
    found = _private_name_imports()
    bad = [
        f"{MODULES[a]}:{line} imports {b}.{n}"
        for a, b, n, line in found
        if (a, b, n) not in PRIVATE_IMPORTS_PENDING
    ]
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)
    stale = set(PRIVATE_IMPORTS_PENDING) - {(a, b, n) for a, b, n, _ in found}
    assert not stale, f"PRIVATE_IMPORTS_PENDING entries that no longer occur (remove them): {sorted(stale)}"


# ---------------------------------------------------------------------------------------------
# one face: other layers use a package with one public face through that face only
# ---------------------------------------------------------------------------------------------
#: Packages whose private modules (``pkg._x``) only the package itself imports.
ONE_FACE = ("skcal.stats",)
#: (importing module, private module, name) still waiting for its change -> why; a stale entry
#: fails the test below
ONE_FACE_PENDING: dict = {}


def _private_module_imports(sources):
    """(importer, private module, name, line) for imports of ``pkg._x`` from outside ``pkg``.

    ``sources`` maps module names to their source text. Relative imports are resolved; ``import
    pkg._x`` counts as well as ``from pkg._x import name`` and ``from pkg import _x``.
    """
    out = []
    for mod, text in sources.items():
        is_pkg = mod in MODULES and MODULES[mod].name == "__init__.py"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                pairs = [(a.name, "*") for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                pairs = [(base, a.name) for a in node.names]
                pairs += [(f"{base}.{a.name}", "*") for a in node.names if a.name.startswith("_")]
            else:
                continue
            for target, name in pairs:
                for pkg in ONE_FACE:
                    inside = mod == pkg or mod.startswith(pkg + ".")
                    rest = target[len(pkg) + 1 :] if target.startswith(pkg + ".") else ""
                    if not inside and rest.startswith("_"):
                        out.append((mod, target, name, node.lineno))
    return out


def test_no_private_module_of_a_one_face_package_is_imported_from_outside():
    # what other layers use from skcal.stats is public there (documented, in its __all__)
    found = _private_module_imports({m: p.read_text() for m, p in MODULES.items()})
    bad = [
        f"{MODULES[a]}:{line} imports {t}:{n}" for a, t, n, line in found if (a, t, n) not in ONE_FACE_PENDING
    ]
    assert not bad, "private modules of " + ", ".join(ONE_FACE) + " imported from outside:\n" + "\n".join(bad)
    stale = set(ONE_FACE_PENDING) - {(a, t, n) for a, t, n, _ in found}
    assert not stale, f"ONE_FACE_PENDING entries that no longer occur (remove them): {sorted(stale)}"


def test_the_one_face_check_can_fail():
    planted = {
        "skcal.cutoff": "from skcal.stats._cutoff import running_sum_extremes\n",
        "skcal.smooth_ece": "from .stats import _smooth_ece\n",
        "skcal.lipschitz": "import skcal.stats._lipschitz\n",
        "skcal.stats._scdl": "from skcal.stats._base import kish_size\n",  # inside: allowed
        "skcal.scdl": "from skcal.stats import ScdlStatistics\n",  # the face: allowed
    }
    found = {(a, t, n) for a, t, n, _ in _private_module_imports(planted)}
    assert found == {
        ("skcal.cutoff", "skcal.stats._cutoff", "running_sum_extremes"),
        ("skcal.smooth_ece", "skcal.stats._smooth_ece", "*"),
        ("skcal.lipschitz", "skcal.stats._lipschitz", "*"),
    }


# ---------------------------------------------------------------------------------------------
# statistics own their state: no module outside skcal.stats writes a state dict
# ---------------------------------------------------------------------------------------------
#: (module, function) -> why a state dict is still written there; a stale entry fails the test
STATE_WRITES_PENDING: dict = {
}
#: The keys of a statistics state (``get_state()``) a module may not write.
STATE_KEYS = ("arrays", "n_updates")


def _writes_state(node):
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    for t in targets:
        if isinstance(t, ast.Attribute) and t.attr == "_stats":
            return True
        if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value in STATE_KEYS:
            return True
    return isinstance(node, ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value in STATE_KEYS for k in node.keys
    )


def _state_writes():
    """(module, enclosing function, line) of every write of a state outside ``skcal.stats``.

    A write is an assignment to an object's ``_stats``, an assignment to a subscript ``"arrays"``
    or ``"n_updates"`` (a state's), or a dict display with such a key.
    """
    out = []
    for mod, path in MODULES.items():
        if mod == "skcal.stats" or mod.startswith("skcal.stats."):
            continue
        tree = ast.parse(path.read_text(), str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in ast.walk(tree):
            if _writes_state(node):
                inner = [f for f in functions if f.lineno <= node.lineno <= f.end_lineno]
                name = max(inner, key=lambda f: f.lineno).name if inner else "<module>"
                out.append((mod, name, node.lineno))
    return out


def test_no_state_dict_is_written_outside_stats():
    # a statistics class owns its layout: others build objects with from_sums, or from_state of
    # a state get_state made, so that a change of a layout cannot break code far away
    found = _state_writes()
    bad = [f"{MODULES[m]}:{line} ({fn})" for m, fn, line in found if (m, fn) not in STATE_WRITES_PENDING]
    assert not bad, "state dicts written outside skcal.stats (use from_sums):\n" + "\n".join(bad)
    stale = set(STATE_WRITES_PENDING) - {(m, fn) for m, fn, _ in found}
    assert not stale, f"STATE_WRITES_PENDING entries that no longer occur (remove them): {sorted(stale)}"


# ---------------------------------------------------------------------------------------------
# one home per measure: every measure is in the catalogue, and every table is built from it
# ---------------------------------------------------------------------------------------------
#: Public functions of the measure modules that are not measures of predictions against labels.
NOT_MEASURES = {
    "skcal.scdl.scdl_curve": "the whole SCDL search (scdl_score is the measure)",
    "skcal.scdl.default_max_bins": "SCDL's grid rule",
    "skcal.scdl.theory_max_bins": "SCDL's grid rule",
    "skcal.scdl.max_supported_bins": "SCDL's grid rule",
    "skcal.binned_ece.binned_statistics": "the per-bin sums behind the binned measures",
    "skcal.reliability_curve.reliability_curve": "a curve, not a number",
    "skcal.reliability_curve.smooth_reliability_curve": "a curve, not a number",
    "skcal.truthful.lince_score": "LinCE of any linear property u against phi(y): not labels and predictions",
    "skcal.truthful.truthful_decomposition": "a decomposition of the truthful errors, not one number",
    "skcal.ce2.ce2_details": "CE2 with its fitted functions (ce2_score is the measure)",
    "skcal.ce2_baselines.baseline_ce2": "CE2's baseline estimators (ce2_score(method=...))",
    "skcal.ce2_baselines.baseline_predict": "the baselines' fitted functions",
}


def test_every_measure_is_in_the_catalogue():
    import importlib
    import inspect

    from skcal._catalog import CATALOG

    functions = [m.function for m in CATALOG if m.function is not None]
    missing = []
    for mod in LAYERS[3]:
        module = importlib.import_module(mod)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not inspect.isfunction(obj) or f"{mod}.{name}" in NOT_MEASURES:
                continue
            if not any(obj is f for f in functions):
                missing.append(f"{mod}.{name}")
    assert not missing, f"measures not in skcal._catalog.CATALOG (add one, or to NOT_MEASURES): {missing}"
    split = [p.rsplit(".", 1) for p in NOT_MEASURES]
    stale = [f"{m}.{n}" for m, n in split if not hasattr(importlib.import_module(m), n)]
    assert not stale, f"NOT_MEASURES entries that no longer exist: {stale}"


def test_every_table_of_measures_is_the_catalogues():
    import importlib

    from skcal import scorers
    from skcal._catalog import CATALOG
    from skcal.report import _kinds
    from skcal.report._outofcore import OUT_OF_CORE_METRICS

    ct = importlib.import_module("skcal.calibration_test")
    names = {m.name for m in CATALOG}
    assert {n.removeprefix("neg_") for n in scorers.SCORER_TABLE} == {m.name for m in CATALOG if m.scorer}
    assert set(ct.MEASURES) == {m.name for m in CATALOG if m.calibration_test}
    assert set(OUT_OF_CORE_METRICS) == {m.name for m in CATALOG if m.out_of_core}
    for kind in _kinds.KINDS:
        for name, metric in kind().catalog().items():
            assert metric.measure is not None and metric.measure.name == name in names, (kind, name)
    pytest.importorskip("dask")
    from skcal import dask as skdask

    assert set(skdask.MEASURES) == {m.name for m in CATALOG if m.dask}


#: the size limits of issue 39: a module a reader can hold, a function a reader can follow
MAX_MODULE_LINES = 1000
MAX_FUNCTION_BODY_LINES = 120


def _body_lines(node):
    """Lines of a function's body, its docstring aside."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]
    if not body:
        return 0
    return body[-1].end_lineno - body[0].lineno + 1


def test_no_module_is_over_the_line_limit():
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {long}"


def test_no_function_body_is_over_the_line_limit():
    long = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := _body_lines(node)) > MAX_FUNCTION_BODY_LINES:
                    long[f"{p.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}"] = n
    assert not long, f"function bodies over {MAX_FUNCTION_BODY_LINES} lines: {long}"


def test_the_line_limit_checks_can_fail():
    tree = ast.parse("def f():\n    '''doc'''\n" + "    x = 1\n" * 121)
    assert _body_lines(tree.body[0]) == 121
