"""Validation of one batch of rows ``(y, p, time)``, before the monitor's state is touched.

Every check names the argument, the first offending row and what was expected. Numeric input
that is already valid is not copied (labels in {0, 1} of any numeric or boolean dtype, float64
probabilities): the range checks are one ``min`` and one ``max``, so validating 1e7 rows costs
a small fraction of the update. The caller's arrays are never written to.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from skcal._validation import (
    check_multiclass_labels,
    check_multiclass_probabilities,
    label_array,
    plain,
    raw_array,
)

__all__ = ["check_probabilities_batch", "binary_labels", "class_codes", "check_time"]


def _first_bad(mask):
    i = int(np.flatnonzero(mask)[0])
    return i, int(mask.sum())


def check_probabilities_batch(p):
    """``("binary", p (n,))`` or ``("multiclass", P (n, k))`` as float64, validated.

    A 2-column array is ``predict_proba`` output of a binary model: its column 1 is used.
    """
    raw = raw_array(p, "p")
    if raw.dtype.kind not in "fiub":
        raise ValueError(f"p must hold numbers (probabilities in [0, 1]); got an array of dtype {raw.dtype}.")
    if raw.ndim == 2 and raw.shape[1] == 1:
        raw = raw[:, 0]
    if raw.ndim == 1:
        arr = np.asarray(raw, dtype=np.float64)
        if arr.size:
            lo, hi = arr.min(), arr.max()
            if not (lo >= 0.0 and hi <= 1.0):  # also catches NaN
                i, k = _first_bad(~((arr >= 0.0) & (arr <= 1.0)))
                raise ValueError(
                    f"p must hold probabilities in [0, 1]; row {i} of this batch holds {plain(arr[i])!r} "
                    f"({k} rows are NaN or outside [0, 1])."
                )
        return "binary", arr
    if raw.ndim != 2:
        raise ValueError(f"p must be 1-dimensional (binary) or 2-dimensional (n, k); got shape {raw.shape}.")
    if raw.shape[0] == 0:
        return ("binary" if raw.shape[1] == 2 else "multiclass"), np.empty((0, raw.shape[1]))
    if raw.shape[1] == 2:
        P = check_multiclass_probabilities(raw, name="p")
        return "binary", np.ascontiguousarray(P[:, 1])
    return "multiclass", check_multiclass_probabilities(raw, name="p")


def binary_labels(y, n, labels):
    """Labels as 0/1 (any numeric or boolean dtype), checked against the label set."""
    if labels is not None:
        return class_codes(y, n, 2, labels)
    raw = label_array(y, "y")
    if raw.ndim == 2 and raw.shape[1] == 1:
        raw = raw[:, 0]
    if raw.ndim != 1:
        raise ValueError(f"y must be 1-dimensional; got an array of shape {raw.shape}.")
    if raw.shape[0] != n:
        raise ValueError(f"y has {raw.shape[0]} rows but p has {n}; expected one label per row.")
    if n == 0 or raw.dtype.kind == "b":
        return raw
    if raw.dtype.kind in "iu":
        if raw.min() >= 0 and raw.max() <= 1:
            return raw
        bad = (raw != 0) & (raw != 1)
    elif raw.dtype.kind == "f":
        bad = (raw != 0.0) & (raw != 1.0)  # NaN is bad too
        if not bad.any():
            return raw
        missing = np.isnan(raw)
        if missing.any():
            i, k = _first_bad(missing)
            raise ValueError(
                f"y has missing labels (NaN): row {i} of this batch ({k} rows); expected 0/1 labels."
            )
    else:
        raise ValueError(
            f"y holds labels of dtype {raw.dtype} (e.g. {plain(raw[0])!r}); without labels= the labels "
            "must be 0/1 or booleans. Pass labels=[negative, positive] to name the two classes."
        )
    i, k = _first_bad(bad)
    shown = np.unique(raw[bad])[:5].tolist()
    raise ValueError(
        f"y holds labels outside {{0, 1}}: row {i} of this batch holds {plain(raw[i])!r} ({k} rows; values "
        f"{shown}). Pass labels=[negative, positive] for other label values."
    )


def class_codes(y, n, k, labels):
    """Multiclass labels as column indices ``0..k-1`` (integer codes, or ``labels`` given)."""
    codes = check_multiclass_labels(y, k, labels=labels, name="y", integer_codes=labels is None)
    if codes.shape[0] != n:
        raise ValueError(f"y has {codes.shape[0]} rows but p has {n}; expected one label per row.")
    return codes


def check_time(time, n):
    """``(kind, values)``: ``"datetime"`` as int64 nanoseconds, or ``"numeric"`` as float64.

    The values must be non-decreasing (the rows arrive in time order) and have no NaN/NaT.
    """
    if isinstance(time, pd.Series) and isinstance(time.dtype, pd.DatetimeTZDtype):
        time = time.dt.tz_convert("UTC").dt.tz_localize(None)
    elif isinstance(time, pd.DatetimeIndex) and time.tz is not None:
        time = time.tz_convert("UTC").tz_localize(None)
    raw = raw_array(time, "time")
    if raw.ndim != 1:
        raise ValueError(f"time must be 1-dimensional; got an array of shape {raw.shape}.")
    if raw.shape[0] != n:
        raise ValueError(f"time has {raw.shape[0]} rows but p has {n}; expected one time per row.")
    if raw.dtype.kind == "M":
        vals = raw.astype("datetime64[ns]")
        if np.isnat(vals).any():
            i, k = _first_bad(np.isnat(vals))
            raise ValueError(f"time has missing values (NaT): row {i} of this batch ({k} rows).")
        kind, values = "datetime", vals.view(np.int64)
    elif raw.dtype.kind in "iuf" and raw.dtype.kind != "b":
        values = np.asarray(raw, dtype=np.float64)
        if not np.isfinite(values).all():
            i, k = _first_bad(~np.isfinite(values))
            raise ValueError(
                f"time must be finite; row {i} of this batch holds {plain(values[i])!r} ({k} rows)."
            )
        kind = "numeric"
    else:
        raise ValueError(
            f"time must hold numbers or datetimes (numpy datetime64 or pandas timestamps); got dtype "
            f"{raw.dtype}. Convert text with pandas.to_datetime first."
        )
    if n > 1:
        back = values[1:] < values[:-1]
        if back.any():
            i, k = _first_bad(back)
            raise ValueError(
                f"time goes backwards: row {i + 1} of this batch ({format_time(kind, values[i + 1])}) is "
                f"earlier than row {i} ({format_time(kind, values[i])}); rows must arrive in time order "
                f"({k} steps back)."
            )
    return kind, values


def format_time(kind, v):
    """A time value as text (ISO 8601 for datetimes)."""
    if v is None:
        return "none"
    if kind == "datetime":
        return str(pd.Timestamp(int(v)))
    return f"{float(v):g}"
