"""The Datasets tab: read-only SQL over the built dataset folders, which the Space reads and never builds.

Nothing here touches Gradio, so the tests call these functions directly; ``tabs.py`` only wires them to components.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from neurips26.decoding import check_text
from neurips26.errors import UserError
from neurips26.sql import Limits, dataset_folders

from .sql_workers import SqlWorkers

MAX_SQL_ROWS = 500
MAX_SQL_CHARS = 20_000
SQL_WORKERS = 4  # queries running at once (worker processes, see sql_workers)
QUEUE_WAIT_S = 10.0  # how long a query waits for a worker before the visitor is told to retry
SQL_EVENTS = 16  # the Space's SQL event lets this many visitors in at once: they queue here, not in Gradio
SPACE_LIMITS = Limits(timeout_s=10.0, memory="1GB", threads=1, max_value_bytes=1_000_000,
                      max_result_bytes=64_000_000, public=True)
_pools: dict[Limits, SqlWorkers] = {}
_pools_lock = threading.Lock()

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

    At most :data:`SQL_WORKERS` queries run at once, each in a worker process under ``limits`` (time, memory
    capped for the whole process, one thread, the bytes of one value and of the result, only the dataset views:
    :mod:`.sql_workers`, :mod:`neurips26.sqlguard`); the row cap applies to the streamed result, the SQL runs as
    written. A query that waits for a worker stops the longest one past a second; a visitor who finds every worker
    busy for :data:`QUEUE_WAIT_S` is told so. The refusal or error message becomes the status.
    """
    empty = pl.DataFrame()
    if not isinstance(sql, str) or not sql.strip():
        return empty, "Write one SELECT, e.g. SELECT * FROM locus.sections LIMIT 10"
    if len(sql) > MAX_SQL_CHARS:
        return empty, f"error: the query is {len(sql):,} characters; the limit is {MAX_SQL_CHARS:,}"
    try:
        check_text(sql, "SQL")
        table = workers(limits).run(dataset_folders(data_root), sql, QUEUE_WAIT_S, max_rows)
    except UserError as exc:
        return empty, f"error: {exc}"
    frame = displayable(table)
    if frame.height > max_rows:
        return frame.head(max_rows), f"showing the first {max_rows} rows"
    return frame, f"{frame.height} row(s)"


def workers(limits: Limits = SPACE_LIMITS) -> SqlWorkers:
    """The worker pool of ``limits`` (one per distinct limits, started on first use)."""
    with _pools_lock:
        if limits not in _pools:
            _pools[limits] = SqlWorkers(limits, SQL_WORKERS)
        return _pools[limits]


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
