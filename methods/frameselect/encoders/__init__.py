"""Encoders: frames (and the question's text) to L2-normalised vectors in one space.

An encoder is registered as a factory, ``ENCODERS.get(name)(**options) -> Encoder``;
the object it returns has a ``key`` (name and model, used by the pool's encoding
cache), ``encode_images(images) -> (N, D)`` and ``encode_text(text) -> (D,) | None``
(None when the encoder cannot place that text in its space). Models load lazily, on
the first call, so a pool served entirely from the cache never loads one.

- ``descriptor``: a cheap CPU image descriptor (colour histogram, grey thumbnail,
  gradient orientations) with a colour-word lexicon for the query (see :mod:`.descriptor`).
- ``clip`` / ``siglip``: CLIP- and SigLIP-style dual encoders through transformers (:mod:`.hf`).
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol

import numpy as np

from ..core import ENCODERS


class Encoder(Protocol):
    key: str

    def encode_images(self, images: list[np.ndarray]) -> np.ndarray: ...

    def encode_text(self, text: str) -> np.ndarray | None: ...


def get_encoder(name: str, **options: Any) -> Encoder:
    """An encoder instance of registered ``name`` built with ``options`` (unknown options are named)."""
    factory = ENCODERS.get(name)
    known = inspect.signature(factory).parameters
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"encoder {name!r} takes no option(s) {', '.join(unknown)}; it takes: "
                         f"{', '.join(known) or 'none'}")
    return factory(**options)


def unit(x: np.ndarray) -> np.ndarray:
    """Rows (or a vector) scaled to unit L2 norm; zero rows stay zero."""
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.where(norm > 0, norm, 1.0)).astype(np.float32)


from . import descriptor, hf  # noqa: E402,F401  (register the encoders)

__all__ = ["Encoder", "get_encoder", "unit"]
