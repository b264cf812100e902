"""Training the base masked-diffusion LM and the two stages of the ReDiff refiner, on generated problems.

* :func:`train_base`: the standard masked-diffusion objective. Each answer is masked at a rate drawn uniformly
  from (0, 1] per problem, and the loss is the cross-entropy at the masked positions only: the base model fills
  masks and has never learned to judge a committed token.
* :func:`train_base_more`: the compute-matched baseline: the pre-trained base goes on with the same objective for
  as many steps, at the same learning rates, as ReDiff's two stages, so both end with equal optimiser steps.
* :func:`train_stage1` (ReDiff stage 1, foundational revision): besides masking, some unmasked positions are
  replaced by a wrong digit (synthetic errors; a quarter of the drafts are left without masks, as drafts are
  once every position is committed), and the loss covers every answer position, so the model learns to keep
  right tokens and to revise wrong ones.
* :func:`train_stage2` (ReDiff stage 2, online self-correction): the model decodes fresh problems in parallel
  (a random number of tokens per step) and each intermediate draft, with its own errors, is corrected toward
  the target by the expert (here the exact answer); the model learns to map its own flawed drafts to the
  corrected ones. Half of each batch keeps the stage-1 corruptions.

Every function trains in place, calls ``advance(1)`` after each step (a progress bar) and returns its cost:
seconds and the peak memory (GPU memory on CUDA, the process's resident memory on CPU).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import psutil
import torch
import torch.nn.functional as F

from .cascade import speeds
from .data import MASK, VOCAB, Problems, generate
from .decoding import decode
from .model import MaskedDiffusionLM, TorchDenoiser

STAGE1_LR, STAGE2_LR = 1e-3, 5e-4  # peak learning rates of ReDiff's stages (and of the base's matched steps)


@dataclass
class Cost:
    """What a training stage cost."""

    stage: str
    steps: int
    seconds: float
    peak_memory_mb: float
    final_loss: float

    def as_dict(self) -> dict[str, float | int | str]:
        """The cost as a JSON object."""
        return asdict(self)


def problems(rng: np.random.Generator, n: int, digits: int) -> Problems:
    """Fresh training problems (never the fixed evaluation seed 0)."""
    return generate(n, digits, seed=int(rng.integers(1, 2 ** 62)))


def masked_canvas(rng: np.random.Generator, targets: np.ndarray, unmasked: float = 0.0) -> np.ndarray:
    """The targets with each problem's positions masked at a rate uniform in (0, 1] (at least one masked), except
    a share ``unmasked`` of the problems left whole (the drafts a refiner sees once every position is committed)."""
    n, length = targets.shape
    rate = rng.uniform(0.0, 1.0, size=(n, 1))
    mask = rng.random((n, length)) < rate
    mask[np.arange(n), rng.integers(0, length, size=n)] = True
    mask &= rng.random((n, 1)) >= unmasked
    return np.where(mask, MASK, targets)


def corrupt(rng: np.random.Generator, canvas: np.ndarray, targets: np.ndarray, rate: float = 0.15) -> np.ndarray:
    """``canvas`` with each unmasked position replaced, at ``rate``, by a digit different from the target."""
    hit = (canvas != MASK) & (rng.random(canvas.shape) < rate)
    wrong = (targets + rng.integers(1, 10, size=targets.shape)) % 10
    return np.where(hit, wrong, canvas)


def _step(model: MaskedDiffusionLM, optimiser: torch.optim.Optimizer, prompts: np.ndarray, canvas: np.ndarray,
          targets: np.ndarray, everywhere: bool) -> float:
    device = next(model.parameters()).device
    logits = model(torch.as_tensor(prompts, device=device), torch.as_tensor(canvas, device=device))
    target = torch.as_tensor(targets, device=device)
    loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), target.reshape(-1), reduction="none").view_as(target)
    weight = torch.ones_like(loss) if everywhere else torch.as_tensor(canvas == MASK, device=device).float()
    loss = (loss * weight).sum() / weight.sum().clamp(min=1.0)
    optimiser.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    return float(loss.detach())


def _run(stage: str, model: MaskedDiffusionLM, steps: int, lr: float, batch: Callable[[int], tuple],
         everywhere: bool, advance: Callable[[int], None] | None) -> Cost:
    device = next(model.parameters()).device
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup, decay = max(1, min(100, steps // 10)), max(1, steps // 5)
    schedule = torch.optim.lr_scheduler.LambdaLR(  # warm up, hold the peak (addition is learnt late), decay
        optimiser, lambda i: min((i + 1) / warmup, 1.0, max(0.1, (steps - i) / decay)))
    process = psutil.Process()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    peak, loss, start = process.memory_info().rss, float("nan"), time.perf_counter()
    model.train()
    for step in range(steps):
        loss = _step(model, optimiser, *batch(step), everywhere=everywhere)
        schedule.step()
        if step % 20 == 0:
            peak = max(peak, process.memory_info().rss)
        if advance is not None:
            advance(1)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else max(peak, process.memory_info().rss)
    model.eval()
    return Cost(stage, steps, round(seconds, 2), round(peak / 2 ** 20, 1), round(loss, 4))


def train_base(model: MaskedDiffusionLM, steps: int = 1500, batch_size: int = 256, lr: float = 3e-3, seed: int = 1,
               advance: Callable[[int], None] | None = None, stage: str = "base") -> Cost:
    """The masked-diffusion objective (loss at masked positions); ``stage`` names the returned cost."""
    rng = np.random.default_rng(seed)
    digits = model.config["digits"]

    def batch(_: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = problems(rng, batch_size, digits)
        return data.prompts, masked_canvas(rng, data.targets), data.targets

    return _run(stage, model, steps, lr, batch, everywhere=False, advance=advance)


def train_base_more(model: MaskedDiffusionLM, stage1_steps: int = 500, stage2_steps: int = 300,
                    batch_size: int = 256, seed: int = 4, advance: Callable[[int], None] | None = None) -> list[Cost]:
    """The masked-diffusion objective for ``stage1_steps`` then ``stage2_steps`` more steps, each with its ReDiff
    stage's learning rate and schedule (fresh optimiser): the base arm at ReDiff's total training steps."""
    return [train_base(model, stage1_steps, batch_size, lr=STAGE1_LR, seed=seed, advance=advance, stage="base-more-1"),
            train_base(model, stage2_steps, batch_size, lr=STAGE2_LR, seed=seed + 1, advance=advance,
                       stage="base-more-2")]


def train_stage1(model: MaskedDiffusionLM, steps: int = 500, batch_size: int = 256, lr: float = STAGE1_LR,
                 seed: int = 2, corruption: float = 0.15, advance: Callable[[int], None] | None = None) -> Cost:
    """ReDiff stage 1: revise synthetic corruptions (loss at every answer position)."""
    rng = np.random.default_rng(seed)
    digits = model.config["digits"]

    def batch(_: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = problems(rng, batch_size, digits)
        canvas = masked_canvas(rng, data.targets, unmasked=0.25)
        return data.prompts, corrupt(rng, canvas, data.targets, corruption), data.targets

    return _run("rediff-stage1", model, steps, lr, batch, everywhere=True, advance=advance)


def train_stage2(model: MaskedDiffusionLM, steps: int = 300, batch_size: int = 256, lr: float = STAGE2_LR,
                 seed: int = 3, corruption: float = 0.15, advance: Callable[[int], None] | None = None) -> Cost:
    """ReDiff stage 2: the model's own parallel drafts, corrected toward the exact answer (every position)."""
    rng = np.random.default_rng(seed)
    digits = model.config["digits"]
    ks = speeds(digits + 1)
    denoiser = TorchDenoiser(model, revises=True)

    def batch(_: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = problems(rng, batch_size, digits)
        half = batch_size // 2
        trace = decode(denoiser, data.prompts[:half], data.answer_length, int(rng.choice(ks)))
        pick = rng.integers(1, trace.drafts.shape[1], size=half)  # a draft after some step: the model's own errors
        drafts = trace.drafts[np.arange(half), pick]
        rest = corrupt(rng, masked_canvas(rng, data.targets[half:], 0.25), data.targets[half:], corruption)
        return data.prompts, np.concatenate([drafts, rest]), data.targets

    return _run("rediff-stage2", model, steps, lr, batch, everywhere=True, advance=advance)
