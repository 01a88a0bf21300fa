# Root conftest: makes ``import skcal`` resolve to this checkout when pytest runs here, and
# keeps plots off-screen.
import matplotlib

matplotlib.use("Agg")

# the compiled kernels need the optional numba (the `fast` extra, in the `test` extra): without
# it their module is not collected for doctests, and their tests skip with a reason
try:
    import numba  # noqa: F401
except ImportError:
    collect_ignore = ["skcal/_classwise_kernel.py"]
