"""One FiC evaluation of a loaded model: simulate, score and write every task type's run (used by
``neurips26 fic eval`` and, before and after training, by ``neurips26 fic distill``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import backend, report
from .evaluate import instructions, scored, scores_by_setting, simulate
from .pau import BOOTSTRAP, performance, recovery
from .protocol import MAX_GEN_TOKS


@dataclass(frozen=True)
class EvalSpec:
    """What to run: task types, settings, simulations per instruction, instructions per task, generation."""

    task_types: Sequence[str]
    settings: Sequence[str]
    simulations: int
    limit: int | None = None
    split: str = "test"
    temperature: float = 1.0
    max_gen_toks: int | None = None  # None: the task type's standard budget
    timeout: float = 10.0


def evaluate(lm: Any, spec: EvalSpec, out: Path, *, model_name: str, model_args: Mapping[str, Any],
             root: Path | None = None, bar: Callable[[str, int], Callable[[int], None]] | None = None
             ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Run ``spec`` on ``lm`` and write transcripts, runs and ``summary.json`` under ``out``; the summaries and the
    scores (``{task_type: {setting: {task_id: [score per simulation]}}}``)."""
    summaries: dict[str, dict[str, Any]] = {}
    all_scores: dict[str, dict[str, Any]] = {}
    for task_type in spec.task_types:
        rows, data = instructions(task_type, spec.split, spec.limit, root)
        generation = backend.Generation(spec.max_gen_toks or MAX_GEN_TOKS[task_type], spec.temperature)
        advance = bar(task_type, 0) if bar else None
        conversations = simulate(lm, rows, spec.settings, spec.simulations, generation, advance)
        records = scored(conversations, spec.timeout)
        scores = scores_by_setting(records)
        report.write_transcripts(out / f"transcripts_{task_type}.jsonl", records)
        settings = {"settings": list(spec.settings), "simulations": spec.simulations,
                    "temperature": spec.temperature, "max_gen_toks": generation.max_gen_toks}
        if spec.split != "test" or spec.limit:
            settings.update(split=spec.split, limit=spec.limit)
        report.write_run(out / task_type, task_type, rows, records, scores, model_name=model_name,
                         model_args=model_args, data=data, settings=settings, chat_template=backend.template(lm))
        summaries[task_type], all_scores[task_type] = report.summary(scores), scores
    (out / "summary.json").write_text(json.dumps(summaries, indent=1) + "\n", encoding="utf-8")
    return summaries, all_scores


def full_change(before: Mapping[str, Any], after: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """P_full after - before for one task type, with a paired 95% bootstrap interval over instructions."""
    ids = sorted(set(before) & set(after))
    diffs = np.array([performance(after[i]) - performance(before[i]) for i in ids])
    draws = diffs[np.random.default_rng(seed).integers(0, len(ids), (BOOTSTRAP, len(ids)))].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return {"delta": float(diffs.mean()), "delta_ci": [float(low), float(high)], "dropped": bool(high < 0)}


def outcome(before: Mapping[str, Any], after: Mapping[str, Any], scores_before: Mapping[str, Any],
            scores_after: Mapping[str, Any]) -> dict[str, Any]:
    """Per task type: P_full, P_sharded before and after, FiC's recovery and whether the full setting dropped
    (its paired interval entirely below 0)."""
    out = {}
    for task_type, b in before.items():
        a = after[task_type]
        row: dict[str, Any] = {"P_full_before": b["full"]["P"], "P_full_after": a["full"]["P"],
                               "P_sharded_before": b["sharded"]["P"], "P_sharded_after": a["sharded"]["P"]}
        row["recovery"] = recovery(b["full"]["P"], b["sharded"]["P"], a["sharded"]["P"])
        row["full_change"] = full_change(scores_before[task_type]["full"], scores_after[task_type]["full"])
        out[task_type] = row
    return out
