"""The README's "Using it" snippet runs as written, and it lists every scorer name skcal registers."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from skcal.scorers import SCORER_TABLE

README = Path(__file__).resolve().parents[1] / "README.md"


def _using_it():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Using it") :]
    return section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]


def test_the_using_it_snippet_runs_as_written(tmp_path, monkeypatch):
    pytest.importorskip("dask.array", reason="the snippet's last lines use skcal[dask]")
    monkeypatch.chdir(tmp_path)  # it writes report.html
    code = _using_it()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        exec(compile(code, "README.md (Using it)", "exec"), {"__name__": "readme"})
    assert (tmp_path / "report.html").exists()


def test_the_multiclass_line_uses_multiclass_labels():
    line = next(ln for ln in _using_it().splitlines() if "truthful_conf_ce(" in ln)
    assert "y_test" not in re.sub(r"y3_test", "", line)  # not the binary labels


def test_the_readme_lists_every_registered_scorer_name():
    text = README.read_text(encoding="utf-8")
    listed = text[text.index("Registered scorer names") :].split("\n\n")[0]
    names = set(SCORER_TABLE)  # skcal's own (a test may register more with register_scorer)
    bases = {n.removeprefix("neg_") for n in names}
    for base in sorted(bases):
        assert f"`{base}`" in listed, f"the README does not list the scorer {base!r}"
        assert f"neg_{base}" in names  # "each also with a neg_ prefix"
    assert set(re.findall(r"`([a-z0-9_]+)`", listed)) - {"neg_"} <= bases  # and no name that is not one


def test_the_monitoring_snippet_runs_with_batches_of_a_calibrated_stream():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("**Monitoring calibration in production.**") :]
    code = section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    batches = [(y[i : i + 5_000], p[i : i + 5_000]) for i in range(0, p.size, 5_000)]
    scope = {"__name__": "readme", "batches": batches}
    exec(compile(code, "README.md (monitoring)", "exec"), scope)
    monitor = scope["monitor"]
    assert monitor.tolerance == 0.01 and monitor.n_seen_ == 20_000 and not monitor.alarm_
