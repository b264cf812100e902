"""BM25 full-text search over a dataset's sections (DuckDB fts, loaded offline).

The index is a DuckDB file in the user cache, named after the digest of the
folder's manifest: built once, reused until the dataset is rebuilt. Section
numbers (``1-5.11``, ``8-101.05a``) in the query are matched exactly against the
``number`` column first, then against the text; the remaining words go to BM25.

The build runs DuckDB's ``create_fts_index`` (tokenizer, Porter stemmer, English stop words) and turns its
one-row-per-token tables into an inverted index: ``postings`` holds one row per (term, section) with that
term's BM25 weight in the section (k1 = 1.2, b = 0.75, the fts extension's ``match_bm25`` formula), sorted by
term, and ``refs`` one row per (section number, section) that names or cites it, sorted by number. A search reads
only the postings of its own terms (DuckDB skips the other row groups), sums them per section and joins the top
hits to ``docs``: the scores of ``match_bm25`` (to 1e-9) without scoring every section.

Each process opens an index once and keeps that read-only connection (one cursor per search, so threads may
search at once); a rebuilt folder has a new manifest digest, hence a new index and a new connection.

Concurrent first searches are safe: the index is built under a file lock (``<index>.lock``) into a file of
its own, checked (its tables answer and hold one row per section) and renamed into place; an index file that
fails that check (an interrupted or foreign write) is rebuilt. The temporary files of a build killed on the way
(``kill -9``: no cleanup runs) are removed by the next search (:mod:`neurips26.leftovers`).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb
import duckdb_extension_fts
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from .decoding import DecodingError, check_text
from .leftovers import remove_stale
from .settings import MANIFEST, cache_dir
from .sql import QueryError, shard_paths

NUMBER = re.compile(r"\b[0-9IVXivx]+(?:[-.][0-9A-Za-z]+)+\b|§\s*[\w.-]+")
INDEX_VERSION = 3  # bump when the index layout changes, so stale indexes are not reused
SNIPPET = 240  # characters of text shown with a hit
CITED_NUMBER = r"[0-9][0-9A-Za-z.-]*[0-9A-Za-z]"  # section numbers a text mentions, e.g. 8-101.05a
BM25_K1, BM25_B = 1.2, 0.75  # match_bm25's defaults
# Stored BM25 weights are rounded to multiples of 2^-32 (a change below 1e-9): their sums are then exact whatever
# the order DuckDB adds them in, so sections with the same text score the same and rank by section_id.
WEIGHT_SCALE = 2**32
# How indexes are opened for reading; one config for all, as DuckDB refuses a second in-process connection to a
# file opened with another configuration.
READ_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
# temporary files of a build (``.<index>.<pid>.building``, ``.scratch``, their ``.wal``): a killed build's are removed
LEFTOVER = re.compile(r"\.(?P<index>.+)\.(?P<pid>\d+)\.(?:building|scratch)(?:\.wal)?")
EXACT_WEIGHT = 1000  # per exact level: 2 (the section's own number) or 1 (its text cites it); outranks any BM25 score


def fts_extension() -> Path:
    """The fts extension file shipped by the duckdb-extension-fts package (same version as duckdb)."""
    path = Path(duckdb_extension_fts.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"
    if not path.is_file():
        raise QueryError(f"fts extension for duckdb {duckdb.__version__} not found at {path}: "
                         f"install duckdb-extension-fts=={duckdb.__version__}")
    return path


_digests: dict[tuple, str] = {}  # (manifest path, device, inode, size, mtime) -> digest: one hash per manifest


def index_path(folder: Path) -> Path:
    """Where the search index of ``folder`` lives: the cache, keyed by the digest of the folder's manifest."""
    manifest = Path(folder) / MANIFEST
    stat = manifest.stat()
    key = (str(manifest.resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        _digests[key] = hashlib.sha256(manifest.read_bytes()).hexdigest()[:16]
    return cache_dir() / "search" / f"{folder.name}-{_digests[key]}-v{INDEX_VERSION}.duckdb"


def ensure_index(folder: Path) -> Path:
    """Build the search index of ``folder`` unless a valid current one exists; return its path."""
    path = index_path(folder)
    if path.parent.is_dir():  # builds killed on the way, of any index
        remove_stale(path.parent.glob(".*"), LEFTOVER)
    shards = shard_paths(folder)
    if not shards.get("sections"):
        raise QueryError(f"{folder}: no 'sections' config to search")
    expected = sum(pq.ParquetFile(p).metadata.num_rows for p in shards["sections"])
    if index_ok(path, expected):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=600):
        if index_ok(path, expected):  # another process built it while this one waited
            return path
        # under the lock nothing else builds this index: any of its temporary files is a killed build's
        remove_stale(path.parent.glob(f".{path.name}.*"), LEFTOVER, also_own=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.building")
        scratch = path.with_name(f".{path.name}.{os.getpid()}.scratch")
        try:
            _build_index(tmp, scratch, shards)
            if not index_ok(tmp, expected):
                raise QueryError(f"the search index built for {folder} does not hold its {expected} sections")
            tmp.replace(path)
        finally:
            for leftover in (tmp, scratch):
                leftover.unlink(missing_ok=True)
                leftover.with_name(leftover.name + ".wal").unlink(missing_ok=True)
    return path


def index_ok(path: Path, sections: int) -> bool:
    """True when ``path`` is a complete search index of this layout with one ``docs`` row per section."""
    if not path.is_file():
        return False
    try:
        con = duckdb.connect(str(path), read_only=True, config=READ_CONFIG)
    except duckdb.Error:
        return False
    try:
        version, recorded = con.execute("SELECT version, sections FROM meta").fetchone()
        rows = con.execute("SELECT count(*) FROM docs").fetchone()[0]
        for table in ("postings", "vocab", "refs", "counties"):
            con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return version == INDEX_VERSION and rows == recorded == sections
    except (duckdb.Error, TypeError):  # a missing table, or no meta row
        return False
    finally:
        con.close()


def _files(paths: list[str]) -> str:
    """SQL string literals of ``paths``, comma-separated."""
    return ", ".join("'" + p.replace("'", "''") + "'" for p in paths)


def _build_index(path: Path, scratch: Path, shards: dict[str, list[str]]) -> None:
    """Write the index to ``path``; the fts extension's token tables live in ``scratch`` (deleted by the caller),
    so the index file holds only what searches read."""
    con = duckdb.connect(str(scratch), config={"autoinstall_known_extensions": False})
    try:
        con.execute(f"LOAD '{fts_extension()}'")
        con.execute(f"ATTACH {_files([str(path)])} AS ix")
        # docid: the section's place in section_id order, so that equal scores rank by section_id
        con.execute(f"""CREATE TABLE full_text AS
                        SELECT (row_number() OVER (ORDER BY section_id) - 1)::INTEGER AS docid,
                        section_id, jurisdiction_id, state, number, heading, text
                        FROM read_parquet([{_files(shards['sections'])}])""")
        con.execute("PRAGMA create_fts_index('full_text', 'docid', 'heading', 'text', "
                    "stemmer='porter', stopwords='english', overwrite=1)")
        fts = "fts_main_full_text"
        tokenize = con.execute("SELECT macro_definition FROM duckdb_functions() "
                               f"WHERE schema_name = '{fts}' AND function_name = 'tokenize'").fetchone()[0]
        con.execute(f"CREATE MACRO ix.tokenize(s) AS {tokenize}")  # the query side splits words as the index did
        con.execute(f"CREATE TABLE ix.vocab AS SELECT term, termid::INTEGER AS termid FROM {fts}.dict ORDER BY term")
        # match_bm25's per-term score, written as that macro writes it (same operations, same literals), rounded
        k, b = BM25_K1, BM25_B
        con.execute(f"""CREATE TABLE ix.postings AS
            WITH tf AS (SELECT termid, docid, count(*) AS tf FROM {fts}.terms GROUP BY termid, docid)
            SELECT tf.termid::INTEGER AS termid, d.name::INTEGER AS docid,
                   round(log((((s.num_docs - dict.df) + 0.5) / (dict.df + 0.5)) + 1)
                   * ((tf.tf * ({k} + 1)) / (tf.tf + ({k} * ((1 - {b}) + ({b} * (d.len / s.avgdl))))))
                   * {WEIGHT_SCALE}) / {WEIGHT_SCALE} AS weight
            FROM tf JOIN {fts}.docs d USING (docid) JOIN {fts}.dict dict USING (termid), {fts}.stats s
            ORDER BY termid, docid""")
        con.execute(f"""CREATE TABLE ix.docs AS SELECT docid, section_id, jurisdiction_id, state, number, heading,
                        left(text, {SNIPPET}) AS snippet FROM full_text ORDER BY docid""")
        # 2: the section's own number; 1: a number its text cites
        con.execute(f"""CREATE TABLE ix.refs AS
            SELECT number, docid, max(exact)::TINYINT AS exact FROM (
                SELECT number, docid, 2 AS exact FROM full_text
                UNION ALL
                SELECT unnest(list_distinct(regexp_extract_all(text, '{CITED_NUMBER}'))), docid, 1 FROM full_text)
            WHERE number IS NOT NULL GROUP BY number, docid ORDER BY number, docid""")
        counties = shards.get("counties")
        con.execute("CREATE TABLE ix.counties AS " + (
            f"SELECT county_fips, jurisdiction_ids FROM read_parquet([{_files(counties)}])" if counties else
            "SELECT NULL::VARCHAR AS county_fips, NULL::VARCHAR[] AS jurisdiction_ids WHERE FALSE"))
        con.execute(f"CREATE TABLE ix.meta AS SELECT {INDEX_VERSION} AS version, count(*) AS sections FROM ix.docs")
        con.execute("DETACH ix")
    finally:
        con.close()


@dataclass
class _Open:
    path: Path
    identity: tuple[int, int]  # (device, inode) of the index file when it was opened
    con: duckdb.DuckDBPyConnection


_open: dict[str, _Open] = {}  # resolved folder -> its index, open read-only for this process
_open_lock = threading.Lock()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def index_cursor(folder: Path) -> duckdb.DuckDBPyConnection:
    """A cursor (close it) on the current search index of ``folder``, built if needed.

    The index is opened once per process, read-only, with the fts extension loaded; every call gets a cursor of
    its own, so threads search at once. The connection is reopened when the folder's manifest changed (a rebuilt
    folder: another index) or the index file was replaced or removed; the old one closes with its last cursor.
    """
    path = index_path(folder)
    key = str(Path(folder).resolve())
    with _open_lock:
        entry = _open.get(key)
        if entry is None or entry.path != path or entry.identity != _identity(path):
            path = ensure_index(folder)
            con = duckdb.connect(str(path), read_only=True, config=READ_CONFIG)
            con.execute(f"LOAD '{fts_extension()}'")
            entry = _open[key] = _Open(path, _identity(path) or (0, 0), con)
        return entry.con.cursor()


@dataclass
class Filters:
    """Optional filters of a search: a USPS state code and a five-digit county FIPS code."""

    state: str | None = None
    county: str | None = None  # five-digit FIPS


def search(folder: Path, query: str, filters: Filters | None = None, limit: int = 10) -> pa.Table:
    """Best sections for ``query``: exact section-number hits first (own number, then cited), then BM25.

    A section's score is its BM25 score for the query's words (what ``match_bm25`` of the fts extension gives)
    plus 2000 when its own number is one in the query, or 1000 when its text cites one; equal scores rank by
    section_id.
    """
    filters = filters or Filters()
    try:
        check_text(query, "search query")
    except DecodingError as exc:
        raise QueryError(str(exc)) from None
    if not query.strip():
        raise QueryError("empty search query")
    numbers = [n.lstrip("§").strip().rstrip(".") for n in NUMBER.findall(query)]
    words = NUMBER.sub(" ", query).strip()
    hits, args = [], []  # one row per (section, matching term or number)
    if words or not numbers:
        hits.append("SELECT docid, weight AS bm25, 0::TINYINT AS exact FROM postings WHERE termid IN "
                    "(SELECT termid FROM vocab WHERE term IN (SELECT stem(unnest(tokenize(?)), 'porter')))")
        args.append(words or query)
    if numbers:
        hits.append("SELECT docid, NULL::DOUBLE AS bm25, exact FROM refs WHERE number IN (SELECT unnest(?::VARCHAR[]))")
        args.append(numbers)
    with index_cursor(folder) as con:
        where = []
        if filters.state:
            where.append("state = ?")
            args.append(filters.state.upper())
        if filters.county:
            if not con.execute("SELECT count(*) FROM counties WHERE county_fips = ?", [filters.county]).fetchone()[0]:
                raise QueryError(f"county {filters.county!r} has no code in {folder.name} "
                                 "(use a five-digit FIPS code, e.g. 13015)")
            where.append("jurisdiction_id IN (SELECT unnest(jurisdiction_ids) FROM counties WHERE county_fips = ?)")
            args.append(filters.county)
        keep = f"WHERE docid IN (SELECT docid FROM docs WHERE {' AND '.join(where)})" if where else ""
        sql = f"""
            WITH hits AS ({' UNION ALL '.join(hits)}),
            top AS (SELECT docid, coalesce(sum(bm25), 0) + {EXACT_WEIGHT} * max(exact) AS score
                    FROM hits {keep} GROUP BY docid ORDER BY score DESC, docid LIMIT ?)
            SELECT d.section_id, d.jurisdiction_id, d.state, d.number, d.heading, d.snippet, top.score
            FROM top JOIN docs d USING (docid)
            ORDER BY top.score DESC, top.docid"""
        return con.execute(sql, [*args, limit]).to_arrow_table()
