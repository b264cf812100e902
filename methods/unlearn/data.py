"""Training examples from a built RoleBench-Unlearn folder: role prompt -> reference answer, tokenised."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from .prompts import render, role_prompt

FORGET_SETS = ("forget01", "forget05", "forget10")


@dataclass(frozen=True)
class Example:
    prompt: str
    answer: str
    role: str


def load_rows(folder: Path, forget: str, split: str) -> list[dict]:
    """Rows of one split (forget_train, forget_test, retain_train, retain_test) of a forget set."""
    import datasets

    if forget not in FORGET_SETS:
        raise ValueError(f"unknown forget set {forget!r}; known: {', '.join(FORGET_SETS)}")
    return datasets.load_dataset(str(folder), forget, split=split).to_list()


def load_general(folder: Path) -> list[dict]:
    import datasets

    return datasets.load_dataset(str(folder), "general", split="test").to_list()


def examples(rows: list[dict]) -> list[Example]:
    """One example per reference answer."""
    return [Example(role_prompt(r["role"], r["question"]), ref, r["role"]) for r in rows for ref in r["references"]]


def encode(tokenizer, items: list[Example], max_length: int) -> list[dict[str, list[int]]]:
    """input_ids and labels (-100 on the prompt): the rendered prompt (see ``prompts.render``), then the answer
    and the end-of-sequence token, cut to ``max_length`` tokens (at most half of them prompt)."""
    chat = bool(getattr(tokenizer, "chat_template", None))
    out = []
    for ex in items:
        prompt = tokenizer(render(tokenizer, ex.prompt), add_special_tokens=False)["input_ids"]
        answer = tokenizer(ex.answer if chat else " " + ex.answer, add_special_tokens=False)["input_ids"]
        answer = answer + [tokenizer.eos_token_id]
        prompt = prompt[-(max_length // 2):]
        ids = (prompt + answer)[:max_length]
        labels = ([-100] * len(prompt) + answer)[:max_length]
        out.append({"input_ids": ids, "labels": labels})
    return out


def collate(items: list[dict[str, list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded tensors: input_ids, attention_mask, labels."""
    width = max(len(i["input_ids"]) for i in items)
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(items), width), dtype=torch.long)
    labels = torch.full((len(items), width), -100, dtype=torch.long)
    for row, item in enumerate(items):
        n = len(item["input_ids"])
        ids[row, :n] = torch.tensor(item["input_ids"])
        mask[row, :n] = 1
        labels[row, :n] = torch.tensor(item["labels"])
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def batches(items: list[dict[str, list[int]]], batch_size: int, pad_id: int, seed: int,
            device: str = "cpu") -> Iterator[dict[str, torch.Tensor]]:
    """Endless shuffled batches (a new order each pass), on ``device``."""
    if not items:
        raise ValueError("no training examples")
    rng = random.Random(seed)
    while True:
        order = list(range(len(items)))
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = collate([items[i] for i in order[start:start + batch_size]], pad_id)
            yield {k: v.to(device) for k, v in batch.items()}
