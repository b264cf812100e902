"""Answering backends: the VLM that answers a question from the selected frames.

A backend is a factory registered in :data:`ANSWERERS`, ``factory(**options) -> Answerer``;
an answerer has a ``name`` (recorded with every result) and
``generate(text, images) -> str``, where ``text`` holds one ``<image>`` placeholder per
image (the prompts of the video lm-eval tasks).

- ``hf``: any transformers VLM that loads with ``AutoModelForImageTextToText`` and
  ``AutoProcessor`` from a folder or Hub id (Idefics3/SmolVLM-style, ``<image>`` in the
  text), greedy decoding, CUDA when present;
- ``tiny-idefics3``: the tiny random Idefics3 of the video task tests
  (:mod:`neurips26.corpora.video.tiny_vlm`); each ``seed`` is a different model.

:func:`answerer` resolves a spec string: ``tiny-idefics3`` or ``tiny-idefics3-seed<k>``,
``hf:<path or id>``, or a plain path to a model folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from neurips26.corpora.video import tiny_vlm

from neurips26.errors import UserError

from .core import ANSWERERS


class HFAnswerer:
    """A transformers image-text-to-text model answering with greedy decoding."""

    def __init__(self, model: str | Path, name: str | None = None, device: str | None = None,
                 max_new_tokens: int = 16) -> None:
        self.model_id = str(model)
        self.name = name or self.model_id
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.model: Any = None
        self.processor: Any = None

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        try:
            self.processor = AutoProcessor.from_pretrained(self.model_id)
            self.model = AutoModelForImageTextToText.from_pretrained(self.model_id, dtype=dtype)
        except OSError as exc:
            reason = str(exc).splitlines()[0]
            raise UserError(f"answering model {self.model_id!r} cannot be loaded: {reason}") from None
        self.model = self.model.to(self.device).eval()

    def generate(self, text: str, images: list[Any]) -> str:
        """The model's answer to ``text`` (with one ``<image>`` per image) and ``images``."""
        import torch

        if self.model is None:
            self._load()
        inputs = self.processor(text=[text], images=[images] if images else None, return_tensors="pt")
        inputs = inputs.to(self.device, dtype=self.model.dtype)  # casts the pixel values, not the token ids
        with torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new = out[0, inputs["input_ids"].shape[1]:]
        return self.processor.decode(new, skip_special_tokens=True).strip()


@ANSWERERS.register("hf")
def hf(model: str | Path, device: str | None = None, max_new_tokens: int = 16) -> HFAnswerer:
    """A transformers VLM from a folder or Hub id."""
    return HFAnswerer(model, device=device, max_new_tokens=max_new_tokens)


@ANSWERERS.register("tiny-idefics3")
def tiny_idefics3(seed: int = 0, device: str | None = None, max_new_tokens: int = 16) -> HFAnswerer:
    """The tiny random Idefics3 built with ``seed`` (answers are noise; for pipelines and tests)."""
    return HFAnswerer(tiny_vlm.tiny_vlm(seed), name=f"{tiny_vlm.NAME}-seed{seed}", device=device,
                      max_new_tokens=max_new_tokens)


def answerer(spec: str, **options: Any) -> HFAnswerer:
    """The answerer a spec names: ``tiny-idefics3[-seed<k>]``, ``hf:<model>`` or a model folder."""
    match = re.fullmatch(r"tiny-idefics3(?:-seed(\d+))?", spec)
    if match:
        return ANSWERERS.get("tiny-idefics3")(seed=int(match.group(1) or 0), **options)
    if spec.startswith("hf:"):
        return ANSWERERS.get("hf")(spec[3:], **options)
    if Path(spec).is_dir():
        return ANSWERERS.get("hf")(spec, **options)
    raise UserError(f"answering model {spec!r}: expected tiny-idefics3[-seed<k>], hf:<model id or folder> "
                     "or an existing model folder")
