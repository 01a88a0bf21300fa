import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skcal import cutoff_calibration_error


def brute_force(y, p, w=None):
    """sup over intervals [a, b] of |E[(y - p) 1{a <= p <= b}]|, over all pairs of values of p."""
    y, p = np.asarray(y, float), np.asarray(p, float)
    w = np.ones(len(p)) if w is None else np.asarray(w, float)
    values = np.unique(p)
    best = 0.0
    for i in range(len(values)):
        for j in range(i, len(values)):
            inside = (p >= values[i]) & (p <= values[j])
            best = max(best, abs((w * (y - p))[inside].sum()) / w.sum())
    return best


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.2, 0.5, 1.0])),
            st.integers(0, 1),
            st.floats(0.1, 5),
        ),
        min_size=1,
        max_size=15,
    ),
    st.booleans(),
)
@example(  # found by hypothesis: the running sum and W add in different orders (1 + 1 ulp)
    rows=[
        (0.0, 1, 1.0975669900310718),
        (0.0, 1, 3.7200269302051128),
        (1.1754943508222875e-38, 1, 1.0975669900310718),
        (0.0, 1, 3.685961232102332),
    ],
    weighted=True,
)
def test_equals_brute_force_over_all_intervals(rows, weighted):
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows]) if weighted else None
    got = cutoff_calibration_error(y, p, sample_weight=w)
    assert got == pytest.approx(brute_force(y, p, w), abs=1e-12)
    assert 0.0 <= got <= 1.0


def test_ties_are_merged():
    # all four predictions tie: the only intervals hold none or all of them
    assert cutoff_calibration_error([1, 0, 1, 0], [0.5] * 4) == 0.0
    assert cutoff_calibration_error([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9]) == pytest.approx(0.15)


def test_input_types_and_bad_input():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    ref = cutoff_calibration_error(y, p)
    assert cutoff_calibration_error(y.tolist(), p.tolist()) == ref
    assert cutoff_calibration_error(pd.Series(y), pd.Series(p)) == ref
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]"):
        cutoff_calibration_error([0, 1], [0.2, 1.3])
    with pytest.raises(ValueError, match="Inconsistent numbers of samples"):
        cutoff_calibration_error([0, 1], [0.2])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 5e-324, 0.25, 0.5, 0.75, 1.0 - 2**-53, 1.0]),
            st.integers(0, 1),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_packed_key_sort_on_edge_values(rows):
    """The unweighted path sorts p's bits with the label packed in; it must equal the weighted
    (argsort) path with unit weights and the brute force, on -0.0, subnormals, 1 and ties."""
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    got = cutoff_calibration_error(y, p)
    assert got == pytest.approx(brute_force(y, p), rel=1e-12, abs=1e-15)
    unit = cutoff_calibration_error(y, p, sample_weight=np.ones(len(p)))
    assert got == pytest.approx(unit, rel=1e-12, abs=1e-15)


def test_packed_key_sort_byte_order_and_strides():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    want = brute_force(y[:60], p[:60])
    assert cutoff_calibration_error(y[:60], p[:60].astype(">f8")) == pytest.approx(want, rel=1e-12)
    P = np.column_stack([1 - p, p])  # column 1 is a strided view
    assert cutoff_calibration_error(y, P) == pytest.approx(cutoff_calibration_error(y, p.copy()), rel=1e-13)
    before = P.copy()
    cutoff_calibration_error(y, P)
    np.testing.assert_array_equal(P, before)
