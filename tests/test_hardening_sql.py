"""Round 2 of the hardening, SQL: one large value past the Space's limits and slow queries starving quick ones
(hole 3), server paths shown by settings and catalog functions (hole 9), PIVOT refused (hole 11)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from neurips26.space import dataset_sql
from neurips26.space.sql_workers import SqlWorkers, memory_bytes

from neurips26.sql import Limits, QueryError, Session, dataset_folders
from tests.hardening_fixtures import tiny_folder

PUBLIC = Limits(timeout_s=10.0, memory="256MB", threads=1, max_value_bytes=100_000, max_result_bytes=1_000_000,
                public=True)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sql")
    tiny_folder(root)
    return root


@pytest.fixture(scope="module")
def pool() -> SqlWorkers:
    workers = SqlWorkers(PUBLIC, workers=2, quick_s=0.5)
    yield workers
    workers.close()


# -- hole 3 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", ["SELECT repeat('x', 600000000) AS s", "SELECT length(repeat('x', 1500000000))"])
def test_one_huge_value_is_refused_by_the_worker_memory_cap(root: Path, pool: SqlWorkers, sql: str) -> None:
    with pytest.raises(QueryError, match="query stopped: it needed more than the 256MB memory limit"):
        pool.run(dataset_folders(root), sql, wait_s=10)
    assert pool.run(dataset_folders(root), "SELECT 42 AS x", wait_s=10).to_pylist() == [{"x": 42}]  # still serving


def test_a_value_over_the_value_limit_is_named(root: Path, pool: SqlWorkers) -> None:
    with pytest.raises(QueryError, match=r"a value of column 's' is 200,000 bytes, over the 100,000-byte limit"):
        pool.run(dataset_folders(root), "SELECT repeat('x', 200000) AS s", wait_s=10)
    with pytest.raises(QueryError, match="its result passed 1,000,000 bytes"):
        pool.run(dataset_folders(root), "SELECT repeat('x', 90000) AS s FROM range(50)", wait_s=10)


def test_slow_queries_yield_their_workers_to_a_quick_one(root: Path, pool: SqlWorkers) -> None:
    folders, answers = dataset_folders(root), {}
    started = threading.Barrier(3)

    def slow(i: int) -> None:
        started.wait()
        try:
            answers[i] = pool.run(folders, "SELECT count(*) FROM range(100000000000)", wait_s=10).num_rows
        except QueryError as exc:
            answers[i] = str(exc)

    threads = [threading.Thread(target=slow, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    started.wait()
    while sum(1 for w in pool._busy) < 2:  # both slow queries hold a worker
        threading.Event().wait(0.02)
    assert pool.run(folders, "SELECT 7 AS x", wait_s=30).to_pylist() == [{"x": 7}]  # not "every worker is busy"
    for thread in threads:
        thread.join()
    stopped = [a for a in answers.values() if isinstance(a, str) and "other queries were waiting" in a]
    assert len(stopped) >= 1, answers


def test_run_sql_uses_the_worker_pool_and_its_limits(root: Path) -> None:
    frame, status = dataset_sql.run_sql("SELECT repeat('x', 2000000) AS s", root)
    assert frame.is_empty() and "over the 1,000,000-byte limit on one value" in status
    assert memory_bytes("1GB") == 10**9 and memory_bytes("512MiB") == 2**29


# -- hole 9 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "SELECT current_setting('allowed_directories')", "SELECT current_setting('temp_directory')",
    "SELECT * FROM duckdb_settings()", "SELECT sql FROM duckdb_views()", "SELECT * FROM duckdb_temporary_files()",
    "SELECT * FROM information_schema.views", "SELECT * FROM sqlite_master", "SELECT * FROM pg_settings",
    "SELECT system.main.current_setting('allowed_directories')",
    "WITH sqlite_master AS (SELECT 1) SELECT * FROM (SELECT 1), sqlite_master",
    "SELECT * FROM (SELECT 1) t, (WITH pg_settings AS (SELECT 1) SELECT 1) u, pg_settings",
    "SUMMARIZE SELECT * FROM duckdb_settings()", "SELECT * FROM read_parquet('/etc/*')",
    "PIVOT duckdb_settings() ON name USING first(value)"])
def test_public_sql_never_shows_a_server_path(root: Path, sql: str) -> None:
    with Session(dataset_folders(root), PUBLIC) as session, pytest.raises(QueryError) as refused:
        session.query(sql)
    assert str(root) not in str(refused.value) and "/tmp" not in str(refused.value)


def test_public_sql_still_reads_the_views(root: Path) -> None:
    with Session(dataset_folders(root), PUBLIC) as session:
        assert session.query("SELECT count(*) AS n FROM locus.sections").to_pylist() == [{"n": 3}]
        assert session.query("WITH t AS (SELECT * FROM locus.sections) SELECT count(*) AS n FROM t"
                             ).to_pylist() == [{"n": 3}]
        assert session.query("DESCRIBE locus.sections").num_rows == 6
        assert session.query("SELECT * FROM range(3)").num_rows == 3


# -- hole 11 ---------------------------------------------------------------------------------------------------

def test_pivot_is_one_statement(root: Path) -> None:
    with Session(dataset_folders(root), Limits()) as session:
        rows = session.query("PIVOT locus.sections ON state USING count(*) GROUP BY jurisdiction_id "
                             "ORDER BY jurisdiction_id").to_pylist()
        assert rows == [{"jurisdiction_id": "a", "GA": 2, "WI": 0}, {"jurisdiction_id": "b", "GA": 0, "WI": 1}]
        with pytest.raises(QueryError, match="expected exactly one statement, got 2"):
            session.query("SELECT 1; SELECT 2")
        with pytest.raises(QueryError, match="expected exactly one statement"):
            session.query("CREATE TYPE e AS ENUM ('a'); SELECT 1")
    with Session(dataset_folders(root), PUBLIC) as session:
        assert session.query("PIVOT locus.sections ON state IN ('GA', 'WI') USING count(*) GROUP BY "
                             "jurisdiction_id ORDER BY jurisdiction_id").num_rows == 2
        with pytest.raises(QueryError, match="here a PIVOT must list its columns"):
            session.query("PIVOT locus.sections ON state USING count(*)")
