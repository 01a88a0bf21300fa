"""One BLAS thread for skcal's many small products, safe to enter from several threads at once.

skcal's data passes (Chebyshev moments, predictions, the baselines' grids, the bootstrap's
replicates) are many skinny products, and its ridge solves are modest factorisations: on a loaded
machine a multi-threaded BLAS pool competing with other processes runs them many times slower
than one thread (``docs/benchmarks/second_order_speed.md``). So they run under a limit of one
thread, taken here and nowhere else.

A pool's thread count is a property of the process (OpenBLAS with its own threads, MKL, BLIS) or
of the calling thread (OpenMP, and OpenBLAS built on OpenMP). threadpoolctl's limiters each
restore the counts they found when they exit, so entered from several of the caller's threads
they interleave: thread A limits a process-wide pool to 1 and records the user's count, thread B
records A's 1, A exits and restores the user's count, B exits and restores its 1, and BLAS stays
at one thread for the rest of the process.

:func:`one_blas_thread` therefore counts its holders. A process-wide pool is limited by the first
holder to enter (in any thread) and restored by the last to leave, under a lock; a per-thread
pool is limited and restored by each holder for itself (within one thread holders nest, so each
restores what it found). Whatever
order the threads enter and leave in, the counts afterwards are those before. While any skcal
call holds the limit, BLAS calls of the caller's other threads also run on one thread (a
process-wide count has no other meaning). A pool that another thread holds under its own
threadpoolctl limit (threadpoolctl >= 3.6 lets one thread at a time set OpenBLAS's process-wide
pool) keeps that thread's count: skcal then neither changes nor restores it.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import threadpoolctl
from threadpoolctl import ThreadpoolController

__all__ = ["BLAS_THREADS", "one_blas_thread"]

#: The thread count of the limited pools (``None``: no limit; what a benchmark of multi-threaded
#: BLAS sets). Read when a pool is first limited.
BLAS_THREADS = 1

_LOCK = threading.Lock()
_CONTROLLERS = None  # made once (the scan of the loaded libraries is slow): see _controllers
_SHARED = {}  # user_api -> [holders in every thread, limiter to restore or None]


def _per_thread(lib):
    """Whether a pool's thread count is the calling thread's (OpenMP's is, per thread)."""
    return lib.user_api == "openmp" or getattr(lib, "threading_layer", None) == "openmp"


def _controllers():
    """``(process-wide, per-thread)``: per user API, a controller of those pools only."""
    global _CONTROLLERS
    if _CONTROLLERS is None:
        ctl = ThreadpoolController()
        shared, local = {}, {}
        for api in ("blas", "openmp"):
            libs = [lib for lib in ctl.lib_controllers if lib.user_api == api]
            shared[api] = ctl.select(filepath=[lib.filepath for lib in libs if not _per_thread(lib)])
            local[api] = ctl.select(filepath=[lib.filepath for lib in libs if _per_thread(lib)])
        _CONTROLLERS = (shared, local)
    return _CONTROLLERS


def _release_control():
    """Let any thread set OpenBLAS's process-wide pool again (threadpoolctl >= 3.6).

    threadpoolctl gives that pool to the first thread that sets it, until that thread leaves its
    own ``with threadpool_limits(...)`` blocks; this module sets and restores without such blocks
    (its first and last holders may be different threads), so it hands the pool back each time,
    unless the calling thread is itself inside such a block.
    """
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    clear = getattr(openblas, "clear_controlling_thread", None)
    owned = getattr(getattr(threadpoolctl, "CONTROLLING_THREAD_OWNERSHIP", None), "count", 0)
    if clear is not None and owned <= 0:
        clear()  # only clears when this thread is the one that holds the pool


def _limit(controller):
    """Limit the pools of ``controller``; the limiter to restore them, or None if nothing changed."""
    if BLAS_THREADS is None or not controller.lib_controllers:
        return None
    limiter = controller.limit(limits=BLAS_THREADS)
    if any(info["num_threads"] != BLAS_THREADS for info in controller.info()):
        # another thread holds the pool under its own limit: leave it (and its count) alone
        limiter = None
    return limiter


def _enter(apis):
    """Hold the process-wide pools (counted across threads); limit this thread's own pools.

    Returns the limiters of this thread's pools, which the caller restores on leaving: within
    one thread, holders enter and leave in stack order, so each restores what it found.
    """
    shared, local = _controllers()
    with _LOCK:
        for api in apis:
            held = _SHARED.get(api)
            if held is None:
                _SHARED[api] = [1, _limit(shared[api])]
                _release_control()
            else:
                held[0] += 1
    return [_limit(local[api]) for api in apis]


def _leave(apis, mine):
    for limiter in reversed(mine):
        if limiter is not None:
            limiter.restore_original_limits()
    with _LOCK:
        for api in apis:
            held = _SHARED[api]
            held[0] -= 1
            if held[0] == 0:
                del _SHARED[api]
                if held[1] is not None:
                    held[1].restore_original_limits()
                    _release_control()


@contextmanager
def one_blas_thread(openmp=False):
    """Limit the BLAS pools (and, with ``openmp``, the OpenMP pools) to one thread while inside.

    Reference counted and thread-safe: nested or concurrent holders share one limit of each
    process-wide pool, set by the first to enter and lifted by the last to leave; per-thread
    pools are limited by each thread for itself. The pools' thread counts after the last holder
    leaves are those before the first entered.

    Parameters
    ----------
    openmp : bool, default=False
        Also limit the OpenMP pools (what the report's bootstrap and the reliability curve's
        resampling hold, whose compiled kernels may use OpenMP).

    Yields
    ------
    None

    Examples
    --------
    >>> from threadpoolctl import threadpool_info
    >>> from skcal._threads import one_blas_thread
    >>> before = [p["num_threads"] for p in threadpool_info()]
    >>> with one_blas_thread():
    ...     with one_blas_thread():  # nested: no new limit, no early restore
    ...         pass
    >>> [p["num_threads"] for p in threadpool_info()] == before
    True
    """
    apis = ("blas", "openmp") if openmp else ("blas",)
    mine = _enter(apis)
    try:
        yield
    finally:
        _leave(apis, mine)
