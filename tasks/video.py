"""What the video lm-eval tasks (``tasks/tar``, ``tasks/clovr``) share: frames per document, frame placeholders,
option lists.

A task's ``custom_dataset`` loads its config from the built folder and adds to
each document the absolute path of its video(s) (:func:`neurips26.corpora.video.release.video_paths`)
and the times of the frames to show (``num_frames`` per question, chosen by the query-free frame
``selector``, ``uniform`` by default; both task arguments, set in the task's ``metadata`` and
overridable with lm-eval's ``--metadata``, so they are recorded in the results). ``doc_to_image`` then
decodes exactly those frames, and ``doc_to_text`` puts one ``<image>``
placeholder per frame, labelled with its time, where the model's processor
expects them (lm-eval's ``hf-multimodal`` and ``vllm-vlm`` both replace
``<image>`` with the model's own image token).

A real VLM on a GPU (``pip install -e ".[gpu,video]"``; ``max_images`` must be at least the frame budget)::

    lm_eval run --include_path "$(neurips26 tasks --path)" --tasks neurips26_video \
        --model vllm-vlm --apply_chat_template --metadata '{"num_frames": 16}' \
        --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_images=16,dtype=auto,gpu_memory_utilization=0.8

or ``--model hf-multimodal --model_args pretrained=...,dtype=bfloat16,max_images=16`` with transformers.

Frames chosen by a query-aware selector (which needs encoder features): build the FrameSelect tables
(``neurips26 build frameselect``) and name them, the selector and its budget in the metadata,
``--metadata '{"selections": "frameselect", "selector": "dpp", "num_frames": 16}'``: each
question then shows exactly the frames stored for it (see :func:`stored_frames`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neurips26.corpora.video import frames
from neurips26.corpora.video.records import MissingInputError

from neurips26.errors import UserError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
IMAGE = "<image>"


def frame_times(path: str, num_frames: int, selector: str = "uniform") -> list[float]:
    """The frame times (seconds, rounded to 1 ms) the query-free ``selector`` picks for ``num_frames`` frames."""
    return [round(t, 3) for t in frames.sample_times(path, int(num_frames), selector)]


def stored_frames(selections: str, benchmark: str, selector: str, budget: int) -> dict[str, dict[str, list[float]]]:
    """question_id -> {video_id: frame times} stored by ``selector`` at ``budget`` in a built FrameSelect folder.

    ``selections`` is the folder ``neurips26 build frameselect`` wrote (its ``selections`` config).
    """
    import pyarrow.parquet as pq

    files = sorted((Path(selections) / "data" / "selections").glob("*.parquet"))
    if not files:
        raise MissingInputError(f"{selections}: no selections config (data/selections/*.parquet); "
                                "build it with: neurips26 build frameselect")
    wanted = [("benchmark", "=", benchmark), ("selector", "=", selector), ("budget", "=", int(budget))]
    table = pq.ParquetDataset(files, filters=wanted).read(columns=["question_id", "video_ids", "timestamps"])
    if not table.num_rows:
        raise UserError(f"{selections}: no {benchmark} selections by selector {selector!r} at budget {budget}")
    out: dict[str, dict[str, list[float]]] = {}
    for row in table.to_pylist():
        per_video = out.setdefault(row["question_id"], {})
        for video, t in zip(row["video_ids"], row["timestamps"], strict=True):
            per_video.setdefault(video, []).append(round(t, 3))
    return {q: {v: sorted(ts) for v, ts in videos.items()} for q, videos in out.items()}


def selected_times(selections: str, selector: str | None, benchmark: str, question_id: str, budget: int,
                   video_ids: list[str]) -> list[list[float]]:
    """The stored frame times of one question, one list per video (see :func:`stored_frames`)."""
    if not selector:
        raise UserError("metadata 'selections' needs 'selector' too: the selector whose frames to show")
    stored = stored_frames(str(selections), benchmark, selector, int(budget))
    if question_id not in stored:
        raise UserError(f"{selections}: no frames stored for {benchmark} question {question_id!r} by {selector!r} "
                         f"at budget {budget} (query-aware selectors refuse questions their encoder cannot embed)")
    return [stored[question_id].get(v, []) for v in video_ids]


def split_budget(num_frames: int, n_videos: int) -> list[int]:
    """``num_frames`` spread over ``n_videos`` (earlier videos get the remainder), at least one each."""
    base, extra = divmod(int(num_frames), n_videos)
    return [max(1, base + (k < extra)) for k in range(n_videos)]


def frame_block(times: list[float]) -> str:
    return "\n".join(f"{t:.1f}s: {IMAGE}" for t in times)


def options_block(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[k]}. {o}" for k, o in enumerate(options))


def images(path: str, times: list[float]) -> list[Any]:
    """PIL images of ``path`` at ``times`` (RGB), through the cached frame access."""
    return [im.convert("RGB") for im in frames.frames(path, times=times, as_="pil")]
