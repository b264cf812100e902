"""Binding verification, the constraint audit and the hard graph-readout gates.

- *Binding verification*: a binding of 'the purple car' to a track in a video counts only when
  the type most of the track's sightings report agrees with the name (or is within 0.02 frame widths
  of its length: a car read as a van from a blurred thumbnail); or, when no sighting could
  tell the type, the track was seen in two frames; or, seen in three frames, one of them says so
  (the search looks again around a sighting until one of these holds or its budget is spent).
- *Constraint audit*: what the scripts guarantee and an answer must respect (an entity keeps one
  direction within a video; at most one video has a vehicle at rest; a first sighting lies inside
  its video). A violated constraint closes the gate of every answer that reads the binding (or,
  for the one-stop rule, the stop question).
- *Colour alternatives*: a colour word read from free text may lie between two palette colours ('amber');
  the entity is read as the first of its colours with a verified binding of its type anywhere.
- *Gates*: an answer passes the gates only when every slot it reads is settled: the entity was
  found and verified, or its search's coverage certificate reaches ``gate`` confidence that it is
  absent. When a gate closes, the answer is still read out without gates (unseen means absent),
  and the record says which gate closed: accuracy over all questions and over those answered
  through open gates are both reported. ``gate=None`` reads the graph without gates: the
  uniform-frames baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from neurips26.corpora.video.scene import SIZES

from .graph import Binding, BindingGraph
from .search import Certificate
from .slots import Entity, Plan

LETTERS = "ABCDEFGH"
WORDS = ["None", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight"]


class Closed(Exception):
    """A gate closed: the readout would read a slot that is not settled."""


@dataclass
class Readout:
    """The answer text (None: abstained), why, and the audit's findings."""

    text: str | None
    reason: str = "open"
    audit: list[str] = field(default_factory=list)


def verified(b: Binding | None, entity: Entity) -> bool:
    """Whether the binding of ``entity`` passes verification (see the module docstring)."""
    if b is None:
        return False
    if b.kind is None:
        return len(b.times) >= 2
    near = b.kind in SIZES and entity.kind in SIZES and abs(SIZES[b.kind][0] - SIZES[entity.kind][0]) <= 0.02
    return b.kind == entity.kind or near or (len(b.times) >= 3 and entity.kind in b.kinds)


def resolve(entity: Entity, graph: BindingGraph) -> Entity:
    """The entity as seen: its colour, or else the first of its alternative colours ('amber': orange or yellow)
    with a verified binding of its type in some video (the question's colour word decides when both are seen)."""
    for colour in (entity.colour, *entity.alternatives):
        seen = Entity(colour, entity.kind)
        if any(verified(graph.find(v, colour, entity.kind), seen) for v in range(graph.n_videos)):
            return seen
    return entity


def audit(graph: BindingGraph, durations: list[float]) -> dict[tuple, str]:
    """Constraint violations in the graph, keyed by the binding they concern (``("stop",)`` for the one-stop rule)."""
    out: dict[tuple, str] = {}
    for key, b in graph.bindings.items():
        v, colour, walker = key
        signs = {1 if s > 0 else -1 for s in b.velocities() if abs(s) > 0.01}
        if not walker and len(signs) > 1:
            out[key] = f"the {colour} vehicle in video {v + 1} moves both ways"
        if b.first > durations[v] + 1e-6:
            out[key] = f"the {colour} road user in video {v + 1} is seen after the video ends"
    stops = {v for v in range(graph.n_videos) if any(b.stopped for b in graph.vehicles(v))}
    if len(stops) > 1:
        out[("stop",)] = f"vehicles at rest in {len(stops)} videos (the scripts have one)"
    return out


class Gates:
    """Slot lookups that raise :class:`Closed` when the slot is not settled."""

    def __init__(self, graph: BindingGraph, certificates: dict[str, Certificate], gate: float | None,
                 violations: dict[tuple, str], entities: list[Entity] = ()) -> None:
        self.graph, self.certs, self.gate, self.violations = graph, certificates, gate, violations
        self.seen_as = {e: resolve(e, graph) for e in entities}

    def audited(self, *keys: tuple) -> None:
        for key in keys:
            if self.gate is not None and key in self.violations:
                raise Closed(f"constraint audit: {self.violations[key]}")

    def settled(self, video: int, what: str) -> bool:
        if self.gate is None:
            return True
        certs = [c for sid, c in self.certs.items() if sid.startswith(f"v{video + 1}:") and what in sid]
        return any(c.confidence >= self.gate for c in certs)

    def binding(self, entity: Entity, video: int) -> Binding | None:
        """The verified binding, None when certified absent; Closed when neither."""
        seen = self.seen_as.get(entity, entity)
        b = self.graph.find(video, seen.colour, seen.kind)
        if verified(b, seen):
            self.audited((video, seen.colour, False))
            return b
        if self.settled(video, entity.name):
            return None
        raise Closed(f"{entity.name} in video {video + 1}: not found and not certified absent")

    def count(self, video: int, walkers: bool) -> int:
        if not self.settled(video, "count"):
            raise Closed(f"count in video {video + 1}: coverage below the gate")
        self.audited(*[k for k in self.violations if k[0] == video and k[2] == walkers])
        return self.graph.walkers_in_view[video] if walkers else len(self.graph.vehicles(video))


def _most(values: list[int | float]) -> str:
    best = max(values)
    winners = [v for v, x in enumerate(values) if x == best]
    return "They all show the same number" if len(winners) == len(values) else f"Video {winners[0] + 1}"


def _set_text(videos: list[int], n: int) -> str:
    if len(videos) == n:
        return f"All {n} videos"
    names = [str(v + 1) for v in videos]
    if len(names) < 2:
        return f"Video {names[0]} only" if names else "None of the videos"
    return f"Videos {', '.join(names[:-1])} and {names[-1]}"


def _direction(sign: int) -> str:
    return "left to right" if sign > 0 else "right to left"


def answer_text(plan: Plan, g: Gates, n: int) -> str:
    """The answer the graph gives to the plan's subtask (raises Closed at an unsettled slot)."""
    kind, ents = plan.subtask, plan.entities
    if kind in ("vehicle count", "pedestrian count"):
        return _most([g.count(v, kind == "pedestrian count") for v in range(n)])
    if kind == "stop event":
        g.audited(("stop",))
        for v in range(n):
            if any(b.stopped for b in g.graph.vehicles(v)):
                return f"Video {v + 1}"
        if all(g.settled(v, "stop") for v in range(n)):
            return "None of them"
        raise Closed("no vehicle at rest found and the search did not cover every video")
    e = ents[0] if ents else None
    if e is None:
        raise Closed("the question names no entity HOLMES can look for")
    videos = sorted({slot.video for slot in plan.slots})
    found = {v: b for v in videos if (b := g.binding(e, v)) is not None}
    if kind == "recurring vehicle speed":
        speeds = {v: b.speed for v, b in found.items() if b.speed is not None}
        if not speeds:
            raise Closed(f"{e.name}: never seen moving")
        return f"Video {max(speeds, key=speeds.get) + 1}"
    if kind == "appearance set":
        return _set_text(sorted(found), n)
    if kind == "appearance count":
        return WORDS[len(found)]
    if kind == "first appearance":
        if not found:
            raise Closed(f"{e.name}: not seen in any video")
        v = min(found, key=lambda k: (k, found[k].first))
        return f"Video {v + 1}, at about {found[v].first:.0f} s"
    if kind == "travel direction":
        v = videos[0]
        if v not in found:
            return f"It does not appear in Video {v + 1}"
        d = found[v].direction
        if d is None:
            return "It stands still the whole time"
        return _direction(d).capitalize()
    if kind == "direction consistency":
        signs = {b.direction for b in found.values() if b.direction is not None}
        if len(found) == 1:
            return "It appears in only one video"
        if not signs:
            raise Closed(f"{e.name}: never seen moving")
        return f"Yes, always {_direction(signs.pop())}" if len(signs) == 1 else "No, its direction changes"
    if kind == "entity order":
        firsts = {}
        for ent in ents[:2]:
            seen = {v: b for v in range(n) if (b := g.binding(ent, v)) is not None}
            if seen:
                v = min(seen, key=lambda k: (k, seen[k].first))
                firsts[ent] = (v, seen[v].first)
        if not firsts:
            return "Neither of them appears"
        order = sorted(firsts, key=firsts.get)
        if len(order) > 1 and firsts[order[0]] == firsts[order[1]]:
            return "They first appear at the same moment"
        name = g.seen_as.get(order[0], order[0]).name
        return name[:1].upper() + name[1:]
    raise Closed(f"no readout for subtask {kind!r}")


def match(text: str, options: list[str]) -> str | None:
    """The letter of the option that says ``text`` (the nearest time for 'Video k, at about T s')."""
    body = {LETTERS[k]: re.sub(r"^[A-H]\. ", "", o).strip() for k, o in enumerate(options)}
    for letter, value in body.items():
        if value.lower() == text.lower():
            return letter
    when = re.fullmatch(r"Video (\d+), at about (\d+) s", text)
    if when:
        near = [(abs(int(m.group(2)) - int(when.group(2))), letter) for letter, value in body.items()
                if (m := re.fullmatch(r"Video (\d+), at about (-?\d+) s", value)) and m.group(1) == when.group(1)]
        return min(near)[1] if near else None
    return None


def read(plan: Plan, graph: BindingGraph, certificates: dict[str, Certificate], options: list[str],
         durations: list[float], gate: float | None) -> tuple[str | None, Readout]:
    """(option letter or None, the readout): through the gates, else read without them (the reason says so)."""
    violations = audit(graph, durations)
    reason = "open" if gate is not None else "ungated"
    try:
        text = answer_text(plan, Gates(graph, certificates, gate, violations, plan.entities), graph.n_videos)
    except Closed as closed:
        reason = f"closed: {closed}"
        try:
            text = answer_text(plan, Gates(graph, certificates, None, violations, plan.entities), graph.n_videos)
        except Closed as again:
            return None, Readout(None, f"{reason}; no answer without gates either: {again}", list(violations.values()))
    letter = match(text, options)
    if letter is None:
        reason = f"{reason}; no option says {text!r}"
    return letter, Readout(text, reason, list(violations.values()))
