"""The registry of the video metrics: each score function registers under its ``evaluate`` module's name.

    @VIDEO_SCORERS.register("tar_score")
    def tar_score(predictions, references, task_types, num_options=None) -> dict[str, float]: ...

The ``evaluate`` module of a registered name lives in ``metrics/<name>/<name>.py``
(:func:`.evaluators.evaluator_path`). This module imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable

from neurips26.registry import Registry

VIDEO_SCORERS: Registry[Callable[..., dict[str, float]]] = Registry(
    "video evaluator", group="neurips26.video_scorers")
