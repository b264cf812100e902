"""Procedural TAR: CCTV clips with scripted traffic anomalies and annotations in the released layout.

Each clip has one scenario: ``collision`` (a vehicle stops for a pedestrian at
the crosswalk and the one behind runs into it), ``stopped_vehicle`` (a vehicle
stops in its lane with hazard lights on; the next one queues behind it),
``wrong_way`` (a vehicle drives against the traffic of its lane),
``jaywalking`` (a pedestrian crosses away from the crosswalk; a vehicle stops
for them), ``sudden_braking`` (a vehicle brakes hard for no visible reason; the
one behind brakes too) or ``normal`` (a vehicle yields at the crosswalk), plus
background traffic and pedestrians. Event times lie on the frame grid.

Output, the layout :mod:`.build` reads (that of the release)::

    OUT/annotations/<split>/<task_type>.json   {"items": [{"id", "video_id", "question", ...}]}
    OUT/videos/<video_id>.mp4
    OUT/SHA256SUMS                             "<sha256>  videos/<video_id>.mp4" per video
    OUT/scenes/<video_id>.json                 the scene script every answer follows from

Twelve annotations per clip over all ten task types, each with a reasoning
trace templated from the script. Same seed and arguments, same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from neurips26.corpora.video import render
from neurips26.corpora.video.scene import (
    LANES,
    ROAD,
    SIDEWALKS,
    SIZES,
    Entity,
    Event,
    Scene,
    Track,
    grid,
    overlaps,
    pick_looks,
    random_layout,
)

from .tasktypes import TASK_TYPES

SCENARIOS = ("collision", "stopped_vehicle", "wrong_way", "jaywalking", "sudden_braking", "normal")
LABELS = {"collision": "a rear-end collision", "stopped_vehicle": "a vehicle stopped in a traffic lane",
          "wrong_way": "wrong-way driving", "jaywalking": "jaywalking", "sudden_braking": "sudden braking",
          "normal": "no anomaly"}
PROBES = {  # yes/no question about each anomaly type
    "collision": "Does any vehicle collide with another vehicle?",
    "stopped_vehicle": "Is a vehicle left standing in a traffic lane with its hazard lights on?",
    "wrong_way": "Does any vehicle drive against the direction of traffic?",
    "jaywalking": "Does a pedestrian cross the road away from the crosswalk?",
    "sudden_braking": "Does a vehicle brake hard without any visible reason?",
}
WHY = {
    "collision": "vehicles must keep a safe distance and never touch",
    "stopped_vehicle": "a vehicle should not stand in a traffic lane when nothing blocks it",
    "wrong_way": "vehicles in the eastbound lane must travel left to right",
    "jaywalking": "pedestrians must cross at the crosswalk",
    "sudden_braking": "nothing in front of the vehicle requires it to stop",
}
# Probes whose honest answer would be unclear in a scenario (a vehicle stopping for a pedestrian is not "left
# standing", a hard stop before a collision is not "without reason"): never asked there.
UNCLEAR = {"collision": {"stopped_vehicle", "sudden_braking"}, "sudden_braking": {"stopped_vehicle"},
           "stopped_vehicle": {"sudden_braking"}, "jaywalking": {"sudden_braking", "stopped_vehicle"},
           "normal": {"stopped_vehicle", "sudden_braking"}, "wrong_way": set()}
SOURCE = "neurips26-generator"
LETTERS = "ABCDEFGH"
WALK = 0.1  # pedestrians cross at 0.1 frame heights per second


@dataclass
class GenerateReport:
    out: Path
    videos: int
    annotations: int
    video_seconds: float
    frames: int
    seconds: float  # wall time

    def summary(self) -> str:
        return (f"{self.videos} videos ({self.video_seconds:.0f} s of video, {self.frames:,} frames), "
                f"{self.annotations} annotations in {self.seconds:.1f} s "
                f"({self.video_seconds / max(self.seconds, 1e-9):.1f} video-s/s)")


# -- scene scripts ------------------------------------------------------------------------------------------
def _vehicle(eid: str, look: tuple[str, str], track: Track, lane: str, facing: int | None = None) -> Entity:
    return Entity(eid, look[0], look[1], track.points, facing=facing or LANES[lane][1], lane=lane)


def _crosser(eid: str, colour: str, x: float, t_wait: float, t_go: float, south: bool = True) -> Entity:
    """A pedestrian standing on one sidewalk until ``t_go`` and then crossing to the other one."""
    y0, y1 = (SIDEWALKS["north"], SIDEWALKS["south"]) if south else (SIDEWALKS["south"], SIDEWALKS["north"])
    track = Track(t_wait, x, y0).wait(t_go)
    track.cruise(t_go + abs(y1 - y0) / WALK, vy=WALK if south else -WALK)
    return Entity(eid, "pedestrian", colour, track.points, facing=1)


def _on_road(scene: Scene, entity: Entity, band: tuple[float, float] = ROAD) -> tuple[float, float]:
    """[first, last frame's end) when the entity's box overlaps the horizontal band ``band``."""
    frames = [i for i in range(scene.n_frames)
              if (b := entity.box(i / scene.fps)) is not None and b[3] > band[0] and b[1] < band[1]]
    return frames[0] / scene.fps, (frames[-1] + 1) / scene.fps


def _background(scene: Scene, rng: random.Random, lane: str, n: int, allowed: set) -> None:
    """``n`` vehicles crossing the view in ``lane`` at one speed, placed where they hit nobody."""
    speed = rng.uniform(0.13, 0.19)
    direction = LANES[lane][1]
    taken = {e.colour for e in scene.entities if e.kind != "pedestrian"}
    for _ in range(n):
        look = pick_looks(rng, 1, ("car", "van", "truck", "bus"), taken)[0]
        for _ in range(30):
            x0 = rng.uniform(-0.8, 0.9)
            track = Track(0.0, x0 if direction > 0 else 1 - x0, LANES[lane][0], vx=direction * speed)
            entity = _vehicle(f"b{len(scene.entities)}", look, track.cruise(scene.duration), lane)
            scene.entities.append(entity)
            span = scene.visible_span(entity.id)
            if span and span[1] - span[0] > 1.0 and not overlaps(scene, allowed):
                taken.add(look[1])
                break
            scene.entities.pop()


def _strollers(scene: Scene, rng: random.Random, n: int) -> None:
    """Pedestrians walking along the sidewalks (never on the road)."""
    used = {e.colour for e in scene.entities if e.kind == "pedestrian"}
    for _ in range(n):
        colour = rng.choice(sorted({"red", "blue", "green", "orange", "yellow", "purple", "pink", "teal"} - used))
        used.add(colour)
        side = rng.choice(sorted(SIDEWALKS))
        direction = rng.choice((-1, 1))
        x0 = rng.uniform(0.05, 0.95)
        track = Track(0.0, x0, SIDEWALKS[side], vx=direction * rng.uniform(0.03, 0.05)).cruise(scene.duration)
        scene.entities.append(Entity(f"p{len(scene.entities)}", "pedestrian", colour, track.points, facing=direction))


def script(rng: random.Random, video_id: str, scenario: str, duration: float, fps: int,
           size: tuple[int, int]) -> Scene:
    """A scene with ``scenario`` and background traffic; retried until no two road users overlap by accident."""
    for _ in range(100):
        scene = Scene(video_id, duration, fps, size[0], size[1], random_layout(rng, f"CAM {rng.randint(1, 9)}"))
        allowed = SCRIPTS[scenario](scene, rng)
        if allowed is None or overlaps(scene, allowed):
            continue
        other = "westbound" if scenario != "jaywalking" else "eastbound"
        _background(scene, rng, other, rng.randint(1, 2), allowed)
        _strollers(scene, rng, rng.randint(0, 2))
        return scene
    raise RuntimeError(f"could not script a {scenario} scene")  # pragma: no cover


def _collision(scene: Scene, rng: random.Random) -> set | None:
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    (ka, ca), (kb, cb) = pick_looks(rng, 2, ("car", "van", "truck"))
    la, lb = SIZES[ka][0], SIZES[kb][0]
    y = LANES["eastbound"][0]
    ped = _crosser("p0", rng.choice(("orange", "yellow", "pink")), cx, 0.0, grid(rng.uniform(1.5, 2.5), fps),
                   south=False)
    scene.entities.append(ped)
    t_stop = grid(rng.uniform(2.0, 3.0), fps)  # A has stopped by then
    xs = cx - 0.05 - la / 2
    v = rng.uniform(0.13, 0.17)
    a = Track(0.0, xs - v * (t_stop - 1.0) - v * 0.5, y, vx=v).cruise(t_stop - 1.0).brake(1.0).wait(T)
    t_c = grid(t_stop + rng.uniform(1.0, 2.5), fps)
    if t_c > T - 1.5:
        return None
    vb = v * rng.uniform(1.3, 1.6)
    xc = xs - la / 2 - lb / 2
    b = Track(0.0, xc - vb * t_c, y, vx=vb).cruise(t_c).wait(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kb, cb), b, "eastbound")]
    scene.entities[-2].hazard = scene.entities[-1].hazard = [(grid(t_c + 0.5, fps), T)]
    cross = _on_road(scene, ped)
    scene.events += [
        Event("crossing", cross[0], cross[1], ["p0"]),
        Event("yield", t_stop, T, ["v1", "p0"], cause=0),
        Event("collision", t_c, T, ["v2", "v1"], anomaly=True, cause=1, detail={"x": xs - la / 2, "y": y}),
    ]
    return {frozenset(("v1", "v2"))}


def _stopped_vehicle(scene: Scene, rng: random.Random) -> set | None:
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    (ka, ca), (kc, cc) = pick_looks(rng, 2, ("car", "van", "truck", "bus"))
    la, lc = SIZES[ka][0], SIZES[kc][0]
    y = LANES["eastbound"][0]
    xs = rng.choice((rng.uniform(0.55, 0.8), rng.uniform(0.25, 0.4)))
    if abs(xs - cx) < 0.12:
        return None
    t_s = grid(rng.uniform(2.5, 4.0), fps)
    v = rng.uniform(0.13, 0.18)
    a = Track(0.0, xs - v * (t_s - 1.2) - v * 0.6, y, vx=v).cruise(t_s - 1.2).brake(1.2).wait(T)
    t_q = grid(t_s + rng.uniform(1.5, 2.5), fps)
    xq = xs - la / 2 - 0.03 - lc / 2
    c = Track(0.0, xq - v * (t_q - 1.0) - v * 0.5, y, vx=v).cruise(t_q - 1.0).brake(1.0).wait(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kc, cc), c, "eastbound")]
    scene.entities[-2].hazard = [(t_s, T)]
    scene.events += [
        Event("stopped_vehicle", t_s, T, ["v1"], anomaly=True),
        Event("queue", t_q, T, ["v2", "v1"], cause=0),
    ]
    return set()


def _wrong_way(scene: Scene, rng: random.Random) -> set | None:
    T = scene.duration
    (kw, cw), = pick_looks(rng, 1, ("car", "van", "motorcycle"))
    v = rng.uniform(0.14, 0.2)
    y = LANES["eastbound"][0]
    x0 = 1 + SIZES[kw][0] / 2 + rng.uniform(0.0, 0.4)
    w = Track(0.0, x0, y, vx=-v).cruise(T)
    scene.entities.append(_vehicle("v1", (kw, cw), w, "eastbound", facing=-1))
    span = scene.visible_span("v1")
    if span is None or span[1] - span[0] < 3.0:
        return None
    scene.events.append(Event("wrong_way", span[0], span[1], ["v1"], anomaly=True))
    return set()


def _jaywalking(scene: Scene, rng: random.Random) -> set | None:
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    xj = rng.choice((rng.uniform(0.12, 0.25), rng.uniform(0.75, 0.88)))
    if abs(xj - cx) < 0.25:
        return None
    colour = rng.choice(("orange", "yellow", "pink", "purple"))
    ped = _crosser("p0", colour, xj, 0.0, grid(rng.uniform(1.5, 3.0), fps))
    scene.entities.append(ped)
    on_road = _on_road(scene, ped)
    y = LANES["westbound"][0]
    lane_band = (ROAD[0], (LANES["westbound"][0] + LANES["eastbound"][0]) / 2)
    in_lane = _on_road(scene, ped, lane_band)
    (kv, cv), = pick_looks(rng, 1, ("car", "van", "truck"))
    lv = SIZES[kv][0]
    v = rng.uniform(0.13, 0.17)
    xs = xj + 0.04 + lv / 2
    t_stop = grid(in_lane[0] + 0.2, fps)
    t_go = grid(in_lane[1] + 0.3, fps)
    if t_go > T - 1.5 or t_stop < 1.2:
        return None
    track = Track(0.0, xs + v * (t_stop - 1.0) + v * 0.5, y, vx=-v).cruise(t_stop - 1.0).brake(1.0).wait(t_go)
    track.accelerate(1.0, -v).cruise(T)
    scene.entities.append(_vehicle("v1", (kv, cv), track, "westbound"))
    scene.events += [
        Event("jaywalking", on_road[0], on_road[1], ["p0"], anomaly=True, detail={"x": xj}),
        Event("yield", t_stop, t_go, ["v1", "p0"], cause=0),
    ]
    return set()


def _sudden_braking(scene: Scene, rng: random.Random) -> set | None:
    T, fps = scene.duration, scene.fps
    (ka, ca), (kb, cb) = pick_looks(rng, 2, ("car", "van", "truck"))
    la, lb = SIZES[ka][0], SIZES[kb][0]
    y = LANES["eastbound"][0]
    v = rng.uniform(0.13, 0.17)
    t_b = grid(rng.uniform(3.0, 4.5), fps)
    x_b = rng.uniform(0.45, 0.65)  # where A is when it starts braking
    a = Track(0.0, x_b - v * t_b, y, vx=v).cruise(t_b).brake(0.5).wait(t_b + 1.5).accelerate(1.0, v).cruise(T)
    d_b = 0.8
    headway = 0.05 * v + v * d_b / 2 + 0.03
    xb = x_b - la / 2 - lb / 2 - headway
    t_b2 = grid(t_b + 0.3, fps)
    b = Track(0.0, xb - v * t_b, y, vx=v).cruise(t_b2).brake(d_b).wait(t_b + 2.0).accelerate(1.0, v).cruise(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kb, cb), b, "eastbound")]
    scene.events += [
        Event("sudden_braking", t_b, grid(t_b + 1.5, fps), ["v1"], anomaly=True),
        Event("brake", t_b2, grid(t_b + 2.0, fps), ["v2", "v1"], cause=0),
    ]
    return set()


def _normal(scene: Scene, rng: random.Random) -> set | None:
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    ped = _crosser("p0", rng.choice(("orange", "yellow", "pink", "teal")), cx, 0.0, grid(rng.uniform(1.0, 2.0), fps),
                   south=False)
    scene.entities.append(ped)
    y = LANES["eastbound"][0]
    in_lane = _on_road(scene, ped, (y - 0.09, y + 0.09))
    (ka, ca), = pick_looks(rng, 1, ("car", "van", "truck", "bus"))
    la = SIZES[ka][0]
    v = rng.uniform(0.13, 0.17)
    xs = cx - 0.05 - la / 2
    t_stop = grid(in_lane[0] + rng.uniform(-0.5, 0.3), fps)
    t_go = grid(in_lane[1] + 0.3, fps)
    if t_stop < 1.2 or t_go > T - 1.5:
        return None
    a = Track(0.0, xs - v * (t_stop - 1.0) - v * 0.5, y, vx=v).cruise(t_stop - 1.0).brake(1.0).wait(t_go)
    a.accelerate(1.0, v).cruise(T)
    scene.entities.append(_vehicle("v1", (ka, ca), a, "eastbound"))
    cross = _on_road(scene, ped)
    scene.events += [Event("crossing", cross[0], cross[1], ["p0"]),
                     Event("yield", t_stop, t_go, ["v1", "p0"], cause=0)]
    return set()


SCRIPTS: dict[str, Callable[[Scene, random.Random], set | None]] = {
    "collision": _collision, "stopped_vehicle": _stopped_vehicle, "wrong_way": _wrong_way,
    "jaywalking": _jaywalking, "sudden_braking": _sudden_braking, "normal": _normal,
}


# -- annotations ------------------------------------------------------------------------------------------------
def s(t: float) -> str:
    return f"{t:.1f} s"


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


EVENT_TEXT = {
    "crossing": "{0} crosses the road at the crosswalk",
    "yield": "{0} stops to let {1} cross",
    "collision": "{0} runs into the back of {1}",
    "stopped_vehicle": "{0} stops in the eastbound lane and stays there with its hazard lights on",
    "queue": "{0} has to stop behind {1}",
    "wrong_way": "{0} drives right to left in the eastbound lane, against the traffic",
    "jaywalking": "{0} crosses the road away from the crosswalk",
    "sudden_braking": "{0} brakes hard and stops for no visible reason",
    "brake": "{0} brakes hard behind {1}",
}


def describe(scene: Scene, event: Event) -> str:
    """One clause for an event, e.g. 'the white truck runs into the back of the red car'."""
    return EVENT_TEXT[event.kind].format(*(scene.entity(e).name for e in event.entities))


def timeline(scene: Scene) -> list[str]:
    return [f"At {s(e.start)}, {describe(scene, e)}." for e in sorted(scene.events, key=lambda e: (e.start, e.kind))]


def anomaly_of(scene: Scene) -> Event | None:
    return next((e for e in scene.events if e.anomaly), None)


def scene_sentence(scene: Scene) -> str:
    cx = scene.layout.crosswalk_x
    where = "near the centre" if 0.45 <= cx <= 0.55 else "left of centre" if cx < 0.45 else "right of centre"
    return (f"A fixed CCTV camera ({scene.layout.camera}) overlooks a two-lane road: a westbound lane (upper, "
            f"traffic moving right to left) and an eastbound lane (lower, left to right), with sidewalks on both "
            f"sides, buildings behind the far sidewalk and a crosswalk {where} of the view.")


def road_users(scene: Scene) -> str:
    vehicles = [e.name for e in scene.entities if e.kind != "pedestrian"]
    people = [e.name for e in scene.entities if e.kind == "pedestrian"]
    parts = [f"{len(vehicles)} vehicle{'s' * (len(vehicles) != 1)} ({', '.join(vehicles)})"] if vehicles else []
    if people:
        parts.append(f"{len(people)} pedestrian{'s' * (len(people) != 1)} ({', '.join(people)})")
    return "Road users: " + " and ".join(parts) + "."


def entity_story(scene: Scene, entity_id: str) -> str:
    """What one road user does, in order, with times."""
    entity = scene.entity(entity_id)
    span = scene.visible_span(entity_id)
    clauses = []
    if entity.kind != "pedestrian" and span:
        side = "left" if entity.facing > 0 else "right"
        enter = "is already in view" if span[0] == 0 else f"enters from the {side} at {s(span[0])}"
        clauses.append(f"{enter} in the {entity.lane} lane")
    for event in sorted(scene.events, key=lambda e: e.start):
        if entity_id in event.entities:
            clauses.append(f"at {s(event.start)} {describe(scene, event).replace(entity.name + ' ', '', 1)}")
    if span and span[1] < scene.duration and entity.kind != "pedestrian":
        clauses.append(f"leaves the view at {s(span[1])}")
    return f"{cap(entity.name)} " + ", ".join(clauses) + "."


def causal_qa(scene: Scene, scenario: str) -> tuple[str, str]:
    events = scene.events
    n = {e.id: e.name for e in scene.entities}
    if scenario == "collision":
        stop, crash = events[1], events[2]
        return (f"What caused the collision between {n['v2']} and {n['v1']}?",
                f"{cap(n['v1'])} stopped at {s(stop.start)} to let {n['p0']} cross at the crosswalk, and "
                f"{n['v2']}, following too fast and too close, did not slow down and hit it at {s(crash.start)}.")
    if scenario == "stopped_vehicle":
        stop, queue = events
        return (f"Why does {n['v2']} stop at {s(queue.start)}?",
                f"Because {n['v1']} had stopped in the eastbound lane ahead of it at {s(stop.start)} and "
                f"blocks the lane.")
    if scenario == "wrong_way":
        return (f"Why is the movement of {n['v1']} dangerous?",
                f"Because {n['v1']} drives right to left in the eastbound lane, where traffic moves left to right, "
                f"so it travels head-on against the flow of traffic.")
    if scenario == "jaywalking":
        jay, stop = events
        return (f"Why does {n['v1']} stop at {s(stop.start)}?",
                f"Because {n['p0']} was crossing the road in front of it, away from the crosswalk, "
                f"from {s(jay.start)}.")
    if scenario == "sudden_braking":
        brake, follow = events
        return (f"Why does {n['v2']} brake hard at {s(follow.start)}?",
                f"Because {n['v1']} ahead of it braked suddenly at {s(brake.start)} for no visible reason.")
    stop = events[1]
    return (f"Why does {n['v1']} stop at {s(stop.start)}?",
            f"To let {n['p0']} cross the road at the crosswalk.")


class Annotator:
    """Writes the twelve items of one clip, with reasoning traces, in the released item format."""

    def __init__(self, scene: Scene, scenario: str, rng: random.Random) -> None:
        self.scene, self.scenario, self.rng = scene, scenario, rng
        self.anomaly = anomaly_of(scene)
        self.items: dict[str, list[dict]] = {name: [] for name in TASK_TYPES}

    def add(self, task: str, question: str | None, answer: str, evidence: list[str], **fields) -> None:
        k = len(self.items[task])
        steps = [f"The camera shows a two-lane road seen from {self.scene.layout.camera}."] + evidence
        if self.anomaly:
            steps.append(f"This is {LABELS[self.scenario]}: {WHY[self.scenario]}.")
        else:
            steps.append("Every road user follows the rules, so there is no anomaly.")
        item = {"id": f"{self.scene.video_id}_{task}_{k}", "video_id": self.scene.video_id}
        if question is not None:
            item["question"] = question
        item.update(fields)
        item.update({"answer": answer, "reasoning": " ".join(steps + [f"Answer: {answer}"]), "source": SOURCE,
                     "scenario": self.scenario})
        self.items[task].append(item)

    def choice(self, task: str, question: str, correct: str, distractors: list[str], evidence: list[str],
               shuffle: bool = True) -> None:
        options = [correct] + [d for d in distractors if d != correct][:3]
        if shuffle:
            self.rng.shuffle(options)
        letter = LETTERS[options.index(correct)]
        self.add(task, question, letter, evidence, options=[f"{LETTERS[i]}. {o}" for i, o in enumerate(options)])

    def yes_no(self, question: str, yes: bool, evidence: list[str]) -> None:
        self.add("bcq", question, "A" if yes else "B", evidence, options=["A. Yes", "B. No"])

    def write_all(self) -> dict[str, list[dict]]:
        scene, scenario, anomaly, rng = self.scene, self.scenario, self.anomaly, self.rng
        lines = timeline(scene)
        main = anomaly or scene.events[-1]
        actor = main.entities[0]
        # bcq: is there an anomaly; a yes/no probe about one anomaly type
        self.yes_no("Is there a traffic anomaly in this video?", anomaly is not None, lines)
        askable = [k for k in PROBES if k != scenario and k not in UNCLEAR[scenario]]
        probe = scenario if anomaly and rng.random() < 0.5 else rng.choice(askable)
        yes = probe == scenario
        self.yes_no(PROBES[probe], yes, lines)
        what = f"{describe(scene, anomaly)} from {s(anomaly.start)}" if anomaly else "traffic flows normally"
        self.add("bcq_openended", PROBES[probe], f"{'Yes' if yes else 'No'}. {cap(what)}.", lines)
        # mcq: the anomaly type; the road user involved
        others = [LABELS[k] for k in SCENARIOS if k != scenario and k not in UNCLEAR[scenario]]
        rng.shuffle(others)
        self.choice("mcq", "What type of traffic anomaly occurs in this video?", cap(LABELS[scenario]),
                    [cap(o) for o in others], lines)
        involved = {e for event in scene.events for e in event.entities}
        names = [e.name for e in scene.entities if e.id not in involved]
        rng.shuffle(names)
        who_q = (f"Which road user is involved in {LABELS[scenario]}?" if anomaly
                 else "Which road user stops to let a pedestrian cross?")
        self.choice("mcq", who_q, cap(scene.entity(actor).name), [cap(x) for x in names + ["the grey bicycle",
                    "the green tractor", "the police car"]], [entity_story(scene, actor)])
        self.add("mcq_openended", "What type of traffic anomaly occurs in this video?",
                 f"{cap(LABELS[scenario])}: {what}.", lines)
        # open question, causal link
        self.add("open_qa", f"What happens to {scene.entity(actor).name} in this video?",
                 entity_story(scene, actor), [entity_story(scene, actor)])
        question, answer = causal_qa(scene, scenario)
        self.add("causal_linkage", question, answer, lines)
        # descriptions
        outcome = f"An anomaly occurs: {what}." if anomaly else "Traffic flows normally."
        self.add("scene_description", None, f"{scene_sentence(scene)} {road_users(scene)} {outcome}",
                 [scene_sentence(scene)])
        self.add("temporal_description", None, " ".join(lines), lines)
        # localization of the anomaly (or of the main normal event)
        if anomaly:
            question = (f"When does {LABELS[scenario]} happen in this video? "
                        "Give the start and end times in seconds.")
        else:
            question = "When does the pedestrian cross the road? Give the start and end times in seconds."
            main = scene.events[0]
        span = f"{main.start:.1f}-{main.end:.1f}"
        self.add("temporal_localization", question, span, [f"From {s(main.start)} to {s(main.end)}, "
                 f"{describe(scene, main)}."], timestamps=[main.start, main.end])
        self.add("object_description", f"Describe {scene.entity(actor).name}.", entity_story(scene, actor),
                 [entity_story(scene, actor)])
        return self.items


# -- the whole release -----------------------------------------------------------------------------------------
def generate(out: Path, seed: int = 0, n_videos: int = 6, duration: float = 10.0, fps: int = 10,
             size: tuple[int, int] = (160, 96), test_videos: int = 2,
             progress: Callable[[int, int], None] | None = None) -> GenerateReport:
    """Render ``n_videos`` clips (the last ``test_videos`` form the test split) and write the release layout."""
    if n_videos < 1 or not 0 <= test_videos <= n_videos:
        raise ValueError("need n_videos >= 1 and 0 <= test_videos <= n_videos")
    if duration < 6:
        raise ValueError("TAR clips need duration >= 6 s (the scenarios take that long to unfold)")
    if size[0] % 2 or size[1] % 2:
        raise ValueError(f"size {size}: width and height must be even (H.264 4:2:0)")
    start = time.perf_counter()
    out = Path(out)
    order = list(SCENARIOS)
    random.Random(f"tar:{seed}").shuffle(order)
    splits: dict[str, dict[str, list[dict]]] = {}
    sums, frames = [], 0
    for i in range(n_videos):
        rng = random.Random(f"tar:{seed}:{i}")
        video_id = f"tar_gen_{i:03d}"
        scenario = order[i % len(order)]
        scene = script(rng, video_id, scenario, duration, fps, size)
        path = render.write_mp4(scene, out / "videos" / f"{video_id}.mp4")
        sums.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  videos/{path.name}")
        (out / "scenes").mkdir(parents=True, exist_ok=True)
        (out / "scenes" / f"{video_id}.json").write_text(json.dumps(scene.to_dict(), indent=1) + "\n")
        split = "test" if i >= n_videos - test_videos else "train"
        for task, items in Annotator(scene, scenario, rng).write_all().items():
            splits.setdefault(split, {}).setdefault(task, []).extend(items)
        frames += scene.n_frames
        if progress:
            progress(i + 1, n_videos)
    n_items = 0
    for split, tasks in splits.items():
        for task, items in tasks.items():
            target = out / "annotations" / split / f"{task}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({"items": items}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            n_items += len(items)
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return GenerateReport(out, n_videos, n_items, n_videos * duration, frames, time.perf_counter() - start)
