"""Parameter constraints shared by every public function and estimator.

Public functions declare their arguments with scikit-learn's ``validate_params`` (as
``sklearn.calibration.calibration_curve`` does), estimators with ``_parameter_constraints``
(checked by ``fit``), and the statistics objects of :mod:`skcal.stats` with
``_parameter_constraints`` too (checked by :class:`skcal.stats.BaseStatistics` when an object
is constructed). The constraints that recur are defined once here, so that the same argument is
checked by the same rule, with the same message, everywhere. Array contents (NaN, ranges,
shapes) are checked by :mod:`skcal._validation`; sizes that depend on the data (for example a
number of bins against the sample size) are checked in the function, which names the bound.
The command-line options that recur take their argparse types from here too.
"""

import argparse
import os
from numbers import Integral, Real

import numpy as np

from skcal._compat import HasMethods, Interval, StrOptions, validate_parameter_constraints

__all__ = [
    "open_unit_interval",
    "ALPHA",
    "ARRAY",
    "BASES",
    "BASIS",
    "BINARY_INPUTS",
    "BINNING_RULE",
    "BINNED_STRATEGY",
    "DEGREE",
    "EDGES",
    "ENGINE_BASIS",
    "LABELS",
    "NAMES",
    "Names",
    "NON_NEGATIVE_INT",
    "NON_NEGATIVE_REAL",
    "ORDER",
    "OUT_OF_BOUNDS",
    "Pair",
    "PowerOfTwoInterval",
    "SCDL_MAX_BINS",
    "SCHEDULER",
    "SPLIT_EVERY",
    "check_elements",
    "BANDWIDTH",
    "BOOLEAN",
    "FINITE_REAL",
    "N_BINS",
    "N_JOBS",
    "POS_LABEL",
    "POSITIVE_INT",
    "POSITIVE_REAL",
    "PROBABILITY_OPEN",
    "RANDOM_STATE",
    "SAMPLE_WEIGHT",
    "VERBOSE",
    "MAX_BINS_LIMIT",
    "MAX_REPLICATES",
    "N_BOOTSTRAP",
    "MAX_DEGREE_LIMIT",
    "MIN_BANDWIDTH",
    "Integral",
    "Real",
    "Interval",
    "StrOptions",
    "StrictInterval",
]

class StrictInterval(Interval):
    """An ``Interval`` that, unlike scikit-learn's, rejects booleans for numeric types.

    ``True`` is an ``Integral`` in Python, so ``Interval(Integral, 1, None)`` accepts
    ``n_bins=True`` as one bin; a flag passed where a count is expected is a mistake.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real}
        The type of the values.
    left, right : float, int or None
        The bounds (``None``: unbounded).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    """

    def is_satisfied_by(self, val):
        """Whether ``val`` lies in the interval and is not a bool."""
        if isinstance(val, bool):
            return False
        return super().is_satisfied_by(val)


class PowerOfTwoInterval(StrictInterval):
    """An integer ``StrictInterval`` that holds powers of two only (grids folded by halving).

    Parameters
    ----------
    left, right : int
        The smallest and the largest power of two allowed.
    """

    def __init__(self, left, right):
        super().__init__(Integral, left, right, closed="both")

    def is_satisfied_by(self, val):
        """Whether ``val`` is an integer power of two in ``[left, right]``."""
        return super().is_satisfied_by(val) and int(val) & (int(val) - 1) == 0

    def __str__(self):
        return f"a power of two in the range [{self.left}, {self.right}]"


class Pair(HasMethods):
    """A sequence of exactly two items (not a string), for example ``(values, indices)``.

    Parameters
    ----------
    description : str, default="a pair"
        What error messages call it.
    """

    def __init__(self, description="a pair"):
        super().__init__(["__len__", "__getitem__"])
        self.description = description

    def is_satisfied_by(self, val):
        """Whether ``val`` is a sequence of two items."""
        return super().is_satisfied_by(val) and not isinstance(val, (str, bytes)) and len(val) == 2

    def __str__(self):
        return self.description


class Names(HasMethods):
    """A list or tuple of distinct non-empty strings (column or model names), not one string.

    ``models="ab"`` is a string, which would otherwise be read as the two names ``"a"`` and
    ``"b"``; a name that is not a string (``models=[1]``) would be matched as ``"1"``.
    """

    def __init__(self):
        super().__init__(["__len__", "__getitem__"])

    def is_satisfied_by(self, val):
        """Whether ``val`` is a list or tuple of distinct non-empty ``str``."""
        return (
            isinstance(val, (list, tuple))
            and all(isinstance(v, str) and v for v in val)
            and len(set(val)) == len(val)
        )

    def __str__(self):
        return "a list or tuple of distinct non-empty names (str)"


def check_elements(name, values, constraints, caller_name):
    """Check each element of a sequence argument against the constraints of one element.

    For arguments that take one value or a list of candidates (``degree=[4, 8]``,
    ``alphas=[...]``): ``validate_params`` declares the argument as ``"array-like"``, and this
    applies the element's constraint, stated once here, to every candidate, with
    scikit-learn's message (``The 'degree' parameter of ce2_score must be ... Got ... instead.``).

    Parameters
    ----------
    name : str
        The argument's name.
    values : iterable
        The candidates.
    constraints : list
        The constraints of one candidate (for example :data:`DEGREE`).
    caller_name : str
        The public function's name, for the message.
    """
    for value in values:
        validate_parameter_constraints({name: constraints}, {name: value}, caller_name=caller_name)


#: Largest number of bins any binned measure accepts (memory is linear in it).
MAX_BINS_LIMIT = 1 << 24
#: Largest Chebyshev degree accepted anywhere (the moment matrix is (2l+1)^2).
MAX_DEGREE_LIMIT = 512
#: Smallest kernel bandwidth: the smallest normal float64 (a subnormal ``h`` overflows ``1 / h``).
MIN_BANDWIDTH = float(np.finfo(np.float64).tiny)

ARRAY = ["array-like"]
SAMPLE_WEIGHT = ["array-like", None]
POS_LABEL = [Real, str, "boolean", None]
RANDOM_STATE = ["random_state"]
#: Threads or processes: a positive count, or a negative one meaning "all cores but |n| - 1"
#: (joblib's convention: -1 every core); 0 means nothing and is refused at every size.
N_JOBS = [
    StrictInterval(Integral, 1, None, closed="left"),
    StrictInterval(Integral, None, -1, closed="right"),
    None,
]
VERBOSE = ["verbose"]
BOOLEAN = ["boolean"]
POSITIVE_INT = [StrictInterval(Integral, 1, None, closed="left")]
POSITIVE_REAL = [StrictInterval(Real, 0, None, closed="neither")]
PROBABILITY_OPEN = [StrictInterval(Real, 0, 1, closed="neither")]
N_BINS = [StrictInterval(Integral, 1, MAX_BINS_LIMIT, closed="both")]
#: Largest number of bootstrap or resampling replicates accepted (time and memory are linear in
#: it; 10**5 replicates already resolve a 90% interval's end points far below any noise).
MAX_REPLICATES = 10**5
N_BOOTSTRAP = [StrictInterval(Integral, 0, MAX_REPLICATES, closed="both")]
#: A kernel bandwidth: a positive finite number, not subnormal, not a bool.
BANDWIDTH = [StrictInterval(Real, MIN_BANDWIDTH, None, closed="left")]
#: Any finite real number (not NaN, not infinite, not a bool).
FINITE_REAL = [StrictInterval(Real, None, None, closed="neither")]
#: A finite real number >= 0 (a ridge multiplier ``alpha``, a sample size).
NON_NEGATIVE_REAL = [StrictInterval(Real, 0, None, closed="left")]
#: An integer >= 0 (a row count, a row offset).
NON_NEGATIVE_INT = [StrictInterval(Integral, 0, None, closed="left")]
#: The ridge multiplier of the Chebyshev estimators.
ALPHA = NON_NEGATIVE_REAL
#: A fixed Chebyshev degree: an integer from 0 to :data:`MAX_DEGREE_LIMIT`.
DEGREE = [StrictInterval(Integral, 0, MAX_DEGREE_LIMIT, closed="both")]
#: The Chebyshev bases the engine understands ("1d" is selected for one-column scores).
BASES = ("tensor", "total", "1d")
#: The two-dimensional basis of the public second-order functions and estimators.
BASIS = [StrOptions({"tensor", "total"})]
#: Any basis of the Chebyshev engine.
ENGINE_BASIS = [StrOptions(set(BASES))]
#: First order (``E[Y | S]``) or second order (and ``E[f*^2 | S]``).
ORDER = [StrictInterval(Integral, 1, 2, closed="both")]
#: What to do with inputs outside their box: refuse them or clip them.
OUT_OF_BOUNDS = [StrOptions({"raise", "clip"})]
#: The bins of the binned binary measures (scikit-learn's ``calibration_curve`` strategies).
BINNED_STRATEGY = [StrOptions({"uniform", "quantile"})]
#: A binning rule of :func:`skcal.binning.assign_bins`: a built-in rule or a callable.
BINNING_RULE = [StrOptions({"uniform", "quantile"}), callable]
#: Explicit bin edges (``None``: not given).
EDGES = ["array-like", None]
#: The class of each probability column (``None``: read from the labels).
LABELS = ["array-like", None]
#: Column or model names (a list, never one string).
NAMES = [Names()]
#: The finest grid of SCDL's dyadic search: a rule, an integer cap, or ``None`` (the "auto" rule).
SCDL_MAX_BINS = [
    StrOptions({"auto", "theory"}),
    StrictInterval(Integral, 2, MAX_BINS_LIMIT, closed="both"),
    None,
]
#: Fan-in of a merge tree of statistics objects.
SPLIT_EVERY = [StrictInterval(Integral, 2, None, closed="left")]
#: A Dask scheduler: a name, a ``get`` function, a ``distributed.Client``, or ``None`` (the default).
SCHEDULER = [str, callable, HasMethods(["get"]), None]
#: The inputs every binary calibration measure takes (``y_true``, ``y_prob``, weights, the positive class).
#: Significant digits of a written number (report tables and pages).
DIGITS = [StrictInterval(Integral, 1, 17, closed="both")]
#: Where a writer puts its output: a path, or None for the text itself.
OUTPUT_PATH = [str, os.PathLike, None]
#: JSON indentation (None: one line).
JSON_INDENT = [StrictInterval(Integral, 0, None, closed="left"), None]

BINARY_INPUTS = {"y_true": ARRAY, "y_prob": ARRAY, "sample_weight": SAMPLE_WEIGHT, "pos_label": POS_LABEL}


def open_unit_interval(text):
    """An argparse type: a number in (0, 1), such as a confidence level or a false-alarm level.

    Examples
    --------
    >>> open_unit_interval("0.05")
    0.05
    """
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {v}")
    return v
