"""Sech perturbation of (second-order) scores as a scikit-learn transformer.

The perturbation of *The Minimax Rate of Second-Order Calibration*: a score ``s`` in
``[a, b]`` is replaced by a draw from the density ``sech((t - s) / h) / Z(s, h)`` on ``[a, b]``.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from skcal._compat import check_is_fitted, fit_context, validate_data
from skcal._constraints import BANDWIDTH, OUT_OF_BOUNDS, RANDOM_STATE
from skcal._validation import SIGMA2_MAX, as_float_array, check_range, check_scores, reject_strings
from skcal.sech import sech_pdf, sech_ppf, uniform_draws
from skcal.votes import check_class_scores, flat_class_scores

__all__ = ["SechPerturber"]

#: The box the scores live in, per column: m on [0, 1], sigma2 on [0, 1/4].
_BOUNDS = ((0.0, 1.0), (0.0, SIGMA2_MAX))
_DEFAULT_NAMES = ("m", "sigma2")


class SechPerturber(TransformerMixin, BaseEstimator):
    """Perturb scores with the truncated sech kernel of bandwidth ``h``.

    A one-column score ``m`` is perturbed on ``[0, 1]``; second-order scores ``(m, sigma2)``
    are perturbed coordinate-wise and independently on the rectangle ``[0, 1] x [0, 1/4]``,
    each coordinate with the same bandwidth ``h`` (in the units of the score). A perturbed
    score stays in the rectangle but may leave the feasible region ``sigma2 <= m (1 - m)``.

    k-class scores, in the ``(n, 2k)`` layout of :class:`~skcal.EnsembleMoments` (the k means,
    then the k variances) or as an ``(n, k, 2)`` array (returned in the same layout), are
    perturbed class by class: the pair ``(m[c], sigma2[c])`` of class ``c`` gets exactly the draw
    that perturbing the ``(n, 2)`` scores of its one-vs-rest task would give (with an int
    ``random_state`` the generator is seeded from the pair's own values), so a k-class chain
    reproduces the binary chain of every class. The perturbed means need not sum to 1.
    The perturbed predictor is the one that is deployed, measured and recalibrated: put this
    transformer in front of :class:`~skcal.SecondOrderPlattCalibrator` in a pipeline, and use
    the same bandwidth when estimating CE2.

    Parameters
    ----------
    bandwidth : float, default=2**-6
        The bandwidth ``h > 0`` of the sech kernel. The kernel is implemented accurately for
        ``h`` from ``2**-10`` to ``1/4`` (and beyond); a subnormal ``h`` (below about
        ``2.2e-308``) is rejected.
    random_state : int, RandomState instance or None, default=None
        The only source of randomness.

        - ``int``: each call of :meth:`transform` draws from a generator seeded with the pair
          (``random_state``, a hash of the validated input array), so the same input always
          gets the same perturbation (``GridSearchCV`` and ``cross_val_score`` are
          reproducible), while different inputs (e.g. a training and a test fold of equal
          size) get independent noise rather than the same uniforms.
        - ``RandomState`` instance: drawn from and advanced, so repeated calls differ.
        - ``None``: fresh noise from numpy's global RandomState, as a deployed randomised
          predictor does.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Scores outside the box raise a ``ValueError`` by default; ``"clip"`` clips them to the
        box first.
    bounds : None, pair of floats or sequence of pairs, default=None
        The box. ``None`` is the convention of *Minimax Rate*: one column ``m`` on ``[0, 1]``, two
        columns ``(m, sigma2)`` on ``[0, 1] x [0, 1/4]``, or ``2k`` columns (``k >= 2``) of k-class
        scores (any other number of columns is an error).
        A pair ``(lo, hi)`` perturbs every column, however many, independently on ``[lo, hi]``; a
        sequence of pairs gives one interval per column.

    Attributes
    ----------
    n_features_in_ : int
        1 (``m`` alone), 2 (``m``, ``sigma2``) or ``2k`` (k-class scores) with the default
        ``bounds``.
    bounds_ : ndarray of shape (n_features_in_, 2)
        The interval of each column.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame seen in :meth:`fit`.

    See Also
    --------
    skcal.sech.sech_sample : The sampler on an arbitrary interval.
    skcal.sech.sech_pdf : The kernel density.

    Notes
    -----
    The perturbed scores are a random function of the input, so transforming a subset of the
    rows, or the rows in another order, gives other draws than transforming all rows: the
    scikit-learn checks of subset and sample-order invariance do not apply (see
    ``tests/test_perturbation.py`` for the list of expected failures and their reasons).

    The density of the perturbed score given the original one is :meth:`density`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import SechPerturber
    >>> scores = np.array([[0.2, 0.01], [0.9, 0.05], [1.0, 0.0]])
    >>> pert = SechPerturber(bandwidth=2**-6, random_state=0)
    >>> out = pert.fit_transform(scores)
    >>> out.shape
    (3, 2)
    >>> bool(np.all(np.abs(out - scores) < 0.2))
    True
    >>> bool(np.array_equal(out, pert.transform(scores)))  # same input, same draw
    True
    >>> pert.get_feature_names_out().tolist()
    ['m', 'sigma2']
    """

    _parameter_constraints: dict = {
        "bandwidth": BANDWIDTH,
        "random_state": RANDOM_STATE,
        "out_of_bounds": OUT_OF_BOUNDS,
        "bounds": [None, "array-like"],
    }

    def __init__(self, *, bandwidth=2**-6, random_state=None, out_of_bounds="raise", bounds=None):
        self.bandwidth = bandwidth
        self.random_state = random_state
        self.out_of_bounds = out_of_bounds
        self.bounds = bounds

    def _resolve_bounds(self, n_features):
        if self.bounds is None:
            if n_features not in (1, 2) and (n_features < 4 or n_features % 2):
                raise ValueError(
                    f"X (scores) must have 1 column (m), 2 columns (m, sigma2) or 2k columns (k-class "
                    f"scores: the k means, then the k variances); got {n_features} columns. Pass "
                    "bounds=(lo, hi) to perturb other bounded features."
                )
            if n_features >= 4:
                k = n_features // 2
                return np.array([_BOUNDS[0]] * k + [_BOUNDS[1]] * k, dtype=np.float64)
            return np.array(_BOUNDS[:n_features], dtype=np.float64)
        try:  # complex or string bounds are as wrong as a wrong shape
            b = as_float_array(self.bounds, "bounds", ensure_non_empty=False)
        except ValueError:
            b = np.empty(0)
        if b.shape == (2,):
            b = np.tile(b, (n_features, 1))
        if b.shape != (n_features, 2):
            raise ValueError(
                f"bounds must be a pair (lo, hi) or one pair per column ({n_features} pairs); got "
                f"{self.bounds!r}."
            )
        if not np.isfinite(b).all() or not (b[:, 0] < b[:, 1]).all():
            raise ValueError(f"bounds must be finite pairs with lo < hi; got {self.bounds!r}.")
        return b

    def _check_scores(self, X, *, reset):
        reject_strings(X, "X (scores)")
        if self.bounds is None and np.ndim(X) == 3:  # (n, k, 2) k-class scores
            X = flat_class_scores(check_class_scores(X, name="X (scores)", out_of_bounds=self.out_of_bounds))
        X = validate_data(self, X, reset=reset, dtype=np.float64, ensure_min_samples=1)
        bounds = self._resolve_bounds(X.shape[1]) if reset else self.bounds_
        if self.bounds is None:
            if X.shape[1] >= 4:
                S = check_class_scores(X, name="X (scores)", out_of_bounds=self.out_of_bounds)
                return flat_class_scores(S), bounds
            return check_scores(X, name="X (scores)", out_of_bounds=self.out_of_bounds), bounds
        X = X.copy()
        for j, (lo, hi) in enumerate(bounds):  # bounds=: the box each column must lie in
            X[:, j] = check_range(X[:, j], f"X[:, {j}] (bounds)", lo, hi, out_of_bounds=self.out_of_bounds)
        return X, bounds

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate the scores and record their number of columns. Nothing is learned.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1) or (n_samples, 2)
            Scores ``m`` or ``(m, sigma2)``.
        y : None
            Ignored.

        Returns
        -------
        SechPerturber
            The fitted transformer (``self``).
        """
        _, self.bounds_ = self._check_scores(X, reset=True)
        return self

    def _generator(self, S):
        rs = self.random_state
        if isinstance(rs, numbers.Integral):
            digest = hashlib.blake2b(np.ascontiguousarray(S).tobytes(), digest_size=16)
            digest.update(repr(S.shape).encode())
            words = np.frombuffer(digest.digest(), dtype=np.uint32).tolist()
            return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(rs), *words])))
        return check_random_state(rs)

    def transform(self, X):
        """Draw one perturbed score per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Scores ``m`` in [0, 1] (and ``sigma2`` in [0, 1/4]).

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The perturbed scores, inside the box (a DataFrame after ``set_output("pandas")``).
        """
        check_is_fitted(self)
        three_d = self.bounds is None and np.ndim(X) == 3
        S, bounds = self._check_scores(X, reset=False)
        if self.bounds is None and S.shape[1] >= 4:
            # class by class, each pair (m[c], sigma2[c]) as the binary scores of its task
            k = S.shape[1] // 2
            out = np.empty_like(S)
            for c in range(k):
                out[:, [c, k + c]] = self._perturb(S[:, [c, k + c]], bounds[[c, k + c]])
            return check_class_scores(out) if three_d else out
        return self._perturb(S, bounds)

    def _perturb(self, S, bounds):
        u = uniform_draws(self._generator(S), S.shape)
        out = np.empty_like(S)
        for j, (lo, hi) in enumerate(bounds):
            out[:, j] = sech_ppf(u[:, j], S[:, j], self.bandwidth, lo, hi)
        return out

    def density(self, T, S):
        """Density of the perturbed score ``T`` given the original score ``S``.

        The product over coordinates of :func:`skcal.sech.sech_pdf` on each column's interval
        (``[0, 1]`` for ``m`` and ``[0, 1/4]`` for ``sigma2`` with the default ``bounds``).
        Needs no fit.

        Parameters
        ----------
        T : array-like of shape (..., d)
            Perturbed scores; the density is 0 outside the box.
        S : array-like of shape (..., d)
            Original scores inside the box, broadcast against ``T`` (so
            ``density(T[:, None, :], S[None, :, :])`` is a kernel matrix).

        Returns
        -------
        ndarray
            The density, of the broadcast shape of ``T`` and ``S`` without the last axis.

        Examples
        --------
        >>> import numpy as np
        >>> from skcal import SechPerturber
        >>> d = SechPerturber(bandwidth=0.25).density([[0.5, 0.1]], [[0.5, 0.1]])
        >>> d.shape
        (1,)
        """
        self._validate_params()
        T = as_float_array(T, "T", ensure_non_empty=False)
        S = as_float_array(S, "S", ensure_non_empty=False)
        if T.ndim == 0 or S.ndim == 0 or T.shape[-1] != S.shape[-1]:
            raise ValueError(
                "T and S must be arrays with the same last axis (one entry per score column); got "
                f"shapes {T.shape} and {S.shape}."
            )
        bounds = self._resolve_bounds(T.shape[-1])
        dens = 1.0
        for j, (lo, hi) in enumerate(bounds):
            dens = dens * sech_pdf(T[..., j], S[..., j], self.bandwidth, lo, hi)
        return np.asarray(dens)

    def get_feature_names_out(self, input_features=None):
        """Output names: the input column names if known, else ``"m"`` (and ``"sigma2"``).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Must match ``feature_names_in_`` if that is defined.

        Returns
        -------
        ndarray of str
            One name per column of the output.
        """
        check_is_fitted(self, "n_features_in_")
        names = getattr(self, "feature_names_in_", None)
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            if len(input_features) != self.n_features_in_:
                raise ValueError(
                    f"input_features has {len(input_features)} names; expected {self.n_features_in_}."
                )
            if names is not None and not np.array_equal(input_features, names):
                raise ValueError("input_features is not equal to feature_names_in_.")
            return input_features
        if names is not None:
            return np.asarray(names, dtype=object)
        if self.bounds is None:
            if self.n_features_in_ >= 4:
                k = self.n_features_in_ // 2
                names = [f"m[{c}]" for c in range(k)] + [f"sigma2[{c}]" for c in range(k)]
                return np.asarray(names, dtype=object)
            return np.asarray(_DEFAULT_NAMES[: self.n_features_in_], dtype=object)
        return np.asarray([f"x{j}" for j in range(self.n_features_in_)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = not isinstance(self.random_state, numbers.Integral)
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.input_tags.allow_nan = False
        return tags
