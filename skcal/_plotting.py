"""The one figure style of skcal (reports, displays, docs) and the shared axes helpers.

Used by the displays (:mod:`skcal.display`) and the report's figures (:mod:`skcal.report`); it
imports nothing of skcal. matplotlib is an optional dependency (``pip install "skcal[plot]"``):
it is imported only inside the functions below, and :func:`check_matplotlib` turns its absence
into one clear error.
"""

from __future__ import annotations

#: Colours used everywhere: the model's data, the smooth curve, the best model, references.
COLOR_DATA = "C0"
COLOR_SMOOTH = "C1"
COLOR_BEST = "C3"
COLOR_REFERENCE = "0.45"
#: Font sizes: panel titles, tick labels and legends.
TITLE_SIZE = "medium"
SMALL_SIZE = "small"

_INSTALL_HINT = 'install it with pip install "skcal[plot]" (or pip install matplotlib)'


def check_matplotlib(caller):
    """Import matplotlib or raise an ``ImportError`` naming ``caller`` and how to install it.

    Parameters
    ----------
    caller : str
        What needs matplotlib, for the message (e.g. ``"ReliabilityDisplay.plot"``).

    Returns
    -------
    module
        The ``matplotlib`` module.
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(f"{caller} needs matplotlib, which is not installed; {_INSTALL_HINT}.") from exc
    return matplotlib


def new_figure(caller, *, figsize):
    """A :class:`matplotlib.figure.Figure` with constrained layout, made without pyplot.

    Figures made this way can be rendered in any process and backend without opening windows.
    """
    check_matplotlib(caller)
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def subplots(caller, nrows=1, ncols=1, **kwargs):
    """A new pyplot figure and its axes (as scikit-learn's displays make them), constrained layout.

    Parameters
    ----------
    caller : str
        For the error when matplotlib is missing.
    nrows : int, default=1
        Rows of axes.
    ncols : int, default=1
        Columns of axes.
    **kwargs : dict
        Passed to :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    fig : matplotlib Figure
        The figure.
    axes : matplotlib Axes or array of Axes
        Its axes.
    """
    check_matplotlib(caller)
    import matplotlib.pyplot as plt

    kwargs.setdefault("layout", "constrained")
    return plt.subplots(nrows, ncols, **kwargs)


def _three_digits(value, _pos=None):
    return f"{value:.3g}"


def style_axes(ax, *, title=None):
    """The shared look of a panel: light grid, small ticks, medium title, plain tick numbers.

    Tick labels never use an offset or a ``x10^k`` multiplier (which collides with neighbouring
    panels' titles): numbers are written with three significant digits.
    """
    from matplotlib.ticker import FuncFormatter

    ax.grid(alpha=0.25, lw=0.6)
    ax.tick_params(labelsize=SMALL_SIZE)
    fmt = FuncFormatter(_three_digits)
    ax.xaxis.set_major_formatter(fmt)
    ax.yaxis.set_major_formatter(fmt)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_SIZE)
    return ax


def outside_legend(ax, **kwargs):
    """A legend to the right of the axes, outside the data (constrained layout makes room)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0, "fontsize": SMALL_SIZE}
    kw.update(kwargs)
    return ax.legend(handles, labels, **kw)


def integer_locator(n):
    """A tick locator with at most ``n`` intervals on integer values (for count axes)."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=n, integer=True)


def check_axes(ax, name, caller):
    """Raise a ``TypeError`` naming ``name`` unless ``ax`` is a matplotlib ``Axes``.

    Parameters
    ----------
    ax : object
        The value passed.
    name : str
        The argument's name, for the message (e.g. ``"ax"``).
    caller : str
        What takes the argument, for the message (e.g. ``"ReliabilityDisplay.plot"``).

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    check_matplotlib(caller)
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"{name} of {caller} must be a matplotlib Axes; got {type(ax).__name__}: {ax!r:.60}.")
    return ax
