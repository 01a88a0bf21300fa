"""The demo report in a real browser: headless Chromium loads the page and reports what it saw.

A probe script (injected into a copy of the page) records console errors and failed loads from
the first line of ``<head>``, and after the ``load`` event writes into the DOM: how many images
there are and how many decoded (non-zero ``naturalWidth``), the page's scroll width against its
client width, and every element whose right edge passes the page width (outside a scrolling
container). ``--dump-dom`` returns the DOM with those results. Chromium's own log of console
messages (stderr) is checked as well. Skipped, with the reason, when Chromium cannot be found.
"""

import json
import os
import shutil
import subprocess

import pytest

from skcal._demo import run_demo
from skcal.report import render_html

WIDTHS = (1280, 820, 800)


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (.ci/run installs Debian's chromium package with apt-get)",
)

HEAD_PROBE = """<script>
window.__problems = [];
(function () {
  var keep = function (kind) { return function () {
    window.__problems.push(kind + ': ' + Array.prototype.slice.call(arguments).join(' ')); }; };
  console.error = keep('console.error');
  console.warn = keep('console.warn');
  window.addEventListener('error', function (e) {
    var t = e.target || {};
    var what = e.message || (t.tagName + ' ' + (t.src || t.href || '')).slice(0, 80);
    window.__problems.push('error: ' + what);
  }, true);
})();
</script>"""

BODY_PROBE = """<script>
window.addEventListener('load', function () {
  var W = document.documentElement.clientWidth;
  var images = Array.prototype.slice.call(document.images);
  var overflow = [];
  Array.prototype.slice.call(document.body.querySelectorAll('*')).forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) { return; }
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') { return; }
    }
    overflow.push(el.tagName + '.' + el.className + ' right=' + Math.round(r.right));
  });
  // numbers broken across lines inside table cells (a range over the digits with two line tops)
  var broken = [];
  var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  var re = /-?[0-9][0-9.e+-]*/g;
  for (var node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.closest('td')) { continue; }
    var m;
    while ((m = re.exec(node.data)) !== null) {
      var range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      var tops = {};
      Array.prototype.slice.call(range.getClientRects()).forEach(function (r) {
        if (r.width > 0) { tops[Math.round(r.top)] = 1; }
      });
      if (Object.keys(tops).length > 1) { broken.push(m[0]); }
    }
  }
  var out = document.createElement('pre');
  out.id = 'skcal-probe';
  out.textContent = JSON.stringify({
    images: images.length,
    decoded: images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: W,
    overflow: overflow.slice(0, 20),
    broken: broken.slice(0, 20),
    problems: window.__problems
  });
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture(scope="module")
def demo_page():
    reports, title, intro = run_demo(n_bootstrap=5, n_resamples=20, random_state=0)
    return render_html(reports, title=title, intro=intro), sum(len(r.figures) for r in reports)


def _load(page, tmp_path, width):
    probe = page.replace("<head>", "<head>\n" + HEAD_PROBE, 1).replace("</body>", BODY_PROBE + "</body>", 1)
    path = tmp_path / f"probe_{width}.html"
    path.write_text(probe, encoding="utf-8")
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / f'profile_{width}'}",
        f"--window-size={width},900",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=15000",
        "--dump-dom",
        path.as_uri(),
    ]
    env = dict(os.environ, HOME=str(tmp_path))
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'id="skcal-probe"' in run.stdout, "the probe did not run:\n" + run.stderr[-3000:]
    text = run.stdout.split('id="skcal-probe">', 1)[1].split("</pre>", 1)[0]
    text = text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text), run.stderr


@pytest.mark.parametrize("width", WIDTHS)
def test_demo_report_in_headless_chromium(demo_page, tmp_path, width):
    page, n_figures = demo_page
    result, log = _load(page, tmp_path, width)
    assert result["images"] == n_figures >= 7
    assert result["decoded"] == result["images"], result
    assert result["overflow"] == [], result["overflow"]
    assert result["broken"] == [], result["broken"]
    assert result["scrollWidth"] <= result["clientWidth"], result
    assert result["problems"] == [], result["problems"]
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console == [], console


def test_the_probe_sees_broken_images_overflow_and_console_errors(tmp_path):
    """The checks above can fail: a page with each defect is caught."""
    page = (
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        '<img src="data:image/png;base64,AAAA"><div style="width:3000px">wide</div>'
        '<table><tr><td style="width:3em;overflow-wrap:anywhere">0.000123456789012</td></tr></table>'
        "<script>console.error('bad')</script></body></html>"
    )
    result, log = _load(page, tmp_path, 800)
    assert result["images"] == 1 and result["decoded"] == 0
    assert any(o.startswith("DIV") for o in result["overflow"])
    assert result["broken"] == ["0.000123456789012"]
    assert result["scrollWidth"] > result["clientWidth"]
    assert any("console.error: bad" in p for p in result["problems"])
