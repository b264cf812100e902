"""One FiC evaluation of a loaded model: simulate, score and write every task type's run (used by
``neurips26 fic eval`` and, before and after training, by ``neurips26 fic distill``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import backend, report
from .evaluate import instructions, scored, scores_by_setting, simulate
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
             ) -> dict[str, dict[str, Any]]:
    """Run ``spec`` on ``lm`` and write transcripts, runs and ``summary.json`` under ``out``; the summaries."""
    summaries: dict[str, dict[str, Any]] = {}
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
        summaries[task_type] = report.summary(scores)
    (out / "summary.json").write_text(json.dumps(summaries, indent=1) + "\n", encoding="utf-8")
    return summaries
