"""RoleMoE against gradient difference on RoleBench-Unlearn, at equal optimiser steps.

The model to unlearn is a small Llama trained from scratch on the role prompts -> reference answers of the
folder's roles (:mod:`neurips26.methods.unlearn.tiny`; the embedded SmolLM2 is too slow to train and evaluate
18 times on a CPU). It is shared by both arms, and its role-prompted evaluation is the reference of the combined
score. Then, per seed and forget set (forget01 / forget05 / forget10, the RoleBench-Unlearn splits):

- ``rolemoe``: LoRA experts on every linear layer, one expert owned by each role, and a router taught to send a
  role's prompts to its expert (top-1 routing); stage 1 (``stage1`` steps) trains router and experts on every
  role's records; stage 2 (``stage2`` steps) trains only the target roles' experts with NPO on the forget records
  plus the retain NLL, the router and every other expert frozen;
- ``grad_diff``: a LoRA adapter trained with gradient difference, -NLL(forget) + NLL(retain), for
  ``stage1 + stage2`` steps.

Both arms' ``train_steps`` are pre-training + ``stage1 + stage2``. The metric is the combined score of
:mod:`neurips26.methods.unlearn.metrics` (harmonic mean of forgetting, retention and utility against the
reference), from our evaluator (the lm-eval tasks' prompts, scorer and measures). It is not a mean over items
(a harmonic mean of ratios of means over three sets), so the interval is a t interval over seeds. The headline
is the score averaged over the three forget sets; each forget set is a condition. ``extra.routing`` reports the
routing purity of each forget set's targets: the share of their routing mass on their own experts, and how many
experts they route to.
"""

from __future__ import annotations

import copy
import os
import statistics
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from neurips26.methods.unlearn import data, evaluate, metrics, tiny, train
from neurips26.methods.unlearn.methods import get
from neurips26.methods.unlearn.rolemoe import ownership
from neurips26.methods.unlearn.rolemoe import train as rolemoe

from claims.core import CLAIMS, ROOT, Arm, Outcome

SPLITS = data.FORGET_SETS
RAW = ROOT.parent / "shared" / "data" / "rolebench"
SETTINGS: dict[str, dict[str, Any]] = {
    # raw: None = the embedded sample (20 invented personas); retain_roles: retain roles kept (None: all)
    "tiny": {"raw": None, "retain_roles": 5, "model": tiny.TinyConfig(vocab_size=512, hidden=32, layers=1, heads=2,
                                                                       steps=20, batch_size=8, max_length=48),
             "stage1": 3, "stage2": 3, "limit": 4, "new_tokens": 6, "router_batch": 32},
    "default": {"raw": RAW, "retain_roles": 20, "model": tiny.TinyConfig(steps=400),
                "stage1": 24, "stage2": 16, "limit": 20, "new_tokens": 32, "router_batch": 256},
    "large": {"raw": RAW, "retain_roles": None, "model": tiny.TinyConfig(hidden=256, layers=4, steps=4000,
                                                                         batch_size=32, max_length=128),
              "stage1": 200, "stage2": 100, "limit": 100, "new_tokens": 48, "router_batch": 512},
}
LR = 5e-3  # the unlearning learning rate of both arms (LoRA / experts on a model trained from scratch)


def unlearn_config(setting: dict[str, Any], seed: int, **overrides: Any) -> train.TrainConfig:
    """The settings both arms share (batch 4 forget + 4 retain, LoRA rank 8, lr ``LR``), with ``overrides``."""
    return train.TrainConfig(batch_size=4, max_length=setting["model"].max_length, lr=LR, seed=seed,
                             moe_lr=LR, moe_batch_size=8, moe_routing="owned", moe_forget_loss="npo",
                             router_batch=setting["router_batch"], **overrides)


def folder_and_roles(setting: dict[str, Any], tmp: Path) -> tuple[Path, list[str]]:
    """The built RoleBench-Unlearn folder and the roles kept: every forget10 target + ``retain_roles`` others."""
    from neurips26.corpora.rolebench_unlearn import build  # lazy: the builder's dependencies only when run

    folder = tmp / "rolebench_unlearn"
    build.build(raw=setting["raw"], out=folder)
    targets = sorted({r["role"] for r in data.load_rows(folder, "forget10", "forget_train")})
    others = list(dict.fromkeys(r["role"] for r in data.load_rows(folder, "forget10", "retain_test")))
    return folder, targets + others[:setting["retain_roles"]]


def examples(folder: Path, split: str, part: str, roles: set[str]) -> list[data.Example]:
    return data.examples([r for r in data.load_rows(folder, split, part) if r["role"] in roles])


def score(model, tokenizer, folder: Path, split: str, original, eval_cfg: evaluate.EvalConfig,
          reference: dict[str, float] | None) -> dict[str, Any]:
    """Parts (and the combined score against ``reference``) of one model on one forget set."""
    result = evaluate.evaluate(model, tokenizer, folder, split, original, "", eval_cfg)
    return {"parts": result.parts, **(metrics.combined(result.parts, reference) if reference else {})}


def run(scale: str, seeds: list[int]) -> dict[str, Any]:
    """Every arm, seed and forget set: scores, routing purity, compute and timings."""
    setting = SETTINGS[scale]
    torch.set_num_threads(1)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="claim-rolemoe-") as tmp:
        folder, roles = folder_and_roles(setting, Path(tmp))
        kept = set(roles)
        everyone = examples(folder, "forget10", "forget_train", kept) + examples(folder, "forget10", "retain_train",
                                                                                  kept)
        model_cfg = setting["model"]
        original, tokenizer, pre_log = tiny.build(everyone, model_cfg, device)
        eval_cfg = evaluate.EvalConfig(limit=setting["limit"], max_new_tokens=setting["new_tokens"], batch_size=32,
                                       roles=tuple(roles))
        reference = {s: score(original, tokenizer, folder, s, train.Original(original), eval_cfg, None)["parts"]
                     for s in SPLITS}
        sets = {s: (examples(folder, s, "forget_train", kept), examples(folder, s, "retain_train", kept))
                for s in SPLITS}
        out: dict[str, Any] = {s: {"rolemoe": [], "grad_diff": [], "purity": []} for s in SPLITS}
        for seed in seeds:
            cfg = unlearn_config(setting, seed, moe_steps=setting["stage1"], steps=setting["stage2"])
            moe, _, trained, _ = rolemoe.specialise(copy.deepcopy(original), tokenizer, everyone, cfg)
            gates, prompt_roles = moe.prompt_routing
            for split, (forget, retain) in sets.items():
                targets = sorted({ex.role for ex in forget})
                unlearned = copy.deepcopy(moe)
                rolemoe.forget_experts(unlearned, tokenizer, forget, retain,
                                       rolemoe.targets_experts(unlearned, trained, targets), cfg)
                out[split]["rolemoe"].append(score(unlearned, tokenizer, folder, split, train.Original(unlearned),
                                                   eval_cfg, reference[split]))
                out[split]["purity"].append(ownership.purity(gates, prompt_roles, moe.owner, targets))
                gd_cfg = unlearn_config(setting, seed, steps=setting["stage1"] + setting["stage2"])
                model, original_gd, _ = train.run(copy.deepcopy(original), tokenizer, get("gd"), forget, retain,
                                                  gd_cfg)
                out[split]["grad_diff"].append(score(model, tokenizer, folder, split, original_gd, eval_cfg,
                                                     reference[split]))
        return {"results": out, "reference": reference, "roles": roles, "pretrain_loss": pre_log[-1]["loss"],
                "seconds": time.perf_counter() - started, "device": device,
                "experts": moe.cfg.experts, "parameters": {
                    "per_expert": sum(p.numel() for p in moe.expert_parameters(0)),
                    "model": sum(p.numel() for p in original.parameters())}}


def arms(results: dict[str, list[dict]], compute: dict[str, int]) -> dict[str, Arm]:
    return {name: Arm(values=[r["score"] for r in results[name]], compute=compute) for name in ("rolemoe",
                                                                                                 "grad_diff")}


@CLAIMS.register("rolemoe", method="RoleMoE",
                 claim="role-specific LoRA experts behind a role router, unlearning only the target roles' experts, "
                       "forget target roles with a better forgetting/retention/utility trade-off than gradient "
                       "difference",
                 metric="RoleBench-Unlearn combined score (harmonic mean of forgetting, retention, utility)",
                 direction="higher", baseline="gradient difference (LoRA), same model and optimiser steps",
                 method_arm="rolemoe", baseline_arm="grad_diff")
def rolemoe_claim(scale: str, seeds: list[int]) -> Outcome:
    """RoleMoE (owned experts, top-1 routing) against gradient difference on forget01/05/10."""
    setting = SETTINGS[scale]
    if setting["raw"] is not None and not Path(setting["raw"]).is_dir():
        return Outcome(untestable=f"needs RoleBench's released files at {setting['raw']}")
    measured = run(scale, seeds)
    res = measured["results"]
    compute = {"train_steps": setting["model"].steps + setting["stage1"] + setting["stage2"],
               "pretrain_steps": setting["model"].steps, "unlearn_steps": setting["stage1"] + setting["stage2"]}
    conditions = {split: arms(res[split], compute) for split in SPLITS}
    mean = {name: Arm(values=[float(np.mean([conditions[s][name].values[i] for s in SPLITS]))
                              for i in range(len(seeds))], compute=compute) for name in ("rolemoe", "grad_diff")}
    routing = {split: {"purity_mean": statistics.fmean(p["mean"] for p in res[split]["purity"]),
                       "argmax_share": statistics.fmean(p["argmax_share"] for p in res[split]["purity"]),
                       "n_experts_used": [p["n_experts_used"] for p in res[split]["purity"]],
                       "targets": res[split]["purity"][0]["targets"], "experts": measured["experts"],
                       "exclusive": all(p["exclusive"] for p in res[split]["purity"]),
                       "per_seed": res[split]["purity"]} for split in SPLITS}
    parts = {split: {name: [{k: r[k] for k in ("parts", "forgetting", "retention", "utility", "score")}
                            for r in res[split][name]] for name in ("rolemoe", "grad_diff")} for split in SPLITS}
    setting_json = {k: (asdict(v) if k == "model" else _relative(v) if k == "raw" else v) for k, v in setting.items()}
    return Outcome(arms=mean, conditions=conditions, extra={
        "headline": "combined score averaged over forget01, forget05 and forget10 (per seed)",
        "interval": "t interval over seeds: the combined score is not a mean over items",
        "routing": routing, "reference_parts": measured["reference"], "arm_parts": parts,
        "roles": measured["roles"], "pretrain_final_loss": measured["pretrain_loss"],
        "parameters": measured["parameters"], "settings": {**setting_json, "lr": LR},
        "seconds": measured["seconds"], "device": measured["device"]})



def _relative(raw: Path | None) -> str | None:
    """The raw folder as the results file records it: relative to the repository (no machine's paths)."""
    return None if raw is None else Path(os.path.relpath(raw, ROOT)).as_posix()
