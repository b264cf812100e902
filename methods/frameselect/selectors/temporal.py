"""Query-free temporal samplers: ``uniform``, ``random``, ``stratified``, ``fps``.

These are the baselines every frame-selection paper compares against (e.g. the uniform
sampling of Video-LLaVA/LLaVA-Video and the fixed-rate sampling with a frame cap of
Qwen2-VL, 2024). Candidates are taken as equally spaced within each video, so spacing
over pool positions is spacing in time; pools over several videos use the pool's
timeline (videos end to end).
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import nearest_unique, segments


@SELECTORS.register("uniform")
def uniform(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The candidate at the centre of each of ``budget`` equal segments of the pool."""
    return Selection.of(((np.arange(budget) + 0.5) * pool.n / budget).astype(np.int64))


@SELECTORS.register("random")
def random(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """``budget`` candidates uniformly at random without replacement."""
    return Selection.of(rng.choice(pool.n, size=budget, replace=False))


@SELECTORS.register("stratified")
def stratified(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """One candidate uniformly at random inside each of ``budget`` equal segments (stratified sampling)."""
    return Selection.of([int(rng.choice(segment)) for segment in segments(pool.n, budget)])


@SELECTORS.register("fps")
def fps(pool: Pool, budget: int, rng: np.random.Generator, rate: float | None = None) -> Selection:
    """Frames at ``0, 1/rate, 2/rate, ...`` seconds of the pool's duration, capped at ``budget``.

    More than ``budget`` such times are thinned evenly (first and last kept, as
    :func:`~neurips26.corpora.video.frames.fixed_rate` does); fewer, or no ``rate``, and the
    rate is ``budget / duration``. Each time maps to the nearest candidate not yet taken.
    """
    if rate is not None and rate <= 0:
        raise ValueError(f"fps selector: rate must be > 0, not {rate}")
    times = np.arange(int(np.ceil(pool.duration * rate - 1e-9))) / rate if rate else np.zeros(0)
    if len(times) > budget:
        times = times[np.linspace(0, len(times) - 1, budget).round().astype(int)]
    elif len(times) < budget:
        times = np.arange(budget) * pool.duration / budget
    return Selection.of(nearest_unique(pool.timeline, times))
