"""The submission store: a DuckDB file of submissions and scores, raw files kept content-addressed beside it.

Layout under ``root``::

    leaderboard.duckdb        tables submissions, statuses, scores, sample_scores, duplicates
    files/<sha[:2]>/<sha256>  every results and samples file as submitted (files over the size limits are not kept)
    .lock                     the file lock every connection is taken under
    generation                a token rewritten after every committed write (readers' caches are keyed on it)

Append-only: rows are inserted, never updated or deleted. A submission's status is the last of its rows in
``statuses``: PENDING when stored, then VALID (ranked), UNRANKED (its run differs from a task protocol: the
reason says how; shown on its model page, never on a board) or REJECTED (with the reason: every field and what
is wrong with it). Rejected submissions stay, visible to their submitter; their files do not (removed in the
transaction that rejects them, unless another stored submission holds the same bytes).

Submitting (see :mod:`.intake`): the files are read, hashed and kept and the metadata and results file validated,
outside the lock; every task needs its samples file. One transaction then answers a duplicate, or stores the
submission as PENDING. The samples (up to 200 MiB each) are checked outside the lock (every metric recomputed
from them, targets compared with the gold targets held for the data) and a second transaction stores the
recomputed scores, the per-document scores, the gold targets of the first ranked run of a data digest and the
final status. A submission whose process stops between the two stays PENDING (and still answers duplicates);
:meth:`Store.revalidate` finishes it from the kept files.

A submission's dedupe key is (model id, revision, precision, task versions, config hash) where model ids compare
case-insensitively and a short sha matches the full sha it begins. A submission whose key matches a VALID or
PENDING entry is answered with that entry (``duplicate_of`` set) and not stored again; the answer is logged in
``duplicates``. When the matched entry was PENDING and ends REJECTED, submit again. A results file already held
by a VALID or PENDING entry under another key (another model, say) is rejected: lm-eval stamps every run with
its date and duration, so two runs never write the same bytes; so is a run whose responses (a digest of every
document's filtered responses) equal those of an entry of another model: a copied run.

Concurrency: DuckDB lets one process open a database file read-write at a time, so every access (reads too) takes
``filelock.FileLock(root/".lock")`` (at most :data:`LOCK_TIMEOUT` seconds of waiting, then TimeoutError), opens a
connection, runs one short transaction and closes it. Validation, hashing and file writes happen outside the lock.
Retry policy: when DuckDB still cannot open the file (a process outside this store holds it, e.g. a ``duckdb``
shell) the open is retried with doubling waits from 0.05 s for :data:`OPEN_RETRY_S` seconds, then the error is
raised.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from filelock import FileLock, Timeout

from neurips26 import settings
from neurips26.errors import UnknownNameError

from . import keptfiles
from .catalog import TASKS_DIR, TaskSpec, read_groups, read_tasks, shipped_groups, shipped_tasks
from .intake import Submission, check_results, check_samples, finish, guarded, read_submission, stored_submission
from .modelinfo import DEFAULT_LIMITS, Limits, ModelInfo
from .tables import (
    DB_NAME,
    PENDING,
    REJECTED,
    SCHEMA,
    SCORE_COLUMNS,
    UNRANKED,
    VALID,
    Entry,
    Writes,
    current,
)
from .tables import (
    active as active_keys,
)
from .tables import (
    entries as read_entries,
)
from .tables import (
    reason as problems_text,
)

GENERATION = "generation"  # a token rewritten after every committed write
LOCK_TIMEOUT = 120.0
LOCK_POLL_S = 0.005
OPEN_RETRY_S = 10.0
STALE_PENDING_S = 600.0  # a submission PENDING this long lost its process: the next submit finishes it


def default_root() -> Path:
    """The leaderboard folder of :func:`neurips26.settings.leaderboard_dir`."""
    return settings.leaderboard_dir()


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
        self._scores: dict[str, tuple[str, pa.Table]] = {}  # status -> (generation, scores()) cache
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
        return keptfiles.file_path(self.root, sha256)

    def _keep(self, data: bytes) -> str:
        """Write ``data`` content-addressed (atomically; a file already there is left alone); its sha256."""
        return keptfiles.keep(self.root, data)

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
        self.finish_stale()
        todo = [self._read(results, meta, samples) for results, meta, samples in submissions]
        for sub in todo:
            self._check_results(sub)
        with self._connect(write=True) as con:
            writes = Writes()
            answers = self._record(con, todo, writes)
            pending = [i for i, entry in enumerate(answers) if entry.status == PENDING and entry.duplicate_of is None]
            finish([(answers[i].id, todo[i]) for i in pending if not todo[i].samples], writes)
            writes.flush(con)
            for i in pending:  # a file another run's rejection removed meanwhile is written again
                keptfiles.rekeep(self.root, todo[i])
            keptfiles.drop_unheld(con, self.root, todo)
        later = [i for i in pending if todo[i].samples]
        for i in later:
            with guarded(todo[i], "samples"):
                self._check_samples(todo[i])
        if later:
            with self._connect(write=True) as con:
                writes = Writes()
                finish([(answers[i].id, todo[i]) for i in later], writes)
                writes.flush(con)
                keptfiles.drop_unheld(con, self.root, [todo[i] for i in later])
        for i in pending:
            if todo[i].problems:
                answers[i] = replace(answers[i], status=REJECTED, reason=problems_text(todo[i].problems))
            else:
                unranked = todo[i].unranked
                answers[i] = replace(answers[i], status=UNRANKED if unranked else VALID, reason=unranked)
        final = {answers[i].id: answers[i] for i in pending}  # a duplicate of one of them gets its final status
        return [replace(final[a.id], duplicate_of=a.id) if a.duplicate_of is not None and a.id in final else a
                for a in answers]

    def _read(self, results: Path | bytes, meta: ModelInfo | Mapping[str, Any], samples: Sequence[Path]) -> Submission:
        """Read and keep the files, check the metadata; raises only for unusable arguments."""
        return read_submission(results, meta, samples, self.limits, self._keep)

    def _check_results(self, sub: Submission) -> None:
        check_results(sub, self.tasks, self.groups)

    def _check_samples(self, sub: Submission) -> None:
        assert sub.results is not None
        digests = sub.results.data_digest
        with self._connect() as con:
            gold = {task: dict(con.execute("SELECT doc_hash, target FROM gold WHERE task = ? AND data_sha256 = ?",
                                           [task, digests.get(task, "")]).fetchall()) for task in sub.parsed}
        check_samples(sub, self.tasks, gold)

    def _record(self, con: duckdb.DuckDBPyConnection, todo: list[Submission], writes: Writes) -> list[Entry]:
        """Answer duplicates; store the rest as PENDING (then REJECTED when already known to fail)."""
        now = datetime.now(UTC).replace(tzinfo=None)
        active, files = active_keys(con, todo)
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
                writes.status(entry_id, REJECTED, problems_text(sub.problems), now)
            answers.append(Entry(
                entry_id, REJECTED if sub.problems else PENDING, problems_text(sub.problems),
                submitted_at=now.replace(tzinfo=UTC), results_sha256=sub.results_sha256,
                samples_sha256=tuple(s for _, s, _ in sub.samples), samples_names=tuple(n for n, _, _ in sub.samples),
                config_hash=results.config_hash if results else None,
                lm_eval_version=results.lm_eval_version if results else None, **sub.fields))
        found = {a.id: a for a in answers if isinstance(a, Entry)}  # originals stored by this batch
        stored = sorted({a for a in answers if isinstance(a, int) and a not in found})
        found |= {e.id: e for e in read_entries(con, "WHERE list_contains(?, m.id)", [stored])} if stored else {}
        return [replace(found[a], duplicate_of=a) if isinstance(a, int) else a for a in answers]

    def revalidate(self, entry_id: int) -> Entry:
        """Finish a submission left PENDING (its process stopped between the two transactions)."""
        with self._connect() as con:
            entry = self._entry(con, entry_id)
            row = con.execute("SELECT samples_names, samples_sha256 FROM submissions WHERE id = ?",
                              [entry_id]).fetchone()
        if entry.status != PENDING:
            return entry
        sub = stored_submission(entry, *row, self.file_path)
        self._check_results(sub)
        if not sub.problems:
            with guarded(sub, "samples"):
                self._check_samples(sub)
        with self._connect(write=True) as con:
            writes = Writes()
            finish([(entry_id, sub)], writes)
            writes.flush(con)
            keptfiles.drop_unheld(con, self.root, [sub])
            return self._entry(con, entry_id)

    def finish_stale(self, older_than_s: float = STALE_PENDING_S) -> list[Entry]:
        """Finish every submission PENDING for over ``older_than_s`` (its process stopped): PENDING is never
        permanent, so a corrected resubmission is not answered as a duplicate of a stuck entry."""
        cutoff = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=older_than_s)
        with self._connect() as con:
            stale = read_entries(con, "WHERE m.submitted_at < ?", [cutoff], "WHERE c.status = 'PENDING'")
        return [self.revalidate(e.id) for e in stale]

    # -- reading -----------------------------------------------------------------------------------------------

    def entries(self, submitter: str | None = None, include_rejected: bool = True) -> list[Entry]:
        """Entries, newest first; only ``submitter``'s when given (theirs include the rejected ones)."""
        where, params = ("WHERE m.submitter = ?", [submitter]) if submitter is not None else ("", [])
        with self._connect() as con:
            return read_entries(con, where, params, "" if include_rejected else "WHERE c.status <> 'REJECTED'")

    def entry(self, entry_id: int) -> Entry:
        """The entry ``entry_id``; an UnknownNameError (a KeyError) when there is none."""
        with self._connect() as con:
            return self._entry(con, entry_id)

    def _entry(self, con: duckdb.DuckDBPyConnection, entry_id: int) -> Entry:
        found = read_entries(con, "WHERE m.id = ?", [int(entry_id)])
        if not found:
            raise UnknownNameError(f"no submission {entry_id} in the leaderboard store {self.root}")
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

    def scores(self, fresh: bool = False, status: str = VALID) -> pa.Table:
        """Long table of the ``status`` (VALID: ranked; UNRANKED: the demo view's) submissions' scores: one row per
        (submission, task, metric). Kept in memory until the store's :meth:`generation` changes (so ranking many
        tables reads the store once), unless ``fresh``."""
        if status not in (VALID, UNRANKED):
            raise ValueError(f"scores are kept for VALID and UNRANKED submissions, not {status}")
        key = f"{status}:{self.generation()}"
        cached = self._scores.get(status)
        if not fresh and cached is not None and cached[0] == key and not key.endswith(":"):
            return cached[1]
        table = self._read_scores(status)
        self._scores[status] = (key, table)
        return table

    def _read_scores(self, status: str = VALID) -> pa.Table:
        with self._connect() as con:
            return con.execute(f"""
                SELECT {', '.join('s.' + c if c in ('submission_id', 'task', 'metric', 'value', 'stderr', 'n',
                                                    'version', 'baseline') else 'm.' + c for c in SCORE_COLUMNS)}
                FROM scores s JOIN submissions m ON m.id = s.submission_id
                JOIN {current()} c ON c.submission_id = s.submission_id
                WHERE c.status = ? ORDER BY s.submission_id, s.task, s.metric""", [status]).to_arrow_table()

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


