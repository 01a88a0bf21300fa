"""Sphinx configuration of the skcal documentation.

Build: ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors; tests/test_docs.py
runs exactly this). Pages are Markdown (MyST) with the pydata-sphinx-theme.

- API reference (``api.md``): grouped by task; each group is an ``autosummary`` list written in
  ``api.md`` itself, and autosummary generates one page per name into ``docs/generated/`` (not
  versioned). ``tests/test_docs.py::test_api_reference_lists_every_public_name`` checks that every
  name of ``skcal.__all__`` is listed there exactly once.
- Examples: sphinx-gallery runs the ``plot_*.py`` scripts of the top-level ``examples/`` folder
  and builds ``docs/auto_examples/`` (not versioned): thumbnails, downloadable scripts and
  notebooks, run times.
- CLI reference (``cli.md``): sphinx-argparse renders the live parser
  ``skcal.cli._build_parser()``, so new flags appear without editing the page.
- Intersphinx (scikit-learn, numpy, scipy, python): the inventories are downloaded at build
  time, which needs the network. ``SKCAL_DOCS_INTERSPHINX=1`` forces the links on, ``=0`` off;
  unset, each inventory host is probed with one short TCP connection and unreachable ones are
  left out, so an offline build stays warning-free (it then has no external links) while an
  online build gets them (and still warns if an inventory is broken).
"""

import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlparse

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # document the checkout, not an installed copy
sys.path.insert(1, str(HERE))  # _skcal_cli (the parser the CLI reference renders)
os.environ.setdefault("MPLBACKEND", "Agg")

import skcal  # noqa: E402

project = "skcal"
author = "the skcal developers"
copyright = "the skcal developers"
release = version = skcal.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb", "auto_examples/*.py"]
templates_path = ["_templates"]
smartquotes_action = "qe"  # curly quotes and ellipses, but "--demo" stays two hyphens (no dashes)

# --- HTML: pydata-sphinx-theme ---------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skcal {release}"
html_static_path = ["_static"]
html_css_files = ["skcal.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 7,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_context = {"default_mode": "light"}

# --- MyST, autodoc, numpydoc -----------------------------------------------------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

toc_object_entries_show_parents = "hide"  # the page's table of contents reads "fit()", not "Cls.fit()"
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "member-order": "bysource", "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# --- sphinx-gallery --------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "doc_module": ("skcal",),
    "reference_url": {"skcal": None},
    "backreferences_dir": "generated/backreferences",
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": True,
}

# --- intersphinx (see the module docstring) --------------------------------------------------
_INTERSPHINX = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}


def _reachable(url, timeout=2.0):
    """Whether one TCP connection to the host of ``url`` succeeds within ``timeout`` seconds."""
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


def _intersphinx_mapping():
    choice = os.environ.get("SKCAL_DOCS_INTERSPHINX", "auto").strip().lower()
    if choice in ("0", "false", "no", "off"):
        return {}
    if choice in ("1", "true", "yes", "on"):
        return dict(_INTERSPHINX)
    kept = {k: v for k, v in _INTERSPHINX.items() if _reachable(v[0])}
    left = sorted(set(_INTERSPHINX) - set(kept))
    if left:
        print(f"[skcal docs] intersphinx: no route to {', '.join(left)}; building without those links")
    return kept


intersphinx_mapping = _intersphinx_mapping()
intersphinx_timeout = 10


# ---------------------------------------------------------------------------------------------
# Docstring hygiene
# ---------------------------------------------------------------------------------------------
import re  # noqa: E402

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
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, priority=600)
    app.connect("autodoc-skip-member", _skip_member)


# ---------------------------------------------------------------------------------------------
# Autosummary tables: the whole summary line of each docstring
# ---------------------------------------------------------------------------------------------
import sphinx.ext.autosummary as _autosummary  # noqa: E402


def _first_stanza(doc, settings):
    """The first paragraph of a docstring (numpydoc: the one-line summary), unsplit.

    Autosummary's own rule cuts at the first period followed by a space, which breaks summaries
    that hold a period inside an inline literal (``k_h(. | s)``) into invalid reStructuredText.
    """
    lines = []
    for line in doc:
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)


_autosummary.extract_summary = _first_stanza
