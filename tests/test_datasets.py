import numpy as np
import pandas as pd
import pytest

from skcal.datasets import load_weather_sentiment_amt
from skcal.votes import VoteCounts


def test_shapes_counts_and_target():
    amt = load_weather_sentiment_amt()
    assert amt.data.shape == (300, 5) and amt.data.dtype == np.int64
    assert amt.target.shape == (300,) and set(np.unique(amt.target)) == {0, 1, 2, 3, 4}
    np.testing.assert_array_equal(amt.data.sum(axis=1), amt.n_votes)
    assert int(amt.n_votes.sum()) == 6025  # 6030 judgments minus 5 repeated (task, worker) pairs
    assert amt.n_votes.min() == 20 and amt.n_votes.max() == 25
    np.testing.assert_array_equal(np.bincount(amt.target), [57, 70, 72, 92, 9])
    np.testing.assert_array_equal(amt.data.sum(axis=0), [1167, 1529, 1716, 1327, 286])
    assert len(np.unique(amt.task_ids)) == 300
    assert amt.feature_names == [f"votes_{c}" for c in amt.target_names]
    assert amt.target_names == ["negative", "neutral", "positive", "not_related", "cant_tell"]
    assert "Apache License 2.0" in amt.DESCR and "Venanzi" in amt.DESCR
    assert amt.frame is None


def test_matches_the_raw_judgments_counted_by_hand():
    # Independent count of the bundled file with pandas: first judgment of each (task, worker).
    from importlib import resources

    path = resources.files("skcal.datasets.data").joinpath("weather_sentiment_amt.csv.gz")
    with resources.as_file(path) as p:
        raw = pd.read_csv(p, header=None, names=["worker", "task", "label", "gold", "time"])
    assert len(raw) == 6030
    kept = raw.drop_duplicates(["task", "worker"], keep="first")
    table = pd.crosstab(kept["task"], kept["label"]).reindex(columns=range(5), fill_value=0)
    amt = load_weather_sentiment_amt()
    np.testing.assert_array_equal(table.loc[amt.task_ids].to_numpy(), amt.data)
    gold = raw.groupby("task")["gold"].first()
    np.testing.assert_array_equal(gold.loc[amt.task_ids].to_numpy(), amt.target)


def test_as_frame_and_return_X_y():
    amt = load_weather_sentiment_amt(as_frame=True)
    assert isinstance(amt.data, pd.DataFrame) and list(amt.data.columns) == amt.feature_names
    assert isinstance(amt.target, pd.Series) and amt.target.name == "gold"
    assert amt.frame.shape == (300, 6)
    X, y = load_weather_sentiment_amt(return_X_y=True)
    np.testing.assert_array_equal(X, amt.data.to_numpy())
    np.testing.assert_array_equal(y, amt.target.to_numpy())
    Xf, yf = load_weather_sentiment_amt(return_X_y=True, as_frame=True)
    assert isinstance(Xf, pd.DataFrame) and isinstance(yf, pd.Series)


def test_license_ships_with_the_data():
    from importlib import resources

    text = resources.files("skcal.datasets.data").joinpath("LICENSE-weather_sentiment_amt.txt").read_text()
    assert "Apache License" in text and "Version 2.0" in text


def test_counts_feed_vote_counts():
    amt = load_weather_sentiment_amt()
    v = VoteCounts.from_class_counts(amt.data, positive_class=1)
    assert len(v) == 300 and int(v.positive.sum()) == 1529
    np.testing.assert_array_equal(v.total, amt.n_votes)


@pytest.mark.parametrize("kw", [{"as_frame": 1}, {"return_X_y": "yes"}])
def test_bad_arguments(kw):
    with pytest.raises(ValueError, match=list(kw)[0]):
        load_weather_sentiment_amt(**kw)
