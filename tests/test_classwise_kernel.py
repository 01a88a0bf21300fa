"""The compiled classwise quantile-bin sums (skcal/_classwise_kernel.py) against a brute force.

The reference is written here from the definition of the bins (each column's stable sort by
value, ties by row index, cut into ``array_split`` groups), independently of both the kernel
and the numpy path of :mod:`skcal.truthful`.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skcal.truthful as truthful
from skcal.truthful import classwise_ece, classwise_lince

pytest.importorskip("numba", reason="numba (the fast extra) is not installed")
from skcal import _classwise_kernel as kernel  # noqa: E402


def brute_parts(P, codes, n_bins):
    """``sum_{i in b} P_ij`` (added in sorted order) and the label counts, per column and bin."""
    n, k = P.shape
    sums = np.zeros((k, n_bins))
    labels = np.zeros((k, n_bins), dtype=np.int64)
    groups = np.array_split(np.arange(n), n_bins)
    for j in range(k):
        order = np.argsort(P[:, j], kind="stable")
        for b, g in enumerate(groups):
            rows = order[g]
            sums[j, b] = P[rows, j].sum()
            labels[j, b] = np.count_nonzero(codes[rows] == j)
    return sums, labels


def kernel_parts(P, codes, n_bins, **kw):
    """The kernel's two terms, read row by row (C order) and column by column (Fortran order):
    both add a bin's inside values in row order, so they must agree bit for bit."""
    out = []
    for X in (np.ascontiguousarray(P), np.asfortranarray(P)):
        counts, bad, _ = kernel.histogram(X)
        assert not bad
        out.append(kernel.bin_sums(X, codes, counts, n_bins, parts=True, **kw))
    (s_c, l_c), (s_f, l_f) = out
    np.testing.assert_array_equal(l_c, l_f)
    np.testing.assert_array_equal(s_c, s_f)
    return s_c, l_c


def dyadic_probabilities(rng, n, k, total_bits):
    """Rows of multiples of ``2**-total_bits`` summing to exactly 1 (sums exact in any order)."""
    alpha = rng.uniform(0.05, 2.0, size=k)
    counts = np.stack([rng.multinomial(2**total_bits, rng.dirichlet(alpha)) for _ in range(n)])
    return np.ldexp(counts.astype(np.float64), -total_bits)


@pytest.mark.parametrize("total_bits", [3, 10, 40])
@pytest.mark.parametrize("n_bins", [1, 2, 7, 15])
def test_dyadic_data_exact(total_bits, n_bins):
    # heavy ties (3 bits), moderate (10), nearly continuous with values down to 2**-40 (40):
    # every sum is exact, so the kernel must equal the reference bit for bit
    rng = np.random.default_rng(total_bits * 100 + n_bins)
    P = dyadic_probabilities(rng, 600, 5, total_bits)
    codes = rng.integers(0, 5, size=600)
    sums, labels = kernel_parts(P, codes, n_bins, max_members=P.size)
    ref_sums, ref_labels = brute_parts(P, codes, n_bins)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_array_equal(sums, ref_sums)


def test_values_across_every_cell_range():
    # zeros, -0.0, subnormals, the coarse binades below 2**-40, the fine boundary, 1 - eps, 1
    rng = np.random.default_rng(3)
    n = 3000
    special = np.array(
        [
            0.0,
            -0.0,
            5e-324,
            1e-310,
            2.0**-1000,
            1e-200,
            2.0**-41,
            np.nextafter(2.0**-40, 0),
            2.0**-40,
            np.nextafter(2.0**-40, 1),
            0.5,
            np.nextafter(1.0, 0),
            1.0,
        ]
    )
    col = np.where(rng.random(n) < 0.3, rng.choice(special, n), rng.random(n) ** 8)
    P = np.column_stack([col, 1.0 - col])
    for n_bins in (2, 5, 13, 40):
        for seed in range(2):
            codes = np.random.default_rng(seed).integers(0, 2, size=n)
            sums, labels = kernel_parts(P, codes, n_bins, max_members=P.size)
            ref_sums, ref_labels = brute_parts(P, codes, n_bins)
            np.testing.assert_array_equal(labels, ref_labels)
            np.testing.assert_allclose(sums, ref_sums, rtol=1e-12, atol=1e-300)
            # the complementary labelling counts every other row of column 0: together they
            # place every row of the column in its bin
            sums2, labels2 = kernel_parts(P, 1 - codes, n_bins, max_members=P.size)
            np.testing.assert_array_equal(labels2, brute_parts(P, 1 - codes, n_bins)[1])


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 80),
    k=st.integers(2, 4),
    n_bins_frac=st.floats(0.0, 1.0),
    pool=st.lists(
        st.sampled_from([0.0, -0.0, 5e-324, 2.0**-41, 2.0**-40, 1e-3, 0.25, 0.5, 0.75, 1.0 - 2**-53, 1.0]),
        min_size=1,
        max_size=6,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_ties_and_extremes(n, k, n_bins_frac, pool, seed):
    rng = np.random.default_rng(seed)
    values = np.array(pool)
    P = np.where(rng.random((n, k)) < 0.5, rng.choice(values, (n, k)), rng.random((n, k)))
    codes = rng.integers(0, k, size=n)
    n_bins = 1 + int(n_bins_frac * (n - 1))
    sums, labels = kernel_parts(P, codes, n_bins, max_members=P.size)
    ref_sums, ref_labels = brute_parts(P, codes, n_bins)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("order", ["C", "F"])
def test_histogram_validates_like_the_numpy_path(order):
    P = np.full((10, 2), 0.5, order=order)
    assert not kernel.histogram(P)[1]
    for bad in (np.nan, np.inf, -np.inf, -1e-300, 1.0 + 2**-52, 2.0):
        Q = P.copy(order=order)
        Q[3, 1] = bad
        assert kernel.histogram(Q)[1], bad
    Q = P.copy(order=order)
    Q[4] = [-0.0, 1.0]
    counts, bad, dev = kernel.histogram(Q)
    assert not bad and dev == 0.0
    assert counts.sum() == Q.size and counts[:, 0].tolist() == [1, 0]  # -0.0 counted as 0
    Q[5] = [0.5, 0.25]
    assert kernel.histogram(Q)[2] == 0.25
    Q[6] = [np.nan, 0.5]
    assert np.isnan(kernel.histogram(Q)[2])


def test_too_concentrated_returns_none():
    # one-hot columns: the edge cells hold everything; the kernel declines past max_members
    P = np.eye(3)[np.random.default_rng(0).integers(0, 3, 300)]
    counts = kernel.histogram(P)[0]
    codes = np.argmax(P, axis=1)
    assert kernel.bin_sums(P, codes, counts, 5) is None  # default bound n k / 4
    ref_sums, ref_labels = brute_parts(P, codes, 5)
    sums, labels = kernel.bin_sums(P, codes, counts, 5, max_members=P.size, parts=True)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_array_equal(sums, ref_sums)


@pytest.fixture
def kernel_always(monkeypatch):
    """Route every input through the compiled path, and count its uses."""
    calls = []
    real = kernel.bin_sums

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(truthful, "_KERNEL_MIN_SIZE", 0)
    monkeypatch.setattr(truthful, "_KERNEL_MIN_ROWS", 0)
    monkeypatch.setattr(kernel, "bin_sums", spy)
    return calls


def softmax_data(seed, n, k):
    rng = np.random.default_rng(seed)
    L = rng.normal(scale=2.0, size=(n, k))
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(max=k - 1)
    return y, P


@pytest.mark.parametrize("func", [classwise_lince, classwise_ece])
@pytest.mark.parametrize("n_bins", [1, 3, 15, 60])
def test_public_functions_equal_the_numpy_path(func, n_bins, kernel_always, monkeypatch):
    y, P = softmax_data(n_bins, 2000, 7)
    before = P.copy()
    fast = func(y, P, n_bins=n_bins)
    assert kernel_always == [True]
    np.testing.assert_array_equal(P, before)  # read only
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    slow = func(y, P, n_bins=n_bins)
    assert kernel_always == [True]
    assert fast == pytest.approx(slow, rel=1e-11, abs=1e-15)


def test_labels_and_string_classes(kernel_always, monkeypatch):
    y, P = softmax_data(1, 500, 3)
    names = np.array(["a", "b", "c"])[y]
    fast = classwise_lince(names, P, labels=["a", "b", "c"])
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    assert fast == pytest.approx(classwise_lince(names, P, labels=["a", "b", "c"]), rel=1e-12)
    assert kernel_always == [True]


def test_concentrated_input_falls_back_to_the_sort_path(kernel_always, monkeypatch):
    rng = np.random.default_rng(5)
    P = np.eye(4)[rng.integers(0, 4, 400)] * 0.75 + 0.0625  # 4 distinct values per column
    y = rng.integers(0, 4, 400)
    fast = classwise_lince(y, P, n_bins=6)
    assert kernel_always == [False]  # declined, then the numpy path without a second validation
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    assert fast == classwise_lince(y, P, n_bins=6)


@pytest.mark.parametrize("kind", ["fortran", "pandas"])
def test_fortran_and_pandas_inputs_take_the_column_kernel(kind, kernel_always, monkeypatch):
    pd = pytest.importorskip("pandas")
    y, P = softmax_data(7, 500, 4)
    X = np.asfortranarray(P) if kind == "fortran" else pd.DataFrame(P)
    fast = [classwise_lince(y, X, n_bins=9), classwise_ece(y, X, n_bins=9)]
    assert kernel_always == [True, True]
    # read column by column, each bin is still added in row order: the C-order kernel's values
    assert fast == [classwise_lince(y, P, n_bins=9), classwise_ece(y, P, n_bins=9)]
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    slow = [classwise_lince(y, X, n_bins=9), classwise_ece(y, X, n_bins=9)]
    assert fast == pytest.approx(slow, rel=1e-12)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    "bad, message",
    [(np.nan, "NaN"), (np.inf, "infinity"), (-0.25, r"\[0, 1\]"), (1.5, r"\[0, 1\]")],
)
def test_invalid_probabilities_same_error(bad, message, order, kernel_always, monkeypatch):
    y, P = softmax_data(2, 300, 3)
    P = P.copy(order=order)
    P[7, 1] = bad
    with pytest.raises(ValueError) as fast:
        classwise_lince(y, P)
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    with pytest.raises(ValueError) as slow:
        classwise_lince(y, P)
    assert str(fast.value) == str(slow.value)
    assert kernel_always == []


def test_row_sums_checked_and_labels_validated(kernel_always):
    y, P = softmax_data(3, 300, 3)
    Q = P.copy()
    Q[2] *= 1.01
    with pytest.raises(ValueError, match="sum"):
        classwise_lince(y, Q)
    Q = P.copy()
    Q[2] += np.array([1, -1, 0]) * 2e-7  # within the tolerance: accepted
    classwise_lince(y, Q)
    with pytest.raises(ValueError, match="inconsistent|samples|length"):
        classwise_lince(y[:-1], P)
    with pytest.raises(ValueError):
        classwise_lince(np.full(300, 7), P)
    assert kernel_always == [True]


def test_other_paths_do_not_use_the_kernel(kernel_always):
    y, P = softmax_data(4, 300, 3)
    classwise_lince(y, P, strategy="uniform")
    classwise_lince(y, P, sample_weight=np.ones(300))
    classwise_lince(y, P, n_bins=301)  # more bins than rows
    assert kernel_always == []


@pytest.mark.parametrize("convert", [lambda P: P.astype(np.float32), lambda P: P.tolist()])
def test_converted_inputs_take_the_kernel_after_validation(convert, kernel_always, monkeypatch):
    y, P = softmax_data(6, 400, 4)
    Q = convert(P)
    fast = classwise_lince(y, Q)
    assert kernel_always == [True]
    monkeypatch.setattr(truthful, "compiled", lambda *args, **kwargs: None)
    assert fast == pytest.approx(classwise_lince(y, Q), rel=1e-12)
    with pytest.raises(ValueError, match="NaN"):  # validated before the kernel runs
        bad = P.astype(np.float32)
        bad[3, 0] = np.nan
        classwise_lince(y, bad)


def test_counts_of_another_array_raise_instead_of_writing_out_of_bounds():
    # the second pass trusts the first pass's counts to size its buffer; if P changed in
    # between (another thread), every write stays in bounds and the call raises
    rng = np.random.default_rng(9)
    P = rng.random((5000, 3))
    Q = rng.random((5000, 3)) ** 4  # other values: other cells
    counts = kernel.histogram(P)[0]
    with pytest.raises(RuntimeError, match="changed"):
        kernel.bin_sums(Q, rng.integers(0, 3, 5000), counts, 15, max_members=P.size)
