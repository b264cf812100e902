"""The ReDiff experiment: a base arm and a ReDiff arm trained for the same total steps, decoded at each speed.

Both arms start from one pre-trained masked-diffusion LM (:func:`~.train.train_base`, ``steps``). The ReDiff arm
then trains ``stage1_steps`` on synthetic corruptions and ``stage2_steps`` on its own drafts; the base arm trains
as many further steps with the masked-diffusion objective, at the same learning rates (:func:`~.train.train_base_more`),
so each arm's model has received ``steps + stage1_steps + stage2_steps`` optimiser steps. The base decodes without
revision; ReDiff decodes with revision (and, as an ablation, without: ``rediff-no-revision``, the same model).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .cascade import summarise
from .data import Problems
from .decoding import Trace, decode
from .model import MaskedDiffusionLM, TorchDenoiser
from .schedule import Schedule
from .train import Cost, train_base, train_base_more, train_stage1, train_stage2

Advance = Callable[[int], None]
# decoder name -> (arm whose model it runs, whether it revises committed tokens)
DECODERS: dict[str, tuple[str, bool]] = {"base": ("base", False), "rediff": ("rediff", True),
                                         "rediff-no-revision": ("rediff", False)}


@dataclass
class Arms:
    """The trained models: ``base`` (masked diffusion only), ``stage1`` and ``rediff`` (after stage 2), with
    each arm's training costs in order."""

    base: MaskedDiffusionLM
    stage1: MaskedDiffusionLM
    rediff: MaskedDiffusionLM
    costs: dict[str, list[Cost]]

    def train_steps(self, arm: str) -> int:
        """Optimiser steps ``arm``'s model received in all (``base`` or ``rediff``)."""
        return sum(c.steps for c in self.costs[arm])


def train_arms(schedule: Schedule, seed: int = 0, device: str = "cpu",
               progress: Callable[[str, int], Advance] | None = None) -> Arms:
    """Pre-train one base model, then branch it into the two arms at equal total steps.

    ``progress(name, total)`` returns a per-step callback for a stage (a progress bar), or is None."""
    def bar(name: str, total: int) -> Advance | None:
        return progress(name, total) if progress is not None else None

    torch.manual_seed(seed)
    s = schedule
    model = MaskedDiffusionLM(s.digits, dim=s.dim, layers=s.layers).to(device)
    pretrain = train_base(model, s.steps, s.batch_size, seed=seed + 1, advance=bar("pre-training", s.steps))
    refiner = copy.deepcopy(model)
    more = train_base_more(model, s.stage1_steps, s.stage2_steps, s.batch_size, seed=seed + 4,
                           advance=bar("base: more steps", s.stage1_steps + s.stage2_steps))
    stage1 = train_stage1(refiner, s.stage1_steps, s.batch_size, seed=seed + 2,
                          advance=bar("ReDiff stage 1", s.stage1_steps))
    stage1_model = copy.deepcopy(refiner)
    stage2 = train_stage2(refiner, s.stage2_steps, s.batch_size, seed=seed + 3,
                          advance=bar("ReDiff stage 2", s.stage2_steps))
    return Arms(model, stage1_model, refiner, {"base": [pretrain, *more], "rediff": [pretrain, stage1, stage2]})


def decode_all(models: dict[str, MaskedDiffusionLM], problems: Problems, tokens_per_step: Iterable[int],
               decoders: Iterable[str] = tuple(DECODERS)) -> dict[str, dict[int, Trace]]:
    """``{decoder: {k: trace}}``: each decoder of :data:`DECODERS` (its arm's model from ``models``) at each ``k``."""
    out: dict[str, dict[int, Trace]] = {}
    for name in decoders:
        arm, revises = DECODERS[name]
        denoiser = TorchDenoiser(models[arm], revises=revises)
        out[name] = {k: decode(denoiser, problems.prompts, problems.answer_length, k) for k in tokens_per_step}
    return out


def exact_match_items(trace: Trace, targets: np.ndarray) -> list[float]:
    """Per-problem exact match (1.0 when every answer position is right)."""
    return (trace.final == targets).all(axis=1).astype(float).tolist()


def curve(traces: dict[str, dict[int, Trace]], targets: np.ndarray, window: int = 2) -> dict[str, list[dict[str, Any]]]:
    """``{decoder: [summary at each k]}``: the speed-quality curve of each decoder (see :func:`~.cascade.summarise`)."""
    return {name: [{"decoder": name, **summarise(t, targets, window)} for t in by_k.values()]
            for name, by_k in traces.items()}
