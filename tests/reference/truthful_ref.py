"""SPEC 5 references: binning rules, LinCE, classwise LinCE, confidence errors, proper losses."""

import numpy as np


def uniform_bins(v, n_bins):
    """Equal-width bins on [0, 1]; skcal's documented edge rule (SPEC leaves it open), the one of
    scikit-learn's ``calibration_curve``: bins (e_j, e_{j+1}] right-closed with the edges
    e = linspace(0, 1, n + 1), the first one closed so 0.0 goes to bin 0."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = []
    for x in v:
        j = 0
        while j < n_bins - 1 and x > edges[j + 1]:
            j += 1
        ids.append(j)
    return np.array(ids, dtype=int)


def quantile_bins(v, n_bins):
    """SPEC 5: 'equal-mass by sorted order, ties broken by index'. Sort by (value, index);
    cut the sorted positions into n_bins contiguous groups of sizes differing by at most one;
    (skcal's documented remainder rule: the first n % n_bins groups get the extra sample)."""
    v = list(v)
    n = len(v)
    order = sorted(range(n), key=lambda i: (v[i], i))
    base, extra = divmod(n, n_bins)
    sizes = [base + (1 if b < extra else 0) for b in range(n_bins)]
    ids = np.empty(n, dtype=int)
    pos = 0
    for b, size in enumerate(sizes):
        for _ in range(size):
            ids[order[pos]] = b
            pos += 1
    return ids


def bins(v, n_bins, strategy):
    return uniform_bins(v, n_bins) if strategy == "uniform" else quantile_bins(v, n_bins)


def _w(n, sample_weight):
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)


def lince(u, phi, ids, sample_weight=None):
    """(1/W^2) sum_b || sum_{i in b} w_i (u_i - phi_i) ||^2 (W = n, w = 1 unweighted)."""
    u = np.asarray(u, dtype=float).reshape(len(ids), -1)
    phi = np.asarray(phi, dtype=float).reshape(len(ids), -1)
    w = _w(len(ids), sample_weight)
    total = 0.0
    for b in set(ids.tolist()):
        vec = np.zeros(u.shape[1])
        for i in range(len(ids)):
            if ids[i] == b:
                vec += w[i] * (u[i] - phi[i])
        total += float(vec @ vec)
    return total / w.sum() ** 2


def classwise_lince(y, P, n_bins, strategy, sample_weight=None):
    P = np.asarray(P, dtype=float)
    k = P.shape[1]
    return (
        sum(
            lince(P[:, r], (np.asarray(y) == r).astype(float), bins(P[:, r], n_bins, strategy), sample_weight)
            for r in range(k)
        )
        / k
    )


def top_label(y, P):
    """r_i = argmax p_i (ties: lowest index), c_i = p_i[r_i], z_i = 1[y_i = r_i]."""
    P = np.asarray(P, dtype=float)
    r = np.empty(len(P), dtype=int)
    for i, row in enumerate(P):
        best = 0
        for j in range(1, len(row)):
            if row[j] > row[best]:
                best = j
        r[i] = best
    c = P[np.arange(len(P)), r]
    z = (np.asarray(y) == r).astype(float)
    return r, c, z


def _bin_sums(c, z, ids, w):
    return [np.sum(w[ids == b] * (c[ids == b] - z[ids == b])) for b in set(ids.tolist())]


def conf_ce_corr(y, P, n_bins, strategy, sample_weight=None):
    """SPEC 5 ConfCE^corr; weighted form per skcal's docstring: correction (1/W^2) sum w^2 (1 - z)."""
    _, c, z = top_label(y, P)
    w = _w(len(c), sample_weight)
    W = w.sum()
    ids = bins(c, n_bins, strategy)
    sq = sum(s**2 for s in _bin_sums(c, z, ids, w)) / W**2
    return sq + np.sum(w**2 * (1 - z)) / W**2


def conf_ce(y, P, n_bins, strategy, sample_weight=None):
    _, c, z = top_label(y, P)
    w = _w(len(c), sample_weight)
    ids = bins(c, n_bins, strategy)
    return sum(s**2 for s in _bin_sums(c, z, ids, w)) / w.sum() ** 2


def conf_ece(y, P, n_bins, strategy, sample_weight=None):
    _, c, z = top_label(y, P)
    w = _w(len(c), sample_weight)
    ids = bins(c, n_bins, strategy)
    return sum(abs(s) for s in _bin_sums(c, z, ids, w)) / w.sum()


def brier_over_k(y, P, sample_weight=None):
    P = np.asarray(P, dtype=float)
    n, k = P.shape
    w = _w(n, sample_weight)
    loss = np.array([sum((P[i, r] - (y[i] == r)) ** 2 for r in range(k)) / k for i in range(n)])
    return np.sum(w * loss) / w.sum()


def confidence_proper_loss(y, P, sample_weight=None):
    """1 - 1[y = r_p] + (p[r_p] - 1[y = r_p])^2, (weighted) mean."""
    _, c, z = top_label(y, P)
    w = _w(len(c), sample_weight)
    return np.sum(w * (1 - z + (c - z) ** 2)) / w.sum()


def expectation_by_enumeration(measure, Q, P):
    """E over independent labels y_i ~ Q_i of measure(y) (all k^n label vectors enumerated)."""
    import itertools

    Q = np.asarray(Q, dtype=float)
    n, k = Q.shape
    total = 0.0
    for ys in itertools.product(range(k), repeat=n):
        prob = np.prod([Q[i, ys[i]] for i in range(n)])
        if prob > 0:
            total += prob * measure(np.array(ys), P)
    return total
