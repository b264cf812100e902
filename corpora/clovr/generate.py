"""Procedural CLoVR-Bench: sets of longer CCTV clips where the same vehicles recur, and cross-video questions.

A set is ``videos_per_set`` consecutive recordings from different cameras along
one road. Two distinctive "cast" vehicles recur across the set's videos (in
chosen videos, directions and speeds); every video also has its own background
vehicles and pedestrians, in numbers that differ between videos, and one video
has a vehicle that stops with its hazard lights on. Questions cover every
level of the taxonomy (:data:`~.taxonomy.GENERATED`); each answer and each
evidence span (video, start, end on the frame grid) follows from the scripts.

Output, the layout :mod:`.build` reads::

    OUT/annotations/test.json    {"items": [{"qid", "video_ids", "level", "task", "subtask", "question",
                                             "options", "answer", "evidence": [{"video_id", "start", "end"}]}]}
    OUT/videos/<video_id>.mp4
    OUT/SHA256SUMS
    OUT/scenes/<video_id>.json

Same seed and arguments, same bytes.
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

from .questions import Questions
from .scenes import script_set


@VIDEO_GENERATORS.register("clovr")
def generate(out: Path, seed: int = 0, n_sets: int = 3, videos_per_set: int = 3, duration: float = 24.0,
             fps: int = 10, size: tuple[int, int] = (160, 96),
             progress: Callable[[int, int], None] | None = None) -> GenerateReport:
    """Render ``n_sets`` sets of ``videos_per_set`` clips and write the release layout (one test split)."""
    if n_sets < 1 or not 2 <= videos_per_set <= 8:
        raise UserError("need n_sets >= 1 and 2 <= videos_per_set <= 8")
    if duration < 20:
        raise UserError("CLoVR clips need duration >= 20 s (slow vehicles take 11 s to cross the view)")
    if size[0] % 2 or size[1] % 2:
        raise UserError(f"size {size}: width and height must be even (H.264 4:2:0)")
    start = time.perf_counter()
    out = Path(out)
    items, sums, frames = [], [], 0
    total = n_sets * videos_per_set
    for s in range(n_sets):
        rng = random.Random(f"clovr:{seed}:{s}")
        scenes, cast, stop_video = script_set(rng, s, videos_per_set, duration, fps, size)
        for scene in scenes:
            path = render.write_mp4(scene, out / "videos" / f"{scene.video_id}.mp4")
            sums.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  videos/{path.name}")
            (out / "scenes").mkdir(parents=True, exist_ok=True)
            (out / "scenes" / f"{scene.video_id}.json").write_text(json.dumps(scene.to_dict(), indent=1) + "\n")
            frames += scene.n_frames
            if progress:
                progress(len(sums), total)
        items += Questions(scenes, cast, stop_video, rng, s).write_all()
    (out / "annotations").mkdir(parents=True, exist_ok=True)
    (out / "annotations" / "test.json").write_text(
        json.dumps({"items": items}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return GenerateReport(out, total, len(items), total * duration, frames, time.perf_counter() - start)
