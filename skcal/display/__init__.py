"""Displays in scikit-learn's style: ``from_predictions`` computes, ``__init__`` stores, ``plot`` draws.

As in :class:`sklearn.calibration.CalibrationDisplay`, ``from_predictions`` and
``from_estimator`` compute every number through skcal's public functions
(:func:`~skcal.reliability_curve`, :func:`~skcal.smooth_reliability_curve`,
:func:`~skcal.scdl_curve`, :func:`~skcal.smooth_ece`) and hand them to ``__init__``, which only
stores them; ``plot(ax=None, ...)`` draws, stores the matplotlib artists in attributes ending in
``_`` and returns the display. matplotlib is imported only when drawing; it is an optional
dependency (``pip install "skcal[plot]"``).

One module per display: :class:`ReliabilityDisplay` (``_reliability.py``) and
:class:`SecondOrderDisplay` (``_second_order.py``); what both use is in ``_common.py``, and the
figure style shared with the report in :mod:`skcal._plotting`.
"""

from skcal.display._reliability import ReliabilityDisplay
from skcal.display._second_order import SecondOrderDisplay

__all__ = ["ReliabilityDisplay", "SecondOrderDisplay"]
