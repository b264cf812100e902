"""HOLMES's registries: CLoVR answering methods and perception backends.

    @CLOVR_METHODS.register("holmes")
    def holmes(question, pool, perception, budget) -> Answer: ...

    @PERCEPTION.register("oracle")
    def oracle(scenes: Path) -> Perception: ...

This module imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neurips26.registry import Registry

CLOVR_METHODS: Registry[Callable[..., Any]] = Registry("CLoVR answering method", group="neurips26.clovr_methods")
PERCEPTION: Registry[Callable[..., Any]] = Registry("HOLMES perception backend", group="neurips26.holmes_perception")
