"""Descriptions of parameters that several public functions share, written once.

A docstring holds, on a line of its own, ``{name}`` where a shared description goes (indented as
its parameters are); :func:`fill` puts the text in when the module is imported, so that
``help()``, numpydoc and Sphinx read the whole docstring.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["BINARY_DOCS", "fill", "sections"]

_MARK = re.compile(r"( *)\{(\w+)\}")

#: The inputs of the binary measures (``{y_true}``, ``{y_prob}``, ``{pos_label}``).
BINARY_DOCS = {
    "y_true": """y_true : array-like of shape (n,)
    Binary labels.""",
    "y_prob": """y_prob : array-like of shape (n,) or (n, 2)
    Predicted probabilities of the positive class, or ``predict_proba`` output.""",
    "pos_label": """pos_label : int, float, bool or str, default=None
    The positive class (needed for labels other than {0, 1}, {-1, 1} or booleans).""",
}


def fill(**texts):
    """Decorator: each docstring line ``{name}`` replaced by ``texts[name]``, indented as that line.

    Parameters
    ----------
    **texts : str
        The shared descriptions, by name (numpydoc lines, their first lines unindented).

    Returns
    -------
    callable
        The decorator, which returns the function or class it is given.

    Examples
    --------
    >>> @fill(WEIGHTS="sample_weight : array-like of shape (n,), default=None\\n    Row weights.")
    ... def f(sample_weight=None):
    ...     '''Do nothing.
    ...
    ...     Parameters
    ...     ----------
    ...     {WEIGHTS}
    ...     '''
    >>> print(f.__doc__.splitlines()[4])
        sample_weight : array-like of shape (n,), default=None
    """

    def deco(obj):
        lines = []
        for line in (obj.__doc__ or "").splitlines():
            mark = _MARK.fullmatch(line)
            if mark is None or mark.group(2) not in texts:
                lines.append(line)
                continue
            for text in textwrap.dedent(texts[mark.group(2)]).strip("\n").splitlines():
                lines.append(mark.group(1) + text if text else "")
        obj.__doc__ = "\n".join(lines) + ("\n" if (obj.__doc__ or "").endswith("\n") else "")
        return obj

    return deco


def sections(texts, *names, returns=None, **own):
    """The text of a Parameters section of ``names``, then of a Returns section, for :func:`fill`.

    Parameters
    ----------
    texts : dict
        Shared descriptions by parameter name (numpydoc lines, their first lines unindented).
    *names : str
        The parameters, in order.
    returns : str, default=None
        The body of the Returns section (its type line, then its indented description); None
        leaves the section out.
    **own : str
        Descriptions that replace those of ``texts`` for this section.

    Returns
    -------
    str
        The sections, their first lines unindented, to be filled in with :func:`fill`.

    Examples
    --------
    >>> print(sections({"x": "x : float\\n    A number."}, "x", returns="float\\n    Twice x."))
    Parameters
    ----------
    x : float
        A number.
    <BLANKLINE>
    Returns
    -------
    float
        Twice x.
    """
    lines = ["Parameters", "----------", *(own.get(name, texts.get(name)) for name in names)]
    if returns is not None:
        lines += ["", "Returns", "-------", returns]
    return "\n".join(lines)
