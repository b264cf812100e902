"""The metrics the leaderboard knows: their range, direction, and how each is recomputed from a samples file.

Every metric a shipped task reports registers in :data:`neurips26.metric.METRICS` with ``@METRICS.register(name,
range=(lo, hi), higher_is_better=..., binary=...)`` on its per-document function ``f(sample, config) -> float |
None``: those of lm-eval tasks here, those of a method's own evaluator in that method's package (PushT rollouts in
:mod:`neurips26.methods.actions.board_metrics`, FiC in :mod:`neurips26.methods.fic.board_metrics`); the
``neurips26.metrics`` entry points name every such module. Each is:

* a function that recomputes the document's value from the sample's responses and target (``acc``,
  ``acc_norm`` of a multiple-choice task, from the loglikelihoods lm-eval logged);
* or :func:`recorded`: the per-document value lm-eval wrote is taken as is (metrics of a task's own
  ``process_results``, which :mod:`.recompute` reruns on the document and the responses instead).

A metric that is not registered is an error (a task reporting it cannot be submitted), not an unbounded range.
The aggregate is the mean over documents unless the metric registers its own ``aggregate(values) -> float``
(a corpus-level metric: macro-F1 over (gold, predicted) pairs, perplexity from per-document NLLs); ``range``
bounds the per-document values of a mean and the aggregate of any metric. A mean's standard error is that of the
per-document values; a corpus-level metric's is :func:`bootstrap_stderr` (as lm-eval's for its non-mean
aggregations), so that every ranked score has an interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from neurips26.metric import INF, METRICS, recorded
from neurips26.results import Sample
from neurips26.stats import macro_f1_of_pairs


def _gold(sample: Sample) -> int | None:
    target = sample.target
    try:
        return int(target[0] if isinstance(target, list) and len(target) == 1 else target)
    except (TypeError, ValueError):
        return None


def _choices(sample: Sample, config: Mapping[str, Any]) -> list[str] | None:
    if not isinstance(sample.arguments, dict):
        return None
    delimiter = str(config.get("target_delimiter", " "))
    try:
        texts = [str(arg["arg_1"]) for arg in sample.arguments.values()]
    except (TypeError, KeyError):
        return None
    return [t[len(delimiter):] if t.startswith(delimiter) else t for t in texts]


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: values[i])


@METRICS.register("acc", range=(0.0, 1.0), higher_is_better=True, binary=True)
def acc(sample: Sample, config: Mapping[str, Any], metric: str = "acc") -> float | None:
    """Multiple choice accuracy: 1 when the gold option has the highest loglikelihood."""
    lls, gold = sample.loglikelihoods(), _gold(sample)
    if config.get("output_type") != "multiple_choice" or not lls or gold is None:
        return recorded(sample, config, metric)
    return float(_argmax(lls) == gold)


@METRICS.register("acc_norm", range=(0.0, 1.0), higher_is_better=True, binary=True)
def acc_norm(sample: Sample, config: Mapping[str, Any], metric: str = "acc_norm") -> float | None:
    """Length-normalised multiple choice accuracy: loglikelihood per character of each option, as lm-eval."""
    lls, gold, choices = sample.loglikelihoods(), _gold(sample), _choices(sample, config)
    if config.get("output_type") != "multiple_choice" or not lls or gold is None or not choices \
            or len(choices) != len(lls):
        return recorded(sample, config, metric)
    return float(_argmax([ll / max(len(c), 1) for ll, c in zip(lls, choices, strict=True)]) == gold)


def _register_recorded(name: str, lo: float, hi: float, higher_is_better: bool = True, binary: bool = False,
                       doc: str = "") -> None:
    def per_document(sample: Sample, config: Mapping[str, Any], metric: str = name) -> float | None:
        return recorded(sample, config, metric)

    per_document.__doc__ = doc or f"{name}: the per-document value the task's scoring recorded."
    per_document.__name__ = name
    METRICS.register(name, range=(lo, hi), higher_is_better=higher_is_better, binary=binary)(per_document)


for _name, _lo, _hi, _up, _binary, _doc in (
    ("exact_match", 0.0, 1.0, True, True, "Exact match of the generation with the target (0 or 1)."),
    ("acc_mutual_info", 0.0, 1.0, True, True, "Multiple choice accuracy by mutual information."),
    ("rouge1", 0.0, 1.0, True, False, "ROUGE-1 F-measure of the generation against the target."),
    ("rouge2", 0.0, 1.0, True, False, "ROUGE-2 F-measure of the generation against the target."),
    ("rougeL", 0.0, 1.0, True, False, "ROUGE-L F-measure of the generation against the target."),
    ("rougeLsum", 0.0, 1.0, True, False, "ROUGE-Lsum F-measure of the generation against the target."),
    ("f1", 0.0, 1.0, True, False, "F1 score."),
    ("mcc", -1.0, 1.0, True, False, "Matthews correlation coefficient."),
    ("bleu", 0.0, 100.0, True, False, "BLEU score."),
    ("chrf", 0.0, 100.0, True, False, "chrF score."),
    ("ter", 0.0, INF, False, False, "Translation edit rate."),
    ("perplexity", 1.0, INF, False, False, "Perplexity."),
    ("word_perplexity", 1.0, INF, False, False, "Perplexity per word."),
    ("byte_perplexity", 1.0, INF, False, False, "Perplexity per byte."),
    ("bits_per_byte", 0.0, INF, False, False, "Bits per byte."),
    ("score", 0.0, 1.0, True, False, "TAR's per-question-type primary score."),
    ("miou", 0.0, 1.0, True, False, "Mean temporal IoU of predicted and gold spans."),
    ("recall@0.3", 0.0, 1.0, True, True, "Share of spans found at temporal IoU >= 0.3."),
    ("recall@0.5", 0.0, 1.0, True, True, "Share of spans found at temporal IoU >= 0.5."),
    ("recall@0.7", 0.0, 1.0, True, True, "Share of spans found at temporal IoU >= 0.7."),
    ("forget_style", 0.0, 1.0, False, False, "RoleBench-Unlearn: role-fidelity probability on the forget set."),
    ("retain_style", 0.0, 1.0, True, False, "RoleBench-Unlearn: role-fidelity probability on the retain set."),
    ("forget_rougeL", 0.0, 1.0, False, False, "RoleBench-Unlearn: ROUGE-L on the forget set."),
    ("retain_rougeL", 0.0, 1.0, True, False, "RoleBench-Unlearn: ROUGE-L on the retain set."),
    ("general_rougeL", 0.0, 1.0, True, False, "RoleBench-Unlearn: ROUGE-L on general instructions."),
    # geometry evaluators (methods/geometry): per-document values recorded by the evaluator
    ("boundary_iou", 0.0, 1.0, True, False, "Geometry: Boundary IoU of a segmentation (band 2% of the diagonal)."),
    ("dice", 0.0, 1.0, True, False, "Geometry: Dice overlap of a segmentation."),
    ("hd95", 0.0, INF, False, False, "Geometry: 95th-percentile symmetric surface distance (mm)."),
    ("nsd", 0.0, 1.0, True, False, "Geometry: normalised surface distance at tau."),
    ("ef_abs_error", 0.0, 100.0, False, False, "Geometry: absolute ejection-fraction error (points)."),
    ("edv_rel_error", 0.0, INF, False, False, "Geometry: relative end-diastolic volume error."),
    ("motion_skill", -1.0, 1.0, True, False, "Geometry: 1 - RMSE / RMSE of the population-mean motion."),
    ("motion_rmse", 0.0, INF, False, False, "Geometry: per-subject RMS motion error (mm)."),
    ("fscore", 0.0, 1.0, True, False, "Geometry: surface F-score at tau after Sim(3) alignment."),
    ("chamfer_l1", 0.0, INF, False, False, "Geometry: Chamfer-L1 distance (units of the truth's diagonal)."),
    ("normal_consistency", 0.0, 1.0, True, False, "Geometry: mean |cos| of nearest-neighbour normals."),
):
    _register_recorded(_name, _lo, _hi, _up, _binary, _doc)



def mean(values: list[Any]) -> float:
    """The mean over documents: the aggregate of every metric that registers none of its own."""
    return math.fsum(values) / len(values)


def recorded_pair(sample: Sample, config: Mapping[str, Any], metric: str) -> list[int] | None:
    """The (gold, predicted) pair lm-eval recorded for a corpus-level classification metric."""
    value = sample.values.get(metric)
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return [int(value[0]), int(value[1])]
    return None


def bootstrap_stderr(aggregate: Any, values: list[Any], n_boot: int = 1000, seed: int = 0) -> float | None:
    """Standard error of a corpus-level score: the standard deviation of ``aggregate`` over ``n_boot`` resamples of
    the documents (with replacement, a fixed seed: the same submission always gets the same number). 0 for one
    document, as a mean's; None when the resampled scores are not all finite."""
    n = len(values)
    if n < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    scores = np.array([aggregate([values[i] for i in rng.integers(0, n, n)]) for _ in range(n_boot)], float)
    if not np.isfinite(scores).all():
        return None
    return float(np.std(scores, ddof=1))


def perplexity_of_nlls(nlls: list[float]) -> float:
    """exp of the mean per-document negative log-likelihood (RoleBench-Unlearn's ``ppl``)."""
    return math.exp(mean(nlls))


@METRICS.register("macro_f1", range=(0.0, 1.0), higher_is_better=True, binary=False, aggregate=macro_f1_of_pairs,
                  scalar=False)
def macro_f1(sample: Sample, config: Mapping[str, Any], metric: str = "macro_f1") -> list[int] | None:
    """Macro-F1 of a lettered-option label task: each document records its (gold, predicted) pair."""
    return recorded_pair(sample, config, metric)


@METRICS.register("ppl", range=(1.0, INF), higher_is_better=False, binary=False, aggregate=perplexity_of_nlls,
                  per_document_range=(0.0, INF))
def ppl(sample: Sample, config: Mapping[str, Any], metric: str = "ppl") -> float | None:
    """RoleBench-Unlearn: perplexity under the original model; each document records its response's NLL."""
    return recorded(sample, config, metric)
