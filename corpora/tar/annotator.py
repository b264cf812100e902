"""TAR annotations: the twelve items of one clip over the ten task types, with reasoning traces."""

from __future__ import annotations

import random

from neurips26.corpora.video.scene import Scene

from .narration import (
    LABELS,
    PROBES,
    WHY,
    anomaly_of,
    cap,
    causal_qa,
    describe,
    entity_story,
    road_users,
    s,
    scene_sentence,
    timeline,
)
from .scenarios import SCENARIOS
from .tasktypes import TASK_TYPES

# Probes whose honest answer would be unclear in a scenario (a vehicle stopping for a pedestrian is not "left
# standing", a hard stop before a collision is not "without reason"): never asked there.
UNCLEAR = {"collision": {"stopped_vehicle", "sudden_braking"}, "sudden_braking": {"stopped_vehicle"},
           "stopped_vehicle": {"sudden_braking"}, "jaywalking": {"sudden_braking", "stopped_vehicle"},
           "normal": {"stopped_vehicle", "sudden_braking"}, "wrong_way": set()}
SOURCE = "neurips26-generator"
LETTERS = "ABCDEFGH"


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
