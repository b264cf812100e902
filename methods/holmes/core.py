"""HOLMES's registries: CLoVR answering methods and perception backends.

    @METHODS.register("holmes")
    def holmes(question, pool, perception, budget) -> Answer: ...

    @PERCEPTION.register("oracle")
    def oracle(scenes: Path) -> Perception: ...

This module imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neurips26.registry import Registry

METHODS: Registry[Callable[..., Any]] = Registry("CLoVR answering method", modules=("neurips26.methods.holmes.method",))
PERCEPTION: Registry[Callable[..., Any]] = Registry(
    "HOLMES perception backend", modules=("neurips26.methods.holmes.perception",))
