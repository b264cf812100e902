"""A small masked-diffusion LM over the addition tokens of :mod:`.data`, and its :class:`~.decoding.Denoiser`.

A bidirectional Transformer encoder reads the prompt followed by the answer canvas (:data:`~.data.MASK` where a
position is undecided) and predicts a token at every answer position. A token's position is the sum of two learned
embeddings: its digit's place value (units, tens, ...: the same for the two operand digits and the answer digit of
one column, as the Abacus embeddings of McLeish et al., 2024) and its segment (first operand, ``+``, second
operand, ``=``, answer), so the columns of the sum line up without being learned from absolute positions.

The same network serves as the base decoder (trained to fill masked positions only; it never revises) and as the
ReDiff refiner (trained to predict the right token at every position, committed ones included, so its proposal may
revise them): see :mod:`.train`. CUDA when present, CPU otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from neurips26 import models
from neurips26.errors import UserError

from .data import N_TOKENS, VOCAB


class MaskedDiffusionLM(nn.Module):
    """Embeddings + place-value and segment embeddings + a pre-norm Transformer encoder + a token head on the
    answer positions."""

    def __init__(self, digits: int, dim: int = 64, layers: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.config = {"digits": digits, "dim": dim, "layers": layers, "heads": heads}
        self.prompt_length, self.answer_length = 2 * digits + 2, digits + 1
        self.embed = nn.Embedding(N_TOKENS, dim)
        operand = list(range(digits - 1, -1, -1))  # place values, most significant digit first
        places = operand + [digits + 1] + operand + [digits + 1] + list(range(digits, -1, -1))
        segments = [0] * digits + [1] + [2] * digits + [3] + [4] * (digits + 1)
        self.register_buffer("places", torch.tensor(places), persistent=False)
        self.register_buffer("segments", torch.tensor(segments), persistent=False)
        self.place = nn.Embedding(digits + 2, dim)
        self.segment = nn.Embedding(5, dim)
        nn.init.normal_(self.place.weight, std=0.02)
        nn.init.normal_(self.segment.weight, std=0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, len(VOCAB))

    def forward(self, prompts: torch.Tensor, canvas: torch.Tensor) -> torch.Tensor:
        """Logits ``(n, answer_length, len(VOCAB))`` at the answer positions."""
        hidden = self.embed(torch.cat([prompts, canvas], dim=1)) + self.place(self.places) + self.segment(self.segments)
        hidden = self.norm(self.encoder(hidden))
        return self.head(hidden[:, self.prompt_length:])


class TorchDenoiser:
    """A :class:`MaskedDiffusionLM` as a :class:`~.decoding.Denoiser`: argmax tokens and their probabilities.
    ``revises``: whether the decoding loop may replace committed tokens (the ReDiff refiner), or not (the base)."""

    def __init__(self, model: MaskedDiffusionLM, revises: bool = False, batch_size: int = 1024) -> None:
        self.model = model
        self.revises = revises
        self.batch_size = batch_size

    @torch.no_grad()
    def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        was_training = self.model.training
        self.model.eval()
        device = next(self.model.parameters()).device
        tokens, confidence = [], []
        for start in range(0, len(prompts), self.batch_size):
            part = slice(start, start + self.batch_size)
            logits = self.model(torch.as_tensor(prompts[part], device=device),
                                torch.as_tensor(canvas[part], device=device))
            probs, best = logits.float().softmax(-1).max(-1)
            tokens.append(best.cpu().numpy())
            confidence.append(probs.cpu().numpy())
        self.model.train(was_training)
        return np.concatenate(tokens), np.concatenate(confidence)


def save(model: MaskedDiffusionLM, path: Path, stage: str, info: dict[str, Any]) -> None:
    """Write the model, its stage (``base``, ``rediff-stage1``, ``rediff-stage2``) and its training record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": model.config, "state": model.state_dict(), "stage": stage, "info": info}, path)


def load(path: Path, device: str | None = None) -> tuple[MaskedDiffusionLM, str, dict[str, Any]]:
    """(model, stage, training record) of a file :func:`save` wrote; :class:`UserError` when it is not one."""
    if not Path(path).is_file():
        raise UserError(f"model file {path} not found: run `neurips26 rediff train` first")
    try:
        saved = torch.load(path, map_location=models.device(device), weights_only=True)
        model = MaskedDiffusionLM(**saved["config"])
        model.load_state_dict(saved["state"])
    except (KeyError, TypeError, RuntimeError, OSError) as exc:
        raise UserError(f"{path} is not a ReDiff model file: {exc}") from None
    return model.to(models.device(device)), str(saved.get("stage", "")), dict(saved.get("info") or {})
