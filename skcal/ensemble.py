"""Fitted ensembles as second-order predictors.

As in *The Minimax Rate of Second-Order Calibration*, the second-order score of an
ensemble is the mean ``m`` of its members' positive-class probabilities and their unbiased
variance ``sigma2``. For a k-class ensemble the scores are per class: ``m[:, j]`` (the rows
sum to 1) and ``sigma2[:, j]`` of every class ``j``, in the ``(n, 2k)`` layout of a transformer
(the k means, then the k variances) or as an ``(n, k, 2)`` array (:func:`ensemble_moments`, for
stored member probabilities).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator

from skcal._compat import StrOptions, check_is_fitted, fit_context, validate_data, validate_params
from skcal._validation import ROW_SUM_ATOL, as_float_array, reject_nonfinite
from skcal.votes import flat_class_scores

__all__ = ["EnsembleMoments", "ensemble_moments"]


@validate_params(
    {"probas": ["array-like"], "layout": [StrOptions({"flat", "classes", "binary"})]},
    prefer_skip_nested_validation=True,
)
def ensemble_moments(probas, *, layout="flat"):
    """Second-order scores of an ensemble from its members' stored class probabilities.

    For every row and class, ``m`` is the mean of the members' probabilities and ``sigma2``
    their unbiased variance (``ddof=1``), clipped to the feasible region ``[0, m (1 - m)]``:
    what :class:`EnsembleMoments` computes from fitted members, for outputs already on disk (a
    deep ensemble's softmax outputs, for instance).

    Parameters
    ----------
    probas : array-like of shape (n_members, n_samples, n_classes)
        Each member's class probabilities (rows summing to 1 within ``1e-6``), at least two
        members and two classes.
    layout : {"flat", "classes", "binary"}, default="flat"
        The layout returned, the same for every number of classes (never chosen by the shape of
        ``probas``). ``"flat"``: ``(n, 2k)``, the k means then the k variances (the layout of
        :class:`EnsembleMoments` with several classes and of
        ``SecondOrderCalibratedClassifier("precomputed")``); ``(n, 4)`` for two classes.
        ``"classes"``: ``(n, k, 2)``, ``m`` at ``[..., 0]`` and ``sigma2`` at ``[..., 1]``.
        ``"binary"`` (two classes only): ``(n, 2)``, the ``(m, sigma2)`` of class 1, the binary
        scores of :class:`EnsembleMoments`. Every skcal function gives a two-class predictor the
        same number in all three layouts (the binary one of class 1).

    Returns
    -------
    ndarray of shape (n_samples, 2 * n_classes), (n_samples, n_classes, 2) or (n_samples, 2)
        The scores; the means of a row sum to 1 (``"binary"``: class 1's alone).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ensemble_moments
    >>> P = np.array([[[0.7, 0.2, 0.1]], [[0.5, 0.4, 0.1]]])  # 2 members, 1 row, 3 classes
    >>> ensemble_moments(P).round(3).tolist()
    [[0.6, 0.3, 0.1, 0.02, 0.02, 0.0]]
    >>> ensemble_moments(P, layout="classes").shape
    (1, 3, 2)
    >>> P2 = np.array([[[0.3, 0.7]], [[0.5, 0.5]]])  # two classes: (n, 4), or class 1's (n, 2)
    >>> ensemble_moments(P2).shape, ensemble_moments(P2, layout="binary").round(3).tolist()
    ((1, 4), [[0.6, 0.02]])
    """
    P = as_float_array(probas, "probas", ndim=(3,))
    reject_nonfinite(P, "probas")
    M, n, k = P.shape
    if M < 2 or k < 2 or n < 1:
        raise ValueError(
            f"probas must have shape (n_members, n_samples, n_classes) with at least 2 members, 1 sample "
            f"and 2 classes; got {P.shape}."
        )
    if P.min() < 0.0 or P.max() > 1.0:
        raise ValueError(f"probas must lie in [0, 1]; got values in [{P.min():.6g}, {P.max():.6g}].")
    dev = np.abs(P.sum(axis=2) - 1.0)
    if dev.max() > ROW_SUM_ATOL:
        j, i = np.unravel_index(int(np.argmax(dev)), dev.shape)
        raise ValueError(
            f"probas rows must sum to 1 (within {ROW_SUM_ATOL:g}); member {j}, row {i} sums to "
            f"{P[j, i].sum():.8g}."
        )
    m = P.mean(axis=0)
    s2 = np.clip(P.var(axis=0, ddof=1), 0.0, m * (1.0 - m))
    if layout == "binary" and k != 2:
        raise ValueError(
            f"layout='binary' is the (m, sigma2) of class 1 of a two-class ensemble; probas has {k} "
            "classes: use layout='flat' or 'classes'."
        )
    S = np.stack([np.clip(m, 0.0, 1.0), s2], axis=2)
    if layout == "binary":
        return S[:, 1].copy()
    return S if layout == "classes" else flat_class_scores(S)

_CLONE_HINT = (
    "EnsembleMoments uses members that are already fitted and never fits them. If this "
    "happened inside cross_val_score, GridSearchCV or clone(), cloning dropped the fitted "
    "state: wrap the fitted ensemble (or each fitted member of a list) in "
    "sklearn.frozen.FrozenEstimator, whose clone is itself."
)


def _check_2d(X):
    if hasattr(X, "shape"):
        ndim = len(X.shape)
    else:
        try:
            ndim = np.asarray(X).ndim
        except ValueError:  # ragged nested lists: let the members report the problem
            return
    if ndim != 2:
        raise ValueError(
            f"X must be 2-dimensional (n_samples, n_features); got {ndim} dimension(s). Reshape your "
            "data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for one sample."
        )


def _unfreeze(est):
    while isinstance(est, FrozenEstimator):
        est = est.estimator
    return est


def _is_code_vector(values, n_classes):
    """True if ``values`` are integer codes ``0..n_classes-1`` (scikit-learn's encoded labels)."""
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        return False
    return bool(np.all(values == np.round(values)) and values.min() >= 0 and values.max() < n_classes)


class EnsembleMoments(TransformerMixin, BaseEstimator):
    """Turn a fitted ensemble of classifiers into second-order scores ``(m, sigma2)``.

    For every row, ``m`` is the mean of the members' positive-class probabilities and
    ``sigma2`` their unbiased variance (``ddof=1``), clipped to the feasible region
    ``0 <= sigma2 <= m (1 - m)`` (the unbiased variance of values in [0, 1] can exceed
    ``m (1 - m)`` by the factor ``M / (M - 1)``). The output feeds
    :class:`~skcal.SechPerturber` and :class:`~skcal.SecondOrderPlattCalibrator` in a
    :class:`~sklearn.pipeline.Pipeline` that starts from raw features.

    A k-class ensemble (``k > 2``) without ``pos_label`` gives the moments of every class: the
    output is ``(n, 2k)``, the k means ``m[c]`` (rows summing to 1) and then the k variances
    ``sigma2[c]``, named by :meth:`get_feature_names_out` (2-D, as scikit-learn's pipelines
    need; ``skcal.votes.check_class_scores`` turns it into ``(n, k, 2)``).

    Parameters
    ----------
    estimator : list of fitted classifiers, or a fitted ensemble
        Either a list (or tuple) of at least two fitted classifiers with ``classes_`` and
        ``predict_proba`` (e.g. the members of a deep ensemble), or a fitted estimator exposing
        ``estimators_`` (``BaggingClassifier``, ``RandomForestClassifier``,
        ``ExtraTreesClassifier``, ``VotingClassifier``, ...), or either of these wrapped in
        :class:`sklearn.frozen.FrozenEstimator`. **The members are never fitted**: :meth:`fit`
        only checks them. ``clone`` (and so ``cross_val_score`` and ``GridSearchCV``) returns
        unfitted copies of a plain ensemble or list; wrap it in ``FrozenEstimator`` (or wrap
        each member of a list) to keep the fitted members under cloning.
    pos_label : int, float, bool, str or None, default=None
        The positive class. ``None`` takes the greater of two classes (``classes[1]``, the
        column scikit-learn's ``predict_proba`` uses for the positive class); with more than two
        classes ``None`` gives the moments of every class (the ``(n, 2k)`` output), and a class
        gives the moments of its one-vs-rest probability alone.

    Attributes
    ----------
    members_ : list of estimators
        The fitted members, in order (``FrozenEstimator`` wrappers of the ensemble removed).
    n_members_ : int
    classes_ : ndarray
        The ensemble's class labels.
    pos_label_ : object
        The positive class (``None`` for the moments of every class).
    pos_columns_ : ndarray of int
        For each member, the column of its ``predict_proba`` holding the positive class, or -1
        if the member never saw that class (its probability is then 0, as in scikit-learn's
        bagging).
    class_columns_ : ndarray of int of shape (n_members, n_classes)
        For the moments of every class: the column of each member's ``predict_proba`` holding
        each class (-1 if the member never saw it). For one positive class: column
        ``pos_columns_`` of the positive class.
    clipped_fraction_ : float
        Fraction of the rows (of the row-class pairs, for every class) of the ``X`` seen in
        :meth:`fit` whose unbiased variance exceeded ``m (1 - m)`` and was clipped (a diagnostic
        of small ensembles).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` in :meth:`fit` has column names.

    Notes
    -----
    How members' classes are read. Members of a fitted container that has ``classes_``
    (bagging, forests, voting) were trained by scikit-learn on encoded labels ``0..k-1``, so
    their ``classes_`` are read as indices into the container's ``classes_`` (a bagging member
    whose bootstrap missed a class has fewer columns). Members whose ``classes_`` are not such
    codes, and the members of a list, are read by label. Members of a bagging ensemble trained
    on feature subsets (``estimators_features_``) get their own columns of ``X``. A DataFrame
    reaches the members of a container as an array when they were fitted without column names
    (forests and bagging fit their members on arrays), and unchanged otherwise; the members of a
    list get ``X`` unchanged (so members that are pipelines with their own preprocessing work).
    Each member validates ``X`` itself.

    The moments are accumulated member by member (Welford's update), so memory is linear in
    the number of rows, not in rows times members.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import BaggingClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcal import EnsembleMoments
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> bag = BaggingClassifier(LogisticRegression(), n_estimators=10, random_state=0).fit(X, y)
    >>> scores = EnsembleMoments(bag).fit_transform(X)
    >>> scores.shape
    (200, 2)
    >>> bool(np.all(scores[:, 1] <= scores[:, 0] * (1 - scores[:, 0])))
    True
    """

    _parameter_constraints: dict = {
        "estimator": "no_validation",
        "pos_label": [None, str, numbers.Real],
    }

    def __init__(self, estimator, *, pos_label=None):
        self.estimator = estimator
        self.pos_label = pos_label

    # ------------------------------------------------------------------------------------------
    def _resolve_members(self):
        est = _unfreeze(self.estimator)
        if isinstance(est, (list, tuple)):
            return [m for m in est], None
        if not hasattr(est, "get_params") and not hasattr(est, "estimators_"):
            raise ValueError(
                "estimator must be a list of fitted classifiers or a fitted ensemble exposing "
                f"estimators_ (e.g. BaggingClassifier, RandomForestClassifier); got {type(est).__name__}."
            )
        try:
            check_is_fitted(est)
        except NotFittedError as exc:
            raise NotFittedError(f"{exc} {_CLONE_HINT}") from None
        if not hasattr(est, "estimators_"):
            raise ValueError(
                f"estimator ({type(est).__name__}) does not expose estimators_; pass a fitted "
                "ensemble (BaggingClassifier, RandomForestClassifier, VotingClassifier, ...) or a "
                "list of fitted classifiers."
            )
        members = est.estimators_
        if isinstance(members, np.ndarray) and members.ndim > 1:
            raise ValueError(
                f"{type(est).__name__}.estimators_ is a {members.ndim}-d array (boosting stages), "
                "not an ensemble of classifiers with predict_proba."
            )
        return list(members), est

    def _member_classes(self, members):
        out = []
        for i, mem in enumerate(members):
            if not hasattr(mem, "predict_proba"):
                raise ValueError(f"Member {i} ({type(mem).__name__}) has no predict_proba.")
            try:
                check_is_fitted(mem)
            except NotFittedError as exc:
                raise NotFittedError(f"Member {i} is not fitted: {exc} {_CLONE_HINT}") from None
            classes = getattr(mem, "classes_", None)
            if classes is None:
                raise ValueError(f"Member {i} ({type(mem).__name__}) has no classes_; expected a classifier.")
            out.append(np.asarray(classes))
        return out

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the fitted members, find the positive class and record diagnostics on ``X``.

        The members are **not** refitted. ``fit`` evaluates them once on ``X`` (which is how
        bad input is caught early) to record :attr:`clipped_fraction_`; ``fit_transform``
        reuses that evaluation.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Raw features, as the members expect them.
        y : None
            Ignored (the members are already fitted).

        Returns
        -------
        EnsembleMoments
            The fitted transformer (``self``).
        """
        self._fit(X)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, **fit_params):
        """Fit, then return the moments of ``X`` (computed once).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The input of the ensemble members.
        y : None
            Ignored.
        **fit_params : dict
            Not used; must be empty.

        Returns
        -------
        ndarray of shape (n_samples, 2) or (n_samples, 2 * n_classes)
            The second-order scores ``(m, sigma2)``, as :meth:`transform` returns them.
        """
        if fit_params:
            raise TypeError(f"EnsembleMoments.fit_transform got unexpected parameters {list(fit_params)}.")
        return self._fit(X)

    def _fit(self, X):
        members, container = self._resolve_members()
        if len(members) < 2:
            raise ValueError(
                f"estimator has {len(members)} member(s); the unbiased variance needs at least 2."
            )
        member_classes = self._member_classes(members)
        classes = getattr(container, "classes_", None) if container is not None else None
        if classes is None:
            classes = np.unique(np.concatenate([c.astype(object) for c in member_classes]))
            by_code = False
        else:
            if isinstance(classes, list) or np.ndim(classes) != 1:
                raise ValueError("Multi-output ensembles are not supported; classes_ must be 1-d.")
            classes = np.asarray(classes)
            by_code = all(_is_code_vector(c, len(classes)) for c in member_classes)
        if len(classes) < 2:
            raise ValueError(
                f"The ensemble has {len(classes)} class(es) {classes.tolist()}; expected 2 or more."
            )
        if self.pos_label is None:
            pos_label = classes[1] if len(classes) == 2 else None
        else:
            matches = [c for c in classes.tolist() if c == self.pos_label]
            if not matches:
                raise ValueError(
                    f"pos_label={self.pos_label!r} is not one of the classes {classes.tolist()}."
                )
            pos_label = matches[0]
        table = np.full((len(members), len(classes)), -1, dtype=np.intp)
        for i, c in enumerate(member_classes):
            for j, label in enumerate(classes.tolist()):
                hit = np.flatnonzero(c == (j if by_code else label))
                if hit.size:
                    table[i, j] = int(hit[0])
        if pos_label is not None:
            pos_code = int(np.flatnonzero(classes == pos_label)[0])
            cols = table[:, pos_code].tolist()
            table = table[:, [pos_code]]
        else:
            cols = [-1] * len(members)

        _check_2d(X)
        validate_data(self, X, reset=True, skip_check_array=True)
        width = getattr(container, "n_features_in_", None)
        if width is not None and width != self.n_features_in_:
            raise ValueError(
                f"X has {self.n_features_in_} features, but the ensemble was fitted on {width} features."
            )
        self.members_ = members
        self.n_members_ = len(members)
        self.classes_ = classes
        self.pos_label_ = pos_label
        self.pos_columns_ = np.asarray(cols, dtype=np.intp)
        self.class_columns_ = table
        self._feature_subsets = getattr(container, "estimators_features_", None)
        self._in_container = container is not None
        scores, n_clipped = self._moments(X)
        self.clipped_fraction_ = n_clipped / (scores.shape[0] * self.class_columns_.shape[1])
        return scores

    def transform(self, X):
        """Second-order scores ``(m, sigma2)`` of the ensemble at ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            Raw features.

        Returns
        -------
        ndarray of shape (n_samples, 2) or (n_samples, 2 * n_classes)
            Columns ``m`` in [0, 1] and ``sigma2`` in ``[0, m (1 - m)]`` (a DataFrame with
            columns ``"m"``, ``"sigma2"`` after ``set_output(transform="pandas")``); for the
            moments of every class the k means, then the k variances (names
            ``m[c]``, ``sigma2[c]``).
        """
        check_is_fitted(self)
        _check_2d(X)
        validate_data(self, X, reset=False, skip_check_array=True)
        return self._moments(X)[0]

    def _moments(self, X):
        subsets = self._feature_subsets
        X_plain = X
        if self._in_container:
            # forests and bagging fit their members on validated arrays: a member fitted without
            # column names gets an array (a member that saw names, e.g. in a VotingClassifier,
            # keeps the DataFrame); scipy sparse input supports the same column indexing
            if hasattr(X, "iloc"):
                X_plain = X.to_numpy()
            elif not hasattr(X, "shape"):
                X_plain = np.asarray(X)
        cols = self.class_columns_
        mean = None
        m2 = None
        for j, mem in enumerate(self.members_):
            if subsets is not None:
                Xj = X_plain[:, subsets[j]]
            elif self._in_container and not hasattr(mem, "feature_names_in_"):
                Xj = X_plain
            else:
                Xj = X
            proba = np.asarray(mem.predict_proba(Xj), dtype=np.float64)
            if proba.ndim != 2:
                raise ValueError(f"Member {j} returned predict_proba of shape {proba.shape}; expected 2-d.")
            p = np.zeros((proba.shape[0], cols.shape[1]))
            seen = cols[j] >= 0
            p[:, seen] = proba[:, cols[j][seen]]
            if mean is None:
                mean = p.copy()
                m2 = np.zeros_like(p)
            else:  # Welford's update, vectorised over rows (and classes)
                delta = p - mean
                mean += delta / (j + 1)
                m2 += delta * (p - mean)
        if mean is None or mean.shape[0] == 0:
            raise ValueError("X has 0 samples; expected at least one.")
        mean = np.clip(mean, 0.0, 1.0)
        var = m2 / (self.n_members_ - 1)
        cap = mean * (1.0 - mean)
        n_clipped = int(np.count_nonzero(var > cap))
        var = np.clip(var, 0.0, cap)
        return np.concatenate([mean, var], axis=1), n_clipped

    def get_feature_names_out(self, input_features=None):
        """Return the output names: ``["m", "sigma2"]``, or ``m[c]`` then ``sigma2[c]`` per class.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output names do not depend on the input names).

        Returns
        -------
        ndarray of str
            ``["m", "sigma2"]`` for one positive class; for the moments of every class
            ``["m[c0]", ..., "m[ck]", "sigma2[c0]", ..., "sigma2[ck]"]`` with the class labels.
        """
        check_is_fitted(self)
        if self.pos_label_ is not None:
            return np.asarray(["m", "sigma2"], dtype=object)
        labels = [str(c) for c in self.classes_.tolist()]
        return np.asarray([f"m[{c}]" for c in labels] + [f"sigma2[{c}]" for c in labels], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
