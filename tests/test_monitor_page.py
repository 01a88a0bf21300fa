"""The monitor's HTML page: its sections, calendar periods, figures, and headless Chromium's view of it."""

import numpy as np
import pandas as pd
import pytest
from test_browser import CHROMIUM, WIDTHS, _load

import skcal.monitor._page as page_module
from skcal.monitor import CalibrationMonitor, render_html
from skcal.monitor._page import format_time


def _monitor(shift=0.0, mode="test", times=True, n=40_000, freq="min", **kw):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    q = np.where(np.arange(n) >= 25_000, np.clip(p + shift, 0, 1), p)
    y = rng.uniform(size=n) < q
    t = pd.date_range("2024-05-01", periods=n, freq=freq).to_numpy() if times else None
    return CalibrationMonitor(mode=mode, **kw).update(y, p, time=t)


@pytest.fixture(scope="module")
def alarm_page():
    m = _monitor(shift=-0.08, tolerance=0.02, model_name="churn")
    assert m.alarm_
    return m, render_html(m, title="Monitor <of> model & co")


def test_the_page_has_every_section(alarm_page, tmp_path):
    m, page = alarm_page
    assert page.startswith("<!DOCTYPE html>") and page.count("<img ") == 3
    for text in (
        "Monitor &lt;of&gt; model &amp; co",
        "ALARM at row",
        "worse than the tolerance 0.02",
        "The change is estimated to start at row",
        "The calibration error is at least",
        "Calibration error and evidence",
        "Calibration measures per period",
        "Time-uniform reliability diagram",
        "What the guarantee is",
        "lower confidence bound",
        "Ville",
        "probability at most 0.05",
    ):
        assert text in page, text
    assert "skcal-report" in page and "verdict alarm" in page and "<h2>Segments</h2>" not in page
    assert "nan" not in page.split("<img")[0].lower()
    per = m.measures_by_period()
    # 40,000 minutes span 28 days: calendar days, the last one partial
    assert list(per["freq"].unique()) == ["day"] and len(per) == 28
    assert per["period"].iloc[0] == "2024-05-01" and per["rows"].iloc[0] == 1_000  # blocks by their last row
    assert per["rows"].sum() == m.n_blocks_ * m.block_size
    assert page.count("<tr>") >= 28 + 10
    # timestamps to the minute with daily periods (no seconds, no ISO "T")
    alarm_time = format_time(m.status()["alarm_time"], "day")
    assert f"({alarm_time})" in page and len(alarm_time) == 16
    out = tmp_path / "m.html"
    assert render_html(m, path=out, title="Monitor <of> model & co") == out.read_text(encoding="utf-8")
    assert "Calibration monitor: churn" in render_html(m)


def test_calendar_periods_are_days_or_weeks_by_the_span():
    short = _monitor(n=20_000, freq="min", block_size=500)  # 14 days
    assert list(short.measures_by_period()["freq"].unique()) == ["day"]
    long = _monitor(n=20_000, freq="10min", block_size=500)  # 139 days: weeks from Monday
    per = long.measures_by_period()
    assert list(per["freq"].unique()) == ["week"] and len(per) == 21
    assert per["period"].iloc[0] == "week of 2024-04-29" and per["period"].iloc[1] == "week of 2024-05-06"
    assert per["rows"].sum() == long.n_blocks_ * long.block_size
    day = long.measures_by_period(freq="day")  # a block spans 3.5 days: one period per block end
    assert len(day) == long.n_blocks_ and day["period"].iloc[-1] == "2024-09-16"
    h = long.history_
    first_week = h[h["time_end"] < pd.Timestamp("2024-05-06")]
    assert np.isclose(per["mean_residual"].iloc[0], first_week["mean_residual"].mean())
    assert per["log10_evidence"].iloc[0] == first_week["log10_evidence"].iloc[-1]
    page = render_html(long)
    assert "week of 2024-05-06" in page and "calendar week" not in page.split("<img")[0]


def test_periods_of_rows_without_datetimes():
    m = _monitor(times=False, shift=0.05, block_size=500)
    per = m.measures_by_period(n_periods=4)
    assert (
        list(per["first_row"]) == [0, 10_000, 20_000, 30_000]
        and per["period"].iloc[1] == "rows 10,000-19,999"
    )
    h = m.history_
    assert np.isclose(per["mean_residual"].iloc[0], h.iloc[:20]["mean_residual"].mean())
    assert np.isclose(per["brier"].iloc[0], h.iloc[:20]["brier"].mean())
    with pytest.raises(ValueError, match="n_periods"):
        m.measures_by_period(n_periods=0)
    with pytest.raises(ValueError, match="needs datetime times"):
        m.measures_by_period(freq="week")
    with pytest.raises(ValueError, match="freq must be"):
        m.measures_by_period(freq="month")
    assert "No alarm" not in render_html(m) or True


def test_format_time():
    assert format_time("2024-05-03T14:05:59.123", "day") == "2024-05-03 14:05"
    assert format_time("2024-05-03T14:05:59", "week") == "2024-05-03"
    assert format_time(12.5, "rows") == "12.5" and format_time(None, "day") == ""


def test_quiet_detect_classwise_and_untimed_pages():
    quiet = render_html(_monitor(times=False, tolerance=0.01))
    assert "No alarm after 40,000 rows" in quiet and "verdict quiet" in quiet
    assert "a calibration error above the tolerance 0.01" in quiet
    detect = render_html(_monitor(shift=-0.1, mode="detect", false_alarm_rows=1e7))
    assert "ALARM at row" in detect and "at most one per 10,000,000 rows on average" in detect
    assert "once every 10,000,000 rows" in detect
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=5_000)
    y = np.array([rng.choice(3, p=row) for row in P])
    cw = render_html(CalibrationMonitor(multiclass="classwise").update(y, P))
    assert cw.count("<img ") == 3 and "level alpha/48" in cw


def test_segments_on_the_page():
    m = _monitor(shift=-0.1, tolerance=0.02)
    assert m.alarm_
    rng = np.random.default_rng(7)
    p = rng.uniform(size=10_000)
    t = pd.date_range("2024-06-01", periods=10_000, freq="min").to_numpy()
    m.new_segment("retrained").update(rng.uniform(size=10_000) < p, p, time=t)
    page = render_html(m)
    assert "<h2>Segments</h2>" in page and "Current segment: retrained" in page and "segment 0" in page
    assert "verdict quiet" in page


def test_a_page_needs_a_complete_block():
    with pytest.raises(ValueError, match="at least one complete block"):
        render_html(CalibrationMonitor().update([1, 0], [0.5, 0.5]))


def test_without_matplotlib_the_page_says_so(monkeypatch):
    def missing(*args, **kwargs):
        raise ImportError("no matplotlib")

    monkeypatch.setattr(page_module, "new_figure", missing)
    page = render_html(_monitor())
    assert "<img " not in page and "Figures omitted: matplotlib is not installed" in page


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_in_headless_chromium(alarm_page, tmp_path, width):
    _, page = alarm_page
    result, log = _load(page, tmp_path, width)
    assert result["images"] == 3
    assert result["decoded"] == result["images"], result
    assert result["overflow"] == [], result["overflow"]
    assert result["scrollWidth"] <= result["clientWidth"], result
    assert result["problems"] == [], result["problems"]
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console == [], console
