"""FrameSelect: interchangeable frame selectors, encoders, evaluators and answering backends.

The vocabulary lives in :mod:`.core` (a candidate :class:`Pool`, a :class:`Selection`,
the registries); each selector, encoder, evaluator, benchmark and answering backend is
one small module that registers itself with a decorator.
"""

from . import answerers, benchmarks, encoders, evaluators, selectors  # noqa: F401  (register every component)
from .core import (
    ANSWERERS,
    BENCHMARKS,
    ENCODERS,
    SELECTION_EVALUATORS,
    SELECTORS,
    Pool,
    Selection,
    SelectorFailed,
    SelectorRefused,
    needs,
    select,
)
from .pool import build_pool

__all__ = ["ANSWERERS", "BENCHMARKS", "ENCODERS", "SELECTION_EVALUATORS", "SELECTORS", "Pool", "Selection",
           "SelectorFailed", "SelectorRefused", "needs", "build_pool", "select"]
