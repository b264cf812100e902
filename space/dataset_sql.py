"""The Datasets tab: read-only SQL over the built dataset folders, which the Space reads and never builds.

Nothing here touches Gradio, so the tests call these functions directly; ``app.py`` only wires them to components.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from neurips26.errors import UserError
from neurips26.sql import Limits, QueryError, dataset_folders, run_query

MAX_SQL_ROWS = 500
MAX_SQL_CHARS = 20_000
SQL_WORKERS = 4  # queries running at once; the Space's SQL event allows as many
QUEUE_WAIT_S = 10.0  # how long a query waits for a worker before the visitor is told to retry
SPACE_LIMITS = Limits(timeout_s=10.0, memory="1GB", threads=1)
_workers = threading.BoundedSemaphore(SQL_WORKERS)

# ---------------------------------------------------------------- datasets


def dataset_views(folders: dict[str, Path]) -> pl.DataFrame:
    """(view, split, rows) of every config of the built folders, from their manifests."""
    rows = []
    for name, folder in sorted(folders.items()):
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for config, splits in manifest["configs"].items():
            for split, shards in splits.items():
                rows.append((f"{name}.{config}", split, sum(s.get("rows", 0) for s in shards)))
    return pl.DataFrame(rows, schema={"view": pl.String, "split": pl.String, "rows": pl.Int64}, orient="row")


def run_sql(sql: str, data_root: Path, max_rows: int = MAX_SQL_ROWS,
            limits: Limits = SPACE_LIMITS) -> tuple[pl.DataFrame, str]:
    """Run a read-only SELECT over the dataset views: (first ``max_rows`` rows, a one-line status).

    At most :data:`SQL_WORKERS` queries run at once, each under ``limits`` (time, memory, one thread); the row
    cap applies to the streamed result, the SQL runs as written. A visitor who finds every worker busy for
    :data:`QUEUE_WAIT_S` is told so. The refusal or error message of :func:`neurips26.sql.run_query` becomes
    the status.
    """
    empty = pl.DataFrame()
    if not sql.strip():
        return empty, "Write one SELECT, e.g. SELECT * FROM locus.sections LIMIT 10"
    if len(sql) > MAX_SQL_CHARS:
        return empty, f"error: the query is {len(sql):,} characters; the limit is {MAX_SQL_CHARS:,}"
    if not _workers.acquire(timeout=QUEUE_WAIT_S):
        return empty, f"error: every SQL worker is busy ({SQL_WORKERS} queries running); try again shortly"
    try:
        table = run_query(sql, dataset_folders(data_root), replace(limits, max_rows=max_rows))
    except QueryError as exc:
        return empty, f"error: {exc}"
    finally:
        _workers.release()
    frame = displayable(table)
    if frame.height > max_rows:
        return frame.head(max_rows), f"showing the first {max_rows} rows"
    return frame, f"{frame.height} row(s)"


def displayable(table: pa.Table) -> pl.DataFrame:
    """A table Gradio can send as is: nested and binary columns as JSON or hex text, dates and times as ISO text,
    decimals as floats."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    nested = [c for c, t in frame.schema.items() if t.is_nested() or t == pl.Binary or t == pl.Object]
    return frame.with_columns(
        *(pl.Series(c, [None if v is None else _text(v.hex() if isinstance(v, bytes) else v)
                        for v in frame[c].to_list()], dtype=pl.String) for c in nested),
        *(pl.col(c).cast(pl.String) for c, t in frame.schema.items() if t.is_temporal()),
        *(pl.col(c).cast(pl.Float64) for c, t in frame.schema.items() if t.is_decimal()))




def require_datasets(root: Path) -> Path:
    """``root`` when it holds built dataset folders; otherwise :class:`UserError` naming the commands that build
    them (the Space only reads folders, it never builds)."""
    if not dataset_folders(root):
        raise UserError(f"no built dataset folders in {root}: run `neurips26 build locus` (and the other "
                        "resources) there, or point NEURIPS26_DATA or --data at a folder holding them")
    return root


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
