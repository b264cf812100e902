"""The slot planner: which evidence, in which video, tells a question's options apart.

A :class:`Slot` asks for one piece of evidence: whether (and when, which way, how fast) an
entity appears in a video (``presence``), how many road users a video shows (``count``), or
whether a vehicle stops in a video (``stop``). The planner reads the question (its subtask
when the release labels it, else its wording: the generator's own words, or any words through a
:class:`~.reading.Reader`), names the entities ("the purple car") and
plans only the slots whose outcome changes which option is right: a question about Video 2
plans nothing in Video 1. Each slot carries a *risk*: how badly a miss would mislead the
answer. A slot whose absence decides the answer (``presence`` for re-identification and
counting, every ``count``) is ``high``; a slot that only refines something already found
(direction, speed, time of an entity seen) is ``low``. Search policies are chosen by risk
(:mod:`.search`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from neurips26.corpora.video.scene import COLOURS, VEHICLES

ENTITY = re.compile(r"\bthe (" + "|".join(COLOURS) + r") (" + "|".join(VEHICLES) + r")\b", re.IGNORECASE)
NEEDS = ("presence", "first", "direction", "speed", "count_vehicles", "count_pedestrians", "stop")
# subtask -> (what each slot must establish, risk of a miss)
PLANS: dict[str, tuple[tuple[str, ...], str]] = {
    "vehicle count": (("count_vehicles",), "high"),
    "pedestrian count": (("count_pedestrians",), "high"),
    "recurring vehicle speed": (("presence", "speed"), "low"),
    "stop event": (("stop",), "high"),
    "appearance set": (("presence",), "high"),
    "first appearance": (("presence", "first"), "high"),
    "travel direction": (("presence", "direction"), "low"),
    "appearance count": (("presence",), "high"),
    "entity order": (("presence", "first"), "high"),
    "direction consistency": (("presence", "direction"), "high"),
}
WORDING = (("most vehicles", "vehicle count"), ("most pedestrians", "pedestrian count"), ("fastest",
           "recurring vehicle speed"), ("hazard", "stop event"), ("in which videos", "appearance set"),
           ("first appear", "first appearance"), ("which way", "travel direction"), ("in how many",
           "appearance count"), ("seen first", "entity order"), ("same direction", "direction consistency"))


@dataclass(frozen=True)
class Entity:
    """An entity the question names: 'the purple car'."""

    colour: str
    kind: str
    alternatives: tuple[str, ...] = field(default=(), compare=False)  # colours a free-form word may also mean

    @property
    def name(self) -> str:
        return f"the {self.colour} {self.kind}"


@dataclass
class Slot:
    """One piece of evidence to find: ``needs`` of ``entity`` (None: any road user) in ``video``."""

    id: str
    video: int
    needs: tuple[str, ...]
    risk: str  # "high" or "low"
    entity: Entity | None = None
    discriminates: list[str] = field(default_factory=list)  # option letters whose truth depends on this slot

    @property
    def query(self) -> str:
        """The slot as a retrieval query (FrameSelect's query-aware policies read it)."""
        if self.entity is not None:
            return self.entity.name
        return "hazard" if "stop" in self.needs else "vehicles and pedestrians"


@dataclass
class Plan:
    """The slots of one question and the subtask the readout answers."""

    subtask: str
    entities: list[Entity]
    slots: list[Slot]


def entities(question: str) -> list[Entity]:
    """The entities a question names, in order, each once."""
    out: list[Entity] = []
    for colour, kind in ENTITY.findall(question):
        e = Entity(colour.lower(), kind.lower())
        if e not in out:
            out.append(e)
    return out


def subtask_of(question: str, subtask: str | None = None) -> str | None:
    """The release's subtask label when it is one HOLMES plans for, else the one the wording names."""
    if subtask in PLANS:
        return subtask
    text = question.lower()
    return next((name for cue, name in WORDING if cue in text), None)


def videos_named(question: str, n_videos: int) -> list[int]:
    """Positions of the videos the question restricts itself to ('In Video 2, ...'); all when none."""
    named = sorted({int(k) - 1 for k in re.findall(r"\bVideo (\d+)\b", question) if 0 < int(k) <= n_videos})
    return named or list(range(n_videos))


def discriminating(options: list[str], video: int, entity: Entity | None) -> list[str]:
    """Letters of the options whose truth depends on the slot's video: those naming it, or naming no video at all
    ('All 3 videos', 'None of them'); every option when none names a video."""
    letters = "ABCDEFGH"
    bodies = [re.sub(r"^[A-H]\. ", "", o) for o in options]
    if not any(re.search(r"\bVideos?\b", o) for o in bodies):
        return list(letters[: len(options)])
    specific = [re.sub(r"\bAll \d+ videos\b|\bof the \d+ videos\b", "", o) for o in bodies]
    return [letters[k] for k, o in enumerate(specific) if re.search(rf"\b{video + 1}\b", o) or not re.search(r"\d", o)]


def plan(question: str, options: list[str], n_videos: int, subtask: str | None = None, reader: Any = None) -> Plan:
    """The evidence slots of a question over ``n_videos`` videos (see the module docstring). With a ``reader``
    (:class:`~.reading.Reader`) the question's words are read onto the perception vocabulary and its subtask from
    its wording by meaning (a release's label still wins); without, the generator's own words are matched."""
    if reader is not None:
        kind = subtask if subtask in PLANS else reader.subtask(question, options)
        named = reader.entities(question)[0]
    else:
        kind = subtask_of(question, subtask)
        named = entities(question)
    if kind is None:  # an unknown question: look for every named entity everywhere
        kind, needs, risk = "unknown", ("presence",), "high"
    else:
        needs, risk = PLANS[kind]
    slots = []
    if kind != "travel direction":
        videos = list(range(n_videos))
    else:
        videos = reader.videos(question, n_videos) if reader is not None else videos_named(question, n_videos)
    for v in videos:
        for e in (named or [None]):
            if "presence" in needs and e is None:
                continue
            sid = f"v{v + 1}:{e.name if e else '-'}:{'+'.join(needs)}"
            slots.append(Slot(sid, v, needs, risk, e, discriminating(options, v, e)))
    return Plan(kind, named, slots)
