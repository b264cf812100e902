"""The CLoVR answering methods: ``holmes`` and its ``uniform`` baseline (same perception, same readout).

    answer = CLOVR_METHODS.get("holmes")(question, pool, perception, budget=32)
    answer.letter, answer.certificates, answer.edges

``holmes`` plans slots, fills them high risk first, each with its share of what is left of the
budget (frames another slot already looked at are free), writes a certificate for every slot and
answers through the gates. ``uniform`` looks at ``budget`` evenly spaced frames of the pool and
reads the same graph without gates: the FrameSelect baseline with the same answerer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from neurips26.methods.frameselect.benchmarks import Question
from neurips26.methods.frameselect.core import Pool, select

from .core import CLOVR_METHODS
from .graph import Binding, BindingGraph
from .readout import read, verified
from .search import MIN_DWELL, Certificate, Searcher
from .slots import Entity, Plan, Slot, plan

GATE = 0.9  # certificate confidence that settles an absence


@dataclass
class Answer:
    """A method's answer to one question, with everything it rests on."""

    qid: str
    method: str
    letter: str | None
    text: str | None
    reason: str
    frames: int
    budget: int
    plan: Plan
    graph: BindingGraph
    certificates: list[Certificate] = field(default_factory=list)
    audit: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """A JSON-ready row: the answer, the slots, the certificates and the graph's edges."""
        return {"qid": self.qid, "method": self.method, "answer": self.letter, "answer_text": self.text,
                "gate": self.reason, "frames": self.frames, "budget": self.budget, "subtask": self.plan.subtask,
                "slots": [s.id for s in self.plan.slots], "certificates": [c.to_dict() for c in self.certificates],
                "edges": [list(e) for e in self.graph.edges()], "audit": self.audit}


def durations(pool: Pool) -> list[float]:
    if pool.video_durations:
        return [float(d) for d in pool.video_durations]
    return [float(pool.times[pool.video_index == v].max()) for v in range(len(pool.video_ids))]


def sighting(graph: BindingGraph, video: int, e: Entity) -> Binding | None:
    """The track of ``e`` in ``video`` under its colour, else under the first of its alternative colours seen."""
    return next((b for c in (e.colour, *e.alternatives) if (b := graph.find(video, c, e.kind)) is not None), None)


def fill(s: Searcher, slot: Slot, share: int) -> str:
    """Search for one slot within ``share`` new frames; returns the policy used."""
    s.budget, cap = s.used + min(share, s.left()), s.budget
    v, e, graph = slot.video, slot.entity, s.graph
    scan = math.ceil(s.duration(v) / (0.9 * MIN_DWELL))
    try:
        if e is None:
            s.scan(v, 2 * scan if any(n.startswith("count") for n in slot.needs) else scan)
            if "stop" in slot.needs and not any(b.stopped for b in graph.vehicles(v)):
                for b in graph.vehicles(v):
                    if len(b.times) == 1 and b.xs[0] is not None and 0.1 < b.xs[0] < 0.9:
                        s.local(v, b.times[0], 0.5)
            return "scan"
        found = lambda: graph.find(v, e.colour, e.kind) is not None  # noqa: E731  (alternatives: scan on)
        policy = "scan"
        if slot.risk == "low":
            s.relevance(slot, 3, until=found)
            policy = "relevance+scan"
        s.scan(v, scan, until=found)
        b = sighting(graph, v, e)
        for offset in (1.0, -1.0, 2.0, -2.0):  # binding verification: look again around the sighting
            if b is not None and not verified(b, e):
                s.local(v, b.times[0], offset)
                policy += "+verify" if "verify" not in policy else ""
        if b is not None and "first" in slot.needs:
            s.refine(v, b.first, lambda t: any(abs(t - x) < 1e-6 for x in b.times))
            policy += "+refine"
        if b is not None and ({"direction", "speed"} & set(slot.needs)):
            for offset in (1.0, -1.0):
                if not b.velocities():
                    s.local(v, b.times[0], offset)
            policy += "+local"
        return policy
    finally:
        s.budget = cap


@CLOVR_METHODS.register("holmes")
def holmes(question: Question, pool: Pool, perception: Any, budget: int = 32, gate: float = GATE,
           reader: Any = None) -> Answer:
    """HOLMES: slots, risk-conditioned search with certificates, verified bindings, gated readout (``reader``: a
    :class:`~.reading.Reader` for questions in words the generator does not use)."""
    p = plan(question.query, question.options, len(question.video_ids), question.row.get("subtask"), reader)
    graph = BindingGraph(len(question.video_ids))
    s = Searcher(pool, perception, graph, p.entities, budget)
    order = sorted(p.slots, key=lambda slot: slot.risk != "high")
    certificates = {}
    for k, slot in enumerate(order):
        share = max(1, s.left() // (len(order) - k))
        policy = fill(s, slot, share)
        e = slot.entity
        found = sighting(graph, slot.video, e) is not None if e else bool(graph.vehicles(slot.video))
        certificates[slot.id] = s.certificate(slot, found, policy, share)
    letter, out = read(p, graph, certificates, question.options, durations(pool), gate)
    return Answer(question.id, "holmes", letter, out.text, out.reason, s.used, budget, p, graph,
                  [certificates[slot.id] for slot in p.slots], out.audit)


@CLOVR_METHODS.register("uniform")
def uniform(question: Question, pool: Pool, perception: Any, budget: int = 32, gate: float | None = None,
            reader: Any = None) -> Answer:
    """The baseline: ``budget`` uniform frames of the pool, the same perception and plan, the readout without gates."""
    p = plan(question.query, question.options, len(question.video_ids), question.row.get("subtask"), reader)
    graph = BindingGraph(len(question.video_ids))
    s = Searcher(pool, perception, graph, p.entities, budget)
    for i in select("uniform", pool, budget).indices:
        s.look(int(i))
    letter, out = read(p, graph, {}, question.options, durations(pool), None)
    return Answer(question.id, "uniform", letter, out.text, out.reason, s.used, budget, p, graph, [], out.audit)
