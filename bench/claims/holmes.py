"""HOLMES (CLoVR-Bench): planned, certified evidence search across videos against uniform frames, same answerer.

Each seed generates a fresh CLoVR release (``corpora/clovr`` generator, seed ``100 + seed``: releases no
other figure uses), builds it and answers every question with ``holmes`` and with ``uniform`` (the same
perception, plan and graph readout from evenly spaced frames) at 4, 8, 16 and 32 frames per question. The
release's subtask labels are dropped: the planner reads each question through the embedded MiniLM
(:class:`~neurips26.methods.holmes.reading.Reader`), so it plans from the wording. Perception is the
generator's scene records (``oracle``: the upper bound of perception) and ``learned``
(:mod:`neurips26.methods.holmes.learned`: foreground blobs whose colour, type and hazard lights small MLPs
predict, trained for each seed on a release of its own, generator seed ``900 + seed``, so no evaluated video
or question is trained on). Two more conditions at the headline's 16 frames with oracle perception: every
question asked again in the held-out paraphrases (``methods/holmes/paraphrases.json``: synonyms the generator
never uses, other sentence structures), and the plan written by the embedded language model (the ``lm``
planner, SmolLM2-135M-Instruct through FrameSelect's answering backends; unparsable fields fall back to the
reader and are counted). Items are questions, paired across the two arms.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.clovr.build import build
from neurips26.corpora.clovr.generate import generate
from neurips26.methods.frameselect import benchmarks
from neurips26.methods.frameselect.pool import build_pool
from neurips26.methods.holmes import CLOVR_METHODS, PERCEPTION
from neurips26.methods.holmes.paraphrase import paraphrases
from neurips26.methods.holmes.planner import planner
from neurips26.methods.holmes.reading import Reader
from neurips26.methods.holmes.train import TRAIN_RELEASE, TRAIN_SEED, train

from claims.core import CLAIMS, Arm, Outcome

HEADLINE = ("oracle", 16)  # perception and frames of the headline comparison, fixed before any run
BUDGETS = (4, 8, 16, 32)
SCALES = {  # evaluated release, frame budgets per perception backend, training release, further conditions
    "tiny": dict(n_sets=1, videos_per_set=2, duration=20.0, budgets={"oracle": (8, 16), "learned": (16,)},
                 train=dict(n_sets=1, videos_per_set=2, duration=20.0), paraphrased=True, lm_planner=False),
    "default": dict(n_sets=4, videos_per_set=3, duration=24.0, budgets={"oracle": BUDGETS, "learned": BUDGETS},
                    train=TRAIN_RELEASE, paraphrased=True, lm_planner=True),
    "large": dict(n_sets=12, videos_per_set=3, duration=24.0, budgets={"oracle": BUDGETS, "learned": BUDGETS},
                  train=TRAIN_RELEASE, paraphrased=True, lm_planner=True),
}
PARAPHRASED = f"{HEADLINE[0]}, frames={HEADLINE[1]}, held-out paraphrases"
LM_PLANNED = f"{HEADLINE[0]}, frames={HEADLINE[1]}, LM planner"


def release(seed: int, root: Path, n_sets: int, videos_per_set: int, duration: float) -> tuple[list, Path]:
    """A freshly generated and built CLoVR release: its questions and scenes folder."""
    raw = root / "raw"
    generate(raw, seed=100 + seed, n_sets=n_sets, videos_per_set=videos_per_set, duration=duration)
    build(raw=raw, out=root / "clovr")
    return benchmarks.clovr(root / "clovr"), raw / "scenes"


def scores(questions: list, pools: list, perception: Any, budget: int, reader: Any) -> dict[str, list[float]]:
    """Per method, 1.0 where its answer to each question is right (read without the release's subtask label)."""
    unlabelled = [replace(q, row={**q.row, "subtask": None}) for q in questions]
    return {m: [float(CLOVR_METHODS.get(m)(q, pool, perception, budget=budget, reader=reader).letter == q.answer)
                for q, pool in zip(unlabelled, pools, strict=True)] for m in ("holmes", "uniform")}


def trained(seed: int, root: Path, spec: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Learned perception trained on a release of its own (generator seed ``TRAIN_SEED + seed``), and its card."""
    raw = root / "train"
    generate(raw, seed=TRAIN_SEED + seed, **spec)
    model = train(raw, seed=seed, cache=root / "cache", source=f"generator seed {TRAIN_SEED + seed}")
    return model, {"release": model.card["release"], "train_frames": model.card["train_frames"],
                   "recall": round(model.recall, 4), **model.card["held_out"]}


@CLAIMS.register(
    "holmes", method="HOLMES",
    claim="Planning the evidence a cross-video question needs (slots read from the question), searching for it "
          "with coverage certificates and reading the answer off a binding graph answers CLoVR-Bench questions "
          "more accurately than the same perception and readout over uniformly sampled frames at the same frame "
          "budget",
    metric="accuracy (oracle perception, 16 frames per question)", direction="higher",
    baseline="uniform frames: the same perception, plan and graph readout over evenly spaced frames",
    method_arm="holmes", baseline_arm="uniform")
def holmes(scale: str, seeds: list[int]) -> Outcome:
    """HOLMES against uniform frames per frame budget and perception backend on fresh CLoVR releases."""
    import torch

    torch.set_num_threads(1)
    cfg = SCALES[scale]
    reader = Reader()
    lm = planner("lm") if cfg["lm_planner"] else None
    per: dict[str, dict[str, list[list[float]]]] = {}
    n_questions, cards = [], []
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            questions, scenes = release(seed, Path(tmp), cfg["n_sets"], cfg["videos_per_set"], cfg["duration"])
            n_questions.append(len(questions))
            pools = [build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=2.0, thumb=128,
                                cache=Path(tmp) / "cache") for q in questions]
            backends = {"oracle": PERCEPTION.get("oracle")(scenes)}
            if "learned" in cfg["budgets"]:
                backends["learned"], card = trained(seed, Path(tmp), cfg["train"])
                cards.append(card)

            def add(key: str, got: dict[str, list[float]]) -> None:
                for m, items in got.items():
                    per.setdefault(key, {}).setdefault(m, []).append(items)

            for name, budgets in cfg["budgets"].items():
                for budget in budgets:
                    add(f"{name}, frames={budget}", scores(questions, pools, backends[name], budget, reader))
            oracle, frames = backends[HEADLINE[0]], HEADLINE[1]
            if cfg["paraphrased"]:
                pairs = [(p, pool) for q, pool in zip(questions, pools, strict=True) for p in paraphrases(q, seed)]
                add(PARAPHRASED, scores([p for p, _ in pairs], [pool for _, pool in pairs], oracle, frames, reader))
            if lm is not None:
                add(LM_PLANNED, scores(questions, pools, oracle, frames, lm))

    def arms(key: str) -> dict[str, Arm]:
        budget = int(key.split("frames=")[1].split(",")[0])
        return {m: Arm(values=[float(np.mean(x)) for x in items], items=items,
                       compute={"train_steps": 0, "frame_budget": budget}) for m, items in per[key].items()}

    head = f"{HEADLINE[0]}, frames={HEADLINE[1]}"
    extra: dict[str, Any] = {
        "questions_per_seed": n_questions, "generator_seeds": [100 + s for s in seeds],
        "release": {k: cfg[k] for k in ("n_sets", "videos_per_set", "duration")},
        "planner": "MiniLM reader (subtask labels dropped)",
        "grid": {"rows": "frames", "columns": "perception",
                 "cells": {("headline" if k == head else k): [int(k.split("frames=")[1]), k.split(",")[0]]
                           for k in per if k.count(",") == 1}}}
    if cards:
        extra["learned_perception_training"] = {**{k: v for k, v in cfg["train"].items()},
                                                "generator_seeds": ", ".join(str(TRAIN_SEED + s) for s in seeds)}
        extra["learned_perception_held_out"] = {k: float(np.mean([c[k] for c in cards])) for k in cards[0]
                                                if k not in ("release", "blobs")}  # means over seeds
        extra["learned_perception_per_seed"] = cards
    if lm is not None:
        extra["lm_planner"] = {"model": lm.answerer.name, "questions": lm.questions,
                               **{f"fallback: {r}": n for r, n in lm.fallbacks.most_common()}}
    return Outcome(arms=arms(head), conditions={k: arms(k) for k in per if k != head}, extra=extra)
