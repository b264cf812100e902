"""Risk-conditioned search over a FrameSelect pool, and the coverage certificate of every search.

A :class:`Searcher` looks at candidate frames of one question's pool through a perception backend,
within a frame budget, adding what it sees to the binding graph (a frame is paid for once, whatever
slot looks at it). Policies, by the slot's risk (:mod:`.slots`):

- ``scan`` (high risk: a miss would decide the answer): frames evenly over the slot's video, spaced
  so that anything in view for :data:`MIN_DWELL` seconds is seen (twice for counts);
- ``relevance`` (low risk: the entity is named and only an attribute is asked): FrameSelect's
  ``nms_topk`` on the descriptor relevance of the slot's query first, then ``scan`` when that found
  nothing;
- ``refine``: once an entity is seen, bisection between the last frame without it and the first
  with it (the time of a first appearance, to one candidate step);
- ``local``: a second frame one second after a sighting (direction, speed, a vehicle at rest).

Every slot gets a :class:`Certificate`: which spans of its video were searched, with how many
frames out of what budget, and the confidence that the search would have seen the entity were it
there. For an entity in view for at least ``D`` = :data:`MIN_DWELL` seconds at a uniformly random
time, ``P(some frame falls in its window) = 1 - sum_gaps max(0, gap - D) / (duration - D)``; given
that, at least ``k = max(1, floor(D / largest gap))`` frames do, each seen with the backend's
recall ``r``: confidence = P(window hit) * (1 - (1 - r)^k).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
from neurips26.methods.frameselect.core import Pool, select
from neurips26.methods.frameselect.encoders import get_encoder

from .graph import BindingGraph, Detection
from .slots import Entity, Slot

MIN_DWELL = 4.0  # s: the shortest time a CLoVR vehicle is in view (the fastest crossing, (1 + 0.045) / 0.25)


@dataclass
class Certificate:
    """What one slot's search covered and how sure it is that a miss means absence."""

    slot: str
    video_id: str
    found: bool
    policy: str
    frames: int  # frames of this video looked at (by any slot) when the slot was settled
    budget: int  # the slot's share of the question's budget
    spans: list[tuple[float, float]]  # searched stretches: consecutive looks at most MIN_DWELL apart
    largest_gap: float
    confidence: float

    def to_dict(self) -> dict:
        return asdict(self)


def coverage(times: list[float], duration: float, recall: float, dwell: float = MIN_DWELL) -> tuple[float, float]:
    """(confidence, largest gap) of looks at ``times`` over ``[0, duration]`` (see the module docstring)."""
    if not times:
        return 0.0, duration
    t = np.sort(np.asarray(times, np.float64))
    gaps = np.diff(np.concatenate([[0.0], t, [duration]]))
    free = float(np.sum(np.maximum(0.0, gaps - dwell)))
    p_hit = 1.0 if duration <= dwell else max(0.0, 1.0 - free / (duration - dwell))
    k = max(1, int(dwell // max(float(gaps[1:-1].max()) if len(gaps) > 2 else dwell, 1e-9)))
    return p_hit * (1.0 - (1.0 - recall) ** k), float(gaps.max())


def spans(times: list[float], reach: float = MIN_DWELL) -> list[tuple[float, float]]:
    """Searched stretches: runs of looks at most ``reach`` apart."""
    out: list[list[float]] = []
    for t in sorted(times):
        if out and t - out[-1][1] <= reach:
            out[-1][1] = t
        else:
            out.append([t, t])
    return [(round(a, 3), round(b, 3)) for a, b in out]


class Searcher:
    """Looks at pool candidates through ``perception`` within ``budget`` frames, filling ``graph``."""

    def __init__(self, pool: Pool, perception, graph: BindingGraph, entities: list[Entity], budget: int) -> None:
        self.pool, self.perception, self.graph, self.entities = pool, perception, graph, entities
        self.budget, self.used = budget, 0
        self.seen: dict[int, list[Detection]] = {}
        self._encoder = None

    def left(self) -> int:
        return self.budget - self.used

    def look(self, i: int) -> list[Detection] | None:
        """Detections in candidate ``i`` (None when the budget is spent); a frame seen before costs nothing."""
        if i not in self.seen:
            if self.used >= self.budget:
                return None
            self.used += 1
            self.seen[i] = self.perception.observe(self.pool, i, self.entities)
            self.graph.add(int(self.pool.video_index[i]), float(self.pool.times[i]), self.seen[i])
        return self.seen[i]

    def rows(self, video: int) -> np.ndarray:
        return np.flatnonzero(self.pool.video_index == video)

    def duration(self, video: int) -> float:
        p = self.pool
        return float(p.video_durations[video]) if p.video_durations else float(p.times[self.rows(video)].max())

    def scan(self, video: int, n: int, until=None) -> None:
        """``n`` frames (fewer when the budget is short) evenly over the video, coarse to fine (every other one
        first), stopping when ``until()``; frames already seen count towards ``n``."""
        rows = self.rows(video)
        n = min(n, len(rows), self.left() + len(self.graph.observed[video]))
        picks = rows[((np.arange(n) + 0.5) * len(rows) / n).astype(np.int64)]
        order = [*picks[::2], *picks[1::2]]
        for i in order:
            if until is not None and until():
                return
            if self.look(int(i)) is None:
                return

    def relevance(self, slot: Slot, n: int, until=None) -> None:
        """The ``n`` candidates of the slot's video most like its query (FrameSelect ``nms_topk``)."""
        rows = self.rows(slot.video)
        if self.pool.features is None or n < 1:
            return
        if self._encoder is None:
            self._encoder = get_encoder("descriptor")
        query = self._encoder.encode_text(slot.query)
        if query is None:
            return
        sub = replace(self.pool, times=self.pool.times[rows], video_index=np.zeros(len(rows), np.int64),
                      video_ids=[self.pool.video_ids[slot.video]], features=self.pool.features[rows],
                      pixels=None, query=slot.query, query_features=query, video_durations=None,
                      duration=self.duration(slot.video))
        for k in select("nms_topk", sub, min(n, len(rows))).indices:
            if (until is not None and until()) or self.look(int(rows[k])) is None:
                return

    def refine(self, video: int, first_seen: float, present) -> None:
        """Bisect between the last look without the entity and its first sighting."""
        rows = self.rows(video)
        times = self.pool.times[rows]
        lo = max([t for t in self.graph.observed[video] if t < first_seen and not present(t)], default=-1.0)
        hi = first_seen
        while True:
            between = rows[(times > lo + 1e-9) & (times < hi - 1e-9)]
            if len(between) == 0:
                return
            i = int(between[len(between) // 2])
            if self.look(i) is None:
                return
            if present(float(self.pool.times[i])):
                hi = float(self.pool.times[i])
            else:
                lo = float(self.pool.times[i])

    def local(self, video: int, t: float, offset: float = 1.0) -> None:
        """A frame ``offset`` seconds after (or before, at the end) time ``t`` in the video."""
        rows = self.rows(video)
        times = self.pool.times[rows]
        target = t + offset if 0 <= t + offset <= times.max() else t - offset
        self.look(int(rows[int(np.argmin(np.abs(times - target)))]))

    def certificate(self, slot: Slot, found: bool, policy: str, budget: int) -> Certificate:
        looked = sorted(self.graph.observed[slot.video])
        confidence, gap = coverage(looked, self.duration(slot.video), self.perception.recall)
        return Certificate(slot.id, self.pool.video_ids[slot.video], found, policy, len(looked), budget,
                           spans(looked), round(gap, 3), round(confidence, 4))
