"""The engine of a :class:`~skcal.monitor.CalibrationMonitor` to and from its JSON state.

``encode_engine`` and ``decode_engine`` are the engine's part of ``get_state`` and
``from_state``: the row count and times, the buffer of the incomplete block, the per-block sums
and paths (the history), the segments, the carries of the patterns' memory and of the paths, and
the alarm. Every shape is checked against the monitor's parameters on the way in, so a damaged
state is a ``ValueError`` naming the field, never a monitor that continues wrongly. The arrays
are encoded by :mod:`skcal.monitor._state`.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from skcal.monitor._betting import n_components
from skcal.monitor._blocks import SUM_NAMES
from skcal.monitor._detector import PathCarry
from skcal.monitor._engine import BLOCK_FIELDS
from skcal.monitor._state import decode_array, decode_float, encode_array, encode_float

__all__ = ["decode_engine", "encode_engine"]

#: The carry's arrays of shape ``(k, C)`` (its other fields are the block count and two floats).
_CARRY_ARRAYS = tuple(f.name for f in fields(PathCarry) if f.type in (np.ndarray, "np.ndarray"))


def encode_engine(eng):
    """The engine's part of the state, as plain JSON types."""
    blocks = {name: encode_array(eng.block_array(name)) for name in BLOCK_FIELDS}
    carry = eng.path
    return {
        "n_seen": int(eng.n_seen),
        "time_kind": eng.time_kind,
        "first_time": _encode_time(eng.time_kind, eng.first_time),
        "last_time": _encode_time(eng.time_kind, eng.last_time),
        "buffer": {
            "y": encode_array(np.array(eng.buffer_y, dtype=np.float64)),
            "p": encode_array(np.array(eng.buffer_p, dtype=np.float64)),
            "time": None if eng.buffer_t is None else encode_array(eng.buffer_t),
        },
        "blocks": blocks,
        "segments": [_encode_segment(s) for s in eng.segments],
        "carry": {
            "memory": encode_array(eng.mem_tail),
            "n_blocks": int(carry.n_blocks),
            **{name: encode_array(getattr(carry, name)) for name in _CARRY_ARRAYS},
            "max_log_e": encode_float(carry.max_log_e),
            "lcb": encode_float(carry.lcb),
        },
        "alarm": {
            "block": eng.alarm_block,
            "change_block": eng.change_block,
            "component": eng.alarm_component,
        },
    }


def decode_engine(state, new_engine, n_bins, block_size):
    """The engine saved in ``state``, built by ``new_engine(n_classes)`` and checked against the
    monitor's ``n_bins`` and ``block_size``."""
    K, B = int(n_bins), int(block_size)
    C = n_components(K)
    blocks = {name: decode_array(state["blocks"][name], f"blocks.{name}") for name in BLOCK_FIELDS}
    k = blocks["count"].shape[1] if blocks["count"].ndim == 3 else 0
    nb = blocks["count"].shape[0]
    for name in SUM_NAMES:
        if blocks[name].shape != (nb, k, K):
            raise ValueError(f"state blocks.{name} has shape {blocks[name].shape}; expected {(nb, k, K)}.")
    for name in ("log_e", "log_m", "lcb", "time_first", "time_last"):
        if blocks[name].shape != (nb,):
            raise ValueError(f"state blocks.{name} has shape {blocks[name].shape}; expected {(nb,)}.")
    c = state["carry"]
    carried = {name: decode_array(c[name], f"carry.{name}") for name in _CARRY_ARRAYS}
    path = PathCarry(
        n_blocks=int(c["n_blocks"]),
        **carried,
        max_log_e=decode_float(c["max_log_e"], "carry.max_log_e"),
        lcb=decode_float(c["lcb"], "carry.lcb"),
    )
    for name, v in carried.items():
        if v.shape != (k, C):
            raise ValueError(f"state carry.{name} has shape {v.shape}; expected {(k, C)}.")
    segments = [_decode_segment(s) for s in state["segments"]]
    if not segments or segments[-1]["first_block"] + path.n_blocks != nb:
        raise ValueError(
            f"state carry.n_blocks is {path.n_blocks} but the last segment starts at block "
            f"{segments[-1]['first_block'] if segments else None} of {nb}."
        )
    engine = new_engine(k)
    engine.mem_tail = decode_array(c["memory"], "carry.memory")
    if engine.mem_tail.shape[1:] != (2, k, 2 * K - 1):
        raise ValueError(f"state carry.memory has shape {engine.mem_tail.shape}.")
    engine.path = path
    engine.segments = segments
    engine.blocks = {name: [blocks[name]] if nb else [] for name in BLOCK_FIELDS}
    by = decode_array(state["buffer"]["y"], "buffer.y")
    bp = decode_array(state["buffer"]["p"], "buffer.p")
    if by.shape != bp.shape or by.shape[0] != k or by.shape[1] >= B:
        raise ValueError(f"state buffer has shape {by.shape}; expected ({k}, < {B}).")
    engine.buffer_y = [np.array(v) for v in by]
    engine.buffer_p = [np.array(v) for v in bp]
    bt = state["buffer"]["time"]
    engine.time_kind = state["time_kind"]
    if engine.time_kind not in (None, "numeric", "datetime"):
        raise ValueError(f"state time_kind is {engine.time_kind!r}.")
    engine.buffer_t = None if bt is None else decode_array(bt, "buffer.time")
    engine.first_time = _decode_time(engine.time_kind, state["first_time"])
    engine.last_time = _decode_time(engine.time_kind, state["last_time"])
    engine.n_seen = int(state["n_seen"])
    seg = segments[-1]
    if engine.n_seen != seg["first_row"] + path.n_blocks * B + by.shape[1]:
        raise ValueError(
            f"state n_seen is {engine.n_seen} but its last segment starts at row {seg['first_row']} "
            f"and holds {path.n_blocks} blocks and {by.shape[1]} buffered rows."
        )
    a = state["alarm"]
    engine.alarm_block = None if a["block"] is None else int(a["block"])
    engine.change_block = None if a["change_block"] is None else int(a["change_block"])
    engine.alarm_component = None if a["component"] is None else int(a["component"])
    return engine


def _encode_time(kind, v):
    if v is None:
        return None
    return encode_float(v) if kind == "numeric" else int(v)


def _decode_time(kind, v):
    if v is None:
        return None
    return int(v) if kind == "datetime" else decode_float(v)


_SEGMENT_INTS = (
    "first_block",
    "first_row",
    "dropped",
    "alarm_block",
    "change_block",
    "alarm_component",
    "blocks",
)


def _encode_segment(seg):
    out = {}
    for key, v in seg.items():
        if key in ("lcb", "max_log_e"):
            out[key] = encode_float(v)
        else:
            out[key] = v
    return out


def _decode_segment(seg):
    if not isinstance(seg, dict) or not {"label", "first_block", "first_row", "dropped"} <= set(seg):
        raise ValueError(f"state segments hold {seg!r}; expected label, first_block, first_row, dropped.")
    out = {}
    for key, v in seg.items():
        if key in ("lcb", "max_log_e"):
            out[key] = decode_float(v, f"segments.{key}")
        elif key in _SEGMENT_INTS:
            out[key] = None if v is None else int(v)
        elif key == "label":
            if v is not None and not isinstance(v, str):
                raise ValueError(f"state segments.label is {v!r}; expected a string or null.")
            out[key] = v
        else:
            raise ValueError(f"state segments hold an unknown key {key!r}.")
    return out
