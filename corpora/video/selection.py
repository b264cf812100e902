"""Frame selection's records and registry: a candidate pool, a selection, the selectors.

A *selector* takes the candidate frames of one question (a :class:`Pool`: their times,
and, when it needs them, encoder features, the query's features or small pixel
thumbnails) and a frame budget, and returns a :class:`Selection` (positions into the
pool and a score per chosen frame). It never decodes video and never sees the answer,
so any selector composes with any encoder, evaluator and answering model.

    @SELECTORS.register("uniform", needs=())
    def uniform(pool: Pool, budget: int, rng: np.random.Generator) -> Selection: ...

    select("uniform", pool, 8)   # checks needs and output, returns a Selection

A pool may span several videos (CLoVR-Bench questions do): candidates are ordered by
(video, time) and ``video_index`` says which video each belongs to.

The query-free samplers every video task uses (``uniform``, ``fps``) register in
:mod:`.samplers`; the FrameSelect method registers the rest
(:mod:`neurips26.methods.frameselect.selectors`). Both are named by ``neurips26.selectors`` entry points
(``pyproject.toml``; another distribution adds selectors the same way) and imported on the first lookup.
This module imports nothing else of its package, so every layer can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neurips26.errors import UserError
from neurips26.registry import Registry

NEEDS = ("features", "query_features", "pixels", "query")


class SelectorRefused(UserError):
    """A selector cannot run on a pool because the pool lacks a field it needs (its one named refusal)."""


class SelectorFailed(RuntimeError):
    """A selector raised or broke its contract on a pool it should handle: a bug, reported with the pool's size."""


def check_needs(name: str, info: dict[str, Any]) -> None:
    """Registration check: ``needs`` names only :class:`Pool` fields a selector may read."""
    unknown = set(info.get("needs", ())) - set(NEEDS)
    if unknown:
        raise ValueError(f"{name!r}: unknown needs {sorted(unknown)}; known: {', '.join(NEEDS)}")


def needs(registry: Registry[Any], name: str) -> tuple[str, ...]:
    """The pool fields component ``name`` of ``registry`` reads (its ``needs=`` registration info)."""
    return tuple(registry.info(name).get("needs", ()))


@dataclass
class Pool:
    """The candidate frames of one question, ordered by (video, time)."""

    times: np.ndarray  # (N,) seconds from the start of each candidate's own video
    duration: float  # total seconds over all videos of the pool
    video_ids: list[str] = field(default_factory=lambda: ["video"])
    video_index: np.ndarray | None = None  # (N,) position in video_ids; None means all in video 0
    features: np.ndarray | None = None  # (N, D) L2-normalised encoder features
    query: str | None = None
    query_features: np.ndarray | None = None  # (D,) L2-normalised, same space as features
    pixels: np.ndarray | None = None  # (N, h, w, 3) uint8 thumbnails, for pixel-level selectors
    video_durations: list[float] | None = None  # seconds per video; None: last candidate + one candidate step

    def __post_init__(self) -> None:
        self.times = np.asarray(self.times, dtype=np.float64)
        if self.times.ndim != 1 or len(self.times) == 0:
            raise ValueError(f"a pool needs a non-empty 1-D array of candidate times, got shape {self.times.shape}")
        if self.video_index is None:
            self.video_index = np.zeros(len(self.times), dtype=np.int64)
        if self.video_durations is not None and len(self.video_durations) != len(self.video_ids):
            raise ValueError(f"pool has {len(self.video_durations)} video durations for {len(self.video_ids)} videos")
        for name in ("video_index", "features", "pixels"):
            value = getattr(self, name)
            if value is not None and len(value) != len(self.times):
                raise ValueError(f"pool field {name!r} has {len(value)} rows for {len(self.times)} candidates")

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def timeline(self) -> np.ndarray:
        """Each candidate's position on one axis through all the pool's videos (seconds, videos end to end).

        Video k starts where video k-1 ends: after its duration when known, else one candidate step
        (the median spacing of its candidates, 1 s for a single one) after its last candidate.
        """
        lengths = np.zeros(len(self.video_ids))
        for v in range(len(self.video_ids)):
            if self.video_durations is not None:
                lengths[v] = self.video_durations[v]
                continue
            own = np.sort(self.times[self.video_index == v])
            if len(own):
                lengths[v] = own[-1] + (float(np.median(np.diff(own))) if len(own) > 1 else 1.0)
        offsets = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        return self.times + offsets[self.video_index]


@dataclass
class Selection:
    """Chosen candidates: sorted unique positions into the pool and the selector's score for each."""

    indices: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, indices: Any, scores: Any = None) -> Selection:
        indices = np.asarray(indices, dtype=np.int64)
        scores = np.full(len(indices), np.nan) if scores is None else np.asarray(scores, dtype=np.float64)
        order = np.argsort(indices, kind="stable")
        return cls(indices[order], scores[order])


SELECTORS: Registry[Callable[..., Selection]] = Registry("selector", group="neurips26.selectors",
                                                         check=check_needs)


def select(name: str, pool: Pool, budget: int, seed: int = 0, **options: Any) -> Selection:
    """Run selector ``name`` on ``pool`` for ``budget`` frames, checking its needs and its output.

    The contract: on any pool with at least ``budget`` candidates (identical frames included) the
    result is exactly ``budget`` distinct in-range positions. A pool lacking a needed field raises
    :class:`SelectorRefused`; a selector that breaks the contract raises :class:`SelectorFailed`.
    """
    fn = SELECTORS.get(name)
    if budget < 1:
        raise UserError(f"budget must be >= 1, not {budget}")
    missing = [need for need in needs(SELECTORS, name) if getattr(pool, need) is None]
    if missing:
        raise SelectorRefused(f"selector {name!r} needs pool field(s) {', '.join(missing)}; encode the pool first")
    if budget >= pool.n:
        return Selection.of(np.arange(pool.n))
    out = fn(pool, budget, np.random.default_rng(seed), **options)
    idx = out.indices
    if len(idx) != budget or len(np.unique(idx)) != budget or idx.min() < 0 or idx.max() >= pool.n:
        raise SelectorFailed(f"selector {name!r} returned {len(idx)} indices (unique {len(np.unique(idx))}) "
                             f"for budget {budget} over {pool.n} candidates")
    return Selection.of(idx, out.scores)
