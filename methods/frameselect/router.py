"""FrameRouter: per-question frame budgets whose mean is a fixed reference budget, training-free.

Three parts, all fixed in advance (nothing is fitted to the benchmark):

1. :func:`demand` estimates, in [0, 1], how much visual evidence a question needs, as the
   mean of the cues available for it:
   - *wording*: words that ask about many moments ("how many", "every", "which videos",
     "describe", "order"...) raise it, words that ask about one moment ("when does",
     "what type", "is there"...) lower it (0.5 when neither is present);
   - *videos*: ``1 - 1/n_videos``, since evidence spread over more videos needs more frames;
   - *relevance dispersion* (when the pool has query features): the normalised entropy of
     the softmax of the candidates' similarity to the query (temperature 0.05); a peaked
     relevance profile (one moment matters) needs few frames, a flat one many.
2. :func:`allocate` turns demands into integer budgets in ``[b_min, b_max]``, clamped to each
   pool's size (a pool smaller than ``b_min`` takes all its candidates and the others make up
   the difference), whose sum is exactly ``reference * n``: budgets proportional to the
   demand, clipped to the bounds (water-filling: the scale is found by bisection so the
   clipped budgets sum to the total), then rounded down and the remaining frames handed
   one by one to the questions that lost the most in rounding (or taken back from those
   that gained the most), within the bounds. The mean is the reference *exactly*.
3. :data:`BANK`, a frozen bank of sampling policies (selectors), one per demand band;
   :func:`policy` picks the first registered selector of the band whose needs the pool
   meets, falling back to ``uniform``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .core import SELECTORS, Pool, Selection, SelectorRefused, needs, select

BROAD = ("how many", "in how many", "every", "each", "all ", "which videos", "most", "same", "order", "describe",
         "compare", "fastest", "slowest", "count", "sequence", "throughout")
NARROW = ("when does", "when did", "what type", "what colour", "what color", "is there", "at what time",
          "which road user", "at about")
TEMPERATURE = 0.05
# (upper demand bound of the band, selectors in order of preference)
BANK: tuple[tuple[float, tuple[str, ...]], ...] = (
    (1 / 3, ("nms_topk", "topk", "uniform")),  # one moment matters: the most query-relevant, kept apart
    (2 / 3, ("segment_top1", "uniform")),  # relevance within an even spread
    (1.0, ("uniform",)),  # evidence everywhere: cover the timeline
)


def _hits(text: str, words: Sequence[str]) -> int:
    return sum(bool(re.search(r"\b" + re.escape(w), text)) for w in words)


def demand(query: str, n_videos: int = 1, pool: Pool | None = None) -> float:
    """Evidence demand of a question in [0, 1] (see the module docstring)."""
    text = (query or "").lower()
    cues = [float(np.clip(0.5 + 0.25 * _hits(text, BROAD) - 0.25 * _hits(text, NARROW), 0.0, 1.0)),
            1.0 - 1.0 / max(1, n_videos)]
    if pool is not None and pool.features is not None and pool.query_features is not None and pool.n > 1:
        s = pool.features @ pool.query_features / TEMPERATURE
        p = np.exp(s - s.max())
        p /= p.sum()
        cues.append(float(-(p * np.log(p + 1e-300)).sum() / np.log(pool.n)))
    return float(np.mean(cues))


def allocate(demands: Sequence[float], reference: int, b_min: int = 1, b_max: int | None = None,
             caps: Sequence[int] | None = None) -> np.ndarray:
    """Integer budgets in ``[min(b_min, cap_i), min(b_max, cap_i)]``, roughly proportional to demand, summing to
    ``reference * n``; :class:`SelectorRefused` when the caps together hold fewer frames than that."""
    d = np.asarray(demands, dtype=np.float64)
    n = len(d)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if d.ndim != 1 or not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"demands must be finite and >= 0, got {d.tolist()[:8]}")
    b_max = int(b_max) if b_max is not None else 4 * int(reference)
    if not 1 <= b_min <= reference <= b_max:
        raise ValueError(f"need 1 <= b_min <= reference <= b_max, got b_min={b_min}, reference={reference}, "
                         f"b_max={b_max}")
    hi = np.full(n, b_max, dtype=np.int64)
    if caps is not None:
        if len(caps) != n:
            raise ValueError(f"caps has {len(caps)} entries for {n} demands")
        caps = np.asarray(caps, dtype=np.int64)
        if np.any(caps < 1):
            raise ValueError(f"every pool needs at least one candidate, got sizes {caps.tolist()[:8]}")
        hi = np.minimum(hi, caps)
    lo = np.minimum(int(b_min), hi)  # a pool smaller than b_min gives all it has
    total = int(reference) * n
    if hi.sum() < total:
        raise SelectorRefused(f"budgets of mean {reference} over {n} questions need {total} frames, but the pools "
                              f"(capped at b_max={b_max}) hold only {int(hi.sum())}")
    w = d + 1e-9
    low, high = 0.0, float(hi.max()) / w.min() + 1.0
    for _ in range(200):  # bisection on the scale: sum(clip(scale * w)) is monotone in scale
        mid = (low + high) / 2
        if np.clip(mid * w, lo, hi).sum() < total:
            low = mid
        else:
            high = mid
    target = np.clip(high * w, lo, hi)
    budgets = np.clip(np.floor(target + 1e-9).astype(np.int64), lo, hi)
    gap = total - int(budgets.sum())
    while gap != 0:  # hand out (or take back) single frames by rounding loss, within bounds
        loss = target - budgets
        if gap > 0:
            loss[budgets >= hi] = -np.inf
            budgets[int(np.argmax(loss))] += 1
            gap -= 1
        else:
            loss[budgets <= lo] = np.inf
            budgets[int(np.argmin(loss))] -= 1
            gap += 1
    return budgets


def policy(value: float, pool: Pool) -> str:
    """The bank's selector for a question of demand ``value`` over ``pool``."""
    for bound, names in BANK:
        if value <= bound + 1e-12:
            for name in names:
                if name in SELECTORS and all(getattr(pool, need) is not None for need in needs(SELECTORS, name)):
                    return name
            break
    return "uniform"


@dataclass
class Routed:
    """What FrameRouter did for one question: its demand, budget, policy and selection."""

    demand: float
    budget: int
    policy: str
    selection: Selection


def route(queries: Sequence[str], pools: Sequence[Pool], reference: int, b_min: int | None = None,
          b_max: int | None = None, seed: int = 0) -> list[Routed]:
    """FrameRouter over a set of questions at mean budget ``reference`` (bounds default to reference/4 and 4x)."""
    if len(queries) != len(pools):
        raise ValueError(f"{len(queries)} queries for {len(pools)} pools")
    b_min = max(1, reference // 4) if b_min is None else b_min
    b_max = 4 * reference if b_max is None else b_max
    demands = [demand(q, len(p.video_ids), p) for q, p in zip(queries, pools, strict=True)]
    budgets = allocate(demands, reference, b_min, b_max, caps=[p.n for p in pools])
    out = []
    for value, budget, pool in zip(demands, budgets, pools, strict=True):
        name = policy(value, pool)
        out.append(Routed(value, int(budget), name, select(name, pool, int(budget), seed)))
    return out
