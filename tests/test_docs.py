"""The Sphinx documentation builds without a single warning (what CI checks)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import skcal

ROOT = Path(__file__).resolve().parents[1]
MISSING = [m for m in ("sphinx", "numpydoc", "myst_parser") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the docs toolchain is not installed (missing: {MISSING})")
def test_docs_build_without_warnings(tmp_path):
    out = tmp_path / "html"
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-5000:]
    # the API reference has a page for every public name
    for name in skcal.__all__:
        if not name.startswith("_"):
            assert (out / "generated" / f"skcal.{name}.html").exists(), name
    # every example ran and its figure was embedded
    for page in ("reliability", "report", "second_order"):
        html = (out / "examples" / f"{page}.html").read_text(encoding="utf-8")
        assert ".png" in html, page
    assert (out / "guide" / "reports.html").exists()
