"""Experiment 6.5: SCDL on synthetic data, against smECE, cutoff error and binned ECE.

Data: ``X ~ U[0, 1]``, ``Y ~ Bernoulli(eta(X))`` with ``eta(x) = alpha (1 - 2x)^2 + (1 - alpha) x``.
A logistic regression (scikit-learn defaults, one feature) is fit on 500 samples: a monotone
predictor ``f``; ``1 - f`` is the second predictor. On a fresh test set of 1000 samples we compute
SCDL, relplot's smECE, the Lipschitz smooth calibration error (smCE,
``skcal.lipschitz.smooth_calibration_error``), the cutoff calibration error and the 11-bin ECE of
both predictors.

* Table: mean and std over ``--repeats`` repeats (fresh training and test data each) for alpha
  in {0, 0.5, 0.8, 1}.
* Correlation: 200 random alpha ~ U[0, 1] (one repeat each); Spearman correlation of every
  measure with the *true swap regret* of the predictor, for f and for 1 - f.

**True swap regret.** We use the worst case over all decision tasks with utilities in [0, 1]
(binary outcome, any finite action set) of the swap regret of the decision maker who
best-responds to the predictor's ``p``; this supremum is the calibration decision loss CDL. Since
``f`` is strictly monotone, ``E[y | p = f(x)] = eta(x)`` is known exactly. A task's best-response
regret at ``p`` is the Bregman divergence of its convex value function ``V``, which by the
Schervish representation is ``int |eta - theta| 1[theta between p and eta] dmu(theta)`` with
``mu = V''``; utilities in [0, 1] mean exactly ``int (1 - theta) dmu <= 1`` and
``int theta dmu <= 1``. Writing ``G(theta) = E_x[|eta - theta| 1[theta between p and eta]]``, the
supremum over such ``mu`` is, by linear-programming duality, ``2 Ghat(1/2)`` where ``Ghat`` is the
upper concave envelope of ``G`` on [0, 1] (the optimum puts mass on at most two thresholds).
We evaluate ``G`` exactly as a piecewise-linear function on a 4001-point theta grid (difference
arrays) with ``x`` integrated by the midpoint rule on 20,000 points, and evaluate the envelope
(upper convex hull) at 1/2. Swap regret with deviations per *action* equals this per-prediction
gain for tasks whose best response separates the predictions (a continuum of actions), so the
supremum over tasks of the swap regret is CDL. (If the fitted slope is exactly 0, ``p`` is constant,
``E[y | p]`` is the mean of ``eta``, and CDL is computed with that.)

CDL is not testable: a nearly constant but strictly monotone ``f`` (alpha near 1, where the
symmetric ``eta`` leaves the logistic slope near 0) has a large CDL that only tasks resolving
differences of ~1e-3 in ``p`` can exploit. We also report the same supremum restricted to the
simplest tasks, two actions with a threshold (utilities in [0, 1]), where deviations pool all
predictions on each side of the threshold (``threshold_swap_regret``; it is at most CDL).

Besides ``scdl`` = ``min_m max(SCDL_m, 1/m)`` with the default ``"auto"`` grid rule (``m_max`` the
smallest power of two ``>= 4 sqrt(T)``: 128 at T = 1000) we report ``scdl_m_star`` = the unfloored
``SCDL_{m*}`` on the selected grid, ``m_star`` itself, and ``scdl_theory`` = SCDL with the rate
theorem's cap ``m ln m <= sqrt(T)`` (``m = 8`` at T = 1000, so it cannot go below ``1/8``).

``--grid-study`` runs the study behind the ``"auto"`` rule instead: for each alpha one fitted
predictor, its population ``SCDL_m`` (midpoint rule over 2e6 points of ``x`` with ``y`` replaced by
``eta(x)``, grids up to ``2^14``) and, for T in {300, 1000, 3000, 10000}, ``--repeats`` fresh test
sets scored under the caps "theory", ``c sqrt(T)`` (c = 1, 2, 4, 8; rounded up to a power of two)
and the largest grid the data support; bias, spread, how often the estimate falls below the
truth, and how often the selected grid is the cap. Writes ``scdl_grid_study.json``
(``scdl_grid_study_quick.json`` with ``--quick``).

Usage (from the repository root)::

    nice python -m benchmarks.scdl_synthetic --n-jobs 2   # full: 200 repeats, 200 alphas
    nice python -m benchmarks.scdl_synthetic --grid-study --repeats 100   # the grid-rule study
    python -m benchmarks.scdl_synthetic --quick               # smoke: 2 repeats, 6 alphas

Writes ``scdl_synthetic.json`` and ``scdl_synthetic.png`` (``scdl_synthetic_quick.*`` with
``--quick``, the file ``benchmarks/verify.py`` compares) to ``--out``, with provenance.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from benchmarks import _harness as harness
from skcal import binned_ece, cutoff_calibration_error, smooth_ece
from skcal.lipschitz import smooth_calibration_error
from skcal.scdl import max_supported_bins, scdl_curve, theory_max_bins
from skcal.stats import ScdlStatistics

ALPHAS = (0.0, 0.5, 0.8, 1.0)
MEASURES = ("scdl", "scdl_m_star", "m_star", "scdl_theory", "smooth_ece", "smce", "cutoff", "ece11")
TARGETS = ("true_swap_regret", "threshold_swap_regret")
N_TRAIN, N_TEST = 500, 1000


def eta(x, alpha):
    return alpha * (1 - 2 * x) ** 2 + (1 - alpha) * x


def true_cdl(coef, intercept, alpha, flip, n_x=20_000, n_theta=4001):
    """Sup over tasks with utilities in [0, 1] of the swap regret of best-responding to p (CDL)."""
    x = (np.arange(n_x) + 0.5) / n_x
    f = 1.0 / (1.0 + np.exp(-(coef * x + intercept)))
    p = 1.0 - f if flip else f
    e = eta(x, alpha)
    if coef == 0.0:  # constant predictor: E[y | p] is the mean label
        e = np.full_like(x, e.mean())
    theta = np.linspace(0.0, 1.0, n_theta)
    lo, hi = np.minimum(p, e), np.maximum(p, e)
    s = np.sign(e - p)  # active contribution: s (eta - theta) = |eta - theta|
    start = np.searchsorted(theta, lo, side="right")  # first theta > lo
    stop = np.searchsorted(theta, hi, side="left")  # first theta >= hi
    A = np.zeros(n_theta + 1)
    B = np.zeros(n_theta + 1)
    np.add.at(A, start, s * e)
    np.add.at(A, stop, -s * e)
    np.add.at(B, start, s)
    np.add.at(B, stop, -s)
    G = (np.cumsum(A)[:-1] - theta * np.cumsum(B)[:-1]) / n_x
    G = np.maximum(G, 0.0)
    return float(2.0 * concave_envelope_at(theta, G, 0.5))


def concave_envelope_at(t, g, t0):
    """Upper concave envelope of the points ``(t, g)`` (``t`` increasing) evaluated at ``t0``."""
    hull = []  # Andrew's monotone chain, upper hull
    for k in range(t.shape[0]):
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            # drop j if it lies on or below the segment from i to k
            if (g[j] - g[i]) * (t[k] - t[i]) <= (g[k] - g[i]) * (t[j] - t[i]):
                hull.pop()
            else:
                break
        hull.append(k)
    hull = np.array(hull)
    return float(np.interp(t0, t[hull], g[hull]))


def threshold_swap_regret(coef, intercept, alpha, flip, n_x=20_000, n_theta=4001):
    """Sup over two-action threshold tasks (utilities in [0, 1]) of the swap regret of best-responding.

    The task with threshold theta acts iff ``p > theta``; its utility gap is
    ``U(1, y) - U(0, y) = (y - theta) / max(theta, 1 - theta)`` (the largest scale keeping utilities
    in [0, 1]). Swap regret: ``(E[(eta - theta) 1{p <= theta}])_+ + (E[(theta - eta) 1{p > theta}])_+``
    times that scale, with the expectation over ``x ~ U[0, 1]`` (midpoint rule).
    """
    x = (np.arange(n_x) + 0.5) / n_x
    f = 1.0 / (1.0 + np.exp(-(coef * x + intercept)))
    p = 1.0 - f if flip else f
    e = eta(x, alpha)
    order = np.argsort(p)
    ps, es = p[order], e[order]
    theta = np.linspace(0.0, 1.0, n_theta)
    k = np.searchsorted(ps, theta, side="right")  # samples with p <= theta
    ce = np.concatenate([[0.0], np.cumsum(es)])
    below = (ce[k] - theta * k) / n_x  # E[(eta - theta) 1{p <= theta}]
    above = (theta * (n_x - k) - (ce[-1] - ce[k])) / n_x  # E[(theta - eta) 1{p > theta}]
    scale = 1.0 / np.maximum(theta, 1.0 - theta)
    return float(np.max(scale * (np.maximum(below, 0.0) + np.maximum(above, 0.0))))


def measures(y, p):
    curve = scdl_curve(y, p)
    return {
        "scdl": curve.scdl,
        "scdl_m_star": curve.selected_scdl_m,
        "m_star": float(curve.selected_n_bins),
        "scdl_theory": scdl_curve(y, p, max_bins="theory").scdl,
        "smooth_ece": smooth_ece(y, p),
        "smce": smooth_calibration_error(y, p),
        "cutoff": cutoff_calibration_error(y, p),
        "ece11": binned_ece(y, p, n_bins=11),
    }


def one_run(alpha, seed):
    rng = np.random.default_rng(seed)
    x_tr = rng.uniform(size=N_TRAIN)
    y_tr = (rng.uniform(size=N_TRAIN) < eta(x_tr, alpha)).astype(int)
    if y_tr.min() == y_tr.max():  # a one-class training set: flip one label so LR can fit
        y_tr[0] = 1 - y_tr[0]
    lr = LogisticRegression().fit(x_tr[:, None], y_tr)
    coef, intercept = float(lr.coef_[0, 0]), float(lr.intercept_[0])
    x = rng.uniform(size=N_TEST)
    y = (rng.uniform(size=N_TEST) < eta(x, alpha)).astype(int)
    f = lr.predict_proba(x[:, None])[:, 1]
    out = {"alpha": alpha, "seed": seed, "coef": coef, "intercept": intercept}
    for name, p, flip in (("f", f, False), ("1-f", 1.0 - f, True)):
        res = measures(y, p)
        res["true_swap_regret"] = true_cdl(coef, intercept, alpha, flip)
        res["threshold_swap_regret"] = threshold_swap_regret(coef, intercept, alpha, flip)
        out[name] = res
    return out


GRID_FINE = 1 << 14
GRID_RULES = ("theory", "c1", "c2", "c4", "c8", "max")
GRID_T = (300, 1000, 3000, 10000)


def population_curve(coef, intercept, alpha, flip, n_x=2_000_000):
    """Population ``SCDL_m`` of the predictor (midpoint rule in x, y replaced by eta(x))."""
    x = (np.arange(n_x) + 0.5) / n_x
    f = 1.0 / (1.0 + np.exp(-(coef * x + intercept)))
    p = 1.0 - f if flip else f
    # population labels: the rows carry eta(x) = E[y | x] in place of a 0/1 label (every sum is linear in y)
    st = ScdlStatistics.from_validated(eta(x, alpha), p, None, max_bins=GRID_FINE)
    return st.curve(max_bins=GRID_FINE)


def grid_caps(T):
    out = {"theory": theory_max_bins(T)}
    for c in (1, 2, 4, 8):
        m = 2
        while m < c * np.sqrt(T):
            m *= 2
        out[f"c{c}"] = m
    out["max"] = 1 << (max_supported_bins(T).bit_length() - 1)
    return out


def grid_study_cell(alpha, T, repeats, seed):
    rng = np.random.default_rng(seed)
    x_tr = rng.uniform(size=N_TRAIN)
    y_tr = (rng.uniform(size=N_TRAIN) < eta(x_tr, alpha)).astype(int)
    lr = LogisticRegression().fit(x_tr[:, None], y_tr)
    coef, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
    caps = grid_caps(T)
    res = {"alpha": alpha, "T": T, "caps": caps}
    for name, flip in (("f", False), ("1-f", True)):
        pop = population_curve(coef, b, alpha, flip)
        est = {k: [] for k in GRID_RULES}
        mstar = {k: [] for k in GRID_RULES}
        floor = {k: [] for k in GRID_RULES}
        for _ in range(repeats):
            x = rng.uniform(size=T)
            y = (rng.uniform(size=T) < eta(x, alpha)).astype(int)
            f = 1.0 / (1.0 + np.exp(-(coef * x + b)))
            st = ScdlStatistics(max_bins=GRID_FINE).update(y, 1.0 - f if flip else f)
            for k in GRID_RULES:
                c = st.curve(max_bins=caps[k])
                est[k].append(c.scdl)
                mstar[k].append(c.selected_n_bins)
                floor[k].append(c.at_floor)
        cell = {"population_scdl": pop.scdl, "population_m_star": pop.selected_n_bins}
        for k in GRID_RULES:
            e = np.array(est[k])
            cell[k] = {
                "mean": float(e.mean()),
                "std": float(e.std(ddof=1)),
                "bias": float(e.mean() - pop.scdl),
                "rmse": float(np.sqrt(np.mean((e - pop.scdl) ** 2))),
                "below_truth": float(np.mean(e < pop.scdl - 1e-12)),
                "m_star_median": float(np.median(mstar[k])),
                "at_cap_and_floor": float(np.mean((np.array(mstar[k]) == caps[k]) & np.array(floor[k]))),
                "at_floor": float(np.mean(floor[k])),
            }
        res[name] = cell
    return res


def grid_study(args, argv=None):
    clock = harness.Timer()
    repeats = 3 if args.quick else args.repeats
    cells = [(a, T) for a in ALPHAS for T in ((300,) if args.quick else GRID_T)]
    seeds = np.random.SeedSequence([args.seed, 2]).generate_state(len(ALPHAS))
    out = Parallel(n_jobs=args.n_jobs)(
        delayed(grid_study_cell)(a, T, repeats, int(seeds[ALPHAS.index(a)])) for a, T in cells
    )
    result = {
        "repeats": repeats,
        "rules": "theory: m ln m <= sqrt(T); cK: smallest power of two >= K sqrt(T); max: max_supported_bins",
        "cells": out,
    }
    config = harness.args_config(args, repeats_used=repeats)
    prov = harness.provenance(__file__, argv, config=config, clock=clock)
    stem = "scdl_grid_study_quick" if args.quick else "scdl_grid_study"
    harness.write_json(args.out / f"{stem}.json", result, provenance=prov)
    for cell in out:
        for pred in ("f", "1-f"):
            c = cell[pred]
            print(
                f"alpha {cell['alpha']:.1f} T {cell['T']:5d} {pred:3s} truth {c['population_scdl']:.4f} | "
                + " ".join(f"{k} {c[k]['mean']:.4f}+-{c[k]['std']:.4f}" for k in GRID_RULES)
            )
    print(f"wall {prov['wall_time_s']:.1f} s")
    return result


def summarise(table_runs, corr_runs):
    table = {}
    for pred in ("f", "1-f"):
        table[pred] = {}
        for alpha in ALPHAS:
            runs = [r[pred] for r in table_runs if r["alpha"] == alpha]
            table[pred][str(alpha)] = {
                k: {
                    "mean": float(np.mean([r[k] for r in runs])),
                    "std": float(np.std([r[k] for r in runs], ddof=1)),
                }
                for k in (*MEASURES, *TARGETS)
            }
    spearman = {}
    for target in TARGETS:
        spearman[target] = {}
        for pred in ("f", "1-f"):
            truth = np.array([r[pred][target] for r in corr_runs])
            spearman[target][pred] = {}
            for k in MEASURES:
                values = np.array([r[pred][k] for r in corr_runs])
                # A measure constant over all runs (SCDL at its floor 1/m_max) has no rank
                # correlation: reported as None (null in JSON).
                rho = None if np.ptp(values) == 0 else float(spearmanr(values, truth).statistic)
                spearman[target][pred][k] = rho
    return table, spearman


def plot(table, corr_runs, spearman, path):
    shown = tuple(k for k in MEASURES if k != "m_star")
    fig, axes = harness.subplots(2, 1 + len(shown), figsize=(24, 7))
    for row, pred in enumerate(("f", "1-f")):
        ax = axes[row, 0]
        xs = np.arange(len(ALPHAS))
        for k, name in enumerate((*shown, *TARGETS)):
            means = [table[pred][str(a)][name]["mean"] for a in ALPHAS]
            stds = [table[pred][str(a)][name]["std"] for a in ALPHAS]
            ax.errorbar(xs + 0.06 * (k - 3), means, yerr=stds, marker="o", capsize=3, label=name)
        ax.set_xticks(xs, [str(a) for a in ALPHAS])
        ax.set_xlabel("alpha")
        ax.set_title(f"predictor {pred}: mean +- std")
        ax.legend(fontsize=7)
        truth = np.array([r[pred]["true_swap_regret"] for r in corr_runs])
        for k, name in enumerate(shown):
            ax = axes[row, k + 1]
            ax.scatter(truth, [r[pred][name] for r in corr_runs], s=8)
            ax.set_xlabel("true swap regret (CDL)")
            ax.set_ylabel(name)
            rho = spearman["true_swap_regret"][pred][name]
            ax.set_title(f"{pred}: Spearman {'undefined' if rho is None else f'{rho:.3f}'}")
    harness.save_figure(fig, path, dpi=110)


def _fmt(rho):
    return "undefined" if rho is None else f"{rho:.3f}"


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run: 2 repeats, 6 random alphas", n_jobs="joblib workers", seed=True
    )
    parser.add_argument("--repeats", type=int, default=200, help="repeats per alpha for the table")
    parser.add_argument("--n-alphas", type=int, default=200, help="random alphas for the correlation")
    parser.add_argument("--grid-study", action="store_true", help="the grid-rule bias study instead")
    args = harness.parse_args(parser, argv)
    if args.grid_study:
        return grid_study(args, argv)
    repeats = 2 if args.quick else args.repeats
    n_alphas = 6 if args.quick else args.n_alphas
    clock = harness.Timer()
    ss = np.random.SeedSequence(args.seed)
    table_seeds = ss.spawn(1)[0].generate_state(len(ALPHAS) * repeats)
    corr_ss = np.random.SeedSequence([args.seed, 1])
    corr_alphas = np.random.default_rng(corr_ss).uniform(size=n_alphas)
    corr_seeds = corr_ss.generate_state(n_alphas + 1)[1:]
    jobs = [(a, int(table_seeds[i * repeats + r])) for i, a in enumerate(ALPHAS) for r in range(repeats)]
    jobs += [(float(a), int(s)) for a, s in zip(corr_alphas, corr_seeds, strict=True)]
    runs = Parallel(n_jobs=args.n_jobs)(delayed(one_run)(a, s) for a, s in jobs)
    table_runs, corr_runs = runs[: len(ALPHAS) * repeats], runs[len(ALPHAS) * repeats :]
    table, spearman = summarise(table_runs, corr_runs)
    result = {
        "quick": args.quick,
        "repeats": repeats,
        "n_alphas": n_alphas,
        "n_train": N_TRAIN,
        "n_test": N_TEST,
        "seed": args.seed,
        "targets": {
            "true_swap_regret": "CDL: sup over all tasks with utilities in [0, 1] (see the script docstring)",
            "threshold_swap_regret": "sup over two-action threshold tasks with utilities in [0, 1]",
        },
        "table": table,
        "spearman_with_true_swap_regret": spearman,
        "runs": runs,
    }
    config = harness.args_config(
        args, repeats_used=repeats, n_alphas_used=n_alphas, n_train=N_TRAIN, n_test=N_TEST
    )
    prov = harness.provenance(__file__, argv, config=config, clock=clock)
    stem = "scdl_synthetic_quick" if args.quick else "scdl_synthetic"
    harness.write_json(args.out / f"{stem}.json", result, provenance=prov)
    plot(table, corr_runs, spearman, args.out / f"{stem}.png")
    for pred in ("f", "1-f"):
        print(f"predictor {pred}")
        print("  alpha  " + "  ".join(f"{k:>21s}" for k in (*MEASURES, *TARGETS)))
        for a in ALPHAS:
            cells = [
                f"{table[pred][str(a)][k]['mean']:.4f}+-{table[pred][str(a)][k]['std']:.4f}"
                for k in (*MEASURES, *TARGETS)
            ]
            print(f"  {a:5.2f}  " + "  ".join(f"{c:>21s}" for c in cells))
        for target in TARGETS:
            rhos = spearman[target][pred].items()
            print(f"  Spearman with {target}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in rhos))
    print(f"wall {prov['wall_time_s']:.1f} s")
    return result


if __name__ == "__main__":
    main()
