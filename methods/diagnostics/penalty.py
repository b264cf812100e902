"""The text probing instance: tokens inside a LOCUS section's penalty clause against the rest of the section.

A penalty clause is a sentence that states a fine (a fine word and a dollar amount) or mentions jail, by the
rules of :mod:`neurips26.methods.locus_analysis.fines`. Sections with at least one penalty sentence and one other
sentence are probed; each token is labelled by whether its characters lie inside a penalty sentence.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from neurips26.methods.locus_analysis.fines import FINE_WORDS, JAIL, SENTENCE_BREAK, amounts

from neurips26.hubfolder import read_table

from .probing import Item

MAX_TOKENS = 256


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (whitespace already collapsed)."""
    spans, start = [], 0
    for boundary in SENTENCE_BREAK.finditer(text):
        spans.append((start, boundary.start()))
        start = boundary.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if b > a]


def penalty_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences that state a fine or mention jail."""
    return [(a, b) for a, b in sentence_spans(text)
            if (FINE_WORDS.search(text[a:b]) and amounts(text[a:b])) or JAIL.search(text[a:b])]


def items(texts: Iterable[str], tokenizer: Any, max_tokens: int = MAX_TOKENS) -> list[Item]:
    """One probing item per section that has penalty and other sentences within its first ``max_tokens``."""
    out = []
    for raw in texts:
        text = " ".join(str(raw).split())
        spans = penalty_spans(text)
        if not spans or len(spans) == len(sentence_spans(text)):
            continue
        encoded = tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=max_tokens,
                            add_special_tokens=False)
        labels = np.array([int(any(a <= s and e <= b for a, b in spans)) if e > s else -1
                           for s, e in encoded["offset_mapping"]])
        if len(set(labels[labels >= 0].tolist())) == 2:
            out.append(Item({"input_ids": torch.tensor([encoded["input_ids"]])}, labels))
    return out


def section_texts(folder: Path, limit: int | None = None) -> list[str]:
    """Texts of a built LOCUS folder's sections that speak of fines or jail (in section order), at most ``limit``."""
    table = read_table(folder, "sections", columns=["text"])
    if table is None:
        raise FileNotFoundError(f"{folder}: no sections shards (build it with: neurips26 build locus)")
    texts = [t for t in table.column("text").to_pylist() if t and (FINE_WORDS.search(t) or JAIL.search(t))]
    return texts[:limit] if limit else texts
