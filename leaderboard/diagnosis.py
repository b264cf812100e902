"""Failure signatures of stored submissions, kept with them.

A submission's signature table (:mod:`neurips26.methods.diagnostics.signatures`) is computed from the results and
samples files the store keeps, once, and written to ``<store>/signatures/<id>.json``; the Space's model page and
``neurips26 leaderboard --signatures ID`` read it from there. Two submissions compare signature by signature.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neurips26.methods.diagnostics import report

from neurips26 import jsonfile
from neurips26.results import parse_run, parse_samples, samples_task

from .store import Store

FOLDER = "signatures"


def _path(store: Store, entry_id: int) -> Path:
    return store.root / FOLDER / f"{int(entry_id)}.json"


def compute(store: Store, entry_id: int) -> list[dict[str, Any]]:
    """The signature rows of one stored submission, from its kept files ([] when it kept none)."""
    entry = store.entry(entry_id)
    if not entry.results_sha256 or not store.file_path(entry.results_sha256).is_file():  # rejected: not kept
        return []
    data = jsonfile.read(store.file_path(entry.results_sha256))
    names = list(data.get("results") or {})
    samples = {}
    for name, sha in zip(entry.samples_names, entry.samples_sha256, strict=False):
        task = samples_task(name, names)
        if task is not None and sha and store.file_path(sha).is_file():
            samples[task] = parse_samples(store.file_path(sha).read_bytes(), name)
    return report.diagnose(parse_run(data, samples))


def signatures(store: Store, entry_id: int) -> list[dict[str, Any]]:
    """The stored signature rows of a submission, computed and kept on first use."""
    path = _path(store, entry_id)
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))["signatures"]
    rows = compute(store, entry_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"submission_id": int(entry_id), "signatures": rows}), encoding="utf-8")
    os.replace(tmp, path)
    return rows


def compare(store: Store, first: int, second: int) -> list[dict[str, Any]]:
    """Two submissions' signatures side by side, with the difference of rates and its 95% interval."""
    return report.compare(signatures(store, first), signatures(store, second))
