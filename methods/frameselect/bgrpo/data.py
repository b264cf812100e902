"""Train examples for bgrpo from a built benchmark folder: each question's pool and its evidence spans."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .. import benchmarks
from ..pool import build_pool
from .train import Example, example


def examples(benchmark: str, folder: Path | None, candidate_fps: float = 2.0, encoder: str = "descriptor",
             cache: Path | None = None, limit: int | None = None,
             progress: Callable[[int, int], None] | None = None) -> list[Example]:
    """One example per question with evidence spans (its candidate pool, labels inside the spans)."""
    questions = [q for q in benchmarks.load(benchmark, folder) if q.evidence][:limit]
    out = []
    for i, q in enumerate(questions, start=1):
        pool = build_pool(q.video_paths, query=q.query, encoder=encoder, candidate_fps=candidate_fps, cache=cache)
        out.append(example(pool, q.evidence, max(2, len(q.options))))
        if progress:
            progress(i, len(questions))
    return out
