"""Checks of an lm-eval results file and its samples files, read by :mod:`neurips26.results`.

* :func:`validate_results` - only our tasks, each with a protocol, versions equal to the shipped ones, each task's
  prompt fields as shipped (a task changed without a version bump is caught), every metric present, finite and in
  its registered range, the sample count recorded (and equal to the split's size when the board holds the built
  folder the run read), the lm-eval version recorded; and, given the metadata, the
  parameter count, precision and revision lm-eval recorded agree with it. How each task's run differs from its
  protocol (``--limit``, few-shot, chat template, task settings, demo data) is kept as ``unranked`` reasons.

The samples are checked by :mod:`.recompute`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from neurips26.tasks.protocol import NOT_SETTINGS, deviations

from neurips26 import settings
from neurips26.results import Run, TaskRun, number, parse_run

from .catalog import TaskSpec
from .modelinfo import MODEL_ID, SHA, TORCH_DTYPES, ModelInfo, SubmissionRejected

# model_args that change how a run is executed, not what it computes: left out of the config hash.
RUN_ONLY_ARGS = frozenset({
    "pretrained", "revision", "device", "device_map", "batch_size", "max_batch_size", "parallelize",
    "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size", "max_memory_per_gpu",
    "max_cpu_memory", "offload_folder", "trust_remote_code", "cache_dir", "token", "use_fast_tokenizer",
})


@dataclass(frozen=True)
class TaskResult:
    version: float
    metrics: dict[str, tuple[float, float | None, int]]  # metric -> (value, stderr, n)
    num_fewshot: int | None = None


@dataclass(frozen=True)
class ValidatedResults:
    tasks: dict[str, TaskResult]
    lm_eval_version: str
    config: dict[str, Any]  # the evaluation config that decides the scores (see evaluation_config)
    config_hash: str
    model_name: str = ""  # what lm-eval recorded as the model (often a local path)
    run: Run | None = None
    unranked: dict[str, list[str]] = field(default_factory=dict)  # task -> how its run differs from the protocol

    @property
    def task_versions(self) -> dict[str, float]:
        return {name: result.version for name, result in sorted(self.tasks.items())}

    @property
    def data_digest(self) -> dict[str, str]:
        """task -> the manifest sha256 of the data the run read ("" when unknown)."""
        if self.run is None:
            return {}
        return {name: str((self.run.tasks[name].data or {}).get("manifest_sha256") or "") for name in self.tasks}


def _plain(value: Any) -> Any:
    """JSON-stable values for hashing: integral floats as ints, mappings sorted."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def evaluation_config(run: Run, tasks: Iterable[str]) -> dict[str, Any]:
    """What decides the scores besides the model: backend, model args (minus the model path and run-only
    settings), few-shot count and task settings per task, limit, generation kwargs, chat template, system
    instruction, seeds."""
    config = run.config
    return _plain({
        "model": config.get("model"),
        "model_args": {k: v for k, v in run.model_args.items() if k not in RUN_ONLY_ARGS},
        "num_fewshot": {task: run.tasks[task].num_fewshot for task in sorted(tasks)},
        "task_metadata": {task: {k: v for k, v in run.tasks[task].metadata.items() if k not in NOT_SETTINGS}
                          for task in sorted(tasks)},
        "limit": config.get("limit"),
        "gen_kwargs": config.get("gen_kwargs"),
        "chat_template_sha": run.chat_template_sha,
        "system_instruction_sha": run.system_instruction_sha,
        "fewshot_as_multiturn": run.fewshot_as_multiturn,
        "seeds": [config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")],
    })


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def _version(value: Any) -> float | None:
    try:
        return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def validate_results(data: Mapping[str, Any] | Run, tasks: Mapping[str, TaskSpec], *, meta: ModelInfo | None = None,
                     groups: Iterable[str] = ()) -> ValidatedResults:
    """Check a results file against ``tasks``; raises :class:`SubmissionRejected` with every problem.

    Group entries are allowed and ignored: the leaderboard aggregates itself.
    """
    run = data if isinstance(data, Run) else parse_run(data)
    problems: list[tuple[str, str]] = []
    our_groups = set(groups) | {spec.group for spec in tasks.values()}
    found: dict[str, TaskResult] = {}
    unranked: dict[str, list[str]] = {}
    for name in run.groups:
        if name not in our_groups:
            problems.append((f"results.{name}", "not a group of this benchmark"))
    for name, task in run.tasks.items():
        if name in our_groups:
            continue
        spec = tasks.get(name)
        if spec is None:
            problems.append((f"results.{name}", f"not a task of this benchmark (ours: {', '.join(sorted(tasks))})"))
            continue
        if spec.problem:
            problems.append((f"tasks.{name}", f"cannot be ranked: {spec.problem}"))
            continue
        result = _check_task(spec, task, problems)
        if result is not None:
            found[name] = result
            assert spec.protocol is not None
            reasons = deviations(run, task, spec.protocol)
            if reasons:
                unranked[name] = reasons
    if not any(name in tasks for name in run.tasks) and not any(where.startswith(("results.", "tasks."))
                                                                  for where, _ in problems):
        problems.append(("results", f"no task of this benchmark (ours: {', '.join(sorted(tasks))})"))
    version = (run.lm_eval_version or "").strip()
    if not version:
        problems.append(("lm_eval_version", "missing: the lm-eval version that wrote the file must be recorded"))
    elif not re.fullmatch(r"0\.4(\.\d+.*)?", version):
        problems.append(("lm_eval_version", f"{version!r}: the leaderboard reads results written by lm-eval 0.4"))
    if meta is not None:
        problems += _check_against_meta(run, meta)
    if problems:
        raise SubmissionRejected(problems)
    config = evaluation_config(run, found)
    return ValidatedResults(found, version, config, config_hash(config), run.model_name, run, unranked)


def built_split_size(data: Mapping[str, Any] | None, split: str) -> int | None:
    """The number of documents of ``split`` in the built folder the run says it read (its data provenance), when
    that folder is under :func:`neurips26.settings.data_root` with the same manifest; None otherwise."""
    if not data or not data.get("resource") or not data.get("config"):
        return None
    manifest = settings.data_root() / str(data["resource"]) / settings.MANIFEST
    try:
        raw = manifest.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(raw).hexdigest() != data.get("manifest_sha256"):
        return None
    shards = (json.loads(raw).get("configs") or {}).get(str(data["config"]), {}).get(split)
    return None if shards is None else sum(int(shard.get("rows", 0)) for shard in shards)


def _check_task(spec: TaskSpec, task: TaskRun, problems: list[tuple[str, str]]) -> TaskResult | None:
    name, before = spec.name, len(problems)
    if task.version is None:
        problems.append((f"versions.{name}", "missing"))
    elif _version(task.version) != spec.version:
        problems.append((f"versions.{name}", f"{task.version!r} differs from the shipped version {spec.version:g}"))
    n = task.n_effective or 0
    if task.n_effective is None:
        problems.append((f"n-samples.{name}", "missing"))
    elif n < 1 or (task.n_original is not None and n > task.n_original):
        problems.append((f"n-samples.{name}.effective", f"{n} is not between 1 and {task.n_original}"))
    size = built_split_size(task.data, spec.protocol.split) if spec.protocol is not None else None
    if size is not None and task.n_original != size:
        problems.append((f"n-samples.{name}.original", f"{task.n_original}, but the {spec.protocol.split} split of "
                         f"the data the run says it read has {size} documents"))
    if not task.config:
        problems.append((f"configs.{name}", "missing"))
    for key, shipped in spec.prompt.items():
        if key in task.config and _plain(task.config[key]) != _plain(shipped):
            problems.append((f"configs.{name}.{key}", f"differs from the shipped task {name} v{spec.version:g}: "
                             "a changed task needs a new version"))
    for key in task.values:
        metric, filt = key.split(",", 1)
        if metric not in spec.metrics:
            problems.append((f"results.{name}.{key}",
                             f"not a metric of {name} (its metrics: {', '.join(spec.metrics)})"))
        elif filt not in spec.filters:
            problems.append((f"results.{name}.{key}", f"filter {filt!r} is not one of {name}'s "
                             f"({', '.join(spec.filters)})"))
    metrics: dict[str, tuple[float, float | None, int]] = {}
    for metric, rng in spec.metrics.items():
        where = f"results.{name}.{metric},{spec.filters[0]}"
        key = f"{metric},{spec.filters[0]}"
        if key not in task.values:
            problems.append((where, "missing"))
            continue
        value = number(task.values[key])
        if value is None:
            problems.append((where, f"not a number: {task.values[key]!r}"))
        elif not math.isfinite(value):
            problems.append((where, f"not finite: {value}"))
        elif not rng.lo <= value <= rng.hi:
            problems.append((where, f"{value} is outside the metric's range [{rng.lo:g}, {rng.hi:g}]"))
        else:
            metrics[metric] = (value, number(task.stderr.get(key)), n)
    if len(problems) > before:
        return None
    return TaskResult(float(spec.version), metrics, task.num_fewshot)


def _check_against_meta(run: Run, meta: ModelInfo) -> list[tuple[str, str]]:
    """The parameter count, dtype, revision and Hub model id lm-eval recorded, against what the submitter declares
    (a local model path is not compared)."""
    problems = []
    counted = run.num_parameters
    if counted is not None and counted > 0 and abs(meta.params - counted) > 0.10 * counted:
        problems.append(("params", f"{meta.params:,} declared but lm-eval counted {counted:,} parameters"))
    recorded = TORCH_DTYPES.get(run.dtype or "")
    if recorded and meta.precision in ("float32", "float16", "bfloat16") and meta.precision != recorded:
        problems.append(("precision", f"{meta.precision} declared but lm-eval ran the model in {recorded}"))
    for sha in ((run.model_sha or "").lower(), str(run.model_args.get("revision") or "").lower()):
        if SHA.fullmatch(sha) and not (sha.startswith(meta.revision) or meta.revision.startswith(sha)):
            problems.append(("revision", f"{meta.revision} declared but lm-eval loaded revision {sha}"))
            break
    pretrained = str(run.model_args.get("pretrained") or "")
    if "/" in pretrained and MODEL_ID.fullmatch(pretrained) and pretrained.lower() != meta.model_id.lower():
        problems.append(("model_id", f"{meta.model_id} declared but lm-eval evaluated {pretrained}"))
    return problems
