"""Does a score mean something? Each task's baseline, its confidence interval, and the reference answerers' scores.

A task's baseline comes from its protocol (:mod:`neurips26.tasks.protocol`: ``metadata.protocol`` of its YAML):
a number, ``"majority"`` (the share of the split's most frequent gold label) or ``"chance"`` (the mean of
1 / number of choices), resolved on the samples lm-eval logged for the run (the test split, in full) exactly as
the leaderboard resolves it (:func:`~neurips26.tasks.protocol.baseline_value`).

A reference answerer passes when its score is no better than the upper end (for a higher-is-better metric; the
lower end otherwise) of the baseline's 95% Wilson interval for the split's size, on the metric's range.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neurips26.tasks import (
    TASKS_DIR,
    answerers,  # noqa: F401  (registers the "constant" and "random" models)
)
from neurips26.tasks.protocol import Protocol, baseline_value, read_protocols

from neurips26 import stats
from neurips26.results import sample_from_row
from neurips26.stats import Z95

ANSWERERS = (("constant", "strategy=first"), ("constant", "strategy=majority"), ("constant", "strategy=empty"),
             ("random", "seed=0"))
EMPTY = ("constant", "strategy=empty")


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` over ``n`` items (a mean in [0, 1] is no wider)."""
    low, high = stats.wilson(p, n, z)
    return float(low), float(high)


def interval(protocol: Protocol, baseline: float, n: int) -> tuple[float, float]:
    """The baseline's 95% interval for ``n`` items, on the metric's range."""
    low, high = protocol.range
    width = high - low
    lo, hi = wilson((baseline - low) / width, n)
    return low + lo * width, low + hi * width


@dataclass(frozen=True)
class Row:
    """One answerer's score on one task, beside the task's baseline and its interval."""

    task: str
    answerer: str
    metric: str
    higher_is_better: bool
    score: float
    baseline: float
    baseline_kind: str
    low: float
    high: float
    n: int

    @property
    def ok(self) -> bool:
        """No better than the far end of the baseline's interval."""
        return self.score <= self.high + 1e-9 if self.higher_is_better else self.score >= self.low - 1e-9


def evaluate(model: str, model_args: str, tasks: Iterable[str], tasks_dir: Path = TASKS_DIR,
             metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """lm-eval's results (with samples) of one reference answerer on ``tasks``, full splits."""
    import lm_eval  # lazy: lm-eval's evaluator is only needed for a run
    from lm_eval.tasks import TaskManager  # lazy: as above

    manager = TaskManager(include_path=str(tasks_dir), include_defaults=False, metadata=metadata)
    return lm_eval.simple_evaluate(model=model, model_args=model_args, tasks=list(tasks), task_manager=manager,
                                   log_samples=True, bootstrap_iters=0, random_seed=0, numpy_random_seed=0)


def rows(runs: dict[tuple[str, str], dict[str, Any]], tasks_dir: Path = TASKS_DIR) -> list[Row]:
    """Every (task, answerer) of ``runs`` (keyed by (model, model_args)); the tasks are those of the
    :data:`EMPTY` run, which every run must include, and each other run adds the ones it has."""
    protocols, _ = read_protocols(tasks_dir, strict=True)
    empty = runs[EMPTY]
    out = []
    for task in sorted(empty["results"]):
        if task not in protocols:
            continue  # a group
        protocol = protocols[task].protocol
        samples = [sample_from_row(row, f"{task} sample") for row in empty["samples"][task]]
        baseline = baseline_value(protocol, samples)
        low, high = interval(protocol, baseline, len(samples))
        key = f"{protocol.metric},none"
        for (model, args), results in runs.items():
            if task not in results["results"]:
                continue
            out.append(Row(task, f"{model}({args})", protocol.metric, protocol.higher_is_better,
                           float(results["results"][task][key]), baseline, str(protocol.baseline), low, high,
                           len(samples)))
    return out


def table(found: list[Row]) -> str:
    """A plain-text table of ``found``."""
    head = f"{'task':34} {'answerer':27} {'metric':14} {'score':>7} {'baseline':>9} {'95% interval':>15} {'n':>4}  ok"
    lines = [head, "-" * len(head)]
    for r in found:
        kind = r.baseline_kind
        lines.append(f"{r.task:34} {r.answerer:27} {r.metric:14} {r.score:7.3f} {r.baseline:9.3f} "
                     f"[{r.low:5.3f}, {r.high:5.3f}] {r.n:4d}  {'yes' if r.ok else 'NO'}  {kind}")
    return "\n".join(lines)
