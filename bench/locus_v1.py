"""Benchmark LOCUS-v1 ingest (``build --from-locus-v1``) against a plain Arrow read of the same files.

Writes ``--rows`` rows in the paper's schema (``V1_SCHEMA``, every label filled, about
``--chars`` characters of content each, ``--jurisdictions`` codes) as ``--shards``
Parquet files (rows in output order; ``--shuffle`` writes them in a random order, so the
ingest has to sort), then runs, each in a fresh Python process, with imports timed apart, ``--repeats``
times (the run with the least CPU is shown):

- baseline: ``pyarrow.parquet.read_table`` of the same files (reading them, nothing more);
- the whole ingest build: sections, jurisdictions, county layers, evaluation sets,
  ``v1_source`` and ``locus_v1``, card and Croissant, with the time of each phase (the CPU of the
  thread it ran in; phases in threads side by side overlap in wall time);
- the writes alone: the ``sections``, ``v1_source`` and ``locus_v1`` tables the ingest published, read back
  into memory (not timed) and written again by the same writer, one after the other. With the baseline this is
  the floor of any ingest that publishes these configs: read the download, write what it publishes;
- ``locus_v1_table`` alone on the built folder (what rescoring costs).

Prints CPU and wall seconds, each as a multiple of the baseline's, peak RSS, the ratio with
and without imports, the ingest as a multiple of the floor, and an estimate for the 2,211,516 rows of
LOCUS-v1 at the measured rate; also writes ``--json``. See bench/README.md.

    python bench/locus_v1.py                       # 200,000 rows
    python bench/locus_v1.py --rows 50000 --shuffle --keep --workdir /tmp/v1-bench
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

LOCUS_V1_ROWS = 2_211_516
WORDS = ("shall", "person", "permit", "dog", "noise", "building", "zoning", "license", "fine", "council", "street",
         "vehicle", "owner", "violation", "district", "public", "nuisance", "inspection", "fee", "day")
EVALUATION = ("domain", "catchline", "function", "topic", "function_gold", "topic_gold", "substantive_gold")
# (module[.Class], function, phase) of the ingest; a call's time goes to the innermost phase it is in (in its
# thread), the rest of the process's CPU to "other". A str.format phase gets the SplitWriter's config.
PHASES = [
    ("neurips26.corpora.locus.v1_ingest", "read_v1", "read and order the input files"),
    ("neurips26.corpora.locus.v1_ingest", "_sha256", "sha256 of the input files (manifest)"),
    ("neurips26.corpora.locus.v1_ingest.V1Source", "tables", "sections and v1_source columns"),
    ("neurips26.corpora.locus.evalsets", "derive", "evaluation sets"),
    ("neurips26.corpora.locus.v1", "locus_v1_batches", "locus_v1 columns"),
    ("neurips26.corpora.locus.v1", "ingested_rows", "locus_v1 columns"),
    ("neurips26.hubfolder.shards.SplitWriter", "_append", "row groups cut and copied"),
    ("neurips26.hubfolder.shards.SplitWriter", "_write_table", "Parquet write: {}"),
    ("neurips26.hubfolder.shards.SplitWriter", "close", "shard sha256 and renames"),
    ("neurips26.hubfolder", "write_card", "card, Croissant, manifest"),
    ("neurips26.hubfolder", "write_croissant", "card, Croissant, manifest"),
    ("neurips26.hubfolder", "write_manifest", "card, Croissant, manifest"),
]


class Phases:
    """CPU and wall seconds per phase, thread by thread (the build writes some configs in threads of their own):
    time spent in a nested phase is not counted in the outer one; a thread's CPU is its own (thread_time)."""

    OTHER = "other, and Arrow's own threads (e.g. decoding the input)"

    def __init__(self) -> None:
        self.cpu: Counter[str] = Counter()
        self.wall: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.local = threading.local()

    def start(self) -> None:
        """Start this thread's clock in the phase "other"."""
        self.local.stack = [self.OTHER]
        self.local.last = (time.thread_time(), time.perf_counter())

    def _switch(self, push: str | None) -> None:
        if not hasattr(self.local, "stack"):  # a thread's first phase
            self.start()
        now = (time.thread_time(), time.perf_counter())
        stack, last = self.local.stack, self.local.last
        with self.lock:
            self.cpu[stack[-1]] += now[0] - last[0]
            self.wall[stack[-1]] += now[1] - last[1]
        self.local.last = now
        if push is None:
            stack.pop()
        else:
            stack.append(push)

    def wrap(self, owner: object, name: str, phase: str) -> None:
        attribute = inspect.getattr_static(owner, name)
        fn = attribute.func if isinstance(attribute, functools.cached_property) else getattr(owner, name)

        def label(args: tuple) -> str:
            if "{}" not in phase:
                return phase
            config = args[0].config
            return phase.format(config if config in ("sections", "v1_source", "locus_v1") else
                                "evaluation sets" if config in EVALUATION else "other configs")

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def wrapped(*args, **kwargs):
                it = fn(*args, **kwargs)
                while True:
                    self._switch(label(args))
                    try:
                        item = next(it)
                    except StopIteration:
                        return
                    finally:
                        self._switch(None)
                    yield item
        else:
            @functools.wraps(fn)
            def wrapped(*args, **kwargs):
                self._switch(label(args))
                try:
                    return fn(*args, **kwargs)
                finally:
                    self._switch(None)
        if isinstance(attribute, functools.cached_property):
            wrapped = functools.cached_property(wrapped)
            wrapped.__set_name__(owner, name)
        setattr(owner, name, wrapped)


def _owner(path: str) -> object:
    module, _, cls = path.rpartition(".")
    if cls[:1].isupper():
        return getattr(importlib.import_module(module), cls)
    return importlib.import_module(path)


def peak_rss() -> int:
    """Bytes: this process's peak resident set. Linux's VmHWM starts afresh at exec, where ``ru_maxrss`` keeps
    the parent's peak (the one that wrote the synthetic download)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(step: str, files: Path, out: Path) -> dict:
    """One step in this (fresh) process: imports, then the work, timed apart."""
    clock = (time.process_time(), time.perf_counter())
    if step == "read":
        import pyarrow.dataset  # noqa: F401  (read_table's first call imports it: not part of reading)
        import pyarrow.parquet as pq
    elif step == "build":
        from neurips26.corpora.locus.build import build
    elif step == "writes":
        import pyarrow.parquet as pq
        from neurips26.corpora.locus.records import SECTIONS, V1_SCHEMA, V1_SOURCE

        from neurips26 import hubfolder

        published = {"sections": SECTIONS, "v1_source": V1_SOURCE, "locus_v1": V1_SCHEMA}
        tables = {config: pq.read_table(out / "data" / config, schema=schema) for config, schema in published.items()}
    else:
        from neurips26.corpora.locus.v1 import locus_v1_table
    imported = (time.process_time() - clock[0], time.perf_counter() - clock[1])
    phases = Phases()
    if step == "build":
        for owner, name, phase in PHASES:
            if hasattr(_owner(owner), name):  # an older builder may lack one
                phases.wrap(_owner(owner), name, phase)
    clock = (time.process_time(), time.perf_counter())
    phases.start()
    if step == "read":
        rows = sum(pq.read_table(f).num_rows for f in sorted(files.rglob("*.parquet")))
    elif step == "build":
        rows = build(out=out, from_locus_v1=files).sections
        phases._switch(None)  # charge the end of build() to "other"
    elif step == "writes":  # the three configs the ingest publishes, written from memory by the same writer
        with tempfile.TemporaryDirectory() as folder:
            for config, table in tables.items():
                writer = hubfolder.SplitWriter(Path(folder), config, published[config])
                for batch in table.to_batches(hubfolder.ROW_GROUP_ROWS):
                    writer.write_batch(batch)
                writer.close()
        rows = tables["sections"].num_rows
    else:
        rows = locus_v1_table(out).num_rows
    cpu = time.process_time() - clock[0]
    phases.cpu[phases.OTHER] = cpu - sum(v for k, v in phases.cpu.items() if k != phases.OTHER)
    return {"cpu_s": cpu, "wall_s": time.perf_counter() - clock[1], "rows": rows,
            "import_cpu_s": imported[0], "import_wall_s": imported[1],
            "rss": peak_rss(),
            "phases": {p: {"cpu_s": phases.cpu[p], "wall_s": phases.wall[p]} for p in phases.cpu}}


def make_shards(folder: Path, rows: int, shards: int, jurisdictions: int, chars: int, shuffle: bool) -> int:
    """Write the synthetic download; return its size in bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from neurips26.corpora.locus import records

    rng = random.Random(0)
    data = folder / "data"
    data.mkdir(parents=True)
    per_shard = -(-rows // shards)
    order = list(range(rows))
    if shuffle:
        random.Random(1).shuffle(order)
    for s in range(shards):
        batch = []
        for i in order[s * per_shard:(s + 1) * per_shard]:
            j = i * jurisdictions // rows
            function = records.FUNCTIONS[rng.randrange(4)]
            text = " ".join(rng.choice(WORDS) for _ in range(chars // 6))
            batch.append({
                "document_id": f"doc-{j}", "section_index": i, "state": "GA",
                "jurisdiction_name": f"City {j}", "jurisdiction_type": "city", "jurisdiction_geoid": f"13{j:05d}",
                "represented_county_fips": ["13015"], "represented_county_name": ["Bartow County"],
                "header": f"Sec. {j}-{i}. - {rng.choice(WORDS).title()}", "content": text,
                "is_substantive": function != "Context", "function": function, "function_votes": 3,
                "topic": records.TOPICS[rng.randrange(5)], "topic_votes": 2,
                **{f"annotator{k}_function": function for k in (1, 2, 3)},
                **{f"annotator{k}_topic": "Other" for k in (1, 2, 3)},
                **{f"annotator{k}_confidence": rng.random() for k in (1, 2, 3)},
                "opacity": rng.gauss(0, 1), "paternalism": rng.gauss(0, 1),
                "enforcement_discretion": rng.gauss(0, 1), "problem_salience": rng.gauss(0, 1),
            })
        pq.write_table(pa.Table.from_pylist(batch, schema=records.V1_SCHEMA),
                       data / f"train-{s:05d}-of-{shards:05d}.parquet")
    return sum(p.stat().st_size for p in data.iterdir())


def measure(step: str, files: Path, out: Path) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", step, str(files), str(out)], capture_output=True,
                            text=True, check=False)
    if result.returncode:
        sys.exit(f"{step} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(results: dict, rows: int, size: int, shards: int, load: tuple[float, float], repeats: int) -> None:
    from rich.console import Console
    from rich.table import Table

    base = results["read"]
    table = Table(title=f"LOCUS-v1 ingest: {rows:,} rows, {size / 1e6:,.0f} MB in {shards} files; best of {repeats} "
                        f"(least CPU) per step; load average {load[0]:.2f} before, {load[1]:.2f} after")
    for column in ("step", "CPU s", "x read", "wall s", "x read ", "peak RSS (MB)"):
        table.add_column(column, justify="left" if column == "step" else "right")

    def row(label: str, r: dict, rss: int | None = None, style: str | None = None) -> None:
        table.add_row(label, f"{r['cpu_s']:.2f}", f"{r['cpu_s'] / base['cpu_s']:.1f}x", f"{r['wall_s']:.2f}",
                      f"{r['wall_s'] / base['wall_s']:.1f}x", f"{rss / 2**20:,.0f}" if rss else "", style=style)

    row("pyarrow read_table (baseline)", base, base["rss"], style="bold")
    build = results["build"]
    row("build --from-locus-v1", build, build["rss"], style="bold")
    for phase, r in sorted(build["phases"].items(), key=lambda kv: -kv[1]["cpu_s"]):
        row(f"  {phase}", r)
    row("locus_v1_table on the built folder", results["table"], results["table"]["rss"])
    writes, floor = results["writes"], {k: base[k] + results["writes"][k] for k in ("cpu_s", "wall_s")}
    row("writing sections, v1_source and locus_v1 from memory (same writer)", writes)
    row("the floor: read + those writes (no ingest work)", floor, style="bold")
    for step, label in (("read", "import pyarrow.parquet and .dataset"), ("build", "import the LOCUS builder")):
        row(f"({label}, not counted above)", {"cpu_s": results[step]["import_cpu_s"],
                                              "wall_s": results[step]["import_wall_s"]})
    console = Console(width=max(Console().width, 120))
    console.print(table)
    with_imports = {k: [results[s][f"{k}_s"] + results[s][f"import_{k}_s"] for s in ("build", "read")]
                    for k in ("cpu", "wall")}
    ratios = {k: build / read for k, (build, read) in with_imports.items()}
    console.print(
        f"ingest / read: {build['cpu_s'] / base['cpu_s']:.1f}x CPU, {build['wall_s'] / base['wall_s']:.1f}x wall; "
        f"with each process's imports: {ratios['cpu']:.1f}x CPU, {ratios['wall']:.1f}x wall. Writing what the "
        f"ingest publishes (zstd, the text twice: sections and locus_v1) takes {writes['cpu_s'] / base['cpu_s']:.1f}x "
        f"the read's CPU by itself; ingest / floor (read + those writes): {build['cpu_s'] / floor['cpu_s']:.1f}x "
        f"CPU, {build['wall_s'] / floor['wall_s']:.1f}x wall. CPU counts every thread (pyarrow reads with several).\n"
        f"At this rate the full LOCUS-v1 ({LOCUS_V1_ROWS:,} rows) ingests in about "
        f"{LOCUS_V1_ROWS / rows * build['wall_s'] / 60:.1f} min; peak memory grows with the rows (the ingest holds "
        "the whole download, in output order).")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], Path(argv[2]), Path(argv[3]))))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000, help="rows of synthetic LOCUS-v1")
    p.add_argument("--shards", type=int, default=4, help="Parquet files")
    p.add_argument("--jurisdictions", type=int, default=200, help="codes the rows belong to")
    p.add_argument("--chars", type=int, default=240, help="characters of content per row (LOCUS-v1: ~200)")
    p.add_argument("--shuffle", action="store_true", help="write the rows in a random order (the ingest sorts)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each step; the one with the least CPU is shown")
    p.add_argument("--workdir", type=Path, help="work dir (default: a new temp dir, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the work dir")
    p.add_argument("--json", type=Path, default=Path("bench/out/locus_v1.json"), help="where the numbers go")
    args = p.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="locus-v1-bench-"))
    if args.workdir and work.exists() and any(work.iterdir()):
        sys.exit(f"{work}: not empty; give an empty or new --workdir")
    try:
        print(f"writing {args.rows:,} synthetic LOCUS-v1 rows", file=sys.stderr)
        size = make_shards(work / "download", args.rows, args.shards, args.jurisdictions, args.chars, args.shuffle)
        runs: dict[str, list[dict]] = {"read": [], "build": [], "writes": [], "table": []}
        load = [os.getloadavg()[0]]
        for k in range(args.repeats):  # interleaved, so a burst of load on the machine hits every step alike
            for step, done in runs.items():
                print(f"run {k + 1}/{args.repeats}: {step}", file=sys.stderr)
                done.append(measure(step, work / "download", work / "locus"))
        load.append(os.getloadavg()[0])
        results = {step: min(done, key=lambda r: r["cpu_s"]) for step, done in runs.items()}
        report(results, args.rows, size, args.shards, (load[0], load[1]), args.repeats)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "bytes": size,
                                         "load_average": load, "best": results, "runs": runs}, indent=2) + "\n",
                             encoding="utf-8")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
