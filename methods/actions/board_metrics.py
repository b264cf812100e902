"""The leaderboard metrics of a PushT rollout (task ``pusht_rollout``), recomputed from its samples row.

A rollout's response is JSON: ``{"rate_hz", "coverage": [after each step], "actions": [[x, y] commanded]}``;
a row without one falls back to the value recorded for the document. Registered in
:data:`neurips26.metric.METRICS` and named by a ``neurips26.metrics`` entry point, so the leaderboard finds them
without importing this package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from neurips26.metric import INF, METRICS, recorded
from neurips26.results import Sample

from .smoothness import first_difference_energy, high_frequency_energy, mean_squared_jerk

SUCCESS_COVERAGE = 0.95  # as corpora/pusht/records.py: the leaderboard loads this module and never imports a corpus


def _rollout(sample: Sample) -> dict[str, Any] | None:
    try:
        rollout = json.loads(sample.responses()[0])
        return rollout if isinstance(rollout, dict) and isinstance(rollout.get("coverage"), list) else None
    except (IndexError, TypeError, ValueError):
        return None


def _register_rollout(name: str, lo: float, hi: float, higher_is_better: bool, binary: bool,
                      of_rollout: Any, doc: str) -> None:
    def per_document(sample: Sample, config: Mapping[str, Any], metric: str = name) -> float | None:
        rollout = _rollout(sample)
        return recorded(sample, config, metric) if rollout is None else float(of_rollout(rollout))

    per_document.__doc__, per_document.__name__ = doc, name
    METRICS.register(name, range=(lo, hi), higher_is_better=higher_is_better, binary=binary)(per_document)


def _actions(rollout: Mapping[str, Any]) -> np.ndarray:
    return np.asarray(rollout.get("actions") or [], dtype=np.float64).reshape(-1, 2)


for _name, _lo, _hi, _up, _binary, _of, _doc in (
    ("max_coverage", 0.0, 1.0, True, False, lambda r: max(r["coverage"], default=0.0),
     "PushT: the largest share of the target the block covered during the rollout."),
    ("rollout_success", 0.0, 1.0, True, True, lambda r: max(r["coverage"], default=0.0) >= SUCCESS_COVERAGE,
     "PushT: 1 when the block covered at least 95% of the target (Diffusion Policy's success)."),
    ("mean_sq_jerk", 0.0, INF, False, False, lambda r: mean_squared_jerk(_actions(r), r["rate_hz"]),
     "Mean squared jerk of the commanded actions, (pixels / s^3)^2."),
    ("high_freq_energy", 0.0, 1.0, False, False, lambda r: high_frequency_energy(_actions(r), r["rate_hz"]),
     "Share of the commanded actions' velocity power above 2 Hz."),
    ("diff_energy", 0.0, INF, False, False, lambda r: first_difference_energy(_actions(r), r["rate_hz"]),
     "Mean squared step-to-step change of the commanded actions (pixels^2 per 10 Hz step)."),
):
    _register_rollout(_name, _lo, _hi, _up, _binary, _of, _doc)
