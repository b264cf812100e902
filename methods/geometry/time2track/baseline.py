"""The generic motion-diffusion baseline, without delay conditioning (MDM-style).

The same denoiser, schedule, loss and sampler as Time2Track (:class:`~.diffusion.ConditionalMotionDiffusion`),
and the same ECG context through the same ECG encoder (the global token); only the frame tokens differ: each
carries the frame's absolute time in the window (as MDM's positional encoding does), and nothing of the
electrical activations or the electromechanical delay. Whatever timing the baseline uses it must read from the
ECG embedding itself.
"""

from __future__ import annotations

import numpy as np

from .diffusion import ConditionalMotionDiffusion
from .tokens import PERIODS, absolute_time_features


class GenericMotionDiffusion(ConditionalMotionDiffusion):
    """Motion diffusion conditioned on the ECG embedding, its frame tokens holding absolute time only."""

    token_dim = 2 * len(PERIODS)

    def __init__(self, frame_dim: int, width: int = 64, layers: int = 2) -> None:
        super().__init__(frame_dim, self.token_dim, width, layers)

    @staticmethod
    def features(n: int) -> np.ndarray:
        """The frame tokens' features ``(n, frames, token_dim)`` of ``n`` subjects: absolute time only."""
        return absolute_time_features(n)
