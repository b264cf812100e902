"""DuckDB over Hub-ready folders: one view ``<resource>.<config>`` per config, read-only.

User SQL runs on an in-memory database whose only tables are views over the
Parquet shards. Before the query runs, external access is switched off and the
configuration locked (no INSTALL/LOAD, no ATTACH, no reads elsewhere), and the
statement must be a single SELECT, which also rules out ``COPY ... TO``: a query
can neither write nor read anything but the dataset folders.

Every query runs under :class:`Limits`: a statement timeout (a timer thread interrupts the query), a
memory limit and thread count for DuckDB, a spill folder inside a private (0700) temporary directory removed
afterwards, and a row cap applied while the result streams back (the SQL is never rewritten), with optional caps on
the bytes of one value and of the whole result. ``Limits(public=True)`` (the Space) also lets the SQL name only the
dataset views (:mod:`neurips26.sqlguard`: no settings or catalog, so no server path) and replaces server paths in
error messages. The SQL must be UTF-8 text (:mod:`neurips26.decoding`). A PIVOT whose columns come from the data is
one statement, though DuckDB expands it into two.

:func:`run_query` opens a connection for one query; a :class:`Session` keeps one open for many (point lookups
then skip creating the views and re-reading the Parquet footers), each query still under the limits.
"""

from __future__ import annotations

import json
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .decoding import DecodingError, check_text
from .errors import UserError
from .settings import MANIFEST
from .sqlguard import RefusedQuery, check_public, redact


class QueryError(UserError):
    """The SQL was refused or failed (the message says why)."""


@dataclass(frozen=True)
class Limits:
    """What one query may use: seconds, DuckDB memory and threads, rows and bytes returned (None: all)."""

    timeout_s: float | None = 300.0
    memory: str = "4GB"
    threads: int = 2
    max_rows: int | None = None
    max_value_bytes: int | None = None  # the largest one text or binary value of a result may be
    max_result_bytes: int | None = None  # the most bytes a result may hold (counted as it streams back)
    public: bool = False  # SQL from the public: only the dataset views, no settings or catalog (sqlguard)


def dataset_folders(root: Path) -> dict[str, Path]:
    """Resource name -> folder, for every Hub-ready folder directly under ``root`` (or ``root`` itself).

    Hidden folders (builds in progress, ``.<name>.partial-<pid>``) are never datasets."""
    root = Path(root)
    candidates = [root] if (root / MANIFEST).is_file() else sorted(root.iterdir()) if root.is_dir() else []
    return {p.name: p.resolve() for p in candidates if (p / MANIFEST).is_file() and not p.name.startswith(".")}


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


def locked_connection(folders: dict[str, Path], limits: Limits = Limits(),
                      temp_dir: Path | None = None) -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with the views, the limits set, external access off and configuration locked."""
    if not folders:
        raise QueryError("no dataset folders found: build one first (neurips26 build locus)")
    config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
              "memory_limit": limits.memory, "threads": limits.threads}
    if temp_dir is not None:
        config["temp_directory"] = str(temp_dir)
    try:
        con = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        raise QueryError(f"bad limits (memory {limits.memory!r}, threads {limits.threads}): "
                         f"{str(exc).splitlines()[0]}") from None
    allowed = ", ".join("'" + str(f).replace("'", "''") + "/'" for f in folders.values())
    con.execute(f"SET allowed_directories = [{allowed}]")
    con.execute("SET python_enable_replacements = false")  # a table name never reaches a Python variable
    con.execute("SET parquet_metadata_cache = true")  # footers read once per connection, not once per query
    create_views(con, folders)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


class Session:
    """One locked connection over the dataset views, reused for many queries; each runs under ``limits``.

    Use it as a context manager (or call :meth:`close`): closing removes its private spill folder. Queries may
    come from several threads at once (each runs on a cursor of its own, with its own timeout).
    """

    def __init__(self, folders: dict[str, Path], limits: Limits = Limits()) -> None:
        self.limits = limits
        self.views = [(name, config) for name, folder in folders.items() for config in shard_paths(folder)]
        self._private = tempfile.TemporaryDirectory(prefix="neurips26-sql-")  # mode 0700: only this user
        self._paths = [*(str(f) for f in folders.values()), self._private.name]
        self._running: dict[int, tuple[duckdb.DuckDBPyConnection, list[str]]] = {}  # thread id -> (cursor, why)
        try:
            self._con = locked_connection(folders, limits, Path(self._private.name) / "spill")
        except BaseException:
            self._private.cleanup()
            raise

    def query(self, sql: str) -> pa.Table:
        """Run one read-only SELECT over the dataset views.

        With ``limits.max_rows`` the result holds at most ``max_rows + 1`` rows (one more than asked, so a caller
        can tell that rows were cut). A query still running after ``limits.timeout_s`` is stopped
        (:class:`QueryError`); the session stays usable.
        """
        limits = self.limits
        try:
            check_text(sql, "SQL")
        except DecodingError as exc:
            raise QueryError(str(exc)) from None
        with self._con.cursor() as con:
            timer = threading.Timer(limits.timeout_s, con.interrupt) if limits.timeout_s else None
            stopped: list[str] = []
            self._running[threading.get_ident()] = (con, stopped)
            try:
                _check_statement(con, sql)
                if limits.public:
                    check_public(con, sql, self.views)
                if timer is not None:
                    timer.start()
                reader = con.execute(sql).to_arrow_reader(2048)
                return _collect(reader, limits)
            except RefusedQuery as exc:
                raise QueryError(str(exc)) from None
            except duckdb.InterruptException:
                if stopped:
                    raise QueryError(stopped[0]) from None
                raise QueryError(f"query stopped: it ran longer than the {limits.timeout_s:g} s limit") from None
            except (duckdb.OutOfMemoryException, MemoryError):
                raise QueryError(f"query stopped: it needed more than the {limits.memory} memory limit") from None
            except duckdb.Error as exc:
                message = str(exc).splitlines()[0]
                raise QueryError(redact(message, self._paths) if limits.public else message) from None
            finally:
                self._running.pop(threading.get_ident(), None)
                if timer is not None:
                    timer.cancel()

    def stop(self, why: str) -> None:
        """Interrupt every query running on this session now; each fails with ``why``."""
        for con, stopped in list(self._running.values()):
            stopped.append(why)
            con.interrupt()

    def close(self) -> None:
        """Close the connection and remove the spill folder."""
        self._con.close()
        self._private.cleanup()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_query(sql: str, folders: dict[str, Path], limits: Limits = Limits()) -> pa.Table:
    """Run one read-only SELECT over the dataset views under ``limits``, on a connection of its own.

    With ``limits.max_rows`` the result holds at most ``max_rows + 1`` rows (one more than asked, so a caller
    can tell that rows were cut). A query still running after ``limits.timeout_s`` is stopped
    (:class:`QueryError`). Many queries: :class:`Session`.
    """
    with Session(folders, limits) as session:
        return session.query(sql)


def split_statements(text: str) -> list[str]:
    """The statements of a SQL script, split by DuckDB's parser (a ``;`` inside a string does not split)."""
    with duckdb.connect(":memory:") as con:
        try:
            return [s.query.strip() for s in con.extract_statements(text)]
        except duckdb.Error as exc:
            raise QueryError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None


def _check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    # DuckDB expands a PIVOT whose columns come from the data into statements of its own (an ENUM of the values,
    # then the SELECT); they carry no text. What the user wrote is the statements with text.
    written = [s for s in statements if s.query.strip()]
    generated = [s for s in statements if not s.query.strip()]
    if not (len(written) == 1 and not generated) and not (generated and not written):
        raise QueryError(f"expected exactly one statement, got {len(written) or len(statements)}")
    if statements[-1].type != duckdb.StatementType.SELECT or any(
            s.type != duckdb.StatementType.CREATE for s in generated[:-1]):
        raise QueryError(f"only SELECT queries are allowed, not {statements[-1].type.name}")


def _collect(reader: pa.RecordBatchReader, limits: Limits) -> pa.Table:
    """The reader's batches up to ``max_rows + 1`` rows (all of them when ``max_rows`` is None); a value over
    ``max_value_bytes`` or a result over ``max_result_bytes`` stops the query (:class:`QueryError`)."""
    max_rows = limits.max_rows
    batches, rows, size = [], 0, 0
    for batch in reader:
        if max_rows is not None and rows + batch.num_rows > max_rows + 1:
            batch = batch.slice(0, max_rows + 1 - rows)
        _check_values(batch, limits.max_value_bytes)
        size += batch.nbytes
        if limits.max_result_bytes is not None and size > limits.max_result_bytes:
            raise QueryError(f"query stopped: its result passed {limits.max_result_bytes:,} bytes, the limit here; "
                             "select fewer rows or columns")
        batches.append(batch)
        rows += batch.num_rows
        if max_rows is not None and rows > max_rows:
            break
    return pa.Table.from_batches(batches, schema=reader.schema)


def _check_values(batch: pa.RecordBatch, limit: int | None) -> None:
    """:class:`QueryError` naming the column when one text or binary value of ``batch`` is over ``limit`` bytes."""
    if limit is None:
        return
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
                or pa.types.is_large_binary(kind) or pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
            longest = pc.max(pc.binary_length(column)).as_py() or 0
        elif pa.types.is_nested(kind) and batch.num_rows:
            longest = column.nbytes // batch.num_rows  # a list or struct: its bytes per row
        else:
            continue
        if longest > limit:
            raise QueryError(f"query stopped: a value of column {name!r} is {longest:,} bytes, over the "
                             f"{limit:,}-byte limit on one value here")
