"""The Space's SQL workers: every visitor query runs in a worker process that can be stopped, whatever it does.

DuckDB's memory limit does not cover every allocation (``SELECT repeat('x', 600000000)`` built a 600 MB string
outside it and peaked at 2-3 GB), and its interrupt is only checked between chunks (``length(repeat('x',
1500000000))`` ran 17 s against a 10 s limit). So each query runs in a worker process whose data segment is capped
(``RLIMIT_DATA``: the worker's own size plus the memory limit; an allocation past it fails at once, and DuckDB
answers "Out of Memory") and which is killed when it has not answered by the timeout.

Queue: at most ``workers`` queries run at once. A query that finds every worker busy waits; while it waits, the
longest-running query past :data:`QUICK_S` seconds is stopped (interrupted; its worker killed and replaced only when
the interrupt is not heard within :data:`GRACE_S`) and its visitor told why, so four slow queries cannot make a
quick one wait for their whole timeout.
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from neurips26.sql import Limits, QueryError, Session

QUICK_S = 1.0  # a query running longer than this yields its worker to one that waits
GRACE_S = 1.0  # after the timeout, how long DuckDB's own interrupt gets before the worker is killed
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20,
          "gib": 2**30, "tib": 2**40}


def memory_bytes(text: str) -> int:
    """DuckDB's memory setting (``1GB``, ``512MiB``) in bytes (DuckDB's units: GB = 10^9, GiB = 2^30)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*", text.lower())
    if match is None:
        raise QueryError(f"memory limit {text!r} is not like 1GB")
    return int(float(match[1]) * _UNITS[match[2] or ""])


def _cap_data_segment(extra: int) -> None:
    """Let this process's data segment grow by at most ``extra`` bytes from its size now (Linux)."""
    try:
        import resource  # lazy: Unix only
        status = Path("/proc/self/status").read_text()
    except (ImportError, OSError):
        return
    found = re.search(r"VmData:\s+(\d+) kB", status)
    if found:
        cap = int(found[1]) * 1024 + extra
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


def serve(conn: multiprocessing.connection.Connection, limits: Limits) -> None:
    """A worker's loop: (folders, sql, max_rows) in, ("ok", Arrow IPC bytes) or ("error", message) out, until None
    or the parent is gone. While a query runs, ("stop", why) interrupts it (it answers ("error", why))."""
    sessions: dict[tuple, Session] = {}
    capped = False
    while (request := _receive(conn)) is not None:
        if request[0] == "stop":  # came after its query had ended
            continue
        folders, sql, max_rows = request
        key = tuple(sorted(folders.items()))
        if key not in sessions:
            for old in sessions.values():
                old.close()
            try:
                sessions = {key: Session({k: Path(v) for k, v in folders.items()}, limits)}
                sessions[key].query("SELECT 1")  # DuckDB's threads and buffers exist before the cap is measured
            except QueryError as exc:
                conn.send(("error", str(exc)))
                sessions = {}
                continue
        if not capped:
            _cap_data_segment(memory_bytes(limits.memory))
            capped = True
        session = sessions[key]
        session.limits = replace(limits, max_rows=max_rows)
        answer: list[tuple[str, Any]] = []
        thread = threading.Thread(target=_answer, args=(session, sql, limits, answer), daemon=True)
        thread.start()
        while thread.is_alive():
            if conn.poll(0.02) and (message := _receive(conn)) is not None and message[0] == "stop":
                session.stop(message[1])
            thread.join(0.01)
        conn.send(answer[0])


def _receive(conn: multiprocessing.connection.Connection) -> Any:
    try:
        return conn.recv()
    except (EOFError, OSError):  # the parent is gone
        return None


def _answer(session: Session, sql: str, limits: Limits, answer: list[tuple[str, Any]]) -> None:
    try:
        table = session.query(sql)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        answer.append(("ok", sink.getvalue().to_pybytes()))
    except QueryError as exc:
        answer.append(("error", str(exc)))
    except MemoryError:
        answer.append(("error", f"query stopped: it needed more than the {limits.memory} memory limit"))


def main(fd: int) -> None:
    """A worker process's entry point: the limits, then requests, over the socket ``fd``."""
    conn = multiprocessing.connection.Connection(fd)
    limits = _receive(conn)
    if limits is not None:
        serve(conn, limits)


class _Worker:
    """One worker process (started with ``python -c``, not multiprocessing's spawn, so the parent's main module is
    never run again) and its socket."""

    def __init__(self, limits: Limits) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from neurips26.space.sql_workers import main; main({theirs.fileno()})"],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        self.conn = multiprocessing.connection.Connection(ours.detach())
        self.conn.send(limits)
        self.started = 0.0  # when its current query began
        self.stop_reason: str | None = None

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait(5)
        self.conn.close()


class SqlWorkers:
    """A pool of at most ``workers`` SQL worker processes, each query under ``limits`` (see the module doc)."""

    def __init__(self, limits: Limits, workers: int, quick_s: float = QUICK_S) -> None:
        self.limits, self.workers, self.quick_s = limits, workers, quick_s
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: list[_Worker] = []
        self._starting = 0

    def run(self, folders: dict[str, Path], sql: str, wait_s: float, max_rows: int | None = None) -> pa.Table:
        """Run ``sql`` on a worker (at most ``max_rows + 1`` rows back); :class:`QueryError` says why it was
        refused, failed or stopped."""
        if not folders:
            raise QueryError("no dataset folders found: build one first (neurips26 build locus)")
        worker = self._acquire(wait_s)
        killed = False
        try:
            worker.conn.send(({k: str(v) for k, v in folders.items()}, sql, max_rows))
            deadline = worker.started + (self.limits.timeout_s or float("inf")) + GRACE_S
            asked = None  # when the worker was asked to stop its query
            while not worker.conn.poll(0.02):
                if worker.stop_reason and asked is None:
                    worker.conn.send(("stop", worker.stop_reason))  # DuckDB's interrupt: the worker stays warm
                    asked = time.monotonic()
                late = asked is not None and time.monotonic() > asked + GRACE_S
                if late or time.monotonic() > deadline or not worker.alive():
                    killed = True
                    if worker.stop_reason:
                        raise QueryError(worker.stop_reason)
                    if worker.alive():
                        raise QueryError(f"query stopped: it ran longer than the {self.limits.timeout_s:g} s limit")
                    raise QueryError(f"query stopped: it needed more than the {self.limits.memory} memory limit")
            try:
                status, payload = worker.conn.recv()
            except (EOFError, OSError):
                killed = True
                raise QueryError(f"query stopped: it needed more than the {self.limits.memory} memory limit") from None
        finally:
            self._release(worker, killed)
        if status == "error":
            raise QueryError(payload)
        return pa.ipc.open_stream(payload).read_all()

    def _acquire(self, wait_s: float) -> _Worker:
        end = time.monotonic() + wait_s
        with self._cond:
            while not self._idle and len(self._busy) + self._starting >= self.workers:
                self._preempt()
                left = end - time.monotonic()
                if left <= 0:
                    raise QueryError(f"every SQL worker is busy ({self.workers} queries running); try again shortly")
                self._cond.wait(min(left, 0.05))
            if self._idle:
                worker = self._idle.pop()
            else:
                self._starting += 1
                self._cond.release()
                try:
                    worker = _Worker(self.limits)
                finally:
                    self._cond.acquire()
                    self._starting -= 1
            worker.started, worker.stop_reason = time.monotonic(), None
            self._busy.append(worker)
            return worker

    def _preempt(self) -> None:
        """Stop the longest-running query past ``quick_s`` (a query is waiting); called under the lock."""
        now = time.monotonic()
        if any(w.stop_reason for w in self._busy):
            return  # one is already being stopped
        slow = [w for w in self._busy if now - w.started > self.quick_s]
        if slow:
            victim = min(slow, key=lambda w: w.started)
            victim.stop_reason = (f"query stopped after {now - victim.started:.1f} s: other queries were waiting "
                                  f"for the {self.workers} SQL workers; run long queries when the Space is quieter, "
                                  "or with `neurips26 query` on your own machine")

    def _release(self, worker: _Worker, killed: bool) -> None:
        if killed:
            worker.kill()
        with self._cond:
            self._busy.remove(worker)
            if not killed:
                self._idle.append(worker)
            self._cond.notify_all()

    def close(self) -> None:
        """Stop every idle worker (busy ones end with their query)."""
        with self._cond:
            idle, self._idle = self._idle, []
        for worker in idle:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            worker.kill()
