"""TAR task types: the registry the builder, the generator, the lm-eval tasks and the metrics share.

Each task type has a group (the paper's three: Question Answering, Temporal
Reasoning, Scene Understanding), an answer form (``choice``: an option letter;
``text``: free text; ``span``: start and end seconds) and the metric that
scores it (accuracy after Video-MME answer extraction, ROUGE-L, or temporal
IoU). The release names nine of the ten types; the tenth is registered here as
``object_description`` (describe one road user), and a release that names it
differently needs one line below.
"""

from __future__ import annotations

from dataclasses import dataclass

GROUPS = ("Question Answering", "Temporal Reasoning", "Scene Understanding")


@dataclass(frozen=True)
class TaskType:
    name: str
    group: str
    answer: str  # choice | text | span
    metric: str  # accuracy | rougeL | temporal_iou
    prompt: str | None = None  # the question when an item has none (description tasks)


TASK_TYPES: dict[str, TaskType] = {t.name: t for t in [
    TaskType("bcq", "Question Answering", "choice", "accuracy"),
    TaskType("bcq_openended", "Question Answering", "text", "rougeL"),
    TaskType("mcq", "Question Answering", "choice", "accuracy"),
    TaskType("mcq_openended", "Question Answering", "text", "rougeL"),
    TaskType("open_qa", "Question Answering", "text", "rougeL"),
    TaskType("causal_linkage", "Temporal Reasoning", "text", "rougeL"),
    TaskType("temporal_description", "Temporal Reasoning", "text", "rougeL",
             "Describe what happens in the video in chronological order, with times in seconds."),
    TaskType("temporal_localization", "Temporal Reasoning", "span", "temporal_iou"),
    TaskType("scene_description", "Scene Understanding", "text", "rougeL", "Describe the traffic scene in this video."),
    TaskType("object_description", "Scene Understanding", "text", "rougeL"),
]}
