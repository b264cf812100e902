"""Load a causal LM, wrap it for LoRA (peft) or full-weight training, run an unlearning loss, save the result."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from neurips26 import models

from . import data

LORA_LR, FULL_LR = 1e-3, 2e-5


@dataclass
class TrainConfig:
    """Small CPU defaults; see the README of this package for GPU settings."""

    steps: int = 12
    batch_size: int = 4
    lr: float | None = None  # default: LORA_LR with LoRA, FULL_LR with full weights
    max_length: int = 128
    lora: bool = True
    lora_r: int = 8
    lora_alpha: int = 16
    retain_weight: float = 1.0  # gradient difference: weight of the retain NLL
    npo_beta: float = 0.1
    npo_retain_weight: float = 0.0  # > 0 adds a retain NLL term to NPO (NPO-RT)
    max_grad_norm: float = 1.0
    seed: int = 0
    # RoleMoE (methods/unlearn/rolemoe): experts, stage-1 steps and loss weights, experts forgotten per target role
    moe_experts: int = 4
    moe_steps: int = 24
    moe_batch_size: int = 8  # stage 1: two records of each of moe_batch_size // 2 roles
    moe_lr: float = 3e-3
    specialization_weight: float = 1.0
    disentanglement_weight: float = 0.1
    moe_forget_top: int = 1
    moe_routing: str = "learned"  # learned: router trained by -I(role; expert); owned: one expert per role
    route_weight: float = 1.0  # owned: weight of the router's cross-entropy against each role's own expert
    router_batch: int = 256  # owned: prompts per step for the router's loss
    moe_forget_loss: str = "npo"  # stage 2: npo or gd (-NLL on the forget set), + retain_weight * NLL(retain)

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else (LORA_LR if self.lora else FULL_LR)


class Original:
    """The model before unlearning: the LoRA adapter switched off, or a frozen copy of full weights."""

    def __init__(self, model, frozen=None) -> None:
        self.model, self.frozen = model, frozen

    @contextmanager
    def __call__(self) -> Iterator:
        if self.frozen is not None:
            yield self.frozen
        elif hasattr(self.model, "disable_adapter"):
            with self.model.disable_adapter():
                yield self.model
        else:
            yield self.model


def load_model(name_or_path: str | Path | None = None, device: str | None = None, dtype: str = "auto"):
    """(model, tokenizer) of any transformers causal LM; default the embedded SmolLM2-135M-Instruct."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = models.device(device)
    path = str(name_or_path or models.default_model_dir())
    models.check_model(path)
    torch_dtype = {"auto": torch.bfloat16 if device.startswith("cuda") else torch.float32,
                   "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype).to(device)
    return model, tokenizer


def prepare(model, cfg: TrainConfig) -> tuple[object, Original]:
    """The trainable model and the original: a LoRA adapter on every linear layer, or all weights + a copy."""
    if cfg.lora:
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=0.0, target_modules="all-linear",
                          task_type="CAUSAL_LM")
        model = get_peft_model(model, lora)
        return model, Original(model)
    frozen = copy.deepcopy(model).eval().requires_grad_(False)
    return model, Original(model, frozen)


def run(model, tokenizer, method, forget: list[data.Example], retain: list[data.Example], cfg: TrainConfig,
        progress: Callable[[int, int], None] | None = None) -> tuple[object, Original, list[dict]]:
    """Train ``model`` with ``method``'s loss for ``cfg.steps`` steps; (model, original, per-step log)."""
    if method.fit is not None:
        return method.fit(model, tokenizer, forget, retain, cfg, progress)
    if method.loss is None:
        return model, Original(model), []
    torch.manual_seed(cfg.seed)
    model, original = prepare(model, cfg)
    device = next(model.parameters()).device.type
    pad = tokenizer.pad_token_id
    forget_batches = data.batches(data.encode(tokenizer, forget, cfg.max_length), cfg.batch_size, pad, cfg.seed,
                                  device)
    retain_batches = (data.batches(data.encode(tokenizer, retain, cfg.max_length), cfg.batch_size, pad,
                                   cfg.seed + 1, device) if retain else None)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=0.0)
    model.train()
    log = []
    for step in range(1, cfg.steps + 1):
        start = time.perf_counter()
        loss = method.loss(model, next(forget_batches), next(retain_batches) if retain_batches else None,
                           original, cfg)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        optimizer.step()
        log.append({"step": step, "loss": loss.item(), "seconds": time.perf_counter() - start})
        if progress:
            progress(step, cfg.steps)
    model.eval()
    return model, original, log


def save(model, tokenizer, out: Path, cfg: TrainConfig) -> Path:
    """Write the adapter (LoRA) or the whole model (full weights) with the tokenizer; the folder written."""
    target = Path(out) / ("adapter" if cfg.lora else "model")
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    (target / "unlearn_config.json").write_text(json.dumps(asdict(cfg), indent=2) + "\n")
    return target
