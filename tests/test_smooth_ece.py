import numpy as np
import pandas as pd
import pytest

from skcal import smooth_ece

relplot = pytest.importorskip("relplot", reason="relplot (test extra) is the reference implementation")


def _case(seed, n):
    rng = np.random.default_rng(seed)
    kind = seed % 4
    p = rng.uniform(size=n) ** rng.uniform(0.3, 3)
    if kind == 1:
        p = np.round(p, 1)  # heavy ties, predictions on grid nodes, exact 0 and 1
    if kind == 2:
        p = np.clip(rng.normal(0.5, 0.02, size=n), 0, 1)  # concentrated
    eta = p if kind == 3 else rng.uniform(size=n) ** rng.uniform(0.5, 2)
    y = (rng.uniform(size=n) < eta).astype(float)
    return y, p


@pytest.mark.parametrize("seed", range(24))
def test_matches_relplot_on_random_inputs(seed):
    n = [5, 37, 200, 1500, 6000][seed % 5]
    y, p = _case(seed, n)
    assert smooth_ece(y, p) == pytest.approx(relplot.smECE(p, y), abs=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_relplot_on_the_fine_grid_path(seed):
    # more than 2^16 samples: the data go through the 2^18-cell grid once
    y, p = _case(seed, 70_000)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    ref, ref_sigma = relplot.smECE(p, y, return_width=True)
    assert value == pytest.approx(ref, abs=1e-3)
    assert 0 < sigma <= 1


def test_closed_form_cases():
    # perfectly sharp and right: residuals vanish
    assert smooth_ece([0, 1, 1, 0], [0.0, 1.0, 1.0, 0.0]) == pytest.approx(0.0, abs=1e-12)
    # a constant prediction c with base rate b: smoothing keeps a constant residual c - b
    y = np.array([1] * 30 + [0] * 70)
    assert smooth_ece(y, np.full(100, 0.5)) == pytest.approx(0.2, abs=1e-3)


def test_weights():
    y, p = _case(5, 500)
    assert smooth_ece(y, p, sample_weight=np.full(500, 3.0)) == pytest.approx(smooth_ece(y, p), abs=1e-12)
    k = np.random.default_rng(0).integers(1, 4, size=500)
    rep = smooth_ece(np.repeat(y, k), np.repeat(p, k))
    assert smooth_ece(y, p, sample_weight=k) == pytest.approx(rep, abs=1e-4)


def test_input_types_and_no_mutation():
    y, p = _case(6, 300)
    p0 = p.copy()
    ref = smooth_ece(y, p)
    assert smooth_ece(y.tolist(), p.tolist()) == ref
    assert smooth_ece(pd.Series(y), pd.Series(p)) == ref
    assert smooth_ece(y, np.column_stack([1 - p, p])) == ref
    np.testing.assert_array_equal(p, p0)


@pytest.mark.parametrize(
    "y, p, match",
    [
        ([0, 1], [0.2, np.nan], "y_prob contains NaN"),
        ([0, 1], [0.2, 1.1], r"y_prob must lie in \[0, 1\]"),
        ([0, 1, 0], [0.2, 0.1], "Inconsistent numbers of samples"),
        ([0, 1, 2], [0.2, 0.1, 0.4], "binary labels"),
    ],
)
def test_bad_input(y, p, match):
    with pytest.raises(ValueError, match=match):
        smooth_ece(y, p)


def test_relplot_is_not_imported_by_skcal():
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "skcal"
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n.split(".")[0] == "relplot" for n in names), path
