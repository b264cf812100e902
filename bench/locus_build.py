"""Benchmark the LOCUS build at scale: a corpus scaled up from the real shared sample, local and Ray engines.

Steps:

1. Make a raw folder whose jurisdiction folders are symlinks to the real sample under
   ``../shared/data/locus`` (``adairsville-0001``, ``adairsville-0002``, ... -> the real folder), with a
   ``jurisdictions.csv`` listing every copy, so the builder reads at least ``--target-gb`` of input
   while nothing is copied.
2. Build it once per ``--workers`` value with the local engine and once with ``--engine ray`` (a local Ray
   instance with ``--ray-workers`` CPUs), each in a fresh Python process given as many cores as it has workers
   (CPU affinity; ``--no-pin``: all cores), so the speed-up is the scaling to the cores given (wall and CPU time,
   MB/s per worker, peak RSS), and check that all builds' shards are byte-identical.
3. The limit: a plain ``pyarrow`` read of the same bytes, a compiled-regex split at section lines and a zstd
   Parquet write of the pieces, in this process (what one core can do with no parsing at all).
4. The Municode text parser alone on the real Georgia exports (CPU time, text in memory, the allocator set as in
   a parsing process: ``raw.keep_freed_memory``), with the compiled line split and with its Python fallback
   (``corpora/locus/formats/lines.py``).
5. Ray's fixed cost per build (start, first tasks, shutdown; no parsing), and the Ray build's wall time less it.
6. The machine's own scaling: the parser (and a pure-Python loop) in N independent processes at once, one per
   core, against one alone; each build's speed-up is shown as a share of it.
7. A projection, from the measured CPU seconds per MB (and, when Tesseract is installed, the measured OCR
   seconds of one rendered page), of a ``--codes`` build with OCR on N nodes.

Prints tables and writes the numbers as JSON. Queries and search: ``bench/locus_search.py``.

    python bench/locus_build.py                        # 0.3 GB, workers 1 and 2, Ray with 2 CPUs
    python bench/locus_build.py --target-gb 0.05 --ray-workers 0 --keep --workdir /tmp/locus-bench
"""

from __future__ import annotations

import argparse
import filecmp
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
from neurips26.corpora.locus.raw import list_files
from neurips26.corpora.locus.real_sample import JURISDICTIONS as REAL
from neurips26.corpora.locus.real_sample import link_raw
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from neurips26.hubfolder.shards import ZSTD_LEVEL

ROOT = Path(__file__).resolve().parents[1]
SHARED_LOCUS = ROOT.parent / "shared" / "data" / "locus"
MARKER = ".locus-bench"  # marks a work dir this script made, so it may be reused or removed
GB, MB, MIB = 10**9, 10**6, 2**20
# Anchored on the line break (searched in "\n" + text): the engine skips from line break to line break.
SECTION_START = re.compile(r"\n[ \t]*(?:\[?Secs?\. |Section |SECTION |\d+\.\d+\.\d+ - )")
MUNICODE = ("adairsville", "baldwin-county", "edison", "fairmount", "arcade", "athens-clarke")  # .txt exports

# Runs one build in a fresh interpreter, on the cores given (CPU affinity; all when none): progress lines, then
# one result line with the build report, wall time, and CPU time and peak RSS from getrusage (ru_maxrss is in KiB
# on Linux).
BUILD_CHILD = """
import json, os, resource, sys, time
from dataclasses import asdict
from pathlib import Path
from neurips26.corpora.locus.build import build

raw, out, workers, engine, cores = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
if cores:  # the cores given to the build: its workers (and Ray's) inherit the affinity
    os.sched_setaffinity(0, [int(c) for c in cores.split(",")])
start = time.perf_counter()
report = build(raw, out, workers, lambda done, total: print("progress", done, total, flush=True), engine=engine)
wall = time.perf_counter() - start
own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print("result", json.dumps({
    "wall_s": wall, "report": asdict(report), "reconciles": report.reconciles(),
    "cpu_s": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
    "worker_cpu_s": workers.ru_utime + workers.ru_stime,
    "rss_self": own.ru_maxrss * 1024, "rss_children": workers.ru_maxrss * 1024,
}), flush=True)
"""

# One process of the machine's own scaling test: set up, say "ready", wait for "go" on stdin, do a fixed amount
# of work on its one core, print its work (MB), CPU and wall seconds.
MACHINE_CHILD = """
import os, sys, time
core, work, passes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
os.sched_setaffinity(0, [core])
if work == "parser":
    sys.path.insert(0, sys.argv[4])  # this bench's folder
    from locus_build import MB, municode_exports, parse_all
    texts, size, _ = municode_exports()
    size /= MB
    def unit():
        parse_all(texts)
else:
    size = 1.0
    def unit():
        x = 0
        for i in range(2_000_000):
            x += i
unit()  # warm
print("ready", flush=True)
sys.stdin.readline()
cpu, wall = time.process_time(), time.perf_counter()
for _ in range(passes):
    unit()
print(size * passes, time.process_time() - cpu, time.perf_counter() - wall, flush=True)
"""


@dataclass
class Row:
    """One line of a table; ``ratio`` is value / baseline."""

    measure: str
    value: float | int | str
    unit: str = ""
    baseline: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or not isinstance(self.value, int | float) or not self.baseline:
            return None
        return self.value / self.baseline


@dataclass
class BuildRun:
    engine: str
    workers: int
    out: Path
    wall_s: float
    report: dict[str, Any]
    reconciles: bool
    cpu_s: float  # user + system, build process and its (local) workers; Ray workers are not its children
    worker_cpu_s: float  # user + system of the local worker processes alone (0 with 1 worker: it parses in-process)
    rss_self: int  # bytes, getrusage(RUSAGE_SELF) in the build process
    rss_children: int  # bytes, getrusage(RUSAGE_CHILDREN): the largest local worker
    rss_tree: int  # bytes, psutil: peak of the summed RSS of the process tree (Ray's too), sampled
    cores: int  # CPUs the build could run on (its affinity)
    log: list[str] = field(default_factory=list)

    @property
    def tag(self) -> str:
        return f"{self.engine}, {self.workers} worker{'s' if self.workers > 1 else ''} on {self.cores} core" + \
            ("s" if self.cores > 1 else "")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--target-gb", type=float, default=0.3, help="input text to build, in GB (10^9 bytes)")
    p.add_argument("--corpus", choices=("sample", "municode"), default="sample",
                   help="sample: the eight real jurisdictions, every format; municode: only the six Georgia "
                        "Municode text exports (the per-worker target is set on these)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts, one local build each")
    p.add_argument("--ray-workers", type=int, default=2, help="CPUs of the local Ray instance (0: no Ray build)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="give a build with W workers W cores (CPU affinity), so that its speed-up over 1 worker is "
                        "its scaling to the cores given; --no-pin: every build may use every core")
    p.add_argument("--repeats", type=int, default=1,
                   help="builds per engine and worker count, interleaved, and limit runs; the fastest of each is "
                        "reported")
    p.add_argument("--workdir", type=Path, help="work dir (default: a new temp dir under /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the work dir (raw links, builds)")
    p.add_argument("--codes", type=int, default=9_239, help="projection: codes in the full corpus")
    p.add_argument("--mb-per-code", type=float, default=3.9,
                   help="projection: MB of text per code (Georgia: 1.3 GB / 330 codes)")
    p.add_argument("--ocr-share", type=float, default=0.25,
                   help="projection: share of codes that are scanned PDFs needing OCR (an assumption)")
    p.add_argument("--kb-per-page", type=float, default=3.5, help="projection: text per printed page, in KB")
    p.add_argument("--cores-per-node", type=int, default=16, help="projection: cores of one node")
    p.add_argument("--nodes", default="1,4,16,64", help="projection: node counts")
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "locus_build.json", help="write numbers here")
    args = p.parse_args(argv)
    args.workers = [int(w) for w in args.workers.split(",")]
    args.nodes = [int(n) for n in args.nodes.split(",")]
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
    for name in ("raw", "builds", "limit", "municode-master"):
        shutil.rmtree(path / name, ignore_errors=True)
    return path, created


def make_raw(raw: Path, target_bytes: int, corpus: str) -> tuple[int, int, int]:
    """Link ``copies`` of each jurisdiction folder under ``raw``; return (copies, jurisdictions, bytes of one set).

    ``sample``: the eight real jurisdictions, every format. ``municode``: only the Municode text exports of the six
    Georgia codes, copied once beside ``raw`` (a raw folder may not link to single files outside it)."""
    if corpus == "sample":
        sample = sum(p.stat().st_size for _, folder, *_ in REAL for p in list_files(SHARED_LOCUS / folder))
        copies = math.ceil(target_bytes / sample)
        link_raw(SHARED_LOCUS, raw, copies)
        return copies, len(REAL), sample
    master = raw.parent / "municode-master"
    shutil.rmtree(master, ignore_errors=True)
    for jid in MUNICODE:
        (master / jid).mkdir(parents=True)
        for path in (SHARED_LOCUS / "georgia" / jid).glob("*.txt"):
            shutil.copyfile(path, master / jid / path.name)
    sample = sum(p.stat().st_size for p in master.rglob("*.txt"))
    copies = math.ceil(target_bytes / sample)
    raw.mkdir(parents=True)
    with (raw / "jurisdictions.csv").open("w", encoding="utf-8") as fh:
        fh.write("jurisdiction_id,name,kind,state,counties,source\n")
        for jid in MUNICODE:
            for i in range(1, copies + 1):
                (raw / f"{jid}-{i:04d}").symlink_to(master / jid, target_is_directory=True)
                fh.write(f"{jid}-{i:04d},{jid},city,GA,Bartow County,shared/data/locus/georgia/{jid}\n")
    return copies, len(MUNICODE), sample


def first_cores(n: int | None = None) -> list[int]:
    """The first ``n`` CPUs this process may run on (all of them when ``n`` is None or more than it has)."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:n] if n is not None and n <= len(cpus) else cpus


def run_build(raw: Path, out: Path, workers: int, engine: str, pin: bool, progress: Progress) -> BuildRun:
    """Build in a fresh process (on ``workers`` cores with ``pin``), following its progress and sampling the RSS of
    its process tree."""
    cores = first_cores(workers if pin else None)
    task = progress.add_task(f"build, {engine}, {workers} worker(s), {len(cores)} core(s)", total=None)
    proc = subprocess.Popen([sys.executable, "-c", BUILD_CHILD, str(raw), str(out), str(workers), engine,
                             ",".join(map(str, cores))],
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
        sys.exit(f"build ({engine}, {workers} worker(s)) failed (exit {proc.returncode}):\n" + "\n".join(log[-30:]))
    return BuildRun(engine, workers, out, result["wall_s"], result["report"], result["reconciles"],
                    result["cpu_s"], result["worker_cpu_s"], result["rss_self"], result["rss_children"], peak,
                    len(cores), log)


def shard_differences(a: Path, b: Path) -> list[str]:
    """Files under ``data/`` that are missing from one folder or differ in bytes."""
    files_a = {p.relative_to(a).as_posix() for p in (a / "data").rglob("*.parquet")}
    files_b = {p.relative_to(b).as_posix() for p in (b / "data").rglob("*.parquet")}
    return sorted((files_a ^ files_b) | {f for f in files_a & files_b if not filecmp.cmp(a / f, b / f, shallow=False)})


def limit_run(raw: Path, out: Path) -> dict[str, float]:
    """The limit: every input file read with pyarrow, split at section lines by one compiled regex, the pieces
    written as zstd Parquet at the shards' level; one process, no parsing."""
    out.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("source_file", pa.string()), ("text", pa.string())])
    files = [p for folder in sorted(raw.iterdir()) if folder.is_dir() for p in list_files(folder)]
    cpu, start = time.process_time(), time.perf_counter()
    size = pieces = 0
    with pq.ParquetWriter(out / "limit.parquet", schema, compression="zstd", compression_level=ZSTD_LEVEL) as writer:
        for path in files:
            with pa.memory_map(str(path)) as source:
                data = source.read_buffer().to_pybytes()
            size += len(data)
            text = data.decode("utf-8", errors="replace")
            starts = [m.start() for m in SECTION_START.finditer("\n" + text)] or [0]
            parts = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
            pieces += len(parts)
            writer.write_table(pa.table({"source_file": [path.name] * len(parts), "text": parts}, schema=schema))
    return {"bytes": size, "pieces": pieces, "wall_s": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu}


def municode_exports() -> tuple[list[str], int, int]:
    """The real Georgia Municode ``.txt`` exports, decoded: (texts, bytes, files), in a process set up as one that
    parses (``raw.keep_freed_memory``, as the build's workers and the build process itself are)."""
    from neurips26.corpora.locus import raw
    from neurips26.corpora.locus.formats.base import decode_text

    raw.keep_freed_memory()
    paths = sorted((SHARED_LOCUS / "georgia").glob("*/*.txt"))
    return [decode_text(p.read_bytes(), p) for p in paths], sum(p.stat().st_size for p in paths), len(paths)


def parse_all(texts: list[str]) -> None:
    """One pass of the Municode text parser over ``texts``."""
    from neurips26.corpora.locus.formats import municode

    for text in texts:
        municode.sections_from_text(text)


def parser_speeds(repeats: int) -> dict[str, float]:
    """MB/s per CPU second of the Municode text parser alone (``sections_from_text``, decoded text in memory) on
    the real Georgia ``.txt`` exports, with the compiled line split and with its Python fallback; the best of
    ``repeats`` interleaved passes (at least five)."""
    from neurips26.corpora.locus.formats import lines

    texts, size, files = municode_exports()
    compiled = lines._split
    splits = {"compiled line split": compiled} if lines.COMPILED else {}
    splits["Python fallback"] = lines.split_lines_py
    best = dict.fromkeys(splits, math.inf)
    try:
        for _ in range(max(5, repeats)):
            for name, split in splits.items():
                lines._split = split
                start = time.process_time()
                parse_all(texts)
                best[name] = min(best[name], time.process_time() - start)
    finally:
        lines._split = compiled
    return {"bytes": size, "files": files, **{name: size / MB / s for name, s in best.items()}}


def machine_scaling(counts: list[int], repeats: int) -> dict[str, dict[int, dict[str, float]]]:
    """The machine's own scaling, what no build can beat: ``n`` independent processes started at once, one per
    core, each doing the same fixed work (the Municode parser on the six real exports, or a pure-Python loop),
    against one alone just before. Per work and ``n``: the speed-up of the summed throughput (work per wall second)
    over one process, and each process's throughput per CPU second; the median of ``max(3, repeats)`` rounds
    (this machine's speed drifts, so each round compares runs seconds apart)."""
    rounds: dict[str, dict[int, list[dict[str, float]]]] = {"parser": {}, "python loop": {}}
    for _ in range(max(3, repeats)):
        for work, passes in (("parser", 40), ("python loop", 25)):
            for n in counts:
                procs = [subprocess.Popen([sys.executable, "-c", MACHINE_CHILD, str(core), work.split()[0],
                                           str(passes), str(Path(__file__).parent)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                         for core in first_cores(n)]
                for proc in procs:  # every process set up before any starts its work
                    assert proc.stdout is not None and proc.stdout.readline().startswith("ready")
                for proc in procs:
                    assert proc.stdin is not None
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                done = [tuple(map(float, proc.communicate()[0].split())) for proc in procs]
                throughput = sum(work_mb / wall for work_mb, _, wall in done)
                alone = rounds[work][min(counts)][-1]["throughput"] if n != min(counts) else throughput
                rounds[work].setdefault(n, []).append({
                    "throughput": throughput, "speedup": throughput / alone,
                    "per_cpu_s": sum(work_mb / cpu for work_mb, cpu, _ in done) / len(done)})
    return {work: {n: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for n, runs in by_n.items()}
            for work, by_n in rounds.items()}


def machine_rows(machine: dict[str, dict[int, dict[str, float]]], runs: list[BuildRun]) -> list[Row]:
    """The machine's own scaling, and each multi-core build's speed-up as a share of it (the parser's)."""
    rows = []
    for work, by_n in machine.items():
        unit = "MB/s" if work == "parser" else "loops/s"
        one = by_n[min(by_n)]
        for n, run in sorted(by_n.items()):
            if n == min(by_n):
                continue
            rows += [Row(f"the machine's own scaling: {work}, {n} processes at once (one per core) over 1 alone",
                         f"{run['speedup']:.2f}x"),
                     Row(f"{work}, throughput per process per CPU second, {n} at once (baseline: 1 alone)",
                         run["per_cpu_s"], unit, one["per_cpu_s"])]
    first, parser = runs[0], machine["parser"]
    for run in runs[1:]:
        if run.engine == "local" and run.cores in parser and first.cores == min(parser):
            share = first.wall_s / run.wall_s / parser[run.cores]["speedup"]
            rows.append(Row(f"build speed-up over {first.tag}, as a share of the machine's own (parser, "
                            f"{run.cores} processes), {run.tag}", f"{share:.0%}"))
    return rows


# Ray's fixed cost per build, as the Ray engine pays it: start a local instance, run one task per CPU (the first
# tasks start Ray's worker processes), shut it down; each timed, on the cores given.
RAY_CHILD = """
import json, os, sys, time
os.sched_setaffinity(0, [int(c) for c in sys.argv[1].split(",")])
import ray
times, clock = {}, time.perf_counter()
ray.init(num_cpus=len(os.sched_getaffinity(0)), include_dashboard=False, log_to_driver=False, configure_logging=False)
times["start"], clock = time.perf_counter() - clock, time.perf_counter()
one = ray.remote(num_cpus=1)(lambda: 1)
ray.get([one.remote() for _ in range(len(os.sched_getaffinity(0)))])
times["first tasks"], clock = time.perf_counter() - clock, time.perf_counter()
ray.shutdown()
times["shutdown"] = time.perf_counter() - clock
print(json.dumps(times))
"""


def ray_fixed_seconds(cores: int) -> dict[str, float]:
    """Wall seconds Ray's start, first tasks and shutdown take on ``cores`` cores (no parsing): the part of a Ray
    build that does not grow with the corpus."""
    done = subprocess.run([sys.executable, "-c", RAY_CHILD, ",".join(map(str, first_cores(cores)))],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def ocr_page_seconds() -> float | None:
    """CPU seconds Tesseract (one thread) takes for one letter page of code text rendered at 300 dpi (None
    without Tesseract)."""
    if shutil.which("tesseract") is None:
        return None
    import pytesseract
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (2550, 3300), 255)
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 36)
    except OSError:
        font = ImageFont.load_default(size=36)
    draw = ImageDraw.Draw(image)
    for i in range(50):
        draw.text((150, 150 + 60 * i), f"Sec. 6-{i + 1}. - Dogs at large. No owner shall permit a dog to run "
                                        f"at large in the city; fine ${25 * (i + 1)}.", fill=0, font=font)
    os.environ["OMP_THREAD_LIMIT"] = "1"  # one core per page, as a worker would run it
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    pytesseract.image_to_string(image, lang="eng")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def build_rows(runs: list[BuildRun], limit: dict[str, float]) -> list[Row]:
    first = runs[0]
    limit_mb_s = limit["bytes"] / MB / limit["cpu_s"]
    rows = [Row("limit: pyarrow read + regex split + zstd Parquet write (1 process, CPU time)", limit_mb_s, "MB/s")]
    for run in runs:
        mb_s = run.report["bytes_in"] / MB / run.wall_s
        rows += [
            Row(f"build wall time, {run.tag}", run.wall_s, "s", first.wall_s if run is not first else None),
            *([Row(f"speed-up over {first.tag} / per worker (efficiency), {run.tag}",
                   f"{first.wall_s / run.wall_s:.2f}x / {first.wall_s / run.wall_s / run.workers:.0%}")]
              if run is not first else []),
            Row(f"input throughput, {run.tag}", mb_s, "MB/s", first.report["bytes_in"] / MB / first.wall_s
                if run is not first else None),
            Row(f"input throughput per worker (wall), {run.tag}", mb_s / run.workers, "MB/s", limit_mb_s),
            Row(f"sections/s, {run.tag}", run.report["sections"] / run.wall_s, "sections/s"),
            Row(f"share of the limit (input per worker, wall / limit), {run.tag}",
                f"{mb_s / run.workers / limit_mb_s:.2f}x"),
            *text_rows(run),
            Row(f"peak RSS, process tree sum (psutil, 0.2 s samples), {run.tag}", run.rss_tree / MIB, "MiB"),
        ]
        if run.engine == "local":
            rows.insert(len(rows) - 1, Row(f"input throughput per CPU second (whole build), {run.tag}",
                                           run.report["bytes_in"] / MB / run.cpu_s, "MB/s", limit_mb_s))
        if run.engine == "local" and run.worker_cpu_s:
            rows.insert(len(rows) - 1, Row(
                f"parse throughput per worker CPU second (read, detect, parse, merge, rows), {run.tag}",
                run.report["bytes_in"] / MB / run.worker_cpu_s, "MB/s", limit_mb_s))
            rows.insert(len(rows) - 1, Row(f"CPU of the build process (shards, evaluation sets, card), {run.tag}",
                                           run.cpu_s - run.worker_cpu_s, "s"))
    return rows


def text_rows(run: BuildRun) -> list[Row]:
    """Where the text of the files with a text account went (build report), corpus-wide."""
    total = run.report.get("chars_total") or 0
    if not total:
        return []
    lost = total - run.report["chars_sections"] - run.report["chars_structure"]
    return [Row(f"text in sections (non-whitespace characters, {run.report['files_measured']} files), {run.tag}",
                f"{run.report['chars_sections'] / total:.2%}"),
            Row(f"text unaccounted (in no section, no structure; files over 5%: {run.report['text_problems']}), "
                f"{run.tag}", f"{lost / total:.3%}")]


def projection_rows(args: argparse.Namespace, cpu_s_per_mb: float, ocr_s: float | None) -> list[Row]:
    """Hours for ``--codes`` codes on N nodes from measured per-MB and per-page costs (perfect scaling)."""
    text_mb = args.codes * args.mb_per_code
    cpu_h = text_mb * cpu_s_per_mb / 3600
    pages = args.codes * args.ocr_share * args.mb_per_code * 1000 / args.kb_per_page
    ocr_h = pages * ocr_s / 3600 if ocr_s is not None else float("nan")
    rows = [Row(f"corpus: {args.codes:,} codes x {args.mb_per_code} MB; {args.ocr_share:.0%} scanned "
                f"({pages:,.0f} pages to OCR)", text_mb / 1000, "GB"),
            Row("parse CPU (measured s/MB x MB)", cpu_h, "core-hours"),
            Row("OCR CPU (measured s/page x pages)" if ocr_s is not None else "OCR CPU (no Tesseract here)",
                ocr_h, "core-hours")]
    for n in args.nodes:
        rows.append(Row(f"wall time on {n} node(s) x {args.cores_per_node} cores", (cpu_h + ocr_h) /
                        (n * args.cores_per_node), "hours"))
    return rows


def fmt(value: float | int | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def print_table(console: Console, rows: list[Row], title: str, caption: str) -> None:
    table = Table(title=title, caption=caption)
    for name, justify in [("measure", "left"), ("value", "right"), ("unit", "left"),
                          ("baseline", "right"), ("ratio", "right")]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(row.measure, fmt(row.value), row.unit, fmt(row.baseline),
                      f"{row.ratio:.2f}x" if row.ratio is not None else "")
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 130)  # wide enough for the table in a log
    if not SHARED_LOCUS.is_dir():
        console.print(f"[yellow]skipped: the real LOCUS sample is not at {SHARED_LOCUS} (../shared/data/locus)")
        return
    workdir, created = prepare_workdir(args.workdir)
    target = int(args.target_gb * GB)
    console.print(f"work dir {workdir}")
    try:
        if shutil.disk_usage(workdir).free < 3 * target:
            sys.exit(f"{workdir}: less than {3 * target / GB:.1f} GB free (builds and the limit's Parquet)")
        copies, n_jurisdictions, sample = make_raw(workdir / "raw", target, args.corpus)
        console.print(f"raw corpus ({args.corpus}): {n_jurisdictions} real jurisdictions x {copies} symlinked "
                      f"copies ({sample / MB:.2f} MB each set) = {copies * sample / GB:.3f} GB of input")
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        load_start = os.getloadavg()[0]
        plan = [("local", w) for w in args.workers] + ([("ray", args.ray_workers)] if args.ray_workers else [])
        fastest: dict[tuple[str, int], BuildRun] = {}
        with Progress(*columns, console=console) as progress:
            for k in range(args.repeats):  # interleaved, so a burst of load hits every configuration alike
                for e, w in plan:
                    run = run_build(workdir / "raw", workdir / "builds" / f"{e}{w}-{k}" / "locus", w, e, args.pin,
                                    progress)
                    if (e, w) in fastest and fastest[(e, w)].wall_s <= run.wall_s:
                        shutil.rmtree(run.out.parent)
                    else:
                        if (e, w) in fastest:
                            shutil.rmtree(fastest[(e, w)].out.parent)
                        fastest[(e, w)] = run
        runs = [fastest[p] for p in plan]
        with console.status("limit: pyarrow read + regex split + Parquet write"):
            limit = min((limit_run(workdir / "raw", workdir / "limit") for _ in range(args.repeats)),
                        key=lambda run: run["cpu_s"])
        with console.status("Municode text parser alone"):
            parser = parser_speeds(args.repeats)
        with console.status("the machine's own scaling (independent processes, one per core)"):
            machine = machine_scaling(sorted({r.cores for r in runs if r.engine == "local"}), args.repeats)
        ray_runs = [r for r in runs if r.engine == "ray"]
        with console.status("Ray's fixed cost (start, first tasks, shutdown)"):
            ray_fixed = ray_fixed_seconds(ray_runs[0].cores) if ray_runs else {}
        with console.status("OCR of one rendered page"):
            ocr_s = ocr_page_seconds()
        load_end, cpus = os.getloadavg()[0], os.cpu_count() or 1
        differences = {r.tag: shard_differences(runs[0].out, r.out) for r in runs[1:]}
        identical = "; ".join(f"{tag}: {'yes' if not d else f'NO ({len(d)} differ)'}" for tag, d in differences.items())
        report = runs[0].report
        local_one = next((r for r in runs if r.engine == "local" and r.workers == 1), runs[0])
        cpu_s_per_mb = local_one.cpu_s / (report["bytes_in"] / MB)
        rows = [
            Row("CPUs / 1-min load average at start, end", f"{cpus} / {load_start:.1f}, {load_end:.1f}"),
            Row("input read by the builder", report["bytes_in"] / GB, "GB"),
            Row("input files / sections / characters",
                f"{report['files_in']:,} / {report['sections']:,} / {report['characters']:,}"),
            *build_rows(runs, limit),
            *[Row(f"Municode text parser alone ({parser['files']} real exports, {parser['bytes'] / MB:.2f} MB; "
                  f"CPU time), {name}", parser[name], "MB/s") for name in parser if name not in ("bytes", "files")],
            *machine_rows(machine, runs),
            Row(f"shards byte-identical to {runs[0].tag}", identical or "(one build)"),
            *[Row(f"Ray's fixed cost, {run.cores} cores: start / first tasks / shutdown (no parsing)",
                  " / ".join(f"{v:.2f}" for v in ray_fixed.values()), "s") for run in ray_runs[:1]],
            *[Row(f"build wall time less Ray's fixed cost, {run.tag}", run.wall_s - sum(ray_fixed.values()), "s",
                  runs[0].wall_s) for run in ray_runs[:1]],
            Row("OCR, one 300 dpi page of code text (Tesseract, 1 thread, CPU time)",
                ocr_s if ocr_s is not None else "n/a", "s"),
        ]
        print_table(console, rows, f"LOCUS build benchmark ({args.corpus}, {report['bytes_in'] / GB:.2f} GB input)",
                    f"baseline: the {runs[0].tag} build for times and throughput, the limit for per-worker "
                    "throughput; ratio = value / baseline")
        projection = projection_rows(args, cpu_s_per_mb, ocr_s)
        print_table(console, projection, f"Projection: {args.codes:,} codes with OCR (measured costs, perfect "
                    "scaling)", f"parse: {cpu_s_per_mb:.3f} CPU s/MB (local, 1 worker); OCR: "
                    f"{ocr_s if ocr_s is not None else float('nan'):.2f} s/page")
        odd = [f"build {r.tag} does not reconcile" for r in runs if not r.reconciles]
        odd += [f"load average {max(load_start, load_end):.1f} on {cpus} CPUs: other processes competed, "
                "wall times are inflated (CPU times less so)"] if max(load_start, load_end) > cpus else []
        for line in odd:
            console.print(f"[yellow]odd: {line}")
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "copies": copies, "sample_bytes": sample, "target_bytes": target, "limit": limit, "parser": parser,
            "machine": machine, "ray_fixed_s": ray_fixed, "ocr_page_s": ocr_s,
            "builds": [{k: str(v) if isinstance(v, Path) else v for k, v in asdict(r).items() if k != "log"}
                       for r in runs],
            "shard_differences": differences, "bench_rss_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "rows": [{**asdict(r), "ratio": r.ratio} for r in rows + projection],
        }, indent=2) + "\n", encoding="utf-8")
        console.print(f"numbers written to {args.json}")
    finally:
        if args.keep:
            console.print(f"kept {workdir}")
        elif created:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            for name in ("raw", "builds", "limit", "municode-master"):
                shutil.rmtree(workdir / name, ignore_errors=True)


if __name__ == "__main__":
    main()
