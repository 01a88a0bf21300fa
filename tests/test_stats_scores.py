"""Mergeable Brier / log-loss / accuracy statistics against scikit-learn."""

import json

import numpy as np
import pytest
from _stats_helpers import assert_stats_close, chunked, chunkings
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from skcal.stats import AccuracyStatistics, BrierScoreStatistics, LogLossStatistics, from_state

CLASSES = [BrierScoreStatistics, LogLossStatistics, AccuracyStatistics]


def _sk(cls, y, P, w, labels=None, pos_label=None):
    if cls is BrierScoreStatistics:
        return brier_score_loss(y, P, sample_weight=w, labels=labels, pos_label=pos_label)
    if cls is LogLossStatistics:
        if P.ndim == 1 and pos_label is not None:  # sklearn's log_loss has no pos_label
            return log_loss(y == pos_label, P, sample_weight=w)
        if labels is None and P.ndim == 1:
            labels = [0, 1]  # a sample with one class needs them in scikit-learn too
        return log_loss(y, P, sample_weight=w, labels=labels)
    Q = np.column_stack([1 - P, P]) if P.ndim == 1 else P
    cols = np.asarray(labels) if labels is not None else np.array([0, 1])
    if P.ndim == 1 and pos_label is not None:
        return accuracy_score(y == pos_label, np.argmax(Q, axis=1) == 1, sample_weight=w)
    return accuracy_score(y, cols[np.argmax(Q, axis=1)], sample_weight=w)


def _binary_data(seed, n):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    # ties, exact 0 and 1, and exact 1/2 (an accuracy tie)
    p = rng.choice([0.0, 1.0, 0.5, 0.25, 0.8], n) if seed % 2 else rng.uniform(0, 1, n)
    w = rng.choice([0.0, 1.0, 2.5], n)
    w[0] = 1.0  # at least one positive weight
    return y, p, w


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), weighted=st.booleans(), data=st.data())
@pytest.mark.parametrize("cls", CLASSES)
def test_binary_chunking_equals_one_update_and_sklearn(cls, seed, n, weighted, data):
    y, p, w = _binary_data(seed, n)
    w = w if weighted else None
    cuts = data.draw(chunkings(n))
    merged = chunked(cls, (y, p), w, cuts, data)
    whole = cls().update(y, p, sample_weight=w)
    assert_stats_close(merged.stats_, whole.stats_)
    assert merged.compute() == pytest.approx(_sk(cls, y, p, w), rel=1e-12, abs=1e-15)
    back = from_state(json.loads(json.dumps(_jsonable(merged.get_state()))))
    assert back.compute() == pytest.approx(merged.compute(), rel=1e-15)
    assert back.n_updates_ == merged.n_updates_ == len(cuts) - 1


def _jsonable(state):
    """The state is plain data: it survives JSON (arrays as lists)."""
    out = dict(state)
    out["arrays"] = {k: np.asarray(v).tolist() for k, v in state["arrays"].items()}
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), data=st.data())
@pytest.mark.parametrize("cls", CLASSES)
def test_multiclass_chunks_missing_classes(cls, seed, n, data):
    rng = np.random.default_rng(seed)
    labels = ["ant", "bee", "cat", "dog"]
    y = np.array(labels)[rng.integers(0, 4, n)]
    P = rng.dirichlet(np.ones(4) * 0.5, n)
    P[rng.uniform(size=n) < 0.2] = [1.0, 0.0, 0.0, 0.0]  # exact 0 and 1
    w = rng.choice([0.0, 1.0, 3.0], n)
    w[0] = 1.0
    cuts = data.draw(chunkings(n))
    merged = chunked(lambda: cls(labels=labels), (y, P), w, cuts, data)
    assert merged.compute() == pytest.approx(_sk(cls, y, P, w, labels=labels), rel=1e-12, abs=1e-15)
    assert_stats_close(merged.stats_, cls(labels=labels).update(y, P, sample_weight=w).stats_)


@pytest.mark.parametrize("cls", CLASSES)
def test_string_labels_with_pos_label_and_predict_proba_input(cls):
    rng = np.random.default_rng(3)
    y = np.array(["ham", "spam"])[rng.integers(0, 2, 50)]
    p = rng.uniform(0, 1, 50)
    st_ = cls(pos_label="spam").update(y, p)
    assert st_.compute() == pytest.approx(_sk(cls, y, p, None, pos_label="spam"), rel=1e-12)
    P2 = np.column_stack([1 - p, p])
    st2 = cls(labels=["ham", "spam"]).update(y, P2)
    ref = _sk(cls, y, P2, None, labels=["ham", "spam"]) if cls is not AccuracyStatistics else None
    if ref is not None:
        assert st2.compute() == pytest.approx(ref, rel=1e-12)
    assert st2.compute() == pytest.approx(st_.compute(), rel=1e-9)


def test_log_loss_clipping_convention_is_sklearns():
    y = np.array([1, 0, 1])
    p = np.array([0.0, 1.0, 1.0])  # two certain mistakes: -log(eps) each
    st_ = LogLossStatistics().update(y, p)
    assert st_.compute() == pytest.approx(log_loss(y, p), rel=1e-14)
    assert st_.compute() == pytest.approx(-2 * np.log(np.finfo(float).eps) / 3, rel=1e-14)


def test_merge_rules_and_identity():
    a = BrierScoreStatistics().update([0, 1], [0.3, 0.9])
    empty = BrierScoreStatistics()
    assert (a + empty).compute() == a.compute() == (empty + a).compute()
    assert sum([a, a]).compute() == pytest.approx(a.compute())
    with pytest.raises(TypeError, match="same kind"):
        a + LogLossStatistics()
    with pytest.raises(ValueError, match="different parameters"):
        a + BrierScoreStatistics(pos_label=1)
    with pytest.raises(ValueError, match="no rows of positive weight"):
        empty.compute()
    zero = BrierScoreStatistics().update([0, 1], [0.5, 0.5], sample_weight=[0.0, 0.0])
    assert (a + zero).compute() == a.compute()


@pytest.mark.parametrize(
    "kwargs, y, p, match",
    [
        ({}, [0, 1, 2], np.full((3, 3), 1 / 3), "labels="),
        ({}, ["a", "b"], [0.2, 0.4], "pos_label"),
        ({}, [0, 1], [0.2, np.nan], "NaN"),
        ({}, [0, 1], [0.2, 1.4], r"\[0, 1\]"),
        ({"labels": [0, 1, 2]}, [0, 1], np.full((2, 3), 0.4), "sum to 1"),
        ({"labels": [0, 1, 2]}, [0, 5], np.full((2, 3), 1 / 3), "not in labels"),
        ({}, [0, 1, 1], [0.2, 0.4], "Inconsistent"),
    ],
)
def test_bad_chunks(kwargs, y, p, match):
    with pytest.raises(ValueError, match=match):
        BrierScoreStatistics(**kwargs).update(y, p)


def test_bad_weights_and_params():
    with pytest.raises(ValueError, match="non-negative"):
        AccuracyStatistics().update([0, 1], [0.2, 0.4], sample_weight=[1.0, -1.0])
    # one check of sample weights everywhere (skcal._validation.check_sample_weight)
    with pytest.raises(ValueError, match=r"sample_weight has 1 entries; expected 2 \(one per sample\)"):
        AccuracyStatistics().update([0, 1], [0.2, 0.4], sample_weight=[1.0])
    with pytest.raises(ValueError, match="duplicates"):
        AccuracyStatistics(labels=[0, 0, 1])


def test_state_is_versioned_and_checked():
    st_ = BrierScoreStatistics(labels=[1, 2, 3]).update([1, 3], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    state = st_.get_state()
    assert state["kind"] == "skcal.BrierScoreStatistics" and state["params"]["labels"] == [1, 2, 3]
    bad = dict(state, state_version=99)
    with pytest.raises(ValueError, match="version"):
        from_state(bad)
    with pytest.raises(ValueError, match="not 'skcal.LogLossStatistics'"):
        LogLossStatistics.from_state(state)
    assert BrierScoreStatistics.from_state(state).compute() == st_.compute()
