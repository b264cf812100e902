"""Train examples for bgrpo from a built benchmark folder: each question's pool, evidence spans and answerer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .. import benchmarks, evaluators
from ..benchmarks import Question
from ..core import Pool
from ..pool import build_pool
from .train import Example, example


def judge(question: Question, pool: Pool, answerer: Any) -> Callable[[np.ndarray], float | None]:
    """The verdict of a frozen answering backend (:mod:`..answerers`) on picked candidates: it answers through the
    benchmark's lm-eval task (prompt, frames, scoring) and the task's ``acc`` grades it."""

    def grade(picks: np.ndarray) -> float | None:
        picks = np.asarray(picks, np.int64)
        spacing = float(np.median(np.diff(pool.times[pool.video_index == 0]))) if pool.n > 1 else 1.0
        placed = evaluators.Placed(pool.video_index[picks], pool.times[picks], spacing)
        return evaluators.answer(question, placed, answerer).get("acc")

    return grade


def examples(benchmark: str, folder: Path | None, candidate_fps: float = 2.0, encoder: str = "descriptor",
             cache: Path | None = None, limit: int | None = None, answerer: Any = None,
             progress: Callable[[int, int], None] | None = None) -> list[Example]:
    """One example per question with evidence spans (its candidate pool, labels inside the spans, and the frozen
    ``answerer``'s verdict on picks when one is given)."""
    questions = [q for q in benchmarks.load(benchmark, folder) if q.evidence][:limit]
    out = []
    for i, q in enumerate(questions, start=1):
        pool = build_pool(q.video_paths, query=q.query, encoder=encoder, candidate_fps=candidate_fps, cache=cache)
        out.append(example(pool, q.evidence, max(2, len(q.options)),
                           judge=judge(q, pool, answerer) if answerer is not None else None))
        if progress:
            progress(i, len(questions))
    return out
