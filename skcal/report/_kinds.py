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

from skcal._catalog import measures, squared_error_estimate, top_label_task
from skcal._validation import (
    check_binary_probabilities,
    check_multiclass_labels,
    check_multiclass_probabilities,
    check_scores,
)
from skcal.ce2 import ce2_details, ce2_score
from skcal.report import _figures
from skcal.report._metrics import catalog_metric, user_metric
from skcal.votes import (
    Snapshots,
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
        # the measures get the votes as said (a plain array of two votes a row reads two ways)
        Y = Y if isinstance(Y, (VoteCounts, Snapshots)) else Snapshots(Y)
        self.Y = Y
        self.target = Y
        self.n = Y.shape[0]
        self.t1, self.t2, self.c = snapshot_targets(Y)
        self.vote_rows, self.votes = snapshot_votes(Y)  # row of each observed vote (row-major order)

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
    """Class labels as column indices ``0..k-1`` of the probability matrices."""

    def __init__(self, codes, n_classes):
        self.codes = codes
        self.target = codes
        self.n_classes = n_classes
        self.n = codes.shape[0]

    def take(self, idx):
        return MulticlassData(self.codes[idx], self.n_classes)


# views: (data, prediction) -> the arguments of a measure
def labels_view(d, p):
    return d.y, p


def votes_view(d, s):
    return d.votes, s[d.vote_rows, 0]


votes_view.replicate_rows = "vote_rows"  # a vote's bootstrap weight is its input row's


def snapshots_view(d, s):
    return d.Y, s


def snapshots_user_view(d, s):
    """A user's callable gets the votes as an array (counts as they are)."""
    return (d.Y.votes if isinstance(d.Y, Snapshots) else d.Y), s


def codes_view(d, P):
    return d.codes, P


def column_labels(d):
    """The class of each column of a multiclass prediction: the codes themselves."""
    return {"labels": np.arange(d.n_classes)}


def top_label_votes_view(d, S):
    """k-class second order: each vote against the mean ``m`` of its row's top class."""
    top = np.argmax(S[..., 0], axis=1)[d.vote_rows]
    return (d.vote_classes == top).astype(float), S[d.vote_rows, top, 0]


top_label_votes_view.replicate_rows = "vote_rows"  # a vote's bootstrap weight is its input row's


def classwise_votes_view(d, S):
    """k-class second order: every class's mean against whether each vote is for that class."""
    y = (d.vote_classes[:, None] == np.arange(d.n_classes)[None, :]).astype(float)
    return y.ravel(), S[d.vote_rows, :, 0].ravel()


def top_label_view(d, P):
    """Whether the most probable class (ties: the lowest index) is right, and its probability."""
    top = np.argmax(P, axis=1)
    return (top == d.codes).astype(float), P[np.arange(P.shape[0]), top]


# ----------------------------------------------------------------------------------------------
# how the second-order kinds compute CE2: degree and ridge chosen once per model by CV
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


def ce2_classwise_prepare(d, S):
    """Per class, CE2's degree and ridge chosen once per model by 5-fold CV (as for two classes)."""
    per_class = [ce2_prepare(SimpleNamespace(Y=d.Y.one_vs_rest(j)), S[:, j]) for j in range(d.n_classes)]
    return {key: [params[key] for params in per_class] for key in ("degree", "alpha")}


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
    """The classwise CE2 with each class's own degree and ridge."""
    return float(np.mean(_ce2_per_class(d, S, degree, alpha)))


def ce2_classwise_details(d, S):
    params = ce2_classwise_prepare(d, S)
    values = _ce2_per_class(d, S, **params)
    return {f"CE2[{j}]": v for j, v in enumerate(values)}


def ce2_top_prepare(d, S):
    St, Vt = top_label_task(d.Y, S)
    return ce2_prepare(SimpleNamespace(Y=Vt), St)


def ce2_top_label(d, S, degree=None, alpha=1e-6):
    """The top-label CE2 at the degree and ridge chosen for its task."""
    St, Vt = top_label_task(d.Y, S)
    kw = {} if degree is None else {"degree": degree}
    return float(ce2_score(Vt, St, alpha=alpha, bandwidth=CE2_BANDWIDTH, **kw))


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
    #: View of the data the reliability diagrams and the calibration test draw ``(y, p)`` from.
    reliability_view = staticmethod(labels_view)
    #: The reliability diagrams' x label, y label and title.
    reliability_labels = (
        "predicted probability",
        "observed frequency of the positive class",
        "Reliability diagrams",
    )

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
        inputs = {name: self.reliability_view(data, p) for name, p in predictions.items()}
        return (inputs, *self.reliability_labels)

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
        title = self.reliability_labels[2]
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


def _binary_metrics(view, suffix=""):
    """The catalogue's binary report measures applied through ``view``."""
    binary = measures("binary", report=True)
    return {name: catalog_metric(m, view, suffix=suffix) for name, m in binary.items()}


def _second_order_catalog(input, votes, suffix, own):
    """The binary measures on the ``votes`` view, then the measures of ``input`` on the snapshots
    (``own``: per measure, the fields a kind computes its own way)."""
    out = _binary_metrics(votes, suffix=suffix)
    for name, m in measures(input, report=True).items():
        out[name] = catalog_metric(m, snapshots_view, **own.get(name, {}))
    return out


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
        return _binary_metrics(labels_view)

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
    reliability_view = staticmethod(top_label_view)
    reliability_labels = (
        "top-label confidence",
        "accuracy of the most probable class",
        "Top-label reliability diagrams",
    )

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
        multiclass = measures("multiclass", report=True)
        out = {name: catalog_metric(m, codes_view, keywords=column_labels) for name, m in multiclass.items()}
        # the Lipschitz smCE on the top-label view of the reliability diagrams and the test
        smce = measures("binary", report=True)["smooth_calibration_error"]
        out["smooth_calibration_error"] = catalog_metric(
            smce,
            top_label_view,
            suffix="; of the top-label confidence against whether the top class is right (not truthful)",
            label="smCE-top",
        )
        return out

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
    user_view = staticmethod(snapshots_user_view)
    reliability_view = staticmethod(votes_view)
    reliability_labels = (
        "mean m",
        "observed frequency of a positive vote",
        "Reliability of the mean m against every vote",
    )

    @classmethod
    def accepts_target(cls, y):
        if isinstance(y, (VoteCounts, Snapshots)):  # said: counts or votes
            return True
        arr = _array(y)  # a plain array: snapshots, refused by check_snapshots where it reads two ways
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
            if _class_count(s):  # two classes in a k-class layout: class 1's, the binary number
                S = check_class_scores(s, name=f"predictions[{name!r}]", n_classes=2)[:, 1]
            else:
                S = check_scores(s, name=f"predictions[{name!r}]")
            if S.shape[1] != 2:
                raise ValueError(
                    f"predictions[{name!r}] has one column; a second-order report (snapshots as y) needs "
                    "(m, sigma2) scores of shape (n, 2)."
                )
            preds[name] = S
        return data, _one_per_row(preds, data.n)

    def catalog(self):
        # CE2's degree and ridge chosen once per model by CV
        own = {"ce2": {"prepare": ce2_prepare}}
        return _second_order_catalog("second_order", votes_view, "; m against each vote", own)

    def test_inputs(self, data, predictions):
        d = data
        if isinstance(d.Y, VoteCounts):
            # counts have no vote order: one vote per row drawn uniformly among its c votes
            # (positive with probability a / c, exactly as one of exchangeable votes), seeded
            pick = np.random.default_rng(0).random(d.n) * d.Y.total
            y = (pick < d.Y.positive).astype(float)
        else:
            # the first observed vote of each row (votes of a row correlate)
            first = np.argmax(~np.isnan(d.Y.votes), axis=1)
            y = d.Y.votes[np.arange(d.n), first]
        return {name: (y, s[:, 0]) for name, s in predictions.items()}

    def test_description(self):
        return "the mean m against one vote of each row (the first; for vote counts a seeded random one)"

    def sample_description(self, report):
        return f"{report.n_samples} validation inputs with {report.data.votes.shape[0]} votes"

    def figures(self, report):
        figs = super().figures(report)
        d = report.data
        figs["Is the stated uncertainty right?"] = _figures.variance_figure(
            report,
            {name: squared_error_estimate(d.t1, d.t2, s[:, 0]) for name, s in report.predictions.items()},
        )
        return figs

    def figure_explanations(self, report):
        out = super().figure_explanations(report)
        title = self.reliability_labels[2]
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
    reliability_view = staticmethod(top_label_votes_view)
    reliability_labels = (
        "top-label mean m",
        "observed frequency of a vote for the top class",
        "Reliability of the top label's m against every vote",
    )

    @classmethod
    def accepts_target(cls, y):
        return isinstance(y, VoteCounts) and y.counts is not None and y.counts.shape[1] > 2

    @classmethod
    def accepts(cls, y, predictions):
        if cls.accepts_target(y):
            return True
        if not SecondOrderKind.accepts_target(y):
            return False
        # two classes are one binary task (the second-order kind reads class 1's scores)
        return any(_class_count(s) > 2 for s in predictions.values())

    def validate(self, y, predictions, *, pos_label=None, labels=None):
        preds, k = {}, None
        for name, s in predictions.items():
            S = check_class_scores(s, name=f"predictions[{name!r}]", n_classes=k)
            k = S.shape[1]
            preds[name] = S
        data = ClassVotesData(check_class_votes(y, k, name="y", min_votes=2))
        return data, _one_per_row(preds, data.n)

    def catalog(self):
        # CE2 with a degree and ridge chosen per class (classwise) or for the top-label task
        own = {
            "ce2_classwise": {
                "func": ce2_classwise,
                "prepare": ce2_classwise_prepare,
                "details": ce2_classwise_details,
            },
            "ce2_top_label": {"func": ce2_top_label, "prepare": ce2_top_prepare},
        }
        suffix = "; the top label's m against each vote"
        return _second_order_catalog("class_second_order", top_label_votes_view, suffix, own)

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
        top = {name: top_label_task(report.data.Y, s)[0] for name, s in report.predictions.items()}
        errors = {}
        for name, s in report.predictions.items():
            St, Vt = top_label_task(report.data.Y, s)
            errors[name] = squared_error_estimate(*Vt.targets(), St[:, 0])
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
        title = self.reliability_labels[2]
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


def _one_per_row(preds, n):
    """``preds``, each checked to have one row per row of ``y``."""
    for name, S in preds.items():
        if S.shape[0] != n:
            raise ValueError(f"predictions[{name!r}] has {S.shape[0]} rows; expected {n} (one per row of y).")
    return preds


def _names(models):
    models = [str(m) for m in models]
    if len(models) == 1:
        return models[0]
    return ", ".join(models[:-1]) + " and " + models[-1]


#: The report kinds, tried in order (first match wins).
KINDS = (ClassSecondOrderKind, SecondOrderKind, MulticlassKind, FirstOrderKind)


def _class_count(s):
    """The number of classes of k-class second-order scores (0 for any other shape)."""
    layout = class_scores_layout(_array(s))
    if layout is None:
        return 0
    shape = np.shape(_array(s))
    return shape[1] if layout == "classes" else shape[1] // 2


def _check_target_shape(y):
    if isinstance(y, (VoteCounts, Snapshots)):
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
