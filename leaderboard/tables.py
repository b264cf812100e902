"""The store's database layout: tables, statuses, the rows one transaction writes, and the queries that read
entries back. :class:`.store.Store` owns the connections; everything here runs inside one of its transactions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa

from .modelinfo import clean_text, format_problems

DB_NAME = "leaderboard.duckdb"
SMALL_INSERT = 64  # rows; bigger inserts go through Arrow
PENDING, VALID, UNRANKED, REJECTED = "PENDING", "VALID", "UNRANKED", "REJECTED"

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id BIGINT NOT NULL, submitted_at TIMESTAMP NOT NULL,
    model_id VARCHAR, revision VARCHAR, precision VARCHAR, params BIGINT, license VARCHAR, model_type VARCHAR,
    submitter VARCHAR, results_sha256 VARCHAR, samples_names VARCHAR[], samples_sha256 VARCHAR[],
    model_key VARCHAR, task_versions VARCHAR, config_hash VARCHAR, lm_eval_version VARCHAR);
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS responses_sha256 VARCHAR;
CREATE TABLE IF NOT EXISTS statuses (
    seq BIGINT, submission_id BIGINT, status VARCHAR, reason VARCHAR, "at" TIMESTAMP);
CREATE TABLE IF NOT EXISTS scores (
    submission_id BIGINT, task VARCHAR, version DOUBLE, metric VARCHAR, value DOUBLE, stderr DOUBLE, n BIGINT);
ALTER TABLE scores ADD COLUMN IF NOT EXISTS baseline DOUBLE;
CREATE TABLE IF NOT EXISTS gold (task VARCHAR, data_sha256 VARCHAR, doc_hash VARCHAR, target VARCHAR,
    submission_id BIGINT);
CREATE TABLE IF NOT EXISTS sample_scores (
    submission_id BIGINT, task VARCHAR, metric VARCHAR, doc_id BIGINT, doc_hash VARCHAR, value DOUBLE);
CREATE TABLE IF NOT EXISTS duplicates (
    submission_id BIGINT, submitted_at TIMESTAMP, submitter VARCHAR, results_sha256 VARCHAR);
"""  # ids are unique by construction (allocated under the lock); no index: DuckDB rewrites it at every checkpoint


def current(ids: str = "") -> str:
    """The current status (last row) of each submission, of those in the subquery ``ids`` when given."""
    where = f"WHERE submission_id IN ({ids})" if ids else ""
    return f"""(SELECT submission_id, status, reason FROM statuses {where}
                QUALIFY row_number() OVER (PARTITION BY submission_id ORDER BY seq DESC) = 1)"""

SCORE_COLUMNS = ["submission_id", "model_id", "revision", "precision", "params", "license", "model_type",
                 "task", "metric", "value", "stderr", "n", "version", "baseline"]



@dataclass(frozen=True)
class Entry:
    """One stored submission, as its submitter sees it."""

    id: int
    status: str  # PENDING | VALID | UNRANKED | REJECTED
    reason: str | None
    model_id: str
    revision: str
    precision: str
    params: int | None
    license: str
    model_type: str
    submitter: str
    submitted_at: datetime
    duplicate_of: int | None = None  # set on the answer to a duplicate submission: the id of the entry it matched
    results_sha256: str = ""  # "" when the file was over the size limit (not kept)
    samples_sha256: tuple[str, ...] = ()
    samples_names: tuple[str, ...] = ()  # the samples files' names, in the order of samples_sha256
    config_hash: str | None = None
    lm_eval_version: str | None = None

    @property
    def is_duplicate(self) -> bool:
        return self.duplicate_of is not None


SUBMISSION_SCHEMA = pa.schema([
    ("id", pa.int64()), ("submitted_at", pa.timestamp("us")), ("model_id", pa.string()), ("revision", pa.string()),
    ("precision", pa.string()), ("params", pa.int64()), ("license", pa.string()), ("model_type", pa.string()),
    ("submitter", pa.string()), ("results_sha256", pa.string()), ("samples_names", pa.list_(pa.string())),
    ("samples_sha256", pa.list_(pa.string())), ("model_key", pa.string()), ("task_versions", pa.string()),
    ("config_hash", pa.string()), ("lm_eval_version", pa.string()), ("responses_sha256", pa.string()),
])


STATUS_SCHEMA = pa.schema([("seq", pa.int64()), ("submission_id", pa.int64()), ("status", pa.string()),
                           ("reason", pa.string()), ("at", pa.timestamp("us"))])
DUPLICATE_SCHEMA = pa.schema([("submission_id", pa.int64()), ("submitted_at", pa.timestamp("us")),
                              ("submitter", pa.string()), ("results_sha256", pa.string())])
SCORE_SCHEMA = pa.schema([("submission_id", pa.int64()), ("task", pa.string()), ("version", pa.float64()),
                          ("metric", pa.string()), ("value", pa.float64()), ("stderr", pa.float64()),
                          ("n", pa.int64()), ("baseline", pa.float64())])
GOLD_SCHEMA = pa.schema([("task", pa.string()), ("data_sha256", pa.string()), ("doc_hash", pa.string()),
                         ("target", pa.string()), ("submission_id", pa.int64())])


def reason(problems: list[tuple[str, str]]) -> str | None:
    return format_problems((clean_text(where), clean_text(why)) for where, why in problems) or None


@dataclass
class Writes:
    """Rows one transaction appends, inserted together by :meth:`flush`."""

    submissions: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    samples: list[pa.Table] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    gold: list[tuple[str, str, int, list[str | None], list[str]]] = field(default_factory=list)

    def status(self, entry_id: int, status: str, reason: str | None, at: datetime) -> None:
        self.statuses.append({"submission_id": entry_id, "status": status, "reason": reason, "at": at})

    def flush(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.statuses:  # seq numbers them in order: a submission's last row is its current status
            first = con.execute("SELECT coalesce(max(seq), 0) + 1 FROM statuses").fetchone()[0]
            for i, row in enumerate(self.statuses):
                row["seq"] = first + i
        for table, rows, schema in (("submissions", self.submissions, SUBMISSION_SCHEMA),
                                    ("statuses", self.statuses, STATUS_SCHEMA),
                                    ("scores", self.scores, SCORE_SCHEMA),
                                    ("duplicates", self.duplicates, DUPLICATE_SCHEMA)):
            if len(rows) > SMALL_INSERT:
                insert(con, table, pa.Table.from_pylist(rows, schema=schema))
            elif rows:  # a parameterised VALUES list is much quicker than an Arrow scan for a few rows
                columns = schema.names
                names = ", ".join(f'"{c}"' for c in columns)
                values = ", ".join(["(" + ", ".join("?" * len(columns)) + ")"] * len(rows))
                con.execute(f"INSERT INTO {table} ({names}) VALUES {values}",
                            [row.get(c) for row in rows for c in columns])
        if self.samples:
            insert(con, "sample_scores", pa.concat_tables(self.samples))
        for task, digest, entry_id, hashes, targets in self.gold:  # the first ranked run of a data digest
            held = "SELECT count(*) FROM gold WHERE task = ? AND data_sha256 = ?"
            if con.execute(held, [task, digest]).fetchone()[0]:
                continue
            insert(con, "gold", pa.table({"task": [task] * len(hashes), "data_sha256": [digest] * len(hashes),
                                           "doc_hash": hashes, "target": targets,
                                           "submission_id": [entry_id] * len(hashes)}, schema=GOLD_SCHEMA))


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    con.register("incoming", rows)
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
    con.unregister("incoming")


def active(con: duckdb.DuckDBPyConnection, todo: Iterable[Any]
            ) -> tuple[dict[tuple, list[tuple[str, int]]], dict[str, tuple[int, str]]]:
    """Of the VALID and PENDING entries that share a dedupe key or a results file with ``todo``: dedupe key
    (without revision) -> [(revision, id)], and results sha256 -> (id, model id)."""
    keyed = [sub for sub in todo if sub.key is not None]
    if not keyed:
        return {}, {}
    rows = con.execute(f"""
        WITH m AS (SELECT model_key, precision, task_versions, config_hash, revision, id, results_sha256, model_id,
                          responses_sha256
                   FROM submissions WHERE list_contains(?, model_key) OR list_contains(?, results_sha256)
                                          OR list_contains(?, responses_sha256))
        SELECT m.* FROM m JOIN {current("SELECT id FROM m")} c ON c.submission_id = m.id
        WHERE c.status IN ('PENDING', 'VALID', 'UNRANKED') ORDER BY m.id""",
        [sorted({sub.key[0] for sub in keyed}), sorted({sub.results_sha256 for sub in keyed}),
         sorted({sub.responses for sub in keyed if sub.responses})]).fetchall()
    active: dict[tuple, list[tuple[str, int]]] = {}
    files: dict[str, tuple[int, str]] = {}  # results sha256 or responses sha256 -> (id, model id)
    for *key, revision, entry_id, sha, model_id, responses in rows:
        active.setdefault(tuple(key), []).append((revision, entry_id))
        files.setdefault(sha, (entry_id, model_id))
        if responses:
            files.setdefault(responses, (entry_id, model_id))
    return active, files


def entries(con: duckdb.DuckDBPyConnection, where: str = "", params: list | None = None,
             status: str = "") -> list[Entry]:
    """Entries of the submissions ``m`` that pass ``where``, with their current status ``c`` passing ``status``."""
    rows = con.execute(f"""
        WITH m AS (SELECT * FROM submissions m {where})
        SELECT m.id, c.status, c.reason, m.model_id, m.revision, m.precision, m.params, m.license, m.model_type,
               m.submitter, m.submitted_at, m.results_sha256, m.samples_sha256, m.config_hash, m.lm_eval_version,
               m.samples_names
        FROM m JOIN {current("SELECT id FROM m")} c ON c.submission_id = m.id {status}
        ORDER BY m.id DESC""", params or []).fetchall()
    return [Entry(id=r[0], status=r[1], reason=r[2], model_id=r[3], revision=r[4], precision=r[5], params=r[6],
                  license=r[7], model_type=r[8], submitter=r[9], submitted_at=r[10].replace(tzinfo=UTC),
                  results_sha256=r[11] or "", samples_sha256=tuple(r[12] or ()), config_hash=r[13],
                  lm_eval_version=r[14], samples_names=tuple(r[15] or ())) for r in rows]
