"""Evidence use by counterfactual re-runs: does the answer change when the evidence is taken away?

For a sample of a run's failed documents, each document is re-run through its lm-eval task twice with the run's
model and settings: as logged, and with its evidence removed (LOCUS: the section ``text`` replaced by
:data:`REMOVED`; video tasks: the frame list emptied, or shuffled). Only the evidence field changes: the prompt is
rebuilt by the task itself from the changed document. An answer that stays the same without the evidence came
from the model's prior, not from the evidence ("evidence ignored", intervention class *perception* for frames and
*reasoning* for text).

The evidence field of a document is the first of :data:`EVIDENCE_FIELDS` it has; tasks without one (RoleBench's
role prompts) are not counterfactually testable and are skipped.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neurips26 import models, settings
from neurips26.results import Run, Sample, number
from neurips26.stats import wilson

from .evaluation import task_manager

REMOVED = "[text removed]"
EVIDENCE_FIELDS = {"text": "perception", "frame_times": "perception"}  # field -> intervention class when ignored


@dataclass(frozen=True)
class Rerun:
    """One document re-run with and without its evidence."""

    task: str
    doc_id: int
    field: str
    mode: str
    answer: str  # the answer re-run on the document as logged
    counterfactual: str  # the answer without the evidence
    reproduced: bool  # the re-run as logged gave the logged answer

    @property
    def unchanged(self) -> bool:
        return self.answer == self.counterfactual


def evidence_field(doc: dict[str, Any]) -> str | None:
    """The document's evidence field, None when it has none."""
    return next((name for name in EVIDENCE_FIELDS if name in doc), None)


def counterfactual_doc(doc: dict[str, Any], mode: str = "removed", seed: int = 0) -> dict[str, Any]:
    """A copy of ``doc`` whose evidence is removed (text: :data:`REMOVED`; a list: empty) or shuffled (a list,
    in a seeded order that differs from the original when it can)."""
    name = evidence_field(doc)
    if name is None:
        raise ValueError("the document has no evidence field (one of " + ", ".join(EVIDENCE_FIELDS) + ")")
    value = doc[name]
    changed = dict(doc)
    if mode == "removed":
        changed[name] = [] if isinstance(value, list) else REMOVED
    elif mode == "shuffled":
        if not isinstance(value, list):
            raise ValueError(f"only a list field can be shuffled, {name} is a {type(value).__name__}")
        order = list(value)
        rng = random.Random(seed)
        for _ in range(10):
            rng.shuffle(order)
            if order != value or len(set(map(repr, value))) < 2:
                break
        changed[name] = order
    else:
        raise ValueError(f"mode must be 'removed' or 'shuffled', got {mode!r}")
    return changed


def _answer(task: Any, lm: Any, doc: dict[str, Any], doc_id: int, num_fewshot: int) -> str:
    """The model's answer to one document of an lm-eval task: the generation, or the chosen option's text."""
    ctx = task.fewshot_context(doc, num_fewshot)
    requests = task.construct_requests(doc=doc, ctx=ctx, metadata=(task.config.task, doc_id, 1))
    requests = requests if isinstance(requests, list) else [requests]
    outputs = getattr(lm, requests[0].request_type)(requests)
    if task.OUTPUT_TYPE == "multiple_choice":
        choices = task.doc_to_choice(doc)
        lls = [float(out[0]) for out in outputs[: len(choices)]]
        return str(choices[max(range(len(lls)), key=lls.__getitem__)])
    return str(outputs[0]).strip()


def _logged_answer(sample: Sample, task: Any) -> str:
    if task.OUTPUT_TYPE == "multiple_choice":
        lls = sample.loglikelihoods() or []
        choices = task.doc_to_choice(sample.doc)
        return str(choices[max(range(len(lls)), key=lls.__getitem__)]) if lls else ""
    responses = sample.responses()
    return str(responses[0]).strip() if responses else ""


def failures(samples: Sequence[Sample], metric: str) -> list[Sample]:
    """The samples whose recorded ``metric`` is below 1 (not fully right)."""
    return [s for s in samples if (number(s.values.get(metric)) or 0.0) < 1]


def rerun(run: Run, *, per_task: int = 10, modes: Sequence[str] = ("removed",), data: Path | None = None,
          device: str | None = None, seed: int = 0, lm: Any = None) -> list[Rerun]:
    """Re-run up to ``per_task`` failed documents of each task of ``run`` that has an evidence field, with and
    without the evidence (each mode of ``modes``), on the run's model (or ``lm``, an lm-eval model object)."""
    import lm_eval.api.registry  # lazy: lm-eval loads torch

    if data is not None:
        settings.set_data_root(data)
    if lm is None:
        args = dict(run.model_args)
        lm = lm_eval.api.registry.get_model(run.model or "hf").create_from_arg_obj(
            args, {"batch_size": 1, "device": models.device(device)})
    rng = random.Random(seed)
    out: list[Rerun] = []
    for name, task_run in sorted(run.tasks.items()):
        samples = task_run.samples or []
        if not samples or evidence_field(samples[0].doc) is None:
            continue
        metric = str((task_run.protocol or {}).get("metric") or "acc")
        chosen = failures(samples, metric)
        chosen = rng.sample(chosen, min(per_task, len(chosen)))
        task = task_manager().load([name])["tasks"][name]
        shots = task_run.num_fewshot or 0
        for sample in sorted(chosen, key=lambda s: s.doc_id):
            answer = _answer(task, lm, sample.doc, sample.doc_id, shots)
            reproduced = answer == _logged_answer(sample, task)
            for mode in modes:
                if mode == "shuffled" and not isinstance(sample.doc[evidence_field(sample.doc)], list):
                    continue
                changed = counterfactual_doc(sample.doc, mode, seed)
                out.append(Rerun(name, sample.doc_id, evidence_field(sample.doc), mode, answer,
                                 _answer(task, lm, changed, sample.doc_id, shots), reproduced))
    return out


def evidence_rows(reruns: Sequence[Rerun], model: str) -> list[dict[str, Any]]:
    """The ``evidence_ignored`` signature rows (one per task and mode), in the shape of the signature table."""
    rows = []
    for task, mode in sorted({(r.task, r.mode) for r in reruns}):
        group = [r for r in reruns if r.task == task and r.mode == mode]
        same = [r for r in group if r.unchanged]
        rate = len(same) / len(group)
        low, high = (float(v) for v in wilson(rate, len(group)))
        field = group[0].field
        rows.append({"model": model, "task": task, "signature": f"evidence_ignored ({mode})",
                     "family": "evidence use", "intervention": EVIDENCE_FIELDS[field], "n": len(group),
                     "failures": len(group), "count": len(same), "rate": rate, "low": low, "high": high,
                     "fires": low > 0.5,
                     "detail": f"{field} {mode}: the answer stayed the same on {len(same)} of {len(group)} failed "
                               f"documents ({sum(r.reproduced for r in group)} re-runs reproduced the logged answer)",
                     "examples": [{"doc_id": r.doc_id, "answer": r.answer[:200], "target": ""} for r in same[:3]]})
    return rows
