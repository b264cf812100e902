"""The leaderboard metrics of Found in Conversation: per instruction, P / A / U of a setting over its simulations.

``fic_<p|a|u>_<setting>`` is recomputed from the per-simulation scores the document records
(``simulation_scores``); a row without them falls back to the recorded value. Registered in
:data:`neurips26.metric.METRICS` and named by a ``neurips26.metrics`` entry point, so the leaderboard finds them
without importing this package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neurips26.metric import METRICS, recorded
from neurips26.results import Sample

from . import pau
from .simulator import SETTINGS


def _register_fic(setting: str, letter: str) -> None:
    fn = pau.PER_INSTRUCTION[letter.upper()]
    name = f"fic_{letter}_{setting}"

    def per_document(sample: Sample, config: Mapping[str, Any], metric: str = name) -> float | None:
        scores = sample.values.get("simulation_scores")
        runs = scores.get(setting) if isinstance(scores, dict) else None
        if not isinstance(runs, list) or not runs or not all(isinstance(v, int | float) for v in runs):
            return recorded(sample, config, metric)
        return fn([float(v) for v in runs])

    what = fn.__doc__.split(":", 1)[1].strip().rstrip(".")
    per_document.__doc__ = f"FiC: {what} ({setting} setting), recomputed from the recorded per-simulation scores."
    per_document.__name__ = name
    METRICS.register(name, range=(0.0, 1.0), higher_is_better=letter != "u", binary=False)(per_document)


for _setting in SETTINGS:
    for _letter in ("p", "a", "u"):
        _register_fic(_setting, _letter)
