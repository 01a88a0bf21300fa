"""Soft-bin rounding and robust decisions, from *Testable and Actionable Calibration for Full Swap Regret*.

The randomized rounding ``tau_m(p)`` moves ``p`` to one of its two neighbouring grid points
``i/m`` with probability ``w_i(p) = max(0, 1 - |m p - i|)``, so ``E[tau_m(p)] = p``. A decision
maker with utility ``U[action, label]`` who best-responds to the rounded prediction,
``a = r(tau_m(p))``, has swap regret at most ``2 SCDL_m + 2/m`` (utilities in [0, 1]); with the
grid chosen so that ``SCDL in [1/m, 2/m)`` that is at most ``4 SCDL``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import ClassifierTags, check_random_state

from skcal._compat import StrOptions, check_is_fitted, fit_context, validate_data, validate_params
from skcal._constraints import N_BINS, OUT_OF_BOUNDS, POS_LABEL, SAMPLE_WEIGHT, SCDL_MAX_BINS
from skcal._validation import (
    as_float_array,
    binary_labels,
    check_binary_probabilities,
    check_consistent_length,
    check_probabilities,
    check_sample_weight,
    label_array,
    reject_strings,
)
from skcal.binning import hat_neighbours
from skcal.stats import ScdlStatistics, scdl_on_grid, scfdl

__all__ = [
    "SoftBinRounder",
    "expected_swap_regret",
    "soft_bin_weights",
    "swap_regret",
]


@validate_params(
    {
        "y_prob": ["array-like"],
        "n_bins": N_BINS,
        "dense": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def soft_bin_weights(y_prob, n_bins, *, dense=False):
    """Triangular soft-bin weights ``w_i(p) = max(0, 1 - |m p - i|)`` on ``{0, 1/m, ..., 1}``.

    Each prediction has at most two non-zero weights (on its neighbouring grid points), so by
    default only those are returned: memory is linear in ``n`` whatever ``m``.

    Parameters
    ----------
    y_prob : array-like of shape (n,), (n, 1) or (n, 2)
        Probabilities in [0, 1] (or ``predict_proba`` output, column 1 is used).
    n_bins : int
        The grid size ``m >= 1`` (the grid has ``m + 1`` points).
    dense : bool, default=False
        Return the full ``(n, m + 1)`` matrix instead (for small problems).

    Returns
    -------
    index : ndarray of shape (n, 2), int
        The neighbouring grid indices ``lo`` and ``lo + 1`` (``lo`` in ``0..m-1``). Only when
        ``dense=False``.
    weights : ndarray of shape (n, 2) or (n, m + 1)
        The weights on ``index`` (rows sum to one), or the dense matrix when ``dense=True``.

    Examples
    --------
    >>> index, weights = soft_bin_weights([0.3, 1.0], 4)
    >>> index.tolist(), weights.round(2).tolist()
    ([[1, 2], [3, 4]], [[0.8, 0.2], [0.0, 1.0]])
    >>> soft_bin_weights([0.3], 4, dense=True).round(2).tolist()
    [[0.0, 0.8, 0.2, 0.0, 0.0]]
    """
    m = int(n_bins)  # validated by validate_params (N_BINS)
    p = check_probabilities(y_prob)
    lo, frac = hat_neighbours(p, m)
    if dense:
        W = np.zeros((p.shape[0], m + 1))
        rows = np.arange(p.shape[0])
        W[rows, lo] = 1.0 - frac
        W[rows, lo + 1] += frac
        return W
    return np.column_stack([lo, lo + 1]), np.column_stack([1.0 - frac, frac])


def _check_utility(utility):
    # as_float_array: a fresh float64 copy; complex values and strings (even numeric) refused
    U = as_float_array(utility, "utility")
    if U.ndim != 2 or U.shape[1] != 2 or U.shape[0] < 1:
        raise ValueError(
            "utility must have shape (n_actions, 2): U[action, label] for labels 0 and 1; "
            f"got shape {U.shape}."
        )
    if not np.isfinite(U).all():
        raise ValueError("utility contains NaN or infinity; expected finite utilities.")
    return U


@validate_params({"q": ["array-like"], "utility": ["array-like"]}, prefer_skip_nested_validation=True)
def best_response(q, utility):
    """Best response ``r(q) = argmax_a q U[a, 1] + (1 - q) U[a, 0]`` (ties: the lowest action).

    Parameters
    ----------
    q : array-like of float
        Probabilities of label 1.
    utility : array-like of shape (n_actions, 2)
        ``U[action, label]``.

    Returns
    -------
    ndarray of int
        The best action per entry of ``q``.

    Examples
    --------
    >>> best_response([0.2, 0.8], [[1, 0], [0, 1]]).tolist()
    [0, 1]
    """
    U = _check_utility(utility)
    q = np.asarray(q, dtype=np.float64)
    return np.argmax(q[..., None] * U[:, 1] + (1.0 - q[..., None]) * U[:, 0], axis=-1)


def _action_label_mass(actions, y, w, n_actions):
    """``N[a, y] = sum_s P(a | s) w_s 1[y_s = y] / sum w`` for actions or action probabilities."""
    n = y.shape[0]
    wt = np.ones(n) if w is None else w
    if actions.ndim == 1:
        N = np.bincount(actions * 2 + y.astype(np.intp), weights=wt, minlength=2 * n_actions)
        return N.reshape(n_actions, 2) / wt.sum()
    N = np.stack(
        [(actions * (wt * (1 - y))[:, None]).sum(axis=0), (actions * (wt * y)[:, None]).sum(axis=0)], 1
    )
    return N / wt.sum()


def _swap_regret_from_mass(N, U):
    # gain[a, b]: expected gain of playing b whenever a was played.
    gain = N[:, :1] * (U[None, :, 0] - U[:, None, 0]) + N[:, 1:] * (U[None, :, 1] - U[:, None, 1])
    return float(np.maximum(gain.max(axis=1), 0.0).sum())


@validate_params(
    {
        "y_true": ["array-like"],
        "actions": ["array-like"],
        "utility": ["array-like"],
        "sample_weight": SAMPLE_WEIGHT,
        "pos_label": POS_LABEL,
    },
    prefer_skip_nested_validation=True,
)
def swap_regret(y_true, actions, utility, *, sample_weight=None, pos_label=None):
    """Exact swap regret of played actions on a sample.

    ``SR = max over maps sigma: A -> A of mean_s [U(sigma(a_s), y_s) - U(a_s, y_s)]``; the best
    map picks, for each action ``a`` separately, the deviation maximising the summed gain over
    the samples that played ``a``. For a randomized rule pass the probabilities of each action
    per sample (rows of an ``(n, n_actions)`` matrix); the deviation is then applied to the
    realised action, so the result is the expected swap regret over the randomization.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    actions : array-like of shape (n,) of int, or (n, n_actions)
        The action played per sample (``0..n_actions-1``), or its probability distribution.
    utility : array-like of shape (n_actions, 2)
        ``U[action, label]``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Returns
    -------
    float
        The swap regret.

    Examples
    --------
    >>> U = [[1, 0], [0, 1]]                    # guess the label
    >>> swap_regret([1, 1, 0, 1], [0, 0, 0, 1], U)   # switching action 0 -> 1 gains 1/4
    0.25
    """
    U = _check_utility(utility)
    y = binary_labels(y_true, pos_label, "y_true")
    if hasattr(actions, "to_numpy"):
        actions = actions.to_numpy()
    A = np.asarray(actions)
    if A.ndim == 1:
        if A.dtype.kind == "f" and np.all(np.isfinite(A)) and np.all(A == np.round(A)):
            A = A.astype(np.intp)
        if A.dtype.kind not in "iu" or A.size == 0 or A.min() < 0 or A.max() >= U.shape[0]:
            raise ValueError(
                f"actions must hold integer action indices in 0..{U.shape[0] - 1} (one per row of utility)."
            )
        A = A.astype(np.intp)
    elif A.ndim == 2:
        A = A.astype(np.float64)
        if A.shape[1] != U.shape[0]:
            raise ValueError(
                f"actions has {A.shape[1]} columns; expected {U.shape[0]} (one per row of utility)."
            )
        if not np.isfinite(A).all() or (A < 0).any() or np.abs(A.sum(axis=1) - 1).max() > 1e-6:
            raise ValueError("actions given as a matrix must hold probability rows (non-negative, sum 1).")
    else:
        raise ValueError(f"actions must be 1- or 2-dimensional; got shape {A.shape}.")
    check_consistent_length(y_true=y, actions=A)
    w = check_sample_weight(sample_weight, y.shape[0])
    return _swap_regret_from_mass(_action_label_mass(A, y, w, U.shape[0]), U)


def _rounded_action_mass(p, y, w, m, U):
    responses = best_response(np.arange(m + 1) / m, U)
    lo, frac = hat_neighbours(p, m)
    wt = np.ones(p.shape[0]) if w is None else w
    yi = y.astype(np.intp)
    A = U.shape[0]
    N = np.bincount(responses[lo] * 2 + yi, weights=wt * (1 - frac), minlength=2 * A)
    N += np.bincount(responses[lo + 1] * 2 + yi, weights=wt * frac, minlength=2 * A)
    return N.reshape(A, 2) / wt.sum()


@validate_params(
    {
        "y_true": ["array-like"],
        "y_prob": ["array-like"],
        "utility": ["array-like"],
        "n_bins": N_BINS,
        "sample_weight": SAMPLE_WEIGHT,
        "pos_label": POS_LABEL,
    },
    prefer_skip_nested_validation=True,
)
def expected_swap_regret(y_true, y_prob, utility, n_bins, *, sample_weight=None, pos_label=None):
    """Exact expected swap regret of ``a = r(tau_m(p))`` over the randomized rounding.

    Sample ``s`` plays action ``a`` with probability ``sum_i w_i(p_s) 1[r(i/m) = a]``; the swap
    regret of this randomized rule (deviations applied per realised action) is computed exactly from
    those probabilities, in ``O(n + n_actions^2)``. By the bound of *Full Swap Regret*, for
    utilities in [0, 1] it is at most ``2 SCDL_m + 2/m`` on every sample.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_prob : array-like of shape (n,) or (n, 2)
        Probabilities of the positive class, or ``predict_proba`` output.
    utility : array-like of shape (n_actions, 2)
        ``U[action, label]``.
    n_bins : int
        The rounding grid ``m >= 1``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative sample weights.
    pos_label : int, float, bool or str, default=None
        The positive class.

    Returns
    -------
    float
        The expected swap regret.

    Examples
    --------
    >>> import numpy as np
    >>> U = [[1, 0], [0, 1]]
    >>> expected_swap_regret([0, 1], [0.0, 1.0], U, n_bins=4)   # calibrated and sharp
    0.0
    """
    U = _check_utility(utility)
    m = int(n_bins)  # validated by validate_params (N_BINS)
    y, p, w = check_binary_probabilities(y_true, y_prob, pos_label=pos_label, sample_weight=sample_weight)
    return _swap_regret_from_mass(_rounded_action_mass(p, y, w, m, U), U)


def _greater_label(y):
    """The positive class of a two-class ``y``: the greater label, as ``predict_proba`` orders them.

    The labels are read as the validation reads them (:func:`skcal._validation.label_array`:
    object arrays of numbers become numbers, missing labels are an error naming ``y``).
    """
    y = label_array(y, "y")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.size == 0 or (y.dtype.kind == "f" and not np.isfinite(y).all()):
        return None  # let the validation report the problem
    classes = np.unique(y)
    return classes[1].item() if classes.size == 2 else None


class SoftBinRounder(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Randomized, expectation-preserving rounding of probabilities to an SCDL-selected grid.

    ``fit`` chooses the dyadic grid ``{0, 1/m, ..., 1}`` whose ``m`` brackets the SCDL of the
    fitting data, ``SCDL in [1/m, 2/m)`` (or uses a given ``n_bins``); ``transform`` rounds each
    probability to one of its two neighbouring grid points with the soft-bin weights, which
    preserves its expectation; ``decide`` best-responds to the rounded prediction, which keeps
    the swap regret of every bounded decision task below ``2 SCDL_m + 2/m <= 4 SCDL``.

    Parameters
    ----------
    n_bins : "auto" or int, default="auto"
        ``"auto"`` selects the dyadic grid by the SCDL search (needs ``y`` in ``fit``); an
        integer ``m >= 1`` fixes the grid (any integer, not only powers of two).
    max_bins : {"auto", "theory"}, int or None, default="auto"
        Grid rule of the dyadic search (see :func:`skcal.scdl.scdl_curve`): ``"auto"`` searches
        up to the smallest power of two ``>= 4 sqrt(T)``, ``"theory"`` applies the rate
        theorem's ``m ln(m) <= sqrt(T)``, an integer caps the search.
    random_state : int, RandomState instance or None, default=None
        Source of the rounding randomness, drawn in ``transform`` and ``decide`` (not in
        ``fit``). An integer re-seeds every call, so the same input is rounded the same way on
        every call and ``decide(X, U)`` equals the best response to ``transform(X)``; a
        ``RandomState`` instance is advanced by each call; ``None`` uses numpy's global state.
        One uniform draw is consumed per sample.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Probabilities outside [0, 1] raise a ``ValueError``; ``"clip"`` clips them (as
        :class:`~sklearn.isotonic.IsotonicRegression` does), and also accepts two-column input
        whose rows do not sum to one (column 1 is used). ``"clip"`` exists mostly so that
        scikit-learn's common estimator checks, which feed arbitrary real numbers, can exercise
        the rest of the estimator.

    Attributes
    ----------
    n_bins_ : int
        The grid size ``m`` used for rounding.
    scdl_ : float
        SCDL of the fitting data (NaN when fitted without ``y``).
    scdl_n_bins_ : float
        ``SCDL_m`` of the fitting data at ``m = n_bins_`` (NaN without ``y``).
    swap_regret_bound_ : float
        ``2 scdl_n_bins_ + 2 / n_bins_``: the bound on the swap regret (utilities in [0, 1])
        of ``decide`` on the fitting distribution.
    bin_weights_ : ndarray of shape (n_bins_ + 1,)
        ``pi_i`` on the selected grid (NaN without ``y``).
    bin_means_ : ndarray of shape (n_bins_ + 1,)
        ``q_i`` on the selected grid (NaN for empty bins or without ``y``).
    curve_ : SCDLCurve or None
        The full SCDL search (None without ``y``).
    n_features_in_ : int
        1 (probabilities) or 2 (``predict_proba`` output).

    Notes
    -----
    ``X`` holds probabilities of the positive class: shape (n,), (n, 1), or (n, 2) as returned
    by ``predict_proba`` (rows summing to one; column 1 is the positive class). ``transform``
    returns an array with the same number of columns (1, or 2 as ``[1 - r, r]``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import SoftBinRounder
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=4000)
    >>> y = (rng.uniform(size=4000) < p).astype(int)
    >>> rounder = SoftBinRounder(random_state=0).fit(p, y)
    >>> rounder.n_bins_, 1 / rounder.n_bins_ <= rounder.scdl_ < 2 / rounder.n_bins_
    (256, True)
    >>> r = rounder.transform(p)
    >>> sorted(set((r[:, 0] * 256).round(6).tolist())) == list(range(257))
    True
    >>> SoftBinRounder(max_bins="theory").fit(p, y).n_bins_   # the theorem's cap: m ln m <= sqrt(4000)
    16
    >>> U = [[1.0, 0.0], [0.0, 1.0]]            # predict the label
    >>> rounder.decide([0.1, 0.9], U).tolist()
    [0, 1]
    """

    _parameter_constraints: dict = {
        "n_bins": [StrOptions({"auto"}), *N_BINS],
        "max_bins": SCDL_MAX_BINS,
        "random_state": ["random_state"],
        "out_of_bounds": OUT_OF_BOUNDS,
    }

    def __init__(self, *, n_bins="auto", max_bins="auto", random_state=None, out_of_bounds="raise"):
        self.n_bins = n_bins
        self.max_bins = max_bins
        self.random_state = random_state
        self.out_of_bounds = out_of_bounds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X is one probability column (or predict_proba's two); 1-D input is accepted too,
        # but the common checks must see 2-D arrays, so one_d_array stays False.
        tags.input_tags.two_d_array = True
        # y holds binary labels. scikit-learn has no target tag for "binary only"; the
        # classifier tag multi_class=False says exactly that and makes the common checks feed
        # two-class targets.
        tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.target_tags.required = self.n_bins == "auto"
        tags.non_deterministic = self.random_state is None
        return tags

    def _validate_X(self, X, reset):
        # 1-D input (list, array, Series) is one probability column; a DataFrame keeps its
        # feature names, and anything else is left to validate_data.
        if hasattr(X, "to_numpy") and not hasattr(X, "columns"):
            X = X.to_numpy()
        reject_strings(X, "X")  # validate_data would turn numeric strings into floats silently
        if isinstance(X, (list, tuple, np.ndarray)) and np.asarray(X).ndim == 1:
            X = np.asarray(X).reshape(-1, 1)
        X = validate_data(self, X, reset=reset, dtype=np.float64)
        if X.shape[1] not in (1, 2):
            raise ValueError(
                "X must hold positive-class probabilities: shape (n,), (n, 1), or (n, 2) as "
                f"returned by predict_proba; got {X.shape[1]} columns."
            )
        return check_probabilities(X, name="X", out_of_bounds=self.out_of_bounds)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Select the grid (SCDL search on ``(X, y)``) or fix it to ``n_bins``.

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        y : array-like of shape (n,), default=None
            Labels of two classes; required when ``n_bins="auto"``. The greater label is the
            positive class (the class of ``predict_proba``'s column 1); a single class must be
            written as 0/1 or booleans.
        sample_weight : array-like of shape (n,), default=None
            Weights of the SCDL search (unused when ``y`` is None).

        Returns
        -------
        SoftBinRounder
            The fitted rounder.
        """
        p = self._validate_X(X, reset=True)
        if y is None:
            if self.n_bins == "auto":
                raise ValueError(
                    "SoftBinRounder(n_bins='auto') requires y to be passed, but the target y is None: "
                    "the labels select the grid by SCDL. Pass y, or fix the grid with an integer n_bins."
                )
            check_sample_weight(sample_weight, p.shape[0])  # validated, though unused without y
            self.n_bins_ = int(self.n_bins)
            self.scdl_ = self.scdl_n_bins_ = self.swap_regret_bound_ = float("nan")
            self.bin_weights_ = np.full(self.n_bins_ + 1, np.nan)
            self.bin_means_ = np.full(self.n_bins_ + 1, np.nan)
            self.curve_ = None
            return self
        yb, p, w = check_binary_probabilities(
            y, p, pos_label=_greater_label(y), sample_weight=sample_weight, y_true_name="y", y_prob_name="X"
        )
        curve = ScdlStatistics.curve_validated(yb, p, w, max_bins=self.max_bins)
        self.curve_ = curve
        self.scdl_ = curve.scdl
        self.n_bins_ = curve.selected_n_bins if self.n_bins == "auto" else int(self.n_bins)
        self.scdl_n_bins_, pi, a = scdl_on_grid(p, yb, w, self.n_bins_)
        self.swap_regret_bound_ = 2 * self.scdl_n_bins_ + 2 / self.n_bins_
        self.bin_weights_ = pi
        with np.errstate(invalid="ignore", divide="ignore"):
            self.bin_means_ = np.where(pi > 0, a / np.where(pi > 0, pi, 1.0), np.nan)
        return self

    def fit_statistics(self, stats):
        """Fit from accumulated SCDL statistics instead of arrays (for data that do not fit in memory).

        Equals :meth:`fit` on all the rows folded into ``stats``. The fitted rounder takes
        one-column input (``n_features_in_ = 1``).

        Parameters
        ----------
        stats : skcal.stats.ScdlStatistics
            Statistics of the fitting rows. With ``n_bins="auto"`` the search runs up to
            ``min(rule(T), stats.max_bins)``; an integer ``n_bins`` must be a power of two not
            above ``stats.max_bins`` (the grids the statistics can fold to exactly).

        Returns
        -------
        SoftBinRounder
            The fitted rounder.
        """
        self._validate_params()
        if not isinstance(stats, ScdlStatistics):
            raise TypeError(f"stats must be a skcal.stats.ScdlStatistics; got {type(stats).__name__}.")
        curve = stats.curve(self.max_bins)
        if self.n_bins == "auto":
            m = curve.selected_n_bins
        else:
            m = int(self.n_bins)
            if m < 2 or m & (m - 1) or m > stats.max_bins:
                raise ValueError(
                    f"n_bins={m} cannot be folded from statistics with max_bins={stats.max_bins}: "
                    "with fit_statistics, n_bins must be a power of two between 2 and max_bins."
                )
        pi, a = stats.grid_masses(m)
        self.curve_ = curve
        self.scdl_ = curve.scdl
        self.n_bins_ = m
        self.scdl_n_bins_ = float(scfdl(pi, a).max())
        self.swap_regret_bound_ = 2 * self.scdl_n_bins_ + 2 / m
        self.bin_weights_ = pi
        with np.errstate(invalid="ignore", divide="ignore"):
            self.bin_means_ = np.where(pi > 0, a / np.where(pi > 0, pi, 1.0), np.nan)
        self.n_features_in_ = 1
        return self

    def score(self, X, y, sample_weight=None):
        """Negated swap-regret bound of :meth:`decide` on ``(X, y)``: ``-(2 SCDL_m + 2/m)``.

        ``m`` is the fitted grid ``n_bins_`` and ``SCDL_m`` is computed on ``(X, y)``. By the
        bound of *Full Swap Regret* the swap regret of ``decide`` on that sample is at most
        ``2 SCDL_m + 2/m`` for every decision task with utilities in [0, 1], so the score is a
        proper model-selection criterion for the grid:
        ``GridSearchCV(SoftBinRounder(), {"n_bins": [4, 8, 16]})`` picks the grid with the
        smallest bound on held-out data (greater is better, as scikit-learn expects).

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        y : array-like of shape (n,)
            Labels of two classes (the greater label is positive, as in :meth:`fit`).
        sample_weight : array-like of shape (n,), default=None
            Non-negative sample weights.

        Returns
        -------
        float
            ``-(2 SCDL_m + 2/m)``.
        """
        check_is_fitted(self)
        p = self._validate_X(X, reset=False)
        yb, p, w = check_binary_probabilities(
            y, p, pos_label=_greater_label(y), sample_weight=sample_weight, y_true_name="y", y_prob_name="X"
        )
        scdl_m, _, _ = scdl_on_grid(p, yb, w, self.n_bins_)
        return -(2.0 * scdl_m + 2.0 / self.n_bins_)

    def _sample_grid_index(self, p):
        lo, frac = hat_neighbours(p, self.n_bins_)
        rng = check_random_state(self.random_state)
        return lo + (rng.uniform(size=p.shape[0]) < frac)

    def transform(self, X):
        """Round each probability at random to a neighbouring grid point, preserving its mean.

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.

        Returns
        -------
        ndarray of shape (n, 1) or (n, 2)
            The rounded probabilities; ``[1 - r, r]`` for two-column input.
        """
        check_is_fitted(self)
        p = self._validate_X(X, reset=False)
        r = self._sample_grid_index(p) / self.n_bins_
        if self.n_features_in_ == 2:
            return np.column_stack([1.0 - r, r])
        return r[:, None]

    def predict_weights(self, X, *, dense=False):
        """The soft-bin weights of ``X`` on the fitted grid (see :func:`soft_bin_weights`).

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        dense : bool, default=False
            Return the full ``(n, n_bins_ + 1)`` matrix.

        Returns
        -------
        tuple of ndarray or ndarray
            ``(index, weights)``, or the dense matrix.
        """
        check_is_fitted(self)
        p = self._validate_X(X, reset=False)
        return soft_bin_weights(p, self.n_bins_, dense=dense)

    def grid_responses(self, utility):
        """Best response ``r(i/m)`` to every grid point ``i = 0..m`` for ``U[action, label]``.

        Parameters
        ----------
        utility : array-like of shape (n_actions, 2)
            ``U[action, label]``.

        Returns
        -------
        ndarray of shape (n_bins_ + 1,)
            The action per grid point.
        """
        check_is_fitted(self)
        return best_response(np.arange(self.n_bins_ + 1) / self.n_bins_, utility)

    def decide(self, X, utility):
        """Robust actions ``r(tau_m(p))``: best responses to the randomly rounded predictions.

        Uses the same random draws as :meth:`transform` (so with an integer ``random_state``,
        ``decide(X, U)`` is the best response to ``transform(X)``).

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        utility : array-like of shape (n_actions, 2)
            ``U[action, label]``; ties are broken towards the lowest action index.

        Returns
        -------
        ndarray of shape (n,)
            The action index per sample.
        """
        responses = self.grid_responses(utility)
        p = self._validate_X(X, reset=False)
        return responses[self._sample_grid_index(p)]

    def decide_proba(self, X, utility):
        """Exact distribution of the robust action per sample, shape (n, n_actions).

        ``P(a | p) = sum_i w_i(p) 1[r(i/m) = a]``; feed it to :func:`swap_regret` for the
        exact expected swap regret.

        Parameters
        ----------
        X : array-like of shape (n,), (n, 1) or (n, 2)
            Probabilities of the positive class, or ``predict_proba`` output.
        utility : array-like of shape (n_actions, 2)
            ``U[action, label]``.

        Returns
        -------
        ndarray of shape (n, n_actions)
            ``P(a | p)`` per sample.
        """
        responses = self.grid_responses(utility)
        n_actions = _check_utility(utility).shape[0]
        p = self._validate_X(X, reset=False)
        lo, frac = hat_neighbours(p, self.n_bins_)
        P = np.zeros((p.shape[0], n_actions))
        rows = np.arange(p.shape[0])
        P[rows, responses[lo]] += 1.0 - frac
        P[rows, responses[lo + 1]] += frac
        return P
