"""Found in Conversation: on-policy self-distillation from the single-turn view recovers the sharded-vs-full gap.

The experiment of ``neurips26.methods.fic.experiment``: per seed, one model (at tiny and default scale a small
Llama pretrained here on the full single-turn view of all 126 generated arithmetic problems, so it knows every
answer when asked in one turn and has never seen an instruction arrive over turns; at large scale the embedded
SmolLM2-135M-Instruct) is scored and branched into three arms trained at equal optimiser steps on the train split,
with the same teacher (the frozen model answering the full view) and targets: ``fic`` (the student sees the
sharded conversation with its own replies, on-policy), ``concat_ft`` (the concatenated single-turn view) and
``no_distill`` (the teacher's own view: no distillation signal).

Metric: the sharded-setting score (the final answer's exact match, greedy), items the 60 test instructions
(disjoint from train), paired across arms. The baseline arm ``control`` is whichever of the two controls has the
higher mean sharded score over all seeds (picked on the results, which favours the baseline);
``conditions`` compare FiC with each control alone. ``extra.recovered`` is each arm's share of the gap recovered
per seed, (P_sharded,after - P_sharded,before) / (P_full,before - P_sharded,before); ``extra.settings`` every
model's mean score per setting and seed, so a fall of the full setting under training shows.
"""

from __future__ import annotations

import numpy as np
from neurips26.methods.fic.experiment import ARMS, SETTINGS, Scale, recovered, run_seed

from claims.core import CLAIMS, Arm, Outcome

SCALES = {
    "tiny": Scale(hidden=32, layers=1, pretrain_steps=40, pretrain_batch=8, steps=3, batch_size=4, test_limit=8,
                  train_limit=8, max_new_tokens=4, turn_tokens=4),
    "default": Scale(),
    "large": Scale(model="embedded", steps=300, lr=2e-4, batch_size=8, lora=True, max_new_tokens=24,
                   turn_tokens=32),
}


@CLAIMS.register("fic", method="Found in Conversation (FiC)",
                 claim="Self-distilling a model from its own answers to the full single-turn instruction into the "
                       "sharded multi-turn conversation it holds with its own replies recovers much of the "
                       "sharded-vs-full performance gap, beyond fine-tuning on concatenated instructions.",
                 metric="sharded-setting exact match", direction="higher",
                 baseline="the better of two controls at equal optimiser steps and targets: fine-tuning on the "
                          "concatenated view, and no distillation (the student sees the teacher's own view)",
                 method_arm="fic", baseline_arm="control")
def fic(scale: str, seeds: list[int]) -> Outcome:
    """FiC against the better control on the sharded setting of held-out arithmetic instructions."""
    import torch
    from transformers import AutoTokenizer

    from neurips26 import models  # lazy: the tokenizer loads only when the claim runs

    spec = SCALES[scale]
    device = models.device(None)
    tokenizer = AutoTokenizer.from_pretrained(models.default_model_dir())
    runs = []
    for seed in seeds:
        torch.manual_seed(seed)
        runs.append(run_seed(spec, seed, tokenizer, device))
    steps = {"train_steps": spec.train_steps, "pretrain_steps": spec.train_steps - spec.steps,
             "distill_steps": spec.steps, "batch_size": spec.batch_size}
    arms = {name: Arm(values=[float(np.mean(r["scores"][name]["sharded"])) for r in runs],
                      items=[r["scores"][name]["sharded"] for r in runs],
                      compute=steps if name in ARMS else {"train_steps": spec.train_steps - spec.steps})
            for name in ("before", *ARMS)}
    controls = [a for a in ARMS if a != "fic"]
    best = max(controls, key=lambda a: np.mean(arms[a].values))
    arms["control"] = arms[best]
    settings = {name: {s: [float(np.mean(r["scores"][name][s])) for r in runs] for s in SETTINGS}
                for name in ("before", *ARMS)}
    extra = {
        "control_is": best,
        "recovered": {a: [recovered(r["scores"]["before"], r["scores"][a]) for r in runs] for a in ARMS},
        "settings": settings,
        "full_change": {a: float(np.mean(settings[a]["full"]) - np.mean(settings["before"]["full"])) for a in ARMS},
        "experiment": {"scale": vars(spec), "device": device, "test_ids": runs[0]["test_ids"],
                       "pretrain_loss": [r["pretrain_loss"] for r in runs]},
        "costs": {a: [r["costs"][a] for r in runs] for a in ARMS},
    }
    conditions = {f"vs {c}": {"fic": arms["fic"], "control": arms[c]} for c in controls}
    return Outcome(arms=arms, conditions=conditions, extra=extra)
