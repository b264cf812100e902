"""What SQL from the public (the Space's visitors) may name: the dataset views, and nothing about the server.

The sandbox of :mod:`neurips26.sql` already stops reading or writing anything but the dataset folders. A public
query must also not learn where they are: settings (``current_setting('allowed_directories')``), catalog
functions (``duckdb_views()`` holds each view's ``read_parquet`` paths, ``duckdb_temporary_files()``...) and
catalog views (``information_schema``, ``sqlite_master``) all show server paths. :func:`check_public` parses the
statement with DuckDB's own parser (``json_serialize_sql``) and allows, as tables, only the dataset views, CTEs,
subqueries, ``VALUES``, ``DESCRIBE``/``SUMMARIZE``/``SHOW TABLES`` and the table functions of :data:`TABLE_FUNCTIONS`;
and, as functions, everything but those of :data:`HIDDEN_FUNCTIONS`, unqualified. :func:`redact` is the second
net: a server path in an error message is replaced by ``<data>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from . import jsonfile
from .errors import UserError

TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
# scalar functions that read settings, the environment or the catalog
HIDDEN_FUNCTIONS = frozenset({"current_setting", "getenv", "getvariable", "current_schemas", "which_secret",
                              "query", "query_table", "sql_auto_complete"})
SAFE_SHOWS = frozenset({"", '"tables"'})  # DESCRIBE/SUMMARIZE of a query or view; SHOW TABLES


class RefusedQuery(UserError):
    """A public query that names something other than the dataset views (the message says what)."""


def check_public(con: duckdb.DuckDBPyConnection, sql: str, views: Iterable[tuple[str, str]]) -> None:
    """Refuse ``sql`` (:class:`RefusedQuery`) unless every table it reads is a dataset view ``(schema, name)``
    (or a CTE, subquery, ``VALUES``, an allowed table function) and it calls no function of
    :data:`HIDDEN_FUNCTIONS` nor any function by a qualified name."""
    try:
        tree = jsonfile.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0], "SQL", None, 500)
    except jsonfile.JsonFileError:
        raise RefusedQuery("the query is nested too deeply to check") from None
    if tree.get("error"):
        message = str(tree.get("error_message", ""))
        if "Only SELECT" in message:  # a PIVOT whose columns come from the data runs two statements
            raise RefusedQuery("here a PIVOT must list its columns, e.g. PIVOT locus.sections ON state IN "
                               "('GA', 'AL') USING count(*)")
        raise RefusedQuery(f"SQL does not parse: {message.splitlines()[0] if message else 'unknown error'}")
    allowed = {(s.lower(), n.lower()) for s, n in views}
    ctes = {str(key).lower() for node in _nodes(tree) for key in _cte_names(node)}
    # a CTE named like a catalog view (sqlite_master, pg_settings...) would let the name reach the catalog where
    # the CTE is out of scope: such names are refused, so an unqualified name is a CTE or nothing
    catalog = {row[0] for row in con.execute("SELECT lower(view_name) FROM duckdb_views() UNION "
                                             "SELECT lower(table_name) FROM duckdb_tables()").fetchall()}
    if ctes & catalog:
        raise RefusedQuery(f"name the CTE {sorted(ctes & catalog)[0]!r} something else: that is a catalog name")
    for node in _nodes(tree):
        kind = node.get("type")
        if "sample" in node and kind == "BASE_TABLE":
            schema, name = str(node.get("schema_name", "")).lower(), str(node.get("table_name", "")).lower()
            if node.get("catalog_name") or ((schema, name) not in allowed and not (not schema and name in ctes)):
                shown = ".".join(p for p in (node.get("catalog_name"), schema, name) if p)
                raise RefusedQuery(f"table {shown!r} is not available here; the tables are the dataset views: "
                                   + ", ".join(f"{s}.{n}" for s, n in sorted(allowed)))
        elif "sample" in node and kind == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name not in TABLE_FUNCTIONS:
                raise RefusedQuery(f"table function {name}() is not available here (only "
                                   f"{', '.join(sorted(TABLE_FUNCTIONS))})")
        elif "sample" in node and kind == "SHOW_REF" and node.get("table_name", "") not in SAFE_SHOWS:
            raise RefusedQuery("only SHOW TABLES, DESCRIBE and SUMMARIZE are available here")
        elif node.get("class") == "FUNCTION":
            name = str(node.get("function_name", "")).lower()
            if name in HIDDEN_FUNCTIONS or name.startswith(("duckdb_", "pragma_")):
                raise RefusedQuery(f"function {name}() is not available here")
            if node.get("schema") or node.get("catalog"):
                raise RefusedQuery(f"call {name}() by its plain name here, not a qualified one")


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object of the parse tree, depth first (iteratively: a deep query must not recurse)."""
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _cte_names(node: dict[str, Any]) -> list[str]:
    cte_map = node.get("cte_map")
    return [entry.get("key", "") for entry in cte_map.get("map", [])] if isinstance(cte_map, dict) else []


def redact(text: str, paths: Iterable[Path | str]) -> str:
    """``text`` with every one of ``paths`` (longest first) replaced by ``<data>``."""
    for path in sorted({str(p) for p in paths if str(p) not in ("", "/")}, key=len, reverse=True):
        text = text.replace(path, "<data>")
    return text
