"""The label stream of the calibration test and its compiled kernel (skcal/_resampling_kernel.py).

The reference is written here from the definition in the module documentation of
:mod:`skcal.calibration_test` (SplitMix64 words, one 64-bit uniform per row and replicate read
byte by byte, ``y* = 1`` iff ``U < floor(p 2^64)``), in pure Python integers, independently of
both the numpy path and the kernel. The numpy path is tested here too; the compiled kernel's
cases skip without numba.
"""

import sys

import numpy as np
import pytest

import skcal.calibration_test  # noqa: F401  (the module; the package attribute is the function)
from skcal.cutoff import cutoff_calibration_error

ct = sys.modules["skcal.calibration_test"]
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15

try:
    from skcal import _resampling_kernel as kernel
except ImportError:  # numba (the fast extra) is not installed
    kernel = None
needs_numba = pytest.mark.skipif(kernel is None, reason="numba (the fast extra) is not installed")


def splitmix64(z):
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & M64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & M64
    return z ^ (z >> 31)


def word(key, j):
    """Word ``j`` of the stream: ``splitmix64(key + (j + 1) GAMMA)``."""
    return splitmix64((key + (j + 1) * GAMMA) & M64)


def reference_labels(key, ps, r):
    """Replicate ``r``'s labels from the definition (every byte read, no shortcut)."""
    n = len(ps)
    m1 = -(-n // 8)
    L = 8 * m1
    out = []
    for i, p in enumerate(ps):
        if p >= 1.0:
            out.append(1)
            continue
        g, b = divmod(i, 8)
        U = 0
        for level in range(1, 9):
            U = (U << 8) | (word(key, r * L + (level - 1) * m1 + g) >> (8 * b)) & 0xFF
        out.append(int(U < int(np.floor(p * 2.0**64))))
    return np.array(out, dtype=np.uint8)


def test_splitmix64_known_value_and_numpy_form():
    # the first output of SplitMix64 seeded with 0 (Vigna's splitmix64.c)
    assert word(0, 0) == 0xE220A8397B1DCDAF
    z = np.array([(k * GAMMA) & M64 for k in range(1, 6)], dtype=np.uint64)
    got = ct._splitmix64(z.copy())
    assert [int(v) for v in got] == [word(0, j) for j in range(5)]


def _predictions(n, seed, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    if ties:
        p = np.round(p, 2)
    p[: n // 10] = 0.0
    p[n // 10 : n // 5] = 1.0
    special = np.array([2.0**-60, 1 - 2.0**-53, 0.5])
    k = min(3, n - n // 5)
    p[n // 5 : n // 5 + k] = special[:k]
    return np.sort(p)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 61])
def test_numpy_labels_equal_the_definition(n):
    ps = _predictions(n, n)
    key = 0x0123456789ABCDEF
    stream = ct.group_tables(ps, key)
    Y = ct.draw_labels(stream, 5, 3)
    for k in range(3):
        np.testing.assert_array_equal(Y[k], reference_labels(key, ps, 5 + k))


def test_ties_beyond_the_first_byte_are_decided_by_the_next_bytes():
    # p's first two bytes chosen to equal the random bytes of the rows: the labels must still
    # follow the definition, which reads every byte
    key = 12345
    n = 16
    m1 = 2
    ps = np.empty(n)
    for i in range(n):
        g, b = divmod(i, 8)
        b1 = (word(key, g) >> (8 * b)) & 0xFF
        b2 = (word(key, m1 + g) >> (8 * b)) & 0xFF
        ps[i] = (b1 * 256 + b2 + (0.25 if i % 2 else 0.75)) / 65536.0
    stream = ct.group_tables(ps, key)  # not sorted: the rows' order is what the stream sees
    np.testing.assert_array_equal(ct.draw_labels(stream, 0, 1)[0], reference_labels(key, ps, 0))


def test_label_frequencies_and_independence():
    ps = np.sort(np.random.default_rng(0).uniform(size=2000))
    stream = ct.group_tables(ps, 99)
    Y = ct.draw_labels(stream, 0, 500).astype(float)
    # per row: 500 Bernoulli(p) draws; the standardised total over the rows is N(0, 1)
    z = (Y.sum(axis=0) - 500 * ps) / np.sqrt(500 * ps * (1 - ps) + 1e-300)
    assert abs(z.mean() * np.sqrt(z.size)) < 4
    assert 0.9 < z.var() < 1.1
    # replicates and neighbouring rows are uncorrelated
    R = Y - ps
    assert abs(np.corrcoef(R[:-1].ravel(), R[1:].ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(R[:, :-1].ravel(), R[:, 1:].ravel())[0, 1]) < 0.01


@needs_numba
@pytest.mark.parametrize("n", [1, 7, 8, 1003, 4100])
@pytest.mark.parametrize("ties", [False, True])
def test_compiled_labels_equal_numpy(n, ties):
    ps = _predictions(n, n + ties, ties)
    stream = ct.group_tables(ps, 2**63 + 17)
    a = ct.draw_labels(stream, 11, 9)
    b = ct.draw_labels(stream, 11, 9, kernel)
    np.testing.assert_array_equal(a, b)
    split = np.vstack([ct.draw_labels(stream, 11, 4, kernel), ct.draw_labels(stream, 15, 5)])
    np.testing.assert_array_equal(split, a)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("n", [1, 9, 1003, 6000])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_cutoff_null_equals_the_measure_of_the_labels(compiled, n, ties, weighted):
    rng = np.random.default_rng(n)
    ps = _predictions(n, n, ties)
    w = rng.uniform(0, 2, n) if weighted else None
    if weighted and n > 1:
        w[::7] = 0.0
        w[0] = 1.0
    stream = ct.group_tables(ps, 7)
    kern = ct._CutoffKernel(ps, w)
    null = kern.null(stream, 3, 20, kernel if compiled else None)
    Y = ct.draw_labels(stream, 3, 20)
    np.testing.assert_array_equal(null, kern(Y))  # the same arithmetic: equal, not close
    for k in range(0, 20, 7):
        assert null[k] == pytest.approx(cutoff_calibration_error(Y[k], ps, sample_weight=w), abs=1e-12)


@needs_numba
def test_cutoff_null_bounds_on_a_long_walk():
    # 2e5 rows: the skipping of chunks and groups is exercised; every value must equal numpy's
    ps = np.sort(np.random.default_rng(3).beta(0.5, 0.5, 200_000))
    stream = ct.group_tables(ps, 1)
    kern = ct._CutoffKernel(ps, None)
    np.testing.assert_array_equal(kern.null(stream, 0, 6, kernel), kern.null(stream, 0, 6, None))


@needs_numba
def test_results_do_not_depend_on_numba_blocks_or_jobs(monkeypatch):
    rng = np.random.default_rng(4)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    runs = {}
    for measure in ("cutoff", "binned_ece"):
        monkeypatch.setattr(ct, "_KERNEL_MIN_DRAWS", 0)
        a = ct.calibration_test(y, p, measure=measure, n_resamples=150, random_state=8)
        b = ct.calibration_test(y, p, measure=measure, n_resamples=150, random_state=8, n_jobs=2)
        monkeypatch.setattr(ct, "compiled", lambda *args, **kwargs: None)
        c = ct.calibration_test(y, p, measure=measure, n_resamples=150, random_state=8)
        monkeypatch.setattr(ct, "_BLOCK_ENTRIES", 3000 * 7)
        d = ct.calibration_test(y, p, measure=measure, n_resamples=150, random_state=8)
        monkeypatch.undo()
        for other in (b, c, d):
            np.testing.assert_array_equal(a.null_distribution, other.null_distribution)
            assert a.pvalue == other.pvalue and a.statistic == other.statistic
        runs[measure] = a
    # the same seed gives the same replicate labels to every measure
    stream = ct.group_tables(np.sort(p), int(np.random.SeedSequence(8).generate_state(1, np.uint64)[0]))
    Y = ct.draw_labels(stream, 0, 3)
    assert runs["cutoff"].null_distribution[0] == pytest.approx(
        cutoff_calibration_error(Y[0], np.sort(p)), abs=1e-12
    )
