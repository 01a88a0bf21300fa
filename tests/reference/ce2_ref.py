"""SPEC 0, 2, 3 references: snapshot targets, dense tensor-Chebyshev ridge, CE2_hat, Platt
projection, ensemble moments. Builds the n-by-d design Phi on purpose (the library must not)."""

import numpy as np
from numpy.polynomial import chebyshev as C


def snapshot_targets(Y):
    """Per row: a positive votes of c non-NaN votes; t1 = a/c, t2 = a(a-1)/(c(c-1))."""
    Y = np.asarray(Y, dtype=float)
    t1 = np.empty(len(Y))
    t2 = np.empty(len(Y))
    for r, row in enumerate(Y):
        votes = [v for v in row if not np.isnan(v)]
        c = len(votes)
        a = sum(1.0 for v in votes if v == 1)
        t1[r] = a / c
        t2[r] = a * (a - 1) / (c * (c - 1))
    return t1, t2


def cheb_T(i, x):
    coef = np.zeros(i + 1)
    coef[i] = 1.0
    return C.chebval(x, coef)


def design(S, degree, basis="tensor"):
    """Columns T_i(2m - 1) T_j(8 sigma2 - 1) for 0 <= i, j <= l (tensor) or i + j <= l (total);
    T_i(2m - 1) for one-column scores."""
    S = np.asarray(S, dtype=float)
    if S.ndim == 1 or S.shape[1] == 1:
        x = 2 * S.reshape(-1) - 1
        return np.column_stack([cheb_T(i, x) for i in range(degree + 1)])
    x = 2 * S[:, 0] - 1
    y = 8 * S[:, 1] - 1
    cols = []
    for i in range(degree + 1):
        for j in range(degree + 1):
            if basis == "tensor" or i + j <= degree:
                cols.append(cheb_T(i, x) * cheb_T(j, y))
    return np.column_stack(cols)


class DenseRidge:
    """beta = argmin sum_n w_n (Phi_n beta - t_n)^2 + lam ||beta||^2, lam = alpha trace(G) / d,
    G = Phi^T W Phi, solved by the normal equations on the dense design."""

    def __init__(self, degree, alpha, basis="tensor"):
        self.degree, self.alpha, self.basis = degree, alpha, basis

    def fit(self, S, targets, sample_weight=None):
        Phi = design(S, self.degree, self.basis)
        w = np.ones(len(Phi)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        T = np.asarray(targets, dtype=float).reshape(len(Phi), -1)
        G = Phi.T @ (w[:, None] * Phi)
        d = Phi.shape[1]
        self.lam = self.alpha * np.trace(G) / d
        self.coef = np.linalg.solve(G + self.lam * np.eye(d), Phi.T @ (w[:, None] * T))
        return self

    def predict(self, S):
        return design(S, self.degree, self.basis) @ self.coef


def dual_ridge(S, targets, degree, alpha, basis="tensor"):
    """Kernel form beta = Phi^T (Phi Phi^T + lam I)^-1 t (same minimiser for lam > 0)."""
    Phi = design(S, degree, basis)
    T = np.asarray(targets, dtype=float).reshape(len(Phi), -1)
    lam = alpha * np.trace(Phi.T @ Phi) / Phi.shape[1]
    return Phi.T @ np.linalg.solve(Phi @ Phi.T + lam * np.eye(len(Phi)), T)


def ce2_hat(Y, S, degree, alpha, basis="tensor", sample_weight=None):
    """(CE2_hat, term1, term2, eta1_hat, eta2_hat): in-sample plug-in, each fit clipped to [0, 1]."""
    S = np.asarray(S, dtype=float)
    t1, t2 = snapshot_targets(Y)
    model = DenseRidge(degree, alpha, basis).fit(S, np.column_stack([t1, t2]), sample_weight)
    fit = np.clip(model.predict(S), 0.0, 1.0)
    e1, e2 = fit[:, 0], fit[:, 1]
    w = np.ones(len(S)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    m, s2 = S[:, 0], S[:, 1]
    term1 = np.sum(w * np.abs(e1 - m)) / w.sum()
    term2 = np.sum(w * np.abs(e2 - (m**2 + s2))) / w.sum()
    return term1 + term2, term1, term2, e1, e2


def platt_transform(Y, S, S_new, degree, alpha, basis="tensor", order=2, sample_weight=None):
    """Second-order Platt: eta1 clipped to [0, 1], eta2 clipped to [eta1^2, eta1];
    output (eta1, max(0, eta2 - eta1^2)). order=1 regresses t1 only and sets eta2 = eta1^2."""
    t1, t2 = snapshot_targets(Y)
    T = np.column_stack([t1, t2]) if order == 2 else t1[:, None]
    model = DenseRidge(degree, alpha, basis).fit(S, T, sample_weight)
    raw = model.predict(S_new)
    e1 = np.clip(raw[:, 0], 0.0, 1.0)
    e2 = np.clip(raw[:, 1], e1**2, e1) if order == 2 else e1**2
    return np.column_stack([e1, np.maximum(0.0, e2 - e1**2)]), np.column_stack([e1, e2]), raw


def ensemble_moments(prob_columns):
    """m = mean, sigma2 = ddof=1 variance over members (columns), clipped to [0, m(1 - m)]."""
    P = np.asarray(prob_columns, dtype=float)
    M = P.shape[1]
    m = P.sum(axis=1) / M
    var = ((P - m[:, None]) ** 2).sum(axis=1) / (M - 1)
    return np.column_stack([m, np.clip(var, 0.0, m * (1 - m))])


def n_features(degree, basis):
    if basis == "tensor":
        return (degree + 1) ** 2
    if basis == "total":
        return (degree + 1) * (degree + 2) // 2
    return degree + 1  # "1d"


def auto_degree(n, h, basis="tensor", samples_per_feature="auto"):
    """SPEC 2: l = ceil(2 log n / log theta), theta = h pi + sqrt(h^2 pi^2 + 1), capped.
    skcal's documented caps (the SPEC leaves them open beyond 44 at h=1/16 and 88 at h=1/64):
    ceil(11 / sqrt(h)), at most 88 for the 2-D bases; then lowered until the basis has at most
    c n^(1/3) features (samples_per_feature="auto": c = 1.25 for the 2-D bases, 0.35 for 1-D, the
    constants skcal measured in benchmarks/ce2_degree.py) or n / samples_per_feature (a number);
    at least 1."""
    import math

    theta = h * math.pi + math.sqrt(h * h * math.pi * math.pi + 1)
    l = math.ceil(2 * math.log(n) / math.log(theta)) if n > 1 else 1
    cap = math.ceil(11 / math.sqrt(h))
    if basis != "1d":
        cap = min(cap, 88)
    l = min(l, cap)
    if samples_per_feature == "auto":
        limit = (0.35 if basis == "1d" else 1.25) * round(n ** (1 / 3), 12)
    elif samples_per_feature is not None:
        limit = n / samples_per_feature
    else:
        limit = math.inf
    while l > 1 and n_features(l, basis) > limit:
        l -= 1
    return max(l, 1)


def cv_select(Y, S, degrees, alphas, folds, basis="tensor", clip=False):
    """For each (degree, alpha): mean over folds of the held-out mean squared error of both
    moment regressions (t1 and t2), fitted on the training part; returns (table, best)."""
    t = np.column_stack(snapshot_targets(Y))
    table = []
    for deg in degrees:
        for a in alphas:
            errs = []
            for train, test in folds:
                model = DenseRidge(deg, a, basis).fit(S[train], t[train])
                pred = model.predict(S[test])
                if clip:
                    pred = np.clip(pred, 0, 1)
                errs.append(np.mean((t[test, 0] - pred[:, 0]) ** 2) + np.mean((t[test, 1] - pred[:, 1]) ** 2))
            table.append((deg, a, float(np.mean(errs))))
    best = min(table, key=lambda r: r[2])
    return table, best


def _unit_square(S):
    """Map R = [0,1] x [0,1/4] to the unit square (sigma2 times 4); 1-D scores stay 1-D."""
    S = np.asarray(S, dtype=float)
    if S.ndim == 1 or S.shape[1] == 1:
        return S.reshape(-1, 1), np.zeros(len(S))
    return np.column_stack([S[:, 0], 4 * S[:, 1]]), S[:, 1]


def bucketing_ce2(S, t1, t2, h, c):
    """SPEC 2 baseline: K x K equal cells, K = clip(ceil(c (n / h^2)^(1/4)), 2, 200); fit = mean
    of the targets in the cell. Cell of u: min(floor(u K), K - 1) per axis (a convention the SPEC
    leaves open; the tests avoid points on inner cell edges)."""
    import math

    U, s2 = _unit_square(S)
    n = len(U)
    K = int(min(max(math.ceil(c * (n / h**2) ** 0.25), 2), 200))
    cells = [tuple(min(int(math.floor(v * K)), K - 1) for v in row) for row in U]
    e1, e2 = np.empty(n), np.empty(n)
    for i in range(n):
        members = [j for j in range(n) if cells[j] == cells[i]]
        e1[i] = np.mean(np.asarray(t1)[members])
        e2[i] = np.mean(np.asarray(t2)[members])
    m = np.asarray(S, dtype=float).reshape(n, -1)[:, 0]
    term1 = np.mean(np.abs(e1 - m))
    term2 = np.mean(np.abs(e2 - (m**2 + s2)))
    return term1 + term2, K, e1, e2


def nadaraya_watson_ce2(S, t1, t2, h, c):
    """SPEC 2 baseline: isotropic Gaussian kernel, bandwidth b = c h^(1/2) n^(-1/4), weights zero
    beyond Euclidean distance 5 b, on the unit square."""
    U, s2 = _unit_square(S)
    n = len(U)
    b = c * h**0.5 * n**-0.25
    e1, e2 = np.empty(n), np.empty(n)
    for i in range(n):
        d = np.sqrt(((U - U[i]) ** 2).sum(axis=1))
        w = np.where(d <= 5 * b, np.exp(-0.5 * (d / b) ** 2), 0.0)
        e1[i] = np.sum(w * t1) / w.sum()
        e2[i] = np.sum(w * t2) / w.sum()
    m = np.asarray(S, dtype=float).reshape(n, -1)[:, 0]
    return np.mean(np.abs(e1 - m)) + np.mean(np.abs(e2 - (m**2 + s2))), b, e1, e2
