"""The protocol of a ranked evaluation: how its standard run is made and how its score is ranked.

lm-eval tasks declare theirs in their YAML (``metadata.protocol``, read by :mod:`neurips26.tasks.protocol`).
Evaluators that do not run through lm-eval register a :class:`Protocol` under their task name in
:data:`PROTOCOLS`, from the module that defines them, and name that module in the ``neurips26.evaluators`` entry
points (``pyproject.toml``) so the leaderboard finds it without importing every method::

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


class ProtocolError(UserError):
    """A task without a protocol, or a protocol that is not valid."""


class MeasuredBaseline(BaseModel):
    """Where a protocol's baseline comes from: the scores of answerers that know nothing on the task's split (the
    baseline is the best of them; :mod:`neurips26.tasks.measure` computes them from a built split)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answerer: str  # the answerer that scores best, a key of ``scores``
    scores: dict[str, float]  # answerer ("empty", "constant", "random") -> its score on the split
    answer: str | None = None  # the best constant answer (a choice, a letter or a text, cut to 80 characters)
    n: int  # documents of the split
    seeds: int = 0  # how many seeds the random answerer's score is the mean of
    data: str  # the split it was measured on
    how: str = ""  # how it was computed, when not by neurips26.tasks.measure

    @model_validator(mode="after")
    def _winner_is_scored(self) -> MeasuredBaseline:
        if self.answerer not in self.scores:
            raise ValueError(f"answerer {self.answerer!r} has no score (scored: {', '.join(self.scores)})")
        return self

    @property
    def value(self) -> float:
        """The baseline: the best answerer's score."""
        return self.scores[self.answerer]

    @classmethod
    def best_of(cls, scores: dict[str, float], higher_is_better: bool = True, digits: int = 4,
                **fields: Any) -> MeasuredBaseline:
        """The measurement of ``scores`` (rounded to ``digits`` decimals) won by its best answerer; ``fields``
        are the provenance (``n``, ``data``, ``seeds``, ``answer``, ``how``)."""
        rounded = {name: round(float(score), digits) + 0.0 for name, score in scores.items()}  # + 0.0: no -0.0
        pick = max if higher_is_better else min
        return cls(answerer=pick(rounded, key=rounded.__getitem__), scores=rounded, **fields)


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
    baseline_from: MeasuredBaseline | None = None  # the measurement the baseline comes from
    range: tuple[float, float]
    task_metadata: dict[str, Any] = {}
    generation: dict[str, Any] = {}
    ranked: bool = True  # false: the metric alone can be won without skill (reported, never ranked on its own)
    note: str | None = None
    size: int | None = None  # the split's number of documents, when the protocol fixes it

    @model_validator(mode="before")
    @classmethod
    def _baseline_measured(cls, data: Any) -> Any:
        """A protocol given its measurement alone (``baseline_from``) takes the measured best as its baseline."""
        if isinstance(data, dict) and "baseline" not in data and data.get("baseline_from") is not None:
            return {**data, "baseline": MeasuredBaseline.model_validate(data["baseline_from"]).value}
        return data

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
        measured = self.baseline_from
        if measured is not None:
            pick = max if self.higher_is_better else min
            best = pick(measured.scores, key=measured.scores.__getitem__)
            if measured.scores[measured.answerer] != measured.scores[best]:
                raise ValueError(f"baseline_from: {best!r} scores better than the recorded answerer "
                                 f"{measured.answerer!r}")
            if isinstance(self.baseline, float) and abs(self.baseline - measured.scores[best]) > 1e-9:
                raise ValueError(f"baseline {self.baseline} is not the measured best {measured.scores[best]}")
            # majority (resolved on each run's split) is the best constant answer; chance the random choice
            if self.baseline == "majority" and measured.answerer != "constant" or \
                    self.baseline == "chance" and measured.answerer != "random":
                raise ValueError(f"a {self.baseline} baseline, but the {measured.answerer} answerer scores best")
        return self

    @property
    def best(self) -> float:
        """The best possible score (the range's top when higher is better, else its bottom)."""
        return self.range[1] if self.higher_is_better else self.range[0]


PROTOCOLS: Registry[Protocol] = Registry("protocol", group="neurips26.evaluators")
