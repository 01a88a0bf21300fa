import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skcal.binning import assign_bins


def _naive_quantile(values, n_bins):
    """Straightforward reference: stable sort by (value, index), then numpy.array_split."""
    n = len(values)
    order = sorted(range(n), key=lambda i: (values[i], i))
    ids = np.empty(n, dtype=int)
    for b, group in enumerate(np.array_split(np.array(order), n_bins)):
        for i in group:
            ids[i] = b
    return ids


def test_uniform_edges_right_closed_like_sklearn():
    v = np.array([0.0, 0.1, 0.2499, 0.25, 0.2500001, 0.5, 0.75, 0.99, 1.0])
    assert assign_bins(v, n_bins=4, strategy="uniform").tolist() == [0, 0, 0, 0, 1, 1, 2, 3, 3]
    assert assign_bins([1.0], n_bins=1, strategy="uniform").tolist() == [0]
    assert assign_bins([0.0, 1.0], n_bins=3, strategy="uniform").tolist() == [0, 2]


@pytest.mark.parametrize("n_bins", [1, 2, 3, 5, 7, 10, 11, 15, 20, 100, 1000])
def test_uniform_equals_calibration_curve_searchsorted_on_every_edge(n_bins):
    edges = np.linspace(0, 1, n_bins + 1)
    # every edge, its float neighbours, and the decimal spellings j / n_bins
    v = np.concatenate(
        [edges, np.nextafter(edges, 0), np.nextafter(edges, 1), np.arange(n_bins + 1) / n_bins]
    )
    v = np.clip(v, 0, 1)
    expected = np.searchsorted(edges[1:-1], v)  # sklearn.calibration.calibration_curve
    np.testing.assert_array_equal(assign_bins(v, n_bins=n_bins, strategy="uniform"), expected)


def test_uniform_rejects_values_outside_unit_interval():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        assign_bins([0.2, 1.2], n_bins=3, strategy="uniform")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        assign_bins([-0.1, 0.5], n_bins=3, strategy="uniform")


def test_quantile_remainders_go_to_the_first_bins():
    ids = assign_bins(np.linspace(0, 1, 10), n_bins=3)
    assert np.bincount(ids).tolist() == [4, 3, 3]
    assert ids.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_quantile_ties_broken_by_index():
    ids = assign_bins([0.5, 0.5, 0.5, 0.5], n_bins=2)
    assert ids.tolist() == [0, 0, 1, 1]
    ids = assign_bins([0.7, 0.5, 0.5, 0.1], n_bins=2)
    assert ids.tolist() == [1, 0, 1, 0]


def test_quantile_more_bins_than_values():
    ids = assign_bins([0.3, 0.1, 0.2], n_bins=10)
    assert ids.tolist() == [2, 0, 1]


def test_quantile_accepts_any_real_values():
    assert assign_bins([-5.0, 3.0, 100.0, 0.0], n_bins=2).tolist() == [0, 1, 1, 0]


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.integers(1, 40), elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])),
    st.integers(1, 12),
)
def test_quantile_matches_naive_reference(values, n_bins):
    np.testing.assert_array_equal(
        assign_bins(values, n_bins=n_bins), _naive_quantile(values.tolist(), n_bins)
    )


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 60), elements=st.floats(0, 1)), st.integers(1, 20))
def test_builtin_ids_in_range_and_monotone(values, n_bins):
    for strategy in ("uniform", "quantile"):
        ids = assign_bins(values, n_bins=n_bins, strategy=strategy)
        assert ids.dtype == np.intp
        assert ids.min() >= 0 and ids.max() < n_bins
        order = np.argsort(values, kind="stable")
        assert (np.diff(ids[order]) >= 0).all()


def test_two_dimensional_input_is_binned_column_by_column():
    rng = np.random.default_rng(0)
    V = rng.random((50, 4))
    for strategy in ("uniform", "quantile", lambda v, b: (v > 0.5).astype(int)):
        ids = assign_bins(V, n_bins=7, strategy=strategy)
        for j in range(4):
            np.testing.assert_array_equal(ids[:, j], assign_bins(V[:, j], n_bins=7, strategy=strategy))


def test_callable_is_used_and_receives_a_copy():
    v = np.array([0.1, 0.6, 0.3])

    def rule(values, n_bins):
        assert n_bins == 5
        values[:] = -1.0  # must not reach the caller's array
        return np.array([3, 0, 3])

    assert assign_bins(v, n_bins=5, strategy=rule).tolist() == [3, 0, 3]
    assert v.tolist() == [0.1, 0.6, 0.3]
    # integral floats are accepted
    assert assign_bins(v, n_bins=2, strategy=lambda x, b: np.array([0.0, 1.0, 1.0])).tolist() == [0, 1, 1]


@pytest.mark.parametrize(
    "rule, match",
    [
        (lambda v, b: np.zeros(len(v) + 1, dtype=int), "one bin id per value"),
        (lambda v, b: v, "integer"),
        (lambda v, b: np.array(["a"] * len(v)), "integer"),
        (lambda v, b: np.ones(len(v), dtype=bool), "integer"),
        (lambda v, b: -np.ones(len(v), dtype=int), "non-negative"),
    ],
)
def test_callable_output_is_validated(rule, match):
    with pytest.raises(ValueError, match=match):
        assign_bins([0.1, 0.2, 0.3], n_bins=2, strategy=rule)


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True, "5", None])
def test_n_bins_validated(n_bins):
    with pytest.raises(ValueError, match="n_bins"):
        assign_bins([0.1, 0.2], n_bins=n_bins)


def test_bad_values_and_strategy():
    with pytest.raises(ValueError, match="NaN"):
        assign_bins([0.1, np.nan], n_bins=2)
    with pytest.raises(ValueError, match="strategy"):
        assign_bins([0.1, 0.2], n_bins=2, strategy="kmeans")
    with pytest.raises(ValueError, match="empty"):
        assign_bins([], n_bins=2)


def _stable_reference(values, n_bins):
    n = len(values)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(n, dtype=int)
    ranks[order] = np.arange(n)
    base, extra = divmod(n, n_bins)
    sizes = [base + (1 if b < extra else 0) for b in range(n_bins)]
    return np.repeat(np.arange(n_bins), sizes)[ranks]


@pytest.fixture
def tiny_histogram(monkeypatch):
    """Make the linear-time path recurse on small inputs (few cells, small fallback size)."""
    import skcal.binning as binning

    monkeypatch.setattr(binning, "_N_CELLS", 7)
    monkeypatch.setattr(binning, "_SMALL", 3)
    monkeypatch.setattr(binning, "_MAX_DEPTH", 4)


_TIED = st.sampled_from([0.0, 1e-300, 0.1, 0.25, 0.5, 0.5000000000000001, 0.9, 1.0, -3.0, 1e300])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        arrays(np.float64, st.integers(1, 200), elements=_TIED),
        arrays(np.float64, st.integers(1, 200), elements=st.floats(-1e6, 1e6)),
        arrays(np.float64, st.integers(1, 200), elements=st.floats(0, 1)),
    ),
    st.integers(1, 250),
)
def test_linear_time_quantile_equals_stable_sort_small_cells(tiny_histogram, values, n_bins):
    from skcal.binning import _quantile_ids_1d

    np.testing.assert_array_equal(_quantile_ids_1d(values, n_bins), _stable_reference(values, n_bins))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_bins", [2, 15, 100, 5000])
def test_linear_time_quantile_equals_stable_sort_large(seed, n_bins):
    from skcal.binning import _quantile_ids_1d

    rng = np.random.default_rng(seed)
    n = 30_000
    cases = [
        rng.random(n),
        rng.dirichlet(np.ones(50), size=n)[:, 0],  # skewed: dense boundary cells, recursion
        np.round(rng.random(n), 2),  # heavy ties straddling boundaries
        np.where(rng.random(n) < 0.9, 0.3, rng.random(n)),  # one value holds 90% of the mass
        np.zeros(n),
        np.concatenate([rng.random(n - 2), [1e300, -1e300]]),  # huge span
    ]
    for v in cases:
        np.testing.assert_array_equal(_quantile_ids_1d(v, n_bins), _stable_reference(v, n_bins))


def test_quantile_two_dimensional_equals_stable_sort_per_column():
    rng = np.random.default_rng(3)
    V = np.round(rng.dirichlet(np.ones(11), size=9000), 3)
    ids = assign_bins(V, n_bins=15)
    for j in range(V.shape[1]):
        np.testing.assert_array_equal(ids[:, j], _stable_reference(V[:, j], 15))


# ----------------------------------------------------------------------------------------------
# the hat-function kernel shared by SCDL, the rounder and the reliability diagram
# ----------------------------------------------------------------------------------------------
def _hat_brute(values, m, weights):
    nodes = np.arange(m + 1)
    H = np.maximum(0.0, 1.0 - np.abs(m * values[:, None] - nodes[None, :]))  # (n, m + 1)
    return weights @ H


@settings(max_examples=60, deadline=None)
@given(
    values=arrays(np.float64, st.integers(1, 40), elements=st.floats(0, 1)),
    m=st.integers(1, 64),
)
def test_hat_deposit_equals_the_definition(values, m):
    from skcal.binning import hat_deposit

    n = values.shape[0]
    W = np.random.default_rng(n * 100 + m).uniform(size=(3, n))
    np.testing.assert_allclose(hat_deposit(values, m), _hat_brute(values, m, np.ones(n)), atol=1e-12)
    np.testing.assert_allclose(hat_deposit(values, m, W[0]), _hat_brute(values, m, W[0]), atol=1e-12)
    np.testing.assert_allclose(hat_deposit(values, m, W), _hat_brute(values, m, W), atol=1e-12)


def test_hat_deposit_keeps_total_and_first_moment():
    from skcal.binning import hat_deposit

    v = np.random.default_rng(0).uniform(size=1000)
    v[:3] = [0.0, 1.0, 0.5]
    for m in (1, 2, 7, 16, 1000):
        d = hat_deposit(v, m)
        assert d.shape == (m + 1,)
        assert d.sum() == pytest.approx(1000.0, rel=1e-12)
        assert (d * np.arange(m + 1) / m).sum() == pytest.approx(v.sum(), rel=1e-12)


def test_hat_neighbours_endpoints():
    from skcal.binning import hat_neighbours

    lo, frac = hat_neighbours(np.array([0.0, 1.0, 0.5]), 2)
    assert lo.tolist() == [0, 1, 1] and frac.tolist() == [0.0, 1.0, 0.0]
