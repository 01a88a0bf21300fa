"""The Gaussian-mixture problem of experiments 6.1 and 6.2, its MLP ensembles and its CE2 ground truth.

Shared by ``benchmarks/rate.py`` (6.1), ``benchmarks/recalibration.py`` (6.2) and
``benchmarks/doubly_labelled.py`` (the 6.2 problem with few doubly-labelled rows):
:class:`MixtureProblem` (inputs, ``f*``, label snapshots, a component-stratified Sobol sample),
:func:`train_mlp_ensemble`, :func:`small_data_ensemble` and :func:`ensemble_scores` (the
predictors), and :class:`SechGroundTruth` with :func:`qmc_fields` (the quasi-Monte-Carlo ground
truth of CE2 for sech-perturbed predictors). It only uses skcal's public API (``skcal.sech``,
``skcal.EnsembleMoments``).

Ground truth (experiment 6.1)
-----------------------------
For a predictor ``S(x) = (m(x), sigma2(x))`` perturbed coordinate-wise by the truncated sech kernel
``k_h`` on ``R = [0, 1] x [0, 1/4]``, the perturbed score ``S'`` has density

    N0(t) = E[k_h(t_1 | m(X)) k_h(t_2 | sigma2(X))]

and the numerators ``N1(t) = E[k k f*(X)]``, ``N2(t) = E[k k f*(X)^2]``, so that
``eta1 = N1 / N0`` and ``eta2 = N2 / N0`` (``E[Y | S'] = E[f* | S']`` because ``Y`` is drawn from
``f*(X)`` independently of the perturbation). Hence

    CE2 = integral over R of |N1(t) - t_1 N0(t)| + |N2(t) - (t_1^2 + t_2) N0(t)| dt.

The expectation over ``X`` is a scrambled Sobol sample mapped to the mixture, stratified by
component (``2^15`` points per component, ``327,680 >= 2^18`` in all).
Each point's weights ``(1, f*, f*^2) / N`` are deposited on a ``1025 x 257`` node grid over ``R``
with *linear (cloud-in-cell)* weights: a point between nodes splits its mass over the four
surrounding nodes in proportion to the bilinear hat functions. Linear deposit preserves the
mass and the first moment of every point exactly, so replacing ``k_h(t | s)`` by its deposit is
second-order accurate in the node spacing (nearest-node deposit would be first-order: it moves
every point by up to half a cell, a bias of order ``1/2048`` in ``m``, which is not small next to
the target agreement of ``2e-5``). The deposit is then convolved with the exact truncated sech
kernel along each axis (two dense kernel matrices, ``K_m D K_s^T``), and the integrand is
integrated over the same node grid by the trapezoid rule.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm, qmc

SIGMA2_MAX = 0.25


# ----------------------------------------------------------------------------------------------
# The Gaussian-mixture problem of experiments 6.1 (rate) and 6.2 (recalibration)
# ----------------------------------------------------------------------------------------------
@dataclass
class MixtureProblem:
    """X in R^4 from a 10-component isotropic Gaussian mixture, ``f*(x) = sigmoid(w . x)``.

    Centres are drawn ``N(0, 1.5^2 I)``, components have unit variance and equal weights, and
    ``w ~ N(0, I / 2)``; all drawn from ``seed``.
    """

    seed: int = 0
    n_components: int = 10
    dim: int = 4

    def __post_init__(self):
        rng = np.random.default_rng(self.seed)
        self.centres = rng.normal(0.0, 1.5, size=(self.n_components, self.dim))
        self.w = rng.normal(0.0, np.sqrt(0.5), size=self.dim)

    def sample(self, n, rng):
        """Draw ``n`` pseudo-random inputs."""
        comp = rng.integers(0, self.n_components, size=n)
        return self.centres[comp] + rng.standard_normal((n, self.dim))

    def sobol_sample(self, log2_per_component, seed):
        """Component-stratified scrambled Sobol sample: ``2**log2_per_component`` points per component.

        Each mixture component (weight exactly ``1 / n_components``) gets its own scrambled
        4-D Sobol point set mapped through the normal inverse CDF. Stratifying by component
        keeps each component's integral a clean ``(t, m, s)``-net integral; selecting the
        component with a fifth Sobol coordinate (``floor(10 u)``, not a dyadic split) gave a
        replicate standard deviation of CE2 two to three times larger at the same size (measured,
        see docs/benchmarks/second_order_experiments.md).
        """
        seqs = np.random.SeedSequence(seed).spawn(self.n_components)
        out = []
        for k, ss in enumerate(seqs):
            u = qmc.Sobol(d=self.dim, scramble=True, seed=np.random.default_rng(ss)).random_base2(
                log2_per_component
            )
            out.append(self.centres[k] + norm.ppf(np.clip(u, 1e-15, 1.0 - 1e-15)))
        return np.vstack(out)

    def f_star(self, X):
        return expit(X @ self.w)

    def labels(self, X, rng, k=1):
        """``k`` independent label snapshots per row (float 0/1, shape ``(n, k)``)."""
        f = self.f_star(X)
        return (rng.random((X.shape[0], k)) < f[:, None]).astype(np.float64)


def train_mlp_ensemble(X, y, *, n_members, epochs, seed, batch_size=256, n_jobs=1):
    """Fit ``n_members`` MLPs 4-64-64-1 (ReLU, Adam, learning rate 1e-3, no weight decay).

    Members share the data and differ only in ``random_state`` (initialisation and batch order).
    ``max_iter`` counts epochs for Adam; early stopping is disabled so every member runs exactly
    ``epochs`` epochs.
    """
    from joblib import Parallel, delayed
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    def fit_one(i):
        clf = MLPClassifier(
            hidden_layer_sizes=(64, 64),
            activation="relu",
            solver="adam",
            learning_rate_init=1e-3,
            alpha=0.0,
            batch_size=min(batch_size, X.shape[0]),
            max_iter=epochs,
            tol=0.0,
            n_iter_no_change=epochs + 1,
            shuffle=True,
            random_state=seed + i,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        return clf

    return Parallel(n_jobs=n_jobs)(delayed(fit_one)(i) for i in range(n_members))


def ensemble_scores(members, X):
    """Second-order scores ``(m, sigma2)`` of a fitted ensemble via ``skcal.EnsembleMoments``."""
    from skcal import EnsembleMoments

    return EnsembleMoments(members).fit(X[:1]).transform(X)


def small_data_ensemble(problem, seed, *, n_jobs=1):
    """The predictor of experiment 6.2: 20 MLPs trained 60 epochs on the same 24 samples.

    The 24 inputs and their labels are drawn from ``problem`` with the generator
    ``default_rng(seed + 1)``; the members differ only in their initialisation (seeds 1000 to
    1019), so the ensemble's ``sigma2`` carries only a faint signal about ``Var[f* | x]``.
    """
    rng = np.random.default_rng(seed + 1)
    X24 = problem.sample(24, rng)
    y24 = problem.labels(X24, rng)[:, 0]
    if len(np.unique(y24)) < 2:  # pragma: no cover - guarded for other seeds
        raise RuntimeError("the 24 training labels are all equal; choose another --seed")
    return train_mlp_ensemble(X24, y24, n_members=20, epochs=60, seed=1000, n_jobs=n_jobs)


def qmc_fields(grid, problem, members, log2_per_component, *, seed, replicates=2):
    """The ground-truth fields ``(N0, N1, N2)`` of the ensemble, one per QMC replicate.

    Replicate ``r`` is the component-stratified Sobol sample scrambled with ``seed + r``
    (:meth:`MixtureProblem.sobol_sample`), scored by the ensemble and deposited on ``grid``
    (:meth:`SechGroundTruth.fields`). Returns a list of arrays of shape ``(3, n_m, n_s)``.
    """
    out = []
    for r in range(replicates):
        X = problem.sobol_sample(log2_per_component, seed=seed + r)
        S = ensemble_scores(members, X)
        out.append(grid.fields(S[:, 0], S[:, 1], problem.f_star(X)))
    return out


# ----------------------------------------------------------------------------------------------
# Ground truth CE2 on a grid
# ----------------------------------------------------------------------------------------------
def sech_kernel_matrix(t, centres, h, lo, hi):
    """``K[i, j] = k_h(t_i | centres_j)`` on ``[lo, hi]``, via ``skcal.sech.sech_pdf``."""
    from skcal.sech import sech_pdf

    return sech_pdf(t[:, None], centres[None, :], h, lo, hi)


class SechGroundTruth:
    """Grid machinery for ground-truth quantities of a sech-perturbed second-order predictor.

    Parameters
    ----------
    bandwidth : float
        The sech bandwidth ``h`` used on both axes.
    n_m, n_s : int
        Number of grid nodes on the ``m`` axis ([0, 1]) and the ``sigma2`` axis ([0, 1/4]).
    """

    def __init__(self, bandwidth, n_m=1025, n_s=257):
        self.h = float(bandwidth)
        self.n_m, self.n_s = int(n_m), int(n_s)
        self.tm = np.linspace(0.0, 1.0, self.n_m)
        self.ts = np.linspace(0.0, SIGMA2_MAX, self.n_s)
        self.Km = sech_kernel_matrix(self.tm, self.tm, self.h, 0.0, 1.0)
        self.Ks = sech_kernel_matrix(self.ts, self.ts, self.h, 0.0, SIGMA2_MAX)
        wm = np.full(self.n_m, 1.0 / (self.n_m - 1))
        wm[[0, -1]] *= 0.5
        ws = np.full(self.n_s, SIGMA2_MAX / (self.n_s - 1))
        ws[[0, -1]] *= 0.5
        self.trap = wm[:, None] * ws[None, :]  # trapezoid weights of the 2-D grid
        self.TM, self.TS = np.meshgrid(self.tm, self.ts, indexing="ij")

    def deposit(self, m, s2, weights):
        """Cloud-in-cell deposit of point masses; ``weights`` is ``(n, q)``, returns ``(q, n_m, n_s)``."""
        um = np.clip(np.asarray(m, float), 0.0, 1.0) * (self.n_m - 1)
        us = np.clip(np.asarray(s2, float), 0.0, SIGMA2_MAX) / SIGMA2_MAX * (self.n_s - 1)
        im = np.minimum(np.floor(um).astype(np.intp), self.n_m - 2)
        is_ = np.minimum(np.floor(us).astype(np.intp), self.n_s - 2)
        fm, fs = um - im, us - is_
        W = np.atleast_2d(np.asarray(weights, float).T).T
        out = np.empty((W.shape[1], self.n_m, self.n_s))
        size = self.n_m * self.n_s
        corners = [
            (0, 0, (1 - fm) * (1 - fs)),
            (1, 0, fm * (1 - fs)),
            (0, 1, (1 - fm) * fs),
            (1, 1, fm * fs),
        ]
        for q in range(W.shape[1]):
            acc = np.zeros(size)
            for dm, ds, c in corners:
                acc += np.bincount((im + dm) * self.n_s + (is_ + ds), weights=c * W[:, q], minlength=size)
            out[q] = acc.reshape(self.n_m, self.n_s)
        return out

    def smooth(self, D):
        """Convolve deposited masses with the sech kernel on both axes: densities on the grid."""
        return np.einsum("ia,qab,jb->qij", self.Km, D, self.Ks, optimize=True)

    def fields(self, m, s2, f):
        """``(N0, N1, N2)`` on the grid from unperturbed scores ``(m, s2)`` and ``f*`` of N points."""
        n = len(f)
        W = np.column_stack([np.ones(n), f, f * f]) / n
        return self.smooth(self.deposit(m, s2, W))

    def integrate(self, F):
        return float(np.sum(self.trap * F))

    def ce2(self, N, pred_m=None, pred_v=None):
        """Ground-truth CE2 (and its two terms) of a predictor evaluated on the perturbed-score grid.

        With ``pred_m``/``pred_v`` None the predictor is the perturbed score itself
        (``m' = t_1``, ``v = t_1^2 + t_2``); otherwise they are the recalibrated mean and second
        moment evaluated at every grid node (a function of the perturbed score).
        """
        N0, N1, N2 = N
        if pred_m is None:
            pred_m = self.TM
            pred_v = self.TM**2 + self.TS
        term1 = self.integrate(np.abs(N1 - pred_m * N0))
        term2 = self.integrate(np.abs(N2 - pred_v * N0))
        return {"ce2": term1 + term2, "term1": term1, "term2": term2, "mass": self.integrate(N0)}

    def interpolate(self, F, m, s2):
        """Bilinear interpolation of a grid field ``F`` at points ``(m, s2)``."""
        from scipy.interpolate import RegularGridInterpolator

        it = RegularGridInterpolator((self.tm, self.ts), F, method="linear")
        return it(np.column_stack([np.clip(m, 0, 1), np.clip(s2, 0, SIGMA2_MAX)]))
