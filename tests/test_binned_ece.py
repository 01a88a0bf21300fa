import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve

from skcal import binned_ece


def ece_from_calibration_curve(y, p, n_bins, strategy):
    """ECE from scikit-learn's curve; bin counts by an independent loop over the same edges."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    else:
        edges = np.linspace(0, 1, n_bins + 1)
    members = {}
    for s, v in enumerate(p):  # bin b holds edges[b] < v <= edges[b + 1] (inner edges go left)
        b = next((k for k in range(n_bins - 1) if v <= edges[k + 1]), n_bins - 1)
        members.setdefault(b, []).append(s)
    bins = sorted(members)
    counts = np.array([len(members[b]) for b in bins])
    # the loop's bins are calibration_curve's bins
    np.testing.assert_allclose([p[members[b]].mean() for b in bins], prob_pred)
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / len(p))


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", range(8))
def test_agrees_with_calibration_curve(strategy, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    p = rng.uniform(size=n) ** rng.uniform(0.5, 2)
    if seed % 2:
        p = np.round(p, 1)  # ties and predictions on the edges
    y = (rng.uniform(size=n) < rng.uniform(size=n)).astype(int)
    n_bins = int(rng.integers(1, 15))
    got = binned_ece(y, p, n_bins=n_bins, strategy=strategy)
    assert got == pytest.approx(ece_from_calibration_curve(y, p, n_bins, strategy), abs=1e-12)


def test_default_is_eleven_uniform_bins_and_weights():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p**2).astype(int)
    assert binned_ece(y, p) == pytest.approx(ece_from_calibration_curve(y, p, 11, "uniform"))
    k = rng.integers(1, 4, size=300)
    assert binned_ece(y, p, sample_weight=k) == pytest.approx(binned_ece(np.repeat(y, k), np.repeat(p, k)))


def test_input_types_and_bad_input():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    ref = binned_ece(y, p)
    assert binned_ece(pd.Series(y), pd.Series(p)) == ref == binned_ece(y.tolist(), p.tolist())
    with pytest.raises(ValueError, match="n_bins"):
        binned_ece(y, p, n_bins=0)
    with pytest.raises(ValueError, match="strategy"):
        binned_ece(y, p, strategy="kmeans")
    with pytest.raises(ValueError, match="binary labels"):
        binned_ece([0, 1, 2], [0.1, 0.2, 0.3])
