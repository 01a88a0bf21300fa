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
    0: ["skcal._compat", "skcal._constraints", "skcal._validation", "skcal._threads"],
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
        "skcal.datasets",
        "skcal._plotting",
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
        "skcal.calibration_test",
    ],
    4: [
        "skcal.perturbation",
        "skcal.ensemble",
        "skcal.platt",
        "skcal.second_order_classifier",
        "skcal.rounding",
        "skcal.temperature",
    ],
    5: ["skcal.scorers", "skcal.display", "skcal.report", "skcal.monitor"],
    6: ["skcal.cli", "skcal.dask", "skcal._io", "skcal._demo", "skcal.__main__", "skcal"],
}
LAYER_NAMES = {
    0: "validation and constraints",
    1: "data containers and kernels",
    2: "statistics",
    3: "measures",
    4: "estimators",
    5: "scorers, displays, report, monitor",
    6: "entry points (CLI, Dask, demo, the package namespace)",
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
