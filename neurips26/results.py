"""The one reader of lm-eval's output: ``results_<date>.json`` and ``samples_<task>_<date>.jsonl`` as typed objects.

lm-eval 0.4 writes a results file (per task: metric values ``"<metric>,<filter>"`` and their stderr, the
sample counts, the task's config with its ``metadata``, and the run's settings) and, with ``--log_samples``, one
samples file per task (one JSON object per document and filter). :func:`read_run` reads both into a :class:`Run`;
:func:`parse_run` does the same from already-loaded data (what the leaderboard does with submitted bytes).

``model_args`` (a ``"k=v,k=v"`` string or a dict, depending on how lm-eval was called) is parsed here only.
Everything that reads results files (``neurips26 eval``, the leaderboard, the Space) goes through this module.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jsonfile
from .errors import UserError

SAMPLES_NAME = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl")
# Keys of a samples row that are not per-document metric values.
SAMPLE_FIELDS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                           "doc_hash", "prompt_hash", "target_hash"})


class ResultsError(UserError):
    """A results or samples file that is not what lm-eval 0.4 writes; ``problems`` are (field, reason) pairs."""

    def __init__(self, problems: Iterable[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{where}: {why}" for where, why in self.problems))


@dataclass(frozen=True)
class Sample:
    """One document of a samples file (one filter)."""

    doc_id: int
    doc: dict[str, Any]
    target: Any
    arguments: Any
    resps: Any
    filtered_resps: Any
    values: dict[str, Any]  # metric -> the per-document value lm-eval recorded
    doc_hash: str | None = None
    filter: str = "none"

    def responses(self) -> list[Any]:
        """The filtered responses as the task's scorer received them: lm-eval's samples file writes a
        loglikelihood response ``(logprob, is_greedy)`` as two strings; generations stay text."""
        resps = self.filtered_resps if isinstance(self.filtered_resps, list) else [self.filtered_resps]
        return [_as_scored(r) for r in resps]

    def loglikelihoods(self) -> list[float] | None:
        """The log-likelihood of each choice of a multiple-choice document, None for other documents."""
        try:
            return [float(resp[0]) for resp in self.responses()]
        except (TypeError, ValueError, IndexError, KeyError):
            return None


def _as_scored(resp: Any) -> Any:
    if isinstance(resp, list | tuple) and len(resp) == 2 and all(isinstance(v, str) for v in resp):
        try:
            return float(resp[0]), resp[1] == "True"
        except ValueError:
            return resp
    return resp


@dataclass(frozen=True)
class TaskRun:
    """One task of a run: its scores, sample counts, config and (when read) samples."""

    name: str
    version: Any  # as recorded (a number or a string); None when missing
    values: dict[str, Any]  # "<metric>,<filter>" -> value as recorded (a number, "N/A", ...)
    stderr: dict[str, Any]  # "<metric>,<filter>" -> stderr as recorded
    n_original: int | None
    n_effective: int | None
    num_fewshot: int | None
    config: dict[str, Any]  # configs[task] as lm-eval recorded it
    task_hash: str | None = None
    samples: list[Sample] | None = None  # None: no samples file was read for this task

    @property
    def metadata(self) -> dict[str, Any]:
        """``configs[task]["metadata"]`` (the YAML's metadata plus ``--metadata`` arguments)."""
        metadata = self.config.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def protocol(self) -> dict[str, Any] | None:
        """The task's ``metadata.protocol`` as recorded, None when the task had none."""
        protocol = self.metadata.get("protocol")
        return protocol if isinstance(protocol, dict) else None

    @property
    def data(self) -> dict[str, Any] | None:
        """What data the task read (``metadata.data``: resource, config, version, manifest_sha256, demo)."""
        data = self.metadata.get("data")
        return data if isinstance(data, dict) else None

    def value(self, metric: str, filt: str = "none") -> float | None:
        """The recorded value of ``metric`` as a float, None when absent or not a number."""
        return number(self.values.get(f"{metric},{filt}"))


@dataclass(frozen=True)
class Run:
    """One lm-eval run: what was evaluated, how, and its per-task results."""

    tasks: dict[str, TaskRun]
    groups: list[str]  # group entries of the results (aggregates lm-eval computed)
    model: str | None  # the lm-eval backend (hf, vllm, ...)
    model_name: str
    model_args: dict[str, Any]
    lm_eval_version: str | None
    limit: Any
    chat_template: str | None
    chat_template_sha: str | None
    system_instruction_sha: str | None
    fewshot_as_multiturn: bool | None
    config: dict[str, Any]  # lm-eval's "config" block (model, model_args, seeds, limit, gen_kwargs...)
    raw: dict[str, Any] = field(repr=False, default_factory=dict)  # the whole results object

    @property
    def chat_applied(self) -> bool:
        """Whether the run applied a chat template."""
        return bool(self.chat_template) or bool(self.chat_template_sha)

    @property
    def num_parameters(self) -> int | None:
        count = self.config.get("model_num_parameters")
        return count if isinstance(count, int) and not isinstance(count, bool) else None

    @property
    def dtype(self) -> str | None:
        value = self.config.get("model_dtype")
        return str(value) if value else None

    @property
    def model_sha(self) -> str | None:
        value = self.config.get("model_sha")
        return str(value) if value else None


def number(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number (not a bool), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def model_args(value: Any) -> dict[str, Any]:
    """lm-eval's ``model_args`` as a dict (it records either a dict or ``"k=v,k=v"``); strict pairs are not
    required here (see :func:`parse_model_args` for the command line)."""
    if isinstance(value, Mapping):
        return dict(value)
    pairs = (p.split("=", 1) for p in str(value or "").split(",") if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs}


def parse_model_args(text: str | None) -> dict[str, Any]:
    """``key=value,key=value`` as typed on a command line; :class:`UserError` names a malformed pair."""
    args: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in (text or "").split(","))):
        if "=" not in pair:
            raise UserError(f"--model-args: {pair!r} is not key=value")
        key, value = pair.split("=", 1)
        args[key.strip()] = value.strip()
    return args


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_run(data: Mapping[str, Any], samples: Mapping[str, list[Sample]] | None = None) -> Run:
    """A :class:`Run` from a results object (and parsed samples by task); :class:`ResultsError` when the
    object lacks the parts every lm-eval 0.4 results file has."""
    problems: list[tuple[str, str]] = []
    results = data.get("results")
    if not isinstance(results, dict):
        raise ResultsError([("results", "missing: not an lm-eval results file")])
    groups = set(data.get("groups") or {}) | set(data.get("group_subtasks") or {})
    configs = data.get("configs") if isinstance(data.get("configs"), dict) else {}
    n_shot = data.get("n-shot") if isinstance(data.get("n-shot"), dict) else {}
    n_samples = data.get("n-samples") if isinstance(data.get("n-samples"), dict) else {}
    versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
    hashes = data.get("task_hashes") if isinstance(data.get("task_hashes"), dict) else {}
    tasks: dict[str, TaskRun] = {}
    for name, entry in results.items():
        if name in groups:
            continue
        if not isinstance(entry, dict):
            problems.append((f"results.{name}", "not an object"))
            continue
        counts = n_samples.get(name) if isinstance(n_samples.get(name), dict) else {}
        config = configs.get(name) if isinstance(configs.get(name), dict) else {}
        values = {k: v for k, v in entry.items() if "," in k and not k.split(",", 1)[0].endswith("_stderr")}
        stderr = {k.replace("_stderr,", ",", 1): v for k, v in entry.items()
                  if "," in k and k.split(",", 1)[0].endswith("_stderr")}
        tasks[name] = TaskRun(name, versions.get(name), values, stderr, _int(counts.get("original")),
                              _int(counts.get("effective")), _int(n_shot.get(name)), config,
                              hashes.get(name) if isinstance(hashes.get(name), str) else None,
                              (samples or {}).get(name))
    if problems:
        raise ResultsError(problems)
    config = data.get("config") if isinstance(data.get("config"), dict) else {}

    def text(key: str) -> str | None:
        return str(data[key]) if data.get(key) is not None else None

    return Run(tasks=tasks, groups=sorted(groups & set(results)),
               model=str(config["model"]) if config.get("model") else None,
               model_name=str(data.get("model_name") or ""), model_args=model_args(config.get("model_args")),
               lm_eval_version=text("lm_eval_version"), limit=config.get("limit"),
               chat_template=text("chat_template"), chat_template_sha=text("chat_template_sha"),
               system_instruction_sha=text("system_instruction_sha"),
               fewshot_as_multiturn=data.get("fewshot_as_multiturn") if isinstance(
                   data.get("fewshot_as_multiturn"), bool) else None,
               config=config, raw=dict(data))


def parse_samples(raw: bytes, where: str = "samples") -> list[Sample]:
    """The rows of a samples file; :class:`ResultsError` names the first bad line."""
    try:
        lines = jsonfile.lines(raw, where)
    except jsonfile.JsonFileError as exc:
        raise ResultsError([(exc.where, exc.why)]) from None
    return [sample_from_row(row, f"{where}:{line_no}") for line_no, row in lines]


def sample_from_row(row: Any, where: str = "sample") -> Sample:
    """One samples-file row (a dict, as lm-eval logs it) as a :class:`Sample`; :class:`ResultsError` names a
    bad row."""
    if not isinstance(row, dict):
        raise ResultsError([(where, "not a JSON object")])
    doc_id = row.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        raise ResultsError([(f"{where}.doc_id", f"{doc_id!r} is not a non-negative integer")])
    doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    return Sample(doc_id, doc, row.get("target"), row.get("arguments"), row.get("resps"), row.get("filtered_resps"),
                  {k: v for k, v in row.items() if k not in SAMPLE_FIELDS},
                  row["doc_hash"] if isinstance(row.get("doc_hash"), str) else None, str(row.get("filter", "none")))


def samples_task(file_name: str, tasks: Iterable[str]) -> str | None:
    """The task of a ``samples_<task>_<date>.jsonl`` name (task names may hold underscores)."""
    match = SAMPLES_NAME.fullmatch(file_name)
    if match and match["task"] in set(tasks):
        return match["task"]
    return None


def read_run(path: Path | str, samples: Iterable[Path | str] | None = None) -> Run:
    """A run from a results file, or from a folder holding one (the newest ``results_*.json`` under it).

    Samples files are ``samples`` when given, else the ``samples_<task>_*.jsonl`` files beside the results file
    (the newest per task). :class:`UserError` when there is no results file.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("results_*.json"), key=lambda p: p.name)
        if not found:
            raise UserError(f"{path}: no lm-eval results file (results_*.json) in this folder")
        path = found[-1]
    if not path.is_file():
        raise UserError(f"results file {path} not found")
    try:
        data = jsonfile.read(path)
    except jsonfile.JsonFileError as exc:
        raise ResultsError([(exc.where, exc.why)]) from None
    if not isinstance(data, dict):
        raise ResultsError([(str(path), "not an lm-eval results object")])
    tasks = list((data.get("results") or {}) if isinstance(data.get("results"), dict) else {})
    files = [Path(p) for p in samples] if samples is not None else sorted(path.parent.glob("samples_*.jsonl"))
    by_task: dict[str, list[Sample]] = {}
    for file in files:  # sorted by name, so the newest file of a task wins
        task = samples_task(file.name, tasks)
        if task is not None:
            if file.stat().st_size > jsonfile.MAX_BYTES:
                raise ResultsError([(file.name, jsonfile.too_big(file.stat().st_size, jsonfile.MAX_BYTES))])
            by_task[task] = parse_samples(file.read_bytes(), file.name)
    return parse_run(data, by_task)


def summarise(run: Run) -> list[dict[str, Any]]:
    """(task, metric, filter, value, stderr, n) rows of a run, for printing."""
    rows = []
    for name, task in run.tasks.items():
        for key, value in task.values.items():
            value = number(value)
            if value is None:
                continue
            metric, filt = key.split(",", 1)
            rows.append({"task": name, "metric": metric, "filter": filt, "value": value,
                         "stderr": number(task.stderr.get(key)), "n": task.n_effective})
    return rows


def responses_digest(run: Run) -> str | None:
    """sha256 of every task's responses (task, doc id, filtered responses), None without samples: two runs with
    the same digest gave the same answers to the same documents (a copied results file)."""
    digest = hashlib.sha256()
    found = False
    for name in sorted(run.tasks):
        for sample in sorted(run.tasks[name].samples or [], key=lambda s: (s.doc_id, s.filter)):
            found = True
            digest.update(json.dumps([name, sample.doc_id, sample.filter, sample.doc_hash, sample.filtered_resps],
                                     sort_keys=True, default=str).encode())
    return digest.hexdigest() if found else None


def finite(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number."""
    number_ = number(value)
    return number_ is not None and math.isfinite(number_)
