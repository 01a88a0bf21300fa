""":class:`CalibrationMonitor`: anytime-valid monitoring of a deployed model's calibration."""

from __future__ import annotations

import copy
import math
import threading
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skcal._compat import StrOptions
from skcal._constraints import PROBABILITY_OPEN, Pair, StrictInterval
from skcal._validation import plain
from skcal.monitor._engine import Engine
from skcal.monitor._engine_state import decode_engine, encode_engine
from skcal.monitor._input import (
    binary_labels,
    check_probabilities_batch,
    check_time,
    class_codes,
    format_time,
)
from skcal.monitor._state import (
    STATE_KIND,
    STATE_VERSION,
    check_source,
)
from skcal.monitor._tables import (
    bands_table,
    block_measures,
    history_table,
    period_table,
    segments_table,
)

#: Rows the default ``mode="detect"`` keeps silent with probability ``1 - alpha`` (see
#: ``false_alarm_rows``): ``1e7``, about a year of a model scoring a row every three seconds.
DEFAULT_HORIZON = 10_000_000
#: The tolerance the command line uses unless told otherwise (the class's own default is 0, the
#: exact test): the smallest candidate at which every practically calibrated model of the
#: benchmark (smooth ECE at most 0.0075) stays silent over 1e7 rows (benchmarks/monitor.py, part
#: "tolerance"; docs/benchmarks/monitor.md).
DEFAULT_TOLERANCE = 0.01
#: Rows the patterns of ``mode="detect"`` look back on (``memory="auto"``), rounded up to blocks:
#: short enough that the patterns follow a change within a few blocks.
DETECT_MEMORY_ROWS = 5_000
#: Largest ``n_bins`` (the state holds five numbers per bin and block).
MAX_BINS = 1024

_PARAMS = (
    "tolerance",
    "false_alarm_rows",
    "alpha",
    "mode",
    "block_size",
    "n_bins",
    "memory",
    "labels",
    "multiclass",
    "model_name",
)
_LN10 = math.log(10.0)
#: Guards the creation of a monitor's lock (each monitor then has its own).
_LOCK_GUARD = threading.Lock()


def _log10(v):
    """A natural log as a log10 (``-inf`` and ``nan`` pass through)."""
    return float(v) / _LN10


def _power10(v):
    """``10 ** v`` without overflow warnings (``inf`` past the float range)."""
    with np.errstate(over="ignore"):
        return float(np.power(10.0, v))


class CalibrationMonitor(BaseEstimator):
    """Monitor the calibration of a deployed model over time, with an anytime-valid alarm.

    Feed the monitor each batch of predictions as their labels arrive (:meth:`update`). It
    answers three questions, each with a guarantee that holds however long the stream runs and
    however often it is read:

    * **Is the calibration error worse than my tolerance?** (``mode="test"``, the default) The
      null is that the l1 calibration error ``CE_t = E_t |E[y | p] - p|`` of the rows at every
      step ``t`` is at most ``tolerance`` (the distribution of ``p`` may change over time;
      ``tolerance=0`` is exact calibration, ``E[y_t | past, p_t] = p_t``). Under it the alarm is
      ever raised with probability at most ``alpha``.
    * **How large is it, at least?** ``calibration_error_lcb_`` is a time-uniform lower
      confidence bound: with probability at least ``1 - alpha`` it never exceeds the largest
      calibration error of the stream so far, at any time it is read ("the calibration error is
      at least 0.031, 95% confidence, valid whenever you look").
    * **Has it changed?** (``mode="detect"``) An e-detector whose false alarms are stated in
      rows: its average run length to a false alarm is at least ``false_alarm_rows`` rows, and
      a calibrated stream of ``N`` rows stays silent with probability at least
      ``1 - N / false_alarm_rows`` (to within one block).

    **Definitions** (rows ``(p_t, y_t)``, residual ``x_t = y_t - p_t``, ``F_{t-1}`` everything
    seen before row ``t``). A *test function* ``g_t`` with ``|g_t| <= 1`` is chosen from
    ``F_{t-1}``: here ``g = +1``, ``g = -1`` (a global bias up or down) and, for each resolution
    ``2, 4, ..., n_bins`` equal-width bins, a *pattern*: the sign of the residual of each bin
    learned from the blocks before (0 where it is not yet clear), which catches over- and
    under-confidence and miscalibration confined to a region. Each bets each ``lambda`` of a
    fixed grid ``1/2, 1/4, ..., 1/32``; the capital of a component at tolerance ``eps`` is
    ``K_t(eps) = prod_{s <= t} (1 + lambda g_s(p_s) x_s) / (1 + lambda eps)``, a bet
    ``b = lambda / (1 + lambda eps)`` in ``[0, 1/2]`` on ``x'_s = g_s(p_s) x_s - eps``. The evidence
    ``E_t(eps)`` is the mixture of the components' capitals with prior weights summing to one
    (three quarters on the two constant functions).

    **Proof sketch.** Under the null, ``E[g_t(p_t) x_t | F_{t-1}] = E[g_t(p_t) (E[y | p_t] - p_t)]
    <= E |E[y | p] - p| <= eps``, for any predictable ``g_t``, so every factor ``1 + b x'`` has
    conditional mean at most one and is positive: ``K(eps)`` and the mixture ``E(eps)`` are
    nonnegative supermartingales starting at 1, and Ville's inequality gives
    ``P(sup_t E_t(eps) >= 1 / alpha) <= alpha``. The capital is the product of the exact test's
    capital and ``(1 + lambda eps)^{-n}``, so ``E_t(eps)`` decreases in ``eps``; hence if
    ``LCB_t = sup {eps : max_{s <= t} E_s(eps) >= 1 / alpha}`` exceeds the true error ``CE``
    at some time, ``E`` at ``eps = CE`` has crossed, which has probability at most ``alpha``.
    With ``mode="detect"``, the Shiryaev-Roberts statistic ``M_t = (M_{t-1} + 1) * factor_t``
    (per component, mixed; the sum of the capitals started at every block) satisfies
    ``E[M_t | past] <= M_{t-1} + 1`` under the null, so ``M_t - t`` is a supermartingale: the
    alarm at ``M_t >= A`` has ``E[tau] >= A`` blocks (optional stopping), and ``P(tau <= T) <=
    T / A`` (``M_t + T - t`` is a nonnegative supermartingale started at ``T``). The capital
    is computed from per-block, per-bin sums: each row's ``log(1 + lambda g x)``, concave in
    ``p`` for each label, is replaced by its chord over the row's finest bin, which is below it,
    so the product stays a supermartingale (see :mod:`skcal.monitor`).

    Parameters
    ----------
    tolerance : float in [0, 1), default=0.0
        The calibration error ``eps`` the alarm tolerates: the null is ``CE_t <= eps`` at every
        step. ``0`` tests exact calibration (every real model fails it, given enough rows);
        ``0.01`` asks whether the model is off by more than one point on average.
    false_alarm_rows : float, (float, float) or None, default=None
        ``mode="detect"`` only: the guaranteed average run length to a false alarm, in rows
        (``2e8``: at most one false alarm per 2e8 calibrated rows on average), or a pair
        ``(rows, probability)``: a calibrated stream of ``rows`` rows stays silent with at
        least ``1 - probability`` (the run length is then ``rows / probability``, the rows
        rounded up to whole blocks). ``None``: ``(DEFAULT_HORIZON, alpha)``, 1e7 rows silent with
        probability ``1 - alpha``.
    alpha : float in (0, 1), default=0.05
        Level of the test (``P(ever alarm) <= alpha`` under the null), of the lower bound
        (``calibration_error_lcb_`` exceeds the error with probability at most ``alpha``), of
        the reliability bands and of the default ``false_alarm_rows``.
    mode : {"test", "detect"}, default="test"
        ``"test"``: has the calibration error exceeded ``tolerance`` since the start (of the
        segment)? ``"detect"``: has it changed to exceed ``tolerance`` (an e-detector)?
    block_size : int, default=1000
        Rows per block. Bets and patterns are fixed within a block, the evidence is read at
        block boundaries, the e-detector restarts at each, and the history holds one row per
        block. The rows of an incomplete block wait in a buffer (part of the state). Smaller
        blocks detect sooner at more CPU per row (``250`` finds a 0.05 bias about a quarter
        sooner at 2.6 times the cost; see the monitoring benchmark); larger ones make a smaller
        history and state (use ``100_000`` for a year of ``1e9`` rows).
    n_bins : int, default=16
        Finest number of equal-width bins, a power of two: the patterns' resolutions are
        ``2, 4, ..., n_bins`` bins, and the history and the reliability bands use the finest.
    memory : "auto", int or None, default="auto"
        Blocks the patterns look back on: ``None`` means every earlier block of the segment, an
        int the last ``memory`` blocks; ``"auto"`` is ``None`` in ``mode="test"`` and
        ``DETECT_MEMORY_ROWS`` rows in ``mode="detect"`` (so the patterns follow a change).
    labels : array-like or None, default=None
        The class of each column of a multiclass ``p`` (as ``estimator.classes_``), or
        ``[negative, positive]`` for binary labels other than 0/1. Labels outside this set are an
        error. ``None``: binary labels are 0/1 or booleans, multiclass labels column indices.
    multiclass : {"top-label", "classwise"}, default="top-label"
        How a multiclass ``p`` of shape ``(n, k)`` is monitored: through the top label (the
        confidence ``max p`` against ``y == argmax p``), or one family per class (one-vs-rest;
        the evidence is the average of the classes' e-processes, itself one).
    model_name : str or None, default=None
        The model's name (for example its column in the log): recorded in the state, shown on
        the page and used as the ``model`` label of the Prometheus metrics.

    Attributes
    ----------
    n_seen_ : int
        Rows received (the buffered and the dropped rows included).
    n_blocks_ : int
        Complete blocks, over every segment.
    n_buffered_ : int
        Rows waiting for their block to complete.
    n_monitored_ : int
        Binary streams monitored: 1 (binary or top-label), or the number of classes (classwise).
    log10_evidence_ : float
        The alarm statistic after the last complete block, in log10: ``log10 E_t(tolerance)``
        (``mode="test"``) or ``log10 M_t`` (``mode="detect"``). The alarm is at
        ``log10_threshold_``. Kept in logs, so it never overflows.
    log10_threshold_ : float
        ``log10(1 / alpha)`` (test) or ``log10 A`` (detect).
    log10_e_value_ : float
        ``log10 E_t(tolerance)`` of the test process (also in ``mode="detect"``).
    e_value_ : float
        ``10 ** log10_evidence_`` (``inf`` past the float range; read ``log10_evidence_``).
    pvalue_ : float
        Anytime-valid p-value of the tolerance test, ``min(1, 1 / max_{s <= t} E_s(tolerance))``
        over the current segment (in both modes).
    calibration_error_lcb_ : float
        The time-uniform lower confidence bound of the calibration error over the current
        segment (0 while the exact null is not rejected). It reaches ``tolerance`` exactly when
        the test alarms.
    alarm_ : bool
        Whether the alarm of the current segment has been raised (it stays raised until
        :meth:`new_segment`).
    alarm_at_ : int or None
        The row count at the first alarm of the segment (a block boundary).
    change_at_ : int or None
        The estimated start of the change (the first row of the block where the most evidence
        starts, estimated at the first alarm; see :mod:`skcal.monitor`), or None.
    false_alarm_rows_ : float or None
        ``mode="detect"``: the guaranteed average run length to a false alarm, in rows (``A``
        blocks of ``block_size`` rows); None in ``mode="test"``.
    segment_ : int
        The index of the current segment (0 until :meth:`new_segment`).
    segments_ : pandas.DataFrame
        One row per segment: ``label``, ``first_row``, ``last_row``, ``dropped`` (rows of an
        incomplete block dropped when it started), ``blocks``, (``time_start``, ``time_end``),
        ``alarm_at``, ``change_at``, ``calibration_error_lcb`` and ``log10_max_e_value``.
    classes_ : ndarray
        The labels (``[0, 1]`` unless ``labels`` names them).
    source_ : dict
        An opaque JSON-able dict that :meth:`get_state` and :meth:`from_state` carry unchanged;
        the command line keeps its watermark of the files read there. Empty by default.
    history_ : pandas.DataFrame
        One row per block: ``rows`` (the row count at its end), ``segment``, ``time_start`` and
        ``time_end`` (with ``time=``), ``log10_evidence``, ``log10_e_value``, in
        ``mode="detect"`` ``log10_detector``, ``e_value`` (``inf`` past the float range),
        ``p_value``, ``calibration_error_lcb``, ``above`` (the alarm statistic at or above its
        threshold), the block's calibration measures ``ece`` (equal-width binned ECE over the
        ``n_bins`` bins), ``brier`` and ``mean_residual`` (``mean(y - p)``), and the mean
        residual of each bin, ``residual_0`` ... (NaN for an empty bin). Classwise monitors add
        these per class (``ece[cat]``, ``residual[cat]_3``, ...).

    See Also
    --------
    skcal.monitor.render_html : The monitor's HTML page.
    skcal.monitor.render_prometheus : The status in the Prometheus text format.
    skcal.calibration_test : A one-off calibration test of a fixed sample.

    Notes
    -----
    An alarm of the test says the calibration error exceeded the tolerance at some time (or,
    at ``tolerance=0``, that the stream was miscalibrated at some time); the lower bound says by
    how much at least. Invariance to batching: every path at every block boundary is the same,
    bit for bit, however the rows are split into batches, and :meth:`get_state` /
    :meth:`from_state` resume a monitor exactly. :meth:`update` holds a lock: a monitor can be
    fed from several threads (each batch is applied whole, in the order the threads take the
    lock; the rows must still arrive in time order).

    References
    ----------
    G. Shafer and V. Vovk, *Game-Theoretic Foundations for Probability and Finance*, Wiley, 2019.
    I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
    JRSS-B 86(1), 2024.
    S. Arnold, A. Henzi and J. F. Ziegel, "Sequentially valid tests for forecast calibration",
    Annals of Applied Statistics 17(3), 2023.
    J. Shin, A. Ramdas and A. Rinaldo, "E-detectors: a nonparametric framework for sequential
    change detection", New England Journal of Statistics in Data Science 2(2), 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.monitor import CalibrationMonitor
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=20_000)
    >>> y = rng.uniform(size=20_000) < p                  # calibrated
    >>> monitor = CalibrationMonitor(tolerance=0.01)
    >>> monitor.update(y[:7_000], p[:7_000]).update(y[7_000:], p[7_000:])
    CalibrationMonitor(tolerance=0.01)
    >>> monitor.n_seen_, monitor.alarm_, monitor.calibration_error_lcb_
    (20000, False, 0.0)
    >>> y_late = rng.uniform(size=20_000) < np.clip(p - 0.08, 0, 1)   # the world drifts
    >>> monitor.update(y_late, p).alarm_
    True
    >>> bool(monitor.change_at_ >= 20_000), bool(0.01 < monitor.calibration_error_lcb_ < 0.08)
    (True, True)
    """

    _parameter_constraints: dict = {
        "tolerance": [StrictInterval(Real, 0, 1, closed="left")],
        "false_alarm_rows": [
            StrictInterval(Real, 1, None, closed="left"),
            Pair("a pair (rows, probability)"),
            None,
        ],
        "alpha": PROBABILITY_OPEN,
        "mode": [StrOptions({"test", "detect"})],
        "block_size": [StrictInterval(Integral, 1, None, closed="left")],
        "n_bins": [StrictInterval(Integral, 1, MAX_BINS, closed="both")],
        "memory": [StrOptions({"auto"}), StrictInterval(Integral, 1, None, closed="left"), None],
        "labels": ["array-like", None],
        "multiclass": [StrOptions({"top-label", "classwise"})],
        "model_name": [str, None],
    }

    def __init__(
        self,
        *,
        tolerance=0.0,
        false_alarm_rows=None,
        alpha=0.05,
        mode="test",
        block_size=1000,
        n_bins=16,
        memory="auto",
        labels=None,
        multiclass="top-label",
        model_name=None,
    ):
        self.tolerance = tolerance
        self.false_alarm_rows = false_alarm_rows
        self.alpha = alpha
        self.mode = mode
        self.block_size = block_size
        self.n_bins = n_bins
        self.memory = memory
        self.labels = labels
        self.multiclass = multiclass
        self.model_name = model_name

    # ------------------------------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------------------------------
    def _frozen_params(self):
        return {k: plain(v) for k, v in self.get_params(deep=False).items()}

    def _check_params(self):
        self._validate_params()
        n = int(self.n_bins)
        if n & (n - 1):
            raise ValueError(f"n_bins must be a power of two (1, 2, 4, ..., {MAX_BINS}); got {self.n_bins}.")
        if self.labels is not None:
            labels = np.asarray(self.labels)
            if labels.ndim != 1 or labels.shape[0] < 2:
                raise ValueError(f"labels must name at least 2 classes; got {self.labels!r}.")
            if np.unique(labels).shape[0] != labels.shape[0]:
                raise ValueError(f"labels must not contain duplicates; got {self.labels!r}.")
        self._detect_threshold()
        frozen = getattr(self, "_params_at_start", None)
        if frozen is not None:
            now = self._frozen_params()
            changed = [k for k in _PARAMS if now[k] != frozen[k]]
            if changed:
                what = ", ".join(f"{k} {frozen[k]!r} -> {now[k]!r}" for k in changed)
                raise ValueError(
                    f"the monitor's parameters changed after it started ({what}); they are fixed once "
                    "rows have been seen. Build a new monitor (or set them back)."
                )

    def _memory_blocks(self):
        if self.memory == "auto":
            return -(-DETECT_MEMORY_ROWS // int(self.block_size)) if self.mode == "detect" else None
        return None if self.memory is None else int(self.memory)

    def _detect_threshold(self):
        """``A``, the e-detector's threshold in blocks (``None`` in ``mode="test"``)."""
        far = self.false_alarm_rows
        if self.mode != "detect":
            if far is not None:
                raise ValueError(
                    "false_alarm_rows is for mode='detect'; mode='test' alarms with probability at most "
                    f"alpha={self.alpha!r} over an unbounded horizon. Pass mode='detect' or leave it None."
                )
            return None
        B = int(self.block_size)
        if far is None:
            rows, prob = DEFAULT_HORIZON, float(self.alpha)
        elif isinstance(far, Real):
            if far < B:
                raise ValueError(
                    f"false_alarm_rows={far!r} is shorter than one block (block_size={B}); the run length "
                    "is counted in whole blocks."
                )
            return float(far) / B
        else:
            rows, prob = far
            ok_rows = isinstance(rows, Real) and not isinstance(rows, bool) and rows >= 1
            ok_prob = isinstance(prob, Real) and not isinstance(prob, bool) and 0 < prob < 1
            if not (ok_rows and ok_prob):
                raise ValueError(
                    "false_alarm_rows as a pair must be (rows >= 1, probability in (0, 1)): a calibrated "
                    f"stream of that many rows stays silent with at least 1 - probability; got {far!r}."
                )
        return math.ceil(float(rows) / B) / float(prob)

    def check_compatible(self, **expected):
        """Raise a ``ValueError`` naming every parameter that differs from ``expected``.

        A nightly job that resumes a saved monitor checks that the saved one watches the same
        thing as the job's configuration; each mismatch is named with both values.

        Parameters
        ----------
        **expected
            Parameters (``mode``, ``tolerance``, ``model_name``, ``labels``, ...) and the values
            the caller expects; ``None`` values are not checked.

        Returns
        -------
        CalibrationMonitor
            ``self``, when everything matches.

        Examples
        --------
        >>> from skcal.monitor import CalibrationMonitor
        >>> m = CalibrationMonitor(tolerance=0.02, model_name="p")
        >>> m.check_compatible(tolerance=0.02, model_name="p") is m
        True
        >>> m.check_compatible(model_name="q", mode="detect")
        Traceback (most recent call last):
        ...
        ValueError: the monitor watches model_name 'p' but this run has 'q'; mode 'test' but this run ...
        """
        params = self.get_params(deep=False)
        unknown = sorted(set(expected) - set(params))
        if unknown:
            raise TypeError(
                f"check_compatible got unknown parameters {unknown}; expected some of {sorted(params)}."
            )
        differ = []
        for k, want in expected.items():
            if want is None:
                continue
            have = plain(params[k])
            want_plain = plain(want)
            same = have == want_plain
            if not same and isinstance(have, float | int) and isinstance(want_plain, float | int):
                same = float(have) == float(want_plain)
            if not same:
                differ.append(f"{k} {have!r} but this run has {want_plain!r}")
        if differ:
            raise ValueError(f"the monitor watches {'; '.join(differ)}.")
        return self

    @property
    def _lock(self):
        lock = self.__dict__.get("_update_lock")
        if lock is None:
            with _LOCK_GUARD:
                lock = self.__dict__.setdefault("_update_lock", threading.RLock())
        return lock

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_update_lock", None)
        return state

    # ------------------------------------------------------------------------------------------
    # input
    # ------------------------------------------------------------------------------------------
    def _rows(self, y, p, time):
        """Validated per-class ``(ys, ps)`` and ``(time kind, times)``; ``None`` for no rows."""
        kind, P = check_probabilities_batch(p)
        n = P.shape[0]
        started = getattr(self, "_input", None)
        if started is not None:
            if kind != started["kind"] or (kind == "multiclass" and P.shape[1] != started["n_columns"]):
                have = "binary" if kind == "binary" else f"{P.shape[1]} columns"
                want = "binary" if started["kind"] == "binary" else f"{started['n_columns']} columns"
                raise ValueError(f"p is {have} but the monitor started with {want} probabilities.")
        labels = None if self.labels is None else np.asarray(self.labels)
        if kind == "binary":
            if labels is not None and labels.shape[0] != 2:
                raise ValueError(
                    f"p is binary but labels names {labels.shape[0]} classes; give labels=[negative, "
                    "positive] for binary labels."
                )
            yb = binary_labels(y, n, labels)
            ys, ps = [yb], [P]
        else:
            codes = class_codes(y, n, P.shape[1], labels)
            if self.multiclass == "top-label":
                top = P.argmax(axis=1)
                ys, ps = [codes == top], [P[np.arange(n), top]]
            else:
                ys = [codes == c for c in range(P.shape[1])]
                ps = [np.ascontiguousarray(P[:, c]) for c in range(P.shape[1])]
        if time is None:
            if getattr(self, "_engine", None) is not None and self._engine.time_kind is not None and n:
                raise ValueError(
                    "time is missing; this monitor has received times before, so every batch needs them."
                )
            t = (None, None)
        else:
            t = check_time(time, n)
            eng = getattr(self, "_engine", None)
            if eng is not None and n:
                if eng.time_kind is None and eng.n_seen:
                    raise ValueError(
                        "time was given, but this monitor received rows without times before; give time "
                        "with every batch or with none."
                    )
                if eng.time_kind is not None and t[0] != eng.time_kind:
                    raise ValueError(
                        f"time is {t[0]} but this monitor received {eng.time_kind} times before."
                    )
                if eng.last_time is not None and t[1][0] < eng.last_time:
                    raise ValueError(
                        f"time goes backwards: the batch starts at {format_time(t[0], t[1][0])}, before the "
                        f"last time seen, {format_time(eng.time_kind, eng.last_time)}; rows must arrive in "
                        "time order."
                    )
        if n == 0:
            return None
        return kind, P.shape[1] if P.ndim == 2 else 1, ys, ps, t

    # ------------------------------------------------------------------------------------------
    # update, segments
    # ------------------------------------------------------------------------------------------
    def _new_engine(self, n_classes):
        A = self._detect_threshold()
        return Engine.new(
            n_bins=int(self.n_bins),
            block_size=int(self.block_size),
            n_classes=n_classes,
            memory=self._memory_blocks(),
            tolerance=float(self.tolerance),
            log_threshold=float(-np.log(self.alpha)),
            detect_threshold=float("inf") if A is None else float(np.log(A)),
            detect=self.mode == "detect",
        )

    def update(self, y, p, *, time=None):
        """Add a batch of labelled predictions, in time order; return ``self``.

        The batch is validated completely before anything changes: on an error the monitor is
        left as it was. An empty batch (no labels arrived) changes nothing. Safe to call from
        several threads: each call holds the monitor's lock.

        Parameters
        ----------
        y : array-like of shape (n,)
            Labels: 0/1 or booleans for binary ``p`` (or the two classes of ``labels``); for a
            multiclass ``p``, column indices or the classes of ``labels``.
        p : array-like of shape (n,), (n, 2) or (n, k)
            Predicted probabilities: of the positive class, ``predict_proba`` output of a binary
            model (column 1 is used), or probability vectors of ``k >= 3`` classes.
        time : array-like of shape (n,), default=None
            When each row was predicted (numbers or datetimes), non-decreasing within and across
            batches (equal times are fine); recorded per block in ``history_``. Give it with
            every batch or never.

        Returns
        -------
        CalibrationMonitor
            The updated monitor.
        """
        with self._lock:
            self._check_params()
            rows = self._rows(y, p, time)
            if rows is None:
                return self
            kind, n_columns, ys, ps, (time_kind, times) = rows
            engine = getattr(self, "_engine", None)
            if engine is None:
                engine = self._new_engine(len(ys))
                pending = getattr(self, "_pending_label", None)
                if pending is not None:
                    engine.segments[0]["label"] = pending
            new = engine.advance(ys, ps, times, time_kind)
            if getattr(self, "_input", None) is None:
                self._input = {"kind": kind, "n_columns": int(n_columns)}
                self._params_at_start = self._frozen_params()
            self._engine = new
            self._set_attributes()
            return self

    def new_segment(self, label=None):
        """Start a new monitoring segment; the history of the earlier ones is kept.

        After an alarm (or a retrained model), the capitals, the e-detector, the lower bound,
        the patterns' memory and the alarm start again from the next block, as for a new
        monitor, while ``history_``, ``segments_`` and the page keep every earlier segment. The
        rows of an incomplete block (``n_buffered_``, fewer than ``block_size``) belong to the
        segment that ends and are dropped; ``segments_`` counts them. The parameters stay as
        they are (the guarantee of each segment is that of a new monitor).

        Parameters
        ----------
        label : str or None, default=None
            A name for the new segment (for example a model version); shown in ``segments_`` and
            on the page.

        Returns
        -------
        CalibrationMonitor
            ``self``.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal.monitor import CalibrationMonitor
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=20_000)
        >>> m = CalibrationMonitor().update(rng.uniform(size=20_000) < p - 0.1, p)
        >>> m.alarm_
        True
        >>> m.new_segment("retrained").update(rng.uniform(size=20_000) < p, p).alarm_
        False
        >>> m.segments_[["label", "first_row", "alarm_at"]]
               label  first_row  alarm_at
        0       None          0    ...
        1  retrained      20000     None
        """
        if label is not None and not isinstance(label, str):
            raise ValueError(f"label must be a string or None; got {label!r}.")
        with self._lock:
            engine = getattr(self, "_engine", None)
            if engine is None:
                self._pending_label = label
                return self
            self._engine = engine.new_segment(label)
            self._set_attributes()
            return self

    def _set_attributes(self):
        eng = self._engine
        self._history = None
        self.n_seen_ = int(eng.n_seen)
        self.n_blocks_ = int(eng.n_blocks)
        self.n_buffered_ = eng.n_buffered
        self.n_monitored_ = int(eng.n_classes)
        self.segment_ = len(eng.segments) - 1
        seg = eng.segments[-1]
        in_segment = eng.path.n_blocks
        if in_segment:
            log_e = float(eng.block_array("log_e")[-1])
            stat = float(eng.block_array("log_m")[-1]) if eng.detect else log_e
        else:
            log_e = 0.0
            stat = -np.inf if eng.detect else 0.0
        self.log10_evidence_ = _log10(stat)
        self.log10_e_value_ = _log10(log_e)
        self.log10_threshold_ = _log10(eng.alarm_threshold)
        self.e_value_ = _power10(self.log10_evidence_)
        self.pvalue_ = float(min(1.0, np.exp(-eng.path.max_log_e)))
        self.calibration_error_lcb_ = float(eng.path.lcb)
        self.alarm_ = eng.alarm_block is not None
        B = eng.block_size
        self.alarm_at_ = None if eng.alarm_block is None else seg["first_row"] + (eng.alarm_block + 1) * B
        self.change_at_ = None if eng.change_block is None else seg["first_row"] + eng.change_block * B
        A = self._detect_threshold()
        self.false_alarm_rows_ = None if A is None else A * B
        self.source_ = getattr(self, "source_", None) or {}
        if self.labels is not None:
            self.classes_ = np.asarray(self.labels)
        elif self._input["kind"] == "binary":
            self.classes_ = np.array([0, 1])
        else:
            self.classes_ = np.arange(self._input["n_columns"])

    def __sklearn_is_fitted__(self):
        return getattr(self, "_engine", None) is not None

    def _check_started(self, what):
        if getattr(self, "_engine", None) is None:
            raise ValueError(f"{what}: the monitor has not seen any rows yet; call update(y, p) first.")

    # ------------------------------------------------------------------------------------------
    # reading the monitor
    # ------------------------------------------------------------------------------------------
    @property
    def _class_names(self):
        if self._engine.n_classes == 1:
            return [None]
        return [plain(c) for c in self.classes_]

    def _block(self, name):
        return self._engine.block_array(name)

    def block_measures(self, count, sum_p, sum_x, sum_x2):
        """Calibration measures of groups of rows from their per-bin sums (one class).

        The measures come from skcal's mergeable statistics (:class:`skcal.stats.BinnedStatistics`
        for the ECE over the ``n_bins`` equal-width bins, :class:`skcal.stats.BrierScoreStatistics`
        for the Brier score), rebuilt from the sums through their state, so a block's or a
        period's value equals the in-memory measure on its rows.

        Parameters
        ----------
        count, sum_p, sum_x, sum_x2 : ndarray of shape (m, n_bins)
            Rows, ``sum p``, ``sum (y - p)`` and ``sum (y - p)^2`` of each group and bin.

        Returns
        -------
        pandas.DataFrame
            ``rows``, ``ece``, ``brier``, ``mean_residual`` and ``mean_p`` per group.
        """
        return block_measures(self.n_bins, count, sum_p, sum_x, sum_x2)

    @property
    def history_(self):
        """One row per block (see the class docstring); built on first access after an update."""
        self._check_started("history_")
        if self._history is None:
            self._history = history_table(self)
        return self._history

    @property
    def segments_(self):
        """One row per segment (see the class docstring)."""
        self._check_started("segments_")
        return segments_table(self)

    def measures_by_period(self, freq="auto", n_periods=12):
        """The calibration measures per period: calendar days or weeks, or equal groups of blocks.

        Parameters
        ----------
        freq : {"auto", "day", "week", "rows"}, default="auto"
            ``"day"`` / ``"week"``: the calendar day or week (from Monday) of each block's last
            row (datetime times only); ``"rows"``: ``n_periods`` consecutive groups of blocks of
            equal size; ``"auto"``: days when the times span at most ``DAILY_SPAN_DAYS`` days,
            weeks when they span more, and rows without datetime times.
        n_periods : int, default=12
            Number of periods with ``freq="rows"`` (fewer when there are fewer blocks).

        Returns
        -------
        pandas.DataFrame
            One row per period: ``period`` (``"2024-05-01"`` for a day, ``"week of 2024-04-29"``,
            or ``"rows 0-9,999"``), ``freq``, ``first_row``, ``last_row``, (``time_start``,
            ``time_end``), ``rows``, ``segment`` (of its last block), ``ece``, ``brier``,
            ``mean_residual`` (from the merged per-bin sums of its blocks, see
            :meth:`block_measures`; for a classwise monitor the mean ECE and mean residual over
            classes and the summed, multiclass Brier score), and at its end
            ``calibration_error_lcb`` and ``log10_evidence``.
        """
        self._check_started("measures_by_period")
        if not (
            isinstance(n_periods, (int, np.integer)) and not isinstance(n_periods, bool) and n_periods >= 1
        ):
            raise ValueError(f"n_periods must be a positive integer; got {n_periods!r}.")
        return period_table(self, freq, n_periods)

    def rows_per_day(self):
        """Return the rows per day at the rate seen so far (datetime times only; ``None`` otherwise).

        The rows received over the time from the first row's time to the last's: what turns a
        guarantee in rows into one in time (``false_alarm_rows_ / rows_per_day()`` days) and a
        budget in time into rows.

        Returns
        -------
        float or None
            Rows per day, or ``None`` without datetime times or before time has passed.
        """
        self._check_started("rows_per_day")
        eng = self._engine
        if eng.time_kind != "datetime" or eng.first_time is None:
            return None
        span = (int(eng.last_time) - int(eng.first_time)) / 86_400e9
        return None if span <= 0 else eng.n_seen / span

    def reliability_bands(self, *, start=None, stop=None, alpha=None):
        """The time-uniform reliability diagram: each bin's mean residual with its band.

        For the rows of the complete blocks from row ``start`` to row ``stop``, each bin's band
        is a confidence sequence for ``E[y - p | p in bin]`` (empirical-Bernstein capital of
        Waudby-Smith and Ramdas, see :mod:`skcal.monitor`), at level ``alpha / (n_bins x
        classes)`` so that every band of the diagram covers its bin's mean residual at every time
        simultaneously with probability at least ``1 - alpha`` (for a stretch fixed in advance;
        a stretch cut at the estimated change is chosen from the data, so read it as
        descriptive). This is the per-bin version of the tolerance test: ``error_lcb``, the
        distance of the band from 0, is a lower confidence bound of ``|E[y - p | bin]|`` for all
        bins at once, and ``above_tolerance`` rejects the per-bin null
        ``|E[y - p | bin]| <= tolerance`` of the bin.

        Parameters
        ----------
        start, stop : int, default=None
            Rows (rounded down to block boundaries); default: the current segment's blocks.
        alpha : float, default=None
            The diagram's level (default: the monitor's ``alpha``).

        Returns
        -------
        pandas.DataFrame
            One row per bin (and class): ``class`` (classwise), ``bin``, ``bin_low``,
            ``bin_high``, ``rows``, ``mean_p``, ``mean_residual``, ``lower``, ``upper``,
            ``error_lcb`` (``max(0, lower, -upper)``) and ``above_tolerance``.
        """
        self._check_started("reliability_bands")
        return bands_table(self, start, stop, alpha)

    def guarantee(self):
        """What the alarm guarantees, in one sentence in the units an operator plans in.

        Returns
        -------
        str
            ``mode="test"``: the probability of an alarm under the null; ``mode="detect"``: the
            average rows between false alarms, the probability of one within ``DEFAULT_HORIZON``
            rows and, with datetime times, the days between false alarms at the rate seen so far.
        """
        eps, a = float(self.tolerance), float(self.alpha)
        if self.mode == "test":
            null = "is calibrated exactly" if eps == 0 else f"has a calibration error of at most {eps:g}"
            return (
                f"A model that {null} raises this alarm with probability at most {a:g}, however long the "
                "stream runs and however often it is read."
            )
        A = self._detect_threshold()
        B = int(self.block_size)
        rows = A * B
        text = (
            f"A model whose calibration error stays at most {eps:g} raises a false alarm on average at "
            f"most once every {rows:,.0f} rows (and within {DEFAULT_HORIZON:,} rows with probability "
            f"at most {min(1.0, math.ceil(DEFAULT_HORIZON / B) / A):.3g})"
        )
        rate = self.rows_per_day() if getattr(self, "_engine", None) is not None else None
        if rate:
            text += f"; at the {rate:,.0f} rows per day seen so far, once every {rows / rate:,.0f} days"
        return text + "."

    def status(self):
        """The monitor's status as plain values (what ``skcal monitor`` prints).

        Returns
        -------
        dict
            ``rows``, ``blocks``, ``buffered``, ``mode``, ``tolerance``, ``alpha``,
            ``model_name``, ``calibration_error_lcb``, ``log10_evidence``, ``log10_threshold``,
            ``log10_e_value``, ``threshold`` (``10 ** log10_threshold``), ``e_value`` (``inf``
            past the float range), ``pvalue``, ``alarm``, ``alarm_at``, ``change_at``,
            ``false_alarm_rows`` (detect; else None), ``segment``, ``segment_label``,
            ``bins_above_tolerance`` (bins of the current segment whose band excludes
            ``[-tolerance, tolerance]``), ``guarantee`` (a sentence) and, with times,
            ``last_time``, ``alarm_time``, ``change_time`` (ISO 8601 or numbers) and, with
            datetimes, ``rows_per_day``.
        """
        self._check_started("status")
        eng = self._engine
        bands = self.reliability_bands()
        out = {
            "rows": self.n_seen_,
            "blocks": self.n_blocks_,
            "buffered": self.n_buffered_,
            "mode": self.mode,
            "tolerance": float(self.tolerance),
            "alpha": float(self.alpha),
            "model_name": self.model_name,
            "calibration_error_lcb": self.calibration_error_lcb_,
            "log10_evidence": self.log10_evidence_,
            "log10_threshold": self.log10_threshold_,
            "log10_e_value": self.log10_e_value_,
            "threshold": float(np.exp(eng.alarm_threshold)),
            "e_value": self.e_value_,
            "pvalue": self.pvalue_,
            "alarm": self.alarm_,
            "alarm_at": self.alarm_at_,
            "change_at": self.change_at_,
            "false_alarm_rows": self.false_alarm_rows_,
            "segment": self.segment_,
            "segment_label": eng.segments[-1]["label"],
            "bins_above_tolerance": int(bands["above_tolerance"].sum()),
            "guarantee": self.guarantee(),
        }
        if eng.time_kind is not None:
            base = eng.segments[-1]["first_block"]

            def time_of(block, field):  # a block of the current segment: its first or last time
                return None if block is None else _time_value(eng.time_kind, self._block(field)[base + block])

            out["last_time"] = _time_value(eng.time_kind, eng.last_time)
            out["alarm_time"] = time_of(eng.alarm_block, "time_last")
            out["change_time"] = time_of(eng.change_block, "time_first")
        if eng.time_kind == "datetime":
            out["rows_per_day"] = self.rows_per_day()
        return out

    # ------------------------------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------------------------------
    def get_state(self):
        """A versioned state of plain JSON types, from which :meth:`from_state` resumes exactly.

        It holds the parameters (mode, tolerance, labels, model name, ...), the segments, the
        per-block sums and paths (the history), the carries of the patterns' memory and of the
        paths, the buffered rows of the incomplete block (so a nightly job can stop anywhere) and
        ``source_`` unchanged. ``json.dumps(monitor.get_state())`` works as it is.

        Returns
        -------
        dict
            Keys ``kind``, ``state_version``, ``params``, ``input``, ``n_seen``, ``time_kind``,
            ``first_time``, ``last_time``, ``buffer``, ``blocks``, ``segments``, ``carry``,
            ``alarm`` and ``source``; arrays are encoded as ``{"dtype", "shape", "data"}``.
        """
        with self._lock:
            self._check_started("get_state")
            eng = self._engine
            return {
                "kind": STATE_KIND,
                "state_version": STATE_VERSION,
                "params": dict(self._params_at_start),
                "input": dict(self._input),
                **encode_engine(eng),
                "source": check_source(self.source_),
            }

    @classmethod
    def from_state(cls, state):
        """Rebuild a monitor from :meth:`get_state` output (also after a JSON round trip).

        Parameters
        ----------
        state : dict
            The state.

        Returns
        -------
        CalibrationMonitor
            A monitor that continues exactly where the saved one stopped.
        """
        if not isinstance(state, dict) or state.get("kind") != STATE_KIND:
            raise ValueError(
                f"state must be a dict made by CalibrationMonitor.get_state() (kind {STATE_KIND!r})."
            )
        version = state.get("state_version")
        if version != STATE_VERSION:
            older = isinstance(version, int) and version < STATE_VERSION
            raise ValueError(
                f"state has version {version!r}; this skcal reads version {STATE_VERSION}"
                + (
                    " (the monitor's bets and its state changed: an older state cannot be continued, "
                    "start a new one)."
                    if older
                    else "."
                )
            )
        try:
            params = dict(state["params"])
            if isinstance(params.get("false_alarm_rows"), list):
                params["false_alarm_rows"] = tuple(params["false_alarm_rows"])
            monitor = cls(**params)
            monitor._check_params()
            engine = decode_engine(state, monitor._new_engine, monitor.n_bins, monitor.block_size)
            monitor._input = {"kind": state["input"]["kind"], "n_columns": int(state["input"]["n_columns"])}
            monitor.source_ = check_source(state.get("source", {}))
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"state is incomplete or malformed ({type(exc).__name__}: {exc}).") from None
        monitor._params_at_start = monitor._frozen_params()
        monitor._engine = engine
        monitor._set_attributes()
        return monitor

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        out = type(self)(**copy.deepcopy(self.get_params(deep=False), memo))
        if getattr(self, "_engine", None) is not None:
            out._input = dict(self._input)
            out._params_at_start = dict(self._params_at_start)
            out._engine = copy.deepcopy(self._engine, memo)
            out.source_ = copy.deepcopy(self.source_, memo)
            out._set_attributes()
        elif getattr(self, "_pending_label", None) is not None:
            out._pending_label = self._pending_label
        return out


def _time_value(kind, v):
    if v is None:
        return None
    if kind == "datetime":
        return pd.Timestamp(int(v)).isoformat()
    return float(v)
