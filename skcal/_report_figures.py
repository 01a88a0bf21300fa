"""The figures of a :class:`~skcal.report.CalibrationReport` (matplotlib imported by the caller's need).

Figures are made with :class:`matplotlib.figure.Figure` directly (never through pyplot), so a
report can be rendered in any process, with any backend, without opening windows.
"""

from __future__ import annotations

import numpy as np


def _grid(n, ncols_max, width, height):
    from matplotlib.figure import Figure

    ncols = min(n, ncols_max)
    nrows = int(np.ceil(n / ncols))
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def metric_interval_figure(report):
    """One panel per metric: every model's value with its bootstrap interval (the best in red).

    Models keep the report's order in every panel, so the y axis is shared and the model names
    are written once per row of panels. A metric ranked by its absolute value (such as the
    variance bias of a second-order report) is titled "closer to 0 is better" and gets a dashed
    reference line at 0.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    n = len(report.metric_names)
    ncols = min(n, 4)
    nrows = int(np.ceil(n / ncols))
    fig = Figure(figsize=(2.2 + 2.9 * ncols, 0.9 + nrows * (0.6 + 0.32 * len(report.model_names))))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    models = report.model_names
    ypos = np.arange(len(models))[::-1]
    level = int(round(100 * report.confidence_level))
    for ax, name in zip(axes, report.metric_names, strict=False):
        t = report.table[name].loc[models]
        v, lo, hi = t["value"].to_numpy(), t["low"].to_numpy(), t["high"].to_numpy()
        err = None
        if np.isfinite(lo).all():
            err = np.vstack([np.maximum(v - lo, 0), np.maximum(hi - v, 0)])
        colors = np.where(t["rank"].to_numpy() == 1, "C3", "C0")
        ax.errorbar(v, ypos, xerr=err, fmt="none", ecolor="0.5", capsize=3)
        ax.scatter(v, ypos, c=colors, zorder=3)
        direction = "higher is better" if report.greater_is_better[name] else "lower is better"
        if report._metric_by_name[name].rank_by_abs:  # ranked by |value|: zero is ideal
            direction = "closer to 0 is better"
            ax.axvline(0.0, color="0.3", lw=1, ls="--", zorder=1)
        ax.set_title(f"{report.metric_labels[name]}\n({direction})", fontsize="medium")
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize="small")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)
    axes[0].set_yticks(ypos, [str(m) for m in models])
    if report.bootstrap_values.shape[0]:
        fig.suptitle(f"Metrics with {level}% paired-bootstrap intervals (best in red)")
    else:
        fig.suptitle("Metrics (best in red; no intervals: the bootstrap was skipped)")
    fig.set_layout_engine("constrained")
    return fig


def reliability_figure(report, *, y, preds, n_bootstrap, random_state, title, xlabel=None, ylabel=None):
    """A reliability diagram (SCDL soft bins, bootstrap band, smooth curve) per model.

    ``y`` is one label vector for every model, or a dict model name -> labels; ``xlabel`` and
    ``ylabel`` are passed to :meth:`~skcal.ReliabilityDisplay.plot` (None: its defaults).
    """
    from skcal.display import ReliabilityDisplay

    fig, axes = _grid(len(preds), 3, 4.3, 4.0)
    displays = {}
    for ax, (name, p) in zip(axes, preds.items(), strict=True):
        disp = ReliabilityDisplay._compute(
            y[name] if isinstance(y, dict) else y,
            p,
            n_bootstrap=n_bootstrap,
            confidence_level=report.confidence_level,
            random_state=random_state,
        )
        disp.plot(ax=ax, xlabel=xlabel, ylabel=ylabel)
        ax.set_title(str(name), fontsize="medium")
        displays[name] = disp
    fig.suptitle(title)
    return fig, displays


def variance_reliability_figure(report, n_bins=8):
    """Second order: predicted ``sigma2`` against the estimated squared error of ``m``, per model.

    Rows are grouped into ``n_bins`` equal-mass bins of ``sigma2``. In each bin the mean of
    ``e = t2 - 2 m t1 + m^2`` (unbiased for ``(f* - m)^2`` given the input, SPEC 0) is drawn
    against the mean ``sigma2`` with a 90% normal interval. A predictor whose mean is calibrated
    and whose ``sigma2`` is calibrated lies on the diagonal.
    """
    d = report._data
    fig, axes = _grid(len(report.predictions), 3, 4.0, 3.8)
    for ax, (name, s) in zip(axes, report.predictions.items(), strict=True):
        m, s2 = s[:, 0], s[:, 1]
        e = d.t2 - 2.0 * m * d.t1 + m**2
        order = np.argsort(s2, kind="stable")
        groups = [g for g in np.array_split(order, min(n_bins, len(order))) if g.size]
        x = np.array([s2[g].mean() for g in groups])
        yv = np.array([e[g].mean() for g in groups])
        se = np.array([e[g].std(ddof=1) / np.sqrt(g.size) if g.size > 1 else np.nan for g in groups])
        top = max(float(np.nanmax(x)), float(np.nanmax(yv + 1.645 * np.nan_to_num(se))), 1e-3) * 1.1
        ax.plot([0, top], [0, top], ls=":", color="0.5", lw=1)
        ax.errorbar(x, yv, yerr=1.645 * se, fmt="o-", color="C2", capsize=3, lw=1)
        ax.axhline(0, color="0.8", lw=0.8)
        ax.set(xlabel="predicted sigma2 (bin mean)", ylabel="estimated E[(f* - m)^2]", title=str(name))
        ax.title.set_fontsize("medium")
    fig.suptitle("Second-order reliability: predicted variance vs. estimated squared error of m")
    return fig


def make_report_figures(report):
    """All figures of a report, as a dict title -> Figure."""
    figs = {}
    d = report._data
    rs = report._random_state
    nb = min(report.bootstrap_values.shape[0], 100)
    if report.order == "first":
        title = "Reliability diagrams: SCDL soft bins with bootstrap band, smooth calibration curve"
        fig, displays = reliability_figure(
            report, y=d.y, preds=report.predictions, n_bootstrap=nb, random_state=rs, title=title
        )
        report.reliability_displays = displays
        figs[title] = fig
    elif report.order == "multiclass":
        title = "Top-label reliability: confidence of the most probable class against its correctness"
        preds, ys = {}, {}
        for name, P in report.predictions.items():
            top = np.argmax(P, axis=1)  # ties: the lowest index, as in SPEC 5
            preds[name] = P[np.arange(P.shape[0]), top]
            ys[name] = (top == d.codes).astype(float)
        fig, displays = reliability_figure(
            report,
            y=ys,
            preds=preds,
            n_bootstrap=nb,
            random_state=rs,
            title=title,
            xlabel="confidence: top-label probability (soft bin)",
            ylabel="accuracy of the top label",
        )
        report.reliability_displays = displays
        figs[title] = fig
    else:
        title = "Reliability of the mean m against every vote"
        preds = {name: s[d.vote_rows, 0] for name, s in report.predictions.items()}
        fig, displays = reliability_figure(
            report,
            y=d.votes,
            preds=preds,
            n_bootstrap=nb,
            random_state=rs,
            title=title,
            xlabel="mean m, rounded (soft bin)",
            ylabel="observed frequency of a positive vote",
        )
        report.reliability_displays = displays
        figs[title] = fig
        figs["Second-order reliability (variance)"] = variance_reliability_figure(report)
    figs["Metric intervals"] = metric_interval_figure(report)
    return figs
