"""skcal._columns: the column convention of a log of predictions, read from files and folders."""

import numpy as np
import pandas as pd
import pytest

from skcal._columns import model_base, read_log, read_predictions
from skcal._io import CSVFormatError
from skcal.votes import VoteCounts

pytest.importorskip("pyarrow", reason="pyarrow (the parquet extra) is not installed")


def test_model_base():
    assert [model_base(c) for c in ["a", "a:m", "a:sigma2", "a[x]", "a[x]:m", "b:c"]] == [
        "a",
        "a",
        "a",
        "a",
        "a",
        "b:c",
    ]


def test_a_mixed_folder_reads_every_row_with_typed_and_text_columns(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=9)
    y = (rng.uniform(size=9) < p).astype(int)
    pd.DataFrame({"y": y[:4], "m": p[:4]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"y": y[4:], "m": p[4:]}).to_parquet(tmp_path / "b.parquet")
    got_y, preds, classes = read_predictions(tmp_path)
    assert classes is None
    assert np.array_equal(got_y, y) and np.allclose(preds["m"], p)


def test_errors_name_the_file_and_its_own_line_or_row(tmp_path):
    pd.DataFrame({"y": [0, 1], "m": [0.1, 0.2]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"y": [0, 1, 1], "m": [0.1, 0.2, 1.5]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(
        CSVFormatError, match=r"b\.parquet: column 'm' must hold probabilities .* row 3 holds 1\.5"
    ):
        read_predictions(tmp_path)
    (tmp_path / "b.parquet").unlink()
    (tmp_path / "c.csv").write_text("y,m\n1,0.3\n0,abc\n")
    with pytest.raises(CSVFormatError, match=r"c\.csv: column 'm' must be numeric; line 3 holds 'abc'"):
        read_predictions(tmp_path)


def test_a_time_column_is_recognised_and_skipping_it_suggested(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("when,y,m\n2024-01-01T10:00:00,1,0.7\n2024-01-01T11:00:00,0,0.2\n")
    hint = r"It looks like a time column: give it with --time when \(or skip it with --ignore when\)"
    with pytest.raises(CSVFormatError, match=hint):
        read_predictions(path)
    y, preds, _ = read_predictions(path, ignore=["when"])
    assert np.array_equal(y, [1.0, 0.0]) and np.allclose(preds["m"], [0.7, 0.2])
    log = read_log(path, time="when")
    assert np.array_equal(log.y, [1.0, 0.0])
    assert log.time_span() == ("2024-01-01T10:00:00", "2024-01-01T11:00:00")


def test_numeric_parquet_labels_and_pos_label(tmp_path):
    pd.DataFrame({"y": [-1, 1, 1], "m": [0.1, 0.8, 0.7]}).to_parquet(tmp_path / "a.parquet")
    y, _, _ = read_predictions(tmp_path / "a.parquet")
    assert np.array_equal(y, [0.0, 1.0, 1.0])
    pd.DataFrame({"y": [2.0, 3.0, 3.0], "m": [0.1, 0.8, 0.7]}).to_parquet(tmp_path / "b.parquet")
    y, _, _ = read_predictions(tmp_path / "b.parquet", pos_label="3")
    assert np.array_equal(y, [0.0, 1.0, 1.0])


def test_vote_counts_from_a_gzip_csv(tmp_path):
    frame = pd.DataFrame(
        {"y:positive": [1, 2], "y:total": [3, 3], "e:m": [0.4, 0.6], "e:sigma2": [0.01, 0.02]}
    )
    frame.to_csv(tmp_path / "v.csv.gz", index=False)
    y, preds, _ = read_predictions(tmp_path / "v.csv.gz")
    assert isinstance(y, VoteCounts) and np.array_equal(y.total, [3, 3])
    assert preds["e"].shape == (2, 2)
