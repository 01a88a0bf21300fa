"""Calibration monitoring over time: false alarms, detection delays, change location, speed.

Parts (``--parts``, default all):

* ``null``: false alarms under the null. Calibrated streams (``--null-streams`` of
  ``--null-rows`` rows, default 1,000 of 1e5, and ``--long-streams`` of ``--long-rows``, default
  100 of 1e6): ``p`` from the top-label confidences of the 11 CIFAR-10 models in
  ``multiclass_logits`` (``--data``; stream ``i`` draws i.i.d. from model ``i mod 11``) and from
  an adversarial forecaster that chooses ``p`` from the past labels (in groups of 10 rows: half the
  time the centre of the bin whose past residual sum is largest in absolute value, the bin the
  monitor bets on most, otherwise the recent label frequency); each label is Bernoulli(``p_t``), so
  the null holds exactly. The fraction of streams that ever alarm, with its Clopper-Pearson 95%
  interval, for skcal's monitor and, on the same streams, river's ADWIN, Page-Hinkley and KSWIN on
  the residual ``y - p``, a level-0.05 ``calibration_test`` (11-bin ECE, 199 resamples) on the last
  10,000 rows repeated every 10,000 rows, and an "ECE > 0.05" threshold (15 equal-width bins) on
  the same windows. KSWIN (pure Python, about 0.4 ms per row) and the repeated test (about 0.05 s
  per window) run on the first ``--kswin-streams`` / ``--test-streams`` streams of each set.
* ``real``: the monitor on the real labels of the 11 CIFAR-10 models (their 10,000 test rows in
  test order), beside a one-off ``calibration_test`` of the same rows: real models are not
  exactly calibrated.
* ``delay``: detection delay (rows after the change; median and 90th percentile) over
  ``--delay-streams`` streams of ``--null-rows`` rows per scenario, the change at a row drawn
  uniformly in [20%, 50%] of the stream: a bias of ``p`` by +0.02 and +0.05; a temperature drift
  ``p = sigmoid(T_t logit(p*))`` with ``T_t`` growing from 1 to 2 at the end; miscalibration
  confined to ``p`` in [0.7, 0.9] (the truth is ``p - 0.1`` there); a class-prior shift of real
  CIFAR-10 outputs (labels drawn from a model's own probabilities, so it is calibrated until one
  class's share grows linearly from 10% to 30% by label-shift resampling); a swap from a model
  (whose probabilities are the truth) to a less calibrated one on the same images. Every detector
  in one table: skcal at its guaranteed levels, the peers at their defaults and at settings tuned
  on calibrated streams of the same kind to a 5% false-alarm rate over the horizon (river's
  ``delta`` and ``threshold`` by a grid, KSWIN's ``alpha`` and the repeated test's level by
  Bonferroni, the ECE threshold as the 95th percentile of the calibrated streams' largest window
  ECE). The change-location error ``|change_at_ - change|`` of the detected streams.
* ``memory``: ``mode="detect"`` at the horizon level for bet memories of 1 to 20 blocks and all
  blocks: delays to a +0.05 and a +0.02 bias and false alarms on calibrated streams (the choice
  of ``memory="auto"``).
* ``speed``: one ``update`` over 1e7 rows against one ``np.bincount`` over them (side by side,
  interleaved, ``--repeats`` times), and ``skcal monitor`` over a parquet folder of ``--scale-rows``
  rows (default 1e8) in time order, with the extrapolation to 1e9 rows.

Usage::

    nice python -m benchmarks.monitor --n-jobs 2          # full (about two hours on 2 cores)
    python -m benchmarks.monitor --quick                  # smoke (CI): small sizes, no river

Writes ``monitor.json`` (with a ``"provenance"`` block) and ``monitor.png`` to ``--out``
(``monitor_quick.*`` with ``--quick``, the file ``benchmarks/verify.py`` compares; timings sit under
``"timings"`` keys, which it does not compare). The quick mode leaves river out (it is in the
``bench`` extra, not the ``test`` one).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import beta as beta_dist

from benchmarks import _harness as harness
from benchmarks._harness import REPO_ROOT as ROOT
from benchmarks._harness import Timer as Clock
from benchmarks._harness import args_config, provenance, write_json
from benchmarks._harness import parser as harness_parser
from skcal import binned_ece, calibration_test
from skcal.monitor import CalibrationMonitor

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multiclass_logits"
ALPHA = 0.05
WINDOW = 10_000
GROUP = 10  # rows per adaptive step of the adversarial forecaster
STREAMS_PER_TASK = 10  # streams generated together (the adversarial ones share one generator)
ADWIN_GRID = (2e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-13, 1e-16, 1e-20)
PH_GRID = (50, 100, 200, 400, 800, 1600, 3200, 6400)
SCENARIOS = ("bias_0.02", "bias_0.05", "temperature", "region_0.7_0.9", "prior_shift", "model_swap")
SWAP_FROM, SWAP_TO = "cifar10_resnet110_brier", "cifar10_wideresnet16_4"
PRIOR_MODEL = "cifar10_wide_resnet_brier"


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def load_cifar10(data):
    """``{name: (P (10000, 10) float64, y (10000,))}`` for the CIFAR-10 models, or ``{}``."""
    out = {}
    for f in sorted(Path(data).glob("*/cifar10_*.npz")):
        d = np.load(f)
        P = (
            _softmax(d["logits_test"].astype(np.float64))
            if "logits_test" in d
            else d["probs_test"].astype(np.float64)
        )
        P = P / P.sum(axis=1, keepdims=True)
        out[f.stem] = (P, d["y_test"].astype(np.int64))
    return out


def clopper_pearson(k, n, level=0.95):
    a = 1 - level
    lo = 0.0 if k == 0 else float(beta_dist.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta_dist.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def rate(alarms):
    alarms = [a is not None for a in alarms]
    k, n = int(sum(alarms)), len(alarms)
    lo, hi = clopper_pearson(k, n) if n else (None, None)
    return {"streams": n, "alarms": k, "rate": k / n if n else None, "ci95": [lo, hi]}


# ---------------------------------------------------------------------------------------------
# streams
# ---------------------------------------------------------------------------------------------
def cifar_null(seed, n, confidences):
    """Calibrated stream: p i.i.d. from one model's top-label confidences, y ~ Bernoulli(p)."""
    rng = np.random.default_rng(seed)
    conf = confidences[seed % len(confidences)]
    p = conf[rng.integers(0, conf.shape[0], size=n)]
    return (rng.uniform(size=n) < p).astype(np.int8), p


def beta_null(seed, n):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    return (rng.uniform(size=n) < p).astype(np.int8), p


def adversarial_null(seeds, n, n_bins=16):
    """Streams whose p_t is chosen from the past labels; labels Bernoulli(p_t) (the null holds)."""
    S = len(seeds)
    rngs = np.random.default_rng(seeds[0] * 7919 + S)
    p = np.empty((S, n))
    y = np.empty((S, n), dtype=np.int8)
    resid = np.zeros((S, n_bins))
    freq = np.full(S, 0.5)
    rows = np.arange(S)
    for s in range(0, n, GROUP):
        e = min(s + GROUP, n)
        g = e - s
        hop = rngs.uniform(size=S) < 0.5
        target = np.argmax(np.abs(resid), axis=1)
        centre = (target + rngs.uniform(size=(g, S))) / n_bins
        chase = np.clip(freq + rngs.normal(0, 0.1, size=(g, S)), 0.01, 0.99)
        pg = np.where(hop, centre, chase).T
        yg = (rngs.uniform(size=(S, g)) < pg).astype(np.int8)
        p[:, s:e], y[:, s:e] = pg, yg
        bins = np.minimum((pg * n_bins).astype(np.intp), n_bins - 1)
        np.add.at(resid, (np.repeat(rows, g), bins.ravel()), (yg - pg).ravel())
        freq = 0.99**g * freq + yg @ (0.01 * 0.99 ** np.arange(g - 1, -1, -1))  # 0.99-decay per row
    return y, p


# ---------------------------------------------------------------------------------------------
# detectors: the first alarm (rows seen), or None
# ---------------------------------------------------------------------------------------------
def skcal_alarm(y, p, **params):
    return CalibrationMonitor(**params).update(y, p)


def river_alarm(kind, x, param):
    from river import drift  # river is in the bench extra only

    if kind == "adwin":
        d = drift.ADWIN() if param is None else drift.ADWIN(delta=param)
    elif kind == "ph":
        d = drift.PageHinkley() if param is None else drift.PageHinkley(threshold=param)
    else:
        d = drift.KSWIN(seed=0) if param is None else drift.KSWIN(alpha=param, seed=0)
    for i, v in enumerate(x.tolist()):
        d.update(v)
        if d.drift_detected:
            return i + 1
    return None


def window_checks(y, p, seed, resamples):
    """Per window of WINDOW rows: the calibration test's p-value and the 15-bin ECE."""
    pv, ece = [], []
    for s in range(WINDOW, y.shape[0] + 1, WINDOW):
        yw, pw = y[s - WINDOW : s].astype(np.float64), p[s - WINDOW : s]
        ece.append(float(binned_ece(yw, pw, n_bins=15)))
        if resamples:
            res = calibration_test(yw, pw, measure="binned_ece", n_resamples=resamples, random_state=seed + s)
            pv.append(float(res.pvalue))
    return pv, ece


def first_window(values, hit):
    for i, v in enumerate(values):
        if hit(v):
            return (i + 1) * WINDOW
    return None


def run_stream(
    y, p, *, n_blocks, peers, kswin, tests, seed, resamples=199, tuned=None, block_size=1000, multiclass=None
):
    """Every detector on one stream: ``{detector: first alarm row or None}`` (and window values)."""
    out = {}
    if multiclass is not None:  # one monitor per class (the top-label y, p come from these)
        cw = skcal_alarm(
            multiclass[0], multiclass[1], alpha=ALPHA, multiclass="classwise", block_size=block_size
        )
        out["skcal_test_classwise"] = cw.alarm_at_
    m = skcal_alarm(y, p, alpha=ALPHA, block_size=block_size)
    out["skcal_test"] = m.alarm_at_
    out["skcal_test_change_at"] = m.change_at_
    d = skcal_alarm(
        y, p, false_alarm_rows=(n_blocks * block_size, ALPHA), mode="detect", block_size=block_size
    )
    out["skcal_detect_horizon"] = d.alarm_at_
    out["skcal_detect_horizon_change_at"] = d.change_at_
    out["skcal_detect_arl"] = skcal_alarm(
        y, p, false_alarm_rows=block_size / ALPHA, mode="detect", block_size=block_size
    ).alarm_at_
    x = (y - p).astype(np.float64)
    if peers:
        out["adwin_default"] = river_alarm("adwin", x, None)
        out["ph_default"] = river_alarm("ph", x, None)
        if tuned is not None:
            out["adwin_tuned"] = river_alarm("adwin", x, tuned["adwin"])
            out["ph_tuned"] = river_alarm("ph", x, tuned["ph"])
    if kswin:
        out["kswin_default"] = river_alarm("kswin", x, None)
        out["kswin_tuned"] = river_alarm("kswin", x, 0.05 / y.shape[0])
    pv, ece = window_checks(y, p, seed, resamples if tests else 0)
    out["ece"] = ece
    out["ece_gt_0.05"] = first_window(ece, lambda v: v > 0.05)
    if tuned is not None:
        out["ece_tuned"] = first_window(ece, lambda v: v > tuned["ece"])
    if tests:
        m_windows = len(pv)
        out["pvalues"] = pv
        out["test_repeated_0.05"] = first_window(pv, lambda v: v <= 0.05)
        if (resamples + 1) * 0.05 / m_windows >= 1:  # the Bonferroni level is a reachable p-value
            out["test_bonferroni"] = first_window(pv, lambda v: v <= 0.05 / m_windows + 1e-12)
    return out


# ---------------------------------------------------------------------------------------------
# part 1: false alarms under the null
# ---------------------------------------------------------------------------------------------
def _null_task(source, seeds, n, confidences, peers, kswin_upto, tests_upto, block_size):
    if source == "adversarial":
        Y, P = adversarial_null(seeds, n)
        streams = list(zip(Y, P, strict=True))
    elif source == "cifar":
        streams = [cifar_null(s, n, confidences) for s in seeds]
    else:
        streams = [beta_null(s, n) for s in seeds]
    out = []
    for (y, p), s in zip(streams, seeds, strict=True):
        i = s % 1_000_000
        r = run_stream(
            y,
            p,
            n_blocks=n // block_size,
            peers=peers,
            kswin=peers and i < kswin_upto,
            tests=i < tests_upto,
            seed=s,
            resamples=199 if n <= 100_000 else 99,
            block_size=block_size,
        )
        out.append(r)
    return out


NULL_DETECTORS = (
    "skcal_test",
    "skcal_test_product",
    "skcal_detect_horizon",
    "skcal_detect_arl",
    "adwin_default",
    "ph_default",
    "kswin_default",
    "kswin_tuned",
    "test_repeated_0.05",
    "test_bonferroni",
    "ece_gt_0.05",
)


def null_part(args, confidences, sources, parallel):
    result = {}
    sizes = [("short", args.null_streams, args.null_rows), ("long", args.long_streams, args.long_rows)]
    for source_id, source in enumerate(sources):
        for size_name, n_streams, n in sizes:
            if n_streams == 0:
                continue
            base = 1_000_000 * (10 * source_id + (size_name == "long") + 1)
            seeds = [base + i for i in range(n_streams)]
            per = STREAMS_PER_TASK  # fixed, so the streams do not depend on --n-jobs
            chunks = [seeds[i : i + per] for i in range(0, n_streams, per)]
            kswin_upto = args.kswin_streams if size_name == "short" else 0
            tests_upto = args.test_streams if size_name == "short" else args.long_test_streams
            runs = parallel(
                delayed(_null_task)(
                    source, c, n, confidences, args.peers, kswin_upto, tests_upto, args.block_size
                )
                for c in chunks
            )
            streams = [r for chunk in runs for r in chunk]
            entry = {"rows": n, "streams": n_streams, "detectors": {}}
            for det in NULL_DETECTORS:
                got = [s[det] for s in streams if det in s]
                if got:
                    entry["detectors"][det] = rate(got)
            entry["max_window_ece_q95"] = float(np.quantile([max(s["ece"]) for s in streams], 0.95))
            entry["skcal_test_max_alarm_rows"] = [
                s["skcal_test"] for s in streams if s["skcal_test"] is not None
            ][:20]
            result[f"{source}_{size_name}"] = entry
            print(
                f"[null] {source} {size_name}: "
                + ", ".join(f"{k} {v['rate']:.3f}" for k, v in entry["detectors"].items()),
                flush=True,
            )
    return result


# ---------------------------------------------------------------------------------------------
# part 2: real labels
# ---------------------------------------------------------------------------------------------
def real_part(models):
    """The monitor on each model's real labels, in test order, beside a one-off test of the same rows.

    Only the 10,000 real rows are used: resampling them into a longer stream would not give a
    calibrated or a miscalibrated stream of the model, but one whose every distinct ``p`` has a
    fixed label (``E[y | p]`` in {0, 1}), which any test rejects given enough rows.
    """
    out = {}
    for name, (P, y) in models.items():
        conf, correct = P.max(axis=1), (P.argmax(axis=1) == y)
        m = CalibrationMonitor().update(correct, conf)
        once = calibration_test(
            correct.astype(float), conf, measure="binned_ece", n_resamples=999, random_state=0
        )
        out[name] = {
            "rows": int(conf.shape[0]),
            "accuracy": float(correct.mean()),
            "ece_15": float(binned_ece(correct.astype(float), conf, n_bins=15)),
            "mean_residual": float(np.mean(correct - conf)),
            "alarm_at": m.alarm_at_,
            "change_at": m.change_at_,
            "pvalue": m.pvalue_,
            "log10_e_value": float(np.log10(m.e_value_)) if m.e_value_ > 0 else None,
            "calibration_test_pvalue": float(once.pvalue),
        }
    return out


# ---------------------------------------------------------------------------------------------
# part 3: detection delays
# ---------------------------------------------------------------------------------------------
def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


def scenario_stream(name, seed, n, models, change=None):
    """``(y, p, change, multiclass)``: calibrated before ``change``, miscalibrated after.

    ``change=n`` gives a calibrated stream; ``multiclass`` is ``(labels, P)`` for the CIFAR-10
    scenarios (the top-label ``y, p`` come from them), else None.
    """
    rng = np.random.default_rng(seed)
    if change is None:
        change = int(rng.integers(int(0.2 * n), int(0.5 * n) + 1))
    t = np.arange(n)
    after = t >= change
    if name in ("bias_0.02", "bias_0.05", "temperature", "region_0.7_0.9"):
        truth = rng.beta(2, 2, size=n)
        p = truth.copy()
        if name.startswith("bias"):
            p[after] = np.clip(truth[after] + float(name.split("_")[1]), 0, 1)
        elif name == "temperature":
            T = 1.0 + (t[after] - change) / max(1, n - change)
            p[after] = _sigmoid(T * _logit(truth[after]))
        else:
            inside = after & (p > 0.7) & (p <= 0.9)
            truth[inside] = p[inside] - 0.1
        y = (rng.uniform(size=n) < truth).astype(np.int8)
        return y, p, change, None
    if name == "prior_shift":
        P = models[PRIOR_MODEL][0]
        base = P.mean(axis=0)
        share = np.where(after, base[0] + (0.30 - base[0]) * (t - change) / max(1, n - change), base[0])
        # label shift: y from the prior of the row, then the image from p(x | y) ~ P[x, y]
        rest = base[1:] / base[1:].sum()
        u = rng.uniform(size=n)
        other = 1 + np.searchsorted(np.cumsum(rest), rng.uniform(size=n) * (1 - 1e-12))
        y_cls = np.where(u < share, 0, other)
        cols = P / P.sum(axis=0, keepdims=True)
        cum = np.cumsum(cols, axis=0)
        x = np.empty(n, dtype=np.intp)
        for c in range(10):
            rows = np.flatnonzero(y_cls == c)
            x[rows] = np.minimum(
                np.searchsorted(cum[:, c], rng.uniform(size=rows.size) * cum[-1, c]), P.shape[0] - 1
            )
        Px = P[x]
        return (Px.argmax(axis=1) == y_cls).astype(np.int8), Px.max(axis=1), change, (y_cls, Px)
    if name == "model_swap":
        A, B = models[SWAP_FROM][0], models[SWAP_TO][0]
        x = rng.integers(0, A.shape[0], size=n)
        cum = np.cumsum(A[x], axis=1)
        y_cls = np.minimum((cum < rng.uniform(size=(n, 1)) * cum[:, -1:]).sum(axis=1), 9)
        Pr = np.where(after[:, None], B[x], A[x])
        return (Pr.argmax(axis=1) == y_cls).astype(np.int8), Pr.max(axis=1), change, (y_cls, Pr)
    raise ValueError(name)


DELAY_DETECTORS = (
    "skcal_test",
    "skcal_test_product",
    "skcal_test_classwise",
    "skcal_detect_horizon",
    "skcal_detect_arl",
    "adwin_default",
    "adwin_tuned",
    "ph_default",
    "ph_tuned",
    "kswin_default",
    "kswin_tuned",
    "test_repeated_0.05",
    "test_bonferroni",
    "ece_gt_0.05",
    "ece_tuned",
)


def _tune_task(kind, seeds, n, models, grid):
    out = []
    for s in seeds:
        y, p, _, mc = scenario_stream(kind, s, n, models, change=n)
        x = (y - p).astype(np.float64)
        row = {"ece": max(window_checks(y, p, s, 0)[1])}
        row["skcal"] = run_stream(
            y, p, n_blocks=n // 1000, peers=False, kswin=False, tests=False, seed=s, multiclass=mc
        )
        if grid:
            row["adwin"] = [river_alarm("adwin", x, d) for d in ADWIN_GRID]
            row["ph"] = [river_alarm("ph", x, h) for h in PH_GRID]
        out.append(row)
    return out


def tune(args, models, parallel):
    """Peer settings with a 5% false-alarm rate over the horizon, on calibrated streams."""
    groups = {"synthetic": "bias_0.02", "cifar_prior": "prior_shift", "cifar_swap": "model_swap"}
    out = {}
    for group, kind in groups.items():
        if kind != "bias_0.02" and not models:
            continue
        seeds = [50_000_000 + 1000 * len(out) + i for i in range(args.tune_streams)]
        chunks = [seeds[i : i + 10] for i in range(0, len(seeds), 10)]
        rows = [
            r
            for c in parallel(
                delayed(_tune_task)(kind, c, args.null_rows, models, args.peers) for c in chunks
            )
            for r in c
        ]
        entry = {"streams": len(rows), "ece": float(np.quantile([r["ece"] for r in rows], 0.95))}
        entry["skcal_false_alarms"] = {
            d: rate([r["skcal"][d] for r in rows])
            for d in (
                "skcal_test",
                "skcal_test_product",
                "skcal_detect_horizon",
                "skcal_detect_arl",
                "skcal_test_classwise",
            )
            if d in rows[0]["skcal"]
        }
        if args.peers:
            far_a = [np.mean([r["adwin"][i] is not None for r in rows]) for i in range(len(ADWIN_GRID))]
            far_p = [np.mean([r["ph"][i] is not None for r in rows]) for i in range(len(PH_GRID))]
            ia = next((i for i, f in enumerate(far_a) if f <= ALPHA), len(ADWIN_GRID) - 1)
            ip = next((i for i, f in enumerate(far_p) if f <= ALPHA), len(PH_GRID) - 1)
            entry.update(
                adwin=ADWIN_GRID[ia],
                ph=PH_GRID[ip],
                adwin_grid={str(d): float(f) for d, f in zip(ADWIN_GRID, far_a, strict=True)},
                ph_grid={str(h): float(f) for h, f in zip(PH_GRID, far_p, strict=True)},
            )
        out[group] = entry
        print(f"[tune] {group}: {entry}", flush=True)
    return out


def _delay_task(name, seeds, n, models, tuned, peers, kswin_upto, tests_upto, block_size):
    out = []
    for s in seeds:
        y, p, change, mc = scenario_stream(name, s, n, models)
        i = s % 1000
        r = run_stream(
            y,
            p,
            n_blocks=n // block_size,
            peers=peers,
            kswin=peers and i < kswin_upto,
            tests=i < tests_upto,
            seed=s,
            tuned=tuned,
            block_size=block_size,
            multiclass=mc,
        )
        r["change"] = change
        out.append(r)
    return out


def summarise_delays(streams, det):
    rows = [s for s in streams if det in s]
    if not rows:
        return None
    early = [s for s in rows if s[det] is not None and s[det] <= s["change"]]
    valid = [s for s in rows if not (s[det] is not None and s[det] <= s["change"])]
    delays = np.array([np.inf if s[det] is None else s[det] - s["change"] for s in valid])
    detected = np.isfinite(delays)
    out = {
        "streams": len(rows),
        "false_alarms_before_change": len(early),
        "detected": int(detected.sum()),
        "missed": int((~detected).sum()),
    }
    if delays.size:
        with np.errstate(invalid="ignore"):  # missed streams count as an infinite delay
            med, p90 = np.quantile(delays, 0.5), np.quantile(delays, 0.9)
        out["median_delay"] = None if not np.isfinite(med) else float(med)
        out["p90_delay"] = None if not np.isfinite(p90) else float(p90)
    return out


def location_error(streams, det):
    err = [
        abs(s[f"{det}_change_at"] - s["change"])
        for s in streams
        if s[det] is not None and s[det] > s["change"] and s[f"{det}_change_at"] is not None
    ]
    if not err:
        return None
    return {
        "streams": len(err),
        "median": float(np.median(err)),
        "p90": float(np.quantile(err, 0.9)),
        "mean": float(np.mean(err)),
    }


def delay_part(args, models, tuned, parallel):
    out = {}
    for k, name in enumerate(SCENARIOS):
        if name in ("prior_shift", "model_swap") and not models:
            continue
        group = (
            "synthetic"
            if name not in ("prior_shift", "model_swap")
            else ("cifar_prior" if name == "prior_shift" else "cifar_swap")
        )
        settings = tuned.get(group)
        seeds = [70_000_000 + 1000 * k + i for i in range(args.delay_streams)]
        chunks = [seeds[i : i + 10] for i in range(0, len(seeds), 10)]
        runs = parallel(
            delayed(_delay_task)(
                name,
                c,
                args.null_rows,
                models,
                settings,
                args.peers,
                args.kswin_delay_streams,
                args.test_streams_delay,
                args.block_size,
            )
            for c in chunks
        )
        streams = [r for c in runs for r in c]
        entry = {"tuned_settings": settings, "detectors": {}}
        for det in DELAY_DETECTORS:
            s = summarise_delays(streams, det)
            if s is not None:
                entry["detectors"][det] = s
        entry["change_location"] = {
            d: location_error(streams, d) for d in ("skcal_test", "skcal_detect_horizon")
        }
        out[name] = entry
        print(
            f"[delay] {name}: "
            + ", ".join(f"{d} {v.get('median_delay')}" for d, v in entry["detectors"].items()),
            flush=True,
        )
    return out


# ---------------------------------------------------------------------------------------------
# part: the memory of the detector's bets
# ---------------------------------------------------------------------------------------------
MEMORIES = (1, 2, 5, 10, 20, None)


def _memory_task(name, seeds, n, change):
    out = []
    for s in seeds:
        y, p, ch, _ = scenario_stream(name, s, n, {}, change=change)
        row = {"change": ch}
        for mem in MEMORIES:
            m = CalibrationMonitor(mode="detect", false_alarm_rows=(n, ALPHA), memory=mem).update(y, p)
            row[str(mem)] = m.alarm_at_
        out.append(row)
    return out


def memory_part(args, parallel):
    """Delay and false alarms of ``mode="detect"`` (horizon level) for each bet memory."""
    out = {}
    n = args.null_rows
    for name, change in (("bias_0.05", None), ("bias_0.02", None), ("calibrated", n)):
        kind = "bias_0.05" if name == "calibrated" else name
        seeds = [90_000_000 + 1000 * len(out) + i for i in range(args.memory_streams)]
        chunks = [seeds[i : i + 10] for i in range(0, len(seeds), 10)]
        streams = [r for c in parallel(delayed(_memory_task)(kind, c, n, change) for c in chunks) for r in c]
        if name == "calibrated":
            out[name] = {str(mem): rate([s[str(mem)] for s in streams]) for mem in MEMORIES}
        else:
            out[name] = {str(mem): summarise_delays(streams, str(mem)) for mem in MEMORIES}
    print(f"[memory] {out}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# part 4: speed
# ---------------------------------------------------------------------------------------------
def speed_part(args):
    n = args.speed_rows
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = rng.uniform(size=n) < p
    ids = np.minimum((p * 16).astype(np.intp), 15)
    cases = {
        "bincount": lambda: np.bincount(ids, minlength=16),
        "bincount_weighted": lambda: np.bincount(ids, weights=p, minlength=16),
        "monitor_test": lambda: CalibrationMonitor().update(y, p),
        "monitor_detect": lambda: CalibrationMonitor(mode="detect").update(y, p),
        "monitor_test_block_10000": lambda: CalibrationMonitor(block_size=10_000).update(y, p),
    }
    times = {k: [] for k in cases}
    for _ in range(args.repeats):  # interleaved, so a disturbance hits every case alike
        for k, f in cases.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    best = {k: min(v) for k, v in times.items()}
    out = {
        "rows": n,
        "repeats": args.repeats,
        "timings": {
            "seconds_min": best,
            "seconds_median": {k: float(np.median(v)) for k, v in times.items()},
            "ratio_to_bincount_min": {k: best[k] / best["bincount"] for k in cases},
            "ratio_to_weighted_bincount_min": {k: best[k] / best["bincount_weighted"] for k in cases},
            "rows_per_second": {k: n / best[k] for k in cases},
        },
    }
    print(f"[speed] {out['timings']['ratio_to_bincount_min']}", flush=True)
    if args.scale_rows:
        out["scale"] = scale_run(args)
    return out


def scale_run(args):
    """``skcal monitor`` over a parquet folder of ``--scale-rows`` rows, in time order."""
    import pyarrow as pa  # pyarrow is in the parquet and test extras
    import pyarrow.parquet as pq

    n, per_file = args.scale_rows, min(args.scale_rows, 2_000_000)
    tmp = Path(tempfile.mkdtemp(prefix="skcal_monitor_scale_", dir=args.scratch))
    try:
        rng = np.random.default_rng(1)
        t_write = time.perf_counter()
        start = np.datetime64("2024-01-01T00:00:00", "ns")
        for k, s in enumerate(range(0, n, per_file)):
            m = min(per_file, n - s)
            p = rng.uniform(size=m)
            y = (rng.uniform(size=m) < p).astype(np.int8)
            ts = start + (np.arange(s, s + m, dtype=np.int64) * (31_536_000_000_000_000 // n)).astype(
                "timedelta64[ns]"
            )
            table = pa.table({"ts": ts, "y": y, "model": p})
            pq.write_table(table, tmp / f"part-{k:05d}.parquet", row_group_size=1 << 20)
        t_write = time.perf_counter() - t_write
        size = sum(f.stat().st_size for f in tmp.iterdir())
        t_read = time.perf_counter()
        rows = 0
        for f in sorted(tmp.iterdir()):
            for b in pq.ParquetFile(f).iter_batches(batch_size=1 << 20, columns=["ts", "y", "model"]):
                rows += b.num_rows
        t_read = time.perf_counter() - t_read
        state = tmp / "state.json"
        cmd = [
            sys.executable,
            "-m",
            "skcal",
            "monitor",
            str(tmp),
            "--time",
            "ts",
            "--out",
            str(tmp / "m.html"),
            "--state",
            str(state),
            "--block-size",
            str(args.scale_block_size),
            "-q",
        ]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        t_cli = time.perf_counter()
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        t_cli = time.perf_counter() - t_cli
        if run.returncode not in (0, 1):
            raise RuntimeError(run.stderr[-2000:])
        return {
            "rows": n,
            "files": len(list(tmp.glob("*.parquet"))),
            "block_size": args.scale_block_size,
            "exit_status": run.returncode,
            "status_line": run.stdout.strip(),
            "timings": {
                "bytes_on_disk": size,
                "state_bytes": state.stat().st_size,
                "write_seconds": t_write,
                "pyarrow_read_seconds": t_read,
                "cli_seconds": t_cli,
                "cli_rows_per_second": n / t_cli,
                "extrapolated_1e9_minutes": 1e9 / (n / t_cli) / 60,
            },
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# figure, main
# ---------------------------------------------------------------------------------------------
def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    null = result.get("null", {})
    delay = result.get("delay", {})
    fig, axes = plt.subplots(1, 2, figsize=(16, 5.5))
    ax = axes[0]
    keys = list(null)
    dets = [d for d in NULL_DETECTORS if any(d in null[k]["detectors"] for k in keys)]
    width = 0.8 / max(1, len(keys))
    for j, k in enumerate(keys):
        for i, d in enumerate(dets):
            e = null[k]["detectors"].get(d)
            if e is None:
                continue
            lo, hi = e["ci95"]
            ax.bar(i + j * width, e["rate"], width, color=f"C{j}", label=k if i == 0 else None)
            ax.plot([i + j * width] * 2, [lo, hi], color="k", lw=1)
    ax.axhline(ALPHA, color="k", ls="--", lw=0.8)
    ax.set_xticks(np.arange(len(dets)) + 0.4 - width / 2, dets, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("fraction of calibrated streams that ever alarm (95% CI)")
    ax.set_title("false alarms under the null")
    ax.legend(fontsize=8)
    ax = axes[1]
    dets = [d for d in DELAY_DETECTORS if any(d in delay[s]["detectors"] for s in delay)]
    for s in delay:
        med = [delay[s]["detectors"].get(d, {}).get("median_delay") for d in dets]
        ax.plot(range(len(dets)), [np.nan if m is None else m for m in med], "o-", label=s)
    ax.set_yscale("log")
    ax.set_xticks(range(len(dets)), dets, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("median detection delay (rows; missing: not detected / false alarm)")
    ax.set_title("detection delay after the change")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _fmt_rate(e):
    if e is None:
        return "-"
    lo, hi = e["ci95"]
    return f"{e['rate']:.3f} [{lo:.3f}, {hi:.3f}] ({e['alarms']}/{e['streams']})"


def _fmt_rows(v):
    return "-" if v is None else f"{v:,.0f}"


def tables(result):
    """The results page's tables (Markdown) from a stored result, so no number is retyped."""
    lines = []
    null = result.get("null", {})
    if null:
        keys = list(null)
        heads = [f"{k.replace('_', ' ')} ({null[k]['rows']:,} rows)" for k in keys]
        lines.append("| detector | " + " | ".join(heads) + " |")
        lines.append("|---|" + "---|" * len(keys))
        for det in NULL_DETECTORS:
            if any(det in null[k]["detectors"] for k in keys):
                cells = [_fmt_rate(null[k]["detectors"].get(det)) for k in keys]
                lines.append(f"| {det} | " + " | ".join(cells) + " |")
        lines.append("")
    tuned = result.get("tuned", {})
    if tuned:
        lines.append(
            "| calibrated streams of | skcal_test | skcal_test_product | skcal_detect_horizon | "
            "skcal_test_classwise | ADWIN delta | PH threshold | ECE threshold |"
        )
        lines.append("|---|---|---|---|---|---|---|---|")
        for g, e in tuned.items():
            far = e["skcal_false_alarms"]
            lines.append(
                f"| {g} ({e['streams']} x {result['provenance']['config']['null_rows']:,} rows) | "
                + " | ".join(
                    _fmt_rate(far.get(d))
                    for d in (
                        "skcal_test",
                        "skcal_test_product",
                        "skcal_detect_horizon",
                        "skcal_test_classwise",
                    )
                )
                + f" | {e.get('adwin', '-')} | {e.get('ph', '-')} | {e['ece']:.4f} |"
            )
        lines.append("")
    delay = result.get("delay", {})
    if delay:
        for name, e in delay.items():
            lines.append(f"**{name}**")
            lines.append("")
            lines.append(
                "| detector | streams | false alarms before the change | detected | missed | "
                "median delay | 90th percentile |"
            )
            lines.append("|---|---:|---:|---:|---:|---:|---:|")
            for det, d in e["detectors"].items():
                lines.append(
                    f"| {det} | {d['streams']} | {d['false_alarms_before_change']} | {d['detected']} | "
                    f"{d['missed']} | {_fmt_rows(d.get('median_delay'))} | {_fmt_rows(d.get('p90_delay'))} |"
                )
            loc = e["change_location"]
            parts = [
                f"{k}: median {v['median']:,.0f}, 90th percentile {v['p90']:,.0f} rows ({v['streams']} "
                "streams)"
                for k, v in loc.items()
                if v
            ]
            if parts:
                lines.append("")
                lines.append("Change-location error |change_at_ - change|: " + "; ".join(parts) + ".")
            lines.append("")
    real = result.get("real", {})
    if real:
        lines.append(
            "| model | accuracy | ECE (15 bins) | mean residual | alarm at row | estimated change | "
            "anytime p-value | one-off test p-value |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, v in real.items():
            lines.append(
                f"| {name} | {v['accuracy']:.4f} | {v['ece_15']:.4f} | {v['mean_residual']:+.4f} | "
                f"{_fmt_rows(v['alarm_at'])} | {_fmt_rows(v['change_at'])} | {v['pvalue']:.2g} | "
                f"{v['calibration_test_pvalue']:.3g} |"
            )
        lines.append("")
    memory = result.get("memory", {})
    if memory:
        mems = list(memory["calibrated"])
        lines.append(
            "| bet memory (blocks) | " + " | ".join("all" if m == "None" else m for m in mems) + " |"
        )
        lines.append("|---|" + "---:|" * len(mems))
        for name in ("bias_0.05", "bias_0.02"):
            got = [memory[name][m] for m in mems]
            cells = [f"{_fmt_rows(g.get('median_delay'))} / {_fmt_rows(g.get('p90_delay'))}" for g in got]
            lines.append(f"| {name}: median / 90th percentile delay | " + " | ".join(cells) + " |")
        lines.append(
            "| calibrated: false alarms | "
            + " | ".join(_fmt_rate(memory["calibrated"][m]) for m in mems)
            + " |"
        )
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = harness_parser(
        __file__, __doc__, quick="smoke-test sizes (CI), no river", n_jobs="joblib workers over streams"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="multiclass_logits folder")
    parser.add_argument("--parts", default="null,real,delay,memory,speed")
    parser.add_argument("--block-size", type=int, default=1000)
    parser.add_argument("--null-streams", type=int, default=1000)
    parser.add_argument("--null-rows", type=int, default=100_000)
    parser.add_argument("--long-streams", type=int, default=100)
    parser.add_argument("--long-rows", type=int, default=1_000_000)
    parser.add_argument("--kswin-streams", type=int, default=10)
    parser.add_argument("--test-streams", type=int, default=300)
    parser.add_argument("--long-test-streams", type=int, default=30)
    parser.add_argument("--tune-streams", type=int, default=200)
    parser.add_argument("--delay-streams", type=int, default=200)
    parser.add_argument("--kswin-delay-streams", type=int, default=5)
    parser.add_argument("--test-streams-delay", type=int, default=100)
    parser.add_argument("--memory-streams", type=int, default=200)
    parser.add_argument("--speed-rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--scale-rows", type=int, default=100_000_000)
    parser.add_argument("--scale-block-size", type=int, default=100_000)
    parser.add_argument("--scratch", default=None, help="folder for the scale run's parquet files")
    parser.add_argument("--no-peers", dest="peers", action="store_false", help="leave river's detectors out")
    parser.add_argument("--tables", type=Path, default=None, help="print the Markdown tables of a result")
    args = harness.parse_args(parser, argv)
    if args.tables is not None:
        print(tables(json.loads(args.tables.read_text())))
        return None
    if args.quick:
        args.peers = False
        args.null_streams, args.null_rows, args.long_streams, args.long_rows = 40, 20_000, 4, 100_000
        args.test_streams, args.long_test_streams, args.tune_streams = 10, 2, 20
        args.delay_streams, args.test_streams_delay, args.memory_streams = 10, 4, 10
        args.speed_rows, args.repeats, args.scale_rows, args.scale_block_size = (
            1_000_000,
            3,
            1_000_000,
            10_000,
        )
    if args.peers:
        if importlib.util.find_spec("river") is None:
            parser.error(
                'river is not installed (the bench extra: pip install -e ".[bench]"); or pass --no-peers'
            )
    clock = Clock()
    parts = set(args.parts.split(","))
    models = load_cifar10(args.data) if args.data.is_dir() else {}
    confidences = [P.max(axis=1) for P, _ in models.values()]
    sources = (["cifar"] if models else ["beta"]) + ["adversarial"]
    result = {"alpha": ALPHA, "block_size": args.block_size, "p_sources": sources, "models": list(models)}
    with Parallel(n_jobs=args.n_jobs) as par:
        if "null" in parts:
            result["null"] = null_part(args, confidences, sources, par)
        if "real" in parts and models:
            result["real"] = real_part(models)
        if "delay" in parts:
            result["tuned"] = tune(args, models, par)
            result["delay"] = delay_part(args, models, result["tuned"], par)
        if "memory" in parts:
            result["memory"] = memory_part(args, par)
    if "speed" in parts:
        result["speed"] = speed_part(args)
    stem = "monitor_quick" if args.quick else "monitor"
    args.out.mkdir(parents=True, exist_ok=True)
    result["provenance"] = provenance(__file__, argv, config=args_config(args), clock=clock)
    write_json(args.out / f"{stem}.json", result)
    if "null" in parts or "delay" in parts:
        plot(result, args.out / f"{stem}.png")
    print(json.dumps({k: v for k, v in result.items() if k != "provenance"}, default=str)[:3000])
    return result


if __name__ == "__main__":
    main()
