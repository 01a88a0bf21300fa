"""CE2 and CE1 of k classes: the classwise mean of the one-vs-rest tasks, and the top-label task.

**Two classes give the binary number.** Scores of two classes, in any layout (``(n, 2, 2)``,
``(n, 4)``, or binary ``(n, 2)`` scores with ``multiclass="classwise"``), are the scores of one
binary task, and their classwise estimate is the binary estimate of class 1 (the positive class,
column 1 as in ``predict_proba``), the number ``(n, 2)`` scores of class 1 give. The mean over
the two one-vs-rest tasks would be another number for the same predictor: the two tasks are
complements, but class 0's second moment ``E[(1 - f*)^2] = 1 - 2 E[f*] + E[f*^2]`` mixes both
moments, so its CE2 is not class 1's. The top-label task (``max(m, 1 - m)``) is a different task
and keeps its own number.
"""

from __future__ import annotations

import numpy as np

from skcal._validation import check_consistent_length, check_sample_weight, check_scores
from skcal.ce2._result import CE2Result, binary_result
from skcal.votes import check_class_scores, check_class_votes, class_scores_layout, require_pairs

__all__ = ["class_weights_of", "k_class_details", "k_class_inputs"]


def k_class_inputs(labels, scores, *, labels_name, mean_only=False, min_votes=1):
    """``(VoteCounts of k classes, (n, k, 2) scores)``; binary scores become the k = 2 view."""
    if class_scores_layout(scores) is None:
        S = check_scores(scores, name="scores")
        if S.shape[1] == 1 and not mean_only:
            raise ValueError(
                f"scores must have 2 columns (m, sigma2) for CE2; got shape {S.shape}. For a score m "
                "alone use ce1_score."
            )
        m = S[:, :1]
        # binary scores of class 1 as the two-class scores: class 0 has 1 - m and the same sigma2
        S3 = np.stack([np.concatenate([1.0 - m, S[:, 1:]], axis=1), S], axis=1)
    else:
        S3 = check_class_scores(scores, name="scores", allow_mean_only=mean_only)
    n, k = S3.shape[:2]
    V = check_class_votes(labels, k, name=labels_name, n_samples=None, min_votes=min_votes)
    check_consistent_length(**{labels_name: np.empty(len(V)), "scores": S3})
    return V, S3


def class_weights_of(average, t1, w, k):
    if isinstance(average, str):
        if average == "macro":
            return np.full(k, 1.0 / k)
        share = np.average(t1, axis=0, weights=w)  # the classes' shares of the votes
        return share / share.sum()
    a = np.asarray(average, dtype=object)
    if a.ndim != 1 or a.shape[0] != k:
        raise ValueError(f"average must be 'macro', 'weighted' or {k} class weights; got {average!r}.")
    try:
        a = a.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"average must hold {k} non-negative numbers; got {average!r}.") from None
    if not np.isfinite(a).all() or (a < 0).any() or not a.sum() > 0:
        raise ValueError(f"average must hold {k} finite non-negative weights, not all zero; got {average!r}.")
    return a / a.sum()


def class_function(per, name):
    def eta(scores):
        S3 = check_class_scores(scores, name="scores", n_classes=len(per))
        return np.column_stack([getattr(r, name)(S3[:, j]) for j, r in enumerate(per)])

    eta.__doc__ = f"Fitted {name}(scores) of every class: k-class scores in, (n, k) out."
    return eta


def classwise_result(per, weights, n, method):
    terms = np.array([[r.ce2, r.term1, r.term2] for r in per])
    ce2, term1, term2 = (float(x) for x in weights @ terms)
    return CE2Result(
        ce2=ce2,
        term1=term1,
        term2=term2,
        method=method,
        n_samples=n,
        eta1=class_function(per, "eta1"),
        eta2=class_function(per, "eta2"),
        eta1_values=np.column_stack([r.eta1_values for r in per]),
        eta2_values=np.column_stack([r.eta2_values for r in per]),
        multiclass="classwise",
        per_class=per,
        class_weights=weights,
    )


def k_class_details(snapshots, scores, multiclass, average, sample_weight, params):
    V, S3 = k_class_inputs(snapshots, scores, labels_name="snapshots")
    n, k = S3.shape[:2]
    require_pairs(V.total, "snapshots")
    t1, t2 = V.targets()
    w = check_sample_weight(sample_weight, n) if params["method"] == "polynomial" else None
    if multiclass == "top_label":
        top = np.argmax(S3[..., 0], axis=1)  # ties: the lowest class index
        rows = np.arange(n)
        res = binary_result(
            t1[rows, top], t2[rows, top], S3[rows, top], w, sample_weight, params, "ce2_details"
        )
        res.multiclass = "top_label"
        res.extra["top_class"] = top
        return res
    if k == 2:  # the binary estimate of class 1 (module docstring)
        return binary_result(t1[:, 1], t2[:, 1], S3[:, 1], w, sample_weight, params, "ce2_details")
    per = [
        binary_result(t1[:, j], t2[:, j], S3[:, j], w, sample_weight, params, "ce2_details") for j in range(k)
    ]
    weights = class_weights_of(average, t1, w, k)
    return classwise_result(per, weights, n, params["method"])
