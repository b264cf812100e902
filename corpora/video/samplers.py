"""The query-free samplers every video task uses, as selectors: ``uniform`` and ``fps``.

These are the baselines every frame-selection paper compares against (the uniform
sampling of Video-LLaVA/LLaVA-Video and the fixed-rate sampling with a frame cap of
Qwen2-VL, 2024). They are the video tasks' frame policies too (:func:`.frames.sample`).
Candidates are taken as equally spaced within each video, so spacing over pool positions
is spacing in time; pools over several videos use the pool's timeline (videos end to end).
"""

from __future__ import annotations

import numpy as np

from .selection import SELECTORS, Pool, Selection


def nearest_unique(timeline: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each target time in order, the nearest candidate not taken yet (ties to the earlier one)."""
    taken = np.zeros(len(timeline), bool)
    out = []
    for t in targets:
        distance = np.where(taken, np.inf, np.abs(timeline - t))
        i = int(np.argmin(distance))
        taken[i] = True
        out.append(i)
    return np.array(out, np.int64)


@SELECTORS.register("uniform")
def uniform(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """The candidate at the centre of each of ``budget`` equal segments of the pool."""
    return Selection.of(((np.arange(budget) + 0.5) * pool.n / budget).astype(np.int64))


@SELECTORS.register("fps")
def fps(pool: Pool, budget: int, rng: np.random.Generator, rate: float | None = None) -> Selection:
    """Frames at ``0, 1/rate, 2/rate, ...`` seconds of the pool's duration, capped at ``budget``.

    More than ``budget`` such times are thinned evenly (first and last kept); fewer, or no
    ``rate``, and the rate is ``budget / duration``. Each time maps to the nearest candidate
    not yet taken.
    """
    if rate is not None and rate <= 0:
        raise ValueError(f"fps selector: rate must be > 0, not {rate}")
    times = np.arange(int(np.ceil(pool.duration * rate - 1e-9))) / rate if rate else np.zeros(0)
    if len(times) > budget:
        times = times[np.linspace(0, len(times) - 1, budget).round().astype(int)]
    elif len(times) < budget:
        times = np.arange(budget) * pool.duration / budget
    return Selection.of(nearest_unique(pool.timeline, times))
