"""A scikit-learn classifier wrapping the whole second-order chain.

The chain of *The Minimax Rate of Second-Order Calibration* (ensemble moments, sech
perturbation, second-order Platt scaling): fitted ensemble -> :class:`~skcal.EnsembleMoments`
-> :class:`~skcal.SechPerturber` -> :class:`~skcal.SecondOrderPlattCalibrator`, calibrated on
held-out snapshots or vote counts. The result has ``classes_``, ``predict_proba`` (the
recalibrated mean), ``predict`` and :meth:`SecondOrderCalibratedClassifier.predict_second_order`
(the recalibrated ``(m, sigma2)``), so it goes wherever a fitted binary classifier goes:
``calibration_report``, ``ReliabilityDisplay.from_estimator``,
``SecondOrderDisplay.from_estimator``, scorers, ``clone`` and ``pickle``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target

from skcal._compat import check_is_fitted, fit_context, validate_data
from skcal._constraints import ALPHA, BANDWIDTH, BASIS, DEGREE, ORDER
from skcal._validation import binary_labels
from skcal.ensemble import EnsembleMoments
from skcal.perturbation import SechPerturber
from skcal.platt import SecondOrderPlattCalibrator
from skcal.votes import VoteCounts

__all__ = ["SecondOrderCalibratedClassifier"]


def _is_one_label_per_row(y):
    if isinstance(y, VoteCounts):
        return False
    shape = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).shape
    return len(shape) == 1 or (len(shape) == 2 and shape[1] == 1)


class SecondOrderCalibratedClassifier(ClassifierMixin, BaseEstimator):
    """A fitted ensemble recalibrated to second order, as a binary scikit-learn classifier.

    :meth:`fit` takes held-out inputs ``X`` and their repeated labels (snapshots or
    :class:`~skcal.votes.VoteCounts`), computes the ensemble's ``(m, sigma2)`` with
    :class:`~skcal.EnsembleMoments`, perturbs them with :class:`~skcal.SechPerturber` (the
    perturbed predictor is the one that is deployed) and fits a
    :class:`~skcal.SecondOrderPlattCalibrator` on them. The ensemble itself is never refitted.

    Parameters
    ----------
    estimator : list of fitted classifiers, or a fitted ensemble
        As in :class:`~skcal.EnsembleMoments`: a list of at least two fitted binary classifiers,
        a fitted estimator exposing ``estimators_`` (bagging, forests, voting), or either one
        wrapped in :class:`sklearn.frozen.FrozenEstimator` (which keeps it fitted under
        ``clone``).
    bandwidth : float, default=2**-6
        Sech bandwidth ``h`` of the perturbation (density proportional to ``sech((t - s) / h)``).
    degree : int, default=4
        Chebyshev degree of the calibrator (tensor basis: ``(degree + 1)^2`` features).
    alpha : float, default=1e-6
        Ridge multiplier of the calibrator.
    basis : {"tensor", "total"}, default="tensor"
        Basis of the calibrator.
    order : {1, 2}, default=2
        ``2``: second-order Platt scaling (needs at least two labels on every calibration row).
        ``1``: first-order Platt scaling; ``y`` may then be one label per row, and the output
        ``sigma2`` is 0.
    random_state : int, RandomState instance or None, default=0
        Seed of the perturbation (an int gives the same draw for the same input; see
        :class:`~skcal.SechPerturber`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The ensemble's two classes; ``classes_[1]`` is the positive class.
    moments_ : EnsembleMoments
        The fitted moment transformer.
    perturber_ : SechPerturber
        The fitted perturbation.
    calibrator_ : SecondOrderPlattCalibrator
        The fitted calibrator.
    margin_ : float
        ``predict_proba`` lies in ``[margin_, 1 - margin_]`` with ``margin_ = 1 / (n + 2)`` for
        ``n`` calibration rows (see :attr:`SecondOrderPlattCalibrator.margin_`).
    n_features_in_ : int
        Number of raw features the ensemble takes.
    feature_names_in_ : ndarray of str
        Defined when ``X`` in :meth:`fit` has string column names.

    See Also
    --------
    skcal.SecondOrderPlattCalibrator : the calibrator on its own (scores in, scores out).

    Notes
    -----
    ``predict_proba`` is the recalibrated mean ``eta1_hat`` clipped to ``[margin_, 1 -
    margin_]``: a probability estimated from ``n`` rows is never certified below ``1 / (n +
    2)``, and an exact 0 or 1 makes one contrary label cost an infinite log loss.

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
    """

    _parameter_constraints: dict = {
        "estimator": "no_validation",
        "bandwidth": list(BANDWIDTH),
        "degree": DEGREE,
        "alpha": ALPHA,
        "basis": BASIS,
        "order": ORDER,
        "random_state": ["random_state"],
    }

    def __init__(
        self, estimator, *, bandwidth=2**-6, degree=4, alpha=1e-6, basis="tensor", order=2, random_state=0
    ):
        self.estimator = estimator
        self.bandwidth = bandwidth
        self.degree = degree
        self.alpha = alpha
        self.basis = basis
        self.order = order
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Calibrate the fitted ensemble on held-out inputs and their repeated labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out raw features (not used to fit the ensemble).
        y : array-like of shape (n_samples, k), VoteCounts, or array-like of shape (n_samples,)
            Snapshots (``k >= 2`` binary votes per row, 1 = ``classes_[1]``, NaN for a missing
            vote), vote counts of the positive class, or, with ``order=1``, one label per row
            (labels of the ensemble's classes).
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
        validate_data(self, X, reset=True, dtype=None, ensure_min_samples=2)
        if y is not None and _is_one_label_per_row(y):
            arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
            arr = arr.ravel()
            kind = type_of_target(arr, input_name="y")
            if kind == "multiclass":
                raise ValueError(
                    "Only binary classification is supported: y has "
                    f"{np.unique(arr).shape[0]} classes (use one-vs-rest labels)."
                )
            if kind not in ("binary", "multiclass"):
                raise ValueError(f"Unknown label type: {kind!r}; y must hold the ensemble's class labels.")
        self.moments_ = EnsembleMoments(self.estimator)
        S = self.moments_.fit_transform(X)
        self.classes_ = np.asarray(np.asarray(self.moments_.classes_).tolist())  # plain dtype
        if self.classes_.shape[0] != 2:
            raise ValueError(
                f"the ensemble has {self.classes_.shape[0]} classes; SecondOrderCalibratedClassifier is "
                "binary (use a one-vs-rest ensemble)."
            )
        if y is not None and _is_one_label_per_row(y):
            unseen = ~np.isin(arr, self.classes_)
            if unseen.any():
                raise ValueError(
                    f"y holds labels {np.unique(arr[unseen])[:5].tolist()} that are not classes of the "
                    f"ensemble {self.classes_.tolist()}."
                )
            y = binary_labels(arr, self.classes_[1], "y")
        self.perturber_ = SechPerturber(bandwidth=self.bandwidth, random_state=self.random_state)
        Sp = self.perturber_.fit_transform(S)
        self.calibrator_ = SecondOrderPlattCalibrator(
            degree=self.degree, alpha=self.alpha, basis=self.basis, order=self.order
        ).fit(Sp, y, sample_weight)
        self.margin_ = self.calibrator_.margin_
        return self

    def _raw_scores(self, X):
        check_is_fitted(self, "calibrator_")
        validate_data(self, X, reset=False, dtype=None)
        return self.perturber_.transform(self.moments_.transform(X))

    def predict_second_order(self, X):
        """The recalibrated second-order scores ``(m, sigma2)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            ``m = eta1_hat`` (the recalibrated probability of ``classes_[1]``) and
            ``sigma2 = eta2_hat - eta1_hat^2`` (the recalibrated epistemic variance; 0 for
            ``order=1``).
        """
        S = self._raw_scores(X)
        return np.asarray(self.calibrator_.transform(S))

    def predict_proba(self, X):
        """Recalibrated class probabilities (the mean ``m`` of the second-order output).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``, within
            ``[margin_, 1 - margin_]``.
        """
        m = np.clip(self.predict_second_order(X)[:, 0], self.margin_, 1.0 - self.margin_)
        return np.column_stack([1.0 - m, m])

    def predict(self, X):
        """The more probable class under :meth:`predict_proba` (ties go to ``classes_[0]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features.

        Returns
        -------
        ndarray of shape (n_samples,)
            Class labels from ``classes_``.
        """
        check_is_fitted(self, "calibrator_")
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.target_tags.two_d_labels = True
        return tags
