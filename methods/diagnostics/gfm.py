"""Gated Forensic Memory: a relay that reads a VLM's most forensic layer and writes back into its late layers.

The relay is a pair of forward hooks on the frozen language model. At the output of block ``read_layer`` (the
hidden-state index the probes peak at) it keeps the image tokens' states; at the output of each block in
``write_layers`` (later indices) it adds ``tanh(gate) * encode(kept states)`` to the image tokens, where
``encode`` is a small MLP and ``gate`` a per-layer, per-channel vector initialised to zero: at initialisation the
model's outputs are bit-identical to the model without the relay. Training updates only the relay, on the
authenticity label alone (cross-entropy of the "yes"/"no" answer logits); the pixel masks are never used.

The answer is read at the last text position, so a write must be followed by at least one block (whose attention
carries the image tokens to that position): a write after the last block would never reach the answer and its gate
would get no gradient, so :meth:`ForensicRelay.attach` refuses it. :class:`AnswerPrior` is the frozen baseline at
the same training budget: the frozen VLM's own answer with only a bias on its two answer logits trained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from . import probing
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
        """Hook into the decoder blocks ``layers`` (hidden-state index i is the output of block i - 1); every write
        layer must come before the last block's output (else it cannot reach the answer)."""
        if max(self.write_layers) >= len(layers):
            raise ValueError(f"write layer {max(self.write_layers)} is the output of the last block of "
                             f"{len(layers)}: nothing after it carries the image tokens to the answer position")
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


class AnswerPrior(nn.Module):
    """The frozen baseline's only trainable part: a bias added to its "yes"/"no" logits (its label prior)."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(2))


Adapter = ForensicRelay | AnswerPrior


def write_layers(layers: int) -> tuple[int, ...]:
    """The relay's write layers: the outputs of the two blocks before the last (a write needs a block after it)."""
    return tuple(range(max(1, layers - 2), layers))


def read_layer_from(curve: Sequence[probing.LayerScore], before: int) -> tuple[int, str]:
    """The probe's peak among the layers before ``before``; the middle one when the curve is flat (and why)."""
    candidates = [s for s in curve if 1 <= s.layer < before]
    reading = probing.shape(candidates)
    if reading.flat:
        return max(1, before // 2), f"the probe curve is flat, so the middle layer {max(1, before // 2)} is read"
    return int(reading.peak), f"the probe peaks at layer {reading.peak}"


@dataclass(frozen=True)
class Training:
    steps: int
    losses: list[float]
    accuracy_before: float
    accuracy_after: float
    correct_after: list[int]  # per held-out image: 1 when the answer after training is right


def freeze(model: nn.Module) -> None:
    """No gradient for any base-model parameter."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)


def batch_inputs(vlm: VLM, examples: Sequence[Forgery]) -> dict[str, torch.Tensor]:
    """The model inputs of several images in one batch (same prompt, so the same length and image positions)."""
    parts = [vlm.inputs(e.image) for e in examples]
    return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}


def answer_logits(vlm: VLM, adapter: Adapter | None, example: Forgery | Sequence[Forgery]) -> torch.Tensor:
    """(batch, 2) logits of "yes" / "no" for one image or a batch (a relay placed at the image tokens, an
    answer prior added to the logits)."""
    inputs = batch_inputs(vlm, [example] if isinstance(example, Forgery) else example)
    if isinstance(adapter, ForensicRelay):
        adapter.at(vlm.image_positions(inputs["input_ids"][:1]))
    logits = vlm.answer_logits(vlm.model(**inputs).logits)
    return logits + adapter.bias if isinstance(adapter, AnswerPrior) else logits


def targets(examples: Sequence[Forgery]) -> torch.Tensor:
    """Answer index per image: 0 ("yes", tampered) or 1 ("no")."""
    return torch.tensor([0 if e.tampered else 1 for e in examples])


@torch.no_grad()
def correct(vlm: VLM, adapter: Adapter | None, examples: Sequence[Forgery], batch: int = 16) -> list[int]:
    """Per image: 1 when its "yes"/"no" answer matches its authenticity."""
    out: list[int] = []
    for start in range(0, len(examples), batch):
        chunk = examples[start:start + batch]
        out += (answer_logits(vlm, adapter, chunk).argmax(-1) == targets(chunk)).int().tolist()
    return out


def accuracy(vlm: VLM, adapter: Adapter | None, examples: Sequence[Forgery]) -> float:
    """Share of images whose "yes"/"no" answer matches their authenticity."""
    return float(np.mean(correct(vlm, adapter, examples)))


def train(vlm: VLM, adapter: Adapter, examples: Sequence[Forgery], test: Sequence[Forgery], steps: int = 300,
          lr: float = 1e-2, seed: int = 0, batch: int = 8) -> Training:
    """Train the adapter only (the VLM frozen) on authenticity labels, ``steps`` optimiser steps of ``batch``
    images drawn with ``seed``; accuracy on ``test`` before and after."""
    freeze(vlm.model)
    if isinstance(adapter, ForensicRelay):
        adapter.attach(vlm.text_layers)
    before = accuracy(vlm, adapter, test)
    optimizer = torch.optim.AdamW(adapter.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    frozen = None  # the answer prior sits after the frozen model: its logits are computed once, not per step
    if isinstance(adapter, AnswerPrior):
        with torch.no_grad():
            frozen = torch.cat([answer_logits(vlm, None, examples[i:i + 16]) for i in range(0, len(examples), 16)])
    losses = []
    for _ in range(steps):
        picked = rng.integers(len(examples), size=batch)
        chunk = [examples[int(i)] for i in picked]
        logits = frozen[picked] + adapter.bias if frozen is not None else answer_logits(vlm, adapter, chunk)
        loss = nn.functional.cross_entropy(logits, targets(chunk))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    after = correct(vlm, adapter, test)
    return Training(steps, losses, before, float(np.mean(after)), after)
