"""Calibration monitoring over time: the tolerance test, its lower bound, change detection, speed.

Parts (``--parts``, default all). Every rate comes with its Clopper-Pearson 95% interval.

* ``null``: false alarms of the tolerance test. Streams of ``--null-rows`` rows (default 1e5,
  ``--null-streams`` of them) and of ``--long-rows`` (1e6, ``--long-streams``) whose l1
  calibration error ``E|E[y | p] - p|`` is exactly 0, ``eps / 2`` and ``eps``, for the tolerances
  ``eps`` of ``--tolerances`` (0.01, 0.02): ``p = 0.1 + 0.8 B``, ``B ~ Beta(2, 2)``, and the truth
  ``p - ce`` (``bias``), ``p - ce sign(p - 1/2)`` (``overconfident``, a mean residual of 0), or
  ``p`` chosen from the past labels by an adaptive forecaster (``adversarial``: in groups of 10
  rows, half the time the centre of the bin whose past residual is largest in absolute value,
  otherwise near the recent label frequency; the truth ``p - ce sign(p - 1/2)``, so the error is
  ``ce`` at every step whatever ``p`` does). The share of streams on which
  ``CalibrationMonitor(tolerance=eps)`` ever alarms (the null holds: at most ``alpha = 0.05``), and
  the same for ``mode="detect"`` guaranteeing a 5% false-alarm probability over the stream's
  horizon (``false_alarm_rows=(rows, 0.05)``).
* ``coverage``: streams of the same two shapes with error ``ce`` in ``--coverage-errors`` at
  tolerance 0: the share on which ``calibration_error_lcb_`` ever exceeds ``ce`` (at most
  ``alpha``), and the bound at the end of the stream (how informative it is).
* ``delay``: detection delay (rows after the change; median and 90th percentile) over
  ``--delay-streams`` streams of ``--delay-rows`` rows per scenario, the change at a row drawn
  uniformly in [20%, 50%] of the stream, calibrated before it (``p = truth ~ Beta(2, 2)``): a bias
  ``p = clip(truth + 0.02)`` and ``+ 0.05``; over-confidence ``p = sigmoid(1.5 logit(truth))``;
  under-confidence ``p = sigmoid(logit(truth) / 1.5)``; miscalibration confined to ``p`` in
  [0.7, 0.9] (the truth is ``p - 0.1`` there); a class-prior shift of real CIFAR-10 outputs
  (``--data``; labels drawn from a model's own probabilities, so it is calibrated, until one
  class's share grows linearly from 10% to 30% by label-shift resampling; skipped with a reason
  without the data). Detectors: skcal's e-detector at its default (``false_alarm_rows=None``: 1e7
  rows silent with probability 0.95) and at the streams' horizon (``(rows, 0.05)``), its test
  at tolerance 0 and at ``DEFAULT_TOLERANCE``, and river's ADWIN and Page-Hinkley on the residual
  ``y - p`` at their defaults and *matched*: the loosest setting of a grid whose false-alarm rate
  on ``--tune-streams`` calibrated streams of the same kind is at most the horizon detector's
  (measured on the same streams). The change-location error ``|change_at_ - change|``.
* ``horizon``: false alarms over ``--horizon-rows`` rows (1e7; ``--horizon-streams`` calibrated
  streams) of skcal's default detector and of ADWIN at its default and smaller ``delta``: the
  ``delta`` with a false-alarm rate at most skcal's over the default horizon is the one the
  ``delay`` part times as ``adwin_1e7``.
* ``tolerance``: the command line's default tolerance. Models near calibration (a temperature,
  a logit shift or a wiggle of the truth, ``p ~ Beta(2, 2)``; their smooth ECE on 1e6 rows,
  15-bin ECE and exact l1 error reported), those with a smooth ECE up to half the largest
  candidate, are run on ``--tolerance-streams`` streams of ``--tolerance-rows`` rows (1e7) at
  every candidate ``eps`` of ``--candidates``: the alarm rate of each model at each ``eps``. The
  default is the smallest candidate at which every *practically calibrated* model (smooth ECE at
  most ``PRACTICAL_SMECE``) alarms on at most ``alpha`` of its streams; the rule of the issue
  ("models with an error at most ``eps / 2`` stay silent") is reported too, and the delay of the
  test at ``eps`` on the ``delay`` part's bias streams (what a larger tolerance costs).
* ``real``: the 11 CIFAR-10 models' real labels (10,000 test rows in test order, top label): the
  lower bound, the alarms at tolerance 0 and at ``DEFAULT_TOLERANCE``, beside their ECE and smooth
  ECE.
* ``design`` (with ``delay`` and ``speed``): ``block_size`` 250, 500, 1000, 2000: delays of the
  horizon detector on the 0.05 and 0.02 bias and over-confidence, its false alarms on the tuning
  streams, and its throughput (the default's choice).
* ``speed``: one ``update`` over ``--speed-rows`` rows (1e7) against one ``np.bincount`` over
  them, side by side in rotated rounds (the medians' ratio; target: within 10x), for the test,
  the test at a tolerance, the detector and a miscalibrated stream (the lower bound's bisection
  runs on every block there).

Usage (from the repository root)::

    nice python -m benchmarks.monitor --n-jobs 2          # full (several hours on 2 cores)
    python -m benchmarks.monitor --quick                  # smoke (CI): small sizes, no river
    python -m benchmarks.monitor --tables benchmarks/results/monitor.json   # the page's tables

Writes ``monitor.json`` (with a ``"provenance"`` block) and ``monitor.png`` to ``--out``
(``monitor_quick.*`` with ``--quick``, the file ``benchmarks/verify.py`` compares; timings sit
under ``"timings"`` keys, which it does not compare). The quick mode leaves river out (it is in the
``bench`` extra, not the ``test`` one).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks import _harness as harness
from benchmarks._harness import REPO_ROOT as ROOT
from benchmarks._monitor_tables import tables
from skcal import binned_ece, smooth_ece
from skcal.monitor import DEFAULT_TOLERANCE, CalibrationMonitor

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multiclass_logits"
ALPHA = 0.05
GROUP = 10  # rows per adaptive step of the adversarial forecaster
PER_TASK = 10  # streams per joblib task (fixed, so the streams do not depend on --n-jobs)
ADWIN_GRID = (2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 1e-5, 1e-6, 1e-8)
PH_GRID = (50, 100, 200, 400, 800, 1600, 3200)
HORIZON_DELTAS = (2e-3, 2e-4, 2e-5, 2e-6)
SCENARIOS = ("bias_0.02", "bias_0.05", "overconfident", "underconfident", "region_0.7_0.9", "prior_shift")
SHAPES = ("bias", "overconfident", "adversarial")
PRIOR_MODEL = "cifar10_wide_resnet_brier"
BLOCK_SIZES = (250, 500, 1000, 2000)
#: Every part of the benchmark; ``--parts`` runs a subset, written beside the full result.
DEFAULT_PARTS = "null,coverage,horizon,delay,tolerance,real,design,speed"
TEMPERATURE = 1.5
#: A practically calibrated model's smooth ECE (issue 38's logistic model: 0.006): the default
#: tolerance is the smallest candidate at which every model at most this far off stays silent.
PRACTICAL_SMECE = 0.0075


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


def rate(alarms):
    """A false-alarm (or miss) rate with its Clopper-Pearson 95% interval."""
    hits = [bool(a) for a in alarms]
    k, n = int(sum(hits)), len(hits)
    lo, hi = harness.binomial_interval(k, n, 0.95) if n else (None, None)
    return {"streams": n, "alarms": k, "rate": k / n if n else None, "ci95": [float(lo), float(hi)]}


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


# ---------------------------------------------------------------------------------------------
# streams
# ---------------------------------------------------------------------------------------------
def _offset(p, ce, shape):
    """The truth of a stream with l1 calibration error ``ce`` (exact for ``p`` in [0.1, 0.9])."""
    if shape == "bias":
        return p - ce
    return p - ce * np.sign(p - 0.5)


def null_stream(shape, ce, seed, n):
    """``(y, p)`` with l1 error exactly ``ce``; ``p`` i.i.d. (``bias``, ``overconfident``)."""
    rng = np.random.default_rng(seed)
    p = 0.1 + 0.8 * rng.beta(2, 2, size=n)
    return (rng.uniform(size=n) < _offset(p, ce, shape)).astype(np.int8), p


def adversarial_streams(seeds, n, ce, n_bins=16):
    """Streams whose ``p_t`` is chosen from the past labels; the truth ``p - ce sign(p - 1/2)``."""
    S = len(seeds)
    rng = np.random.default_rng(seeds[0] * 7919 + S)
    p = np.empty((S, n))
    y = np.empty((S, n), dtype=np.int8)
    resid = np.zeros((S, n_bins))
    freq = np.full(S, 0.5)
    rows = np.arange(S)
    for s in range(0, n, GROUP):
        e = min(s + GROUP, n)
        g = e - s
        hop = rng.uniform(size=S) < 0.5
        target = np.argmax(np.abs(resid), axis=1)
        centre = (target + rng.uniform(size=(g, S))) / n_bins
        chase = freq + rng.normal(0, 0.1, size=(g, S))
        pg = np.clip(np.where(hop, centre, chase).T, 0.1, 0.9)
        yg = (rng.uniform(size=(S, g)) < _offset(pg, ce, "overconfident")).astype(np.int8)
        p[:, s:e], y[:, s:e] = pg, yg
        bins = np.minimum((pg * n_bins).astype(np.intp), n_bins - 1)
        np.add.at(resid, (np.repeat(rows, g), bins.ravel()), (yg - pg).ravel())
        freq = 0.99**g * freq + yg @ (0.01 * 0.99 ** np.arange(g - 1, -1, -1))  # 0.99-decay per row
    return list(zip(y, p, strict=True))


def calibrated(seed, n):
    """A calibrated stream of the ``delay`` scenarios' kind: ``p ~ Beta(2, 2)``, ``y ~ Bernoulli(p)``."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    return (rng.uniform(size=n) < p).astype(np.int8), p


def scenario_stream(name, seed, n, models, change=None):
    """``(y, p, change, multiclass)``: calibrated before ``change``, miscalibrated after.

    ``change=n`` gives a calibrated stream; ``multiclass`` is ``(labels, P)`` for the CIFAR-10
    scenario (the top-label ``y, p`` come from them), else None.
    """
    rng = np.random.default_rng(seed)
    if change is None:
        change = int(rng.integers(int(0.2 * n), int(0.5 * n) + 1))
    t = np.arange(n)
    after = t >= change
    if name != "prior_shift":
        truth = rng.beta(2, 2, size=n)
        p = truth.copy()
        if name.startswith("bias"):
            p[after] = np.clip(truth[after] + float(name.split("_")[1]), 0, 1)
        elif name == "overconfident":
            p[after] = _sigmoid(TEMPERATURE * _logit(truth[after]))
        elif name == "underconfident":
            p[after] = _sigmoid(_logit(truth[after]) / TEMPERATURE)
        elif name == "region_0.7_0.9":
            inside = after & (p > 0.7) & (p <= 0.9)
            truth[inside] = p[inside] - 0.1
        else:
            raise ValueError(name)
        y = (rng.uniform(size=n) < truth).astype(np.int8)
        return y, p, change, None
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


def scenario_error(name):
    """The l1 calibration error after the change (numerical quadrature over ``truth ~ Beta(2, 2)``)."""
    g = (np.arange(200_000) + 0.5) / 200_000
    w = 6 * g * (1 - g) / 200_000  # the Beta(2, 2) density
    if name.startswith("bias"):
        p = np.clip(g + float(name.split("_")[1]), 0, 1)
        return float(np.sum(w * np.abs(g - p)))
    if name in ("overconfident", "underconfident"):
        t = TEMPERATURE if name == "overconfident" else 1 / TEMPERATURE
        return float(np.sum(w * np.abs(g - _sigmoid(t * _logit(g)))))
    if name == "region_0.7_0.9":
        return float(np.sum(w * ((g > 0.7) & (g <= 0.9)) * 0.1))
    return None


# ---------------------------------------------------------------------------------------------
# detectors
# ---------------------------------------------------------------------------------------------
def river_alarm(kind, x, param):
    """The first row (1-based) at which river's ``kind`` detector fires on ``x``, or None."""
    from river import drift  # river is in the bench extra only

    if kind == "adwin":
        d = drift.ADWIN() if param is None else drift.ADWIN(delta=param)
    else:
        d = drift.PageHinkley() if param is None else drift.PageHinkley(threshold=param)
    for i, v in enumerate(x.tolist()):
        d.update(v)
        if d.drift_detected:
            return i + 1
    return None


def skcal_runs(y, p, n, multiclass=None, tolerances=(), block_sizes=()):
    """skcal's detectors on one stream: ``{name: first alarm row or None}`` (and change estimates)."""
    out = {}
    horizon = (n, ALPHA)
    d = CalibrationMonitor(mode="detect").update(y, p)
    out["skcal_detect"], out["skcal_detect_change_at"] = d.alarm_at_, d.change_at_
    h = CalibrationMonitor(mode="detect", false_alarm_rows=horizon).update(y, p)
    out["skcal_detect_horizon"], out["skcal_detect_horizon_change_at"] = h.alarm_at_, h.change_at_
    t = CalibrationMonitor().update(y, p)
    out["skcal_test"], out["skcal_test_change_at"] = t.alarm_at_, t.change_at_
    out["skcal_test_tol"] = CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(y, p).alarm_at_
    if multiclass is not None:
        labels, P = multiclass
        out["skcal_detect_classwise"] = (
            CalibrationMonitor(mode="detect", multiclass="classwise").update(labels, P).alarm_at_
        )
        out["skcal_detect_horizon_classwise"] = (
            CalibrationMonitor(mode="detect", multiclass="classwise", false_alarm_rows=horizon)
            .update(labels, P)
            .alarm_at_
        )
        out["skcal_test_classwise"] = CalibrationMonitor(multiclass="classwise").update(labels, P).alarm_at_
    for eps in tolerances:
        out[f"skcal_test_tol_{eps:g}"] = CalibrationMonitor(tolerance=eps).update(y, p).alarm_at_
    for B in block_sizes:
        out[f"skcal_detect_horizon_b{B}"] = (
            CalibrationMonitor(mode="detect", block_size=B, false_alarm_rows=horizon).update(y, p).alarm_at_
        )
    return out


# ---------------------------------------------------------------------------------------------
# part: false alarms of the tolerance test
# ---------------------------------------------------------------------------------------------
def _null_task(shape, ce, eps, seeds, n):
    streams = (
        adversarial_streams(seeds, n, ce)
        if shape == "adversarial"
        else [null_stream(shape, ce, s, n) for s in seeds]
    )
    out = []
    for y, p in streams:
        t = CalibrationMonitor(tolerance=eps).update(y, p)
        d = CalibrationMonitor(tolerance=eps, mode="detect", false_alarm_rows=(n, ALPHA)).update(y, p)
        lcb = t.calibration_error_lcb_  # non-decreasing: above the error at the end iff ever
        out.append({"test": t.alarm_, "detect": d.alarm_, "lcb_above": lcb > ce, "lcb": lcb})
    return out


def null_part(args, parallel):
    out = {}
    sizes = [("short", args.null_streams, args.null_rows), ("long", args.long_streams, args.long_rows)]
    for k_eps, eps in enumerate(args.tolerances):
        for k_ce, frac in enumerate((0.0, 0.5, 1.0)):
            ce = frac * eps
            for k_shape, shape in enumerate(SHAPES):
                for size, n_streams, n in sizes:
                    if n_streams == 0:
                        continue
                    base = (
                        10_000_000 * (1 + k_eps)
                        + 1_000_000 * k_ce
                        + 100_000 * k_shape
                        + 50_000 * (size == "long")
                    )
                    seeds = [base + i for i in range(n_streams)]
                    chunks = [seeds[i : i + PER_TASK] for i in range(0, n_streams, PER_TASK)]
                    runs = [
                        r
                        for c in parallel(delayed(_null_task)(shape, ce, eps, c, n) for c in chunks)
                        for r in c
                    ]
                    key = f"eps_{eps:g}/ce_{ce:g}/{shape}/{size}"
                    out[key] = {
                        "tolerance": eps,
                        "calibration_error": ce,
                        "shape": shape,
                        "rows": n,
                        "test": rate([r["test"] for r in runs]),
                        "detect_horizon": rate([r["detect"] for r in runs]),
                        "lcb_above_error": rate([r["lcb_above"] for r in runs]),
                        "lcb_median_end": float(np.median([r["lcb"] for r in runs])),
                    }
                    print(f"[null] {key}: test {out[key]['test']['rate']:.3f}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# part: coverage of the lower bound
# ---------------------------------------------------------------------------------------------
def _coverage_task(shape, ce, seeds, n):
    out = []
    for s in seeds:
        y, p = null_stream(shape, ce, s, n)
        lcb = CalibrationMonitor().update(y, p).calibration_error_lcb_  # non-decreasing
        out.append({"above": lcb > ce, "end": lcb})
    return out


def coverage_part(args, parallel):
    out = {}
    for k_ce, ce in enumerate(args.coverage_errors):
        for k_shape, shape in enumerate(("bias", "overconfident")):
            seeds = [60_000_000 + 100_000 * k_ce + 10_000 * k_shape + i for i in range(args.coverage_streams)]
            chunks = [seeds[i : i + PER_TASK] for i in range(0, len(seeds), PER_TASK)]
            runs = [
                r
                for c in parallel(delayed(_coverage_task)(shape, ce, c, args.null_rows) for c in chunks)
                for r in c
            ]
            ends = np.array([r["end"] for r in runs])
            out[f"ce_{ce:g}/{shape}"] = {
                "calibration_error": ce,
                "shape": shape,
                "rows": args.null_rows,
                "lcb_ever_above": rate([r["above"] for r in runs]),
                "lcb_end_median": float(np.median(ends)),
                "lcb_end_q10": float(np.quantile(ends, 0.1)),
                "lcb_end_q90": float(np.quantile(ends, 0.9)),
            }
            print(
                f"[coverage] ce {ce:g} {shape}: {out[f'ce_{ce:g}/{shape}']['lcb_ever_above']['rate']:.3f}",
                flush=True,
            )
    return out


# ---------------------------------------------------------------------------------------------
# part: detection delays
# ---------------------------------------------------------------------------------------------
def _tune_task(kind, seeds, n, models, peers, block_sizes):
    out = []
    for s in seeds:
        y, p, _, mc = scenario_stream(kind, s, n, models, change=n)
        row = {"skcal": skcal_runs(y, p, n, multiclass=mc, block_sizes=block_sizes)}
        if peers:
            x = (y - p).astype(np.float64)
            row["adwin"] = [river_alarm("adwin", x, d) for d in ADWIN_GRID]
            row["ph"] = [river_alarm("ph", x, h) for h in PH_GRID]
        out.append(row)
    return out


SKCAL_DETECTORS = (
    "skcal_detect",
    "skcal_detect_horizon",
    "skcal_test",
    "skcal_test_tol",
    "skcal_detect_classwise",
    "skcal_detect_horizon_classwise",
    "skcal_test_classwise",
)


def tune(args, models, parallel, block_sizes=()):
    """False alarms on calibrated streams; the peers' settings matched to the horizon detector's."""
    groups = {"synthetic": "bias_0.05"}
    if models:
        groups["cifar_prior"] = "prior_shift"
    out = {}
    for k, (group, kind) in enumerate(groups.items()):
        seeds = [80_000_000 + 1_000_000 * k + i for i in range(args.tune_streams)]
        chunks = [seeds[i : i + PER_TASK] for i in range(0, len(seeds), PER_TASK)]
        rows = [
            r
            for c in parallel(
                delayed(_tune_task)(
                    kind, c, args.delay_rows, models, args.peers, block_sizes if k == 0 else ()
                )
                for c in chunks
            )
            for r in c
        ]
        entry = {"streams": len(rows), "rows": args.delay_rows}
        names = [*SKCAL_DETECTORS, *(f"skcal_detect_horizon_b{B}" for B in block_sizes)]
        entry["skcal_false_alarms"] = {
            d: rate([r["skcal"][d] for r in rows]) for d in names if d in rows[0]["skcal"]
        }
        target = entry["skcal_false_alarms"]["skcal_detect_horizon"]["rate"]
        if args.peers:
            far_a = [
                float(np.mean([r["adwin"][i] is not None for r in rows])) for i in range(len(ADWIN_GRID))
            ]
            far_p = [float(np.mean([r["ph"][i] is not None for r in rows])) for i in range(len(PH_GRID))]
            ia = next((i for i, f in enumerate(far_a) if f <= target), len(ADWIN_GRID) - 1)
            ip = next((i for i, f in enumerate(far_p) if f <= target), len(PH_GRID) - 1)
            entry.update(
                target_rate=target,
                adwin=ADWIN_GRID[ia],
                ph=PH_GRID[ip],
                adwin_grid={str(d): f for d, f in zip(ADWIN_GRID, far_a, strict=True)},
                ph_grid={str(h): f for h, f in zip(PH_GRID, far_p, strict=True)},
                adwin_default_rate=rate([r["adwin"][0] for r in rows]),
                ph_default_rate=rate([r["ph"][0] for r in rows]),  # river's default threshold: 50
            )
        out[group] = entry
        print(f"[tune] {group}: {json.dumps(entry)[:400]}", flush=True)
    return out


def _delay_task(name, seeds, n, models, settings, peers, tolerances, block_sizes):
    out = []
    for s in seeds:
        y, p, change, mc = scenario_stream(name, s, n, models)
        r = skcal_runs(y, p, n, multiclass=mc, tolerances=tolerances, block_sizes=block_sizes)
        if peers:
            x = (y - p).astype(np.float64)
            r["adwin_default"] = river_alarm("adwin", x, None)
            r["ph_default"] = river_alarm("ph", x, None)
            if settings is not None:
                r["adwin_matched"] = river_alarm("adwin", x, settings["adwin"])
                r["ph_matched"] = river_alarm("ph", x, settings["ph"])
                if settings.get("adwin_1e7") is not None:
                    r["adwin_1e7"] = river_alarm("adwin", x, settings["adwin_1e7"])
        r["change"] = change
        out.append(r)
    return out


DELAY_DETECTORS = (
    *SKCAL_DETECTORS,
    "adwin_default",
    "adwin_matched",
    "adwin_1e7",
    "ph_default",
    "ph_matched",
)


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
        if s.get(det) is not None and s[det] > s["change"] and s.get(f"{det}_change_at") is not None
    ]
    if not err:
        return None
    return {"streams": len(err), "median": float(np.median(err)), "p90": float(np.quantile(err, 0.9))}


def delay_part(args, models, tuned, horizon, parallel, tolerances=(), block_sizes=()):
    out = {}
    for k, name in enumerate(SCENARIOS):
        if name == "prior_shift" and not models:
            out[name] = {"skipped": f"no CIFAR-10 outputs under {harness.repo_relative(args.data)}"}
            continue
        settings = dict(tuned.get("cifar_prior" if name == "prior_shift" else "synthetic", {}))
        if not settings.get("adwin"):
            settings = None
        elif horizon and name != "prior_shift":
            settings["adwin_1e7"] = horizon.get("adwin_matched")
        seeds = [90_000_000 + 1_000_000 * k + i for i in range(args.delay_streams)]
        chunks = [seeds[i : i + PER_TASK] for i in range(0, len(seeds), PER_TASK)]
        extra_tol = tolerances if name.startswith("bias") else ()
        extra_b = block_sizes if name in ("bias_0.02", "bias_0.05", "overconfident") else ()
        runs = parallel(
            delayed(_delay_task)(name, c, args.delay_rows, models, settings, args.peers, extra_tol, extra_b)
            for c in chunks
        )
        streams = [r for c in runs for r in c]
        dets = list(DELAY_DETECTORS) + [f"skcal_test_tol_{e:g}" for e in extra_tol]
        dets += [f"skcal_detect_horizon_b{B}" for B in extra_b]
        entry = {"calibration_error_after": scenario_error(name), "settings": settings, "detectors": {}}
        for det in dets:
            s = summarise_delays(streams, det)
            if s is not None:
                entry["detectors"][det] = s
        entry["change_location"] = {
            d: location_error(streams, d) for d in ("skcal_detect", "skcal_detect_horizon", "skcal_test")
        }
        out[name] = entry
        print(
            f"[delay] {name}: "
            + ", ".join(f"{d} {v.get('median_delay')}" for d, v in entry["detectors"].items()),
            flush=True,
        )
    return out


# ---------------------------------------------------------------------------------------------
# part: false alarms over a long horizon (skcal's default detector against ADWIN)
# ---------------------------------------------------------------------------------------------
def _horizon_task(seed, n, peers):
    y, p = calibrated(seed, n)
    row = {"skcal_detect": CalibrationMonitor(mode="detect").update(y, p).alarm_at_}
    if peers:
        x = (y - p).astype(np.float64)
        row["adwin"] = [river_alarm("adwin", x, d) for d in HORIZON_DELTAS]
    return row


def horizon_part(args, parallel):
    rows = parallel(
        delayed(_horizon_task)(70_000_000 + i, args.horizon_rows, args.peers)
        for i in range(args.horizon_streams)
    )
    out = {
        "rows": args.horizon_rows,
        "streams": len(rows),
        "skcal_detect": rate([r["skcal_detect"] for r in rows]),
    }
    if args.peers:
        out["adwin"] = {str(d): rate([r["adwin"][i] for r in rows]) for i, d in enumerate(HORIZON_DELTAS)}
        target = out["skcal_detect"]["rate"]
        match = next(
            (d for i, d in enumerate(HORIZON_DELTAS) if out["adwin"][str(d)]["rate"] <= target), None
        )
        out["adwin_matched"] = match
    print(f"[horizon] {json.dumps(out)[:600]}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# part: the default tolerance of the command line
# ---------------------------------------------------------------------------------------------
def tolerance_models():
    """``{name: truth(p)}``: models near calibration, of three shapes."""
    out = {}
    for t in (0.8, 0.9, 0.95, 1.05, 1.1, 1.25):
        out[f"temperature_{t:g}"] = lambda p, t=t: _sigmoid(_logit(p) / t)
    for b in (-0.2, -0.1, -0.05, 0.05, 0.1):
        out[f"logit_shift_{b:g}"] = lambda p, b=b: _sigmoid(_logit(p) + b)
    for a in (0.01, 0.02, 0.04):
        out[f"wiggle_{a:g}"] = lambda p, a=a: np.clip(p + a * np.sin(8 * np.pi * p), 0, 1)
    return out


def _model_measures(name, seed, n):
    truth = tolerance_models()[name]
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < truth(p)).astype(np.float64)
    g = (np.arange(200_000) + 0.5) / 200_000
    w = 6 * g * (1 - g) / 200_000
    return {
        "l1_error": float(np.sum(w * np.abs(truth(g) - g))),
        "smooth_ece": float(smooth_ece(y, p)),
        "ece_15": float(binned_ece(y, p, n_bins=15)),
    }


def _tolerance_task(name, seed, n, candidates):
    truth = tolerance_models()[name]
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < truth(p)).astype(np.int8)
    return {f"{eps:g}": CalibrationMonitor(tolerance=eps).update(y, p).alarm_at_ for eps in candidates}


def tolerance_part(args, parallel, delay):
    names = list(tolerance_models())
    measures = dict(
        zip(
            names,
            parallel(
                delayed(_model_measures)(nm, 40_000_000 + i, args.measure_rows) for i, nm in enumerate(names)
            ),
            strict=True,
        )
    )
    jobs = [
        (nm, 41_000_000 + 1000 * i + s)
        for i, nm in enumerate(names)
        for s in range(args.tolerance_streams)
        if measures[nm]["smooth_ece"] <= max(args.candidates) / 2
    ]
    runs = parallel(delayed(_tolerance_task)(nm, s, args.tolerance_rows, args.candidates) for nm, s in jobs)
    out = {
        "rows": args.tolerance_rows,
        "streams_per_model": args.tolerance_streams,
        "models": measures,
        "candidates": {},
    }
    for eps in args.candidates:
        key = f"{eps:g}"
        looks_calibrated = [nm for nm in names if measures[nm]["smooth_ece"] <= eps / 2]
        per_model = {
            nm: rate([r[key] for (m, _), r in zip(jobs, runs, strict=True) if m == nm])
            for nm in looks_calibrated
        }
        worst = max((v["rate"] for v in per_model.values()), default=0.0)
        every_model = {
            nm: rate([r[key] for (m, _), r in zip(jobs, runs, strict=True) if m == nm])
            for nm in dict.fromkeys(m for m, _ in jobs)
        }
        entry = {
            "models_with_smooth_ece_at_most_half": per_model,
            "worst_alarm_rate": worst,
            "alarm_rate_per_model": every_model,
        }
        for name in ("bias_0.02", "bias_0.05"):
            d = delay.get(name, {}).get("detectors", {}).get(f"skcal_test_tol_{eps:g}")
            if d is not None:
                entry[f"{name}_median_delay"] = d.get("median_delay")
                entry[f"{name}_missed"] = d["missed"]
        out["candidates"][key] = entry
    # the rule of the default: silent on models as good as a practically calibrated one
    practical = [
        nm for nm in dict.fromkeys(m for m, _ in jobs) if measures[nm]["smooth_ece"] <= PRACTICAL_SMECE
    ]
    out["practical_smooth_ece"] = PRACTICAL_SMECE
    out["practical_models"] = practical
    for eps in args.candidates:
        c = out["candidates"][f"{eps:g}"]
        c["worst_practical_alarm_rate"] = max(
            (c["alarm_rate_per_model"][nm]["rate"] for nm in practical), default=None
        )
    quiet = [
        eps
        for eps in args.candidates
        if practical and out["candidates"][f"{eps:g}"]["worst_practical_alarm_rate"] <= ALPHA
    ]
    out["smallest_quiet_tolerance"] = min(quiet) if quiet else None
    print(f"[tolerance] {json.dumps(out)[:800]}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# part: real labels
# ---------------------------------------------------------------------------------------------
def real_part(models):
    out = {}
    for name, (P, y) in models.items():
        conf, correct = P.max(axis=1), (P.argmax(axis=1) == y)
        exact = CalibrationMonitor().update(correct, conf)
        tol = CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(correct, conf)
        out[name] = {
            "rows": int(conf.shape[0]),
            "accuracy": float(correct.mean()),
            "ece_15": float(binned_ece(correct.astype(float), conf, n_bins=15)),
            "smooth_ece": float(smooth_ece(correct.astype(float), conf)),
            "mean_residual": float(np.mean(correct - conf)),
            "calibration_error_lcb": exact.calibration_error_lcb_,
            "alarm_at_tolerance_0": exact.alarm_at_,
            "alarm_at_default_tolerance": tol.alarm_at_,
        }
    return out


# ---------------------------------------------------------------------------------------------
# part: speed
# ---------------------------------------------------------------------------------------------
def speed_part(args, block_sizes=()):
    n = args.speed_rows
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = rng.uniform(size=n) < p
    y_bad = rng.uniform(size=n) < np.clip(p - 0.05, 0, 1)
    ids = np.minimum((p * 16).astype(np.intp), 15)
    funcs = {
        "monitor_test": lambda: CalibrationMonitor().update(y, p),
        "monitor_test_tolerance": lambda: CalibrationMonitor(tolerance=DEFAULT_TOLERANCE).update(y, p),
        "monitor_detect": lambda: CalibrationMonitor(mode="detect").update(y, p),
        "monitor_test_miscalibrated": lambda: CalibrationMonitor().update(y_bad, p),
    }
    for B in block_sizes:
        funcs[f"monitor_detect_b{B}"] = lambda B=B: CalibrationMonitor(mode="detect", block_size=B).update(
            y, p
        )
    timings, ratios = harness.against_floor(
        funcs, {"bincount": lambda: np.bincount(ids, minlength=16)}, rounds=args.repeats
    )
    out = {
        "rows": n,
        "rounds": args.repeats,
        "timings": {
            "seconds_median": {k: float(np.median(v)) for k, v in timings.times.items()},
            "ratio_to_bincount": {k.replace("_over_bincount", ""): v for k, v in ratios.items()},
            "rows_per_second": {k: n / float(np.median(v)) for k, v in timings.times.items()},
            "within_target": {k.replace("_over_bincount", ""): bool(v <= 10.0) for k, v in ratios.items()},
        },
    }
    print(f"[speed] {out['timings']['ratio_to_bincount']}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# figure, tables, main
# ---------------------------------------------------------------------------------------------
def plot(result, path):
    fig, axes = harness.subplots(1, 2, figsize=(16, 5.5))
    ax = axes[0]
    null = result.get("null", {})
    keys = [k for k in null if k.endswith("/short")]
    for i, k in enumerate(keys):
        e = null[k]["test"]
        lo, hi = e["ci95"]
        ax.bar(i, e["rate"], color=f"C{['bias', 'overconfident', 'adversarial'].index(null[k]['shape'])}")
        ax.plot([i, i], [lo, hi], color="k", lw=1)
    ax.axhline(ALPHA, color="k", ls="--", lw=0.8)
    ax.set_xticks(
        range(len(keys)), [k.replace("/short", "") for k in keys], rotation=70, ha="right", fontsize=7
    )
    ax.set_ylabel("share of streams that ever alarm (95% CI)")
    ax.set_title("tolerance test under its null (l1 error 0, eps/2, eps)")
    ax = axes[1]
    delay = {k: v for k, v in result.get("delay", {}).items() if "detectors" in v}
    dets = [d for d in DELAY_DETECTORS if any(d in delay[s]["detectors"] for s in delay)]
    for s in delay:
        med = [delay[s]["detectors"].get(d, {}).get("median_delay") for d in dets]
        ax.plot(range(len(dets)), [np.nan if m is None else m for m in med], "o-", label=s)
    ax.set_yscale("log")
    ax.set_xticks(range(len(dets)), dets, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("median detection delay (rows; missing: not detected)")
    ax.set_title("detection delay after the change")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path, dpi=100)


def main(argv=None):
    parser = harness.parser(
        __file__, __doc__, quick="smoke-test sizes (CI), no river", n_jobs="joblib workers over streams"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="multiclass_logits folder")
    parser.add_argument("--parts", default=DEFAULT_PARTS)
    parser.add_argument("--tolerances", type=float, nargs="+", default=[0.01, 0.02])
    parser.add_argument("--null-streams", type=int, default=1000)
    parser.add_argument("--null-rows", type=int, default=100_000)
    parser.add_argument("--long-streams", type=int, default=100)
    parser.add_argument("--long-rows", type=int, default=1_000_000)
    parser.add_argument("--coverage-errors", type=float, nargs="+", default=[0.01, 0.02, 0.05, 0.1])
    parser.add_argument("--coverage-streams", type=int, default=1000)
    parser.add_argument("--delay-rows", type=int, default=100_000)
    parser.add_argument("--delay-streams", type=int, default=200)
    parser.add_argument("--tune-streams", type=int, default=1000)
    parser.add_argument("--horizon-rows", type=int, default=10_000_000)
    parser.add_argument("--horizon-streams", type=int, default=100)
    parser.add_argument("--candidates", type=float, nargs="+", default=[0.005, 0.01, 0.02, 0.03, 0.05])
    parser.add_argument("--tolerance-rows", type=int, default=10_000_000)
    parser.add_argument("--tolerance-streams", type=int, default=5)
    parser.add_argument("--measure-rows", type=int, default=1_000_000)
    parser.add_argument("--speed-rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-peers", dest="peers", action="store_false", help="leave river's detectors out")
    parser.add_argument("--tables", type=Path, default=None, help="print the Markdown tables of a result")
    args = harness.parse_args(parser, argv)
    if args.tables is not None:
        print(tables(json.loads(args.tables.read_text())))
        return None
    if args.quick:
        args.peers = False
        args.null_streams, args.null_rows, args.long_streams = 20, 20_000, 0
        args.coverage_errors, args.coverage_streams = [0.02, 0.05], 20
        args.delay_rows, args.delay_streams, args.tune_streams = 40_000, 10, 20
        args.horizon_rows, args.horizon_streams = 200_000, 4
        args.candidates, args.tolerance_rows, args.tolerance_streams = [0.01, 0.02], 100_000, 1
        args.measure_rows = 100_000
        args.speed_rows, args.repeats = 1_000_000, 3
    if args.peers and importlib.util.find_spec("river") is None:
        parser.error(
            'river is not installed (the bench extra: pip install -e ".[bench]"); or pass --no-peers'
        )
    clock = harness.Timer()
    parts = set(args.parts.split(","))
    models = load_cifar10(args.data) if args.data.is_dir() else {}
    result = {
        "alpha": ALPHA,
        "default_tolerance": DEFAULT_TOLERANCE,
        "block_size": CalibrationMonitor().block_size,
        "models": list(models),
    }
    block_sizes = BLOCK_SIZES if "design" in parts else ()
    with Parallel(n_jobs=args.n_jobs) as par:
        if "null" in parts:
            result["null"] = null_part(args, par)
        if "coverage" in parts:
            result["coverage"] = coverage_part(args, par)
        if "horizon" in parts:
            result["horizon"] = horizon_part(args, par)
        if "delay" in parts:
            result["tuned"] = tune(args, models, par, block_sizes=block_sizes)
            tols = args.candidates if "tolerance" in parts else ()
            result["delay"] = delay_part(
                args,
                models,
                result["tuned"],
                result.get("horizon"),
                par,
                tolerances=tols,
                block_sizes=block_sizes,
            )
        if "tolerance" in parts:
            result["tolerance"] = tolerance_part(args, par, result.get("delay", {}))
    if "real" in parts:
        result["real"] = real_part(models) if models else {"skipped": "no CIFAR-10 outputs"}
    if "speed" in parts:
        result["speed"] = speed_part(args, block_sizes=block_sizes)
    stem = "monitor_quick" if args.quick else "monitor"
    if not args.quick and parts != set(DEFAULT_PARTS.split(",")):
        stem = "monitor_" + "_".join(sorted(parts))  # a partial run never replaces the full result
    harness.write_result(
        __file__, argv, args.out / f"{stem}.json", result, config=harness.args_config(args), clock=clock
    )
    if "null" in parts or "delay" in parts:
        plot(result, args.out / f"{stem}.png")
    return result


if __name__ == "__main__":
    main()
