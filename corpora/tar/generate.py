"""Procedural TAR: CCTV clips with scripted traffic anomalies and annotations in the released layout.

Each clip has one scenario (:mod:`.scenarios`), plus background traffic and
pedestrians; :mod:`.annotator` writes its items from the sentences of
:mod:`.narration`.

Output, the layout :mod:`.build` reads (that of the release)::

    OUT/annotations/<split>/<task_type>.json   {"items": [{"id", "video_id", "question", ...}]}
    OUT/videos/<video_id>.mp4
    OUT/SHA256SUMS                             "<sha256>  videos/<video_id>.mp4" per video
    OUT/scenes/<video_id>.json                 the scene script every answer follows from

Twelve annotations per clip over all ten task types, each with a reasoning
trace templated from the script. Same seed and arguments, same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

from neurips26.corpora.video import render
from neurips26.corpora.video.records import VIDEO_GENERATORS, GenerateReport

from neurips26.errors import UserError

from .annotator import Annotator
from .scenarios import SCENARIOS, script


@VIDEO_GENERATORS.register("tar")
def generate(out: Path, seed: int = 0, n_videos: int = 6, duration: float = 10.0, fps: int = 10,
             size: tuple[int, int] = (160, 96), test_videos: int = 2,
             progress: Callable[[int, int], None] | None = None) -> GenerateReport:
    """Render ``n_videos`` clips (the last ``test_videos`` form the test split) and write the release layout."""
    if n_videos < 1 or not 0 <= test_videos <= n_videos:
        raise UserError("need n_videos >= 1 and 0 <= test_videos <= n_videos")
    if duration < 6:
        raise UserError("TAR clips need duration >= 6 s (the scenarios take that long to unfold)")
    if size[0] % 2 or size[1] % 2:
        raise UserError(f"size {size}: width and height must be even (H.264 4:2:0)")
    start = time.perf_counter()
    out = Path(out)
    order = list(SCENARIOS)
    random.Random(f"tar:{seed}").shuffle(order)
    splits: dict[str, dict[str, list[dict]]] = {}
    sums, frames = [], 0
    for i in range(n_videos):
        rng = random.Random(f"tar:{seed}:{i}")
        video_id = f"tar_gen_{i:03d}"
        scenario = order[i % len(order)]
        scene = script(rng, video_id, scenario, duration, fps, size)
        path = render.write_mp4(scene, out / "videos" / f"{video_id}.mp4")
        sums.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  videos/{path.name}")
        (out / "scenes").mkdir(parents=True, exist_ok=True)
        (out / "scenes" / f"{video_id}.json").write_text(json.dumps(scene.to_dict(), indent=1) + "\n")
        split = "test" if i >= n_videos - test_videos else "train"
        for task, items in Annotator(scene, scenario, rng).write_all().items():
            splits.setdefault(split, {}).setdefault(task, []).extend(items)
        frames += scene.n_frames
        if progress:
            progress(i + 1, n_videos)
    n_items = 0
    for split, tasks in splits.items():
        for task, items in tasks.items():
            target = out / "annotations" / split / f"{task}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({"items": items}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            n_items += len(items)
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return GenerateReport(out, n_videos, n_items, n_videos * duration, frames, time.perf_counter() - start)
