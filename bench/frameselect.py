"""FrameSelect end to end on 10-minute generated videos: time per video by selector and budget, cached or not.

One long clip (``--minutes`` of steady traffic, rendered by the project's generator as in
``bench/frames.py``) is turned into a candidate pool (``--candidate-fps`` frames per second,
``descriptor`` encoder, 64x64 thumbnails) and every selector picks 8, 16, 32 and 64 frames
for a question with a colour word (so query-aware selectors run). Stages timed:

- *decode*: the candidate frames, seek + decode with a fresh ``Video`` (nothing cached);
- *encode*: the descriptor of every candidate frame;
- *pool, uncached*: ``build_pool`` with an empty encoding cache (decode + thumbnails + encode + write);
- *pool, cached*: ``build_pool`` again, served from the cache (no decoding, no encoding);
- *select*: each selector at each budget (median of ``--repeats``).

Per (selector, budget): seconds per video without and with cached encodings, the ratio
uncached / cached (the baseline is the uncached pipeline), and the shares of the uncached
time spent decoding, encoding, selecting and on the rest (thumbnails, hashing the video,
writing the cache). Peak memory: tracemalloc peak of the uncached
pool build and of the most memory-hungry selection, and the process's max RSS.

    python bench/frameselect.py                               # 10 min at 320x192, 15 fps; 1 candidate/s
    python bench/frameselect.py --minutes 2 --selectors uniform,topk,dpp --repeats 1

Prints a table and writes the numbers as JSON (``--json``, default ``bench/out/frameselect.json``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from neurips26.corpora.video import frames, render
from neurips26.methods.frameselect import SELECTORS, build_pool, select
from neurips26.methods.frameselect.encoders import get_encoder
from neurips26.methods.frameselect.pool import candidate_times
from rich.console import Console
from rich.progress import track
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = (8, 16, 32, 64)
QUERY = "When does the red car pass the white van?"
console = Console(width=160)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="length of the generated clip")
    p.add_argument("--size", default="320x192", help="frame size WxH (even numbers)")
    p.add_argument("--fps", type=int, default=15, help="frame rate of the clip")
    p.add_argument("--candidate-fps", type=float, default=1.0, help="candidate frames per second of video")
    p.add_argument("--selectors", default="", help="comma-separated names (default: all registered)")
    p.add_argument("--repeats", type=int, default=3, help="runs per selection (the median is reported)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "frameselect.json")
    return p.parse_args(argv)


def long_clip(work: Path, minutes: float, fps: int, size: tuple[int, int], seed: int) -> Path:
    """The 10-minute steady-traffic clip of ``bench/frames.py``, rendered to ``work``."""
    spec = importlib.util.spec_from_file_location("bench_frames", ROOT / "bench" / "frames.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return render.write_mp4(module.long_scene(minutes * 60, fps, size, seed), work / "long.mp4")


def timed(fn):  # noqa: ANN001, ANN201 - a tiny helper
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    width, height = (int(x) for x in args.size.split("x"))
    names = [s for s in args.selectors.split(",") if s] or SELECTORS.names()
    with tempfile.TemporaryDirectory(prefix="frameselect-bench-") as tmp:
        work = Path(tmp)
        console.print(f"rendering a {args.minutes:g}-minute clip at {width}x{height}, {args.fps} fps ...")
        path, render_s = timed(lambda: long_clip(work, args.minutes, args.fps, (width, height), args.seed))
        info = frames.probe(path)
        times = candidate_times(info.duration, args.candidate_fps)

        video = frames.Video(path)
        start = time.perf_counter()
        images = video.frames(times=times.tolist())
        decode_s = time.perf_counter() - start
        encoder = get_encoder("descriptor")
        start = time.perf_counter()
        encoder.encode_images(images)
        encode_s = time.perf_counter() - start
        video.close()
        del images
        frames.close_all()

        cache = work / "cache"
        tracemalloc.start()
        pool, uncached_s = timed(lambda: build_pool([path], QUERY, "descriptor", args.candidate_fps, cache=cache))
        pool_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        frames.close_all()
        _, cached_s = timed(lambda: build_pool([path], QUERY, "descriptor", args.candidate_fps, cache=cache))

        rows, select_peak = [], 0.0
        for name in track(names, description="selectors", console=console, transient=True):
            for budget in BUDGETS:
                runs = [timed(lambda n=name, b=budget, r=r: select(n, pool, b, seed=r))[1] for r in range(args.repeats)]
                select_s = statistics.median(runs)
                tracemalloc.start()
                select(name, pool, budget, seed=0)
                select_peak = max(select_peak, tracemalloc.get_traced_memory()[1] / 2**20)
                tracemalloc.stop()
                total = uncached_s + select_s
                rows.append({"selector": name, "budget": budget, "select_s": select_s, "uncached_s": total,
                             "cached_s": cached_s + select_s, "ratio": total / (cached_s + select_s),
                             "decode_share": decode_s / total, "encode_share": encode_s / total,
                             "select_share": select_s / total,
                             "other_share": max(0.0, 1 - (decode_s + encode_s + select_s) / total)})

    table = Table(title=f"FrameSelect per {info.duration / 60:.1f}-minute video ({pool.n} candidates at "
                        f"{args.candidate_fps:g}/s, {width}x{height} @ {args.fps} fps, descriptor encoder); "
                        "ratio = uncached / cached")
    for col in ("selector", "budget", "select ms", "s/video uncached", "s/video cached", "ratio",
                "decode %", "encode %", "select %", "other %"):
        table.add_column(col, justify="left" if col == "selector" else "right")
    for r in rows:
        table.add_row(r["selector"], str(r["budget"]), f"{1e3 * r['select_s']:.1f}", f"{r['uncached_s']:.2f}",
                      f"{r['cached_s']:.3f}", f"{r['ratio']:.0f}x", f"{100 * r['decode_share']:.1f}",
                      f"{100 * r['encode_share']:.1f}", f"{100 * r['select_share']:.1f}",
                      f"{100 * r['other_share']:.1f}")
    console.print(table)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    summary = {"render_s": render_s, "decode_s": decode_s, "encode_s": encode_s, "pool_uncached_s": uncached_s,
               "pool_cached_s": cached_s, "candidates": pool.n, "pool_peak_mib": pool_peak,
               "select_peak_mib": select_peak, "max_rss_mib": rss}
    console.print(f"stages: render {render_s:.1f} s (not counted), decode {decode_s:.2f} s, encode {encode_s:.2f} s, "
                  f"pool uncached {uncached_s:.2f} s, pool cached {cached_s:.3f} s; peak memory: pool build "
                  f"{pool_peak:.0f} MiB (tracemalloc), selection {select_peak:.1f} MiB, process max RSS {rss:.0f} MiB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "summary": summary,
                                     "rows": rows}, indent=1) + "\n", encoding="utf-8")
    console.print(f"numbers: {args.json}", highlight=False)


if __name__ == "__main__":
    main()
