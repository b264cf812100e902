"""The tasks the leaderboard accepts: read from the lm-eval task YAMLs this package ships, and the evaluators
outside lm-eval that register their protocol (:func:`registered_tasks`).

A task YAML (``task: <name>`` as a string) gives the task's version (``metadata.version``), its protocol
(``metadata.protocol``, see :mod:`neurips26.tasks.protocol`) and metrics (``metric_list``); a group YAML (``group:`` +
a ``task:`` list) gives the resource group a task belongs to. Each metric must be registered in
:data:`.metrics.METRICS` (its range and how it is recomputed from samples); the metric a task is ranked on is its
protocol's ``metric``. A task without a valid protocol, or reporting an unregistered metric, is listed with the
reason (``TaskSpec.problem``): submissions holding it are rejected with that reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurips26.tasks import TASKS_DIR
from neurips26.tasks.protocol import Function, Protocol, ProtocolError, group_members, parse_protocol, task_configs

from neurips26.errors import UnknownNameError
from neurips26.protocol import PROTOCOLS

from .metrics import METRICS, mean

# lm-eval's metrics for a task YAML without metric_list.
DEFAULT_METRICS = {"multiple_choice": ("acc", "acc_norm"), "loglikelihood": ("perplexity", "acc"),
                   "generate_until": ("exact_match",),
                   "loglikelihood_rolling": ("word_perplexity", "byte_perplexity", "bits_per_byte")}
# Fields of a task YAML that lm-eval copies verbatim into the results file's ``configs``: what a submission's
# task must match, so that a task changed without a version bump is caught.
PROMPT_FIELDS = ("output_type", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "doc_to_choice",
                 "target_delimiter", "generation_kwargs")


@dataclass(frozen=True)
class MetricSpec:
    lo: float
    hi: float
    higher_is_better: bool = True
    aggregation: str = "mean"
    binary: bool = False  # every document scores 0 or 1 (a proportion: Wilson intervals apply)
    custom_aggregation: bool = False  # a !function aggregation: lm-eval records no stderr for it (N/A)
    aggregate: Callable[[list[Any]], float] | None = None  # corpus-level aggregate; None: the mean over documents
    scalar: bool = True  # each document's value is a number (else e.g. a (gold, predicted) pair)
    per_document: tuple[float, float] | None = None  # bounds of a document's value when they differ from lo..hi

    def combine(self, values: list[Any]) -> float:
        """The task's score from its documents' values (the mean unless the metric registers an aggregate)."""
        return (self.aggregate or mean)(values)


@dataclass(frozen=True)
class TaskSpec:
    name: str
    version: float
    group: str  # the resource group, e.g. "locus"
    metrics: dict[str, MetricSpec]
    primary: str
    filters: tuple[str, ...] = ("none",)  # lm-eval's filter names; results keys are "<metric>,<filter>"
    output_type: str = ""
    source: str = ""  # the YAML file, relative to the tasks folder
    prompt: dict[str, Any] = field(default_factory=dict)  # PROMPT_FIELDS the YAML sets
    protocol: Protocol | None = None
    problem: str | None = None  # why submissions of this task cannot be accepted (no protocol, unknown metric)
    process_results: str | None = None  # "module.function" of the task's own scoring, relative to its folder
    folder: Path | None = None  # the folder of the YAML


def metric_specs(metric_list: list[dict[str, Any]]) -> tuple[dict[str, MetricSpec], list[str]]:
    """The :class:`MetricSpec` of each ``metric_list`` item (lm-eval's YAML form), and the problems of those whose
    metric is not registered in :data:`.metrics.METRICS`."""
    metrics, problems = {}, []
    for item in metric_list:
        metric = str(item["metric"])
        try:
            info = METRICS.info(metric)
        except UnknownNameError as exc:
            problems.append(f"metric {metric}: {exc} (register it in neurips26.metric.METRICS)")
            continue
        aggregation = item.get("aggregation", "mean")
        metrics[metric] = MetricSpec(*info["range"], bool(item.get("higher_is_better", info["higher_is_better"])),
                                     str(aggregation), bool(info["binary"]), isinstance(aggregation, Function),
                                     info.get("aggregate"), bool(info.get("scalar", True)),
                                     info.get("per_document_range"))
    return metrics, problems


def read_tasks(tasks_dir: Path) -> dict[str, TaskSpec]:
    """Every task defined by the YAMLs under ``tasks_dir``."""
    configs = task_configs(tasks_dir)
    parent = {member: group for group, members in group_members(configs).items() for member in members}
    tasks: dict[str, TaskSpec] = {}
    for path, config in configs.items():
        name = config.get("task")
        if not isinstance(name, str) or "group" in config:
            continue
        metric_list = [m for m in config.get("metric_list") or [] if isinstance(m, dict) and "metric" in m]
        metric_list = metric_list or [{"metric": m} for m in DEFAULT_METRICS.get(config.get("output_type"), ())]
        if not metric_list:
            raise ProtocolError(f"{path}: task {name} has no metric_list")
        metrics, problems = metric_specs(metric_list)
        metadata = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
        version = metadata.get("version")
        if not isinstance(version, int | float) or isinstance(version, bool):
            raise ProtocolError(f"{path}: task {name} needs a numeric metadata.version")
        protocol = None
        try:
            protocol = parse_protocol(metadata.get("protocol"), f"{path.relative_to(tasks_dir)} (task {name})")
        except ProtocolError as exc:
            problems.append(str(exc))
        if protocol is not None and protocol.metric not in metrics:
            problems.append(f"protocol metric {protocol.metric!r} is not in the task's metric_list")
        filters = tuple(str(f["name"]) for f in config.get("filter_list") or [] if isinstance(f, dict)) or ("none",)
        process = config.get("process_results")
        primary = protocol.metric if protocol is not None and protocol.metric in metrics else next(iter(metrics), "")
        tasks[name] = TaskSpec(name=name, version=float(version), group=parent.get(name, path.parent.name),
                               metrics=metrics, primary=primary, filters=filters,
                               output_type=str(config.get("output_type", "")),
                               source=str(path.relative_to(tasks_dir)),
                               prompt={k: config[k] for k in PROMPT_FIELDS
                                       if k in config and not isinstance(config[k], Function)},
                               protocol=protocol, problem="; ".join(problems) or None,
                               process_results=str(process) if isinstance(process, Function) else None,
                               folder=path.parent)
    return tasks


def registered_tasks() -> dict[str, TaskSpec]:
    """The evaluators outside lm-eval that register a protocol in :data:`neurips26.protocol.PROTOCOLS` (their
    registration gives the group, output type, version and metrics; runs written by :mod:`neurips26.runfiles`)."""
    tasks = {}
    for name, protocol in PROTOCOLS.items():
        info = PROTOCOLS.info(name)
        metrics, problems = metric_specs([{"metric": m, "higher_is_better": protocol.higher_is_better}
                                          for m in info.get("metrics", (protocol.metric,))])
        if protocol.metric not in metrics:
            problems.append(f"protocol metric {protocol.metric!r} is not among the registered metrics")
        group = str(info.get("group") or "")
        if not group or group == name:  # a group named as its task would hide the task's results entry
            problems.append(f"registered without a group of its own (group={group!r}): register it with "
                            "group=<board>, a name other than the task's")
        tasks[name] = TaskSpec(name=name, version=float(info.get("version", 1.0)), group=group or f"{name}-board",
                               metrics=metrics, primary=protocol.metric, output_type=str(info.get("output_type", "")),
                               source="registered", protocol=protocol, problem="; ".join(problems) or None)
    return tasks


def shipped_tasks() -> dict[str, TaskSpec]:
    """The tasks of this package's lm-eval folder (``neurips26.tasks.TASKS_DIR``) and the registered evaluators
    (:func:`registered_tasks`), by name."""
    return dict(_shipped_tasks())


@functools.cache
def _shipped_tasks() -> dict[str, TaskSpec]:
    return {**registered_tasks(), **read_tasks(TASKS_DIR)}


def shipped_groups() -> dict[str, list[str]]:
    """Group name -> member names (tasks or groups), from the group YAMLs."""
    return {name: list(members) for name, members in _shipped_groups().items()}


@functools.cache
def _shipped_groups() -> dict[str, list[str]]:
    return group_members(task_configs(TASKS_DIR))


def read_groups(tasks_dir: Path) -> dict[str, list[str]]:
    """Group name -> member names (tasks or groups), from the group YAMLs under ``tasks_dir``."""
    return group_members(task_configs(tasks_dir))
