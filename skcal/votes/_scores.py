"""The layouts of k-class second-order scores: ``(n, k, 2)`` and the transformer's ``(n, 2k)``."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skcal._compat import StrOptions, validate_params
from skcal._constraints import StrictInterval
from skcal._validation import SIGMA2_MAX, as_float_array, check_range, reject_nonfinite

__all__ = ["check_class_scores", "class_scores_layout", "flat_class_scores"]


@validate_params({"scores": "no_validation"}, prefer_skip_nested_validation=True)
def class_scores_layout(scores):
    """The layout of k-class second-order scores: ``"classes"`` (``(n, k, 2)``), ``"flat"`` or None.

    ``(n, k, 2)`` arrays (and ``(n, k, 1)``, ``m`` alone per class) are k-class scores; so is the
    transformer layout ``(n, 2k)`` with ``k >= 2`` (the k means, then the k variances). ``(n, 2)``
    and ``(n, 1)`` are binary scores and give None, as does anything that is not an array.

    Parameters
    ----------
    scores : object
        The scores.

    Returns
    -------
    str or None
        ``"classes"``, ``"flat"`` or None.
    """
    shape = getattr(scores, "shape", None)
    if shape is None:
        try:
            shape = np.shape(scores)
        except (TypeError, ValueError):
            return None
    if len(shape) == 3 and shape[2] in (1, 2):
        return "classes"
    if len(shape) == 2 and shape[1] >= 4 and shape[1] % 2 == 0:
        return "flat"
    return None


@validate_params(
    {
        "scores": ["array-like"],
        "name": [str],
        "n_classes": [StrictInterval(Integral, 2, None, closed="left"), None],
        "out_of_bounds": [StrOptions({"raise", "clip"})],
        "allow_mean_only": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def check_class_scores(
    scores, *, name="scores", n_classes=None, out_of_bounds="raise", allow_mean_only=False
):
    """Validate k-class second-order scores; return them as an ``(n, k, 2)`` array.

    Two layouts are accepted: ``(n, k, 2)`` with ``m`` at ``[..., 0]`` and ``sigma2`` at
    ``[..., 1]`` (the binary ``(n, 2)`` with a class axis), and the transformer layout ``(n, 2k)``
    of :class:`~skcal.EnsembleMoments` (the k means, then the k variances). Every ``m`` must lie in
    [0, 1] and every ``sigma2`` in [0, 1/4] (as :func:`skcal._validation.check_scores` checks the
    binary scores); the means need not sum to 1 (sech-perturbed and one-vs-rest recalibrated
    scores do not).

    Parameters
    ----------
    scores : array-like of shape (n, k, 2) or (n, 2k)
        The scores, ``k >= 2``.
    name : str, default="scores"
        The argument's name in error messages.
    n_classes : int, default=None
        The expected ``k``.
    out_of_bounds : {"raise", "clip"}, default="raise"
        Refuse or clip values outside the box.
    allow_mean_only : bool, default=False
        Also accept ``(n, k, 1)`` (``m`` alone per class), returned as ``(n, k, 1)``, for
        ``k >= 3``: ``(n, 2, 1)`` is refused, as it also reads as binary scores ``(m, sigma2)``
        with an extra axis.

    Returns
    -------
    ndarray of shape (n, k, 2) (or (n, k, 1))
        A fresh float64 array.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.votes import check_class_scores
    >>> flat = np.array([[0.7, 0.2, 0.1, 0.01, 0.02, 0.0]])  # 3 means, then 3 variances
    >>> check_class_scores(flat)[0].tolist()
    [[0.7, 0.01], [0.2, 0.02], [0.1, 0.0]]
    """
    S = as_float_array(scores, name, ndim=(2, 3))
    reject_nonfinite(S, name)
    if S.ndim == 2:
        if S.shape[1] < 4 or S.shape[1] % 2:
            raise ValueError(
                f"{name} must have shape (n, k, 2) or (n, 2k) (the k means, then the k variances) with "
                f"k >= 2; got shape {S.shape}. Binary scores (m, sigma2) have shape (n, 2)."
            )
        k = S.shape[1] // 2
        S = np.stack([S[:, :k], S[:, k:]], axis=2)
    elif allow_mean_only and S.shape[1:] == (2, 1):
        raise ValueError(
            f"{name} of shape {S.shape} reads two ways: as the means m of two classes, or as binary "
            "scores (m, sigma2) with an extra axis; the two give different numbers. Two classes are "
            "one binary task: pass the positive class's m as (n,) or (n, 1), or (m, sigma2) as (n, 2)."
        )
    elif S.shape[2] not in ((1, 2) if allow_mean_only else (2,)) or S.shape[1] < 2:
        raise ValueError(
            f"{name} must have shape (n, k, 2) (m, sigma2 per class) or (n, 2k) with k >= 2; got shape "
            f"{S.shape}."
        )
    if n_classes is not None and S.shape[1] != n_classes:
        raise ValueError(f"{name} has {S.shape[1]} classes; expected {n_classes}.")
    S[..., 0] = check_range(S[..., 0], f"{name} (m)", 0.0, 1.0, out_of_bounds=out_of_bounds)
    if S.shape[2] == 2:
        S[..., 1] = check_range(S[..., 1], f"{name} (sigma2)", 0.0, SIGMA2_MAX, out_of_bounds=out_of_bounds)
    return S


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def flat_class_scores(scores):
    """``(n, k, 2)`` k-class scores in the transformer layout ``(n, 2k)`` (means, then variances).

    Parameters
    ----------
    scores : ndarray of shape (n, k, 2)
        Validated k-class scores.

    Returns
    -------
    ndarray of shape (n, 2k)
        ``[m_0, ..., m_{k-1}, sigma2_0, ..., sigma2_{k-1}]`` per row.
    """
    S = np.asarray(scores)
    return np.concatenate([S[..., 0], S[..., 1]], axis=1)
