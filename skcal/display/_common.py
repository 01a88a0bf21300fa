"""What both displays use: the legend name of an estimator and the checks of drawing arguments."""

from __future__ import annotations

#: Constraint of the ``name`` arguments (a legend label or a title prefix).
NAME = [str, None]


def estimator_name(estimator, name):
    """``name``, or the class name of ``estimator`` (of its last step for a pipeline)."""
    if name is not None:
        return name
    if hasattr(estimator, "steps"):
        return type(estimator.steps[-1][1]).__name__
    return type(estimator).__name__


def check_no_drawing_arguments(caller, ax, kwargs):
    """With ``plot=False`` nothing is drawn: refuse ``ax`` and drawing keywords instead of ignoring them."""
    given = (["ax"] if ax is not None else []) + sorted(kwargs)
    if given:
        raise TypeError(
            f"{caller} got {', '.join(repr(k) for k in given)} with plot=False; these arguments only "
            "apply when drawing: pass plot=True, or call plot(...) on the display later."
        )
