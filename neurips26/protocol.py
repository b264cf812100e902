"""The protocol of a ranked evaluation: how its standard run is made and how its score is ranked.

lm-eval tasks declare theirs in their YAML (``metadata.protocol``, read by :mod:`neurips26.tasks.protocol`).
Evaluators that do not run through lm-eval register a :class:`Protocol` under their task name in
:data:`PROTOCOLS`, from the module that defines them, and list that module in :data:`EVALUATOR_MODULES` so the
leaderboard finds it without importing every method::

    PROTOCOLS.register("rediff_arithmetic", group="rediff", output_type="generate_until", version=1.0,
                       metrics=("exact_match",))(Protocol(...))

``version`` is the task's version and ``metrics`` the metrics its results report (each registered in the
leaderboard's metrics); its runs are written by :func:`neurips26.runfiles.write_run`.

This module sits in the core so that methods can register protocols without importing the tasks package.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from neurips26.errors import UserError
from neurips26.registry import Registry

# modules that register protocols of evaluators outside lm-eval
EVALUATOR_MODULES: tuple[str, ...] = (
    "neurips26.methods.rediff.protocol",
    "neurips26.methods.geometry.protocol",
    "neurips26.methods.actions.protocol",  # pusht_rollout (robot actions)
    "neurips26.methods.fic.protocol",  # fic_translation, fic_code, fic_arithmetic
)


class ProtocolError(UserError):
    """A task without a protocol, or a protocol that is not valid."""


class Protocol(BaseModel):
    """How a task's standard run is made and how its score is ranked (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: str
    num_fewshot: int = 0
    fewshot_split: str | None = None
    chat_template: bool = False
    metric: str
    higher_is_better: bool = True
    baseline: float | Literal["majority", "chance"]
    range: tuple[float, float]
    task_metadata: dict[str, Any] = {}
    generation: dict[str, Any] = {}
    ranked: bool = True  # false: the metric alone can be won without skill (reported, never ranked on its own)
    note: str | None = None
    size: int | None = None  # the split's number of documents, when the protocol fixes it

    @field_validator("range")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not value[0] < value[1]:
            raise ValueError(f"range {list(value)} must be [low, high] with low < high")
        return value

    @model_validator(mode="after")
    def _baseline_in_range(self) -> Protocol:
        if isinstance(self.baseline, float) and not self.range[0] <= self.baseline <= self.range[1]:
            raise ValueError(f"baseline {self.baseline} is outside the range {list(self.range)}")
        return self

    @property
    def best(self) -> float:
        """The best possible score (the range's top when higher is better, else its bottom)."""
        return self.range[1] if self.higher_is_better else self.range[0]


PROTOCOLS: Registry[Protocol] = Registry("protocol", modules=EVALUATOR_MODULES)
