"""The answerer the FrameSelect claims score CLoVR with: HOLMES's descriptor perception and ungated graph readout.

It answers a CLoVR question from exactly the frames it is given: each frame's thumbnail is read by
the descriptor perception (colour blobs against the video's median background: colour, type,
position, hazard lights), the sightings are bound into HOLMES's typed graph and the graph is read out
without gates (HOLMES's ``uniform`` readout). Nothing in it is fitted, and it never sees evidence
spans. A frame's sightings depend only on its video, time and the pool's thumbnails, so each is
computed once per run and shared by every selector and budget. Generated releases reuse video ids
(``clovr_gen_s0_v1`` in every seed), and the perception keeps each video's background by id, so each
release folder gets a perception of its own.

    answerer = ReadoutAnswerer()
    letter = answerer.answer(question, pool, indices)        # option letter, or None
    grade = answerer.grade(question, pool, indices)          # 1.0, 0.0, or None (no option)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.methods.frameselect.benchmarks import Question
from neurips26.methods.frameselect.core import Pool
from neurips26.methods.holmes.graph import BindingGraph
from neurips26.methods.holmes.perception import Descriptor
from neurips26.methods.holmes.readout import read
from neurips26.methods.holmes.slots import plan


class ReadoutAnswerer:
    """HOLMES's descriptor readout from given frames (see the module docstring); sightings cached per frame."""

    name = "holmes-descriptor-readout"

    def __init__(self) -> None:
        self._eyes: dict[str, Descriptor] = {}
        self._seen: dict[tuple, list[Any]] = {}
        self._plans: dict[tuple, Any] = {}

    def _sightings(self, question: Question, pool: Pool, i: int, entities: Any) -> list[Any]:
        v = int(pool.video_index[i])
        key = (question.video_paths[v], round(float(pool.times[i]), 6), pool.pixels.shape[1:],
               int((pool.video_index == v).sum()))
        if key not in self._seen:
            eye = self._eyes.setdefault(str(Path(question.video_paths[v]).resolve().parent), Descriptor())
            self._seen[key] = eye.observe(pool, i, entities)
        return self._seen[key]

    def answer(self, question: Question, pool: Pool, indices: Sequence[int]) -> str | None:
        """The option letter the readout gives from the candidates ``indices`` of ``pool`` (None: no option)."""
        key = (tuple(question.video_paths), question.id)  # ids repeat across generated releases
        if key not in self._plans:
            self._plans[key] = plan(question.query, question.options, len(question.video_ids),
                                    question.row.get("subtask"))
        p = self._plans[key]
        graph = BindingGraph(len(question.video_ids))
        for i in sorted({int(i) for i in indices}, key=lambda i: (pool.video_index[i], pool.times[i])):
            graph.add(int(pool.video_index[i]), float(pool.times[i]), self._sightings(question, pool, i, p.entities))
        letter, _ = read(p, graph, {}, question.options, [float(d) for d in pool.video_durations], None)
        return letter

    def grade(self, question: Question, pool: Pool, indices: Sequence[int] | np.ndarray) -> float | None:
        """1.0 when the readout's option is the gold answer, 0.0 when it is another, None when it gives none."""
        letter = self.answer(question, pool, indices)
        return None if letter is None else float(letter == question.answer)

    def accuracy(self, question: Question, pool: Pool, indices: Sequence[int] | np.ndarray) -> float:
        """The answer's score: 1 right, 0 wrong or no option."""
        return float(self.grade(question, pool, indices) or 0.0)
