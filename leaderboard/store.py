"""The submission store: a DuckDB file of submissions and scores, raw files kept content-addressed beside it.

Layout under ``root``::

    leaderboard.duckdb        tables submissions, statuses, scores, sample_scores, duplicates
    files/<sha[:2]>/<sha256>  every results and samples file as submitted (files over the size limits are not kept)
    .lock                     the file lock every connection is taken under
    generation                a token rewritten after every committed write (readers' caches are keyed on it)

Append-only: rows are inserted, never updated or deleted. A submission's status is the last of its rows in
``statuses``: PENDING when stored, then VALID or REJECTED (with the reason: every field and what is wrong with it).
Rejected submissions stay, visible to their submitter.

Submitting: the files are read, hashed and kept and the metadata and results file validated, outside the lock.
One transaction then answers a duplicate, or stores the submission as PENDING; without samples files the same
transaction stores its scores and VALID (or REJECTED). Samples files (up to 200 MiB each) are checked outside the
lock and a second transaction stores their per-document scores, the scores and the final status. A submission
whose process stops between the two stays PENDING (and still answers duplicates); :meth:`Store.revalidate`
finishes it from the kept files.

A submission's dedupe key is (model id, revision, precision, task versions, config hash) where model ids compare
case-insensitively and a short sha matches the full sha it begins. A submission whose key matches a VALID or
PENDING entry is answered with that entry (``duplicate_of`` set) and not stored again; the answer is logged in
``duplicates``. When the matched entry was PENDING and ends REJECTED, submit again. A results file already held
by a VALID or PENDING entry under another key (another model, say) is rejected: lm-eval stamps every run with
its date and duration, so two runs never write the same bytes.

Concurrency: DuckDB lets one process open a database file read-write at a time, so every access (reads too) takes
``filelock.FileLock(root/".lock")`` (at most :data:`LOCK_TIMEOUT` seconds of waiting, then TimeoutError), opens a
connection, runs one short transaction and closes it. Validation, hashing and file writes happen outside the lock.
Retry policy: when DuckDB still cannot open the file (a process outside this store holds it, e.g. a ``duckdb``
shell) the open is retried with doubling waits from 0.05 s for :data:`OPEN_RETRY_S` seconds, then the error is
raised.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from filelock import FileLock, Timeout

from neurips26 import settings
from neurips26.results import ResultsError, Sample, parse_run, parse_samples, responses_digest, samples_task

from .catalog import TASKS_DIR, TaskSpec, read_groups, read_tasks, shipped_groups, shipped_tasks
from .modelinfo import (
    DEFAULT_LIMITS,
    Limits,
    ModelInfo,
    SubmissionRejected,
    check_model_info,
    clean_text,
    display_fields,
    format_problems,
    too_big,
)
from .validate import TaskSamples, ValidatedResults, validate_results, validate_samples

DB_NAME = "leaderboard.duckdb"
GENERATION = "generation"  # a token rewritten after every committed write
LOCK_TIMEOUT = 120.0
LOCK_POLL_S = 0.005
SMALL_INSERT = 64  # rows; bigger inserts go through Arrow
OPEN_RETRY_S = 10.0
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


def default_root() -> Path:
    """The leaderboard folder of :func:`neurips26.settings.leaderboard_dir`."""
    return settings.leaderboard_dir()


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
    config_hash: str | None = None
    lm_eval_version: str | None = None

    @property
    def is_duplicate(self) -> bool:
        return self.duplicate_of is not None


@dataclass
class _Submission:
    """One submission on its way in: read, hashed, validated as far as it goes."""

    fields: dict[str, Any]
    meta: ModelInfo | None = None
    results_sha256: str = ""
    raw_results: bytes | None = None
    samples: list[tuple[str, str, bytes | None]] = field(default_factory=list)  # (name, sha256, bytes when kept)
    results: ValidatedResults | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
    task_samples: list[TaskSamples] = field(default_factory=list)
    parsed: dict[str, tuple[str, list[Sample]]] = field(default_factory=dict)  # task -> (file name, samples)
    responses: str | None = None  # sha256 of the responses (see neurips26.results.responses_digest)

    @property
    def unranked(self) -> str | None:
        """Why the run is not ranked (it differs from a task's protocol), None when it is."""
        if self.results is None or not self.results.unranked:
            return None
        return "; ".join(f"{task}: {', '.join(reasons)}" for task, reasons in sorted(self.results.unranked.items()))

    @property
    def key(self) -> tuple[str, str, str, str] | None:
        """(model key, precision, task versions, config hash); the revision is matched by prefix."""
        if self.problems or self.meta is None or self.results is None:
            return None
        return (self.meta.model_id.lower(), self.meta.precision, json.dumps(self.results.task_versions),
                self.results.config_hash)


class Store:
    """Submissions and scores under ``root`` (see the module docstring)."""

    def __init__(self, root: Path | str | None = None, *, tasks: Mapping[str, TaskSpec] | None = None,
                 tasks_dir: Path | None = None, limits: Limits = DEFAULT_LIMITS, lock_timeout: float = LOCK_TIMEOUT):
        """``tasks_dir``: the task YAMLs the board accepts (default: the shipped ones); ``tasks`` overrides them."""
        self.root = Path(root) if root is not None else default_root()
        self.tasks_dir = Path(tasks_dir) if tasks_dir is not None else TASKS_DIR
        if tasks is not None:
            self.tasks = dict(tasks)
        else:
            self.tasks = shipped_tasks() if tasks_dir is None else read_tasks(self.tasks_dir)
        self.groups = shipped_groups() if tasks_dir is None else read_groups(self.tasks_dir)
        self.limits = limits
        self.lock_timeout = lock_timeout
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / DB_NAME
        self._lock = FileLock(self.root / ".lock", timeout=lock_timeout, poll_interval=LOCK_POLL_S)
        self._ready = False  # tables created (once per Store)
        self._scores: tuple[str, pa.Table] | None = None  # (generation, scores()) cache
        self._thread_lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # -- connections ---------------------------------------------------------------------------------------

    @contextmanager
    def _connect(self, write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """One short transaction under the file lock; ``write`` marks a new generation once it is committed."""
        with self._thread_lock:
            try:
                self._lock.acquire()
            except Timeout:
                raise TimeoutError(f"{self.root}: the store stayed locked for {self.lock_timeout:.0f} s") from None
            try:
                con = self._open()
                try:
                    con.begin()
                    yield con
                    con.commit()
                    if write:
                        self._bump()
                except BaseException:
                    con.rollback()
                    raise
                finally:
                    con.close()
            finally:
                self._lock.release()

    def _open(self) -> duckdb.DuckDBPyConnection:
        wait, deadline = 0.05, time.monotonic() + OPEN_RETRY_S
        while True:
            try:
                con = duckdb.connect(str(self.path), config={"autoinstall_known_extensions": False})
                break
            except duckdb.IOException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(wait)
                wait = min(wait * 2, 1.0)
        if not self._ready:
            con.execute(SCHEMA)
            self._ready = True
        return con

    # -- raw files ---------------------------------------------------------------------------------------------

    def file_path(self, sha256: str) -> Path:
        return self.root / "files" / sha256[:2] / sha256

    def _keep(self, data: bytes) -> str:
        """Write ``data`` content-addressed (atomically; a file already there is left alone); its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        path = self.file_path(sha)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{sha}.{uuid.uuid4().hex}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        return sha

    # -- submitting --------------------------------------------------------------------------------------------

    def submit(self, results: Path | bytes, meta: ModelInfo | Mapping[str, Any],
               samples: Sequence[Path] = ()) -> Entry:
        """Store one submission and return its entry (REJECTED with the reason when it fails validation, the
        existing entry when it is a duplicate). Raises only for unusable arguments (a missing file, wrong types).

        ``meta`` may be a mapping of :class:`ModelInfo` fields: bad ones are then recorded as a rejection too.
        """
        return self.submit_many([(results, meta, samples)])[0]

    def submit_many(self, submissions: Iterable[tuple[Path | bytes, ModelInfo | Mapping[str, Any], Sequence[Path]]]
                    ) -> list[Entry]:
        """:meth:`submit` for many submissions with at most two transactions in all (for bulk imports)."""
        todo = [self._read(results, meta, samples) for results, meta, samples in submissions]
        for sub in todo:
            self._check_results(sub)
        with self._connect(write=True) as con:
            writes = _Writes()
            answers = self._record(con, todo, writes)
            pending = [i for i, entry in enumerate(answers) if entry.status == PENDING and entry.duplicate_of is None]
            self._finish([(answers[i].id, todo[i]) for i in pending if not todo[i].samples], writes)
            writes.flush(con)
        later = [i for i in pending if todo[i].samples]
        for i in later:
            self._check_samples(todo[i])
        if later:
            with self._connect(write=True) as con:
                writes = _Writes()
                self._finish([(answers[i].id, todo[i]) for i in later], writes)
                writes.flush(con)
        for i in pending:
            if todo[i].problems:
                answers[i] = replace(answers[i], status=REJECTED, reason=_reason(todo[i].problems))
            else:
                unranked = todo[i].unranked
                answers[i] = replace(answers[i], status=UNRANKED if unranked else VALID, reason=unranked)
        final = {answers[i].id: answers[i] for i in pending}  # a duplicate of one of them gets its final status
        return [replace(final[a.id], duplicate_of=a.id) if a.duplicate_of is not None and a.id in final else a
                for a in answers]

    def _read(self, results: Path | bytes, meta: ModelInfo | Mapping[str, Any], samples: Sequence[Path]) -> _Submission:
        """Read and keep the files, check the metadata; raises only for unusable arguments."""
        if not isinstance(meta, ModelInfo | Mapping):
            raise TypeError(f"meta must be a ModelInfo or a mapping of its fields, not {type(meta).__name__}")
        if isinstance(samples, str | Path):
            raise TypeError("samples must be a list of paths")
        sub = _Submission(display_fields(meta))
        try:
            sub.meta = check_model_info(meta)
            sub.fields = display_fields(sub.meta)
        except SubmissionRejected as exc:
            sub.problems += exc.problems
        if isinstance(results, str | Path):
            if not Path(results).is_file():
                raise FileNotFoundError(f"results file {results} not found")
            size = Path(results).stat().st_size
        elif isinstance(results, bytes | bytearray):
            size = len(results)
        else:
            raise TypeError(f"results must be a path or bytes, not {type(results).__name__}")
        if size > self.limits.results_bytes:
            sub.problems.append(("results", too_big(size, self.limits.results_bytes)))
        else:
            sub.raw_results = Path(results).read_bytes() if isinstance(results, str | Path) else bytes(results)
            sub.results_sha256 = self._keep(sub.raw_results)
        for path in map(Path, samples):
            if not path.is_file():
                raise FileNotFoundError(f"samples file {path} not found")
            size = path.stat().st_size
            if size > self.limits.samples_bytes:
                sub.problems.append((f"samples.{path.name}", too_big(size, self.limits.samples_bytes)))
                sub.samples.append((path.name, "", None))
                continue
            data = path.read_bytes()
            sub.samples.append((path.name, self._keep(data), data))
        return sub

    def _check_results(self, sub: _Submission) -> None:
        """Parse the results and samples files, check the results; every task needs its samples file."""
        if sub.raw_results is None:
            return
        try:
            data = json.loads(sub.raw_results)
            if not isinstance(data, dict):
                raise SubmissionRejected([("results", "not an lm-eval results object but a JSON "
                                           f"{type(data).__name__}")])
            run = parse_run(data)
            names = list(run.tasks)
            for name, _, raw in sub.samples:
                task = samples_task(name, names)
                if task is None:
                    sub.problems.append((f"samples.{name}", "not named samples_TASK_DATE.jsonl for a task in the "
                                         f"results file ({', '.join(sorted(names))})"))
                elif task in sub.parsed:
                    sub.problems.append((f"samples.{name}", f"a second samples file for {task}"))
                elif raw is not None:
                    sub.parsed[task] = (name, parse_samples(raw, f"samples.{name}"))
            run = parse_run(data, {task: rows for task, (_, rows) in sub.parsed.items()})
            sub.results = validate_results(run, self.tasks, meta=sub.meta, groups=self.groups)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            sub.problems.append(("results", f"not a JSON file: {exc}"))
            return
        except (SubmissionRejected, ResultsError) as exc:
            sub.problems += exc.problems
            return
        for task in sorted(set(sub.results.tasks) - set(sub.parsed)):
            if not any(where.startswith("samples.") for where, _ in sub.problems):
                sub.problems.append((f"samples.{task}", "missing: every task needs its samples file "
                                     "(lm-eval --log_samples): the board recomputes the scores from it"))
        sub.responses = responses_digest(sub.results.run) if sub.results.run else None

    def _check_samples(self, sub: _Submission) -> None:
        assert sub.results is not None
        digests = sub.results.data_digest
        with self._connect() as con:
            gold = {task: dict(con.execute("SELECT doc_hash, target FROM gold WHERE task = ? AND data_sha256 = ?",
                                           [task, digests.get(task, "")]).fetchall()) for task in sub.parsed}
        for task, (name, rows) in sub.parsed.items():
            try:
                sub.task_samples.append(validate_samples(name, rows, sub.results, self.tasks[task], gold[task]))
            except SubmissionRejected as exc:
                sub.problems += exc.problems

    def _record(self, con: duckdb.DuckDBPyConnection, todo: list[_Submission], writes: _Writes) -> list[Entry]:
        """Answer duplicates; store the rest as PENDING (then REJECTED when already known to fail)."""
        now = datetime.now(UTC).replace(tzinfo=None)
        active, files = _active(con, todo)
        next_id = con.execute("SELECT coalesce(max(id), 0) + 1 FROM submissions").fetchone()[0]
        answers: list[Entry | int] = []  # a new entry, or the id of the existing entry a duplicate matched
        for sub in todo:
            key, revision = sub.key, sub.meta.revision if sub.meta else ""
            if key is not None:
                original = next((i for rev, i in active.get(key, []) if rev.startswith(revision)
                                 or revision.startswith(rev)), None)
                if original is not None:
                    writes.duplicates.append({"submission_id": original, "submitted_at": now,
                                              "submitter": sub.fields["submitter"],
                                              "results_sha256": sub.results_sha256})
                    answers.append(original)
                    continue
                active.setdefault(key, []).append((revision, next_id))
                if sub.results_sha256 in files:
                    other, other_model = files[sub.results_sha256]
                    sub.problems.append(("results", f"this file was already submitted as #{other} ({other_model}) "
                                         "with another model, revision, precision or config"))
                elif sub.responses and sub.responses in files and sub.meta is not None \
                        and files[sub.responses][1].lower() != sub.meta.model_id.lower():
                    other, other_model = files[sub.responses]
                    sub.problems.append(("samples", f"the same responses to the same documents as submission #{other} "
                                         f"({other_model}): a copied run"))
                else:
                    files[sub.results_sha256] = (next_id, sub.fields["model_id"])
                    if sub.responses:
                        files[sub.responses] = (next_id, sub.fields["model_id"])
            entry_id, next_id = next_id, next_id + 1
            results = sub.results
            writes.submissions.append({
                "id": entry_id, "submitted_at": now, **sub.fields, "results_sha256": sub.results_sha256,
                "samples_names": [n for n, _, _ in sub.samples], "samples_sha256": [s for _, s, _ in sub.samples],
                "model_key": key[0] if key else None, "task_versions": key[2] if key else None,
                "config_hash": results.config_hash if results else None,
                "lm_eval_version": results.lm_eval_version if results else None,
                "responses_sha256": sub.responses})
            writes.status(entry_id, PENDING, None, now)
            if sub.problems:
                writes.status(entry_id, REJECTED, _reason(sub.problems), now)
            answers.append(Entry(
                entry_id, REJECTED if sub.problems else PENDING, _reason(sub.problems),
                submitted_at=now.replace(tzinfo=UTC), results_sha256=sub.results_sha256,
                samples_sha256=tuple(s for _, s, _ in sub.samples),
                config_hash=results.config_hash if results else None,
                lm_eval_version=results.lm_eval_version if results else None, **sub.fields))
        found = {a.id: a for a in answers if isinstance(a, Entry)}  # originals stored by this batch
        stored = sorted({a for a in answers if isinstance(a, int) and a not in found})
        found |= {e.id: e for e in _entries(con, "WHERE list_contains(?, m.id)", [stored])} if stored else {}
        return [replace(found[a], duplicate_of=a) if isinstance(a, int) else a for a in answers]

    def _finish(self, done: list[tuple[int, _Submission]], writes: _Writes) -> None:
        """Scores recomputed from the samples, the gold targets of the first ranked run of a data digest, the
        final status of all (VALID, UNRANKED with the reason, or REJECTED)."""
        now = datetime.now(UTC).replace(tzinfo=None)
        for entry_id, sub in done:
            if sub.problems or sub.results is None:
                writes.status(entry_id, REJECTED, _reason(sub.problems) or "not validated", now)
                continue
            digests = sub.results.data_digest
            for ts in sub.task_samples:
                result = sub.results.tasks[ts.task]
                for metric, values in ts.values.items():
                    if metric not in result.metrics:
                        continue
                    n = len(values)
                    mean = math.fsum(values) / n
                    stderr = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else 0.0
                    writes.scores.append({"submission_id": entry_id, "task": ts.task, "version": result.version,
                                          "metric": metric, "value": mean, "stderr": stderr, "n": n,
                                          "baseline": ts.baseline})
                    writes.samples.append(pa.table({
                        "submission_id": pa.array([entry_id] * n, pa.int64()),
                        "task": pa.array([ts.task] * n, pa.string()),
                        "metric": pa.array([metric] * n, pa.string()),
                        "doc_id": pa.array(ts.doc_ids, pa.int64()),
                        "doc_hash": pa.array(ts.doc_hashes, pa.string()),
                        "value": pa.array(values, pa.float64())}))
                if sub.unranked is None:
                    writes.gold.append((ts.task, digests.get(ts.task, ""), entry_id, ts.doc_hashes, ts.targets))
            unranked = sub.unranked
            writes.status(entry_id, UNRANKED if unranked else VALID, unranked, now)

    def revalidate(self, entry_id: int) -> Entry:
        """Finish a submission left PENDING (its process stopped between the two transactions)."""
        with self._connect() as con:
            entry = self._entry(con, entry_id)
            row = con.execute("SELECT samples_names, samples_sha256 FROM submissions WHERE id = ?",
                              [entry_id]).fetchone()
        if entry.status != PENDING:
            return entry
        meta = {k: getattr(entry, k) for k in ("model_id", "revision", "precision", "params", "license",
                                                "model_type", "submitter")}
        sub = _Submission(display_fields(meta))
        try:
            sub.meta = check_model_info(meta)
        except SubmissionRejected as exc:
            sub.problems += exc.problems
        sub.raw_results = self.file_path(entry.results_sha256).read_bytes()
        sub.samples = [(name, sha, self.file_path(sha).read_bytes()) for name, sha in zip(*row, strict=True)]
        self._check_results(sub)
        if not sub.problems:
            self._check_samples(sub)
        with self._connect(write=True) as con:
            writes = _Writes()
            self._finish([(entry_id, sub)], writes)
            writes.flush(con)
            return self._entry(con, entry_id)

    # -- reading -----------------------------------------------------------------------------------------------

    def entries(self, submitter: str | None = None, include_rejected: bool = True) -> list[Entry]:
        """Entries, newest first; only ``submitter``'s when given (theirs include the rejected ones)."""
        where, params = ("WHERE m.submitter = ?", [submitter]) if submitter is not None else ("", [])
        with self._connect() as con:
            return _entries(con, where, params, "" if include_rejected else "WHERE c.status <> 'REJECTED'")

    def entry(self, entry_id: int) -> Entry:
        """The entry ``entry_id``; KeyError when there is none."""
        with self._connect() as con:
            return self._entry(con, entry_id)

    def _entry(self, con: duckdb.DuckDBPyConnection, entry_id: int) -> Entry:
        found = _entries(con, "WHERE m.id = ?", [int(entry_id)])
        if not found:
            raise KeyError(f"no submission {entry_id} in {self.root}")
        return found[0]

    def generation(self) -> str:
        """Changes with every committed write: what a cache of the store's contents is keyed on."""
        try:
            return (self.root / GENERATION).read_text()
        except FileNotFoundError:
            return ""

    def _bump(self) -> None:
        tmp = self.root / f".{GENERATION}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(uuid.uuid4().hex)
        os.replace(tmp, self.root / GENERATION)

    def scores(self, fresh: bool = False) -> pa.Table:
        """Long table of the VALID submissions' scores: one row per (submission, task, metric).

        Kept in memory until the store's :meth:`generation` changes (so ranking many tables reads the store once),
        unless ``fresh``.
        """
        generation = self.generation()
        cached = self._scores
        if not fresh and cached is not None and cached[0] == generation and generation:
            return cached[1]
        table = self._read_scores()
        self._scores = (generation, table)
        return table

    def _read_scores(self) -> pa.Table:
        with self._connect() as con:
            return con.execute(f"""
                SELECT {', '.join('s.' + c if c in ('submission_id', 'task', 'metric', 'value', 'stderr', 'n',
                                                    'version', 'baseline') else 'm.' + c for c in SCORE_COLUMNS)}
                FROM scores s JOIN submissions m ON m.id = s.submission_id
                JOIN {current()} c ON c.submission_id = s.submission_id
                WHERE c.status = 'VALID' ORDER BY s.submission_id, s.task, s.metric""").to_arrow_table()

    def submission_scores(self, submission_id: int) -> pa.Table:
        """task, metric, value, stderr, n, baseline of one submission, whatever its status (its model page)."""
        with self._connect() as con:
            return con.execute("""SELECT task, metric, value, stderr, n, baseline FROM scores
                                  WHERE submission_id = ? ORDER BY task, metric""",
                               [int(submission_id)]).to_arrow_table()

    def sample_table(self, submission_id: int, task: str, metric: str) -> pa.Table:
        """Per-document scores of one submission: doc_id, doc_hash, value (empty without a samples file)."""
        with self._connect() as con:
            return con.execute("""SELECT doc_id, doc_hash, value FROM sample_scores
                                  WHERE submission_id = ? AND task = ? AND metric = ? ORDER BY doc_id""",
                               [int(submission_id), task, metric]).to_arrow_table()

    def sample_scores(self, submission_id: int, task: str, metric: str) -> dict[int, float]:
        """doc_id -> per-document score of one submission (empty without a samples file for ``task``)."""
        table = self.sample_table(submission_id, task, metric)
        return dict(zip(table["doc_id"].to_pylist(), table["value"].to_pylist(), strict=True))

    def duplicates(self) -> pa.Table:
        """Every duplicate submission answered with an existing entry (submission_id is that entry's id)."""
        with self._connect() as con:
            return con.execute("SELECT * FROM duplicates ORDER BY submitted_at").to_arrow_table()


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


def _reason(problems: list[tuple[str, str]]) -> str | None:
    return format_problems((clean_text(where), clean_text(why)) for where, why in problems) or None


@dataclass
class _Writes:
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
                _insert(con, table, pa.Table.from_pylist(rows, schema=schema))
            elif rows:  # a parameterised VALUES list is much quicker than an Arrow scan for a few rows
                columns = schema.names
                names = ", ".join(f'"{c}"' for c in columns)
                values = ", ".join(["(" + ", ".join("?" * len(columns)) + ")"] * len(rows))
                con.execute(f"INSERT INTO {table} ({names}) VALUES {values}",
                            [row.get(c) for row in rows for c in columns])
        if self.samples:
            _insert(con, "sample_scores", pa.concat_tables(self.samples))
        for task, digest, entry_id, hashes, targets in self.gold:  # the first ranked run of a data digest
            held = "SELECT count(*) FROM gold WHERE task = ? AND data_sha256 = ?"
            if con.execute(held, [task, digest]).fetchone()[0]:
                continue
            _insert(con, "gold", pa.table({"task": [task] * len(hashes), "data_sha256": [digest] * len(hashes),
                                           "doc_hash": hashes, "target": targets,
                                           "submission_id": [entry_id] * len(hashes)}, schema=GOLD_SCHEMA))


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    con.register("incoming", rows)
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
    con.unregister("incoming")


def _active(con: duckdb.DuckDBPyConnection, todo: list[_Submission]
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


def _entries(con: duckdb.DuckDBPyConnection, where: str = "", params: list | None = None,
             status: str = "") -> list[Entry]:
    """Entries of the submissions ``m`` that pass ``where``, with their current status ``c`` passing ``status``."""
    rows = con.execute(f"""
        WITH m AS (SELECT * FROM submissions m {where})
        SELECT m.id, c.status, c.reason, m.model_id, m.revision, m.precision, m.params, m.license, m.model_type,
               m.submitter, m.submitted_at, m.results_sha256, m.samples_sha256, m.config_hash, m.lm_eval_version
        FROM m JOIN {current("SELECT id FROM m")} c ON c.submission_id = m.id {status}
        ORDER BY m.id DESC""", params or []).fetchall()
    return [Entry(id=r[0], status=r[1], reason=r[2], model_id=r[3], revision=r[4], precision=r[5], params=r[6],
                  license=r[7], model_type=r[8], submitter=r[9], submitted_at=r[10].replace(tzinfo=UTC),
                  results_sha256=r[11] or "", samples_sha256=tuple(r[12] or ()), config_hash=r[13],
                  lm_eval_version=r[14]) for r in rows]
