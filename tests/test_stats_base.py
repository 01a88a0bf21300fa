"""The mergeable statistics protocol (skcal.stats._base)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skcal.stats import AccuracyStatistics, BaseStatistics, BrierScoreStatistics, from_state, merge_all
from skcal.votes import Snapshots


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


# ---------------------------------------------------------------------------------------------
# parameters: declared by each class, checked once, at construction (issue 20)
# ---------------------------------------------------------------------------------------------
def _statistics_classes():
    import inspect

    import skcal.stats as stats_module
    from skcal.stats._base import _REGISTRY

    public = {getattr(stats_module, n) for n in stats_module.__all__}
    return sorted(
        (c for c in _REGISTRY.values() if c in public and not inspect.isabstract(c)), key=lambda c: c.__name__
    )


STATISTICS = _statistics_classes()
#: the smallest valid construction of each class (the others take defaults)
REQUIRED = {
    "CE1Statistics": {"degree": 2},
    "CE2Statistics": {"degree": 2},
    "CE2PlugInStatistics": {"coef": np.zeros((2, 1, 1))},
    "ClasswiseStatistics": {"labels": [0, 1]},
    "TopLabelStatistics": {"labels": [0, 1]},
    "PoissonBootstrap": {"template": BrierScoreStatistics()},
}
#: a value each class must refuse at construction, for one of its parameters
BAD = {
    "AccuracyStatistics": ("pos_label", [1]),
    "BinnedStatistics": ("n_bins", 0),
    "BrierScoreStatistics": ("labels", 3),
    "CE1Statistics": ("alpha", -1.0),
    "CE2PlugInStatistics": ("order", 3),
    "CE2Statistics": ("basis", "1d"),
    "ClasswiseStatistics": ("n_bins", True),
    "CutoffGridStatistics": ("n_cells", 2**25),
    "CutoffStatistics": ("measure", "kolmogorov"),
    "SortedCutoffStatistics": ("measure", "ece"),
    "LogLossStatistics": ("pos_label", 1j),
    "QuantileCellStatistics": ("n_sub", 1),
    "QuantileHistogramStatistics": ("n_cells", 1000),
    "ScdlStatistics": ("max_bins", 1000),
    "SmoothECEStatistics": ("pos_label", object()),
    "SmoothCEStatistics": ("pos_label", object()),
    "SmoothCEGridStatistics": ("n_cells", 0),
    "PoissonBootstrap": ("n_replicates", 0),
    "TopLabelStatistics": ("measure", "ece"),
}


#: classes without parameters (nothing to refuse)
NO_PARAMETERS = {"MeanStatistics"}


def test_every_statistics_class_is_tested():
    assert {c.__name__ for c in STATISTICS} == set(BAD) | NO_PARAMETERS
    assert all(not c._param_names for c in STATISTICS if c.__name__ in NO_PARAMETERS)


@pytest.mark.parametrize("cls", STATISTICS, ids=lambda c: c.__name__)
def test_statistics_class_declares_constraints_for_every_parameter(cls):
    import inspect

    from sklearn.utils._param_validation import validate_parameter_constraints

    params = {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    assert set(params) == set(cls._param_names)
    undeclared = set(params) - set(cls._parameter_constraints)
    assert not undeclared, sorted(undeclared)
    defaults = {k: v for k, v in params.items() if v is not inspect.Parameter.empty}
    validate_parameter_constraints(cls._parameter_constraints, defaults, caller_name=cls.__name__)


@pytest.mark.parametrize(
    "cls", [c for c in STATISTICS if c.__name__ not in NO_PARAMETERS], ids=lambda c: c.__name__
)
def test_bad_parameter_is_refused_at_construction(cls):
    from sklearn.utils._param_validation import InvalidParameterError

    name, value = BAD[cls.__name__]
    expected = rf"^The '{name}' parameter of {cls.__name__}.__init__ must be"
    with pytest.raises(InvalidParameterError, match=expected):
        cls(**{**REQUIRED.get(cls.__name__, {}), name: value})


def test_parameters_are_checked_once_per_construction_not_per_update(monkeypatch):
    import skcal.stats._base as base

    calls = []
    real = base.validate_parameter_constraints
    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "validate_parameter_constraints", counting)
    st_ = BrierScoreStatistics(pos_label=1)
    assert len(calls) == 1
    st_.update([0, 1], [0.2, 0.7]).update([1], [0.9])
    st_.compute()
    st_.get_state()
    assert len(calls) == 1
    # a merge builds one new object; from_state checks the parameters its state carries
    st_.merge(st_)
    assert len(calls) == 2
    from_state(st_.get_state())
    assert len(calls) == 3


def test_from_state_checks_the_parameters_it_carries():
    from sklearn.utils._param_validation import InvalidParameterError

    from skcal.stats import BinnedStatistics

    state = BinnedStatistics(n_bins=4).update([0, 1], [0.2, 0.7]).get_state()
    state["params"]["n_bins"] = -4
    expected = r"'n_bins' parameter of BinnedStatistics.__init__ must be"
    with pytest.raises(InvalidParameterError, match=expected):
        from_state(state)


def test_pickle_and_copy_do_not_rebuild_or_recheck():
    import copy
    import pickle

    st_ = BrierScoreStatistics(labels=[0, 1, 2]).update([0, 2], np.full((2, 3), 1 / 3))
    for other in (pickle.loads(pickle.dumps(st_)), copy.deepcopy(st_)):
        assert other.get_params() == st_.get_params() and other.compute() == st_.compute()


def test_from_validated_equals_update_on_the_raw_inputs():
    from skcal._validation import check_binary_probabilities, check_scores
    from skcal.stats import (
        BinnedStatistics,
        CE1Statistics,
        CE2PlugInStatistics,
        CE2Statistics,
        ScdlStatistics,
        SmoothECEStatistics,
    )
    from skcal.votes import snapshot_targets

    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    w = rng.uniform(0, 2, size=300)
    yv, pv, wv = check_binary_probabilities(y, p, sample_weight=w)
    binary = ((ScdlStatistics, {"max_bins": 64}), (SmoothECEStatistics, {}), (BinnedStatistics, {}))
    for cls, params in binary:
        a = cls.from_validated(yv, pv, wv, **params)
        b = cls(**params).update(y, p, sample_weight=w)
        assert a.n_updates_ == b.n_updates_ == 1
        for k in b.stats_:
            np.testing.assert_array_equal(a.stats_[k], b.stats_[k])
    S = np.column_stack([p, rng.uniform(0, 0.25, 300)])
    Y = (rng.uniform(size=(300, 2)) < p[:, None]).astype(float)
    t1, t2, _ = snapshot_targets(Snapshots(Y))
    a = CE2Statistics.from_validated(np.column_stack([t1, t2]), check_scores(S), wv, degree=3)
    b = CE2Statistics(degree=3).update(Snapshots(Y), S, sample_weight=w)
    np.testing.assert_array_equal(a.stats_["M"], b.stats_["M"])
    a1 = CE1Statistics.from_validated(yv[:, None], check_scores(p), wv, degree=3)
    b1 = CE1Statistics(degree=3).update(y, p, sample_weight=w)
    np.testing.assert_array_equal(a1.stats_["AtB"], b1.stats_["AtB"])
    plug = b.plug_in()
    a2 = CE2PlugInStatistics.from_validated(check_scores(S), wv, coef=plug.coef, order=2)
    b2 = plug.update(Snapshots(Y), S, sample_weight=w)
    np.testing.assert_array_equal(a2.stats_["sum_abs"], b2.stats_["sum_abs"])


def test_merge_all_merges_a_group_of_cutoff_runs_in_one_step():
    from skcal.stats import CutoffStatistics

    rng = np.random.default_rng(1)
    parts = []
    for _ in range(7):
        p = rng.choice(np.linspace(0, 1, 11), size=50)
        parts.append(CutoffStatistics().update((rng.uniform(size=50) < p).astype(int), p))
    tree = merge_all(parts, split_every=7)
    seq = parts[0]
    for o in parts[1:]:
        seq = seq.merge(o)
    np.testing.assert_array_equal(tree.stats_["values"], seq.stats_["values"])
    np.testing.assert_allclose(tree.stats_["resid"], seq.stats_["resid"], atol=1e-12)
    assert tree.n_updates_ == 7 and tree.compute() == pytest.approx(seq.compute(), abs=1e-12)


def test_merge_all_refuses_other_objects():
    with pytest.raises(TypeError, match="statistics objects"):
        merge_all([BrierScoreStatistics(), 3])
