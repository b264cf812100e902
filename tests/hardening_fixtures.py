"""Small inputs the hardening and fuzz tests share: a Hub-ready folder of a few rows (no build needed), a results
file that passes the board's first checks, and the CLI runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

META = {"model_id": "org/model", "revision": "0123456789abcdef0123456789abcdef01234567", "precision": "float32",
        "params": 135_000_000, "license": "apache-2.0", "model_type": "pretrained", "submitter": "mallory"}
HOSTILE_TEXT = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m \x9b2J \u202eevil"


def tiny_folder(root: Path, name: str = "locus") -> Path:
    """A Hub-ready folder ``root/name`` with a ``sections`` config of three rows (one holding terminal escapes)
    and a ``counties`` config: enough for ``query`` and ``search``."""
    folder = root / name
    (folder / "data" / "sections").mkdir(parents=True, exist_ok=True)
    (folder / "data" / "counties").mkdir(parents=True, exist_ok=True)
    sections = pa.table({
        "section_id": ["a:1-1", "a:1-2", "b:2-1"], "jurisdiction_id": ["a", "a", "b"], "state": ["GA", "GA", "WI"],
        "number": ["1-1", "1-2", "2-1"], "heading": ["Dogs", "Noise", HOSTILE_TEXT],
        "text": ["Every dog shall be licensed.", "No loud noise after ten.", "Parking rules " + HOSTILE_TEXT]})
    counties = pa.table({"county_fips": ["13237"], "jurisdiction_ids": pa.array([["a"]], pa.list_(pa.string()))})
    pq.write_table(sections, folder / "data" / "sections" / "train-00000-of-00001.parquet")
    pq.write_table(counties, folder / "data" / "counties" / "train-00000-of-00001.parquet")
    manifest = {"configs": {
        "sections": {"train": [{"path": "data/sections/train-00000-of-00001.parquet", "rows": 3}]},
        "counties": {"train": [{"path": "data/counties/train-00000-of-00001.parquet", "rows": 1}]}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def results_object(task: str = "locus_domain") -> dict[str, Any]:
    """A small lm-eval results object for one task."""
    return {"results": {task: {"alias": task, "acc,none": 0.5, "acc_stderr,none": 0.1}},
            "configs": {task: {"task": task, "num_fewshot": 0, "metadata": {"version": 1.0}}},
            "versions": {task: 1.0}, "n-shot": {task: 0}, "n-samples": {task: {"original": 2, "effective": 2}},
            "config": {"model": "hf", "model_args": "pretrained=org/model,dtype=float32", "model_num_parameters": 1,
                       "model_dtype": "torch.float32"},
            "lm_eval_version": "0.4.13", "model_name": "org/model", "date": 1.0}


def nested(depth: int) -> bytes:
    """A JSON text nested ``depth`` levels deep."""
    return b"[" * depth + b"]" * depth
