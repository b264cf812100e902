"""Per-response measures (ROUGE-L, perplexity under the original model) and the combined score.

Parts, each a mean over responses (perplexity: exp of the mean per-response NLL):

- ``forget_style``, ``forget_rougeL``: role fidelity and ROUGE-L on the target roles' test questions (want low);
- ``retain_style``, ``retain_rougeL``: the same on the other roles' test questions (want unchanged);
- ``general_rougeL`` on the general instruction set and ``ppl``, the perplexity of all responses under the
  original model (language quality, want unchanged).

The combined score compares a model with the reference (the original model, role-prompted; superscript 0)::

    F = clip(1 - (S_f/S_f0 + K_f/K_f0) / 2)      forgetting
    R = clip((S_r/S_r0 + K_r/K_r0) / 2)          retention
    U = clip((G/G0 + P0/P) / 2)                  utility
    score = 3 / (1/F + 1/R + 1/U), 0 when any part is 0

(S style, K ROUGE-L, G general ROUGE-L, P perplexity, clip to [0, 1]). The reference scores 0 by construction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache

import torch
import torch.nn.functional as F

from neurips26 import models, settings

PARTS = ("forget_style", "forget_rougeL", "retain_style", "retain_rougeL", "general_rougeL", "ppl")
MAX_SCORED_TOKENS = 256


@cache
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, references: list[str]) -> float:
    """Best ROUGE-L F1 of ``prediction`` against any reference (0 for an empty prediction)."""
    if not prediction.strip():
        return 0.0
    return max((_rouge().score(ref, prediction)["rougeL"].fmeasure for ref in references if ref.strip()), default=0.0)


@torch.no_grad()
def response_nll(model, tokenizer, texts: list[str], batch_size: int = 16) -> list[float]:
    """Mean NLL per token of each text on its own (after a start token), capped at log(vocabulary).

    An empty text gets the cap (the perplexity of a uniform guess), so an empty answer is never fluent.
    """
    cap = math.log(len(tokenizer))
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
    device = next(model.parameters()).device
    out: list[float] = []
    for i in range(0, len(texts), batch_size):
        seqs = [[start] + tokenizer(t, add_special_tokens=False)["input_ids"][:MAX_SCORED_TOKENS]
                for t in texts[i:i + batch_size]]
        width = max(len(s) for s in seqs)
        ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs], device=device)
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], device=device)
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
        nll = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none") * mask[:, 1:]
        for row, seq in enumerate(seqs):
            n = len(seq) - 1
            out.append(min(cap, float(nll[row].sum()) / n) if n else cap)
    return out


def perplexity(nlls: list[float]) -> float:
    return math.exp(sum(nlls) / len(nlls)) if nlls else float("nan")


@cache
def original_model():
    """The model responses are scored under in the lm-eval tasks: :func:`neurips26.settings.original_model` (a
    model id or folder) when set, else the embedded default model. Loaded once per process."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = settings.original_model() or str(models.default_model_dir())
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(models.device()).eval()
    return model, tokenizer


def _ratio(value: float, reference: float) -> float:
    return value / reference if reference > 0 else 1.0


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def combined(parts: Mapping[str, float], reference: Mapping[str, float]) -> dict[str, float]:
    """{"forgetting", "retention", "utility", "score"} of ``parts`` against the reference's parts."""
    forgetting = _clip(1 - (_ratio(parts["forget_style"], reference["forget_style"])
                            + _ratio(parts["forget_rougeL"], reference["forget_rougeL"])) / 2)
    retention = _clip((_ratio(parts["retain_style"], reference["retain_style"])
                       + _ratio(parts["retain_rougeL"], reference["retain_rougeL"])) / 2)
    utility = _clip((_ratio(parts["general_rougeL"], reference["general_rougeL"])
                     + _ratio(reference["ppl"], parts["ppl"])) / 2)
    terms = (forgetting, retention, utility)
    score = 0.0 if min(terms) <= 0 else 3 / sum(1 / t for t in terms)
    return {"forgetting": forgetting, "retention": retention, "utility": utility, "score": score}


def parts_from_lm_eval(results: Mapping) -> dict[str, float]:
    """The parts from an lm-eval results dict of the rolebench_unlearn tasks.

    ``ppl`` over all responses is exp of the sample-weighted mean of the tasks' log perplexities.
    """
    parts: dict[str, float] = {}
    log_ppl, n_total = 0.0, 0
    for task, metrics in results["results"].items():
        if not task.startswith("rolebench_unlearn_"):
            continue
        for key, value in metrics.items():
            metric = key.split(",", 1)[0]
            if metric in PARTS and metric != "ppl" and "_stderr" not in key:
                parts[metric] = float(value)
        if "ppl,none" in metrics:
            n = results["n-samples"][task]["effective"]
            log_ppl, n_total = log_ppl + n * math.log(metrics["ppl,none"]), n_total + n
    if n_total:
        parts["ppl"] = math.exp(log_ppl / n_total)
    return parts
