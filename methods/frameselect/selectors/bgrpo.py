"""``bgrpo``: the Bayesian GRPO selection policy (:mod:`..bgrpo`): the frames most probable under the posterior
predictive of a trained ensemble, kept apart in time: the most probable frame is taken, candidates within
``radius`` seconds of it on the pool's timeline are set aside (default: half the uniform spacing), and so on;
if too few remain, the most probable of those set aside fill the budget.

``model`` is a folder written by ``neurips26 frameselect train-bgrpo``; without it, the folder at
``<cache>/frameselect/bgrpo`` when one was trained there for this encoder's feature size. With no
trained model, every member is the prior policy (query relevance, then what differs from the
video's background), so the selector still keeps the contract on any pool.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from neurips26 import settings

from ..bgrpo.policy import frame_features, softmax
from ..bgrpo.train import Posterior, load
from ..core import SELECTORS, Pool, Selection
from ._common import temporal_nms


@lru_cache(maxsize=8)
def _posterior(folder: str, mtime: float):
    return load(folder)


def default_model() -> Path:
    """Where ``train-bgrpo`` writes by default: ``<cache>/frameselect/bgrpo``."""
    return settings.cache_dir() / "frameselect" / "bgrpo"


def prior_scores(pool: Pool) -> np.ndarray:
    """The untrained policy: relevance to the query, ties broken by distance from the video's mean frame."""
    phi = frame_features(pool)
    d = (phi.shape[1] - 2) // 2
    return phi[:, -2] + 1e-3 * np.linalg.norm(phi[:, d:2 * d], axis=1)


@SELECTORS.register("bgrpo", needs=("features",))
def bgrpo(pool: Pool, budget: int, rng: np.random.Generator, model: str | Path | None = None,
          radius: float | None = None) -> Selection:
    """The posterior predictive's most probable frames, ``radius`` seconds apart (the prior when untrained)."""
    folder = Path(model) if model is not None else default_model()
    weights = None
    if model is not None or (folder / "model.safetensors").is_file():
        posterior = _posterior(str(folder), (folder / "model.safetensors").stat().st_mtime
                               if (folder / "model.safetensors").is_file() else 0.0)
        if model is not None or posterior.weights.shape[1] == 2 * pool.features.shape[1] + 2:
            weights = posterior
    if weights is None:
        return temporal_nms(pool, softmax(prior_scores(pool) / 0.05), budget, radius)
    return choose(weights, pool, budget, radius)


def choose(posterior: Posterior, pool: Pool, budget: int, radius: float | None = None) -> Selection:
    """The frames of ``pool`` a trained ``posterior`` selects (predictive, then kept apart in time)."""
    p, _ = posterior.predictive(pool)
    return temporal_nms(pool, p, budget, radius)
