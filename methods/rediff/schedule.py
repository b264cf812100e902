"""The training schedule of the two arms (plain data: the CLI reads its defaults without loading torch)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .protocol import STANDARD_DIGITS


@dataclass(frozen=True)
class Schedule:
    """How both arms are trained: ``steps`` of shared masked-diffusion pre-training, then ``stage1_steps`` and
    ``stage2_steps`` (ReDiff's stages, or as many more base steps). The defaults are ``neurips26 rediff train``'s
    and the claim's default scale."""

    digits: int = STANDARD_DIGITS
    steps: int = 3000
    stage1_steps: int = 500
    stage2_steps: int = 500
    batch_size: int = 64
    dim: int = 64
    layers: int = 1  # one layer learns to add column by column but not to look far ahead: the cascade

    @property
    def total_steps(self) -> int:
        """Optimiser steps each arm's model receives, pre-training included."""
        return self.steps + self.stage1_steps + self.stage2_steps

    def as_dict(self) -> dict[str, int]:
        """The schedule as a JSON object, with ``total_steps``."""
        return {**asdict(self), "total_steps": self.total_steps}
