"""CLoVR-Bench tasks: data from the built folder, the frames of every video of a question, letter scoring."""

from __future__ import annotations

from typing import Any

import datasets
from neurips26.corpora.video.release import video_paths
from neurips26.methods.video_metrics import scores
from neurips26.tasks import built_folder, load_config, video

PROMPT = ("Select the best answer to the following multiple-choice question based on the videos. "
          "Respond with only the letter ({letters}) of the correct option.")


def load_clovr(level: str, num_frames: int = 8, selector: str = "uniform", selections: str | None = None,
               frame_policy: str | None = None, **metadata: Any) -> datasets.DatasetDict:
    """The test questions of one level; ``num_frames`` per question, spread over its videos by the query-free
    ``selector``, or the frames ``selector`` stored for the question in ``selections`` (a built FrameSelect
    folder). Reads the built ``clovr`` folder (``neurips26 build clovr``; never built here) and records it in
    ``metadata["data"]``. ``frame_policy`` is the former name of ``selector``."""
    selector = frame_policy or selector
    folder = built_folder("clovr")
    test = load_config("clovr", "questions", metadata)["test"]
    paths = video_paths(folder)
    rows = []
    for row in test:
        if row["level"] != level:
            continue
        videos = [paths[v] for v in row["video_ids"]]
        if selections:
            times = video.selected_times(selections, selector, "clovr", row["qid"], num_frames, row["video_ids"])
        else:
            budget = video.split_budget(num_frames, len(videos))
            times = [video.frame_times(p, n, selector) for p, n in zip(videos, budget, strict=True)]
        rows.append({**row, "video_paths": videos, "frame_times": times})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def doc_to_image(doc: dict) -> list:
    return [im for path, times in zip(doc["video_paths"], doc["frame_times"], strict=True)
            for im in video.images(path, times)]


def doc_to_text(doc: dict) -> str:
    blocks = "\n".join(f"Video {k + 1}:\n{video.frame_block(times)}" for k, times in enumerate(doc["frame_times"]))
    letters = ", ".join(video.LETTERS[: len(doc["options"])])
    return (f"{blocks}\n{PROMPT.format(letters=letters)}\n{doc['question']}\n"
            f"{video.options_block(doc['options'])}\nThe best answer is:")


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    return {"acc": float(scores.option_correct(results[0], doc["answer"], len(doc["options"])))}
