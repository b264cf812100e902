"""Evaluation sets derived from the built corpus: the ``domain`` and ``catchline`` configs.

Splits are fixed and stratified by jurisdiction, so a test jurisdiction's text
never appears among few-shot examples: jurisdictions are ordered by the
sha256 of their id; the first 20% (at least one) are ``test``, the next 10%
(at least one) ``validation``, the rest ``train`` (the few-shot pool). With
fewer than three jurisdictions no evaluation sets are written.

Within a split, examples are kept in sha256(section_id) order up to a cap
(``CAPS``), so the sets stay small and identical across rebuilds however large
the corpus. The corpus is read in batches; memory is bounded by the caps.

- ``domain``: a section's text -> its regulatory domain (see ``domains.py``),
  four choices: the gold domain and three distractors picked by hash.
- ``catchline``: a section's text -> its heading (active sections with a real
  heading and at least 80 characters of text).
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .domains import DOMAINS, domain_of_path

SPLITS = ("train", "validation", "test")
SHARES = {"test": 0.2, "validation": 0.1}
CAPS = {"train": 2_000, "validation": 500, "test": 1_000}
N_CHOICES = 4
MAX_TEXT = 2_000  # characters of section text in a prompt
MIN_TEXT = 80
SKIP_HEADINGS = ("reserved", "repealed", "[reserved]", "[repealed]")

STR = pa.string()
DOMAIN = pa.schema([("section_id", STR), ("jurisdiction_id", STR), ("number", STR), ("heading", STR),
                    ("text", STR), ("domain", STR), ("choices", pa.list_(STR)), ("label", pa.int64())])
CATCHLINE = pa.schema([("section_id", STR), ("jurisdiction_id", STR), ("number", STR), ("text", STR),
                       ("heading", STR)])


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def jurisdiction_splits(jurisdiction_ids: list[str]) -> dict[str, str]:
    """jurisdiction_id -> split (see module docstring); empty when fewer than three."""
    ordered = sorted(set(jurisdiction_ids), key=lambda j: (_hash(j), j))
    if len(ordered) < 3:
        return {}
    n_test = max(1, round(len(ordered) * SHARES["test"]))
    n_val = max(1, round(len(ordered) * SHARES["validation"]))
    return {j: "test" if i < n_test else "validation" if i < n_test + n_val else "train"
            for i, j in enumerate(ordered)}


def domain_choices(section_id: str, gold: str) -> tuple[list[str], int]:
    """Gold plus three distractors, in an order fixed by the section id."""
    others = sorted((d for d in DOMAINS if d != gold), key=lambda d: _hash(section_id + d))
    choices = sorted([gold, *others[: N_CHOICES - 1]], key=lambda d: _hash(d + section_id))
    return choices, choices.index(gold)


def _rows(shards: list[Path]) -> Iterator[dict]:
    columns = ["section_id", "jurisdiction_id", "number", "heading", "text", "path", "status"]
    for shard in shards:
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=4_096, columns=columns):
            yield from batch.to_pylist()


def derive(shards: list[Path], jurisdiction_ids: list[str]) -> dict[str, dict[str, list[dict]]]:
    """{"domain": {split: rows}, "catchline": {split: rows}} from the sections shards."""
    splits = jurisdiction_splits(jurisdiction_ids)
    if not splits:
        return {}
    kept: dict[tuple[str, str], list[tuple[int, str, dict]]] = {
        (task, split): [] for task in ("domain", "catchline") for split in SPLITS}

    def offer(task: str, split: str, row: dict) -> None:
        heap, key = kept[(task, split)], -_hash(row["section_id"])  # max-heap of the smallest hashes
        item = (key, row["section_id"], row)
        if len(heap) < CAPS[split]:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)

    for s in _rows(shards):
        split = splits.get(s["jurisdiction_id"])
        if split is None or s["status"] != "active" or len(s["text"]) < MIN_TEXT:
            continue
        text = s["text"][:MAX_TEXT]
        base = {"section_id": s["section_id"], "jurisdiction_id": s["jurisdiction_id"], "number": s["number"]}
        domain = domain_of_path(s["path"])
        if domain:
            choices, label = domain_choices(s["section_id"], domain)
            offer("domain", split, {**base, "heading": s["heading"], "text": text, "domain": domain,
                                    "choices": choices, "label": label})
        heading = s["heading"].strip().rstrip(".")
        if heading and heading.lower() not in SKIP_HEADINGS and len(heading) <= 200:
            offer("catchline", split, {**base, "text": text, "heading": heading})
    return {task: {split: [row for _, _, row in sorted(kept[(task, split)], key=lambda t: (-t[0], t[1]))]
                   for split in SPLITS} for task in ("domain", "catchline")}
