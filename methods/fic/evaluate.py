"""Run the simulations: every instruction x setting x simulation as one conversation, all advanced in lockstep
(one batched ``generate_until`` call per round), then scored per task type.

``instructions(task_type, split)`` reads a config of the built ``fic`` folder (it never builds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from neurips26 import hubfolder
from neurips26.errors import UserError
from neurips26.options import resource_folder

from . import backend
from .scoring import extract, score
from .simulator import SETTINGS, Conversation, UserSimulator

Instruction = Mapping[str, Any]
MAX_TURNS = 32  # a safety net: every setting ends by itself after at most shards + 2 replies


def instructions(task_type: str, split: str = "test", limit: int | None = None,
                 root: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The instructions of one task type (config) and split, and the provenance of what was read."""
    folder = resource_folder(root, "fic")  # the built fic folder, or the folder holding it (the data rule)
    table = hubfolder.read_table(folder, task_type, split=split)
    if table is None:
        configs = ", ".join(c.name for c in hubfolder.read_configs(folder))
        raise UserError(f"{folder}: no {task_type!r} config with a {split!r} split (configs: {configs})")
    rows = table.to_pylist()
    return rows[:limit] if limit else rows, hubfolder.provenance(folder, "fic", task_type)


def answer_of(instruction: Instruction, response: str) -> str | None:
    """The answer attempt of ``response`` for this instruction's task type."""
    return extract(instruction["task_type"], response, instruction.get("entry_point", ""))


def simulate(lm: Any, rows: Sequence[Instruction], settings: Sequence[str], simulations: int,
             generation: backend.Generation, advance: Callable[[int], None] | None = None) -> list[Conversation]:
    """Play every (instruction, setting, simulation) conversation to its end; returns them in that order."""
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    user = UserSimulator(answer_of)
    conversations = [user.start(row, setting, k) for row in rows for setting in settings for k in range(simulations)]
    for _ in range(MAX_TURNS):
        active = [c for c in conversations if not c.done]
        if not active:
            break
        for conversation, response in zip(active, backend.chat(lm, [c.messages for c in active], generation),
                                          strict=True):
            user.reply(conversation, response)
        if advance:
            advance(len(active))
    return conversations


def scored(conversations: Sequence[Conversation], timeout: float = 10.0) -> list[dict[str, Any]]:
    """One transcript record per conversation: the messages, each turn, the final answer and its score."""
    return [{"task_id": c.instruction["task_id"], "task_type": c.instruction["task_type"], "setting": c.setting,
             "simulation": c.simulation, "shards": len(c.instruction["shards"]), "messages": c.messages,
             "turns": c.turns, "answer": c.answer, "score": score(c.instruction, c.answer, timeout=timeout)}
            for c in conversations]


def scores_by_setting(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """``{setting: {task_id: [score per simulation]}}`` from transcript records."""
    out: dict[str, dict[str, list[float]]] = {}
    for record in sorted(records, key=lambda r: r["simulation"]):
        out.setdefault(record["setting"], {}).setdefault(record["task_id"], []).append(float(record["score"]))
    return out
