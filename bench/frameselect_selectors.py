"""Frame selector cost: wall time and peak memory of every registered selector as the pool grows.

Pools are synthetic but shaped like real ones: ``N`` candidates (1 fps, so N seconds of video) with
``descriptor``-sized features (136-d, unit norm) drawn around a few dozen "scene" directions that drift
over time, a query direction, and 64x64 thumbnails. Every selector picks ``--budget`` frames from each
pool; reported per selector and N: the median wall time of ``--repeats`` runs through ``select()``, the
ratio to the ``topk`` baseline (one matrix-vector product and a sort) on the same pool, and the peak of
memory allocated during one run (tracemalloc, which sees NumPy's buffers).

    python bench/frameselect_selectors.py                      # N = 300, 1200, 3600; budget 32
    python bench/frameselect_selectors.py --sizes 600 --budget 16 --repeats 5

Prints a table and writes the numbers as JSON (``--json``, default ``bench/out/frameselect_selectors.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np
from neurips26.methods.frameselect import SELECTORS, Pool, select
from neurips26.methods.frameselect.encoders.descriptor import Descriptor
from rich.console import Console
from rich.progress import track
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "topk"
console = Console(width=150)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--sizes", default="300,1200,3600", help="pool sizes (candidates) to run")
    p.add_argument("--budget", type=int, default=32, help="frames each selector picks")
    p.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is reported)")
    p.add_argument("--selectors", default="", help="comma-separated names (default: all registered)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "frameselect_selectors.json")
    return p.parse_args(argv)


def synthetic_pool(n: int, seed: int) -> Pool:
    """``n`` candidates whose features drift between scene directions, with a query and thumbnails."""
    rng = np.random.default_rng(seed)
    dim = Descriptor.dim
    scenes = rng.normal(size=(max(4, n // 60), dim))
    which = np.minimum(np.arange(n) * len(scenes) // n, len(scenes) - 1)
    features = scenes[which] + 0.3 * rng.normal(size=(n, dim))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    query = scenes[len(scenes) // 3] / np.linalg.norm(scenes[len(scenes) // 3])
    shade = (features[:, :3] * 60 + 128).clip(0, 255)
    pixels = (shade[:, None, None, :] + rng.normal(0, 12, (n, 64, 64, 3))).clip(0, 255).astype(np.uint8)
    return Pool(times=np.arange(n, dtype=float), duration=float(n), features=features, query="q",
                query_features=query, pixels=pixels)


def measure(name: str, pool: Pool, budget: int, repeats: int) -> tuple[float, float]:
    """(median seconds, peak MiB allocated during one run)."""
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        select(name, pool, budget, seed=r)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    select(name, pool, budget)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak / 2**20


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    names = [s for s in args.selectors.split(",") if s] or SELECTORS.names()
    for name in names:
        SELECTORS.get(name)  # unknown names fail before any work
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for n in sizes:
        pool = synthetic_pool(n, args.seed)
        base, _ = measure(BASELINE, pool, args.budget, args.repeats)
        for name in track(names, description=f"N={n}", console=console):
            seconds, peak = measure(name, pool, args.budget, args.repeats)
            rows.append({"selector": name, "n": n, "budget": args.budget, "seconds": seconds,
                         "vs_topk": seconds / base, "peak_mib": peak})
    table = Table(title=f"Selector cost, budget {args.budget} (median of {args.repeats}; ratio vs {BASELINE})")
    table.add_column("selector")
    for n in sizes:
        table.add_column(f"N={n} ms", justify="right")
        table.add_column(f"x {BASELINE}", justify="right")
        table.add_column("peak MiB", justify="right")
    for name in names:
        cells = [name]
        for n in sizes:
            row = next(r for r in rows if r["selector"] == name and r["n"] == n)
            cells += [f"{row['seconds'] * 1e3:.1f}", f"{row['vs_topk']:.1f}", f"{row['peak_mib']:.1f}"]
        table.add_row(*cells)
    console.print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=1))
    console.print(f"numbers: {args.json}")


if __name__ == "__main__":
    main()
