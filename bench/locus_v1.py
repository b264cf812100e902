"""Benchmark LOCUS-v1 ingest (``build --from-locus-v1``) on synthetic LOCUS-v1 shards.

Writes ``--rows`` rows in the paper's schema (``V1_SCHEMA``, every label filled, about
``--chars`` characters of content each, ``--jurisdictions`` codes) as ``--shards``
Parquet files, then, each in a fresh Python process (wall time, peak RSS):

- baseline: ``pyarrow.parquet.read_table`` of the same files (reading them, nothing more);
- the whole ingest build: sections, jurisdictions, county layers, evaluation sets,
  ``v1_source`` and ``locus_v1``, card and Croissant;
- ``locus_v1_table`` alone on the built folder (what rescoring costs).

Prints a table (ratio = seconds / baseline seconds) and an estimate for the 2,211,516 rows of
LOCUS-v1 at the measured rate.

    python bench/locus_v1.py                       # 200,000 rows
    python bench/locus_v1.py --rows 50000 --keep --workdir /tmp/v1-bench
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from neurips26.corpora.locus import records
from rich.console import Console
from rich.table import Table

LOCUS_V1_ROWS = 2_211_516
WORDS = ("shall", "person", "permit", "dog", "noise", "building", "zoning", "license", "fine", "council", "street",
         "vehicle", "owner", "violation", "district", "public", "nuisance", "inspection", "fee", "day")
CHILD = """
import json, resource, sys, time
from pathlib import Path
step, files, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
start = time.perf_counter()
if step == "read":
    import pyarrow.parquet as pq
    rows = sum(pq.read_table(f).num_rows for f in sorted(files.rglob("*.parquet")))
elif step == "build":
    from neurips26.corpora.locus.build import build
    rows = build(out=out, from_locus_v1=files).sections
else:
    from neurips26.corpora.locus.v1 import locus_v1_table
    rows = locus_v1_table(out).num_rows
wall = time.perf_counter() - start
print(json.dumps({"wall_s": wall, "rows": rows, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def make_shards(folder: Path, rows: int, shards: int, jurisdictions: int, chars: int) -> int:
    """Write the synthetic download; return its size in bytes."""
    rng = random.Random(0)
    data = folder / "data"
    data.mkdir(parents=True)
    per_shard = -(-rows // shards)
    for s in range(shards):
        batch = []
        for i in range(s * per_shard, min(rows, (s + 1) * per_shard)):
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
    result = subprocess.run([sys.executable, "-c", CHILD, step, str(files), str(out)], capture_output=True,
                            text=True, check=False)
    if result.returncode:
        sys.exit(f"{step} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000, help="rows of synthetic LOCUS-v1")
    p.add_argument("--shards", type=int, default=4, help="Parquet files")
    p.add_argument("--jurisdictions", type=int, default=200, help="codes the rows belong to")
    p.add_argument("--chars", type=int, default=240, help="characters of content per row (LOCUS-v1: ~200)")
    p.add_argument("--workdir", type=Path, help="work dir (default: a new temp dir, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the work dir")
    args = p.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="locus-v1-bench-"))
    if args.workdir and work.exists() and any(work.iterdir()):
        sys.exit(f"{work}: not empty; give an empty or new --workdir")
    console = Console()
    try:
        with console.status(f"writing {args.rows:,} synthetic LOCUS-v1 rows"):
            size = make_shards(work / "download", args.rows, args.shards, args.jurisdictions, args.chars)
        results = {}
        for step, label in (("read", "pyarrow read_table (baseline)"), ("build", "build --from-locus-v1"),
                            ("table", "locus_v1_table on the built folder")):
            with console.status(label):
                results[step] = (label, measure(step, work / "download", work / "locus"))
        base = results["read"][1]["wall_s"]
        table = Table(title=f"LOCUS-v1 ingest: {args.rows:,} rows, {size / 1e6:,.0f} MB in {args.shards} files")
        for column in ("step", "seconds", "rows/s", "ratio vs baseline", "peak RSS (MB)"):
            table.add_column(column, justify="left" if column == "step" else "right")
        for label, r in results.values():
            table.add_row(label, f"{r['wall_s']:.2f}", f"{r['rows'] / r['wall_s']:,.0f}", f"{r['wall_s'] / base:.1f}x",
                          f"{r['rss'] / 2**20:,.0f}")
        console.print(table)
        build = results["build"][1]
        console.print(f"at this rate the full LOCUS-v1 ({LOCUS_V1_ROWS:,} rows) ingests in about "
                      f"{LOCUS_V1_ROWS / build['rows'] * build['wall_s'] / 60:.1f} min; peak memory grows with the "
                      "rows (the ingest sorts one Arrow table of the whole download)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
