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
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "reject_strings",
    "check_binary_probabilities",
    "check_multiclass_probabilities",
    "check_multiclass_labels",
    "check_sample_weight",
    "check_scores",
    "check_snapshots",
    "snapshot_targets",
    "snapshot_votes",
    "check_consistent_length",
    "check_probabilities",
]

#: Tolerance for probability vectors summing to one (multiclass rows, ``predict_proba`` output).
ROW_SUM_ATOL = 1e-6
#: Upper end of the ``sigma2`` box (the largest Bernoulli variance).
SIGMA2_MAX = 0.25


def _is_missing(v):
    """``None``, ``pandas.NA`` or ``pandas.NaT`` (the missing-value markers of object arrays)."""
    return v is None or type(v).__name__ in ("NAType", "NaTType")


def _raw_array(x, name):
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


def _as_float_array(x, name, *, ndim=None, ensure_non_empty=True):
    """Convert ``x`` to a fresh float64 ndarray and reject empty, complex and non-numeric input.

    Complex input is an error (converting it would silently drop the imaginary part); strings,
    even numeric ones, are an error; missing values (``None``, ``pandas.NA``, e.g. from a
    nullable ``Int64`` column) become NaN, which the caller rejects or allows.
    """
    if x is None:
        raise ValueError(f"{name} is None; expected an array-like of numbers.")
    raw = _raw_array(x, name)
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


def _reject_nonfinite(arr, name, *, allow_nan=False):
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        what = "infinity" if allow_nan else "NaN or infinity"
        raise ValueError(f"{name} contains {what} (at {int(bad.sum())} entries); expected finite values.")


def _check_range(arr, name, lo, hi, *, out_of_bounds="raise"):
    if out_of_bounds == "clip":
        return np.clip(arr, lo, hi)
    if arr.min() < lo or arr.max() > hi:
        raise ValueError(
            f"{name} must lie in [{lo:g}, {hi:g}]; got values in [{arr.min():.6g}, {arr.max():.6g}]."
        )
    return arr


def check_consistent_length(**arrays):
    """Raise if the keyword arrays do not share their first dimension."""
    lengths = {name: len(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of samples: {desc}.")


def check_sample_weight(sample_weight, n_samples, name="sample_weight"):
    """Return ``None`` or a fresh non-negative float64 weight vector of length ``n_samples``."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = _as_float_array(sample_weight, name, ndim=(1,))
    _reject_nonfinite(w, name)
    if w.shape[0] != n_samples:
        raise ValueError(f"{name} has {w.shape[0]} entries; expected {n_samples} (one per sample).")
    if (w < 0).any():
        raise ValueError(f"{name} must be non-negative; got a minimum of {w.min():.6g}.")
    if w.sum() <= 0:
        raise ValueError(f"{name} sums to zero; expected a positive total weight.")
    return w


def _unique_labels(y):
    """``np.unique(y)``, with an O(n) shortcut for numeric labels taking at most two values."""
    if y.dtype.kind in "biuf" and y.size > 0:
        lo, hi = y.min(), y.max()
        if lo == hi:
            return np.array([lo], dtype=y.dtype)
        if np.all((y == lo) | (y == hi)):
            return np.array([lo, hi], dtype=y.dtype)
    return np.unique(y)


def _label_array(y_true, name):
    """``y_true`` as a 1-D-or-more ndarray of labels with a usable dtype.

    Object arrays (pandas ``object`` or nullable columns, lists of mixed Python objects) are
    resolved: missing labels (``None``, ``pandas.NA``) are an error, numbers become a numeric
    array (so ``[0, 1]`` stored as objects means the same as integer ``[0, 1]``), strings stay
    strings, and a mix of numbers and strings is an error.
    """
    if y_true is None:
        raise ValueError(f"{name} is None; expected an array-like of labels.")
    y = _raw_array(y_true, name)
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


def _binary_labels(y_true, pos_label, name, *, has_pos_label=True):
    """Map binary labels to 0/1 floats (1 for the positive class).

    ``has_pos_label`` says whether the calling public function has a ``pos_label`` argument;
    only then does the error for unrecognised labels suggest passing it.
    """
    y = _label_array(y_true, name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {y.shape}.")
    if y.size == 0:
        raise ValueError(f"{name} is empty; expected at least one sample.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity; expected binary labels.")
    classes = _unique_labels(y)
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
    out_of_bounds : {"raise", "clip"}, default="raise"
        What to do with probabilities outside [0, 1].
    y_true_name, y_prob_name : str, default="y_true", "y_prob"
        The argument names used in error messages.
    has_pos_label : bool, default=True
        Whether the calling function has a ``pos_label`` argument (only then do the errors
        suggest passing it).

    Returns
    -------
    y : ndarray of shape (n,), float64 in {0, 1}
    p : ndarray of shape (n,), float64 in [0, 1]
    w : ndarray of shape (n,) or None
    """
    p = check_probabilities(y_prob, name=y_prob_name, out_of_bounds=out_of_bounds)
    y = _binary_labels(y_true, pos_label, y_true_name, has_pos_label=has_pos_label)
    check_consistent_length(**{y_true_name: y, y_prob_name: p})
    w = check_sample_weight(sample_weight, p.shape[0])
    return y, p, w


def check_multiclass_probabilities(
    y_proba, *, name="y_proba", n_classes=None, atol=ROW_SUM_ATOL, n_classes_from=None
):
    """Validate an ``(n, k)`` matrix of probability vectors (k >= 2, rows summing to 1).

    ``n_classes_from`` names the argument ``n_classes`` was read from (e.g. ``"labels"``), so
    that a mismatch is blamed on it rather than on the probabilities.
    """
    P = _as_float_array(y_proba, name, ndim=(2,))
    _reject_nonfinite(P, name)
    if P.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 columns (one per class); got shape {P.shape}.")
    if n_classes is not None and P.shape[1] != n_classes:
        if n_classes_from is not None:
            raise ValueError(
                f"{n_classes_from} has {n_classes} entries but {name} has {P.shape[1]} columns; "
                f"{n_classes_from} must give one label per column of {name}."
            )
        raise ValueError(f"{name} has {P.shape[1]} columns; expected {n_classes} (one per class).")
    _check_range(P, name, 0.0, 1.0)
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
    """
    y = _label_array(y_true, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {y.shape}.")
    if y.size == 0:
        raise ValueError(f"{name} is empty; expected at least one sample.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity; expected class labels.")
    if labels is not None:
        labels = _label_array(labels, "labels")
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
    """
    S = _as_float_array(scores, name, ndim=(1, 2))
    _reject_nonfinite(S, name)
    if S.ndim == 1:
        S = S[:, None]
    if S.shape[1] not in (1, 2):
        raise ValueError(f"{name} must have 1 column (m) or 2 columns (m, sigma2); got shape {S.shape}.")
    S[:, 0] = _check_range(S[:, 0], f"{name}[:, 0] (m)", 0.0, 1.0, out_of_bounds=out_of_bounds)
    if S.shape[1] == 2:
        S[:, 1] = _check_range(
            S[:, 1], f"{name}[:, 1] (sigma2)", 0.0, SIGMA2_MAX, out_of_bounds=out_of_bounds
        )
    return S


def check_snapshots(snapshots, *, name="snapshots", n_samples=None, min_votes=2):
    """Validate ``(n, k)`` binary snapshots (NaN marks a missing vote) or vote counts.

    ``snapshots`` is either an array-like of 0/1 votes (``k >= min_votes`` columns) or a
    :class:`skcal.votes.VoteCounts`, which is returned as it is after the same row checks, so
    that every caller takes counts without building a padded array (pass the result on to
    :func:`snapshot_targets`). Each row needs at least ``min_votes`` votes: 2 for anything
    second order (``t2`` needs a pair of votes), 1 for first-order uses. Boolean input is
    converted to float first (for numpy booleans ``+`` is a logical OR); pandas nullable
    dtypes with ``pd.NA`` are read with ``NA`` as a missing vote.
    """
    from skcal.votes import VoteCounts

    if isinstance(snapshots, VoteCounts):
        c = snapshots.total
        if (c < min_votes).any():
            i = int(np.argmax(c < min_votes))
            raise ValueError(
                f"Every item of {name} needs at least {min_votes} votes; item {i} has {int(c[i])}. "
                + _SINGLE_LABEL_HINT
            )
        if n_samples is not None and len(snapshots) != n_samples:
            raise ValueError(f"{name} has {len(snapshots)} items; expected {n_samples} (one per score).")
        return snapshots
    if hasattr(snapshots, "to_numpy"):
        try:
            snapshots = snapshots.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            snapshots = snapshots.to_numpy()
    raw = np.asarray(snapshots)
    if raw.dtype.kind == "b":
        raw = raw.astype(np.float64)
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must hold binary labels 0/1 (or NaN for missing); got complex values.")
    if raw.ndim == 1:
        raise ValueError(
            f"{name} must be 2-dimensional, (n, k) snapshots (k >= {min_votes} labels per row), or "
            f"skcal.votes.VoteCounts; got a 1-D array of shape {raw.shape}, i.e. one label per row. "
            + _SINGLE_LABEL_HINT
        )
    Y = _as_float_array(raw, name, ndim=(2,))
    _reject_nonfinite(Y, name, allow_nan=True)
    if Y.shape[1] < min_votes:
        raise ValueError(
            f"{name} must have at least {min_votes} columns (independent labels per input); got shape "
            f"{Y.shape}. " + _SINGLE_LABEL_HINT
        )
    obs = ~np.isnan(Y)
    vals = Y[obs]
    if not np.isin(vals, (0.0, 1.0)).all():
        bad = np.unique(vals[~np.isin(vals, (0.0, 1.0))])[:5]
        raise ValueError(f"{name} must hold binary labels 0/1 (or NaN for missing); got {bad.tolist()}.")
    counts = obs.sum(axis=1)
    if (counts < min_votes).any():
        raise ValueError(
            f"Every row of {name} needs at least {min_votes} votes; row {int(np.argmax(counts < min_votes))} "
            f"has {int(counts.min())}. " + _SINGLE_LABEL_HINT
        )
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows; expected {n_samples} (one per score).")
    return Y


#: Appended to every "too few votes" error: what works with one label per row.
_SINGLE_LABEL_HINT = (
    "A single label per input cannot estimate E[f*^2] (the product of two independent labels is "
    "needed). With one label per row use the first-order tools: ce1_score, SecondOrderPlattCalibrator"
    "(order=1) and every first-order measure (scdl_score, smooth_ece, binned_ece, ...). Second "
    "order only needs pairs for E[f*^2]: doubly labelling a subset of the rows is enough "
    "(docs/guide/crowd_labels.md measures how many)."
)


def snapshot_targets(snapshots):
    """Unbiased targets ``t1``, ``t2`` from validated snapshots or vote counts.

    Returns ``(t1, t2, c)`` with ``t1 = a / c`` estimating E[f*], ``t2 = a (a - 1) / (c (c - 1))``
    estimating E[f*^2] and ``c`` the number of votes, where ``a`` counts positive votes. ``t2`` is
    NaN on rows with a single vote. ``snapshots`` is the output of :func:`check_snapshots`: an
    array of votes or a :class:`skcal.votes.VoteCounts` (same numbers, no padded array).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import VoteCounts
    >>> t1, t2, c = snapshot_targets(np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> t1.tolist(), t2.tolist()
    ([1.0, 0.5], [1.0, 0.0])
    >>> [x.tolist() for x in snapshot_targets(VoteCounts([2, 1], [2, 2]))]
    [[1.0, 0.5], [1.0, 0.0], [2.0, 2.0]]
    """
    from skcal.votes import VoteCounts

    if isinstance(snapshots, VoteCounts):
        a = snapshots.positive.astype(np.float64)
        c = snapshots.total.astype(np.float64)
    else:
        Y = np.asarray(snapshots, dtype=np.float64)
        obs = ~np.isnan(Y)
        c = obs.sum(axis=1).astype(np.float64)
        a = np.where(obs, Y, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t2 = np.where(c >= 2, a * (a - 1.0) / (c * np.maximum(c - 1.0, 1.0)), np.nan)
    return a / c, t2, c


def snapshot_votes(snapshots):
    """Every observed vote as a flat sample: ``(rows, values)`` (row-major order).

    ``snapshots`` is the output of :func:`check_snapshots` (votes or vote counts). For counts the
    votes of a row come as ``a`` ones, then ``c - a`` zeros (the order of
    :meth:`skcal.votes.VoteCounts.to_snapshots`).
    """
    from skcal.votes import VoteCounts

    if isinstance(snapshots, VoteCounts):
        return snapshots.votes()
    obs = ~np.isnan(snapshots)
    return np.nonzero(obs)[0], snapshots[obs]


def check_probabilities(y_prob, *, name="y_prob", out_of_bounds="raise"):
    """Validate positive-class probabilities without labels.

    Accepts shape (n,), (n, 1) or (n, 2) (``predict_proba`` output, whose rows must sum to one
    unless ``out_of_bounds="clip"``; column 1 is used) and returns a fresh float64 array of
    shape (n,) in [0, 1].

    Examples
    --------
    >>> check_probabilities([[0.75, 0.25], [0.5, 0.5]]).tolist()
    [0.25, 0.5]
    """
    p = _as_float_array(y_prob, name, ndim=(1, 2))
    _reject_nonfinite(p, name)
    if p.ndim == 2:
        if p.shape[1] == 2:
            p = _check_range(p, name, 0.0, 1.0, out_of_bounds=out_of_bounds)
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
    return _check_range(p, name, 0.0, 1.0, out_of_bounds=out_of_bounds)
