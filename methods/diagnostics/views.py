"""What a signature detector reads: one task of a run, with each document's response, prediction and gold.

:func:`task_view` turns an lm-eval :class:`~neurips26.results.TaskRun` (read with its samples file) into a
:class:`TaskView`: per document the generated text (``generate_until``), or the chosen option and the gold option
with every option's text (``multiple_choice``, from the logged loglikelihoods), and the run settings detectors
need (generation limit, stop sequences, few-shot count).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neurips26.results import Sample, TaskRun, number


@dataclass(frozen=True)
class DocView:
    """One document: its id, the prompt, and the model's answer against the gold one."""

    doc_id: int
    prompt: str
    score: float | None  # the task's primary metric on this document, as recorded
    text: str | None = None  # the generation (generate_until)
    target: str | None = None  # the gold answer as text (generate_until), or the gold option's text
    choices: list[str] | None = None  # option texts (multiple_choice)
    chosen: int | None = None  # argmax of the raw loglikelihoods
    chosen_norm: int | None = None  # argmax of loglikelihood per character (acc_norm)
    gold: int | None = None
    sample: Sample | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class TaskView:
    """One task of a run, as the detectors read it."""

    name: str
    output_type: str
    metric: str  # the primary metric (the protocol's, else the first recorded)
    docs: list[DocView]
    max_gen_toks: int | None = None
    num_fewshot: int = 0
    fewshot_delimiter: str = "\n\n"
    count_tokens: Callable[[str], int] | None = field(default=None, repr=False, compare=False)

    @property
    def failures(self) -> list[DocView]:
        """Documents the model did not get fully right (primary metric below 1)."""
        return [d for d in self.docs if d.score is not None and d.score < 1]


def _prompt(sample: Sample) -> str:
    args = sample.arguments
    if isinstance(args, dict) and args:
        first = next(iter(args.values()))
        if isinstance(first, dict):
            return str(first.get("arg_0", ""))
    return ""


def _choices(sample: Sample, delimiter: str) -> list[str] | None:
    if not isinstance(sample.arguments, dict):
        return None
    try:
        texts = [str(arg["arg_1"]) for arg in sample.arguments.values()]
    except (TypeError, KeyError):
        return None
    return [t[len(delimiter):] if t.startswith(delimiter) else t for t in texts]


def _gold(target: Any) -> int | None:
    try:
        return int(target[0] if isinstance(target, list) and len(target) == 1 else target)
    except (TypeError, ValueError):
        return None


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: values[i])


def _generation(sample: Sample) -> str:
    responses = sample.responses()
    first = responses[0] if responses else ""
    while isinstance(first, list | tuple) and first:
        first = first[0]
    return "" if first is None else str(first)


def task_view(task: TaskRun, count_tokens: Callable[[str], int] | None = None) -> TaskView:
    """The :class:`TaskView` of one task (its samples must have been read)."""
    if task.samples is None:
        raise ValueError(f"{task.name}: no samples file was read (run lm-eval with --log_samples)")
    config = task.config
    output_type = str(config.get("output_type", ""))
    protocol = task.protocol or {}
    recorded = sorted({key.split(",", 1)[0] for key in task.values if "_stderr" not in key})
    metric = str(protocol.get("metric") or (recorded[0] if recorded else ""))
    delimiter = str(config.get("target_delimiter", " "))
    docs = []
    for sample in sorted(task.samples, key=lambda s: s.doc_id):
        score = number(sample.values.get(metric))
        if output_type == "multiple_choice":
            lls, choices, gold = sample.loglikelihoods(), _choices(sample, delimiter), _gold(sample.target)
            chosen = _argmax(lls) if lls else None
            chosen_norm = (_argmax([ll / max(len(c), 1) for ll, c in zip(lls, choices, strict=True)])
                           if lls and choices and len(choices) == len(lls) else None)
            target = choices[gold] if choices and gold is not None and 0 <= gold < len(choices) else None
            docs.append(DocView(sample.doc_id, _prompt(sample), score, None, target, choices, chosen, chosen_norm,
                                gold, sample))
        else:
            target = sample.target if isinstance(sample.target, str) else None
            docs.append(DocView(sample.doc_id, _prompt(sample), score, _generation(sample), target, sample=sample))
    generation = config.get("generation_kwargs") if isinstance(config.get("generation_kwargs"), dict) else {}
    max_gen = generation.get("max_gen_toks")
    shots = task.num_fewshot if task.num_fewshot is not None else config.get("num_fewshot") or 0
    return TaskView(task.name, output_type, metric, docs, int(max_gen) if isinstance(max_gen, int) else None,
                    int(shots), str(config.get("fewshot_delimiter", "\n\n")), count_tokens)


def normalise(text: str | None) -> str:
    """Lower case, punctuation and surrounding quotes dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w\s]", " ", (text or "").lower()).split())
