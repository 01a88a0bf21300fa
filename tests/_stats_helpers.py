"""Shared hypothesis strategies for the mergeable statistics tests."""

import numpy as np
from hypothesis import strategies as st


@st.composite
def chunkings(draw, n, max_cuts=8):
    """Cut points 0 = c0 <= c1 <= ... <= n (repeats give empty chunks, neighbours one-row ones)."""
    cuts = draw(st.lists(st.integers(0, n), min_size=0, max_size=max_cuts))
    return [0, *sorted(cuts), n]


def merge_tree(objs, data):
    """Merge a list of statistics objects along a hypothesis-chosen binary tree."""
    if len(objs) == 1:
        return objs[0]
    k = data.draw(st.integers(1, len(objs) - 1))
    return merge_tree(objs[:k], data) + merge_tree(objs[k:], data)


def chunked(make, arrays, weight, cuts, data):
    """Update one fresh object per chunk, shuffle the chunks, merge them along a random tree."""
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        sw = None if weight is None else weight[a:b]
        parts.append(make().update(*(x[a:b] for x in arrays), sample_weight=sw))
    order = data.draw(st.permutations(range(len(parts))))
    return merge_tree([parts[i] for i in order], data)


def assert_stats_close(a, b, rtol=1e-12):
    """Statistics dicts equal to ``rtol`` relative to each array's scale."""
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k], dtype=float), np.asarray(b[k], dtype=float)
        assert x.shape == y.shape, k
        scale = max(1.0, float(np.abs(y).max(initial=0.0)))
        np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale, err_msg=k)
