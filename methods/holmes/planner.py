"""HOLMES's planners, by name: what reads a question into the subtask, the entities and the videos of its plan.

    p = planner("lm")                                   # or "rules", "reader"
    plan(question, options, n_videos, None, p)          # slots.plan reads the question through it

- ``rules``: the release's subtask label, else the generator's own words (:func:`.slots.subtask_of`), and
  entities written as the generator writes them ("the purple car"); no model. :func:`planner` returns None.
- ``reader``: :class:`~.reading.Reader`: colour words through colour lexicons, vehicle nouns and the subtask
  through MiniLM embeddings.
- ``lm``: :class:`LMPlanner`: a language model through FrameSelect's answering backends (``lm``: by default
  the embedded SmolLM2-135M-Instruct) is shown one worked example per subtask, in the generator's phrasing,
  then the question, and writes its plan as ``Task:``, ``Entities:`` and ``Video:`` lines. The reply is parsed
  into the plan's fields: the task must be one of the planned subtasks; an entity must be a colour word
  (mapped to the palette by the reader's colour lexicons) and a vehicle type; the video a number, an ordinal
  or "all". A field the reply does not give in that form is taken from a fallback planner (the reader) and
  the reason is counted in :attr:`LMPlanner.fallbacks`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from neurips26.corpora.video.scene import VEHICLES

from neurips26.errors import UserError

from .slots import PLANS, Entity, entities, subtask_of, videos_named

PLANNERS = ("rules", "reader", "lm")
EXAMPLES = (  # (question, task, entities, video): the generator's phrasing of every subtask, other entities
    ("In Video 2, which way does the red bus travel?", "travel direction", "red bus", "2"),
    ("Which video shows the most vehicles?", "vehicle count", "none", "all"),
    ("When does the blue van first appear?", "first appearance", "blue van", "all"),
    ("Which video shows the most pedestrians?", "pedestrian count", "none", "all"),
    ("In which video does the green truck drive fastest?", "recurring vehicle speed", "green truck", "all"),
    ("In which video does a vehicle stop on the road with its hazard lights on?", "stop event", "none", "all"),
    ("In which videos does the white motorcycle appear?", "appearance set", "white motorcycle", "all"),
    ("In how many of the 3 videos does the black car appear?", "appearance count", "black car", "all"),
    ("The videos were recorded one after another. Which is seen first: the silver van or the brown bus?",
     "entity order", "silver van, brown bus", "all"),
    ("Does the yellow truck travel in the same direction in every video it appears in?", "direction consistency",
     "yellow truck", "all"),
)
HEADER = ("Write the plan of each question about traffic videos. Task is one of: " + ", ".join(PLANS) + ". "
          "Entities are the road users the question names, each as a colour and a vehicle (car, van, truck, bus or "
          "motorcycle), or none. Video is the number of the one video the question asks about, or all.\n\n")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def prompt(question: str) -> str:
    """The few-shot prompt for one question; the model continues after ``Task:``."""
    shots = "".join(f"Question: {q}\nTask: {t}\nEntities: {e}\nVideo: {v}\n\n" for q, t, e, v in EXAMPLES)
    return f"{HEADER}{shots}Question: {' '.join(question.split())}\nTask:"


@dataclass
class Reading:
    """A reply parsed into plan fields; None where the reply did not give the field in a parseable form."""

    reply: str
    subtask: str | None = None
    entities: list[Entity] | None = None
    video: str | None = None  # the raw Video field ("all", "2", "the second")
    reasons: list[str] = field(default_factory=list)  # why each missing field is missing


def parse_entity(text: str) -> Entity | None:
    """'teal car', 'the crimson lorries' -> Entity when one word is a colour name and one a vehicle type."""
    from .reading import colour_names  # lazy: matplotlib's colour lexicons

    names = colour_names()
    words = re.findall(r"[a-z]+", text.lower())
    colour = next((names[w] for w in words if w in names), None)
    kind = next((k for w in words for k in VEHICLES if w in (k, k + "s", k + "es")), None)
    return Entity(colour[0], kind, colour[1:]) if colour and kind else None


def parse(reply: str) -> Reading:
    """The reply (what follows ``Task:``) parsed into :class:`Reading` fields."""
    found = {k.lower(): v.strip() for k, v in re.findall(r"^(Task|Entities|Video):[ \t]*(.*)$", "Task:" + reply,
                                                           re.MULTILINE | re.IGNORECASE)}
    out = Reading(reply)
    task = re.sub(r"[^a-z ]", "", found.get("task", "").lower()).strip()
    if task in PLANS:
        out.subtask = task
    else:
        out.reasons.append("task missing" if not task else "task not a planned subtask")
    if "entities" not in found:
        out.reasons.append("entities missing")
    elif found["entities"].strip(" .").lower() in ("none", "no", ""):
        out.entities = []
    else:
        items = [parse_entity(x) for x in re.split(r",|\band\b|\bor\b", found["entities"]) if x.strip(" .")]
        if items and all(items):
            out.entities = list(dict.fromkeys(items))
        else:
            out.reasons.append("entity not a colour and a vehicle type")
    out.video = found.get("video")
    return out


def video_field(text: str | None, n_videos: int) -> tuple[list[int] | None, str | None]:
    """(0-based videos, None) from a Video field, or (None, the reason it cannot be read)."""
    if text is None:
        return None, "video missing"
    words = re.findall(r"[a-z]+|\d+", text.lower())
    if "all" in words or "every" in words or "none" in words:
        return list(range(n_videos)), None
    picks = sorted({int(w) - 1 for w in words if w.isdecimal()} | {ORDINALS.index(w) for w in words if w in ORDINALS})
    if picks and all(0 <= k < n_videos for k in picks):
        return picks, None
    return None, "video not a video of the question"


@dataclass
class LMPlanner:
    """A language model writes the plan (see the module docstring); unparsable fields come from ``fallback``."""

    answerer: Any  # a FrameSelect answering backend: generate(text, images) -> str
    fallback: Any = None  # a Reader (or None: the generator's words)
    fallbacks: Counter = field(default_factory=Counter)  # reason -> questions whose field fell back
    questions: int = 0
    _read: dict[str, Reading] = field(default_factory=dict)
    _videos: dict[tuple[str, int], list[int]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.answerer.name} writes the plan"

    def read(self, question: str) -> Reading:
        """The model's plan for ``question`` (asked once per question; fallbacks counted then)."""
        if question not in self._read:
            reading = parse(self.answerer.generate(prompt(question), []))
            self.questions += 1
            self.fallbacks.update(reading.reasons)
            self._read[question] = reading
        return self._read[question]

    def subtask(self, question: str, options: list[str] | None = None) -> str | None:
        got = self.read(question).subtask
        if got is not None:
            return got
        return self.fallback.subtask(question, options) if self.fallback is not None else subtask_of(question)

    def entities(self, question: str) -> tuple[list[Entity], list[tuple[int, int]]]:
        got = self.read(question).entities
        if got is not None:
            return got, []
        return self.fallback.entities(question) if self.fallback is not None else (entities(question), [])

    def videos(self, question: str, n_videos: int) -> list[int]:
        key = (question, n_videos)
        if key not in self._videos:
            picks, reason = video_field(self.read(question).video, n_videos)
            if picks is None:
                self.fallbacks[reason] += 1
                picks = self.fallback.videos(question, n_videos) if self.fallback is not None else \
                    videos_named(question, n_videos)
            self._videos[key] = picks
        return self._videos[key]

    def summary(self) -> str:
        """'N questions; fallbacks: reason xK, ...' for the run's output."""
        reasons = ", ".join(f"{r} x{n}" for r, n in self.fallbacks.most_common()) or "none"
        return f"{self.questions} questions read by the model; fields taken from the fallback: {reasons}"


def planner(name: str, model: str | None = None) -> Any:
    """The planner called ``name`` (None for ``rules``); ``model``: the ``lm`` planner's answerer spec."""
    if name not in PLANNERS:
        raise UserError(f"unknown HOLMES planner {name!r}; known: {', '.join(PLANNERS)}")
    if name == "rules":
        return None
    from .reading import Reader  # lazy: MiniLM

    if name == "reader":
        return Reader()
    from neurips26.methods.frameselect.answerers import answerer  # lazy: transformers

    return LMPlanner(answerer(model or "lm", max_new_tokens=40, stop="\n\n"), Reader())
