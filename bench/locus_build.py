"""Benchmark the LOCUS build and queries on a corpus of at least 1 GB, scaled up from the real shared sample.

Steps:

1. Make a raw folder whose jurisdiction folders are symlinks to the real sample under
   ``../shared/data/locus`` (``adairsville-0001``, ``adairsville-0002``, ... -> the real folder), with a
   ``jurisdictions.csv`` listing every copy, so the builder reads at least ``--target-gb`` of input
   while nothing is copied.
2. Build it once per ``--workers`` value, each in a fresh Python process (wall time, MB/s, sections/s,
   peak RSS) and check that the builds' shards are byte-identical.
3. Time queries on the built folder through our DuckDB layer (``neurips26.sql.run_query``,
   ``neurips26.search.search``) against ``datasets.load_dataset`` + ``Dataset.filter``.

Prints a table and writes the numbers as JSON. All caches live under the work dir, which is
removed afterwards unless ``--keep``.

    python bench/locus_build.py                      # 1 GB, workers 1 and 2
    python bench/locus_build.py --target-gb 0.1 --repeats 3 --keep --workdir /tmp/locus-bench
"""

from __future__ import annotations

import argparse
import filecmp
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
from neurips26.corpora.locus.raw import list_files
from neurips26.corpora.locus.real_sample import JURISDICTIONS as REAL
from neurips26.corpora.locus.real_sample import link_raw
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from neurips26.search import Filters, ensure_index, search
from neurips26.sql import dataset_folders, run_query

ROOT = Path(__file__).resolve().parents[1]
SHARED_LOCUS = ROOT.parent / "shared" / "data" / "locus"
MARKER = ".locus-bench"  # marks a work dir this script made, so it may be reused or removed
GB, MB, MIB = 10**9, 10**6, 2**20


# Runs one build in a fresh interpreter: progress lines, then one result line with the build report,
# wall time, and CPU time and peak RSS from getrusage (ru_maxrss is in KiB on Linux).
BUILD_CHILD = """
import json, resource, sys, time
from dataclasses import asdict
from pathlib import Path
from neurips26.corpora.locus.build import build

raw, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
start = time.perf_counter()
report = build(raw, out, workers, lambda done, total: print("progress", done, total, flush=True))
wall = time.perf_counter() - start
own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print("result", json.dumps({
    "wall_s": wall, "report": asdict(report), "reconciles": report.reconciles,
    "cpu_s": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
    "rss_self": own.ru_maxrss * 1024, "rss_children": workers.ru_maxrss * 1024,
}), flush=True)
"""


@dataclass
class Row:
    """One line of the table; ``ratio`` is baseline / value."""

    measure: str
    value: float | int | str
    unit: str = ""
    baseline: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or not isinstance(self.value, int | float) or not self.value:
            return None
        return self.baseline / self.value


@dataclass
class BuildRun:
    workers: int
    out: Path
    wall_s: float
    report: dict[str, Any]
    reconciles: bool
    cpu_s: float  # user + system, build process and its workers
    rss_self: int  # bytes, getrusage(RUSAGE_SELF) in the build process
    rss_children: int  # bytes, getrusage(RUSAGE_CHILDREN): the largest worker
    rss_tree: int  # bytes, psutil: peak of the summed RSS of the process tree, sampled
    log: list[str] = field(default_factory=list)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--target-gb", type=float, default=1.0, help="input text to build, in GB (10^9 bytes)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts, one build each")
    p.add_argument("--workdir", type=Path, help="work dir (default: a new temp dir under /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the work dir (raw links, builds, caches)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per query, after one warm-up")
    p.add_argument("--jurisdiction", default="adairsville-0001", help="point query: this jurisdiction's sections")
    p.add_argument("--county", default="13015", help="county query: FIPS of the county (13015: Bartow County, GA)")
    p.add_argument("--query", default="dogs running at large", help="full-text search query")
    p.add_argument("--limit", type=int, default=10, help="search results")
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "locus_build.json", help="write numbers here")
    args = p.parse_args(argv)
    args.workers = [int(w) for w in args.workers.split(",")]
    if not args.county.isdigit() or len(args.county) != 5:
        p.error(f"--county {args.county!r}: expected a five-digit FIPS code")
    return args


def prepare_workdir(path: Path | None) -> tuple[Path, bool]:
    """The work dir and whether this run created it; refuses a non-empty dir it did not make."""
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="locus-bench-", dir="/tmp"))
        (path / MARKER).touch()
        return path, True
    if path.exists() and any(path.iterdir()) and not (path / MARKER).exists():
        sys.exit(f"{path}: not empty and not a work dir of this bench; give an empty or new --workdir")
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    (path / MARKER).touch()
    for name in ("raw", "builds", "cache"):
        shutil.rmtree(path / name, ignore_errors=True)
    return path, created


def make_raw(raw: Path, target_bytes: int) -> tuple[int, int]:
    """Link ``copies`` of each real jurisdiction folder under ``raw``; return (copies, bytes of one sample)."""
    sample = sum(p.stat().st_size for _, folder, *_ in REAL for p in list_files(SHARED_LOCUS / folder))
    copies = math.ceil(target_bytes / sample)
    link_raw(SHARED_LOCUS, raw, copies)
    return copies, sample


def run_build(raw: Path, out: Path, workers: int, progress: Progress) -> BuildRun:
    """Build in a fresh process, following its progress and sampling the RSS of its process tree."""
    task = progress.add_task(f"build, {workers} worker(s)", total=None)
    proc = subprocess.Popen([sys.executable, "-c", BUILD_CHILD, str(raw), str(out), str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:  # a worker ended between listing and reading it
                pass
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    result, log = None, []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("progress "):
            done, total = map(int, line.split()[1:])
            progress.update(task, completed=done, total=total)
        elif line.startswith("result "):
            result = json.loads(line[len("result "):])
        else:
            log.append(line.rstrip())
    proc.wait()
    sampler.join()
    if proc.returncode or result is None:
        sys.exit(f"build with {workers} worker(s) failed (exit {proc.returncode}):\n" + "\n".join(log[-30:]))
    return BuildRun(workers, out, result["wall_s"], result["report"], result["reconciles"], result["cpu_s"],
                    result["rss_self"], result["rss_children"], peak, log)


def shard_differences(a: Path, b: Path) -> list[str]:
    """Files under ``data/`` that are missing from one folder or differ in bytes."""
    files_a = {p.relative_to(a).as_posix() for p in (a / "data").rglob("*.parquet")}
    files_b = {p.relative_to(b).as_posix() for p in (b / "data").rglob("*.parquet")}
    return sorted((files_a ^ files_b) | {f for f in files_a & files_b if not filecmp.cmp(a / f, b / f, shallow=False)})


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_latency(fn: Callable[[], Any], repeats: int, progress: Progress, label: str) -> tuple[float, Any]:
    """Median seconds over ``repeats`` runs after one warm-up, and the last result."""
    task = progress.add_task(label, total=repeats + 1)
    result = fn()
    progress.advance(task)
    times = []
    for _ in range(repeats):
        seconds, result = timed(fn)
        times.append(seconds)
        progress.advance(task)
    return statistics.median(times), result


def query_rows(folder: Path, args: argparse.Namespace, progress: Progress) -> tuple[list[Row], dict[str, Any]]:
    """Latency of point, county and text queries: our DuckDB layer vs datasets + Dataset.filter."""
    import datasets  # only now: HF_DATASETS_CACHE is set by main()

    datasets.disable_progress_bars()
    folders = dataset_folders(folder)
    jid, fips, words = args.jurisdiction, args.county, args.query.lower().split()
    point_sql = f"SELECT * FROM locus.sections WHERE jurisdiction_id = '{jid.replace(chr(39), chr(39) * 2)}'"
    county_sql = ("SELECT s.* FROM locus.sections s WHERE s.jurisdiction_id IN "
                  f"(SELECT unnest(jurisdiction_ids) FROM locus.counties WHERE county_fips = '{fips}')")

    index_s, _ = timed(lambda: ensure_index(folder))
    ours = {
        "point": median_latency(lambda: run_query(point_sql, folders), args.repeats, progress, "ours: point"),
        "county": median_latency(lambda: run_query(county_sql, folders), args.repeats, progress, "ours: county"),
        "search": median_latency(lambda: search(folder, args.query, Filters(), args.limit), args.repeats,
                                 progress, "ours: search"),
    }

    def load() -> tuple[datasets.Dataset, datasets.Dataset]:
        return (datasets.load_dataset(str(folder), "sections", split="train"),
                datasets.load_dataset(str(folder), "counties", split="train"))

    load_s, (sections, counties) = timed(load)
    reload_s, (sections, counties) = timed(load)

    def keep(ds: datasets.Dataset, column: str, test: Callable[[Any], bool]) -> pa.Table:
        hits = ds.filter(lambda values: [test(v) for v in values], input_columns=column, batched=True,
                         keep_in_memory=True, load_from_cache_file=False)
        return hits.with_format("arrow")[:]

    def county_sections() -> pa.Table:
        ids = {i for row in keep(counties, "county_fips", fips.__eq__)["jurisdiction_ids"].to_pylist() for i in row}
        return keep(sections, "jurisdiction_id", ids.__contains__)

    base = {
        "point": median_latency(lambda: keep(sections, "jurisdiction_id", jid.__eq__), args.repeats, progress,
                                "datasets: point"),
        "county": median_latency(county_sections, args.repeats, progress, "datasets: county"),
        "search": median_latency(lambda: keep(sections, "text", lambda t: all(w in t.lower() for w in words)),
                                 args.repeats, progress, "datasets: text filter"),
    }
    counts = {k: {"ours": ours[k][1].num_rows, "datasets": base[k][1].num_rows} for k in ours}
    ms = 1000
    rows = [
        Row("search index build, one-time (BM25)", index_s, "s"),
        Row("datasets: load sections + counties, first (Arrow cache)", load_s, "s"),
        Row("datasets: load again (cache warm)", reload_s, "s"),
        Row(f"point query: {jid} ({counts['point']['ours']:,} rows)",
            ours["point"][0] * ms, "ms", base["point"][0] * ms),
        Row(f"county query: {fips} ({counts['county']['ours']:,} rows)",
            ours["county"][0] * ms, "ms", base["county"][0] * ms),
        Row(f"text search {args.query!r} (top {args.limit}; baseline: "
            f"{counts['search']['datasets']:,} rows with all words)",
            ours["search"][0] * ms, "ms", base["search"][0] * ms),
    ]
    return rows, counts


def folder_stats(folder: Path) -> tuple[int, int, int]:
    """Bytes on disk, Parquet shards of all configs, shards of ``sections``."""
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    shards = list((folder / "data").rglob("*.parquet"))
    return size, len(shards), sum(p.parent.name == "sections" for p in shards)


def build_rows(runs: list[BuildRun]) -> list[Row]:
    first = runs[0]
    rows = []
    for run in runs:
        mb_s = run.report["bytes_in"] / MB / run.wall_s
        tag = f"{run.workers} worker{'s' if run.workers > 1 else ''}"
        rows += [
            Row(f"build wall time, {tag}", run.wall_s, "s", first.wall_s if run is not first else None),
            Row(f"build CPU time (user + sys, with workers), {tag}", run.cpu_s, "s"),
            Row(f"input throughput, {tag}", mb_s, "MB/s"),
            Row(f"input throughput per worker, {tag}", mb_s / run.workers, "MB/s"),
            Row(f"sections/s, {tag}", run.report["sections"] / run.wall_s, "sections/s"),
            Row(f"peak RSS, build process (getrusage SELF), {tag}", run.rss_self / MIB, "MiB"),
        ]
        if run.workers > 1:
            rows.append(Row(f"peak RSS, largest worker (getrusage CHILDREN), {tag}", run.rss_children / MIB, "MiB"))
        rows.append(Row(f"peak RSS, tree sum (psutil, 0.2 s samples), {tag}", run.rss_tree / MIB, "MiB"))
    return rows


def fmt(value: float | int | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def print_table(console: Console, rows: list[Row], title: str, first_workers: int) -> None:
    table = Table(title=title, caption=f"baseline: the {first_workers}-worker build for build times, "
                                       "datasets.load_dataset + Dataset.filter for queries; "
                                       "ratio = baseline / value; latencies: medians after one warm-up")
    for name, justify in [("measure", "left"), ("value", "right"), ("unit", "left"),
                          ("baseline", "right"), ("ratio", "right")]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(row.measure, fmt(row.value), row.unit, fmt(row.baseline),
                      f"{row.ratio:.2f}x" if row.ratio is not None else "")
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)  # wide enough for the table in a log
    if not SHARED_LOCUS.is_dir():
        console.print(f"[yellow]skipped: the real LOCUS sample is not at {SHARED_LOCUS} (../shared/data/locus)")
        return
    workdir, created = prepare_workdir(args.workdir)
    cache = workdir / "cache"
    os.environ.update(NEURIPS26_CACHE=str(cache / "neurips26"), HF_HOME=str(cache / "hf"),
                      HF_DATASETS_CACHE=str(cache / "hf" / "datasets"), HF_HUB_OFFLINE="1")
    target = int(args.target_gb * GB)
    console.print(f"work dir {workdir}")
    try:
        free = shutil.disk_usage(workdir).free
        if free < 4 * target:
            sys.exit(f"{workdir}: {free / GB:.1f} GB free, want {4 * target / GB:.1f} GB "
                     "(builds, Arrow cache, search index)")
        copies, sample = make_raw(workdir / "raw", target)
        console.print(f"raw corpus: {len(REAL)} real jurisdictions x {copies} symlinked copies "
                      f"({sample / MB:.2f} MB each set) = {copies * sample / GB:.3f} GB of input")
        progress_columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn())
        load_start = os.getloadavg()[0]
        with Progress(*progress_columns, console=console) as progress:
            runs = [run_build(workdir / "raw", workdir / "builds" / f"w{w}" / "locus", w, progress)
                    for w in args.workers]
        differences = shard_differences(runs[0].out, runs[-1].out) if len(runs) > 1 else []
        identical = "yes" if not differences else f"NO: {len(differences)} differ ({', '.join(differences[:3])})"
        size, n_shards, n_section_shards = folder_stats(runs[0].out)
        with Progress(*progress_columns, console=console) as progress:
            latency, counts = query_rows(runs[0].out, args, progress)
        load_end, cpus = os.getloadavg()[0], os.cpu_count() or 1

        report = runs[0].report
        rows = [
            Row("CPUs / 1-min load average at start, end", f"{cpus} / {load_start:.1f}, {load_end:.1f}"),
            Row("input read by the builder", report["bytes_in"] / GB, "GB"),
            Row("input files / sections / characters",
                f"{report['files_in']:,} / {report['sections']:,} / {report['characters']:,}"),
            *build_rows(runs),
            Row(f"shards byte-identical, workers {' vs '.join(str(r.workers) for r in runs)}", identical),
            Row("output folder size", size / MB, "MB"),
            Row("output shards (all configs / sections)", f"{n_shards} / {n_section_shards}"),
            *latency,
        ]
        print_table(console, rows, f"LOCUS build and query benchmark ({report['bytes_in'] / GB:.2f} GB input)",
                    runs[0].workers)
        odd = [f"build with {r.workers} worker(s) does not reconcile files" for r in runs if not r.reconciles]
        odd += [f"{k} query: {c['ours']:,} rows (ours) vs {c['datasets']:,} (datasets)"
                for k, c in counts.items() if k != "search" and c["ours"] != c["datasets"]]
        odd += [f"load average {max(load_start, load_end):.1f} on {cpus} CPUs: other processes competed, "
                "times are inflated (CPU times less so)"] if max(load_start, load_end) > cpus else []
        odd += [f"input {report['bytes_in'] / GB:.3f} GB is below the target"] if report["bytes_in"] < target else []
        for line in odd:
            console.print(f"[yellow]odd: {line}")

        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "copies": copies, "sample_bytes": sample, "target_bytes": target,
            "builds": [{k: str(v) if isinstance(v, Path) else v for k, v in asdict(r).items() if k != "log"}
                       for r in runs],
            "shard_differences": differences, "output_bytes": size, "output_shards": n_shards,
            "query_rows": counts,
            "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
        }, indent=2) + "\n", encoding="utf-8")
        console.print(f"numbers written to {args.json}")
    finally:
        if args.keep:
            console.print(f"kept {workdir}")
        elif created:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            for name in ("raw", "builds", "cache"):
                shutil.rmtree(workdir / name, ignore_errors=True)


if __name__ == "__main__":
    main()
