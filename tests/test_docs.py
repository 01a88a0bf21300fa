"""The documentation: the API reference lists every public name once, the Markdown pages are
well formed and state their formulas, and the Sphinx site builds without a single warning (what CI
checks)."""

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skcal

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_PAGE = DOCS / "api.md"
TOOLCHAIN = ("sphinx", "numpydoc", "myst_parser", "pydata_sphinx_theme", "sphinx_gallery", "sphinxarg")
MISSING = [m for m in TOOLCHAIN if importlib.util.find_spec(m) is None]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))


# ---------------------------------------------------------------------------------------------
# The API reference (fast, no Sphinx)
# ---------------------------------------------------------------------------------------------
def _api_sections():
    """``{section title: [names listed in its autosummary blocks]}`` from docs/api.md."""
    sections, title, in_summary = {}, None, False
    for line in API_PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            sections.setdefault(title, [])
            in_summary = False
        elif line.strip().startswith(".. autosummary::"):
            in_summary = True
        elif in_summary:
            if line.strip().startswith("```"):
                in_summary = False
            elif line.startswith("   ") and line.strip() and not line.strip().startswith(":"):
                sections[title].append(line.strip())
    return sections


def test_api_reference_lists_every_public_name_once():
    sections = _api_sections()
    listed = [n for names in sections.values() for n in names]
    public = [n for n in skcal.__all__ if not n.startswith("_")]
    missing = sorted(set(public) - set(listed), key=str.lower)
    twice = sorted({n for n in listed if listed.count(n) > 1})
    unknown = sorted(n for n in listed if "." not in n and n not in public)
    problems = []
    if missing:
        problems.append(
            f"names in skcal.__all__ missing from the API reference: {missing}. Add each, one per line "
            "indented by three spaces, to the autosummary list of its task section in docs/api.md "
            f"(sections: {list(sections)})."
        )
    if twice:
        problems.append(f"names listed more than once in docs/api.md (keep one of each): {twice}")
    if unknown:
        problems.append(
            f"names listed in docs/api.md that are not in skcal.__all__ (remove them, or write a "
            f"subpackage's name with it, e.g. stats.from_state): {unknown}"
        )
    assert not problems, "\n".join(problems)


#: Public subpackages whose ``__all__`` the API reference lists too (as ``stats.NAME``, or as
#: ``NAME`` when the top-level package re-exports the same object).
SUBPACKAGES = ("stats",)


def test_api_reference_lists_every_subpackage_name():
    listed = {n for names in _api_sections().values() for n in names}
    missing = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"skcal.{sub}")
        for name in getattr(module, "__all__", []):
            top = name in skcal.__all__ and getattr(skcal, name, None) is getattr(module, name)
            if f"{sub}.{name}" not in listed and not (top and name in listed):
                missing.append(f"{sub}.{name}")
    assert not missing, (
        f"public names of skcal subpackages missing from the API reference: {missing}. Add each, as "
        "written here, to the autosummary list of its task section in docs/api.md."
    )


def test_api_reference_subpackage_names_import():
    for names in _api_sections().values():
        for name in names:
            if "." in name:
                module, _, attr = f"skcal.{name}".rpartition(".")
                assert hasattr(importlib.import_module(module), attr), f"docs/api.md lists {name}"


# ---------------------------------------------------------------------------------------------
# The Markdown pages (fast, no Sphinx)
# ---------------------------------------------------------------------------------------------
def _pages():
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "auto_examples" not in p.parts)


def test_markdown_table_rows_have_the_header_cell_count():
    # An unescaped "|" (also inside `inline code`) splits a table cell: write it as "\|".
    bad = []
    for page in _pages():
        header = None
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if not line.lstrip().startswith("|"):
                header = None
                continue
            cells = len(re.findall(r"(?<!\\)\|", line.strip()))
            if header is None:
                header = cells
            elif cells != header:
                bad.append(f"{page.relative_to(ROOT)}:{i} has {cells - 1} cells, its header {header - 1}")
    assert not bad, "garbled Markdown tables (escape a '|' inside a cell as '\\|'):\n" + "\n".join(bad)


def test_docs_state_their_formulas_instead_of_citing_the_spec():
    # The SPEC file does not ship with the package: a page states the formula, or cites the paper.
    hits = [
        f"{page.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
        for page in _pages()
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bSPEC\b", line)
    ]
    assert not hits, (
        "docs cite SPEC, which does not ship; state the formula or cite the paper it comes from "
        "(The Minimax Rate of Second-Order Calibration; Testable and Actionable Calibration for Full "
        "Swap Regret; Truthful Calibration Errors for Multi-Class Prediction):\n" + "\n".join(hits)
    )


# ---------------------------------------------------------------------------------------------
# The Sphinx build (about half a minute)
# ---------------------------------------------------------------------------------------------
def _cli_option_strings():
    from skcal.cli import _build_parser

    out = {}
    for action in _build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = [s for a in sub._actions for s in a.option_strings if s not in ("-h", "--help")]
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if MISSING:
        pytest.skip(f"the docs toolchain is not installed (missing: {MISSING}); pip install -e '.[docs]'")
    tmp = tmp_path_factory.mktemp("docs")
    out = tmp / "html"
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    # No intersphinx downloads by default: the suite must not depend on the network (a half-open
    # route would turn a fetch failure into a warning); SKCAL_DOCS_INTERSPHINX=auto or 1 overrides.
    env.setdefault("SKCAL_DOCS_INTERSPHINX", "0")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-d", str(tmp / "doctrees"), str(DOCS), str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stderr[-5000:]
    return out


def test_docs_build_without_warnings(site):
    # the API reference has a page for every public name, linked from the grouped reference
    api = (site / "api.html").read_text(encoding="utf-8")
    for name in skcal.__all__:
        if not name.startswith("_"):
            assert (site / "generated" / f"skcal.{name}.html").exists(), name
            assert f'href="generated/skcal.{name}.html' in api, name
    for page in ("install", "changelog", "cli", "guide/reports", "benchmarks"):
        assert (site / f"{page}.html").exists(), page


def test_gallery_ran_every_example(site):
    index = (site / "auto_examples" / "index.html").read_text(encoding="utf-8")
    assert EXAMPLES, "no examples/plot_*.py"
    for stem in EXAMPLES:
        html = (site / "auto_examples" / f"{stem}.html").read_text(encoding="utf-8")
        assert "sphx_glr_" in html and ".png" in html, f"{stem}: no figure"  # the figure it drew
        assert "Total running time of the script" in html, stem
        assert f"{stem}.py" in html and f"{stem}.ipynb" in html, f"{stem}: no download links"
        assert f"{stem}.html" in index, f"{stem}: not in the gallery index"
        assert (site / "_images" / f"sphx_glr_{stem}_thumb.png").exists(), f"{stem}: no thumbnail"


def test_cli_reference_follows_the_parser(site):
    html = (site / "cli.html").read_text(encoding="utf-8")
    for command, options in _cli_option_strings().items():
        assert command in html
        for opt in options:
            assert opt in html, f"skcal {command} {opt} is not in the CLI reference"

