"""The compiled passes of the cutoff and KS errors (skcal/_cutoff_kernel.py) against the numpy path."""

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("skcal._cutoff_kernel", reason="the compiled passes need numba (the fast extra)")

from skcal import _cutoff_kernel, cutoff_calibration_error, ks_calibration_error  # noqa: E402
from skcal.stats import _cutoff  # noqa: E402


def _numpy_path(y, p):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_cutoff, "compiled", lambda *args, **kwargs: None)
        return _cutoff.running_sum_extremes(y, p)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1e-300, 0.3]) | st.floats(0, 1), st.booleans()),
        min_size=1,
        max_size=60,
    ),
    st.sampled_from([np.int64, np.float64, np.bool_, np.uint8]),
)
def test_compiled_extremes_equal_the_numpy_path_bit_for_bit(rows, dtype):
    # both add y - p one row at a time in increasing p (np.cumsum is sequential): the same bits
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows]).astype(dtype)
    compiled = _cutoff.running_sum_extremes(y, p)  # numba is imported (importorskip): compiled
    numpy = _numpy_path(y, p)
    assert compiled[1] == numpy[1]
    assert compiled[0].tobytes() == numpy[0].tobytes()


def test_compiled_path_is_taken_and_reads_the_callers_arrays(monkeypatch):
    rng = np.random.default_rng(0)
    p = np.round(rng.random(5000), 3)  # ties
    y = (rng.random(5000) < p).astype(np.int64)
    calls = []
    real = _cutoff_kernel.pack_keys
    monkeypatch.setattr(_cutoff_kernel, "pack_keys", lambda *a: calls.append(a) or real(*a))
    p0, y0 = p.copy(), y.copy()
    value = cutoff_calibration_error(y, p)
    assert len(calls) == 1 and calls[0][0] is p and calls[0][1] is y  # no validated copies
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(y, y0)  # the caller's arrays are not modified
    monkeypatch.setattr(_cutoff, "compiled", lambda *args, **kwargs: None)
    assert value == cutoff_calibration_error(y, p)
    assert ks_calibration_error(y, p) == ks_calibration_error(y, p)


def test_strided_inputs_and_predict_proba_columns():
    rng = np.random.default_rng(1)
    P = rng.random((4000, 2))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(8000) < 0.5).astype(np.int64)
    strided = cutoff_calibration_error(y[::2], P[:, 1])
    assert strided == cutoff_calibration_error(np.ascontiguousarray(y[::2]), np.ascontiguousarray(P[:, 1]))
    assert strided == cutoff_calibration_error(y[::2], P)


def test_bad_input_is_rejected_as_on_the_numpy_path():
    with pytest.raises(ValueError, match="y_prob"):
        cutoff_calibration_error([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="y_prob"):
        cutoff_calibration_error([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError):
        cutoff_calibration_error([0, 2, 3], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="empty"):
        cutoff_calibration_error([], [])


def test_the_kernel_is_loaded_only_when_numba_is_or_the_input_is_large(monkeypatch):
    from skcal._compiled import compiled

    # numba is imported in this process (importorskip above): every size uses the kernel
    assert compiled("cutoff", size=10, min_size=_cutoff._KERNEL_MIN_ROWS) is _cutoff_kernel
    monkeypatch.delitem(sys.modules, "numba")  # as in a process that has not imported numba
    assert compiled("cutoff", size=10, min_size=_cutoff._KERNEL_MIN_ROWS) is None
    big = _cutoff._KERNEL_MIN_ROWS
    assert compiled("cutoff", size=big, min_size=big) is _cutoff_kernel


def test_a_list_input_is_measured():
    # (the length of a list was once read before validation, by a helper that is gone)
    assert cutoff_calibration_error([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.9]) == 0.15
