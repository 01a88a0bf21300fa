"""The monitor's tables: per block, per segment, per calendar period, per bin.

The bodies of :class:`~skcal.monitor.CalibrationMonitor`'s ``history_``, ``segments_``,
``measures_by_period``, ``reliability_bands`` and ``block_measures``, computed from the stored
per-block sums and paths of its engine (the class keeps the docstrings and the checks).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from skcal.monitor._bands import residual_bands
from skcal.monitor._blocks import SUM_NAMES, sum_x
from skcal.stats import BinnedStatistics, BrierScoreStatistics

__all__ = [
    "DAILY_SPAN_DAYS",
    "bands_table",
    "block_measures",
    "history_table",
    "period_table",
    "segments_table",
    "stored_sums",
]

#: ``measures_by_period(freq="auto")`` shows calendar days up to this span of time, weeks beyond.
DAILY_SPAN_DAYS = 62
_LN10 = math.log(10.0)


def stored_sums(monitor, j0=0, j1=None):
    """The stored per-bin sums of blocks ``j0:j1`` as ``count, sum_p, sum_x, sum_x2``."""
    raw = {name: monitor._block(name)[j0:j1] for name in SUM_NAMES}
    return {"count": raw["count"], "sum_p": raw["sum_p"], "sum_x": sum_x(raw), "sum_x2": raw["sum_x2"]}


def block_measures(n_bins, count, sum_p, sum_x, sum_x2):
    """Calibration measures of groups of rows from their per-bin sums (one class).

    Built through the statistics' ``from_sums``, so each value is the class's own formula.
    """
    K = int(n_bins)
    out = {"rows": [], "ece": [], "brier": [], "mean_residual": [], "mean_p": []}
    for c, sp, sx, sx2 in zip(count, sum_p, sum_x, sum_x2, strict=True):
        n = int(c.sum())
        out["rows"].append(n)
        if n == 0:
            for key in ("ece", "brier", "mean_residual", "mean_p"):
                out[key].append(np.nan)
            continue
        w = c.astype(np.float64)
        binned = {"count": c, "weight": w, "sum_wp": sp, "sum_wy": sx + sp, "sum_w2": w}
        out["ece"].append(BinnedStatistics.from_sums(binned, n_bins=K).compute())
        brier = {"sum_weight": float(n), "sum_loss": float(sx2.sum()), "n_samples": n}
        out["brier"].append(BrierScoreStatistics.from_sums(brier).compute())
        out["mean_residual"].append(float(sx.sum()) / n)
        out["mean_p"].append(float(sp.sum()) / n)
    return pd.DataFrame(out)


def history_table(monitor):
    """One row per block (``history_``)."""
    eng = monitor._engine
    nb = eng.n_blocks
    log_e = monitor._block("log_e")
    log_m = monitor._block("log_m")
    segment = eng.block_segments()
    stat = log_m if eng.detect else log_e
    cols = {"block": np.arange(nb), "rows": eng.block_rows(), "segment": segment}
    if eng.time_kind is not None:
        cols.update(_times(monitor, monitor._block("time_first"), "time_start"))
        cols.update(_times(monitor, monitor._block("time_last"), "time_end"))
    cols["log10_evidence"] = stat / _LN10
    cols["log10_e_value"] = log_e / _LN10
    if eng.detect:
        cols["log10_detector"] = log_m / _LN10
    with np.errstate(over="ignore"):
        cols["e_value"] = np.exp(stat)
    running = np.empty(nb)
    for seg in range(len(eng.segments)):  # the running maximum restarts with each segment
        at = segment == seg
        if at.any():
            running[at] = np.maximum.accumulate(np.maximum(log_e[at], 0.0))
    cols["p_value"] = np.minimum(1.0, np.exp(-running))
    cols["calibration_error_lcb"] = monitor._block("lcb")
    cols["above"] = stat >= eng.alarm_threshold
    sums = stored_sums(monitor)
    names = monitor._class_names
    per_class = []
    for c, label in enumerate(names):
        m = block_measures(monitor.n_bins, *(sums[s][:, c] for s in ("count", "sum_p", "sum_x", "sum_x2")))
        tag = "" if label is None else f"[{label}]"
        with np.errstate(invalid="ignore", divide="ignore"):
            resid = sums["sum_x"][:, c] / sums["count"][:, c]
        per_class.append(m)
        cols[f"ece{tag}"], cols[f"brier{tag}"] = m["ece"], m["brier"]
        cols[f"mean_residual{tag}"] = m["mean_residual"]
        for j in range(eng.n_bins):
            cols[f"residual{tag}_{j}"] = resid[:, j]
    if names[0] is not None:  # classwise: the averages over classes, and the multiclass Brier
        cols["ece"] = np.mean([m["ece"].to_numpy() for m in per_class], axis=0)
        cols["brier"] = np.sum([m["brier"].to_numpy() for m in per_class], axis=0)
    frame = pd.DataFrame({k: np.asarray(v) for k, v in cols.items()})
    return frame.set_index("block")


def segments_table(monitor):
    """One row per segment (``segments_``)."""
    eng = monitor._engine
    B = eng.block_size
    rows = []
    for i, seg in enumerate(eng.segments):
        info = seg if i + 1 < len(eng.segments) else {**seg, **eng.segment_summary()}
        first_block = seg["first_block"]
        n_blocks = int(info["blocks"])
        end = eng.segments[i + 1]["first_row"] if i + 1 < len(eng.segments) else eng.n_seen
        row = {
            "label": seg["label"],
            "first_row": int(seg["first_row"]),
            "last_row": int(end) - 1,
            "dropped": int(seg["dropped"]),
            "blocks": n_blocks,
        }
        if eng.time_kind is not None and n_blocks:
            tf = _times(monitor, monitor._block("time_first")[first_block : first_block + 1], "t")["t"][0]
            tl = _times(monitor, monitor._block("time_last")[first_block + n_blocks - 1 :][:1], "t")["t"][0]
            row["time_start"], row["time_end"] = tf, tl
        ab, cb = info["alarm_block"], info["change_block"]
        row["alarm_at"] = None if ab is None else int(seg["first_row"] + (ab + 1) * B)
        row["change_at"] = None if cb is None else int(seg["first_row"] + cb * B)
        row["calibration_error_lcb"] = float(info["lcb"])
        row["log10_max_e_value"] = float(info["max_log_e"]) / _LN10
        rows.append(row)
    out = pd.DataFrame(rows)
    for name in ("label", "alarm_at", "change_at"):  # None stays None (not NaN)
        out[name] = pd.Series([r[name] for r in rows], dtype=object)
    return out


def _period_keys(monitor, freq):
    """Per block: the calendar day or week (Monday) its last row falls in, as datetime64[ns]."""
    t = monitor._block("time_last").view("datetime64[ns]")
    day = t.astype("datetime64[D]")
    if freq == "day":
        return day.astype("datetime64[ns]")
    weekday = (day.astype(np.int64) - 4) % 7  # 1970-01-01 was a Thursday; Monday is 0
    return (day - weekday.astype("timedelta64[D]")).astype("datetime64[ns]")


def _period_freq(monitor, freq):
    eng = monitor._engine
    if freq in ("day", "week", "rows"):
        if freq != "rows" and eng.time_kind != "datetime":
            raise ValueError(f"freq={freq!r} needs datetime times (update(..., time=...)); use freq='rows'.")
        return freq
    if freq != "auto":
        raise ValueError(f"freq must be 'auto', 'day', 'week' or 'rows'; got {freq!r}.")
    if eng.time_kind != "datetime" or eng.n_blocks == 0:
        return "rows"
    t = monitor._block("time_last")
    span_days = (int(t[-1]) - int(monitor._block("time_first")[0])) / 86_400e9
    return "day" if span_days <= DAILY_SPAN_DAYS else "week"


def period_table(monitor, freq, n_periods):
    """The calibration measures per period (``measures_by_period``)."""
    freq = _period_freq(monitor, freq)
    h = monitor.history_
    nb = len(h)
    columns = [
        "period",
        "freq",
        "first_row",
        "last_row",
        "rows",
        "segment",
        "ece",
        "brier",
        "mean_residual",
    ]
    if nb == 0:
        return pd.DataFrame(columns=[*columns, "calibration_error_lcb", "log10_evidence"])
    if freq == "rows":
        groups = [(int(g[0]), int(g[-1]) + 1) for g in np.array_split(np.arange(nb), min(int(n_periods), nb))]
        keys = None
    else:
        key = _period_keys(monitor, freq)
        cut = np.flatnonzero(key[1:] != key[:-1]) + 1
        bounds = np.concatenate([[0], cut, [nb]])
        groups = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        keys = key
    sums = stored_sums(monitor)
    k = monitor._engine.n_classes
    ends = h["rows"].to_numpy()
    out = []
    for j0, j1 in groups:
        merged = [sums[name][j0:j1].sum(axis=0) for name in ("count", "sum_p", "sum_x", "sum_x2")]
        m = block_measures(monitor.n_bins, *merged)
        first = int(ends[j0] - monitor.block_size)
        if keys is None:
            label = f"rows {first:,}-{int(ends[j1 - 1]) - 1:,}"
        else:
            day = pd.Timestamp(keys[j0])
            label = day.strftime("%Y-%m-%d") if freq == "day" else f"week of {day:%Y-%m-%d}"
        row = {"period": label, "freq": freq, "first_row": first, "last_row": int(ends[j1 - 1]) - 1}
        if "time_start" in h:
            row["time_start"] = h["time_start"].iloc[j0]
            row["time_end"] = h["time_end"].iloc[j1 - 1]
        row["rows"] = int(np.sum(sums["count"][j0:j1, 0]))
        row["segment"] = int(h["segment"].iloc[j1 - 1])
        row["ece"] = float(m["ece"].mean())
        row["brier"] = float(m["brier"].sum()) if k > 1 else float(m["brier"].iloc[0])
        row["mean_residual"] = float(m["mean_residual"].mean())
        row["calibration_error_lcb"] = float(h["calibration_error_lcb"].iloc[j1 - 1])
        row["log10_evidence"] = float(h["log10_evidence"].iloc[j1 - 1])
        out.append(row)
    return pd.DataFrame(out)


def _times(monitor, values, name):
    if monitor._engine.time_kind == "datetime":
        return {name: np.asarray(values, dtype=np.int64).view("datetime64[ns]")}
    return {name: np.asarray(values, dtype=np.float64)}


def bands_table(monitor, start, stop, alpha):
    """The time-uniform reliability diagram (``reliability_bands``)."""
    eng = monitor._engine
    ends = eng.block_rows()
    if start is None and stop is None:
        j0, j1 = eng.segments[-1]["first_block"], eng.n_blocks
    else:
        j0 = 0 if start is None else int(np.searchsorted(ends, int(start), side="right"))
        j1 = eng.n_blocks if stop is None else int(np.searchsorted(ends, int(stop), side="right"))
        j1 = max(j0, j1)
    a = monitor.alpha if alpha is None else float(alpha)
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    sums = stored_sums(monitor, j0, j1)
    K, k = eng.n_bins, eng.n_classes
    lower, upper = residual_bands(sums["count"], sums["sum_x"], sums["sum_x2"], a / (K * k))
    n = sums["count"].sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = sums["sum_p"].sum(axis=0) / n
        resid = sums["sum_x"].sum(axis=0) / n
    error_lcb = np.where(np.isnan(lower), np.nan, np.maximum(0.0, np.maximum(lower, -upper)))
    edges = np.linspace(0.0, 1.0, K + 1)
    frames = []
    for c, label in enumerate(monitor._class_names):
        f = pd.DataFrame(
            {
                "bin": np.arange(K),
                "bin_low": edges[:-1],
                "bin_high": edges[1:],
                "rows": n[c],
                "mean_p": mean_p[c],
                "mean_residual": resid[c],
                "lower": lower[c],
                "upper": upper[c],
                "error_lcb": error_lcb[c],
                "above_tolerance": error_lcb[c] > float(monitor.tolerance),
            }
        )
        if label is not None:
            f.insert(0, "class", label)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)
