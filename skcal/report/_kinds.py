"""The report kinds: one class per kind, owning its data, validation, metrics, legend, figures, advice.

A kind answers, for its shape of data: does it apply (:meth:`ReportKind.accepts`), how to get
predictions from fitted models (:meth:`ReportKind.collect`), how to validate them
(:meth:`ReportKind.validate`), which metrics exist and which are the default, which metric
decides "best calibrated" (:attr:`ReportKind.headline`), what binary ``(y, p)`` pairs the
calibration test and the reliability diagrams use, which figures to draw, and what to advise.
Nothing outside this module branches on the kind.

Adding a kind means adding one class here and listing it in :data:`KINDS` (first match wins).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from skcal._validation import (
    check_binary_probabilities,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_scores,
)
from skcal.ce2 import ce2_details, ce2_score
from skcal.report import _figures
from skcal.report._metrics import (
    BINARY,
    CE2Replicates,
    MeanReplicates,
    Metric,
    TruthfulReplicates,
    binary_metric,
    quantile_bins,
    user_metric,
)
from skcal.stats._truthful import top_label_value
from skcal.truthful import classwise_lince, conf_ece, truthful_conf_ce
from skcal.votes import (
    VoteCounts,
    check_class_scores,
    check_class_votes,
    check_snapshots,
    class_scores_layout,
    snapshot_targets,
    snapshot_votes,
)

_FROM_PREDICTIONS_HINT = (
    "calibration_report takes fitted models; for stored predictions use "
    "CalibrationReport.from_predictions(y, {name: predictions})."
)


def _array(x):
    return x.to_numpy() if hasattr(x, "to_numpy") else np.asarray(x)


def _not_a_model(name, estimator):
    if isinstance(estimator, (np.ndarray, list, tuple)) or hasattr(estimator, "to_numpy"):
        raise ValueError(
            f"estimators[{name!r}] is a {type(estimator).__name__} of predictions, not a model; "
            + _FROM_PREDICTIONS_HINT
        )


# ----------------------------------------------------------------------------------------------
# the data of each kind (module-level classes: picklable)
# ----------------------------------------------------------------------------------------------
class FirstOrderData:
    """Binary labels ``y`` (float 0/1)."""

    def __init__(self, y):
        self.y = y
        self.target = y
        self.n = y.shape[0]

    def take(self, idx):
        return FirstOrderData(self.y[idx])


class SecondOrderData:
    """Snapshots ``Y`` (or :class:`~skcal.votes.VoteCounts`) with their unbiased targets and votes."""

    def __init__(self, Y):
        self.Y = Y
        self.target = Y
        self.n = Y.shape[0]
        self.t1, self.t2, self.c = snapshot_targets(Y)
        self.vote_rows, self.votes = snapshot_votes(Y)  # row of each observed vote (row-major order)
        self._counts = Y if isinstance(Y, VoteCounts) else None

    @property
    def counts(self):
        """``Y`` as :class:`~skcal.votes.VoteCounts`, made once: the same targets (its counts are
        ``a = t1 c`` and ``c``), validated by the statistics about ten times faster than the
        snapshots (once per model and pass)."""
        if self._counts is None:
            self._counts = VoteCounts(np.rint(self.t1 * self.c).astype(np.int64), self.c.astype(np.int64))
        return self._counts

    def take(self, idx):
        return SecondOrderData(self.Y[idx])


class ClassVotesData:
    """Counts per class (:class:`~skcal.votes.VoteCounts`) with per-class targets and every vote."""

    def __init__(self, V):
        self.Y = V
        self.target = V
        self.n = len(V)
        self.n_classes = V.counts.shape[1]
        self.t1, self.t2 = V.targets()  # (n, k)
        self.c = V.total
        self.vote_rows, codes = V.votes()
        self.vote_classes = codes.astype(np.intp)

    def take(self, idx):
        return ClassVotesData(self.Y[idx])


class MulticlassData:
    """Class labels as column indices ``0..k-1`` of the probability matrices.

    :meth:`top` keeps each prediction's top class and its probability, which the report's
    top-label measures, their replicates and the top-label test all need (an ``argmax`` over
    ``(n, k)`` is about 20 ms at 1e6 rows and ``k = 10``; it was formed 11 times per model).
    """

    def __init__(self, codes, n_classes):
        self.codes = codes
        self.target = codes
        self.n_classes = n_classes
        self.n = codes.shape[0]
        self._top = {}  # id(P) -> (P, r, c); P is kept, so its id is not reused while it is here
        self._bins = {}  # (id(P), n_bins) -> (P, (ids, thresholds), top-label sums or None)

    def take(self, idx):
        return MulticlassData(self.codes[idx], self.n_classes)

    def top(self, P):
        """``(r, c)``: the most probable class of each row (ties: the lowest index) and its probability.

        Kept per prediction array (by identity: the report's validated arrays, which it never
        modifies); the arrays returned are shared, so callers must not modify them.
        """
        hit = self._top.get(id(P))
        if hit is not None and hit[0] is P:
            return hit[1], hit[2]
        r = np.argmax(P, axis=1)
        c = P[np.arange(P.shape[0]), r]
        self._top[id(P)] = (P, r, c)
        return r, c

    def top_bins(self, P, n_bins):
        """``(ids, (values, indices))``: equal-mass bins of the top-class probabilities (kept per ``P``).

        :func:`~skcal.report._metrics.quantile_bins` of the probabilities of :meth:`top`, the
        bins of the truthful top-label measures (their values and their replicates' thresholds);
        ``(None, None)`` with fewer rows than bins. Shared arrays: callers must not modify them.
        """
        hit = self._bins.get((id(P), int(n_bins)))
        if hit is not None and hit[0] is P:
            return hit[1]
        value = quantile_bins(self.top(P)[1], int(n_bins))
        self._bins[(id(P), int(n_bins))] = [P, value, None]
        return value

    def top_label_sums(self, P, n_bins):
        """``(sums, corr, W)`` of :func:`skcal.truthful.truthful_conf_ce` in the bins of :meth:`top_bins`.

        The same operations as the public functions' (so their values, bit for bit, through
        :func:`~skcal.stats._truthful.top_label_value`): per bin the sum of ``c - z``, the count
        of top-class misses and the row count. ``None`` with fewer rows than bins.
        """
        ids, _ = self.top_bins(P, n_bins)
        entry = self._bins[(id(P), int(n_bins))]
        if ids is None:
            return None
        if entry[2] is None:
            r, c = self.top(P)
            miss = self.codes != r  # 1 - z
            resid = c - 1.0
            resid[miss] = c[miss]  # c - z
            entry[2] = (np.bincount(ids, weights=resid), float(np.count_nonzero(miss)), float(self.n))
        return entry[2]

    def __getstate__(self):  # a process backend gets the labels, not the kept top classes
        return {**self.__dict__, "_top": {}, "_bins": {}}

    def __setstate__(self, state):  # a report pickled before the top classes were kept has none
        self.__dict__.update({"_top": {}, "_bins": {}, **state})


# views: (data, prediction) -> the arguments of a measure
def labels_view(d, p):
    return d.y, p


def votes_view(d, s):
    return d.votes, s[d.vote_rows, 0]


votes_view.replicate_rows = "vote_rows"  # a vote's bootstrap weight is its input row's


def snapshots_view(d, s):
    return d.Y, s


def codes_view(d, P):
    return d.codes, P


def top_label_votes_view(d, S):
    """k-class second order: each vote against the mean ``m`` of its row's top class."""
    top = np.argmax(S[..., 0], axis=1)[d.vote_rows]
    return (d.vote_classes == top).astype(float), S[d.vote_rows, top, 0]


top_label_votes_view.replicate_rows = "vote_rows"  # a vote's bootstrap weight is its input row's


def classwise_votes_view(d, S):
    """k-class second order: every class's mean against whether each vote is for that class."""
    y = (d.vote_classes[:, None] == np.arange(d.n_classes)[None, :]).astype(float)
    return y.ravel(), S[d.vote_rows, :, 0].ravel()


def top_label_task(d, S):
    """The top-label task of k-class scores: ``((n, 2) scores, VoteCounts of the top class)``."""
    top = np.argmax(S[..., 0], axis=1)
    return S[np.arange(d.n), top], d.Y.one_vs_rest(top)


def top_label_view(d, P):
    """Whether the most probable class (ties: the lowest index) is right, and its probability."""
    top, c = d.top(P)
    return (top == d.codes).astype(float), c


# ----------------------------------------------------------------------------------------------
# metrics of the second-order and multiclass kinds
# ----------------------------------------------------------------------------------------------
#: Sech bandwidth assumed for second-order scores in the report's CE2 (the package default).
CE2_BANDWIDTH = 2**-6
#: Candidate degrees and folds for the report's CE2 (chosen once per model).
CE2_DEGREES = (2, 4, 8)
CE2_FOLDS = 5


def ce2_prepare(d, s):
    """CE2's degree and ridge, chosen once per model by 5-fold CV of both moment regressions."""
    res = ce2_details(d.Y, s, degree=list(CE2_DEGREES), cv=CE2_FOLDS, bandwidth=CE2_BANDWIDTH, random_state=0)
    return {"degree": int(res.degree), "alpha": float(res.alpha)}


def ce2(d, s, degree=None, alpha=1e-6):
    kw = {} if degree is None else {"degree": degree}
    return float(ce2_score(d.Y, s, alpha=alpha, bandwidth=CE2_BANDWIDTH, **kw))


def second_moment_mse(d, s):
    v = s[:, 0] ** 2 + s[:, 1]
    return float(np.mean((v - d.t2) ** 2))


def squared_error_estimate(d, s):
    """Per row, ``t2 - 2 m t1 + m^2``: unbiased for ``(f* - m)^2`` given the input."""
    m = s[:, 0]
    return d.t2 - 2.0 * m * d.t1 + m**2


def variance_bias(d, s):
    return float(np.mean(s[:, 1]) - np.mean(squared_error_estimate(d, s)))


def second_moment_mse_rows(d, s):
    """Per row, ``(m^2 + sigma2 - t2)^2`` (the bootstrap's rows of ``second_moment_mse``)."""
    return (s[:, 0] ** 2 + s[:, 1] - d.t2) ** 2


def variance_bias_rows(d, s):
    """Per row, ``sigma2 - (t2 - 2 m t1 + m^2)`` (the bootstrap's rows of ``variance_bias``)."""
    return s[:, 1] - squared_error_estimate(d, s)


def ce2_classwise_prepare(d, S):
    """Per class, CE2's degree and ridge chosen once per model by 5-fold CV (as for two classes)."""
    out = {"degree": [], "alpha": []}
    for j in range(d.n_classes):
        res = ce2_details(
            d.Y.one_vs_rest(j),
            S[:, j],
            degree=list(CE2_DEGREES),
            cv=CE2_FOLDS,
            bandwidth=CE2_BANDWIDTH,
            random_state=0,
        )
        out["degree"].append(int(res.degree))
        out["alpha"].append(float(res.alpha))
    return out


def _ce2_per_class(d, S, degree=None, alpha=None):
    return [
        float(
            ce2_score(
                d.Y.one_vs_rest(j),
                S[:, j],
                bandwidth=CE2_BANDWIDTH,
                **({} if degree is None else {"degree": degree[j], "alpha": alpha[j]}),
            )
        )
        for j in range(d.n_classes)
    ]


def ce2_classwise(d, S, degree=None, alpha=None):
    return float(np.mean(_ce2_per_class(d, S, degree, alpha)))


def ce2_classwise_details(d, S):
    params = ce2_classwise_prepare(d, S)
    values = _ce2_per_class(d, S, **params)
    return {f"CE2[{j}]": v for j, v in enumerate(values)}


def ce2_top_prepare(d, S):
    St, Vt = top_label_task(d, S)
    return ce2_prepare(SimpleNamespace(Y=Vt), St)


def ce2_top_label(d, S, degree=None, alpha=1e-6):
    St, Vt = top_label_task(d, S)
    return ce2(SimpleNamespace(Y=Vt), St, degree, alpha)


def classwise_second_moment_mse(d, S):
    v = S[..., 0] ** 2 + S[..., 1]
    return float(np.mean((v - d.t2) ** 2))


def top_label_variance_bias(d, S):
    St, Vt = top_label_task(d, S)
    t1, t2 = Vt.targets()
    m = St[:, 0]
    return float(np.mean(St[:, 1]) - np.mean(t2 - 2.0 * m * t1 + m**2))


#: Bins of the report's truthful top-label and classwise measures (the public functions' default).
TRUTHFUL_BINS = 15


def _top_label(d, P, measure, public):
    """A truthful top-label measure of validated rows: the public function's value, bit for bit.

    From the sums :meth:`MulticlassData.top_label_sums` keeps per prediction (the top classes and
    the quantile bins the replicates use too), with the public function's arithmetic; the public
    function itself when there are fewer rows than bins.
    """
    parts = d.top_label_sums(P, TRUTHFUL_BINS) if hasattr(d, "top_label_sums") else None
    if parts is None:
        return float(public(d.codes, P, n_bins=TRUTHFUL_BINS, labels=np.arange(d.n_classes)))
    return float(top_label_value(*parts, measure))


def mc_truthful_conf_ce(d, P):
    return _top_label(d, P, "truthful_conf_ce", truthful_conf_ce)


def mc_classwise_lince(d, P):
    return float(classwise_lince(d.codes, P, n_bins=TRUTHFUL_BINS, labels=np.arange(d.n_classes)))


def mc_conf_ece(d, P):
    return _top_label(d, P, "conf_ece", conf_ece)


def mc_accuracy(d, P):
    """:func:`sklearn.metrics.accuracy_score` of the top classes: the mean of the matches, bit for bit."""
    return float(np.mean(d.codes == d.top(P)[0]))


def mc_accuracy_rows(d, P):
    return (d.top(P)[0] == d.codes).astype(float)


def mc_brier_rows(d, P):
    # sum_j p_j^2 - 2 p_y + 1, the squares summed without an (n, k) temporary
    return np.einsum("ij,ij->i", P, P) - 2 * P[np.arange(d.n), d.codes] + 1.0


def mc_log_loss_rows(d, P):
    """Per-row log losses whose mean is :func:`mc_log_loss` (the same operations, bit for bit).

    As scikit-learn's: the true class's probability clipped to ``[eps, 1 - eps]``, not
    renormalised (a weighted replicate is then the weighted recomputation of the value).
    """
    eps = np.finfo(np.float64).eps  # as sklearn.metrics.log_loss
    return -np.log(np.clip(P[np.arange(d.n), d.codes], eps, 1 - eps))


def mc_brier(d, P):
    """:func:`sklearn.metrics.brier_score_loss` of the class labels, computed directly.

    The same operations as scikit-learn's, ``mean(sum_j (1[y = j] - p_j)^2)`` over C-ordered rows,
    without its one-hot matrix: ``(0 - p)^2`` is ``p^2`` exactly, so the value is bit for bit
    scikit-learn's (``tests/test_report_multiclass_direct.py``).
    """
    rows = np.arange(d.n)
    D = np.square(P, order="C")
    D[rows, d.codes] = (1.0 - P[rows, d.codes]) ** 2
    value = np.mean(D.sum(axis=1))
    return float(value * 0.5 if P.shape[1] < 3 else value)  # scikit-learn's scale_by_half="auto"


def mc_log_loss(d, P):
    """:func:`sklearn.metrics.log_loss` of the class labels, computed directly.

    scikit-learn (from 1.5) clips every probability to ``[eps, 1 - eps]`` and averages
    ``-log`` of the true class's; the same operations on the true class's column alone give its
    value bit for bit (``tests/test_report_multiclass_direct.py``) without its one-hot ``(n, k)``
    temporaries.
    """
    eps = np.finfo(np.float64).eps
    q = np.clip(P[np.arange(d.n), d.codes], eps, 1 - eps)
    return float(np.mean(-np.log(q)))


# ----------------------------------------------------------------------------------------------
# the kinds
# ----------------------------------------------------------------------------------------------
class ReportKind:
    """What every report kind provides (see the module docstring)."""

    #: Short name, also ``CalibrationReport.order``.
    name = ""
    #: Default title of a report of this kind.
    default_title = "Calibration report"
    #: Default metric names.
    default_metrics = ()
    #: The metric that decides "best calibrated" in the verdict (when it is in the report).
    headline = ""
    #: View of the data handed to user callables (``callable(*view(data, prediction))``).
    user_view = staticmethod(labels_view)

    # -- applicability and inputs ----------------------------------------------------------
    @classmethod
    def accepts_target(cls, y):
        """Whether ``y`` has the shape of this kind's labels."""
        raise NotImplementedError

    @classmethod
    def accepts(cls, y, predictions):
        """Whether ``y`` and the predictions make a report of this kind."""
        return cls.accepts_target(y)

    @classmethod
    def collect(cls, models, X):
        """Predictions of fitted models: ``(dict name -> prediction, extra from_predictions kwargs)``."""
        raise NotImplementedError

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        """``(data, dict name -> validated prediction)``."""
        raise NotImplementedError

    # -- metrics ---------------------------------------------------------------------------
    def catalog(self):
        """Dict name -> :class:`Metric` of the built-in metrics."""
        raise NotImplementedError

    def resolve_metrics(self, metrics):
        """Turn the ``metrics`` argument into a list of :class:`Metric`."""
        catalog = self.catalog()
        if metrics is None:
            metrics = self.default_metrics
        if isinstance(metrics, str):
            metrics = [metrics]
        items = metrics.items() if isinstance(metrics, dict) else [(m, m) for m in metrics]
        out = []
        for name, spec in items:
            if isinstance(spec, str):
                if spec not in catalog:
                    raise ValueError(
                        f"metrics: unknown metric {spec!r} for a {self.name} report; expected one of "
                        f"{sorted(catalog)} or a dict name -> callable."
                    )
                out.append(replace(catalog[spec], name=str(name)))
            else:
                out.append(user_metric(name, spec, self.user_view))
        names = [m.name for m in out]
        if len(set(names)) != len(names):
            raise ValueError(f"metrics: duplicate metric names {names}.")
        if not out:
            raise ValueError("metrics is empty; expected at least one metric.")
        return out

    # -- what the verdict, the test and the figures look at --------------------------------
    def test_inputs(self, data, predictions):
        """Dict model -> binary ``(y, p)`` whose calibration the per-model test checks."""
        return self.reliability_inputs(data, predictions)[0]

    def test_description(self):
        """What the per-model calibration test checks, in words."""
        return "the predicted probabilities"

    def reliability_inputs(self, data, predictions):
        """``(dict model -> (y, p), xlabel, ylabel, title)`` of the reliability diagrams."""
        raise NotImplementedError

    def sample_description(self, report):
        return f"{report.n_samples} validation samples"

    def legend_lines(self, report):
        """Kind-specific legend lines (after the generic ones)."""
        lines = []
        if "scdl" in report.metric_names and report.metric_details.get("scdl"):
            det = report.metric_details["scdl"]
            cells = ", ".join(
                f"{model}: m*={d['m*']}, SCDL_m*={d['SCDL_m*']:.3g}"
                + (f", on the floor 1/{d['m*']}" if d.get("at_floor") else "")
                for model, d in det.items()
                if d
            )
            lines.append(
                "SCDL = min over dyadic grids m of max(SCDL_m, 1/m), the grids searched up to the smallest "
                "power of two >= 4 sqrt(n): it is never below 1/m*, where m* is the selected grid; SCDL_m* "
                "is the unfloored value on that grid, and at_floor=True means SCDL equals 1/m* (models on "
                f"the floor of one grid tie) ({cells})."
            )
        return lines

    def figures(self, report):
        """Dict title -> matplotlib Figure."""
        inputs, xlabel, ylabel, title = self.reliability_inputs(report.data, report.predictions)
        return {
            title: _figures.reliability_figure(report, inputs, xlabel=xlabel, ylabel=ylabel),
            "Every metric with its interval": _figures.interval_figure(report),
        }

    def figure_explanations(self, report):
        """Dict title -> a paragraph saying in words what the figure shows."""
        level = int(round(100 * report.confidence_level))
        inputs, _, _, title = self.reliability_inputs(report.data, report.predictions)
        return {
            title: (
                "One panel per model. Blue points: the observed frequency of the outcome in each bin of "
                f"predictions ({report.n_bins} {report.strategy} bins), with {level}% bootstrap intervals; "
                "orange: the smooth calibration curve behind smECE with its band. A calibrated model lies on "
                "the dotted diagonal; points below it mean the model predicts too high, above it too low. "
                "The histogram under each panel shows where the predictions fall."
            ),
            "Every metric with its interval": (
                f"One panel per metric: each model's value with its {level}% interval; the best model is "
                "red. "
                "Models whose intervals overlap cannot be told apart on this sample."
            ),
        }

    def advice(self, results, miscalibrated):
        """Plain-words suggestions of what to try next."""
        return []


def _first_order_metrics():
    return {name: binary_metric(name, labels_view, rowwise=True) for name in BINARY}


class _ClassifierKind(ReportKind):
    """Shared by the kinds whose models are classifiers with ``predict_proba``."""

    @classmethod
    def accepts_target(cls, y):
        return _array(y).ndim == 1

    @classmethod
    def collect(cls, models, X):
        preds, classes = {}, None
        for name, est in models.items():
            _not_a_model(name, est)
            if not hasattr(est, "predict_proba"):
                raise ValueError(
                    f"estimators[{name!r}] has no predict_proba; this report needs probabilistic "
                    "classifiers (" + _FROM_PREDICTIONS_HINT + ")"
                )
            proba = np.asarray(est.predict_proba(X))
            if proba.ndim != 2 or proba.shape[1] < 2:
                raise ValueError(
                    f"estimators[{name!r}].predict_proba returned shape {proba.shape}; expected (n, k) class "
                    "probabilities with k >= 2."
                )
            cls_ = getattr(est, "classes_", None)
            if cls_ is not None:
                if classes is None:
                    classes = np.asarray(cls_)
                elif not np.array_equal(np.asarray(cls_), classes):
                    raise ValueError(
                        f"estimators[{name!r}] has classes_ {np.asarray(cls_).tolist()}, unlike the other "
                        f"models' {classes.tolist()}; all models must be fitted on the same labels."
                    )
            preds[name] = proba
        widths = {p.shape[1] for p in preds.values()}
        if len(widths) > 1:
            raise ValueError(f"the models predict different numbers of classes: {sorted(widths)}.")
        if widths == {2}:  # binary: the probability of the positive class classes_[1]
            pos = None
            if classes is not None:
                pos = classes[1].item() if hasattr(classes[1], "item") else classes[1]
            return {name: p[:, 1] for name, p in preds.items()}, {"pos_label": pos}
        return preds, {"labels": classes}


class FirstOrderKind(_ClassifierKind):
    """Binary labels; each model gives the positive-class probability."""

    name = "first-order"
    default_title = "Calibration report"
    default_metrics = (
        "scdl",
        "smooth_ece",
        "smooth_calibration_error",
        "cutoff",
        "binned_ece",
        "accuracy",
        "brier",
        "log_loss",
    )
    headline = "smooth_ece"

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        yv, preds = None, {}
        for name, p in predictions.items():
            yy, pp, _ = check_binary_probabilities(
                y, p, pos_label=pos_label, y_prob_name=f"predictions[{name!r}]", y_true_name="y"
            )
            yv = yy if yv is None else yv
            preds[name] = pp
        return FirstOrderData(yv), preds

    def catalog(self):
        return _first_order_metrics()

    def reliability_inputs(self, data, predictions):
        return (
            {name: (data.y, p) for name, p in predictions.items()},
            "predicted probability",
            "observed frequency of the positive class",
            "Reliability diagrams",
        )

    def advice(self, results, miscalibrated):
        if not miscalibrated:
            return [
                "No model is detectably miscalibrated: choose by the proper scores (Brier, log loss), which "
                "also reward sharp predictions."
            ]
        method = "isotonic" if results.n_samples >= 1000 else "sigmoid"
        why = (
            "isotonic regression needs about a thousand calibration rows"
            if method == "sigmoid"
            else "there are enough rows for the more flexible isotonic map"
        )
        return [
            f"Recalibrate {_names(miscalibrated)} on held-out data (rows not used for fitting): "
            f"CalibratedClassifierCV(FrozenEstimator(model), method='{method}') ({why}), then report again "
            "on fresh validation data."
        ]


class MulticlassKind(_ClassifierKind):
    """Class labels; each model gives an ``(n, k)`` probability matrix with ``k > 2``."""

    name = "multiclass"
    default_title = "Multiclass calibration report"
    default_metrics = ("truthful_conf_ce", "classwise_lince", "conf_ece", "accuracy", "brier", "log_loss")
    headline = "truthful_conf_ce"
    user_view = staticmethod(codes_view)

    @classmethod
    def accepts(cls, y, predictions):
        if not cls.accepts_target(y):
            return False
        return any(np.ndim(_array(P)) == 2 and np.shape(_array(P))[1] > 2 for P in predictions.values())

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        arrays = {name: _array(P) for name, P in predictions.items()}
        k = max(a.shape[1] if a.ndim == 2 else 1 for a in arrays.values())
        preds = {
            name: check_multiclass_probabilities(P, name=f"predictions[{name!r}]", n_classes=k)
            for name, P in arrays.items()
        }
        codes = check_multiclass_labels(y, k, labels=labels, name="y")
        for name, P in preds.items():
            if P.shape[0] != codes.shape[0]:
                raise ValueError(
                    f"Inconsistent numbers of samples: y has {codes.shape[0]}, predictions[{name!r}] has "
                    f"{P.shape[0]}."
                )
        return MulticlassData(codes, k), preds

    def catalog(self):
        spec = {
            "truthful_conf_ce": (
                "ConfCE-corr",
                mc_truthful_conf_ce,
                False,
                "corrected squared top-label calibration error, truthful (15 quantile bins)",
                True,
            ),
            "classwise_lince": (
                "LinCE-cw",
                mc_classwise_lince,
                False,
                "classwise linear calibration error, truthful (15 quantile bins per class)",
                True,
            ),
            "conf_ece": (
                "ConfECE",
                mc_conf_ece,
                False,
                "top-label ECE (not truthful; for comparison; 15 quantile bins)",
                True,
            ),
            "accuracy": ("accuracy", mc_accuracy, True, "accuracy of the most probable class", False),
            "brier": (
                "Brier",
                mc_brier,
                False,
                "mean over rows of sum_j (p_j - 1[y = j])^2 (sklearn.metrics.brier_score_loss)",
                False,
            ),
            "log_loss": (
                "log loss",
                mc_log_loss,
                False,
                "mean negative log-probability of the true class (sklearn.metrics.log_loss)",
                False,
            ),
        }
        rows = {"accuracy": mc_accuracy_rows, "brier": mc_brier_rows, "log_loss": mc_log_loss_rows}
        out = {
            name: Metric(
                name,
                label,
                func,
                gib,
                desc,
                is_calibration=is_cal,
                bounds=(0.0, None),
                pointwise=rows.get(name),
                replicates=MeanReplicates(rows[name]) if name in rows else TruthfulReplicates(name),
            )
            for name, (label, func, gib, desc, is_cal) in spec.items()
        }
        # the Lipschitz smCE on the top-label view of the reliability diagrams and the test
        smce = binary_metric(
            "smooth_calibration_error",
            top_label_view,
            suffix="; of the top-label confidence against whether the top class is right (not truthful)",
        )
        out["smooth_calibration_error"] = replace(smce, label="smCE-top", bounds=(0.0, 1.0))
        return out

    def reliability_inputs(self, data, predictions):
        out = {name: top_label_view(data, P) for name, P in predictions.items()}
        return (
            out,
            "top-label confidence",
            "accuracy of the most probable class",
            "Top-label reliability diagrams",
        )

    def test_description(self):
        return "the top-label confidence"

    def advice(self, results, miscalibrated):
        if not miscalibrated:
            return [
                "No model's top-label confidence is detectably miscalibrated: choose by log loss or Brier."
            ]
        return [
            f"Recalibrate {_names(miscalibrated)}: temperature scaling (skcal.fit_temperature on held-out "
            "logits) keeps the ranking of the classes and needs little data; "
            "CalibratedClassifierCV(FrozenEstimator(model), method='sigmoid') calibrates each class."
        ]


class SecondOrderKind(ReportKind):
    """Snapshots (``k >= 2`` votes per row); each model gives second-order scores ``(m, sigma2)``."""

    name = "second-order"
    default_title = "Second-order calibration report"
    default_metrics = ("ce2", "scdl", "brier", "second_moment_mse", "variance_bias")
    headline = "ce2"
    user_view = staticmethod(snapshots_view)

    @classmethod
    def accepts_target(cls, y):
        if isinstance(y, VoteCounts):
            return True
        arr = _array(y)
        return arr.ndim == 2 and arr.shape[1] >= 2

    @classmethod
    def collect(cls, models, X):
        preds = {}
        for name, est in models.items():
            _not_a_model(name, est)
            if hasattr(est, "predict_second_order"):  # e.g. SecondOrderCalibratedClassifier
                method = "predict_second_order"
            else:
                method = "transform" if hasattr(est, "transform") else "predict"
            if not hasattr(est, method):
                raise ValueError(
                    f"estimators[{name!r}] has neither transform nor predict; a second-order report needs "
                    "models that output (m, sigma2) (" + _FROM_PREDICTIONS_HINT + ")"
                )
            S = np.asarray(getattr(est, method)(X), dtype=float)
            if (S.ndim != 2 or S.shape[1] != 2) and class_scores_layout(S) is None:
                raise ValueError(
                    f"estimators[{name!r}].{method} returned shape {S.shape}; a second-order report needs "
                    "(n, 2) scores (m, sigma2), or k-class scores (n, k, 2) or (n, 2k)."
                )
            preds[name] = S
        return preds, {}

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        data = SecondOrderData(check_snapshots(y, name="y"))
        preds = {}
        for name, s in predictions.items():
            S = check_scores(s, name=f"predictions[{name!r}]")
            if S.shape[1] != 2:
                raise ValueError(
                    f"predictions[{name!r}] has one column; a second-order report (snapshots as y) needs "
                    "(m, sigma2) scores of shape (n, 2)."
                )
            if S.shape[0] != data.n:
                raise ValueError(
                    f"predictions[{name!r}] has {S.shape[0]} rows; expected {data.n} (one per row of y)."
                )
            preds[name] = S
        return data, preds

    def catalog(self):
        out = {name: binary_metric(name, votes_view, suffix="; m against each vote") for name in BINARY}
        out["ce2"] = Metric(
            "ce2",
            "CE2",
            ce2,
            False,
            "second-order calibration error E|eta1 - m| + E|eta2 - (m^2 + sigma2)|: tensor-Chebyshev ridge "
            "estimate, degree and ridge chosen once per model by 5-fold CV on the full validation set",
            prepare=ce2_prepare,
            is_calibration=True,
            replicates=CE2Replicates(),
            # the replicates' statistics with unit weights: ce2_score at the chosen degree and
            # ridge, to round-off, without a third pass over the rows
            value_from_replicates=True,
        )
        out["second_moment_mse"] = Metric(
            "second_moment_mse",
            "MSE(m^2+s2)",
            second_moment_mse,
            False,
            "mean of (m^2 + sigma2 - t2)^2, a proper loss for E[f*^2] (includes label noise)",
            replicates=MeanReplicates(second_moment_mse_rows),
        )
        out["variance_bias"] = Metric(
            "variance_bias",
            "mean s2 - (f*-m)^2",
            variance_bias,
            False,
            "mean stated variance sigma2 minus the unbiased estimate of the mean squared error (f* - m)^2 "
            "(positive: the model overstates its uncertainty; negative: over-confident); ranked by |value|",
            rank_by_abs=True,
            bounds=(None, None),
            replicates=MeanReplicates(variance_bias_rows),
        )
        return out

    def reliability_inputs(self, data, predictions):
        return (
            {name: votes_view(data, s) for name, s in predictions.items()},
            "mean m",
            "observed frequency of a positive vote",
            "Reliability of the mean m against every vote",
        )

    def test_inputs(self, data, predictions):
        d = data
        if isinstance(d.Y, VoteCounts):
            # counts have no vote order: one vote per row drawn uniformly among its c votes
            # (positive with probability a / c, exactly as one of exchangeable votes), seeded
            pick = np.random.default_rng(0).random(d.n) * d.Y.total
            y = (pick < d.Y.positive).astype(float)
        else:
            # the first observed vote of each row (votes of a row correlate)
            first = np.argmax(~np.isnan(d.Y), axis=1)
            y = d.Y[np.arange(d.n), first]
        return {name: (y, s[:, 0]) for name, s in predictions.items()}

    def test_description(self):
        return "the mean m against one vote of each row (the first; for vote counts a seeded random one)"

    def sample_description(self, report):
        return f"{report.n_samples} validation inputs with {report.data.votes.shape[0]} votes"

    def figures(self, report):
        figs = super().figures(report)
        figs["Is the stated uncertainty right?"] = _figures.variance_figure(
            report, {name: squared_error_estimate(report.data, s) for name, s in report.predictions.items()}
        )
        return figs

    def figure_explanations(self, report):
        out = super().figure_explanations(report)
        inputs, _, _, title = self.reliability_inputs(report.data, report.predictions)
        out[title] = (
            "First-order check of the mean: each panel compares a model's mean m with how often a vote is "
            "positive. " + out[title].split(". ", 1)[1]
        )
        out["Is the stated uncertainty right?"] = (
            "Second-order check of the variance: the rows are grouped by the variance sigma2 the model "
            "states, and each group's stated variance is plotted against the squared error of its mean m, "
            "(f* - m)^2, estimated without bias from the two or more votes per input. On the dotted diagonal "
            "the model is exactly as uncertain as its errors; above it, it is over-confident (its errors are "
            "larger than it says); below it, it overstates its uncertainty."
        )
        return out

    def advice(self, results, miscalibrated):
        lines, flagged = [], []
        if "variance_bias" in results.metric_names:
            t = results.table["variance_bias"]
            over = [m for m in results.model_names if t.loc[m, "low"] > 0]
            under = [m for m in results.model_names if t.loc[m, "high"] < 0]
            if under:
                lines.append(
                    f"{_names(under)}: states less uncertainty than its errors show (over-confident)."
                )
            if over:
                lines.append(f"{_names(over)}: states more uncertainty than its errors show.")
            flagged = under + over
        bad = [m for m in results.model_names if m in set(miscalibrated) | set(flagged)]
        if bad:
            lines.append(
                f"Recalibrate {_names(bad)} to second order on held-out snapshots: "
                "SecondOrderPlattCalibrator(order=2) after the model (second-order Platt scaling corrects "
                "the "
                "mean and the variance together; order=1 corrects only the mean)."
            )
        return lines


class ClassSecondOrderKind(SecondOrderKind):
    """Repeated labels over k classes; each model gives k-class scores ``(n, k, 2)`` or ``(n, 2k)``.

    The labels are counts per class (``VoteCounts(counts=C)``) or snapshots of class labels
    (codes ``0..k-1``). CE2 is reported classwise (the mean of the one-vs-rest CE2, each class
    with its degree and ridge chosen by CV) and for the top label; the figures and the
    calibration test look at the top label (each row's class of largest ``m``), the classwise
    reliability diagram pools every class's ``m`` against its votes.
    """

    name = "second-order (k classes)"
    default_title = "Second-order calibration report (k classes)"
    default_metrics = ("ce2_classwise", "ce2_top_label", "smooth_ece", "second_moment_mse", "variance_bias")
    headline = "ce2_classwise"
    user_view = staticmethod(snapshots_view)

    @classmethod
    def accepts_target(cls, y):
        return isinstance(y, VoteCounts) and y.counts is not None and y.counts.shape[1] > 2

    @classmethod
    def accepts(cls, y, predictions):
        if cls.accepts_target(y):
            return True
        if not SecondOrderKind.accepts_target(y):
            return False
        return any(class_scores_layout(_array(s)) is not None for s in predictions.values())

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        preds, k = {}, None
        for name, s in predictions.items():
            S = check_class_scores(s, name=f"predictions[{name!r}]", n_classes=k)
            k = S.shape[1]
            preds[name] = S
        data = ClassVotesData(check_class_votes(y, k, name="y", min_votes=2))
        for name, S in preds.items():
            if S.shape[0] != data.n:
                raise ValueError(
                    f"predictions[{name!r}] has {S.shape[0]} rows; expected {data.n} (one per row of y)."
                )
        return data, preds

    def catalog(self):
        out = {
            name: binary_metric(name, top_label_votes_view, suffix="; the top label's m against each vote")
            for name in BINARY
        }
        out["ce2_classwise"] = Metric(
            "ce2_classwise",
            "CE2-cw",
            ce2_classwise,
            False,
            "classwise second-order calibration error: the mean over classes of the one-vs-rest CE2 "
            "E|eta1 - m_j| + E|eta2 - (m_j^2 + sigma2_j)|, each class's degree and ridge chosen once per "
            "model by 5-fold CV",
            prepare=ce2_classwise_prepare,
            details=ce2_classwise_details,
            is_calibration=True,
        )
        out["ce2_top_label"] = Metric(
            "ce2_top_label",
            "CE2-top",
            ce2_top_label,
            False,
            "top-label second-order calibration error: CE2 of each row's class of largest m, its "
            "(m, sigma2) and its votes (degree and ridge by 5-fold CV)",
            prepare=ce2_top_prepare,
            is_calibration=True,
        )
        out["second_moment_mse"] = Metric(
            "second_moment_mse",
            "MSE(m^2+s2)",
            classwise_second_moment_mse,
            False,
            "mean over rows and classes of (m_j^2 + sigma2_j - t2_j)^2, a proper loss for E[f*_j^2]",
        )
        out["variance_bias"] = Metric(
            "variance_bias",
            "mean s2 - (f*-m)^2",
            top_label_variance_bias,
            False,
            "top label: mean stated variance sigma2 minus the unbiased estimate of the mean squared error "
            "(f* - m)^2 (positive: overstated uncertainty; negative: over-confident); ranked by |value|",
            rank_by_abs=True,
            bounds=(None, None),
        )
        return out

    def reliability_inputs(self, data, predictions):
        return (
            {name: top_label_votes_view(data, s) for name, s in predictions.items()},
            "top-label mean m",
            "observed frequency of a vote for the top class",
            "Reliability of the top label's m against every vote",
        )

    def test_inputs(self, data, predictions):
        # one vote per row drawn uniformly among its votes (seeded), against the top label's m
        pick = np.random.default_rng(0).random(data.n) * data.c
        ends = np.cumsum(data.Y.counts, axis=1)
        vote = (ends <= pick[:, None]).sum(axis=1)
        out = {}
        for name, S in predictions.items():
            top = np.argmax(S[..., 0], axis=1)
            out[name] = ((vote == top).astype(float), S[np.arange(data.n), top, 0])
        return out

    def test_description(self):
        return "the top label's mean m against one vote of each row (a seeded random one)"

    def sample_description(self, report):
        d = report.data
        return f"{d.n} validation inputs with {int(d.c.sum())} votes over {d.n_classes} classes"

    def figures(self, report):
        inputs, xlabel, ylabel, title = self.reliability_inputs(report.data, report.predictions)
        classwise = {name: classwise_votes_view(report.data, s) for name, s in report.predictions.items()}
        top = {name: top_label_task(report.data, s)[0] for name, s in report.predictions.items()}
        errors = {}
        for name, s in report.predictions.items():
            St, Vt = top_label_task(report.data, s)
            t1, t2 = Vt.targets()
            errors[name] = t2 - 2.0 * St[:, 0] * t1 + St[:, 0] ** 2
        view = SimpleNamespace(predictions=top)
        return {
            title: _figures.reliability_figure(report, inputs, xlabel=xlabel, ylabel=ylabel),
            "Classwise reliability: every class's m against its votes": _figures.reliability_figure(
                report, classwise, xlabel="mean m of a class", ylabel="observed frequency of a vote for it"
            ),
            "Is the stated uncertainty right? (top label)": _figures.variance_figure(view, errors),
            "Every metric with its interval": _figures.interval_figure(report),
        }

    def figure_explanations(self, report):
        out = ReportKind.figure_explanations(self, report)
        inputs, _, _, title = self.reliability_inputs(report.data, report.predictions)
        generic = out[title]
        out[title] = (
            "First-order check of the top label: each panel compares a model's mean m of each row's most "
            "probable class with how often a vote is for that class. " + generic.split(". ", 1)[1]
        )
        out["Classwise reliability: every class's m against its votes"] = (
            "The same check for every class at once: each row contributes its k means m_j, each against "
            "whether a vote is for class j (the one-vs-rest tasks pooled)."
        )
        out["Is the stated uncertainty right? (top label)"] = (
            "Second-order check of the top label's variance: rows grouped by the stated variance sigma2 of "
            "their most probable class, against the squared error (f* - m)^2 of its mean, estimated without "
            "bias from the votes. On the dotted diagonal the model is exactly as uncertain as its errors; "
            "above it, over-confident; below it, it overstates its uncertainty."
        )
        return out

    def advice(self, results, miscalibrated):
        lines = super().advice(results, miscalibrated)
        return [
            line.replace(
                "SecondOrderPlattCalibrator(order=2) after the model",
                "SecondOrderCalibratedClassifier(model, multiclass='classwise') (one second-order Platt "
                "calibrator per class, then the projection onto the simplex; multiclass='top_label' for the "
                "top label alone)",
            )
            for line in lines
        ]


def _names(models):
    models = [str(m) for m in models]
    if len(models) == 1:
        return models[0]
    return ", ".join(models[:-1]) + " and " + models[-1]


#: The report kinds, tried in order (first match wins).
KINDS = (ClassSecondOrderKind, SecondOrderKind, MulticlassKind, FirstOrderKind)


def _check_target_shape(y):
    if isinstance(y, VoteCounts):
        return
    arr = _array(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        raise ValueError(
            f"y has shape {arr.shape}: one column. Pass a 1-d array of labels for a first-order or "
            "multiclass "
            "report, or k >= 2 snapshot columns (independent labels per input) for a second-order report."
        )
    if arr.ndim not in (1, 2):
        raise ValueError(f"y must be 1-d (labels) or 2-d (snapshots); got an array of shape {arr.shape}.")


def kind_for_target(y):
    """The first kind whose labels have the shape of ``y`` (before any prediction is made)."""
    _check_target_shape(y)
    for kind in KINDS:
        if kind.accepts_target(y):
            return kind
    raise ValueError(f"no report kind accepts y of shape {_array(y).shape}.")  # pragma: no cover


def kind_for(y, predictions):
    """An instance of the first kind that accepts ``y`` and the predictions."""
    _check_target_shape(y)
    for kind in KINDS:
        if kind.accepts(y, predictions):
            return kind()
    raise ValueError(f"no report kind accepts y of shape {_array(y).shape}.")  # pragma: no cover
