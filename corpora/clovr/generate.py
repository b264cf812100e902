"""Procedural CLoVR-Bench: sets of longer CCTV clips where the same vehicles recur, and cross-video questions.

A set is ``videos_per_set`` consecutive recordings from different cameras along
one road. Two distinctive "cast" vehicles recur across the set's videos (in
chosen videos, directions and speeds); every video also has its own background
vehicles and pedestrians, in numbers that differ between videos, and one video
has a vehicle that stops with its hazard lights on. Questions cover every
level of the taxonomy (:data:`~.taxonomy.GENERATED`); each answer and each
evidence span (video, start, end on the frame grid) follows from the scripts.

Output, the layout :mod:`.build` reads::

    OUT/annotations/test.json    {"items": [{"qid", "video_ids", "level", "task", "subtask", "question",
                                             "options", "answer", "evidence": [{"video_id", "start", "end"}]}]}
    OUT/videos/<video_id>.mp4
    OUT/SHA256SUMS
    OUT/scenes/<video_id>.json

Same seed and arguments, same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from neurips26.corpora.tar.generate import GenerateReport
from neurips26.corpora.video import render
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
SOURCE = "neurips26-generator"
LETTERS = "ABCD"
DIRECTION = {"eastbound": "left to right", "westbound": "right to left"}


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


# -- questions -----------------------------------------------------------------------------------------------
class Questions:
    """The questions of one set, each with options, answer letter and evidence spans."""

    def __init__(self, scenes: list[Scene], cast: list[Cast], stop_video: int, rng: random.Random,
                 set_index: int) -> None:
        self.scenes, self.cast, self.stop_video, self.rng = scenes, cast, stop_video, rng
        self.set_index = set_index
        self.ids = [s.video_id for s in scenes]
        self.items: list[dict] = []

    def video(self, v: int) -> str:
        return f"Video {v + 1}"

    def spans(self, v: int, entity_ids: list[str]) -> list[dict]:
        out = []
        for eid in entity_ids:
            span = self.scenes[v].visible_span(eid)
            if span:
                out.append({"video_id": self.ids[v], "start": span[0], "end": span[1]})
        return out

    def cast_spans(self, member: Cast) -> list[dict]:
        return [{"video_id": self.ids[a.video], "start": a.span[0], "end": a.span[1]} for a in member.appearances]

    def add(self, level: str, task: str, subtask: str, question: str, correct: str, distractors: list[str],
            evidence: list[dict], ordered: bool = False) -> None:
        """``ordered``: ``distractors`` is the whole option list (with ``correct``) in display order."""
        if ordered:
            options = distractors[:4]
        else:
            options = [correct] + [d for d in distractors if d != correct][:3]
            self.rng.shuffle(options)
        self.items.append({
            "qid": f"clovr_gen_s{self.set_index}_q{len(self.items):02d}", "video_ids": self.ids, "level": level,
            "task": task, "subtask": subtask, "question": question,
            "options": [f"{LETTERS[i]}. {o}" for i, o in enumerate(options)],
            "answer": LETTERS[options.index(correct)], "evidence": evidence, "source": SOURCE,
            "set": f"s{self.set_index}",
        })

    def videos_or(self, last: str) -> list[str]:
        """Video 1, Video 2, ... and a last option (four options for three videos)."""
        return [self.video(v) for v in range(len(self.scenes))][:3] + [last]

    def write_all(self) -> list[dict]:
        scenes, cast, rng = self.scenes, self.cast, self.rng
        n = len(scenes)
        vehicles = [[e.id for e in s.entities if e.kind != "pedestrian"] for s in scenes]
        people = [[e.id for e in s.entities if e.kind == "pedestrian"] for s in scenes]
        # Comparative Analysis
        for label, ids, subtask in (("vehicles", vehicles, "vehicle count"), ("pedestrians", people,
                                                                              "pedestrian count")):
            most = max(range(n), key=lambda v, ids=ids: len(ids[v]))
            self.add("Comparative Analysis", "Quantity Comparison", subtask, f"Which video shows the most {label}?",
                     self.video(most), self.videos_or("They all show the same number"),
                     [s for v in range(n) for s in self.spans(v, ids[v])], ordered=True)
        member = max(cast, key=lambda m: len(m.appearances))
        fastest = max(member.appearances, key=lambda a: a.speed)
        self.add("Comparative Analysis", "Speed Comparison", "recurring vehicle speed",
                 f"In which video does {member.name} drive fastest?", self.video(fastest.video),
                 self.videos_or("It drives at the same speed in every video"), self.cast_spans(member), ordered=True)
        stop = scenes[self.stop_video].events[0]
        self.add("Comparative Analysis", "Event Comparison", "stop event",
                 "In which video does a vehicle stop on the road with its hazard lights on?",
                 self.video(self.stop_video), self.videos_or("None of them"),
                 [{"video_id": self.ids[self.stop_video], "start": stop.start, "end": stop.end}], ordered=True)
        # Tracking and Retrieval
        for m in cast:
            shown = [a.video for a in m.appearances]
            sets = _video_sets(n)
            correct = _set_text(shown, n)
            others = [_set_text(s, n) for s in sets if s != shown]
            rng.shuffle(others)
            self.add("Tracking and Retrieval", "Re-identification", "appearance set",
                     f"In which videos does {m.name} appear?", correct, others, self.cast_spans(m))
        m = rng.choice(cast)
        first = m.first()
        correct = f"{self.video(first.video)}, at about {first.span[0]:.0f} s"
        distractors = [f"{self.video(a.video)}, at about {a.span[0]:.0f} s" for a in m.appearances if a is not first]
        for shift in (8, -8, 14, -14, 5, -5):
            t = first.span[0] + shift
            if 0 <= t <= scenes[0].duration - 1:
                distractors.append(f"{self.video(first.video)}, at about {t:.0f} s")
        self.add("Tracking and Retrieval", "Temporal Retrieval", "first appearance",
                 f"When does {m.name} first appear?", correct, distractors,
                 [{"video_id": self.ids[first.video], "start": first.span[0], "end": first.span[1]}])
        app = rng.choice(m.appearances)
        self.add("Tracking and Retrieval", "Attribute Tracking", "travel direction",
                 f"In {self.video(app.video)}, which way does {m.name} travel?", cap(DIRECTION[app.lane]),
                 [cap(DIRECTION[x]) for x in DIRECTION if x != app.lane]
                 + ["It stands still the whole time", f"It does not appear in {self.video(app.video)}"],
                 [{"video_id": self.ids[app.video], "start": app.span[0], "end": app.span[1]}])
        # Integrated Reasoning
        m = rng.choice(cast)
        words = ["None", "One", "Two", "Three", "Four", "Five", "Six"][: n + 1]
        self.add("Integrated Reasoning", "Cross-video Counting", "appearance count",
                 f"In how many of the {n} videos does {m.name} appear?", words[len(m.appearances)],
                 [w for w in words if w != words[len(m.appearances)]], self.cast_spans(m))
        a, b = cast
        fa, fb = a.first(), b.first()
        earlier = a if (fa.video, fa.span[0]) < (fb.video, fb.span[0]) else b
        self.add("Integrated Reasoning", "Temporal Ordering", "entity order",
                 f"The videos were recorded one after another. Which is seen first: {a.name} or {b.name}?",
                 cap(earlier.name), [cap(a.name), cap(b.name), "They first appear at the same moment",
                                     "Neither of them appears"],
                 [{"video_id": self.ids[f.video], "start": f.span[0], "end": f.span[1]} for f in (fa, fb)])
        m = rng.choice(cast)
        lanes = {app.lane for app in m.appearances}
        correct = (f"Yes, always {DIRECTION[next(iter(lanes))]}" if len(lanes) == 1 else "No, its direction changes")
        self.add("Integrated Reasoning", "Route Reasoning", "direction consistency",
                 f"Does {m.name} travel in the same direction in every video it appears in?", correct,
                 ["Yes, always left to right", "Yes, always right to left", "No, its direction changes",
                  "It appears in only one video"], self.cast_spans(m))
        return self.items


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _video_sets(n: int) -> list[list[int]]:
    """Every subset of at least two videos, as sorted lists."""
    return [[v for v in range(n) if mask >> v & 1] for mask in range(1, 2**n) if bin(mask).count("1") >= 2]


def _set_text(videos: list[int], n: int) -> str:
    if len(videos) == n:
        return f"All {n} videos"
    names = [f"{v + 1}" for v in videos]
    return f"Videos {', '.join(names[:-1])} and {names[-1]}"


def generate(out: Path, seed: int = 0, n_sets: int = 3, videos_per_set: int = 3, duration: float = 24.0,
             fps: int = 10, size: tuple[int, int] = (160, 96),
             progress: Callable[[int, int], None] | None = None) -> GenerateReport:
    """Render ``n_sets`` sets of ``videos_per_set`` clips and write the release layout (one test split)."""
    if n_sets < 1 or not 2 <= videos_per_set <= 8:
        raise ValueError("need n_sets >= 1 and 2 <= videos_per_set <= 8")
    if duration < 20:
        raise ValueError("CLoVR clips need duration >= 20 s (slow vehicles take 11 s to cross the view)")
    if size[0] % 2 or size[1] % 2:
        raise ValueError(f"size {size}: width and height must be even (H.264 4:2:0)")
    start = time.perf_counter()
    out = Path(out)
    items, sums, frames = [], [], 0
    total = n_sets * videos_per_set
    for s in range(n_sets):
        rng = random.Random(f"clovr:{seed}:{s}")
        scenes, cast, stop_video = script_set(rng, s, videos_per_set, duration, fps, size)
        for scene in scenes:
            path = render.write_mp4(scene, out / "videos" / f"{scene.video_id}.mp4")
            sums.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  videos/{path.name}")
            (out / "scenes").mkdir(parents=True, exist_ok=True)
            (out / "scenes" / f"{scene.video_id}.json").write_text(json.dumps(scene.to_dict(), indent=1) + "\n")
            frames += scene.n_frames
            if progress:
                progress(len(sums), total)
        items += Questions(scenes, cast, stop_video, rng, s).write_all()
    (out / "annotations").mkdir(parents=True, exist_ok=True)
    (out / "annotations" / "test.json").write_text(
        json.dumps({"items": items}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return GenerateReport(out, total, len(items), total * duration, frames, time.perf_counter() - start)
