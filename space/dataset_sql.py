"""The Datasets tab: read-only SQL over the built dataset folders, which the Space reads and never builds.

Nothing here touches Gradio, so the tests call these functions directly; ``app.py`` only wires them to components.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from neurips26.errors import UserError
from neurips26.sql import QueryError, dataset_folders, run_query

MAX_SQL_ROWS = 500

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


def limited_sql(sql: str, max_rows: int = MAX_SQL_ROWS) -> str:
    """``sql`` wrapped so that at most ``max_rows + 1`` rows come back."""
    body = sql.strip().rstrip(";").strip()
    return f"SELECT * FROM (\n{body}\n) AS query LIMIT {max_rows + 1}"


def run_sql(sql: str, data_root: Path, max_rows: int = MAX_SQL_ROWS) -> tuple[pl.DataFrame, str]:
    """Run a read-only SELECT over the dataset views: (first ``max_rows`` rows, a one-line status).

    The refusal or error message of :func:`neurips26.sql.run_query` becomes the status.
    """
    empty = pl.DataFrame()
    if not sql.strip():
        return empty, "Write one SELECT, e.g. SELECT * FROM locus.sections LIMIT 10"
    try:
        folders = dataset_folders(data_root)
        try:
            table = run_query(limited_sql(sql, max_rows), folders)
        except QueryError:
            table = run_query(sql, folders)  # the error, or the result, of the query as written
    except QueryError as exc:
        return empty, f"error: {exc}"
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
