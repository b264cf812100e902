"""Generated segmentation data with exact ground truth, and the two classical baselines.

A shape is star-shaped with a fractal boundary: radius ``r(θ) = R (1 + Σ_k c k^-(H+1/2) cos(kθ + φ_k))`` over
harmonics 2..K, so the boundary's roughness follows the Hurst exponent ``H`` (fractal dimension ≈ 2 - H; small H:
rough at every scale). It is defined in the continuous plane, so it renders exactly at any grid: the truth is
"pixel centre inside the shape", the image averages a 4x supersampled rendering (partial volume at the edges), adds
a smooth bias field and Gaussian noise. A :class:`Case` is one shape at one grid scale; the cross-resolution
protocol renders each shape at 0.5x, 1x and 2x the native grid (same field of view, finer or coarser voxels).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from skimage.filters import threshold_otsu
from skimage.segmentation import morphological_chan_vese

FIELD_OF_VIEW = 64.0  # mm, square
NATIVE = 96  # voxels per side at scale 1
ROUGHNESS = (0.3, 0.6, 0.9)  # Hurst exponents: rough, medium, smooth boundaries
NOISE = (0.15, 0.35)
TABLE = 2 ** 16  # boundary samples


@dataclass(frozen=True)
class Shape:
    """One fractal shape: its centre and base radius (mm), harmonic amplitudes and phases, Hurst exponent."""

    centre: tuple[float, float]
    radius: float
    amplitudes: np.ndarray
    phases: np.ndarray
    hurst: float
    noise: float
    seed: int

    def r(self, theta: np.ndarray) -> np.ndarray:
        """The boundary's radius at angle ``theta``."""
        k = np.arange(2, 2 + self.amplitudes.size)
        waves = np.cos(np.multiply.outer(theta, k) + self.phases) @ self.amplitudes
        return self.radius * (1 + waves)

    def inside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether the points (x, y) in mm lie inside the shape (the boundary being ``r`` tabulated at 2^16
        angles and linearly interpolated: that curve is the shape, so the truth stays exact)."""
        table = np.linspace(-np.pi, np.pi, TABLE + 1)
        radius = self.r(table)
        dx, dy = x - self.centre[0], y - self.centre[1]
        return np.hypot(dx, dy) < np.interp(np.arctan2(dy, dx), table, radius)


@dataclass(frozen=True)
class Case:
    """One shape rendered on one grid: the image, the exact truth mask, the spacing and its identifiers."""

    shape_id: int
    scale: float
    image: np.ndarray
    truth: np.ndarray
    spacing: tuple[float, float]
    hurst: float
    noise: float


def make_shape(seed: int, hurst: float, noise: float, harmonics: int = 96) -> Shape:
    """A random shape of the given roughness; the largest excursion is 30% of the base radius."""
    rng = np.random.default_rng(seed)
    k = np.arange(2, 2 + harmonics)
    amplitudes = k ** -(hurst + 0.5) * rng.normal(size=harmonics)
    theta = np.linspace(0, 2 * np.pi, 4096, endpoint=False)
    phases = rng.uniform(0, 2 * np.pi, harmonics)
    excursion = np.abs(np.cos(np.multiply.outer(theta, k) + phases) @ amplitudes).max()
    return Shape(centre=tuple(rng.uniform(-4, 4, 2)), radius=float(rng.uniform(14, 20)),
                 amplitudes=amplitudes * 0.3 / excursion, phases=phases, hurst=hurst, noise=noise, seed=seed)


def render(shape: Shape, size: int, supersample: int = 4) -> tuple[np.ndarray, np.ndarray, float]:
    """(image, truth, spacing) of ``shape`` on a ``size`` x ``size`` grid over the field of view."""
    spacing = FIELD_OF_VIEW / size
    centres = (np.arange(size) + 0.5) * spacing - FIELD_OF_VIEW / 2
    y, x = np.meshgrid(centres, centres, indexing="ij")
    truth = shape.inside(x, y)
    fine = (np.arange(size * supersample) + 0.5) * spacing / supersample - FIELD_OF_VIEW / 2
    fy, fx = np.meshgrid(fine, fine, indexing="ij")
    cover = shape.inside(fx, fy).reshape(size, supersample, size, supersample).mean(axis=(1, 3))
    rng = np.random.default_rng([shape.seed, size])
    a, b = rng.normal(size=2) * 0.15
    bias = a * x / FIELD_OF_VIEW + b * y / FIELD_OF_VIEW
    image = cover + bias + rng.normal(scale=shape.noise, size=cover.shape)
    return image.astype(np.float32), truth, spacing


def cases(n_shapes: int = 12, seed: int = 0, native: int = NATIVE,
          scales: Sequence[float] = (0.5, 1.0, 2.0)) -> Iterator[Case]:
    """The standard set: ``n_shapes`` shapes cycling through the roughness and noise levels, each at each scale."""
    for i in range(n_shapes):
        shape = make_shape(seed * 100_003 + i, ROUGHNESS[i % len(ROUGHNESS)], NOISE[(i // len(ROUGHNESS)) % 2])
        for scale in scales:
            image, truth, spacing = render(shape, max(8, round(native * scale)))
            yield Case(i, float(scale), image, truth, (spacing, spacing), shape.hurst, shape.noise)


def _largest_filled(mask: np.ndarray) -> np.ndarray:
    labels, n = ndimage.label(mask)
    if n == 0:
        return mask
    largest = 1 + int(np.argmax(ndimage.sum_labels(mask, labels, range(1, n + 1))))
    return ndimage.binary_fill_holes(labels == largest)


def otsu(image: np.ndarray, spacing: Sequence[float]) -> np.ndarray:
    """Otsu + morphology: Gaussian smoothing (0.5 mm), Otsu's threshold, an opening and a closing of radius
    1 mm, the largest component with its holes filled."""
    sigma = 0.5 / np.asarray(spacing)
    smooth = ndimage.gaussian_filter(image, sigma)
    mask = smooth > threshold_otsu(smooth)
    radius = max(1, round(1.0 / float(np.min(spacing))))
    disk = _disk(radius)
    mask = ndimage.binary_closing(ndimage.binary_opening(mask, disk), disk)
    return _largest_filled(mask)


def active_contour(image: np.ndarray, spacing: Sequence[float], iterations: int = 60) -> np.ndarray:
    """Morphological Chan-Vese active contour (scikit-image) from a checkerboard level set; the phase with the
    brighter mean is the foreground, then its largest component with holes filled."""
    level = morphological_chan_vese(image.astype(float), num_iter=iterations, init_level_set="checkerboard",
                                    smoothing=1)
    mask = level.astype(bool)
    if mask.any() and (~mask).any() and image[mask].mean() < image[~mask].mean():
        mask = ~mask
    return _largest_filled(mask)


def _disk(radius: int) -> np.ndarray:
    grid = np.arange(-radius, radius + 1)
    return np.hypot(*np.meshgrid(grid, grid)) <= radius


BASELINES = {"otsu": otsu, "active_contour": active_contour}
