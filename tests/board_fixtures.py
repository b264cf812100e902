"""Helpers for the leaderboard tests: a task folder with protocols, and runs derived from real lm-eval files."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from neurips26.tasks import TASKS_DIR

REVISION = "0123456789abcdef0123456789abcdef01234567"

PROTOCOLS = {
    "locus_domain": {"split": "test", "num_fewshot": 0, "fewshot_split": "train", "chat_template": False,
                     "metric": "acc", "higher_is_better": True, "baseline": "majority", "range": [0, 1]},
    "locus_catchline": {"split": "test", "num_fewshot": 0, "fewshot_split": "train", "chat_template": False,
                        "metric": "rougeL", "higher_is_better": True, "baseline": 0, "range": [0, 1],
                        "generation": {"until": ["\n"], "do_sample": False, "max_gen_toks": 32}},
}


def protocol_tasks(folder: Path, groups: dict[str, list[str]] | None = None,
                   protocols: dict[str, dict[str, Any]] | None = None) -> Path:
    """A task folder holding the shipped LOCUS task YAMLs named in ``groups`` (default: locus = domain +
    catchline), each with ``metadata.protocol`` added, one group YAML per group and the tasks' ``utils.py``."""
    groups = groups or {"locus": ["locus_domain", "locus_catchline"]}
    protocols = PROTOCOLS if protocols is None else protocols
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TASKS_DIR / "locus" / "utils.py", folder / "utils.py")
    for group, members in groups.items():
        for task in members:
            text = (TASKS_DIR / "locus" / f"{task}.yaml").read_text()
            if task in protocols:
                block = yaml.safe_dump({"protocol": protocols[task]}, default_flow_style=True, width=10_000)
                text = text.rstrip() + "\n  " + block.strip()[1:-1].replace("protocol: ", "protocol: ", 1) + "\n"
            (folder / f"{task}.yaml").write_text(text)
        (folder / f"_{group}.yaml").write_text(yaml.safe_dump({"group": group, "task": members,
                                                                "metadata": {"version": 1.0}}))
    return folder


def meta(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": REVISION, "precision": "float32",
            "params": data["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "instruction-tuned", "submitter": "alice", **changes}


def dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, indent=2).encode()


def variant(data: dict[str, Any], run: int = 0) -> dict[str, Any]:
    """A copy of a results dict; ``run`` changes its date, as another run of lm-eval would."""
    data = copy.deepcopy(data)
    data["date"] = data["date"] + run
    return data
