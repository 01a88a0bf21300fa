import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import get_scorer
from sklearn.model_selection import cross_val_score

import skcal
from skcal.truthful import (
    brier_over_k,
    classwise_ece,
    classwise_lince,
    conf_ce,
    conf_ece,
    confidence_proper_loss,
    lince_score,
    truthful_conf_ce,
    truthful_decomposition,
)

# ---------------------------------------------------------------------------------------------
# an independent, deliberately plain reference implementation (python loops, dict bins)
# ---------------------------------------------------------------------------------------------


def _ref_bins(values, n_bins, strategy):
    n = len(values)
    if strategy == "uniform":  # right-closed: (j/B, (j+1)/B], 0 in the first bin
        edges = np.linspace(0, 1, n_bins + 1)
        return [next(j for j in range(n_bins) if v <= edges[j + 1] or j == n_bins - 1) for v in values]
    order = sorted(range(n), key=lambda i: (values[i], i))
    ids = [0] * n
    base, extra = divmod(n, n_bins)
    pos = 0
    for b in range(n_bins):
        size = base + (1 if b < extra else 0)
        for i in order[pos : pos + size]:
            ids[i] = b
        pos += size
    return ids


def _ref_measures(y, P, n_bins, strategy, w=None):
    n, k = len(y), len(P[0])
    w = [1.0] * n if w is None else list(w)
    W = sum(w)
    top = []
    for row in P:
        best = 0
        for j in range(k):
            if row[j] > row[best]:
                best = j
        top.append(best)
    c = [P[i][top[i]] for i in range(n)]
    z = [1.0 if y[i] == top[i] else 0.0 for i in range(n)]
    bins = _ref_bins(c, n_bins, strategy)
    sums = {}
    for i in range(n):
        sums[bins[i]] = sums.get(bins[i], 0.0) + w[i] * (c[i] - z[i])
    sq = sum(s * s for s in sums.values())
    out = {
        "conf_ce": sq / W**2,
        "truthful_conf_ce": sq / W**2 + sum(w[i] ** 2 * (1 - z[i]) for i in range(n)) / W**2,
        "conf_ece": sum(abs(s) for s in sums.values()) / W,
    }
    lince = ece = 0.0
    for r in range(k):
        col = [P[i][r] for i in range(n)]
        b = _ref_bins(col, n_bins, strategy)
        s = {}
        for i in range(n):
            s[b[i]] = s.get(b[i], 0.0) + w[i] * (col[i] - (1.0 if y[i] == r else 0.0))
        lince += sum(v * v for v in s.values()) / W**2
        ece += sum(abs(v) for v in s.values()) / W
    out["classwise_lince"] = lince / k
    out["classwise_ece"] = ece / k
    out["brier_over_k"] = (
        sum(w[i] * sum((P[i][r] - (y[i] == r)) ** 2 for r in range(k)) / k for i in range(n)) / W
    )
    out["confidence_proper_loss"] = sum(w[i] * (1 - z[i] + (c[i] - z[i]) ** 2) for i in range(n)) / W
    return out


_FUNCS = {
    "conf_ce": conf_ce,
    "truthful_conf_ce": truthful_conf_ce,
    "conf_ece": conf_ece,
    "classwise_lince": classwise_lince,
    "classwise_ece": classwise_ece,
}


def _random_case(rng, n, k, rounded=False):
    P = rng.dirichlet(np.ones(k) * 0.7, size=n)
    if rounded:  # many ties in the confidences
        P = np.round(P, 1)
        P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)
        P = P[(P >= 0).all(axis=1)]
    y = rng.integers(0, k, size=P.shape[0])
    return y, P


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_reference_loop_implementation(strategy, seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 80)), int(rng.integers(2, 6))
    y, P = _random_case(rng, n, k, rounded=seed % 2 == 1)
    n_bins = int(rng.integers(1, 12))
    w = rng.random(P.shape[0]) * 3 if seed >= 2 else None
    ref = _ref_measures(y.tolist(), P.tolist(), n_bins, strategy, w)
    for name, f in _FUNCS.items():
        got = f(y, P, n_bins=n_bins, strategy=strategy, sample_weight=w)
        assert got == pytest.approx(ref[name], rel=1e-12, abs=1e-15), name
    assert brier_over_k(y, P, sample_weight=w) == pytest.approx(ref["brier_over_k"], rel=1e-12)
    assert confidence_proper_loss(y, P, sample_weight=w) == pytest.approx(
        ref["confidence_proper_loss"], rel=1e-12
    )


def test_truthful_equals_uncorrected_plus_correction():
    rng = np.random.default_rng(5)
    y, P = _random_case(rng, 200, 4)
    z = P.argmax(axis=1) == y
    assert truthful_conf_ce(y, P) == pytest.approx(conf_ce(y, P) + (1 - z.mean()) / 200, rel=1e-12)


def test_classwise_lince_is_mean_of_per_class_lince():
    rng = np.random.default_rng(6)
    y, P = _random_case(rng, 97, 5)
    per = [lince_score(P[:, r], (y == r).astype(float), n_bins=9) for r in range(5)]
    assert classwise_lince(y, P, n_bins=9) == pytest.approx(np.mean(per), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# truthfulness by exact enumeration of all label outcomes
# ---------------------------------------------------------------------------------------------


def _expected(f, Q, P, **kw):
    """E_{y_i ~ Q_i independent}[f(y, P)] by enumerating all k^n label vectors."""
    Q, P = np.asarray(Q, float), np.asarray(P, float)
    n, k = Q.shape
    total = 0.0
    for ys in itertools.product(range(k), repeat=n):
        prob = np.prod([Q[i, ys[i]] for i in range(n)])
        if prob > 0:
            total += prob * f(np.array(ys), P, labels=list(range(k)), **kw)
    return total


Q_SPEC = [[1 / 2, 1 / 3, 1 / 6]]
FLAT = [[0.32, 0.32, 0.36]]  # flatter than the truth, top label on the least likely class


def test_spec_example_closed_forms():
    # one sample (one bin): E[ConfCE] = (c - s)^2 + s (1 - s), s = true prob. of the reported top class
    s_h, s_f, c_f = Fraction(1, 2), Fraction(1, 6), Fraction(36, 100)
    assert _expected(conf_ce, Q_SPEC, Q_SPEC) == pytest.approx(float(s_h * (1 - s_h)), abs=1e-14)  # 1/4
    flat = (c_f - s_f) ** 2 + s_f * (1 - s_f)  # 0.1763...
    assert _expected(conf_ce, Q_SPEC, FLAT) == pytest.approx(float(flat), abs=1e-14)
    # corrected: E = (c - s)^2 + 1 - s^2
    assert _expected(truthful_conf_ce, Q_SPEC, Q_SPEC) == pytest.approx(0.75, abs=1e-14)
    assert _expected(truthful_conf_ce, Q_SPEC, FLAT) == pytest.approx(float((c_f - s_f) ** 2 + 1 - s_f**2))


def test_spec_example_uncorrected_prefers_flattened_report_corrected_does_not():
    honest = {f.__name__: _expected(f, Q_SPEC, Q_SPEC) for f in (conf_ce, truthful_conf_ce, classwise_lince)}
    flat = {f.__name__: _expected(f, Q_SPEC, FLAT) for f in (conf_ce, truthful_conf_ce, classwise_lince)}
    assert flat["conf_ce"] < honest["conf_ce"] - 0.07  # 0.176 < 0.25: gamed
    assert honest["truthful_conf_ce"] < flat["truthful_conf_ce"] - 0.2
    assert honest["classwise_lince"] < flat["classwise_lince"]
    # the plain uniform report puts its (tied) top label on class 0 and does not game conf_ce
    assert _expected(conf_ce, Q_SPEC, [[1 / 3, 1 / 3, 1 / 3]]) > honest["conf_ce"]


def _simplex_grid(k, steps):
    for c in itertools.product(range(steps + 1), repeat=k - 1):
        if sum(c) <= steps:
            yield [x / steps for x in c] + [(steps - sum(c)) / steps]


def test_honest_report_minimises_over_a_grid_of_reports():
    # two samples with different posteriors; reports: a 1/6-grid of the simplex for the first sample,
    # a 1/3-grid plus the truth for the second
    Q = [[1 / 2, 1 / 3, 1 / 6], [1 / 6, 2 / 3, 1 / 6]]
    grid1 = list(_simplex_grid(3, 6))
    grid2 = list(_simplex_grid(3, 3)) + [Q[1]]
    results = {name: [] for name in ("truthful_conf_ce", "classwise_lince", "conf_ce")}
    for p1 in grid1:
        for p2 in grid2:
            P = [p1, p2]
            for name in results:
                results[name].append(_expected(_FUNCS[name], Q, P, n_bins=2))
    for name in ("truthful_conf_ce", "classwise_lince"):
        honest = _expected(_FUNCS[name], Q, Q, n_bins=2)
        assert honest <= min(results[name]) + 1e-12, name
    honest_ce = _expected(conf_ce, Q, Q, n_bins=2)
    assert min(results["conf_ce"]) < honest_ce - 0.01


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 3),
    st.integers(2, 3),
    st.integers(1, 3),
    st.sampled_from(["quantile", "uniform"]),
    st.integers(0, 2**32 - 1),
)
def test_truthfulness_property(n, k, n_bins, strategy, seed):
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.ones(k), size=n)
    P = rng.dirichlet(np.ones(k), size=n)
    w = rng.random(n) * 4 + 0.1
    for f in (truthful_conf_ce, classwise_lince):
        for sw in (None, w):
            honest = _expected(f, Q, Q, n_bins=n_bins, strategy=strategy, sample_weight=sw)
            other = _expected(f, Q, P, n_bins=n_bins, strategy=strategy, sample_weight=sw)
            assert honest <= other + 1e-12


def test_weights_with_squared_correction_keep_truthfulness_example():
    # A heavy sample (w = 5) whose truth is (1/2, 1/3, 1/6): reporting the flattened FLAT row lowers the
    # noise term of the unsquared-weight correction w (1 - z) / W^2, but not of w^2 (1 - z) / W^2.
    Q = [[1 / 2, 1 / 3, 1 / 6], [0.9, 0.05, 0.05]]
    w = np.array([5.0, 1.0])
    P_flat = [FLAT[0], Q[1]]
    honest = _expected(truthful_conf_ce, Q, Q, n_bins=2, sample_weight=w)
    flat = _expected(truthful_conf_ce, Q, P_flat, n_bins=2, sample_weight=w)
    assert honest < flat

    def unsquared(y, P, **kw):  # the alternative correction sum_i w_i (1 - z_i) / W^2
        z = np.asarray(P).argmax(axis=1) == y
        return conf_ce(y, P, **kw) + np.dot(w, 1 - z) / w.sum() ** 2

    assert _expected(unsquared, Q, P_flat, n_bins=2, sample_weight=w) < _expected(
        unsquared, Q, Q, n_bins=2, sample_weight=w
    )


def test_unit_and_rescaled_weights():
    rng = np.random.default_rng(1)
    y, P = _random_case(rng, 60, 3)
    w = rng.random(60) + 0.2
    for f in _FUNCS.values():
        assert f(y, P, sample_weight=np.ones(60)) == pytest.approx(f(y, P), rel=1e-12)
        assert f(y, P, sample_weight=7 * w) == pytest.approx(f(y, P, sample_weight=w), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# the decomposition n E[Cal] = E[proper loss] + bias
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("measure", ["truthful_conf_ce", "classwise_lince"])
@pytest.mark.parametrize("n_bins", [1, 2, 10])
def test_decomposition_exact_by_enumeration(measure, n_bins):
    rng = np.random.default_rng(n_bins)
    Q = rng.dirichlet(np.ones(3), size=4)
    P = rng.dirichlet(np.ones(3), size=4)
    out = truthful_decomposition(Q, P, measure=measure, n_bins=n_bins)
    assert out["check_method"] == "enumerate"
    assert out["expected_cal"] == pytest.approx(out["expected_cal_check"], rel=1e-12)
    assert out["expected_proper_loss"] == pytest.approx(out["expected_proper_loss_check"], rel=1e-12)
    assert out["n_expected_cal"] == pytest.approx(out["proper_loss_plus_bias"], rel=1e-12)
    # the enumeration really evaluates the public measure and loss
    f = truthful_conf_ce if measure == "truthful_conf_ce" else classwise_lince
    loss = confidence_proper_loss if measure == "truthful_conf_ce" else brier_over_k
    assert _expected(f, Q, P, n_bins=n_bins) == pytest.approx(out["expected_cal"], rel=1e-12)
    assert _expected(loss, Q, P) == pytest.approx(out["expected_proper_loss"], rel=1e-12)
    if n_bins >= 4:  # one sample per bin: no pooling
        assert out["pooling_bias"] == pytest.approx(0.0, abs=1e-14)
    honest = truthful_decomposition(Q, Q, measure=measure, n_bins=n_bins)
    assert honest["bias_term"] == pytest.approx(0.0, abs=1e-15)
    assert honest["pooling_bias"] == pytest.approx(0.0, abs=1e-15)


def test_decomposition_monte_carlo():
    rng = np.random.default_rng(3)
    Q = rng.dirichlet(np.ones(4), size=30)
    P = rng.dirichlet(np.ones(4), size=30)
    for measure in ("truthful_conf_ce", "classwise_lince"):
        out = truthful_decomposition(Q, P, measure=measure, n_bins=3, n_draws=4000, random_state=0)
        assert out["check_method"] == "monte_carlo"
        se_cal, se_loss = out["check_stderr"]
        assert abs(out["expected_cal"] - out["expected_cal_check"]) < 5 * se_cal
        assert abs(out["expected_proper_loss"] - out["expected_proper_loss_check"]) < 5 * se_loss


def test_decomposition_errors():
    with pytest.raises(ValueError, match="measure"):
        truthful_decomposition([[0.5, 0.5]], [[0.5, 0.5]], measure="conf_ce")
    with pytest.raises(ValueError, match="max_outcomes"):
        truthful_decomposition(np.full((30, 2), 0.5), np.full((30, 2), 0.5), method="enumerate")
    with pytest.raises(ValueError, match="columns"):
        truthful_decomposition([[0.5, 0.5]], [[0.5, 0.25, 0.25]])


# ---------------------------------------------------------------------------------------------
# invariances, binary reduction, labels
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_permutation_invariance(strategy):
    rng = np.random.default_rng(11)
    y, P = _random_case(rng, 120, 4)  # continuous: distinct confidences, so quantile ties do not arise
    if strategy == "uniform":  # with uniform bins ties are harmless: force many of them
        P = np.repeat(P[:30], 4, axis=0)
        y = rng.integers(0, 4, size=120)
    perm = rng.permutation(120)
    w = rng.random(120)
    for f in _FUNCS.values():
        a = f(y, P, n_bins=7, strategy=strategy, sample_weight=w)
        b = f(y[perm], P[perm], n_bins=7, strategy=strategy, sample_weight=w[perm])
        assert a == pytest.approx(b, rel=1e-12)


def test_quantile_ties_make_the_value_depend_on_order():
    # documents the convention: tied confidences straddling a bin edge are split by index
    y = np.array([0, 1, 0, 1])
    P = np.array([[0.6, 0.4]] * 4)
    a = conf_ce(y, P, n_bins=2)
    b = conf_ce(y[[0, 2, 1, 3]], P, n_bins=2)
    assert a != pytest.approx(b)


def test_binary_reduction():
    rng = np.random.default_rng(2)
    p = rng.random(200)
    y = (rng.random(200) < p).astype(int)
    P = np.column_stack([1 - p, p])
    for f in _FUNCS.values():
        assert f(y, p, n_bins=8) == pytest.approx(f(y, P, n_bins=8), rel=1e-14)
    # top-label quantities of a binary problem by hand
    c = np.maximum(p, 1 - p)
    r = (p > 0.5).astype(int)
    z = (y == r).astype(float)
    order = np.argsort(c, kind="stable")
    ids = np.empty(200, int)
    ids[order] = np.repeat(np.arange(8), 25)
    sq = sum(((c - z)[ids == b].sum()) ** 2 for b in range(8))
    assert truthful_conf_ce(y, p, n_bins=8) == pytest.approx(sq / 200**2 + (1 - z.mean()) / 200, rel=1e-12)
    # with distinct values and n divisible by n_bins the two class columns bin identically
    assert classwise_lince(y, P, n_bins=8) == pytest.approx(lince_score(p, y, n_bins=8), rel=1e-12)


def test_labels_any_type_and_column_order():
    rng = np.random.default_rng(4)
    y, P = _random_case(rng, 50, 3)
    names = np.array(["cat", "dog", "emu"])
    for f in _FUNCS.values():
        base = f(y, P)
        assert f(names[y], P) == pytest.approx(base, rel=1e-14)
        # columns given in another order: the same numbers once labels say so
        order = [2, 0, 1]
        assert f(names[y], P[:, order], labels=names[order]) == pytest.approx(base, rel=1e-14)
    # a test set that misses a class still lines up through labels
    keep = y != 2
    assert truthful_conf_ce(names[y][keep], P[keep], labels=names) == pytest.approx(
        truthful_conf_ce(y[keep], P[keep], labels=[0, 1, 2]), rel=1e-14
    )
    # without labels= a missing class makes the column order ambiguous: an error, not a guess
    with pytest.raises(ValueError, match="pass labels="):
        truthful_conf_ce(y[keep], P[keep])


@pytest.mark.parametrize(
    "y, P, kwargs, match",
    [
        ([0, 1], [[0.5, 0.6], [0.2, 0.8]], {}, "sum to 1"),
        ([0, 1], [[0.5, 0.5], [np.nan, 0.8]], {}, "NaN"),
        ([0, 1], [[0.5, 0.5], [0.2, 0.8]], {"labels": [0, 1, 2]}, "columns"),
        ([0, 5], [[0.5, 0.5], [0.2, 0.8]], {"labels": [0, 1]}, "not in labels"),
        (["a", "b", "c"], [[0.5, 0.5]] * 3, {}, "distinct labels"),
        ([0, 1, 1], [[0.5, 0.5], [0.2, 0.8]], {}, "Inconsistent"),
        ([0.0, np.nan], [[0.5, 0.5], [0.2, 0.8]], {}, "NaN"),
        ([0, 1], [0.5, 0.8], {"labels": [0, 1, 2]}, "exactly 2"),
        ([0, 1], [0.5, 1.8], {}, r"\[0, 1\]"),
        ([0, 1], [[1.0], [1.0]], {}, "at least 2 columns"),
        ([0, 1], [[0.5, 0.5], [0.2, 0.8]], {"sample_weight": [1.0, -1.0]}, "non-negative"),
        ([0, 1], [[0.5, 0.5], [0.2, 0.8]], {"n_bins": 0}, "n_bins"),
    ],
)
def test_bad_input(y, P, kwargs, match):
    for f in list(_FUNCS.values()):
        with pytest.raises(ValueError, match=match):
            f(y, P, **kwargs)


def test_lince_score_general_property_and_errors():
    rng = np.random.default_rng(8)
    U = rng.random((40, 3))
    F = rng.random((40, 3))
    b = U[:, 0]
    expected = sum(lince_score(U[:, j], F[:, j], n_bins=5, bin_on=b) for j in range(3))
    assert lince_score(U, F, n_bins=5, bin_on=b) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="bin_on"):
        lince_score(U, F, n_bins=5)
    with pytest.raises(ValueError, match="same shape"):
        lince_score(U, F[:, :2], bin_on=b)
    with pytest.raises(ValueError, match="Inconsistent"):
        lince_score(U, F, bin_on=b[:10])
    with pytest.raises(ValueError, match="phi"):
        lince_score(U[:, 0], np.full(40, np.nan))
    # values outside [0, 1] are allowed for a general property with quantile bins
    assert lince_score(U[:, 0] * 10 - 3, F[:, 0] * 10 - 3, n_bins=4) >= 0


def test_inputs_not_mutated():
    rng = np.random.default_rng(9)
    y, P = _random_case(rng, 30, 3)
    P0, y0 = P.copy(), y.copy()
    for f in _FUNCS.values():
        f(y, P)
    np.testing.assert_array_equal(P, P0)
    np.testing.assert_array_equal(y, y0)


# ---------------------------------------------------------------------------------------------
# scorers
# ---------------------------------------------------------------------------------------------


def test_scorers_registered_and_in_cross_val_score():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = LogisticRegression(max_iter=500)
    for name in ("truthful_conf_ce", "neg_truthful_conf_ce", "classwise_lince", "neg_classwise_lince"):
        assert name in skcal.get_skcal_scorer_names()
        scores = cross_val_score(clf, X, names, cv=2, scoring=name)
        assert scores.shape == (2,) and (scores <= 0).all()


def test_scorer_aligns_labels_with_classes():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = LogisticRegression(max_iter=500).fit(X, names)
    keep = y != 0  # evaluation subset without the first class
    for name, f in (("truthful_conf_ce", truthful_conf_ce), ("neg_classwise_lince", classwise_lince)):
        got = get_scorer(name)(clf, X[keep], names[keep])
        want = -f(names[keep], clf.predict_proba(X[keep]), labels=clf.classes_)
        assert got == pytest.approx(want, rel=1e-12)
    # binary estimators hand the scorer a 1-D positive-class column
    clf2 = LogisticRegression(max_iter=500).fit(X[keep], names[keep])
    got = get_scorer("classwise_lince")(clf2, X[keep], names[keep])
    assert got == pytest.approx(-classwise_lince(names[keep], clf2.predict_proba(X[keep])), rel=1e-12)


def test_callable_binning_with_sparse_ids():
    rng = np.random.default_rng(12)
    y, P = _random_case(rng, 50, 3)

    def coarse(v, b):
        return np.floor(v * b).astype(np.int64)

    def sparse(v, b):
        return coarse(v, b) * 10**12

    for f in _FUNCS.values():
        assert f(y, P, n_bins=4, strategy=sparse) == pytest.approx(
            f(y, P, n_bins=4, strategy=coarse), rel=1e-12
        )
    # the coarse rule is the uniform rule except at 1.0, which no report here hits
    assert truthful_conf_ce(y, P, n_bins=4, strategy=coarse) == pytest.approx(
        truthful_conf_ce(y, P, n_bins=4, strategy="uniform"), rel=1e-12
    )


def test_uniform_points_on_edges_go_left_in_every_truthful_measure():
    # confidences and class probabilities exactly on the edges j/4 of 4 uniform bins
    P = np.array([[0.5, 0.5, 0.0], [0.75, 0.25, 0.0], [0.25, 0.25, 0.5], [1.0, 0.0, 0.0], [0.5, 0.25, 0.25]])
    y = np.array([0, 1, 2, 1, 1])

    def right_closed(v, b):  # scikit-learn's calibration_curve rule
        return np.searchsorted(np.linspace(0, 1, b + 1)[1:-1], v)

    def left_closed(v, b):  # the former floor(v * b) rule
        return np.minimum(np.floor(v * b).astype(int), b - 1)

    for f in _FUNCS.values():
        got = f(y, P, n_bins=4, strategy="uniform", labels=[0, 1, 2])
        assert got == pytest.approx(f(y, P, n_bins=4, strategy=right_closed, labels=[0, 1, 2]), rel=1e-12)
    # the rule matters here: the left-closed rule gives another value
    assert truthful_conf_ce(y, P, n_bins=4, strategy="uniform") != pytest.approx(
        truthful_conf_ce(y, P, n_bins=4, strategy=left_closed), rel=1e-6
    )
    from skcal.binning import assign_bins

    assert assign_bins(P[:, 0], n_bins=4, strategy="uniform").tolist() == [1, 2, 0, 3, 1]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 70),
    st.integers(2, 4),
    st.integers(1, 20),
    st.sampled_from(["ties", "continuous", "one_hot"]),
    st.integers(0, 2**31 - 1),
)
def test_classwise_sort_path_equals_rank_path(n, k, n_bins, kind, seed):
    """Unweighted quantile bins take one sort per column and rank only the label's rows; unit
    weights take the per-row bin ids of assign_bins. The two must agree, ties included."""
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        P = rng.dirichlet(np.ones(k), size=n)
    else:
        grid = [0.0, 1.0] if kind == "one_hot" else [0.0, 0.1, 0.2, 0.3]
        P = rng.choice(grid, size=(n, k))
        P[:, -1] = 0.0
        P[:, -1] = np.clip(1.0 - P.sum(axis=1), 0.0, 1.0)
        P[P.sum(axis=1) == 0.0, 0] = 1.0
        P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    labels = list(range(k))
    for fn in (classwise_lince, classwise_ece):
        fast = fn(y, P, n_bins=n_bins, labels=labels)
        ranked = fn(y, P, n_bins=n_bins, labels=labels, sample_weight=np.ones(n))
        assert fast == pytest.approx(ranked, rel=1e-12, abs=1e-15)
