"""The typed binding graph: videos, entities, attributes, events and times, and what binds them.

Perception turns one frame into :class:`Detection` rows; the graph groups them into *bindings*
(an entity description bound to a track in one video: the times it was seen, where, how fast,
which way) and *events* (a vehicle at rest on the road, hazard lights). Nodes are typed
(``video``, ``entity``, ``attribute``, ``event``, ``time``) and every edge names its relation,
so the readout (:mod:`.readout`) answers by querying the graph, never the pixels.

Within one CLoVR video every road user has its own colour (the generator draws colours without
replacement per video), so a track is keyed by (video, colour, road or sidewalk).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

STILL = 0.01  # frame widths per second below which a vehicle is at rest


@dataclass(frozen=True)
class Detection:
    """One road user seen in one frame."""

    video: int
    time: float
    colour: str
    kind: str | None  # "car", "bus", ... or "pedestrian"; None when the backend cannot tell the vehicle type
    x: float | None = None  # centre, frame fractions
    y: float | None = None
    hazard: bool = False


@dataclass
class Binding:
    """An entity description bound to one track in one video: what was seen of it, in time order."""

    video: int
    colour: str
    kinds: list[str | None] = field(default_factory=list)  # per sighting
    times: list[float] = field(default_factory=list)
    xs: list[float | None] = field(default_factory=list)
    hazard: bool = False

    @property
    def kind(self) -> str | None:
        """The type most sightings report (None when none could tell)."""
        told = [k for k in self.kinds if k is not None]
        return max(sorted(set(told)), key=told.count) if told else None

    @property
    def first(self) -> float:
        return min(self.times)

    def velocities(self) -> list[float]:
        """Signed speeds (frame widths per second) between consecutive sightings with positions."""
        pts = sorted((t, x) for t, x in zip(self.times, self.xs, strict=True) if x is not None)
        return [(x1 - x0) / (t1 - t0) for (t0, x0), (t1, x1) in zip(pts, pts[1:], strict=False) if t1 > t0]

    @property
    def direction(self) -> int | None:
        """+1 left to right, -1 right to left, None when never seen moving."""
        moving = [v for v in self.velocities() if abs(v) > STILL]
        return None if not moving else int(np.sign(np.median(moving)))

    @property
    def speed(self) -> float | None:
        moving = [abs(v) for v in self.velocities() if abs(v) > STILL]
        return float(np.median(moving)) if moving else None

    @property
    def stopped(self) -> bool:
        """Seen at rest on the road (two sightings at least 0.5 s apart without moving) or with hazard lights."""
        pts = sorted((t, x) for t, x in zip(self.times, self.xs, strict=True) if x is not None)
        rest = any(t1 - t0 >= 0.5 and abs(x1 - x0) / (t1 - t0) < STILL and 0.05 < x0 < 0.95
                   for (t0, x0), (t1, x1) in zip(pts, pts[1:], strict=False))
        return rest or self.hazard


class BindingGraph:
    """Typed nodes and named edges built from detections; queried by the readout gates."""

    def __init__(self, n_videos: int) -> None:
        self.n_videos = n_videos
        self.bindings: dict[tuple[int, str, bool], Binding] = {}
        self.observed: dict[int, set[float]] = defaultdict(set)  # video -> times looked at
        self.walkers_in_view: dict[int, int] = defaultdict(int)  # video -> most pedestrians seen in one frame

    def add(self, video: int, time: float, detections: list[Detection]) -> None:
        """Record that frame (video, time) was observed and what was in it."""
        self.observed[video].add(round(time, 6))
        walkers = sum(d.kind == "pedestrian" for d in detections)
        self.walkers_in_view[video] = max(self.walkers_in_view[video], walkers)
        for d in detections:
            walker = d.kind == "pedestrian"
            b = self.bindings.setdefault((video, d.colour, walker), Binding(video, d.colour))
            b.kinds.append(d.kind)
            b.times.append(d.time)
            b.xs.append(d.x)
            b.hazard |= d.hazard

    def find(self, video: int, colour: str, kind: str | None) -> Binding | None:
        """The track of 'the <colour> <kind>' in ``video``: colours are unique per video, so the colour binds;
        whether the type agrees is checked by binding verification (:mod:`.readout`)."""
        return self.bindings.get((video, colour, kind == "pedestrian"))

    def vehicles(self, video: int) -> list[Binding]:
        return [b for (v, _, walker), b in self.bindings.items() if v == video and not walker]

    def pedestrians(self, video: int) -> list[Binding]:
        return [b for (v, _, walker), b in self.bindings.items() if v == video and walker]

    def edges(self) -> list[tuple[str, str, str]]:
        """The graph as (source node, relation, target node) triples, nodes typed as ``type:name``."""
        out = []
        for (v, colour, walker), b in sorted(self.bindings.items()):
            entity = f"entity:{colour} {b.kind or ('pedestrian' if walker else 'vehicle')}"
            out.append((entity, "appears_in", f"video:{v + 1}"))
            out.append((entity, "first_seen_at", f"time:{v + 1}@{b.first:.1f}"))
            out.append((entity, "has_colour", f"attribute:{colour}"))
            if b.direction is not None:
                out.append((entity, "travels", f"attribute:{'left to right' if b.direction > 0 else 'right to left'}"))
            if b.stopped:
                out.append((entity, "takes_part_in", f"event:stop@video {v + 1}"))
        return out
