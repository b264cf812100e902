"""Benchmark search and point lookups on a large built LOCUS folder (by default about 1 GB of input).

Builds (or takes, with ``--folder``) a LOCUS folder scaled up from the real shared sample, then measures:

- the one-time BM25 index build (``neurips26.search.ensure_index``, fresh cache);
- full-text search latency with a warm index (``neurips26.search.search``), p50 and p90 over several queries;
- point lookups of one jurisdiction's sections through ``neurips26.sql``: a new locked connection per query
  (what ``neurips26 query`` does) against one persistent connection reused for every query.

    python bench/locus_search.py                              # builds ~1 GB of input first (minutes)
    python bench/locus_search.py --folder /tmp/locus-bench/builds/local1/locus
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SHARED_LOCUS = ROOT.parent / "shared" / "data" / "locus"
QUERIES = ("dogs running at large", "noise after midnight", "business license fee", "junk vehicles on private "
           "property", "open burning permit", "1-5.11", "council meetings quorum", "sidewalk obstruction")


def build_folder(work: Path, target_gb: float) -> Path:
    """A LOCUS folder built (2 workers) from the real sample linked ``copies`` times to reach ``target_gb``."""
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--folder", type=Path, help="a built LOCUS folder (default: build one)")
    p.add_argument("--target-gb", type=float, default=1.0, help="input to build when no --folder")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per query after one warm-up")
    p.add_argument("--jurisdiction", default="adairsville-0001", help="point lookup: this jurisdiction")
    args = p.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    work = Path(tempfile.mkdtemp(prefix="locus-search-bench-"))
    os.environ["NEURIPS26_CACHE"] = str(work / "cache")  # a fresh index cache: the build is timed
    try:
        from neurips26.search import Filters, ensure_index, search
        from neurips26.sql import dataset_folders, locked_connection, run_query

        if args.folder is None:
            if not SHARED_LOCUS.is_dir():
                console.print(f"[yellow]skipped: the real LOCUS sample is not at {SHARED_LOCUS}")
                return
            with console.status(f"building a LOCUS folder from ~{args.target_gb} GB of input"):
                folder = build_folder(work, args.target_gb)
        else:
            folder = args.folder.resolve()
        size = sum(f.stat().st_size for f in (folder / "data" / "sections").glob("*.parquet"))
        start = time.perf_counter()
        index = ensure_index(folder)
        index_s = time.perf_counter() - start
        latencies: list[float] = []
        with console.status("search"):
            for query in QUERIES:
                search(folder, query, Filters(), 10)  # warm-up
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    search(folder, query, Filters(), 10)
                    latencies.append(time.perf_counter() - start)
        folders = dataset_folders(folder.parent)
        sql = f"SELECT * FROM {folder.name}.sections WHERE jurisdiction_id = '{args.jurisdiction}'"
        fresh, persistent = [], []
        with console.status("point lookups"):
            run_query(sql, folders)
            for _ in range(args.repeats):
                start = time.perf_counter()
                rows = run_query(sql, folders).num_rows
                fresh.append(time.perf_counter() - start)
            con = locked_connection(folders)
            con.execute(sql).to_arrow_table()
            for _ in range(args.repeats):
                start = time.perf_counter()
                con.execute(sql).to_arrow_table()
                persistent.append(time.perf_counter() - start)
            con.close()
        du = subprocess.run(["du", "-sb", str(index)], capture_output=True, text=True).stdout.split()[0]
        table = Table(title=f"LOCUS search and lookups: {folder} ({size / 1e6:,.0f} MB of sections Parquet)",
                      caption="latencies in ms; p50/p90 over every timed run of every query")
        for column in ("measure", "value", "unit"):
            table.add_column(column, justify="left" if column != "value" else "right")
        ms = 1000
        for name, value, unit in [
            ("BM25 index build, one-time", f"{index_s:.1f}", "s"),
            ("index size on disk", f"{int(du) / 1e6:,.0f}", "MB"),
            (f"search p50, warm index ({len(QUERIES)} queries x {args.repeats})",
             f"{statistics.median(latencies) * ms:.0f}", "ms"),
            ("search p90, warm index", f"{percentile(latencies, 0.9) * ms:.0f}", "ms"),
            (f"point lookup ({rows:,} rows), new connection per query (neurips26 query)",
             f"{statistics.median(fresh) * ms:.0f}", "ms"),
            ("point lookup, one persistent connection", f"{statistics.median(persistent) * ms:.0f}", "ms"),
            ("1-min load average / CPUs", f"{os.getloadavg()[0]:.1f} / {os.cpu_count()}", ""),
        ]:
            table.add_row(name, value, unit)
        console.print(table)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
