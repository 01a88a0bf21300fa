import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog
from sklearn.utils._param_validation import InvalidParameterError

from skcal.cutoff import cutoff_calibration_error
from skcal.lipschitz import smooth_calibration_error
from skcal.stats._lipschitz import isotonic_l1_costs as _isotonic_l1_cost
from skcal.stats._lipschitz import smce_from_sorted as _smce_from_sorted


def merged(y, p, w=None):
    y, p = np.asarray(y, float), np.asarray(p, float)
    w = np.ones(len(p)) if w is None else np.asarray(w, float)
    values, inv = np.unique(p, return_inverse=True)
    r = np.bincount(inv, weights=w * (y - p), minlength=values.size) / w.sum()
    return values, r


def lp_value(y, p, w=None):
    """The primal LP over the sorted distinct predictions, solved by HiGHS."""
    values, r = merged(y, p, w)
    n = values.size
    if n == 1:
        return abs(r[0])
    d = np.diff(values)
    D = sparse.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
    A = sparse.vstack([D, -D]).tocsr()
    tol = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    res = linprog(-r, A_ub=A, b_ub=np.concatenate([d, d]), bounds=(-1, 1), method="highs", options=tol)
    assert res.status == 0
    return -res.fun


rows = st.lists(
    st.tuples(
        st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])),
        st.integers(0, 1),
        st.one_of(st.floats(0.01, 10), st.just(0.0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(rows, st.booleans())
def test_equals_the_linear_program(data, weighted):
    p = np.array([r[0] for r in data])
    y = np.array([r[1] for r in data])
    w = np.array([r[2] for r in data]) if weighted else None
    if w is not None and w.sum() <= 0:
        w[0] = 1.0
    got = smooth_calibration_error(y, p, sample_weight=w)
    assert got == pytest.approx(lp_value(y, p, w), abs=1e-9)
    assert 0.0 <= got <= 1.0


@pytest.mark.parametrize("seed", range(5))
def test_equals_the_linear_program_on_larger_samples(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    # coarse grid: many ties; a few exact 0 and 1 predictions
    p = np.round(rng.random(n), 2 if seed % 2 else 4)
    p[:20] = 0.0
    p[20:40] = 1.0
    bias = (seed - 2) * 0.03
    y = (rng.random(n) < np.clip(p + bias, 0, 1)).astype(int)
    w = rng.exponential(size=n) if seed >= 3 else None
    assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(lp_value(y, p, w), abs=1e-10)


def test_adversarial_alternating_residuals():
    # residuals alternating in sign with growing size: hard for a naive slope-trick DP
    n = 3000
    p = np.linspace(0.01, 0.99, n)
    y = (np.arange(n) % 2).astype(float)
    assert smooth_calibration_error(y, p) == pytest.approx(lp_value(y, p), abs=1e-10)


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1), st.lists(st.integers(0, 1), min_size=1, max_size=30), st.booleans())
def test_constant_predictor_is_the_absolute_mean_residual(c, y, weighted):
    y = np.array(y)
    w = np.arange(1.0, len(y) + 1) if weighted else None
    expected = abs(np.average(y - c, weights=w))
    got = smooth_calibration_error(y, np.full(len(y), c), sample_weight=w)
    assert got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.floats(-1, 1), st.floats(-1, 1))
def test_two_point_distribution_closed_form(p1, p2, r1, r2):
    """Two distinct predictions: the optimum sits at a vertex of the feasible polygon."""
    if p1 == p2:
        return
    lo, hi = sorted((p1, p2))
    r_lo, r_hi = (r1, r2) if p1 < p2 else (r2, r1)
    d = hi - lo
    vertices = [(1, 1), (-1, -1), (1, 1 - d), (1 - d, 1), (-1, -1 + d), (-1 + d, -1)]
    expected = max(a * r_lo + b * r_hi for a, b in vertices)
    assert _smce_from_sorted(np.array([r_lo, r_hi]), np.array([lo, hi])) == pytest.approx(expected, abs=1e-12)
    # and in the closed form: same signs add up, opposite signs lose (1 - d) of the smaller one
    if r_lo * r_hi >= 0:
        assert expected == pytest.approx(abs(r_lo) + abs(r_hi), abs=1e-12)
    else:
        a, b = abs(r_lo), abs(r_hi)
        assert expected == pytest.approx(max(a - (1 - d) * b, b - (1 - d) * a), abs=1e-12)


def test_two_point_from_labels():
    # p in {0.2, 0.7}: at 0.2 labels (1, 1) -> residual 1.6; at 0.7 labels (0, 0) -> -1.4
    y = [1, 1, 0, 0]
    p = [0.2, 0.2, 0.7, 0.7]
    r_lo, r_hi, d = 1.6 / 4, -1.4 / 4, 0.5
    expected = max(r_lo - (1 - d) * abs(r_hi), abs(r_hi) - (1 - d) * r_lo)
    assert smooth_calibration_error(y, p) == pytest.approx(expected)
    # extreme predictions: at p = 0 the residual is y >= 0, at p = 1 it is y - 1 <= 0, d = 1
    y = [1, 0, 0, 0, 1]
    p = [0, 0, 1, 1, 1]
    assert smooth_calibration_error(y, p) == pytest.approx(max(1 / 5, 2 / 5))


@settings(max_examples=100, deadline=None)
@given(rows)
def test_bounds_and_symmetry(data):
    p = np.array([r[0] for r in data])
    y = np.array([r[1] for r in data])
    got = smooth_calibration_error(y, p)
    values, r = merged(y, p)
    assert abs(r.sum()) - 1e-12 <= got <= np.abs(r).sum() + 1e-12
    assert got <= abs(r.sum()) + cutoff_calibration_error(y, p) + 1e-12
    # relabelling the classes mirrors p and negates the residuals
    assert smooth_calibration_error(1 - y, 1 - p) == pytest.approx(got, abs=1e-12)
    perm = np.random.default_rng(0).permutation(len(p))
    assert smooth_calibration_error(y[perm], p[perm]) == pytest.approx(got, abs=1e-12)


def test_integer_weights_equal_repetition_and_scale_invariance():
    rng = np.random.default_rng(1)
    p = rng.random(50)
    y = (rng.random(50) < p).astype(int)
    k = rng.integers(0, 4, 50)
    k[0] = 1
    rep = smooth_calibration_error(np.repeat(y, k), np.repeat(p, k))
    assert smooth_calibration_error(y, p, sample_weight=k) == pytest.approx(rep, abs=1e-12)
    assert smooth_calibration_error(y, p, sample_weight=3.5 * k) == pytest.approx(rep, abs=1e-12)


def test_population_value_of_a_shifted_predictor():
    # p = q + 0.05 with y ~ Bernoulli(q): E[y - p | p] = -0.05 everywhere, so smCE -> 0.05
    rng = np.random.default_rng(2)
    q = rng.uniform(0.1, 0.85, 200_000)
    y = rng.random(q.size) < q
    assert smooth_calibration_error(y, q + 0.05) == pytest.approx(0.05, abs=0.004)
    # a calibrated predictor is near 0 at this size
    assert smooth_calibration_error(y, q) < 0.005


def test_isotonic_l1_cost_against_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = rng.integers(1, 7)
        x = rng.integers(0, 4, n).astype(float)
        w = rng.random(n) + 0.01
        # the optimum takes data values: enumerate all non-decreasing sequences over them
        vals = np.unique(x)
        best = min(
            float(w @ np.abs(x - np.array(v)))
            for v in itertools.product(vals, repeat=n)
            if all(a <= b for a, b in itertools.pairwise(v))
        )
        assert _isotonic_l1_cost(x, w) == pytest.approx(best, abs=1e-12)


def test_inputs_labels_and_no_mutation():
    y = np.array(["a", "b", "b", "a", "b"])
    p = np.array([0.1, 0.8, 0.6, 0.4, 0.9])
    p_copy = p.copy()
    got = smooth_calibration_error(y, p, pos_label="b")
    assert got == pytest.approx(smooth_calibration_error((y == "b").astype(int), p))
    assert np.array_equal(p, p_copy)
    proba = np.column_stack([1 - p, p])
    assert smooth_calibration_error(pd.Series(y), proba, pos_label="b") == pytest.approx(got)
    assert smooth_calibration_error([True, False], [0.3, 0.3]) == pytest.approx(0.2)


def test_bad_input_raises_clearly():
    with pytest.raises(ValueError, match="y_prob must lie in"):
        smooth_calibration_error([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="Inconsistent"):
        smooth_calibration_error([0, 1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="pos_label"):
        smooth_calibration_error(["a", "b"], [0.5, 0.5])
    with pytest.raises(ValueError, match="sample_weight"):
        smooth_calibration_error([0, 1], [0.5, 0.5], sample_weight=[1.0, -1.0])
    with pytest.raises(InvalidParameterError, match="sample_weight"):
        smooth_calibration_error([0, 1], [0.5, 0.5], sample_weight="heavy")
    with pytest.raises(ValueError, match="NaN"):
        smooth_calibration_error([0, 1], [0.5, np.nan])


def test_docstring_passes_numpydoc_validation():
    from numpydoc.validate import validate

    codes = {"GL01", "GL02", "GL03", "GL06", "GL07", "GL08", "SS01", "SS02", "SS03", "SS04", "SS05", "SS06"}
    codes |= {f"PR{i:02d}" for i in range(1, 11)} | {f"RT{i:02d}" for i in range(1, 6)} | {"YD01"}
    errors = validate("skcal.lipschitz.smooth_calibration_error")["errors"]
    assert not [e for e in errors if e[0] in codes], errors


@pytest.mark.slow
def test_speed_benchmark_quick(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "speed_smce.py"
    spec = importlib.util.spec_from_file_location("speed_smce", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "speed_smce.json").read_text())
    assert (tmp_path / "speed_smce.png").stat().st_size > 0
    assert [r["T"] for r in saved["rows"]] == [1000, 10000]
    assert saved["summary"]["max_abs_skcal_minus_linprog"] < 1e-9
    prov = saved["provenance"]
    assert {"commit", "command", "config", "cpu_count", "date"} <= set(prov)
    assert prov["command"].startswith("python -m benchmarks.speed_smce --quick")
    assert prov["wall_time_s"] > 0
