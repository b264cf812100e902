"""bgrpo beside every registered selector on generated CLoVR, train and test disjoint.

Train: the generator's release with seed 1 (``--train-sets`` sets of 3 videos), built into a temporary
folder; ``bgrpo`` is pre-trained on its questions' evidence spans, updated by GRPO with HOLMES's
descriptor readout as the frozen answerer of the reward (``frameselect_readout``), and written where the
selector reads it by default (``<cache>/frameselect/bgrpo``). Test: the default release (seed 0, 33
questions), never seen in training. Every selector picks 8/16/32 frames of each test question's pool
(descriptor encoder, 2 candidates per second); the questions are those every selector ran on
(query-aware selectors refuse questions whose wording names no colour). Reported per selector and budget:
the selection-level evaluators (evidence recall, coverage) and an answer-level score, the accuracy of the
descriptor graph readout (HOLMES's ``uniform`` readout, no gates) answering from exactly the selected frames.

    python bench/frameselect_bgrpo.py                     # ~10 min on 2 busy cores
    python bench/frameselect_bgrpo.py --limit 12 --budgets 8,16
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
from frameselect_readout import ReadoutAnswerer
from neurips26.corpora.clovr.build import build, default_raw
from neurips26.methods.frameselect import SELECTORS, benchmarks, runner
from neurips26.methods.frameselect.bgrpo import Config, card, example, train
from neurips26.methods.frameselect.bgrpo.reward import AnswerReward
from neurips26.methods.frameselect.pool import build_pool
from neurips26.methods.frameselect.selectors.bgrpo import default_model
from neurips26.methods.holmes.graph import BindingGraph
from neurips26.methods.holmes.perception import Descriptor
from neurips26.methods.holmes.readout import read
from neurips26.methods.holmes.slots import plan
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
console = Console(width=160)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--budgets", default="8,16,32")
    p.add_argument("--limit", type=int, default=None, help="test questions (default: all 33)")
    p.add_argument("--train-sets", type=int, default=4, help="sets of the seed-1 train release")
    p.add_argument("--members", type=int, default=5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=20.0, help="GRPO's step size")
    p.add_argument("--candidate-fps", type=float, default=2.0)
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "frameselect_bgrpo.json")
    return p.parse_args(argv)


def readout_accuracy(rows: list[dict], questions: list, pools: list) -> dict[tuple[str, int], float]:
    """Answer-level: the descriptor graph readout from each stored selection's frames (observations cached)."""
    by_id = {q.id: (q, p) for q, p in zip(questions, pools, strict=True)}
    seen: dict[tuple[str, int], list] = {}
    eye = Descriptor()
    acc: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for row in rows:
        q, pool = by_id[row["question_id"]]
        key = {(int(v), round(float(t), 6)): i for i, (v, t) in enumerate(zip(pool.video_index, pool.times,
                                                                                  strict=True))}
        p = plan(q.query, q.options, len(q.video_ids), q.row.get("subtask"))
        graph = BindingGraph(len(q.video_ids))
        for vid, t in zip(row["video_ids"], row["timestamps"], strict=True):
            i = key[(q.video_ids.index(vid), round(float(t), 6))]
            if (q.id, i) not in seen:
                seen[(q.id, i)] = eye.observe(pool, i, p.entities)
            graph.add(int(pool.video_index[i]), float(pool.times[i]), seen[(q.id, i)])
        durations = [float(d) for d in pool.video_durations]
        letter, _ = read(p, graph, {}, q.options, durations, None)
        acc[(row["selector"], row["budget"])].append(letter == q.answer)
    return {k: float(np.mean(v)) for k, v in acc.items()}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    cache = runner.default_cache()
    with tempfile.TemporaryDirectory() as tmp:
        train_folder, test_folder = Path(tmp) / "train", Path(tmp) / "test"
        console.print("building the train (seed 1) and test (seed 0) releases")
        build(raw=default_raw(seed=1) if args.train_sets == 3 else _raw(args.train_sets, Path(tmp)), out=train_folder)
        build(raw=default_raw(seed=0), out=test_folder)
        reader = ReadoutAnswerer()
        train_qs = [q for q in benchmarks.load("clovr", train_folder) if q.evidence]
        train_pools = [build_pool(q.video_paths, query=q.query, candidate_fps=args.candidate_fps, thumb=128,
                                  cache=cache) for q in train_qs]
        train_set = [example(p, q.evidence, max(2, len(q.options)), judge=lambda s, q=q, p=p: reader.grade(q, p, s))
                     for q, p in zip(train_qs, train_pools, strict=True)]
        config = Config(members=args.members, epochs=args.epochs, lr=args.lr)
        posterior = train(train_set, AnswerReward(), config=config)  # reward: the readout's likelihood
        posterior.save(default_model(), card(posterior, len(train_set), "generated CLoVR, seed 1",
                                             reward=ReadoutAnswerer.name))
        console.print(f"trained bgrpo on {len(train_set)} train questions -> {default_model()}")
        names = SELECTORS.names()
        rows, results, refused = runner.run("clovr", names, budgets, candidate_fps=args.candidate_fps,
                                            folder=test_folder, limit=args.limit, cache=cache, common=True)
        kept = {r["question_id"] for r in rows}
        questions = [q for q in benchmarks.load("clovr", test_folder) if q.evidence][:args.limit]
        questions = [q for q in questions if q.id in kept]
        pools = [build_pool(q.video_paths, query=q.query, candidate_fps=args.candidate_fps, thumb=128, cache=cache)
                 for q in questions]  # HOLMES's descriptor perception reads 128-pixel thumbnails
        answer = readout_accuracy(rows, questions, pools)
    cell: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for r in results:
        cell[(r["selector"], r["budget"])][r["metric"]] = r["value"]
    for k, v in answer.items():
        cell[k]["readout_acc"] = v
    table = Table(title=f"CLoVR test ({len(questions)} questions; train: {len(train_set)} questions of another seed): "
                        "recall / coverage / readout accuracy")
    table.add_column("selector")
    for b in budgets:
        table.add_column(f"{b} frames", justify="right")
    mean_recall = {s: np.mean([cell[(s, b)].get("recall", 0) for b in budgets]) for s in names}
    for s in sorted(names, key=lambda s: -mean_recall[s]):
        table.add_row(s, *[f"{cell[(s, b)].get('recall', float('nan')):.3f} / {cell[(s, b)].get('coverage', 0):.3f}"
                          f" / {cell[(s, b)].get('readout_acc', float('nan')):.2f}" for b in budgets])
    console.print(table)
    if refused:
        console.print(f"refused (pool lacks a needed field): {refused}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"questions": len(questions), "train_questions": len(train_set),
                                     "cells": {f"{s}@{b}": v for (s, b), v in cell.items()},
                                     "history": posterior.history}, indent=1) + "\n")
    console.print(f"numbers: {args.json}")


def _raw(n_sets: int, root: Path) -> Path:
    from neurips26.corpora.clovr.generate import generate

    generate(root / "train-raw", seed=1, n_sets=n_sets)
    return root / "train-raw"


if __name__ == "__main__":
    main()
