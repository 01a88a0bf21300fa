"""The monitor's HTML page, in the style of the calibration report (its CSS and figure style).

Sections: the status in words (the tolerance, the lower bound of the calibration error, the
alarm, the located change and the guarantee in rows or time); a summary table; the lower bound
over time against the tolerance line and the evidence in log10 against its threshold, with the
alarm, the estimated change and the earlier segments; the calibration measures per calendar
period (days or weeks from the time column, chosen by the span; equal row chunks without
datetimes), as a table and a figure; the time-uniform reliability diagram of the current segment
before and after the estimated change; the segments; what the guarantee is and is not.
Timestamps are printed to the periods' resolution (to the minute with daily periods, to the day
with weekly ones). The figures are PNG images inside the page (matplotlib, optional: without it
the page says so), so the page is one self-contained file. It reads only the monitor's public
attributes and methods.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from skcal._compat import HasMethods, validate_params
from skcal._constraints import OUTPUT_PATH
from skcal._html import NO_FIGURES, document, figure_html, fmt
from skcal._io import write_atomic
from skcal._plotting import (
    COLOR_BEST,
    COLOR_DATA,
    COLOR_REFERENCE,
    SMALL_SIZE,
    TITLE_SIZE,
    new_figure,
    style_axes,
)

__all__ = ["render_html", "format_time"]

_EXTRA_CSS = """
.skcal-report .verdict.alarm { background: #fdecea; border-left-color: #c62828; }
.skcal-report .verdict.quiet { background: #eaf6ea; border-left-color: #2e7d32; }
"""

COLOR_ALARM = "#c62828"
COLOR_CHANGE = "#ef6c00"
COLOR_TOLERANCE = "#6a1b9a"
COLOR_SEGMENT = "0.93"

_TIME_FORMATS = {"day": "%Y-%m-%d %H:%M", "week": "%Y-%m-%d"}


def format_time(value, freq):
    """A time as the page prints it: to the minute with daily periods, to the day with weekly.

    Parameters
    ----------
    value : str, datetime-like, float or None
        A timestamp (ISO 8601 text or a datetime) or a number (numeric times).
    freq : {"day", "week", "rows"}
        The page's periods.

    Returns
    -------
    str
    """
    if value is None:
        return ""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f"{float(value):g}"
    ts = pd.Timestamp(value)
    return ts.strftime(_TIME_FORMATS.get(freq, "%Y-%m-%d %H:%M"))


def _log10_text(v):
    """``10^43.97`` for a log10 value (the evidence can exceed the float range)."""
    if v is None or np.isnan(v):
        return "none yet"
    if v == -np.inf:
        return "0"
    return f"10^{v:.2f}" if abs(v) >= 3 else f"{10.0**v:.3g}"


def _x(h):
    """The x axis of the paths: the block's end time when the monitor has times, else rows."""
    if "time_end" in h:
        return h["time_end"].to_numpy(), True
    return h["rows"].to_numpy(), False


def _at_row(monitor, h, row, use_time):
    """Where row ``row`` (a block boundary) falls on the x axis."""
    if row is None:
        return None
    if not use_time:
        return row
    ends = h["rows"].to_numpy()
    i = int(np.searchsorted(ends, row, side="left"))
    if i < len(h) and ends[i] == row:
        return h["time_end"].iloc[i]
    i = min(i, len(h) - 1)
    return h["time_start"].iloc[i]


def _style(ax, time_axis):
    style_axes(ax)
    if time_axis:  # dates, not the three-digit numbers of style_axes
        import matplotlib.dates as mdates  # matplotlib is optional (the plot extra)

        # at least 3 ticks of a unit before a finer one: the finer unit's largest interval then
        # always fits 8 ticks (matplotlib warns and falls back when none does)
        locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def _segment_spans(monitor, h, use_time):
    """``(x0, x1, label)`` of every segment before the current one."""
    segs = monitor.segments_
    x, _ = _x(h)
    out = []
    for i, s in segs.iloc[:-1].iterrows():
        at = np.flatnonzero(h["segment"].to_numpy() == i)
        if at.size == 0:
            continue
        x0 = h["time_start"].iloc[at[0]] if use_time else h["rows"].iloc[at[0]] - monitor.block_size
        out.append((x0, x[at[-1]], s["label"] or f"segment {i}"))
    return out


def _markers(ax, monitor, h, use_time):
    change = _at_row(monitor, h, monitor.change_at_, use_time)
    alarm = _at_row(monitor, h, monitor.alarm_at_, use_time)
    if change is not None:
        ax.axvline(change, color=COLOR_CHANGE, ls="--", lw=1.2, label="estimated change")
    if alarm is not None:
        ax.axvline(alarm, color=COLOR_ALARM, lw=1.4, label="alarm")


def _paths_figure(monitor, h):
    fig = new_figure("skcal.monitor.render_html", figsize=(9.5, 5.8))
    top = fig.add_subplot(2, 1, 1)
    bottom = fig.add_subplot(2, 1, 2, sharex=top)
    x, use_time = _x(h)
    for x0, x1, label in _segment_spans(monitor, h, use_time):
        for ax in (top, bottom):
            ax.axvspan(x0, x1, color=COLOR_SEGMENT, lw=0)
        top.annotate(label, (x0, 1.0), xycoords=("data", "axes fraction"), va="top", fontsize=SMALL_SIZE)
    top.step(
        x,
        h["calibration_error_lcb"],
        where="post",
        color=COLOR_DATA,
        lw=1.5,
        label="lower bound of the calibration error",
    )
    tol = float(monitor.tolerance)
    top.axhline(tol, color=COLOR_TOLERANCE, ls="--", lw=1.1, label=f"tolerance = {tol:g}")
    top.set_ylim(bottom=0.0, top=max(2.0 * tol, 1.15 * float(np.nanmax(h["calibration_error_lcb"])), 0.01))
    top.set_ylabel("E|E[y | p] - p| at least", fontsize=SMALL_SIZE)
    top.set_title(
        f"Time-uniform {1 - monitor.alpha:.0%} lower confidence bound of the calibration error",
        fontsize=TITLE_SIZE,
    )
    _markers(top, monitor, h, use_time)
    top.legend(fontsize=SMALL_SIZE, loc="upper left")
    bottom.plot(x, h["log10_evidence"], color=COLOR_DATA, lw=1.3, label="evidence (log10)")
    if "log10_detector" in h:
        bottom.plot(
            x, h["log10_e_value"], color="C2", lw=1.0, label="test e-value since the segment start (log10)"
        )
    bottom.axhline(monitor.log10_threshold_, color=COLOR_REFERENCE, ls="--", lw=1, label="alarm threshold")
    bottom.axhline(0.0, color=COLOR_REFERENCE, ls=":", lw=0.8)
    _markers(bottom, monitor, h, use_time)
    bottom.set_ylabel("log10 evidence", fontsize=SMALL_SIZE)
    bottom.set_xlabel("time (end of block)" if use_time else "rows")
    bottom.legend(fontsize=SMALL_SIZE, loc="upper left")
    for ax in (top, bottom):
        _style(ax, use_time and np.issubdtype(np.asarray(x).dtype, np.datetime64))
    return fig


def _periods_figure(monitor, per, h):
    fig = new_figure("skcal.monitor.render_html", figsize=(9.5, 5.6))
    axes = [fig.add_subplot(3, 1, i + 1) for i in range(3)]
    use_time = "time_start" in per
    left = per["time_start"] if use_time else per["first_row"]
    right = per["time_end"] if use_time else per["last_row"] + 1
    mid = left + (right - left) / 2
    labels = {
        "ece": f"ECE ({monitor.n_bins} bins)",
        "mean_residual": "mean residual y - p",
        "brier": "Brier score",
    }
    for ax, key in zip(axes, ("ece", "mean_residual", "brier"), strict=True):
        ax.plot(mid, per[key], "o-", color=COLOR_DATA, ms=4)
        ax.set_ylabel(labels[key], fontsize=SMALL_SIZE)
        if key == "mean_residual":
            ax.axhline(0.0, color=COLOR_REFERENCE, ls=":", lw=0.8)
        _markers(ax, monitor, h, use_time)
        _style(ax, use_time and np.issubdtype(np.asarray(left).dtype, np.datetime64))
    kind = {"day": "calendar day", "week": "calendar week", "rows": "period of rows"}[per["freq"].iloc[0]]
    axes[0].set_title(f"Calibration measures per {kind}", fontsize=TITLE_SIZE)
    axes[-1].set_xlabel("time" if use_time else "rows")
    return fig


def _bands_figure(monitor, segments):
    bands = [(title, monitor.reliability_bands(start=a, stop=b)) for title, a, b in segments]
    classes = list(bands[0][1]["class"].unique()) if "class" in bands[0][1] else [None]
    nrows, ncols = len(classes), len(bands)
    fig = new_figure("skcal.monitor.render_html", figsize=(4.6 * ncols, 3.5 * nrows + 0.3))
    first = None
    tol = float(monitor.tolerance)
    for r, cls in enumerate(classes):
        for c, (title, frame) in enumerate(bands):
            ax = fig.add_subplot(nrows, ncols, r * ncols + c + 1, sharey=first)
            first = first or ax
            f = frame if cls is None else frame[frame["class"] == cls]
            f = f[f["rows"] > 0]
            centre = (f["bin_low"] + f["bin_high"]) / 2
            lo, hi = f["lower"], f["upper"]
            ax.vlines(centre, lo, hi, color=COLOR_DATA, lw=5, alpha=0.35, label="time-uniform band")
            ax.plot(centre, f["mean_residual"], "o", color=COLOR_DATA, ms=4, label="mean residual")
            miss = f["above_tolerance"].to_numpy(dtype=bool)
            ax.plot(
                centre[miss],
                f["mean_residual"][miss],
                "o",
                color=COLOR_BEST,
                ms=6,
                label="band beyond the tolerance" if tol > 0 else "band excludes 0",
            )
            ax.axhline(0.0, color=COLOR_REFERENCE, ls="--", lw=1)
            if tol > 0:
                for v in (-tol, tol):
                    ax.axhline(v, color=COLOR_TOLERANCE, ls=":", lw=0.9)
            ax.set_xlim(0, 1)
            name = title if cls is None else f"{title}, class {cls}"
            ax.set_title(f"{name} ({int(f['rows'].sum()):,} rows)", fontsize=TITLE_SIZE)
            ax.set_xlabel("predicted probability (bin centre)", fontsize=SMALL_SIZE)
            if c == 0:
                ax.set_ylabel("E[y - p | bin]", fontsize=SMALL_SIZE)
            style_axes(ax)
    handles, labels = first.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=SMALL_SIZE)
    return fig


def _segments_for_bands(monitor):
    segs = monitor.segments_
    start = int(segs["first_row"].iloc[-1])
    end = monitor.n_seen_
    c = monitor.change_at_
    if c is None or c <= start or c >= end - monitor.n_buffered_:
        return [("current segment", start, None)]
    return [(f"before the change (rows < {c:,})", start, c), (f"after the change (rows >= {c:,})", c, None)]


def when(row, st, key, freq):
    """``row 1,000 (2024-06-01 10:00)``: a row of the status with its time ``st[key]``, if any."""
    t = st.get(key)
    return f"row {row:,}" + (f" ({format_time(t, freq)})" if t is not None else "")


def _verdict(monitor, freq):
    st = monitor.status()
    tol, lcb, a = st["tolerance"], st["calibration_error_lcb"], st["alpha"]
    lines = []
    if st["segment"]:
        label = st["segment_label"] or f"segment {st['segment']}"
        lines.append(f"Current segment: {label} (the earlier segments are kept below).")
    if lcb > 0:
        bound = (
            f"The calibration error is at least {lcb:.3g} ({1 - a:.0%} confidence, valid whenever the "
            "page is read)."
        )
    elif st["alarm"]:
        bound = "The calibration error is not 0, but its lower bound has not separated from 0 yet."
    else:
        bound = "The lower bound of the calibration error is 0: no evidence of miscalibration yet."
    if st["alarm"]:
        what = "e-detector" if st["mode"] == "detect" else "evidence"
        worse = "miscalibrated" if tol == 0 else f"worse than the tolerance {tol:g}"
        lines.append(
            f"ALARM at {when(st['alarm_at'], st, 'alarm_time', freq)}: the calibration is {worse} "
            f"(the {what} reached {_log10_text(st['log10_threshold'])})."
        )
        lines.append(f"The change is estimated to start at {when(st['change_at'], st, 'change_time', freq)}.")
        lines.append(bound)
    else:
        worse = "any miscalibration" if tol == 0 else f"a calibration error above the tolerance {tol:g}"
        lines.append(f"No alarm after {st['rows']:,} rows: no evidence of {worse}.")
        lines.append(bound)
        lines.append("No alarm is not proof of calibration: a small excess takes many rows to detect.")
    lines.append(st["guarantee"])
    return lines, st["alarm"]


def _summary_rows(monitor, freq):
    st = monitor.status()
    tol = st["tolerance"]
    rows = [
        ("rows seen", f"{st['rows']:,} ({st['buffered']:,} waiting for their block)"),
        ("blocks", f"{st['blocks']:,} of {monitor.block_size:,} rows"),
        (
            "mode",
            "test (worse than the tolerance since the start?)"
            if monitor.mode == "test"
            else "detect (has it become worse than the tolerance?)",
        ),
        ("tolerance", f"{tol:g}" + (" (exact calibration)" if tol == 0 else "")),
        (
            "calibration error at least",
            f"{st['calibration_error_lcb']:.4g} ({1 - st['alpha']:.0%} confidence)",
        ),
        (
            "evidence now",
            f"{_log10_text(st['log10_evidence'])} (alarm at {_log10_text(st['log10_threshold'])})",
        ),
        ("anytime-valid p-value", fmt(st["pvalue"], 3)),
        ("alarm", "none" if not st["alarm"] else when(st["alarm_at"], st, "alarm_time", freq)),
        (
            "estimated change",
            "none" if st["change_at"] is None else when(st["change_at"], st, "change_time", freq),
        ),
        ("bins beyond the tolerance", f"{st['bins_above_tolerance']} (time-uniform bands, current segment)"),
    ]
    if st["false_alarm_rows"] is not None:
        rows.append(("false alarms", f"at most one per {st['false_alarm_rows']:,.0f} rows on average"))
    if st.get("model_name"):
        rows.insert(0, ("model", st["model_name"]))
    if "last_time" in st:
        rows.insert(2, ("last time", format_time(st["last_time"], freq)))
    return rows


def _legend(monitor):
    bins = monitor.n_bins
    return [
        "The null is that the l1 calibration error E|E[y | p] - p| of the rows is at most the tolerance at "
        "every step (exact calibration, E[y_t | past, p_t] = p_t, when the tolerance is 0), for any way the "
        "forecasts were chosen and however their distribution moves.",
        "The evidence is a mixture of capitals of betting on g(p)(y - p) - tolerance, with test functions "
        "|g| <= 1 chosen from the past (a global bias up or down, and the learned signs of the residuals "
        f"of 2, 4, ..., {bins} equal-width bins) and nonnegative bets from a fixed grid. Under the null it "
        "is a nonnegative supermartingale starting at 1, so by Ville's inequality it ever reaches 1/alpha "
        "with probability at most alpha (Shafer and Vovk; Waudby-Smith and Ramdas; Arnold, Henzi and "
        "Ziegel).",
        "The capital decreases in the tolerance, so the largest tolerance whose evidence has crossed 1/alpha "
        "is a lower confidence bound of the calibration error, valid at every time simultaneously: it "
        "exceeds the largest calibration error of the segment with probability at most alpha.",
        "In mode detect the e-detector (Shin, Ramdas and Rinaldo) restarts the bet at every block; its "
        "average run length to a false alarm is at least the number of rows stated above.",
        "The measures per period (ECE, mean residual, Brier score) describe the rows of each period; they "
        "are not tests.",
        "Reliability bands: for each bin a confidence sequence for E[y - p | bin] (empirical-Bernstein "
        f"capital, level alpha/{bins * monitor.n_monitored_} per bin), valid at every time "
        "simultaneously for a stationary stream: the per-bin version of the tolerance test. The split at "
        "the estimated change is chosen from the data, so the two diagrams are descriptive.",
    ]


@validate_params(
    {"monitor": [HasMethods(["update", "get_state"])], "path": OUTPUT_PATH, "title": [str, None]},
    prefer_skip_nested_validation=True,
)
def render_html(monitor, path=None, *, title=None):
    """The monitor's page: status, lower bound and evidence, measures per period, bands, segments.

    Parameters
    ----------
    monitor : CalibrationMonitor
        A monitor that has seen at least one complete block.
    path : str or path-like, default=None
        Where to write the page (not written when None), atomically: the file is the old page or
        the new one, whole.
    title : str, default=None
        The page title (default: "Calibration monitor", with the model's name when it has one).

    Returns
    -------
    str
        The page (self-contained HTML).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.monitor import CalibrationMonitor, render_html
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=5_000)
    >>> monitor = CalibrationMonitor(tolerance=0.02).update(rng.uniform(size=5_000) < p, p)
    >>> page = render_html(monitor)
    >>> page.startswith("<!DOCTYPE html>") and "No alarm" in page
    True
    """
    if getattr(monitor, "n_blocks_", 0) == 0:
        raise ValueError("render_html needs a monitor that has seen at least one complete block of rows.")
    e = html.escape
    name = getattr(monitor, "model_name", None)
    title = title or ("Calibration monitor" + (f": {name}" if name else ""))
    per = monitor.measures_by_period()
    freq = per["freq"].iloc[0]
    lines, alarm = _verdict(monitor, freq)
    body = [f"<h1>{e(title)}</h1>"]
    body.append(f'<div class="verdict {"alarm" if alarm else "quiet"}"><strong>Status</strong><ul>')
    body += [f"<li>{e(x)}</li>" for x in lines]
    body.append("</ul></div>")
    body.append('<div class="table-wrap"><table class="metrics"><tbody>')
    body += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _summary_rows(monitor, freq)]
    body.append("</tbody></table></div>")
    h = monitor.history_
    try:
        figures = [
            (
                "Lower bound and evidence",
                _paths_figure(monitor, h),
                "Top: the time-uniform lower confidence bound of the calibration error after each block, "
                "against the tolerance; the alarm is raised when it reaches the tolerance (mode test). "
                "Bottom: the evidence in log10 against its threshold. Earlier segments are shaded.",
            ),
            (
                "Calibration measures per period",
                _periods_figure(monitor, per, h),
                "Binned ECE, mean residual and Brier score of each period, from the merged per-bin sums of "
                "its blocks (a block belongs to the period of its last row).",
            ),
            (
                "Time-uniform reliability diagram",
                _bands_figure(monitor, _segments_for_bands(monitor)),
                "Each bin's mean residual y - p with its time-uniform band (a confidence sequence: valid "
                "whenever the page is looked at); a band beyond the tolerance marks a miscalibrated bin. "
                "The current segment, before and after the estimated change when there is one.",
            ),
        ]
    except ImportError:
        figures = None
    body.append("<section><h2>Calibration error and evidence</h2>")
    if figures is None:
        body.append(NO_FIGURES)
    else:
        body.append(figure_html(*figures[0]))
    body.append("</section><section><h2>Calibration measures per period</h2>")
    body.append(_periods_table(per, freq))
    if figures is not None:
        body.append(figure_html(*figures[1]))
    body.append("</section><section><h2>Time-uniform reliability diagram</h2>")
    if figures is not None:
        body.append(figure_html(*figures[2]))
    body.append("</section>")
    if monitor.segment_ > 0:
        body.append("<section><h2>Segments</h2>")
        body.append(_segments_table(monitor, freq))
        body.append("</section>")
    body.append('<section><h2>What the guarantee is</h2><ul class="legend">')
    body += [f"<li>{e(x)}</li>" for x in _legend(monitor)]
    body.append("</ul></section>")
    page = document(title, body, _EXTRA_CSS)
    if path is not None:
        write_atomic(path, page)
    return page


def _periods_table(per, freq):
    time = "time_start" in per
    head = [
        "period",
        "rows",
        *(["first time", "last time"] if time else []),
        "ECE",
        "mean residual",
        "Brier",
        "error at least (end)",
        "log10 evidence (end)",
    ]
    rows = []
    for _, r in per.iterrows():
        cells = [str(r["period"]), f"{int(r['rows']):,}"]
        if time:
            cells += [format_time(r["time_start"], freq), format_time(r["time_end"], freq)]
        cells += [
            fmt(r["ece"]),
            fmt(r["mean_residual"]),
            fmt(r["brier"]),
            fmt(r["calibration_error_lcb"], 3),
            f"{r['log10_evidence']:.2f}",
        ]
        rows.append(cells)
    return _table(head, rows)


def _segments_table(monitor, freq):
    segs = monitor.segments_
    time = "time_start" in segs
    head = ["segment", "rows", *(["from", "to"] if time else []), "alarm", "change", "error at least"]
    rows = []
    for i, s in segs.iterrows():
        cells = [s["label"] or f"segment {i}", f"{int(s['first_row']):,}-{int(s['last_row']):,}"]
        if time:
            cells += [
                format_time(None if pd.isna(s["time_start"]) else s["time_start"], freq),
                format_time(None if pd.isna(s["time_end"]) else s["time_end"], freq),
            ]
        cells += [
            "none" if s["alarm_at"] is None or pd.isna(s["alarm_at"]) else f"row {int(s['alarm_at']):,}",
            "none" if s["change_at"] is None or pd.isna(s["change_at"]) else f"row {int(s['change_at']):,}",
            fmt(s["calibration_error_lcb"], 3),
        ]
        rows.append(cells)
    return _table(head, rows)


def _table(head, rows):
    """A table of text cells (escaped) under the header ``head``."""
    e = html.escape
    parts = ['<div class="table-wrap"><table class="metrics"><thead><tr>']
    parts += [f"<th>{e(h)}</th>" for h in head]
    parts.append("</tr></thead><tbody>")
    parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>" for cells in rows]
    parts.append("</tbody></table></div>")
    return "\n".join(parts)
