"""Experiment 6.6: truthful calibration errors and their robustness to the number of bins.

Three parts, written to ``<out>/truthful_bins.json`` and ``<out>/truthful_bins_*.png``:

1. **Real outputs** (``--data``, default ``<repo>/../shared/data/multiclass_logits``): the 18
   CIFAR-10 / CIFAR-100 models of that folder. Models with logits fit the temperature on their
   validation split (5000 rows) by L-BFGS on cross-entropy (:func:`skcal.fit_temperature`). The
   probability-only models (netcal, VGG-16) have no validation split: a fixed random 30 % of the
   test rows (the same indices for every model of a data set, seed ``--seed``) fits their
   temperature on log-probabilities. *Every* model is evaluated on the remaining 70 % of its
   test rows (the same images for the CIFAR-10 files, which are aligned; the df_posthoc
   CIFAR-100 files are shuffled per model, so there it is a random 70 % per model).
2. **scikit-learn models on load_digits**: several classifiers, split 50 / 20 / 30 into
   train / calibration / test per seed; temperature scaling with
   ``CalibratedClassifierCV(FrozenEstimator(clf), method="temperature")`` on the calibration part.
3. **Simulation with known posteriors**: honest and strategic reports of the same true
   posteriors; expected values of every measure (exact closed forms for the squared measures,
   Monte Carlo over label draws for all of them).

For each measure (ConfECE, ConfCE, ConfCE^corr, LinCE^cw) at 2000, 20 and 5 quantile bins, parts 1
and 2 report Spearman rank correlations across models with the classification error and between
bin counts, before and after temperature scaling.

Usage (from the repository root)::

    nice python -m benchmarks.truthful_bins --n-jobs 2       # full
    python -m benchmarks.truthful_bins --quick --skip-real   # smoke run without the real outputs

Writes ``truthful_bins.json``, ``truthful_bins.md`` (the tables) and the figures
(``truthful_bins_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import spearmanr

from benchmarks import _harness as harness
from skcal.temperature import apply_temperature, fit_temperature
from skcal.truthful import (
    brier_over_k,
    classwise_lince,
    conf_ce,
    conf_ece,
    confidence_proper_loss,
    truthful_conf_ce,
)

DEFAULT_DATA = harness.REPO_ROOT.parent / "shared" / "data" / "multiclass_logits"
BINS = (2000, 20, 5)
MEASURES = {
    "ConfECE": conf_ece,
    "ConfCE": conf_ce,
    "ConfCE_corr": truthful_conf_ce,
    "LinCE_cw": classwise_lince,
}
BIN_PAIRS = ((2000, 20), (2000, 5), (20, 5))


#: The paper's protocol (experiment 6.6): ConfECE on fixed-width bins, the squared measures on
#: quantile bins. ``--conf-ece-bins quantile`` bins ConfECE by quantile too.
PAPER_CONF_ECE_BINS = "uniform"


def _bin_strategy(name, conf_ece_bins):
    return conf_ece_bins if name == "ConfECE" else "quantile"


def _measures(y, P, conf_ece_bins=PAPER_CONF_ECE_BINS):
    out = {}
    for name, f in MEASURES.items():
        for b in BINS:
            out[f"{name}@{b}"] = f(y, P, n_bins=b, strategy=_bin_strategy(name, conf_ece_bins))
    out["error"] = float(np.mean(P.argmax(axis=1) != y))
    out["confidence_proper_loss"] = confidence_proper_loss(y, P)
    out["brier_over_k"] = brier_over_k(y, P)
    eps = 1e-300
    out["nll"] = float(-np.mean(np.log(np.maximum(P[np.arange(len(y)), y], eps))))
    return out


def _spearman(a, b):
    rho, p = spearmanr(a, b)
    return {"rho": None if np.isnan(rho) else float(rho), "p": None if np.isnan(p) else float(p)}


def _correlations(rows):
    """Spearman across models: each measure vs error, and between bin counts."""
    err = [r["error"] for r in rows]
    out = {}
    for name in MEASURES:
        d = {}
        for b in BINS:
            d[f"vs_error@{b}"] = _spearman([r[f"{name}@{b}"] for r in rows], err)
        for b1, b2 in BIN_PAIRS:
            d[f"bins_{b1}_vs_{b2}"] = _spearman(
                [r[f"{name}@{b1}"] for r in rows], [r[f"{name}@{b2}"] for r in rows]
            )
        out[name] = d
    return out


# ---------------------------------------------------------------------------------------------
# part 1: real outputs
# ---------------------------------------------------------------------------------------------


def _real_models(data):
    models = []
    for sub in sorted(p for p in data.iterdir() if p.is_dir()):
        manifest = sub / "manifest.json"
        if not manifest.exists():
            continue
        for entry in json.loads(manifest.read_text()):
            models.append({"path": str(sub / entry["file"]), "source": sub.name, **entry})
    return models


def _softmax_rows(P):
    P = np.asarray(P, dtype=np.float64)
    return P / P.sum(axis=1, keepdims=True)


def _run_real_model(model, eval_idx, cal_idx, max_eval, conf_ece_bins=PAPER_CONF_ECE_BINS):
    with np.load(model["path"]) as z:
        arrays = {k: z[k] for k in z.files}
    y_test = arrays["y_test"].astype(np.intp)
    if "logits_test" in arrays:
        logits_test = arrays["logits_test"].astype(np.float64)
        logits_cal, y_cal = arrays["logits_val"].astype(np.float64), arrays["y_val"].astype(np.intp)
        P_before = apply_temperature(logits_test, 1.0)
        cal_source = "validation split"
    else:
        P_all = _softmax_rows(arrays["probs_test"])
        logits_test = np.log(np.maximum(P_all, 1e-12))
        logits_cal, y_cal = logits_test[cal_idx], y_test[cal_idx]
        P_before = P_all
        cal_source = "30% of test rows"
    k = logits_test.shape[1]
    t0 = time.perf_counter()
    T = fit_temperature(logits_cal, y_cal, labels=np.arange(k))
    t_fit = time.perf_counter() - t0
    idx = eval_idx[:max_eval] if max_eval else eval_idx
    y = y_test[idx]
    P_after = apply_temperature(logits_test[idx], T)
    t0 = time.perf_counter()
    before = _measures(y, P_before[idx], conf_ece_bins)
    after = _measures(y, P_after, conf_ece_bins)
    t_measure = time.perf_counter() - t0
    return {
        "file": model["file"],
        "source": model["source"],
        "dataset": model["dataset"],
        "model": model["model"],
        "train_loss": model.get("train_loss", "unknown"),
        "n_classes": k,
        "n_eval": int(len(idx)),
        "temperature": T,
        "temperature_fit_on": cal_source,
        "n_temperature_fit": int(len(y_cal)),
        "seconds_fit_temperature": t_fit,
        "seconds_measures": t_measure,
        "before": before,
        "after": after,
    }


def run_real(data, *, quick, n_jobs, seed, conf_ece_bins=PAPER_CONF_ECE_BINS):
    models = _real_models(data)
    if not models:
        raise FileNotFoundError(f"No manifest.json with models found under {data}.")
    if quick:  # two models per data set, fewer rows
        picked, seen = [], {}
        for m in models:
            if seen.get(m["dataset"], 0) < 2:
                picked.append(m)
                seen[m["dataset"]] = seen.get(m["dataset"], 0) + 1
        models = picked
    rng = np.random.default_rng(seed)
    perm = rng.permutation(10000)
    cal_idx, eval_idx = np.sort(perm[:3000]), np.sort(perm[3000:])
    max_eval = 1500 if quick else None
    results = Parallel(n_jobs=n_jobs)(
        delayed(_run_real_model)(m, eval_idx, cal_idx, max_eval, conf_ece_bins) for m in models
    )
    summary = {}
    for ds in sorted({r["dataset"] for r in results}):
        rows = [r for r in results if r["dataset"] == ds]
        summary[ds] = {
            "n_models": len(rows),
            "before": _correlations([r["before"] for r in rows]),
            "after": _correlations([r["after"] for r in rows]),
        }
    summary["pooled"] = {
        "n_models": len(results),
        "before": _correlations([r["before"] for r in results]),
        "after": _correlations([r["after"] for r in results]),
    }
    return {"models": results, "correlations": summary}


# ---------------------------------------------------------------------------------------------
# part 2: scikit-learn models on load_digits
# ---------------------------------------------------------------------------------------------


def _digits_models(quick):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    models = {
        "GaussianNB": lambda s: GaussianNB(),
        "KNN-10": lambda s: KNeighborsClassifier(10),
        "DecisionTree-d6": lambda s: DecisionTreeClassifier(max_depth=6, random_state=s),
    }
    if not quick:
        models.update(
            {
                "KNN-3": lambda s: KNeighborsClassifier(3),
                "DecisionTree-d10": lambda s: DecisionTreeClassifier(max_depth=10, random_state=s),
                "RandomForest-50": lambda s: RandomForestClassifier(50, random_state=s),
                "LogReg-C1": lambda s: make_pipeline(
                    StandardScaler(), LogisticRegression(C=1.0, max_iter=500)
                ),
                "LogReg-C0.01": lambda s: make_pipeline(
                    StandardScaler(), LogisticRegression(C=0.01, max_iter=500)
                ),
                "LDA": lambda s: LinearDiscriminantAnalysis(),
                "MLP-32": lambda s: MLPClassifier((32,), max_iter=300, random_state=s),
            }
        )
    return models


def _run_digits_seed(seed, quick, conf_ece_bins=PAPER_CONF_ECE_BINS):
    import warnings

    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.frozen import FrozenEstimator
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
    X_cal, X_te, y_cal, y_te = train_test_split(
        X_rest, y_rest, train_size=0.4, random_state=seed, stratify=y_rest
    )
    rows = []
    for name, make in _digits_models(quick).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = make(seed).fit(X_tr, y_tr)
        cal = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(X_cal, y_cal)
        beta = cal.calibrated_classifiers_[0].calibrators[0].beta_
        rows.append(
            {
                "seed": seed,
                "model": name,
                "temperature": float(1.0 / beta),
                "n_eval": int(len(y_te)),
                "before": _measures(y_te, clf.predict_proba(X_te), conf_ece_bins),
                "after": _measures(y_te, cal.predict_proba(X_te), conf_ece_bins),
            }
        )
    return rows


def _mean_sd(values):
    v = np.array([x for x in values if x is not None], dtype=float)
    if v.size == 0:
        return {"mean": None, "sd": None, "n": 0}
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0, "n": int(v.size)}


def run_digits(*, quick, n_jobs, seed, conf_ece_bins=PAPER_CONF_ECE_BINS):
    seeds = [seed] if quick else [seed + i for i in range(5)]
    per_seed = Parallel(n_jobs=n_jobs)(delayed(_run_digits_seed)(s, quick, conf_ece_bins) for s in seeds)
    rows = [r for rs in per_seed for r in rs]
    summary = {}
    for phase in ("before", "after"):
        corr = [_correlations([r[phase] for r in rs]) for rs in per_seed]
        summary[phase] = {
            m: {key: _mean_sd([c[m][key]["rho"] for c in corr]) for key in corr[0][m]} for m in MEASURES
        }
    return {"seeds": seeds, "models": rows, "correlations_mean_sd_over_seeds": summary}


# ---------------------------------------------------------------------------------------------
# part 3: simulation with known posteriors
# ---------------------------------------------------------------------------------------------


def _posteriors(n, k, rng):
    """True posteriors with a spread of confidence levels: softmax(a_i g_i), a_i ~ U(0.5, 4)."""
    g = rng.normal(size=(n, k))
    a = rng.uniform(0.5, 4.0, size=(n, 1))
    return apply_temperature(a * g, 1.0)


def _strategies(Q):
    n, k = Q.shape
    out = {"honest": Q}
    for T in (0.67, 1.5, 3.0):
        out[f"temperature T={T}"] = apply_temperature(np.log(Q), T)
    out["mix 50% uniform"] = 0.5 * Q + 0.5 / k
    # a gaming report: nearly uniform, top label on the truly least likely class
    eps = 0.02
    P = np.full((n, k), (1.0 - eps) / k)
    P[np.arange(n), Q.argmin(axis=1)] += eps
    out["near-uniform, top = least likely"] = P
    return out


def _closed_forms(Q, P):
    """Exact expectations of the squared measures for fixed (report-determined) bins."""
    from skcal.binning import assign_bins

    n, k = P.shape
    r = P.argmax(axis=1)
    c = P[np.arange(n), r]
    s = Q[np.arange(n), r]
    out = {}
    for b in BINS:
        ids = assign_bins(c, n_bins=b)
        bias = float(np.sum(np.bincount(ids, weights=c - s) ** 2)) / n**2
        out[f"ConfCE@{b}"] = bias + float(np.sum(s * (1 - s))) / n**2
        out[f"ConfCE_corr@{b}"] = bias + float(np.sum(1 - s**2)) / n**2
        ids_cw = assign_bins(P, n_bins=b)
        lin = 0.0
        for j in range(k):
            lin += float(np.sum(np.bincount(ids_cw[:, j], weights=P[:, j] - Q[:, j]) ** 2))
        out[f"LinCE_cw@{b}"] = (lin + float(np.sum(Q * (1 - Q)))) / (k * n**2)
    return out


def _simulate_draw(Q, reports, seed, conf_ece_bins=PAPER_CONF_ECE_BINS):
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(Q, axis=1)
    y = (rng.random((Q.shape[0], 1)) > cdf).sum(axis=1)
    y = np.minimum(y, Q.shape[1] - 1)
    return {name: _measures(y, P, conf_ece_bins) for name, P in reports.items()}


def run_simulation(*, quick, n_jobs, seed, conf_ece_bins=PAPER_CONF_ECE_BINS):
    n, k, draws = (800, 10, 8) if quick else (5000, 10, 200)
    rng = np.random.default_rng(seed)
    Q = _posteriors(n, k, rng)
    reports = _strategies(Q)
    exact = {name: _closed_forms(Q, P) for name, P in reports.items()}
    sims = Parallel(n_jobs=n_jobs)(
        delayed(_simulate_draw)(Q, reports, seed + 1 + i, conf_ece_bins) for i in range(draws)
    )
    mc = {}
    for name in reports:
        keys = sims[0][name].keys()
        mc[name] = {
            key: {
                "mean": float(np.mean([s[name][key] for s in sims])),
                "se": float(np.std([s[name][key] for s in sims], ddof=1) / np.sqrt(draws)),
            }
            for key in keys
        }
    keys = [f"{m}@{b}" for m in MEASURES for b in BINS]
    winners = {}
    for key in keys:
        src = exact if key in exact["honest"] else {nm: {key: mc[nm][key]["mean"]} for nm in reports}
        winners[key] = min(reports, key=lambda nm: src[nm][key])
    return {
        "n": n,
        "k": k,
        "draws": draws,
        "mean_top_posterior": float(Q.max(axis=1).mean()),
        "exact": exact,
        "monte_carlo": mc,
        "minimiser": winners,
    }


# ---------------------------------------------------------------------------------------------
# figures and main
# ---------------------------------------------------------------------------------------------


def _figures(result, out, stem):
    paths = []
    panels = []
    if result.get("real"):
        for ds, summ in result["real"]["correlations"].items():
            if ds == "pooled":  # k differs across data sets (LinCE_cw carries a 1/k): table only
                continue
            panels.append((f"{ds} ({summ['n_models']} models)", summ["before"], summ["after"], "rho"))
    if result.get("digits"):
        d = result["digits"]["correlations_mean_sd_over_seeds"]
        panels.append(
            (f"digits (mean over {len(result['digits']['seeds'])} seeds)", d["before"], d["after"], "mean")
        )
    if panels:
        fig, axes = harness.subplots(2, len(panels), figsize=(4.8 * len(panels), 6.5), squeeze=False)
        fig.subplots_adjust(wspace=0.45, hspace=0.7)
        for j, (title, before, after, field) in enumerate(panels):
            for i, (phase, summ) in enumerate((("before TS", before), ("after TS", after))):
                ax = axes[i, j]
                cols = [f"vs_error@{b}" for b in BINS] + [f"bins_{a}_vs_{b}" for a, b in BIN_PAIRS]
                M = np.array(
                    [
                        [summ[m][c][field] if summ[m][c][field] is not None else np.nan for c in cols]
                        for m in MEASURES
                    ]
                )
                im = ax.imshow(M, vmin=-1, vmax=1, cmap="RdBu_r")
                for (a, b), v in np.ndenumerate(M):
                    ax.text(b, a, "" if np.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=7)
                ax.set_xticks(
                    range(len(cols)),
                    [c.replace("vs_error@", "err@").replace("bins_", "") for c in cols],
                    rotation=60,
                    fontsize=7,
                )
                ax.set_yticks(range(len(MEASURES)), list(MEASURES), fontsize=8)
                ax.set_title(f"{title}\n{phase}", fontsize=8)
        fig.colorbar(im, ax=axes, shrink=0.6, label="Spearman rho")
        paths.append(
            harness.save_figure(fig, out / f"{stem}_spearman.png", tight_layout=False, bbox_inches="tight")
        )
    sim = result["simulation"]
    names = list(sim["exact"])
    keys = [f"{m}@{b}" for m in MEASURES for b in BINS]
    fig, ax = harness.subplots(figsize=(11, 4))
    width = 0.8 / len(names)
    for i, nm in enumerate(names):
        vals = []
        for key in keys:
            v = sim["exact"][nm].get(key, sim["monte_carlo"][nm][key]["mean"])
            h = sim["exact"]["honest"].get(key, sim["monte_carlo"]["honest"][key]["mean"])
            vals.append(v / h)
        ax.bar(np.arange(len(keys)) + i * width, vals, width, label=nm)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(keys)) + 0.4, keys, rotation=60, fontsize=7)
    ax.set_ylabel("expected value / honest value")
    ax.set_title(f"Simulation (n={sim['n']}, k={sim['k']}): below 1 means the report beats honesty")
    ax.legend(fontsize=7, ncol=2)
    paths.append(
        harness.save_figure(fig, out / f"{stem}_simulation.png", tight_layout=False, bbox_inches="tight")
    )
    return paths


def _fmt_rho(d, field="rho"):
    v = d[field]
    if v is None:
        return "nan"
    if field == "mean":
        return f"{v:+.2f} ± {d['sd']:.2f}"
    return f"{v:+.2f}"


def render_markdown(result):
    """Markdown tables of a result dict (used for docs/benchmarks/truthful.md)."""
    cols = [f"vs_error@{b}" for b in BINS] + [f"bins_{a}_vs_{b}" for a, b in BIN_PAIRS]
    head = "| measure | TS | " + " | ".join(
        c.replace("vs_error@", "ρ(err) @").replace("bins_", "ρ bins ").replace("_vs_", " vs ") for c in cols
    )
    head += " |\n|" + "---|" * (len(cols) + 2)
    lines = []
    if result.get("real"):
        lines += ["### Real CIFAR outputs: per model (evaluation rows)", ""]
        lines.append(
            "| data set | source | model | loss | n_eval | T (fit on) | error | NLL before → after | "
            "ConfCE^corr@20 before → after | LinCE^cw@20 before → after | "
            "after: n·ConfCE^corr@2000 / conf. loss | after: n·LinCE^cw@2000 / Brier/k |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for m in result["real"]["models"]:
            b, a = m["before"], m["after"]
            lines.append(
                f"| {m['dataset']} | {m['source']} | {m['model']} | {m['train_loss']} | {m['n_eval']} | "
                f"{m['temperature']:.3f} ({m['temperature_fit_on']}, n={m['n_temperature_fit']}) | "
                f"{b['error']:.4f} | {b['nll']:.3f} → {a['nll']:.3f} | "
                f"{b['ConfCE_corr@20']:.2e} → {a['ConfCE_corr@20']:.2e} | "
                f"{b['LinCE_cw@20']:.2e} → {a['LinCE_cw@20']:.2e} | "
                f"{m['n_eval'] * a['ConfCE_corr@2000']:.4f} / {a['confidence_proper_loss']:.4f} | "
                f"{m['n_eval'] * a['LinCE_cw@2000']:.4f} / {a['brier_over_k']:.4f} |"
            )
        for ds, summ in result["real"]["correlations"].items():
            lines += ["", f"### Spearman across models: {ds} ({summ['n_models']} models)", "", head]
            for phase in ("before", "after"):
                for m in MEASURES:
                    lines.append(
                        f"| {m} | {phase} | " + " | ".join(_fmt_rho(summ[phase][m][c]) for c in cols) + " |"
                    )
    if result.get("digits"):
        d = result["digits"]
        lines += [
            "",
            f"### Spearman across {len(d['models']) // len(d['seeds'])} scikit-learn models on load_digits "
            f"(mean ± sd over seeds {d['seeds']})",
            "",
            head,
        ]
        for phase in ("before", "after"):
            for m in MEASURES:
                summ = d["correlations_mean_sd_over_seeds"][phase][m]
                lines.append(
                    f"| {m} | {phase} | " + " | ".join(_fmt_rho(summ[c], "mean") for c in cols) + " |"
                )
    sim = result["simulation"]
    keys = [f"{m}@{b}" for m in MEASURES for b in BINS]
    lines += [
        "",
        f"### Simulation (n={sim['n']}, k={sim['k']}): expected value / honest expected value",
        "",
        "Exact closed forms for ConfCE, ConfCE^corr and LinCE^cw; Monte Carlo mean over "
        f"{sim['draws']} label draws for ConfECE. Values below 1 mean the report beats honesty.",
        "",
        "| report | " + " | ".join(keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for nm in sim["exact"]:
        vals = []
        for key in keys:
            v = sim["exact"][nm].get(key, sim["monte_carlo"][nm][key]["mean"])
            h = sim["exact"]["honest"].get(key, sim["monte_carlo"]["honest"][key]["mean"])
            vals.append(f"**{v / h:.3f}**" if v < h else f"{v / h:.3f}")
        lines.append(f"| {nm} | " + " | ".join(vals) + " |")
    z = [
        abs(sim["monte_carlo"][nm][k]["mean"] - v) / sim["monte_carlo"][nm][k]["se"]
        for nm in sim["exact"]
        for k, v in sim["exact"][nm].items()
    ]
    lines += ["", f"Largest |Monte Carlo − exact| / standard error over all exact entries: {max(z):.2f}."]
    t = result["seconds"]
    lines += ["", "Run time (s): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = harness.parser(__file__, __doc__, quick="small CI smoke run", n_jobs="joblib workers", seed=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="multiclass_logits folder")
    parser.add_argument("--skip-real", action="store_true", help="run without the real model outputs")
    parser.add_argument(
        "--conf-ece-bins",
        choices=("uniform", "quantile"),
        default=PAPER_CONF_ECE_BINS,
        help="ConfECE bins: fixed-width as in the paper (default) or quantile like the squared measures",
    )
    args = harness.parse_args(parser, argv)
    clock = harness.Timer()
    if not args.skip_real and not args.data.is_dir():
        raise SystemExit(
            f"error: the real classifier outputs were not found at {args.data}. Pass --data "
            "<path to multiclass_logits> or --skip-real to run the scikit-learn and simulation parts only."
        )
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = {
        "config": {
            "quick": args.quick,
            "seed": args.seed,
            "bins": list(BINS),
            "strategy": {name: _bin_strategy(name, args.conf_ece_bins) for name in MEASURES},
            # relative to the repository, so no machine's absolute path is stored
            "data": None if args.skip_real else harness.repo_relative(args.data),
        }
    }
    timings = {}
    if not args.skip_real:
        t = time.perf_counter()
        result["real"] = run_real(
            args.data, quick=args.quick, n_jobs=args.n_jobs, seed=args.seed, conf_ece_bins=args.conf_ece_bins
        )
        timings["real"] = time.perf_counter() - t
    t = time.perf_counter()
    result["digits"] = run_digits(
        quick=args.quick, n_jobs=args.n_jobs, seed=args.seed, conf_ece_bins=args.conf_ece_bins
    )
    timings["digits"] = time.perf_counter() - t
    t = time.perf_counter()
    result["simulation"] = run_simulation(
        quick=args.quick, n_jobs=args.n_jobs, seed=args.seed, conf_ece_bins=args.conf_ece_bins
    )
    timings["simulation"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    result["seconds"] = timings
    stem = "truthful_bins_quick" if args.quick else "truthful_bins"
    json_path = args.out / f"{stem}.json"
    # file names beside the JSON (no machine's absolute path is stored)
    result["figures"] = [Path(p).name for p in _figures(result, args.out, stem)]
    config = {**result["config"], "n_jobs": args.n_jobs}
    harness.write_result(__file__, argv, json_path, result, config=config, clock=clock)
    (args.out / f"{stem}.md").write_text(render_markdown(result))
    print(f"wrote {json_path} and {len(result['figures'])} figures in {timings['total']:.1f} s")
    return result


if __name__ == "__main__":
    main()
