"""SPEC 4: soft bins, SCDL, cutoff error, binned ECE, swap regret, Lipschitz smCE (references)."""

import itertools

import numpy as np


def _weights(n, sample_weight):
    if sample_weight is None:
        return np.ones(n)
    return np.asarray(sample_weight, dtype=float)


def soft_bin_weights(p, m):
    """Dense (n, m + 1) matrix ``w_i(p) = max(0, 1 - |m p - i|)``, written as a loop over i."""
    p = np.asarray(p, dtype=float)
    W = np.zeros((len(p), m + 1))
    for i in range(m + 1):
        W[:, i] = np.maximum(0.0, 1.0 - np.abs(m * p - i))
    return W


def scdl_grid(y, p, m, sample_weight=None):
    """``(pi, q, scfdl, scdl_m)`` on the grid G_m, straight from SPEC 4 (q NaN for empty bins)."""
    y = np.asarray(y, dtype=float)
    w = _weights(len(y), sample_weight)
    W = w.sum()
    Wd = soft_bin_weights(p, m)
    pi = np.array([np.sum(w * Wd[:, i]) / W for i in range(m + 1)])
    q = np.full(m + 1, np.nan)
    for i in range(m + 1):
        if pi[i] > 0:
            q[i] = np.sum(w * Wd[:, i] * y) / W / pi[i]
    scfdl = np.zeros(m + 1)
    for i in range(m + 1):
        total = 0.0
        for j in range(m + 1):
            if pi[j] == 0:
                continue  # "a bin with pi_i = 0 contributes nothing"
            if j <= i:
                total += pi[j] * max(q[j] - (i + 1) / m, 0.0)
            else:
                total += pi[j] * max(i / m - q[j], 0.0)
        scfdl[i] = total
    return pi, q, scfdl, scfdl.max()


def scdl(y, p, grids, sample_weight=None):
    """SCDL = inf over the given grids of max(SCDL_m, 1/m); returns (scdl, m*, [SCDL_m])."""
    vals = [scdl_grid(y, p, m, sample_weight)[3] for m in grids]
    obj = [max(v, 1.0 / m) for v, m in zip(vals, grids, strict=False)]
    best = min(obj)
    m_star = grids[obj.index(best)]  # the first (smallest m) attaining the minimum
    return best, m_star, vals


def auto_grids(T):
    """skcal's default rule "auto" (documented, chosen by measurement; SPEC 4 leaves the default
    open and asks for the theorem's rule by name): 2, 4, ..., the smallest power of two
    >= 4 sqrt(T), at least 2."""
    top = 2
    while top < 4 * np.sqrt(T):
        top *= 2
    return [2**k for k in range(1, int(np.log2(top)) + 1)]


def default_grids(T):
    """The theorem's rule ("theory"): dyadic 2, 4, ..., m_max with m_max ln m_max <= sqrt(T)
    (natural log, per skcal docstring)."""
    grids = []
    m = 2
    while m * np.log(m) <= np.sqrt(T):
        grids.append(m)
        m *= 2
    return grids or [2]  # skcal's documented convention: m = 2 is always allowed


def cutoff_error(y, p, sample_weight=None):
    """Brute force: max over all intervals [v_a, v_b] of the sorted distinct predictions."""
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = _weights(len(y), sample_weight)
    vals = np.unique(p)
    best = 0.0  # the empty interval
    for a in range(len(vals)):
        for b in range(a, len(vals)):
            inside = (p >= vals[a]) & (p <= vals[b])
            best = max(best, abs(np.sum(w[inside] * (y[inside] - p[inside]))))
    return best / w.sum()


def binned_ece_uniform(y, p, n_bins, sample_weight=None):
    """Equal-width bins; a p equal to an inner edge goes to the bin on its LEFT (skcal's
    documented rule, the rule of sklearn's calibration_curve). Loop: the first bin whose right
    edge is >= p."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return _binned_ece_edges(y, p, edges, sample_weight)


def binned_ece_quantile(y, p, n_bins, sample_weight=None):
    """Quantile edges np.percentile(p, linspace(0, 100, n_bins + 1)), unweighted (docstring)."""
    edges = np.percentile(np.asarray(p, dtype=float), np.linspace(0, 100, n_bins + 1))
    return _binned_ece_edges(y, p, edges, sample_weight)


def _binned_ece_edges(y, p, edges, sample_weight):
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = _weights(len(y), sample_weight)
    n_bins = len(edges) - 1
    ids = np.empty(len(p), dtype=int)
    for s in range(len(p)):
        b = 0
        while b < n_bins - 1 and p[s] > edges[b + 1]:
            b += 1
        ids[s] = b
    total = 0.0
    for b in range(n_bins):
        sel = ids == b
        if w[sel].sum() > 0:
            Wb = w[sel].sum()
            total += Wb * abs(np.sum(w[sel] * y[sel]) / Wb - np.sum(w[sel] * p[sel]) / Wb)
    return total / w.sum()


def best_response(qv, U):
    """r(q) = argmax_a q U(a, 1) + (1 - q) U(a, 0), ties to the lowest action index."""
    vals = [qv * U[a][1] + (1 - qv) * U[a][0] for a in range(len(U))]
    best = 0
    for a in range(1, len(U)):
        if vals[a] > vals[best]:
            best = a
    return best


def rounded_action_proba(p, U, m):
    """P(a | p) = sum_i w_i(p) 1[r(i/m) = a] (expectation over tau_m taken exactly)."""
    Wd = soft_bin_weights(p, m)
    P = np.zeros((len(p), len(U)))
    for i in range(m + 1):
        P[:, best_response(i / m, U)] += Wd[:, i]
    return P


def swap_regret_bruteforce(y, P, U, sample_weight=None):
    """sup over ALL maps sigma: A -> A (enumerated) of E[U(sigma(a), y) - U(a, y)], with the
    expectation over the action distribution rows P (n, |A|) and the (weighted) sample."""
    y = np.asarray(y, dtype=int)
    U = np.asarray(U, dtype=float)
    w = _weights(len(y), sample_weight)
    k = len(U)
    best = -np.inf
    for sigma in itertools.product(range(k), repeat=k):
        total = 0.0
        for s in range(len(y)):
            for a in range(k):
                total += w[s] * P[s, a] * (U[sigma[a], y[s]] - U[a, y[s]])
        best = max(best, total / w.sum())
    return best


def lipschitz_smce(y, p, sample_weight=None):
    """smCE = sup E[w(p)(y - p)] over 1-Lipschitz w: [0,1] -> [-1,1], as the LP of SPEC 4 over
    the sorted distinct predictions (|w_i| <= 1, |w_{i+1} - w_i| <= v_{i+1} - v_i)."""
    from scipy.optimize import linprog

    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    sw = _weights(len(y), sample_weight)
    vals = np.unique(p)
    K = len(vals)
    c = np.array([-np.sum(sw[p == v] * (y[p == v] - v)) / sw.sum() for v in vals])
    A, b = [], []
    for i in range(K - 1):
        row = np.zeros(K)
        row[i + 1], row[i] = 1.0, -1.0
        A.append(row.copy())
        b.append(vals[i + 1] - vals[i])
        A.append(-row)
        b.append(vals[i + 1] - vals[i])
    res = linprog(
        c,
        A_ub=np.array(A) if A else None,
        b_ub=np.array(b) if b else None,
        bounds=[(-1, 1)] * K,
        method="highs",
    )
    return -res.fun
