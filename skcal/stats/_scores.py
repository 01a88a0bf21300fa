"""Mergeable statistics of the proper scores: Brier score, log loss and accuracy.

Each is a weighted mean of a per-row loss, so its statistics are two sums: the total weight
and the weighted sum of the per-row losses. ``compute`` equals the scikit-learn function on all
rows (``sklearn.metrics.brier_score_loss``, ``log_loss``, ``accuracy_score``) up to round-off.

Labels. A chunk may miss a class, so the mapping of labels to columns is fixed by the
parameters, never inferred from a chunk: binary input (``y_prob`` of shape ``(n,)``, ``(n, 1)``
or ``(n, 2)``) needs ``pos_label`` unless the labels are ``{0, 1}``, ``{-1, 1}`` or booleans (a
rule that reads each label on its own, hence the same in every chunk); multiclass input
(``(n, k)`` with ``k >= 3``) needs ``labels`` (the class of each column, as
``estimator.classes_``).
"""

from __future__ import annotations

import numpy as np

from skcal._compat import validate_params
from skcal._constraints import LABELS, POS_LABEL, SAMPLE_WEIGHT
from skcal._validation import (
    binary_labels,
    check_consistent_length,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_probabilities,
    check_sample_weight,
)
from skcal.stats._base import BaseStatistics, count_rows
from skcal.stats._replicate import ReplicatePlan, stack_empty, tile_copies

__all__ = [
    "AccuracyStatistics",
    "BrierScoreStatistics",
    "LogLossStatistics",
    "LOG_LOSS_EPS",
    "MeanStatistics",
]

#: Log loss clips probabilities to ``[eps, 1 - eps]`` with the float64 machine epsilon, as
#: ``sklearn.metrics.log_loss`` does since 1.5 for float64 input (``eps`` is no longer a
#: parameter there; it is ``np.finfo(y_proba.dtype).eps``). skcal computes in float64 for every
#: input dtype, so for float32 input sklearn clips at 1.19e-7 and skcal at 2.2e-16.
LOG_LOSS_EPS = float(np.finfo(np.float64).eps)


class _ScoreStatistics(BaseStatistics):
    """Weighted mean of a per-row loss of (labels, probabilities)."""

    _param_names = ("pos_label", "labels")
    _parameter_constraints: dict = {"pos_label": POS_LABEL, "labels": LABELS}

    def __init__(self, *, pos_label=None, labels=None):
        self.pos_label = pos_label.item() if isinstance(pos_label, np.generic) else pos_label
        if labels is not None:
            labels = [
                lab.item() if isinstance(lab, np.generic) else lab for lab in np.asarray(labels).tolist()
            ]
            if len(labels) < 2:
                raise ValueError(f"labels must name at least 2 classes; got {labels!r}.")
            if len(set(labels)) != len(labels):
                raise ValueError(f"labels must not contain duplicates; got {labels!r}.")
        self.labels = labels

    def _empty(self):
        return {
            "sum_weight": np.zeros(()),
            "sum_loss": np.zeros(()),
            "n_samples": np.zeros((), dtype=np.int64),
        }

    def _onehot(self, y_true, y_prob):
        """Return ``(Y, P)``: one-hot labels and probabilities, both ``(n, k)``; or binary."""
        raw = y_prob.to_numpy() if hasattr(y_prob, "to_numpy") else np.asarray(y_prob)
        k = 1 if raw.ndim == 1 else raw.shape[1]
        if k <= 2:
            pos = self.pos_label
            if pos is None and self.labels is not None:
                if len(self.labels) != 2:
                    raise ValueError(
                        f"y_prob has {k} column(s) (binary) but labels names {len(self.labels)} classes."
                    )
                pos = self.labels[1]
            p = check_probabilities(raw, name="y_prob")
            y = binary_labels(y_true, pos, "y_true")
            check_consistent_length(y_true=y, y_prob=p)
            if k == 2:  # predict_proba output: use both columns as scikit-learn does
                return np.column_stack([1.0 - y, y]), np.array(raw, dtype=np.float64)
            return y, p  # binary (n,): the per-row losses are computed from y and p directly
        if self.labels is None:
            raise ValueError(
                f"y_prob has {k} columns (multiclass): pass labels= (the class of each column, e.g. "
                "estimator.classes_) so that a chunk missing a class cannot misalign the columns."
            )
        if len(self.labels) != k:
            raise ValueError(f"y_prob has {k} columns but labels names {len(self.labels)} classes.")
        P = check_multiclass_probabilities(raw, name="y_prob", n_classes=k)
        codes = check_multiclass_labels(y_true, k, labels=np.asarray(self.labels))
        check_consistent_length(y_true=codes, y_prob=P)
        Y = np.zeros_like(P)
        Y[np.arange(P.shape[0]), codes] = 1.0
        return Y, P

    def _check_chunk(self, y_true, y_prob, sample_weight=None):
        n = count_rows(y_prob)
        if n == 0:
            if count_rows(y_true) != 0:
                raise ValueError(f"y_true has {count_rows(y_true)} rows but y_prob has none.")
            return None
        Y, P = self._onehot(y_true, y_prob)
        return Y, P, check_sample_weight(sample_weight, n, allow_zero_total=True)

    def _sums(self, Y, P, w):
        n = P.shape[0]
        loss = self._binary_loss(Y, P) if P.ndim == 1 else self._row_loss(Y, P)
        return {
            "sum_weight": np.asarray(float(n) if w is None else float(w.sum())),
            "sum_loss": np.asarray(float(loss.sum()) if w is None else float(w @ loss)),
            "n_samples": np.asarray(n, dtype=np.int64),
        }

    def _compute(self):
        sw = float(self.stats_["sum_weight"])
        if not sw > 0:
            raise ValueError(
                f"{type(self).__name__} has no rows of positive weight; update it with data first."
            )
        return float(self.stats_["sum_loss"]) / sw

    # -- bootstrap replicates: a weighted mean of the per-row losses ----------------------
    def _replicate_plan(self, Y, P, w, index=None):
        loss = self._binary_loss(Y, P) if P.ndim == 1 else self._row_loss(Y, P)
        return _ScorePlan(self, loss, w)

    def _replicate_compute(self, stats):
        sw = stats["sum_weight"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sw > 0, stats["sum_loss"] / np.where(sw > 0, sw, 1.0), np.nan)


class _ScorePlan(ReplicatePlan):
    """Replicates of a mean of per-row losses: matrix-vector products of the tile's weights.

    The copies of the tile (shared with the other plans of the tile, :func:`tile_copies`), the
    weight (only with row weights) and the weighted loss of every replicate, one product each
    (a product with one column is cheaper than a third of one with two columns side by side).
    """

    def __init__(self, stats, loss, w):
        self.stats, self.w, self.n_rows = stats, w, loss.shape[0]
        self.value = loss if w is None else w * loss

    def empty(self, n_replicates):
        return stack_empty(self.stats._empty(), n_replicates)

    #: The statistic the weighted losses add to.
    value_key = "sum_loss"

    def add(self, out, W, start, stop):
        copies = tile_copies(W)
        out["sum_weight"] += copies if self.w is None else W @ self.w[start:stop]
        out[self.value_key] += W @ self.value[start:stop]
        out["n_samples"] += np.rint(copies).astype(np.int64)
        return out


class BrierScoreStatistics(_ScoreStatistics):
    """Mergeable statistics of the Brier score (``sklearn.metrics.brier_score_loss``).

    Binary input: the weighted mean of ``(y - p)^2``; ``(n, 2)`` ``predict_proba`` input uses
    both columns, ``0.5 * sum_k (1[y = k] - P_k)^2``, exactly as scikit-learn does. Multiclass
    input (``k >= 3`` columns): ``sum_k (1[y = k] - P_k)^2`` (scikit-learn's
    ``scale_by_half="auto"``).

    Parameters
    ----------
    pos_label : int, float, bool, str or None, default=None
        The positive class of binary labels (not needed for ``{0, 1}``, ``{-1, 1}``, booleans).
    labels : array-like of shape (k,) or None, default=None
        The class of each probability column; required for multiclass input.

    Attributes
    ----------
    stats_ : dict
        ``"sum_weight"``, ``"sum_loss"`` (0-d float arrays) and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    LogLossStatistics : The log loss.
    AccuracyStatistics : The accuracy of the most probable class.

    Examples
    --------
    >>> from skcal.stats import BrierScoreStatistics
    >>> a = BrierScoreStatistics().update([0, 1], [0.1, 0.8])
    >>> b = BrierScoreStatistics().update([1], [0.4])
    >>> round((a + b).compute(), 6)
    0.136667
    """

    def _row_loss(self, Y, P):
        loss = np.sum((Y - P) ** 2, axis=1)
        return 0.5 * loss if P.shape[1] < 3 else loss

    def _binary_loss(self, y, p):
        d = y - p
        return d * d


class LogLossStatistics(_ScoreStatistics):
    """Mergeable statistics of the log loss (``sklearn.metrics.log_loss``).

    The weighted mean of ``-log(clip(P[y], eps, 1 - eps))`` with ``eps`` the float64 machine
    epsilon :data:`LOG_LOSS_EPS` (scikit-learn 1.9's convention for float64 input; rows that do
    not sum to one are not renormalised, as in scikit-learn; skcal requires them to sum to one
    within 1e-6).

    Parameters
    ----------
    pos_label : int, float, bool, str or None, default=None
        The positive class of binary labels (not needed for ``{0, 1}``, ``{-1, 1}``, booleans).
    labels : array-like of shape (k,) or None, default=None
        The class of each probability column; required for multiclass input.

    Attributes
    ----------
    stats_ : dict
        ``"sum_weight"``, ``"sum_loss"`` (0-d float arrays) and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    BrierScoreStatistics : The Brier score.

    Examples
    --------
    >>> from skcal.stats import LogLossStatistics
    >>> st = LogLossStatistics(pos_label="spam").update(["spam", "ham"], [0.9, 0.2])
    >>> round(st.compute(), 6)
    0.164252
    """

    def _row_loss(self, Y, P):
        Pc = np.clip(P, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
        return -np.sum(Y * np.log(Pc), axis=1)

    def _binary_loss(self, y, p):
        # the probability of the observed class: p, or 1 - p computed as scikit-learn does
        q = np.where(y == 1.0, p, 1.0 - p)
        return -np.log(np.clip(q, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS))


class AccuracyStatistics(_ScoreStatistics):
    """Mergeable statistics of the accuracy of the most probable class.

    The prediction is the class of the largest probability column, the first on ties, as a
    scikit-learn classifier's ``predict`` does from ``predict_proba``; for binary ``p`` of shape
    ``(n,)`` the columns are ``(1 - p, p)``, so ``p = 0.5`` predicts the negative class.
    ``compute`` equals ``sklearn.metrics.accuracy_score(y_true, labels[argmax(P)])``.

    Parameters
    ----------
    pos_label : int, float, bool, str or None, default=None
        The positive class of binary labels (not needed for ``{0, 1}``, ``{-1, 1}``, booleans).
    labels : array-like of shape (k,) or None, default=None
        The class of each probability column; required for multiclass input.

    Attributes
    ----------
    stats_ : dict
        ``"sum_weight"``, ``"sum_loss"`` (here the weighted count of correct rows) and
        ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    See Also
    --------
    BrierScoreStatistics : The Brier score.

    Examples
    --------
    >>> from skcal.stats import AccuracyStatistics
    >>> AccuracyStatistics().update([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.5]).compute()
    0.75
    """

    def _row_loss(self, Y, P):
        return Y[np.arange(P.shape[0]), np.argmax(P, axis=1)]

    def _binary_loss(self, y, p):
        # argmax over the columns (1 - p, p), the first on ties
        return ((p > 1.0 - p) == (y == 1.0)).astype(np.float64)


class MeanStatistics(BaseStatistics):
    """Mergeable statistics of a weighted mean of per-row values (any mean of per-row losses).

    ``update(values, sample_weight=None)`` adds the weight and the weighted sum of the values;
    ``compute`` returns their ratio. The report scores its means of per-row losses (Brier, log
    loss, accuracy, the second-order moment losses) and bootstraps them through it.

    Attributes
    ----------
    stats_ : dict
        ``"sum_weight"``, ``"sum_value"`` (0-d float arrays) and ``"n_samples"``.
    n_updates_ : int
        Number of ``update`` calls folded in.

    Examples
    --------
    >>> from skcal.stats import MeanStatistics
    >>> a = MeanStatistics().update([1.0, 3.0])
    >>> b = MeanStatistics().update([5.0], sample_weight=[2.0])
    >>> (a + b).compute()
    3.5
    """

    def _empty(self):
        return {
            "sum_weight": np.zeros(()),
            "sum_value": np.zeros(()),
            "n_samples": np.zeros((), dtype=np.int64),
        }

    def _check_chunk(self, values, sample_weight=None):
        raw = values.to_numpy() if hasattr(values, "to_numpy") else values
        v = np.asarray(raw)
        if v.dtype.kind not in "biuf" or v.ndim != 1:
            raise ValueError(
                f"values must be a 1-d array of real numbers; got shape {v.shape}, dtype {v.dtype}."
            )
        if v.shape[0] == 0:
            return None
        v = v.astype(np.float64)
        if not np.isfinite(v).all():
            raise ValueError("values must be finite.")
        return v, check_sample_weight(sample_weight, v.shape[0], allow_zero_total=True)

    def _sums(self, v, w):
        n = v.shape[0]
        return {
            "sum_weight": np.asarray(float(n) if w is None else float(w.sum())),
            "sum_value": np.asarray(float(v.sum()) if w is None else float(w @ v)),
            "n_samples": np.asarray(n, dtype=np.int64),
        }

    def _compute(self):
        sw = float(self.stats_["sum_weight"])
        if not sw > 0:
            raise ValueError("MeanStatistics has no rows of positive weight; update it with data first.")
        return float(self.stats_["sum_value"]) / sw

    @validate_params(
        {"values": ["array-like"], "sample_weight": SAMPLE_WEIGHT}, prefer_skip_nested_validation=True
    )
    def update(self, values, sample_weight=None):
        """Add a chunk of per-row values; return ``self``.

        Parameters
        ----------
        values : array-like of shape (n,)
            Finite per-row values (``n`` may be 0).
        sample_weight : array-like of shape (n,), default=None
            Non-negative weights.

        Returns
        -------
        MeanStatistics
            The updated object.
        """
        return super().update(values, sample_weight=sample_weight)

    def _replicate_plan(self, v, w, index=None):
        return _MeanPlan(self, v, w)

    def _replicate_compute(self, stats):
        sw = stats["sum_weight"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sw > 0, stats["sum_value"] / np.where(sw > 0, sw, 1.0), np.nan)


class _MeanPlan(_ScorePlan):
    value_key = "sum_value"
