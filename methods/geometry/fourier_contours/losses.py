"""The training signals of Fourier Contour Learning: masks, measurements (volumes only) and unlabeled consistency.

* :func:`mask_loss` -- where a slice has a mask, the predicted contour is pulled to the contour traced from the
  mask (points at equal parameter steps, the canonical start and orientation: by Parseval a weighted L2 on the
  coefficients) and its closed-form area to the mask's area (every slice of the stack, empty apex slices too);
* :func:`measurement_loss` -- where a stack has only a measured volume, the disc summation of the closed-form slice
  areas is pulled to it (relative L1): the gradient reaches every slice's coefficients through the area formula;
* :func:`consistency_loss` -- on stacks without masks, the contours predicted for a shifted, re-contrasted and
  re-noised copy must equal the (stop-gradient) contours of the original, moved by the shift.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import measures
from .data import Stacks
from .model import FourierContourNet

POINTS = 64


def mask_loss(centres: torch.Tensor, coefficients: torch.Tensor, stacks: Stacks, pixel_area: float) -> torch.Tensor:
    """Contour and area terms on the masked stacks; ``centres (B, S, 2)``, ``coefficients (B, S, K, 4)``
    normalised, ``pixel_area`` in normalised units."""
    ok = stacks.target_ok & stacks.has_mask[:, None]
    zero = centres.sum() * 0
    contour = zero
    if ok.any():
        pred = measures.points(centres[ok], coefficients[ok], POINTS)
        target = measures.points(stacks.centres[ok], stacks.coefficients[ok], POINTS)
        contour = F.smooth_l1_loss(pred, target, beta=0.02, reduction="none").sum(-1).mean()
    valid = stacks.valid & stacks.has_mask[:, None]
    if not valid.any():
        return contour
    mask_area = stacks.masks[valid].flatten(1).sum(1) * pixel_area
    return contour + (measures.area(coefficients[valid]) - mask_area).abs().mean()


def measurement_loss(volumes: torch.Tensor, stacks: Stacks) -> torch.Tensor:
    """Relative L1 of the predicted volumes to the measured ones, over stacks with a measurement."""
    has = stacks.has_volume
    if not has.any():
        return volumes.sum() * 0
    return ((volumes[has] - stacks.volumes[has]) / stacks.volumes[has]).abs().mean()


def augment(images: torch.Tensor, generator: torch.Generator, max_shift: int = 3) -> tuple[torch.Tensor,
                                                                                           torch.Tensor]:
    """Each stack shifted by a whole number of pixels (the same for its slices), contrast and gamma changed and
    noise added; returns the images and the shifts ``(B, 2)`` in pixels as (x, y)."""
    b = images.shape[0]
    shifts = torch.randint(-max_shift, max_shift + 1, (b, 2), generator=generator)
    moved = torch.stack([torch.roll(img, (int(dy), int(dx)), dims=(-2, -1))
                         for img, (dx, dy) in zip(images, shifts.tolist(), strict=True)])
    gain = 1 + 0.2 * (torch.rand(b, 1, 1, 1, generator=generator) - 0.5)
    gamma = 1 + 0.3 * (torch.rand(b, 1, 1, 1, generator=generator) - 0.5)
    noise = 0.03 * torch.randn(moved.shape, generator=generator)
    out = moved.clamp_min(0).pow(gamma.to(moved.device)) * gain.to(moved.device) + noise.to(moved.device)
    return out, shifts.to(images.device)


def consistency_loss(model: FourierContourNet, stacks: Stacks, generator: torch.Generator,
                     pixel: float, half: float) -> torch.Tensor:
    """Agreement of the contours on an augmented copy with the original's (stop-gradient), on unmasked stacks."""
    keep = ~stacks.has_mask
    if not keep.any():
        return stacks.images.sum() * 0
    part = stacks.take(torch.nonzero(keep.cpu()).squeeze(1))
    with torch.no_grad():
        centres, coefficients = model(part.images, part.depth, part.valid)
    images, shifts = augment(part.images, generator)
    centres_aug, coefficients_aug = model(images, part.depth, part.valid)
    moved = centres[:, :, 0] + (shifts.to(centres.dtype) * pixel / half)[:, None, :]
    v = part.valid
    target = measures.points(moved[v], coefficients[:, :, 0][v], POINTS)
    pred = measures.points(centres_aug[:, :, 0][v], coefficients_aug[:, :, 0][v], POINTS)
    return F.smooth_l1_loss(pred, target, beta=0.02, reduction="none").sum(-1).mean()
