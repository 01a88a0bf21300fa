"""Rendering a report: text, Markdown, a JSON document and a self-contained HTML page.

Every writer reads the report's public attributes only. Model names, titles and notes are
user text: the HTML and the Markdown escape it (Markdown passes raw HTML through, so ``<``,
``>`` and ``&`` become entities there too).
"""

from __future__ import annotations

import html
import json
import pathlib
import re
import textwrap
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import pandas as pd

from skcal._html import NO_FIGURES, document, figure_html, fmt

#: Version of the JSON document's layout (see :func:`report_to_dict`).
JSON_SCHEMA_VERSION = "skcal.report/1"


def _detail_json(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return _num(v)


def _details_text(details, digits):
    parts = []
    for k, v in details.items():
        if isinstance(v, (bool, np.bool_)):
            parts.append(f"{k}={'yes' if v else 'no'}")
        elif isinstance(v, (int, np.integer)):
            parts.append(f"{k}={v}")
        else:
            parts.append(f"{k}={fmt(v, digits)}")
    return ", ".join(parts)


def cell_parts(report, model, name, digits=4, intervals=True):
    """``(main, extra)`` strings of a table cell: ``value [low, high] #rank`` and P(best)/details."""
    t = report.table[name]
    v, lo, hi, rk, pb = t.loc[model, ["value", "low", "high", "rank", "p_best"]]
    main = fmt(v, digits)
    if intervals and np.isfinite(lo):
        main += f" [{fmt(lo, digits)}, {fmt(hi, digits)}]"
    several = len(report.model_names) > 1  # one model has no rank and no P(best)
    main += f" #{int(rk)}" if several else ""
    extra = []
    if intervals and several and np.isfinite(pb):
        extra.append(f"P(best) {pb:.2f}")
    det = report.metric_details.get(name, {}).get(model)
    if det:
        extra.append(_details_text(det, 3))
    return main, "; ".join(extra)


def table_order(report):
    """``(models, metrics)`` as every table shows them: the primary measure first, models ranked by it.

    Ties keep the order the models were given in.
    """
    names = list(report.metric_names)
    head = report.primary_metric
    if head is None:
        return list(report.model_names), names
    ranks = report.table[head]["rank"]
    given = {m: i for i, m in enumerate(report.model_names)}
    models = sorted(report.model_names, key=lambda m: (ranks[m], given[m]))
    return models, [head, *(n for n in names if n != head)]


def formatted_table(report, digits=4, intervals=True, details=True):
    models, metrics = table_order(report)
    out = {}
    for name in metrics:
        cells = []
        for model in models:
            main, extra = cell_parts(report, model, name, digits, intervals)
            cells.append(f"{main} ({extra})" if extra and details else main)
        out[report.metric_labels[name]] = cells
    if report.calibration_tests is not None:
        out["calibration p"] = [fmt(report.calibration_tests.loc[m, "pvalue"], 3) for m in models]
    return pd.DataFrame(out, index=pd.Index(models, name="model"))


#: Columns of the terminal table: it is cut into blocks of columns no wider than this.
TEXT_WIDTH = 100


def _text_blocks(frame, width):
    """The frame as text in blocks of whole columns, each at most ``width`` characters wide."""
    index = [str(frame.index.name or "")] + [str(i) for i in frame.index]
    iw = max(len(x) for x in index)
    cols = [(str(c), [str(v) for v in frame[c]]) for c in frame.columns]
    blocks, current, used = [], [], iw
    for head, cells in cols:
        w = max(len(head), *(len(v) for v in cells)) + 2
        if current and used + w > width:
            blocks.append(current)
            current, used = [], iw
        current.append((head, cells, w))
        used += w
    if current:
        blocks.append(current)
    out = []
    for block in blocks:
        rows = [index[0].ljust(iw) + "".join(h.rjust(w) for h, _, w in block)]
        for r, name in enumerate(index[1:]):
            rows.append(name.ljust(iw) + "".join(c[r].rjust(w) for _, c, w in block))
        out.append("\n".join(line.rstrip() for line in rows))
    return "\n\n".join(out)


def to_text(report, digits=4, intervals=False, width=TEXT_WIDTH):
    """The verdict and the table as plain text, the table cut into blocks of ``width`` columns."""
    body = _text_blocks(formatted_table(report, digits, intervals, details=False), width)
    verdict = [textwrap.fill(x, width, subsequent_indent="  ") for x in report.verdict]
    lines = [*verdict, "", body]
    head = report.primary_metric
    if head is not None and len(report.model_names) > 1:
        lines += ["", f"Rows ranked by {report.metric_labels[head]}, the primary measure (#1 is best)."]
    return "\n".join(lines)


def bootstrap_sentence(report):
    """How the replicates were drawn and how many were used (with the budget, when it lowered them)."""
    B, asked = report.n_bootstrap, report.n_bootstrap_requested
    words = (
        f"Bootstrap: {B} paired Poisson replicates (each validation row counted Poisson(1) times, the "
        "same counts for every model), computed through the metrics' statistics; the intervals' end "
        "points and P(best) carry a Monte Carlo error that grows as 1/sqrt(B)"
    )
    if B < asked:
        words += (
            f". max_seconds={report.max_seconds:g} lowered the replicates from the {asked} asked to {B}: "
            f"that error is about {np.sqrt(asked / B):.1f} times that of {asked} replicates"
        )
    return words + "."


def direction(report, name):
    """Which values of metric ``name`` are better, in words."""
    if report.rank_by_abs[name]:
        return "closer to 0 is better"
    return "higher is better" if report.greater_is_better[name] else "lower is better"


def legend_lines(report):
    level = int(round(100 * report.confidence_level))
    lines = []
    if report.n_bootstrap == 0:
        lines.append(
            f"{report.kind.sample_description(report)}; cells are value #rank (1 is best). No intervals: the "
            "bootstrap was skipped (n_bootstrap=0)."
        )
    else:
        method = {
            "bc-percentile": "bias-corrected percentile interval: the bootstrap quantiles shifted by the "
            "estimate minus the replicates' median, so the interval is centred on the value",
            "percentile": "percentile interval of the replicates",
            "basic": "basic bootstrap interval [2 value - q_hi, 2 value - q_lo]",
        }[report.interval_method]
        lines.append(
            f"{report.kind.sample_description(report)}; cells are value [{level}% interval] #rank (1 is "
            f"best) from a paired bootstrap of {report.n_bootstrap} replicates ({method}); P(best) is the "
            "fraction of replicates in which the model is the best."
        )
        lines.append(bootstrap_sentence(report))
    if report.calibration_tests is not None:
        t = report.calibration_tests
        lines.append(
            "calibration p: p-value of the hypothesis 'the model is calibrated' "
            f"({report.kind.test_description()}; statistic {t['measure'].iloc[0]}; {t['method'].iloc[0]}, "
            f"{int(t['n_resamples'].iloc[0])} resamples). A small p-value is evidence of miscalibration."
        )
    for name in report.metric_names:
        what = f"{report.metric_descriptions[name]} ({direction(report, name)})"
        lines.append(f"{report.metric_labels[name]}: {what}.")
    lines += report.kind.legend_lines(report)
    return lines


# ----------------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------------
def md_escape(s):
    """Escape user text for a Markdown table cell: HTML, pipes, backslashes, emphasis, newlines."""
    s = html.escape(str(s), quote=False)
    for ch in "\\`*_[]|":
        s = s.replace(ch, "\\" + ch)
    return s.replace("\r", " ").replace("\n", " ")


def to_markdown(report, digits=4):
    ft = formatted_table(report, digits)
    header = ["model", *ft.columns]
    lines = [f"## {md_escape(report.title)}", ""]
    lines += [f"**Verdict.** {md_escape(' '.join(report.verdict))}", ""] if report.verdict else []
    for note in report.notes:
        lines += [md_escape(note), ""]
    lines.append("| " + " | ".join(md_escape(h) for h in header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * len(ft.columns)) + "|")
    for model in ft.index:
        row = [model, *ft.loc[model].tolist()]
        lines.append("| " + " | ".join(md_escape(c) for c in row) + " |")
    lines.append("")
    lines += [f"- {md_escape(x)}" for x in legend_lines(report)]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# JSON
# ----------------------------------------------------------------------------------------------
def _num(x):
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def skcal_version(default="unknown"):
    """The installed skcal's version (``default`` when run from a checkout that is not installed)."""
    try:
        return version("skcal")
    except PackageNotFoundError:
        return default


def report_to_dict(report):
    """The report as plain JSON types (NaN becomes ``None``); layout :data:`JSON_SCHEMA_VERSION`."""
    results = []
    for name in report.metric_names:
        t = report.table[name]
        for model in report.model_names:
            results.append(
                {
                    "model": model,
                    "metric": name,
                    **{field: _num(t.loc[model, field]) for field in ("value", "low", "high")},
                    "rank": int(t.loc[model, "rank"]),
                    "p_best": _num(t.loc[model, "p_best"]),
                    "details": {
                        k: _detail_json(v)
                        for k, v in (report.metric_details.get(name, {}).get(model) or {}).items()
                    },
                }
            )
    tests = []
    if report.calibration_tests is not None:
        for model in report.model_names:
            row = report.calibration_tests.loc[model]
            tests.append(
                {
                    "model": model,
                    "statistic": _num(row["statistic"]),
                    "pvalue": _num(row["pvalue"]),
                    "measure": str(row["measure"]),
                    "method": str(row["method"]),
                    "n_resamples": int(row["n_resamples"]),
                }
            )
    return {
        "schema": JSON_SCHEMA_VERSION,
        "skcal_version": skcal_version(),
        "kind": report.order,
        "title": report.title,
        "n_samples": int(report.n_samples),
        "n_bootstrap": int(report.n_bootstrap),
        "bootstrap": {
            "method": "poisson",
            "n_replicates": int(report.n_bootstrap),
            "n_requested": int(report.n_bootstrap_requested),
            "max_seconds": None if report.max_seconds is None else float(report.max_seconds),
            "budget_limited": bool(report.n_bootstrap < report.n_bootstrap_requested),
            "monte_carlo_error": "grows as 1/sqrt(n_replicates)",
        },
        "confidence_level": float(report.confidence_level),
        "interval_method": report.interval_method,
        "models": list(report.model_names),
        "metrics": [
            {
                "name": name,
                "label": report.metric_labels[name],
                "description": report.metric_descriptions[name],
                "greater_is_better": bool(report.greater_is_better[name]),
                "rank_by_abs": bool(report.rank_by_abs[name]),
            }
            for name in report.metric_names
        ],
        "results": results,
        "calibration_tests": tests,
        "verdict": list(report.verdict),
        "notes": list(report.notes),
    }


def _object(properties, optional=()):
    """A JSON Schema object whose properties are all required but the ``optional`` ones."""
    required = [k for k in properties if k not in optional]
    return {"type": "object", "required": required, "properties": properties}


#: JSON Schema (draft 2020-12) of :func:`report_to_dict`'s output.
JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_object(
        {
            "schema": {"const": JSON_SCHEMA_VERSION},
            "skcal_version": {"type": "string"},
            "kind": {"type": "string"},
            "title": {"type": "string"},
            "n_samples": {"type": "integer", "minimum": 1},
            "n_bootstrap": {"type": "integer", "minimum": 0},
            "bootstrap": _object(
                {
                    "method": {"const": "poisson"},
                    "n_replicates": {"type": "integer", "minimum": 0},
                    "n_requested": {"type": "integer", "minimum": 0},
                    "max_seconds": {"type": ["number", "null"]},
                    "budget_limited": {"type": "boolean"},
                    "monte_carlo_error": {"type": "string"},
                },
                optional=("monte_carlo_error",),
            ),
            "confidence_level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "interval_method": {"enum": ["bc-percentile", "percentile", "basic"]},
            "models": {"type": "array", "items": {"type": "string"}},
            "metrics": {
                "type": "array",
                "items": _object(
                    {
                        "name": {"type": "string"},
                        "label": {"type": "string"},
                        "description": {"type": "string"},
                        "greater_is_better": {"type": "boolean"},
                        "rank_by_abs": {"type": "boolean"},
                    }
                ),
            },
            "results": {
                "type": "array",
                "items": _object(
                    {
                        "model": {"type": "string"},
                        "metric": {"type": "string"},
                        "value": {"type": ["number", "null"]},
                        "low": {"type": ["number", "null"]},
                        "high": {"type": ["number", "null"]},
                        "rank": {"type": "integer", "minimum": 1},
                        "p_best": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                        "details": {"type": "object"},
                    }
                ),
            },
            "calibration_tests": {
                "type": "array",
                "items": _object(
                    {
                        "model": {"type": "string"},
                        "statistic": {"type": ["number", "null"]},
                        "pvalue": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                        "measure": {"type": "string"},
                        "method": {"type": "string"},
                        "n_resamples": {"type": "integer", "minimum": 1},
                    }
                ),
            },
            "verdict": {"type": "array", "items": {"type": "string"}},
            "notes": {"type": "array", "items": {"type": "string"}},
        },
        optional=("bootstrap",),
    ),
}


def to_json(reports, indent=2):
    docs = [report_to_dict(r) for r in reports]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=indent, allow_nan=False)


# ----------------------------------------------------------------------------------------------
# HTML
# ----------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf")


def _whole_numbers(text):
    """Escaped ``text`` with every number in a ``<span class="num">`` that never breaks inside."""
    out, at = [], 0
    for m in _NUMBER.finditer(text):
        out += [html.escape(text[at : m.start()]), f'<span class="num">{html.escape(m.group())}</span>']
        at = m.end()
    out.append(html.escape(text[at:]))
    return "".join(out)


def html_section(report, digits=4, level=2, heading=True):
    e = html.escape
    parts = [f"<section><h{level}>{e(report.title)}</h{level}>" if heading else "<section>"]
    if report.verdict:
        parts.append('<div class="verdict"><strong>Verdict</strong><ul>')
        parts += [f"<li>{e(x)}</li>" for x in report.verdict]
        parts.append("</ul></div>")
    for note in report.notes:
        parts.append(f'<p class="note">{e(note)}</p>')
    models, metrics = table_order(report)
    parts.append('<div class="table-wrap"><table class="metrics"><thead><tr><th>model</th>')
    for name in metrics:
        parts.append(
            f'<th title="{e(report.metric_descriptions[name])}">{e(report.metric_labels[name])}</th>'
        )
    tests = report.calibration_tests
    if tests is not None:
        parts.append('<th title="p-value of the hypothesis: the model is calibrated">calibration p</th>')
    parts.append("</tr></thead><tbody>")
    for model in models:
        parts.append(f"<tr><th>{e(model)}</th>")
        for name in metrics:
            main, extra = cell_parts(report, model, name, digits)
            cls = ' class="best"' if int(report.table.loc[model, (name, "rank")]) == 1 else ""
            more = f'<span class="extra">{e(extra)}</span>' if extra else ""
            parts.append(f"<td{cls}>{_whole_numbers(main)}{more}</td>")
        if tests is not None:
            parts.append(f'<td class="pvalue">{e(fmt(tests.loc[model, "pvalue"], 3))}</td>')
        parts.append("</tr>")
    parts.append('</tbody></table></div><ul class="legend">')
    parts += [f"<li>{e(x)}</li>" for x in legend_lines(report)]
    parts.append("</ul>")
    figs = report.figures
    if not figs:
        parts.append(NO_FIGURES)
    words = report.figure_explanations
    parts += [figure_html(title, fig, words.get(title, "")) for title, fig in figs.items()]
    parts.append("</section>")
    return "\n".join(parts)


def render_page(reports, *, title, intro=(), digits=4):
    e = html.escape
    body = [f"<h1>{e(title)}</h1>"] + [f"<p>{e(p)}</p>" for p in intro]
    # a section repeating the page title (a single report) gets no second heading
    body += [html_section(r, digits=digits, heading=r.title != title) for r in reports]
    return document(title, body)


def write_text(text, path):
    path = pathlib.Path(path)
    path.write_text(text, encoding="utf-8")
    return path
