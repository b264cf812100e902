"""The vision probing instance: a VLM's image tokens inside vs outside the tampered region of a forgery."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .forgery import Forgery, token_labels
from .probing import Item
from .vlm import VLM


def items(vlm: VLM, examples: Sequence[Forgery]) -> list[Item]:
    """One probing item per tampered image whose grid has tokens of both labels; other tokens are -1."""
    out = []
    for example in examples:
        if not example.tampered:
            continue
        inputs = vlm.inputs(example.image)
        positions = vlm.image_positions(inputs["input_ids"])
        grid_labels = token_labels(example.mask, vlm.grid)
        if len(set(grid_labels[grid_labels >= 0].tolist())) < 2:
            continue
        labels = np.full(inputs["input_ids"].shape[1], -1)
        labels[positions] = grid_labels
        out.append(Item(inputs, labels))
    return out
