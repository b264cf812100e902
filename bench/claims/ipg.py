"""IPG on a real model: do the top-k IPG-attributed MLP neurons matter more than random k, and does IPG rank
neurons as activation patching does?

Task: the 45 one-digit additions that carry (``7+5=`` -> ``12``) after a fixed two-line few-shot prefix; the
outcome of a sampled completion is 1 when its first two tokens are the answer's two digits. The embedded
SmolLM2-135M-Instruct gets about half right (its exact expected accuracy is measured and written as
``task``). Units: the MLP neurons of the upper layers (15-29 at default scale, 23,040 neurons).

Per seed: the items are shuffled; IPG (the sampled score-function estimator, M alphas x N completions per
item) attributes on ``attribute`` items; on ``evaluate`` other items (held out) the top-k IPG neurons are
zero-ablated, against ``draws`` random k-sets per item (seeded). Metric: the drop in exact expected accuracy
p(answer) per held-out item. A third arm ablates the top-k of attribution patching (grad x act of
log p(answer)), the gradient method IPG is meant to improve on. Rank agreement: on the attribution items,
each of a subset of neurons (the top by |IPG| and as many random ones) is zero-ablated alone (activation
patching with IPG's own baseline, s_i = 0); Spearman between IPG and that effect, with a two-level
bootstrap interval (seeds, then items). Completeness: sum of IPG against the exact J(1) - J(0).

``tiny`` runs a randomly initialised 4-layer Llama on a character vocabulary (loading the embedded model
alone takes longer than the tiny budget), so its figures say nothing about IPG.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from neurips26.methods.ipg.arithmetic import carry_additions
from neurips26.methods.ipg.estimator import estimate_ipg
from neurips26.methods.ipg.exact import (
    ablation_scales,
    answer_gradient,
    answer_probability,
    exact_match,
    unit_ablation_effects,
)
from neurips26.methods.ipg.scaling import neuron_sites
from neurips26.methods.ipg.shared import SharedPolicy
from neurips26.methods.ipg.validation import random_k, top_k
from scipy.stats import rankdata
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

from claims.core import CLAIMS, Arm, Outcome, interval
from neurips26 import models

METHOD, RANDOM, GRADIENT = "ipg-top-k", "random-k", "attribution-patching-top-k"


@dataclass(frozen=True)
class Scale:
    """How much of everything one scale runs."""

    model: str  # "embedded" or "tiny"
    layers: tuple[int, ...]
    attribute: int  # items IPG attributes on (per seed)
    evaluate: int  # held-out items the ablations are measured on (per seed)
    steps: int  # IPG Riemann steps M
    samples: int  # IPG sampled completions N per alpha
    ks: tuple[int, ...]
    headline: int  # the k of the main comparison
    draws: int  # random k-sets per k and seed
    patch: int  # neurons patched one at a time: this many top |IPG| and as many random
    bootstrap: int = 2000


SCALES = {
    "tiny": Scale("tiny", (2, 3), attribute=3, evaluate=6, steps=2, samples=4, ks=(4, 16), headline=4, draws=2,
                  patch=3, bootstrap=300),
    "default": Scale("embedded", tuple(range(15, 30)), attribute=8, evaluate=16, steps=8, samples=8,
                     ks=(10, 100, 1000), headline=100, draws=4, patch=16),
    "large": Scale("embedded", tuple(range(30)), attribute=16, evaluate=29, steps=8, samples=32,
                   ks=(10, 100, 1000, 4000), headline=100, draws=16, patch=64),
}


class CharTokens:
    """The tiny scale's vocabulary: one token per character of the task's prompts."""

    chars = "0123456789+=\n"

    def encode(self, text: str) -> list[int]:
        return [self.chars.index(c) for c in text]


def load(scale: Scale) -> tuple[Any, Any, str]:
    """(model, tokenizer with ``encode``, description)."""
    if scale.model == "tiny":
        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=16, hidden_size=32, intermediate_size=32, num_hidden_layers=4,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                             initializer_range=0.3, tie_word_embeddings=False)
        return LlamaForCausalLM(config).eval(), CharTokens(), "tiny randomly initialised Llama (4 layers)"


    folder = models.default_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).to(models.device())
    return model.eval(), tokenizer, f"{models.DEFAULT_MODEL_NAME} (embedded)"


def encode(tokenizer: Any, text: str) -> torch.Tensor:
    if isinstance(tokenizer, CharTokens):
        return torch.tensor(tokenizer.encode(text))
    return torch.tensor(tokenizer(text, add_special_tokens=False)["input_ids"])


@torch.no_grad()
def expected_accuracy(model: Any, items: list[tuple[torch.Tensor, torch.Tensor]]) -> np.ndarray:
    """p(answer | prompt) of the unmodified model for every item, batched over items of equal length."""
    device = next(model.parameters()).device
    out = np.zeros(len(items))
    for length in {len(p) + len(a) for p, a in items}:
        rows = [i for i, (p, a) in enumerate(items) if len(p) + len(a) == length]
        ids = torch.stack([torch.cat(items[i]) for i in rows]).to(device)
        answer = ids[:, -2:]
        logp = torch.log_softmax(model(input_ids=ids, logits_to_keep=3).logits[:, :-1].float(), -1)
        out[rows] = logp.gather(-1, answer[..., None]).squeeze(-1).sum(1).double().exp().cpu().numpy()
    return out


def spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray | float:
    """Spearman correlation of ``a`` and ``b`` along the last axis (0 where either is constant)."""
    ra, rb = rankdata(a, axis=-1), rankdata(b, axis=-1)
    ra, rb = ra - ra.mean(-1, keepdims=True), rb - rb.mean(-1, keepdims=True)
    norm = np.sqrt((ra ** 2).sum(-1) * (rb ** 2).sum(-1))
    rho = np.where(norm > 0, (ra * rb).sum(-1) / np.where(norm > 0, norm, 1.0), 0.0)
    return float(rho) if rho.ndim == 0 else rho


def rank_agreement(scores: list[np.ndarray], effects: list[np.ndarray], draws: int) -> dict[str, Any]:
    """Spearman of the mean ``scores`` [A, U] and mean ``effects`` [A, U] per seed, averaged over seeds; 95%
    interval from a two-level bootstrap: each draw resamples the seeds, then each picked seed's items."""
    per_seed = [spearman(s.mean(0), e.mean(0)) for s, e in zip(scores, effects, strict=True)]
    rng = np.random.default_rng(0)
    n = len(scores)
    picked = rng.integers(0, n, (draws, n))
    boot = np.zeros(draws)
    for slot in range(n):  # each slot of a draw gets its own item resample of the seed it picked
        for s in range(n):
            rows = picked[:, slot] == s
            items = rng.integers(0, len(scores[s]), (int(rows.sum()), len(scores[s])))
            boot[rows] += spearman(scores[s][items].mean(1), effects[s][items].mean(1)) / n
    return {"spearman": float(np.mean(per_seed)), "ci95": [float(x) for x in np.quantile(boot, [0.025, 0.975])],
            "per_seed": per_seed}


def run_seed(policy: SharedPolicy, items: list[tuple[torch.Tensor, torch.Tensor]], scale: Scale,
             seed: int) -> dict[str, Any]:
    """Attribute on some items, ablate on held-out ones, patch single neurons; everything of one seed."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(items))
    attribute = [items[i] for i in order[:scale.attribute]]
    evaluate = [items[i] for i in order[scale.attribute:scale.attribute + scale.evaluate]]
    n = policy.n_components

    ipg = np.stack([estimate_ipg(policy, [prompt], [answer.tolist()], exact_match, scale.steps, scale.samples,
                                 batch_rows=policy.batch_rows, seed=seed * 1000 + i).ipg
                    for i, (prompt, answer) in enumerate(attribute)])
    gradient = np.stack([answer_gradient(policy, prompt, answer) for prompt, answer in attribute])

    sets: list[tuple[int, str, np.ndarray]] = [(0, "base", np.array([], dtype=np.int64)), (0, "all", np.arange(n))]
    for k in scale.ks:
        sets += [(k, METHOD, top_k(ipg.mean(0), k)), (k, GRADIENT, top_k(gradient.mean(0), k))]
        sets += [(k, RANDOM, random_k(n, k, seed * 1_000_003 + k * 101 + d)) for d in range(scale.draws)]
    scales = ablation_scales(n, [idx for _, _, idx in sets])
    probs = np.stack([answer_probability(policy, prompt, answer, scales) for prompt, answer in evaluate], 1)
    drops = {k: {arm: (probs[0] - probs[[i for i, (kk, a, _) in enumerate(sets) if kk == k and a == arm]]).mean(0)
                 for arm in (METHOD, RANDOM, GRADIENT)} for k in scale.ks}

    ends = np.stack([answer_probability(policy, prompt, answer, ablation_scales(n, [sets[0][2], sets[1][2]]))
                     for prompt, answer in attribute])
    magnitude = np.argsort(-np.abs(ipg.mean(0)), kind="stable")[:scale.patch]
    others = np.setdiff1d(np.arange(n), magnitude)
    units = np.concatenate([magnitude, np.random.default_rng(seed + 7).choice(others, scale.patch, replace=False)])
    effects = np.stack([unit_ablation_effects(policy, prompt, answer, units) for prompt, answer in attribute])
    return {"drops": drops, "base": probs[0], "ipg": ipg, "gradient": gradient, "units": units,
            "effects": effects, "ends": ends}


def arms(runs: list[dict[str, Any]], k: int, compute: dict[str, Any]) -> dict[str, Arm]:
    """The three arms at ``k``: per seed the mean drop over held-out items, and the per-item drops."""
    return {arm: Arm(values=[float(r["drops"][k][arm].mean()) for r in runs], compute=compute,
                     items=[[float(x) for x in r["drops"][k][arm]] for r in runs])
            for arm in (METHOD, RANDOM, GRADIENT)}


@CLAIMS.register("ipg", method="Integrated Policy Gradient (IPG)",
                 claim="IPG finds the model components that drive a sampled, non-differentiable outcome: ablating "
                       "the top-k IPG units lowers the outcome more than ablating k random units, and IPG, a "
                       "linear approximation of causal mediation analysis, ranks units as activation patching does",
                 metric="drop in exact expected accuracy p(answer) on held-out items when k MLP neurons are "
                        "zero-ablated", direction="higher", baseline="k random MLP neurons of the same layers",
                 method_arm=METHOD, baseline_arm=RANDOM)
def ipg_claim(scale: str, seeds: list[int]) -> Outcome:
    """Top-k IPG vs random-k ablation on one-digit carry additions, and rank agreement with patching."""
    torch.set_num_threads(1)
    setting = SCALES[scale]
    model, tokenizer, described = load(setting)
    policy = SharedPolicy(model, neuron_sites(model, list(setting.layers)), temperature=1.0, max_new_tokens=2,
                          batch_rows=64)
    items = [(encode(tokenizer, prompt), encode(tokenizer, answer)) for prompt, answer in carry_additions()]
    if any(len(answer) != 2 for _, answer in items):
        raise ValueError("every answer must be two tokens (the policy samples two)")
    base = expected_accuracy(model, items)
    runs = [run_seed(policy, items, setting, seed) for seed in seeds]

    compute = {"train_steps": 0, "ipg_completions_per_item": setting.steps * setting.samples,
               "attribution_items": setting.attribute}
    conditions = {f"k={k}": arms(runs, k, compute) for k in setting.ks if k != setting.headline}
    versus_gradient = {}  # IPG against the gradient method it is meant to improve on, paired the same way
    for k in setting.ks:
        by_arm = arms(runs, k, compute)
        effect, ci = interval(by_arm[METHOD], by_arm[GRADIENT])
        versus_gradient[f"k={k}"] = {"effect": effect, "ci95": list(ci)}
    ends = np.concatenate([r["ends"] for r in runs])
    sums = np.concatenate([r["ipg"].sum(1) for r in runs])
    return Outcome(
        arms=arms(runs, setting.headline, compute), conditions=conditions,
        extra={
            "headline_k": setting.headline, "model": described, "units": f"MLP neurons of layers "
            f"{setting.layers[0]}-{setting.layers[-1]} ({policy.n_components})",
            "task": {"name": "one-digit additions that carry, two-line few-shot prefix", "items": len(items),
                     "expected_accuracy": float(base.mean()), "greedy_accuracy_lower_bound": float((base > .5).mean())},
            "settings": {k: v for k, v in vars(setting).items() if k != "layers"},
            "ipg_minus_attribution_patching": versus_gradient,
            "held_out_base_accuracy": [float(r["base"].mean()) for r in runs],
            "rank_agreement": {
                "units": f"{setting.patch} top |IPG| and {setting.patch} random neurons, zero-ablated one at a "
                         "time on the attribution items", "what": "Spearman with the single-unit ablation effect",
                "ipg": rank_agreement([r["ipg"][:, r["units"]] for r in runs], [r["effects"] for r in runs],
                                      setting.bootstrap),
                "attribution_patching": rank_agreement([r["gradient"][:, r["units"]] for r in runs],
                                                       [r["effects"] for r in runs], setting.bootstrap)},
            "completeness": {"sum_ipg_mean": float(sums.mean()),
                             "j1_minus_j0_mean": float((ends[:, 0] - ends[:, 1]).mean()),
                             "per_item_gap_abs_mean": float(np.abs(sums - (ends[:, 0] - ends[:, 1])).mean())},
            "counts": vars(policy.counts),
        })
