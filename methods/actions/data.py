"""Demonstrations from the built ``pusht`` folder, and the (observation, action chunk) pairs policies learn from.

A policy sees the state at step ``i`` (agent x, y, block x, y, angle; or the block's keypoints with the agent's
position) and learns the actions that follow. Two views of "what follows":

* :func:`raw_chunk`: the next ``steps`` samples at the data's rate (what Diffusion Policy predicts; its duration
  depends on the rate);
* :func:`timed_chunk`: the samples of the next ``horizon_s`` seconds at the data's rate, which the DCT codec turns
  into coefficients that do not depend on the rate (FAFM).

Chunks that run past the episode's end repeat its last action, as Diffusion Policy pads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neurips26 import hubfolder
from neurips26.errors import UserError

SCENE = 512.0
OBSERVATIONS = ("state", "keypoints")


@dataclass
class Demo:
    """One demonstration at one rate."""

    episode_index: int
    rate_hz: float
    state: np.ndarray  # (n, 5)
    action: np.ndarray  # (n, 2)
    keypoint: np.ndarray  # (n, 18)


def load(folder: Path, split: str = "train", rates: tuple[float, ...] = (10.0,),
         episodes: int | None = None) -> list[Demo]:
    """The ``split`` demonstrations of a built pusht folder at each of ``rates`` (10 Hz: the ``episodes`` config,
    others: ``mixed_frequency``); ``episodes`` keeps the first N episode indices."""
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():
        raise UserError(f"{folder}: no built pusht folder; run `neurips26 build pusht --raw DIR --out {folder}`")
    columns = ["episode_index", "rate_hz", "state", "action", "keypoint"]
    demos: list[Demo] = []
    for rate in rates:
        config = "episodes" if rate == 10.0 else "mixed_frequency"
        table = hubfolder.read_table(folder, config, columns, split)
        if table is None:
            raise UserError(f"{folder}: no {config} config with a {split} split")
        for row in table.to_pylist():
            if row["rate_hz"] != rate:
                continue
            demos.append(Demo(row["episode_index"], rate, np.asarray(row["state"]), np.asarray(row["action"]),
                              np.asarray(row["keypoint"])))
    if not demos:
        raise UserError(f"{folder}: no {split} demonstrations at {', '.join(map(str, rates))} Hz")
    keep = sorted({d.episode_index for d in demos})[:episodes] if episodes else None
    return [d for d in demos if keep is None or d.episode_index in keep]


def from_store(raw: Path, split: str = "train", episodes: int | None = None) -> list[Demo]:
    """The ``split`` demonstrations at 10 Hz read straight from Diffusion Policy's replay store in ``raw`` (the
    folder ``--raw`` of ``neurips26 build pusht``), with the built folder's train/test split; ``episodes`` keeps
    the first N of the split. Needs no build (the claims read the store this way)."""
    from neurips26.corpora.pusht import raw as raw_store  # lazy: zarr loads only when a store is read
    from neurips26.corpora.pusht.build import is_test  # lazy: as above

    if split not in ("train", "test"):
        raise UserError(f"split {split!r}: use train or test")
    demos = []
    for episode in raw_store.episodes(raw_store.find_store(Path(raw))):
        if is_test(episode.index) == (split == "test"):
            demos.append(Demo(episode.index, 10.0, episode.state, episode.action,
                              episode.keypoint.reshape(len(episode), -1)))
            if episodes and len(demos) == episodes:
                break
    if not demos:
        raise UserError(f"{raw}: no {split} demonstrations in the replay store")
    return demos


def observation(state: np.ndarray, keypoint: np.ndarray | None = None, kind: str = "state") -> np.ndarray:
    """The policy's input, scaled to about [-1, 1]: agent and block positions with the angle as (sin, cos); or the
    agent's position and the block's 9 keypoints."""
    state = np.atleast_2d(np.asarray(state, dtype=np.float64))
    if kind == "state":
        return np.concatenate([state[:, :4] / (SCENE / 2) - 1, np.sin(state[:, 4:5]), np.cos(state[:, 4:5])], axis=1)
    if kind == "keypoints":
        if keypoint is None:
            raise ValueError("keypoint observations need the keypoints")
        return np.concatenate([state[:, :2], np.atleast_2d(keypoint)], axis=1) / (SCENE / 2) - 1
    raise UserError(f"observation {kind!r}: use one of {', '.join(OBSERVATIONS)}")


def to_unit(actions: np.ndarray) -> np.ndarray:
    """Actions in pixels -> [-1, 1]."""
    return np.asarray(actions, dtype=np.float64) / (SCENE / 2) - 1


def from_unit(actions: np.ndarray) -> np.ndarray:
    """[-1, 1] -> actions in pixels, clipped to the scene."""
    return np.clip((np.asarray(actions, dtype=np.float64) + 1) * (SCENE / 2), 0.0, SCENE)


def _padded(actions: np.ndarray, start: int, steps: int) -> np.ndarray:
    index = np.minimum(np.arange(start, start + steps), len(actions) - 1)
    return actions[index]


def raw_chunk(demo: Demo, i: int, steps: int) -> np.ndarray:
    """The ``steps`` actions from step ``i`` on (padded with the last one)."""
    return _padded(demo.action, i, steps)


def timed_chunk(demo: Demo, i: int, horizon_s: float) -> np.ndarray:
    """The actions of the ``horizon_s`` seconds from step ``i`` on, at the demo's rate (padded)."""
    return _padded(demo.action, i, max(2, round(horizon_s * demo.rate_hz)))


def pairs(demos: list[Demo], kind: str = "state") -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Every (observation, (demo number, step)) of ``demos``: observations stacked, and where each came from."""
    observations, where = [], []
    for d, demo in enumerate(demos):
        observations.append(observation(demo.state, demo.keypoint, kind))
        where += [(d, i) for i in range(len(demo.action))]
    return np.concatenate(observations), where


# The block's 9 released keypoints in the block's own frame (pixels): the released keypoints are this template
# moved by each recorded block pose (to within 0.005 px over the first 3,000 steps), so a simulator state gives
# the keypoints a policy trained on them expects.
KEYPOINT_TEMPLATE = np.array([[9.27, 90.041], [-60.983, -1.186], [60.913, -1.394], [-0.27, 25.544],
                              [-14.064, 122.816], [39.003, 32.857], [-39.966, 32.73], [-16.824, 62.863],
                              [23.541, -1.7]])


def keypoints_from_state(state: np.ndarray) -> np.ndarray:
    """The 9 keypoints (flattened, per row) of each block pose in ``state`` rows."""
    state = np.atleast_2d(np.asarray(state, dtype=np.float64))
    c, s = np.cos(state[:, 4])[:, None], np.sin(state[:, 4])[:, None]
    x = c * KEYPOINT_TEMPLATE[:, 0] - s * KEYPOINT_TEMPLATE[:, 1] + state[:, 2:3]
    y = s * KEYPOINT_TEMPLATE[:, 0] + c * KEYPOINT_TEMPLATE[:, 1] + state[:, 3:4]
    return np.stack([x, y], axis=-1).reshape(len(state), -1)
