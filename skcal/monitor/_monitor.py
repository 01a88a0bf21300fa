""":class:`CalibrationMonitor`: anytime-valid monitoring of a deployed model's calibration."""

from __future__ import annotations

import copy
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from skcal._compat import StrOptions
from skcal._constraints import PROBABILITY_OPEN, StrictInterval
from skcal.monitor._bands import residual_bands
from skcal.monitor._betting import n_functions
from skcal.monitor._blocks import SUM_NAMES
from skcal.monitor._detector import PathCarry
from skcal.monitor._engine import BLOCK_FIELDS, Engine
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
    decode_array,
    decode_float,
    encode_array,
    encode_float,
)
from skcal.stats import BinnedStatistics, BrierScoreStatistics, from_state

__all__ = ["CalibrationMonitor", "DETECT_MEMORY", "MAX_BINS"]

#: Blocks the bets of ``mode="detect"`` look back on (``memory="auto"``): short enough that the
#: bets follow a change within a few blocks (benchmarks/monitor.py, part "memory": the median
#: delay to a +0.05 bias fell from 5,600 rows with 20 blocks to 3,800 with 5).
DETECT_MEMORY = 5
#: Largest ``n_bins`` (the state holds four numbers per bin and block).
MAX_BINS = 1024

_PARAMS = ("alpha", "mode", "block_size", "n_bins", "memory", "capital", "labels", "multiclass")


def _plain(v):
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, np.ndarray, pd.Index, pd.Series)):
        return [x.item() if isinstance(x, np.generic) else x for x in np.asarray(v).tolist()]
    if isinstance(v, np.generic):
        return v.item()
    return v


class CalibrationMonitor(BaseEstimator):
    """Monitor the calibration of a deployed model over time, with an anytime-valid alarm.

    Feed the monitor each batch of predictions as their labels arrive (:meth:`update`). The
    monitor tests the null "the forecasts are calibrated at every step",
    ``E[y_t | past, p_t] = p_t``, by betting (Shafer and Vovk; the calibration tests of Arnold,
    Henzi and Ziegel): for each bounded test function ``g`` of ``p`` (the indicator of a bin, at
    the resolutions ``1, 2, 4, ..., n_bins`` equal-width bins; the coarsest is ``g = 1``) the
    capital ``prod (1 + lambda g(p) (y - p))`` grows when the residuals in the bin lean one way.
    The bets ``lambda`` are fixed within a block of ``block_size`` rows and computed from the
    blocks before it (aGRAPA, Waudby-Smith and Ramdas, "Estimating means of bounded random
    variables by betting"), clipped to ``|lambda| <= 1/2`` so every factor stays in
    ``[1/2, 3/2]``. The evidence is the average of the capitals with prior weights summing to
    one, a nonnegative supermartingale under the null; by Ville's inequality the probability
    that it *ever* reaches ``1 / alpha`` is at most ``alpha``, however long the stream runs and
    however often it is looked at.

    With ``mode="detect"`` the monitor runs an e-detector instead (Shin, Ramdas and Rinaldo):
    ``M_t = (M_{t-1} + 1) * factor_t`` per test function, the sum of the capitals started at
    every block with shared bets, mixed with the same weights. Its alarm at ``M_t >= 1 / alpha``
    has an average run length to a false alarm of at least ``1 / alpha`` blocks (an alarm rate
    per block, not a probability over the whole horizon): ``M_t - t`` is a supermartingale, so
    by optional stopping ``E[tau] >= E[M_tau] >= 1 / alpha``.

    Parameters
    ----------
    alpha : float, default=0.05
        False-alarm level: ``P(ever alarm) <= alpha`` under the null (``mode="test"``), or an
        average run length of at least ``1 / alpha`` blocks (``mode="detect"``).
    mode : {"test", "detect"}, default="test"
        ``"test"``: has the model been calibrated since deployment? ``"detect"``: has its
        calibration changed (an e-detector)?
    block_size : int, default=1000
        Rows per block. Bets are fixed within a block, the evidence is read at block
        boundaries, and the history holds one row per block. The rows of an incomplete block
        wait in a buffer (part of the state). Larger blocks mean fewer history rows (use
        ``100_000`` for a year of ``1e9`` rows) and a coarser alarm time.
    n_bins : int, default=16
        Finest number of equal-width bins, a power of two; the test functions are the bins of
        ``1, 2, 4, ..., n_bins`` bins (``2 n_bins - 1`` functions), and the history and the
        reliability bands use the finest bins.
    memory : "auto", int or None, default="auto"
        Blocks the bets look back on: ``None`` means every earlier block, an int the last
        ``memory`` blocks; ``"auto"`` is ``None`` in ``mode="test"`` and ``5`` in
        ``mode="detect"`` (the bets forget the past, so they adapt after a change).
    capital : {"bernstein", "product"}, default="bernstein"
        ``"product"``: the test martingale ``prod (1 + lambda g(p) (y - p))`` itself, one
        ``log1p`` per row and resolution. ``"bernstein"``: each row's factor replaced by the
        lower bound ``exp(lambda g x - psi(|lambda|) g^2 x^2)``, ``psi(c) = -log(1 - c) - c``
        (Fan, Grama and Liu), a supermartingale computed from per-block sums (a few
        ``np.bincount`` passes over the rows, several times faster), with the same guarantee and
        slightly less power.
    labels : array-like or None, default=None
        The class of each column of a multiclass ``p`` (as ``estimator.classes_``), or
        ``[negative, positive]`` for binary labels other than 0/1. Labels outside this set are an
        error. ``None``: binary labels are 0/1 or booleans, multiclass labels column indices.
    multiclass : {"top-label", "classwise"}, default="top-label"
        How a multiclass ``p`` of shape ``(n, k)`` is monitored: through the top label (the
        confidence ``max p`` against ``y == argmax p``), or one monitor per class (one-vs-rest
        for each column; the evidence is the average of the classes' e-processes, itself one).

    Attributes
    ----------
    n_seen_ : int
        Rows received (the buffered rows included).
    n_blocks_ : int
        Complete blocks (the evidence is read after each).
    n_buffered_ : int
        Rows waiting for their block to complete.
    n_monitored_ : int
        Binary streams monitored: 1 (binary or top-label), or the number of classes (classwise).
    e_value_ : float
        The current evidence: the mixture e-value ``E_t`` (``mode="test"``) or the e-detector
        statistic ``M_t`` (``mode="detect"``) after the last complete block.
    pvalue_ : float
        Anytime-valid p-value of the test, ``min(1, 1 / max_{s <= t} E_s)`` (in both modes).
    alarm_ : bool
        Whether the alarm has been raised (it stays raised).
    alarm_at_ : int or None
        The row count at the first alarm (a block boundary).
    change_at_ : int or None
        The estimated start of the change (the first row of the block where the most evidence
        starts, estimated at the first alarm; see :mod:`skcal.monitor`), or None.
    classes_ : ndarray
        The labels (``[0, 1]`` unless ``labels`` names them).
    history_ : pandas.DataFrame
        One row per block: ``rows`` (the row count at its end), ``time_start`` and ``time_end``
        (with ``time=``), ``e_value``, ``log_e_value``, ``p_value``, in ``mode="detect"``
        ``detector`` (the e-detector statistic ``M_t``) and ``log_detector``, ``above`` (the
        alarm statistic at or above ``1 / alpha``), the block's calibration measures ``ece``
        (equal-width binned ECE over the ``n_bins`` bins), ``brier`` and ``mean_residual``
        (``mean(y - p)``), and the mean residual of each bin, ``residual_0`` ... (NaN for an
        empty bin). Classwise monitors add these per class (``ece[cat]``, ``residual[cat]_3``,
        ...).

    See Also
    --------
    skcal.monitor.render_html : The monitor's HTML page.
    skcal.calibration_test : A one-off calibration test of a fixed sample.

    Notes
    -----
    The guarantee is about the null of calibration at every step: an alarm says the stream was
    miscalibrated at some time (detected by some bin's residual), not how much. Invariance to
    batching: the evidence at every block boundary is the same, bit for bit, however the rows
    are split into batches, and :meth:`get_state` / :meth:`from_state` resume a monitor exactly.

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
    >>> monitor = CalibrationMonitor(block_size=500)
    >>> monitor.update(y[:7_000], p[:7_000]).update(y[7_000:], p[7_000:])
    CalibrationMonitor(block_size=500)
    >>> monitor.n_seen_, monitor.alarm_
    (20000, False)
    >>> y_late = rng.uniform(size=20_000) < np.clip(p + 0.08, 0, 1)   # the world drifts
    >>> monitor.update(y_late, p).alarm_
    True
    >>> bool(monitor.change_at_ >= 20_000), bool(monitor.pvalue_ <= 0.05)
    (True, True)
    """

    _parameter_constraints: dict = {
        "alpha": PROBABILITY_OPEN,
        "mode": [StrOptions({"test", "detect"})],
        "block_size": [StrictInterval(Integral, 1, None, closed="left")],
        "n_bins": [StrictInterval(Integral, 1, MAX_BINS, closed="both")],
        "memory": [StrOptions({"auto"}), StrictInterval(Integral, 1, None, closed="left"), None],
        "capital": [StrOptions({"bernstein", "product"})],
        "labels": ["array-like", None],
        "multiclass": [StrOptions({"top-label", "classwise"})],
    }

    def __init__(
        self,
        *,
        alpha=0.05,
        mode="test",
        block_size=1000,
        n_bins=16,
        memory="auto",
        capital="bernstein",
        labels=None,
        multiclass="top-label",
    ):
        self.alpha = alpha
        self.mode = mode
        self.block_size = block_size
        self.n_bins = n_bins
        self.memory = memory
        self.capital = capital
        self.labels = labels
        self.multiclass = multiclass

    # ------------------------------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------------------------------
    def _frozen_params(self):
        return {k: _plain(v) for k, v in self.get_params(deep=False).items()}

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
            return DETECT_MEMORY if self.mode == "detect" else None
        return None if self.memory is None else int(self.memory)

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
    # update
    # ------------------------------------------------------------------------------------------
    def update(self, y, p, *, time=None):
        """Add a batch of labelled predictions, in time order; return ``self``.

        The batch is validated completely before anything changes: on an error the monitor is
        left as it was. An empty batch (no labels arrived) changes nothing.

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
            batches; recorded per block in ``history_``. Give it with every batch or never.

        Returns
        -------
        CalibrationMonitor
            The updated monitor.
        """
        self._check_params()
        rows = self._rows(y, p, time)
        if rows is None:
            return self
        kind, n_columns, ys, ps, (time_kind, times) = rows
        engine = getattr(self, "_engine", None)
        if engine is None:
            k = len(ys)
            engine = Engine.new(
                n_bins=int(self.n_bins),
                block_size=int(self.block_size),
                n_classes=k,
                memory=self._memory_blocks(),
                capital=self.capital,
                log_threshold=float(-np.log(self.alpha)),
                detect=self.mode == "detect",
            )
        new = engine.advance(ys, ps, times, time_kind)
        if getattr(self, "_input", None) is None:
            self._input = {"kind": kind, "n_columns": int(n_columns)}
            self._params_at_start = self._frozen_params()
        self._engine = new
        self._set_attributes()
        return self

    def _set_attributes(self):
        eng = self._engine
        self._history = None
        self.n_seen_ = int(eng.n_seen)
        self.n_blocks_ = int(eng.path.n_blocks)
        self.n_buffered_ = eng.n_buffered
        self.n_monitored_ = int(eng.n_classes)
        if self.n_blocks_:
            stat = eng.block_array("log_m" if eng.detect else "log_e")[-1]
            self.e_value_ = float(np.exp(stat))
        else:
            self.e_value_ = 0.0 if eng.detect else 1.0
        self.pvalue_ = float(min(1.0, np.exp(-eng.path.max_log_e)))
        self.alarm_ = eng.alarm_block is not None
        B = eng.block_size
        self.alarm_at_ = None if eng.alarm_block is None else (eng.alarm_block + 1) * B
        self.change_at_ = None if eng.change_block is None else eng.change_block * B
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
        return [_plain(c) for c in self.classes_]

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
        K = int(self.n_bins)
        binned = BinnedStatistics(n_bins=K).get_state()
        brier = BrierScoreStatistics().get_state()
        out = {"rows": [], "ece": [], "brier": [], "mean_residual": [], "mean_p": []}
        for c, sp, sx, sx2 in zip(count, sum_p, sum_x, sum_x2, strict=True):
            n = int(c.sum())
            out["rows"].append(n)
            if n == 0:
                for key in ("ece", "brier", "mean_residual", "mean_p"):
                    out[key].append(np.nan)
                continue
            w = c.astype(np.float64)
            binned["arrays"] = {"count": c, "weight": w, "sum_wp": sp, "sum_wy": sx + sp, "sum_w2": w}
            out["ece"].append(from_state(binned).compute())
            brier["arrays"] = {
                "sum_weight": np.asarray(float(n)),
                "sum_loss": np.asarray(float(sx2.sum())),
                "n_samples": np.asarray(n),
            }
            out["brier"].append(from_state(brier).compute())
            out["mean_residual"].append(float(sx.sum()) / n)
            out["mean_p"].append(float(sp.sum()) / n)
        return pd.DataFrame(out)

    @property
    def history_(self):
        """One row per block (see the class docstring); built on first access after an update."""
        self._check_started("history_")
        if self._history is not None:
            return self._history
        eng = self._engine
        nb = eng.path.n_blocks
        B = eng.block_size
        log_e = self._block("log_e")
        log_m = self._block("log_m")
        stat = log_m if eng.detect else log_e
        cols = {"block": np.arange(nb), "rows": (np.arange(nb) + 1) * B}
        if eng.time_kind is not None:
            cols.update(self._times(self._block("time_first"), "time_start"))
            cols.update(self._times(self._block("time_last"), "time_end"))
        cols["e_value"] = np.exp(log_e)
        cols["log_e_value"] = log_e
        running = np.maximum.accumulate(np.maximum(log_e, 0.0)) if nb else log_e
        cols["p_value"] = np.minimum(1.0, np.exp(-running))
        if eng.detect:
            cols["detector"] = np.exp(log_m)
            cols["log_detector"] = log_m
        cols["above"] = stat >= eng.log_threshold
        sums = {name: self._block(name) for name in SUM_NAMES}
        names = self._class_names
        per_class = []
        for c, label in enumerate(names):
            m = self.block_measures(*(sums[s][:, c] for s in SUM_NAMES))
            tag = "" if label is None else f"[{label}]"
            with np.errstate(invalid="ignore", divide="ignore"):
                resid = sums["sum_x"][:, c] / sums["count"][:, c]
            per_class.append(m)
            if label is None:
                cols["ece"], cols["brier"], cols["mean_residual"] = m["ece"], m["brier"], m["mean_residual"]
            else:
                cols[f"ece{tag}"], cols[f"brier{tag}"] = m["ece"], m["brier"]
                cols[f"mean_residual{tag}"] = m["mean_residual"]
            for j in range(eng.n_bins):
                cols[f"residual{tag}_{j}"] = resid[:, j]
        if names[0] is not None:  # classwise: the averages over classes, and the multiclass Brier
            cols["ece"] = np.mean([m["ece"].to_numpy() for m in per_class], axis=0)
            cols["brier"] = np.sum([m["brier"].to_numpy() for m in per_class], axis=0)
        frame = pd.DataFrame({k: np.asarray(v) for k, v in cols.items()})
        self._history = frame.set_index("block")
        return self._history

    def measures_by_period(self, n_periods=12):
        """The calibration measures per period: consecutive groups of blocks of equal size.

        Parameters
        ----------
        n_periods : int, default=12
            Number of periods (fewer when there are fewer blocks).

        Returns
        -------
        pandas.DataFrame
            One row per period: ``first_row``, ``last_row``, (``time_start``, ``time_end``),
            ``rows``, ``ece``, ``brier``, ``mean_residual`` (from the merged per-bin sums of its
            blocks, see :meth:`block_measures`; for a classwise monitor the mean ECE and mean
            residual over classes and the summed, multiclass Brier score) and ``e_value`` at its
            end.
        """
        self._check_started("measures_by_period")
        if not (
            isinstance(n_periods, (int, np.integer)) and not isinstance(n_periods, bool) and n_periods >= 1
        ):
            raise ValueError(f"n_periods must be a positive integer; got {n_periods!r}.")
        h = self.history_
        nb = len(h)
        if nb == 0:
            return pd.DataFrame(
                columns=["first_row", "last_row", "rows", "ece", "brier", "mean_residual", "e_value"]
            )
        B = self._engine.block_size
        sums = {name: self._block(name) for name in SUM_NAMES}
        k = self._engine.n_classes
        rows = []
        for g in np.array_split(np.arange(nb), min(int(n_periods), nb)):
            j0, j1 = int(g[0]), int(g[-1]) + 1
            merged = [sums[name][j0:j1].sum(axis=0) for name in SUM_NAMES]  # (k, n_bins) each
            m = self.block_measures(*merged)
            row = {"first_row": j0 * B, "last_row": j1 * B - 1}
            if "time_start" in h:
                row["time_start"] = h["time_start"].iloc[j0]
                row["time_end"] = h["time_end"].iloc[j1 - 1]
            row["rows"] = (j1 - j0) * B
            row["ece"] = float(m["ece"].mean())
            row["brier"] = float(m["brier"].sum()) if k > 1 else float(m["brier"].iloc[0])
            row["mean_residual"] = float(m["mean_residual"].mean())
            row["e_value"] = float(h["e_value"].iloc[j1 - 1])
            rows.append(row)
        return pd.DataFrame(rows)

    def _times(self, values, name):
        if self._engine.time_kind == "datetime":
            return {name: np.asarray(values, dtype=np.int64).view("datetime64[ns]")}
        return {name: np.asarray(values, dtype=np.float64)}

    def reliability_bands(self, *, start=None, stop=None, alpha=None):
        """The time-uniform reliability diagram: each bin's mean residual with its band.

        For the rows of the complete blocks from row ``start`` to row ``stop``, each bin's band
        is a confidence sequence for ``E[y - p | p in bin]`` (empirical-Bernstein capital of
        Waudby-Smith and Ramdas, see :mod:`skcal.monitor`), at level ``alpha / (n_bins x
        classes)`` so that every band of the diagram covers its bin's mean residual at every time
        simultaneously with probability at least ``1 - alpha`` (for a segment fixed in advance;
        a segment cut at the estimated change is chosen from the data, so read it as
        descriptive).

        Parameters
        ----------
        start, stop : int, default=None
            Rows (rounded down to block boundaries); default: every complete block.
        alpha : float, default=None
            The diagram's level (default: the monitor's ``alpha``).

        Returns
        -------
        pandas.DataFrame
            One row per bin (and class): ``class`` (classwise), ``bin``, ``bin_low``,
            ``bin_high``, ``rows``, ``mean_p``, ``mean_residual``, ``lower``, ``upper``.
        """
        self._check_started("reliability_bands")
        eng = self._engine
        B = eng.block_size
        j0 = 0 if start is None else max(0, int(start) // B)
        j1 = eng.path.n_blocks if stop is None else min(eng.path.n_blocks, int(stop) // B)
        j1 = max(j0, j1)
        a = self.alpha if alpha is None else float(alpha)
        if not 0.0 < a < 1.0:
            raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
        sums = {name: self._block(name)[j0:j1] for name in SUM_NAMES}
        K, k = eng.n_bins, eng.n_classes
        lower, upper = residual_bands(sums["count"], sums["sum_x"], sums["sum_x2"], a / (K * k))
        n = sums["count"].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_p = sums["sum_p"].sum(axis=0) / n
            resid = sums["sum_x"].sum(axis=0) / n
        edges = np.linspace(0.0, 1.0, K + 1)
        frames = []
        for c, label in enumerate(self._class_names):
            f = pd.DataFrame(
                {
                    "bin": np.arange(K),
                    "bin_low": edges[:-1],
                    "bin_high": edges[1:],
                    "rows": n[c],
                    "mean_p": mean_p[c],
                    "mean_residual": resid[c],
                    "lower": lower[c],
                    "upper": upper[c],
                }
            )
            if label is not None:
                f.insert(0, "class", label)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)

    def status(self):
        """The monitor's status as plain values (what ``skcal monitor`` prints).

        Returns
        -------
        dict
            ``rows``, ``blocks``, ``buffered``, ``mode``, ``alpha``, ``threshold`` (``1 /
            alpha``), ``e_value`` (``inf`` past ``1e308``), ``log10_e_value``, ``pvalue``,
            ``alarm``, ``alarm_at``, ``change_at`` and, with
            times, ``last_time``, ``alarm_time`` and ``change_time`` (ISO 8601 or numbers).
        """
        self._check_started("status")
        eng = self._engine
        out = {
            "rows": self.n_seen_,
            "blocks": self.n_blocks_,
            "buffered": self.n_buffered_,
            "mode": self.mode,
            "alpha": float(self.alpha),
            "threshold": float(1.0 / self.alpha),
            "e_value": self.e_value_,
            "log10_e_value": float(eng.block_array("log_m" if eng.detect else "log_e")[-1] / np.log(10))
            if self.n_blocks_
            else float(np.log10(self.e_value_))
            if self.e_value_ > 0
            else float("-inf"),
            "pvalue": self.pvalue_,
            "alarm": self.alarm_,
            "alarm_at": self.alarm_at_,
            "change_at": self.change_at_,
        }
        if eng.time_kind is not None:
            last = self._block("time_last")
            first = self._block("time_first")
            out["last_time"] = _time_value(eng.time_kind, eng.last_time)
            out["alarm_time"] = (
                None if eng.alarm_block is None else _time_value(eng.time_kind, last[eng.alarm_block])
            )
            out["change_time"] = (
                None if eng.change_block is None else _time_value(eng.time_kind, first[eng.change_block])
            )
        return out

    # ------------------------------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------------------------------
    def get_state(self):
        """A versioned state of plain JSON types, from which :meth:`from_state` resumes exactly.

        It holds the parameters, the per-block sums and paths (the history), the carries of the
        bets and paths, and the buffered rows of the incomplete block (so a nightly job can stop
        anywhere). ``json.dumps(monitor.get_state())`` works as it is.

        Returns
        -------
        dict
            Keys ``kind``, ``state_version``, ``params``, ``input``, ``n_seen``, ``time_kind``,
            ``last_time``, ``buffer``, ``blocks``, ``carry`` and ``alarm``; arrays are encoded as
            ``{"dtype", "shape", "data"}``.
        """
        self._check_started("get_state")
        eng = self._engine
        blocks = {name: encode_array(self._block(name)) for name in BLOCK_FIELDS}
        carry = eng.path
        return {
            "kind": STATE_KIND,
            "state_version": STATE_VERSION,
            "params": self._params_at_start,
            "input": dict(self._input),
            "n_seen": int(eng.n_seen),
            "time_kind": eng.time_kind,
            "last_time": None
            if eng.last_time is None
            else encode_float(eng.last_time)
            if eng.time_kind == "numeric"
            else int(eng.last_time),
            "buffer": {
                "y": encode_array(np.array(eng.buffer_y, dtype=np.float64)),
                "p": encode_array(np.array(eng.buffer_p, dtype=np.float64)),
                "time": None if eng.buffer_t is None else encode_array(eng.buffer_t),
            },
            "blocks": blocks,
            "carry": {
                "bet_tail": encode_array(eng.bet_tail),
                "n_blocks": int(carry.n_blocks),
                "log_capital": encode_array(carry.log_capital),
                "log_sr": encode_array(carry.log_sr),
                "min_log_capital": encode_array(carry.min_log_capital),
                "argmin_log_capital": encode_array(carry.argmin_log_capital),
                "max_log_e": encode_float(carry.max_log_e),
            },
            "alarm": {
                "block": eng.alarm_block,
                "change_block": eng.change_block,
                "function": eng.alarm_function,
            },
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
        if state.get("state_version") != STATE_VERSION:
            raise ValueError(
                f"state has version {state.get('state_version')!r}; this skcal reads version {STATE_VERSION}."
            )
        try:
            params = dict(state["params"])
            monitor = cls(**params)
            monitor._check_params()
            K, B = int(monitor.n_bins), int(monitor.block_size)
            F = n_functions(K)
            blocks = {name: decode_array(state["blocks"][name], f"blocks.{name}") for name in BLOCK_FIELDS}
            k = blocks["count"].shape[1]
            nb = blocks["count"].shape[0]
            for name in SUM_NAMES:
                if blocks[name].shape != (nb, k, K):
                    raise ValueError(
                        f"state blocks.{name} has shape {blocks[name].shape}; expected {(nb, k, K)}."
                    )
            for name in ("log_e", "log_m", "time_first", "time_last"):
                if blocks[name].shape != (nb,):
                    raise ValueError(f"state blocks.{name} has shape {blocks[name].shape}; expected {(nb,)}.")
            c = state["carry"]
            path = PathCarry(
                n_blocks=int(c["n_blocks"]),
                log_capital=decode_array(c["log_capital"], "carry.log_capital"),
                log_sr=decode_array(c["log_sr"], "carry.log_sr"),
                min_log_capital=decode_array(c["min_log_capital"], "carry.min_log_capital"),
                argmin_log_capital=decode_array(c["argmin_log_capital"], "carry.argmin_log_capital"),
                max_log_e=decode_float(c["max_log_e"], "carry.max_log_e"),
            )
            if path.n_blocks != nb:
                raise ValueError(f"state carry.n_blocks is {path.n_blocks} but blocks hold {nb}.")
            for name in ("log_capital", "log_sr", "min_log_capital", "argmin_log_capital"):
                if getattr(path, name).shape != (k, F):
                    raise ValueError(
                        f"state carry.{name} has shape {getattr(path, name).shape}; expected {(k, F)}."
                    )
            engine = Engine.new(
                n_bins=K,
                block_size=B,
                n_classes=k,
                memory=monitor._memory_blocks(),
                capital=monitor.capital,
                log_threshold=float(-np.log(monitor.alpha)),
                detect=monitor.mode == "detect",
            )
            engine.bet_tail = decode_array(c["bet_tail"], "carry.bet_tail")
            if engine.bet_tail.shape[1:] != (2, k, F):
                raise ValueError(f"state carry.bet_tail has shape {engine.bet_tail.shape}.")
            engine.path = path
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
            lt = state["last_time"]
            engine.last_time = (
                None if lt is None else (int(lt) if engine.time_kind == "datetime" else decode_float(lt))
            )
            engine.n_seen = int(state["n_seen"])
            if engine.n_seen != nb * B + by.shape[1]:
                raise ValueError(
                    f"state n_seen is {engine.n_seen} but it holds {nb} blocks and {by.shape[1]} rows."
                )
            a = state["alarm"]
            engine.alarm_block = None if a["block"] is None else int(a["block"])
            engine.change_block = None if a["change_block"] is None else int(a["change_block"])
            engine.alarm_function = None if a["function"] is None else int(a["function"])
            monitor._input = {"kind": state["input"]["kind"], "n_columns": int(state["input"]["n_columns"])}
        except (KeyError, TypeError) as exc:
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
            out._set_attributes()
        return out


def _time_value(kind, v):
    if v is None:
        return None
    if kind == "datetime":
        return pd.Timestamp(int(v)).isoformat()
    return float(v)
