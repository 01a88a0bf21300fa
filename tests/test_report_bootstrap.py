"""The report's bootstrap through the statistics objects (skcal.report._bootstrap).

Each replicate of a built-in metric is the metric on the Poisson resample (row ``i`` repeated
``W[r, i]`` times, ``W`` from :func:`skcal.stats.poisson_weights` with the report's seed), with
the choices made once on the full sample (SCDL's finest grid, the truthful measures' quantile
bins, CE2's degree and ridge); smCE's replicates are its grid form, within the stated bound.
"""

import io

import numpy as np
import pytest

from skcal._catalog import measure
from skcal.report import CalibrationReport
from skcal.report._bootstrap import Progress
from skcal.stats import (
    ScdlStatistics,
    SmoothCEGridStatistics,
    poisson_weights,
    smce_grid_cells,
)
from skcal.stats._scdl import resolve_max_bins
from skcal.stats._truthful import quantile_bin_thresholds
from skcal.votes import Snapshots

B = 6


def _second_order(n, seed):
    """Two snapshots per row and two models: an honest ``(m, 0.02)`` and a first-order ``(m, 0)``."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.05, 0.95, n)
    f = np.clip(m + rng.normal(0, 0.15, n), 0, 1)
    Y = Snapshots((rng.uniform(size=(n, 2)) < f[:, None]).astype(float))
    return Y, {"honest": np.column_stack([m, np.full(n, 0.02)]), "zero": np.column_stack([m, np.zeros(n)])}


def _resample(rep, n):
    W = poisson_weights(rep.results.bootstrap_seed, range(rep.n_bootstrap), range(n))
    return [np.repeat(np.arange(n), W[r]) for r in range(rep.n_bootstrap)]


def _binary(n=800, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.08 * np.sin(6 * p), 0, 1)).astype(int)
    return y, {"a": p, "b": np.clip(1.2 * p - 0.1, 0, 1)}


# ---------------------------------------------------------------------------------------------
# every measure of every kind equals its direct recomputation on each resample (1e-12)
# ---------------------------------------------------------------------------------------------
def test_first_order_replicates_equal_the_measures_on_each_resample():
    from skcal.binned_ece import binned_ece
    from skcal.cutoff import cutoff_calibration_error
    from skcal.lipschitz import smooth_calibration_error
    from skcal.smooth_ece import smooth_ece

    y, preds = _binary()
    n = y.shape[0]
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=B, random_state=0, test_calibration=False)
    names = rep.metric_names
    M = resolve_max_bins("auto", float(n), n)
    G = smce_grid_cells(n)
    for r, idx in enumerate(_resample(rep, n)):
        for i, p in enumerate(preds.values()):
            yr, pr = y[idx], p[idx]
            direct = {
                "scdl": ScdlStatistics(max_bins=M).update(yr, pr).compute(),
                "smooth_ece": smooth_ece(yr, pr),
                "smooth_calibration_error": SmoothCEGridStatistics(n_cells=G).update(yr, pr).compute(),
                "cutoff": cutoff_calibration_error(yr, pr),
                "binned_ece": binned_ece(yr, pr, n_bins=11),
                **{m: measure(m).function(yr, pr) for m in ("accuracy", "brier", "log_loss")},
            }
            for j, m in enumerate(names):
                np.testing.assert_allclose(rep.bootstrap_values[r, i, j], direct[m], rtol=1e-12, err_msg=m)
            # smCE's grid replicate lies within its stated bound of the exact smCE of the resample
            grid = SmoothCEGridStatistics(n_cells=G).update(yr, pr)
            assert abs(grid.compute() - smooth_calibration_error(yr, pr)) <= grid.bound() + 1e-15


@pytest.mark.parametrize(
    "kwargs, made",
    # under a budget the first block is a quarter of a block (10 of 40), and no more fits
    [({"n_bootstrap": B}, B), ({"n_bootstrap": 0}, 0), ({"n_bootstrap": 40, "max_seconds": 1e-6}, 10)],
)
def test_values_from_the_replicate_statistics_equal_the_measures(kwargs, made):
    """The values of SCDL, smECE, smCE, the cutoff error and ECE-11 are the measures themselves
    (with or without replicates), and the replicates are the resamples'."""
    from skcal.binned_ece import binned_ece
    from skcal.cutoff import cutoff_calibration_error
    from skcal.lipschitz import smooth_calibration_error
    from skcal.scdl import scdl_score
    from skcal.smooth_ece import smooth_ece

    y, preds = _binary()
    preds["ties"] = np.round(preds["a"], 1)  # runs of tied predictions, and p = 0 and 1 rows
    preds["ties"][:30] = [0.0, 1.0] * 15
    rep = CalibrationReport.from_predictions(y, preds, random_state=0, test_calibration=False, **kwargs)
    funcs = {
        "scdl": scdl_score,
        "smooth_ece": smooth_ece,
        "cutoff": cutoff_calibration_error,
        "binned_ece": lambda y, p: binned_ece(y, p, n_bins=11),
    }
    funcs["smooth_calibration_error"] = smooth_calibration_error
    for name, f in funcs.items():
        expected = [f(y, p) for p in preds.values()]
        np.testing.assert_allclose(rep.table[(name, "value")], expected, rtol=1e-13, err_msg=name)
    # smCE's value is the function's bit for bit: both merge the ties along one stable sort
    expected = [smooth_calibration_error(y, p) for p in preds.values()]
    np.testing.assert_array_equal(rep.table[("smooth_calibration_error", "value")], expected)
    # the replicates are the resamples' (the weighting of ones is not among them)
    assert rep.bootstrap_values.shape[0] == rep.n_bootstrap == made
    j = rep.metric_names.index("cutoff")
    for r, idx in enumerate(_resample(rep, y.shape[0])):
        direct = [cutoff_calibration_error(y[idx], p[idx]) for p in preds.values()]
        np.testing.assert_allclose(rep.bootstrap_values[r, :, j], direct, rtol=1e-12)


@pytest.mark.parametrize("n_bootstrap", [0, B])
def test_second_order_ce2_value_from_the_replicate_statistics(n_bootstrap):
    """CE2's report value is ``ce2_score`` at the degree and ridge chosen once, with or without
    replicates (a first-order model too, whose ``sigma2`` is one number)."""
    from skcal.ce2 import ce2_score
    from skcal.report._kinds import CE2_BANDWIDTH

    n = 800
    Y, preds = _second_order(n, seed=6)
    rep = CalibrationReport.from_predictions(
        Y, preds, n_bootstrap=n_bootstrap, random_state=3, test_calibration=False
    )
    for model, S in preds.items():
        expected = ce2_score(Snapshots(Y), S, bandwidth=CE2_BANDWIDTH, **rep.metric_params[model]["ce2"])
        np.testing.assert_allclose(rep.table.loc[model, ("ce2", "value")], expected, rtol=1e-12)
    assert rep.bootstrap_values.shape[0] == n_bootstrap


def test_multiclass_replicates_use_the_full_samples_bins():
    from skcal.binning import assign_bins

    rng = np.random.default_rng(3)
    n, k = 900, 5
    P = np.exp(1.3 * rng.normal(size=(n, k)))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    Q = P**1.4
    Q /= Q.sum(axis=1, keepdims=True)
    preds = {"a": P, "b": Q}
    metrics = ["truthful_conf_ce", "classwise_lince", "conf_ece", "accuracy", "brier", "log_loss"]
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=metrics, n_bootstrap=B, random_state=1, test_calibration=False
    )
    for i, M in enumerate(preds.values()):
        top = np.argmax(M, axis=1)
        c = M[np.arange(n), top]
        ids_c = assign_bins(c, 15)  # the full sample's quantile bins, fixed for every replicate
        ids_k = assign_bins(M, 15)
        z = (top == y).astype(float)
        for r, idx in enumerate(_resample(rep, n)):
            sums = np.bincount(ids_c[idx], weights=(c - z)[idx], minlength=15)
            W = idx.size
            tcce = (sums @ sums + (1 - z[idx]).sum()) / W**2
            cece = np.abs(sums).sum() / W
            onehot = np.eye(k)[y]
            lince = sum(
                np.sum(np.bincount(ids_k[idx, j], weights=(M[:, j] - onehot[:, j])[idx], minlength=15) ** 2)
                for j in range(k)
            ) / (k * W**2)
            Mr, yr = M[idx], y[idx]
            acc = np.mean(np.argmax(Mr, axis=1) == yr)
            brier = np.mean(np.sum((Mr - np.eye(k)[yr]) ** 2, axis=1))
            ll = -np.mean(np.log(np.clip(Mr[np.arange(idx.size), yr], 2.2e-16, 1)))
            direct = [tcce, lince, cece, acc, brier, ll]
            np.testing.assert_allclose(rep.bootstrap_values[r, i], direct, rtol=1e-12)


def test_measures_of_the_same_statistics_beside_each_other_equal_each_alone():
    """ConfCE-corr and ConfECE of one model bin the same top-label residuals: their replicates
    beside each other equal each alone."""
    rng = np.random.default_rng(4)
    n, k = 700, 4
    P = rng.dirichlet(np.ones(k), size=n)
    y = (P.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    preds = {"a": P, "b": np.roll(P, 1, axis=1)}
    kw = dict(n_bootstrap=B, random_state=2, test_calibration=False)
    both = CalibrationReport.from_predictions(y, preds, metrics=["truthful_conf_ce", "conf_ece"], **kw)
    for j, name in enumerate(["truthful_conf_ce", "conf_ece"]):
        alone = CalibrationReport.from_predictions(y, preds, metrics=[name], **kw)
        np.testing.assert_array_equal(both.bootstrap_values[:, :, j], alone.bootstrap_values[:, :, 0])


def test_quantile_thresholds_reproduce_the_equal_mass_bins():
    from skcal.binning import assign_bins, threshold_bin_ids

    rng = np.random.default_rng(0)
    v = np.round(rng.uniform(size=1000), 2)  # ties across bin edges
    tv, tg = quantile_bin_thresholds(v, 15)
    np.testing.assert_array_equal(threshold_bin_ids(v, np.arange(1000), tv, tg), assign_bins(v, 15))
    assert quantile_bin_thresholds(v[:10], 15) is None


@pytest.mark.parametrize("seed", range(40))
def test_quantile_thresholds_are_the_rows_of_the_stable_order(seed):
    # the selection (no sort) gives the (value, row) at each bin start of the stable order
    from skcal.binning import rank_to_bin

    rng = np.random.default_rng(seed)
    n, nb = int(rng.integers(1, 400)), int(rng.integers(1, 25))
    pool = rng.uniform(size=int(rng.integers(1, 15)))
    v = rng.choice(pool, n) if seed % 2 else rng.uniform(size=n)  # heavy ties, or none
    got = quantile_bin_thresholds(v, nb)
    order = np.argsort(v, kind="stable")
    ranked = rank_to_bin(np.arange(n), n, nb)
    starts = np.flatnonzero(ranked[1:] != ranked[:-1]) + 1
    if n < nb or starts.size != nb - 1:
        assert got is None
        return
    np.testing.assert_array_equal(got[1], order[starts])
    np.testing.assert_array_equal(got[0], v[order[starts]])


def test_second_order_replicates_equal_the_measures_on_each_resample():
    from skcal.ce2 import ce2_score
    from skcal.report._kinds import CE2_BANDWIDTH
    from skcal.votes import snapshot_targets

    n = 700
    Y, preds = _second_order(n, seed=4)
    rep = CalibrationReport.from_predictions(
        Snapshots(Y), preds, n_bootstrap=B, random_state=2, test_calibration=False
    )
    names = rep.metric_names
    for i, (model, S) in enumerate(preds.items()):
        kw = rep.metric_params[model]["ce2"]
        for r, idx in enumerate(_resample(rep, n)):
            Yr, Sr = Y[idx], S[idx]
            t1, t2, _ = snapshot_targets(Yr)
            votes = Yr.votes.ravel()
            mv = np.repeat(Sr[:, 0], 2)
            M = resolve_max_bins("auto", float(2 * n), 2 * n)  # the full sample's votes
            v = Sr[:, 0] ** 2 + Sr[:, 1]
            direct = {
                "ce2": ce2_score(Yr, Sr, bandwidth=CE2_BANDWIDTH, **kw),
                "scdl": ScdlStatistics(max_bins=M).update(votes, mv).compute(),
                "brier": np.mean((mv - votes) ** 2),
                "second_moment_mse": np.mean((v - t2) ** 2),
                "variance_bias": np.mean(Sr[:, 1] - (t2 - 2 * Sr[:, 0] * t1 + Sr[:, 0] ** 2)),
            }
            for j, name in enumerate(names):
                np.testing.assert_allclose(
                    rep.bootstrap_values[r, i, j], direct[name], rtol=1e-12, atol=1e-15, err_msg=name
                )


@pytest.mark.parametrize("kind", ["binary", "multiclass", "second-order"])
def test_a_user_callable_that_writes_into_its_arrays_changes_nothing_else(kind):
    """A callable gets its own copies of the arrays the other metrics, the tests and the figures
    read: one that writes into them (clipping in place) leaves every other number as a report
    without it has them; the caller's arrays are untouched either way."""
    rng = np.random.default_rng(4)
    if kind == "binary":
        y, preds = _binary(n=200)
        preds["a"][:4] = [0.0, 1.0, 0.0, 1.0]  # clipping would move these
    elif kind == "multiclass":
        P = rng.dirichlet(np.ones(3), size=200)
        y, preds = rng.integers(0, 3, 200), {"a": P}
    else:
        y, preds = _second_order(200, seed=4)
    before = {k: v.copy() for k, v in preds.items()}

    def clipping(yy, pp):
        np.clip(pp, 0.01, 0.99, out=pp)
        pp.sort(axis=0)
        return float(np.mean(pp))

    kw = dict(n_bootstrap=3, random_state=0)
    plain = CalibrationReport.from_predictions(y, preds, **kw)
    both = CalibrationReport.from_predictions(y, preds, metrics=[*plain.metric_names], **kw)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics={**{m: m for m in plain.metric_names}, "clip": clipping}, **kw
    )
    for m in plain.metric_names:
        np.testing.assert_array_equal(rep.table[m].to_numpy(float), both.table[m].to_numpy(float))
    assert rep.calibration_tests.equals(plain.calibration_tests)
    for k, v in preds.items():
        np.testing.assert_array_equal(v, before[k])


def test_a_callable_compiled_for_writable_arrays_is_accepted():
    """A numba function with an explicit signature takes writable arrays only (read-only views,
    tried first, made it raise a TypeError)."""
    numba = pytest.importorskip("numba")

    @numba.njit("float64(float64[:], float64[:])")
    def brier(yy, pp):
        return np.mean((pp - yy) ** 2)

    y, preds = _binary(n=200)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics={"brier_nb": brier, "brier": "brier"}, n_bootstrap=2, random_state=0
    )
    np.testing.assert_allclose(rep.table[("brier_nb", "value")], rep.table[("brier", "value")], rtol=1e-12)


def test_a_user_callable_is_recomputed_on_each_resample():
    y, preds = _binary(n=300)
    calls = []

    def mean_gap(yy, pp):
        calls.append(yy.shape[0])
        return float(np.mean(pp - yy))

    rep = CalibrationReport.from_predictions(
        y,
        preds,
        # with a metric whose value comes from the replicates (a weighting of ones beside the
        # first block), which a user's callable is not recomputed on
        metrics={"gap": mean_gap, "brier": "brier", "scdl": "scdl"},
        n_bootstrap=B,
        random_state=5,
        test_calibration=False,
    )
    for r, idx in enumerate(_resample(rep, 300)):
        for i, p in enumerate(preds.values()):
            assert rep.bootstrap_values[r, i, 0] == pytest.approx(np.mean(p[idx] - y[idx]), rel=1e-12)
            assert rep.bootstrap_values[r, i, 1] == pytest.approx(np.mean((p[idx] - y[idx]) ** 2), rel=1e-12)
    assert len(calls) == 2 + 2 * B  # the values, then one call per model and replicate


def test_smce_grid_bound_is_far_below_the_interval_width():
    y, preds = _binary(n=3000)
    rep = CalibrationReport.from_predictions(
        y, preds, metrics=["smooth_calibration_error"], n_bootstrap=60, random_state=0, test_calibration=False
    )
    G = smce_grid_cells(3000)
    for model, p in preds.items():
        bound = SmoothCEGridStatistics(n_cells=G).update(y, p).bound()
        t = rep.table.loc[model, "smooth_calibration_error"]
        assert bound < 0.02 * (t["high"] - t["low"]), (bound, t["high"] - t["low"])


# ---------------------------------------------------------------------------------------------
# chunking, reproducibility, the budget and the progress bar
# ---------------------------------------------------------------------------------------------
def test_replicates_do_not_depend_on_the_block_size(monkeypatch):
    import skcal.report._bootstrap as rb

    y, preds = _binary(n=500)
    kw = {"n_bootstrap": 13, "random_state": 3, "test_calibration": False}
    a = CalibrationReport.from_predictions(y, preds, **kw)
    monkeypatch.setattr(rb, "BLOCK_ENTRIES", 1)  # blocks of 4 replicates
    b = CalibrationReport.from_predictions(y, preds, **kw)
    np.testing.assert_allclose(a.bootstrap_values, b.bootstrap_values, rtol=1e-12)


def test_reproducible_from_an_int_and_from_a_randomstate():
    y, preds = _binary(n=400)
    kw = {"metrics": ["smooth_ece", "cutoff"], "n_bootstrap": 8, "n_resamples": 50}
    a = CalibrationReport.from_predictions(y, preds, random_state=5, **kw)
    b = CalibrationReport.from_predictions(y, preds, random_state=5, **kw)
    np.testing.assert_array_equal(a.bootstrap_values, b.bootstrap_values)
    c = CalibrationReport.from_predictions(y, preds, random_state=np.random.RandomState(5), **kw)
    d = CalibrationReport.from_predictions(y, preds, random_state=np.random.RandomState(5), **kw)
    np.testing.assert_array_equal(c.bootstrap_values, d.bootstrap_values)
    assert c.results.bootstrap_seed == d.results.bootstrap_seed


def test_max_seconds_lowers_the_replicates_and_says_so():
    y, preds = _binary(n=2000)
    rep = CalibrationReport.from_predictions(
        y, preds, n_bootstrap=5000, max_seconds=1e-3, random_state=0, test_calibration=False
    )
    assert rep.n_bootstrap_requested == 5000 and 4 <= rep.n_bootstrap < 5000
    assert rep.results.budget_limited
    assert any(
        "1/sqrt(B)" in line and f"{rep.n_bootstrap} bootstrap replicates" in line for line in rep.verdict
    )
    doc = rep.to_dict()["bootstrap"]
    assert doc == {
        "method": "poisson",
        "n_replicates": rep.n_bootstrap,
        "n_requested": 5000,
        "max_seconds": 1e-3,
        "budget_limited": True,
        "monte_carlo_error": "grows as 1/sqrt(n_replicates)",
    }
    assert "max_seconds=0.001 lowered the replicates" in rep.to_html()
    # the first block is the first block of the full run
    full = CalibrationReport.from_predictions(
        y, preds, n_bootstrap=rep.n_bootstrap, random_state=0, test_calibration=False
    )
    np.testing.assert_array_equal(full.bootstrap_values, rep.bootstrap_values)
    roomy = CalibrationReport.from_predictions(
        y, preds, metrics=["brier"], n_bootstrap=20, max_seconds=600, random_state=0, test_calibration=False
    )
    assert roomy.n_bootstrap == 20 and not roomy.results.budget_limited
    assert not any("1/sqrt" in line for line in roomy.verdict)
    with pytest.raises(ValueError, match="max_seconds"):
        CalibrationReport.from_predictions(y, preds, max_seconds=0)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_and_lines_elsewhere():
    tty = _Terminal()
    bar = Progress("bootstrap", 10, "replicates", stream=tty)
    bar.update(4)
    bar.update(10)
    out = tty.getvalue()
    assert out.startswith("\r[skcal] bootstrap [") and "4/10 replicates" in out and out.endswith("\n")
    plain = io.StringIO()
    quiet = Progress("bootstrap", 10, "replicates", stream=plain)
    quiet.update(10)
    assert plain.getvalue() == ""
    loud = Progress("bootstrap", 10, "replicates", verbose=1, stream=plain)
    loud.update(10)
    assert plain.getvalue().startswith("[skcal] bootstrap: 10/10 replicates")


def test_the_report_draws_its_bars_on_a_terminal(monkeypatch):
    import sys

    tty = _Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    y, preds = _binary(n=300)
    CalibrationReport.from_predictions(y, preds, metrics=["brier", "cutoff"], n_bootstrap=10, n_resamples=20)
    text = tty.getvalue()
    assert "\r[skcal] bootstrap [" in text and "\r[skcal] calibration tests [" in text


def test_cli_max_seconds(tmp_path, capsys):
    from skcal.cli import main

    rng = np.random.default_rng(0)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    csv = tmp_path / "preds.csv"
    csv.write_text("y,a\n" + "\n".join(f"{a},{b}" for a, b in zip(y, p, strict=True)) + "\n")
    out = tmp_path / "r.json"
    assert (
        main(["report", str(csv), "--format", "json", "--out", str(out), "--max-seconds", "600", "-q"]) == 0
    )
    import json

    doc = json.loads(out.read_text())
    assert doc["bootstrap"]["max_seconds"] == 600 and doc["bootstrap"]["budget_limited"] is False
    with pytest.raises(SystemExit):
        main(["report", str(csv), "--max-seconds", "-1"])
    assert "positive finite number of seconds" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# the intervals and p_best on a simulation with a known truth (quick)
# ---------------------------------------------------------------------------------------------
def test_coverage_and_p_best_with_a_known_truth():
    """Brier's population value is known exactly; two models differ by a known margin.

    Over 60 validation sets of 400 rows, the 90% intervals of the Brier score cover its
    population value at a rate inside the 99.9% binomial band of 90%; the model that is better in
    the population wins ``P(best)`` on average, and two models that are equal in the population
    share it.
    """
    from scipy import stats as sps

    rng = np.random.default_rng(11)
    n, repeats = 400, 60
    covered, pb_better, pb_twin = 0, [], []
    # population Brier of p under f* = p: E[p (1 - p)] for p ~ U(0.05, 0.95)
    truth = 0.5 * (0.95**2 - 0.05**2) / 0.9 - (0.95**3 - 0.05**3) / (3 * 0.9)
    for _ in range(repeats):
        p = rng.uniform(0.05, 0.95, n)
        y = (rng.uniform(size=n) < p).astype(int)
        q = np.clip(p + 0.15, 0, 1)  # worse in the population by a clear margin
        twin = 1.0 - (1.0 - p)  # the same predictions: equal in every sample
        rep = CalibrationReport.from_predictions(
            y,
            {"p": p, "worse": q, "twin": twin},
            metrics=["brier"],
            n_bootstrap=60,
            random_state=int(rng.integers(2**31)),
            test_calibration=False,
        )
        t = rep.table.loc["p", "brier"]
        covered += t["low"] <= truth <= t["high"]
        pb_better.append(rep.table.loc["worse", ("brier", "p_best")])
        pb_twin.append((rep.table.loc["p", ("brier", "p_best")], rep.table.loc["twin", ("brier", "p_best")]))
    lo, hi = sps.binom.ppf([0.0005, 0.9995], repeats, 0.9) / repeats
    assert lo <= covered / repeats <= hi, covered / repeats
    assert np.mean(pb_better) < 0.05
    assert all(a == b for a, b in pb_twin)  # tied in every replicate


def test_the_reports_calibration_tests_are_calibration_tests_statistics():
    from skcal.calibration_test import calibration_test

    rng = np.random.default_rng(1)
    n = 700
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    preds = {"a": p, "ties": np.round(p, 1), "b": np.clip(p + 0.05, 0, 1)}
    rep = CalibrationReport.from_predictions(y, preds, n_bootstrap=8, n_resamples=99, random_state=0)
    for model, q in preds.items():
        # the statistic does not depend on the test's seed
        direct = calibration_test(y, q, measure="cutoff", n_resamples=99, random_state=0)
        assert rep.calibration_tests.loc[model, "statistic"] == direct.statistic
