"""skcal's one-thread BLAS limit, entered from several of the caller's threads (issue 37, item 6).

A thread-pool limit is the whole process's. threadpoolctl's limiters each restore the counts they
found, so entered from several threads they interleave and could leave BLAS at one thread for the
rest of the process; :func:`skcal._threads.one_blas_thread` counts its holders instead.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import threadpoolctl
from threadpoolctl import ThreadpoolController, threadpool_info

from skcal import CalibrationReport, SechPerturber, ce2_score, smooth_reliability_curve
from skcal._threads import one_blas_thread

N_THREADS = 8


def _counts():
    return [(p["internal_api"], p["filepath"], p["num_threads"]) for p in threadpool_info()]


def _blas_counts():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def _free_openblas():
    """Let any thread set OpenBLAS's pool (threadpoolctl >= 3.6 gives it to one thread at a time)."""
    clear = getattr(getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


@pytest.fixture
def three_blas_threads():
    """BLAS at 3 threads during the test (a count that a leaked one-thread limit would change).

    Set by a limiter held by no thread (as a user's ``threadpool_limits(3)`` before starting
    threads), so that the threads of the test may set the pool.
    """
    if not _blas_counts():  # pragma: no cover - numpy always loads a BLAS
        pytest.skip("no BLAS library found by threadpoolctl")
    _free_openblas()
    limiter = ThreadpoolController().select(user_api="blas").limit(limits=3)
    _free_openblas()
    assert set(_blas_counts()) == {3}
    yield
    limiter.restore_original_limits()
    _free_openblas()


def test_interleaved_holders_restore_the_counts_they_found(three_blas_threads):
    # the order that pinned BLAS to one thread: A enters, B enters, A leaves, B leaves
    before = _counts()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with one_blas_thread():
            a_in.set()
            b_in.wait()
            seen["a"] = _blas_counts()
        a_out.set()

    def b():
        a_in.wait()
        with one_blas_thread():
            b_in.set()
            a_out.wait()
            seen["b"] = _blas_counts()  # A has left: the limit holds while B is inside

    threads = [threading.Thread(target=f) for f in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(seen["a"]) == set(seen["b"]) == {1}
    assert _counts() == before


def test_nested_holders_lift_the_limit_once(three_blas_threads):
    before = _counts()
    with one_blas_thread(openmp=True):
        with one_blas_thread():
            assert set(_blas_counts()) == {1}
        assert set(_blas_counts()) == {1}  # the inner holder's exit does not restore early
    assert _counts() == before


def test_an_exception_inside_still_restores(three_blas_threads):
    before = _counts()
    with pytest.raises(ZeroDivisionError), one_blas_thread():
        1 / 0
    assert _counts() == before


def _second_order(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.05, 0.95, n)
    S = np.column_stack([m, rng.uniform(0, 0.05, n)])
    Y = (rng.uniform(size=(n, 3)) < m[:, None]).astype(float)
    return Y, SechPerturber(random_state=seed).fit_transform(S)


def _calls():
    """One call of each entry point that limits the pools: ce2_score, the report, the bootstrap curve."""
    rng = np.random.default_rng(0)
    Y, S = _second_order(1500, 1)
    p = rng.uniform(0, 1, 2000)
    y = (rng.uniform(size=2000) < p).astype(int)
    return [
        lambda: ce2_score(Y, S, degree=6),
        lambda: ce2_score(Y, S, method="bucketing", random_state=0),
        lambda: CalibrationReport.from_predictions(y, {"a": p}, n_bootstrap=40, random_state=0),
        lambda: smooth_reliability_curve(y, p, n_bootstrap=30, random_state=0),
    ]


def test_calls_from_eight_threads_leave_the_blas_thread_count_as_it_was(three_blas_threads):
    before = _counts()
    calls = _calls()
    with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
        futures = [pool.submit(calls[i % len(calls)]) for i in range(4 * N_THREADS)]
        for f in futures:
            f.result()
    assert _counts() == before
    assert set(_blas_counts()) == {3}
