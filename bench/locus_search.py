"""Benchmark search and point lookups on a large built LOCUS folder (by default about 1 GB of input).

Builds (or takes, with ``--folder``) a LOCUS folder scaled up from the real shared sample, then measures:

- the one-time search index build (``neurips26.search.ensure_index``, fresh cache): wall and CPU time, size;
- the first search of the process (it opens the index), then full-text search with the index open
  (``neurips26.search.search``): p50 and p90 over every timed run of every query, wall and CPU time;
- point lookups of one jurisdiction's sections through ``neurips26.sql``: a new locked connection per query
  (``run_query``, what one ``neurips26 query`` statement does) against one ``Session`` reused for every query
  (several statements, ``--file`` or ``-`` in one ``neurips26 query``).

    python bench/locus_search.py                              # builds ~1 GB of input first (minutes)
    python bench/locus_search.py --target-gb 0.2 --keep       # build a smaller folder and keep it
    python bench/locus_search.py --folder /tmp/locus-search-bench-XXXX/locus
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SHARED_LOCUS = ROOT.parent / "shared" / "data" / "locus"
QUERIES = ("dogs running at large", "noise after midnight", "business license fee", "junk vehicles on private "
           "property", "open burning permit", "1-5.11", "council meetings quorum", "sidewalk obstruction")


def build_folder(work: Path, target_gb: float) -> Path:
    """A LOCUS folder built (one worker per CPU) from the real sample linked enough times to reach ``target_gb``."""
    from neurips26.corpora.locus.build import build
    from neurips26.corpora.locus.raw import list_files
    from neurips26.corpora.locus.real_sample import JURISDICTIONS, link_raw

    sample = sum(p.stat().st_size for _, folder, *_ in JURISDICTIONS for p in list_files(SHARED_LOCUS / folder))
    raw = link_raw(SHARED_LOCUS, work / "raw", max(1, round(target_gb * 1e9 / sample)))
    build(raw, work / "locus", workers=os.cpu_count() or 1)
    return work / "locus"


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--folder", type=Path, help="a built LOCUS folder (default: build one)")
    p.add_argument("--target-gb", type=float, default=1.0, help="input to build when no --folder")
    p.add_argument("--keep", action="store_true", help="keep the built folder (its path is printed)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per query after one warm-up")
    p.add_argument("--jurisdiction", default="adairsville-0001", help="point lookup: this jurisdiction")
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "locus_search.json",
                   help="write the numbers here")
    args = p.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    work = Path(tempfile.mkdtemp(prefix="locus-search-bench-"))
    os.environ["NEURIPS26_CACHE"] = str(work / "cache")  # a fresh index cache: the build is timed
    try:
        from neurips26.search import ensure_index, search
        from neurips26.sql import Session, dataset_folders, run_query

        if args.folder is None:
            if not SHARED_LOCUS.is_dir():
                console.print(f"[yellow]skipped: the real LOCUS sample is not at {SHARED_LOCUS}")
                return
            with console.status(f"building a LOCUS folder from ~{args.target_gb} GB of input"):
                folder = build_folder(work, args.target_gb)
        else:
            folder = args.folder.resolve()
        size = sum(f.stat().st_size for f in (folder / "data" / "sections").glob("*.parquet"))
        with console.status("building the search index"):
            index_s, index_cpu = timed(lambda: ensure_index(folder))
        index = ensure_index(folder)
        first_s, _ = timed(lambda: search(folder, QUERIES[0]))
        walls, cpus = [], []
        with console.status("search"):
            for query in QUERIES:
                search(folder, query)  # warm-up
                for _ in range(args.repeats):
                    wall, cpu = timed(lambda q=query: search(folder, q))
                    walls.append(wall)
                    cpus.append(cpu)
        folders = dataset_folders(folder.parent)
        sql = f"SELECT * FROM {folder.name}.sections WHERE jurisdiction_id = '{args.jurisdiction}'"
        rows = run_query(sql, folders).num_rows
        fresh = [timed(lambda: run_query(sql, folders)) for _ in range(args.repeats)]
        with Session(folders) as session:
            session.query(sql)
            persistent = [timed(lambda: session.query(sql)) for _ in range(args.repeats)]
        numbers = {
            "folder": str(folder), "sections_parquet_mb": size / 1e6,
            "index_build_s": index_s, "index_build_cpu_s": index_cpu, "index_mb": index.stat().st_size / 1e6,
            "first_search_ms": first_s * 1e3,
            "search_p50_ms": statistics.median(walls) * 1e3, "search_p90_ms": percentile(walls, 0.9) * 1e3,
            "search_cpu_p50_ms": statistics.median(cpus) * 1e3,
            "lookup_rows": rows,
            "lookup_fresh_ms": statistics.median(w for w, _ in fresh) * 1e3,
            "lookup_fresh_cpu_ms": statistics.median(c for _, c in fresh) * 1e3,
            "lookup_session_ms": statistics.median(w for w, _ in persistent) * 1e3,
            "lookup_session_cpu_ms": statistics.median(c for _, c in persistent) * 1e3,
            "load_average_1min": os.getloadavg()[0], "cpus": os.cpu_count(),
        }
        table = Table(title=f"LOCUS search and lookups: {folder} ({size / 1e6:,.0f} MB of sections Parquet)",
                      caption="wall time unless marked CPU (this process); p50/p90 over every timed run of every query")
        for column in ("measure", "value", "unit"):
            table.add_column(column, justify="left" if column != "value" else "right")
        n = numbers
        for name, value, unit in [
            ("search index build, one-time (wall / CPU)", f"{n['index_build_s']:.1f} / {n['index_build_cpu_s']:.1f}",
             "s"),
            ("index size on disk", f"{n['index_mb']:,.0f}", "MB"),
            ("first search of the process (opens the index)", f"{n['first_search_ms']:.0f}", "ms"),
            (f"search p50, index open ({len(QUERIES)} queries x {args.repeats})", f"{n['search_p50_ms']:.1f}", "ms"),
            ("search p90, index open", f"{n['search_p90_ms']:.1f}", "ms"),
            ("search p50 CPU", f"{n['search_cpu_p50_ms']:.1f}", "ms"),
            (f"point lookup ({rows:,} rows), new connection per query (wall / CPU)",
             f"{n['lookup_fresh_ms']:.0f} / {n['lookup_fresh_cpu_ms']:.0f}", "ms"),
            ("point lookup, one persistent Session (wall / CPU)",
             f"{n['lookup_session_ms']:.0f} / {n['lookup_session_cpu_ms']:.0f}", "ms"),
            ("1-min load average / CPUs", f"{n['load_average_1min']:.1f} / {n['cpus']}", ""),
        ]:
            table.add_row(name, value, unit)
        console.print(table)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(numbers, indent=1) + "\n")
        console.print(f"numbers written to {args.json}")
    finally:
        if args.keep and args.folder is None:
            shutil.rmtree(work / "cache", ignore_errors=True)
            console.print(f"kept the built folder: {work / 'locus'} (reuse it with --folder)")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
