"""BM25 full-text search over a dataset's sections (DuckDB fts, loaded offline).

The index is a DuckDB file in the user cache, named after the digest of the
folder's manifest: built once, reused until the dataset is rebuilt. Section
numbers (``1-5.11``, ``8-101.05a``) in the query are matched exactly against the
``number`` column first, then against the text; the remaining words go to BM25.

Concurrent first searches are safe: the index is built under a file lock (``<index>.lock``) into a file of
its own, checked (its tables answer and hold one row per section) and renamed into place; an index file that
fails that check (an interrupted or foreign write) is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import duckdb_extension_fts
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from .settings import MANIFEST, cache_dir
from .sql import QueryError, shard_paths

NUMBER = re.compile(r"\b[0-9IVXivx]+(?:[-.][0-9A-Za-z]+)+\b|§\s*[\w.-]+")
INDEX_VERSION = 2  # bump when the index layout changes, so stale indexes are not reused
SNIPPET = 240  # characters of text shown with a hit
CITED_NUMBER = r"[0-9][0-9A-Za-z.-]*[0-9A-Za-z]"  # section numbers a text mentions, e.g. 8-101.05a


def fts_extension() -> Path:
    """The fts extension file shipped by the duckdb-extension-fts package (same version as duckdb)."""
    path = Path(duckdb_extension_fts.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"
    if not path.is_file():
        raise QueryError(f"fts extension for duckdb {duckdb.__version__} not found at {path}: "
                         f"install duckdb-extension-fts=={duckdb.__version__}")
    return path


def index_path(folder: Path) -> Path:
    digest = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()[:16]
    return cache_dir() / "search" / f"{folder.name}-{digest}-v{INDEX_VERSION}.duckdb"


def ensure_index(folder: Path) -> Path:
    """Build the search index of ``folder`` unless a valid current one exists; return its path."""
    path = index_path(folder)
    shards = shard_paths(folder).get("sections")
    if not shards:
        raise QueryError(f"{folder}: no 'sections' config to search")
    expected = sum(pq.ParquetFile(p).metadata.num_rows for p in shards)
    if index_ok(path, expected):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=600):
        if index_ok(path, expected):  # another process built it while this one waited
            return path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.building")
        tmp.unlink(missing_ok=True)
        try:
            _build_index(tmp, shards)
            if not index_ok(tmp, expected):
                raise QueryError(f"the search index built for {folder} does not hold its {expected} sections")
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    return path


def index_ok(path: Path, sections: int) -> bool:
    """True when ``path`` is a search index that opens, has its BM25 index and one ``docs`` row per section."""
    if not path.is_file():
        return False
    try:
        con = duckdb.connect(str(path), read_only=True, config={"autoinstall_known_extensions": False})
    except duckdb.Error:
        return False
    try:
        rows = con.execute("SELECT count(*) FROM docs").fetchone()[0]
        stats = con.execute("SELECT count(*) FROM fts_main_full_text.docs").fetchone()[0]
        return rows == sections and stats == sections
    except duckdb.Error:
        return False
    finally:
        con.close()


def _build_index(path: Path, shards: list[str]) -> None:
    con = duckdb.connect(str(path), config={"autoinstall_known_extensions": False})
    try:
        con.execute(f"LOAD '{fts_extension()}'")
        files = ", ".join("'" + p.replace("'", "''") + "'" for p in shards)
        con.execute(f"CREATE TABLE full_text AS SELECT section_id, heading, text FROM read_parquet([{files}])")
        con.execute("PRAGMA create_fts_index('full_text', 'section_id', 'heading', 'text', "
                    "stemmer='porter', stopwords='english', overwrite=1)")
        # The BM25 index lives in its own schema; keep only what results show, not a second copy of the text.
        con.execute(f"""CREATE TABLE docs AS SELECT section_id, jurisdiction_id, state, number, heading,
                        left(text, {SNIPPET}) AS snippet,
                        list_distinct(regexp_extract_all(text, '{CITED_NUMBER}')) AS cited
                        FROM read_parquet([{files}])""")
        con.execute("DROP TABLE full_text")
        con.execute("CHECKPOINT")
    finally:
        con.close()


@dataclass
class Filters:
    """Optional filters of a search: a USPS state code and a five-digit county FIPS code."""

    state: str | None = None
    county: str | None = None  # five-digit FIPS


def search(folder: Path, query: str, filters: Filters | None = None, limit: int = 10) -> pa.Table:
    """Best sections for ``query``: exact section-number hits first, then BM25."""
    filters = filters or Filters()
    if not query.strip():
        raise QueryError("empty search query")
    con = duckdb.connect(str(ensure_index(folder)), read_only=True,
                         config={"autoinstall_known_extensions": False})
    try:
        con.execute(f"LOAD '{fts_extension()}'")
        where, params = ["TRUE"], []
        if filters.state:
            where.append("d.state = ?")
            params.append(filters.state.upper())
        if filters.county:
            counties = shard_paths(folder).get("counties", [])
            files = ", ".join("'" + p.replace("'", "''") + "'" for p in counties)
            known = con.execute(f"SELECT count(*) FROM read_parquet([{files}]) WHERE county_fips = ?",
                                [filters.county]).fetchone()[0] if counties else 0
            if not known:
                raise QueryError(f"county {filters.county!r} has no code in {folder.name} "
                                 "(use a five-digit FIPS code, e.g. 13015)")
            where.append(f"d.jurisdiction_id IN (SELECT unnest(jurisdiction_ids) FROM read_parquet([{files}]) "
                         "WHERE county_fips = ?)")
            params.append(filters.county)
        numbers = [n.lstrip("§").strip().rstrip(".") for n in NUMBER.findall(query)]
        words = NUMBER.sub(" ", query).strip()
        # exact: 2 = the section's own number, 1 = its text cites the number; only when the query has numbers
        exact = ("CASE WHEN d.number IN (SELECT unnest(?::VARCHAR[])) THEN 2 "
                 "WHEN list_has_any(d.cited, ?::VARCHAR[]) THEN 1 ELSE 0 END") if numbers else "0"
        bm25 = "fts_main_full_text.match_bm25(section_id, ?)" if words or not numbers else "NULL"
        sql = f"""
            SELECT d.section_id, d.jurisdiction_id, d.state, d.number, d.heading, d.snippet,
                   coalesce(d.bm25, 0) + 1000 * d.exact AS score
            FROM (SELECT *, {exact} AS exact, {bm25} AS bm25 FROM docs d) d
            WHERE {' AND '.join(where)} AND (d.exact > 0 OR d.bm25 IS NOT NULL)
            ORDER BY score DESC, d.section_id
            LIMIT ?"""
        args = ([numbers, numbers] if numbers else []) + ([words or query] if words or not numbers else [])
        args += [*params, limit]
        return con.execute(sql, args).to_arrow_table()
    finally:
        con.close()
