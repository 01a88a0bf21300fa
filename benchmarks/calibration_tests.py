"""Calibration hypothesis tests (consistency resampling): type-I error and power.

Data: true probabilities ``p ~ Beta(2, 2)``, labels ``y ~ Bernoulli(p)``.

* **Type-I error.** The predictions are ``p`` itself (calibrated). For every measure and
  T in {200, 1000, 10000}: the rate of ``pvalue <= 0.05`` over ``--reps`` repetitions, with the
  binomial 99% band around 0.05 (``binomial_band`` of the harness:
  ``scipy.stats.binom.ppf(0.005 / 0.995, reps, 0.05) / reps``).
* **Power.** Two distortions of the predictions: *bias* ``clip(p + 0.05, 0, 1)`` and
  *sharpening* ``sigmoid(1.5 logit(p))`` (over-confident); rejection rate at level 0.05 as a
  function of T in {200, 1000, 3000, 10000} over ``--power-reps`` repetitions.

Type-I tests use ``--type1-resamples`` resamples (default 19: with ``R + 1`` a multiple of 20 the
Monte Carlo test has level exactly 0.05, so a small ``R`` loses nothing there). Power tests of the
vectorised measures (SCDL, binned ECE, cutoff) use ``--resamples`` (default 99, also exact);
smECE re-runs its bandwidth search per replicate (about 10 to 30 ms each), so it has its own,
smaller ``--slow-reps`` / ``--slow-power-reps`` / ``--slow-resamples`` (stated in the JSON and
the results page). The
Lipschitz smCE joins when ``skcal.lipschitz`` is importable (with the slow settings).

Usage (from the repository root)::

    nice python -m benchmarks.calibration_tests --n-jobs 2          # full
    python -m benchmarks.calibration_tests --quick                  # smoke (CI)

Writes ``calibration_tests.json`` (with provenance) and ``calibration_tests.png`` to ``--out``
(``calibration_tests_quick.*`` with ``--quick``, the file ``benchmarks/verify.py`` compares).
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness
from skcal.calibration_test import _run

FAST = ("scdl", "binned_ece", "cutoff")
SLOW = ("smooth_ece",)
LEVEL = 0.05
TYPE1_T = (200, 1000, 10000)
POWER_T = (200, 1000, 3000, 10000)
DISTORTIONS = {
    "bias": lambda p: np.clip(p + 0.05, 0.0, 1.0),
    "sharpen": lambda p: 1.0 / (1.0 + np.exp(-1.5 * np.log(p / (1.0 - p)))),
}


def _measures():
    if importlib.util.find_spec("skcal.lipschitz") is None:
        return FAST, SLOW
    return FAST, (*SLOW, "smooth_calibration_error")


def one_test(measure, T, distortion, seed, n_resamples):
    rng = np.random.default_rng(seed)
    p = np.clip(rng.beta(2, 2, size=T), 1e-6, 1 - 1e-6)
    y = (rng.uniform(size=T) < p).astype(float)
    pred = p if distortion is None else DISTORTIONS[distortion](p)
    t0 = time.perf_counter()
    res = _run(y, pred, None, measure, n_resamples, seed + 1, None)
    return {"pvalue": res.pvalue, "seconds": time.perf_counter() - t0}


def band(reps, level=LEVEL):
    """The binomial 99% band of the rejection rate of ``reps`` tests of size ``level``."""
    return harness.binomial_band(reps, level, 0.99)


def plot(result, path):
    type1_T, power_T = result["type1_T"], result["power_T"]
    fig, axes = harness.subplots(1, 3, figsize=(16, 4.5))
    ax = axes[0]
    measures = list(result["type1"])
    for k, m in enumerate(measures):
        rates = [result["type1"][m][str(T)]["rate"] for T in type1_T]
        ax.plot(np.arange(len(type1_T)) + 0.05 * k, rates, "o-", label=m)
    ax.axhline(LEVEL, color="k", lw=0.8)
    for m in measures:
        lo, hi = result["type1"][m][str(type1_T[0])]["band99"]
        ax.axhspan(lo, hi, color="grey", alpha=0.08)
    ax.set_xticks(range(len(type1_T)), [str(T) for T in type1_T])
    ax.set_xlabel("T")
    ax.set_ylabel("rejection rate at 0.05 (calibrated)")
    ax.set_title("type-I error (grey: binomial 99% bands)")
    ax.legend(fontsize=8)
    for ax, dist in zip(axes[1:], DISTORTIONS, strict=True):
        for m in measures:
            Ts = [T for T in power_T if str(T) in result["power"][dist][m]]
            rates = [result["power"][dist][m][str(T)]["rate"] for T in Ts]
            ax.plot(Ts, rates, "o-", label=m)
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("T")
        ax.set_ylabel("power at 0.05")
        ax.set_title(f"power: {dist}")
        ax.legend(fontsize=8)
    harness.save_figure(fig, path, dpi=110)


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run (few repetitions, small T)", n_jobs="joblib workers", seed=True
    )
    parser.add_argument("--reps", type=int, default=500, help="type-I repetitions, fast measures")
    parser.add_argument("--power-reps", type=int, default=200, help="power repetitions, fast measures")
    parser.add_argument("--resamples", type=int, default=99, help="resamples per power test, fast measures")
    parser.add_argument(
        "--type1-resamples", type=int, default=19, help="resamples per type-I test (all measures)"
    )
    parser.add_argument("--slow-reps", type=int, default=100, help="type-I repetitions, smECE")
    parser.add_argument("--slow-power-reps", type=int, default=40, help="power repetitions, smECE")
    parser.add_argument("--slow-power-max-T", type=int, default=10000, help="largest power T, smECE")
    parser.add_argument("--slow-resamples", type=int, default=100, help="resamples per test, smECE")
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    fast, slow = _measures()
    type1_T, power_T = (TYPE1_T, POWER_T)
    if args.quick:
        args.reps = args.power_reps = 8
        args.slow_reps, args.slow_power_reps, args.resamples, args.slow_resamples = 3, 3, 19, 19
        type1_T, power_T = (200,), (200, 1000)
    jobs = []
    ss = np.random.SeedSequence(args.seed)
    for m in (*fast, *slow):
        reps = args.reps if m in fast else args.slow_reps
        preps = args.power_reps if m in fast else args.slow_power_reps
        R = args.resamples if m in fast else args.slow_resamples
        for T in type1_T:
            for r in range(reps):
                jobs.append(("type1", m, T, None, r, args.type1_resamples))
        for dist in DISTORTIONS:
            for T in power_T:
                if m not in fast and T > args.slow_power_max_T:
                    continue
                for r in range(preps):
                    jobs.append(("power", m, T, dist, r, R))
    seeds = ss.generate_state(len(jobs))
    # seeds per repetition shared across measures, so all measures see the same data sets
    keyed = {}
    for study, _m, T, dist, r, _R in jobs:
        keyed.setdefault((study, T, dist, r), len(keyed))
    out = Parallel(n_jobs=args.n_jobs)(
        delayed(one_test)(m, T, dist, int(seeds[keyed[(study, T, dist, r)]]) * 2, R)
        for study, m, T, dist, r, R in jobs
    )
    config = {
        "quick": args.quick,
        "level": LEVEL,
        "fast_measures": list(fast),
        "slow_measures": list(slow),
        "reps_fast": args.reps,
        "power_reps_fast": args.power_reps,
        "resamples_fast": args.resamples,
        "type1_resamples": args.type1_resamples,
        "reps_slow": args.slow_reps,
        "power_reps_slow": args.slow_power_reps,
        "power_max_T_slow": args.slow_power_max_T,
        "resamples_slow": args.slow_resamples,
        "type1_T": list(type1_T),
        "power_T": list(power_T),
        "distortions": {"bias": "clip(p + 0.05, 0, 1)", "sharpen": "sigmoid(1.5 logit(p))"},
        "truth": "p ~ Beta(2, 2), y ~ Bernoulli(p)",
        "seed": args.seed,
        "n_jobs": args.n_jobs,
    }
    result = {
        "quick": args.quick,
        "level": LEVEL,
        "type1_T": list(type1_T),
        "power_T": list(power_T),
        "type1": {},
        "power": {d: {} for d in DISTORTIONS},
    }
    for (study, m, T, dist, _r, _R), res in zip(jobs, out, strict=True):
        target = result["type1"] if study == "type1" else result["power"][dist]
        cell = target.setdefault(m, {}).setdefault(str(T), {"pvalues": [], "seconds": []})
        cell["pvalues"].append(res["pvalue"])
        cell["seconds"].append(res["seconds"])
    for target in (result["type1"], *result["power"].values()):
        for cells in target.values():
            for cell in cells.values():
                pv = np.array(cell["pvalues"])
                cell["reps"] = int(pv.size)
                cell["rate"] = float(np.mean(pv <= LEVEL))
                cell["band99"] = band(pv.size)
                cell["mean_seconds_per_test"] = float(np.mean(cell["seconds"]))
                del cell["seconds"]
    prov = harness.provenance(__file__, argv, config=config, clock=clock)
    stem = "calibration_tests_quick" if args.quick else "calibration_tests"
    harness.write_json(args.out / f"{stem}.json", result, provenance=prov)
    plot(result, args.out / f"{stem}.png")
    print("type-I error at 0.05 (rate [99% band], reps)")
    for m, cells in result["type1"].items():
        print(
            f"  {m:12s} "
            + "  ".join(
                f"T={T}: {c['rate']:.3f} [{c['band99'][0]:.3f}, {c['band99'][1]:.3f}] n={c['reps']}"
                for T, c in cells.items()
            )
        )
    for dist, target in result["power"].items():
        print(f"power, {dist}")
        for m, cells in target.items():
            print(f"  {m:12s} " + "  ".join(f"T={T}: {c['rate']:.3f}" for T, c in cells.items()))
    print(f"wall {prov['wall_time_s']:.1f} s")
    return result


if __name__ == "__main__":
    main()
