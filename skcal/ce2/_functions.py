"""The public functions of CE2 and CE1: :func:`ce2_details`, :func:`ce2_score` and :func:`ce1_score`."""

from __future__ import annotations

from numbers import Real

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import (
    ALPHA,
    BASIS,
    DEGREE,
    POSITIVE_REAL,
    RANDOM_STATE,
    SAMPLE_WEIGHT,
    StrictInterval,
)
from skcal._docstrings import fill
from skcal._validation import check_consistent_length, check_sample_weight, check_scores
from skcal.ce2._classes import class_weights_of, k_class_details, k_class_inputs
from skcal.ce2._fit import fit_moments, plug_in
from skcal.ce2._result import METHODS, binary_result, check_second_order_scores
from skcal.votes import (
    check_snapshots,
    class_scores_layout,
    first_order_targets,
    require_pairs,
    snapshot_targets,
)

__all__ = ["MULTICLASS", "ce1_score", "ce2_details", "ce2_score"]

# ---------------------------------------------------------------------------------------------
#: The k-class tasks of ``multiclass`` (``"auto"``: binary scores stay binary, k-class ones
#: are classwise).
MULTICLASS = ("auto", "classwise", "top_label")


PARAMS = {
    # an integer degree, "auto", or candidates for cv (each checked against DEGREE)
    "degree": [StrOptions({"auto"}), *DEGREE, "array-like"],
    "alpha": ALPHA,
    # the bandwidth enters only log(theta) = asinh(h pi): any positive number, subnormal ones too
    "bandwidth": POSITIVE_REAL,
    "cv": [None, StrictInterval(Real, 0, 1, closed="neither"), StrOptions({"holdout"}), "cv_object"],
    "random_state": RANDOM_STATE,
    "alphas": ["array-like", None],
    "sample_weight": SAMPLE_WEIGHT,
    "multiclass": [StrOptions(set(MULTICLASS))],
    "average": [StrOptions({"macro", "weighted"}), "array-like"],
}
CE2_PARAMS = {
    "snapshots": ["array-like"],
    "scores": ["array-like"],
    "method": [StrOptions(set(METHODS))],
    "basis": BASIS,
    **PARAMS,
}


#: The parameters of :func:`ce2_details` and :func:`ce2_score`, described once (see
#: :func:`skcal._docstrings.fill`).
_DOCS = {
    "degree": """degree : "auto", int or list of int, default="auto"
    ``"auto"``: the analytic rule ``ceil(2 log n / log theta)`` capped at
    ``ceil(11 / sqrt(bandwidth))`` (44 at ``h = 1/16``, 88 at ``h = 1/64``; at most 88), and
    lowered until the basis has at most ``n / 100`` features (a sample-size guard: at
    ``h = 1/64`` the bare rule gives 88, i.e. 7921 tensor features, for every ``n``); see
    :func:`skcal.chebyshev.auto_degree`. With ``cv`` the candidates are the schedule from
    the cap halving down to 4 (e.g. 88, 44, 22, 11, 5), without the degrees whose basis has
    more than ``n_train / 10`` features (``CV_SAMPLES_PER_FEATURE``; if none is left, the
    smallest schedule degree). An int fixes the degree; a list
    gives the candidates for ``cv``. With ``sample_weight``, ``n`` in these rules is Kish's
    effective sample size ``(sum w)^2 / sum w^2``, so rows of weight zero count as dropped.
    When ``d > n`` the ridge is solved in its dual form, so a moderate explicit degree works
    for any ``n`` (a high degree for small ``n`` simply fits noisily; use ``cv`` to choose).
    An explicit degree is bounded by ``MAX_DEGREE_LIMIT`` (512) and by the data: its ridge
    solve may hold at most ``MAX_SOLVE_FLOATS`` numbers (2 GiB: ``d^2`` primal, ``n d + n^2``
    dual); the error names the largest degree the data support. At a fixed degree with
    ``d <= n`` the estimate is computed through :class:`skcal.stats.CE2Statistics` and
    :class:`skcal.stats.CE2PlugInStatistics`, the objects ``skcal.dask`` merges.""",
    "settings": """alpha : float, default=1e-6
    Ridge multiplier (``lam = alpha * trace(G) / d``), used when ``cv`` is None.
bandwidth : float, default=2**-6
    The sech bandwidth ``h`` the scores were perturbed with (drives the degree rule and
    the baselines).
method : {"polynomial", "bucketing", "nadaraya_watson"}, default="polynomial"
    The baselines (cells of a ``K x K`` grid, a Gaussian kernel) are computed by
    :func:`skcal.ce2_baselines.baseline_ce2` (they choose their constant ``c`` on a held-out
    split with ``random_state``).
cv : None, int, float, "holdout" or CV splitter, default=None
    Select ``degree`` and ``alpha`` (candidates: the degree schedule and ``alphas``) by the
    held-out squared error of both moment regressions. An int ``K`` is shuffled K-fold
    (seeded by ``random_state``); a float in (0, 1) or ``"holdout"`` (= 0.3) is one
    held-out split of that fraction; any scikit-learn splitter is accepted. Fold statistics
    are additive, so each candidate costs one ridge solve. After selection the chosen
    model is refitted on all data.
random_state : int, RandomState instance or None, default=None
    Shuffling of the CV folds / held-out split and of the baselines' split.
basis : {"tensor", "total"}, default="tensor"
    The Chebyshev products ``T_i T_j`` of the regressions: ``i, j <= degree`` or ``i + j <= degree``.
alphas : sequence of float, default=None
    Candidate ridge multipliers for ``cv`` (default ``1e-6, 1e-5, ..., 1``).
sample_weight : array-like of shape (n,), default=None
    Weights for the regressions and the averages (polynomial method only).""",
}


@fill(**_DOCS)
@validate_params(CE2_PARAMS, prefer_skip_nested_validation=True)
def ce2_details(
    snapshots,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    method="polynomial",
    cv=None,
    random_state=None,
    basis="tensor",
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate CE2 and return the fitted calibration functions with it.

    Parameters
    ----------
    snapshots : array-like of shape (n, r), skcal.votes.VoteCounts
        Binary scores: ``r >= 2`` binary labels per input (NaN marks a missing vote) or binary
        vote counts. k-class scores: snapshots of class labels (codes ``0..k-1``, NaN for a
        missing vote) or counts per class (``VoteCounts(counts=C)``; the same results). Rows with
        a single vote are allowed beside rows with several (the mixed rule, see Notes).
    scores : array-like of shape (n, 2), (n, k, 2) or (n, 2k)
        The second-order scores ``(m, sigma2)`` of the predictor being measured, *already*
        sech-perturbed (the perturbed predictor is the one that is measured; see
        ``skcal.SechPerturber``): binary, or k-class (``m`` at ``[..., 0]``, ``sigma2`` at
        ``[..., 1]``, or the ``(n, 2k)`` layout of ``EnsembleMoments``: the k means, then the k
        variances).
    {degree}
        For k classes every one-vs-rest task makes its own choice.
    {settings}
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        The task for k-class scores (see Notes). ``"auto"``: binary scores give the binary CE2,
        k-class scores the classwise one. ``"classwise"`` or ``"top_label"`` with binary scores
        treat them as two classes (class 1 with ``(m, sigma2)``, class 0 with ``(1 - m,
        sigma2)``).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        ``multiclass="classwise"``: the weights of the classes' CE2 in the mean. ``"macro"``:
        equal weights; ``"weighted"``: each class's share of the votes (``mean_w t1[:, j]``);
        an array: the given non-negative weights (normalised to sum 1).

    Returns
    -------
    CE2Result
        ``ce2``, ``term1``, ``term2``, the ``degree`` and ``alpha`` used, the callables
        ``eta1`` and ``eta2`` (fitted calibration functions on new scores) and, with ``cv``,
        ``cv_results``; for ``"classwise"`` also ``per_class`` (the result of every class)
        and ``class_weights``.

    Notes
    -----
    **k classes.** With ``a_j`` votes for class ``j`` out of ``c``, the one-vs-rest task of class
    ``j`` has the scores ``(m_j, sigma2_j)`` and the targets ``t1 = a_j / c``,
    ``t2 = a_j (a_j - 1) / (c (c - 1))``, and ``CE2_j`` is the binary estimate on it.
    ``"classwise"`` is ``sum_j w_j CE2_j`` with the weights of ``average`` (``1 / k`` each by
    default), every class with its own degree choice. ``"top_label"`` is the binary estimate on
    the top-label task: per row the class ``J = argmax_j m_j`` (ties: the lowest index), its
    ``(m_J, sigma2_J)`` and its votes ``a_J`` of ``c``. Snapshots of class labels are counted
    per class first (counts are sufficient), so they give the same numbers as the counts.

    **Rows with a single vote** (mixed data): ``t1 = a / c`` exists for every row, ``t2`` only for
    rows with ``c >= 2``. ``eta1_hat`` is then fitted on every row and ``eta2_hat`` on the rows
    with pairs only, each with its own degree (``"auto"`` counts that regression's rows), and
    both averages of the plug-in run over every row. ``benchmarks/mixed_labels.py`` measures this
    rule's error against the number of rows with pairs (``docs/benchmarks/second_order_multiclass.md``):
    on the experiment-6.2 problem (20,000 rows with one label, true CE2 0.214) the mean absolute
    error is 0.022 with 100 doubly-labelled rows, 0.015 with 1,000 and 0.005 with 5,000, at most
    that of the doubly-labelled rows alone at every count. At least one row needs two votes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import Snapshots, ce2_details
    >>> rng = np.random.default_rng(0)
    >>> S = np.column_stack([rng.uniform(0, 1, 3000), rng.uniform(0, 0.25, 3000)])
    >>> Y = Snapshots(rng.uniform(size=(3000, 2)) < S[:, :1])  # two votes; f* = m: first-order calibrated
    >>> res = ce2_details(Y, S, degree=3)
    >>> res.term1 < 0.03, res.term2 > 0.05  # but sigma2 > 0 overstates the spread of f* = m
    (True, True)
    >>> res.eta1(np.array([[0.5, 0.1]])).round(1)
    array([0.5])
    """
    params = {
        "degree": degree,
        "alpha": alpha,
        "bandwidth": bandwidth,
        "method": method,
        "cv": cv,
        "random_state": random_state,
        "basis": basis,
        "alphas": alphas,
    }
    if multiclass != "auto" or class_scores_layout(scores) is not None:
        return k_class_details(snapshots, scores, multiclass, average, sample_weight, params)
    Y = check_snapshots(snapshots, name="snapshots", min_votes=1)
    S = check_second_order_scores(scores, Y.shape[0])
    t1, t2, c = snapshot_targets(Y)
    require_pairs(c, "snapshots")
    w = check_sample_weight(sample_weight, S.shape[0]) if method == "polynomial" else None
    return binary_result(t1, t2, S, w, sample_weight, params, "ce2_details")


@fill(**_DOCS)
@validate_params(CE2_PARAMS, prefer_skip_nested_validation=True)
def ce2_score(
    snapshots,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    method="polynomial",
    cv=None,
    random_state=None,
    basis="tensor",
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate the second-order calibration error CE2 (lower is better).

    ``CE2 = E|eta1(S) - m| + E|eta2(S) - (m^2 + sigma2)|``. The polynomial estimator fits
    ``eta1_hat`` on ``t1`` and ``eta2_hat`` on ``t2`` (the snapshot targets ``t1 = a / c``,
    ``t2 = a (a - 1) / (c (c - 1))`` for ``a`` positive votes out of ``c``) by Chebyshev ridge
    regression on the scores, clips both to [0, 1] and averages the absolute
    deviations over the sample (in-sample plug-in). For k-class scores it is the classwise
    (one-vs-rest) or the top-label CE2 (``multiclass``; the formulas are in
    :func:`ce2_details`).

    Parameters
    ----------
    snapshots : array-like of shape (n, r) or skcal.votes.VoteCounts
        Binary scores: ``r >= 2`` binary labels per input (NaN marks a missing vote), or vote
        counts (same results, no padded array). k-class scores: snapshots of class labels (codes
        ``0..k-1``) or counts per class (``VoteCounts(counts=C)``). Rows with a single vote are
        allowed beside rows with several (``eta2`` is then fitted on the rows with pairs; see
        :func:`ce2_details`).
    scores : array-like of shape (n, 2), (n, k, 2) or (n, 2k)
        The second-order scores ``(m, sigma2)`` of the predictor being measured, *already*
        sech-perturbed (the perturbed predictor is the one that is measured; see
        ``skcal.SechPerturber``): binary, or per class.
    {degree}
    {settings}
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        For k-class scores: the (weighted) mean of the one-vs-rest CE2 over the classes
        (``"classwise"``, what ``"auto"`` gives) or the CE2 of the top-label task
        (``"top_label"``: each row's class of largest ``m``, its ``(m, sigma2)`` and its votes).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        The class weights of ``"classwise"`` (equal, the classes' shares of the votes, or given).

    Returns
    -------
    float
        The estimate ``CE2_hat`` (in-sample plug-in).

    See Also
    --------
    ce2_details : the same estimate with the fitted calibration functions and both terms.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import Snapshots, ce2_score
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> m = rng.uniform(0.3, 0.7, n)
    >>> f = m + rng.choice([-0.25, 0.25], n)  # f* = m -+ 0.25: variance 1/16 given m
    >>> Y = Snapshots(rng.uniform(size=(n, 2)) < f[:, None])  # two votes a row, said
    >>> honest = np.column_stack([m, np.full(n, 1 / 16)])
    >>> overconfident = np.column_stack([m, np.zeros(n)])
    >>> ce2_score(Y, honest, degree=4) < ce2_score(Y, overconfident, degree=4)
    True

    Three classes, counts per class (the classwise mean of the one-vs-rest CE2, and the top label):

    >>> from skcal.votes import VoteCounts
    >>> M = rng.dirichlet(np.ones(3), n)  # a calibrated predictor: votes drawn from m itself
    >>> counts = np.stack([rng.multinomial(3, p) for p in M])
    >>> scores = np.stack([M, np.zeros_like(M)], axis=2)  # (n, 3, 2), sigma2 = 0
    >>> bool(ce2_score(VoteCounts(counts=counts), scores, degree=3) < 0.05)
    True
    >>> bool(ce2_score(VoteCounts(counts=counts), scores, degree=3, multiclass="top_label") < 0.05)
    True
    """
    return ce2_details(
        snapshots,
        scores,
        degree=degree,
        alpha=alpha,
        bandwidth=bandwidth,
        method=method,
        cv=cv,
        random_state=random_state,
        basis=basis,
        alphas=alphas,
        sample_weight=sample_weight,
        multiclass=multiclass,
        average=average,
    ).ce2


def ce1_of_targets(t1, m, w, fit):
    """CE1 of binary targets ``t1`` against the score ``m`` ``(n, 1)``."""
    model, _, _, _, plug = fit_moments(m, t1[:, None], w, basis="tensor", **fit)
    return plug_in(model, plug, m, w)[1][0]


@validate_params(
    {"y_true": ["array-like"], "scores": ["array-like"], **PARAMS}, prefer_skip_nested_validation=True
)
def ce1_score(
    y_true,
    scores,
    *,
    degree="auto",
    alpha=1e-6,
    bandwidth=2**-6,
    cv=None,
    random_state=None,
    alphas=None,
    sample_weight=None,
    multiclass="auto",
    average="macro",
):
    """Estimate the first-order calibration error ``CE1 = E|E[Y | m] - m|`` (lower is better).

    ``eta1_hat`` is the 1-D Chebyshev ridge regression of the labels (or of ``t1``) on ``m``,
    clipped to [0, 1]; ``CE1_hat = mean |eta1_hat(m_i) - m_i|``. For k-class scores it is the
    (weighted) mean of the one-vs-rest CE1 over the classes (``"classwise"``) or the CE1 of the
    top-label task (``"top_label"``), as in :func:`ce2_details`.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, r), or skcal.votes.VoteCounts
        Binary scores: binary labels (``{0, 1}``, ``{-1, 1}`` or booleans), or snapshots or vote
        counts (``t1`` is used; one vote per row suffices). k-class scores: class labels (codes
        ``0..k-1``), one per row or as snapshots, or counts per class (``VoteCounts(counts=C)``).
    scores : array-like of shape (n,), (n, 1), (n, 2), (n, k, 2), (n, k, 1) or (n, 2k)
        The (perturbed) score ``m``; for ``(n, 2)`` second-order scores ``(m, sigma2)`` only
        column 0 is used. Note: an ``(n, 2)`` array is read as ``(m, sigma2)``, *not* as
        ``predict_proba`` output. k-class scores give ``m`` per class (``[..., 0]``; the ``(n,
        2k)`` layout holds the k means, then the k variances).
    degree : "auto", int or list of int, default="auto"
        As in :func:`ce2_score`, with the 1-D basis (degree cap ``ceil(11 / sqrt(h))``, not
        limited to 88 but to ``MAX_DEGREE_LIMIT`` = 512; the sample-size guard counts the
        effective sample size).
    alpha : float, default=1e-6
        Ridge multiplier, used when ``cv`` is None.
    bandwidth : float, default=2**-6
        The sech bandwidth ``h`` the scores were perturbed with.
    cv : None, int, float, "holdout" or CV splitter, default=None
        Select ``degree`` and ``alpha`` as in :func:`ce2_score`.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the CV folds / held-out split.
    alphas : sequence of float, default=None
        Candidate ridge multipliers for ``cv``.
    sample_weight : array-like of shape (n,), default=None
        Weights for the regression and the average.
    multiclass : {"auto", "classwise", "top_label"}, default="auto"
        As in :func:`ce2_score` (``"auto"``: binary for binary scores, classwise for k classes).
    average : {"macro", "weighted"} or array-like of shape (k,), default="macro"
        The class weights of ``"classwise"``.

    Returns
    -------
    float
        The estimate ``CE1_hat``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ce1_score
    >>> rng = np.random.default_rng(0)
    >>> m = rng.uniform(0, 1, 5000)
    >>> y = (rng.uniform(size=5000) < m).astype(int)
    >>> ce1_score(y, m, degree=3) < 0.02 < ce1_score(y, m**2, degree=3)
    True
    """
    fit = {
        "degree": degree,
        "alpha": alpha,
        "bandwidth": bandwidth,
        "cv": cv,
        "random_state": random_state,
        "alphas": alphas,
        "caller": "ce1_score",
    }
    if multiclass != "auto" or class_scores_layout(scores) is not None:
        V, S3 = k_class_inputs(y_true, scores, labels_name="y_true", mean_only=True)
        n, k = S3.shape[:2]
        t1 = V.targets()[0]
        w = check_sample_weight(sample_weight, n)
        if multiclass == "top_label":
            top = np.argmax(S3[..., 0], axis=1)
            rows = np.arange(n)
            return ce1_of_targets(t1[rows, top], S3[rows, top, :1], w, fit)
        if k == 2:  # two classes: the binary CE1 of class 1 (skcal.ce2._classes)
            return ce1_of_targets(t1[:, 1], S3[:, 1, :1], w, fit)
        per = np.array([ce1_of_targets(t1[:, j], S3[:, j, :1], w, fit) for j in range(k)])
        return float(class_weights_of(average, t1, w, k) @ per)
    S = check_scores(scores, name="scores")[:, :1]
    t1 = first_order_targets(y_true, "y_true")
    check_consistent_length(y_true=t1, scores=S)
    w = check_sample_weight(sample_weight, S.shape[0])
    return ce1_of_targets(t1, S, w, fit)
