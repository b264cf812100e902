"""FrameSelect's vocabulary: the candidate pool, the selection and the registries.

The records (:class:`Pool`, :class:`Selection`), the selector registry and :func:`select`
live with the video frames they select from (:mod:`neurips26.corpora.video.selection`), so
the video tasks' frame policies are selectors too; this module adds FrameSelect's other
component kinds. Each component registers itself with a decorator where it is defined::

    @ENCODERS.register("descriptor")
    def descriptor() -> Encoder: ...

``needs=`` (the :class:`Pool` fields a component reads) is registration info, checked on
registration; :func:`needs` reads it back. This module imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neurips26.corpora.video.selection import (
    NEEDS,
    SELECTORS,
    Pool,
    Selection,
    SelectorFailed,
    SelectorRefused,
    check_needs,
    needs,
    select,
)

from neurips26.registry import Registry

ENCODERS: Registry[Callable[..., Any]] = Registry("encoder", group="neurips26.encoders", check=check_needs)
SELECTION_EVALUATORS: Registry[Callable[..., Any]] = Registry(
    "frame-selection evaluator", group="neurips26.selection_evaluators", check=check_needs)
BENCHMARKS: Registry[Callable[..., Any]] = Registry("benchmark", group="neurips26.benchmarks", check=check_needs)
ANSWERERS: Registry[Callable[..., Any]] = Registry("answering backend", group="neurips26.answerers",
                                                   check=check_needs)

__all__ = ["ANSWERERS", "BENCHMARKS", "ENCODERS", "NEEDS", "SELECTION_EVALUATORS", "SELECTORS", "Pool", "Selection",
           "SelectorFailed", "SelectorRefused", "needs", "select"]
