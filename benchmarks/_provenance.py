"""Provenance of every stored benchmark result (git commit, command, configuration, machine).

Each script writes its JSON through :func:`write_json`, which adds a ``"provenance"`` block::

    {"skcal_version": ..., "commit": ..., "git_dirty": ..., "command": ...,
     "config": {...}, "cpu_count": ..., "wall_time_s": ..., "date": ..., "python": ...,
     "packages": {"numpy": ..., "scipy": ..., "scikit-learn": ...}}

so that a reader (and ``benchmarks/verify.py``) can tell which code made a number and rerun it.
``git_dirty`` says whether tracked files outside ``benchmarks/results/`` differed from the commit.
This module is benchmark code, not part of the skcal package.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:  # run from a checkout: import this checkout's skcal
    sys.path.insert(0, REPO_ROOT)

__all__ = [
    "Clock",
    "args_config",
    "provenance",
    "write_json",
    "json_default",
    "command_line",
    "repo_relative",
]


def _git(*args):
    try:
        out = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def command_line(script, argv=None):
    """The command that reproduces a run: ``python benchmarks/<script> <argv...>``.

    Absolute paths among the arguments are written relative to the repository.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = [repo_relative(a) if os.path.isabs(os.fspath(a)) else str(a) for a in argv]
    return " ".join(["python", shlex.quote(repo_relative(script)), *(shlex.quote(a) for a in args)])


class Clock:
    """Wall-clock start of a run, for ``provenance(..., clock=...)``."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.started = _dt.datetime.now(_dt.timezone.utc)

    def elapsed(self):
        return time.perf_counter() - self.t0


def _versions():
    import scipy
    import sklearn

    import skcal

    packages = {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }
    try:  # the optional compiled kernels (skcal[fast])
        import numba
    except ImportError:
        packages["numba"] = None
    else:
        packages["numba"] = numba.__version__
    return skcal.__version__, packages


def provenance(script, argv=None, *, config=None, clock=None, wall_time_s=None):
    """Return the provenance block of a run of ``script`` (pass ``__file__``).

    ``config`` is the full configuration of the run (every option that changes a number);
    ``clock`` (a :class:`Clock` made at the start of the run) or ``wall_time_s`` gives the
    wall time.
    """
    version, packages = _versions()
    # the code's state: stored results (rewritten by the very runs that regenerate them) do not count
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results")
    if wall_time_s is None and clock is not None:
        wall_time_s = clock.elapsed()
    return {
        "skcal_version": version,
        "commit": _git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "command": command_line(script, argv),
        "config": config if config is not None else {},
        "cpu_count": os.cpu_count(),
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 3),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
    }


def repo_relative(path):
    """``path`` relative to the repository root (stored results hold no absolute machine paths)."""
    path = os.fspath(path)
    return os.path.relpath(os.path.abspath(path), REPO_ROOT)


def args_config(args, **extra):
    """The configuration of a run from its argparse namespace (paths relative to the repository).

    Private options (names starting with ``_``, such as a child-process hook) are left out.
    """
    out = {}
    for k, v in vars(args).items():
        if k.startswith("_"):
            continue
        if isinstance(v, os.PathLike) or (isinstance(v, str) and os.path.isabs(v)):
            v = repo_relative(v)
        out[k] = v
    out.update(extra)
    return out


def json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, os.PathLike):
        return repo_relative(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(path, payload, *, provenance=None):
    """Write ``payload`` (plus ``provenance`` under the key ``"provenance"``) as indented JSON."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if provenance is not None:
        payload = {**payload, "provenance": provenance}
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1, default=json_default)
        fh.write("\n")
    return path
