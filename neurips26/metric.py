"""The registry of the leaderboard's metrics, in the core so that a method registers the metrics of its own
evaluator without importing the leaderboard (as :mod:`neurips26.protocol` for protocols).

A metric registers its per-document function ``f(sample, config, metric) -> value | None`` with its range and
direction (see :mod:`neurips26.leaderboard.metrics`, which registers the metrics lm-eval tasks report)::

    @METRICS.register("my_metric", range=(0.0, 1.0), higher_is_better=True, binary=False)
    def my_metric(sample: Sample, config: Mapping[str, Any], metric: str = "my_metric") -> float | None: ...

The modules that register metrics are named by the ``neurips26.metrics`` entry points (``pyproject.toml``; a
method's own metrics from its package, e.g. ``neurips26.methods.actions.board_metrics``), imported on the first
lookup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from neurips26.registry import Registry
from neurips26.results import Sample

INF = math.inf

METRICS: Registry[Any] = Registry("metric", group="neurips26.metrics")


def recorded(sample: Sample, config: Mapping[str, Any], metric: str) -> float | None:
    """The per-document value lm-eval recorded for ``metric`` (None when it is not a number)."""
    value = sample.values.get(metric)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
