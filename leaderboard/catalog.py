"""The tasks the leaderboard accepts: read from the lm-eval task YAMLs this package ships.

A task YAML (``task: <name>`` as a string) gives the task's version (``metadata.version``) and metrics
(``metric_list``); a group YAML (``group:`` + a ``task:`` list) gives the resource group a task belongs to.
Metric ranges come from :data:`RANGES`; a metric missing there is only required to be finite.

The primary metric, the one a task is ranked on, is ``metadata.primary_metric`` when the YAML sets it; otherwise,
for ``generate_until`` tasks, the first metric of ``metric_list`` other than ``exact_match`` (exact match of a
free-form generation is all or nothing and mostly zero on short sets, so a graded metric separates models
better); otherwise the first metric of ``metric_list``. For our tasks: ``locus_domain`` -> acc,
``locus_catchline`` -> rougeL.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

INF = math.inf

# Ranges of the aggregated scores of lm-eval's metrics and ours (for mean-aggregated metrics, of each document's
# score too); binary metrics score each document 0 or 1. ``score`` is the per-type primary score of the TAR tasks,
# ``miou`` and ``recall@<IoU>`` their temporal-span metrics; ``*_style`` is RoleBench-Unlearn's role-fidelity
# probability and ``ppl`` its perplexity under the original model.
RANGES: dict[str, tuple[float, float]] = {
    "score": (0.0, 1.0), "miou": (0.0, 1.0), "recall@0.3": (0.0, 1.0), "recall@0.5": (0.0, 1.0),
    "recall@0.7": (0.0, 1.0), "forget_style": (0.0, 1.0), "retain_style": (0.0, 1.0), "forget_rougeL": (0.0, 1.0),
    "retain_rougeL": (0.0, 1.0), "general_rougeL": (0.0, 1.0), "ppl": (1.0, INF),
    "acc": (0.0, 1.0), "acc_norm": (0.0, 1.0), "acc_mutual_info": (0.0, 1.0), "exact_match": (0.0, 1.0),
    "f1": (0.0, 1.0), "mcc": (-1.0, 1.0), "rouge1": (0.0, 1.0), "rouge2": (0.0, 1.0), "rougeL": (0.0, 1.0),
    "rougeLsum": (0.0, 1.0), "bleu": (0.0, 100.0), "chrf": (0.0, 100.0), "ter": (0.0, INF),
    "perplexity": (1.0, INF), "word_perplexity": (1.0, INF), "byte_perplexity": (1.0, INF),
    "bits_per_byte": (0.0, INF),
}
BINARY = frozenset({"acc", "acc_norm", "acc_mutual_info", "exact_match", "recall@0.3", "recall@0.5", "recall@0.7"})
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


class Function(str):
    """The value of an lm-eval ``!function module.name`` tag (the results file holds the function's source)."""


class _TaskLoader(yaml.SafeLoader):
    """SafeLoader that reads lm-eval's ``!function`` tags as :class:`Function` strings."""


_TaskLoader.add_constructor("!function", lambda loader, node: Function(loader.construct_scalar(node)))


def load_yaml(path: Path, _seen: tuple[Path, ...] = ()) -> dict:
    """A task or group YAML with its ``include:`` files merged in as lm-eval does (the includer's keys win)."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_TaskLoader)
    if not isinstance(data, dict):
        return {}
    includes = data.pop("include", None) or []
    merged: dict = {}
    for name in [includes] if isinstance(includes, str) else includes:
        included = (path.parent / name).resolve()
        if included in _seen:
            raise ValueError(f"{path}: include cycle through {included}")
        merged.update(load_yaml(included, (*_seen, path.resolve())))
    return merged | data


def primary_metric(config: dict, metrics: list[str]) -> str:
    """The metric a task is ranked on (see the module docstring for the rule)."""
    declared = (config.get("metadata") or {}).get("primary_metric")
    if declared:
        if declared not in metrics:
            raise ValueError(f"task {config.get('task')}: primary_metric {declared!r} is not in its metric_list")
        return declared
    if config.get("output_type") == "generate_until":
        graded = [m for m in metrics if m != "exact_match"]
        if graded:
            return graded[0]
    return metrics[0]


def read_tasks(tasks_dir: Path) -> dict[str, TaskSpec]:
    """Every task defined by the YAMLs under ``tasks_dir``."""
    configs = {path: load_yaml(path) for path in sorted(tasks_dir.rglob("*.yaml"))}
    parent: dict[str, str] = {}
    for config in configs.values():
        if isinstance(config.get("group"), str) and isinstance(config.get("task"), list):
            for member in config["task"]:
                if isinstance(member, str):
                    parent[member] = config["group"]
    tasks: dict[str, TaskSpec] = {}
    for path, config in configs.items():
        name = config.get("task")
        if not isinstance(name, str) or "group" in config:
            continue
        metric_list = [m for m in config.get("metric_list") or [] if isinstance(m, dict) and "metric" in m]
        metric_list = metric_list or [{"metric": m} for m in DEFAULT_METRICS.get(config.get("output_type"), ())]
        if not metric_list:
            raise ValueError(f"{path}: task {name} has no metric_list")
        metrics = {}
        for item in metric_list:
            metric = str(item["metric"])
            lo, hi = RANGES.get(metric, (-INF, INF))
            aggregation = item.get("aggregation", "mean")
            metrics[metric] = MetricSpec(lo, hi, bool(item.get("higher_is_better", True)), str(aggregation),
                                         metric in BINARY, isinstance(aggregation, Function))
        version = (config.get("metadata") or {}).get("version")
        if not isinstance(version, int | float) or isinstance(version, bool):
            raise ValueError(f"{path}: task {name} needs a numeric metadata.version")
        filters = tuple(str(f["name"]) for f in config.get("filter_list") or [] if isinstance(f, dict)) or ("none",)
        tasks[name] = TaskSpec(name=name, version=float(version), group=parent.get(name, path.parent.name),
                               metrics=metrics, primary=primary_metric(config, list(metrics)), filters=filters,
                               output_type=str(config.get("output_type", "")),
                               source=str(path.relative_to(tasks_dir)),
                               prompt={k: config[k] for k in PROMPT_FIELDS
                                       if k in config and not isinstance(config[k], Function)})
    return tasks


def shipped_tasks() -> dict[str, TaskSpec]:
    """The tasks of this package's lm-eval folder (``neurips26.tasks.TASKS_DIR``), by name."""
    return dict(_shipped_tasks())


@functools.cache
def _shipped_tasks() -> dict[str, TaskSpec]:
    from neurips26.tasks import TASKS_DIR

    return read_tasks(TASKS_DIR)


def shipped_groups() -> dict[str, list[str]]:
    """Group name -> member names (tasks or groups), from the group YAMLs."""
    return {name: list(members) for name, members in _shipped_groups().items()}


@functools.cache
def _shipped_groups() -> dict[str, list[str]]:
    from neurips26.tasks import TASKS_DIR

    groups = {}
    for path in sorted(TASKS_DIR.rglob("*.yaml")):
        config = load_yaml(path)
        if isinstance(config.get("group"), str) and isinstance(config.get("task"), list):
            groups[config["group"]] = [t for t in config["task"] if isinstance(t, str)]
    return groups
