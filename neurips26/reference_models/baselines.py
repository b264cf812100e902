"""Does a score mean something? Each task's baseline, its confidence interval, and the reference answerers' scores.

A task's baseline comes from its YAML's ``metadata.protocol`` (``baseline``: a number, ``"majority"`` or
``"chance"``, with ``metric``, ``higher_is_better`` and ``range``). A task without a declared protocol gets one
inferred here: its first ``metric_list`` entry, range [0, 1], and as baseline ``"majority"`` when its answers
form a closed set (multiple choice, or option letters in the prompt) or ``"empty"`` (the score of the empty
answer, measured by running the ``constant`` answerer with ``strategy=empty``) for free text.

Baselines are resolved from the samples lm-eval logged for the run (the test split, in full):

* ``majority``: the share of the most frequent gold answer (as text: the gold choice, or the target);
* ``chance``: the mean of 1 / number of choices;
* a number: itself.

A reference answerer passes when its score is no better than the upper end (for a higher-is-better metric; the
lower end otherwise) of the baseline's 95% Wilson interval for the split's size, on the metric's range.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..tasks import TASKS_DIR
from . import answerers  # noqa: F401  (registers the "constant" and "random" lm-eval models)

Z95 = 1.959964
ANSWERERS = (("constant", "strategy=first"), ("constant", "strategy=majority"), ("constant", "strategy=empty"),
             ("random", "seed=0"))
EMPTY = ("constant", "strategy=empty")


class _TaskYaml(yaml.SafeLoader):
    """A YAML loader that keeps lm-eval's ``!function`` tags as text instead of importing them."""


_TaskYaml.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def read_task_yaml(path: Path) -> dict[str, Any]:
    """One task YAML with its ``include`` merged under it (as lm-eval does: the file's own keys win)."""
    config = yaml.load(path.read_text(), Loader=_TaskYaml) or {}
    if "include" in config:
        config = {**read_task_yaml(path.parent / config.pop("include")), **config}
    return config


def task_configs(tasks_dir: Path = TASKS_DIR) -> dict[str, dict[str, Any]]:
    """Every task's YAML config by task name (group YAMLs and templates left out)."""
    configs = {}
    for path in sorted(Path(tasks_dir).glob("*/*.yaml")):
        config = read_task_yaml(path)
        if isinstance(config.get("task"), str):
            configs[config["task"]] = config
    return configs


@dataclass(frozen=True)
class Protocol:
    """How a task is ranked: the metric, its direction and range, and the baseline to beat."""

    metric: str
    higher_is_better: bool
    baseline: float | str  # a number, "majority", "chance", or "empty" (inferred for free text only)
    range: tuple[float, float]
    declared: bool  # from the YAML's metadata.protocol (else inferred here)


def protocol_of(config: dict[str, Any], closed: bool) -> Protocol:
    """The task's declared protocol, or one inferred from its metric list (``closed``: answers form a set)."""
    declared = (config.get("metadata") or {}).get("protocol")
    if declared:
        low, high = declared.get("range", (0.0, 1.0))
        return Protocol(declared["metric"], bool(declared.get("higher_is_better", True)), declared["baseline"],
                        (float(low), float(high)), True)
    first = config["metric_list"][0]
    return Protocol(first["metric"], bool(first.get("higher_is_better", True)), "majority" if closed else "empty",
                    (0.0, 1.0), False)


def is_closed(samples: list[dict[str, Any]]) -> bool:
    """True when every sample's answer is one of a set: multiple choice, or a document with ``options``."""
    return bool(samples) and all(len(s["arguments"]) > 1 or s["doc"].get("options") for s in samples)


def gold_text(sample: dict[str, Any]) -> str:
    """A sample's gold answer as text: the gold choice of a multiple-choice sample, else its target."""
    target = sample["target"]
    if len(sample["arguments"]) > 1 and isinstance(target, int):
        return str(sample["arguments"][target][1]).strip()
    return str(target).strip()


def number_of_choices(sample: dict[str, Any]) -> int:
    if len(sample["arguments"]) > 1:
        return len(sample["arguments"])
    return len(sample["doc"].get("options") or [])


def resolve(protocol: Protocol, samples: list[dict[str, Any]], empty_score: float | None = None) -> float:
    """The baseline's value on this run's samples."""
    if protocol.baseline == "majority":
        counts = Counter(gold_text(s) for s in samples)
        return counts.most_common(1)[0][1] / len(samples)
    if protocol.baseline == "chance":
        return sum(1 / number_of_choices(s) for s in samples) / len(samples)
    if protocol.baseline == "empty":
        if empty_score is None:
            raise ValueError("the empty answer's score is needed for an 'empty' baseline")
        return empty_score
    return float(protocol.baseline)


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` over ``n`` items (a mean in [0, 1] is no wider)."""
    if n <= 0:
        return 0.0, 1.0
    p = min(max(p, 0.0), 1.0)
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


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
    declared: bool

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
    configs = task_configs(tasks_dir)
    empty = runs[EMPTY]
    out = []
    for task in sorted(empty["results"]):
        if task not in configs:
            continue  # a group
        samples = empty["samples"][task]
        protocol = protocol_of(configs[task], is_closed(samples))
        key = f"{protocol.metric},none"
        baseline = resolve(protocol, samples, empty["results"][task].get(key))
        low, high = interval(protocol, baseline, len(samples))
        for (model, args), results in runs.items():
            if task not in results["results"]:
                continue
            out.append(Row(task, f"{model}({args})", protocol.metric, protocol.higher_is_better,
                           float(results["results"][task][key]), baseline, str(protocol.baseline), low, high,
                           len(samples), protocol.declared))
    return out


def table(found: list[Row]) -> str:
    """A plain-text table of ``found``."""
    head = f"{'task':34} {'answerer':27} {'metric':14} {'score':>7} {'baseline':>9} {'95% interval':>15} {'n':>4}  ok"
    lines = [head, "-" * len(head)]
    for r in found:
        kind = r.baseline_kind + ("" if r.declared else "*")
        lines.append(f"{r.task:34} {r.answerer:27} {r.metric:14} {r.score:7.3f} {r.baseline:9.3f} "
                     f"[{r.low:5.3f}, {r.high:5.3f}] {r.n:4d}  {'yes' if r.ok else 'NO'}  {kind}")
    lines.append("* baseline inferred (the task YAML declares no metadata.protocol)")
    return "\n".join(lines)
