"""The monitor's state as plain JSON types: arrays as ``{"dtype", "shape", "data"}``.

Floats are written by ``json`` with ``repr``, which round-trips every float64 exactly, so a
monitor rebuilt from its state continues bit for bit. JSON has no infinities and no NaN: the
few that occur (the empty sum of the e-detector before the first block, the e-detector path of a
``mode="test"`` monitor and the block times of a monitor without times, which are not computed)
are written as the strings ``"inf"``, ``"-inf"`` and ``"nan"``.

``source`` is the caller's: an opaque dict of JSON types (the command line keeps its watermark of
the files it has read there), carried through :meth:`CalibrationMonitor.get_state` and
:meth:`CalibrationMonitor.from_state` unchanged.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = [
    "STATE_KIND",
    "STATE_VERSION",
    "check_source",
    "encode_array",
    "decode_array",
    "encode_float",
    "decode_float",
]

#: The ``kind`` of a monitor's state.
STATE_KIND = "skcal.CalibrationMonitor"
#: Bump when the layout or meaning of the state changes; ``from_state`` refuses others.
STATE_VERSION = 2

_DTYPES = {"float64": np.float64, "int64": np.int64, "uint8": np.uint8}


def encode_float(v):
    v = float(v)
    if np.isfinite(v):
        return v
    if np.isnan(v):
        return "nan"
    return "inf" if v > 0 else "-inf"


def decode_float(v, name="state"):
    if isinstance(v, str):
        if v in ("inf", "-inf", "nan"):
            return float(v)
        raise ValueError(f"{name}: expected a number or 'inf', '-inf', 'nan'; got {v!r}.")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name}: expected a number; got {type(v).__name__}.")
    return float(v)


def encode_array(a):
    a = np.asarray(a)
    kind = {"f": "float64", "i": "int64", "u": "uint8", "b": "uint8"}[a.dtype.kind]
    flat = a.ravel()
    if kind == "float64":
        if np.isfinite(flat).all():
            data = flat.astype(np.float64).tolist()
        else:
            data = [encode_float(v) for v in flat.tolist()]
    else:
        data = flat.astype(_DTYPES[kind]).tolist()
    return {"dtype": kind, "shape": list(a.shape), "data": data}


def decode_array(d, name):
    if not isinstance(d, dict) or set(d) != {"dtype", "shape", "data"}:
        raise ValueError(f"state[{name!r}] must be an encoded array (dtype, shape, data).")
    if d["dtype"] not in _DTYPES:
        raise ValueError(f"state[{name!r}] has dtype {d['dtype']!r}; expected one of {sorted(_DTYPES)}.")
    shape = tuple(int(s) for s in d["shape"])
    data = d["data"]
    if d["dtype"] == "float64" and any(isinstance(v, str) for v in data):
        data = [decode_float(v, name) for v in data]
    a = np.asarray(data, dtype=_DTYPES[d["dtype"]])
    if a.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"state[{name!r}] holds {a.size} values for the shape {list(shape)}.")
    return a.reshape(shape)


def check_source(source):
    """``source`` as a plain dict of JSON types (a deep copy), or a ``ValueError`` saying why not."""
    if not isinstance(source, dict):
        raise ValueError(f"source_ must be a dict of JSON types; got {type(source).__name__}.")
    try:
        return json.loads(json.dumps(source, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"source_ must hold JSON types only (str keys, no NaN or infinity): {exc}."
        ) from None
