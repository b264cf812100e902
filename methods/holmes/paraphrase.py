"""Held-out rephrasings of generated CLoVR questions (``paraphrases.json``): the planner's test of reading.

    for q2 in paraphrases(question):  # the same options and answer, other words, no subtask label
        ...

Each generated question is rewritten with each of its subtask's templates; colour and vehicle words become
synonyms the generator never uses (cycling through them, and through entity-phrase and video-reference
structures, by a counter), so a planner that only knows the generator's words cannot read them.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from neurips26.methods.frameselect.benchmarks import Question

from .slots import ENTITY

PARAPHRASES = Path(__file__).with_name("paraphrases.json")


@cache
def table() -> dict[str, Any]:
    """The held-out paraphrase table (templates per subtask, synonyms, phrase structures)."""
    return json.loads(PARAPHRASES.read_text())


def _entity(colour: str, kind: str, k: int) -> str:
    t = table()
    words = t["colours"][colour], t["vehicles"][kind]
    structure = t["entity_phrases"][k % len(t["entity_phrases"])]
    return structure.format(colour=words[0][k % len(words[0])], vehicle=words[1][(k // 2) % len(words[1])])


def _video(v: int, k: int) -> str:
    t = table()
    return t["video_phrases"][k % len(t["video_phrases"])].format(k=v, ordinal=t["ordinals"][v - 1])


def paraphrases(q: Question, start: int = 0) -> list[Question]:
    """Every template of the question's subtask filled with its entities and video (same options and answer);
    ``start`` offsets the choice of synonyms and structures. Subtask labels are dropped."""
    subtask = q.row.get("subtask")
    templates = table()["templates"].get(subtask)
    if not templates:
        return []
    named = ENTITY.findall(q.query)
    video = re.search(r"\bVideo (\d+)\b", q.query)
    count = re.search(r"\bof the (\d+) videos\b", q.query)
    out = []
    for t, template in enumerate(templates):
        k = start + t
        ents = [_entity(c.lower(), v.lower(), k + 3 * i) for i, (c, v) in enumerate(named)]
        text = template.format(e=ents[0] if ents else "", e2=ents[1] if len(ents) > 1 else "",
                               video=_video(int(video.group(1)), k) if video else "",
                               n=count.group(1) if count else len(q.video_ids))
        text = text[:1].upper() + text[1:]
        out.append(replace(q, id=f"{q.id}_p{t}", query=text, row={**q.row, "subtask": None, "question": text}))
    return out
