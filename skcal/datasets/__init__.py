"""Data sets bundled with skcal, loaded in scikit-learn's style (``load_*`` returning a ``Bunch``).

* :func:`load_weather_sentiment_amt`: 300 tweets with about 20 crowd votes each (5 classes) and
  a gold label: real repeated labels for second-order calibration.
"""

from skcal.datasets._weather import load_weather_sentiment_amt

__all__ = ["load_weather_sentiment_amt"]
