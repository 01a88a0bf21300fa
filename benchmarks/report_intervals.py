"""Coverage of the report's bootstrap intervals on a simulation with a known truth.

Each repeat draws a validation set of ``n`` rows from a known distribution, builds a
:class:`~skcal.report.CalibrationReport` with ``B`` paired-bootstrap replicates, and records for
every metric whether each interval method covers

* the **population value** of the metric (Brier, log loss and accuracy exactly, from the
  expected loss given ``p``; the calibration errors from one sample of ``TRUTH_N`` rows), and
* the **expected estimate at this n**, ``E[value_n]`` (the mean of the values over the repeats),
  which is what an interval for the estimate's sampling variability targets.

Two scenarios: ``miscalibrated`` (``P(y = 1 | p) = p + 0.1 sin(2 pi p)``, every calibration error
well above zero) and ``calibrated`` (``P(y = 1 | p) = p``: the population calibration errors are
zero, on the boundary of their range, where no interval around a biased plug-in can cover them).
The interval methods are those of :mod:`skcal.report._bootstrap`, all computed from the same
replicates. The 99% binomial band around the nominal level is reported with the coverages.

Usage (from the repository root)::

    python -m benchmarks.report_intervals            # 300 repeats
    python -m benchmarks.report_intervals --quick    # CI smoke: 4 repeats, 20 replicates

Writes ``report_intervals.json`` and ``report_intervals.png`` (``report_intervals_quick.*`` with
``--quick``).
"""

from __future__ import annotations

import numpy as np

from benchmarks import _harness as harness
from skcal._catalog import measure
from skcal.report import CalibrationReport
from skcal.report._bootstrap import INTERVAL_METHODS, intervals

METRICS = ("brier", "log_loss", "accuracy", "cutoff", "binned_ece", "smooth_ece")
TRUTH_N = 200_000
LEVEL = 0.9


def f_star(p, scenario):
    if scenario == "calibrated":
        return p
    return np.clip(p + 0.1 * np.sin(2 * np.pi * p), 0.0, 1.0)


def draw(rng, n, scenario):
    p = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < f_star(p, scenario)).astype(int)
    return y, p


def population_values(scenario, metrics, seed):
    """Exact expected losses for the proper scores and accuracy; a large sample for the rest."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, size=TRUTH_N)
    f = f_star(p, scenario)
    out = {}
    exact = {
        "brier": np.mean(f * (1 - p) ** 2 + (1 - f) * p**2),
        "log_loss": np.mean(-(f * np.log(p) + (1 - f) * np.log1p(-p))),
        "accuracy": np.mean(np.where(p >= 0.5, f, 1 - f)),
    }
    y = (rng.uniform(size=TRUTH_N) < f).astype(float)
    for m in metrics:
        if m in exact:
            out[m] = float(exact[m])
        elif scenario == "calibrated":
            out[m] = 0.0
        else:
            out[m] = float(measure(m).function(y, p))
    return out


def run(scenario, *, n, n_bootstrap, repeats, metrics, seed):
    truth = population_values(scenario, metrics, seed + 10_000)
    rng = np.random.default_rng(seed)
    values = np.empty((repeats, len(metrics)))
    bounds = {meth: np.empty((repeats, len(metrics), 2)) for meth in INTERVAL_METHODS}
    for r in range(repeats):
        y, p = draw(rng, n, scenario)
        rep = CalibrationReport.from_predictions(
            y,
            {"model": p},
            metrics=list(metrics),
            n_bootstrap=n_bootstrap,
            random_state=int(rng.integers(2**31 - 1)),
            test_calibration=False,
        )
        for j, m in enumerate(metrics):
            v = rep.table.loc["model", (m, "value")]
            values[r, j] = v
            obj = rep.metrics[j]
            for meth in INTERVAL_METHODS:
                lo, hi = intervals(np.array([v]), rep.bootstrap_values[:, :, j], LEVEL, meth, obj.bounds)
                bounds[meth][r, j] = lo[0], hi[0]
    expected = values.mean(axis=0)
    out = {"population_value": truth, "expected_estimate": dict(zip(metrics, expected.tolist(), strict=True))}
    cov = {}
    for meth in INTERVAL_METHODS:
        b = bounds[meth]
        t = np.array([truth[m] for m in metrics])
        cov[meth] = {
            m: {
                "population": float(np.mean((b[:, j, 0] <= t[j]) & (t[j] <= b[:, j, 1]))),
                "expected_estimate": float(
                    np.mean((b[:, j, 0] <= expected[j]) & (expected[j] <= b[:, j, 1]))
                ),
                "contains_value": float(np.mean((b[:, j, 0] <= values[:, j]) & (values[:, j] <= b[:, j, 1]))),
                "mean_width": float(np.mean(b[:, j, 1] - b[:, j, 0])),
            }
            for j, m in enumerate(metrics)
        }
    out["coverage"] = cov
    return out


def figure(results, band, path):
    scenarios = list(results)
    fig, axes = harness.subplots(
        1, len(scenarios), figsize=(6.5 * len(scenarios), 4.6), layout="constrained", squeeze=False
    )
    axes = axes.ravel()
    for ax, sc in zip(axes, scenarios, strict=True):
        cov = results[sc]["coverage"]
        metrics = list(next(iter(cov.values())))
        x = np.arange(len(metrics))
        w = 0.8 / (2 * len(INTERVAL_METHODS))
        k = 0
        for meth in INTERVAL_METHODS:
            for target, hatch in (("population", ""), ("expected_estimate", "//")):
                vals = [cov[meth][m][target] for m in metrics]
                ax.bar(
                    x - 0.4 + (k + 0.5) * w,
                    vals,
                    w,
                    color=f"C{INTERVAL_METHODS.index(meth)}",
                    hatch=hatch,
                    edgecolor="white",
                    label=f"{meth} vs {'population' if target == 'population' else 'E[estimate]'}",
                )
                k += 1
        ax.axhspan(band[0], band[1], color="0.85", zorder=0, label="99% binomial band around 90%")
        ax.axhline(LEVEL, color="k", lw=1)
        ax.set_xticks(x, metrics, rotation=20)
        ax.set(ylim=(0, 1.02), ylabel="coverage of the 90% interval", title=f"scenario: {sc}")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    harness.save_figure(fig, path, dpi=100, tight_layout=False)


def main(argv=None):
    ap = harness.parser(__file__, __doc__, quick="a few repeats (CI smoke)", seed=True)
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--n", type=int, default=300, help="rows per validation set")
    ap.add_argument("--n-bootstrap", type=int, default=200)
    ap.add_argument("--metrics", default=",".join(METRICS))
    args = harness.parse_args(ap, argv)
    if args.quick:
        args.repeats, args.n_bootstrap = 4, 20
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    clock = harness.Timer()
    results = {
        sc: run(
            sc, n=args.n, n_bootstrap=args.n_bootstrap, repeats=args.repeats, metrics=metrics, seed=args.seed
        )
        for sc in ("miscalibrated", "calibrated")
    }
    sd = np.sqrt(LEVEL * (1 - LEVEL) / args.repeats)
    band = (LEVEL - 2.576 * sd, LEVEL + 2.576 * sd)
    doc = {
        "config": {
            "repeats": args.repeats,
            "n": args.n,
            "n_bootstrap": args.n_bootstrap,
            "confidence_level": LEVEL,
            "metrics": list(metrics),
            "seed": args.seed,
            "truth_n": TRUTH_N,
            "interval_methods": list(INTERVAL_METHODS),
        },
        "binomial_band_99": list(band),
        "results": results,
    }
    out = args.out
    stem = "report_intervals_quick" if args.quick else "report_intervals"
    png = out / f"{stem}.png"
    figure(results, band, png)
    config = {**doc["config"], "quick": args.quick}
    harness.write_result(__file__, argv, out / f"{stem}.json", doc, config=config, clock=clock)
    for sc, res in results.items():
        print(
            f"scenario {sc}: coverage of the 90% interval (population / E[estimate]); "
            f"band {band[0]:.3f}-{band[1]:.3f}"
        )
        for meth in INTERVAL_METHODS:
            cells = ", ".join(
                f"{m} {c['population']:.2f}/{c['expected_estimate']:.2f}"
                for m, c in res["coverage"][meth].items()
            )
            print(f"  {meth:14s} {cells}")
    return {"json": str(out / f"{stem}.json"), "figure": str(png)}


if __name__ == "__main__":
    main()
