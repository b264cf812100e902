"""The differentiable area and volume from the Fourier coefficients, and the contour they describe.

With coefficients ``(a_k, b_k, c_k, d_k)`` of ``x(t) = A0 + Σ a_k cos kt + b_k sin kt``,
``y(t) = C0 + Σ c_k cos kt + d_k sin kt``, Green's theorem gives the enclosed area in closed form,
``A = π Σ_k (a_k d_k - b_k c_k)`` (positive for a counter-clockwise contour, the canonical orientation of
:func:`..data.canonical`), the same formula as :func:`neurips26.methods.geometry.contours.area` written in torch so
gradients flow to the network. A stack's volume is the disc summation ``Σ_i A_i h`` over its slices. Nothing is
rasterised for a measurement; :func:`rasterise` renders contours as masks only to score them (Dice).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from skimage.draw import polygon2mask


def area(coefficients: torch.Tensor) -> torch.Tensor:
    """Signed enclosed area ``π Σ_k (a_k d_k - b_k c_k)`` of ``(..., K, 4)`` coefficients -> ``(...)``."""
    a, b, c, d = coefficients.unbind(-1)
    return math.pi * (a * d - b * c).sum(-1)


def volume(areas: torch.Tensor, valid: torch.Tensor, thickness: float) -> torch.Tensor:
    """Disc summation ``Σ_i A_i h`` of ``(..., S)`` slice areas over the valid slices -> ``(...)``."""
    return (areas * valid.to(areas.dtype)).sum(-1) * thickness


def points(centre: torch.Tensor, coefficients: torch.Tensor, n_points: int = 64) -> torch.Tensor:
    """``n_points`` points ``(..., n_points, 2)`` of the contours at uniform parameter steps from ``t = 0``."""
    k = coefficients.shape[-2]
    t = torch.linspace(0, 2 * math.pi, n_points + 1, device=coefficients.device, dtype=coefficients.dtype)[:-1]
    angles = t[:, None] * torch.arange(1, k + 1, device=coefficients.device)[None, :]
    basis = torch.cat([torch.cos(angles), torch.sin(angles)], -1)  # (T, 2K): cos terms then sin terms
    a, b, c, d = coefficients.unbind(-1)
    x = basis @ torch.cat([a, b], -1).unsqueeze(-1)
    y = basis @ torch.cat([c, d], -1).unsqueeze(-1)
    return torch.cat([x, y], -1) + centre.unsqueeze(-2)


def rasterise(contour_mm: np.ndarray, size: int, pixel: float) -> np.ndarray:
    """The ``(size, size)`` mask of pixels whose centre lies inside the closed contour (x-y, mm, image-centred)."""
    rows = contour_mm[:, 1] / pixel + (size - 1) / 2
    cols = contour_mm[:, 0] / pixel + (size - 1) / 2
    return polygon2mask((size, size), np.column_stack([rows, cols]))
