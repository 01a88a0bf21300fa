"""Second-order labels, said rather than guessed: vote counts and individual votes.

Crowd data comes as *counts* (item ``i`` received ``total[i]`` binary votes, ``positive[i]`` of
them positive; or ``counts[i, j]`` votes for class ``j``) or as *individual votes* (``r`` votes per
item, NaN for a missing one: the spec's snapshots). :class:`VoteCounts` holds counts and
:class:`Snapshots` holds votes; every skcal function or estimator that takes second-order labels
takes either, with identical results for the same votes (counts are the sufficient statistics).
A plain array is read as snapshots, the spec's convention, unless it also reads as a table of
counts per class of the task's classes (an ``(n, k)`` array of non-negative integers): then it is
refused with both readings named (:func:`refuse_ambiguous_votes`), and the containers say which
is meant.

From ``a`` positive votes out of ``c`` the unbiased targets are

* ``t1 = a / c`` for ``E[f*]`` (needs ``c >= 1``), and
* ``t2 = a (a - 1) / (c (c - 1))`` for ``E[f*^2]`` (the share of ordered pairs of distinct votes
  that are both positive; needs ``c >= 2``),

where ``f*`` is the probability that one vote on the item is positive. With one vote per item
only ``t1`` exists: first-order measures and first-order recalibration work, second-order ones
need at least two votes on (some of) the items.

**k classes.** ``VoteCounts(counts=C)`` holds an ``(n, k)`` table of votes per class (rows may
have different totals); its targets are per class, ``t1[:, j] = a_j / c`` and
``t2[:, j] = a_j (a_j - 1) / (c (c - 1))``, the binary targets of the one-vs-rest task of class
``j`` (:meth:`VoteCounts.one_vs_rest`). :func:`check_class_votes` turns counts or snapshots of
class labels into such counts (the sufficient statistics of every k-class second-order measure),
and :func:`check_class_scores` validates k-class second-order scores in either layout: ``(n, k,
2)`` (``m`` at ``[..., 0]``, ``sigma2`` at ``[..., 1]``) or the transformer layout ``(n, 2k)``
(the k means, then the k variances).

The parts: the containers (``_containers``), the checks of labels (``_checks``) and of k-class
scores (``_scores``). Every name is imported from here.
"""

from skcal.votes._checks import (
    check_class_votes,
    check_snapshots,
    first_order_targets,
    refuse_ambiguous_votes,
    require_pairs,
    snapshot_targets,
    snapshot_votes,
)
from skcal.votes._containers import Snapshots, VoteCounts
from skcal.votes._scores import check_class_scores, class_scores_layout, flat_class_scores

__all__ = [
    "Snapshots",
    "VoteCounts",
    "check_class_scores",
    "check_class_votes",
    "check_snapshots",
    "class_scores_layout",
    "first_order_targets",
    "flat_class_scores",
    "refuse_ambiguous_votes",
    "require_pairs",
    "snapshot_targets",
    "snapshot_votes",
]
