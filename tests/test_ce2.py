import math

import numpy as np
import pytest
from scipy import integrate
from sklearn.metrics import get_scorer, get_scorer_names
from sklearn.model_selection import KFold, ShuffleSplit, cross_val_score
from sklearn.pipeline import Pipeline

from skcal import SechPerturber, SecondOrderPlattCalibrator, ce1_score, ce2_details, ce2_score
from skcal.chebyshev import ChebyshevRidge
from skcal.sech import sech_pdf
from skcal.votes import Snapshots


# ------------------------------------------------------------------------------ closed forms
def _sech_density(t, s, h, lo, hi):
    """SPEC 1's truncated sech density, written out independently of skcal.sech."""
    gd = lambda x: 2 * np.arctan(np.tanh(x / 2))  # noqa: E731
    Z = h * (gd((hi - s) / h) - gd((lo - s) / h))
    return 1 / np.cosh((t - s) / h) / Z


def _gauss(lo, hi, n=400):
    x, w = np.polynomial.legendre.leggauss(n)
    return (hi - lo) / 2 * x + (hi + lo) / 2, (hi - lo) / 2 * w


def _corner_ce2(p, h):
    """Exact CE2 of the constant predictor (1, 0) after sech perturbation, with f* = p.

    The perturbed score S' = (m', s') is independent of X, so eta1(S') = p and eta2(S') = p^2;
    m' has density k_h(. | 1) on [0, 1] and s' has density k_h(. | 0) on [0, 1/4], so

        CE2 = int |p - a| k1(a) da + int int |p^2 - a^2 - b| k1(a) k2(b) db da,

    computed by Gauss-Legendre quadrature on pieces split at every kink of the integrand (the
    integrands are smooth on each piece, so 400 nodes give ~1e-13).
    """
    k1 = lambda a: _sech_density(a, 1.0, h, 0.0, 1.0)  # noqa: E731
    k2 = lambda b: _sech_density(b, 0.0, h, 0.0, 0.25)  # noqa: E731
    t1 = 0.0
    for lo, hi in [(0.0, p), (p, 1.0)]:
        a, w = _gauss(lo, hi)
        t1 += np.sum(w * np.abs(p - a) * k1(a))
    t2 = 0.0
    knots = sorted({0.0, float(np.sqrt(max(p * p - 0.25, 0.0))), p, 1.0})
    u, wu = np.polynomial.legendre.leggauss(400)
    for lo, hi in zip(knots[:-1], knots[1:], strict=True):
        a, wa = _gauss(lo, hi)
        c = np.clip(p * p - a * a, 0.0, 0.25)[:, None]  # the kink of the inner integrand
        inner = np.zeros(a.shape)
        for b_lo, b_hi in [(0.0 * c, c), (c, 0.25 + 0.0 * c)]:
            b = (b_hi - b_lo) / 2 * u + (b_hi + b_lo) / 2
            wb = (b_hi - b_lo) / 2 * wu
            inner += np.sum(wb * np.abs(p * p - a[:, None] ** 2 - b) * k2(b), axis=1)
        t2 += np.sum(wa * k1(a) * inner)
    return float(t1), float(t2)


def test_corner_quadrature_agrees_with_scipy():
    p, h = 0.95, 1 / 16
    t1, t2 = _corner_ce2(p, h)
    assert _sech_density(0.9, 1.0, h, 0.0, 1.0) == pytest.approx(sech_pdf(0.9, 1.0, h, 0.0, 1.0), rel=1e-12)
    k1 = lambda a: sech_pdf(a, 1.0, h, 0.0, 1.0)  # noqa: E731
    assert t1 == pytest.approx(integrate.quad(lambda a: abs(p - a) * k1(a), 0, 1, points=[p])[0], rel=1e-10)
    # the double integral by scipy's adaptive quadrature (scalar density: fast enough)
    g = lambda x: 2 * math.atan(math.tanh(x / 2))  # noqa: E731
    z1, z2 = h * (g(0.0) - g(-1 / h)), h * (g(0.25 / h) - g(0.0))
    d1 = lambda a: 1 / math.cosh((a - 1) / h) / z1  # noqa: E731
    d2 = lambda b: 1 / math.cosh(b / h) / z2  # noqa: E731
    ref = integrate.dblquad(lambda b, a: abs(p * p - a * a - b) * d1(a) * d2(b), 0, 1, 0, 0.25, epsabs=1e-11)[
        0
    ]
    assert t2 == pytest.approx(ref, rel=1e-7)  # dblquad's default epsrel is 1.5e-8


def _corner_sample(n, p, h, seed):
    rng = np.random.default_rng(seed)
    S = np.tile([1.0, 0.0], (n, 1))
    Sp = SechPerturber(bandwidth=h, random_state=seed).fit_transform(S)
    Y = (rng.uniform(size=(n, 2)) < p).astype(float)
    return Sp, Y


def test_ce2_against_quadrature_at_the_corner_converges():
    p, h = 0.95, 1 / 16  # p inside the spread of m' so the absolute values have kinks
    t1, t2 = _corner_ce2(p, h)
    assert 0.1 < t1 + t2 < 0.2
    errors = {}
    for n in [2000, 200000]:
        errs = []
        for seed in range(3):
            Sp, Y = _corner_sample(n, p, h, seed)
            res = ce2_details(Snapshots(Y), Sp, degree=4, bandwidth=h)
            errs.append(abs(res.ce2 - (t1 + t2)))
            assert res.ce2 == pytest.approx(res.term1 + res.term2)
        errors[n] = np.mean(errs)
    assert errors[2000] < 0.03
    assert errors[200000] < 0.002
    assert errors[200000] < errors[2000]


def test_ce2_auto_degree_at_the_corner():
    p, h = 0.95, 1 / 16
    t1, t2 = _corner_ce2(p, h)
    Sp, Y = _corner_sample(50000, p, h, seed=7)
    res = ce2_details(Snapshots(Y), Sp, bandwidth=h)  # auto: cap 44, guard d <= 1.25 n^(1/3) = 46 -> 5
    assert res.degree == 5
    assert res.term1 == pytest.approx(t1, abs=0.005)
    assert res.term2 == pytest.approx(t2, abs=0.005)


def test_ce2_closed_form_overstated_variance():
    # f* = m exactly, sigma2 ~ U[0, 1/4]: eta1 = m, eta2 = m^2, so CE2 = E[sigma2] = 1/8
    rng = np.random.default_rng(0)
    n = 50000
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    Y = (rng.uniform(size=(n, 3)) < S[:, :1]).astype(float)
    res = ce2_details(Snapshots(Y), S, degree=4)
    assert res.term1 < 0.015
    assert res.term2 == pytest.approx(1 / 8, abs=0.01)
    # the plug-in is the mean of the clipped fitted functions at the sample
    m, v = S[:, 0], S[:, 0] ** 2 + S[:, 1]
    assert res.term1 == pytest.approx(np.mean(np.abs(res.eta1(S) - m)), rel=1e-12)
    assert res.term2 == pytest.approx(np.mean(np.abs(res.eta2(S) - v)), rel=1e-12)
    e = res.eta2(np.array([[0.5, 0.1], [1.0, 0.0]]))
    assert e == pytest.approx([0.25, 1.0], abs=0.03)
    assert ce2_score(Snapshots(Y), S, degree=4) == res.ce2


def test_ce2_is_zero_for_calibrated_scores_up_to_noise():
    rng = np.random.default_rng(1)
    n = 40000
    m = rng.uniform(0.2, 0.8, n)
    s = rng.uniform(0, 0.04, n)
    f = m + rng.choice([-1.0, 1.0], n) * np.sqrt(s)  # E[f|S] = m, Var[f|S] = s
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    S = np.column_stack([m, s])
    assert ce2_score(Snapshots(Y), S, degree=4) < 0.02
    assert ce2_score(Snapshots(Y), np.column_stack([m, 4 * s]), degree=4) > 0.04


def test_ce1_closed_form_and_label_kinds():
    rng = np.random.default_rng(2)
    n = 50000
    m = rng.uniform(0, 1, n)
    Y = (rng.uniform(size=(n, 2)) < (m**2)[:, None]).astype(float)
    ce1 = ce1_score(Y[:, 0], m, degree=4)
    assert ce1 == pytest.approx(1 / 6, abs=0.01)  # E|m^2 - m| for m ~ U(0, 1)
    assert ce1_score(Y[:, 0].astype(bool), m[:, None], degree=4) == ce1
    assert ce1_score(2 * Y[:, 0] - 1, np.column_stack([m, np.zeros(n)]), degree=4) == ce1
    assert ce1_score(Snapshots(Y), m, degree=4) == pytest.approx(1 / 6, abs=0.01)  # snapshots: t1
    assert ce1_score(Y[:, 0], m, degree=4, cv=3, random_state=0) == pytest.approx(1 / 6, abs=0.01)


def test_sample_weight_equals_repetition():
    rng = np.random.default_rng(3)
    n = 400
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    Y = (rng.uniform(size=(n, 2)) < S[:, :1]).astype(float)
    w = rng.integers(0, 3, n)
    a = ce2_score(Snapshots(Y), S, degree=3, sample_weight=w)
    b = ce2_score(Snapshots(np.repeat(Y, w, axis=0)), np.repeat(S, w, axis=0), degree=3)
    assert a == pytest.approx(b, rel=1e-7)


# ------------------------------------------------------------------------------ selection
def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    S = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 0.25, n)])
    f = np.clip(S[:, 0] + np.sin(6 * S[:, 0]) * 0.2, 0, 1)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(float)
    return S, Y


def _brute_force_cv(S, Y, splits, degrees, alphas):
    t1 = Y.mean(axis=1)
    t2 = Y[:, 0] * Y[:, 1]
    T = np.column_stack([t1, t2])
    out = {}
    for deg in degrees:
        for alpha in alphas:
            errs = []
            for tr, te in splits:
                model = ChebyshevRidge(deg, alpha, dual=False).fit(S[tr], T[tr])
                errs.append(((model.predict(S[te]) - T[te]) ** 2).sum(axis=1).mean())
            out[(deg, alpha)] = np.mean(errs)
    return out


@pytest.mark.parametrize("kind", ["kfold", "shuffle_split"])
def test_cv_from_sufficient_statistics_equals_brute_force(kind):
    S, Y = _data(900)
    degrees, alphas = [2, 6], [1e-6, 1e-2, 1.0]
    if kind == "kfold":
        cv = 3
        splits = list(KFold(3, shuffle=True, random_state=0).split(S))
    else:  # train + test do not cover the data: the training statistics are computed directly
        cv = ShuffleSplit(n_splits=2, test_size=0.2, train_size=0.5, random_state=0)
        splits = list(cv.split(S))
    res = ce2_details(Snapshots(Y), S, degree=degrees, cv=cv, alphas=alphas, random_state=0)
    ref = _brute_force_cv(S, Y, splits, degrees, alphas)
    cvr = res.cv_results
    assert len(cvr["degree"]) == 6
    for deg, alpha, mse in zip(cvr["degree"], cvr["alpha"], cvr["mean_test_mse"], strict=True):
        assert mse == pytest.approx(ref[(deg, alpha)], rel=1e-8)
    best = min(ref, key=ref.get)
    assert (res.degree, res.alpha) == best
    # the final model is refitted on all data with the selected parameters
    assert res.ce2 == ce2_score(Snapshots(Y), S, degree=res.degree, alpha=res.alpha)


def test_cv_default_schedule_holdout_and_reproducibility():
    S, Y = _data(3000, seed=1)
    res = ce2_details(Snapshots(Y), S, bandwidth=1 / 4, cv="holdout", random_state=0)
    # cap 22 at h = 1/4: schedule 22, 11, 5 with the seven ridge values of SPEC 2; degree 22
    # (529 features) is skipped because the 2100 training samples are fewer than 10 per feature
    assert sorted(set(res.cv_results["degree"].tolist())) == [5, 11]
    big = ce2_details(
        Snapshots(Y), S, bandwidth=1 / 4, cv="holdout", random_state=0, degree=[22, 5], alphas=[1e-3]
    )
    assert sorted(big.cv_results["degree"].tolist()) == [5, 22]  # an explicit list is not filtered
    assert sorted(set(res.cv_results["alpha"].tolist())) == [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]
    again = ce2_details(Snapshots(Y), S, bandwidth=1 / 4, cv=0.3, random_state=0)
    np.testing.assert_array_equal(res.cv_results["mean_test_mse"], again.cv_results["mean_test_mse"])
    assert res.ce2 == again.ce2
    assert ce2_score(Snapshots(Y), S, bandwidth=1 / 4, cv=KFold(2), degree=[3, 5]) > 0


# ------------------------------------------------------------------------------ scorers
def _pipe():
    return Pipeline(
        [("sech", SechPerturber(random_state=0)), ("platt", SecondOrderPlattCalibrator(degree=4))]
    )


def test_scorers_registered_and_cross_val_score():
    assert {"ce2", "neg_ce2"} <= set(get_scorer_names())
    S, Y = _data(3000, seed=2)
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(_pipe(), S, Snapshots(Y), scoring="ce2", cv=cv)
    assert scores.shape == (3,) and (scores < 0).all()
    np.testing.assert_array_equal(cross_val_score(_pipe(), S, Snapshots(Y), scoring="neg_ce2", cv=cv), scores)
    # fold 0 by hand: -ce2 of the recalibrated output against the held-out snapshots
    tr, te = next(cv.split(S))
    pipe = _pipe().fit(S[tr], Snapshots(Y[tr]))
    assert scores[0] == pytest.approx(-ce2_score(Snapshots(Y[te]), pipe.predict(S[te])))
    # a pipeline without predict is scored on its transform output (here: perturbed scores)
    sech_only = SechPerturber(random_state=0).fit(S)
    expected = -ce2_score(Snapshots(Y), sech_only.transform(S))
    assert get_scorer("ce2")(sech_only, S, Snapshots(Y)) == pytest.approx(expected)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"degree": "high"}, "degree"),
        ({"degree": -1}, "degree"),
        ({"degree": 2.5}, "degree"),
        ({"degree": [2, 3]}, "needs cv"),
        ({"alpha": -1.0}, "alpha"),
        ({"alpha": float("nan")}, "alpha"),
        ({"bandwidth": 0}, "bandwidth"),
        ({"method": "isotonic"}, "method"),
        ({"basis": "1d"}, "basis"),
        ({"cv": 1}, "cv"),
        ({"cv": 1.5}, "cv"),
        ({"cv": "kfold"}, "cv"),
        ({"cv": True}, "cv"),
        ({"degree": 10**5}, "degree"),
        ({"cv": 3, "alphas": [-1.0]}, "alphas"),
        ({"sample_weight": np.ones(5)}, "sample_weight"),
        ({"method": "bucketing", "sample_weight": np.ones(40)}, "sample_weight"),
        ({"method": "bucketing", "degree": 3}, "polynomial"),
    ],
)
def test_ce2_bad_arguments(kwargs, match):
    S, Y = _data(40)
    with pytest.raises(ValueError, match=match):
        ce2_score(Snapshots(Y), S, **kwargs)
    with pytest.raises(ValueError, match=match):
        ce2_details(Snapshots(Y), S, **kwargs)


@pytest.mark.parametrize(
    "mod, match",
    [
        (lambda S, Y: (Y[:, 0], S), "at least 2 columns|2-dimensional"),
        (lambda S, Y: (Y, S[:, :1]), "2 columns"),
        (lambda S, Y: (Y[:-1], S), "Inconsistent"),
        (lambda S, Y: (Y * 3, S), "binary"),
        (lambda S, Y: (Y, S + 1), r"\[0, 1\]"),
        (lambda S, Y: (Y, np.column_stack([S[:, 0], S[:, 1] * 4 + 0.01])), "sigma2"),
        (lambda S, Y: (Y, np.where(S > 0.5, np.nan, S)), "NaN"),
        (lambda S, Y: (np.column_stack([Y[:, 0], np.full(len(Y), np.nan)]), S), "2 votes"),
    ],
)
def test_ce2_bad_data(mod, match):
    S, Y = _data(40)
    y, s = mod(S, Y)
    S0, Y0 = S.copy(), Y.copy()
    with pytest.raises(ValueError, match=match):
        ce2_score(Snapshots(y) if np.ndim(y) == 2 else y, s)
    np.testing.assert_array_equal(S, S0)
    np.testing.assert_array_equal(Y, Y0)


def test_ce1_bad_input():
    S, Y = _data(40)
    with pytest.raises(ValueError, match="y_true"):
        ce1_score(np.arange(40), S)  # not binary
    with pytest.raises(ValueError, match="Inconsistent"):
        ce1_score(Snapshots(Y[:30, 0]), S)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ce1_score(Y[:, 0], S[:, 0] + 2)
    with pytest.raises(ValueError, match="bandwidth"):
        ce1_score(Y[:, 0], S, bandwidth=-1)
    with pytest.raises(ValueError, match="degree"):
        ce1_score(Y[:, 0], S, degree=-3)


def test_fitted_functions_validate_scores():
    S, Y = _data(200)
    res = ce2_details(Snapshots(Y), S, degree=3)
    with pytest.raises(ValueError, match="2 column"):
        res.eta1(S[:, :1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        res.eta2(S + 2)


# ------------------------------------------------------------------------------ baselines
@pytest.mark.parametrize("method", ["bucketing", "nadaraya_watson"])
def test_baseline_methods_delegate_to_baseline_ce2(method):
    from skcal import baseline_ce2

    S, Y = _data(3000, seed=5)
    res = ce2_details(Snapshots(Y), S, method=method, bandwidth=1 / 16, random_state=0)
    t1, t2 = Y.mean(axis=1), Y[:, 0] * Y[:, 1]
    ref = baseline_ce2(S, t1, t2, method=method, bandwidth=1 / 16, random_state=0)
    assert res.ce2 == ref["ce2"] and res.term1 == ref["term1"] and res.term2 == ref["term2"]
    assert res.method == method and res.degree is None and res.c == ref["c"]
    np.testing.assert_array_equal(res.eta1_values, ref["eta1"])
    np.testing.assert_array_equal(res.eta2_values, ref["eta2"])
    # one shape across methods: the fitted functions are callables here too, equal to the
    # values at the samples
    np.testing.assert_allclose(res.eta1(S), ref["eta1"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.eta2(S), ref["eta2"], rtol=1e-12, atol=1e-15)
    assert ce2_score(Snapshots(Y), S, method=method, bandwidth=1 / 16, random_state=0) == ref["ce2"]
    # all three estimators see the same miscalibration (sigma2 > 0 while f* is a function of m)
    poly = ce2_score(Snapshots(Y), S, bandwidth=1 / 16, degree=4)
    assert abs(res.ce2 - poly) < 0.05


# ------------------------------------------------------------------------------ k classes
def _class_data(n=1500, k=3, seed=0):
    from skcal.votes import VoteCounts

    rng = np.random.default_rng(seed)
    M = rng.dirichlet(np.ones(k), n)
    s2 = rng.uniform(0, 0.3, (n, k)) * M * (1 - M)
    c = rng.integers(2, 6, n)
    F = np.clip(M + rng.normal(0, 0.05, (n, k)), 0.001, None)
    F /= F.sum(axis=1, keepdims=True)
    counts = np.stack([rng.multinomial(int(t), p) for t, p in zip(c, F, strict=True)])
    return np.stack([M, s2], axis=2), VoteCounts(counts=counts)


def test_classwise_is_the_mean_of_the_one_vs_rest_ce2():
    S, V = _class_data()
    res = ce2_details(V, S, degree=3)
    assert res.multiclass == "classwise" and len(res.per_class) == 3
    per = [ce2_details(V.one_vs_rest(j), S[:, j], degree=3) for j in range(3)]
    for j in range(3):
        assert res.per_class[j].ce2 == per[j].ce2  # each class exactly its binary estimate
        np.testing.assert_array_equal(res.eta1_values[:, j], per[j].eta1_values)
    assert res.ce2 == pytest.approx(np.mean([p.ce2 for p in per]), rel=1e-12)
    assert res.term1 + res.term2 == pytest.approx(res.ce2, rel=1e-12)
    np.testing.assert_allclose(res.eta1(S), res.eta1_values)
    assert ce2_score(V, S, degree=3) == res.ce2 == ce2_score(V, S, degree=3, multiclass="classwise")


def test_k2_gives_the_binary_estimate_of_class_1():
    # two classes are one binary task: every layout gives the binary number of class 1 (issue 37)
    from skcal.votes import VoteCounts

    S, Y = _data(800)
    V = VoteCounts.from_snapshots(Y)
    binary = ce2_details(V, S, degree=4)
    two = ce2_details(V, S, degree=4, multiclass="classwise")
    assert two.ce2 == binary.ce2 and two.per_class is None
    S3 = np.stack([np.column_stack([1 - S[:, 0], S[:, 1]]), S], axis=1)
    C = VoteCounts(counts=np.column_stack([V.total - V.positive, V.positive]))
    assert ce2_score(C, S3, degree=4) == binary.ce2
    # the classwise mean of the two complementary tasks would be another number: class 0's second
    # term compares E[(1 - f)^2] with (1 - m)^2 + s2
    class0 = ce2_details(C.one_vs_rest(0), S3[:, 0], degree=4)
    assert class0.ce2 != binary.ce2
    np.testing.assert_allclose(class0.eta1_values, 1 - binary.eta1_values, atol=1e-4)
    top = ce2_details(V, S, degree=4, multiclass="top_label")  # the top label is its own task
    assert top.multiclass == "top_label"
    np.testing.assert_array_equal(top.extra["top_class"], (S[:, 0] > 0.5).astype(int))
    # ce1: the binary CE1 of class 1 as well
    assert ce1_score(V, S, degree=3, multiclass="classwise") == ce1_score(V, S, degree=3)
    assert ce1_score(C, S3, degree=3) == ce1_score(V, S, degree=3)


def test_top_label_is_the_binary_estimate_of_each_rows_top_class():
    S, V = _class_data(seed=1)
    top = np.argmax(S[..., 0], axis=1)
    rows = np.arange(S.shape[0])
    res = ce2_details(V, S, multiclass="top_label", degree=3)
    ref = ce2_details(V.one_vs_rest(top), S[rows, top], degree=3)
    assert res.ce2 == ref.ce2 and res.degree == ref.degree
    ce1_top = ce1_score(V, S, multiclass="top_label", degree=3)
    assert ce1_top == ce1_score(V.one_vs_rest(top), S[rows, top], degree=3)


def test_class_counts_snapshots_and_layouts_give_identical_results():
    from skcal.votes import flat_class_scores

    S, V = _class_data(n=900, seed=2)
    Y = V.to_snapshots()  # class codes, NaN padded
    flat = flat_class_scores(S)
    for kw in ({}, {"multiclass": "top_label"}, {"average": "weighted"}, {"cv": 3, "random_state": 0}):
        ref = ce2_score(V, S, **kw)
        assert ce2_score(Snapshots(Y), S, **kw) == ref
        assert ce2_score(V, flat, **kw) == ref
    assert ce1_score(Snapshots(Y), S) == ce1_score(V, S) == ce1_score(V, flat) == ce1_score(V, S[..., :1])


def test_classwise_average_weights():
    S, V = _class_data(n=900, seed=3)
    res = ce2_details(V, S, degree=2)
    per = np.array([r.ce2 for r in res.per_class])
    share = V.targets()[0].mean(axis=0)
    weighted = ce2_details(V, S, degree=2, average="weighted")
    np.testing.assert_allclose(weighted.class_weights, share / share.sum())
    assert weighted.ce2 == pytest.approx(per @ (share / share.sum()), rel=1e-12)
    assert ce2_score(V, S, degree=2, average=[1, 0, 0]) == pytest.approx(per[0], rel=1e-12)
    for bad in ([1, 2], [-1, 1, 1], [0, 0, 0], ["a", 1, 1]):
        with pytest.raises(ValueError, match="average"):
            ce2_score(V, S, degree=2, average=bad)


def test_k_class_bad_input():
    from skcal.votes import VoteCounts

    S, V = _class_data(n=200)
    with pytest.raises(ValueError, match="binary counts .* 3 classes"):
        ce2_score(VoteCounts(V.counts[:, 0], V.total), S)
    with pytest.raises(ValueError, match="votes of 3 classes, but the scores have 4"):
        ce2_score(V, np.concatenate([S, S[:, :1]], axis=1))
    with pytest.raises(ValueError, match="Inconsistent|200"):
        ce2_score(V, S[:-1])
    with pytest.raises(ValueError, match="votes of 3 classes, but this takes binary"):
        ce2_score(V, S[:, 0])
    with pytest.raises(ValueError, match="multiclass"):
        ce2_score(V, S, multiclass="micro")
    with pytest.raises(ValueError, match=r"No item of snapshots has 2 votes"):
        ce2_score(VoteCounts(counts=np.eye(3, dtype=int)[np.arange(200) % 3]), S)


# ------------------------------------------------------------------------------ the mixed rule
def test_mixed_rule_fits_eta2_on_the_rows_with_pairs():
    from skcal.chebyshev import auto_degree
    from skcal.votes import VoteCounts

    S, Y = _data(4000, seed=5)
    c = np.where(np.arange(4000) < 1500, 2, 1)
    a = Y[:, 0] + np.where(c == 2, Y[:, 1], 0.0)
    V = VoteCounts(a, c)
    res = ce2_details(V, S, alpha=1e-6)
    pairs = c == 2
    d1, d2 = auto_degree(4000, 2**-6), auto_degree(1500, 2**-6)
    assert (res.degree, res.extra["eta2_degree"], res.extra["n_pairs"]) == (d1, d2, 1500)
    t1, t2 = a / c, Y[:, 0] * Y[:, 1]
    e1 = np.clip(ChebyshevRidge(d1, 1e-6).fit(S, t1[:, None]).predict(S)[:, 0], 0, 1)
    e2 = np.clip(ChebyshevRidge(d2, 1e-6).fit(S[pairs], t2[pairs, None]).predict(S)[:, 0], 0, 1)
    ref = np.mean(np.abs(e1 - S[:, 0])) + np.mean(np.abs(e2 - S[:, 0] ** 2 - S[:, 1]))
    assert res.ce2 == pytest.approx(ref, rel=1e-9)
    np.testing.assert_allclose(res.eta2(S), e2, atol=1e-9)
    # snapshots with NaN give the same; every row with pairs is the ordinary estimator
    Yn = np.where(pairs[:, None], Y, np.column_stack([Y[:, 0], np.full(4000, np.nan)]))
    assert ce2_score(Snapshots(Yn), S, alpha=1e-6) == pytest.approx(res.ce2, rel=1e-12)
    with pytest.raises(ValueError, match="needs two votes on every row"):
        ce2_score(V, S, method="bucketing")
    # k classes: every class by the same rule
    rng = np.random.default_rng(0)
    S3, C = _class_data(n=1200, seed=6)
    one = rng.random(1200) < 0.6
    counts = C.counts.copy()
    for i in np.flatnonzero(one):
        keep = rng.choice(np.repeat(np.arange(3), counts[i]))
        counts[i] = np.eye(3, dtype=int)[keep]
    mixed = ce2_details(VoteCounts(counts=counts), S3, degree=2)
    assert all(r.extra["n_pairs"] == int((~one).sum()) for r in mixed.per_class)


def test_a_cv_split_is_a_partition_only_when_it_covers_every_row_once():
    from skcal.ce2._fit import is_partition as _is_partition

    n = 10
    rows = np.arange(n)
    assert _is_partition(rows[3:], rows[:3], n)
    assert _is_partition(rows[::-1][:4], rows[::-1][4:], n)  # any order
    assert not _is_partition(rows[3:], rows[:2], n)  # a row left out
    assert not _is_partition(np.r_[rows[3:], 3], rows[:2], n)  # a row twice, another missing
    assert not _is_partition(np.r_[rows[4:], -7], rows[:3], n)  # -7 is row 3 counted from the end
    assert not _is_partition(np.r_[rows[4:], 10], rows[:3], n)
    assert not _is_partition(rows > 3, rows <= 3, n)  # boolean masks: computed directly
    rng = np.random.default_rng(0)
    for _ in range(50):  # the rule it replaced: sizes add up and the union has every row
        tr = rng.integers(-2, n + 2, rng.integers(0, n + 1))
        te = rng.integers(-2, n + 2, n - tr.size)
        inside = ((tr >= 0) & (tr < n)).all() and ((te >= 0) & (te < n)).all()
        old = len(tr) + len(te) == n and np.union1d(tr, te).size == n and inside
        assert _is_partition(tr, te, n) == bool(old)
