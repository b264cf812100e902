"""Encoders: frames (and the question's text) to L2-normalised vectors in one space.

An encoder is registered as a factory, ``ENCODERS.get(name)(**options) -> Encoder``;
the object it returns has a ``key`` (name and model, used by the pool's encoding
cache), ``encode_images(images) -> (N, D)`` and ``encode_text(text) -> (D,) | None``
(None when the encoder cannot place that text in its space). Models load lazily, on
the first call, so a pool served entirely from the cache never loads one.

- ``descriptor``: a cheap CPU image descriptor (colour histogram, grey thumbnail,
  gradient orientations) with a colour-word lexicon for the query, and a grounding by meaning
  (MiniLM) for a question without such words (see :mod:`.descriptor`).
- ``clip`` / ``siglip``: CLIP- and SigLIP-style dual encoders through transformers (:mod:`.hf`).
"""

from . import descriptor, hf  # noqa: F401  (register the encoders)
from .base import Encoder, get_encoder, unit

__all__ = ["Encoder", "get_encoder", "unit"]
