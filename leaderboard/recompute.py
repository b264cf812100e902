"""Scores recomputed from a task's samples: :func:`validate_samples` checks one samples file against the results.

One row per document evaluated, unique doc ids, each document's metric values recomputed (from the responses by
:data:`.metrics.METRICS`, or by the task's own ``process_results``) and equal to the recorded ones, their means
equal to the results file's values, the documents and targets equal to the gold ones the board holds for the data.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurips26.tasks.protocol import baseline_value, json_key

from neurips26.results import Sample, number

from .catalog import TaskSpec
from .metrics import METRICS, bootstrap_stderr
from .modelinfo import SubmissionRejected
from .validate import ValidatedResults

TOLERANCE = 1e-6  # |recomputed - recorded|, per document and for the means


@dataclass(frozen=True)
class TaskSamples:
    """Per-document scores of one task, recomputed from its samples: parallel lists, one item per document."""

    task: str
    doc_ids: list[int]
    doc_hashes: list[str | None]
    targets: list[str]  # each document's target as JSON text
    values: dict[str, list[Any]]  # metric -> per-document values (numbers, or e.g. (gold, predicted) pairs)
    baseline: float | None = None  # the protocol's baseline on these documents
    corpus_level: dict[str, float] = field(default_factory=dict)  # metric -> score of a metric that is no mean
    corpus_stderr: dict[str, float | None] = field(default_factory=dict)  # metric -> its bootstrap stderr


_PROCESS: dict[tuple[Path, str], Callable[..., Any]] = {}


def process_results(spec: TaskSpec) -> Callable[..., Any] | None:
    """The task's own ``process_results`` function (``!function utils.name`` beside its YAML), or None."""
    if spec.process_results is None or spec.folder is None:
        return None
    module, _, function = spec.process_results.rpartition(".")
    key = (spec.folder, spec.process_results)
    if key not in _PROCESS:
        path = spec.folder / f"{module.replace('.', '/')}.py"
        loader = importlib.util.spec_from_file_location(f"_neurips26_board_{spec.folder.name}_{module}", path)
        if loader is None or loader.loader is None:
            raise SubmissionRejected([(f"tasks.{spec.name}", f"its process_results {path} cannot be loaded")])
        code = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(code)
        _PROCESS[key] = getattr(code, function)
    return _PROCESS[key]


def recompute_document(spec: TaskSpec, sample: Sample, config: Mapping[str, Any]) -> dict[str, Any]:
    """Metric -> the document's value recomputed from its responses: by the task's own ``process_results`` when it
    has one, else by the metric's registered function (a number, or e.g. a (gold, predicted) pair)."""
    scorer = process_results(spec)
    if scorer is not None:
        scored = scorer(sample.doc, sample.responses())
        return {metric: number(scored.get(metric)) if spec.metrics[metric].scalar else scored.get(metric)
                for metric in spec.metrics}
    return {metric: METRICS.get(metric)(sample, config, metric) for metric in spec.metrics}


def validate_samples(file_name: str, samples: list[Sample], results: ValidatedResults, spec: TaskSpec,
                     gold: Mapping[str, str] | None = None) -> TaskSamples:
    """Check one task's samples against the validated results (and the gold targets ``doc_hash -> target JSON``
    the board holds for the data); raises :class:`SubmissionRejected` naming the first problems."""
    where = f"samples.{file_name}"
    expected = results.tasks[spec.name]
    task = results.run.tasks[spec.name] if results.run else None
    config = task.config if task else {}
    n = next(iter(expected.metrics.values()))[2]
    filt = spec.filters[0]
    problems: list[tuple[str, str]] = []
    rows = [s for s in samples if s.filter == filt]
    seen: set[int] = set()
    values: dict[str, list[float]] = {metric: [] for metric in spec.metrics}
    for sample in rows:
        if sample.doc_id in seen:
            problems.append((f"{where}.doc_id", f"document {sample.doc_id} appears twice"))
            break
        seen.add(sample.doc_id)
        recomputed = recompute_document(spec, sample, config)
        for metric, rng in spec.metrics.items():
            if not rng.scalar:  # e.g. a (gold, predicted) pair of a corpus-level metric: recomputed equal, or not
                value = recomputed[metric]
                if value is None or json_key(value) != json_key(sample.values.get(metric)):
                    problems.append((f"{where}:{sample.doc_id}.{metric}", f"recorded {sample.values.get(metric)!r}, "
                                     f"but the document's responses give {value!r}"))
                else:
                    values[metric].append(value)
                continue
            value, recorded = recomputed[metric], number(sample.values.get(metric))
            lo, hi = rng.per_document or (rng.lo, rng.hi)
            if value is None or not math.isfinite(value) or not lo <= value <= hi:
                problems.append((f"{where}:{sample.doc_id}.{metric}", f"{sample.values.get(metric)!r} is not a "
                                 f"finite number in [{lo:g}, {hi:g}]"))
            elif recorded is None or abs(recorded - value) > TOLERANCE:
                problems.append((f"{where}:{sample.doc_id}.{metric}", f"recorded {recorded!r}, but the document's "
                                 f"responses score {value:.6g}"))
            else:
                values[metric].append(value)
        if len(problems) >= 5:
            break
    if not problems and len(rows) != n:
        problems.append((where, f"{len(rows)} documents, but the results file counts {n}"))
    targets = [json_key(s.target) for s in rows]
    if not problems and gold:
        hashes = {s.doc_hash for s in rows}
        if hashes != set(gold):
            problems.append((where, f"the documents are not the {len(gold)} documents of the split the board holds "
                             f"for this data ({len(hashes - set(gold))} unknown, {len(set(gold) - hashes)} missing)"))
        wrong = [s.doc_id for s, t in zip(rows, targets, strict=True) if s.doc_hash in gold and gold[s.doc_hash] != t]
        if wrong:
            problems.append((where, f"the targets of {len(wrong)} document(s) differ from the gold targets "
                             f"(doc_id {', '.join(map(str, wrong[:5]))})"))
    if not problems:
        for metric, (value, _, _) in expected.metrics.items():
            mean = spec.metrics[metric].combine(values[metric])
            if abs(mean - value) > TOLERANCE:
                problems.append((f"{where}.{metric}", f"recomputed from the samples {mean:.6g}, but the results "
                                 f"file says {value:.6g}"))
    if problems:
        raise SubmissionRejected(problems)
    baseline = baseline_value(spec.protocol, rows) if spec.protocol is not None else None
    corpus_level = {metric: spec.metrics[metric].combine(v) for metric, v in values.items()
                    if spec.metrics[metric].aggregate is not None}
    corpus_stderr = {metric: bootstrap_stderr(spec.metrics[metric].aggregate, values[metric])
                     for metric in corpus_level}
    return TaskSamples(spec.name, [s.doc_id for s in rows], [s.doc_hash for s in rows], targets, values, baseline,
                       corpus_level, corpus_stderr)
