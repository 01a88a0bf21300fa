"""The figures of a report. They read only the report's public attributes.

Figures are made with :class:`matplotlib.figure.Figure` directly (never through pyplot), so a
report can be rendered in any process, with any backend, without opening windows. They share
the style of :mod:`skcal._plotting` with the displays and the docs.
"""

from __future__ import annotations

import numpy as np

from skcal._plotting import (
    COLOR_BEST,
    COLOR_DATA,
    COLOR_REFERENCE,
    SMALL_SIZE,
    TITLE_SIZE,
    new_figure,
    style_axes,
)
from skcal.display import ReliabilityDisplay
from skcal.report._render import direction

#: Bootstrap replicates of the reliability diagrams' intervals (vectorised, cheap).
FIGURE_BOOTSTRAP = 200


def _layout(n, ncols_max=3):
    ncols = min(n, ncols_max)
    nrows = int(np.ceil(n / ncols))
    return nrows, ncols


def reliability_figure(report, inputs, *, xlabel, ylabel):
    """One reliability diagram per model with its prediction histogram; one legend for all.

    ``inputs`` maps a model to the binary ``(y, p)`` it is drawn from. The legend goes in the
    grid's first empty slot or, when the grid is full, under the panels.
    """
    names = list(inputs)
    nrows, ncols = _layout(len(names))
    fig = new_figure("CalibrationReport.figures", figsize=(4.1 * ncols, 4.3 * nrows + 0.4))
    gs = fig.add_gridspec(2 * nrows, ncols, height_ratios=[3, 1] * nrows)
    displays = {}
    nb = min(report.n_bootstrap, FIGURE_BOOTSTRAP)
    for k, name in enumerate(names):
        r, c = divmod(k, ncols)
        ax = fig.add_subplot(gs[2 * r, c])
        hax = fig.add_subplot(gs[2 * r + 1, c], sharex=ax)
        y, p = inputs[name]
        disp = ReliabilityDisplay.from_predictions(
            y,
            p,
            n_bins=report.n_bins,
            strategy=report.strategy,
            n_bootstrap=nb,
            confidence_level=report.confidence_level,
            random_state=report.random_state,
            plot=False,
        )
        disp.plot(
            ax=ax,
            hist_ax=hax,
            legend=False,
            show_values=False,
            xlabel=xlabel,
            ylabel=ylabel if c == 0 else "",
        )
        ax.set_title(f"{name} (smECE {disp.smooth_ece:.3g})", fontsize=TITLE_SIZE)
        displays[name] = disp
    report.reliability_displays = displays
    handles, labels = ax.get_legend_handles_labels()
    if len(names) < nrows * ncols:  # the first empty slot holds the legend
        r, c = divmod(len(names), ncols)
        lax = fig.add_subplot(gs[2 * r : 2 * r + 2, c])
        lax.axis("off")
        lax.legend(handles, labels, loc="center", fontsize=SMALL_SIZE, frameon=False)
    else:
        fig.legend(
            handles, labels, loc="outside lower center", ncols=min(len(labels), 3), fontsize=SMALL_SIZE
        )
    return fig


def interval_figure(report):
    """One panel per metric: every model's value with its interval (the best in red).

    Models keep the report's order in every panel (the y axis is shared). A metric ranked by its
    absolute value is titled "closer to 0 is better" and gets a dashed line at 0.
    """
    names = report.metric_names
    models = report.model_names
    nrows, ncols = _layout(len(names), 4)
    fig = new_figure(
        "CalibrationReport.figures",
        figsize=(2.0 + 2.8 * ncols, 0.8 + nrows * (0.9 + 0.34 * len(models))),
    )
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    ypos = np.arange(len(models))[::-1]
    level = int(round(100 * report.confidence_level))
    for ax, name in zip(axes, names, strict=False):
        t = report.table[name].loc[models]
        v, lo, hi = t["value"].to_numpy(), t["low"].to_numpy(), t["high"].to_numpy()
        err = None
        if np.isfinite(lo).all():
            err = np.vstack([np.maximum(v - lo, 0), np.maximum(hi - v, 0)])
        best = t["rank"].to_numpy() == 1
        eb = ax.errorbar(v, ypos, xerr=err, fmt="none", ecolor="0.5", capsize=3, clip_on=False)
        for artist in eb.lines[1] + eb.lines[2]:
            artist.set_clip_on(False)
        ax.scatter(v[~best], ypos[~best], color=COLOR_DATA, zorder=3, clip_on=False)
        ax.scatter(v[best], ypos[best], color=COLOR_BEST, zorder=3, clip_on=False)
        if report.rank_by_abs[name]:
            ax.axvline(0.0, color=COLOR_REFERENCE, lw=1, ls="--", zorder=1)
        style_axes(ax, title=f"{report.metric_labels[name]}\n({direction(report, name)})")
        ax.grid(axis="y", visible=False)
        ax.margins(x=0.12)
        ax.xaxis.set_major_locator(_locator(4))
        ax.set_ylim(-0.6, len(models) - 0.4)
    axes[0].set_yticks(ypos, [str(m) for m in models])
    for ax in axes[: len(names)][::ncols]:
        ax.tick_params(labelleft=True)
    spare = axes[len(names) :]
    for ax in spare:
        ax.axis("off")
    key = (
        f"dot: value; bar: {level}% paired-bootstrap interval; red: best"
        if report.n_bootstrap
        else "dot: value (no intervals: the bootstrap was skipped); red: best"
    )
    if len(spare):
        spare[0].text(0.5, 0.5, key.replace("; ", "\n"), ha="center", va="center", fontsize=SMALL_SIZE)
    else:
        fig.suptitle(key, fontsize=SMALL_SIZE)
    return fig


def variance_figure(report, errors, n_bins=8):
    """Second order: stated ``sigma2`` against the estimated squared error of ``m``, per model.

    ``errors`` maps a model to an unbiased per-row estimate of ``(f* - m)^2``. Rows are grouped
    into ``n_bins`` equal-mass bins of ``sigma2``; each bin's mean error is drawn with a 90%
    normal interval.
    """
    names = list(report.predictions)
    nrows, ncols = _layout(len(names))
    fig = new_figure("CalibrationReport.figures", figsize=(4.1 * ncols, 3.7 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(names) :]:
        ax.axis("off")
    for ax, name in zip(axes, names, strict=False):
        s2 = report.predictions[name][:, 1]
        e = errors[name]
        order = np.argsort(s2, kind="stable")
        groups = [g for g in np.array_split(order, min(n_bins, len(order))) if g.size]
        x = np.array([s2[g].mean() for g in groups])
        yv = np.array([e[g].mean() for g in groups])
        se = np.array([e[g].std(ddof=1) / np.sqrt(g.size) if g.size > 1 else 0.0 for g in groups])
        top = max(float(np.max(x)), float(np.max(yv + 1.645 * se)), 1e-3) * 1.1
        bottom = min(0.0, float(np.min(yv - 1.645 * se)) * 1.1)
        ax.plot([0, top], [0, top], ls=":", color=COLOR_REFERENCE, lw=1)
        eb = ax.errorbar(x, yv, yerr=1.645 * se, fmt="o-", color=COLOR_DATA, capsize=3, lw=1, clip_on=False)
        for artist in eb.lines[1] + eb.lines[2]:
            artist.set_clip_on(False)
        ax.axhline(0, color="0.8", lw=0.8)
        # a small left margin: a model stating sigma2 = 0 has its points on the axis, not under it
        ax.set(xlim=(-0.03 * top, top), ylim=(bottom, top), xlabel="stated variance sigma2 (bin mean)")
        ax.set_ylabel("estimated (f* - m)^2")
        style_axes(ax, title=str(name))
    return fig


def _locator(n):
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=n)
