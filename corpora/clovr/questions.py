"""CLoVR-Bench questions: every level of the taxonomy, each answer and evidence span following from the scripts."""

from __future__ import annotations

import random

from neurips26.corpora.video.scene import Scene

from .scenes import Cast

SOURCE = "neurips26-generator"
LETTERS = "ABCD"
DIRECTION = {"eastbound": "left to right", "westbound": "right to left"}


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
