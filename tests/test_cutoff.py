import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
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
