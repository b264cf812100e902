"""A shifted PushT robot: the same task and scene, a controller that executes commands differently.

The shift is a dynamics shift of the robot's action interface: the simulator executes ``c + M (a - c)`` for a
commanded position ``a`` (``c`` the scene centre, ``M`` a rotation by ``rotation_deg`` after a mirror of the x
axis when ``mirror_x``). The default, :data:`MIRROR_X`, mirrors the x axis of the controller (a sign flip of one
axis, as a re-mounted or mis-wired arm has): a policy trained on the source robot pushes left when it means right.
Observations (agent and block poses, in the scene's frame) are unchanged, so what the robot *sees* happen is the
same in both domains; only which command makes it happen differs.

A source demonstration becomes a target-domain demonstration by commanding ``M^-1`` of its actions: replayed on
the shifted robot it reproduces the recorded states (``tests/test_actions.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .data import SCENE, Demo


@dataclass(frozen=True)
class Shift:
    """An affine map of the commanded position about the scene centre (see the module docstring)."""

    mirror_x: bool = True
    rotation_deg: float = 0.0

    @property
    def matrix(self) -> np.ndarray:
        a = np.deg2rad(self.rotation_deg)
        rotation = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        return rotation @ np.diag([-1.0 if self.mirror_x else 1.0, 1.0])

    def __call__(self, command: np.ndarray) -> np.ndarray:
        """The position the shifted robot executes for ``command`` (pixels; one action or rows of them)."""
        centre = SCENE / 2
        return (np.asarray(command, dtype=np.float64) - centre) @ self.matrix.T + centre

    def command_for(self, executed: np.ndarray) -> np.ndarray:
        """The command that makes the shifted robot execute ``executed`` (the inverse map)."""
        centre = SCENE / 2
        return (np.asarray(executed, dtype=np.float64) - centre) @ np.linalg.inv(self.matrix).T + centre

    def describe(self) -> str:
        parts = (["x axis mirrored"] if self.mirror_x else []) + \
            ([f"rotated {self.rotation_deg:g} deg"] if self.rotation_deg else [])
        return "commands " + " and ".join(parts or ["unchanged"]) + " about the scene centre"


MIRROR_X = Shift(mirror_x=True, rotation_deg=0.0)


def target_demos(demos: list[Demo], shift: Shift) -> list[Demo]:
    """The demonstrations as the shifted robot would have been commanded to record them (same states)."""
    return [replace(d, action=shift.command_for(d.action)) for d in demos]
