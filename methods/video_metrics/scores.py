"""The scores of the video benchmarks, as plain functions of predictions and references.

- :func:`accuracy`: option letter extracted from the text (Video-MME rules) equals the gold letter;
- :func:`temporal_iou`: mean IoU of predicted and gold spans and recall at IoU 0.3/0.5/0.7;
- :func:`rouge_l`: ROUGE-L F1 (``rouge_score``, no stemming) for open-ended and description answers;
- :func:`tar_score`: each TAR task type's metric, group means and the TAR aggregate;
- :func:`clovr_score`: CLoVR-Bench accuracy overall and per level, task and subtask.

All values are fractions in [0, 1].
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import fmean

from neurips26.corpora.tar.tasktypes import TASK_TYPES

from .core import VIDEO_SCORERS
from .extraction import extract_option, extract_span

IOU_THRESHOLDS = (0.3, 0.5, 0.7)
Span = tuple[float, float]


def option_correct(prediction: str, reference: str, num_options: int = 4) -> bool:
    return extract_option(prediction, num_options) == reference.strip().upper()


@VIDEO_SCORERS.register("video_accuracy")
def accuracy(predictions: Sequence[str], references: Sequence[str],
             num_options: int | Sequence[int] = 4) -> dict[str, float]:
    """{"accuracy", "unanswered"} (unanswered: no option letter could be extracted)."""
    counts = [num_options] * len(predictions) if isinstance(num_options, int) else list(num_options)
    letters = [extract_option(p, n) for p, n in zip(predictions, counts, strict=True)]
    return {"accuracy": _mean([x == r.strip().upper() for x, r in zip(letters, references, strict=True)]),
            "unanswered": _mean([not x for x in letters])}


def iou(a: Span | None, b: Span | None) -> float:
    """Temporal IoU of two (start, end) spans; 0 when either is missing or empty."""
    if a is None or b is None:
        return 0.0
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def as_span(value: str | Sequence[float] | None) -> Span | None:
    if value is None:
        return None
    if isinstance(value, str):
        return extract_span(value)
    start, end = value
    return (float(start), float(end))


@VIDEO_SCORERS.register("temporal_iou")
def temporal_iou(predictions: Sequence[str | Sequence[float] | None],
                 references: Sequence[str | Sequence[float]]) -> dict[str, float]:
    """{"miou", "R@0.3", "R@0.5", "R@0.7", "unparsed"}: spans from text ("3.2-5.8") or (start, end) pairs."""
    preds = [as_span(p) for p in predictions]
    ious = [iou(p, as_span(r)) for p, r in zip(preds, references, strict=True)]
    out = {"miou": _mean(ious)}
    out.update({f"R@{t}": _mean([x >= t for x in ious]) for t in IOU_THRESHOLDS})
    out["unparsed"] = _mean([p is None for p in preds])
    return out


_SCORER = None


def rouge_l_one(prediction: str, reference: str) -> float:
    global _SCORER
    if _SCORER is None:
        from rouge_score import rouge_scorer

        _SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    if not prediction.strip() or not reference.strip():
        return 0.0
    return _SCORER.score(reference, prediction)["rougeL"].fmeasure


@VIDEO_SCORERS.register("video_rouge")
def rouge_l(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """{"rougeL"}: mean ROUGE-L F1 for open-ended and description answers (0 for an empty answer)."""
    return {"rougeL": _mean([rouge_l_one(p, r) for p, r in zip(predictions, references, strict=True)])}


def tar_item_score(task_type: str, prediction: str, reference: str, num_options: int = 4) -> float:
    """One item's score under its task type's primary metric (accuracy, ROUGE-L F1 or IoU)."""
    metric = TASK_TYPES[task_type].metric
    if metric == "accuracy":
        return float(option_correct(prediction, reference, num_options))
    if metric == "temporal_iou":
        return iou(extract_span(prediction), extract_span(reference))
    return rouge_l_one(prediction, reference)


@VIDEO_SCORERS.register("tar_score")
def tar_score(predictions: Sequence[str], references: Sequence[str], task_types: Sequence[str],
              num_options: Sequence[int] | None = None) -> dict[str, float]:
    """Per task type ``<type>/<metric>``, localization recalls, ``group/<group>`` means and ``tar_score``.

    ``tar_score`` is the unweighted mean of the task types' primary metrics (accuracy, ROUGE-L F1, mean
    IoU) over the task types present; a group's score is the same mean over its task types.
    """
    unknown = sorted(set(task_types) - set(TASK_TYPES))
    if unknown:
        raise ValueError(f"unknown TAR task type(s) {unknown}; known: {', '.join(TASK_TYPES)}")
    counts = list(num_options) if num_options is not None else [4] * len(predictions)
    by_type: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for p, r, t, n in zip(predictions, references, task_types, counts, strict=True):
        by_type[t].append((p, r, n))
    out: dict[str, float] = {}
    primary: dict[str, float] = {}
    for name, spec in TASK_TYPES.items():
        if name not in by_type:
            continue
        preds, refs, ns = zip(*by_type[name], strict=True)
        if spec.metric == "accuracy":
            value = accuracy(preds, refs, ns)["accuracy"]
        elif spec.metric == "temporal_iou":
            spans = temporal_iou(preds, refs)
            value = spans["miou"]
            out.update({f"{name}/{k}": v for k, v in spans.items() if k.startswith("R@")})
        else:
            value = rouge_l(preds, refs)["rougeL"]
        metric = "miou" if spec.metric == "temporal_iou" else spec.metric
        out[f"{name}/{metric}"] = primary[name] = value
    groups: dict[str, list[float]] = defaultdict(list)
    for name, value in primary.items():
        groups[TASK_TYPES[name].group].append(value)
    out.update({f"group/{g}": fmean(v) for g, v in groups.items()})
    out["tar_score"] = fmean(primary.values()) if primary else 0.0
    return out


@VIDEO_SCORERS.register("clovr_score")
def clovr_score(predictions: Sequence[str], references: Sequence[str], levels: Sequence[str],
                tasks: Sequence[str], subtasks: Sequence[str | None],
                num_options: Sequence[int] | None = None) -> dict[str, float]:
    """``accuracy`` overall, ``level/<level>``, ``task/<level>/<task>``, ``subtask/<level>/<task>/<subtask>``."""
    counts = list(num_options) if num_options is not None else [4] * len(predictions)
    hits = [option_correct(p, r, n) for p, r, n in zip(predictions, references, counts, strict=True)]
    buckets: dict[str, list[bool]] = defaultdict(list)
    for hit, level, task, subtask in zip(hits, levels, tasks, subtasks, strict=True):
        buckets[f"level/{level}"].append(hit)
        buckets[f"task/{level}/{task}"].append(hit)
        buckets[f"subtask/{level}/{task}/{subtask or ''}"].append(hit)
    return {"accuracy": _mean(hits), **{k: _mean(v) for k, v in sorted(buckets.items())}}


def _mean(values: Sequence[float | bool]) -> float:
    return fmean(float(v) for v in values) if len(values) else 0.0
