"""The monitor's HTML page: its sections, its figures, and headless Chromium's view of it."""

import numpy as np
import pandas as pd
import pytest
from test_browser import CHROMIUM, WIDTHS, _load

import skcal.monitor._page as page_module
from skcal.monitor import CalibrationMonitor, render_html


def _monitor(shift=0.0, mode="test", times=True, **kw):
    rng = np.random.default_rng(0)
    n = 40_000
    p = rng.uniform(size=n)
    q = np.where(np.arange(n) >= 25_000, np.clip(p + shift, 0, 1), p)
    y = rng.uniform(size=n) < q
    t = pd.date_range("2024-05-01", periods=n, freq="min").to_numpy() if times else None
    return CalibrationMonitor(mode=mode, **kw).update(y, p, time=t)


@pytest.fixture(scope="module")
def alarm_page():
    m = _monitor(shift=0.08)
    assert m.alarm_
    return m, render_html(m, title="Monitor <of> model & co")


def test_the_page_has_every_section(alarm_page, tmp_path):
    m, page = alarm_page
    assert page.startswith("<!DOCTYPE html>") and page.count("<img ") == 3
    for text in (
        "Monitor &lt;of&gt; model &amp; co",
        "Alarm at row",
        "The change is estimated to start at row",
        "Evidence against calibration",
        "Calibration measures per period",
        "Time-uniform reliability diagram",
        "What the guarantee is",
        "not how much",
        "Ville",
    ):
        assert text in page, text
    assert "skcal-report" in page and "verdict alarm" in page
    per = m.measures_by_period()
    assert len(per) == 12 and per["rows"].sum() == m.n_blocks_ * m.block_size
    assert page.count("<tr>") >= 12 + 8
    out = tmp_path / "m.html"
    assert render_html(m, path=out) == out.read_text(encoding="utf-8")


def test_measures_per_period_merge_the_blocks():
    m = _monitor(shift=0.05)
    per = m.measures_by_period(n_periods=4)
    h = m.history_
    assert list(per["first_row"]) == [0, 10_000, 20_000, 30_000]
    first = h.iloc[:10]
    assert np.isclose(per["mean_residual"].iloc[0], first["mean_residual"].mean())
    assert np.isclose(per["brier"].iloc[0], first["brier"].mean())
    assert per["time_start"].iloc[1] == pd.Timestamp("2024-05-01") + pd.Timedelta(minutes=10_000)
    with pytest.raises(ValueError, match="n_periods"):
        m.measures_by_period(n_periods=0)


def test_quiet_detect_classwise_and_untimed_pages():
    quiet = render_html(_monitor(times=False))
    assert "No alarm after 40,000 rows" in quiet and "verdict quiet" in quiet
    detect = render_html(_monitor(shift=0.1, mode="detect", alpha=1e-3))
    assert "Calibration has changed" in detect and "at least 1000 blocks" in detect
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=5_000)
    y = np.array([rng.choice(3, p=row) for row in P])
    cw = render_html(CalibrationMonitor(multiclass="classwise").update(y, P))
    assert cw.count("<img ") == 3 and "level alpha/48" in cw


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
