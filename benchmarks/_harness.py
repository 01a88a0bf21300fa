"""The shared harness of the benchmark scripts: running, data, timing, memory, statistics, output.

Every script in ``benchmarks/`` is a module run from the repository root
(``python -m benchmarks.<name>``) and takes what it repeats from here:

* **running**: :func:`parser` (``--quick``, ``--out`` and the usual options, ``prog`` set to the
  command that runs the script), :func:`parse_args` (``--out`` defaults to ``benchmarks/results/``,
  or ``benchmarks/results/quick/`` with ``--quick``) and :func:`run_module` (a script's own
  child process, for a measurement that needs a fresh interpreter);
* **data**: :func:`binary_predictions` (the miscalibrated binary predictor of the speed scripts),
  :func:`second_order_snapshots` (calibrated second-order scores with two label snapshots) and
  :func:`multiclass_predictions` (softmax of Gaussian logits, labels drawn from them);
* **timing**: :func:`time_rotated` (several callables timed in turn over rounds, the order rotated
  every round; medians, minima and ratios in a :class:`Timings`), :func:`against_floor` (the
  ratio of a callable to a floor such as ``np.bincount`` or ``np.sort`` on the same data, timed
  side by side), :func:`best_of`, :class:`Timer` and :func:`load_average`;
* **memory**: :func:`traced_peak` (``tracemalloc``), :func:`peak_rss_mib` and
  :func:`reset_peak_rss` (the process's peak resident set, Linux ``/proc``);
* **statistics**: :func:`binomial_interval` (Clopper-Pearson or Wilson interval of a simulated
  rate), :func:`binomial_band` (where a rate of ``n`` draws lands around its nominal value) and
  :func:`t_interval` (Student-t interval of a mean over seeds);
* **output**: :func:`provenance` (commit, command, configuration, cores, wall time, date, load
  average, package versions), :func:`write_json` and :func:`write_result` (the two together),
  and the figure tail :func:`subplots` / :func:`save_figure` (matplotlib's ``Figure`` without
  pyplot, saved and released in one call), with :func:`plot_band` (a line and its shaded band).

How to write a new script on it, in five steps: ``benchmarks/README.md``. Experiment-specific
code shared by several scripts lives in its own module (``benchmarks/_mixture_problem.py``: the
Gaussian-mixture problem of experiments 6.1-6.2 and its CE2 ground truth). This package is
benchmark code, not part of the installed skcal.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
QUICK_DIR = RESULTS_DIR / "quick"

#: The data of :func:`binary_predictions`, as the scripts record it in their configuration.
BINARY_PREDICTIONS = "p ~ Beta(2, 2), y ~ Bernoulli(clip(p + 0.1 sin(6 p), 0, 1))"

#: Package versions recorded in every provenance block (``None`` where one is not installed).
PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "joblib", "numba", "matplotlib", "dask")


# ----------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------
def module_name(file):
    """``benchmarks.<stem>``: the module a script file ``benchmarks/<stem>.py`` is run as."""
    return f"benchmarks.{Path(file).stem}"


def parser(file, doc, *, quick="a small smoke run", n_jobs=None, seed=False, full_doc=False):
    """An argument parser for a script, with ``prog`` the command that runs it.

    Parameters
    ----------
    file : str
        The script's ``__file__``.
    doc : str
        The script's docstring: its first line is the description (the whole docstring with
        ``full_doc=True``, shown as written).
    quick : str or None, default="a small smoke run"
        Help of ``--quick``; ``None`` leaves the option out.
    n_jobs : str or None, default=None
        Help of ``--n-jobs`` (an int, default 1); ``None`` leaves the option out.
    seed : bool, default=False
        Whether to add ``--seed`` (an int, default 0).
    full_doc : bool, default=False
        Show the whole docstring in ``--help``.

    Returns
    -------
    parser : argparse.ArgumentParser
        With ``--out`` (see :func:`parse_args`) and the options asked for.
    """
    kwargs = {"prog": f"python -m {module_name(file)}"}
    if full_doc:
        kwargs.update(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    else:
        kwargs["description"] = doc.strip().splitlines()[0]
    p = argparse.ArgumentParser(**kwargs)
    if quick is not None:
        p.add_argument("--quick", action="store_true", help=quick)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default benchmarks/results/; benchmarks/results/quick/ with --quick)",
    )
    if n_jobs is not None:
        p.add_argument("--n-jobs", type=int, default=1, help=n_jobs)
    if seed:
        p.add_argument("--seed", type=int, default=0, help="master seed")
    return p


def parse_args(parser, argv=None):
    """Parse ``argv`` and resolve ``--out``: the folder given, else ``results/`` or ``results/quick/``."""
    args = parser.parse_args(argv)
    if getattr(args, "out", None) is None:
        args.out = QUICK_DIR if getattr(args, "quick", False) else RESULTS_DIR
    else:
        args.out = Path(args.out)
    return args


def run_module(file, *args, env=None, timeout=None):
    """Run the script of ``file`` again in a fresh interpreter, from the repository root.

    ``python -m benchmarks.<stem> *args`` (the script's own child mode, such as a measurement of
    peak memory that must not see the parent's allocations). Returns its standard output; a
    non-zero exit raises ``RuntimeError`` with the end of its standard error.
    """
    cmd = [sys.executable, "-m", module_name(file), *map(str, args)]
    res = subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:])} exited with {res.returncode}:\n{res.stderr[-4000:]}")
    return res.stdout


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------
def binary_predictions(n, seed=0):
    """Labels and probabilities of a mildly miscalibrated binary predictor (:data:`BINARY_PREDICTIONS`).

    ``p ~ Beta(2, 2)`` (distinct with probability one) and
    ``y ~ Bernoulli(clip(p + 0.1 sin(6 p), 0, 1))``, as ``int64``. ``seed`` is anything
    ``np.random.default_rng`` takes (an int, a list such as ``[seed, block]``, a Generator).
    """
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < np.clip(p + 0.1 * np.sin(6 * p), 0, 1)).astype(np.int64)
    return y, p


def second_order_snapshots(n, seed=0, *, variance="feasible"):
    """Calibrated second-order scores ``S = (m, sigma2)`` and two label snapshots per row.

    ``m ~ U(0, 1)``; ``sigma2 = u m (1 - m)`` (``variance="feasible"``, the whole feasible
    region) or ``sigma2 = u min(m, 1 - m)^2`` (``"symmetric"``) with ``u ~ U(0, 1)``; the true
    probability is ``f* = m -+ sqrt(sigma2)`` with equal odds, clipped to [0, 1] for
    ``"feasible"`` (``"symmetric"`` needs no clip, so there ``E[f* | S] = m`` and
    ``Var[f* | S] = sigma2`` exactly); ``Y[:, j] ~ Bernoulli(f*)`` independently.

    Returns
    -------
    S : ndarray of shape (n, 2)
        The scores ``(m, sigma2)``.
    Y : ndarray of shape (n, 2)
        Two snapshots (float 0/1).
    """
    if variance not in ("feasible", "symmetric"):
        raise ValueError(f"variance must be 'feasible' or 'symmetric'; got {variance!r}")
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.0, 1.0, n)
    if variance == "feasible":
        s2 = rng.uniform(0.0, 1.0, n) * m * (1.0 - m)
        f = np.clip(m + rng.choice([-1.0, 1.0], n) * np.sqrt(s2), 0.0, 1.0)
    else:
        s2 = rng.uniform(0.0, 1.0, n) * np.minimum(m, 1.0 - m) ** 2
        f = m + rng.choice([-1.0, 1.0], n) * np.sqrt(s2)
    Y = (rng.uniform(size=(n, 2)) < f[:, None]).astype(np.float64)
    return np.column_stack([m, s2]), Y


def multiclass_predictions(n, k, seed=0, *, scale=1.5):
    """Labels and probabilities ``P = softmax(scale z)``, ``z ~ N(0, I_k)``; ``y`` drawn from ``P``.

    ``P`` is C-ordered float64 of shape ``(n, k)`` (made in place: no second ``n x k`` buffer);
    ``y`` (``int64``) is drawn from each row of ``P`` by one uniform number per row, so the
    reports are calibrated up to the sampling noise.
    """
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n, k))
    P *= scale
    np.exp(P, out=P)
    P /= P.sum(axis=1, keepdims=True)
    u = rng.random(n)
    y = np.full(n, k - 1, dtype=np.int64)
    acc = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    for j in range(k - 1):  # over the classes (k), not the rows
        acc += P[:, j]
        hit = ~done & (u < acc)
        y[hit] = j
        done |= hit
    return y, P


# ----------------------------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------------------------
class Timer:
    """Wall-clock timer, started when made and again on ``with``; ``seconds`` after the block."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.seconds = None

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0

    def elapsed(self):
        """Seconds since the start."""
        return time.perf_counter() - self.t0


def best_of(fn, repeats):
    """``(seconds, value)``: the fastest of ``repeats`` consecutive calls of ``fn()``, its last value."""
    best, value = np.inf, None
    for _ in range(max(1, int(repeats))):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def _scalar(value):
    return isinstance(value, (int, float, np.number)) or (isinstance(value, np.ndarray) and value.ndim == 0)


@dataclass
class Timings:
    """Times of several callables measured side by side (:func:`time_rotated`).

    Attributes
    ----------
    times : dict of str to list of float
        Seconds of every call, one per round, in the order of the rounds.
    values : dict of str to float
        The last value of each callable that returned a scalar (arrays are dropped at once, so
        a floor's output does not stay in memory during the other calls).
    order : list of list of str
        The order of the calls in every round.
    """

    times: dict
    values: dict = field(default_factory=dict)
    order: list = field(default_factory=list)

    @property
    def median(self):
        """Median seconds per callable."""
        return {k: float(np.median(v)) for k, v in self.times.items()}

    @property
    def best(self):
        """Fastest call per callable."""
        return {k: float(np.min(v)) for k, v in self.times.items()}

    def ratio(self, name, floor):
        """Median time of ``name`` over the median time of ``floor``."""
        med = self.median
        return med[name] / med[floor]

    def ratios(self, floor, names=None):
        """``{"<name>_over_<floor>": ratio of medians}`` for ``names`` (default all but the floor)."""
        names = [k for k in self.times if k != floor] if names is None else names
        return {f"{k}_over_{floor}": self.ratio(k, floor) for k in names}


def time_rotated(funcs, *args, rounds=5, **kwargs):
    """Time several callables side by side: every round calls each once, in a rotated order.

    Round ``r`` starts at callable ``r mod len(funcs)``, so no callable always runs first (or
    last) on a machine whose load changes; compare medians (:attr:`Timings.median`) or their
    ratios (:meth:`Timings.ratio`), never single calls.

    Parameters
    ----------
    funcs : dict of str to callable
        The callables, each called as ``fn(*args, **kwargs)``.
    *args, **kwargs
        The data, the same for every callable.
    rounds : int, default=5
        Rounds; every callable runs ``rounds`` times.

    Returns
    -------
    timings : Timings
    """
    names = list(funcs)
    timings = Timings({name: [] for name in names})
    for r in range(max(1, int(rounds))):
        shift = r % len(names)
        order = names[shift:] + names[:shift]
        timings.order.append(order)
        for name in order:
            t0 = time.perf_counter()
            value = funcs[name](*args, **kwargs)
            timings.times[name].append(time.perf_counter() - t0)
            if _scalar(value):
                timings.values[name] = float(value)
            del value
    return timings


def against_floor(funcs, floors, *args, rounds=5, **kwargs):
    """Time callables against floors on the same data, side by side; the ratios of the medians.

    A floor is the least any implementation must do on the data (one ``np.sort`` of it, one
    ``np.bincount`` over it): the ratio to it is a property of the code, where a time alone is a
    property of the machine's load at that moment.

    Parameters
    ----------
    funcs, floors : dict of str to callable
        The callables measured and their floors, all called as ``fn(*args, **kwargs)`` in the
        same rotated rounds (:func:`time_rotated`).
    *args, **kwargs
        The data.
    rounds : int, default=5
        Rounds.

    Returns
    -------
    timings : Timings
        All the times (floors first).
    ratios : dict of str to float
        ``"<name>_over_<floor>"``: median of ``name`` over median of ``floor``, for every pair.

    Examples
    --------
    >>> import numpy as np
    >>> from benchmarks._harness import against_floor
    >>> x = np.random.default_rng(0).integers(0, 10, 10_000)
    >>> _, r = against_floor({"unique": np.unique}, {"bincount": np.bincount}, x, rounds=3)
    >>> sorted(r)
    ['unique_over_bincount']
    """
    timings = time_rotated({**floors, **funcs}, *args, rounds=rounds, **kwargs)
    ratios = {f"{k}_over_{f}": timings.ratio(k, f) for k in funcs for f in floors}
    return timings, ratios


def load_average():
    """``os.getloadavg()`` as a list (1, 5 and 15 minutes), or ``None`` where it is unavailable."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):  # pragma: no cover - not Unix
        return None


# ----------------------------------------------------------------------------------------------
# memory
# ----------------------------------------------------------------------------------------------
def traced_peak(fn, *args, **kwargs):
    """Peak bytes allocated during one call ``fn(*args, **kwargs)``, by ``tracemalloc``.

    numpy reports its buffers to ``tracemalloc``; numba's allocations and a library's own C
    allocations are not traced (use :func:`peak_rss_mib` in a fresh process for those).
    """
    tracemalloc.start()
    try:
        fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def status_kib(field):
    """A field of ``/proc/self/status`` in KiB (``VmHWM``, ``VmRSS``), or ``None`` (not Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        return None
    return None


def peak_rss_mib():
    """Peak resident memory of this process in MiB.

    ``VmHWM`` from ``/proc/self/status`` (Linux): unlike ``getrusage().ru_maxrss`` it is reset by
    ``exec``, so a child started from a big parent reports its own peak.
    """
    kib = status_kib("VmHWM")
    if kib is None:  # pragma: no cover - not Linux
        import resource

        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024.0


def reset_peak_rss():
    """Reset the peak resident set (Linux ``/proc/self/clear_refs``); return the current RSS in KiB.

    ``None`` where the reset is not supported; after it, ``status_kib("VmHWM")`` minus the value
    returned is the growth of the peak from here.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return status_kib("VmRSS")


# ----------------------------------------------------------------------------------------------
# statistics
# ----------------------------------------------------------------------------------------------
def binomial_interval(k, n, level=0.95, method="clopper-pearson"):
    """Two-sided interval of a rate from ``k`` hits in ``n`` independent draws.

    Parameters
    ----------
    k : int or array-like of int
        Hits (false alarms, covering intervals, rejections), ``0 <= k <= n``.
    n : int or array-like of int
        Draws (simulated streams, repeats), ``n >= 1``.
    level : float, default=0.95
        Confidence level.
    method : {"clopper-pearson", "wilson"}, default="clopper-pearson"
        ``"clopper-pearson"``: the exact interval, inverting the two one-sided binomial tests
        (``Beta(alpha/2; k, n - k + 1)`` to ``Beta(1 - alpha/2; k + 1, n - k)``, 0 at ``k = 0``
        and 1 at ``k = n``); its coverage is at least ``level`` for every true rate.
        ``"wilson"``: the score interval, shorter, with coverage close to ``level`` on average
        but below it for some rates.

    Returns
    -------
    low, high : float or ndarray
        The interval's ends.

    Examples
    --------
    >>> from benchmarks._harness import binomial_interval
    >>> lo, hi = binomial_interval(0, 1000)        # no false alarm in 1,000 streams
    >>> float(lo), round(float(hi), 5)
    (0.0, 0.00368)
    >>> [round(float(v), 4) for v in binomial_interval(50, 1000, method="wilson")]
    [0.0381, 0.0653]
    """
    from scipy.stats import beta, norm

    k, n = np.asarray(k), np.asarray(n)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level}")
    alpha = 1.0 - level
    if method == "clopper-pearson":
        with np.errstate(invalid="ignore"):
            lo = np.where(k == 0, 0.0, beta.ppf(alpha / 2, k, n - k + 1))
            hi = np.where(k == n, 1.0, beta.ppf(1 - alpha / 2, k + 1, n - k))
    elif method == "wilson":
        z = norm.ppf(1 - alpha / 2)
        centre = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
        lo, hi = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    else:
        raise ValueError(f"method must be 'clopper-pearson' or 'wilson'; got {method!r}")
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


def binomial_band(n, rate, level=0.99):
    """Where the observed rate of ``n`` draws lands with probability ``level`` if the true rate is ``rate``.

    The central binomial quantiles over ``n``: ``(ppf((1 - level)/2), ppf((1 + level)/2)) / n`` of
    ``Binomial(n, rate)``. A simulated false-alarm rate or test size outside the band of its
    nominal value is evidence against the nominal value at level ``1 - level``.
    """
    from scipy.stats import binom

    lo_q, hi_q = round((1 - level) / 2, 12), round((1 + level) / 2, 12)
    return float(binom.ppf(lo_q, n, rate) / n), float(binom.ppf(hi_q, n, rate) / n)


def t_interval(x, level=0.90, axis=0):
    """Mean and half-width of the Student-t interval of the mean along ``axis``."""
    from scipy.stats import t as student_t

    x = np.asarray(x, float)
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    if n < 2:
        return mean, np.zeros_like(mean)
    sem = x.std(axis=axis, ddof=1) / np.sqrt(n)
    return mean, student_t.ppf(0.5 + level / 2, n - 1) * sem


# ----------------------------------------------------------------------------------------------
# provenance and JSON
# ----------------------------------------------------------------------------------------------
def _git(*args):
    try:
        out = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def repo_relative(path):
    """``path`` relative to the repository root (stored results hold no absolute machine paths)."""
    return os.path.relpath(os.path.abspath(os.fspath(path)), REPO_ROOT)


def command_line(file, argv=None):
    """The command that reproduces a run: ``python -m benchmarks.<name> <argv...>``.

    Absolute paths among the arguments are written relative to the repository root (where the
    command runs).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = [repo_relative(a) if os.path.isabs(os.fspath(a)) else str(a) for a in argv]
    return " ".join(["python", "-m", module_name(file), *(shlex.quote(a) for a in args)])


def _versions():
    import skcal

    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return skcal.__version__, packages


def provenance(file, argv=None, *, config=None, clock=None, wall_time_s=None):
    """The provenance block of a run of the script ``file`` (pass ``__file__``).

    Parameters
    ----------
    file : str
        The script's ``__file__``.
    argv : list of str, default=None
        The arguments of the run (default ``sys.argv[1:]``).
    config : dict, default=None
        The full configuration (every option that changes a number).
    clock : Timer, default=None
        A timer started with the run: its elapsed time is the wall time.
    wall_time_s : float, default=None
        The wall time, when no ``clock`` is given.

    Returns
    -------
    provenance : dict
        ``skcal_version``, ``commit``, ``git_dirty`` (tracked files outside
        ``benchmarks/results/`` differ from the commit), ``command``, ``config``, ``cpu_count``,
        ``wall_time_s``, ``date`` (UTC), ``load_average`` (1, 5, 15 minutes, at the end of the
        run), ``python``, ``platform`` and ``packages`` (:data:`PACKAGES`).
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
        "command": command_line(file, argv),
        "config": config if config is not None else {},
        "cpu_count": os.cpu_count(),
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 3),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "load_average": load_average(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
    }


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
    """JSON for numpy scalars and arrays and for paths (relative to the repository)."""
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if provenance is not None:
        payload = {**payload, "provenance": provenance}
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1, default=json_default)
        fh.write("\n")
    return path


def write_result(file, argv, path, payload, *, config=None, clock=None, wall_time_s=None):
    """Write ``payload`` to ``path`` with the :func:`provenance` of this run of ``file``; return ``path``."""
    prov = provenance(file, argv, config=config, clock=clock, wall_time_s=wall_time_s)
    return write_json(path, payload, provenance=prov)


# ----------------------------------------------------------------------------------------------
# figures
# ----------------------------------------------------------------------------------------------
def plot_band(ax, x, mean, low, high, *args, alpha=0.2, **kwargs):
    """A line ``mean`` against ``x`` with the band ``[low, high]`` shaded in its colour; returns the line.

    ``args`` and ``kwargs`` go to ``ax.plot`` (a format such as ``"o-"``, ``label``, ``color``);
    ``alpha`` is the band's opacity.
    """
    (line,) = ax.plot(x, mean, *args, **kwargs)
    ax.fill_between(x, low, high, alpha=alpha, color=line.get_color())
    return line


def subplots(nrows=1, ncols=1, *, figsize=None, layout=None, **kwargs):
    """A matplotlib ``Figure`` and its axes, off-screen (no pyplot, no global figure state).

    ``kwargs`` go to ``Figure.subplots`` (``squeeze``, ``sharey``, ...). Save it with
    :func:`save_figure`.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def save_figure(fig, path, *, dpi=120, tight_layout=True, **savefig_kwargs):
    """Lay out (``tight_layout``), save to ``path`` (its folder made) and release a figure.

    A figure that pyplot manages (a display's ``figure_``) is closed too. Returns ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tight_layout:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi, **savefig_kwargs)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)
    return path
