"""Answering backends: the VLM that answers a question from the selected frames.

A backend is a factory registered in :data:`ANSWERERS`, ``factory(**options) -> Answerer``;
an answerer has a ``name`` (recorded with every result) and
``generate(text, images) -> str``, where ``text`` holds one ``<image>`` placeholder per
image (the prompts of the video lm-eval tasks).

- ``hf``: any transformers VLM that loads with ``AutoModelForImageTextToText`` and
  ``AutoProcessor`` from a folder or Hub id (Idefics3/SmolVLM-style, ``<image>`` in the
  text), greedy decoding, CUDA when present;
- ``tiny-idefics3``: the tiny random Idefics3 of the video task tests
  (:mod:`neurips26.corpora.video.tiny_vlm`); each ``seed`` is a different model;
- ``lm``: a text-only causal LM (``AutoModelForCausalLM``), by default the embedded
  SmolLM2-135M-Instruct (:mod:`neurips26.models`), greedy decoding, for answers that need no
  image (HOLMES's LM planner reads questions with it); it reuses the key-value cache of the
  prompt prefix it shares with its previous call, so a few-shot prompt pays its examples once.

:func:`answerer` resolves a spec string: ``tiny-idefics3`` or ``tiny-idefics3-seed<k>``,
``hf:<path or id>``, ``lm`` (the embedded model) or ``lm:<path or id>``, or a plain path to a
model folder.
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


class TextAnswerer:
    """A transformers causal LM answering text prompts with greedy decoding (no images); the reply stops at
    ``stop`` (when given) and reuses the key-value cache of the prompt prefix shared with the previous call."""

    def __init__(self, model: str | Path, name: str | None = None, device: str | None = None,
                 max_new_tokens: int = 16, stop: str | None = None) -> None:
        self.model_id, self.name = str(model), name or str(model)
        self.device, self.max_new_tokens, self.stop = device, max_new_tokens, stop
        self.model: Any = None
        self.tokenizer: Any = None
        self._cache: Any = None
        self._ids: list[int] = []  # the tokens whose keys and values ``_cache`` holds

    def _load(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from neurips26 import models  # lazy: imports torch

        self.device = models.device(self.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_id)
            self.model = AutoModelForCausalLM.from_pretrained(self.model_id).to(self.device).eval()
        except OSError as exc:
            reason = str(exc).splitlines()[0]
            raise UserError(f"language model {self.model_id!r} cannot be loaded: {reason}") from None

    def generate(self, text: str, images: list[Any]) -> str:
        """The model's continuation of ``text`` (up to ``stop``, without it)."""
        import torch

        if images:
            raise UserError(f"answering backend {self.name!r} reads text only; it was given {len(images)} images")
        if self.model is None:
            self._load()
        ids = self.tokenizer(text, return_tensors="pt")["input_ids"].to(self.device)
        new = ids[0].tolist()
        shared = next((k for k, (a, b) in enumerate(zip(self._ids, new, strict=False)) if a != b),
                      min(len(self._ids), len(new)))
        cache = None
        if self._cache is not None and shared > 0:
            cache, held = self._cache, self._cache.get_seq_length()
            cache.crop(min(shared, len(new) - 1, held) - held)  # at least one prompt token is run again
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), cache=cache,
                                      max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.eos_token_id,
                                      stop_strings=[self.stop] if self.stop else None,
                                      tokenizer=self.tokenizer if self.stop else None, return_dict_in_generate=True)
        self._cache, self._ids = out.cache, out.sequences[0].tolist()
        reply = self.tokenizer.decode(out.sequences[0, ids.shape[1]:], skip_special_tokens=True)
        return reply.split(self.stop)[0] if self.stop else reply


@ANSWERERS.register("lm")
def lm(model: str | Path | None = None, device: str | None = None, max_new_tokens: int = 16,
       stop: str | None = None) -> TextAnswerer:
    """A text-only causal LM from a folder or Hub id; by default the embedded SmolLM2-135M-Instruct."""
    from neurips26 import models  # lazy: the embedded model's folder is made on first use

    if model is None:
        return TextAnswerer(models.default_model_dir(), name=models.DEFAULT_MODEL_ID, device=device,
                            max_new_tokens=max_new_tokens, stop=stop)
    return TextAnswerer(model, device=device, max_new_tokens=max_new_tokens, stop=stop)


def answerer(spec: str, **options: Any) -> HFAnswerer | TextAnswerer:
    """The answerer a spec names: ``tiny-idefics3[-seed<k>]``, ``hf:<model>``, ``lm[:<model>]`` or a model
    folder."""
    if spec == "lm" or spec.startswith("lm:"):
        return ANSWERERS.get("lm")(spec[3:] or None, **options)
    match = re.fullmatch(r"tiny-idefics3(?:-seed(\d+))?", spec)
    if match:
        return ANSWERERS.get("tiny-idefics3")(seed=int(match.group(1) or 0), **options)
    if spec.startswith("hf:"):
        return ANSWERERS.get("hf")(spec[3:], **options)
    if Path(spec).is_dir():
        return ANSWERERS.get("hf")(spec, **options)
    raise UserError(f"answering model {spec!r}: expected tiny-idefics3[-seed<k>], hf:<model id or folder>, "
                     "lm[:<model>] or an existing model folder")
