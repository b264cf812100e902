"""RoleMoE training: stage 1 specialises experts to roles, stage 2 forgets with the target roles' experts only.

Stage 1 (``cfg.moe_steps`` steps, lr ``cfg.moe_lr``) trains the router and every expert on the forget and retain
roles' train records, the base model frozen, with

    L = NLL(answer | prompt) + lambda_s * L_spec + lambda_d * L_dis        (see :mod:`.losses`)

on batches of role pairs (two records of each of ``cfg.moe_batch_size // 2`` roles), so that the batch's routing shows
whether a role's records agree. Stage 2 (``cfg.steps`` steps, lr ``cfg.learning_rate``) takes the experts the
target roles route to (each target role's ``cfg.moe_forget_top`` most used experts, measured on its records after
stage 1) and trains only those, the router and every other expert frozen, with NPO on the forget records (against
the model after stage 1) plus ``cfg.retain_weight`` * NLL on the retain records, which share those experts only
as much as their routing overlaps. The routing statistics before and after stage 1 go to ``model.report``.

With ``cfg.moe_routing == "owned"`` every role owns an expert (:mod:`.ownership`; at least as many experts as
roles), stage 1 routes each role's records through its own expert and teaches the router the owners by
cross-entropy, routing is top-1, and stage 2 trains the target roles' own experts, so retain roles that the
router sends to their own experts are untouched. ``cfg.moe_forget_loss`` picks stage 2's forgetting term (NPO, or
gradient difference's -NLL).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict

import numpy as np
import torch
import torch.nn.functional as F

from .. import data
from ..train import Original
from . import losses, ownership, routing
from .model import MoEConfig, RoleMoE

Batch = dict[str, torch.Tensor]


def role_pair_batches(items: list[dict], roles: list[int], batch_size: int, pad: int, seed: int,
                      device: str) -> Iterator[tuple[Batch, torch.Tensor]]:
    """Endless batches of two records from each of ``max(1, batch_size // 2)`` random roles, with their role ids."""
    rng = random.Random(seed)
    by_role: dict[int, list[int]] = {}
    for i, role in enumerate(roles):
        by_role.setdefault(role, []).append(i)
    names = sorted(by_role)
    while True:
        chosen = rng.sample(names, min(len(names), max(1, batch_size // 2)))
        picks = [i for role in chosen for i in (rng.sample(by_role[role], 2) if len(by_role[role]) > 1
                                                 else by_role[role] * 2)]
        batch = data.collate([items[i] for i in picks], pad)
        yield ({k: v.to(device) for k, v in batch.items()},
               torch.tensor([roles[i] for i in picks], device=device))


@torch.no_grad()
def prompt_gates(moe: RoleMoE, items: list[dict], pad: int, batch_size: int = 32) -> np.ndarray:
    """The gates of each encoded item's prompt: [n, E]."""
    out = []
    for start in range(0, len(items), batch_size):
        batch = data.collate(items[start:start + batch_size], pad)
        mask = batch["attention_mask"].bool() & (batch["labels"] == -100)
        out.append(moe.gates(batch["input_ids"].to(moe.device), mask.to(moe.device)).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, moe.cfg.experts))


@torch.no_grad()
def calibrate(moe: RoleMoE, items: list[dict], pad: int, batch_size: int = 32) -> None:
    """Set the router's standardisation to the mean and spread of the training prompts' features."""
    feats = []
    for start in range(0, len(items), batch_size):
        batch = data.collate(items[start:start + batch_size], pad)
        mask = batch["attention_mask"].bool() & (batch["labels"] == -100)
        feats.append(moe.prompt_features(batch["input_ids"].to(moe.device), mask.to(moe.device)))
    stacked = torch.cat(feats)
    moe.router.center.copy_(stacked.mean(0))
    moe.router.spread.copy_(stacked.std(0).clamp_min(1e-6) if len(stacked) > 1 else torch.ones_like(stacked[0]))


def sequence_logprob(moe: RoleMoE, batch: Batch) -> torch.Tensor:
    """log p(answer | prompt) per sequence under the RoleMoE model (routed on the prompt)."""
    logits = moe(**batch).logits[:, :-1].float()
    labels = batch["labels"][:, 1:]
    token = torch.gather(F.log_softmax(logits, -1), 2, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (token * (labels != -100)).sum(-1)


@contextmanager
def swapped(params: list[torch.nn.Parameter], values: list[torch.Tensor]) -> Iterator[None]:
    """Temporarily give ``params`` the ``values`` (the experts before stage 2)."""
    current = [p.detach().clone() for p in params]
    with torch.no_grad():
        for p, v in zip(params, values, strict=True):
            p.copy_(v)
    try:
        yield
    finally:
        with torch.no_grad():
            for p, v in zip(params, current, strict=True):
                p.copy_(v)


def unique_prompts(examples: list[data.Example]) -> list[data.Example]:
    """One example per prompt (records have several reference answers)."""
    return list({ex.prompt: ex for ex in examples}.values())


def _prompt_features(moe: RoleMoE, items: list[dict], pad: int, batch_size: int = 32) -> torch.Tensor:
    """The router's input for each encoded item's prompt: [n, dim] (fixed: the wrapped model is frozen)."""
    feats = []
    with torch.no_grad():
        for start in range(0, len(items), batch_size):
            batch = data.collate(items[start:start + batch_size], pad)
            mask = batch["attention_mask"].bool() & (batch["labels"] == -100)
            feats.append(moe.prompt_features(batch["input_ids"].to(moe.device), mask.to(moe.device)))
    return torch.cat(feats)


def build(model, names: list[str], cfg) -> tuple[RoleMoE, dict[str, int] | None]:
    """The RoleMoE model for roles ``names`` and, with ``cfg.moe_routing == "owned"``, each role's own expert
    (at least one expert per role, top-1 routing)."""
    owned = cfg.moe_routing == "owned"
    experts = max(cfg.moe_experts, len(names)) if owned else cfg.moe_experts
    moe = RoleMoE(model, MoEConfig(experts=experts, rank=cfg.lora_r, alpha=cfg.lora_alpha,
                                   window=cfg.max_length // 2, seed=cfg.seed, top_k=1 if owned else 0))
    return moe, (ownership.owners(names, experts) if owned else None)


def specialise(model, tokenizer, examples: list[data.Example], cfg,
               progress: Callable[[int, int], None] | None = None) -> tuple[RoleMoE, dict, dict, list[dict]]:
    """Stage 1: wrap ``model`` in RoleMoE and train router and experts on ``examples``; (the RoleMoE model, the
    routing statistics of its untrained and trained router, the per-step log).

    Learned routing (``cfg.moe_routing == "learned"``): NLL + lambda_s L_spec + lambda_d L_dis, the experts mixed
    by the router's gates. Owned routing: each role's examples go through its own expert (``moe.owner``) for the
    NLL, and the router learns the owners by cross-entropy (``cfg.route_weight``) on ``cfg.router_batch`` prompts
    per step, whose features the frozen model fixes once."""
    if cfg.moe_routing not in ("learned", "owned"):
        raise ValueError(f"moe_routing {cfg.moe_routing!r}: learned or owned")
    device = next(model.parameters()).device.type
    names = sorted({ex.role for ex in examples})
    moe, owner = build(model, names, cfg)
    pad = tokenizer.pad_token_id
    items = data.encode(tokenizer, examples, cfg.max_length)
    prompts = unique_prompts(examples)
    prompt_items = data.encode(tokenizer, prompts, cfg.max_length)
    calibrate(moe, prompt_items, pad)
    untrained = routing.statistics(prompt_gates(moe, prompt_items, pad), [ex.role for ex in prompts],
                                   cfg.moe_forget_top)
    torch.manual_seed(cfg.seed)
    trainable = [p for p in moe.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=cfg.moe_lr, weight_decay=0.0)
    batches = role_pair_batches(items, [names.index(ex.role) for ex in examples], cfg.moe_batch_size, pad,
                                cfg.seed, device)
    if owner is not None:
        features = _prompt_features(moe, prompt_items, pad)
        prompt_owner = torch.tensor([owner[ex.role] for ex in prompts], device=features.device)
        role_owner = torch.tensor([owner[n] for n in names], device=features.device)
        picker = torch.Generator().manual_seed(cfg.seed)
    moe.train()
    log = []
    for step in range(1, cfg.moe_steps + 1):
        start = time.perf_counter()
        batch, roles = next(batches)
        entry: dict = {"stage": 1, "step": step}
        if owner is None:
            nll = moe(**batch).loss
            aux = losses.specialization_loss(moe.routing.gates, roles)
            weight, entry["specialization"] = cfg.specialization_weight, aux.item()
        else:
            nll = moe(**batch, gates=ownership.one_hot(role_owner[roles], moe.cfg.experts)).loss
            pick = torch.randint(0, len(features), (cfg.router_batch,), generator=picker).to(features.device)
            aux = ownership.routing_loss(moe.router.logits(features[pick]), prompt_owner[pick])
            weight, entry["routing"] = cfg.route_weight, aux.item()
        dis = losses.disentanglement_loss(moe.expert_weights())
        loss = nll + weight * aux + cfg.disentanglement_weight * dis
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, cfg.max_grad_norm)
        optimizer.step()
        log.append({**entry, "loss": loss.item(), "nll": nll.item(), "disentanglement": dis.item(),
                    "seconds": time.perf_counter() - start})
        if progress:
            progress(step, cfg.moe_steps)
    moe.eval()
    gates = prompt_gates(moe, prompt_items, pad)
    trained = routing.statistics(gates, [ex.role for ex in prompts], cfg.moe_forget_top)
    moe.owner, moe.prompt_routing = owner, (gates, [ex.role for ex in prompts])
    return moe, untrained, trained, log


def forget_experts(moe: RoleMoE, tokenizer, forget: list[data.Example], retain: list[data.Example],
                   experts: list[int], cfg, progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """Stage 2: the forgetting loss (``cfg.moe_forget_loss``: NPO against the stage-1 model, or gradient
    difference's -NLL) on ``forget``, + ``cfg.retain_weight`` * NLL on ``retain``, through the given experts
    only; the per-step log."""
    if cfg.moe_forget_loss not in ("npo", "gd"):
        raise ValueError(f"moe_forget_loss {cfg.moe_forget_loss!r}: npo or gd")
    device = next(moe.parameters()).device.type
    pad = tokenizer.pad_token_id
    moe.requires_grad_(False)
    params = [p for e in experts for p in moe.expert_parameters(e)]
    for p in params:
        p.requires_grad_(True)
    before = [p.detach().clone() for p in params]
    optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=0.0)
    forget_batches = data.batches(data.encode(tokenizer, forget, cfg.max_length), cfg.batch_size, pad, cfg.seed,
                                  device)
    retain_batches = (data.batches(data.encode(tokenizer, retain, cfg.max_length), cfg.batch_size, pad,
                                   cfg.seed + 1, device) if retain and cfg.retain_weight > 0 else None)
    moe.train()
    log = []
    for step in range(1, cfg.steps + 1):
        start = time.perf_counter()
        batch = next(forget_batches)
        if cfg.moe_forget_loss == "npo":
            with torch.no_grad(), swapped(params, before):
                reference = sequence_logprob(moe, batch)
            term = -(2.0 / cfg.npo_beta) * F.logsigmoid(-cfg.npo_beta * (sequence_logprob(moe, batch)
                                                                          - reference)).mean()
        else:
            term = -moe(**batch).loss
        loss = term + (cfg.retain_weight * moe(**next(retain_batches)).loss if retain_batches else 0.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        optimizer.step()
        log.append({"stage": 2, "step": step, "loss": float(loss.detach()), cfg.moe_forget_loss: term.item(),
                    "seconds": time.perf_counter() - start})
        if progress:
            progress(step, cfg.steps)
    moe.eval()
    return log


def targets_experts(moe: RoleMoE, trained: dict, targets: list[str]) -> list[int]:
    """The experts stage 2 unlearns: the targets' own experts (owned routing), else those they route to most."""
    owner = getattr(moe, "owner", None)
    return sorted({owner[t] for t in targets}) if owner is not None else routing.touched(trained, targets)


def report(moe: RoleMoE, untrained: dict, trained: dict, targets: list[str], experts: list[int]) -> dict:
    """What ``fit`` records in ``moe.report``: routing before and after stage 1, targets, experts unlearned,
    routing purity of the targets (owned routing), parameter counts."""
    gates, roles = moe.prompt_routing
    owner = moe.owner or {r: int(np.argmax(trained["p_e_given_r"][r])) for r in trained["p_e_given_r"]}
    return {"config": asdict(moe.cfg), "untrained": untrained, "trained": trained, "targets": targets,
            "experts_unlearned": experts, "purity": ownership.purity(gates, roles, owner, targets),
            "parameters": {"per_expert": sum(p.numel() for p in moe.expert_parameters(0)),
                           "router": sum(p.numel() for p in moe.router.parameters()),
                           "unlearned": sum(p.numel() for e in experts for p in moe.expert_parameters(e))}}


def fit(model, tokenizer, forget: list[data.Example], retain: list[data.Example], cfg,
        progress: Callable[[int, int], None] | None = None) -> tuple[RoleMoE, Original, list[dict]]:
    """Both stages; (the RoleMoE model, its original: the experts switched off, the per-step log). The routing
    statistics, the target roles and the experts unlearned are in ``model.report``."""
    if not forget:
        raise ValueError("no forget examples")
    moe, untrained, trained, log = specialise(model, tokenizer, forget + retain, cfg,
                                              progress and (lambda s, _: progress(s, cfg.moe_steps + cfg.steps)))
    targets = sorted({ex.role for ex in forget})
    experts = targets_experts(moe, trained, targets)
    log += forget_experts(moe, tokenizer, forget, retain, experts, cfg,
                          progress and (lambda s, _: progress(cfg.moe_steps + s, cfg.moe_steps + cfg.steps)))
    moe.report = report(moe, untrained, trained, targets, experts)
    return moe, Original(moe), log
