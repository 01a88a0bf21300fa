"""Monitoring calibration over time: anytime-valid alarms, change detection, time-uniform bands.

A deployed model's predictions ``p_t`` are logged and their labels ``y_t`` arrive later.
:class:`CalibrationMonitor` takes them batch by batch (in time order) and tests the null
"the forecasts are calibrated at every step", ``E[y_t | past, p_t] = p_t``, by betting:

* **the test** (``mode="test"``): a mixture of test supermartingales, one per bin of the
  resolutions ``1, 2, ..., n_bins`` equal-width bins, each betting on the sign of its bin's
  residual ``y - p`` with predictable bets fixed within a block of rows (aGRAPA, clipped so every
  factor stays in ``[1/2, 3/2]``). By Ville's inequality it ever reaches ``1 / alpha`` with
  probability at most ``alpha`` under the null, whatever the horizon and however often it is
  read; ``min(1, 1 / max e-value so far)`` is an anytime-valid p-value;
* **the e-detector** (``mode="detect"``): ``M_t = (M_{t-1} + 1) * factor_t`` per test function,
  mixed with the same weights, whose average run length to a false alarm is at least
  ``1 / alpha`` blocks; the change is located at the start with the most evidence at the alarm;
* **time-uniform reliability bands**: for each bin a confidence sequence for the mean residual
  ``E[y - p | bin]``, valid at every time the diagram is looked at.

The formulas and the choices (the bets, the two capitals, the change estimate, the bands) are
stated in the private modules, one concept each:

* ``_betting``: the test functions, their weights, the bets and the per-block log factors;
* ``_detector``: the mixture e-process, the e-detector and the change location;
* ``_bands``: the confidence sequences of the bins' mean residuals;
* ``_blocks``: the per-block per-bin sums (the hot path, a few ``np.bincount`` passes);
* ``_engine``: re-blocking, the buffer, the pipeline and the stored history;
* ``_input``: validation of a batch; ``_state``: the JSON state;
* ``_monitor``: :class:`CalibrationMonitor`; ``_page``: the HTML page (:func:`render_html`);
* ``_cli``: the ``skcal monitor`` command.
"""

from skcal.monitor._monitor import DETECT_MEMORY, CalibrationMonitor
from skcal.monitor._page import render_html
from skcal.monitor._state import STATE_VERSION

__all__ = ["CalibrationMonitor", "DETECT_MEMORY", "STATE_VERSION", "render_html"]
