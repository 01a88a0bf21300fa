"""Experiment 6.7: real repeated labels: an 11-model CIFAR-10 ensemble against CIFAR-10H human votes.

Data (read by path from ``--data``, default ``<repo>/../shared/data``; never copied):

* ``cifar10h/cifar10h-counts.npy``: for each of the 10,000 CIFAR-10 test images, how many of its
  47-63 human annotators chose each class (Peterson, Battleday, Griffiths and Russakovsky, "Human
  uncertainty makes classification more robust", ICCV 2019; CC BY-NC-SA 4.0).
* ``multiclass_logits/*/cifar10_*.npz``: the 11 CIFAR-10 models of that folder (8 df-posthoc
  logits files, 2 netcal and 1 verified-calibration probability files), all in the standard
  test order (checked: identical ``y_test``). Logits are turned into probabilities by softmax.

Ensemble: per image and class, ``m`` = mean of the 11 models' probabilities and
``sigma2`` = their unbiased variance (ddof = 1), clipped to the feasible region
``[0, m (1 - m)]``. Human votes are the repeated labels: for a task with ``a`` positive votes of
``c``, ``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))``; the snapshots are the NaN-padded
``(n, max c)`` array of ``a`` ones and ``c - a`` zeros, built with numpy in one step.

Tasks: each class one-vs-rest (10 tasks) and the ensemble's top class ("top": per image, the
class of largest ``m``, with that class's ``m``, ``sigma2`` and votes).

Per repeat (``--repeats``, joblib over repeats with ``--n-jobs``): a random half of the images
calibrates, the other half evaluates. Scores are perturbed by ``skcal.SechPerturber(bandwidth=h)``,
``h = 1/64`` (the perturbed ensemble is the deployed raw predictor). Calibrators
(``skcal.SecondOrderPlattCalibrator``, ``alpha = 1e-6``): 1-D on ``m'`` alone, degree 8; 2-D on
``(m', sigma2')``, tensor degree 6 (49 features); ``order=1`` (first-order Platt) and ``order=2``
(second-order Platt). CE2 of each of the five predictors (raw perturbed ensemble and the four
recalibrated ones, whose outputs ``(eta1, max(0, eta2 - eta1^2))`` are measured as they are) is
estimated on the evaluation half with ``skcal.ce2.ce2_details`` (polynomial estimator,
``degree="auto"`` at ``h``, ``alpha = 1e-6``), which also gives the two terms.

Disagreement audit, on the evaluation half: the realised disagreement of an image is
``g = 2 (t1 - t2)``, the unbiased estimate from its votes of the probability that two annotators
disagree about the task. Rankers: raw ``2 m (1 - m)`` and raw ``sigma2`` (the unperturbed
ensemble), and ``2 eta1 - 2 eta2`` of each calibrator at the perturbed scores (first-order:
``2 eta1 (1 - eta1)``). At budgets 1%, 5% and 10% of the evaluation images, the captured fraction
is the sum of ``g`` over a ranker's top ``ceil(f n)`` images divided by the same sum for the oracle
ordering (by ``g`` itself); ties are broken at random. Reported: mean and 2.5-97.5 percentiles
over repeats.

Outputs in ``--out`` (default benchmarks/results/): ``cifar10h.json`` (provenance: git commit,
command line, configuration, CPU count, wall time, date), ``cifar10h_ce2.png``,
``cifar10h_audit.png`` and ``cifar10h_display.png`` (``skcal.SecondOrderDisplay`` of the top-class
2-D second-order calibrator of the first repeat); ``--quick`` writes ``cifar10h_quick.*``.

Usage (from the repository root)::

    nice python -m benchmarks.cifar10h --repeats 20 --n-jobs 2   # full mode
    python -m benchmarks.cifar10h --quick                        # smoke run (2 tasks, 2 repeats)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness

DEFAULT_DATA = harness.REPO_ROOT.parent / "shared" / "data"
CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
TASKS = ("top", *CLASSES)
QUICK_TASKS = ("top", "cat")
PREDICTORS = ("raw", "1-D first-order", "1-D second-order", "2-D first-order", "2-D second-order")
RANKERS = ("raw 2m(1-m)", "raw sigma2", *PREDICTORS[1:])
BUDGETS = (0.01, 0.05, 0.10)
BANDWIDTH = 2**-6
ALPHA = 1e-6
DEGREE_1D = 8
DEGREE_2D = 6
N_MODELS = 11


class MissingData(FileNotFoundError):
    """A data folder of ``--data`` is absent (the message names it)."""


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------
def data_folders(data):
    """The two folders this benchmark reads, or :class:`MissingData` naming the absent one."""
    data = Path(data)
    folders = {"cifar10h": data / "cifar10h", "multiclass_logits": data / "multiclass_logits"}
    for name, folder in folders.items():
        if not folder.is_dir():
            raise MissingData(f"the data folder {name!r} is absent under --data ({folder.name} not found)")
    return folders


def load(data):
    """Human counts ``(n, 10)``, member probabilities ``(11, n, 10)``, labels and model names."""
    from scipy.special import softmax

    folders = data_folders(data)
    counts = np.load(folders["cifar10h"] / "cifar10h-counts.npy")
    files = sorted(folders["multiclass_logits"].glob("*/cifar10_*.npz"))
    if len(files) != N_MODELS:
        raise ValueError(
            f"expected {N_MODELS} CIFAR-10 model files under multiclass_logits; found {len(files)}"
        )
    probs, names, y_test = [], [], None
    for f in files:
        with np.load(f) as z:
            if "logits_test" in z:
                P = softmax(z["logits_test"].astype(np.float64), axis=1)
            else:
                P = z["probs_test"].astype(np.float64)
                P = P / P.sum(axis=1, keepdims=True)  # float32 rows sum to 1 within ~1e-7
            y = z["y_test"]
        if y_test is None:
            y_test = y
        elif not np.array_equal(y, y_test):
            raise ValueError(f"{f.name}: y_test differs from the other models (not in the standard order)")
        probs.append(P)
        names.append(f"{f.parent.name}/{f.stem}")
    P = np.stack(probs)
    if counts.shape != P.shape[1:]:
        raise ValueError(f"counts have shape {counts.shape}; the model outputs {P.shape[1:]}")
    return counts.astype(np.int64), P, y_test, names


def ensemble_moments(P):
    """Moments: mean and unbiased variance across members, variance clipped to ``[0, m (1 - m)]``."""
    m = P.mean(axis=0)
    s2 = np.clip(P.var(axis=0, ddof=1), 0.0, m * (1.0 - m))
    return np.clip(m, 0.0, 1.0), s2


def task_arrays(m, s2, counts, task):
    """``(m, sigma2, a, c)`` of one binary task (a class one-vs-rest, or the ensemble's top class)."""
    c = counts.sum(axis=1)
    col = np.argmax(m, axis=1) if task == "top" else np.full(m.shape[0], CLASSES.index(task))
    rows = np.arange(m.shape[0])
    return m[rows, col], s2[rows, col], counts[rows, col], c


def snapshots_from_counts(a, c):
    """NaN-padded snapshot rows: ``a`` ones, then ``c - a`` zeros, then NaN up to ``max c``."""
    j = np.arange(int(c.max()))[None, :]
    return np.where(j < c[:, None], (j < a[:, None]).astype(np.float64), np.nan)


# ----------------------------------------------------------------------------------------------
# one repeat
# ----------------------------------------------------------------------------------------------
def captured_fractions(score, g, rng):
    """Sum of ``g`` over the top ``ceil(f n)`` by ``score`` (random tie break) over the oracle's."""
    n = g.shape[0]
    k = np.clip(np.ceil(np.asarray(BUDGETS) * n - 1e-9).astype(int), 1, n)
    by_score = np.cumsum(g[np.lexsort((rng.random(n), -score))])[k - 1]
    oracle = np.cumsum(np.sort(g)[::-1])[k - 1]
    return by_score / oracle


def fit_calibrators(Sp, Y, cal):
    from skcal import SecondOrderPlattCalibrator

    out = {}
    variants = (("1-D", slice(0, 1), {"degree": DEGREE_1D}), ("2-D", slice(0, 2), {"degree": DEGREE_2D}))
    for dim, cols, kw in variants:
        for order, label in ((1, "first-order"), (2, "second-order")):
            est = SecondOrderPlattCalibrator(alpha=ALPHA, basis="tensor", order=order, **kw)
            out[f"{dim} {label}"] = (est.fit(Sp[cal, cols], Y[cal]), cols)
    return out


def one_task(seed, task, m, s2, a, c, cal, ev):
    from skcal import SechPerturber
    from skcal.ce2 import ce2_details

    rng = np.random.default_rng(seed)
    S = np.column_stack([m, s2])
    Sp = SechPerturber(bandwidth=BANDWIDTH, random_state=seed).fit_transform(S)
    Y = snapshots_from_counts(a, c)
    cals = fit_calibrators(Sp, Y, cal)
    outputs = {"raw": Sp[ev]}
    rank = {"raw 2m(1-m)": 2 * m[ev] * (1 - m[ev]), "raw sigma2": s2[ev]}
    for name, (est, cols) in cals.items():
        outputs[name] = est.transform(Sp[ev, cols])
        mom = est.predict_moments(Sp[ev, cols])
        rank[name] = 2 * mom[:, 0] - 2 * mom[:, 1]
    ce2 = {}
    for name in PREDICTORS:
        res = ce2_details(Y[ev], outputs[name], bandwidth=BANDWIDTH, alpha=ALPHA)
        ce2[name] = {"ce2": res.ce2, "term1": res.term1, "term2": res.term2, "degree": res.degree}
    t1 = a[ev] / c[ev]
    t2 = a[ev] * (a[ev] - 1) / (c[ev] * (c[ev] - 1))
    g = 2 * (t1 - t2)
    audit = {name: captured_fractions(rank[name], g, rng).tolist() for name in RANKERS}
    return {"ce2": ce2, "audit": audit, "mean_g_eval": float(g.mean())}


def one_repeat(seed, tasks, arrays, n_cal):
    rng = np.random.default_rng(seed)
    n = next(iter(arrays.values()))[0].shape[0]
    perm = rng.permutation(n)
    cal, ev = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
    return {task: one_task(seed, task, *arrays[task], cal, ev) for task in tasks}


# ----------------------------------------------------------------------------------------------
# summaries and figures
# ----------------------------------------------------------------------------------------------
def _summ(values):
    v = np.asarray(values, dtype=np.float64)
    lo, hi = np.percentile(v, [2.5, 97.5])
    return {"mean": float(v.mean()), "p2.5": float(lo), "p97.5": float(hi), "std": float(v.std(ddof=1))}


def summarise(runs, tasks):
    terms = ("ce2", "term1", "term2")
    ce2 = {
        t: {p: {k: _summ([r[t]["ce2"][p][k] for r in runs]) for k in terms} for p in PREDICTORS}
        for t in tasks
    }
    labels = [f"{int(100 * b)}%" for b in BUDGETS]
    audit = {
        t: {
            name: {lab: _summ([r[t]["audit"][name][j] for r in runs]) for j, lab in enumerate(labels)}
            for name in RANKERS
        }
        for t in tasks
    }
    # the ten one-vs-rest classes pooled: mean over classes within a repeat, then over repeats
    classes = [t for t in tasks if t != "top"]
    pooled = {}
    if classes:
        pooled["ce2"] = {
            p: _summ([np.mean([r[t]["ce2"][p]["ce2"] for t in classes]) for r in runs]) for p in PREDICTORS
        }
        pooled["audit"] = {
            name: {
                f"{int(100 * b)}%": _summ([np.mean([r[t]["audit"][name][j] for t in classes]) for r in runs])
                for j, b in enumerate(BUDGETS)
            }
            for name in RANKERS
        }
    return ce2, audit, pooled


def plot_ce2(ce2, tasks, path):
    fig, ax = harness.subplots(figsize=(max(6.0, 1.0 * len(tasks) + 2), 4.2))
    width = 0.8 / len(PREDICTORS)
    x = np.arange(len(tasks))
    for j, p in enumerate(PREDICTORS):
        mean = np.array([ce2[t][p]["ce2"]["mean"] for t in tasks])
        lo = np.array([ce2[t][p]["ce2"]["p2.5"] for t in tasks])
        hi = np.array([ce2[t][p]["ce2"]["p97.5"] for t in tasks])
        ax.bar(x + (j - 2) * width, mean, width, yerr=[mean - lo, hi - mean], capsize=2, label=p)
    ax.set_xticks(x, tasks, rotation=30, ha="right")
    ax.set_ylabel("CE2 on the evaluation half")
    ax.set_title("CIFAR-10H: CE2 of the 11-model ensemble, raw and recalibrated (2.5-97.5% over repeats)")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


def plot_audit(audit, pooled, path):
    panels = [("top class", audit["top"])]
    if pooled:
        panels.append(("10 classes one-vs-rest (mean)", pooled["audit"]))
    fig, axes = harness.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.2), squeeze=False)
    xb = 100 * np.asarray(BUDGETS)
    for ax, (title, table) in zip(axes.ravel(), panels, strict=True):
        for name in RANKERS:
            mean = np.array([table[name][f"{int(b)}%"]["mean"] for b in xb])
            lo = np.array([table[name][f"{int(b)}%"]["p2.5"] for b in xb])
            hi = np.array([table[name][f"{int(b)}%"]["p97.5"] for b in xb])
            style = "--" if name.startswith("raw") else "-"
            harness.plot_band(ax, xb, mean, lo, hi, style, marker="o", label=name, alpha=0.15)
        ax.set_xlabel("audit budget (% of evaluation images)")
        ax.set_ylabel("realised disagreement captured / oracle")
        ax.set_ylim(0, 1)
        ax.set_title(f"CIFAR-10H disagreement audit: {title}", fontsize="medium")
        ax.legend(fontsize=7)
    harness.save_figure(fig, path)


def plot_display(seed, arrays, n_cal, path):
    import matplotlib

    matplotlib.use("Agg")  # the display draws through pyplot: off-screen

    from skcal import SechPerturber, SecondOrderDisplay

    m, s2, a, c = arrays["top"]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(m.shape[0])
    cal, ev = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
    Sp = SechPerturber(bandwidth=BANDWIDTH, random_state=seed).fit_transform(np.column_stack([m, s2]))
    est, _ = fit_calibrators(Sp, snapshots_from_counts(a, c), cal)["2-D second-order"]
    disp = SecondOrderDisplay.from_estimator(est, Sp[ev], name="top class, 2-D 2nd-order Platt")
    harness.save_figure(disp.figure_, path, dpi=110, tight_layout=False)
    return {"fraction_sigma2_lowered": float(np.mean(disp.recalibrated_scores[:, 1] < disp.raw_scores[:, 1]))}


# ----------------------------------------------------------------------------------------------
def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = harness.parser(
        __file__,
        __doc__,
        quick="smoke run: 2 tasks (top, cat), 2 repeats",
        n_jobs="joblib workers over repeats",
        seed=True,
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder holding cifar10h/ and multiclass_logits/"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="random calibration/evaluation splits (default 20)"
    )
    args = harness.parse_args(parser, argv)
    repeats = args.repeats or (2 if args.quick else 20)
    tasks = QUICK_TASKS if args.quick else TASKS
    tag = "cifar10h_quick" if args.quick else "cifar10h"

    clock = harness.Timer()
    counts, P, y_test, names = load(args.data)
    m, s2 = ensemble_moments(P)
    arrays = {t: task_arrays(m, s2, counts, t) for t in tasks}
    n = counts.shape[0]
    n_cal = n // 2
    runs = Parallel(n_jobs=args.n_jobs)(
        delayed(one_repeat)(args.seed * 1000 + r, tasks, arrays, n_cal) for r in range(repeats)
    )
    ce2, audit, pooled = summarise(runs, tasks)
    display_info = plot_display(args.seed * 1000, arrays, n_cal, args.out / f"{tag}_display.png")
    plot_ce2(ce2, tasks, args.out / f"{tag}_ce2.png")
    plot_audit(audit, pooled, args.out / f"{tag}_audit.png")

    top = np.argmax(m, axis=1)
    majority = np.argmax(counts, axis=1)
    mt, st, at, ct = arrays["top"] if "top" in arrays else task_arrays(m, s2, counts, "top")
    g_top = 2 * (at / ct - at * (at - 1) / (ct * (ct - 1)))
    data_summary = {
        "n_images": n,
        "votes_per_image": [int(counts.sum(axis=1).min()), int(counts.sum(axis=1).max())],
        "models": names,
        "ensemble_accuracy_vs_y_test": float(np.mean(top == y_test)),
        "ensemble_top_equals_human_majority": float(np.mean(top == majority)),
        "human_majority_equals_y_test": float(np.mean(majority == y_test)),
        "member_accuracies": [float(np.mean(P[k].argmax(axis=1) == y_test)) for k in range(P.shape[0])],
        "top_task": {
            "mean_m": float(mt.mean()),
            "mean_t1": float((at / ct).mean()),
            "sigma2_quantiles_10_50_90": np.quantile(st, [0.1, 0.5, 0.9]).tolist(),
            "mean_realised_disagreement_g": float(g_top.mean()),
            "pearson_sigma2_g": float(np.corrcoef(st, g_top)[0, 1]),
            "pearson_2m(1-m)_g": float(np.corrcoef(2 * mt * (1 - mt), g_top)[0, 1]),
        },
    }
    result = {
        "experiment": "SPEC 6.7 CIFAR-10H: 11-model CIFAR-10 ensemble vs human label counts",
        "config": {
            "data": harness.repo_relative(args.data),
            "quick": args.quick,
            "repeats": repeats,
            "n_jobs": args.n_jobs,
            "seed": args.seed,
            "tasks": list(tasks),
            "n_cal": n_cal,
            "n_eval": n - n_cal,
            "bandwidth": BANDWIDTH,
            "alpha": ALPHA,
            "degree_1d": DEGREE_1D,
            "degree_2d_tensor": DEGREE_2D,
            "ce2_estimator": "skcal.ce2.ce2_details, polynomial, degree='auto', alpha=1e-6, "
            "on the evaluation half",
            "budgets": list(BUDGETS),
            "intervals": "2.5-97.5 percentiles over repeats (random calibration/evaluation splits)",
            "data_citation": "Peterson, Battleday, Griffiths and Russakovsky, Human uncertainty makes "
            "classification more robust, ICCV 2019 (CIFAR-10H, CC BY-NC-SA 4.0)",
        },
        "data": data_summary,
        "ce2": ce2,
        "audit_captured_fraction": audit,
        "ten_classes_pooled": pooled,
        "display": display_info,
    }
    prov = harness.provenance(__file__, argv, config=result["config"], clock=clock)
    harness.write_json(args.out / f"{tag}.json", result, provenance=prov)
    print(f"{tag}: {repeats} repeats, {len(tasks)} tasks in {prov['wall_time_s']:.1f}s")
    for t in tasks:
        row = "  ".join(f"{p} {ce2[t][p]['ce2']['mean']:.4f}" for p in PREDICTORS)
        print(f"  CE2 {t:10s} {row}")
    for t in tasks:
        row = "  ".join(f"{name} {audit[t][name]['5%']['mean']:.3f}" for name in RANKERS)
        print(f"  audit@5% {t:10s} {row}")
    return result


if __name__ == "__main__":
    main()
