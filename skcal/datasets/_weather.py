"""Loader of the bundled Weather Sentiment AMT crowd data."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

from skcal._compat import validate_params

__all__ = ["load_weather_sentiment_amt"]

DATA_MODULE = "skcal.datasets.data"
DESCR_MODULE = "skcal.datasets.descr"
_DATA_FILE = "weather_sentiment_amt.csv.gz"
_LICENSE_FILE = "LICENSE-weather_sentiment_amt.txt"
TARGET_NAMES = ("negative", "neutral", "positive", "not_related", "cant_tell")
FEATURE_NAMES = tuple(f"votes_{c}" for c in TARGET_NAMES)


def _read_judgments():
    """The bundled file as arrays ``(worker, task, label, gold)`` (all 6030 rows, file order)."""
    with resources.files(DATA_MODULE).joinpath(_DATA_FILE).open("rb") as fh:
        text = gzip.decompress(fh.read()).decode("ascii")
    table = np.array([line.split(",") for line in text.split()], dtype=str)
    if table.ndim != 2 or table.shape[1] != 5:
        raise RuntimeError(f"{_DATA_FILE} is corrupt: expected 5 columns; got shape {table.shape}.")
    return (table[:, 0], *(table[:, j].astype(np.int64) for j in (1, 2, 3)))


@validate_params({"return_X_y": ["boolean"], "as_frame": ["boolean"]}, prefer_skip_nested_validation=True)
def load_weather_sentiment_amt(*, return_X_y=False, as_frame=False):
    """Load the Weather Sentiment AMT crowd data: vote counts per class and gold labels.

    300 weather-related tweets, each judged by 20 to 25 Amazon Mechanical Turk workers into 5
    sentiment classes (6025 votes after dropping repeated judgments of a tweet by the same
    worker), with one gold label per tweet. Read ``DESCR`` for the source, the cleaning and the
    license (Apache-2.0; the license text ships with skcal).

    =================   ==============
    Classes                          5
    Samples (tweets)               300
    Votes per tweet           20 to 25
    Features            5 vote counts
    =================   ==============

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, ``data`` is a pandas DataFrame (one column per class), ``target`` a Series and
        ``frame`` a DataFrame of both.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        data : {ndarray, DataFrame} of shape (300, 5)
            ``data[i, j]``: number of workers who put tweet ``i`` in class ``j`` (int64).
        target : {ndarray, Series} of shape (300,)
            The gold label of each tweet, a class code 0-4.
        n_votes : ndarray of shape (300,)
            Votes per tweet (the row sums of ``data``).
        task_ids : ndarray of shape (300,)
            The original task id of each tweet.
        n_judgments_raw : int
            Rows of the original file (6030), before dropping the 5 repeated judgments.
        frame : DataFrame of shape (300, 6)
            Only with ``as_frame=True``: ``data`` and ``target`` together.
        feature_names : list of str
            The count columns, ``"votes_negative"``, ...
        target_names : list of str
            The class of each code: ``"negative"``, ``"neutral"``, ``"positive"``,
            ``"not_related"``, ``"cant_tell"``.
        DESCR : str
            Full description, source and license.
        data_module, filename, license_filename : str
            Where the bundled file and its license live inside the package.
    (data, target) : tuple if ``return_X_y`` is True
        The vote counts and the gold labels.

    See Also
    --------
    skcal.votes.VoteCounts.from_class_counts : one-vs-rest counts for second-order calibration.

    Examples
    --------
    >>> from skcal.datasets import load_weather_sentiment_amt
    >>> from skcal.votes import VoteCounts
    >>> amt = load_weather_sentiment_amt()
    >>> amt.data.shape, int(amt.data.sum()), amt.target_names[1]
    ((300, 5), 6025, 'neutral')
    >>> neutral = VoteCounts.from_class_counts(amt.data, positive_class=1)
    >>> neutral
    VoteCounts(n=300, votes=6025, positive=1529)
    """
    worker, task, label, gold = _read_judgments()
    # Keep the first judgment of each (task, worker) pair: a repeat is not an independent vote.
    _, inverse_worker = np.unique(worker, return_inverse=True)
    pair = task * (int(inverse_worker.max()) + 1) + inverse_worker
    _, first = np.unique(pair, return_index=True)
    keep = np.sort(first)
    task, label, gold_kept = task[keep], label[keep], gold[keep]
    ids, first_row, codes = np.unique(task, return_index=True, return_inverse=True)
    order = np.argsort(first_row, kind="stable")  # tweets in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    rows = rank[codes]
    k = len(TARGET_NAMES)
    counts = np.bincount(rows * k + label, minlength=ids.shape[0] * k).reshape(ids.shape[0], k)
    target = np.zeros(ids.shape[0], dtype=np.int64)
    target[rows] = gold_kept
    task_ids = ids[order]
    descr = resources.files(DESCR_MODULE).joinpath("weather_sentiment_amt.rst").read_text(encoding="utf-8")
    frame = None
    data, tgt = counts, target
    if as_frame:
        import pandas as pd

        data = pd.DataFrame(counts, columns=list(FEATURE_NAMES))
        tgt = pd.Series(target, name="gold")
        frame = pd.concat([data, tgt], axis=1)
    if return_X_y:
        return data, tgt
    return Bunch(
        data=data,
        target=tgt,
        n_votes=counts.sum(axis=1),
        task_ids=task_ids,
        n_judgments_raw=int(worker.shape[0]),
        frame=frame,
        feature_names=list(FEATURE_NAMES),
        target_names=list(TARGET_NAMES),
        DESCR=descr,
        data_module=DATA_MODULE,
        filename=_DATA_FILE,
        license_filename=_LICENSE_FILE,
    )
