"""The peers' binned measures, the per-bin reliability curve and the KS error."""

import bisect

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.calibration import calibration_curve

from skcal.binned_ece import binned_ece
from skcal.binned_measures import (
    average_calibration_error,
    debiased_l2_calibration_error,
    max_calibration_error,
    rms_calibration_error,
)
from skcal.ks_calibration_error import ks_calibration_error
from skcal.reliability_curve import reliability_curve, wilson_interval

Y4, P4 = [0, 1, 1, 1], [0.1, 0.2, 0.9, 0.9]


def test_closed_forms_on_a_small_case():
    # bins [0, .5], (.5, 1]: bin 0 holds p = .1, .2, y = 0, 1 (gap .35); bin 1 p = .9, .9, y = 1, 1 (gap .1)
    assert binned_ece(Y4, P4, n_bins=2) == pytest.approx(0.5 * 0.35 + 0.5 * 0.1)
    assert max_calibration_error(Y4, P4, n_bins=2) == pytest.approx(0.35)
    assert rms_calibration_error(Y4, P4, n_bins=2) == pytest.approx(np.sqrt(0.5 * 0.35**2 + 0.5 * 0.1**2))
    assert average_calibration_error(Y4, P4, n_bins=2) == pytest.approx((0.35 + 0.1) / 2)
    sq = 0.5 * (0.35**2 - 0.5 * 0.5 / 1) + 0.5 * (0.1**2 - 0)
    kw = dict(n_bins=2, strategy="uniform")
    assert debiased_l2_calibration_error(Y4, P4, squared=True, **kw) == pytest.approx(sq)
    assert debiased_l2_calibration_error(Y4, P4, **kw) == 0.0  # sqrt(max(sq, 0)), sq < 0
    # KS: sorted residuals -.1, .8, .1, .1 (ties at .9 merged): running sums -.1, .7, .9
    assert ks_calibration_error(Y4, P4) == pytest.approx(0.9 / 4)


# ---------------------------------------------------------------------------------------------
# the peers' stated formulas, written down (not the peer packages)
# ---------------------------------------------------------------------------------------------


def netcal_style(y, p, n_bins):
    """netcal's binary ECE / MCE / ACE: uniform bins over [0, 1] from a histogram
    (``binned_statistic_dd``: left-closed ``[a, b)``, the last bin closed), then
    ECE = sum_b n_b / n |acc_b - conf_b|, MCE = max_b |.|, ACE = mean over non-empty bins."""
    edges = np.linspace(0, 1, n_bins + 1)
    ids = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    gaps, counts = [], []
    for b in range(n_bins):
        m = ids == b
        if m.any():
            gaps.append(abs(y[m].mean() - p[m].mean()))
            counts.append(m.sum())
    gaps, counts = np.array(gaps), np.array(counts)
    return {"ece": float(counts @ gaps / len(p)), "mce": float(gaps.max()), "ace": float(gaps.mean())}


def rms_style(y, p, n_bins):
    """The l2 binned error as torchmetrics (norm="l2") and Hendrycks et al. define it."""
    edges = np.linspace(0, 1, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], p)
    tot = 0.0
    for b in range(n_bins):
        m = ids == b
        if m.any():
            tot += m.mean() * (y[m].mean() - p[m].mean()) ** 2
    return float(np.sqrt(tot))


def kumar_equal_bins(probs, num_bins):
    """Kumar, Liang and Ma's get_equal_bins: split the sorted probabilities into num_bins groups
    (np.array_split); the upper edge of each group is the midpoint to the next group's first value;
    the last upper edge is 1."""
    sorted_probs = np.sort(probs)
    groups = np.array_split(sorted_probs, num_bins)
    bins = [(groups[i][-1] + groups[i + 1][0]) / 2.0 for i in range(len(groups) - 1)] + [1.0]
    return sorted(set(bins))


def kumar_unbiased_square_ce(y, p, bins):
    """Their unbiased_square_ce: bin with bisect_left on the upper edges; per bin with >= 2 rows
    (mean(p - y))^2 - ybar (1 - ybar) / (n_b - 1), weighted by n_b / n; smaller bins contribute 0."""
    ids = np.array([bisect.bisect_left(bins, v) for v in p])
    total = 0.0
    for b in range(len(bins)):
        m = ids == b
        nb = int(m.sum())
        if nb < 2:
            continue
        ybar = y[m].mean()
        total += nb / len(p) * ((p[m] - y[m]).mean() ** 2 - ybar * (1 - ybar) / (nb - 1))
    return total


def gupta_ks(y, p):
    """Gupta et al. (2021): sort by p, cumulative sums of labels and of scores over n, max |difference|."""
    order = np.argsort(p, kind="stable")
    return float(np.max(np.abs(np.cumsum(y[order]) / len(p) - np.cumsum(p[order]) / len(p))))


def _data(seed, n=500, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, size=n)
    if ties:
        p = np.round(p, 2)
    y = (rng.uniform(size=n) < np.clip(p + 0.15 * np.sin(5 * p), 0, 1)).astype(float)
    return y, p


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_bins", [1, 5, 15])
def test_netcal_and_l2_formulas_off_the_edges(seed, n_bins):
    y, p = _data(seed)
    ref = netcal_style(y, p, n_bins)
    assert binned_ece(y, p, n_bins=n_bins) == pytest.approx(ref["ece"], abs=1e-12)
    assert max_calibration_error(y, p, n_bins=n_bins) == pytest.approx(ref["mce"], abs=1e-12)
    assert average_calibration_error(y, p, n_bins=n_bins) == pytest.approx(ref["ace"], abs=1e-12)
    assert rms_calibration_error(y, p, n_bins=n_bins) == pytest.approx(rms_style(y, p, n_bins), abs=1e-12)


def test_convention_difference_with_netcal_on_an_edge():
    # netcal's histogram bins are left-closed: p = .5 goes right; skcal's (scikit-learn's) go left
    y, p = np.array([0.0, 1.0, 1.0]), np.array([0.5, 0.7, 0.1])
    assert netcal_style(y, p, 2)["mce"] == pytest.approx(0.9)  # bins {.1}, {.5, .7}
    assert max_calibration_error(y, p, n_bins=2) == pytest.approx(0.3)  # bins {.1, .5}, {.7}
    c = reliability_curve(y, p, n_bins=2)
    assert c.count.tolist() == [2, 1]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("num_bins", [2, 10, 15])
def test_debiased_l2_equals_kumar_formula(seed, num_bins):
    y, p = _data(seed, n=300, ties=seed % 2 == 1)
    bins = kumar_equal_bins(p, num_bins)
    edges = np.concatenate([[0.0], bins])
    got = debiased_l2_calibration_error(y, p, edges=edges, squared=True)
    assert got == pytest.approx(kumar_unbiased_square_ce(y, p, bins), abs=1e-12)
    assert debiased_l2_calibration_error(y, p, edges=edges) == pytest.approx(max(got, 0.0) ** 0.5)


def test_debiased_l2_is_unbiased_for_the_binned_squared_error():
    # fixed bins, known E[y | p]: the mean of the estimate over label draws equals the population value
    rng = np.random.default_rng(0)
    p = rng.uniform(size=40)
    q = np.clip(p + 0.2, 0, 1)
    edges = np.linspace(0, 1, 5)
    ids = np.searchsorted(edges[1:-1], p)
    truth = sum((ids == b).mean() * (q[ids == b].mean() - p[ids == b].mean()) ** 2 for b in range(4))
    draws = [
        debiased_l2_calibration_error((rng.uniform(size=40) < q).astype(int), p, edges=edges, squared=True)
        for _ in range(4000)
    ]
    assert np.mean(draws) == pytest.approx(truth, abs=4 * np.std(draws) / np.sqrt(len(draws)))


@pytest.mark.parametrize("seed", range(6))
def test_ks_equals_gupta_without_ties_and_merges_ties(seed):
    y, p = _data(seed)
    assert ks_calibration_error(y, p) == pytest.approx(gupta_ks(y, p), abs=1e-12)
    y, p = _data(seed, ties=True)
    order = np.argsort(p, kind="stable")
    curve = np.cumsum(y[order] - p[order]) / len(p)
    ends = np.r_[p[order][1:] != p[order][:-1], True]
    assert ks_calibration_error(y, p) == pytest.approx(np.abs(curve[ends]).max(), abs=1e-12)
    assert ks_calibration_error(y, p) <= gupta_ks(y, p) + 1e-15  # their value depends on the tie order


def test_ks_never_exceeds_cutoff():
    from skcal.cutoff import cutoff_calibration_error

    for seed in range(5):
        y, p = _data(seed, ties=True)
        assert ks_calibration_error(y, p) <= cutoff_calibration_error(y, p) + 1e-15


# ---------------------------------------------------------------------------------------------
# reliability curve
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", range(4))
def test_reliability_curve_equals_calibration_curve(strategy, seed):
    y, p = _data(seed, ties=seed % 2 == 1)
    c = reliability_curve(y, p, n_bins=8, strategy=strategy)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=8, strategy=strategy)
    np.testing.assert_allclose(c.observed_frequency[c.nonempty], prob_true, rtol=1e-12)
    np.testing.assert_allclose(c.mean_predicted[c.nonempty], prob_pred, rtol=1e-12)
    assert c.count.sum() == len(p)
    assert np.isnan(c.mean_predicted[~c.nonempty]).all()
    assert c.lower is None


def test_wilson_interval_matches_scipy():
    y = np.array([1] * 7 + [0] * 13)
    p = np.full(20, 0.3)
    c = reliability_curve(y, p, n_bins=1, interval="wilson", confidence=0.9)
    ci = binomtest(7, 20).proportion_ci(confidence_level=0.9, method="wilson")
    assert c.lower[0] == pytest.approx(ci.low, rel=1e-9)
    assert c.upper[0] == pytest.approx(ci.high, rel=1e-9)
    lo, hi = wilson_interval([0.5], [0])
    assert np.isnan(lo[0]) and np.isnan(hi[0])


# ---------------------------------------------------------------------------------------------
# shared conventions: edges, weights, pos_label, validation
# ---------------------------------------------------------------------------------------------

_BINNED = [binned_ece, max_calibration_error, rms_calibration_error, average_calibration_error]


@pytest.mark.parametrize("func", _BINNED + [debiased_l2_calibration_error])
def test_points_on_edges_go_left_and_zero_to_the_first_bin(func):
    # 4 uniform bins; p on the inner edges .25, .5, .75 belong to the bins on their left
    p = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 0.25, 0.5])
    y = np.array([0, 1, 0, 1, 1, 0, 1])
    ids = [0, 0, 1, 2, 3, 0, 1]
    edges = np.linspace(0, 1, 5)
    # an equivalent binning that no rule can disagree on: explicit edges strictly between the points
    shifted = np.array([0.0, 0.3, 0.6, 0.8, 1.0])
    kw = {"strategy": "uniform"} if func is debiased_l2_calibration_error else {}
    assert func(y, p, n_bins=4, **kw) == pytest.approx(func(y, p, edges=shifted), abs=1e-15)
    assert func(y, p, edges=edges) == pytest.approx(func(y, p, edges=shifted), abs=1e-15)
    assert reliability_curve(y, p, n_bins=4).count.tolist() == np.bincount(ids, minlength=4).tolist()


@pytest.mark.parametrize("func", _BINNED + [ks_calibration_error])
def test_integer_weights_equal_repetition(func):
    y, p = _data(3, n=200)
    k = np.random.default_rng(1).integers(1, 4, size=200)
    assert func(y, p, sample_weight=k) == pytest.approx(func(np.repeat(y, k), np.repeat(p, k)), rel=1e-12)


def test_debiased_weights_unit_and_scale():
    y, p = _data(4, n=200)
    ref = debiased_l2_calibration_error(y, p, squared=True)
    assert debiased_l2_calibration_error(y, p, sample_weight=np.ones(200), squared=True) == pytest.approx(ref)
    w = np.random.default_rng(0).uniform(0.5, 2, size=200)
    a = debiased_l2_calibration_error(y, p, sample_weight=w, squared=True)
    assert debiased_l2_calibration_error(y, p, sample_weight=3 * w, squared=True) == pytest.approx(a)


@pytest.mark.parametrize("func", _BINNED + [debiased_l2_calibration_error, ks_calibration_error])
def test_pos_label_and_bad_input(func):
    y, p = _data(5, n=100)
    names = np.where(y == 1, "yes", "no")
    assert func(names, p, pos_label="yes") == pytest.approx(func(y, p))
    with pytest.raises(ValueError, match="pos_label"):
        func(names, p)
    with pytest.raises(ValueError, match="y_prob"):
        func(y, p + 1)
    if func is not ks_calibration_error:
        with pytest.raises(ValueError, match="n_bins"):
            func(y, p, n_bins=0)
        with pytest.raises(ValueError, match="n_bins"):
            func(y, p, n_bins=True)
        with pytest.raises(ValueError, match="strategy"):
            func(y, p, strategy="kmeans")
        with pytest.raises(ValueError, match="edges"):
            func(y, p, edges=[0.5, 0.2, 1.0])
