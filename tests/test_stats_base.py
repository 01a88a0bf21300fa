"""The mergeable statistics protocol (skcal.stats._base)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.stats import AccuracyStatistics, BaseStatistics, BrierScoreStatistics, from_state, merge_all


@settings(max_examples=30, deadline=None)
@given(ps=st.lists(st.floats(0, 1), min_size=1, max_size=30), k=st.integers(2, 5))
def test_merge_all_equals_sequential_merge(ps, k):
    parts = [BrierScoreStatistics().update([1], [p]) for p in ps]
    tree = merge_all(parts, split_every=k)
    seq = sum(parts)
    assert tree.compute() == pytest.approx(seq.compute(), rel=1e-12)
    assert tree.n_updates_ == len(ps)
    for p in parts:  # operands are untouched
        assert p.n_updates_ == 1


def test_merge_does_not_modify_operands_and_empty_is_identity():
    a = AccuracyStatistics().update([0, 1], [0.2, 0.9])
    before = {k: v.copy() for k, v in a.stats_.items()}
    b = a + a
    for k in before:
        np.testing.assert_array_equal(a.stats_[k], before[k])
    assert b.compute() == a.compute()
    assert (AccuracyStatistics() + a).compute() == a.compute()
    assert merge_all([a]).compute() == a.compute() and merge_all([a]) is not a
    with pytest.raises(ValueError, match="at least one"):
        merge_all([])
    with pytest.raises(ValueError, match="split_every"):
        merge_all([a], split_every=1)


def test_from_state_rejects_foreign_dicts():
    with pytest.raises(ValueError, match="get_state"):
        from_state({"a": 1})
    with pytest.raises(ValueError, match="Unknown statistics kind"):
        from_state({"kind": "skcal.Nope", "arrays": {}})
    st_ = BrierScoreStatistics().update([0], [0.5])
    state = st_.get_state()
    state["arrays"] = {"sum_weight": np.ones(())}
    with pytest.raises(ValueError, match="do not match"):
        from_state(state)
    assert BaseStatistics.from_state(st_.get_state()).compute() == st_.compute()


def test_state_holds_plain_values_only():
    st_ = BrierScoreStatistics(pos_label=np.int64(1)).update([0, 1], [0.2, 0.7])
    state = st_.get_state()
    assert type(state["params"]["pos_label"]) is int
    assert all(isinstance(v, np.ndarray) for v in state["arrays"].values())
    # the state arrays are copies
    state["arrays"]["sum_loss"] += 1
    assert st_.compute() == pytest.approx((0.04 + 0.09) / 2)
