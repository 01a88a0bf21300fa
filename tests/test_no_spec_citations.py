"""No file of the package cites "SPEC", the project's specification, which does not ship with it.

Docstrings, comments and messages state the formula or convention itself, or cite the paper it
comes from by title (*The Minimax Rate of Second-Order Calibration*, *Testable and Actionable
Calibration for Full Swap Regret*, *Truthful Calibration Errors for Multi-Class Prediction*).
"""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "skcal"
WORD = re.compile(r"\bSPEC\b")  # a word, case-sensitive: "spec" and "SPECIAL" do not count


def spec_citations(root):
    """``["path:line: text", ...]`` for every line of a text file under ``root`` citing SPEC."""
    hits = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary data (compressed data sets)
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if WORD.search(line):
                hits.append(f"{path.relative_to(root.parent)}:{number}: {line.strip()}")
    return hits


def test_the_scanner_finds_a_citation(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text('"""Fine."""\n\nX = 1  # see SPEC 2\n# a spec, SPECIAL, SPECs\n')
    (pkg / "blob.gz").write_bytes(b"\x1f\x8b\xff\xfe SPEC")
    assert spec_citations(pkg) == ["pkg/a.py:3: X = 1  # see SPEC 2"]


def test_no_file_under_skcal_cites_spec():
    hits = spec_citations(PACKAGE)
    assert not hits, (
        f"{len(hits)} places under skcal/ cite SPEC, which is not shipped with the package; state "
        "the formula or cite the paper by title instead:\n" + "\n".join(hits)
    )
