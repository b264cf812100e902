"""TAR tasks: data from the built folder, frames as images, prompts and per-task-type scoring."""

from __future__ import annotations

from typing import Any

import datasets
from neurips26.corpora.tar.tasktypes import TASK_TYPES
from neurips26.corpora.video.release import video_paths
from neurips26.methods.video_metrics import extraction, scores
from neurips26.tasks import built_folder, load_config, video

CHOICE_PROMPT = ("Select the best answer to the following multiple-choice question based on the video. "
                 "Respond with only the letter ({letters}) of the correct option.")


def load_tar(task_type: str, num_frames: int = 8, selector: str = "uniform", selections: str | None = None,
             frame_policy: str | None = None, **metadata: Any) -> datasets.DatasetDict:
    """The test split of one task type, each document with its video path and frame times.

    Reads the built ``tar`` folder (``neurips26 build tar``; never built here) and records it in
    ``metadata["data"]``. Frame times come from the query-free ``selector`` run on each video, or,
    with ``selections`` (a built FrameSelect folder), from the frames ``selector`` stored for the
    question at budget ``num_frames``. ``frame_policy`` is the former name of ``selector``.
    """
    selector = frame_policy or selector
    folder = built_folder("tar")
    test = load_config("tar", "annotations", metadata)["test"]
    paths = video_paths(folder)
    rows = []
    for row in test:
        if row["task_type"] != task_type:
            continue
        path = paths[row["video_id"]]
        times = (video.selected_times(selections, selector, "tar", row["id"], num_frames, [row["video_id"]])[0]
                 if selections else video.frame_times(path, num_frames, selector))
        rows.append({**row, "video_path": path, "frame_times": times})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def doc_to_image(doc: dict) -> list:
    return video.images(doc["video_path"], doc["frame_times"])


def doc_to_text(doc: dict) -> str:
    spec = TASK_TYPES[doc["task_type"]]
    head = f"Frames of a traffic CCTV video:\n{video.frame_block(doc['frame_times'])}\n"
    if spec.answer == "choice":
        letters = ", ".join(video.LETTERS[: len(doc["options"])])
        return (f"{head}{CHOICE_PROMPT.format(letters=letters)}\n{doc['question']}\n"
                f"{video.options_block(doc['options'])}\nThe best answer is:")
    if spec.answer == "span":
        return f"{head}{doc['question']} Answer as start-end in seconds, e.g. 2.5-6.0.\nAnswer:"
    return f"{head}{doc['question']}\nAnswer:"


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """acc (choice), rougeL (text) or miou and recall@IoU (span); ``score`` is the type's primary metric."""
    prediction = results[0]
    spec = TASK_TYPES[doc["task_type"]]
    if spec.answer == "choice":
        acc = float(scores.option_correct(prediction, doc["answer"], len(doc["options"])))
        return {"acc": acc, "score": acc}
    if spec.answer == "span":
        value = scores.iou(extraction.extract_span(prediction), (doc["start"], doc["end"]))
        out = {f"recall@{t}": float(value >= t) for t in scores.IOU_THRESHOLDS}
        return {"miou": value, **out, "score": value}
    value = scores.rouge_l_one(prediction, doc["answer"])
    return {"rougeL": value, "score": value}
