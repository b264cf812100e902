"""``clip`` and ``siglip``: dual image-text encoders through transformers.

``model`` is a Hub id or a local folder holding the model (``CLIPModel`` or
``SiglipModel``), its tokenizer and its image processor, as ``save_pretrained`` writes
them. Images go through the model's image processor in batches of ``batch_size``; the
query is tokenised (SigLIP pads to the full text length, as it was trained) and
projected into the same space. Both sides come back L2-normalised, float32, on the
CPU. CUDA is used when present; the model loads on the first call. The pool cache keys
an encoding by family and ``model`` as given: a local folder is keyed by its path, so
clear the cache after replacing the weights in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..core import ENCODERS
from .base import unit

DEFAULTS = {"clip": "openai/clip-vit-base-patch32", "siglip": "google/siglip-base-patch16-224"}


class DualEncoder:
    """A CLIP- or SigLIP-style model with its tokenizer and image processor, loaded lazily."""

    def __init__(self, family: str, model: str | Path | None = None, batch_size: int = 32,
                 device: str | None = None) -> None:
        self.family, self.model_id = family, str(model or DEFAULTS[family])
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        self.batch_size, self.device = batch_size, device
        self.key = f"{family}:{self.model_id}"
        self._loaded: tuple[Any, Any, Any] | None = None

    def _load(self) -> tuple[Any, Any, Any]:
        if self._loaded is None:
            import torch
            from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel, SiglipModel

            cls = CLIPModel if self.family == "clip" else SiglipModel
            try:
                model = cls.from_pretrained(self.model_id)
                tokenizer = AutoTokenizer.from_pretrained(self.model_id)
                processor = AutoImageProcessor.from_pretrained(self.model_id)
            except OSError as err:
                raise OSError(f"{self.family} encoder: cannot load {self.model_id!r} (a Hub id needs the weights "
                              f"cached or a network; a local folder needs save_pretrained output): {err}") from None
            self.device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            self._loaded = (model.to(self.device).eval(), tokenizer, processor)
        return self._loaded

    def encode_images(self, images: list[np.ndarray]) -> np.ndarray:
        import torch

        model, _, processor = self._load()
        out = []
        for start in range(0, len(images), self.batch_size):
            batch = [np.asarray(im, dtype=np.uint8) for im in images[start:start + self.batch_size]]
            pixels = processor(images=batch, return_tensors="pt")["pixel_values"].to(self.device)
            with torch.inference_mode():
                out.append(_pooled(model.get_image_features(pixel_values=pixels)))
        dim = model.config.projection_dim if hasattr(model.config, "projection_dim") else None
        return unit(np.concatenate(out)) if out else np.zeros((0, dim or 0), np.float32)

    def encode_text(self, text: str) -> np.ndarray:
        import torch

        model, tokenizer, _ = self._load()
        if self.family == "siglip":
            length = model.config.text_config.max_position_embeddings
            tokens = tokenizer([text], padding="max_length", max_length=length, truncation=True, return_tensors="pt")
        else:
            tokens = tokenizer([text], padding=True, truncation=True, return_tensors="pt")
        inputs = {k: v.to(self.device) for k, v in tokens.items() if k in ("input_ids", "attention_mask")}
        if self.family == "siglip":
            inputs.pop("attention_mask", None)  # SigLIP attends to the padding, as in training
        with torch.inference_mode():
            return unit(_pooled(model.get_text_features(**inputs))[0])


def _pooled(output: Any) -> np.ndarray:
    tensor = output if hasattr(output, "detach") else output.pooler_output
    return tensor.detach().float().cpu().numpy()


@ENCODERS.register("clip")
def clip(model: str | Path | None = None, batch_size: int = 32, device: str | None = None) -> DualEncoder:
    """CLIP image and text towers (``CLIPModel``) from a Hub id or local folder."""
    return DualEncoder("clip", model, batch_size, device)


@ENCODERS.register("siglip")
def siglip(model: str | Path | None = None, batch_size: int = 32, device: str | None = None) -> DualEncoder:
    """SigLIP image and text towers (``SiglipModel``) from a Hub id or local folder."""
    return DualEncoder("siglip", model, batch_size, device)
