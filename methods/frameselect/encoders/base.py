"""What every encoder shares: the :class:`Encoder` protocol, :func:`get_encoder`, :func:`unit`."""


from __future__ import annotations

import inspect
from typing import Any, Protocol

import numpy as np

from neurips26.errors import UserError

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
        raise UserError(f"encoder {name!r} takes no option(s) {', '.join(unknown)}; it takes: "
                         f"{', '.join(known) or 'none'}")
    return factory(**options)


def unit(x: np.ndarray) -> np.ndarray:
    """Rows (or a vector) scaled to unit L2 norm; zero rows stay zero."""
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.where(norm > 0, norm, 1.0)).astype(np.float32)

