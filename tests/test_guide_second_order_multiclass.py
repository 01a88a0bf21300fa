"""The code of docs/guide/second_order_multiclass.md: the pycon blocks as one doctest, the CIFAR-10H block."""

import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "second_order_multiclass.md"
DATA = ROOT.parent / "shared" / "data"


def test_multiclass_guide_doctests_run():
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 3
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, PAGE.name, str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=flags)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted > 10


def test_the_cifar10h_example_runs_compares_like_with_like_and_gives_the_page_numbers(monkeypatch):
    for name in ("cifar10h", "multiclass_logits"):
        if not (DATA / name).is_dir():
            pytest.skip(f"the data folder {name!r} is absent (../shared/data/{name} beside the repository)")
    text = PAGE.read_text(encoding="utf-8")
    (code,) = re.findall(r"## CIFAR-10H in a dozen lines.*?```python\n(.*?)```", text, re.S)
    assert 'Path("../shared/data")' in code
    monkeypatch.chdir(ROOT)  # the page's path is relative to the repository root
    out = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(PAGE), "exec"), namespace)  # noqa: S102 - the page's own code
    report = namespace["report"]
    table = report.table
    assert report.order == "second-order (k classes)"
    # the ensemble is measured perturbed: the very scores the calibrators take as input
    import numpy as np

    from skcal.votes import check_class_scores

    clf, X, ev = namespace["classwise"], namespace["X"], namespace["ev"]
    np.testing.assert_array_equal(
        check_class_scores(namespace["ensemble"]), check_class_scores(clf.perturber_.transform(X[ev]))
    )
    cw, top = table["ce2_classwise"]["value"], table["ce2_top_label"]["value"]
    # each classifier improves the number it was built for
    assert cw["classwise"] < cw["ensemble"] and top["top label"] < top["ensemble"]
    # the numbers the page quotes are the ones the block prints
    for value in (cw["ensemble"], cw["classwise"], top["ensemble"], top["top label"]):
        assert f"{value:.4g}" in text, value
    assert f"{cw['classwise']:.4g}" in out.getvalue()
