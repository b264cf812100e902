"""Query-free random samplers: ``random`` and ``stratified``.

With ``uniform`` and ``fps`` (the video tasks' samplers, in
:mod:`neurips26.corpora.video.samplers`) these are the baselines every frame-selection
paper compares against. Candidates are taken as equally spaced within each video, so
spacing over pool positions is spacing in time.
"""

from __future__ import annotations

import numpy as np

from ..core import SELECTORS, Pool, Selection
from ._common import segments


@SELECTORS.register("random")
def random(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """``budget`` candidates uniformly at random without replacement."""
    return Selection.of(rng.choice(pool.n, size=budget, replace=False))


@SELECTORS.register("stratified")
def stratified(pool: Pool, budget: int, rng: np.random.Generator) -> Selection:
    """One candidate uniformly at random inside each of ``budget`` equal segments (stratified sampling)."""
    return Selection.of([int(rng.choice(segment)) for segment in segments(pool.n, budget)])
