"""The built-in demo behind ``skcal demo`` and ``skcal report --demo``.

Part 1 (first order, real labels). The Wisconsin breast-cancer data bundled with scikit-learn
(569 tumours, 30 features, label: benign) is split 50/50, stratified. Five classifiers are fitted
on one half (logistic regression, Gaussian naive Bayes, a random forest, an RBF SVM with Platt
probabilities and a bagged ensemble of decision trees) and compared on the other half.

Part 2 (second order, simulated second labels). No data set bundled with scikit-learn has
repeated labels per input, so the second labels are *simulated* from a known ``f*``, and the
report says so. The inputs are the 1,797 handwritten digits bundled with scikit-learn
(64 pixel features). ``f*`` is fixed once: a logistic regression (``C = 0.1``, standardised
pixels) is fitted to the real binary label "digit >= 5" on all inputs, and
``f*(x) = sigmoid(d(x) / 2)`` with ``d`` its decision function (the temperature 2 spreads
``f*`` over (0, 1); its quartiles are about 0.21, 0.50 and 0.78). Every label used in part 2
is then drawn as ``Bernoulli(f*(x))``, independently: one label per training input, two
(snapshots) per calibration and test input. A bagged ensemble of 30 decision trees is fitted
on 300 training inputs; :class:`~skcal.EnsembleMoments` turns it into second-order scores
``(m, sigma2)``, :class:`~skcal.SechPerturber` perturbs them (the perturbed predictor is the one
deployed, measured and recalibrated), and :class:`~skcal.SecondOrderPlattCalibrator`
(degree and ridge chosen by 5-fold cross-validation on half of the remaining inputs)
recalibrates them on that half;
first-order Platt scaling (``order=1``) is the comparison. The recalibrated predictors are
functions of the perturbed score and are measured as they are.

Part 3 (multiclass, real labels). The ten-class digits, split 50/50 stratified: logistic
regression, Gaussian naive Bayes and a random forest, compared by the truthful multiclass errors.
"""

from __future__ import annotations

import sys
import time
from functools import partial

import numpy as np

from skcal.display import SecondOrderDisplay
from skcal.ensemble import EnsembleMoments
from skcal.perturbation import SechPerturber
from skcal.platt import SecondOrderPlattCalibrator
from skcal.report import calibration_report
from skcal.votes import Snapshots

#: Temperature of the simulated ``f*`` in part 2.
F_STAR_TEMPERATURE = 2.0
#: Training inputs of part 2's ensemble; the other inputs are halved into calibration and test
#: sets (recalibration needs more data than the ensemble it corrects).
N_TRAIN_SECOND_ORDER = 300
#: Sech bandwidth used in part 2 (the package default).
BANDWIDTH = 2**-6


def _log(verbose, msg):
    if verbose:
        print(f"[skcal] {msg}", file=sys.stderr, flush=True)


def first_order_part(settings):
    """Part 1: five classifiers on the breast-cancer data, real labels."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import BaggingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    random_state, n_jobs = settings["random_state"], settings["n_jobs"]
    X, y = load_breast_cancer(return_X_y=True)
    return _split_fit_report(
        {
            **_classifiers(settings, max_iter=1000),
            "SVM (Platt)": make_pipeline(
                StandardScaler(),
                CalibratedClassifierCV(SVC(random_state=random_state), method="sigmoid", ensemble=False),
            ),
            "bagged trees": BaggingClassifier(
                DecisionTreeClassifier(), n_estimators=50, random_state=random_state, n_jobs=n_jobs
            ),
        },
        X,
        y,
        settings,
        "Part 1: five classifiers on the breast-cancer data (real labels, first order)",
        f"load_breast_cancer: {X.shape[0]} tumours, {X.shape[1]} features, positive class = benign",
        "part 1",
    )


def _classifiers(settings, max_iter):
    """The classifiers of parts 1 and 3: logistic regression, naive Bayes and a random forest."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {
        "logistic regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter)),
        "naive Bayes": GaussianNB(),
        "random forest": RandomForestClassifier(
            n_estimators=200, random_state=settings["random_state"], n_jobs=settings["n_jobs"]
        ),
    }


def _split_fit_report(models, X, y, settings, title, data, part):
    """Fit ``models`` on a stratified half of ``X, y`` and report on the other half (real labels)."""
    from sklearn.model_selection import train_test_split

    seed = settings["random_state"]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    for name, model in models.items():
        _log(settings["verbose"], f"{part}: fitting {name}")
        model.fit(X_tr, y_tr)
    note = (
        f"{data}; fitted on {X_tr.shape[0]} and evaluated on {X_te.shape[0]} (stratified 50/50 split, "
        f"seed {seed})."
    )
    return calibration_report(models, X_te, y_te, title=title, notes=[note], **settings)


def simulated_second_order_data(random_state):
    """Part 2's data: digits inputs, the known ``f*`` and simulated labels (see the module docstring).

    Returns a dict with ``X_train, y_train`` (one simulated label), ``X_cal, Y_cal`` and
    ``X_test, Y_test`` (two simulated labels each), and ``f_test`` (``f*`` on the test inputs).
    """
    from scipy.special import expit
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, digit = load_digits(return_X_y=True)
    truth = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
    truth.fit(X, (digit >= 5).astype(int))
    f_star = expit(truth.decision_function(X) / F_STAR_TEMPERATURE)
    rng = np.random.RandomState(random_state)
    idx = rng.permutation(X.shape[0])
    tr = idx[:N_TRAIN_SECOND_ORDER]
    cal, te = np.array_split(idx[N_TRAIN_SECOND_ORDER:], 2)
    draw = rng.uniform(size=(X.shape[0], 2)) < f_star[:, None]
    labels = draw.astype(float)
    return {
        "X_train": X[tr],
        "y_train": labels[tr, 0],
        "X_cal": X[cal],
        "Y_cal": Snapshots(labels[cal]),
        "X_test": X[te],
        "Y_test": Snapshots(labels[te]),
        "f_test": f_star[te],
        "f_all": f_star,
    }


def second_order_part(settings):
    """Part 2: a bagged ensemble recalibrated to second order on simulated snapshots."""
    from sklearn.ensemble import BaggingClassifier
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.tree import DecisionTreeClassifier

    random_state, n_jobs, verbose = settings["random_state"], settings["n_jobs"], settings["verbose"]
    d = simulated_second_order_data(random_state)
    _log(verbose, "part 2: fitting the bagged ensemble on simulated labels")
    bag = BaggingClassifier(
        DecisionTreeClassifier(), n_estimators=30, random_state=random_state, n_jobs=n_jobs
    ).fit(d["X_train"], d["y_train"])
    raw = Pipeline(
        [
            ("moments", EnsembleMoments(bag)),
            ("perturb", SechPerturber(bandwidth=BANDWIDTH, random_state=random_state)),
        ]
    ).fit(d["X_cal"])
    S_cal = raw.transform(d["X_cal"])
    _log(verbose, "part 2: choosing the calibrator's degree and ridge by 5-fold CV")
    search = GridSearchCV(
        SecondOrderPlattCalibrator(basis="tensor"),
        {"degree": [1, 2, 3, 4, 6], "alpha": [1e-6, 1e-4, 1e-2, 1.0]},
        cv=5,
    ).fit(S_cal, d["Y_cal"])
    best = search.best_params_
    models = {"bagged trees (raw)": raw}
    for order, label in ((1, "first-order Platt"), (2, "second-order Platt")):
        cal = SecondOrderPlattCalibrator(degree=best["degree"], alpha=best["alpha"], order=order)
        pipe = Pipeline(
            [
                ("moments", EnsembleMoments(bag)),
                ("perturb", SechPerturber(bandwidth=BANDWIDTH, random_state=random_state)),
                ("calibrate", cal),
            ]
        )
        pipe.fit(d["X_cal"], d["Y_cal"])
        models[f"bagged trees + {label}"] = pipe
    report = calibration_report(
        models,
        d["X_test"],
        d["Y_test"],
        title="Part 2: second-order recalibration of a bagged ensemble (SIMULATED second labels)",
        notes=[
            "The labels in this part are SIMULATED: no data set bundled with scikit-learn has repeated "
            "labels per input. Inputs: the 1,797 digits of load_digits. Known truth: f*(x) = "
            f"sigmoid(d(x) / {F_STAR_TEMPERATURE:g}), where d is the decision function of a logistic "
            "regression (C = 0.1, standardised pixels) fitted once to the real label 'digit >= 5'. "
            "Every label here is an independent Bernoulli(f*(x)) draw: one per training input, two "
            "(snapshots) per calibration and test input.",
            f"Inputs split at random (seed {random_state}): {d['X_train'].shape[0]} train the bagged trees "
            f"(30 default decision trees), {d['X_cal'].shape[0]} calibrate, {d['X_test'].shape[0]} "
            "evaluate. The ensemble's scores are sech-perturbed with bandwidth 2^-6 (the perturbed "
            "predictor is the one deployed, measured and recalibrated); the recalibrated predictors are "
            "functions of the perturbed score. The calibrator's tensor degree "
            f"{best['degree']} and ridge {best['alpha']:g} were chosen by 5-fold CV on the calibration "
            "set (squared error of both moment regressions).",
        ],
        **settings,
    )
    pipe = models["bagged trees + second-order Platt"]
    report.add_figure(
        "Second-order Platt scaling against the known truth",
        partial(_truth_figure, pipe, d["X_test"], d["f_test"]),
        caption=(
            "Only a simulation can show this. Left: the test inputs grouped by the variance sigma2 the model "
            "states, against the true squared error of its mean, (f* - m)^2; on the dotted diagonal the "
            "stated uncertainty is exactly right. Grey: the raw ensemble, blue: after second-order Platt "
            "scaling. Middle: where the recalibration moves a raw score (m, sigma2): its recalibrated "
            "probability of a positive label. Right: how uncertain the recalibrated model says it is at each "
            "raw score. The dashed curve m(1 - m) is the largest variance a probability with mean m can "
            "have; "
            "the dots are the test inputs' raw scores."
        ),
    )
    report.demo_data = d
    return report


def _truth_figure(pipe, X_test, f_test):
    """The :class:`~skcal.SecondOrderDisplay` of the recalibrated pipeline against ``f*``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(14, 4.4), layout="constrained")
    axes = fig.subplots(1, 3)
    SecondOrderDisplay.from_estimator(pipe, X_test, true_prob=f_test, ax=axes, name="bagged trees")
    return fig


def multiclass_part(settings):
    """Part 3: three classifiers of the ten digits, real labels, truthful multiclass errors."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return _split_fit_report(
        _classifiers(settings, max_iter=2000),
        X,
        y,
        settings,
        "Part 3: three classifiers of the ten digits (real labels, multiclass, truthful errors)",
        f"load_digits: {X.shape[0]} handwritten digits, 10 classes",
        "part 3",
    )


def run_demo(
    *,
    n_bootstrap=100,
    confidence_level=0.9,
    n_jobs=None,
    random_state=0,
    verbose=0,
    n_resamples=1000,
    n_bins=10,
    strategy="uniform",
    parts=None,
    max_seconds=None,
):
    """Run the demo; return ``(reports, title, intro)`` for :func:`skcal.report.render_html`.

    ``parts`` selects some of ``("first", "second", "multiclass")`` (all when None), for a quick
    look or a test; ``n_bins`` and ``strategy`` are those of the reliability diagrams;
    ``max_seconds`` is each report's time budget (see :func:`skcal.report.calibration_report`).
    """
    t0 = time.perf_counter()
    builders = {"first": first_order_part, "second": second_order_part, "multiclass": multiclass_part}
    chosen = list(builders) if parts is None else list(parts)
    unknown = [p for p in chosen if p not in builders]
    if unknown:
        raise ValueError(f"parts: unknown demo parts {unknown}; expected some of {list(builders)}.")
    settings = {
        "n_bootstrap": n_bootstrap,
        "confidence_level": confidence_level,
        "n_jobs": n_jobs,
        "random_state": random_state,
        "verbose": verbose,
        "n_resamples": n_resamples,
        "n_bins": n_bins,
        "strategy": strategy,
        "max_seconds": max_seconds,
    }
    reports = [builders[name](settings) for name in chosen]
    intro = [
        "skcal demo: model selection by calibration on data bundled with scikit-learn. Part 1 compares "
        "five binary classifiers on real labels; part 2 recalibrates a bagged ensemble to second order on "
        "simulated repeated labels with a known truth; part 3 compares three classifiers of the ten "
        "digits with the truthful multiclass errors.",
        f"Computed in {time.perf_counter() - t0:.1f} s.",
    ]
    return reports, "skcal demo report", intro
