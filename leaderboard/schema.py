"""What a submission must be: model metadata, an lm-eval 0.4 results file and optional samples files.

Every check collects its problems as ``(field path, reason)`` pairs; a rejected submission raises
:class:`SubmissionRejected` with all of them, so the submitter can fix everything at once.

* :class:`ModelInfo` - the model card fields; text is stripped of markup (HTML tags and entities, script and
  style elements, Markdown links, control and bidi characters) before it is checked, so nothing a submitter
  types can render as HTML or script in the UI.
* :func:`validate_results` - only our tasks, task versions equal to the shipped ones, each task's prompt
  fields as shipped (a task changed without a version bump is caught), every metric present, finite and in range
  with a numeric stderr (lm-eval records none for a custom aggregation: allowed except on the primary metric),
  the sample count recorded, the lm-eval version recorded; and, given the metadata, the parameter count,
  precision and revision lm-eval recorded agree with it. Sizes are bounded by :class:`Limits`.
* :func:`validate_samples` - a ``samples_TASK_DATE.jsonl`` file: one row per document, unique doc ids,
  per-document metrics finite (and in range for mean-aggregated ones), their mean equal to the results file's.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from .catalog import TaskSpec, shipped_groups

MIB = 2**20
MAX_RESULTS_BYTES = 5 * MIB
MAX_SAMPLES_BYTES = 200 * MIB
MAX_MODEL_ID = 128
MAX_TEXT = 64
MAX_PARAMS = 10**13
PARAMS_TOLERANCE = 0.10  # declared vs counted by lm-eval (tied embeddings and rounding differ a little)
MEAN_TOLERANCE = 1e-6  # |mean of per-document values - results value|

Precision = Literal["float32", "float16", "bfloat16", "int8", "int4", "other"]
ModelType = Literal["pretrained", "fine-tuned", "instruction-tuned", "rl-tuned", "merged", "other"]
PRECISIONS: tuple[str, ...] = Precision.__args__
MODEL_TYPES: tuple[str, ...] = ModelType.__args__
TORCH_DTYPES = {"torch.float32": "float32", "torch.float16": "float16", "torch.bfloat16": "bfloat16",
                "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}

# model_args that change how a run is executed, not what it computes: left out of the config hash.
RUN_ONLY_ARGS = frozenset({
    "pretrained", "revision", "device", "device_map", "batch_size", "max_batch_size", "parallelize",
    "gpu_memory_utilization", "tensor_parallel_size", "data_parallel_size", "max_memory_per_gpu",
    "max_cpu_memory", "offload_folder", "trust_remote_code", "cache_dir", "token", "use_fast_tokenizer",
})
# Task metadata lm-eval records that is not a setting of the run.
RUN_ONLY_METADATA = frozenset({"version", "config_source", "pretrained"})


@dataclass(frozen=True)
class Limits:
    """Size bounds of the files a submission brings (bytes)."""

    results_bytes: int = MAX_RESULTS_BYTES
    samples_bytes: int = MAX_SAMPLES_BYTES


DEFAULT_LIMITS = Limits()


def too_big(size: int, limit: int) -> str:
    return f"file is {size:,} bytes, over the limit of {limit:,}"


class SubmissionRejected(ValueError):
    """A submission that fails validation; ``problems`` lists ``(field path, reason)`` pairs.

    Both parts are passed through :func:`clean_text`: they may quote what the submitter sent.
    """

    def __init__(self, problems: Iterable[tuple[str, str]]):
        self.problems = [(clean_text(str(where)), clean_text(str(why))) for where, why in problems]
        super().__init__(format_problems(self.problems))


def format_problems(problems: Iterable[tuple[str, str]]) -> str:
    """``field: reason; field: reason`` (what ``Entry.reason`` holds)."""
    return "; ".join(f"{where}: {why}" for where, why in problems)


# -- markup ----------------------------------------------------------------------------------------------------

_ELEMENT = re.compile(r"<\s*(script|style|iframe|object|embed|template)\b.*?(?:<\s*/\s*\1\s*>|$)", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"<\s*[/!?]?\s*[A-Za-z][^>]*(?:>|$)", re.S)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)")  # one level of nested ()
_ACTIVE = re.compile(r"[<>`]")


def clean_text(value: Any) -> Any:
    """Text with markup removed: entities decoded, script-like elements dropped with their content, tags and
    Markdown links reduced to their text, ``<>`` and backticks and control/format characters removed,
    whitespace collapsed. Non-strings pass through (the field's type check answers them)."""
    if not isinstance(value, str):
        return value
    for _ in range(3):  # &amp;lt;script&amp;gt; decodes twice
        decoded = html.unescape(value)
        if decoded == value:
            break
        value = decoded
    value = _TAG.sub("", _COMMENT.sub("", _ELEMENT.sub("", value)))
    value = _ACTIVE.sub("", _MD_LINK.sub(r"\1", value))
    value = "".join(" " if ch.isspace() else ch for ch in value if unicodedata.category(ch)[0] != "C" or ch.isspace())
    return " ".join(value.split())


# -- model metadata --------------------------------------------------------------------------------------------

MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
SHA = re.compile(r"[0-9a-f]{7,64}")


def _model_id(value: str) -> str:
    if not MODEL_ID.fullmatch(value):
        raise ValueError(f"must look like ORG/NAME or NAME (letters, digits, '.', '_', '-'), got {value!r}")
    return value


def _revision(value: str) -> str:
    if not SHA.fullmatch(value):
        raise ValueError(f"must be a commit sha, 7 to 64 hex characters, got {value!r}")
    return value


def _lower(value: Any) -> Any:
    return clean_text(value).lower() if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(clean_text), Field(min_length=1, max_length=MAX_TEXT)]


class ModelInfo(BaseModel):
    """Who and what a submission is about."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: Annotated[str, BeforeValidator(clean_text), Field(min_length=1, max_length=MAX_MODEL_ID),
                        AfterValidator(_model_id)]
    revision: Annotated[str, BeforeValidator(_lower), AfterValidator(_revision)]
    precision: Annotated[Precision, BeforeValidator(_lower)]
    params: Annotated[int, Field(gt=0, lt=MAX_PARAMS)]
    license: Text
    model_type: Annotated[ModelType, BeforeValidator(_lower)]
    submitter: Text


def problems_of(error: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """pydantic errors as ``(field path, reason)`` pairs."""
    out = []
    for item in error.errors():
        where = prefix + ".".join(str(part) for part in item["loc"]) if item["loc"] else prefix.rstrip(".")
        reason = "missing" if item["type"] == "missing" else item["msg"].removeprefix("Value error, ")
        out.append((where or "(root)", reason))
    return out


def check_model_info(raw: ModelInfo | Mapping[str, Any]) -> ModelInfo:
    """A :class:`ModelInfo` from a mapping; raises :class:`SubmissionRejected` naming each bad field."""
    if isinstance(raw, ModelInfo):
        return raw
    try:
        return ModelInfo.model_validate(dict(raw))
    except ValidationError as exc:
        raise SubmissionRejected(problems_of(exc)) from None


def display_fields(raw: ModelInfo | Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of a submission as stored even when it is rejected: text cleaned and cut to length,
    ``params`` an int or None."""
    data = raw.model_dump() if isinstance(raw, ModelInfo) else dict(raw)
    out: dict[str, Any] = {}
    for name in ("model_id", "revision", "precision", "license", "model_type", "submitter"):
        value = data.get(name)
        value = "" if value is None else clean_text(str(value))
        out[name] = value[: MAX_MODEL_ID if name == "model_id" else MAX_TEXT]
    params = data.get("params")
    out["params"] = params if isinstance(params, int) and not isinstance(params, bool) and 0 < params < 2**63 else None
    return out


# -- results file ----------------------------------------------------------------------------------------------


class _NSamples(BaseModel):
    model_config = ConfigDict(extra="allow")
    original: int | None = None
    effective: int


class _ResultsLayout(BaseModel):
    """The parts of lm-eval 0.4's ``results_<date>.json`` the leaderboard reads (other keys are kept, unread)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    results: dict[str, dict[str, Any]]
    groups: dict[str, Any] = {}
    group_subtasks: dict[str, list[str]] = {}
    configs: dict[str, dict[str, Any]] = {}
    versions: dict[str, float | str | None] = {}
    n_shot: dict[str, int | None] = Field(default={}, alias="n-shot")
    n_samples: dict[str, _NSamples] = Field(default={}, alias="n-samples")
    config: dict[str, Any] = {}
    lm_eval_version: str | None = None
    chat_template_sha: str | None = None
    system_instruction_sha: str | None = None
    fewshot_as_multiturn: bool | None = None


@dataclass(frozen=True)
class TaskResult:
    version: float
    metrics: dict[str, tuple[float, float | None, int]]  # metric -> (value, stderr, n); stderr None: see below
    num_fewshot: int | None = None


@dataclass(frozen=True)
class ValidatedResults:
    tasks: dict[str, TaskResult]
    lm_eval_version: str
    config: dict[str, Any]  # the evaluation config that decides the scores (see evaluation_config)
    config_hash: str
    model_name: str = ""  # what lm-eval recorded as the model (often a local path)

    @property
    def task_versions(self) -> dict[str, float]:
        return {name: result.version for name, result in sorted(self.tasks.items())}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _version(value: Any) -> float | None:
    try:
        return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _plain(value: Any) -> Any:
    """JSON-stable values for hashing: integral floats as ints, mappings sorted."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def model_args(value: Any) -> dict[str, Any]:
    """lm-eval's ``model_args`` as a dict (it records either a dict or ``"k=v,k=v"``)."""
    if isinstance(value, Mapping):
        return dict(value)
    args = {}
    for pair in str(value or "").split(","):
        if "=" in pair:
            key, val = pair.split("=", 1)
            args[key.strip()] = val.strip()
    return args


def evaluation_config(layout: _ResultsLayout, tasks: Iterable[str]) -> dict[str, Any]:
    """What decides the scores besides the model: backend, model args (minus the model path and run-only
    settings), few-shot count and task metadata (``--metadata``, e.g. a forget split) per task, limit, generation
    kwargs, chat template, system instruction, seeds."""
    config = layout.config
    return _plain({
        "model": config.get("model"),
        "model_args": {k: v for k, v in model_args(config.get("model_args")).items() if k not in RUN_ONLY_ARGS},
        "num_fewshot": {task: layout.n_shot.get(task) for task in sorted(tasks)},
        "task_metadata": {task: _task_metadata(layout.configs.get(task, {})) for task in sorted(tasks)},
        "limit": config.get("limit"),
        "gen_kwargs": config.get("gen_kwargs"),
        "chat_template_sha": layout.chat_template_sha,
        "system_instruction_sha": layout.system_instruction_sha,
        "fewshot_as_multiturn": layout.fewshot_as_multiturn,
        "seeds": [config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")],
    })


def _task_metadata(config: Mapping[str, Any]) -> dict[str, Any]:
    metadata = config.get("metadata")
    return {k: v for k, v in metadata.items() if k not in RUN_ONLY_METADATA} if isinstance(metadata, dict) else {}


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def parse_results(raw: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The JSON object of a results file; :class:`SubmissionRejected` when too big or not a JSON object."""
    if len(raw) > limits.results_bytes:
        raise SubmissionRejected([("results", too_big(len(raw), limits.results_bytes))])
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SubmissionRejected([("results", f"not a JSON file: {exc}")]) from None
    if not isinstance(data, dict):
        raise SubmissionRejected([("results", f"not an lm-eval results object but a JSON {type(data).__name__}")])
    return data


def validate_results(data: Mapping[str, Any], tasks: Mapping[str, TaskSpec], *, meta: ModelInfo | None = None,
                     groups: Iterable[str] | None = None) -> ValidatedResults:
    """Check an lm-eval results dict against ``tasks``; raises :class:`SubmissionRejected` with every problem.

    Group entries (``locus``, ``neurips26``) are allowed and ignored: the leaderboard aggregates itself.
    """
    try:
        layout = _ResultsLayout.model_validate(data)
    except ValidationError as exc:
        raise SubmissionRejected(problems_of(exc)) from None
    problems: list[tuple[str, str]] = []
    our_groups = set(shipped_groups() if groups is None else groups) | {spec.group for spec in tasks.values()}
    file_groups = set(layout.groups) | set(layout.group_subtasks)
    found: dict[str, TaskResult] = {}
    for name, entry in layout.results.items():
        if name in file_groups or name in our_groups:
            if name not in our_groups:
                problems.append((f"results.{name}", "not a group of this benchmark"))
            continue
        spec = tasks.get(name)
        if spec is None:
            problems.append((f"results.{name}", f"not a task of this benchmark (ours: {', '.join(sorted(tasks))})"))
            continue
        result = _check_task(spec, entry, layout, problems)
        if result is not None:
            found[name] = result
    if not found and not any(where.startswith("results.") for where, _ in problems):
        problems.append(("results", f"no task of this benchmark (ours: {', '.join(sorted(tasks))})"))

    version = (layout.lm_eval_version or "").strip()
    if not version:
        problems.append(("lm_eval_version", "missing: the lm-eval version that wrote the file must be recorded"))
    elif not re.fullmatch(r"0\.4(\.\d+.*)?", version):
        problems.append(("lm_eval_version", f"{version!r}: the leaderboard reads results written by lm-eval 0.4"))
    if meta is not None:
        problems += _check_against_meta(layout.config, meta)
    if problems:
        raise SubmissionRejected(problems)
    config = evaluation_config(layout, found)
    return ValidatedResults(found, version, config, config_hash(config), str(data.get("model_name") or ""))


def _check_task(spec: TaskSpec, entry: Mapping[str, Any], layout: _ResultsLayout,
                problems: list[tuple[str, str]]) -> TaskResult | None:
    name, before = spec.name, len(problems)
    version = layout.versions.get(name)
    if version is None:
        problems.append((f"versions.{name}", "missing"))
    elif _version(version) != spec.version:
        problems.append((f"versions.{name}", f"{version!r} differs from the shipped version {spec.version:g}"))
    counts = layout.n_samples.get(name)
    n = counts.effective if counts else 0
    if counts is None:
        problems.append((f"n-samples.{name}", "missing"))
    elif n < 1 or (counts.original is not None and n > counts.original):
        problems.append((f"n-samples.{name}.effective", f"{n} is not between 1 and {counts.original}"))

    config = layout.configs.get(name)
    if config is None:
        problems.append((f"configs.{name}", "missing"))
    else:
        for key, shipped in spec.prompt.items():
            if key in config and _plain(config[key]) != _plain(shipped):
                problems.append((f"configs.{name}.{key}", f"differs from the shipped task {name} v{spec.version:g}: "
                                 "a changed task needs a new version"))
    metrics: dict[str, tuple[float, float | None, int]] = {}
    for key in entry:
        if "," not in key or key.split(",", 1)[0].endswith("_stderr"):
            continue
        metric, filt = key.split(",", 1)
        where = f"results.{name}.{key}"
        if metric not in spec.metrics:
            problems.append((where, f"not a metric of {name} (its metrics: {', '.join(spec.metrics)})"))
        elif filt not in spec.filters:
            problems.append((where, f"filter {filt!r} is not one of {name}'s ({', '.join(spec.filters)})"))
    for metric, rng in spec.metrics.items():
        for filt in spec.filters:
            where = f"results.{name}.{metric},{filt}"
            if f"{metric},{filt}" not in entry:
                problems.append((where, "missing"))
                continue
            value = _number(entry[f"{metric},{filt}"])
            if value is None:
                problems.append((where, f"not a number: {entry[f'{metric},{filt}']!r}"))
            elif not math.isfinite(value):
                problems.append((where, f"not finite: {value}"))
            elif not rng.lo <= value <= rng.hi:
                problems.append((where, f"{value} is outside the metric's range [{rng.lo:g}, {rng.hi:g}]"))
            stderr_key = f"{metric}_stderr,{filt}"
            stderr = _number(entry.get(stderr_key))
            if stderr is None and rng.custom_aggregation and metric != spec.primary:
                pass  # lm-eval has no stderr for a custom aggregation: allowed off the ranked metric
            elif stderr_key not in entry or stderr is None:
                problems.append((f"results.{name}.{stderr_key}", "missing: every metric needs a numeric stderr "
                                 f"(got {entry.get(stderr_key)!r}, lm-eval writes N/A with bootstrap_iters=0)"))
            elif not math.isfinite(stderr) or stderr < 0 or stderr > rng.hi - rng.lo:
                problems.append((f"results.{name}.{stderr_key}", f"{stderr} is not a plausible standard error"))
            if value is not None and filt == spec.filters[0]:
                metrics[metric] = (value, stderr, n)
    if len(problems) > before:
        return None
    return TaskResult(float(spec.version), metrics, layout.n_shot.get(name))


def _check_against_meta(config: Mapping[str, Any], meta: ModelInfo) -> list[tuple[str, str]]:
    """The parameter count, dtype, revision and Hub model id lm-eval recorded, against what the submitter declares
    (a local model path is not compared)."""
    problems = []
    counted = config.get("model_num_parameters")
    if (isinstance(counted, int) and not isinstance(counted, bool) and counted > 0
            and abs(meta.params - counted) > PARAMS_TOLERANCE * counted):
        problems.append(("params", f"{meta.params:,} declared but lm-eval counted {counted:,} parameters"))
    recorded = TORCH_DTYPES.get(str(config.get("model_dtype") or ""))
    if recorded and meta.precision in ("float32", "float16", "bfloat16") and meta.precision != recorded:
        problems.append(("precision", f"{meta.precision} declared but lm-eval ran the model in {recorded}"))
    args = model_args(config.get("model_args"))
    for sha in (str(config.get("model_sha") or "").lower(), str(args.get("revision") or "").lower()):
        if SHA.fullmatch(sha) and not (sha.startswith(meta.revision) or meta.revision.startswith(sha)):
            problems.append(("revision", f"{meta.revision} declared but lm-eval loaded revision {sha}"))
            break
    pretrained = str(args.get("pretrained") or "")
    if "/" in pretrained and MODEL_ID.fullmatch(pretrained) and pretrained.lower() != meta.model_id.lower():
        problems.append(("model_id", f"{meta.model_id} declared but lm-eval evaluated {pretrained}"))
    return problems


# -- samples files ---------------------------------------------------------------------------------------------

SAMPLES_NAME = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl")


@dataclass(frozen=True)
class TaskSamples:
    """Per-document scores of one task: parallel lists, one item per document."""

    task: str
    doc_ids: list[int]
    doc_hashes: list[str | None]
    values: dict[str, list[float]]  # metric -> per-document values


def samples_task(file_name: str, tasks: Iterable[str]) -> str | None:
    """The task of a ``samples_<task>_<date>.jsonl`` name (task names may hold underscores)."""
    match = SAMPLES_NAME.fullmatch(file_name)
    if match and match["task"] in set(tasks):
        return match["task"]
    return None


def validate_samples(file_name: str, raw: bytes, results: ValidatedResults, tasks: Mapping[str, TaskSpec],
                     limits: Limits = DEFAULT_LIMITS) -> TaskSamples:
    """Check one samples file against the validated results; raises :class:`SubmissionRejected`."""
    where = f"samples.{file_name}"
    if len(raw) > limits.samples_bytes:
        raise SubmissionRejected([(where, too_big(len(raw), limits.samples_bytes))])
    task = samples_task(file_name, results.tasks)
    if task is None:
        raise SubmissionRejected([(where, "not named samples_TASK_DATE.jsonl for a task in the results file "
                                   f"({', '.join(sorted(results.tasks))})")])
    spec, expected = tasks[task], results.tasks[task]
    n = next(iter(expected.metrics.values()))[2]
    filt = spec.filters[0]
    problems: list[tuple[str, str]] = []
    doc_ids: list[int] = []
    hashes: list[str | None] = []
    values: dict[str, list[float]] = {metric: [] for metric in spec.metrics}
    seen: set[int] = set()
    for line_no, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append((f"{where}:{line_no}", f"not JSON: {exc}"))
            break
        if not isinstance(row, dict):
            problems.append((f"{where}:{line_no}", "not a JSON object"))
            break
        if row.get("filter", filt) != filt:
            continue
        doc_id = row.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0 or doc_id in seen:
            problems.append((f"{where}:{line_no}.doc_id", f"{doc_id!r} is not a new non-negative integer"))
            break
        seen.add(doc_id)
        if len(seen) > n:
            problems.append((where, f"more than the {n} documents the results file counts"))
            break
        for metric, rng in spec.metrics.items():
            value = _number(row.get(metric))
            lo, hi = (rng.lo, rng.hi) if rng.aggregation == "mean" else (-math.inf, math.inf)
            if value is None or not math.isfinite(value) or not lo <= value <= hi:
                problems.append((f"{where}:{line_no}.{metric}", f"{row.get(metric)!r} is not a finite number in "
                                 f"[{lo:g}, {hi:g}]"))
                break
            values[metric].append(value)
        if problems:
            break
        doc_ids.append(doc_id)
        doc_hash = row.get("doc_hash")
        hashes.append(doc_hash if isinstance(doc_hash, str) else None)
    if not problems and len(doc_ids) != n:
        problems.append((where, f"{len(doc_ids)} documents, but the results file counts {n}"))
    if not problems:
        for metric, (value, _, _) in expected.metrics.items():
            if spec.metrics[metric].aggregation == "mean":
                mean = math.fsum(values[metric]) / len(values[metric])
                if abs(mean - value) > MEAN_TOLERANCE:
                    problems.append((f"{where}.{metric}", f"per-document mean {mean:.6g} differs from the results "
                                     f"file's {value:.6g}"))
    if problems:
        raise SubmissionRejected(problems)
    return TaskSamples(task, doc_ids, hashes, values)
