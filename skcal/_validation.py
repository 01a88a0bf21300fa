"""Shared input validation and the data conventions of skcal.

Every public function and estimator of skcal funnels its inputs through these helpers, so
that the same bad input gets the same clear ``ValueError`` everywhere. The helpers accept
lists, numpy arrays, pandas Series and DataFrames, always return fresh float64 arrays (the
caller's arrays are never written to) and name the offending argument in every message.

The conventions: binary ``y_true`` holds two classes (mapped with ``pos_label`` as scikit-learn
does); ``y_prob`` is the positive-class probability, ``(n,)`` or ``predict_proba`` output
``(n, 2)`` whose column 1 is used; multiclass ``y_proba`` rows are probability vectors summing
to 1 within 1e-6; second-order ``scores`` are ``(m, sigma2)`` with ``m`` in [0, 1] and
``sigma2`` in [0, 1/4] (one column: ``m`` alone); ``snapshots`` are ``(n, k)`` binary labels
drawn for the same input, NaN for a missing vote. From ``a`` positive votes out of ``c`` the
unbiased targets are ``t1 = a / c`` and ``t2 = a (a - 1) / (c (c - 1))``, estimating ``E[f*]`` and
``E[f*^2]`` with ``f*`` the probability of a positive vote.

This module is the ground floor of skcal (layer 0 of ``docs/architecture.md``): it imports
nothing of skcal. The snapshot and vote-count checks, which know :class:`skcal.votes.VoteCounts`,
live beside that class in :mod:`skcal.votes`. Every name in ``__all__`` is shared by the modules
above; the helpers whose names start with an underscore are used here only.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "ROW_SUM_ATOL",
    "SIGMA2_MAX",
    "as_float_array",
    "binary_labels",
    "check_bin_edges",
    "check_binary_probabilities",
    "check_class_probabilities",
    "check_consistent_length",
    "check_multiclass_inputs",
    "check_multiclass_labels",
    "check_multiclass_probabilities",
    "check_probabilities",
    "check_range",
    "check_sample_weight",
    "check_scores",
    "label_array",
    "plain",
    "raw_array",
    "reject_nonfinite",
    "reject_strings",
    "unique_labels",
]

#: Tolerance for probability vectors summing to one (multiclass rows, ``predict_proba`` output).
ROW_SUM_ATOL = 1e-6
#: Upper end of the ``sigma2`` box (the largest Bernoulli variance).
SIGMA2_MAX = 0.25


#: The bits of 1.0 read as an unsigned integer.
_ONE_BITS = np.uint64(0x3FF0000000000000)


def _unsigned(y):
    """An integer array read as the unsigned integers of its size (negative values become large)."""
    return y if y.dtype.kind == "u" else y.view(f"u{y.dtype.itemsize}")


def _is_missing(v):
    """``None``, ``pandas.NA`` or ``pandas.NaT`` (the missing-value markers of object arrays)."""
    return v is None or type(v).__name__ in ("NAType", "NaTType")


def plain(v):
    """``v`` with numpy scalars and arrays as plain Python values, for error messages.

    numpy 2 writes a scalar's ``repr`` as ``np.float64(93.4)`` or ``np.str_('yes')``; a message
    shows the value as the user wrote it: ``93.4``, ``'yes'``. Arrays, pandas objects, lists and
    tuples become lists of plain values; anything else is returned as it is.

    Parameters
    ----------
    v : object
        A value quoted in a message.

    Returns
    -------
    object

    Examples
    --------
    >>> import numpy as np
    >>> f"{plain(np.float64(93.4))!r} {plain(np.str_('yes'))!r} {plain(np.array([0, 1]))}"
    "93.4 'yes' [0, 1]"
    """
    if isinstance(v, np.ndarray) or (hasattr(v, "to_numpy") and np.ndim(v)):  # arrays, pandas objects
        return np.asarray(v).tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def raw_array(x, name):
    """``x`` as an ndarray (pandas via ``to_numpy``), without any dtype conversion yet."""
    if hasattr(x, "to_numpy"):  # pandas Series / DataFrame
        x = x.to_numpy()
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a rectangular array-like of numbers; got {exc}") from None


def reject_strings(x, name):
    """Raise a ValueError naming ``name`` if ``x`` holds strings (even numeric ones).

    For estimators, whose arrays then go through scikit-learn's ``validate_data``: that
    converts numeric strings in object arrays to floats without a word. Anything else
    (sparse input, complex numbers, ragged lists) is left to ``validate_data``, whose messages
    scikit-learn's common checks expect. ``x`` is not converted.

    Parameters
    ----------
    x : object
        The input (only lists, tuples, numpy arrays and pandas objects are looked at).
    name : str
        The argument's name in the error message.
    """
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    if not isinstance(x, (np.ndarray, list, tuple)):
        return
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        return
    if raw.dtype.kind in "US" or (
        raw.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.ravel())
    ):
        raise ValueError(f"{name} must be numeric; got strings (dtype {raw.dtype}).")


def as_float_array(x, name, *, ndim=None, ensure_non_empty=True):
    """Convert ``x`` to a fresh float64 ndarray and reject empty, complex and non-numeric input.

    Complex input is an error (converting it would silently drop the imaginary part); strings,
    even numeric ones, are an error; missing values (``None``, ``pandas.NA``, e.g. from a
    nullable ``Int64`` column) become NaN, which the caller rejects or allows.

    Parameters
    ----------
    x : array-like
        Numbers (lists, numpy arrays, pandas objects).
    name : str
        The argument's name, used in every error message.
    ndim : tuple of int, default=None
        The allowed numbers of dimensions (``None``: any).
    ensure_non_empty : bool, default=True
        Refuse an array without entries.

    Returns
    -------
    ndarray of float64
        A fresh array (never a view of ``x``).

    Examples
    --------
    >>> as_float_array([1, 2], "x").tolist()
    [1.0, 2.0]
    """
    if x is None:
        raise ValueError(f"{name} is None; expected an array-like of numbers.")
    raw = raw_array(x, name)
    kind = raw.dtype.kind
    complex_msg = f"{name} is complex; expected real numbers (the imaginary part would be lost)."
    if kind == "c":
        raise ValueError(complex_msg)
    if kind in "USV" or kind == "M" or kind == "m":
        raise ValueError(f"{name} must be numeric; got an array of dtype {raw.dtype}.")
    if kind == "O":
        flat = raw.ravel()
        for v in flat:
            if isinstance(v, (str, bytes)):
                raise ValueError(f"{name} must be numeric; got the string {v!r}.")
            if isinstance(v, complex) or np.iscomplexobj(v):
                raise ValueError(complex_msg)
        if any(_is_missing(v) for v in flat):
            raw = np.array([np.nan if _is_missing(v) else v for v in flat], dtype=object).reshape(raw.shape)
    try:
        arr = np.array(raw, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; could not convert it to float: {exc}") from None
    if arr.size == 0 and ensure_non_empty:
        raise ValueError(f"{name} is empty; expected at least one sample.")
    if ndim is not None and arr.ndim not in ndim:
        raise ValueError(
            f"{name} must be {' or '.join(f'{d}-dimensional' for d in ndim)}; "
            f"got an array of shape {arr.shape}."
        )
    return arr


def reject_nonfinite(arr, name, *, allow_nan=False):
    """Raise a ValueError naming ``name`` if ``arr`` holds infinity (or NaN, unless ``allow_nan``).

    Parameters
    ----------
    arr : ndarray of float
        A float array (for example from :func:`as_float_array`).
    name : str
        The argument's name.
    allow_nan : bool, default=False
        Let NaN through (it marks a missing vote in snapshots).
    """
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        what = "infinity" if allow_nan else "NaN or infinity"
        raise ValueError(f"{name} contains {what} (at {int(bad.sum())} entries); expected finite values.")


def check_range(arr, name, lo, hi, *, out_of_bounds="raise"):
    """Return ``arr`` if its values lie in ``[lo, hi]``, else raise (or clip, with ``"clip"``).

    Parameters
    ----------
    arr : ndarray of float
        A non-empty, finite float array.
    name : str
        The argument's name.
    lo, hi : float
        The bounds.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Raise a ValueError naming ``name`` and the range, or return ``np.clip(arr, lo, hi)``.

    Returns
    -------
    ndarray
        ``arr`` itself, or a clipped copy.
    """
    if out_of_bounds == "clip":
        return np.clip(arr, lo, hi)
    if arr.min() < lo or arr.max() > hi:
        raise ValueError(
            f"{name} must lie in [{lo:g}, {hi:g}]; got values in [{arr.min():.6g}, {arr.max():.6g}]."
        )
    return arr


def check_consistent_length(**arrays):
    """Raise a ValueError naming every argument if the keyword arrays differ in length.

    Parameters
    ----------
    **arrays : array-like or None
        The arrays, by argument name (``None`` entries are skipped).
    """
    lengths = {name: len(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of samples: {desc}.")


def check_sample_weight(sample_weight, n_samples, name="sample_weight", *, allow_zero_total=False):
    """Return ``None`` or a fresh non-negative float64 weight vector of length ``n_samples``.

    The one check of sample weights in skcal: every metric, estimator and statistics object
    calls it. A number is one weight for every sample. The weights must be real, finite,
    non-negative and one per sample.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), number or None
        The weights.
    n_samples : int
        The number of samples (0 for an empty chunk of a statistics object).
    name : str, default="sample_weight"
        The argument's name in error messages.
    allow_zero_total : bool, default=False
        Whether weights summing to zero are accepted. A metric needs a positive total (its
        weighted means are undefined otherwise); a statistics object accepts a chunk whose
        weights are all zero (it adds nothing) and refuses to ``compute`` only if every chunk
        was so.

    Returns
    -------
    ndarray of shape (n_samples,) or None
        The weights (a fresh array), or ``None`` for unit weights.

    Examples
    --------
    >>> check_sample_weight([1, 2], 2).tolist()
    [1.0, 2.0]
    >>> check_sample_weight([0, 0], 2, allow_zero_total=True).tolist()
    [0.0, 0.0]
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = as_float_array(sample_weight, name, ndim=(1,), ensure_non_empty=n_samples > 0)
    reject_nonfinite(w, name)
    if w.shape[0] != n_samples:
        raise ValueError(f"{name} has {w.shape[0]} entries; expected {n_samples} (one per sample).")
    if w.size and (w < 0).any():
        raise ValueError(f"{name} must be non-negative; got a minimum of {w.min():.6g}.")
    if not allow_zero_total and w.sum() <= 0:
        raise ValueError(f"{name} sums to zero; expected a positive total weight.")
    return w


def check_bin_edges(edges, name="edges"):
    """Return fresh float64 bin edges: 1-D, at least two, finite and non-decreasing.

    Parameters
    ----------
    edges : array-like of shape (n_bins + 1,)
        Bin edges (right-closed bins, the rule of every binned measure of skcal).
    name : str, default="edges"
        The argument's name in error messages.

    Returns
    -------
    ndarray of shape (n_bins + 1,)
        A fresh copy.

    Examples
    --------
    >>> check_bin_edges([0, 0.5, 1]).tolist()
    [0.0, 0.5, 1.0]
    """
    e = as_float_array(edges, name, ensure_non_empty=False)
    if e.ndim != 1 or e.shape[0] < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 bin edges; got shape {e.shape}.")
    if not np.isfinite(e).all():
        raise ValueError(f"{name} must be finite.")
    if (np.diff(e) < 0).any():
        raise ValueError(f"{name} must be non-decreasing.")
    return e


def unique_labels(y):
    """``np.unique(y)``, with an O(n) shortcut for numeric labels taking at most two values."""
    if y.dtype.kind in "biuf" and y.size > 0:
        lo, hi = y.min(), y.max()
        if lo == hi:
            return np.array([lo], dtype=y.dtype)
        if np.all((y == lo) | (y == hi)):
            return np.array([lo, hi], dtype=y.dtype)
    return np.unique(y)


def label_array(y_true, name):
    """``y_true`` as an ndarray of labels with a usable dtype (no other check).

    Object arrays (pandas ``object`` or nullable columns, lists of mixed Python objects) are
    resolved: missing labels (``None``, ``pandas.NA``) are an error, numbers become a numeric
    array (so ``[0, 1]`` stored as objects means the same as integer ``[0, 1]``), strings stay
    strings, and a mix of numbers and strings is an error.

    Parameters
    ----------
    y_true : array-like
        Labels.
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray
        The labels, of a numeric, boolean or string dtype (object arrays resolved).

    Examples
    --------
    >>> label_array(np.array([0, 1], dtype=object), "y").dtype.kind
    'i'
    """
    if y_true is None:
        raise ValueError(f"{name} is None; expected an array-like of labels.")
    y = raw_array(y_true, name)
    if y.dtype.kind == "c":
        raise ValueError(f"{name} is complex; expected class labels.")
    if y.dtype.kind != "O" or y.size == 0:
        return y
    flat = y.ravel()
    n_missing = sum(1 for v in flat if _is_missing(v) or (isinstance(v, float) and v != v))
    if n_missing:
        raise ValueError(
            f"{name} contains missing labels (None, NaN or pandas.NA) at {n_missing} entries; "
            "expected a label for every sample."
        )
    types = set(map(type, flat))
    if all(issubclass(t, (bool, np.bool_)) for t in types):
        return flat.astype(bool).reshape(y.shape)
    if all(issubclass(t, numbers.Number) for t in types):
        if any(issubclass(t, complex) for t in types):
            raise ValueError(f"{name} is complex; expected class labels.")
        out = np.array(flat.tolist())
        return out.reshape(y.shape)
    if all(issubclass(t, (str, np.str_)) for t in types):
        return flat.astype(str).reshape(y.shape)
    raise ValueError(
        f"{name} mixes labels of different types ({sorted(t.__name__ for t in types)}); expected "
        "labels of one type (all numbers or all strings)."
    )


def binary_labels(y_true, pos_label, name, *, has_pos_label=True):
    """Map binary labels to 0/1 floats (1 for the positive class).

    ``{0, 1}``, ``{-1, 1}`` and booleans need no ``pos_label``; other labels do.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, 1)
        Labels of at most two classes.
    pos_label : int, float, bool, str or None
        The positive class.
    name : str
        The argument's name in error messages.
    has_pos_label : bool, default=True
        Whether the calling public function has a ``pos_label`` argument; only then does the
        error for unrecognised labels suggest passing it.

    Returns
    -------
    ndarray of shape (n,)
        1.0 for the positive class, 0.0 otherwise (a fresh array).

    Examples
    --------
    >>> binary_labels(["b", "a"], "b", "y").tolist()
    [1.0, 0.0]
    """
    y = label_array(y_true, name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {y.shape}.")
    if y.size == 0:
        raise ValueError(f"{name} is empty; expected at least one sample.")
    kind = y.dtype.kind
    if pos_label is None and (kind == "b" or (kind in "iu" and _unsigned(y).max() <= 1)):
        # booleans, or integers in {0, 1} (read as unsigned, negative ones are large: one
        # reduction decides it): the labels as they are
        return y.astype(np.float64)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity; expected binary labels.")
    classes = unique_labels(y)
    if classes.size > 2:
        raise ValueError(
            f"{name} must hold binary labels (two classes); got {classes.size} classes: "
            f"{classes[:10].tolist()}{'...' if classes.size > 10 else ''}."
        )
    if pos_label is None:
        if y.dtype.kind == "b":
            pos_label = True
        elif y.dtype.kind in "iuf" and set(classes.tolist()) <= {0, 1, -1}:
            if -1 in set(classes.tolist()) and 0 in set(classes.tolist()):
                hint = "; pass pos_label to say which is positive" if has_pos_label else ""
                raise ValueError(f"{name} mixes 0 and -1{hint}; expected {{0, 1}} or {{-1, 1}}.")
            pos_label = 1
        else:
            hint = (
                ", so pass pos_label to say which class is positive"
                if has_pos_label
                else "; encode the positive class as 1 (or True)"
            )
            raise ValueError(
                f"{name} has labels {classes.tolist()}; these are not {{0, 1}}, {{-1, 1}} or "
                f"booleans{hint}."
            )
    elif classes.size == 2 and pos_label not in classes.tolist():
        raise ValueError(f"pos_label={pos_label!r} is not one of the labels in {name}: {classes.tolist()}.")
    return (y == pos_label).astype(np.float64)


def check_binary_probabilities(
    y_true,
    y_prob,
    *,
    pos_label=None,
    sample_weight=None,
    out_of_bounds="raise",
    y_true_name="y_true",
    y_prob_name="y_prob",
    has_pos_label=True,
    allow_zero_total=False,
    copy=True,
):
    """Validate binary labels and positive-class probabilities.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels of two classes. ``{0, 1}``, ``{-1, 1}`` and booleans need no ``pos_label``.
    y_prob : array-like of shape (n,), (n, 1) or (n, 2)
        Positive-class probabilities; an ``(n, 2)`` array is ``predict_proba`` output whose
        rows must sum to one, and column 1 is used.
    pos_label : int, float, bool or str, default=None
        The positive class.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights (see :func:`check_sample_weight`).
    out_of_bounds : {"raise", "clip"}, default="raise"
        What to do with probabilities outside [0, 1].
    y_true_name, y_prob_name : str, default="y_true", "y_prob"
        The argument names used in error messages.
    has_pos_label : bool, default=True
        Whether the calling function has a ``pos_label`` argument (only then do the errors
        suggest passing it).
    allow_zero_total : bool, default=False
        Accept weights summing to zero (a chunk of a statistics object; see
        :func:`check_sample_weight`).
    copy : bool, default=True
        ``False`` for a caller that only reads the arrays: a float64 ndarray ``y_prob`` of shape
        (n,) in [0, 1] is returned as it is, and so is an integer or boolean ndarray ``y_true``
        of labels in {0, 1} (without ``pos_label``); the checks are the same. At a million
        rows that saves two 8 MB copies (and their page faults) per call.

    Returns
    -------
    y : ndarray of shape (n,)
        The labels in {0, 1} (1 for the positive class): float64, or with ``copy=False``
        possibly the caller's integer or boolean array.
    p : ndarray of shape (n,)
        The probabilities, float64 in [0, 1].
    w : ndarray of shape (n,) or None
        The weights.
    """
    p = None
    if not copy and isinstance(y_prob, np.ndarray) and y_prob.dtype == np.float64 and y_prob.ndim == 1:
        if y_prob.size and y_prob.view(np.uint64).max() <= _ONE_BITS:  # in [0, 1] (see check_probabilities)
            p = y_prob
    if p is None:
        p = check_probabilities(y_prob, name=y_prob_name, out_of_bounds=out_of_bounds)
    y = None
    if not copy and pos_label is None and isinstance(y_true, np.ndarray) and y_true.ndim == 1:
        kind = y_true.dtype.kind
        if y_true.size and (kind == "b" or (kind in "iu" and _unsigned(y_true).max() <= 1)):
            y = y_true  # booleans or integers in {0, 1}: their values are the labels
    if y is None:
        y = binary_labels(y_true, pos_label, y_true_name, has_pos_label=has_pos_label)
    check_consistent_length(**{y_true_name: y, y_prob_name: p})
    w = check_sample_weight(sample_weight, p.shape[0], allow_zero_total=allow_zero_total)
    return y, p, w


def check_multiclass_probabilities(
    y_proba, *, name="y_proba", n_classes=None, atol=ROW_SUM_ATOL, n_classes_from=None
):
    """Validate an ``(n, k)`` matrix of probability vectors (k >= 2, rows summing to 1).

    Parameters
    ----------
    y_proba : array-like of shape (n, k)
        The probabilities.
    name : str, default="y_proba"
        The argument's name in error messages.
    n_classes : int, default=None
        The expected number of columns.
    atol : float, default=ROW_SUM_ATOL
        Tolerance of the row sums.
    n_classes_from : str, default=None
        The argument ``n_classes`` was read from (e.g. ``"labels"``), so that a mismatch is
        blamed on it rather than on the probabilities.

    Returns
    -------
    ndarray of shape (n, k)
        A fresh float64 copy.
    """
    P = as_float_array(y_proba, name, ndim=(2,))
    reject_nonfinite(P, name)
    if P.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 columns (one per class); got shape {P.shape}.")
    if n_classes is not None and P.shape[1] != n_classes:
        if n_classes_from is not None:
            raise ValueError(
                f"{n_classes_from} has {n_classes} entries but {name} has {P.shape[1]} columns; "
                f"{n_classes_from} must give one label per column of {name}."
            )
        raise ValueError(f"{name} has {P.shape[1]} columns; expected {n_classes} (one per class).")
    check_range(P, name, 0.0, 1.0)
    dev = np.abs(P.sum(axis=1) - 1.0)
    if dev.max() > atol:
        raise ValueError(
            f"The rows of {name} must sum to 1 (within {atol:g}); row {int(dev.argmax())} "
            f"deviates by {dev.max():.3g}."
        )
    return P


def check_multiclass_labels(y_true, n_classes, *, labels=None, name="y_true", integer_codes=False):
    """Map labels to column indices ``0..n_classes-1``.

    Without ``labels`` the sorted unique labels of ``y_true`` name the columns, so ``y_true``
    must hold exactly ``n_classes`` distinct labels; when a test set misses a class the column
    order is ambiguous (classes ``{1, 2, 3}`` seen as ``{1, 2}`` would otherwise be read as
    columns 1 and 2) and ``labels=`` must be given, as for :func:`sklearn.metrics.log_loss`.
    ``integer_codes=True`` declares that integer labels are column indices (arrays of logits
    with no ``classes_``): labels in ``range(n_classes)`` are then used as they are.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The labels.
    n_classes : int
        The number of columns.
    labels : array-like of shape (n_classes,), default=None
        The label of each column.
    name : str, default="y_true"
        The argument's name in error messages.
    integer_codes : bool, default=False
        Integer labels are column indices.

    Returns
    -------
    ndarray of intp of shape (n,)
        The column of each label.
    """
    y = label_array(y_true, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {y.shape}.")
    if y.size == 0:
        raise ValueError(f"{name} is empty; expected at least one sample.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity; expected class labels.")
    if labels is not None:
        labels = label_array(labels, "labels")
        if labels.ndim != 1:
            raise ValueError(f"labels must be 1-dimensional; got an array of shape {labels.shape}.")
        if labels.shape[0] != n_classes:
            raise ValueError(f"labels has {labels.shape[0]} entries; expected {n_classes} (one per column).")
        if np.unique(labels).shape[0] != labels.shape[0]:
            raise ValueError("labels must not contain duplicates.")
    else:
        classes = np.unique(y)
        if integer_codes and y.dtype.kind in "iu":
            if classes.min() >= 0 and classes.max() < n_classes:
                return y.astype(np.intp)
            bad = classes[(classes < 0) | (classes >= n_classes)]
            raise ValueError(
                f"{name} holds integer labels {bad[:10].tolist()} outside range({n_classes}); integer "
                f"labels are column indices of the {n_classes} columns, so pass labels= to give the "
                "label of each column."
            )
        if classes.shape[0] != n_classes:
            raise ValueError(
                f"{name} has {classes.shape[0]} distinct labels but the probabilities have "
                f"{n_classes} columns, so the columns cannot be matched to the labels; pass "
                "labels= (e.g. labels=estimator.classes_) to give the column order."
            )
        labels = classes
    if (labels.dtype.kind in "biuf") != (y.dtype.kind in "biuf"):
        raise ValueError(
            f"{name} and labels hold labels of different types ({y.dtype} and {labels.dtype}); "
            "expected the same kind of labels."
        )
    if (
        labels.dtype.kind in "iu"
        and y.dtype.kind in "iu"
        and y.size
        and np.array_equal(labels, np.arange(labels.shape[0]))
        and y.min() >= 0
        and y.max() < labels.shape[0]
    ):
        return y.astype(np.intp)  # labels are the column indices: no search (a fresh array)
    order = np.argsort(labels, kind="stable")
    pos = np.searchsorted(labels[order], y)
    pos = np.clip(pos, 0, labels.shape[0] - 1)
    codes = order[pos]
    unseen = labels[codes] != y
    if unseen.any():
        raise ValueError(f"{name} contains labels not in labels: {np.unique(y[unseen])[:10].tolist()}.")
    return codes.astype(np.intp)


def check_scores(scores, *, name="scores", out_of_bounds="raise"):
    """Validate second-order scores ``(m, sigma2)`` or a score ``m`` alone.

    Returns an ``(n, 2)`` array for second-order scores or an ``(n, 1)`` array for a score
    ``m`` alone (a 1-D input is treated as ``m`` alone). ``m`` must lie in [0, 1] and
    ``sigma2`` in [0, 1/4]; the feasible region ``sigma2 <= m (1 - m)`` is *not* enforced,
    because sech-perturbed scores may leave it (each coordinate is perturbed independently
    within its interval).

    Parameters
    ----------
    scores : array-like of shape (n, 2), (n, 1) or (n,)
        The scores.
    name : str, default="scores"
        The argument's name in error messages.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Refuse or clip values outside the box.

    Returns
    -------
    ndarray of shape (n, 2) or (n, 1)
        A fresh float64 copy.
    """
    S = as_float_array(scores, name, ndim=(1, 2))
    reject_nonfinite(S, name)
    if S.ndim == 1:
        S = S[:, None]
    if S.shape[1] not in (1, 2):
        raise ValueError(f"{name} must have 1 column (m) or 2 columns (m, sigma2); got shape {S.shape}.")
    S[:, 0] = check_range(S[:, 0], f"{name}[:, 0] (m)", 0.0, 1.0, out_of_bounds=out_of_bounds)
    if S.shape[1] == 2:
        S[:, 1] = check_range(
            S[:, 1], f"{name}[:, 1] (sigma2)", 0.0, SIGMA2_MAX, out_of_bounds=out_of_bounds
        )
    return S


def check_probabilities(y_prob, *, name="y_prob", out_of_bounds="raise"):
    """Validate positive-class probabilities without labels.

    Accepts shape (n,), (n, 1) or (n, 2) (``predict_proba`` output, whose rows must sum to one
    unless ``out_of_bounds="clip"``; column 1 is used) and returns a fresh float64 array of
    shape (n,) in [0, 1].

    Parameters
    ----------
    y_prob : array-like of shape (n,), (n, 1) or (n, 2)
        The probabilities.
    name : str, default="y_prob"
        The argument's name in error messages.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Refuse or clip values outside [0, 1].

    Returns
    -------
    ndarray of shape (n,)
        The positive-class probabilities.

    Examples
    --------
    >>> check_probabilities([[0.75, 0.25], [0.5, 0.5]]).tolist()
    [0.25, 0.5]
    """
    p = as_float_array(y_prob, name, ndim=(1, 2))
    if p.ndim == 1 and p.view(np.uint64).max() <= _ONE_BITS:
        # in [0, 1]: read as unsigned integers, the bits of 0..1 are 0..bits(1.0), and those of
        # negative numbers, NaN and infinity larger (one reduction; -0.0 takes the path below)
        return p
    reject_nonfinite(p, name)
    if p.ndim == 2:
        if p.shape[1] == 2:
            p = check_range(p, name, 0.0, 1.0, out_of_bounds=out_of_bounds)
            dev = np.abs(p.sum(axis=1) - 1.0).max()
            if dev > ROW_SUM_ATOL and out_of_bounds == "raise":
                raise ValueError(
                    f"{name} has two columns (predict_proba output) whose rows must sum to 1; "
                    f"the largest deviation is {dev:.3g}."
                )
            p = p[:, 1].copy()
        elif p.shape[1] == 1:
            p = p[:, 0].copy()
        else:
            raise ValueError(
                f"{name} must have shape (n,), (n, 1) or (n, 2) (positive-class probabilities or "
                f"predict_proba output); got shape {p.shape}."
            )
    return check_range(p, name, 0.0, 1.0, out_of_bounds=out_of_bounds)


def check_class_probabilities(y_proba, labels=None, *, name="y_proba"):
    """Validate class probabilities as the multiclass measures take them: ``(n, k)`` or binary ``(n,)``.

    A 1-D ``y_proba`` is the probability of the second class of a binary problem (what
    scikit-learn's scorers pass for binary classifiers) and becomes the two columns
    ``(1 - p, p)``. An ``(n, k)`` array must hold probability vectors (see
    :func:`check_multiclass_probabilities`), with one column per entry of ``labels`` when given.

    Unlike the other helpers of this module, a valid C-contiguous float64 ``(n, k)`` ndarray is
    returned *as it is*, without a copy (checked by a min/max pass and the row sums): the
    callers only read it. Anything else is converted to a fresh array.

    Parameters
    ----------
    y_proba : array-like of shape (n, k) or (n,)
        Predicted class probabilities.
    labels : sequence of shape (k,), default=None
        The class of each column (only its length is used here).
    name : str, default="y_proba"
        The argument's name in error messages.

    Returns
    -------
    ndarray of shape (n, k)
        The probabilities (read only: possibly the caller's array).

    Examples
    --------
    >>> check_class_probabilities([0.25, 1.0]).tolist()
    [[0.75, 0.25], [0.0, 1.0]]
    """
    arr = y_proba.to_numpy() if hasattr(y_proba, "to_numpy") else y_proba
    if np.ndim(arr) == 1:
        p = as_float_array(arr, name, ndim=(1,))
        reject_nonfinite(p, name)
        check_range(p, name, 0.0, 1.0)
        if labels is not None and len(labels) != 2:
            raise ValueError(
                f"{name} is 1-dimensional (a binary positive-class probability), so labels must have "
                f"exactly 2 entries; got {len(labels)}."
            )
        return np.column_stack([1.0 - p, p])
    n_classes = None if labels is None else len(labels)
    if (
        isinstance(arr, np.ndarray)
        and arr.dtype == np.float64
        and arr.ndim == 2
        and arr.flags.c_contiguous
        and arr.size
    ):
        # Fast path without a copy (the array is only read): min/max catch NaN, inf and the
        # range in two passes; anything unusual goes through the full check for its message.
        lo, hi = arr.min(), arr.max()
        if (
            lo >= 0.0
            and hi <= 1.0
            and arr.shape[1] >= 2
            and (n_classes is None or arr.shape[1] == n_classes)
            and np.abs(arr.sum(axis=1) - 1.0).max() <= ROW_SUM_ATOL
        ):
            return arr
    return check_multiclass_probabilities(
        y_proba,
        name=name,
        n_classes=n_classes,
        n_classes_from=None if labels is None else "labels",
    )


def check_multiclass_inputs(y_true, y_proba, sample_weight=None, labels=None, *, allow_zero_total=False):
    """Validate the inputs of a multiclass measure: probabilities, labels as column codes, weights.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Class labels (see :func:`check_multiclass_labels` for how they meet the columns).
    y_proba : array-like of shape (n, k) or (n,)
        Class probabilities (see :func:`check_class_probabilities`).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    labels : array-like of shape (k,), default=None
        The class of each column.
    allow_zero_total : bool, default=False
        Accept weights summing to zero (a chunk of a statistics object).

    Returns
    -------
    P : ndarray of shape (n, k)
        The probabilities (read only: possibly the caller's array).
    codes : ndarray of intp of shape (n,)
        The column of each label.
    w : ndarray of shape (n,) or None
        The weights.

    Examples
    --------
    >>> P, codes, w = check_multiclass_inputs(["b", "a"], [[0.3, 0.7], [0.9, 0.1]])
    >>> codes.tolist(), w is None
    ([1, 0], True)
    """
    P = check_class_probabilities(y_proba, labels)
    y_arr = y_true.to_numpy() if hasattr(y_true, "to_numpy") else np.asarray(y_true)
    check_consistent_length(y_true=y_arr, y_proba=P)
    codes = check_multiclass_labels(y_arr, P.shape[1], labels=labels)
    w = check_sample_weight(sample_weight, P.shape[0], allow_zero_total=allow_zero_total)
    return P, codes, w
