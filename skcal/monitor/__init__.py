"""Monitoring calibration over time: a tolerance, a lower confidence bound, change detection.

A deployed model's predictions ``p_t`` are logged and their labels ``y_t`` arrive later.
:class:`CalibrationMonitor` takes them batch by batch (in time order) and answers, with
guarantees that hold however long the stream runs and however often it is read:

* **the tolerance test** (``mode="test"``): is the l1 calibration error ``E|E[y | p] - p|`` of
  the stream worse than ``tolerance``? The null ``CE_t <= tolerance`` at every step is tested by
  betting on ``g_t(p_t) (y_t - p_t) - tolerance`` with predictable test functions ``|g_t| <= 1``
  (a global bias up or down, and learned patterns of the bins' residuals at several
  resolutions) and nonnegative bets from a fixed grid; the mixture of the capitals ever reaches
  ``1 / alpha`` with probability at most ``alpha`` under the null (Ville's inequality).
  ``tolerance=0`` tests exact calibration;
* **the lower confidence bound** ``calibration_error_lcb_``: the capitals decrease in the
  tolerance, so the largest tolerance whose mixture has crossed ``1 / alpha`` is a time-uniform
  lower confidence bound of the calibration error;
* **the e-detector** (``mode="detect"``): the Shiryaev-Roberts statistic of the same capitals
  restarted at every block, whose average run length to a false alarm is at least
  ``false_alarm_rows`` rows; the change is located at the start with the most evidence;
* **time-uniform reliability bands**: for each bin a confidence sequence for the mean residual
  ``E[y - p | bin]``, valid at every time the diagram is looked at (the per-bin version of the
  tolerance test).

The formulas and the choices are stated in the private modules, one concept each:

* ``_betting``: the test functions, the bets, the chord capital and the tolerance;
* ``_detector``: the mixture e-process, the lower bound, the e-detector and the change location;
* ``_bands``: the confidence sequences of the bins' mean residuals;
* ``_blocks``: the per-block per-bin sums (the hot path, a few ``np.bincount`` passes);
* ``_engine``: re-blocking, the buffer, segments, the pipeline and the stored history;
* ``_input``: validation of a batch; ``_state``: the JSON encoding of arrays and floats;
  ``_engine_state``: the engine to and from its JSON state;
* ``_tables``: the monitor's tables (history, segments, calendar periods, reliability bands);
* ``_monitor``: :class:`CalibrationMonitor`; ``_page``: the HTML page (:func:`render_html`);
  ``_prometheus``: the status as Prometheus metrics (:func:`render_prometheus`);
* ``_cli``: the ``skcal monitor`` command.
"""

from skcal.monitor._monitor import (
    DEFAULT_HORIZON,
    DEFAULT_TOLERANCE,
    DETECT_MEMORY_ROWS,
    CalibrationMonitor,
)
from skcal.monitor._page import render_html
from skcal.monitor._prometheus import render_prometheus
from skcal.monitor._state import STATE_VERSION
from skcal.monitor._tables import DAILY_SPAN_DAYS

__all__ = [
    "CalibrationMonitor",
    "DAILY_SPAN_DAYS",
    "DEFAULT_HORIZON",
    "DEFAULT_TOLERANCE",
    "DETECT_MEMORY_ROWS",
    "STATE_VERSION",
    "render_html",
    "render_prometheus",
]
