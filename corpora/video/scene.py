"""Scene scripts: a CCTV view of a two-lane road, its road users and what happens, in exact times.

A :class:`Scene` is plain data (JSON-ready): the camera's :class:`Layout`, the
:class:`Entity` list (each with a piecewise-linear path of ``(t, x, y)``
waypoints in frame fractions) and the :class:`Event` list (kind, start, end,
entities, cause). The renderer draws it; the annotation writers of each
resource read it, so every answer follows from the script.

Geometry (fractions of the frame): the road spans y 0.38-0.74; the upper lane
is westbound (right to left), the lower lane eastbound (left to right); there
are sidewalks above and below and a crosswalk at ``layout.crosswalk_x``.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

ROAD = (0.38, 0.74)
LANES = {"westbound": (0.47, -1), "eastbound": (0.65, 1)}  # lane -> (y, direction of travel in x)
SIDEWALKS = {"north": 0.34, "south": 0.78}
COLOURS = {
    "red": (200, 40, 40), "blue": (40, 80, 200), "white": (235, 235, 235), "black": (35, 35, 40),
    "yellow": (230, 200, 40), "green": (40, 150, 60), "orange": (240, 140, 30), "purple": (130, 60, 170),
    "silver": (165, 168, 178), "brown": (130, 90, 50), "pink": (235, 120, 170), "teal": (30, 150, 150),
}
SIZES = {  # kind -> (length along the road as a fraction of width, breadth as a fraction of height)
    "car": (0.085, 0.09), "van": (0.10, 0.10), "truck": (0.14, 0.11), "bus": (0.17, 0.11),
    "motorcycle": (0.045, 0.05), "pedestrian": (0.022, 0.045),
}
VEHICLES = ("car", "van", "truck", "bus", "motorcycle")


@dataclass
class Layout:
    """One camera: where the crosswalk is, the label, and the look of the roadside."""

    camera: str = "CAM 1"
    crosswalk_x: float = 0.5
    grass: tuple[int, int, int] = (70, 120, 60)
    buildings: list[tuple[float, float, tuple[int, int, int]]] = field(default_factory=list)  # (x0, x1, rgb)


@dataclass
class Entity:
    """A road user: kind, colour, the lane it drives in and its path of (t, x, y) waypoints."""

    id: str
    kind: str
    colour: str
    path: list[tuple[float, float, float]]
    facing: int = 1  # +1 drives/faces to the right, -1 to the left
    lane: str | None = None
    hazard: list[tuple[float, float]] = field(default_factory=list)  # hazard lights blink in these intervals

    @property
    def name(self) -> str:
        """How questions refer to it: 'the red car', 'the pedestrian in orange'."""
        return f"the pedestrian in {self.colour}" if self.kind == "pedestrian" else f"the {self.colour} {self.kind}"

    def position(self, t: float) -> tuple[float, float] | None:
        """(x, y) at time ``t``, or None outside the path's time range."""
        p = self.path
        if t < p[0][0] - 1e-9 or t > p[-1][0] + 1e-9:
            return None
        for (t0, x0, y0), (t1, x1, y1) in zip(p, p[1:], strict=False):
            if t <= t1 + 1e-9:
                a = 0.0 if t1 == t0 else min(max((t - t0) / (t1 - t0), 0.0), 1.0)
                return x0 + a * (x1 - x0), y0 + a * (y1 - y0)
        return p[-1][1], p[-1][2]

    def speed(self, t: float, dt: float = 0.05) -> float:
        """Speed in frame widths per second around ``t`` (0 outside the path)."""
        a, b = self.position(t - dt), self.position(t + dt)
        if a is None or b is None:
            return 0.0
        return ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 / (2 * dt)

    def box(self, t: float) -> tuple[float, float, float, float] | None:
        """(x0, y0, x1, y1) in frame fractions at ``t``; pedestrians are upright, vehicles lie along the road."""
        pos = self.position(t)
        if pos is None:
            return None
        length, breadth = SIZES[self.kind]
        w, h = (length, breadth)
        return pos[0] - w / 2, pos[1] - h / 2, pos[0] + w / 2, pos[1] + h / 2

    def visible(self, t: float) -> bool:
        box = self.box(t)
        return box is not None and box[2] > 0 and box[0] < 1 and box[3] > 0 and box[1] < 1


@dataclass
class Event:
    """Something that happens between ``start`` and ``end`` (seconds), to ``entities``."""

    kind: str
    start: float
    end: float
    entities: list[str]
    anomaly: bool = False
    cause: int | None = None  # index of the event that caused this one
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scene:
    """A whole scripted clip: camera, road users, events; rendered at ``fps`` for ``duration`` seconds."""

    video_id: str
    duration: float
    fps: int
    width: int
    height: int
    layout: Layout
    entities: list[Entity] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @property
    def n_frames(self) -> int:
        return round(self.duration * self.fps)

    def entity(self, entity_id: str) -> Entity:
        return next(e for e in self.entities if e.id == entity_id)

    def visible_span(self, entity_id: str) -> tuple[float, float] | None:
        """[first, last frame's end) in seconds during which the entity is in view, on the frame grid."""
        entity = self.entity(entity_id)
        shown = [i for i in range(self.n_frames) if entity.visible(i / self.fps)]
        return (shown[0] / self.fps, (shown[-1] + 1) / self.fps) if shown else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Track:
    """Builds an entity path step by step: cruise, brake, wait, accelerate (positions in frame fractions)."""

    def __init__(self, t: float, x: float, y: float, vx: float = 0.0, vy: float = 0.0) -> None:
        self.points = [(t, x, y)]
        self.t, self.x, self.y, self.vx, self.vy = t, x, y, vx, vy

    def _add(self, t: float, x: float, y: float) -> Track:
        self.t, self.x, self.y = t, x, y
        self.points.append((round(t, 6), x, y))
        return self

    def cruise(self, until: float, vx: float | None = None, vy: float | None = None) -> Track:
        """Constant velocity until time ``until``."""
        self.vx = self.vx if vx is None else vx
        self.vy = self.vy if vy is None else vy
        dt = until - self.t
        return self._add(until, self.x + self.vx * dt, self.y + self.vy * dt)

    def cruise_to_x(self, x: float, vx: float | None = None) -> Track:
        """Constant horizontal speed until reaching ``x``."""
        self.vx = self.vx if vx is None else vx
        return self.cruise(self.t + (x - self.x) / self.vx)

    def brake(self, duration: float, steps: int = 6) -> Track:
        """Constant deceleration from the current speed to rest in ``duration`` seconds."""
        t0, x0, y0, vx, vy = self.t, self.x, self.y, self.vx, self.vy
        for k in range(1, steps + 1):
            tau = duration * k / steps
            f = tau - tau * tau / (2 * duration)
            self._add(t0 + tau, x0 + vx * f, y0 + vy * f)
        self.vx = self.vy = 0.0
        return self

    def accelerate(self, duration: float, vx: float, vy: float = 0.0, steps: int = 6) -> Track:
        """Constant acceleration from rest to (vx, vy) in ``duration`` seconds."""
        t0, x0, y0 = self.t, self.x, self.y
        for k in range(1, steps + 1):
            tau = duration * k / steps
            f = tau * tau / (2 * duration)
            self._add(t0 + tau, x0 + vx * f, y0 + vy * f)
        self.vx, self.vy = vx, vy
        return self

    def wait(self, until: float) -> Track:
        self.vx = self.vy = 0.0
        return self._add(until, self.x, self.y)


def grid(t: float, fps: int) -> float:
    """``t`` rounded to the frame grid (and to 1e-6, so times print exactly)."""
    return round(round(t * fps) / fps, 6)


def overlaps(scene: Scene, allowed: set[frozenset[str]] | None = None) -> list[tuple[float, str, str]]:
    """(time, a, b) for every frame where two road users overlap on the road, other than ``allowed`` pairs."""
    allowed = allowed or set()
    found = []
    shrink = 0.004  # touching (a collision's contact) is not overlapping
    for i in range(scene.n_frames):
        t = i / scene.fps
        boxes = [(e, e.box(t)) for e in scene.entities if e.visible(t)]
        for k, (a, ba) in enumerate(boxes):
            for b, bb in boxes[k + 1:]:
                if a.kind == b.kind == "pedestrian" or frozenset((a.id, b.id)) in allowed:
                    continue
                if (ba[0] + shrink < bb[2] - shrink and bb[0] + shrink < ba[2] - shrink
                        and ba[1] + shrink < bb[3] - shrink and bb[1] + shrink < ba[3] - shrink):
                    found.append((t, a.id, b.id))
    return found


def pick_looks(rng: random.Random, n: int, kinds: tuple[str, ...] = VEHICLES,
               taken: set[str] | None = None) -> list[tuple[str, str]]:
    """``n`` (kind, colour) pairs with colours unused so far (not in ``taken``): every vehicle is told apart."""
    colours = rng.sample(sorted(set(COLOURS) - set(taken or ())), n)
    return [(rng.choice(kinds), colour) for colour in colours]


def random_layout(rng: random.Random, camera: str) -> Layout:
    """A camera with its own crosswalk position, grass tone and row of buildings."""
    buildings, x = [], 0.0
    while x < 1.0:
        w = rng.uniform(0.08, 0.2)
        shade = rng.randint(110, 190)
        buildings.append((round(x, 4), round(min(x + w, 1.0), 4), (shade, shade - rng.randint(0, 30), shade - 40)))
        x += w + rng.uniform(0.0, 0.05)
    grass = (rng.randint(55, 85), rng.randint(105, 135), rng.randint(45, 70))
    return Layout(camera=camera, crosswalk_x=round(rng.uniform(0.4, 0.6), 3), grass=grass, buildings=buildings)
