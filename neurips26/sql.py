"""DuckDB over Hub-ready folders: one view ``<resource>.<config>`` per config, read-only.

User SQL runs on an in-memory database whose only tables are views over the
Parquet shards. Before the query runs, external access is switched off and the
configuration locked (no INSTALL/LOAD, no ATTACH, no reads elsewhere), and the
statement must be a single SELECT, which also rules out ``COPY ... TO``: a query
can neither write nor read anything but the dataset folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa

from .errors import UserError
from .settings import MANIFEST


class QueryError(UserError):
    """The SQL was refused or failed (the message says why)."""


def dataset_folders(root: Path) -> dict[str, Path]:
    """Resource name -> folder, for every Hub-ready folder directly under ``root`` (or ``root`` itself)."""
    root = Path(root)
    candidates = [root] if (root / MANIFEST).is_file() else sorted(root.iterdir()) if root.is_dir() else []
    return {p.name: p.resolve() for p in candidates if (p / MANIFEST).is_file()}


def shard_paths(folder: Path) -> dict[str, list[str]]:
    """Config name -> absolute shard paths, from the folder's manifest."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return {config: [str(folder / s["path"]) for shards in splits.values() for s in shards]
            for config, splits in manifest["configs"].items()}


def create_views(con: duckdb.DuckDBPyConnection, folders: dict[str, Path]) -> None:
    for name, folder in folders.items():
        con.execute(f'CREATE SCHEMA IF NOT EXISTS "{name}"')
        for config, paths in shard_paths(folder).items():
            files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
            con.execute(f'CREATE OR REPLACE VIEW "{name}"."{config}" AS SELECT * FROM read_parquet([{files}])')


def locked_connection(folders: dict[str, Path]) -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with the views, external access off and configuration locked."""
    if not folders:
        raise QueryError("no dataset folders found: build one first (neurips26 build locus)")
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                              "autoload_known_extensions": False})
    allowed = ", ".join("'" + str(f).replace("'", "''") + "/'" for f in folders.values())
    con.execute(f"SET allowed_directories = [{allowed}]")
    create_views(con, folders)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def run_query(sql: str, folders: dict[str, Path]) -> pa.Table:
    """Run one read-only SELECT over the dataset views."""
    con = locked_connection(folders)
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"SQL does not parse: {exc}") from None
    if len(statements) != 1:
        raise QueryError(f"expected exactly one statement, got {len(statements)}")
    if statements[0].type != duckdb.StatementType.SELECT:
        raise QueryError(f"only SELECT queries are allowed, not {statements[0].type.name}")
    try:
        return con.execute(sql).to_arrow_table()
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    finally:
        con.close()
