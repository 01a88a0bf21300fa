"""Experiment 6.7: real repeated labels: an 11-model CIFAR-10 ensemble against CIFAR-10H human votes.

Data (read by path from ``--data``, default ``<repo>/../shared/data``; never copied):

* ``cifar10h/cifar10h-counts.npy``: for each of the 10,000 CIFAR-10 test images, how many of its
  47-63 human annotators chose each class (Peterson, Battleday, Griffiths and Russakovsky, "Human
  uncertainty makes classification more robust", ICCV 2019; CC BY-NC-SA 4.0).
* ``multiclass_logits/*/cifar10_*.npz``: the 11 CIFAR-10 models of that folder (8 df-posthoc
  logits files, 2 netcal and 1 verified-calibration probability files), all in the standard
  test order (checked: identical ``y_test``). Logits are turned into probabilities by softmax.

Everything after loading goes through skcal's public API, as a user would write it:
``skcal.ensemble_moments`` (per image and class the mean and unbiased variance across the 11
models, clipped to ``[0, m (1 - m)]``; the ``(n, 20)`` layout), ``VoteCounts(counts=C)`` (the
human votes per class; targets ``t1 = a / c``, ``t2 = a (a - 1) / (c (c - 1))`` per class),
``SecondOrderCalibratedClassifier("precomputed", ...)`` fitted on a random half and applied to
the other half, and ``ce2_details(..., multiclass="classwise" | "top_label")``.

Per repeat (``--repeats``, joblib over repeats with ``--n-jobs``): a random half of the images
calibrates (5,000), the other half evaluates. The raw predictor is the ensemble perturbed by
``SechPerturber(bandwidth=1/64)`` class by class. Four calibrators, all with ``alpha = 1e-6``:
1-D (``basis="1d"``, degree 8) and 2-D (tensor degree 6), each ``order=1`` (first-order Platt)
and ``order=2`` (second-order Platt), each fitted twice: classwise (one calibrator per class, the
ten one-vs-rest tasks) and top-label (``multiclass="top_label"``). Reported, on the evaluation
half, with ``ce2_details`` (polynomial estimator, ``degree="auto"``, ``alpha = 1e-6``):

* the one-vs-rest CE2 of every class, for the raw ensemble and the classwise calibrators'
  outputs before the projection onto the simplex (``predict_second_order(project=False)``);
* the classwise CE2 (mean over classes) of those and of the outputs projected onto the simplex by
  each rule of ``skcal.platt.project_to_simplex`` (``"logit_shift"``, the classifier's default,
  and ``"renormalize"``), with the log loss of the human votes under the projected means (mean
  over votes of ``-log q_vote``) and the mean one-vs-rest binary log loss (defined for the
  unprojected outputs too);
* the top-label CE2 (``multiclass="top_label"``: each row's class of largest ``m``) of the raw
  ensemble, of the top-label calibrators and of the projected classwise calibrators;
* the disagreement audit: the realised disagreement of an image and task is ``g = 2 (t1 - t2)``,
  the unbiased estimate from its votes of the chance that two annotators disagree. Rankers: raw
  ``2 m (1 - m)`` and raw ``sigma2`` (the unperturbed ensemble), and ``2 m' (1 - m') - 2
  sigma2'`` (``= 2 eta1 - 2 eta2``) of each calibrator's output. At budgets 1%, 5% and 10%, the
  captured fraction is the sum of ``g`` over a ranker's top ``ceil(f n)`` images divided by the
  same sum for the oracle ordering (by ``g``); ties are broken at random. The top-label task is
  the unperturbed ensemble's class of largest ``m`` (the class the top-label calibrators learn).

Reported: mean, standard deviation and 2.5-97.5 percentiles over repeats, and the paired
differences (per repeat, same split) between the classifier's projected classwise CE2 and the
best unprojected one-vs-rest calibrator of each class.

Outputs in ``--out`` (default benchmarks/results/): ``cifar10h.json`` (provenance: git commit,
command line, configuration, CPU count, wall time, date), ``cifar10h_ce2.png``,
``cifar10h_audit.png`` and ``cifar10h_display.png`` (``skcal.SecondOrderDisplay`` of the top-label
2-D second-order classifier of the first repeat); ``--quick`` writes ``cifar10h_quick.*``.

Usage (from the repository root)::

    nice python -m benchmarks.cifar10h --repeats 20 --n-jobs 2   # full mode
    python -m benchmarks.cifar10h --quick                        # smoke run (2 repeats)
    python -m benchmarks.cifar10h --tables benchmarks/results/cifar10h.json  # the page's tables
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
CALIBRATORS = {
    "1-D first-order": {"basis": "1d", "order": 1, "degree": 8},
    "1-D second-order": {"basis": "1d", "order": 2, "degree": 8},
    "2-D first-order": {"basis": "tensor", "order": 1, "degree": 6},
    "2-D second-order": {"basis": "tensor", "order": 2, "degree": 6},
}
PREDICTORS = ("raw", *CALIBRATORS)
RANKERS = ("raw 2m(1-m)", "raw sigma2", *CALIBRATORS)
PROJECTIONS = ("logit_shift", "renormalize")
BUDGETS = (0.01, 0.05, 0.10)
BANDWIDTH = 2**-6
ALPHA = 1e-6
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


def _terms(res):
    return {"ce2": res.ce2, "term1": res.term1, "term2": res.term2, "degree": res.degree}


def _vote_log_loss(Q, counts):
    """Mean over the human votes of ``-log q_vote`` (the multiclass log loss of every vote)."""
    eps = np.finfo(np.float64).eps
    return float(-(counts * np.log(np.clip(Q, eps, 1.0))).sum() / counts.sum())


def _ovr_log_loss(M, counts):
    """Mean over classes of the binary log loss of ``m_j`` against every vote (one-vs-rest)."""
    eps = np.finfo(np.float64).eps
    M = np.clip(M, eps, 1.0 - eps)
    c = counts.sum(axis=1, keepdims=True)
    return float(-(counts * np.log(M) + (c - counts) * np.log1p(-M)).sum() / (c.sum() * M.shape[1]))


def one_repeat(seed, X, counts, m_raw, s2_raw, n_cal):
    from skcal import SechPerturber, SecondOrderCalibratedClassifier, VoteCounts, ce2_details
    from skcal.platt import project_to_simplex

    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    cal, ev = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
    votes = VoteCounts(counts=counts)
    V_cal, V_ev = votes[cal], votes[ev]

    def ce2(out, task):
        return ce2_details(V_ev, out, bandwidth=BANDWIDTH, alpha=ALPHA, multiclass=task)

    raw = SechPerturber(bandwidth=BANDWIDTH, random_state=seed).fit(X[cal]).transform(X[ev])
    classwise = {"raw": raw}
    top_label = {"raw": raw}
    projected = {}
    for name, kw in CALIBRATORS.items():
        common = {"bandwidth": BANDWIDTH, "alpha": ALPHA, "random_state": seed, **kw}
        clf = SecondOrderCalibratedClassifier("precomputed", **common).fit(X[cal], V_cal)
        one = clf.predict_second_order(X[ev], project=False)  # (n, 10, 2), one-vs-rest
        classwise[name] = one
        projected[name] = {rule: project_to_simplex(one, method=rule) for rule in PROJECTIONS}
        top = SecondOrderCalibratedClassifier("precomputed", multiclass="top_label", **common)
        top_label[name] = top.fit(X[cal], V_cal).predict_second_order(X[ev])

    out = {"ce2": {t: {} for t in TASKS}, "classwise": {}, "projection": {}, "top_label_of_classwise": {}}
    for name, scores in classwise.items():
        res = ce2(scores, "classwise")
        for j, cls in enumerate(CLASSES):
            out["ce2"][cls][name] = _terms(res.per_class[j])
        out["classwise"][name] = res.ce2
        out["ce2"]["top"][name] = _terms(ce2(top_label[name], "top_label"))
    counts_ev = counts[ev]
    for name, rules in projected.items():
        M = classwise[name][..., 0]
        out["projection"][name] = {
            "none": {"classwise_ce2": out["classwise"][name], "ovr_log_loss": _ovr_log_loss(M, counts_ev)}
        }
        for rule, scores in rules.items():
            out["projection"][name][rule] = {
                "classwise_ce2": ce2(scores, "classwise").ce2,
                "top_label_ce2": ce2(scores, "top_label").ce2,
                "vote_log_loss": _vote_log_loss(scores[..., 0], counts_ev),
                "ovr_log_loss": _ovr_log_loss(scores[..., 0], counts_ev),
                "mean_abs_change_of_m": float(np.abs(scores[..., 0] - classwise[name][..., 0]).mean()),
            }
        out["projection"][name]["none"]["mean_abs_row_sum_minus_1"] = float(
            np.abs(classwise[name][..., 0].sum(axis=1) - 1.0).mean()
        )
    # the disagreement audit: per task the realised disagreement g = 2 (t1 - t2)
    t1, t2 = V_ev.targets()
    g = 2.0 * (t1 - t2)
    rows = np.arange(ev.shape[0])
    top = np.argmax(m_raw[ev], axis=1)  # the ensemble's top class: the task the top-label calibrators learn
    t1_top, t2_top = V_ev.one_vs_rest(top).targets()
    g_top = 2.0 * (t1_top - t2_top)
    audit = {t: {} for t in TASKS}
    for name in RANKERS:
        if name.startswith("raw"):
            M = m_raw[ev]
            score = 2 * M * (1 - M) if name == "raw 2m(1-m)" else s2_raw[ev]
            score_top = score[rows, top]
        else:
            S = classwise[name]
            score = 2 * S[..., 0] * (1 - S[..., 0]) - 2 * S[..., 1]
            T = top_label[name][rows, top]
            score_top = 2 * T[:, 0] * (1 - T[:, 0]) - 2 * T[:, 1]
        audit["top"][name] = captured_fractions(score_top, g_top, rng).tolist()
        for j, cls in enumerate(CLASSES):
            audit[cls][name] = captured_fractions(score[:, j], g[:, j], rng).tolist()
    out["audit"] = audit
    out["mean_g_eval"] = float(g_top.mean())
    out["top_label_argmax_moved"] = {
        name: float(np.mean(np.argmax(top_label[name][..., 0], axis=1) != top)) for name in CALIBRATORS
    }
    return out


# ----------------------------------------------------------------------------------------------
# summaries and figures
# ----------------------------------------------------------------------------------------------
def _summ(values):
    v = np.asarray(values, dtype=np.float64)
    lo, hi = np.percentile(v, [2.5, 97.5])
    return {"mean": float(v.mean()), "p2.5": float(lo), "p97.5": float(hi), "std": float(v.std(ddof=1))}


def _paired(a, b):
    """Mean of the paired differences ``a - b`` over repeats, its standard error and t 90% half-width."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    _, half = harness.t_interval(d[:, None], level=0.90, axis=0)
    sem = float(d.std(ddof=1) / np.sqrt(d.size))
    return {"mean": float(d.mean()), "sem": sem, "t90_halfwidth": float(half[0])}


def summarise(runs):
    terms = ("ce2", "term1", "term2")
    ce2 = {
        t: {p: {k: _summ([r["ce2"][t][p][k] for r in runs]) for k in terms} for p in PREDICTORS}
        for t in TASKS
    }
    labels = [f"{int(100 * b)}%" for b in BUDGETS]
    audit = {
        t: {
            name: {lab: _summ([r["audit"][t][name][j] for r in runs]) for j, lab in enumerate(labels)}
            for name in RANKERS
        }
        for t in TASKS
    }
    pooled = {
        "ce2": {p: _summ([r["classwise"][p] for r in runs]) for p in PREDICTORS},
        "audit": {
            name: {
                lab: _summ([np.mean([r["audit"][t][name][j] for t in CLASSES]) for r in runs])
                for j, lab in enumerate(labels)
            }
            for name in RANKERS
        },
    }
    projection = {
        name: {
            rule: {key: _summ([r["projection"][name][rule][key] for r in runs]) for key in keys}
            for rule, keys in runs[0]["projection"][name].items()
        }
        for name in CALIBRATORS
    }
    # the targets: the classifier's projected classwise CE2 against, per class, the best of the
    # four unprojected one-vs-rest calibrators of the same run (paired over repeats)
    best = {cls: min(CALIBRATORS, key=lambda p, c=cls: ce2[c][p]["ce2"]["mean"]) for cls in CLASSES}
    targets = {"best_one_vs_rest_per_class": best, "classwise": {}, "top_label": {}}
    best_mean = [np.mean([r["ce2"][cls][best[cls]]["ce2"] for cls in CLASSES]) for r in runs]
    for name in CALIBRATORS:
        for rule in PROJECTIONS:
            ours = [r["projection"][name][rule]["classwise_ce2"] for r in runs]
            targets["classwise"][f"{name}, {rule}"] = {
                "minus_best_per_class_mean": _paired(ours, best_mean),
                "value": _summ(ours),
            }
        targets["top_label"][name] = _summ([r["ce2"]["top"][name]["ce2"] for r in runs])
    moved = {name: _summ([r["top_label_argmax_moved"][name] for r in runs]) for name in CALIBRATORS}
    return ce2, audit, pooled, projection, targets, moved


def plot_ce2(ce2, path):
    fig, ax = harness.subplots(figsize=(max(6.0, 1.0 * len(TASKS) + 2), 4.2))
    width = 0.8 / len(PREDICTORS)
    x = np.arange(len(TASKS))
    for j, p in enumerate(PREDICTORS):
        mean = np.array([ce2[t][p]["ce2"]["mean"] for t in TASKS])
        lo = np.array([ce2[t][p]["ce2"]["p2.5"] for t in TASKS])
        hi = np.array([ce2[t][p]["ce2"]["p97.5"] for t in TASKS])
        ax.bar(x + (j - 2) * width, mean, width, yerr=[mean - lo, hi - mean], capsize=2, label=p)
    ax.set_xticks(x, TASKS, rotation=30, ha="right")
    ax.set_ylabel("CE2 on the evaluation half")
    ax.set_title("CIFAR-10H: CE2 of the 11-model ensemble, raw and recalibrated (2.5-97.5% over repeats)")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path)


def plot_audit(audit, pooled, path):
    panels = [("top class", audit["top"]), ("10 classes one-vs-rest (mean)", pooled["audit"])]
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


def plot_display(seed, X, counts, n_cal, path):
    import matplotlib

    matplotlib.use("Agg")  # the display draws through pyplot: off-screen

    from skcal import SecondOrderCalibratedClassifier, SecondOrderDisplay, VoteCounts

    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    cal, ev = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
    kw = {"bandwidth": BANDWIDTH, "alpha": ALPHA, "random_state": seed, **CALIBRATORS["2-D second-order"]}
    clf = SecondOrderCalibratedClassifier("precomputed", multiclass="top_label", **kw)
    clf.fit(X[cal], VoteCounts(counts=counts[cal]))
    disp = SecondOrderDisplay.from_estimator(clf, X[ev], name="top label, 2-D 2nd-order Platt")
    harness.save_figure(disp.figure_, path, dpi=110, tight_layout=False)
    return {"fraction_sigma2_lowered": float(np.mean(disp.recalibrated_scores[:, 1] < disp.raw_scores[:, 1]))}


# ----------------------------------------------------------------------------------------------
# the results page's tables
# ----------------------------------------------------------------------------------------------
def _cell(x, digits=4):
    return f"{x['mean']:.{digits}f} [{x['p2.5']:.{digits}f}, {x['p97.5']:.{digits}f}]"


def _md(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def tables(result):
    """The results page's tables (Markdown) from a stored result, so no number is retyped."""
    ce2, pooled = result["ce2"], result["ten_classes_pooled"]
    out = {}
    rows = [[t, *(_cell(ce2[t][p]["ce2"]) for p in PREDICTORS)] for t in TASKS]
    rows.append(["10 classes (mean per repeat)", *(_cell(pooled["ce2"][p]) for p in PREDICTORS)])
    out["ce2"] = _md(["task", *PREDICTORS], rows)
    out["top_terms"] = _md(
        ["term", *PREDICTORS],
        [
            [label, *(f"{ce2['top'][p][key]['mean']:.4f}" for p in PREDICTORS)]
            for key, label in (
                ("term1", "term1, mean abs(eta1 - m)"),
                ("term2", "term2, mean abs(eta2 - (m^2 + sigma2))"),
            )
        ],
    )
    labels = [f"{int(100 * b)}%" for b in BUDGETS]
    audit = result["audit_captured_fraction"]
    out["audit_top"] = _md(
        ["ranker", *labels], [[n, *(_cell(audit["top"][n][b], 3) for b in labels)] for n in RANKERS]
    )
    out["audit_pooled"] = _md(
        ["ranker", *labels], [[n, *(_cell(pooled["audit"][n][b], 3) for b in labels)] for n in RANKERS]
    )
    out["audit_per_class_5"] = _md(
        ["class", *RANKERS], [[t, *(f"{audit[t][n]['5%']['mean']:.3f}" for n in RANKERS)] for t in TASKS]
    )
    proj, targets = result["projection"], result["targets"]
    rows = []
    for name in CALIBRATORS:
        none = proj[name]["none"]
        rows.append(
            [
                name,
                "none (one-vs-rest)",
                _cell(none["classwise_ce2"]),
                "",
                "",
                f"{none['ovr_log_loss']['mean']:.4f}",
                f"{none['mean_abs_row_sum_minus_1']['mean']:.4f}",
            ]
        )
        for rule in PROJECTIONS:
            r = proj[name][rule]
            rows.append(
                [
                    name,
                    rule,
                    _cell(r["classwise_ce2"]),
                    _cell(r["top_label_ce2"]),
                    f"{r['vote_log_loss']['mean']:.4f}",
                    f"{r['ovr_log_loss']['mean']:.4f}",
                    f"{r['mean_abs_change_of_m']['mean']:.4f}",
                ]
            )
    out["projection"] = _md(
        [
            "calibrator",
            "projection",
            "classwise CE2",
            "top-label CE2",
            "vote log loss",
            "one-vs-rest log loss",
            "mean abs(row sum - 1) / mean abs change of m",
        ],
        rows,
    )
    rows = []
    for key, v in targets["classwise"].items():
        d = v["minus_best_per_class_mean"]
        rows.append([key, _cell(v["value"]), f"{d['mean']:+.5f} +- {d['t90_halfwidth']:.5f}"])
    out["targets_classwise"] = _md(
        [
            "classifier (calibrator, projection)",
            "classwise CE2",
            "minus best one-vs-rest per class (paired, t 90%)",
        ],
        rows,
    )
    out["targets_top_label"] = _md(
        ["top-label classifier", "top-label CE2", "std over repeats"],
        [[n, _cell(v), f"{v['std']:.4f}"] for n, v in targets["top_label"].items()],
    )
    best = targets["best_one_vs_rest_per_class"]
    out["best_per_class"] = _md(
        ["class", "best one-vs-rest calibrator", "its CE2"],
        [[c, best[c], _cell(ce2[c][best[c]]["ce2"])] for c in CLASSES],
    )
    return out


# ----------------------------------------------------------------------------------------------
def main(argv=None):
    from skcal import ensemble_moments

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = harness.parser(
        __file__,
        __doc__,
        quick="smoke run: 2 repeats",
        n_jobs="joblib workers over repeats",
        seed=True,
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder holding cifar10h/ and multiclass_logits/"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="random calibration/evaluation splits (default 20)"
    )
    parser.add_argument(
        "--tables", type=Path, default=None, help="print the Markdown tables of a stored result"
    )
    args = harness.parse_args(parser, argv)
    if args.tables is not None:
        import json

        for name, table in tables(json.loads(args.tables.read_text())).items():
            print(f"<!-- {name} -->\n{table}\n")
        return None
    repeats = args.repeats or (2 if args.quick else 20)
    tag = "cifar10h_quick" if args.quick else "cifar10h"

    clock = harness.Timer()
    counts, P, y_test, names = load(args.data)
    X = ensemble_moments(P)  # (n, 20): the 10 means, then the 10 variances
    S3 = ensemble_moments(P, layout="classes")
    m, s2 = S3[..., 0], S3[..., 1]
    n = counts.shape[0]
    n_cal = n // 2
    runs = Parallel(n_jobs=args.n_jobs)(
        delayed(one_repeat)(args.seed * 1000 + r, X, counts, m, s2, n_cal) for r in range(repeats)
    )
    ce2, audit, pooled, projection, targets, moved = summarise(runs)
    display_info = plot_display(args.seed * 1000, X, counts, n_cal, args.out / f"{tag}_display.png")
    plot_ce2(ce2, args.out / f"{tag}_ce2.png")
    plot_audit(audit, pooled, args.out / f"{tag}_audit.png")

    top = np.argmax(m, axis=1)
    majority = np.argmax(counts, axis=1)
    rows = np.arange(n)
    mt, st, at, ct = m[rows, top], s2[rows, top], counts[rows, top], counts.sum(axis=1)
    g_top = 2 * (at / ct - at * (at - 1) / (ct * (ct - 1)))
    data_summary = {
        "n_images": n,
        "votes_per_image": [int(ct.min()), int(ct.max())],
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
            "tasks": list(TASKS),
            "n_cal": n_cal,
            "n_eval": n - n_cal,
            "bandwidth": BANDWIDTH,
            "alpha": ALPHA,
            "calibrators": CALIBRATORS,
            "pipeline": "skcal.ensemble_moments -> SecondOrderCalibratedClassifier('precomputed', ...) "
            "(classwise and multiclass='top_label'), fitted on the calibration half",
            "ce2_estimator": "skcal.ce2_details(VoteCounts(counts=C), scores, multiclass=...), polynomial, "
            "degree='auto', alpha=1e-6, on the evaluation half",
            "projections": list(PROJECTIONS),
            "budgets": list(BUDGETS),
            "intervals": "2.5-97.5 percentiles over repeats (random calibration/evaluation splits)",
            "data_citation": "Peterson, Battleday, Griffiths and Russakovsky, Human uncertainty makes "
            "classification more robust, ICCV 2019 (CIFAR-10H, CC BY-NC-SA 4.0)",
        },
        "data": data_summary,
        "ce2": ce2,
        "audit_captured_fraction": audit,
        "ten_classes_pooled": pooled,
        "projection": projection,
        "targets": targets,
        "top_label_argmax_moved": moved,
        "display": display_info,
    }
    prov = harness.provenance(__file__, argv, config=result["config"], clock=clock)
    harness.write_json(args.out / f"{tag}.json", result, provenance=prov)
    print(f"{tag}: {repeats} repeats in {prov['wall_time_s']:.1f}s")
    for t in TASKS:
        row = "  ".join(f"{p} {ce2[t][p]['ce2']['mean']:.4f}" for p in PREDICTORS)
        print(f"  CE2 {t:10s} {row}")
    for name in CALIBRATORS:
        row = "  ".join(
            f"{rule} {projection[name][rule]['classwise_ce2']['mean']:.4f}" for rule in ("none", *PROJECTIONS)
        )
        print(f"  classwise CE2 {name:17s} {row}")
    return result


if __name__ == "__main__":
    main()
