"""PushT's record types: the schemas of its configs, the build report and the build error.

The lowest module of the package: it imports nothing else of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.hubfolder import column

CONTROL_HZ = 10.0  # the rate the demonstrations were recorded at (Diffusion Policy's PushT)
MIXED_RATES = (5.0, 10.0, 20.0)
SUCCESS_COVERAGE = 0.95  # Diffusion Policy's success threshold on the block's coverage of the target


class BuildError(UserError):
    """The build cannot start (no --raw folder, or no readable PushT replay store in it)."""


F32, F64, INT, STR = pa.float32(), pa.float64(), pa.int64(), pa.string()
VEC = pa.list_(pa.list_(F32))  # per step, a fixed-length vector
IMAGE = pa.struct([("bytes", pa.binary()), ("path", STR)])


def with_image(schema: pa.Schema, name: str = "image") -> pa.Schema:
    """``schema`` with the Hugging Face metadata that makes column ``name`` an ``Image`` feature."""
    import datasets  # lazy: heavy, and only the frames schema needs it

    features = datasets.Features.from_arrow_schema(schema)
    features[name] = datasets.Image()
    return schema.with_metadata({"huggingface": json.dumps({"info": {"features": features.to_dict()}})})


EPISODE_FIELDS = [
    column("episode_index", INT, "Episode number in the released replay store (0-based)"),
    column("length", INT, "Steps in the episode"),
    column("rate_hz", F64, "Control rate of the rows' steps (Hz)"),
    column("time", pa.list_(F64), "Time of each step in seconds from the episode's start"),
    column("action", VEC, "Per step: the commanded end-effector target (x, y) in pixels of the 512x512 scene"),
    column("state", VEC, "Per step: agent x, y, block x, y, block angle (radians)"),
    column("keypoint", VEC, "Per step: the block's 9 keypoints, flattened (x0, y0, ..., x8, y8)"),
]
EPISODES = pa.schema([
    *EPISODE_FIELDS,
    column("n_contacts", pa.list_(F32), "Per step: contact points between agent and block"),
    column("coverage", pa.list_(F32), "Per step: share of the target area the block covers (from the state)"),
    column("reward", pa.list_(F32), "Per step: min(coverage / 0.95, 1), the simulator's reward"),
    column("max_coverage", F64, "Largest coverage over the episode's recorded states"),
    column("final_coverage", F64, "Coverage after the last action, replayed in the simulator"),
    column("success", pa.bool_(), "final_coverage >= 0.95 (Diffusion Policy's success)"),
    column("replay_error", F64, "Largest distance (px) of a simulator replay of the actions from the recorded states"),
])
MIXED = pa.schema(EPISODE_FIELDS)
FRAMES = pa.schema([
    column("episode_index", INT, "Episode number"),
    column("step", INT, "Step within the episode"),
    column("image", IMAGE, "The 96x96 RGB rendering of the scene at that step (PNG)"),
])
ERRORS = pa.schema([
    column("episode_index", INT, "Episode number in the replay store"),
    column("reason", STR, "Why the episode was not built"),
])


@dataclass
class BuildReport(Reconciled):
    """What a build read, kept and rejected."""

    episodes_in: int = 0
    episodes_kept: int = 0
    episodes_rejected: int = 0
    steps: int = 0
    frames: int = 0
    train: int = 0
    test: int = 0
    replay_max_state_error: float = 0.0  # pixels: simulator replay of the actions against the recorded states
    replay_exact: int = 0  # episodes whose replay stays within 0.01 px of every recorded state
    successes: int = 0  # episodes whose final coverage reaches 0.95
    final_coverage_low: float = 1.0
    final_coverage_high: float = 0.0
    problems: list[str] = field(default_factory=list)  # a line per rejected episode

    def tallies(self) -> list[Tally]:
        """Episodes in = kept + rejected."""
        return [Tally.of("episodes in", self.episodes_in, kept=self.episodes_kept, rejected=self.episodes_rejected)]

    def summary(self) -> str:
        """One line for the CLI: episodes in and out, steps, frames and the replay check."""
        return (f"{self.episodes_kept} episodes ({self.train} train, {self.test} test), {self.steps:,} steps, "
                f"{self.frames:,} frames; {self.tally_text()}; simulator replay of the recorded actions within "
                f"{self.replay_max_state_error:.2g} px of the recorded states")
