"""The monitor's HTML page, in the style of the calibration report (its CSS and figure style).

Sections: the status in words; a summary table; the evidence path on a log scale with the
``1 / alpha`` line, the alarm and the estimated change; the calibration measures per period
(a table and a figure); the time-uniform reliability diagram before and after the estimated
change (or over every row when there is none); what the guarantee is and is not. The figures
are PNG images inside the page (matplotlib, optional: without it the page says so), so the
page is one self-contained file. It reads only the monitor's public attributes and methods.
"""

from __future__ import annotations

import html
import pathlib

import numpy as np

from skcal._compat import HasMethods, validate_params
from skcal._constraints import OUTPUT_PATH
from skcal._html import CSS, fmt, png_base64
from skcal._plotting import (
    COLOR_BEST,
    COLOR_DATA,
    COLOR_REFERENCE,
    SMALL_SIZE,
    TITLE_SIZE,
    new_figure,
    style_axes,
)

__all__ = ["render_html"]

_EXTRA_CSS = """
.skcal-report .verdict.alarm { background: #fdecea; border-left-color: #c62828; }
.skcal-report .verdict.quiet { background: #eaf6ea; border-left-color: #2e7d32; }
"""

COLOR_ALARM = "#c62828"
COLOR_CHANGE = "#ef6c00"


def _x(monitor, h):
    """The x axis of the paths: time when the monitor has datetimes or numbers, else rows."""
    if "time_end" in h:
        return h["time_end"].to_numpy(), "time"
    return h["rows"].to_numpy(), "rows"


def _marker(monitor, h, row, use_time):
    if row is None:
        return None
    if not use_time:
        return row
    block = max(0, min(len(h) - 1, row // monitor.block_size))
    return h["time_start"].iloc[block] if row % monitor.block_size == 0 else h["time_end"].iloc[block]


def _style(ax, time_axis):
    style_axes(ax)
    if time_axis:  # dates, not the three-digit numbers of style_axes
        import matplotlib.dates as mdates  # matplotlib is optional (the plot extra)

        locator = mdates.AutoDateLocator(maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def _evidence_figure(monitor, h):
    fig = new_figure("skcal.monitor.render_html", figsize=(9.5, 3.8))
    ax = fig.add_subplot(1, 1, 1)
    x, kind = _x(monitor, h)
    use_time = kind == "time"
    log10 = np.log(10)
    ax.plot(x, h["log_e_value"] / log10, color=COLOR_DATA, lw=1.4, label="e-value E_t (test)")  # log10
    if "log_detector" in h:
        ax.plot(x, h["log_detector"] / log10, color="C2", lw=1.2, label="e-detector M_t")
    thr = np.log10(1.0 / monitor.alpha)
    ax.axhline(thr, color=COLOR_REFERENCE, ls="--", lw=1, label=f"1/alpha = {1 / monitor.alpha:g}")
    ax.axhline(0.0, color=COLOR_REFERENCE, ls=":", lw=0.8)
    alarm = _marker(monitor, h, monitor.alarm_at_, use_time)
    change = _marker(monitor, h, monitor.change_at_, use_time)
    if change is not None:
        ax.axvline(change, color=COLOR_CHANGE, ls="--", lw=1.2, label="estimated change")
    if alarm is not None:
        ax.axvline(alarm, color=COLOR_ALARM, lw=1.4, label="alarm")
    ax.set_ylabel("evidence (log scale)")
    ax.set_xlabel("time (end of block)" if use_time else "rows")
    ax.set_title("Evidence against calibration (log scale)", fontsize=TITLE_SIZE)
    _style(ax, use_time and np.issubdtype(np.asarray(x).dtype, np.datetime64))
    from matplotlib.ticker import FuncFormatter, MaxNLocator  # matplotlib is optional (the plot extra)

    ax.yaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"$10^{{{int(round(v))}}}$"))
    ax.legend(fontsize=SMALL_SIZE, loc="upper left")
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
        for row, color, ls in (
            (monitor.change_at_, COLOR_CHANGE, "--"),
            (monitor.alarm_at_, COLOR_ALARM, "-"),
        ):
            m = _marker(monitor, h, row, use_time)
            if m is not None:
                ax.axvline(m, color=color, ls=ls, lw=1.1)
        _style(ax, use_time and np.issubdtype(np.asarray(left).dtype, np.datetime64))
    axes[0].set_title("Calibration measures per period", fontsize=TITLE_SIZE)
    axes[-1].set_xlabel("time" if use_time else "rows")
    return fig


def _bands_figure(monitor, segments):
    bands = [(title, monitor.reliability_bands(start=a, stop=b)) for title, a, b in segments]
    classes = list(bands[0][1]["class"].unique()) if "class" in bands[0][1] else [None]
    nrows, ncols = len(classes), len(bands)
    fig = new_figure("skcal.monitor.render_html", figsize=(4.6 * ncols, 3.5 * nrows + 0.3))
    first = None
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
            miss = (lo > 0) | (hi < 0)
            ax.plot(
                centre[miss], f["mean_residual"][miss], "o", color=COLOR_BEST, ms=6, label="band excludes 0"
            )
            ax.axhline(0.0, color=COLOR_REFERENCE, ls="--", lw=1)
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


def _segments(monitor):
    n = monitor.n_blocks_ * monitor.block_size
    c = monitor.change_at_
    if c is None or c <= 0 or c >= n:
        return [("all rows", None, None)]
    return [(f"before the change (rows < {c:,})", None, c), (f"after the change (rows >= {c:,})", c, None)]


def _time_text(status, key):
    t = status.get(key)
    return "" if t is None else f" ({t})"


def _verdict(monitor):
    st = monitor.status()
    what = "e-detector statistic" if monitor.mode == "detect" else "e-value"
    if st["alarm"]:
        lines = [
            f"Alarm at row {st['alarm_at']:,}{_time_text(st, 'alarm_time')}: the {what} reached "
            f"1/alpha = {st['threshold']:g} (alpha = {st['alpha']:g}).",
            f"The change is estimated to start at row {st['change_at']:,}{_time_text(st, 'change_time')}.",
        ]
        if monitor.mode == "test":
            lines.append(
                "The forecasts were miscalibrated at some time since deployment: under calibration this "
                f"alarm had probability at most {st['alpha']:g}, however long the stream. How much, and "
                "where "
                "in [0, 1], is what the measures and the bands below show."
            )
        else:
            lines.append(
                "Calibration has changed: under calibration the average run length to such an alarm is at "
                f"least {st['threshold']:g} blocks of {monitor.block_size:,} rows."
            )
    else:
        lines = [
            f"No alarm after {st['rows']:,} rows: the {what} is {st['e_value']:.3g} < 1/alpha = "
            f"{st['threshold']:g} (anytime-valid p-value {st['pvalue']:.3g}).",
            "No alarm is not proof of calibration: small miscalibration takes many rows to detect.",
        ]
    return lines, st["alarm"]


def _summary_rows(monitor):
    st = monitor.status()
    rows = [
        ("rows seen", f"{st['rows']:,} ({st['buffered']:,} waiting for their block)"),
        ("blocks", f"{st['blocks']:,} of {monitor.block_size:,} rows"),
        (
            "mode",
            "test (calibrated since the start?)" if monitor.mode == "test" else "detect (has it changed?)",
        ),
        ("alpha", f"{st['alpha']:g} (alarm at {st['threshold']:g})"),
        ("evidence now", fmt(st["e_value"])),
        ("anytime-valid p-value", fmt(st["pvalue"], 3)),
        ("alarm", "none" if not st["alarm"] else f"row {st['alarm_at']:,}{_time_text(st, 'alarm_time')}"),
        (
            "estimated change",
            "none" if st["change_at"] is None else f"row {st['change_at']:,}{_time_text(st, 'change_time')}",
        ),
    ]
    if "last_time" in st:
        rows.insert(1, ("last time", str(st["last_time"])))
    return rows


def _legend(monitor):
    bins = monitor.n_bins
    return [
        "The null is calibration at every step, E[y_t | past, p_t] = p_t, for any way the forecasts were "
        "chosen. The evidence is the average, over the bins of 1, 2, 4, ..., "
        f"{bins} equal-width bins, of the capital of betting that the bin's residual y - p leans one way "
        "(bets fixed within a block and computed from the blocks before it, |bet| <= 1/2); under the null "
        "it is a nonnegative supermartingale starting at 1, so by Ville's inequality it ever reaches "
        "1/alpha with probability at most alpha (Shafer and Vovk; Waudby-Smith and Ramdas; Arnold, Henzi "
        "and Ziegel).",
        "The p-value min(1, 1 / max e-value so far) is valid at any time it is read, under any stopping "
        "rule. The e-detector (Shin, Ramdas and Rinaldo) restarts this bet at every block; its average run "
        "length to a false alarm is at least 1/alpha blocks.",
        "A rejected null says the stream was miscalibrated at some time, not how much: the measures per "
        "period (ECE, mean residual, Brier score) describe how much, and are not tests.",
        "Reliability bands: for each bin a confidence sequence for E[y - p | bin] (empirical-Bernstein "
        f"capital, level alpha/{bins * monitor.n_monitored_} per bin), valid at every time "
        "simultaneously for a stationary stream; the split at the estimated "
        "change is chosen from the data, so the two diagrams are descriptive.",
    ]


@validate_params(
    {"monitor": [HasMethods(["update", "get_state"])], "path": OUTPUT_PATH, "title": [str, None]},
    prefer_skip_nested_validation=True,
)
def render_html(monitor, path=None, *, title=None):
    """The monitor's page: status, evidence path, measures per period, reliability bands.

    Parameters
    ----------
    monitor : CalibrationMonitor
        A monitor that has seen at least one complete block.
    path : str or path-like, default=None
        Where to write the page (not written when None).
    title : str, default=None
        The page title (default: "Calibration monitor").

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
    >>> monitor = CalibrationMonitor().update(rng.uniform(size=5_000) < p, p)
    >>> page = render_html(monitor)
    >>> page.startswith("<!DOCTYPE html>") and "No alarm" in page
    True
    """
    if getattr(monitor, "n_blocks_", 0) == 0:
        raise ValueError("render_html needs a monitor that has seen at least one complete block of rows.")
    e = html.escape
    title = title or "Calibration monitor"
    lines, alarm = _verdict(monitor)
    body = [f"<h1>{e(title)}</h1>"]
    body.append(f'<div class="verdict {"alarm" if alarm else "quiet"}"><strong>Status</strong><ul>')
    body += [f"<li>{e(x)}</li>" for x in lines]
    body.append("</ul></div>")
    body.append('<div class="table-wrap"><table class="metrics"><tbody>')
    body += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _summary_rows(monitor)]
    body.append("</tbody></table></div>")
    h = monitor.history_
    per = monitor.measures_by_period()
    figures = []
    try:
        figures = [
            (
                "Evidence against calibration",
                _evidence_figure(monitor, h),
                "The e-value after each block on a log scale, with the alarm line 1/alpha, the first alarm "
                "and the estimated start of the change. Under calibration the e-value drifts down; a "
                "persistent miscalibration makes it grow exponentially.",
            ),
            (
                "Calibration measures per period",
                _periods_figure(monitor, per, h),
                "Binned ECE, mean residual and Brier score of each period (consecutive groups of blocks), "
                "computed from the merged per-bin sums of its blocks.",
            ),
            (
                "Time-uniform reliability diagram",
                _bands_figure(monitor, _segments(monitor)),
                "Each bin's mean residual y - p with its time-uniform band (a confidence sequence: valid "
                "whenever the page is looked at); a band that excludes 0 marks a miscalibrated bin. Before "
                "and after the estimated change when there is one.",
            ),
        ]
    except ImportError:
        figures = None
    body.append("<section><h2>Evidence</h2>")
    if figures is None:
        body.append(
            '<p class="note">Figures omitted: matplotlib is not installed (install it with '
            "<code>pip install &quot;skcal[plot]&quot;</code>).</p>"
        )
    else:
        body.append(_figure_html(*figures[0]))
    body.append("</section><section><h2>Calibration measures per period</h2>")
    body.append(_periods_table(per))
    if figures is not None:
        body.append(_figure_html(*figures[1]))
    body.append("</section><section><h2>Time-uniform reliability diagram</h2>")
    if figures is not None:
        body.append(_figure_html(*figures[2]))
    body.append('</section><section><h2>What the guarantee is</h2><ul class="legend">')
    body += [f"<li>{e(x)}</li>" for x in _legend(monitor)]
    body.append("</ul></section>")
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{CSS}{_EXTRA_CSS}</style>\n</head>\n<body>\n"
        '<div class="skcal-report">\n'
        + "\n".join(body)
        + "\n<footer><p>Made by skcal.</p></footer>\n</div>\n"
        "</body>\n</html>\n"
    )
    if path is not None:
        pathlib.Path(path).write_text(page, encoding="utf-8")
    return page


def _figure_html(title, fig, caption):
    e = html.escape
    return (
        f'<figure><img alt="{e(title)}" src="data:image/png;base64,{png_base64(fig)}">'
        f"<figcaption><strong>{e(title)}.</strong> {e(caption)}</figcaption></figure>"
    )


def _periods_table(per):
    e = html.escape
    time = "time_start" in per
    head = ["rows", *(["from", "to"] if time else []), "ECE", "mean residual", "Brier", "e-value at end"]
    parts = ['<div class="table-wrap"><table class="metrics"><thead><tr>']
    parts += [f"<th>{e(h)}</th>" for h in head]
    parts.append("</tr></thead><tbody>")
    for _, r in per.iterrows():
        cells = [f"{int(r['first_row']):,}-{int(r['last_row']):,}"]
        if time:
            cells += [str(r["time_start"]), str(r["time_end"])]
        cells += [fmt(r["ece"]), fmt(r["mean_residual"]), fmt(r["brier"]), fmt(r["e_value"], 3)]
        parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    parts.append("</tbody></table></div>")
    return "\n".join(parts)
