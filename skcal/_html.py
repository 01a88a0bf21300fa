"""The pieces every skcal HTML page shares: the style sheet, numbers, figures and the page shell.

The report (:mod:`skcal.report`) and the monitor's page (:mod:`skcal.monitor`) both build on
these, so the two pages look alike and neither imports the other. Everything here is plain text
building; figures are matplotlib figures turned into inline PNG images (matplotlib is imported
by the callers that draw them).
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np

__all__ = ["CSS", "NO_FIGURES", "fmt", "png_base64", "figure_html", "document"]

#: What a page says in place of its figures when matplotlib is not installed.
NO_FIGURES = (
    '<p class="note">Figures omitted: matplotlib is not installed (install it with '
    "<code>pip install &quot;skcal[plot]&quot;</code>).</p>"
)

CSS = """
.skcal-report { font-family: system-ui, sans-serif; color: #222; line-height: 1.45; max-width: 1200px;
  margin: 0 auto; overflow-wrap: anywhere; }
.skcal-report .verdict { background: #eef6ff; border-left: 4px solid #1f77b4; padding: 0.6em 1em; }
.skcal-report .verdict ul { margin: 0.3em 0 0.3em 1.2em; padding: 0; }
.skcal-report .table-wrap { overflow-x: auto; max-width: 100%; }
.skcal-report table.metrics { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
.skcal-report table.metrics th, .skcal-report table.metrics td { border: 1px solid #ccc;
  padding: 0.3em 0.5em; text-align: right; vertical-align: top; }
.skcal-report table.metrics thead th { background: #f0f0f0; overflow-wrap: break-word; }
.skcal-report table.metrics tbody th { text-align: left; }
.skcal-report td.best { background: #e3f4e1; font-weight: 600; }
.skcal-report td.pvalue, .skcal-report .num { white-space: nowrap; }
.skcal-report table.metrics td { overflow-wrap: normal; }
.skcal-report td .extra { display: block; font-size: 0.85em; color: #666; font-weight: 400; }
.skcal-report figure { margin: 1.5em 0; }
.skcal-report figure img { max-width: 100%; height: auto; }
.skcal-report figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
.skcal-report p.note { background: #fff8e1; padding: 0.5em 0.8em; border-left: 4px solid #f0b400; }
.skcal-report ul.legend { font-size: 0.85em; color: #555; }
.skcal-report pre, .skcal-report code { white-space: pre-wrap; }
"""


def fmt(x, digits=4):
    """A number with ``digits`` significant digits; ``nan`` for a missing one.

    Parameters
    ----------
    x : float or None
    digits : int, default=4

    Returns
    -------
    str

    Examples
    --------
    >>> from skcal._html import fmt
    >>> fmt(0.0123456), fmt(None)
    ('0.01235', 'nan')
    """
    if x is None or not np.isfinite(x):
        return "nan"
    return f"{x:.{digits}g}"


def png_base64(fig):
    """A matplotlib figure as base64 PNG text, for an inline ``<img>``."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)  # the figures use constrained layout
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure_html(title, fig, caption=""):
    """A ``<figure>`` with the figure inline and its caption (the title in bold).

    Parameters
    ----------
    title : str
    fig : matplotlib.figure.Figure
    caption : str, default=""

    Returns
    -------
    str
    """
    e = html.escape
    text = f"<strong>{e(title)}.</strong> {e(caption)}" if caption else f"<strong>{e(title)}</strong>"
    return (
        f'<figure><img alt="{e(title)}" src="data:image/png;base64,{png_base64(fig)}">'
        f"<figcaption>{text}</figcaption></figure>"
    )


def document(title, body, extra_css=""):
    """A whole self-contained HTML page: the shared style, the title and the body's parts.

    Parameters
    ----------
    title : str
        The page title (user text: escaped).
    body : list of str
        HTML fragments, joined by newlines.
    extra_css : str, default=""
        Style rules added after the shared ones.

    Returns
    -------
    str

    Examples
    --------
    >>> from skcal._html import document
    >>> page = document("A & B", ["<p>hello</p>"])
    >>> "<title>A &amp; B</title>" in page and page.startswith("<!DOCTYPE html>")
    True
    """
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}{extra_css}</style>\n</head>\n<body>\n"
        '<div class="skcal-report">\n'
        + "\n".join(body)
        + "\n<footer><p>Made by skcal.</p></footer>\n</div>\n"
        "</body>\n</html>\n"
    )
