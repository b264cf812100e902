"""Generated image forgeries with exact masks, from real photographs shipped by scikit-image.

Each example is a square crop of a real photograph (``skimage.data``), left authentic (half of them) or tampered by a
**copy-move** (a region of the same crop pasted elsewhere in it) or a **splice** (a region of another photograph
pasted in). The pasted region is a seeded ellipse; its pixel mask is exact. Pixel masks are for analysis only
(probing): the Gated Forensic Memory relay trains on the authenticity label alone.

:func:`token_labels` maps a mask to the labels of a VLM's image tokens: the image is a ``grid x grid`` raster of
tokens in row-major order (Idefics3's pixel-shuffled patches); a token is tampered (1) when at least half its
pixels are, authentic (0) when none are, and not probed (-1) in between.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from skimage import data as skdata
from skimage.transform import resize

# Photographs bundled with scikit-image (no download needed); grey ones are stacked to RGB.
PHOTOS = ("astronaut", "camera", "cat", "coffee", "coins", "moon", "rocket", "grass", "gravel", "brick", "clock",
          "hubble_deep_field", "immunohistochemistry", "retina", "page")
KINDS = ("authentic", "copy-move", "splice")
CYCLE = ("authentic", "copy-move", "authentic", "splice")  # half authentic: the label prior alone scores 0.5
WORKING_SCALE = 4  # photographs are first scaled to 4x the image size (shorter side), then cropped and resized


@dataclass(frozen=True)
class Forgery:
    image: np.ndarray  # (size, size, 3) float32 in [0, 1]
    mask: np.ndarray  # (size, size) bool: the pasted pixels
    kind: str
    photo: str

    @property
    def tampered(self) -> bool:
        return self.kind != "authentic"


@functools.cache
def photo(name: str, side: int | None = None) -> np.ndarray:
    """A scikit-image photograph as float RGB in [0, 1]; with ``side``, scaled down once (anti-aliased) so that
    its shorter side is at most ``side`` pixels (crops of it then resize far faster)."""
    image = np.asarray(getattr(skdata, name)(), dtype=np.float32)
    image = image / 255.0 if image.max() > 1.0 else image
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    image = image[..., :3]
    if side is not None and min(image.shape[:2]) > side:
        scale = side / min(image.shape[:2])
        shape = (round(image.shape[0] * scale), round(image.shape[1] * scale))
        image = resize(image, shape, anti_aliasing=True).astype(np.float32)
    return image


def split_photos(seed: int, held_out: int = 5, photos: tuple[str, ...] = PHOTOS
                 ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A seeded split of the photographs into (training, held-out) ones: images generated from the two share no
    photograph (crops of one photograph overlap, so a split by generator seed alone is not held out)."""
    order = np.random.default_rng(seed).permutation(len(photos))
    test = tuple(photos[i] for i in sorted(order[:held_out]))
    return tuple(p for p in photos if p not in test), test


def _crop(image: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    side = int(min(image.shape[:2]) * rng.uniform(0.4, 0.9))
    top = rng.integers(0, image.shape[0] - side + 1)
    left = rng.integers(0, image.shape[1] - side + 1)
    return resize(image[top:top + side, left:left + side], (size, size), anti_aliasing=True).astype(np.float32)


def _ellipse(size: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple[int, int]]:
    """A seeded elliptic mask of a region (its own bounding box) and the box's height and width."""
    h, w = (int(rng.integers(size // 4, size // 2)) for _ in range(2))
    y, x = np.ogrid[:h, :w]
    return ((y - (h - 1) / 2) / (h / 2)) ** 2 + ((x - (w - 1) / 2) / (w / 2)) ** 2 <= 1.0, (h, w)


def generate(n: int, size: int = 64, seed: int = 0, photos: tuple[str, ...] = PHOTOS) -> list[Forgery]:
    """``n`` examples, kinds in turn (:data:`CYCLE`: half authentic), photographs drawn from ``photos`` with
    ``seed`` (splice donors too, so images of disjoint ``photos`` share no photograph)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = CYCLE[i % len(CYCLE)]
        name = photos[int(rng.integers(len(photos)))]
        image = _crop(photo(name, WORKING_SCALE * size), size, rng)
        mask = np.zeros((size, size), bool)
        if kind != "authentic":
            region, (h, w) = _ellipse(size, rng)
            donor = image if kind == "copy-move" else _crop(
                photo(photos[(photos.index(name) + 1 + int(rng.integers(len(photos) - 1))) % len(photos)],
                      WORKING_SCALE * size), size, rng)
            sy, sx = int(rng.integers(0, size - h + 1)), int(rng.integers(0, size - w + 1))
            ty, tx = int(rng.integers(0, size - h + 1)), int(rng.integers(0, size - w + 1))
            patch = donor[sy:sy + h, sx:sx + w].copy()
            target = image[ty:ty + h, tx:tx + w]
            target[region] = patch[region]
            mask[ty:ty + h, tx:tx + w] = region
        out.append(Forgery(image, mask, kind, name))
    return out


def token_labels(mask: np.ndarray, grid: int) -> np.ndarray:
    """Labels of ``grid x grid`` image tokens (row-major) from a pixel mask (see the module docstring)."""
    size = mask.shape[0]
    if size % grid:
        mask = resize(mask.astype(np.float32), (grid * (size // grid + 1),) * 2, order=0) > 0.5
        size = mask.shape[0]
    cell = size // grid
    share = mask.reshape(grid, cell, grid, cell).mean(axis=(1, 3)).ravel()
    return np.where(share >= 0.5, 1, np.where(share == 0, 0, -1))
