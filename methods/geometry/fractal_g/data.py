"""Fractal-G's data: the project's generated lesion/polyp-like shapes, or a user's folder of image/mask PNGs.

Generated (:mod:`..segdata`): star-shaped lesions with fractal boundaries (three roughness and two noise
levels), rendered with exact truth at any grid over the same 64 mm field of view. Training shapes and held-out
shapes come from disjoint seed streams; the held-out shapes are rendered at each test scale (0.5x, 1x, 2x of the
training grid), so the cross-resolution scores compare one shape at three resolutions.

A folder (``data=DIR``): ``DIR/images/NAME.png`` and ``DIR/masks/NAME.png`` with the same names (the layout of
Kvasir-SEG or ISIC exports); images are read as grey levels in [0, 1], a mask pixel is foreground when it is
non-zero. Pairs are split into training and held-out by a hash of their name (one in five held out), every image
resized to the training grid (bilinear; masks nearest) and the held-out ones also to each test scale; spacing
is in training-grid pixels. Unlike the generated truth, a resized real mask is only as exact as its resampling.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from ..core import GeometryError
from ..segdata import NOISE, ROUGHNESS, TABLE, Shape, make_shape, render

TEST_STREAM = 1_000_003  # training shapes are seeded 0, 1, ...; held-out shapes TEST_STREAM + i
HELD_OUT = 5  # one folder pair in five is held out


@dataclass(frozen=True)
class Sample:
    """One image with its truth mask and voxel spacing (mm, or training-grid pixels for a folder)."""

    name: str
    image: np.ndarray  # (H, W) float32
    truth: np.ndarray  # (H, W) bool
    spacing: float


@dataclass(frozen=True)
class SegmentationSet:
    """Training samples at the training grid, and held-out samples at each test scale (same names per scale)."""

    train: list[Sample]
    test: dict[float, list[Sample]]
    source: str  # "generated" or the folder

    def describe(self) -> dict[str, object]:
        """What the data is, for metrics.json."""
        kind = "generated" if self.source == "generated" else "real"
        return {"kind": kind, "source": self.source, "train": len(self.train),
                "test": len(next(iter(self.test.values()), [])), "test_scales": sorted(self.test)}


@dataclass(frozen=True)
class TabulatedShape(Shape):
    """A :class:`..segdata.Shape` whose boundary table is computed once (by an inverse FFT of the harmonics), not
    at every ``inside`` call: the same curve (``r`` at 2^16 + 1 angles, linearly interpolated) to rounding, so the
    same exact truth, rendered many times faster."""

    def __post_init__(self) -> None:
        angles = np.linspace(-np.pi, np.pi, TABLE + 1)
        k = np.arange(2, 2 + self.amplitudes.size)
        spectrum = np.zeros(TABLE, complex)  # cos(k(-pi + 2 pi j / N) + phi) = Re((-1)^k e^{i phi} e^{2 pi i k j / N})
        spectrum[k] = self.amplitudes * np.exp(1j * self.phases) * (-1.0) ** k
        waves = np.fft.ifft(spectrum).real * TABLE
        object.__setattr__(self, "table", (angles, self.radius * (1 + np.append(waves, waves[0]))))

    def inside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether the points (x, y) in mm lie inside the shape (as :meth:`..segdata.Shape.inside`)."""
        angles, radius = self.table
        dx, dy = x - self.centre[0], y - self.centre[1]
        return np.hypot(dx, dy) < np.interp(np.arctan2(dy, dx), angles, radius)


def shape(seed: int) -> TabulatedShape:
    """The generator's shape ``seed``, its roughness and noise cycling through segdata's levels."""
    i = seed % 6
    made = make_shape(seed, ROUGHNESS[i % len(ROUGHNESS)], NOISE[(i // len(ROUGHNESS)) % len(NOISE)])
    return TabulatedShape(**{f.name: getattr(made, f.name) for f in fields(made)})


@lru_cache(maxsize=4)
def generated(n_train: int, n_test: int, size: int, scales: tuple[float, ...]) -> SegmentationSet:
    """``n_train`` shapes at ``size`` pixels a side and ``n_test`` held-out shapes at each ``scale`` x ``size``.
    The same for every seed (seeds vary the networks' initial weights and batches), so the held-out scores are
    paired across seeds and arms."""
    train = []
    for i in range(n_train):
        image, truth, spacing = render(shape(i), size)
        train.append(Sample(f"train-{i}", image, truth, spacing))
    test: dict[float, list[Sample]] = {float(s): [] for s in scales}
    for i in range(n_test):
        held_out = shape(TEST_STREAM + i)
        for s in scales:
            image, truth, spacing = render(held_out, max(8, round(size * s)))
            test[float(s)].append(Sample(f"shape-{i}", image, truth, spacing))
    return SegmentationSet(train, test, "generated")


def _held_out(name: str) -> bool:
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % HELD_OUT == 0


def _resized(image: Image.Image, size: int, resample: Image.Resampling) -> np.ndarray:
    return np.asarray(image.resize((size, size), resample), dtype=np.float32)


def folder(root: Path, size: int, scales: Sequence[float]) -> SegmentationSet:
    """The image/mask pairs of ``root`` (``images/`` and ``masks/``, matching names), split and resized."""
    root = Path(root)
    images, masks = root / "images", root / "masks"
    if not images.is_dir() or not masks.is_dir():
        raise GeometryError(f"{root}: expected images/ and masks/ folders of PNGs with matching names")
    names = sorted(p.name for p in images.glob("*.png") if (masks / p.name).is_file())
    if not names:
        raise GeometryError(f"{root}: no images/NAME.png with a masks/NAME.png")
    train, test = [], {float(s): [] for s in scales}
    for name in names:
        try:
            image, mask = Image.open(images / name).convert("L"), Image.open(masks / name).convert("L")
        except OSError as exc:
            raise GeometryError(f"{images / name}: not a readable PNG pair ({exc})") from None
        grids = [(float(s), max(8, round(size * s))) for s in scales] if _held_out(name) else [(1.0, size)]
        for scale, n in grids:
            sample = Sample(name, _resized(image, n, Image.Resampling.BILINEAR) / 255.0,
                            _resized(mask, n, Image.Resampling.NEAREST) > 0, size / n)
            (test[scale] if _held_out(name) else train).append(sample)
    if not train or not test[float(scales[0])]:
        raise GeometryError(f"{root}: {len(names)} pairs leave no training or no held-out image (need >= 2; "
                            f"one name in {HELD_OUT} is held out by its hash)")
    return SegmentationSet(train, test, str(root))

