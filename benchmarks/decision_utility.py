"""Experiment 6.3: decision utility of second-order calibration: the referral clinic.

A clinic refers borderline patients (``m`` in [0.35, 0.65]) for a test at cost ``c = 0.06``. The
referral gain for a patient with true risk ``theta`` is ``g(theta) = 2 theta^2 - 2 theta + 0.5 - c``,
whose conditional mean given a score is ``2 eta2 - 2 eta1 + 0.5 - c``: it needs the *second*
moment of ``theta``, which first-order calibration cannot supply. Each method estimates the gain
and refers a patient when the estimate exceeds a threshold; the realised gain is
``100 * mean over borderline patients of g(theta) * 1[estimate > threshold]`` (gain per 100
borderline patients, using the expected gain ``g(theta)`` of each referred patient).

Population (four groups, weights 0.25, 0.25, 0.35, 0.15): clear negatives and positives
(``theta``, ``m`` ~ N(0.08, 0.03^2) / N(0.92, 0.03^2), ``sigma2`` ~ N(0.004, 0.001^2): the protocol only
says "near 0.08 / 0.92 with small sigma2", these spreads are our choice; they never pass the
borderline filter); the aleatoric group (m ~ N(0.5, 0.035^2), sigma2 ~ N(0.010, 0.002^2),
theta ~ N(0.5, 0.04^2)); the hidden-subtype group (m ~ N(0.5, 0.035^2), sigma2 ~ N(0.060, 0.010^2),
theta ~ N(0.12, 0.03^2) or N(0.88, 0.03^2) with equal odds). ``m`` and ``theta`` are clipped to
[0, 1], ``sigma2`` to [0, 1/4]. The scores are used as given (no sech perturbation: the
protocol of experiment 6.3 does not perturb them).

Calibrators (``skcal.SecondOrderPlattCalibrator``, tensor Chebyshev basis, ``alpha = 1e-4``) are
fit on two snapshots ``Y1, Y2 ~ Bernoulli(theta)`` of the borderline patients of the calibration
sample: 1-D degree 6 on ``m`` and 2-D degree 4 per axis on ``(m, sigma2)``, each first-order
(``order=1``) and second-order (``order=2``). The seven methods are: raw plug-in from ``m``
(``eta1 = m``, ``eta2 = m^2``), raw plug-in from ``(m, sigma2)`` (``eta2 = m^2 + sigma2``), the four
Platt variants (their projected ``predict_moments``), and the oracle (``g(theta)`` itself).

Usage (from the repository root)::

    python -m benchmarks.decision_utility            # full protocol (200 repeats)
    python -m benchmarks.decision_utility --quick    # smoke run

Writes ``decision_utility.json`` and ``decision_utility.png`` (``decision_utility_quick.*`` with
``--quick``).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness

COST = 0.06
BORDER = (0.35, 0.65)
WEIGHTS = np.array([0.25, 0.25, 0.35, 0.15])
METHODS = [
    "raw plug-in m",
    "raw plug-in (m, sigma2)",
    "1-D first-order Platt",
    "2-D first-order Platt",
    "1-D second-order Platt",
    "2-D second-order Platt",
    "oracle",
]


def gain(theta):
    return 2.0 * theta**2 - 2.0 * theta + 0.5 - COST


def gain_from_moments(eta1, eta2):
    return 2.0 * eta2 - 2.0 * eta1 + 0.5 - COST


def draw_population(n, rng):
    """Return ``m, sigma2, theta, group`` for ``n`` patients (groups 0..3 as in the module doc)."""
    group = rng.choice(4, size=n, p=WEIGHTS)
    m = np.empty(n)
    s2 = np.empty(n)
    th = np.empty(n)
    for g, (mm, sm, ms2, ss2) in enumerate(
        [(0.08, 0.03, 0.004, 0.001), (0.92, 0.03, 0.004, 0.001), (0.5, 0.035, 0.010, 0.002)]
    ):
        idx = group == g
        k = int(idx.sum())
        m[idx] = rng.normal(mm, sm, k)
        s2[idx] = rng.normal(ms2, ss2, k)
        th[idx] = rng.normal(mm, 0.03 if g < 2 else 0.04, k)
    idx = group == 3
    k = int(idx.sum())
    m[idx] = rng.normal(0.5, 0.035, k)
    s2[idx] = rng.normal(0.060, 0.010, k)
    th[idx] = np.where(rng.random(k) < 0.5, rng.normal(0.12, 0.03, k), rng.normal(0.88, 0.03, k))
    return np.clip(m, 0, 1), np.clip(s2, 0, 0.25), np.clip(th, 0, 1), group


def one_repeat(seed, n_cal, n_eval, thresholds):
    from skcal import SecondOrderPlattCalibrator, Snapshots

    rng = np.random.default_rng(seed)
    m_c, s_c, th_c, _ = draw_population(n_cal, rng)
    m_e, s_e, th_e, grp_e = draw_population(n_eval, rng)
    bc = (m_c >= BORDER[0]) & (m_c <= BORDER[1])
    be = (m_e >= BORDER[0]) & (m_e <= BORDER[1])
    m_c, s_c, th_c = m_c[bc], s_c[bc], th_c[bc]
    m_e, s_e, th_e, grp_e = m_e[be], s_e[be], th_e[be], grp_e[be]
    Y = Snapshots(rng.random((len(th_c), 2)) < th_c[:, None])  # two votes a row, said

    S1c, S2c = m_c[:, None], np.column_stack([m_c, s_c])
    S1e, S2e = m_e[:, None], np.column_stack([m_e, s_e])
    est = {
        "raw plug-in m": gain_from_moments(m_e, m_e**2),
        "raw plug-in (m, sigma2)": gain_from_moments(m_e, m_e**2 + s_e),
    }
    for dim, deg, Sc, Se in [("1-D", 6, S1c, S1e), ("2-D", 4, S2c, S2e)]:
        for order, name in [(1, "first-order"), (2, "second-order")]:
            cal = SecondOrderPlattCalibrator(degree=deg, alpha=1e-4, basis="tensor", order=order)
            cal.fit(Sc, Y)
            mom = cal.predict_moments(Se)
            est[f"{dim} {name} Platt"] = gain_from_moments(mom[:, 0], mom[:, 1])
    est["oracle"] = gain(th_e)

    g_true = gain(th_e)
    n_b = len(th_e)
    curves = np.empty((len(METHODS), len(thresholds)))
    for i, name in enumerate(METHODS):
        refer = est[name][:, None] > thresholds[None, :]
        curves[i] = 100.0 * (g_true[:, None] * refer).sum(axis=0) / n_b
    return curves, n_b, int(bc.sum())


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over repeats", seed=True
    )
    parser.add_argument("--repeats", type=int, default=None, help="override the number of repeats")
    args = harness.parse_args(parser, argv)
    repeats = args.repeats or (10 if args.quick else 200)
    n_cal, n_eval = 3000, 8000
    thresholds = np.linspace(-0.05, 0.30, 71)
    tag = "decision_utility_quick" if args.quick else "decision_utility"
    clock = harness.Timer()

    with harness.Timer() as timer:
        out = Parallel(n_jobs=args.n_jobs)(
            delayed(one_repeat)(args.seed * 100_000 + r, n_cal, n_eval, thresholds) for r in range(repeats)
        )
    curves = np.stack([o[0] for o in out])  # (repeats, methods, thresholds)
    mean = curves.mean(axis=0)
    sem = curves.std(axis=0, ddof=1) / np.sqrt(repeats)
    best = mean.argmax(axis=1)
    at = {}
    for tau in (0.0, 0.05, 0.10, 0.15, 0.20, 0.25):
        j = int(np.argmin(np.abs(thresholds - tau)))
        at[f"{tau:.2f}"] = {
            name: {"mean": mean[i, j], "halfwidth_1.96sem": 1.96 * sem[i, j]}
            for i, name in enumerate(METHODS)
        }
    summary = {
        name: {
            "best_threshold": thresholds[best[i]],
            "best_mean_gain": mean[i, best[i]],
            "best_halfwidth_1.96sem": 1.96 * sem[i, best[i]],
        }
        for i, name in enumerate(METHODS)
    }
    payload = {
        "experiment": "SPEC 6.3 decision utility",
        "repeats": repeats,
        "n_cal": n_cal,
        "n_eval": n_eval,
        "mean_borderline_eval": float(np.mean([o[1] for o in out])),
        "mean_borderline_cal": float(np.mean([o[2] for o in out])),
        "cost": COST,
        "thresholds": thresholds,
        "methods": METHODS,
        "mean_gain_per_100": mean,
        "sem": sem,
        "at_threshold": at,
        "best": summary,
        "seconds": timer.seconds,
        "n_jobs": args.n_jobs,
    }
    config = {"quick": args.quick, "repeats": repeats, "n_cal": n_cal, "n_eval": n_eval, "seed": args.seed}
    config.update(cost=COST, n_thresholds=len(thresholds), n_jobs=args.n_jobs)
    harness.write_result(__file__, argv, args.out / f"{tag}.json", payload, config=config, clock=clock)
    plot(thresholds, mean, sem, repeats, args.out / f"{tag}.png")
    print(f"{tag}: {repeats} repeats in {timer.seconds:.1f}s")
    for name, s in summary.items():
        print(f"  {name:26s} best gain {s['best_mean_gain']:7.3f} at threshold {s['best_threshold']:.3f}")
    return payload


def plot(thresholds, mean, sem, repeats, path):
    fig, ax = harness.subplots(figsize=(7.5, 4.8))
    styles = ["--", "--", ":", ":", "-.", "-", "-"]
    for i, name in enumerate(METHODS):
        color = "k" if name == "oracle" else None
        lo, hi = mean[i] - 1.96 * sem[i], mean[i] + 1.96 * sem[i]
        harness.plot_band(ax, thresholds, mean[i], lo, hi, styles[i], label=name, color=color, lw=1.6)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("referral threshold on estimated gain")
    ax.set_ylabel("realised gain per 100 borderline patients")
    ax.set_title(f"Referral clinic (experiment 6.3), mean and 1.96 SEM over {repeats} repeats")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


if __name__ == "__main__":
    main()
