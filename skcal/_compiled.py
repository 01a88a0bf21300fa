"""The optional compiled kernels: one loader for the modules that need numba.

The kernels (``skcal._<name>_kernel``) are numba-compiled loops, each with a numpy path that
computes the same values; numba is the optional ``fast`` extra. :func:`compiled` imports them on
first use, so that ``import skcal`` never imports numba.
"""

from __future__ import annotations

import sys

__all__ = ["compiled"]


def compiled(name, *, size=None, min_size=0):
    """The compiled kernel module ``skcal._<name>_kernel``, or None.

    None when numba is not installed; also when ``size`` (the work of the call) is below
    ``min_size`` and numba is not imported yet: importing it (once per process) would cost more
    than such a call, which keeps the numpy path.

    Parameters
    ----------
    name : {"classwise", "cutoff", "replicate", "resampling", "scdl"}
        The kernel module.
    size, min_size : int, optional
        The call's work and the least work worth importing numba for.

    Returns
    -------
    module or None
        The kernel module.

    Examples
    --------
    >>> kernel = compiled("replicate")
    >>> kernel is None or hasattr(kernel, "poisson_weights")
    True
    """
    if size is not None and size < min_size and "numba" not in sys.modules:
        return None
    try:
        # numba is an optional dependency: the kernels that need it are imported on first use only
        from skcal import (
            _classwise_kernel,
            _cutoff_kernel,
            _replicate_kernel,
            _resampling_kernel,
            _scdl_kernel,
        )
    except ImportError:
        return None
    modules = {
        "classwise": _classwise_kernel,
        "cutoff": _cutoff_kernel,
        "replicate": _replicate_kernel,
        "resampling": _resampling_kernel,
        "scdl": _scdl_kernel,
    }
    return modules[name]
