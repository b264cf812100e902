"""ReDiff: refinement-enhanced training repairs the error cascade of parallel decoding in a masked-diffusion LM.

The experiment of ``neurips26 rediff train|eval`` (``neurips26.methods.rediff.experiment``), on generated addition
with long carry chains (an answer digit depends on a digit pair far below it, ``methods/rediff/data.py``). Per
seed, one masked-diffusion LM is pre-trained (``steps``) and branched: the ReDiff arm trains stage 1 (revise
synthetic corruptions) and stage 2 (revise its own parallel drafts toward the exact answer); the base arm trains
as many further steps with the masked-diffusion objective at the same learning rates. Both arms' models have
received ``steps + stage1_steps + stage2_steps`` optimiser steps (``compute.train_steps``). The base decodes
without revision; ReDiff revises committed tokens at every step and in one final pass (``rediff-no-revision`` is
the ReDiff model decoded without revision, an ablation reported beside them).

Metric: exact match of the answer; items are the evaluation problems (the fixed ``evaluation_set``, the same for
both arms and every seed). Each tokens-per-step value k is a condition (``tokens_per_step=k``). The headline is the
largest k at which the base has a cascade: its mean exact match is at least :data:`CASCADE_DROP` below its own at
one token per step (the largest k when no k qualifies; ``extra.headline_rule`` records which applied).
``extra.curve`` is ``{k: {decoder: mean exact match}}``; ``extra.base_drop`` the base's loss against k = 1.
"""

from __future__ import annotations

import numpy as np
from neurips26.methods.rediff.cascade import speeds, summarise
from neurips26.methods.rediff.data import evaluation_set
from neurips26.methods.rediff.experiment import DECODERS, decode_all, exact_match_items, train_arms
from neurips26.methods.rediff.schedule import Schedule

from claims.core import CLAIMS, Arm, Outcome
from neurips26.models import device as default_device

# scale -> (training schedule of both arms, evaluation problems)
SCALES = {
    "tiny": (Schedule(digits=3, steps=120, stage1_steps=30, stage2_steps=20, batch_size=32, dim=32), 128),
    "default": (Schedule(), 512),
    "large": (Schedule(digits=8, steps=8000, stage1_steps=1500, stage2_steps=1500, batch_size=256, dim=128), 2048),
}
CASCADE_DROP = 0.05  # the base has a cascade at k when it loses this much exact match against k = 1


def headline(ks: list[int], base_exact: dict[int, float]) -> tuple[int, str]:
    """The headline tokens per step: the largest k whose base exact match is ``CASCADE_DROP`` below k = 1's."""
    cascading = [k for k in ks if k > 1 and base_exact[1] - base_exact[k] >= CASCADE_DROP]
    if cascading:
        return max(cascading), f"largest k with base exact match >= {CASCADE_DROP} below k=1"
    return max(ks), f"no k with base exact match >= {CASCADE_DROP} below k=1: the largest k"


@CLAIMS.register("rediff", method="ReDiff",
                 claim="Training a masked-diffusion LM to revise synthetic errors and then its own parallel drafts, "
                       "and letting it revise committed tokens while decoding, repairs the error cascade of "
                       "committing several tokens per step: higher exact match where the base model degrades.",
                 metric="exact match", direction="higher",
                 baseline="the base masked-diffusion LM (no revision), trained as many total steps",
                 method_arm="rediff", baseline_arm="base")
def rediff(scale: str, seeds: list[int]) -> Outcome:
    """ReDiff against the compute-matched base at every tokens-per-step value, on long-carry addition."""
    schedule, n_problems = SCALES[scale]
    problems = evaluation_set(schedule.digits, n_problems)
    ks = speeds(problems.answer_length)
    device = default_device()
    items: dict[str, dict[int, list[list[float]]]] = {d: {k: [] for k in ks} for d in DECODERS}
    stats: dict[str, dict[int, list[dict]]] = {d: {k: [] for k in ks} for d in DECODERS}
    passes: dict[str, dict[int, int]] = {d: {} for d in DECODERS}
    for seed in seeds:
        arms = train_arms(schedule, seed, device)
        if not arms.train_steps("base") == arms.train_steps("rediff") == schedule.total_steps:
            raise RuntimeError(f"unequal training: {arms.costs}")
        traces = decode_all({"base": arms.base, "rediff": arms.rediff}, problems, ks)
        for name, by_k in traces.items():
            for k, trace in by_k.items():
                items[name][k].append(exact_match_items(trace, problems.targets))
                stats[name][k].append(summarise(trace, problems.targets))
                passes[name][k] = trace.forward_passes
    conditions = {
        f"tokens_per_step={k}": {
            name: Arm(values=[float(np.mean(x)) for x in items[name][k]], items=items[name][k],
                      compute={"train_steps": schedule.total_steps, "decoding_passes": passes[name][k]})
            for name in DECODERS}
        for k in ks}
    def by_k(metric: str) -> dict[int, dict[str, float]]:
        return {k: {name: float(np.mean([s[metric] for s in stats[name][k]])) for name in DECODERS} for k in ks}

    curve = by_k("exact_match")
    base = {k: curve[k]["base"] for k in ks}
    top, rule = headline(ks, base)

    return Outcome(
        arms=conditions[f"tokens_per_step={top}"], conditions=conditions,
        extra={"headline_tokens_per_step": top, "headline_rule": rule,
               "curve": curve, "base_drop": {k: base[1] - base[k] for k in ks},
               "token_acc": by_k("token_acc"), "cascade_lift": by_k("cascade_lift"),
               "correction_rate": by_k("correction_rate"), "broken_rate": by_k("broken_rate"),
               "schedule": schedule.as_dict(), "eval_problems": n_problems, "device": device})
