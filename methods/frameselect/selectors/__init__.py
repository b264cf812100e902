"""Frame selectors, one module per selector or tightly related family; importing this registers them all.

Add one: a module here with ``@SELECTORS.register("name", needs=(...))`` on
``fn(pool, budget, rng, **options) -> Selection``, imported below.
"""

from . import (  # noqa: F401
    aks,
    bgrpo,
    bolt,
    clustering,
    coverage,
    dpp,
    kts,
    mdp3,
    mmr,
    motion,
    qframe,
    relevance,
    saliency,
    shots,
    temporal,
)
