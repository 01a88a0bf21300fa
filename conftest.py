# Root conftest: makes ``import skcal`` resolve to this checkout when pytest runs here, and
# keeps plots off-screen.
import matplotlib

matplotlib.use("Agg")
