"""Frame access and generator throughput on a 10-minute generated CCTV video.

1. **Generator.** Render the default TAR and CLoVR releases and one long clip (``--minutes`` of steady
   traffic at ``--size`` and ``--fps``), once per ``--keyints`` value; report video seconds rendered per
   wall second (scripting, drawing and H.264 encoding, one encoder thread).
2. **Frame access.** For 8, 16, 32 and 64 frames sampled uniformly from the long clip, compare
   ``neurips26.corpora.video.frames`` (keyframe index, seek + decode forward; a fresh ``Video`` each run, so
   nothing is cached) with decoding every frame in order and keeping the wanted ones. Reported: wall
   time (median of ``--repeats``), frames delivered per second, frames decoded, and the speed-up. A
   last column times the same request again on the warm ``Video`` (served from its cache of decoded
   keyframe neighbourhoods).

    python bench/frames.py                          # 10 min, 320x192 at 15 fps, GOPs of 20 and 250 frames
    python bench/frames.py --minutes 2 --repeats 3 --keyints 30

Prints a table and writes the numbers as JSON (``--json``, default ``bench/out/frames.json``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neurips26.corpora.clovr import generate as clovr_generate
from neurips26.corpora.tar import generate as tar_generate
from neurips26.corpora.video import frames, render
from neurips26.corpora.video.scene import LANES, SIDEWALKS, SIZES, Entity, Scene, Track, random_layout
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (8, 16, 32, 64)
console = Console(width=150)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="length of the long clip")
    p.add_argument("--size", default="320x192", help="frame size WxH (even numbers)")
    p.add_argument("--fps", type=int, default=15)
    p.add_argument("--keyints", default="20,250", help="GOP lengths (frames) to render the long clip with")
    p.add_argument("--repeats", type=int, default=5, help="runs per measurement (the median is reported)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", type=Path, default=None, help="where videos go (default: a temp dir)")
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "frames.json")
    return p.parse_args(argv)


def long_scene(seconds: float, fps: int, size: tuple[int, int], seed: int) -> Scene:
    """Steady traffic: vehicles every few seconds in both lanes (one speed per lane), strollers on the sidewalks."""
    rng = random.Random(f"bench:{seed}")
    scene = Scene("bench_long", seconds, fps, size[0], size[1], random_layout(rng, "CAM 1"))
    colours = ["red", "blue", "white", "black", "yellow", "green", "orange", "purple", "silver", "brown"]
    for lane, (y, direction) in LANES.items():
        speed = rng.uniform(0.14, 0.2)
        t = rng.uniform(0.0, 3.0)
        while t < seconds:
            kind = rng.choice(("car", "van", "truck", "bus"))
            length = SIZES[kind][0]
            x0 = -length / 2 if direction > 0 else 1 + length / 2
            track = Track(t, x0, y, vx=direction * speed).cruise(t + (1 + length) / speed)
            scene.entities.append(Entity(f"v{len(scene.entities)}", kind, rng.choice(colours), track.points,
                                         facing=direction, lane=lane))
            t += (0.25 + length) / speed + rng.uniform(0.5, 6.0)  # a gap behind the previous vehicle
    for k in range(4):
        y = SIDEWALKS["north" if k % 2 else "south"]
        track = Track(0.0, rng.uniform(0.1, 0.9), y, vx=rng.choice((-1, 1)) * 0.02).cruise(seconds)
        scene.entities.append(Entity(f"p{k}", "pedestrian", colours[k], track.points))
    return scene


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    runs = [timed(fn) for _ in range(repeats)]
    return runs[-1][0], statistics.median(t for _, t in runs)


def generator_rows(work: Path, args: argparse.Namespace, size: tuple[int, int],
                   keyints: list[int]) -> tuple[list[dict], dict[int, Path]]:
    rows = []
    report, seconds = timed(lambda: tar_generate.generate(work / "tar", seed=args.seed))
    rows.append({"what": "TAR default release", "video_s": report.video_seconds, "wall_s": seconds,
                 "frames": report.frames})
    report, seconds = timed(lambda: clovr_generate.generate(work / "clovr", seed=args.seed))
    rows.append({"what": "CLoVR default release", "video_s": report.video_seconds, "wall_s": seconds,
                 "frames": report.frames})
    scene = long_scene(args.minutes * 60, args.fps, size, args.seed)
    videos = {}
    for keyint in keyints:
        path, seconds = timed(lambda k=keyint: render.write_mp4(scene, work / f"long_gop{k}.mp4", keyint=k))
        videos[keyint] = path
        rows.append({"what": f"long clip {size[0]}x{size[1]} @ {args.fps} fps, GOP {keyint}",
                     "video_s": scene.duration, "wall_s": seconds, "frames": scene.n_frames})
    return rows, videos


def seek(path: Path, times: list[float]) -> frames.Video:
    """Ours: a fresh Video (keyframe index), then seek + decode forward to each wanted frame."""
    video = frames.Video(path)
    video.frames(times=times)
    return video


def decode_all(path: Path, times: list[float]) -> int:
    """Baseline: decode every frame in order and keep the wanted ones as arrays."""
    video = frames.Video(path, cache_bytes=0)
    wanted = {video.index_at(t) for t in times}
    return len([image for i, image in enumerate(video.iter_frames()) if i in wanted])


def access_rows(path: Path, keyint: int, repeats: int) -> list[dict]:
    info = frames.probe(path)
    rows = []
    for n in COUNTS:
        times = frames.sample_times(path, n, "uniform")
        video, seek_s = median_time(lambda t=times: seek(path, t), repeats)
        decoded = video.decoded
        _, warm_s = median_time(lambda v=video, t=times: v.frames(times=t), repeats)
        _, all_s = median_time(lambda t=times: decode_all(path, t), max(1, repeats // 2))
        rows.append({"gop": keyint, "frames": n, "seek_s": seek_s, "seek_fps": n / seek_s, "seek_decoded": decoded,
                     "all_s": all_s, "all_fps": n / all_s, "all_decoded": info.n_frames,
                     "speedup": all_s / seek_s, "warm_s": warm_s})
    return rows


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    size = tuple(int(x) for x in args.size.lower().split("x"))
    keyints = [int(k) for k in args.keyints.split(",")]
    with tempfile.TemporaryDirectory(prefix="frames-bench-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        console.print(f"rendering into {work} ...")
        generated, videos = generator_rows(work, args, size, keyints)
        access = [row for k, path in videos.items() for row in access_rows(path, k, args.repeats)]
        info = frames.probe(next(iter(videos.values())))

    table = Table(title="Generator throughput (scripting + drawing + H.264, one thread)")
    for column in ("what", "video s", "frames", "wall s", "video-s / s", "frames / s"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for r in generated:
        table.add_row(r["what"], f"{r['video_s']:.0f}", f"{r['frames']:,}", f"{r['wall_s']:.2f}",
                      f"{r['video_s'] / r['wall_s']:.1f}", f"{r['frames'] / r['wall_s']:.0f}")
    console.print(table)
    table = Table(title=f"Frame access, {info.duration / 60:.1f}-minute clip, {info.n_frames:,} frames "
                        f"{info.width}x{info.height} (uniform sampling; median of {args.repeats})",
                  caption="seek: keyframe index + seek + decode forward, fresh Video; all: decode every frame "
                          "in order; warm: the same request again on the same Video (cache)")
    for column in ("GOP", "frames", "seek s", "seek frames/s", "decoded", "all s", "all frames/s", "speed-up",
                   "warm s"):
        table.add_column(column, justify="right")
    for r in access:
        table.add_row(str(r["gop"]), str(r["frames"]), f"{r['seek_s']:.3f}", f"{r['seek_fps']:.0f}",
                      f"{r['seek_decoded']:,}", f"{r['all_s']:.3f}", f"{r['all_fps']:.1f}", f"{r['speedup']:.1f}x",
                      f"{r['warm_s'] * 1000:.1f} ms")
    console.print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"generator": generated, "access": access, "args": {
        k: str(v) for k, v in vars(args).items()}}, indent=2) + "\n")
    console.print(f"numbers: {args.json}")


if __name__ == "__main__":
    main()
