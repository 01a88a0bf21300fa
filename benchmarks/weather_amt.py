"""Experiment 6.4: real crowd labels: Weather Sentiment AMT, audit yield of second-order Platt.

Data: the Weather Sentiment AMT data set (300 tweets, about 20 AMT votes each, 5 classes) as
bundled with skcal (:func:`skcal.datasets.load_weather_sentiment_amt`), or, with ``--data DIR``,
the ``responses.csv`` (columns ``task, worker, label``) of another copy in ``DIR``. One-vs-rest on
class 1 ("neutral"). Tasks are ordered by task id in both cases, so both give the same numbers.

Vote cleaning (our choice, the protocol leaves it open): 5 (task, worker) pairs occur twice (one an
exact duplicate row, four repeat the same label at another time). A worker's repeated judgment
of the same tweet is not an independent vote, so only the *first* judgment of each pair is kept
(6025 votes). All distinct workers' votes are kept, so 10 tasks keep 21-25 votes instead of 20:
the snapshot targets ``a / c`` and ``a (a - 1) / (c (c - 1))`` are unbiased for any ``c >= 2``
and skcal takes ragged vote counts as NaN-padded snapshot rows, so truncating to 20 would only
throw information away.

Protocol (experiment 6.4), per repeat: ``p_hat`` = positive vote rate; aleatoric cohort
``|p_hat - 1/2| <= 0.22`` (59 tweets), hidden-subtype cohort ``p_hat <= 0.12`` or ``>= 0.88`` (178);
the larger cohort is subsampled without replacement to the size of the smaller (a fresh
subsample in every repeat). Provisional labels: aleatoric items Bernoulli(1/2); hidden items the
majority label for a random half (``floor(n/2)`` items) and its complement for the rest;
``theta = p_hat`` if the provisional label is 1 else ``1 - p_hat``, and the item's snapshots are its
votes recoded as agreement with the provisional label (so ``a / c = theta``). Scores in XOR mode:
``lo, hi = 1/2 -+ 0.175``, ``b ~ Bern(1/2)``, ``m = hi if b else lo``, ``s = hi if (aleatoric == b) else
lo``, plus ``N(0, 0.06^2)`` on ``m`` and ``N(0, 0.08^2)`` on ``s``, clipped to [0, 1].

Calibrators (``skcal.SecondOrderPlattCalibrator``, ``alpha = 1e-3``, projected moments): 1-D degree 4
on ``m``; 2-D total degree 3 on ``(m, s)``. skcal's second coordinate is ``sigma2`` in [0, 1/4], so the
2-D calibrator is given ``(m, s / 4)``: an affine map of ``s``, so the polynomial space is exactly the
same. The protocol's monomial bases ``[1, m, ..., m^4]`` and total degree 3 span the same function spaces as
skcal's Chebyshev bases of those degrees; only the ridge penalty differs slightly (it is on
Chebyshev coefficients, ``lam = alpha * trace(G) / d``).

Splits per repeat: selection 25%, calibration 35%, evaluation the rest. The calibrators here have
fixed degree and ridge, so the selection split is held out and not used (kept so that the
calibration and evaluation sizes follow the protocol).

Ranking scores (8): raw ``2m(1-m)``, raw ``s``, raw ``1-s``, 1-D first-order ``2 eta1 (1 - eta1)``,
1-D second-order ``2 eta1 - 2 eta2``, 2-D first-order, 2-D second-order, oracle ``2 theta (1 - theta)``.
Audit target ``g(theta) = 2 theta (1 - theta)`` (the chance that two annotators disagree). The
audit yield at budget ``f`` is ``100 * mean g(theta)`` over the top ``ceil(f n_eval)`` evaluation
items (ties in a score broken at random); the audit AUC is the mean yield over the budgets
``f = 0.01, 0.02, ..., 1``. Reported: yields at ``f = 5%``, and the paired AUC lift of 2-D second-order
Platt over every other score (mean, 95% CI of the mean, 2.5-97.5% percentiles over repeats, win
and tie fractions).

Usage (from the repository root)::

    python -m benchmarks.weather_amt            # full protocol (1000 repeats)
    python -m benchmarks.weather_amt --quick    # smoke run

Writes ``weather_amt.json`` and ``weather_amt.png`` (``weather_amt_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import os

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness

POSITIVE_CLASS = 1
SCORES = [
    "raw 2m(1-m)",
    "raw s",
    "raw 1-s",
    "1-D first-order Platt",
    "1-D second-order Platt",
    "2-D first-order Platt",
    "2-D second-order Platt",
    "oracle 2theta(1-theta)",
]
BUDGETS = np.arange(1, 101) / 100.0


def load_votes(data_dir=None):
    """Return per-task ``(c, a)``: number of votes and positive (class 1) votes, and cleaning info.

    ``data_dir=None`` reads the copy bundled with skcal; otherwise ``data_dir/responses.csv``.
    Tasks are sorted by task id.
    """
    if data_dir is None:
        from skcal.datasets import load_weather_sentiment_amt

        amt = load_weather_sentiment_amt()
        order = np.argsort(amt.task_ids, kind="stable")
        counts = amt.data[order]
        c = counts.sum(axis=1).astype(int)
        a = counts[:, POSITIVE_CLASS].astype(int)
        info = {
            "source": "skcal.datasets.load_weather_sentiment_amt (bundled)",
            "judgments_raw": int(amt.n_judgments_raw),
            "judgments_kept": int(c.sum()),
            "tasks": len(c),
            "votes_per_task": {
                int(k): int(v) for k, v in zip(*np.unique(c, return_counts=True), strict=True)
            },
        }
        return c, a, info
    import pandas as pd

    path = os.path.join(data_dir, "responses.csv")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"Weather Sentiment AMT data not found: {path!r} does not exist. Pass --data pointing to "
            "the directory holding responses.csv (columns task, worker, label), or leave --data out "
            "to use the copy bundled with skcal."
        )
    r = pd.read_csv(path)
    if not {"task", "worker", "label"} <= set(r.columns):
        raise ValueError(f"{path} must have columns task, worker, label; got {list(r.columns)}.")
    n_raw = len(r)
    r = r.drop_duplicates(["task", "worker"], keep="first")
    g = r.groupby("task", sort=True)["label"]
    c = g.size().to_numpy().astype(int)
    a = g.apply(lambda x: int((x == POSITIVE_CLASS).sum())).to_numpy().astype(int)
    info = {
        "source": harness.repo_relative(path),
        "judgments_raw": n_raw,
        "judgments_kept": len(r),
        "tasks": len(c),
        "votes_per_task": {int(k): int(v) for k, v in zip(*np.unique(c, return_counts=True), strict=True)},
    }
    return c, a, info


def cohorts(c, a):
    p = a / c
    alea = np.flatnonzero(np.abs(p - 0.5) <= 0.22)
    hidden = np.flatnonzero((p <= 0.12) | (p >= 0.88))
    return alea, hidden


def snapshots_from_counts(agree, c):
    """NaN-padded snapshot rows: ``agree`` ones then ``c - agree`` zeros."""
    from skcal.votes import VoteCounts

    return VoteCounts(agree, c).to_snapshots()


def audit_yields(score, g, rng):
    """Yield curve over ``BUDGETS``: 100 * mean g over the top ceil(f n) items (random tie break)."""
    n = len(g)
    order = np.lexsort((rng.random(n), -score))
    csum = np.cumsum(g[order])
    k = np.ceil(BUDGETS * n - 1e-9).astype(int)
    k = np.clip(k, 1, n)
    return 100.0 * csum[k - 1] / k


def one_repeat(seed, c, a, alea, hidden):
    from skcal import SecondOrderPlattCalibrator
    from skcal.votes import VoteCounts

    rng = np.random.default_rng(seed)
    n_each = min(len(alea), len(hidden))
    A = rng.choice(alea, n_each, replace=False)
    H = rng.choice(hidden, n_each, replace=False)
    items = np.concatenate([A, H])
    is_alea = np.concatenate([np.ones(n_each, bool), np.zeros(n_each, bool)])
    cc, aa = c[items], a[items]
    p_hat = aa / cc
    # provisional labels
    z = np.empty(len(items), dtype=bool)
    z[:n_each] = rng.random(n_each) < 0.5
    majority = p_hat[n_each:] >= 0.5
    flip = np.zeros(n_each, bool)
    flip[rng.permutation(n_each)[n_each // 2 :]] = True
    z[n_each:] = np.where(flip, ~majority, majority)
    theta = np.where(z, p_hat, 1.0 - p_hat)
    agree = np.where(z, aa, cc - aa)
    Y = VoteCounts(agree, cc)  # counts as labels: no padded snapshot array
    # XOR-mode scores
    lo, hi = 0.5 - 0.175, 0.5 + 0.175
    b = rng.random(len(items)) < 0.5
    m = np.where(b, hi, lo) + rng.normal(0, 0.06, len(items))
    s = np.where(is_alea == b, hi, lo) + rng.normal(0, 0.08, len(items))
    m, s = np.clip(m, 0, 1), np.clip(s, 0, 1)
    # splits
    perm = rng.permutation(len(items))
    n_sel = int(round(0.25 * len(items)))
    n_cal = int(round(0.35 * len(items)))
    cal, ev = perm[n_sel : n_sel + n_cal], perm[n_sel + n_cal :]

    S1 = m[:, None]
    S2 = np.column_stack([m, s / 4.0])
    rank = {
        "raw 2m(1-m)": 2 * m[ev] * (1 - m[ev]),
        "raw s": s[ev],
        "raw 1-s": 1 - s[ev],
        "oracle 2theta(1-theta)": 2 * theta[ev] * (1 - theta[ev]),
    }
    for dim, S, kw in [("1-D", S1, {"degree": 4}), ("2-D", S2, {"degree": 3, "basis": "total"})]:
        for order, name in [(1, "first-order"), (2, "second-order")]:
            cal_ = SecondOrderPlattCalibrator(alpha=1e-3, order=order, **kw).fit(S[cal], Y[cal])
            mom = cal_.predict_moments(S[ev])
            rank[f"{dim} {name} Platt"] = 2 * mom[:, 0] - 2 * mom[:, 1]
    g = 2 * theta[ev] * (1 - theta[ev])
    curves = np.stack([audit_yields(rank[k], g, rng) for k in SCORES])
    return curves, len(cal), len(ev)


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke run", n_jobs="joblib workers over repeats", seed=True
    )
    parser.add_argument(
        "--data",
        default=None,
        help="directory holding responses.csv of another WS-AMT copy (default: the bundled data)",
    )
    parser.add_argument("--repeats", type=int, default=None, help="override the number of repeats")
    args = harness.parse_args(parser, argv)
    repeats = args.repeats or (20 if args.quick else 1000)
    tag = "weather_amt_quick" if args.quick else "weather_amt"
    clock = harness.Timer()
    c, a, info = load_votes(args.data)
    alea, hidden = cohorts(c, a)

    with harness.Timer() as timer:
        out = Parallel(n_jobs=args.n_jobs)(
            delayed(one_repeat)(args.seed * 100_000 + r, c, a, alea, hidden) for r in range(repeats)
        )
    curves = np.stack([o[0] for o in out])  # (repeats, scores, budgets)
    auc = curves.mean(axis=2)
    j5 = int(np.argmin(np.abs(BUDGETS - 0.05)))
    ref = SCORES.index("2-D second-order Platt")
    yields5 = {
        k: {"mean": curves[:, i, j5].mean(), "sem": curves[:, i, j5].std(ddof=1) / np.sqrt(repeats)}
        for i, k in enumerate(SCORES)
    }
    lifts = {}
    for i, k in enumerate(SCORES):
        if i == ref:
            continue
        d = auc[:, ref] - auc[:, i]
        se = d.std(ddof=1) / np.sqrt(repeats)
        lifts[k] = {
            "mean": d.mean(),
            "ci95_of_mean": [d.mean() - 1.96 * se, d.mean() + 1.96 * se],
            "percentiles_2.5_97.5": np.percentile(d, [2.5, 97.5]),
            "win_fraction": float(np.mean(d > 0)),
            "tie_fraction": float(np.mean(d == 0)),
        }
    payload = {
        "experiment": "SPEC 6.4 Weather Sentiment AMT (XOR mode)",
        "repeats": repeats,
        "data": info,
        "cohort_sizes": {
            "aleatoric": len(alea),
            "hidden": len(hidden),
            "balanced_each": min(len(alea), len(hidden)),
        },
        "n_cal": out[0][1],
        "n_eval": out[0][2],
        "budgets": BUDGETS,
        "scores": SCORES,
        "mean_yield_curve": curves.mean(axis=0),
        "mean_auc": {k: auc[:, i].mean() for i, k in enumerate(SCORES)},
        "yield_at_5pct": yields5,
        "auc_lift_of_2d_second_order": lifts,
        "seconds": timer.seconds,
        "n_jobs": args.n_jobs,
    }
    config = harness.args_config(args, repeats=repeats)
    harness.write_result(__file__, argv, args.out / f"{tag}.json", payload, config=config, clock=clock)
    plot(curves, repeats, args.out / f"{tag}.png")
    print(f"{tag}: {repeats} repeats in {timer.seconds:.1f}s; n_cal={out[0][1]} n_eval={out[0][2]}")
    for k in SCORES:
        print(f"  {k:26s} yield@5% {yields5[k]['mean']:6.2f}  AUC {payload['mean_auc'][k]:6.2f}")
    return payload


def plot(curves, repeats, path):
    mean = curves.mean(axis=0)
    sem = curves.std(axis=0, ddof=1) / np.sqrt(repeats)
    fig, ax = harness.subplots(figsize=(7.5, 4.8))
    styles = ["--", "--", "--", ":", "-.", ":", "-", "-"]
    for i, name in enumerate(SCORES):
        color = "k" if name.startswith("oracle") else None
        lo, hi = mean[i] - 1.96 * sem[i], mean[i] + 1.96 * sem[i]
        harness.plot_band(ax, 100 * BUDGETS, mean[i], lo, hi, styles[i], label=name, color=color, lw=1.5)
    ax.set_xscale("log")
    ax.set_xlabel("audit budget f (% of evaluation items)")
    ax.set_ylabel("audit yield: 100 x mean 2theta(1-theta) of audited")
    ax.set_title(f"Weather Sentiment AMT, XOR scores (experiment 6.4), {repeats} repeats")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


if __name__ == "__main__":
    main()
