"""Per-task evaluation protocols: what the standard run of a task is, and how its score is ranked.

A task's protocol lives in its lm-eval YAML, under ``metadata.protocol`` (lm-eval copies ``metadata`` into the
results file, so every run says which protocol it ran under)::

    metadata:
      version: 2.0
      protocol:
        split: test              # the split evaluated, in full
        num_fewshot: 0
        fewshot_split: train     # or null
        chat_template: false     # whether the standard run applies the chat template
        metric: acc              # the ranking metric (results key "<metric>,none")
        higher_is_better: true
        baseline: majority       # a number, "majority" or "chance"
        baseline_from: {...}     # the measurement it comes from (neurips26.tasks.measure): answerer, scores, n, data
        range: [0, 1]            # normalised score = (x - baseline) / (max - baseline)
        task_metadata: {}        # task arguments of the standard run (num_frames, selector, ...)
        generation: {}           # generate_until: the generation_kwargs of the standard run
        ranked: true             # false: reported on model pages, never ranked on its own (say why in `note`)
        note: null               # why a task is not ranked, or anything a reader of the board must know

Evaluators that do not run through lm-eval register a :class:`Protocol` in :data:`PROTOCOLS` under the task
name. :func:`deviations` lists how a run differs from its protocol (a run that differs is not ranked);
:func:`baseline_value` and :func:`normalise` put scores of different tasks on one scale; :func:`protocols_table`
renders the table of protocols in ``docs/leaderboard.md`` (``python -m neurips26.tasks.protocol`` rewrites it).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from neurips26.tasks import TASKS_DIR
from pydantic import ValidationError

from neurips26.protocol import PROTOCOLS, Protocol, ProtocolError
from neurips26.results import Run, Sample, TaskRun

# Task metadata that is not a setting of the run: the version, the protocol itself, data provenance, lm-eval's own.
NOT_SETTINGS = frozenset({"version", "protocol", "data", "config_source", "pretrained"})




@dataclass(frozen=True)
class TaskProtocol:
    """A task's protocol with where it was read from."""

    task: str
    version: float | None
    group: str
    output_type: str
    protocol: Protocol
    source: str  # the YAML file relative to the tasks folder, or "registered"


# -- reading task YAMLs ------------------------------------------------------------------------------------------


class Function(str):
    """The value of an lm-eval ``!function module.name`` tag."""


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
            raise ProtocolError(f"{path}: include cycle through {included}")
        merged.update(load_yaml(included, (*_seen, path.resolve())))
    return merged | data


def task_configs(tasks_dir: Path) -> dict[Path, dict]:
    """Every YAML under ``tasks_dir`` (includes merged), by path."""
    return {path: load_yaml(path) for path in sorted(Path(tasks_dir).rglob("*.yaml"))}


def group_members(configs: Mapping[Path, dict]) -> dict[str, list[str]]:
    """Group name -> its member names (tasks or groups), from the group YAMLs."""
    return {c["group"]: [t for t in c["task"] if isinstance(t, str)] for c in configs.values()
            if isinstance(c.get("group"), str) and isinstance(c.get("task"), list)}


def parse_protocol(raw: Any, where: str) -> Protocol:
    """A :class:`Protocol` from a YAML's ``metadata.protocol``; :class:`ProtocolError` names the bad fields."""
    if raw is None:
        raise ProtocolError(f"{where}: no metadata.protocol (every ranked task needs one: split, num_fewshot, "
                            "metric, baseline, range...)")
    try:
        return Protocol.model_validate(raw)
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'protocol'}: {e['msg']}" for e in exc.errors())
        raise ProtocolError(f"{where}: metadata.protocol is not valid: {fields}") from None


def read_protocols(tasks_dir: Path | None = None, *, strict: bool = True
                   ) -> tuple[dict[str, TaskProtocol], dict[str, str]]:
    """(task -> protocol, task -> why it has none) for the task YAMLs under ``tasks_dir`` (default: the shipped
    tasks), plus the registered protocols. ``strict``: raise :class:`ProtocolError` for the first task without
    a valid protocol instead of listing it."""
    tasks_dir = TASKS_DIR if tasks_dir is None else Path(tasks_dir)
    configs = task_configs(tasks_dir)
    parent = {member: group for group, members in group_members(configs).items() for member in members}
    found: dict[str, TaskProtocol] = {}
    missing: dict[str, str] = {}
    for path, config in configs.items():
        name = config.get("task")
        if not isinstance(name, str) or "group" in config:
            continue
        metadata = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
        where = f"{path.relative_to(tasks_dir)} (task {name})"
        try:
            protocol = parse_protocol(metadata.get("protocol"), where)
        except ProtocolError as exc:
            if strict:
                raise
            missing[name] = str(exc)
            continue
        version = metadata.get("version")
        found[name] = TaskProtocol(name, float(version) if isinstance(version, int | float) else None,
                                   parent.get(name, path.parent.name), str(config.get("output_type", "")), protocol,
                                   str(path.relative_to(tasks_dir)))
    for name, protocol in PROTOCOLS.items():
        if name not in found:
            found[name] = TaskProtocol(name, None, str(PROTOCOLS.info(name).get("group", "")),
                                       str(PROTOCOLS.info(name).get("output_type", "")), protocol, "registered")
            missing.pop(name, None)
    return found, missing


@functools.cache
def shipped_protocols() -> dict[str, TaskProtocol]:
    """The protocols of the shipped tasks that have one (see :func:`read_protocols` for the others)."""
    return read_protocols(strict=False)[0]


# -- checking a run against its protocol ------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def deviations(run: Run, task: TaskRun, protocol: Protocol) -> list[str]:
    """Why a task's run is not the standard run of its protocol (empty: it is). Each reason is one phrase."""
    reasons = []
    if run.limit is not None:
        reasons.append(f"run with --limit {run.limit}")
    if task.n_effective is not None and task.n_original is not None and task.n_effective < task.n_original:
        reasons.append(f"{task.n_effective} of the {task.n_original} documents evaluated")
    if protocol.size is not None and task.n_original is not None and task.n_original != protocol.size:
        reasons.append(f"the split has {task.n_original} documents, the protocol's has {protocol.size}")
    split = task.config.get("test_split")
    if split is not None and split != protocol.split:
        reasons.append(f"split {split!r} instead of {protocol.split!r}")
    shots = task.num_fewshot if task.num_fewshot is not None else task.config.get("num_fewshot")
    if shots is not None and shots != protocol.num_fewshot:
        reasons.append(f"{shots}-shot instead of {protocol.num_fewshot}-shot")
    if run.chat_applied != protocol.chat_template:
        reasons.append("chat template applied" if run.chat_applied else "chat template not applied")
    for key, value in sorted(task.metadata.items()):
        if key in NOT_SETTINGS:
            continue
        if key not in protocol.task_metadata or not _same(protocol.task_metadata[key], value):
            standard = protocol.task_metadata.get(key, "unset")
            reasons.append(f"task setting {key}={value!r} (standard: {standard!r})")
    if protocol.generation:
        kwargs = task.config.get("generation_kwargs") or {}
        if run.config.get("gen_kwargs"):
            reasons.append(f"generation arguments overridden ({run.config['gen_kwargs']})")
        for key, value in sorted(protocol.generation.items()):
            if key in kwargs and not _same(kwargs[key], value):
                reasons.append(f"generation {key}={kwargs[key]!r} (standard: {value!r})")
    data = task.data
    if data is None:
        reasons.append("no data provenance (configs.metadata.data): the data the run read is unknown")
    elif data.get("demo") is not False:
        reasons.append("run on the demo sample, not on the released data")
    return reasons


# -- baselines and normalised scores -----------------------------------------------------------------------------


def _label(target: Any) -> Any:
    return target[0] if isinstance(target, list) and len(target) == 1 else target


def n_choices(sample: Sample) -> int | None:
    """How many answer options a multiple-choice document has (from its loglikelihood requests)."""
    if isinstance(sample.arguments, dict):
        return len(sample.arguments) or None
    if isinstance(sample.arguments, list):
        return len(sample.arguments) or None
    return None


def baseline_value(protocol: Protocol, samples: Iterable[Sample] | None) -> float:
    """The score a model without skill gets: the protocol's number, the majority class's share of the split's
    gold labels (``majority``: always answering the most frequent label) or ``1 / number of choices``
    averaged over the documents (``chance``)."""
    if not isinstance(protocol.baseline, str):
        return float(protocol.baseline)
    rows = list(samples or [])
    if not rows:
        raise ProtocolError(f"a {protocol.baseline} baseline is computed from the samples; none were given")
    if protocol.baseline == "majority":
        counts = Counter(json_key(_label(s.target)) for s in rows)
        return counts.most_common(1)[0][1] / len(rows)
    choices = [n_choices(s) for s in rows]
    if any(c is None for c in choices):
        raise ProtocolError("a chance baseline needs the number of choices of every document")
    return sum(1 / c for c in choices) / len(rows)


def json_key(value: Any) -> str:
    """A hashable, order-stable text of a JSON value."""
    return json.dumps(value, sort_keys=True, default=str)


def normalise(value: float, protocol: Protocol, baseline: float) -> float:
    """``value`` rescaled so that the baseline is 0 and the best possible score 1, as the Open LLM Leaderboard v2
    normalises: a score below the baseline shows no skill and counts 0 (so one task far below its baseline cannot
    swamp a mean); a lower-is-better metric is mirrored."""
    if protocol.best == baseline:
        raise ProtocolError(f"baseline {baseline} equals the best score {protocol.best}: nothing to rank")
    return max(0.0, (value - baseline) / (protocol.best - baseline))


# -- the protocols table of docs/leaderboard.md --------------------------------------------------------------------

TABLE_START, TABLE_END = "<!-- protocols:start -->", "<!-- protocols:end -->"
PAGE = "docs/leaderboard.md"  # the page that holds the table, from the repository root


def protocols_table(protocols: Mapping[str, TaskProtocol] | None = None) -> str:
    """The protocols table of ``docs/leaderboard.md``: task, split (and size when fixed), few-shot, ranking metric,
    direction, baseline (with the answerer that measured it); one row per task, sorted by group and name."""
    protocols = shipped_protocols() if protocols is None else protocols
    lines = ["| task | split | few-shot | chat template | ranking metric | direction | baseline | range |",
             "|---|---|---|---|---|---|---|---|"]
    for item in sorted(protocols.values(), key=lambda p: (p.group, p.task)):
        p = item.protocol
        split = f"{p.split} ({p.size})" if p.size is not None else f"{p.split} (all)"
        shots = f"{p.num_fewshot} from {p.fewshot_split}" if p.num_fewshot and p.fewshot_split else str(p.num_fewshot)
        base = p.baseline if isinstance(p.baseline, str) else f"{p.baseline:g}"
        if p.baseline_from is not None:
            base += f" ({p.baseline_from.answerer})"
        lines.append(f"| `{item.task}` | {split} | {shots} | {'yes' if p.chat_template else 'no'} | {p.metric} | "
                     f"{'higher' if p.higher_is_better else 'lower'} is better{'' if p.ranked else ' (not ranked)'} "
                     f"| {base} | [{p.range[0]:g}, {p.range[1]:g}] |")
    notes = [f"- `{item.task}` is not ranked: {' '.join(item.protocol.note.split())}"
             for item in sorted(protocols.values(), key=lambda p: (p.group, p.task))
             if not item.protocol.ranked and item.protocol.note]
    return "\n".join(lines + ([""] + notes if notes else []))


def page_table(text: str) -> str | None:
    """The text between the protocol markers of a page, None when the markers are missing."""
    if TABLE_START not in text or TABLE_END not in text:
        return None
    return text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()


def update_page(text: str, protocols: Mapping[str, TaskProtocol] | None = None) -> str:
    """``text`` with the table between the protocol markers replaced by :func:`protocols_table`."""
    if page_table(text) is None:
        raise ProtocolError(f"no {TABLE_START} ... {TABLE_END} markers in the page")
    head, rest = text.split(TABLE_START, 1)
    tail = rest.split(TABLE_END, 1)[1]
    return f"{head}{TABLE_START}\n{protocols_table(protocols)}\n{TABLE_END}{tail}"


if __name__ == "__main__":
    import sys

    page = Path(sys.argv[1] if len(sys.argv) > 1 else PAGE)
    page.write_text(update_page(page.read_text(encoding="utf-8")), encoding="utf-8")
