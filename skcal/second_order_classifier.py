"""A scikit-learn classifier wrapping the whole second-order chain.

The chain of *The Minimax Rate of Second-Order Calibration* (ensemble moments, sech
perturbation, second-order Platt scaling): fitted ensemble -> :class:`~skcal.EnsembleMoments`
-> :class:`~skcal.SechPerturber` -> :class:`~skcal.SecondOrderPlattCalibrator`, calibrated on
held-out snapshots or vote counts. The result has ``classes_``, ``predict_proba`` (the
recalibrated mean), ``predict`` and :meth:`SecondOrderCalibratedClassifier.predict_second_order`
(the recalibrated ``(m, sigma2)``), so it goes wherever a fitted classifier goes:
``calibration_report``, ``ReliabilityDisplay.from_estimator``,
``SecondOrderDisplay.from_estimator``, scorers, ``clone`` and ``pickle``.

For a k-class ensemble (``k > 2``) the chain runs once per class on its one-vs-rest task
(``multiclass="classwise"``) and the recalibrated means are projected back onto the simplex
(:func:`skcal.platt.project_to_simplex`), or once on the top-label task
(``multiclass="top_label"``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target

from skcal._compat import StrOptions, check_is_fitted, fit_context, validate_data
from skcal._constraints import ALPHA, BANDWIDTH, DEGREE, ENGINE_BASIS, ORDER
from skcal._validation import binary_labels, check_scores
from skcal.ensemble import EnsembleMoments
from skcal.perturbation import SechPerturber
from skcal.platt import SIMPLEX_PROJECTIONS, SecondOrderPlattCalibrator, project_to_simplex
from skcal.votes import (
    Snapshots,
    VoteCounts,
    check_class_scores,
    check_class_votes,
    flat_class_scores,
    require_pairs,
)

__all__ = ["SecondOrderCalibratedClassifier"]

#: ``estimator="precomputed"``: ``X`` holds the ensemble's second-order scores.
PRECOMPUTED = "precomputed"


def _is_one_label_per_row(y):
    if isinstance(y, (VoteCounts, Snapshots)):
        return False
    shape = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).shape
    return len(shape) == 1 or (len(shape) == 2 and shape[1] == 1)


def _known_n_classes(estimator):
    """The number of classes of a fitted ensemble, when it can be read without fitting anything."""
    est = estimator
    while hasattr(est, "estimator") and type(est).__name__ == "FrozenEstimator":
        est = est.estimator
    if isinstance(est, (list, tuple)):
        members = list(est)
        classes = set()
        for mem in members:
            while hasattr(mem, "estimator") and type(mem).__name__ == "FrozenEstimator":
                mem = mem.estimator
            got = getattr(mem, "classes_", None)
            if got is None:
                return None
            classes |= set(np.asarray(got).tolist())
        return len(classes)
    got = getattr(est, "classes_", None)
    return None if got is None else len(got)


def _two_class_view(S):
    """Binary scores ``(m, sigma2)`` of class 1 as two-class scores ``(n, 2, 2)`` (exact for an ensemble)."""
    return np.stack([np.column_stack([1.0 - S[:, 0], S[:, 1]]), S], axis=1)


class SecondOrderCalibratedClassifier(ClassifierMixin, BaseEstimator):
    """A fitted ensemble recalibrated to second order, as a scikit-learn classifier.

    :meth:`fit` takes held-out inputs ``X`` and their repeated labels (snapshots or
    :class:`~skcal.votes.VoteCounts`), computes the ensemble's ``(m, sigma2)`` with
    :class:`~skcal.EnsembleMoments`, perturbs them with :class:`~skcal.SechPerturber` (the
    perturbed predictor is the one that is deployed) and fits a
    :class:`~skcal.SecondOrderPlattCalibrator` on them. The ensemble itself is never refitted.

    **k classes.** A k-class ensemble (``k > 2``) is recalibrated per class
    (``multiclass="classwise"``): class ``j``'s pair ``(m_j, sigma2_j)`` is perturbed and
    calibrated against its one-vs-rest votes exactly as the binary chain would do for that task
    (:attr:`calibrators_`), and the k recalibrated means, which need not sum to 1, are projected
    back onto the simplex by ``projection`` (:func:`skcal.platt.project_to_simplex`). With
    ``multiclass="top_label"`` one calibrator learns the top-label task alone: per row the
    ensemble's class of largest ``m``, its ``(m, sigma2)`` and its votes. Labels are counts per
    class (``VoteCounts(counts=C)``, columns in the order of :attr:`classes_`, or matched by
    name through ``VoteCounts.classes``), snapshots of class labels, or (``order=1``) one label
    per row. Rows with a single vote may stand beside rows with several also for ``order=2``:
    ``eta1`` is fitted on every row, ``eta2`` on the rows with pairs.

    Parameters
    ----------
    estimator : list of fitted classifiers, a fitted ensemble, or "precomputed"
        As in :class:`~skcal.EnsembleMoments`: a list of at least two fitted classifiers, a
        fitted estimator exposing ``estimators_`` (bagging, forests, voting), or either one
        wrapped in :class:`sklearn.frozen.FrozenEstimator` (which keeps it fitted under
        ``clone``). ``"precomputed"``: ``X`` holds the ensemble's second-order scores already
        (``(n, 2)`` for two classes, the ``(n, 2k)`` layout of ``EnsembleMoments`` or of
        :func:`skcal.ensemble_moments`, or ``(n, k, 2)``), for ensembles whose outputs are stored
        rather than refitted; the classes are then ``0..k-1`` (or the ``classes`` of vote
        counts). Two classes in a k-class layout (``(n, 4)``, ``(n, 2, 2)``) are class 1's
        ``(m, sigma2)``: the same binary model as from ``(n, 2)`` scores.
    bandwidth : float, default=2**-6
        Sech bandwidth ``h`` of the perturbation (density proportional to ``sech((t - s) / h)``).
    degree : int, default=4
        Chebyshev degree of the calibrators (tensor basis: ``(degree + 1)^2`` features).
    alpha : float, default=1e-6
        Ridge multiplier of the calibrators.
    basis : {"tensor", "total", "1d"}, default="tensor"
        Basis of the calibrators. ``"1d"``: they see ``m`` alone (``T_i(2m - 1)``,
        ``degree + 1`` features) and ignore the ensemble's ``sigma2`` as an input.
    order : {1, 2}, default=2
        ``2``: second-order Platt scaling (needs two labels on some calibration rows).
        ``1``: first-order Platt scaling; ``y`` may then be one label per row, and the output
        ``sigma2`` is 0.
    multiclass : {"classwise", "top_label"}, default="classwise"
        The task of a k-class ensemble: every class one-vs-rest, then the projection onto the
        simplex; or the top label alone. For two classes ``"classwise"`` is the binary chain
        (one calibrator for ``classes_[1]``; class 0 is its complement) and ``"top_label"``
        calibrates ``max(m, 1 - m)``.
    projection : {"logit_shift", "renormalize"}, default="logit_shift"
        ``multiclass="classwise"`` with ``k > 2``: the rule that maps the k recalibrated means
        onto the simplex (:func:`skcal.platt.project_to_simplex`; the variances follow by the
        delta method). ``"logit_shift"`` adds one constant per row to the classes' logits;
        ``"renormalize"`` divides by the row sum. On CIFAR-10H the logit shift gave the lower
        classwise and top-label CE2 and the lower log loss (``docs/benchmarks/cifar10h.md``).
    random_state : int, RandomState instance or None, default=0
        Seed of the perturbation (an int gives the same draw for the same input; see
        :class:`~skcal.SechPerturber`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The ensemble's classes; for two classes ``classes_[1]`` is the positive class.
    moments_ : EnsembleMoments or None
        The fitted moment transformer (``None`` for ``"precomputed"``).
    perturber_ : SechPerturber
        The fitted perturbation.
    calibrator_ : SecondOrderPlattCalibrator
        The fitted calibrator of the binary task or of the top-label task.
    calibrators_ : list of SecondOrderPlattCalibrator
        ``multiclass="classwise"`` with ``k > 2``: one calibrator per class, in the order of
        ``classes_``.
    margin_ : float
        ``predict_proba`` stays off 0 and 1: binary outputs lie in ``[margin_, 1 - margin_]``
        with ``margin_ = 1 / (n + 2)`` for ``n`` calibration rows (see
        :attr:`SecondOrderPlattCalibrator.margin_`); k-class rows are clipped below at
        ``margin_`` and renormalised.
    n_features_in_ : int
        Number of raw features the ensemble takes.
    feature_names_in_ : ndarray of str
        Defined when ``X`` in :meth:`fit` has string column names.

    See Also
    --------
    skcal.SecondOrderPlattCalibrator : the calibrator on its own (scores in, scores out).
    skcal.platt.project_to_simplex : the projection of k one-vs-rest means onto the simplex.

    Notes
    -----
    ``predict_proba`` is the recalibrated mean ``eta1_hat`` clipped to ``[margin_, 1 -
    margin_]``: a probability estimated from ``n`` rows is never certified below ``1 / (n +
    2)``, and an exact 0 or 1 makes one contrary label cost an infinite log loss.

    With ``multiclass="top_label"`` the top class gets the recalibrated confidence ``q`` and the
    other classes share ``1 - q`` in proportion to their raw means (their variances scaled by the
    square of the same factor), so the rows sum to 1; where ``q`` falls below such a share, the
    most probable class of ``predict_proba`` (and ``predict``) is not the ensemble's top class.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import BaggingClassifier
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skcal.second_order_classifier import SecondOrderCalibratedClassifier
    >>> from skcal.votes import VoteCounts
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2))
    >>> f = 1 / (1 + np.exp(-2 * X[:, 0]))  # P(vote = 1 | x)
    >>> y = (rng.uniform(size=3000) < f).astype(int)
    >>> ens = BaggingClassifier(DecisionTreeClassifier(max_depth=3), n_estimators=10,
    ...                         random_state=0).fit(X[:1000], y[:1000])
    >>> votes = VoteCounts(rng.binomial(3, f[1000:]), np.full(2000, 3))  # 3 votes per row
    >>> clf = SecondOrderCalibratedClassifier(ens, degree=3).fit(X[1000:], votes)
    >>> clf.predict_proba(X[:2]).shape, clf.predict_second_order(X[:2]).shape
    ((2, 2), (2, 2))

    Three classes, three votes per row counted per class:

    >>> F = np.column_stack([f * 0.7, 1 - f, f * 0.3])  # P(vote = class j | x)
    >>> y3 = np.array([rng.choice(3, p=p) for p in F[:1000]])
    >>> ens3 = BaggingClassifier(DecisionTreeClassifier(max_depth=3), n_estimators=10,
    ...                          random_state=0).fit(X[:1000], y3)
    >>> counts = np.stack([rng.multinomial(3, p) for p in F[1000:]])
    >>> clf3 = SecondOrderCalibratedClassifier(ens3, degree=3).fit(X[1000:], VoteCounts(counts=counts))
    >>> clf3.predict_proba(X[:2]).sum(axis=1).round(12).tolist(), clf3.predict_second_order(X[:2]).shape
    ([1.0, 1.0], (2, 3, 2))
    """

    _parameter_constraints: dict = {
        "estimator": "no_validation",
        "bandwidth": list(BANDWIDTH),
        "degree": DEGREE,
        "alpha": ALPHA,
        "basis": ENGINE_BASIS,
        "order": ORDER,
        "multiclass": [StrOptions({"classwise", "top_label"})],
        "projection": [StrOptions(set(SIMPLEX_PROJECTIONS))],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator,
        *,
        bandwidth=2**-6,
        degree=4,
        alpha=1e-6,
        basis="tensor",
        order=2,
        multiclass="classwise",
        projection="logit_shift",
        random_state=0,
    ):
        self.estimator = estimator
        self.bandwidth = bandwidth
        self.degree = degree
        self.alpha = alpha
        self.basis = basis
        self.order = order
        self.multiclass = multiclass
        self.projection = projection
        self.random_state = random_state

    # -- the pieces -----------------------------------------------------------------------
    def _precomputed(self):
        return isinstance(self.estimator, str) and self.estimator == PRECOMPUTED

    def _calibrator(self):
        return SecondOrderPlattCalibrator(
            degree=self.degree,
            alpha=self.alpha,
            basis="tensor" if self.basis == "1d" else self.basis,
            order=self.order,
        )

    def _inputs(self, S):
        """The calibrator's input columns of perturbed ``(n, 2)`` scores."""
        return S[:, :1] if self.basis == "1d" else S

    def _ensemble_scores(self, X, *, fit):
        """The raw (unperturbed) scores: ``(n, 2)`` for two classes, else ``(n, k, 2)``.

        Precomputed scores of two classes in a k-class layout (``(n, 2, 2)`` or ``(n, 4)``) are
        class 1's ``(m, sigma2)`` for ``multiclass="classwise"``: the binary chain, the same
        model as from ``(n, 2)`` scores (``skcal.ce2``'s rule for two classes).
        """
        if self._precomputed():
            if np.ndim(X) == 2 and np.shape(X)[1] == 2:
                return check_scores(X, name="X (precomputed scores)")
            S3 = check_class_scores(X, name="X (precomputed scores)")
            return S3[:, 1] if S3.shape[1] == 2 and self.multiclass == "classwise" else S3
        if fit:
            self.moments_ = EnsembleMoments(self.estimator)
            S = self.moments_.fit_transform(X)
        else:
            S = self.moments_.transform(X)
        return S if S.shape[1] == 2 else check_class_scores(S)

    @staticmethod
    def _top(S3):
        rows = np.arange(S3.shape[0])
        return rows, np.argmax(S3[..., 0], axis=1)

    # -- fitting --------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Calibrate the fitted ensemble on held-out inputs and their repeated labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out raw features (not used to fit the ensemble), or for ``"precomputed"`` the
            ensemble's scores ``(n, 2)`` or ``(n, 2k)``.
        y : array-like of shape (n_samples, r), Snapshots, VoteCounts, or array-like of shape (n_samples,)
            Two classes: snapshots (``r >= 2`` binary votes per row, 1 = ``classes_[1]``, NaN for
            a missing vote) or vote counts of the positive class. k classes: counts per class
            (``VoteCounts(counts=C)``) or snapshots of class labels. With ``order=1`` also one
            label per row (labels of the ensemble's classes). A plain ``(n, k)`` array that reads
            both as snapshots and as counts per class of the ``k`` classes is refused: wrap it in
            ``Snapshots`` or ``VoteCounts(counts=...)``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the calibration rows.

        Returns
        -------
        SecondOrderCalibratedClassifier
            The fitted classifier (``self``).
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: pass "
                "snapshots, VoteCounts or (with order=1) one label per row."
            )
        # Basic checks of the raw features (finite, not sparse, at least 2 rows); the ensemble
        # receives X as it was given (e.g. a DataFrame its members were trained on).
        validate_data(self, X, reset=True, dtype=None, ensure_min_samples=2, allow_nd=self._precomputed())
        arr, kind = None, None
        if _is_one_label_per_row(y):
            arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).ravel()
            kind = type_of_target(arr, input_name="y")
            if kind not in ("binary", "multiclass"):
                raise ValueError(f"Unknown label type: {kind!r}; y must hold the ensemble's class labels.")
        S = self._ensemble_scores(X, fit=True)
        if self._precomputed():
            self.moments_ = None
            k = 2 if S.ndim == 2 else S.shape[1]
            names = y.classes if isinstance(y, VoteCounts) and y.classes is not None else None
            self.classes_ = np.arange(k) if names is None else np.asarray(names.tolist())
        else:
            self.classes_ = np.asarray(np.asarray(self.moments_.classes_).tolist())  # plain dtype
        k = self.classes_.shape[0]
        if kind == "multiclass" and k == 2:
            raise ValueError(
                f"Only binary classification is supported by a two-class ensemble: y has "
                f"{np.unique(arr).shape[0]} classes (the ensemble's are {self.classes_.tolist()})."
            )
        self.perturber_ = SechPerturber(bandwidth=self.bandwidth, random_state=self.random_state)
        self.__dict__.pop("calibrators_", None)
        self.__dict__.pop("calibrator_", None)
        if k == 2 and self.multiclass == "classwise":
            y = self._binary_labels(y, arr)
            Sp = self.perturber_.fit_transform(S)
            self.calibrator_ = self._calibrator().fit(self._inputs(Sp), y, sample_weight)
            self.margin_ = self.calibrator_.margin_
            return self
        S3 = S if S.ndim == 3 else _two_class_view(S)
        V = self._class_labels(y, arr, k, S3.shape[0])
        if self.order == 2:
            require_pairs(V.total, "y")
        if self.multiclass == "top_label":
            rows, top = self._top(S3)
            Sp = self.perturber_.fit_transform(S3[rows, top])
            self.calibrator_ = self._calibrator().fit(self._inputs(Sp), V.one_vs_rest(top), sample_weight)
            self.margin_ = self.calibrator_.margin_
            return self
        Sp = check_class_scores(self.perturber_.fit_transform(flat_class_scores(S3)))
        self.calibrators_ = [
            self._calibrator().fit(self._inputs(Sp[:, j]), V.one_vs_rest(j), sample_weight) for j in range(k)
        ]
        self.margin_ = self.calibrators_[0].margin_
        return self

    def _binary_labels(self, y, arr):
        if arr is None:
            return y
        unseen = ~np.isin(arr, self.classes_)
        if unseen.any():
            raise ValueError(
                f"y holds labels {np.unique(arr[unseen])[:5].tolist()} that are not classes of the "
                f"ensemble {self.classes_.tolist()}."
            )
        return binary_labels(arr, self.classes_[1], "y")

    def _class_labels(self, y, arr, k, n):
        if arr is not None:  # one label per row: counts with a single vote
            unseen = ~np.isin(arr, self.classes_)
            if unseen.any():
                raise ValueError(
                    f"y holds labels {np.unique(arr[unseen])[:5].tolist()} that are not classes of the "
                    f"ensemble {self.classes_.tolist()}."
                )
            if arr.shape[0] != n:
                raise ValueError(f"y has {arr.shape[0]} labels; expected {n} (one per row of X).")
            codes = np.searchsorted(self.classes_, arr) if self.classes_.dtype.kind != "O" else np.array(
                [self.classes_.tolist().index(v) for v in arr.tolist()]
            )
            C = np.zeros((n, k), dtype=np.int64)
            C[np.arange(n), codes] = 1
            return VoteCounts(counts=C)
        classes = self.classes_ if (isinstance(y, VoteCounts) or self.classes_.dtype.kind in "iufb") else None
        if classes is None:
            raise ValueError(
                f"y is a numeric snapshot array, but the ensemble's classes {self.classes_.tolist()[:10]} "
                "are not numbers: pass VoteCounts(counts=C, classes=...) instead."
            )
        return check_class_votes(y, k, name="y", n_samples=n, min_votes=1, classes=classes)

    # -- prediction -----------------------------------------------------------------------
    def _raw_scores(self, X, label=None):
        """The perturbed scores a calibrator sees (binary, top label, or class ``label``'s pair)."""
        check_is_fitted(self, "margin_")
        validate_data(self, X, reset=False, dtype=None, allow_nd=self._precomputed())
        S = self._ensemble_scores(X, fit=False)
        if S.ndim == 2 and "calibrator_" in self.__dict__ and self.multiclass == "classwise":
            return self.perturber_.transform(S)
        S3 = S if S.ndim == 3 else _two_class_view(S)
        if label is None:
            rows, top = self._top(S3)
            return self.perturber_.transform(S3[rows, top]), S3, top
        return check_class_scores(self.perturber_.transform(flat_class_scores(S3)))[:, label]

    def predict_second_order(self, X, *, project=True):
        """The recalibrated second-order scores ``(m, sigma2)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features (or the ensemble's scores for ``"precomputed"``).
        project : bool, default=True
            For k classes only. ``True``: rows on the simplex (see ``projection`` and, for
            ``"top_label"``, the Notes). ``False``: the calibrators' outputs themselves: the
            ``(n, k, 2)`` one-vs-rest scores (``"classwise"``, means not summing to 1), or the
            ``(n, 2)`` scores of each row's top class (``"top_label"``).

        Returns
        -------
        ndarray of shape (n_samples, 2) or (n_samples, n_classes, 2)
            Two classes: ``m = eta1_hat`` (the recalibrated probability of ``classes_[1]``) and
            ``sigma2 = eta2_hat - eta1_hat^2`` (the recalibrated epistemic variance; 0 for
            ``order=1``). k classes: ``(m, sigma2)`` per class.
        """
        check_is_fitted(self, "margin_")
        if "calibrators_" in self.__dict__:
            validate_data(self, X, reset=False, dtype=None, allow_nd=self._precomputed())
            S = self._ensemble_scores(X, fit=False)
            Sp = check_class_scores(self.perturber_.transform(flat_class_scores(S)))
            cals = self.calibrators_
            out = [np.asarray(c.transform(self._inputs(Sp[:, j]))) for j, c in enumerate(cals)]
            out = np.stack(out, axis=1)
            return project_to_simplex(out, method=self.projection) if project else out
        if self.classes_.shape[0] == 2 and self.multiclass == "classwise":
            return np.asarray(self.calibrator_.transform(self._inputs(self._raw_scores(X))))
        Sp, S3, top = self._raw_scores(X)
        new = np.asarray(self.calibrator_.transform(self._inputs(Sp)))
        if not project:
            return new
        return self._redistribute(S3, top, new)

    @staticmethod
    def _redistribute(S3, top, new):
        """Top label ``new = (q, s2)`` at ``top``; the others share ``1 - q`` as their raw means."""
        rows = np.arange(S3.shape[0])
        m, s2 = S3[..., 0], S3[..., 1]
        rest = 1.0 - m[rows, top]
        k = m.shape[1]
        q = new[:, 0]
        factor = np.where(rest > 0, (1.0 - q) / np.where(rest > 0, rest, 1.0), 0.0)
        M = np.where(rest[:, None] > 0, m * factor[:, None], ((1.0 - q) / (k - 1))[:, None])
        V = s2 * factor[:, None] ** 2
        M[rows, top] = q
        V[rows, top] = new[:, 1]
        return np.stack([M, np.clip(V, 0.0, M * (1.0 - M))], axis=2)

    def predict_proba(self, X):
        """Recalibrated class probabilities (the means ``m`` of the second-order output).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features (or the ensemble's scores for ``"precomputed"``).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities of ``classes_``. Two classes: within ``[margin_, 1 - margin_]``. k
            classes: the projected means clipped below at ``margin_``, rows renormalised to 1.
        """
        out = self.predict_second_order(X)
        if out.ndim == 2:
            m = np.clip(out[:, 0], self.margin_, 1.0 - self.margin_)
            return np.column_stack([1.0 - m, m])
        P = np.maximum(out[..., 0], self.margin_)
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X):
        """The most probable class under :meth:`predict_proba` (ties: the first in ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features (or the ensemble's scores for ``"precomputed"``).

        Returns
        -------
        ndarray of shape (n_samples,)
            Class labels from ``classes_``.
        """
        check_is_fitted(self, "margin_")
        P = self.predict_proba(X)
        if P.shape[1] == 2:
            return self.classes_[(P[:, 1] > 0.5).astype(int)]
        return self.classes_[np.argmax(P, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        known = None if self._precomputed() else _known_n_classes(self.estimator)
        tags.classifier_tags.multi_class = known is None or known > 2
        tags.target_tags.two_d_labels = True
        if self._precomputed():
            tags.input_tags.positive_only = True
        return tags
