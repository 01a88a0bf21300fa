"""Truthful multiclass calibration errors, from *Truthful Calibration Errors for Multi-Class Prediction*.

A calibration error is *truthful* when, in expectation over the labels, it is minimised by
reporting the true conditional class probabilities. The binned squared errors here are all of
the form ``(1 / n^2) sum_b || sum_{i in b} (u_i - phi(y_i)) ||^2`` with bins chosen from the
reports alone. For fixed bins their expectation is

    E[Cal] = (1 / n^2) sum_b || sum_{i in b} (u_i - E phi(y_i)) ||^2      (bias)
           + (1 / n^2) sum_i trace Cov(phi(y_i))                           (label noise)

The bias vanishes exactly for honest reports; for a linear property (LinCE, classwise LinCE)
the noise term does not depend on the reports, so honesty minimises the expectation. For the
top-label confidence the noise term is ``(1/n^2) sum_i s_i (1 - s_i)`` with ``s_i`` the true
probability of the *reported* top class, which a predictor can lower by putting its top label on
a class whose probability is far from 1/2 (the uncorrected :func:`conf_ce` is not truthful);
:func:`truthful_conf_ce` adds ``(1/n^2) sum_i (1 - z_i)``, which turns the noise term into
``(1/n^2) sum_i (1 - s_i^2)``, decreasing in ``s_i``, so the minimiser reports the truly most
likely class with its true probability.

Conventions shared by every function of this module:

* ``y_proba`` is ``(n, k)`` with rows summing to 1 (within 1e-6), or ``(n,)`` for a binary
  problem, read as the probability of the second class (``predict_proba[:, 1]``, which is
  what scikit-learn's scorers pass for binary classifiers).
* ``y_true`` may hold any labels. Without ``labels`` the columns are the sorted distinct
  labels (integer labels already in ``range(k)`` are taken as column indices); ``labels=``
  fixes the column order as scikit-learn does, and a label outside it is an error.
* The top class is ``argmax`` with ties resolved to the lowest column index.
* Bins are computed from the reports only, with the rules of :func:`skcal.binning.assign_bins`
  (``strategy="quantile"`` by default: equal-mass bins, ties broken by sample index, computed in
  expected linear time; ``strategy="uniform"``: the edges ``linspace(0, 1, n_bins + 1)`` with
  scikit-learn's right-closed rule, so a value on an inner edge goes to the bin on its left and
  0 to the first bin -- the rule of every binned measure of skcal). Truthfulness holds for any
  rule that sees the reports only, so the truthful measures need no other edge convention.
* ``sample_weight`` ``w_i`` multiplies sample i's residual, and ``n`` becomes ``W = sum_i w_i``.
  These are *importance* weights, not frequency weights: a duplicated row would repeat its
  label, whereas the correction of :func:`truthful_conf_ce` assumes independent labels. The
  label-noise correction is therefore weighted by ``w_i^2 / W^2``, which keeps the expected
  noise term at ``(1/W^2) sum_i w_i^2 (1 - s_i^2)`` and hence keeps the measure truthful;
  with unit weights every formula is exactly the unweighted one of *Truthful Calibration Errors*.
"""

from __future__ import annotations

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._compiled import compiled
from skcal._constraints import N_BINS, RANDOM_STATE, SAMPLE_WEIGHT, Integral, StrictInterval
from skcal._docstrings import fill, sections
from skcal._validation import (
    ROW_SUM_ATOL,
    as_float_array,
    check_class_probabilities,
    check_consistent_length,
    check_multiclass_inputs,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_sample_weight,
    reject_nonfinite,
)
from skcal.binning import assign_bins, column_bin_ids, iter_columns, rank_to_bin
from skcal.stats import classwise_value, top_label_value

__all__ = [
    "truthful_conf_ce",
    "conf_ce",
    "conf_ece",
    "lince_score",
    "classwise_lince",
    "classwise_ece",
    "brier_over_k",
    "confidence_proper_loss",
    "truthful_decomposition",
]


#: The parameters the measures of this module share, described once (see :func:`skcal._docstrings.fill`).
_PARAMETERS = {
    "y_true": """y_true : array-like of shape (n,)
    True labels (any hashable class labels).""",
    "y_proba": """y_proba : array-like of shape (n, k) or (n,)
    Predicted class probabilities (rows summing to 1); a 1-D array is the probability of
    the second class of a binary problem.""",
    "n_bins": """n_bins : int, default=15
    Number of bins, from 1 to ``2**24``.""",
    "strategy": """strategy : {"quantile", "uniform"} or callable, default="quantile"
    Binning rule, see :func:`skcal.binning.assign_bins` (``"uniform"`` is right-closed:
    a value on an inner edge goes to the bin on its left, 0 to the first bin).""",
    "sample_weight": """sample_weight : array-like of shape (n,), default=None
    Importance weights (see the module docstring).""",
    "labels": """labels : array-like of shape (k,), default=None
    Class labels in column order.""",
}
_MEAN_WEIGHTS = """sample_weight : array-like of shape (n,), default=None
    Weights of the mean."""
_VALUE = """float
    The value of the measure (lower is better)."""
_PARAMETERS["returns"] = f"Returns\n-------\n{_VALUE}"
#: The Parameters and Returns sections of the binned measures and of the proper losses.
_PARAMETERS["binned_parameters"] = sections(
    _PARAMETERS, "y_true", "y_proba", "n_bins", "strategy", "sample_weight", "labels", returns=_VALUE
)
_PARAMETERS["loss_parameters"] = sections(
    _PARAMETERS, "y_true", "y_proba", "sample_weight", "labels", returns=_VALUE, sample_weight=_MEAN_WEIGHTS
)


# ----------------------------------------------------------------------------------------------
# validation and shared kernels
# ----------------------------------------------------------------------------------------------


def _top_label(P):
    """Top class (ties to the lowest index) and its reported probability."""
    r = np.argmax(P, axis=1)
    return r, P[np.arange(P.shape[0]), r]


def _compact(ids):
    """Relabel sparse bin ids (a callable may return any non-negative integers) to a dense range."""
    if ids.size and ids.max() > 4 * ids.shape[0]:
        return np.unique(ids, return_inverse=True)[1].reshape(ids.shape)
    return ids


def _sq_bin_sums(resid, ids):
    """``sum_b (sum_{i in b} resid_i)^2`` for a 1-D residual and integer bin ids."""
    sums = np.bincount(_compact(ids), weights=resid)
    return float(np.dot(sums, sums))


def _columnwise_bin_sums(resid, ids):
    """Bin sums of each column of ``resid`` (n, k) with its own ids (n, k); returns (k * nb,)."""
    n, k = resid.shape
    ids = _compact(ids)
    nb = int(ids.max()) + 1
    flat = (ids + np.arange(k)[None, :] * nb).ravel()
    return np.bincount(flat, weights=resid.ravel(), minlength=k * nb)


def _weights_or_ones(w, n):
    return np.ones(n) if w is None else w


# ----------------------------------------------------------------------------------------------
# top-label (confidence) measures
# ----------------------------------------------------------------------------------------------


_STRATEGY = [StrOptions({"quantile", "uniform"}), callable]
_LABELS = ["array-like", None]
_COMMON_CONSTRAINTS = {
    "y_true": ["array-like"],
    "y_proba": ["array-like"],
    "n_bins": N_BINS,
    "strategy": _STRATEGY,
    "sample_weight": SAMPLE_WEIGHT,
    "labels": _LABELS,
}


def _confidence_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels):
    """Top-label bin sums: ``S_b = sum_{i in b} w_i (c_i - z_i)``, ``sum_i w_i^2 (1 - z_i)``, ``W``."""
    P, codes, w = check_multiclass_inputs(y_true, y_proba, sample_weight, labels)
    n = P.shape[0]
    r = np.argmax(P, axis=1)
    c = P[np.arange(n), r]
    del P
    miss = codes != r  # 1 - z
    ids = _compact(column_bin_ids(c, int(n_bins), strategy, "confidence"))
    resid = c - 1.0
    resid[miss] = c[miss]  # c - z
    if w is None:
        sums = np.bincount(ids, weights=resid)
        return sums, float(np.count_nonzero(miss)), float(n)
    sums = np.bincount(ids, weights=w * resid)
    return sums, float(np.dot(w * w, miss)), float(w.sum())


@fill(**_PARAMETERS)
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def truthful_conf_ce(y_true, y_proba, *, n_bins=15, strategy="quantile", sample_weight=None, labels=None):
    """Corrected squared top-label calibration error ConfCE^corr (truthful; lower is better).

    With top class ``r_i = argmax p_i`` (ties to the lowest index), confidence
    ``c_i = p_i[r_i]`` and correctness ``z_i = 1[y_i = r_i]``, and bins ``b`` chosen from the
    confidences alone,

        ConfCE^corr = (1 / n^2) sum_b (sum_{i in b} (c_i - z_i))^2 + (1 / n) (1 - mean_i z_i).

    Its expectation is a non-negative bias, zero for honest reports, plus
    ``(1/n^2) sum_i (1 - q_i^2)`` where ``q_i`` is the true probability of the reported top
    class, so the expected value is minimised by reporting the true class probabilities.
    The paired proper loss is :func:`confidence_proper_loss` (see
    :func:`truthful_decomposition`).

    Parameters
    ----------
    {y_true}
    {y_proba}
    {n_bins}
    {strategy}
    sample_weight : array-like of shape (n,), default=None
        Importance weights: the squared term becomes
        ``(1/W^2) sum_b (sum_{i in b} w_i (c_i - z_i))^2`` and the correction
        ``(1/W^2) sum_i w_i^2 (1 - z_i)`` with ``W = sum_i w_i`` (see the module docstring for why
        ``w_i^2``: it keeps the measure truthful). Unit weights give the unweighted value.
    {labels}

    {returns}

    Examples
    --------
    >>> from skcal.truthful import truthful_conf_ce
    >>> y_proba = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> round(truthful_conf_ce(["a", "b", "c", "b"], y_proba, n_bins=2), 6)
    0.07875
    """
    sums, corr, W = _confidence_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    return top_label_value(sums, corr, W, "truthful_conf_ce")


@fill(**_PARAMETERS)
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def conf_ce(y_true, y_proba, *, n_bins=15, strategy="quantile", sample_weight=None, labels=None):
    """Uncorrected squared top-label calibration error ConfCE (NOT truthful; baseline).

    ``ConfCE = (1 / n^2) sum_b (sum_{i in b} (c_i - z_i))^2``, with the notation of
    :func:`truthful_conf_ce` (weighted: ``(1/W^2) sum_b (sum_{i in b} w_i (c_i - z_i))^2``).
    A predictor can lower its expectation below the honest value by moving its top label to a
    class whose true probability is far from 1/2 and reporting a flat distribution.

    {binned_parameters}

    Examples
    --------
    >>> from skcal.truthful import conf_ce
    >>> round(conf_ce([0, 1, 1, 0], [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.9, 0.1]], n_bins=2), 6)
    0.01125
    """
    sums, corr, W = _confidence_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    return top_label_value(sums, corr, W, "conf_ce")


@fill(**_PARAMETERS)
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def conf_ece(y_true, y_proba, *, n_bins=15, strategy="quantile", sample_weight=None, labels=None):
    """Binned l1 top-label calibration error ConfECE (NOT truthful; baseline).

    ``ConfECE = (1 / n) sum_b |sum_{i in b} (c_i - z_i)|`` with the notation of
    :func:`truthful_conf_ce` (weighted: ``(1/W) sum_b |sum_{i in b} w_i (c_i - z_i)|``). With
    ``strategy="uniform"`` and 15 bins this is the usual top-label ECE.

    {binned_parameters}

    Examples
    --------
    >>> from skcal.truthful import conf_ece
    >>> round(conf_ece([0, 1, 1, 0], [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.9, 0.1]], n_bins=2), 6)
    0.15
    """
    sums, corr, W = _confidence_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    return top_label_value(sums, corr, W, "conf_ece")


# ----------------------------------------------------------------------------------------------
# linear properties and classwise measures
# ----------------------------------------------------------------------------------------------


@fill(**_PARAMETERS)
@validate_params(
    {
        "u": ["array-like"],
        "phi": ["array-like"],
        "n_bins": N_BINS,
        "strategy": _STRATEGY,
        "bin_on": ["array-like", None],
        "sample_weight": SAMPLE_WEIGHT,
    },
    prefer_skip_nested_validation=True,
)
def lince_score(u, phi, *, n_bins=15, strategy="quantile", bin_on=None, sample_weight=None):
    """Binned calibration error of a linear property, LinCE (truthful; lower is better).

    ``LinCE = (1 / n^2) sum_b || sum_{i in b} (u_i - phi_i) ||_2^2`` for reports ``u_i`` of a
    linear property with statistic ``phi_i = phi(y_i)`` in R^d. For fixed bins its expectation
    is a bias (zero when ``u_i = E[phi(y_i) | x_i]``) plus ``(1/n^2) sum_i trace Cov(phi(y_i))``,
    which does not depend on the reports.

    Parameters
    ----------
    u : array-like of shape (n,) or (n, d)
        Reports (any real values).
    phi : array-like of the same shape as ``u``
        The statistic of the observed outcomes.
    {n_bins}
    strategy : {"quantile", "uniform"} or callable, default="quantile"
        Binning rule, see :func:`skcal.binning.assign_bins`. ``"uniform"`` needs the binned
        values in [0, 1].
    bin_on : array-like of shape (n,), default=None
        The one-dimensional values the binning rule sees. ``None`` bins on ``u`` itself, which
        requires ``d = 1``; for ``d > 1`` pass a function of the reports (for example one
        coordinate, or a score the reports determine) -- binning on anything that depends on
        the outcomes breaks truthfulness.
    sample_weight : array-like of shape (n,), default=None
        Importance weights ``w_i``: ``(1/W^2) sum_b || sum_{i in b} w_i (u_i - phi_i) ||^2``.

    {returns}

    Examples
    --------
    >>> from skcal.truthful import lince_score
    >>> lince_score([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], n_bins=2)
    0.02
    """
    U = as_float_array(u, "u", ndim=(1, 2))
    reject_nonfinite(U, "u")
    F = as_float_array(phi, "phi", ndim=(1, 2))
    reject_nonfinite(F, "phi")
    if U.shape != F.shape:
        raise ValueError(f"u and phi must have the same shape; got {U.shape} and {F.shape}.")
    if U.ndim == 1:
        U, F = U[:, None], F[:, None]
    n, d = U.shape
    if bin_on is None:
        if d != 1:
            raise ValueError(
                f"u has d={d} columns, so pass bin_on=: the 1-D values (a function of the reports) "
                "that the binning rule sees."
            )
        values = U[:, 0]
    else:
        values = as_float_array(bin_on, "bin_on", ndim=(1,))
        check_consistent_length(u=U, bin_on=values)
    ids = assign_bins(values, n_bins=n_bins, strategy=strategy, name="bin_on" if bin_on is not None else "u")
    w = _weights_or_ones(check_sample_weight(sample_weight, n), n)
    R = w[:, None] * (U - F)
    total = sum(_sq_bin_sums(R[:, j], ids) for j in range(d))
    return float(total / w.sum() ** 2)


def _quantile_column_sums(buf, members, column, n_bins):
    """Unweighted quantile-bin sums ``S_b = sum_{i in b} (p_i - 1[i in members])`` of one column.

    ``buf`` is a scratch contiguous copy of the column (sorted in place here), ``members`` the
    increasing row indices whose label is this column's class, ``column`` the column itself
    (read only, to order ties). The bins are those of :func:`skcal.binning.assign_bins`
    (sorted positions cut into ``array_split`` groups, ties by index) without ranking every
    row: one (SIMD) sort of the values gives each bin's sum of ``p`` by a contiguous reduction
    over its positions, whichever tied rows hold them, and only the members are binned, by a
    binary search among the values at the bins' first positions. A member equal to one of
    those values is ranked among its ties by a search of the sorted column, and, when its tied
    run straddles a bin boundary, exactly among the rows sharing its value in index order (one
    pass over the column per such value, at most ``n_bins - 1`` values).
    """
    n = buf.shape[0]
    mv = buf[members]  # the members' values, gathered before the sort
    buf.sort()
    q, rem = divmod(n, n_bins)
    sizes = np.full(n_bins, q, dtype=np.intp)
    sizes[:rem] += 1
    starts = np.zeros(n_bins, dtype=np.intp)
    np.cumsum(sizes[:-1], out=starts[1:])
    sums = np.zeros(n_bins)
    full = sizes > 0
    sums[full] = np.add.reduceat(buf, starts[full])
    if members.size:
        # a member below (above) the value at a bin's first position lies before (after) it
        first = buf[starts[1 : min(n, n_bins)]]  # the non-empty bins are a prefix
        bins = np.searchsorted(first, mv, side="left")
        tied = np.flatnonzero(np.isin(mv, first))  # on a boundary value: rank it among its ties
        if tied.size:
            tv = mv[tied]
            lo = np.searchsorted(buf, tv, side="left")
            hi = np.searchsorted(buf, tv, side="right") - 1
            bins[tied] = rank_to_bin(lo, n, n_bins)
            amb = np.flatnonzero(bins[tied] != rank_to_bin(hi, n, n_bins))
            for v in np.unique(tv[amb]):
                sel = amb[tv[amb] == v]
                rows = np.flatnonzero(column == v)  # every row with this value, in index order
                r = lo[sel] + np.searchsorted(rows, members[tied[sel]])
                bins[tied[sel]] = rank_to_bin(r, n, n_bins)
        sums -= np.bincount(bins, minlength=n_bins)
    return sums


# from this many entries and rows of P on, the compiled path is used: below, the numpy path is
# as fast, the first call need not import numba (once per process), and the
# kernel's table of k * N_CELLS entries (12 KB a column) stays small beside P (8 n bytes a column)
_KERNEL_MIN_SIZE = 1 << 22
_KERNEL_MIN_ROWS = 1 << 16


def _kernel_applies(P, n_bins):
    """Whether the compiled kernel takes ``P`` (large, contiguous float64, ``n_bins <= n``)."""
    return (
        isinstance(P, np.ndarray)
        and P.dtype == np.float64
        and P.ndim == 2
        and (P.flags.c_contiguous or P.flags.f_contiguous)
        and P.shape[1] >= 2
        and P.size >= _KERNEL_MIN_SIZE
        and P.shape[0] >= _KERNEL_MIN_ROWS
        and 1 <= n_bins <= P.shape[0] < 2**31
    )


def _classwise_kernel_sums(y_true, y_proba, n_bins, strategy, sample_weight, labels):
    """Unweighted quantile-bin sums by the compiled two-pass kernel (:mod:`skcal._classwise_kernel`).

    A large contiguous float64 ``y_proba`` (C or Fortran order, or a pandas frame holding one)
    is validated by the kernel's first pass (as :func:`~skcal._validation.check_multiclass_inputs`
    would validate it); any other input is validated, and converted, by it first, and the kernel
    then takes the converted array if it applies (a large float32 array, say).

    Returns None for weights or another rule (nothing validated yet), else ``(sums, P, codes)``
    with ``P`` and ``codes`` validated and ``sums`` the ``(k, n_bins)`` bin sums, or None when
    the kernel did not run (numba missing, a small input) or declined the data (too
    concentrated); the numpy path then takes over without validating again.
    """
    if sample_weight is not None or not (isinstance(strategy, str) and strategy == "quantile"):
        return None
    n_bins = int(n_bins)
    # a view drops ndarray subclasses (masked arrays, matrices), which numba does not type; the
    # numpy path reads them as plain arrays too
    arr = y_proba.to_numpy() if hasattr(y_proba, "to_numpy") else y_proba  # as check_class_probabilities
    arr = arr.view(np.ndarray) if isinstance(arr, np.ndarray) else arr
    kernel = None
    if _kernel_applies(arr, n_bins) and (labels is None or len(labels) == arr.shape[1]):
        kernel = compiled("classwise")
    if kernel is not None:
        counts, bad, row_dev = kernel.histogram(arr)  # validates P in the same pass
        # the kernel's row sums (any order) and numpy's (pairwise) are both within k eps of the
        # exact one: near the tolerance the shared validator decides, and raises with its message
        margin = 2.0 * arr.shape[1] * np.finfo(np.float64).eps
        if bad or not row_dev + margin <= ROW_SUM_ATOL:
            check_class_probabilities(arr, labels)  # does not change the values the counts were taken of
        P = arr
        y_arr = y_true.to_numpy() if hasattr(y_true, "to_numpy") else np.asarray(y_true)
        check_consistent_length(y_true=y_arr, y_proba=P)
        codes = check_multiclass_labels(y_arr, P.shape[1], labels=labels)
    else:
        P, codes, _ = check_multiclass_inputs(y_true, arr, None, labels)  # arr: a frame read once
        kernel = compiled("classwise") if _kernel_applies(P, n_bins) else None
        if kernel is None:
            return None, P, codes
        counts = kernel.histogram(P)[0]
    codes = codes.astype(np.intp, copy=False)
    return kernel.bin_sums(P, codes, counts, n_bins), P, codes


def _classwise_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels):
    """Per-class bin sums ``S_rb = sum_{i in b_r} w_i (p_i[r] - 1[y_i = r])`` and ``W``.

    Unweighted quantile bins (the default) of a large array go through the compiled two-pass
    kernel when numba is installed (:func:`_classwise_kernel_sums`). Otherwise the
    columns are read in blocks of 16, so that no ``(n, k)`` temporary is made (peak memory is
    the input plus a few columns): unweighted quantile bins take one sort per column
    (:func:`_quantile_column_sums`); the other rules assign every row its bin id. Both paths
    give the same bins; the sums agree to round-off (they are added in another order).
    """
    fast = _classwise_kernel_sums(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    if fast is None:
        P, codes, w = check_multiclass_inputs(y_true, y_proba, sample_weight, labels)
    else:
        sums, P, codes = fast
        if sums is not None:
            return list(sums), P.shape[1], float(P.shape[0])
        w = None
    n, k = P.shape
    n_bins = int(n_bins)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(k + 1))
    out = []
    for j, col in iter_columns(P):
        members = order[bounds[j] : bounds[j + 1]]
        if w is None and strategy == "quantile":
            out.append(_quantile_column_sums(col, members, P[:, j], n_bins))
            continue
        ids = _compact(column_bin_ids(col, n_bins, strategy, "y_proba"))
        nb = int(ids.max()) + 1
        if w is None:
            sums = np.bincount(ids, weights=col, minlength=nb)
            sums -= np.bincount(ids[members], minlength=nb)
        else:
            sums = np.bincount(ids, weights=w * col, minlength=nb)
            sums -= np.bincount(ids[members], weights=w[members], minlength=nb)
        out.append(sums)
    W = float(n) if w is None else float(w.sum())
    return out, k, W


@fill(**_PARAMETERS)
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def classwise_lince(y_true, y_proba, *, n_bins=15, strategy="quantile", sample_weight=None, labels=None):
    """Classwise LinCE, ``(1/k) sum_r LinCE(p[:, r]; 1[y = r])`` (truthful; lower is better).

    Each class column is binned on its own values. The paired proper loss is the Brier score
    divided by ``k`` (:func:`brier_over_k`).

    {binned_parameters}

    Examples
    --------
    >>> from skcal.truthful import classwise_lince
    >>> y_proba = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> round(classwise_lince([0, 1, 2, 1], y_proba, n_bins=2), 6)
    0.036667
    """
    sums, k, W = _classwise_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    return classwise_value(sums, k, W, "classwise_lince")


@fill(**_PARAMETERS)
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def classwise_ece(y_true, y_proba, *, n_bins=15, strategy="quantile", sample_weight=None, labels=None):
    """Binned classwise l1 calibration error (NOT truthful; baseline).

    ``(1/k) sum_r (1/n) sum_b |sum_{i in b} (p_i[r] - 1[y_i = r])|``, each class binned on its
    own column (weighted: ``w_i`` multiplies the residuals and ``n`` becomes ``W``).

    {binned_parameters}

    Examples
    --------
    >>> from skcal.truthful import classwise_ece
    >>> y_proba = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]]
    >>> round(classwise_ece([0, 1, 2, 1], y_proba, n_bins=2), 6)
    0.2
    """
    sums, k, W = _classwise_parts(y_true, y_proba, n_bins, strategy, sample_weight, labels)
    return classwise_value(sums, k, W, "classwise_ece")


# ----------------------------------------------------------------------------------------------
# proper losses
# ----------------------------------------------------------------------------------------------


_LOSS_CONSTRAINTS = {
    "y_true": ["array-like"],
    "y_proba": ["array-like"],
    "sample_weight": SAMPLE_WEIGHT,
    "labels": _LABELS,
}


@fill(**_PARAMETERS)
@validate_params(_LOSS_CONSTRAINTS, prefer_skip_nested_validation=True)
def brier_over_k(y_true, y_proba, *, sample_weight=None, labels=None):
    """Mean Brier score divided by the number of classes (the proper loss of classwise LinCE).

    ``(1/n) sum_i (1/k) sum_r (p_i[r] - 1[y_i = r])^2`` (weighted mean with ``sample_weight``).

    {loss_parameters}

    Examples
    --------
    >>> from skcal.truthful import brier_over_k
    >>> round(brier_over_k([0, 1], [[0.5, 0.5], [0.2, 0.8]]), 6)
    0.145
    """
    P, codes, w = check_multiclass_inputs(y_true, y_proba, sample_weight, labels)
    n, k = P.shape
    Y = np.zeros_like(P)
    Y[np.arange(n), codes] = 1.0
    per_sample = ((P - Y) ** 2).sum(axis=1) / k
    return float(np.average(per_sample, weights=w))


@fill(**_PARAMETERS)
@validate_params(_LOSS_CONSTRAINTS, prefer_skip_nested_validation=True)
def confidence_proper_loss(y_true, y_proba, *, sample_weight=None, labels=None):
    """Mean confidence proper loss ``1 - z + (c - z)^2`` (the proper loss of ConfCE^corr).

    With ``r = argmax p`` (ties to the lowest index), ``c = p[r]`` and ``z = 1[y = r]``. Its
    expectation under true probabilities ``q`` is ``(c - q[r])^2 + 1 - q[r]^2``, minimised by
    reporting the true top class with its true probability.

    {loss_parameters}

    Examples
    --------
    >>> from skcal.truthful import confidence_proper_loss
    >>> round(confidence_proper_loss([0, 0], [[0.8, 0.2], [0.3, 0.7]], labels=[0, 1]), 6)
    0.765
    """
    P, codes, w = check_multiclass_inputs(y_true, y_proba, sample_weight, labels)
    r, c = _top_label(P)
    z = (codes == r).astype(np.float64)
    return float(np.average(1.0 - z + (c - z) ** 2, weights=w))


# ----------------------------------------------------------------------------------------------
# the decomposition n E[Cal] = E[proper loss] + bias
# ----------------------------------------------------------------------------------------------

_MEASURES = ("truthful_conf_ce", "classwise_lince")


def _batched_measure(measure, P, Ylab, ids):
    """Measure and mean proper loss for a batch of label vectors ``Ylab`` (m, n) of codes.

    Bin sums by one bincount over ``(label vector, bin)`` ids, never an ``n x bins`` matrix.
    ConfCE^corr needs only ``z = 1[y = top class]``; classwise LinCE's bin sums are the fixed
    ``sum p`` of each (class, bin) less the count of the rows labelled with that class there,
    and its loss ``||p - e_y||^2 = ||p||^2 + 1 - 2 p_y``, so each label vector costs one gather
    and one bincount over its ``n`` rows.
    """
    if measure == "truthful_conf_ce":
        r, c = _top_label(P)
        return _conf_batch(c, Ylab == r[None, :], ids)
    return _LinceBatch(P, ids)(Ylab)


class _LinceBatch:
    """Classwise LinCE and its mean loss for batches of label vectors; the label-free parts once."""

    def __init__(self, P, ids):
        self.P = P
        self.ids = _compact(ids)
        self.nb = int(self.ids.max()) + 1
        self.A = _columnwise_bin_sums(P, self.ids)  # (k * nb,): sum of p_ij per class j and its bin
        self.sq = (P**2).sum(axis=1) + 1.0

    def __call__(self, Ylab):
        m, n = Ylab.shape
        k = self.P.shape[1]
        knb = k * self.nb
        rows = np.arange(n)[None, :]
        cell = Ylab * self.nb + self.ids[rows, Ylab]  # (class, bin) cell of each row's label class
        counts = np.bincount((cell + (np.arange(m) * knb)[:, None]).ravel(), minlength=m * knb)
        S = self.A[None, :] - counts.reshape(m, knb)
        cal = (S**2).sum(axis=1) / (k * n**2)
        loss = (self.sq[None, :] - 2.0 * self.P[rows, Ylab]).mean(axis=1) / k
        return cal, loss


def _conf_batch(c, z, ids):
    """ConfCE^corr and its mean loss for a batch of indicators ``z`` (m, n) of the top class."""
    m, n = z.shape
    ids = _compact(ids)
    nb = int(ids.max()) + 1
    resid = c[None, :] - z
    flat = (ids[None, :] + (np.arange(m) * nb)[:, None]).ravel()
    S = np.bincount(flat, weights=resid.ravel(), minlength=m * nb).reshape(m, nb)
    zs = z.sum(axis=1)
    cal = ((S**2).sum(axis=1) + (n - zs)) / n**2
    loss = (1.0 - z + resid**2).mean(axis=1)
    return cal, loss


#: Label entries (draws x rows x classes) per block of the Monte Carlo check, and the work that
#: ``n_draws="auto"`` spends: ``max(100, min(20000, ceil(AUTO_DRAW_ENTRIES / (n k))))`` draws.
_DRAW_BLOCK_ENTRIES = 1 << 22
AUTO_DRAW_ENTRIES = 10**8


def auto_draws(n, k):
    """Monte Carlo draws of ``n_draws="auto"`` for ``n`` rows of ``k`` classes (see above)."""
    return int(max(100, min(20_000, -(-AUTO_DRAW_ENTRIES // (n * k)))))


@fill(**_PARAMETERS)
@validate_params(
    {
        "q_true": ["array-like"],
        "y_proba": ["array-like"],
        "measure": [StrOptions(set(_MEASURES))],
        "n_bins": N_BINS,
        "strategy": _STRATEGY,
        "method": [StrOptions({"auto", "enumerate", "monte_carlo"})],
        "max_outcomes": [StrictInterval(Integral, 1, None, closed="left")],
        "n_draws": [StrictInterval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def truthful_decomposition(
    q_true,
    y_proba,
    *,
    measure="truthful_conf_ce",
    n_bins=15,
    strategy="quantile",
    method="auto",
    max_outcomes=200_000,
    n_draws="auto",
    random_state=None,
):
    """Check ``n E[Cal] = E[proper loss] + bias`` for reports ``y_proba`` and true posteriors.

    Labels are independent, ``y_i ~ q_true[i]``; the bins are fixed by the reports. With
    per-sample deviations ``d_i`` (``c_i - s_i`` for ConfCE^corr, where ``s_i = q_i[r_i]`` is the
    true probability of the reported top class; the vector ``p_i - q_i`` for classwise LinCE)
    and label-noise terms ``v_i`` (``1 - s_i^2``; resp. ``(1/k) sum_r q_i[r] (1 - q_i[r])``):

    * ``E[Cal] = B + V`` with ``B = (1/n^2) sum_b ||sum_{i in b} d_i||^2`` (``/k`` and per-class
      bins for classwise LinCE) and ``V = (1/n^2) sum_i v_i``;
    * the expected mean proper loss is ``L = (1/n) sum_i (||d_i||^2 (/k) + v_i)``;
    * hence ``n E[Cal] = L + bias`` with the pooling bias
      ``bias = (1/n) sum_b (||sum_{i in b} d_i||^2 - sum_{i in b} ||d_i||^2)`` (``/k`` for
      classwise), i.e. ``(2/n)`` times the within-bin cross products ``<d_i, d_j>``. It is zero for
      honest reports and whenever every bin holds at most one sample, and can have either sign.

    The closed forms are compared with an independent evaluation of the same expectations from
    the actual measure and loss over the label distribution: exact enumeration of all ``k^n``
    label vectors when that number is at most ``max_outcomes`` (``method="auto"`` or
    ``"enumerate"``), else Monte Carlo with ``n_draws`` label draws (``"monte_carlo"``).

    Parameters
    ----------
    q_true : array-like of shape (n, k)
        True conditional class probabilities.
    y_proba : array-like of shape (n, k)
        Reported probabilities.
    measure : {"truthful_conf_ce", "classwise_lince"}, default="truthful_conf_ce"
        The measure whose expectation is decomposed.
    {n_bins}
    {strategy}
    method : {"auto", "enumerate", "monte_carlo"}, default="auto"
        How the closed forms are checked.
    max_outcomes : int, default=200_000
        Largest number of label vectors ``k^n`` enumerated exactly.
    n_draws : int or "auto", default="auto"
        Monte Carlo label draws. ``"auto"``: 20,000 up to ``n k = 5,000`` (the former default),
        then as many as ``10^8`` label entries allow, at least 100: ``max(100, min(20000,
        ceil(10^8 / (n k))))``, so that the check of a million rows takes seconds, not hours
        (its standard error, ``check_stderr``, says how precise it is).
    random_state : int, RandomState instance or None, default=None
        Seeds the Monte Carlo draws.

    Returns
    -------
    dict
        ``expected_cal`` (closed form ``B + V``), ``bias_term`` (``B``), ``noise_term`` (``V``),
        ``expected_proper_loss`` (``L``), ``pooling_bias``, ``n_expected_cal`` (``n (B + V)``),
        ``proper_loss_plus_bias`` (``L + pooling_bias``, equal to the previous up to rounding),
        ``check_method``, ``expected_cal_check`` and ``expected_proper_loss_check`` (from
        enumeration or Monte Carlo), and ``check_stderr`` (Monte Carlo standard errors of the
        two checks, zeros for enumeration).

    Examples
    --------
    >>> from skcal.truthful import truthful_decomposition
    >>> Q = [[0.5, 1 / 3, 1 / 6], [0.2, 0.7, 0.1]]
    >>> P = [[0.4, 0.4, 0.2], [0.2, 0.6, 0.2]]
    >>> out = truthful_decomposition(Q, P, n_bins=1)
    >>> bool(abs(out["expected_cal"] - out["expected_cal_check"]) < 1e-12)
    True
    >>> bool(abs(out["n_expected_cal"] - out["proper_loss_plus_bias"]) < 1e-12)
    True
    """
    from sklearn.utils import check_random_state

    Q = check_multiclass_probabilities(q_true, name="q_true")
    P = check_multiclass_probabilities(y_proba, name="y_proba", n_classes=Q.shape[1])
    check_consistent_length(q_true=Q, y_proba=P)
    n, k = P.shape
    if measure == "truthful_conf_ce":
        r, c = _top_label(P)
        s = Q[np.arange(n), r]
        ids = assign_bins(c, n_bins=n_bins, strategy=strategy, name="confidence")
        d = c - s
        B = _sq_bin_sums(d, ids) / n**2
        v = 1.0 - s**2
        sq_dev = d**2
    else:
        ids = assign_bins(P, n_bins=n_bins, strategy=strategy, name="y_proba")
        D = P - Q
        sums = _columnwise_bin_sums(D, ids)
        B = float(np.dot(sums, sums)) / (k * n**2)
        v = (Q * (1.0 - Q)).sum(axis=1) / k
        sq_dev = (D**2).sum(axis=1) / k
    V = float(v.sum()) / n**2
    L = float((sq_dev + v).mean())
    pooling = n * B - float(sq_dev.mean())

    # k^n overflows a float from about 650 rows (k = 3); past 1e300 it is "more than any max_outcomes"
    n_outcomes = float(k) ** n if n * np.log(k) < 690.0 else np.inf
    if method == "auto":
        method = "enumerate" if n_outcomes <= max_outcomes else "monte_carlo"
    if method == "enumerate":
        if n_outcomes > max_outcomes:
            raise ValueError(f"k^n = {n_outcomes:.3g} label outcomes exceed max_outcomes={max_outcomes}.")
        m = int(n_outcomes)
        Ylab = np.stack(np.unravel_index(np.arange(m), (k,) * n), axis=1)
        prob = np.prod(Q[np.arange(n)[None, :], Ylab], axis=1)
        cal, loss = _batched_measure(measure, P, Ylab, ids)
        cal_chk, loss_chk = float(prob @ cal), float(prob @ loss)
        stderr = (0.0, 0.0)
    else:
        if isinstance(n_draws, str):
            n_draws = auto_draws(n, k)
        if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 2:
            raise ValueError(
                f"n_draws must be an integer >= 2 for the Monte Carlo check (its standard error needs "
                f"two draws); got {n_draws!r}."
            )
        rng = check_random_state(random_state)
        cdf = np.cumsum(Q, axis=1)
        cdf[:, -1] = 1.0
        conf = measure == "truthful_conf_ce"
        if conf:  # y = r exactly when cdf[r - 1] <= u < cdf[r]: the same labels, no n x k pass
            r, c = _top_label(P)
            rows = np.arange(n)
            below = np.where(r > 0, cdf[rows, np.maximum(r - 1, 0)], -np.inf)
            upto = cdf[rows, r]
        else:
            lince = _LinceBatch(P, ids)
        chunk = max(1, _DRAW_BLOCK_ENTRIES // max(1, n * (1 if conf else k)))
        cals, losses = [], []
        done = 0
        while done < n_draws:
            m = min(chunk, n_draws - done)
            u = rng.random_sample((m, n))
            if conf:
                cal, loss = _conf_batch(c, (u >= below) & (u < upto), ids)
            else:  # the label: how many of the row's cumulative probabilities u reaches
                Ylab = np.zeros((m, n), dtype=np.intp)
                for j in range(k):
                    Ylab += u >= cdf[:, j]
                cal, loss = lince(Ylab)
            cals.append(cal)
            losses.append(loss)
            done += m
        cal, loss = np.concatenate(cals), np.concatenate(losses)
        cal_chk, loss_chk = float(cal.mean()), float(loss.mean())
        stderr = (float(cal.std(ddof=1) / np.sqrt(n_draws)), float(loss.std(ddof=1) / np.sqrt(n_draws)))
    return {
        "measure": measure,
        "expected_cal": B + V,
        "bias_term": B,
        "noise_term": V,
        "expected_proper_loss": L,
        "pooling_bias": pooling,
        "n_expected_cal": n * (B + V),
        "proper_loss_plus_bias": L + pooling,
        "check_method": method,
        "expected_cal_check": cal_chk,
        "expected_proper_loss_check": loss_chk,
        "check_stderr": stderr,
    }
