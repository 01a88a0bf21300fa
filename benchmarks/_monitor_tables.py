"""The Markdown tables of ``benchmarks/monitor.py``'s results page, from a stored result.

``python -m benchmarks.monitor --tables benchmarks/results/monitor.json`` prints them, so no number
of ``docs/benchmarks/monitor.md`` is retyped. One function per part of the benchmark.
"""

from __future__ import annotations

__all__ = ["tables"]


def _fmt_rate(e):
    if e is None:
        return "-"
    lo, hi = e["ci95"]
    return f"{e['rate']:.3f} [{lo:.3f}, {hi:.3f}] ({e['alarms']}/{e['streams']})"


def _fmt_rows(v):
    return "-" if v is None else f"{v:,.0f}"


def _null(result, lines):
    null = result.get("null", {})
    if null:
        lines.append(
            "| tolerance | l1 error | shape | rows | test: ever alarms | detect (horizon 5%): ever alarms | "
            "bound ever above the error | bound at the end (median) |"
        )
        lines.append("|---:|---:|---|---:|---|---|---|---:|")
        for e in null.values():
            lines.append(
                f"| {e['tolerance']:g} | {e['calibration_error']:g} | {e['shape']} | {e['rows']:,} | "
                f"{_fmt_rate(e['test'])} | {_fmt_rate(e['detect_horizon'])} | "
                f"{_fmt_rate(e['lcb_above_error'])} | "
                f"{e['lcb_median_end']:.4f} |"
            )
        lines.append("")


def _coverage(result, lines):
    cov = result.get("coverage", {})
    if cov:
        lines.append(
            "| l1 error | shape | rows | bound ever above the error | bound at the end: median [10%, 90%] |"
        )
        lines.append("|---:|---|---:|---|---|")
        for e in cov.values():
            lines.append(
                f"| {e['calibration_error']:g} | {e['shape']} | {e['rows']:,} | "
                f"{_fmt_rate(e['lcb_ever_above'])} | "
                f"{e['lcb_end_median']:.4f} [{e['lcb_end_q10']:.4f}, {e['lcb_end_q90']:.4f}] |"
            )
        lines.append("")


def _tuned(result, lines):
    tuned = result.get("tuned", {})
    if tuned:
        lines.append(
            "| calibrated streams | skcal_detect | skcal_detect_horizon | skcal_test | skcal_test_tol | "
            "ADWIN default | ADWIN matched delta | PH matched threshold |"
        )
        lines.append("|---|---|---|---|---|---|---|---|")
        for g, e in tuned.items():
            far = e["skcal_false_alarms"]
            cells = [
                _fmt_rate(far.get(d))
                for d in ("skcal_detect", "skcal_detect_horizon", "skcal_test", "skcal_test_tol")
            ]
            lines.append(
                f"| {g} ({e['streams']} x {e['rows']:,} rows) | "
                + " | ".join(cells)
                + f" | {_fmt_rate(e.get('adwin_default_rate'))} | {e.get('adwin', '-')} | "
                + f"{e.get('ph', '-')} |"
            )
        lines.append("")


def _horizon(result, lines):
    horizon = result.get("horizon", {})
    if horizon:
        lines.append("| detector (calibrated streams) | false alarms |")
        lines.append("|---|---|")
        lines.append(f"| skcal_detect (default) | {_fmt_rate(horizon['skcal_detect'])} |")
        for d, e in horizon.get("adwin", {}).items():
            lines.append(f"| ADWIN delta={d} | {_fmt_rate(e)} |")
        lines.append("")


def _delay(result, lines):
    delay = result.get("delay", {})
    for name, e in delay.items():
        lines.append(f"**{name}**")
        lines.append("")
        if "skipped" in e:
            lines.append(f"Skipped: {e['skipped']}.")
            lines.append("")
            continue
        if e.get("calibration_error_after") is not None:
            lines.append(f"l1 calibration error after the change: {e['calibration_error_after']:.4f}.")
            lines.append("")
        lines.append(
            "| detector | streams | false alarms before the change | detected | missed | median delay | "
            "90th percentile |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for det, d in e["detectors"].items():
            lines.append(
                f"| {det} | {d['streams']} | {d['false_alarms_before_change']} | {d['detected']} | "
                f"{d['missed']} | {_fmt_rows(d.get('median_delay'))} | {_fmt_rows(d.get('p90_delay'))} |"
            )
        parts = [
            f"{k}: median {v['median']:,.0f}, 90th percentile {v['p90']:,.0f} rows ({v['streams']} streams)"
            for k, v in e["change_location"].items()
            if v
        ]
        if parts:
            lines.append("")
            lines.append("Change-location error |change_at_ - change|: " + "; ".join(parts) + ".")
        lines.append("")


def _tolerance(result, lines):
    tol = result.get("tolerance", {})
    if tol:
        lines.append("| model | l1 error | smooth ECE | ECE (15 bins) |")
        lines.append("|---|---:|---:|---:|")
        for nm, m in tol["models"].items():
            lines.append(f"| {nm} | {m['l1_error']:.4f} | {m['smooth_ece']:.4f} | {m['ece_15']:.4f} |")
        lines.append("")
        lines.append(
            "| tolerance | models with smooth ECE <= tolerance / 2 | worst alarm rate among them | "
            f"worst alarm rate, smooth ECE <= {tol.get('practical_smooth_ece', '-')} | "
            "bias 0.02: median delay (missed) | bias 0.05: median delay (missed) |"
        )
        lines.append("|---:|---:|---|---|---|---|")
        for eps, c in tol["candidates"].items():
            models = c["models_with_smooth_ece_at_most_half"]
            practical = c.get("worst_practical_alarm_rate")
            lines.append(
                f"| {eps} | {len(models)} | {c['worst_alarm_rate']:.3f} | "
                f"{'-' if practical is None else f'{practical:.3f}'} | "
                f"{_fmt_rows(c.get('bias_0.02_median_delay'))} ({c.get('bias_0.02_missed', '-')}) | "
                f"{_fmt_rows(c.get('bias_0.05_median_delay'))} ({c.get('bias_0.05_missed', '-')}) |"
            )
        lines.append("")
        if "practical_smooth_ece" in tol:  # results made before the practical rule had another rule
            lines.append(
                f"The smallest tolerance at which every model with a smooth ECE of at most "
                f"{tol['practical_smooth_ece']} stays silent: {tol.get('smallest_quiet_tolerance')}."
            )
            lines.append("")
        cands = list(tol["candidates"])
        run = list(next(iter(tol["candidates"].values())).get("alarm_rate_per_model", {}))
        if run:
            lines.append(
                f"| model | l1 error | smooth ECE | alarms over {tol['rows']:,} rows at tolerance "
                + " | ".join(cands)
                + " |"
            )
            lines.append("|---|---:|---:|" + "---|" * len(cands))
            for nm in run:
                m = tol["models"][nm]
                cells = []
                for eps in cands:
                    r = tol["candidates"][eps]["alarm_rate_per_model"][nm]
                    cells.append(f"{r['alarms']}/{r['streams']}")
                head = f"| {nm} | {m['l1_error']:.4f} | {m['smooth_ece']:.4f} | "
                lines.append(head + " | ".join(cells) + " |")
            lines.append("")


def _real(result, lines):
    real = result.get("real", {})
    if real and "skipped" not in real:
        lines.append(
            "| model | accuracy | ECE (15 bins) | smooth ECE | mean residual | lower bound | "
            "alarm at tolerance 0 | "
            "alarm at the default tolerance |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, v in real.items():
            lines.append(
                f"| {name} | {v['accuracy']:.4f} | {v['ece_15']:.4f} | {v['smooth_ece']:.4f} | "
                f"{v['mean_residual']:+.4f} | "
                f"{v['calibration_error_lcb']:.4f} | {_fmt_rows(v['alarm_at_tolerance_0'])} | "
                f"{_fmt_rows(v['alarm_at_default_tolerance'])} |"
            )
        lines.append("")


def _speed(result, lines):
    speed = result.get("speed", {})
    if speed:
        t = speed["timings"]
        lines.append("| call | seconds (median) | rows per second | / np.bincount |")
        lines.append("|---|---:|---:|---:|")
        for k, sec in t["seconds_median"].items():
            ratio = t["ratio_to_bincount"].get(k, 1.0)
            lines.append(f"| {k} | {sec:.4f} | {t['rows_per_second'][k]:.3g} | {ratio:.2f} |")
        lines.append("")


def tables(result):
    """The results page's tables (Markdown) from a stored result, so no number is retyped."""
    lines = []
    for part in (_null, _coverage, _tuned, _horizon, _delay, _tolerance, _real, _speed):
        part(result, lines)
    return "\n".join(lines)
