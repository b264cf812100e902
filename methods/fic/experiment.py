"""FiC's controlled experiment: one model, three training arms at equal optimiser steps, scored in each setting.

Per seed: a model (the :mod:`.toy` model pretrained here on the ``full`` view of every generated arithmetic
problem, or the embedded SmolLM2-135M-Instruct as it is) is scored, then copied into three arms, each trained by
:func:`.distill.distill` with the same teacher (the frozen model on the ``full`` view), targets, optimiser and
steps, on the train split; only the student's view differs:

* ``fic``: the sharded multi-turn view with the student's own replies (on-policy, regenerated every step);
* ``concat_ft``: the concatenated single-turn view (fine-tuning on concatenated instructions);
* ``no_distill``: the teacher's own view (no view asymmetry: no distillation signal).

Every model is scored on the test split (disjoint from train) in the ``full``, ``concat`` and ``sharded``
settings of :mod:`.simulator`, greedy, one final-answer score per instruction (:mod:`.play`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neurips26.corpora.fic import sources

from . import play, toy
from .backend import torch_dtype
from .chatids import ChatIds
from .distill import DistillConfig, distill

ARMS = {"fic": "sharded", "concat_ft": "concat", "no_distill": "teacher"}  # arm -> the student's view
SETTINGS = ("full", "concat", "sharded")


@dataclass(frozen=True)
class Scale:
    """The model and the training of one scale of the experiment."""

    model: str = "toy"  # "toy" (pretrained here) or "embedded" (SmolLM2-135M-Instruct, no pretraining)
    hidden: int = 64
    layers: int = 2
    pretrain_steps: int = 600
    pretrain_lr: float = 3e-3
    pretrain_batch: int = 16
    steps: int = 150  # distillation steps of every arm
    lr: float = 1e-3
    batch_size: int = 16
    lora: bool = False
    max_new_tokens: int = 8  # teacher response and evaluated reply tokens
    turn_tokens: int = 8  # tokens of the student's own intermediate replies
    turn_temperature: float = 0.0  # greedy, as the evaluation decodes
    teacher_view: str = "full"
    test_limit: int | None = None
    train_limit: int | None = None

    @property
    def train_steps(self) -> int:
        """Optimiser steps every arm's model received (pretraining included)."""
        return (self.pretrain_steps if self.model == "toy" else 0) + self.steps


def splits() -> dict[str, list[dict[str, Any]]]:
    """The generated arithmetic problems' train and test splits (as ``neurips26 build fic`` writes them)."""
    return sources.assign_splits(sources.generated_arithmetic(), sources.ARITHMETIC_TEST)


def base_model(scale: Scale, seed: int, tokenizer: Any, device: str,
               rows: Sequence[Mapping[str, Any]]) -> tuple[Any, ChatIds, list[float]]:
    """The model every arm starts from, its chat codec and its pretraining losses (none for the embedded one)."""
    if scale.model == "embedded":
        from transformers import AutoModelForCausalLM

        from neurips26 import models  # lazy: the embedded model loads only at this scale
        net = AutoModelForCausalLM.from_pretrained(models.default_model_dir(), dtype=torch_dtype(device))
        return net.to(device).eval(), ChatIds(tokenizer), []
    if scale.model != "toy":
        raise ValueError(f"model {scale.model!r}: toy or embedded")
    chat = ChatIds.compact(tokenizer, toy.domain_texts(rows), system=False)
    net = toy.model(chat, hidden=scale.hidden, layers=scale.layers, seed=seed).to(device)
    losses = toy.pretrain(net, chat, rows, steps=scale.pretrain_steps, lr=scale.pretrain_lr,
                          batch_size=scale.pretrain_batch, seed=seed, device=device)
    return net, chat, losses


def run_seed(scale: Scale, seed: int, tokenizer: Any, device: str) -> dict[str, Any]:
    """One seed: ``{"scores": {model: {setting: [score per test instruction]}}, "costs": {arm: cost},
    "pretrain_loss": last loss}``; models are ``before`` and every arm of :data:`ARMS`."""
    data = splits()
    test, train = data["test"][:scale.test_limit], data["train"][:scale.train_limit]
    net, chat, losses = base_model(scale, seed, tokenizer, device, data["train"] + data["test"])

    def evaluate(model: Any) -> dict[str, list[float]]:
        return play.scores(model, chat, test, SETTINGS, max_new_tokens=scale.max_new_tokens)

    scores = {"before": evaluate(net)}
    costs = {}
    for arm, view in ARMS.items():
        config = DistillConfig(steps=scale.steps, lr=scale.lr, lora=scale.lora, max_new_tokens=scale.max_new_tokens,
                               seed=seed, teacher_view=scale.teacher_view, student_view=view,
                               turn_tokens=scale.turn_tokens, turn_temperature=scale.turn_temperature,
                               batch_size=scale.batch_size)
        started = time.perf_counter()
        trained, cost = distill(copy.deepcopy(net), tokenizer, train, config, device, chat=chat)
        costs[arm] = cost.as_dict() | {"seconds": time.perf_counter() - started}
        scores[arm] = evaluate(trained)
        del trained
    return {"scores": scores, "costs": costs, "pretrain_loss": losses[-1] if losses else None,
            "test_ids": [row["task_id"] for row in test]}


def recovered(before: Mapping[str, Sequence[float]], after: Mapping[str, Sequence[float]]) -> float | None:
    """The share of the sharded-vs-full gap an arm recovered: (P_sharded,after - P_sharded,before) /
    (P_full,before - P_sharded,before); None when there is no gap."""
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    gap = mean(before["full"]) - mean(before["sharded"])
    return None if gap <= 0 else (mean(after["sharded"]) - mean(before["sharded"])) / gap

