"""SPEC 0 data conventions: any two label classes (pos_label as scikit-learn), (n, 2)
predict_proba input (column 1), against the reference values on 0/1 labels and (n,) input."""

import numpy as np
import pytest
from reference import scdl_ref as R

import skcal


def _data(seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=40), 2)
    p[:3] = [0.0, 1.0, 0.5]
    y = (rng.uniform(size=40) < p).astype(int)
    return y, p


@pytest.mark.parametrize("seed", range(3))
def test_binary_label_encodings_and_two_column_input(seed):
    y, p = _data(seed)
    P2 = np.column_stack([1 - p, p])
    ref = {
        "cutoff": R.cutoff_error(y, p),
        "ece": R.binned_ece_uniform(y, p, 11),
        "scdl": R.scdl(y, p, [2, 4, 8])[0],
    }
    encodings = [
        (y, {}),
        (2 * y - 1, {}),  # {-1, 1}
        (y.astype(bool), {}),  # booleans
        (np.array(["no", "yes"])[y], {"pos_label": "yes"}),
        (np.array(["b", "a"])[y], {"pos_label": "a"}),  # positive class is not the greater one
    ]
    for labels, kw in encodings:
        for prob in (p, P2):
            assert skcal.cutoff_calibration_error(labels, prob, **kw) == pytest.approx(
                ref["cutoff"], abs=1e-12
            )
            assert skcal.binned_ece(labels, prob, **kw) == pytest.approx(ref["ece"], abs=1e-12)
            assert skcal.scdl_score(labels, prob, max_bins=8, **kw) == pytest.approx(ref["scdl"], abs=1e-12)


def test_expected_swap_regret_label_encodings():
    y, p = _data(7)
    U = np.array([[0.9, 0.1], [0.3, 0.6], [0.5, 0.5]])
    ref = R.swap_regret_bruteforce(y, R.rounded_action_proba(p, U, 4), U)
    assert skcal.expected_swap_regret(2 * y - 1, p, U, 4) == pytest.approx(ref, abs=1e-12)
    assert skcal.expected_swap_regret(np.array(["n", "p"])[y], p, U, 4, pos_label="p") == pytest.approx(
        ref, abs=1e-12
    )


def test_ensemble_moments_multiclass_pos_label():
    from reference import ce2_ref as C
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=90)]
    members = [LogisticRegression(C=c).fit(X, y) for c in (0.1, 1.0, 10.0)]
    probs = np.column_stack([mem.predict_proba(X)[:, list(mem.classes_).index("b")] for mem in members])
    got = skcal.EnsembleMoments(members, pos_label="b").fit_transform(X)
    np.testing.assert_allclose(got, C.ensemble_moments(probs), atol=1e-12)
