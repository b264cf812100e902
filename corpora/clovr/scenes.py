"""CLoVR-Bench scene scripts: a set of recordings along one road where two "cast" vehicles recur.

Every video also has its own background vehicles and pedestrians, in numbers that differ
between videos, and one video has a vehicle that stops with its hazard lights on.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from neurips26.corpora.video.scene import (
    LANES,
    SIDEWALKS,
    SIZES,
    Entity,
    Event,
    Scene,
    Track,
    grid,
    overlaps,
    random_layout,
)

CAST_COLOURS = ("purple", "orange", "teal", "pink", "yellow")
BACKGROUND_COLOURS = ("silver", "black", "white", "brown", "blue", "red", "green")
PEOPLE_COLOURS = ("red", "blue", "green", "orange", "yellow", "purple", "pink", "teal", "white", "black")
SPEEDS = (0.1, 0.14, 0.19, 0.25)  # distinct enough to compare by eye


@dataclass
class Appearance:
    video: int
    lane: str
    speed: float
    entity_id: str = ""
    span: tuple[float, float] | None = None


@dataclass
class Cast:
    name: str
    kind: str
    colour: str
    appearances: list[Appearance]

    def first(self) -> Appearance:
        return min(self.appearances, key=lambda a: (a.video, a.span[0]))


def _pass(eid: str, kind: str, colour: str, lane: str, speed: float, t_in: float) -> Entity:
    """A vehicle crossing the whole view at constant speed, entering at ``t_in``."""
    length = SIZES[kind][0]
    y, direction = LANES[lane]
    x0 = -length / 2 if direction > 0 else 1 + length / 2
    track = Track(t_in, x0, y, vx=direction * speed).cruise_to_x(1 + length / 2 if direction > 0 else -length / 2)
    return Entity(eid, kind, colour, track.points, facing=direction, lane=lane)


def _place(scene: Scene, rng: random.Random, make: Callable[[float], Entity], earliest: float, latest: float) -> bool:
    """Add the entity ``make(t_in)`` at a random entry time where it overlaps nobody; False if none found."""
    for _ in range(60):
        scene.entities.append(make(grid(rng.uniform(earliest, latest), scene.fps)))
        if not overlaps(scene):
            return True
        scene.entities.pop()
    return False


def _crossing_time(speed: float, kind: str) -> float:
    return (1 + SIZES[kind][0]) / speed


def script_set(rng: random.Random, set_index: int, n_videos: int, duration: float, fps: int,
               size: tuple[int, int]) -> tuple[list[Scene], list[Cast], int]:
    """The scenes of one set, its cast and the index of the video with the stop event."""
    for _ in range(50):
        result = _try_set(rng, set_index, n_videos, duration, fps, size)
        if result:
            return result
    raise RuntimeError("could not script a CLoVR set")  # pragma: no cover


def _try_set(rng: random.Random, set_index: int, n_videos: int, duration: float, fps: int,
             size: tuple[int, int]) -> tuple[list[Scene], list[Cast], int] | None:
    kinds = ["car", "van", "truck", "bus", "motorcycle"]
    colours = rng.sample(CAST_COLOURS, 2)
    cast = []
    for k in range(2):
        n_app = rng.choice((2, 3)) if k == 0 else 2
        videos = sorted(rng.sample(range(n_videos), min(n_app, n_videos)))
        same = rng.random() < 0.5
        lanes = [rng.choice(sorted(LANES))] * len(videos) if same else [rng.choice(sorted(LANES)) for _ in videos]
        speeds = rng.sample(SPEEDS, len(videos))
        kind = rng.choice(kinds)
        kinds.remove(kind)
        cast.append(Cast(f"the {colours[k]} {kind}", kind, colours[k],
                         [Appearance(v, lane, s) for v, lane, s in zip(videos, lanes, speeds, strict=True)]))
    vehicle_totals = [n + 3 for n in rng.sample(range(n_videos), n_videos)]
    people_totals = [n + 1 for n in rng.sample(range(n_videos), n_videos)]
    stop_video = rng.randrange(n_videos)
    scenes = []
    for v in range(n_videos):
        scene = Scene(f"clovr_gen_s{set_index}_v{v + 1}", duration, fps, size[0], size[1],
                      random_layout(rng, f"CAM {set_index + 1}{'ABCDEFGH'[v]}"))
        n_vehicles = 0
        for member in cast:
            for app in member.appearances:
                if app.video != v:
                    continue
                app.entity_id = f"c{cast.index(member)}"
                latest = duration - _crossing_time(app.speed, member.kind) - 0.5
                if latest < 0.5 or not _place(scene, rng, lambda t, m=member, a=app: _pass(
                        a.entity_id, m.kind, m.colour, a.lane, a.speed, t), 0.5, latest):
                    return None
                app.span = scene.visible_span(app.entity_id)
                n_vehicles += 1
        looks = [(rng.choice(("car", "van", "truck")), c) for c in rng.sample(BACKGROUND_COLOURS,
                                                                               len(BACKGROUND_COLOURS))]
        if v == stop_video:
            kind, colour = looks.pop()
            if not _place_stop(scene, rng, kind, colour):
                return None
            n_vehicles += 1
        while n_vehicles < vehicle_totals[v]:
            kind, colour = looks.pop()
            lane, speed = rng.choice(sorted(LANES)), rng.uniform(0.14, 0.2)
            latest = duration - _crossing_time(speed, kind) - 0.5
            eid = f"b{len(scene.entities)}"
            if not _place(scene, rng, lambda t, e=eid, k=kind, c=colour, ln=lane, sp=speed: _pass(
                    e, k, c, ln, sp, t), 0.5, latest):
                return None
            n_vehicles += 1
        people = rng.sample(PEOPLE_COLOURS, people_totals[v])
        for colour in people:
            side, direction = rng.choice(sorted(SIDEWALKS)), rng.choice((-1, 1))
            track = Track(0.0, rng.uniform(0.1, 0.9), SIDEWALKS[side], vx=direction * rng.uniform(0.01, 0.03))
            scene.entities.append(Entity(f"p{len(scene.entities)}", "pedestrian", colour,
                                         track.cruise(duration).points, facing=direction))
        scenes.append(scene)
    firsts = [m.first() for m in cast]
    distinct_first = firsts[0].video != firsts[1].video or abs(firsts[0].span[0] - firsts[1].span[0]) >= 2
    return (scenes, cast, stop_video) if distinct_first else None


def _place_stop(scene: Scene, rng: random.Random, kind: str, colour: str) -> bool:
    """A vehicle that enters, stops mid-view for 3 s with hazard lights on, and drives on."""
    length = SIZES[kind][0]
    y = LANES["eastbound"][0]
    v = rng.uniform(0.14, 0.18)
    for _ in range(60):
        t_stop = grid(rng.uniform(6.0, scene.duration - 12.0), scene.fps)
        x_stop = rng.uniform(0.3, 0.6)
        x_brake = x_stop - v * 0.5
        t0 = t_stop - 1.0 - (x_brake + length / 2) / v
        if t0 < 0:
            continue
        track = Track(t0, -length / 2, y, vx=v).cruise(t_stop - 1.0).brake(1.0).wait(grid(t_stop + 3.0, scene.fps))
        track.accelerate(1.0, v).cruise_to_x(1 + length / 2)
        if track.t > scene.duration - 0.2:
            continue
        entity = Entity("s0", kind, colour, track.points, facing=1, lane="eastbound",
                        hazard=[(t_stop, grid(t_stop + 3.0, scene.fps))])
        scene.entities.append(entity)
        if overlaps(scene):
            scene.entities.pop()
            continue
        scene.events.append(Event("stop", t_stop, grid(t_stop + 3.0, scene.fps), ["s0"], anomaly=True))
        return True
    return False
