"""Gated Forensic Memory: a relay that reads a VLM's most forensic layer and writes back into its late layers.

The relay is a pair of forward hooks on the frozen language model. At the output of block ``read_layer`` (the
hidden-state index the probes peak at) it keeps the image tokens' states; at the output of each block in
``write_layers`` (later indices) it adds ``tanh(gate) * encode(kept states)`` to the image tokens, where
``encode`` is a small MLP and ``gate`` a per-layer, per-channel vector initialised to zero: at initialisation the
model's outputs are bit-identical to the model without the relay. Training updates only the relay, on the
authenticity label alone (cross-entropy of the "yes"/"no" answer logits); the pixel masks are never used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .forgery import Forgery
from .vlm import VLM


class ForensicRelay(nn.Module):
    """The relay: re-encoder and zero-initialised gates (see the module docstring)."""

    def __init__(self, dim: int, read_layer: int, write_layers: Sequence[int], hidden: int | None = None) -> None:
        super().__init__()
        if not write_layers or min(write_layers) <= read_layer:
            raise ValueError(f"write layers {list(write_layers)} must all come after the read layer {read_layer}")
        self.read_layer, self.write_layers = read_layer, tuple(write_layers)
        hidden = hidden or 2 * dim
        self.encode = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.gate = nn.Parameter(torch.zeros(len(self.write_layers), dim))
        self._kept: torch.Tensor | None = None
        self._positions: torch.Tensor | None = None
        self._handles: list[Any] = []

    def attach(self, layers: Sequence[nn.Module]) -> ForensicRelay:
        """Hook into the decoder blocks ``layers`` (hidden-state index i is the output of block i - 1)."""
        self.detach()
        self._handles.append(layers[self.read_layer - 1].register_forward_hook(self._read))
        for slot, layer in enumerate(self.write_layers):
            self._handles.append(layers[layer - 1].register_forward_hook(self._writer(slot)))
        return self

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def at(self, positions: np.ndarray) -> ForensicRelay:
        """The image-token positions of the next forward pass."""
        self._positions = torch.as_tensor(positions, dtype=torch.long)
        return self

    def _read(self, module: nn.Module, args: Any, output: Any) -> None:
        hidden = output[0] if isinstance(output, tuple) else output
        self._kept = hidden[:, self._positions]

    def _writer(self, slot: int):
        def write(module: nn.Module, args: Any, output: Any) -> Any:
            hidden = output[0] if isinstance(output, tuple) else output
            update = torch.tanh(self.gate[slot]) * self.encode(self._kept)
            hidden = hidden.index_add(1, self._positions.to(hidden.device), update.to(hidden.dtype))
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden
        return write


@dataclass(frozen=True)
class Training:
    steps: int
    losses: list[float]
    accuracy_before: float
    accuracy_after: float


def freeze(model: nn.Module) -> None:
    """No gradient for any base-model parameter."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)


def answer_logits(vlm: VLM, relay: ForensicRelay | None, example: Forgery) -> torch.Tensor:
    """(1, 2) logits of "yes" / "no" for one image (the relay, when given, placed at its image tokens)."""
    inputs = vlm.inputs(example.image)
    if relay is not None:
        relay.at(vlm.image_positions(inputs["input_ids"]))
    return vlm.answer_logits(vlm.model(**inputs).logits)


@torch.no_grad()
def accuracy(vlm: VLM, relay: ForensicRelay | None, examples: Sequence[Forgery]) -> float:
    """Share of images whose "yes"/"no" answer matches their authenticity."""
    right = [int(answer_logits(vlm, relay, e).argmax()) == (0 if e.tampered else 1) for e in examples]
    return float(np.mean(right))


def train(vlm: VLM, relay: ForensicRelay, examples: Sequence[Forgery], test: Sequence[Forgery], steps: int = 100,
          lr: float = 3e-3, seed: int = 0) -> Training:
    """Train the relay only (the VLM frozen) on authenticity labels; accuracy on ``test`` before and after."""
    freeze(vlm.model)
    relay.attach(vlm.text_layers)
    before = accuracy(vlm, relay, test)
    optimizer = torch.optim.AdamW(relay.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(steps):
        example = examples[int(rng.integers(len(examples)))]
        target = torch.tensor([0 if example.tampered else 1])
        loss = nn.functional.cross_entropy(answer_logits(vlm, relay, example), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return Training(steps, losses, before, accuracy(vlm, relay, test))
