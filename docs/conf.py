"""Sphinx configuration of the skcal documentation.

Build: ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors; tests/test_docs.py
runs exactly this). Pages are Markdown (MyST); the API reference is generated from the
numpydoc docstrings of every name in ``skcal.__all__`` at build time, so it stays complete as
modules are added; the examples in ``docs/examples/*.py`` are run by matplotlib's plot
directive, which embeds the figures they draw.
"""

import os
import re
import sys
from pathlib import Path

from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # document the checkout, not an installed copy
os.environ.setdefault("MPLBACKEND", "Agg")

import skcal  # noqa: E402

project = "skcal"
author = "the skcal developers"
copyright = "the skcal developers"
release = version = skcal.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_title = f"skcal {release}"

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

plot_basedir = str(HERE)
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]
plot_rcparams = {"figure.max_open_warning": 0}


# ---------------------------------------------------------------------------------------------
# The API reference, generated from skcal.__all__
# ---------------------------------------------------------------------------------------------
GENERATED = HERE / "generated"


def _public_names():
    names = sorted({n for n in skcal.__all__ if not n.startswith("_")}, key=str.lower)
    classes = [n for n in names if isinstance(getattr(skcal, n), type)]
    functions = [n for n in names if callable(getattr(skcal, n)) and n not in classes]
    return classes, functions


def _write_stubs():
    """One page per public name (rewritten on every build; the folder is not versioned)."""
    GENERATED.mkdir(exist_ok=True)
    classes, functions = _public_names()
    wanted = set()
    for name in classes + functions:
        directive = "autoclass" if name in classes else "autofunction"
        title = f"skcal.{name}"
        text = f"{title}\n{'=' * len(title)}\n\n.. currentmodule:: skcal\n\n.. {directive}:: {name}\n"
        path = GENERATED / f"skcal.{name}.rst"
        wanted.add(path.name)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for stale in GENERATED.glob("skcal.*.rst"):
        if stale.name not in wanted:
            stale.unlink()


_write_stubs()


def _summary(obj):
    """The first line of a docstring (the whole line: sentence splitting breaks inline literals)."""
    doc = (obj.__doc__ or "").strip().splitlines()
    return doc[0].strip() if doc else ""


class SkcalAPIDirective(SphinxDirective):
    """``skcal-api KIND``: a table of the classes or functions in ``skcal.__all__``.

    Each row links the name to its generated page (see ``_write_stubs``) and shows the first
    line of its docstring; a hidden toctree puts the pages in the navigation.
    """

    required_arguments = 1
    has_content = False

    def run(self):
        from docutils import nodes

        classes, functions = _public_names()
        kind = self.arguments[0]
        if kind not in ("classes", "functions"):
            raise self.error(f"skcal-api takes 'classes' or 'functions', not {kind!r}")
        names = classes if kind == "classes" else functions
        role = "class" if kind == "classes" else "func"
        lines = [".. list-table::", "   :widths: 35 65", ""]
        for n in names:
            lines += [f"   * - :{role}:`~skcal.{n}`", f"     - {_summary(getattr(skcal, n))}"]
        lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   generated/skcal.{n}" for n in names]
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source="skcal.__all__"), self.content_offset, node)
        return node.children


# ---------------------------------------------------------------------------------------------
# Docstring hygiene
# ---------------------------------------------------------------------------------------------
_QUOTED = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\\\w])([A-Za-z][A-Za-z0-9_]*[A-Za-z0-9])_(?=$|[\s,.;:)\]}/])")


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    """Escape scikit-learn-style names such as ``n_features_in_`` written without backticks.

    In reStructuredText ``word_`` is a hyperlink reference, so a fitted-attribute name in plain
    docstring text becomes an "Unknown target name" error. Runs after numpydoc; text inside
    backticks and doctest lines is left alone.
    """
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith((">>>", "...")):
            continue
        parts = _QUOTED.split(line)
        for k in range(0, len(parts), 2):
            parts[k] = _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[k])
        lines[i] = "".join(parts)


def _skip_member(app, what, name, obj, skip, options):
    """Skip the metadata-routing setters scikit-learn generates (``set_fit_request`` etc.)."""
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    app.add_directive("skcal-api", SkcalAPIDirective)
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, priority=600)
    app.connect("autodoc-skip-member", _skip_member)
