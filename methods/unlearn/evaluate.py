"""Our batched evaluator: the same prompts, scorer and measures as the lm-eval tasks, on an in-memory model.

It generates greedily (left-padded batches, cut at the tasks' stop sequences) for the first ``limit`` test
questions of the target roles, of the other roles and of the general set, then scores every response: style
(role fidelity), ROUGE-L, and NLL under the original model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import data, metrics, prompts
from . import scorer as role_scorer


@dataclass
class EvalConfig:
    limit: int | None = 24  # test questions per set (forget, retain, general); None: all
    max_new_tokens: int = prompts.MAX_NEW_TOKENS
    batch_size: int = 16
    roles: tuple[str, ...] | None = None  # only these roles' test questions (None: every role)


@dataclass
class Evaluation:
    parts: dict[str, float]
    samples: list[dict]
    scorer: dict
    generate_seconds: float = 0.0
    score_seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def responses_per_second(self) -> float:
        seconds = self.generate_seconds + self.score_seconds
        return len(self.samples) / seconds if seconds else float("nan")


@torch.no_grad()
def generate(model, tokenizer, texts: list[str], cfg: EvalConfig) -> list[str]:
    """Greedy continuations of rendered prompts, in input order, cut at the stop sequences."""
    device = next(model.parameters()).device
    tokenizer.padding_side = "left"
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: dict[int, str] = {}
    for start in range(0, len(order), cfg.batch_size):
        chunk = order[start:start + cfg.batch_size]
        enc = tokenizer([texts[i] for i in chunk], return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(device) for k, v in enc.items()}
        tokens = model.generate(**enc, max_new_tokens=cfg.max_new_tokens, do_sample=False,
                                pad_token_id=tokenizer.pad_token_id, stop_strings=list(prompts.STOP),
                                tokenizer=tokenizer)
        for i, row in zip(chunk, tokens[:, enc["input_ids"].shape[1]:], strict=True):
            out[i] = prompts.cut(tokenizer.decode(row, skip_special_tokens=True))
    return [out[i] for i in range(len(texts))]


def evaluate(model, tokenizer, folder: Path, forget: str, original, system: str = "",
             cfg: EvalConfig | None = None, progress: Callable[[str], None] | None = None) -> Evaluation:
    """Generate and score; ``system`` is prepended to every prompt (the refusal baseline's instruction)."""
    cfg = cfg or EvalConfig()
    cut = slice(None, cfg.limit)
    kept = (lambda rows: rows) if cfg.roles is None else (lambda rows: [r for r in rows if r["role"] in cfg.roles])
    rows = {"forget": kept(data.load_rows(folder, forget, "forget_test"))[cut],
            "retain": kept(data.load_rows(folder, forget, "retain_test"))[cut],
            "general": data.load_general(folder)[cut]}
    items = [(name, r) for name in ("forget", "retain", "general") for r in rows[name]]
    texts = [prompts.render(tokenizer, prompts.general_prompt(r["instruction"]) if name == "general"
                            else prompts.role_prompt(r["role"], r["question"]), system) for name, r in items]
    if progress:
        progress(f"generating {len(texts)} responses")
    start = time.perf_counter()
    responses = generate(model, tokenizer, texts, cfg)
    generate_seconds = time.perf_counter() - start

    if progress:
        progress("scoring")
    start = time.perf_counter()
    scorer = role_scorer.for_folder(folder)
    role_items = [(i, r) for i, (name, r) in enumerate(items) if name != "general"]
    style = dict(zip([i for i, _ in role_items],
                     scorer.fidelity([responses[i] for i, _ in role_items], [r["role"] for _, r in role_items],
                                     [r.get("language") or "en" for _, r in role_items]),
                     strict=True))
    with original() as before:  # one response at a time, exactly as the lm-eval tasks (and the board) score it
        nlls = metrics.response_nll(before, tokenizer, responses, 1)
    samples = []
    for i, ((name, r), response) in enumerate(zip(items, responses, strict=True)):
        samples.append({"set": name, "role": r.get("role"), "question": r.get("question") or r["instruction"],
                        "response": response, "style": style.get(i), "rougeL": metrics.rouge_l(response,
                                                                                                r["references"]),
                        "nll": nlls[i]})
    parts = {}
    for name in ("forget", "retain"):
        chosen = [s for s in samples if s["set"] == name]
        parts[f"{name}_style"] = _mean([s["style"] for s in chosen])
        parts[f"{name}_rougeL"] = _mean([s["rougeL"] for s in chosen])
    parts["general_rougeL"] = _mean([s["rougeL"] for s in samples if s["set"] == "general"])
    parts["ppl"] = metrics.perplexity(nlls)
    return Evaluation(parts, samples, role_scorer.describe(scorer), generate_seconds, time.perf_counter() - start,
                      {name: len(r) for name, r in rows.items()})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
