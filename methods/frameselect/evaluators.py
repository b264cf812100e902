"""Evaluators: how good a selection is, against the evidence (selection level) or through an answer (answer level).

A selection is evaluated as *placed frames*: for each chosen frame, the position of its
video in the question's ``video_ids`` and its time in seconds. Evidence is the question's
list of (video, start, end) spans (:mod:`.benchmarks`). A frame *shows* the moment
``[t - w/2, t + w/2]`` around its time, ``w`` the candidate spacing (``1 / candidate_fps``);
``C`` is the union of these windows, ``E`` the union of the evidence spans (per video,
lengths summed over videos). The selection-level metrics, each in [0, 1]:

- ``recall``: the fraction of evidence spans with at least one chosen frame inside
  (``start <= t <= end``, same video);
- ``precision``: the fraction of chosen frames inside some evidence span of their video;
- ``tiou``: temporal IoU of what the frames show and the evidence, ``|C & E| / |C | E|``
  (:func:`neurips26.methods.video_metrics.scores.iou` generalised to unions of spans);
- ``coverage``: the fraction of evidence time the frames show, ``|C & E| / |E|``;
- ``oracle_answer``: the expected accuracy of an answerer that perceives the chosen frames perfectly: 1 when
  every evidence span has a chosen frame inside, else a guess among the options (0 for a free answer);
- ``redundancy``: the mean, over chosen frames, of the highest cosine similarity to
  another chosen frame, in the pool's encoder space centred on the pool's mean feature
  (so the static background every frame shares does not count; lower is more diverse).

Questions without evidence have no recall, precision, tIoU or coverage (None); they are
left out of those means.

The answer-level evaluator ``answer`` hands the frames to an answering backend
(:mod:`.answerers`) *through the video lm-eval tasks' own functions*: the document is the
question's built row plus ``frame_times`` set to the selected times (instead of the
task's ``selector``), and the task's ``doc_to_text``, ``doc_to_image`` and
``process_results`` (``tasks/tar/utils.py``, ``tasks/clovr/utils.py``) make the prompt,
decode the frames and score the answer, so the numbers are the tasks' metrics (TAR:
``score``, the task type's primary metric; CLoVR: ``acc``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .benchmarks import Question
from .core import SELECTION_EVALUATORS

SELECTION_METRICS = ("recall", "precision", "tiou", "coverage", "redundancy")


@dataclass
class Placed:
    """Chosen frames of one question: video positions, times (s), window (s) and (optionally) encoder features."""

    video: np.ndarray
    times: np.ndarray
    window: float = 1.0
    features: np.ndarray | None = None


def _union(spans: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def _length(spans: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in spans)


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


def _per_video(question: Question, picked: Placed) -> list[tuple[list, list]]:
    """(shown windows C_v, evidence E_v) per video, each a union of spans."""
    half = picked.window / 2
    out = []
    for v in range(len(question.video_ids)):
        shown = _union([(max(0.0, t - half), t + half) for t in picked.times[picked.video == v]])
        evidence = _union([(s, e) for vi, s, e in question.evidence if vi == v])
        out.append((shown, evidence))
    return out


@SELECTION_EVALUATORS.register("recall")
def recall(question: Question, picked: Placed) -> float | None:
    """Fraction of evidence spans with a chosen frame inside."""
    if not question.evidence:
        return None
    hit = [np.any((picked.video == v) & (picked.times >= s) & (picked.times <= e)) for v, s, e in question.evidence]
    return float(np.mean(hit))


@SELECTION_EVALUATORS.register("precision")
def precision(question: Question, picked: Placed) -> float | None:
    """Fraction of chosen frames inside an evidence span of their video."""
    if not question.evidence or len(picked.times) == 0:
        return None
    inside = np.zeros(len(picked.times), dtype=bool)
    for v, s, e in question.evidence:
        inside |= (picked.video == v) & (picked.times >= s) & (picked.times <= e)
    return float(inside.mean())


@SELECTION_EVALUATORS.register("tiou")
def tiou(question: Question, picked: Placed) -> float | None:
    """|C & E| / |C | E| over all videos."""
    if not question.evidence:
        return None
    parts = _per_video(question, picked)
    inter = sum(_overlap(c, e) for c, e in parts)
    union = sum(_length(c) + _length(e) for c, e in parts) - inter
    return float(inter / union) if union > 0 else 0.0


@SELECTION_EVALUATORS.register("coverage")
def coverage(question: Question, picked: Placed) -> float | None:
    """|C & E| / |E|: the share of evidence time the chosen frames show."""
    if not question.evidence:
        return None
    parts = _per_video(question, picked)
    total = sum(_length(e) for _, e in parts)
    return float(sum(_overlap(c, e) for c, e in parts) / total) if total > 0 else None


@SELECTION_EVALUATORS.register("redundancy")
def redundancy(question: Question, picked: Placed) -> float | None:
    """Mean over chosen frames of the highest cosine similarity to another chosen frame (needs features)."""
    if picked.features is None or len(picked.features) < 2:
        return None
    f = np.asarray(picked.features, dtype=np.float64)
    norm = np.linalg.norm(f, axis=1, keepdims=True)
    f = f / np.where(norm > 0, norm, 1.0)
    sim = f @ f.T
    np.fill_diagonal(sim, -np.inf)
    return float(sim.max(axis=1).mean())


@SELECTION_EVALUATORS.register("oracle_answer")
def oracle_answer(question: Question, picked: Placed) -> float | None:
    """Expected accuracy of an answerer with perfect perception: 1 when a chosen frame lies inside every evidence
    span (it sees all it needs), else a guess among the options (``1 / len(options)``; 0 for a free answer)."""
    if not question.evidence:
        return None
    if recall(question, picked) == 1.0:
        return 1.0
    return 1.0 / len(question.options) if question.options else 0.0


def selection_scores(question: Question, picked: Placed) -> dict[str, float | None]:
    """Every selection-level metric of one question's chosen frames."""
    return {name: SELECTION_EVALUATORS.get(name)(question, picked) for name in SELECTION_METRICS}


# -- answer level ----------------------------------------------------------------------------------------------
_TASK_UTILS: dict[str, ModuleType] = {}


def task_utils(benchmark: str) -> ModuleType:
    """The ``utils.py`` of the benchmark's lm-eval task folder (prompts, frames, scoring)."""
    if benchmark not in _TASK_UTILS:
        # The task folders are package data above this layer: located, not imported, and their utils.py
        # loaded as a file, as lm-eval loads it.
        path = Path(importlib.util.find_spec("neurips26.tasks").submodule_search_locations[0]) / benchmark / "utils.py"
        if not path.is_file():
            raise ValueError(f"benchmark {benchmark!r} has no lm-eval task folder ({path} not found)")
        spec = importlib.util.spec_from_file_location(f"neurips26_frameselect_{benchmark}_task_utils", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _TASK_UTILS[benchmark] = module
    return _TASK_UTILS[benchmark]


def task_doc(question: Question, picked: Placed) -> dict[str, Any]:
    """The task's document for ``question`` with the selected frame times in place of its selector's."""
    times = [[round(float(t), 3) for t in picked.times[picked.video == v]] for v in range(len(question.video_ids))]
    if question.benchmark == "tar":
        return {**question.row, "video_path": question.video_paths[0], "frame_times": times[0]}
    return {**question.row, "video_paths": question.video_paths, "frame_times": times}


@SELECTION_EVALUATORS.register("answer")
def answer(question: Question, picked: Placed, answerer: Any) -> dict[str, float]:
    """Answer ``question`` from the chosen frames with ``answerer``; the task's metrics of that answer."""
    utils = task_utils(question.benchmark)
    doc = task_doc(question, picked)
    prediction = answerer.generate(utils.doc_to_text(doc), utils.doc_to_image(doc))
    return {k: float(v) for k, v in utils.process_results(doc, [prediction]).items()}
