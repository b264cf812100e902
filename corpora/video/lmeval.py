"""What the video lm-eval tasks share: frames per document, frame placeholders, option lists.

A task's ``custom_dataset`` loads its config from the built folder and adds to
each document the absolute path of its video(s) and the times of the frames
to show (``num_frames`` per question, chosen by ``frame_policy``; both task
arguments, set in the task's ``metadata`` and overridable with lm-eval's
``--metadata``, so they are recorded in the results). ``doc_to_image`` then
decodes exactly those frames, and ``doc_to_text`` puts one ``<image>``
placeholder per frame, labelled with its time, where the model's processor
expects them (lm-eval's ``hf-multimodal`` and ``vllm-vlm`` both replace
``<image>`` with the model's own image token).

A real VLM on a GPU (``pip install -e ".[gpu,video]"``; ``max_images`` must be at least the frame budget)::

    lm_eval run --include_path "$(neurips26 tasks --path)" --tasks neurips26_video \
        --model vllm-vlm --apply_chat_template --metadata '{"num_frames": 16}' \
        --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_images=16,dtype=auto,gpu_memory_utilization=0.8

or ``--model hf-multimodal --model_args pretrained=...,dtype=bfloat16,max_images=16`` with transformers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import frames

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
IMAGE = "<image>"


def video_paths(folder: Path, videos_config: Any) -> dict[str, str]:
    """video_id -> absolute path, from the rows of a built ``videos`` config (all splits).

    A folder built with embedded videos has no files: their bytes are written once to
    ``<cache>/videos/<sha256>.<ext>``.
    """
    out = {}
    for split in videos_config.values():
        for row in split:
            path = (folder / row["path"]).resolve()
            if not path.is_file() and row.get("video"):
                from neurips26.search import cache_dir

                path = cache_dir() / "videos" / f"{row['sha256']}{Path(row['path']).suffix}"
                if not path.is_file():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_name(path.name + ".part")
                    tmp.write_bytes(row["video"])
                    tmp.replace(path)
            out[row["video_id"]] = str(path)
    return out


def frame_times(path: str, num_frames: int, policy: str = "uniform") -> list[float]:
    """The frame times (seconds, rounded to 1 ms) ``policy`` picks for ``num_frames`` frames of ``path``."""
    return [round(t, 3) for t in frames.sample_times(path, int(num_frames), policy)]


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
