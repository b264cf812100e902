"""The files a submission brings, kept content-addressed under ``<store>/files/<sha[:2]>/<sha256>``.

A file is written (atomically) when its submission is read, before the store's lock is taken. A submission that
ends REJECTED keeps its entry and reason but not its files: :func:`drop_unheld` removes each file no stored,
not-rejected submission holds, inside the transaction that rejected it; :func:`rekeep` writes back a file of a
submission being stored that such a removal took meanwhile (the same bytes sent by a rejected run).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable
from pathlib import Path

import duckdb

from .intake import Submission
from .tables import current


def file_path(root: Path, sha256: str) -> Path:
    """Where the file of digest ``sha256`` is kept under the store ``root``."""
    return Path(root) / "files" / sha256[:2] / sha256


def keep(root: Path, data: bytes) -> str:
    """Write ``data`` content-addressed (atomically; a file already there is left alone); its sha256."""
    sha = hashlib.sha256(data).hexdigest()
    path = file_path(root, sha)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{sha}.{uuid.uuid4().hex}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return sha


def rekeep(root: Path, sub: Submission) -> None:
    """Write again any of ``sub``'s kept files that is missing."""
    for data in [sub.raw_results, *(raw for _, _, raw in sub.samples)]:
        if data is not None and not file_path(root, hashlib.sha256(data).hexdigest()).is_file():
            keep(root, data)


def drop_unheld(con: duckdb.DuckDBPyConnection, root: Path, subs: Iterable[Submission]) -> list[str]:
    """Remove the kept files of ``subs`` that no stored submission other than a REJECTED one holds (a 200 MB upload
    of zeros must not stay); call it inside the transaction that rejected them. Returns the removed digests."""
    shas = sorted({sha for sub in subs for sha in (sub.results_sha256, *(s for _, s, _ in sub.samples)) if sha})
    if not shas:
        return []
    held = {row[0] for row in con.execute(f"""
        WITH m AS (SELECT id, results_sha256, samples_sha256 FROM submissions
                   WHERE list_contains(?, results_sha256) OR len(list_intersect(samples_sha256, ?)) > 0)
        SELECT unnest(list_prepend(m.results_sha256, m.samples_sha256)) FROM m
        JOIN {current("SELECT id FROM m")} c ON c.submission_id = m.id WHERE c.status <> 'REJECTED'""",
        [shas, shas]).fetchall()}
    removed = sorted(set(shas) - held)
    for sha in removed:
        file_path(root, sha).unlink(missing_ok=True)
    return removed
