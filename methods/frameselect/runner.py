"""One call from selectors to tables: select frames for every (question, selector, budget), evaluate, replay.

    sel, res = run("clovr", ["uniform", "random"], [8, 16, 32, 64])   # selection rows, result rows
    res += answer_rows(sel, "clovr", answerer("tiny-idefics3-seed1"))  # replay: answer stored selections

A *selection row* is what the ``selections`` config of the FrameSelect resource stores
(:data:`SELECTION_FIELDS`); a *result row* is one (benchmark, selector, evaluator, budget,
answering model, metric) mean over questions with its count ``n``. Answering works from
selection rows alone (their timestamps and video ids), so stored selections are
re-answered by any model without running a selector again.

``framerouter`` is accepted as a selector name: it allocates per-question budgets whose
mean is the budget (:mod:`.router`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.video.frames import open_video

from neurips26 import settings
from neurips26.errors import UserError

from . import benchmarks, evaluators, router
from .benchmarks import Question
from .core import SELECTORS, Pool, Selection, SelectorFailed, SelectorRefused, select
from .pool import build_pool

ROUTER = "framerouter"
SELECTION_FIELDS = ("benchmark", "question_id", "selector", "encoder", "budget", "seed", "n_frames", "video_ids",
                    "frame_indices", "timestamps", "scores")
Progress = Callable[[int, int], None] | None


def default_cache() -> Path:
    """``<cache>/frameselect``: the pools' encodings (see :mod:`.pool`)."""
    return settings.cache_dir() / "frameselect"


def pools(questions: Sequence[Question], encoder: str = "descriptor", candidate_fps: float = 10.0,
          cache: Path | None = None, progress: Progress = None) -> list[Pool]:
    """The candidate pool of every question (encodings cached per video in ``cache``)."""
    out = []
    for i, q in enumerate(questions, start=1):
        out.append(build_pool(q.video_paths, query=q.query, encoder=encoder, candidate_fps=candidate_fps,
                              cache=cache))
        if progress:
            progress(i, len(questions))
    return out


def _row(q: Question, pool: Pool, selector: str, encoder: str, budget: int, seed: int, sel: Selection
         ) -> dict[str, Any]:
    video = pool.video_index[sel.indices]
    times = pool.times[sel.indices]
    frames = [open_video(q.video_paths[v]).index_at(t) for v, t in zip(video, times, strict=True)]
    return {"benchmark": q.benchmark, "question_id": q.id, "selector": selector, "encoder": encoder,
            "budget": int(budget), "seed": int(seed), "n_frames": len(sel.indices),
            "video_ids": [q.video_ids[v] for v in video], "frame_indices": [int(f) for f in frames],
            "timestamps": [round(float(t), 6) for t in times],
            "scores": [None if np.isnan(s) else float(s) for s in sel.scores]}


def placed(q: Question, row: dict[str, Any], window: float = 1.0, pool: Pool | None = None) -> evaluators.Placed:
    """A stored selection row as placed frames of question ``q`` (features from ``pool`` when given)."""
    video = np.array([q.video_ids.index(v) for v in row["video_ids"]], dtype=np.int64)
    times = np.asarray(row["timestamps"], dtype=np.float64)
    features = None
    if pool is not None and pool.features is not None:
        key = {(int(v), round(float(t), 6)): i for i, (v, t) in enumerate(zip(pool.video_index, pool.times,
                                                                                   strict=True))}
        centred = pool.features - pool.features.mean(axis=0)  # the background every frame shares does not count
        features = centred[[key[(int(v), round(float(t), 6))] for v, t in zip(video, times, strict=True)]]
    return evaluators.Placed(video, times, window, features)


def select_all(questions: Sequence[Question], pool_list: Sequence[Pool], selectors: Sequence[str],
               budgets: Sequence[int], encoder: str = "descriptor", seed: int = 0, progress: Progress = None
               ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Selection rows for every (question, selector, budget); and how many each selector refused.

    A refusal is only a pool lacking a field the selector needs (:class:`SelectorRefused`); any other
    exception is a failure and raises :class:`SelectorFailed` naming the selector, question and budget.
    """
    unknown = [s for s in selectors if s != ROUTER and s not in SELECTORS]
    if unknown:
        raise UserError(f"unknown selector(s) {', '.join(unknown)}; known: {', '.join(SELECTORS.names())}, {ROUTER}")
    rows: list[dict[str, Any]] = []
    refused: dict[str, int] = defaultdict(int)
    steps, done = len(selectors) * len(budgets), 0
    for name in selectors:
        for budget in budgets:
            if name == ROUTER:
                try:
                    routed = router.route([q.query for q in questions], pool_list, int(budget), seed=seed)
                except SelectorRefused:  # the pools together hold fewer candidates than the budgets' total
                    refused[f"{name}@{budget}"] += len(questions)
                    routed = []
                except Exception as e:
                    raise SelectorFailed(f"{name} failed at budget {budget}: {type(e).__name__}: {e}") from e
                rows += [_row(q, p, name, encoder, budget, seed, r.selection)
                         for q, p, r in zip(questions, pool_list, routed, strict=False)]
            else:
                for q, pool in zip(questions, pool_list, strict=True):
                    try:
                        sel = select(name, pool, int(budget), seed)
                    except SelectorRefused:  # the pool lacks a needed field (e.g. the query has no features)
                        refused[name] += 1
                        continue
                    except Exception as e:
                        raise SelectorFailed(f"selector {name!r} failed on question {q.id} (budget {budget}, "
                                             f"{pool.n} candidates): {type(e).__name__}: {e}") from e
                    rows.append(_row(q, pool, name, encoder, budget, seed, sel))
            done += 1
            if progress:
                progress(done, steps)
    return rows, dict(refused)


def _mean_rows(values: dict[tuple, list[float]], evaluator: str, model: str) -> list[dict[str, Any]]:
    out = []
    for (benchmark, selector, budget, metric), vals in sorted(values.items()):
        out.append({"benchmark": benchmark, "selector": selector, "evaluator": evaluator, "budget": budget,
                    "answering_model": model, "metric": metric, "value": float(np.mean(vals)), "n": len(vals)})
    return out


def selection_rows(rows: Sequence[dict[str, Any]], questions: Sequence[Question], pool_list: Sequence[Pool],
                   window: float) -> list[dict[str, Any]]:
    """Selection-level result rows (means over questions with evidence) of stored selection rows."""
    by_id = {q.id: (q, p) for q, p in zip(questions, pool_list, strict=True)}
    values: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        q, pool = by_id[row["question_id"]]
        for metric, value in evaluators.selection_scores(q, placed(q, row, window, pool)).items():
            if value is not None:
                values[(row["benchmark"], row["selector"], row["budget"], metric)].append(float(value))
    return _mean_rows(values, "selection", "")


def answer_rows(rows: Sequence[dict[str, Any]], questions: Sequence[Question], answering: Any,
                progress: Progress = None) -> list[dict[str, Any]]:
    """Answer-level result rows: every stored selection answered by ``answering`` (no selector runs)."""
    by_id = {q.id: q for q in questions}
    missing = sorted({r["question_id"] for r in rows} - set(by_id))
    if missing:
        raise UserError(f"stored selections name questions the benchmark does not have: {', '.join(missing[:5])}")
    values: dict[tuple, list[float]] = defaultdict(list)
    for i, row in enumerate(rows, start=1):
        q = by_id[row["question_id"]]
        for metric, value in evaluators.answer(q, placed(q, row), answering).items():
            values[(row["benchmark"], row["selector"], row["budget"], metric)].append(value)
        if progress:
            progress(i, len(rows))
    return _mean_rows(values, "answer", answering.name)


def run(benchmark: str, selectors: Sequence[str], budgets: Sequence[int], encoder: str = "descriptor",
        candidate_fps: float = 10.0, seed: int = 0, folder: Path | None = None, limit: int | None = None,
        evidence_only: bool = True, cache: Path | None = None, progress: Progress = None, common: bool = False
        ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """Select and evaluate at the selection level: (selection rows, result rows, refusals per selector).

    ``common`` keeps only the questions every selector ran on at every budget, so all means are over one set.
    """
    if not budgets or min(budgets) < 1:
        raise UserError(f"budgets must be >= 1, got {list(budgets)}")
    questions = benchmarks.load(benchmark, folder)
    if evidence_only:
        questions = [q for q in questions if q.evidence]
    questions = questions[:limit] if limit else questions
    if not questions:
        raise UserError(f"benchmark {benchmark!r} has no questions{' with evidence spans' if evidence_only else ''}")
    pool_list = pools(questions, encoder, candidate_fps, cache)
    rows, refused = select_all(questions, pool_list, selectors, budgets, encoder, seed, progress)
    if common:
        done: dict[str, int] = defaultdict(int)
        for row in rows:
            done[row["question_id"]] += 1
        keep = {q for q, n in done.items() if n == len(selectors) * len(budgets)}
        rows = [row for row in rows if row["question_id"] in keep]
    return rows, selection_rows(rows, questions, pool_list, 1.0 / candidate_fps), refused
