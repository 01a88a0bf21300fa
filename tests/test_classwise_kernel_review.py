"""Adversarial review of the compiled classwise quantile-bin sums (skcal/_classwise_kernel.py).

The reference here is written from the definition alone: for each class column ``j`` the rows are
ordered by ``(P[i, j], i)`` (a value tie is broken by the row index; ``-0.0 == 0.0``), the sorted
positions are cut into ``np.array_split(np.arange(n), n_bins)`` groups, and bin ``b`` of column
``j`` gives ``sum_{i in b} P[i, j]`` (compared with the exact ``math.fsum``) and the exact count
``#{i in b : y_i == j}``. ``classwise_lince`` is ``sum_{j, b} s_jb**2 / (k n**2)`` and
``classwise_ece`` is ``sum_{j, b} |s_jb| / (k n)``, ``s_jb`` the sum minus the count.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skcal.truthful as truthful
from skcal.truthful import classwise_ece, classwise_lince

pytest.importorskip("numba", reason="numba (the fast extra) is not installed")
from skcal import _classwise_kernel as kernel  # noqa: E402

POW = [2.0**-40, 2.0**-41]
SPECIAL = np.array(
    [0.0, -0.0, 5e-324, 1e-320, 2.0**-1022, np.nextafter(2.0**-1022, 0)]
    + [v for p in POW for v in (np.nextafter(p, 0), p, np.nextafter(p, 1))]
    + [2.0**-20, 2.0**-2, 0.5, np.nextafter(0.5, 0), np.nextafter(0.5, 1), 1.0 - 2.0**-53, 1.0]
)


# ----------------------------------------------------------------------------------------------
# the reference
# ----------------------------------------------------------------------------------------------


def ref_order(col):
    """Row order by (value, row index); ``-0.0`` and ``0.0`` are the same value."""
    n = col.shape[0]
    if n <= 2000:
        return np.array(sorted(range(n), key=lambda i: (float(col[i]) + 0.0, i)), dtype=np.intp)
    return np.lexsort((np.arange(n), col + 0.0))


def ref_parts(P, codes, n_bins):
    """Exact per-(column, bin) sums (fsum) and label counts."""
    n, k = P.shape
    sums = np.zeros((k, n_bins))
    labels = np.zeros((k, n_bins), dtype=np.int64)
    groups = np.array_split(np.arange(n), n_bins)
    for j in range(k):
        order = ref_order(P[:, j])
        for b, g in enumerate(groups):
            rows = order[g]
            sums[j, b] = math.fsum(P[rows, j].tolist())
            labels[j, b] = int(np.count_nonzero(codes[rows] == j))
    return sums, labels


def ref_measures(P, codes, n_bins):
    n, k = P.shape
    sums, labels = ref_parts(P, codes, n_bins)
    s = sums - labels
    return float((s**2).sum() / (k * n**2)), float(np.abs(s).sum() / (k * n))


def kernel_parts(P, codes, n_bins):
    counts, bad, _ = kernel.histogram(P)
    assert not bad
    out = kernel.bin_sums(P, np.asarray(codes), counts, n_bins, parts=True, max_members=P.size)
    assert out is not None
    return out


def check_kernel(P, codes, n_bins):
    before, codes_before = P.copy(), np.array(codes, copy=True)
    sums, labels = kernel_parts(P, codes, n_bins)
    # the Fortran-ordered copy goes through the column-by-column passes: the same bits
    sums_f, labels_f = kernel_parts(np.asfortranarray(P), codes, n_bins)
    np.testing.assert_array_equal(labels_f, labels)
    np.testing.assert_array_equal(sums_f, sums)
    np.testing.assert_array_equal(P, before)
    np.testing.assert_array_equal(codes, codes_before)
    assert np.array_equal(np.signbit(P), np.signbit(before))  # -0.0 kept
    ref_sums, ref_labels = ref_parts(P, codes, n_bins)
    assert sums.shape == ref_sums.shape and labels.shape == ref_labels.shape
    np.testing.assert_array_equal(labels, ref_labels)
    # a bin's sum to round-off: relative to the bin's mass (all terms are >= 0)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-13, atol=1e-300)
    return sums, labels


def install_spy(monkeypatch):
    """Every input through the compiled path; records whether it answered (not None)."""
    calls = []
    real = kernel.bin_sums

    def spy(P, *args, **kwargs):
        # no bound on the edge-cell members: the kernel answers even for concentrated data
        out = real(P, *args, **{**kwargs, "max_members": P.size})
        calls.append(out is not None)
        return out

    monkeypatch.setattr(truthful, "_KERNEL_MIN_SIZE", 0)
    # a row bound, if one is added (proposed by this review), is lowered as well
    monkeypatch.setattr(truthful, "_KERNEL_MIN_ROWS", 0, raising=False)
    monkeypatch.setattr(kernel, "bin_sums", spy)
    return calls


@pytest.fixture
def always(monkeypatch):
    return install_spy(monkeypatch)


def numpy_path(monkeypatch, func, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(truthful, "compiled", lambda *args, **kwargs: None)
        return func(*args, **kwargs)


def check_public(monkeypatch, y, P, n_bins, codes=None, **kw):
    """Kernel path == numpy path == reference, for both measures."""
    before = P.copy()
    codes = np.asarray(y) if codes is None else codes
    ref = ref_measures(np.asarray(P, dtype=np.float64), codes, n_bins)
    for func, r in zip((classwise_lince, classwise_ece), ref, strict=True):
        fast = func(y, P, n_bins=n_bins, **kw)
        slow = numpy_path(monkeypatch, func, y, P, n_bins=n_bins, **kw)
        assert fast == pytest.approx(r, rel=1e-10, abs=1e-300), func.__name__
        assert slow == pytest.approx(r, rel=1e-10, abs=1e-300), func.__name__
        assert fast == pytest.approx(slow, rel=1e-10, abs=1e-300), func.__name__
    np.testing.assert_array_equal(np.asarray(P), before)


def two_column(col):
    col = np.asarray(col, dtype=np.float64)
    return np.ascontiguousarray(np.column_stack([col, 1.0 - col]))


# ----------------------------------------------------------------------------------------------
# the kernel entry points against the reference
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 17])
def test_small_n_every_bin_count(n):
    rng = np.random.default_rng(n)
    for k in (2, 3, 5):
        P = rng.dirichlet(np.ones(k), size=n)
        mask = rng.random((n, k)) < 0.4
        P[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
        codes = rng.integers(0, k, size=n)
        for n_bins in range(1, n + 1):
            check_kernel(P, codes, n_bins)


@pytest.mark.parametrize("value", SPECIAL.tolist())
@pytest.mark.parametrize("n_bins", [1, 2, 3, 7])
def test_constant_columns(value, n_bins):
    # every entry of column 0 the same value: the bins are the row-index blocks
    n = 23
    P = np.full((n, 3), value)
    P[:, 1] = 0.25
    P[:, 2] = np.linspace(0, 1, n)[::-1]
    codes = np.arange(n) % 3
    check_kernel(P, codes, n_bins)


@pytest.mark.parametrize("seed", range(6))
def test_special_values_mixed(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 700))
    k = int(rng.integers(2, 6))
    P = rng.random((n, k)) ** rng.uniform(1, 30)
    mask = rng.random((n, k)) < rng.uniform(0.1, 0.9)
    P[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
    codes = rng.integers(0, k, size=n)
    for n_bins in sorted({1, 2, 3, 10, n // 3 + 1, n - 1, n}):
        if n_bins >= 1:
            check_kernel(P, codes, n_bins)


def test_neighbours_of_powers_of_two_every_bin_boundary():
    # a column made only of values around 2**-40 / 2**-41 in shuffled order, many duplicates;
    # n_bins = n puts a bin boundary between every pair of sorted positions
    rng = np.random.default_rng(11)
    vals = [
        v
        for p in POW
        for v in (
            np.nextafter(np.nextafter(p, 0), 0),
            np.nextafter(p, 0),
            p,
            np.nextafter(p, 1),
            np.nextafter(np.nextafter(p, 1), 1),
        )
    ]
    col = rng.choice(vals, size=300)
    P = two_column(col)
    codes = rng.integers(0, 2, size=300)
    for n_bins in (1, 2, 9, 150, 299, 300):
        check_kernel(P, codes, n_bins)


def test_negative_zero_ties_with_zero_by_index():
    # -0.0 and 0.0 are the same value, so rows keep index order whatever the sign bit
    n = 40
    col = np.where(np.arange(n) % 2 == 0, -0.0, 0.0)
    col[::7] = 0.5
    P = two_column(col)
    P[:, 1] = np.where(np.arange(n) % 3 == 0, -0.0, P[:, 1])
    codes = (np.arange(n) * 7 % 5 < 2).astype(int)
    for n_bins in (1, 2, 3, 5, 13, 40):
        check_kernel(P, codes, n_bins)


def test_subnormals_order():
    sub = np.array([5e-324, 1e-323, 2e-323, 1e-310, 2.0**-1022, 0.0, -0.0])
    rng = np.random.default_rng(2)
    col = rng.choice(sub, size=200)
    P = two_column(col)
    codes = rng.integers(0, 2, size=200)
    for n_bins in (2, 7, 100, 200):
        check_kernel(P, codes, n_bins)


def test_near_one():
    rng = np.random.default_rng(4)
    near = [1.0, 1.0 - 2.0**-53, 1.0 - 2.0**-52, 1.0 - 2.0**-40, 0.5 + 2**-53 * 0]
    col = rng.choice(near, size=257)
    P = two_column(col)
    codes = rng.integers(0, 2, size=257)
    for n_bins in (1, 2, 5, 64, 257):
        check_kernel(P, codes, n_bins)


def test_codes_with_absent_class():
    rng = np.random.default_rng(6)
    P = rng.dirichlet(np.ones(4), size=301)
    codes = rng.integers(0, 3, size=301)  # class 3 never present
    sums, labels = check_kernel(P, codes, 9)
    assert labels[3].sum() == 0 and (labels.sum(axis=1)[:3] == np.bincount(codes)).all()


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 60),
    k=st.integers(2, 5),
    frac=st.floats(0.0, 1.0),
    pool=st.lists(st.sampled_from(SPECIAL.tolist()), min_size=1, max_size=5),
    p_special=st.floats(0.0, 1.0),
    power=st.sampled_from([1.0, 4.0, 40.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_kernel(n, k, frac, pool, p_special, power, seed):
    rng = np.random.default_rng(seed)
    P = rng.random((n, k)) ** power
    mask = rng.random((n, k)) < p_special
    P[mask] = rng.choice(np.array(pool), size=int(mask.sum()))
    codes = rng.integers(0, k, size=n)
    n_bins = 1 + int(frac * (n - 1))
    check_kernel(P, codes, n_bins)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(200, 3000),
    levels=st.integers(1, 12),
    frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_heavy_ties_many_bins(n, levels, frac, seed):
    # few distinct values per column (one-hot-like data concentrates everything in edge cells)
    rng = np.random.default_rng(seed)
    grid = np.sort(rng.choice(SPECIAL, size=levels))
    P = rng.choice(grid, size=(n, 3))
    codes = rng.integers(0, 3, size=n)
    n_bins = 1 + int(frac * (n - 1))
    check_kernel(P, codes, n_bins)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 4000),
    n_cells=st.integers(1, 6),
    frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_distinct_values_inside_few_cells(n, n_cells, frac, seed):
    # a few cells, each holding many distinct values (and some ties): the edge cells are
    # ordered by the in-cell sort
    rng = np.random.default_rng(seed)
    bases = rng.choice(np.array([2.0**-45, 2.0**-41, 2.0**-40, 0.25, 0.5]), size=n_cells)
    base = rng.choice(bases, size=(n, 2))
    P = base * (1.0 + rng.integers(0, 2 ** rng.integers(1, 40), size=(n, 2)) * 2.0**-52)
    codes = rng.integers(0, 2, size=n)
    check_kernel(P, codes, 1 + int(frac * (n - 1)))


def test_histogram_flags_every_invalid_value():
    base = np.full((8, 3), 1.0 / 3)
    for bad in (np.nan, -np.nan, np.inf, -np.inf, -5e-324, -1.0, np.nextafter(1.0, 2), 2.0, 1e308):
        for pos in ((0, 0), (7, 2), (3, 1)):
            Q = base.copy()
            Q[pos] = bad
            assert kernel.histogram(Q)[1], (bad, pos)
    assert not kernel.histogram(np.array([[-0.0, 1.0]]))[1]


# ----------------------------------------------------------------------------------------------
# the public functions: the kernel path, the numpy path and the reference
# ----------------------------------------------------------------------------------------------


def softmax_data(seed, n, k, scale=2.0):
    rng = np.random.default_rng(seed)
    L = rng.normal(scale=scale, size=(n, k))
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(max=k - 1)
    return y, P


@pytest.mark.parametrize("n_bins", [1, 2, 15, 99, 100])
def test_public_special_two_columns(n_bins, always, monkeypatch):
    rng = np.random.default_rng(n_bins)
    col = rng.choice(SPECIAL, size=100)
    P = two_column(col)
    y = np.arange(100) % 2
    check_public(monkeypatch, y, P, n_bins)
    assert always and all(always)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_public_tiny_n(n, always, monkeypatch):
    P = two_column([0.25, 0.25, 0.75][:n])
    for y in (np.array([0, 1, 0][:n]), np.array([1, 0, 1][:n])):
        labels = [0, 1]
        for n_bins in range(1, n + 1):
            check_public(monkeypatch, y, P, n_bins, labels=labels)
    assert always and all(always)


def test_public_constant_column_and_ties(always, monkeypatch):
    n = 60
    P = np.zeros((n, 4))
    P[:, 0] = 0.25
    P[:, 1] = np.where(np.arange(n) % 3 == 0, 0.5, 0.25)
    P[:, 2] = np.where(np.arange(n) % 5 == 0, 0.0, 0.25)
    P[:, 3] = 1.0 - P[:, :3].sum(axis=1)
    y = np.arange(n) % 4
    for n_bins in (1, 4, 7, 60):
        check_public(monkeypatch, y, P, n_bins)
    assert always and all(always)


def test_public_strings_labels_and_absent_class(always, monkeypatch):
    y, P = softmax_data(7, 900, 4)
    names = np.array(["ant", "bee", "cat", "dog"])
    y3 = np.where(y == 3, 0, y)  # "dog" never present
    check_public(monkeypatch, names[y3], P, 12, codes=y3, labels=list(names))
    # labels given in a non-sorted order: column j is labels[j]
    perm = np.array([2, 0, 3, 1])
    labs = names[perm]
    codes = np.argsort(perm)[y]
    check_public(monkeypatch, names[y], P, 12, codes=codes, labels=list(labs))
    assert always and all(always)


def test_public_rows_sum_to_one_within_tolerance(always, monkeypatch):
    y, P = softmax_data(8, 500, 3)
    P = P.copy()
    P[:, 0] = np.clip(P[:, 0] + 9e-7, 0, 1)  # rows sum to 1 + 9e-7
    check_public(monkeypatch, y, P, 10)
    assert always == [True, True]


def test_public_one_dimensional_binary(always, monkeypatch):
    rng = np.random.default_rng(9)
    p = rng.choice(SPECIAL, size=300)
    y = rng.integers(0, 2, size=300)
    before = p.copy()
    for func in (classwise_lince, classwise_ece):
        fast = func(y, p, n_bins=7)
        assert fast == pytest.approx(numpy_path(monkeypatch, func, y, p, n_bins=7), rel=1e-12, abs=1e-300)
    np.testing.assert_array_equal(p, before)
    check_public(monkeypatch, y, two_column(p), 7)


@pytest.mark.parametrize(
    "bad",
    [np.nan, np.inf, -np.inf, -0.25, -5e-324, 1.5, np.nextafter(1.0, 2)],
)
@pytest.mark.parametrize("func", [classwise_lince, classwise_ece])
def test_public_invalid_same_message(bad, func, always, monkeypatch):
    y, P = softmax_data(2, 300, 3)
    P = P.copy()
    P[299, 2] = bad
    with pytest.raises(ValueError) as fast:
        func(y, P)
    with pytest.raises(ValueError) as slow:
        numpy_path(monkeypatch, func, y, P)
    assert str(fast.value) == str(slow.value)
    # a bad row sum as well
    Q = P.copy()
    Q[299, 2] = 0.9
    Q[299, :2] = 0.5
    with pytest.raises(ValueError) as fast:
        func(y, Q)
    with pytest.raises(ValueError) as slow:
        numpy_path(monkeypatch, func, y, Q)
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("kind", ["fortran", "strided", "float32", "pandas", "list", "readonly"])
def test_public_converted_inputs_agree(kind, always, monkeypatch):
    y, P = softmax_data(10, 400, 5)
    if kind == "fortran":
        X = np.asfortranarray(P)
    elif kind == "strided":
        big = np.zeros((400, 10))
        big[:, ::2] = P
        X = big[:, ::2]
    elif kind == "float32":
        X = P.astype(np.float32)
    elif kind == "pandas":
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(P)
    elif kind == "list":
        X = P.tolist()
    else:
        X = P.copy()
        X.flags.writeable = False
    ref = np.asarray(X, dtype=np.float64)
    for func in (classwise_lince, classwise_ece):
        got = func(y, X, n_bins=11)
        want = numpy_path(monkeypatch, func, y, X, n_bins=11)
        assert got == pytest.approx(want, rel=1e-12)
        expected = dict(zip(("classwise_lince", "classwise_ece"), ref_measures(ref, y, 11), strict=True))
        assert want == pytest.approx(expected[func.__name__], rel=1e-10)
    # read as it is (readonly, Fortran order, a pandas frame's values) or validated into a
    # contiguous float64 copy (strided, float32, list): the kernel either way
    assert always == [True, True]


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 120),
    k=st.integers(2, 5),
    frac=st.floats(0.0, 1.0),
    p_special=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_public(n, k, frac, p_special, seed):
    # rows made of special values in the first k - 1 columns, the rest in the last
    rng = np.random.default_rng(seed)
    P = rng.random((n, k)) / k  # the first k - 1 columns sum to less than 1
    mask = rng.random((n, k - 1)) < p_special
    head = P[:, : k - 1]
    head[mask] = rng.choice(SPECIAL[SPECIAL <= 1.0 / k], size=int(mask.sum()))
    P[:, k - 1] = np.clip(1.0 - head.sum(axis=1), 0.0, 1.0)
    P = np.ascontiguousarray(P)
    y = rng.integers(0, k, size=n)
    n_bins = 1 + int(frac * (n - 1))
    mp = pytest.MonkeyPatch()
    try:
        calls = install_spy(mp)
        check_public(mp, y, P, n_bins, labels=list(range(k)))
        assert calls == [True, True]
    finally:
        mp.undo()


def test_large_random_against_numpy_path(always, monkeypatch):
    y, P = softmax_data(12, 200_000, 20)
    before = P.copy()
    for n_bins in (15, 1000):
        for func in (classwise_lince, classwise_ece):
            fast = func(y, P, n_bins=n_bins)
            slow = numpy_path(monkeypatch, func, y, P, n_bins=n_bins)
            assert fast == pytest.approx(slow, rel=1e-11)
    np.testing.assert_array_equal(P, before)
    assert always == [True] * 4
    # the bins and counts themselves, on a subset of columns
    sums, labels = kernel_parts(P, y, 1000)
    groups = np.array_split(np.arange(P.shape[0]), 1000)
    for j in (0, 7, 19):
        order = np.lexsort((np.arange(P.shape[0]), P[:, j]))
        lab = np.array([np.count_nonzero(y[order[g]] == j) for g in groups])
        np.testing.assert_array_equal(labels[j], lab)
        np.testing.assert_allclose(sums[j], [P[order[g], j].sum() for g in groups], rtol=1e-11)


def test_edge_table_past_int16(always, monkeypatch):
    # more than 2**15 edge cells with n_bins < 2**15: the cell table must switch to int32
    rng = np.random.default_rng(13)
    n, k = 60000, 8
    P = 2.0 ** (-40 * rng.random((n, k)))  # log-uniform: every fine cell occupied
    codes = rng.integers(0, k, n)
    sums, labels = kernel_parts(P, codes, 30000)
    ref_sums, ref_labels = ref_parts(P, codes, 30000)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-13, atol=0)


# ----------------------------------------------------------------------------------------------
# regressions: bugs this review found, fixed
# ----------------------------------------------------------------------------------------------


def boundary_row(k=40, seed=1):
    """A row the numpy row-sum check rejects (|sum - 1| just above 1e-6) but the kernel's accepts."""
    rng = np.random.default_rng(seed)
    for _ in range(50):
        R = rng.dirichlet(np.ones(k), size=20000)
        R *= 1 + 1e-6 + rng.integers(-40, 40, size=(20000, 1)) * 2.0**-52
        dev = np.abs(R.sum(axis=1) - 1.0)
        for i in np.flatnonzero((dev > 1e-6) & (dev < 1e-6 + 1e-14))[:200]:
            if kernel.histogram(R[i : i + 1])[2] <= 1e-6:
                return R[i]
    raise AssertionError("no boundary row found")


def test_row_sum_on_the_tolerance_same_decision(always, monkeypatch):
    row = boundary_row()
    k = row.shape[0]
    rng = np.random.default_rng(0)
    P = np.ascontiguousarray(np.vstack([row, rng.dirichlet(np.ones(k), size=199)]))
    y = np.arange(200) % k
    with pytest.raises(ValueError, match="sum to 1") as slow:
        numpy_path(monkeypatch, classwise_lince, y, P)
    with pytest.raises(ValueError) as fast:
        classwise_lince(y, P)
    assert str(fast.value) == str(slow.value)


MASKED_SCRIPT = """
import numpy as np
import skcal.truthful as T
T._KERNEL_MIN_SIZE = 0
rng = np.random.default_rng(0)
P = rng.dirichlet(np.ones(3), size=300)
y = np.arange(300) % 3
M = np.ma.masked_array(P.copy())
fast = T.classwise_lince(y, M)  # the first compiled call of the process
T.compiled = lambda *args, **kwargs: None
assert abs(fast - T.classwise_lince(y, M)) <= 1e-12 * fast, fast
print("ok")
"""


def test_masked_array_input_in_a_fresh_process():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", MASKED_SCRIPT], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-500:]


@pytest.mark.parametrize("force", [False, True])
def test_wide_short_input_memory(monkeypatch, force):
    import tracemalloc

    # 4195 x 1000 = 4.2e6 entries >= 2**22: the row bound sends it to the numpy path; forced
    # through the kernel, its tables (built in numba, no (k, N_CELLS) int64 temporaries) fit too
    k = 1000
    n = -(-truthful._KERNEL_MIN_SIZE // k)
    if force:
        monkeypatch.setattr(truthful, "_KERNEL_MIN_ROWS", 0)
    y, P = softmax_data(15, n, k)
    y = np.arange(n) % k
    tracemalloc.start()
    try:
        classwise_lince(y, P)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * P.nbytes, f"peak {peak / 2**20:.0f} MiB for a {P.nbytes / 2**20:.0f} MiB input"


def test_threads_give_the_same_numbers(always):
    from concurrent.futures import ThreadPoolExecutor

    y, P = softmax_data(16, 20000, 10)
    want = [classwise_lince(y, P, n_bins=b) for b in (3, 15, 40, 3, 15, 40)]
    with ThreadPoolExecutor(2) as ex:
        got = list(ex.map(lambda b: classwise_lince(y, P, n_bins=b), (3, 15, 40, 3, 15, 40)))
    assert got == want
    assert all(always)
