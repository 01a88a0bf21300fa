"""Exact 0/1 outputs of first-order Platt scaling (order=1): the projected polynomial against ``transform``.

On the experiment 6.4 Weather Sentiment AMT protocol (bundled data; XOR-mode scores as in
``benchmarks/weather_amt.py``; 59 + 59 balanced items, 41 for calibration and 77 for
evaluation per repeat, here without the unused selection split), the 2-D first-order
calibrator (total degree 3, ``alpha = 1e-3``) is fitted on vote counts for ``--repeats`` repeats.
"Projected" is the projected polynomial ``eta1`` (``predict_moments``, clipped to ``[0, 1]``
only), "transform" is ``transform``, which keeps a margin from 0 and 1 (clipped to
``[1 / (n + 2), 1 - 1 / (n + 2)]``). Reported: exact 0/1 outputs of each, and the repeats whose
mean per-vote log loss against the evaluation items' votes is infinite.

Usage (from the repository root)::

    nice python -m benchmarks.first_order_margin_audit            # 200 repeats
    python -m benchmarks.first_order_margin_audit --quick         # smoke run: 20 repeats

Writes ``first_order_margin_audit.json`` (with provenance) to ``--out``.
"""

import numpy as np
from scipy.special import xlogy

from benchmarks import _harness as harness
from benchmarks.weather_amt import cohorts, load_votes
from skcal import SecondOrderPlattCalibrator
from skcal.votes import VoteCounts


def audit(repeats):
    """Counts of exact 0/1 outputs and of infinite mean log losses over ``repeats`` repeats."""
    c, a, _ = load_votes()
    alea, hidden = cohorts(c, a)
    n_out = n01_old = n01_new = 0
    ll_old, ll_new = [], []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        n_each = min(len(alea), len(hidden))
        items = np.concatenate(
            [rng.choice(alea, n_each, replace=False), rng.choice(hidden, n_each, replace=False)]
        )
        is_alea = np.arange(len(items)) < n_each
        cc, aa = c[items], a[items]
        b = rng.random(len(items)) < 0.5
        m = np.clip(np.where(b, 0.675, 0.325) + rng.normal(0, 0.06, len(items)), 0, 1)
        s = np.clip(np.where(is_alea == b, 0.675, 0.325) + rng.normal(0, 0.08, len(items)), 0, 1)
        perm = rng.permutation(len(items))
        cal, ev = perm[:41], perm[41:]
        V = VoteCounts(aa, cc)
        S = np.column_stack([m, s / 4])
        platt = SecondOrderPlattCalibrator(alpha=1e-3, order=1, degree=3, basis="total").fit(S[cal], V[cal])
        old, new = platt.predict_moments(S[ev])[:, 0], platt.transform(S[ev])[:, 0]
        n_out += len(ev)
        n01_old += int(((old == 0) | (old == 1)).sum())
        n01_new += int(((new == 0) | (new == 1)).sum())
        t1 = aa[ev] / cc[ev]
        with np.errstate(divide="ignore"):
            ll_old.append(float(np.mean(-(xlogy(t1, old) + xlogy(1 - t1, 1 - old)))))
            ll_new.append(float(np.mean(-(xlogy(t1, new) + xlogy(1 - t1, 1 - new)))))
    finite_new = [v for v in ll_new if np.isfinite(v)]
    return {
        "repeats": repeats,
        "outputs": n_out,
        "exact_0_or_1": {"projected": n01_old, "transform": n01_new},
        "repeats_with_infinite_log_loss": {
            "projected": int(np.sum(~np.isfinite(ll_old))),
            "transform": int(np.sum(~np.isfinite(ll_new))),
        },
        "mean_log_loss_transform_over_finite_repeats": float(np.mean(finite_new)) if finite_new else None,
    }


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="smoke run: 20 repeats")
    parser.add_argument("--repeats", type=int, default=200, help="calibration/evaluation splits")
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    repeats = 20 if args.quick else args.repeats
    result = audit(repeats)
    config = harness.args_config(args, repeats_used=repeats)
    path = args.out / "first_order_margin_audit.json"
    harness.write_result(__file__, argv, path, result, config=config, clock=clock)
    n01, inf = result["exact_0_or_1"], result["repeats_with_infinite_log_loss"]
    mean = result["mean_log_loss_transform_over_finite_repeats"]
    print(
        f"outputs {result['outputs']}: exact 0/1 projected {n01['projected']}, transform {n01['transform']}"
    )
    print(
        f"repeats with infinite per-vote log loss: projected {inf['projected']}/{repeats}, "
        f"transform {inf['transform']}/{repeats}; mean of transform {mean:.3f}"
    )
    return result


if __name__ == "__main__":
    main()
