"""Measured baselines: the best score that answerers knowing nothing get on a task's built split.

A task's baseline (``metadata.protocol.baseline``) is the score a model without skill gets; here it is measured,
not declared. The answerers, each run on every document of the protocol's split (read through lm-eval's own
task object, scored by the task's own ``process_results``):

``empty``
    the empty answer (generation tasks).
``constant``
    the same answer for every document, the best of: each choice position and each choice text (multiple
    choice); each listed option letter (lettered options in the prompt); the :data:`CANDIDATES` most frequent
    gold answers of the split (free text, ties in a seeded order), each scored on the documents other than the
    one it was taken from.
``random``
    per document, a uniformly random choice or listed letter, or the gold answer of another document drawn
    uniformly from the split (free text); the mean over :data:`SEEDS` seeds.

The baseline is the best of the three (:class:`~neurips26.protocol.MeasuredBaseline` records them all). A
multiple-choice task whose best is the constant answer keeps ``baseline: majority``: the best constant answer of
each run's split, which is what the board resolves; any other task records the number.

Evaluators outside lm-eval (their protocols registered in :data:`neurips26.protocol.PROTOCOLS`) measure their own
answerers on their standard set: the protocol module takes ``baseline`` and ``baseline_from`` from its ``MEASURED``
block, which :func:`record_registered` rewrites, and the ``baselines`` module beside it has
``measure(task, limit=None) -> MeasuredBaseline`` (imported only to measure: the protocol module stays light).

``python -m neurips26.tasks.measure [TASK ...]`` prints the measured baselines beside the recorded ones (lm-eval
tasks: for the built folders under ``$NEURIPS26_DATA``); ``--record`` writes them into the task YAMLs and the
protocol modules. Without TASK it measures every ranked task.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from neurips26.tasks import TASKS_DIR
from neurips26.tasks.answerers import listed_options
from neurips26.tasks.protocol import TaskProtocol, read_protocols

from neurips26.protocol import PROTOCOLS, MeasuredBaseline, Protocol

SEEDS = 5  # the random answerer's score is the mean over this many seeds
CANDIDATES = 16  # free text: how many of the most frequent gold answers are tried as the constant answer
DIGITS = 4  # scores are recorded rounded to this many decimals
# tasks whose process_results also runs models (role scorer, perplexity): their ranking metric alone, computed here
METRIC_ONLY = ("rolebench_unlearn_general", "rolebench_unlearn_retain", "rolebench_unlearn_forget")


@dataclass
class Split:
    """A task's evaluated documents, their gold answers and how one answer to one document scores."""

    task: str
    protocol: Protocol
    golds: list[Any]  # the gold answer per document: a choice index (multiple choice) or a text
    choices: list[list[str]] | None  # multiple choice: each document's choice texts
    options: list[list[str]] | None  # generation with lettered options: each document's letters
    score: Callable[[int, Any], float]  # (document index, answer: a choice index or a text) -> the metric
    data: str  # the split, in words


# -- ROUGE-L as RoleBench-Unlearn scores it, fast ---------------------------------------------------------------


@functools.cache
def _tokenizer() -> Any:
    from rouge_score.tokenizers import DefaultTokenizer  # lazy: only the RoleBench tasks need it

    return DefaultTokenizer(use_stemmer=True)  # as neurips26.methods.unlearn.metrics scores it


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_tokenizer().tokenize(text))


@functools.lru_cache(maxsize=65536)
def _masks(tokens: tuple[str, ...]) -> dict[str, int]:
    masks: dict[str, int] = {}
    for k, token in enumerate(tokens):
        masks[token] = masks.get(token, 0) | (1 << k)
    return masks


def lcs_length(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """The length of the longest common subsequence of two token sequences (bit-parallel, Hyyrö 2004)."""
    if not a or not b:
        return 0
    masks, full = _masks(a), (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_l(prediction: str, references: Iterable[str]) -> float:
    """Best ROUGE-L F1 of ``prediction`` against any reference, 0 for an empty prediction: the same number as
    :func:`neurips26.methods.unlearn.metrics.rouge_l`, computed faster."""
    if not prediction.strip():
        return 0.0
    predicted = _tokens(prediction)
    best = 0.0
    for reference in references:
        target = _tokens(reference) if reference.strip() else ()
        if not target or not predicted:
            continue
        common = lcs_length(target, predicted)
        precision, recall = common / len(predicted), common / len(target)
        best = max(best, 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0)
    return best


def _rolebench_score(doc: dict, answer: str) -> float:
    from neurips26.methods.unlearn.prompts import cut  # lazy: the RoleBench tasks only

    return rouge_l(cut(answer), doc["references"])


# -- the split ---------------------------------------------------------------------------------------------------


def load_split(task_name: str, tasks_dir: Path = TASKS_DIR) -> Split:
    """The protocol's split of ``task_name``, read through lm-eval from the built folder under
    ``$NEURIPS26_DATA`` (the YAML's default task metadata: the standard run's)."""
    from lm_eval.tasks import TaskManager  # lazy: lm-eval's task index is only needed to measure

    protocol = read_protocols(tasks_dir, strict=True)[0][task_name].protocol
    task = TaskManager(include_path=str(tasks_dir), include_defaults=False).load(task_name)["tasks"][task_name]
    docs = list(task.eval_docs)
    metric = protocol.metric
    data = (task.config.metadata or {}).get("data") or {}
    kind = "demo" if data.get("demo", True) else "released"
    where = (f"{data.get('resource', '?')} {data.get('config', '?')}/{protocol.split}, {kind} data, "
             f"manifest {str(data.get('manifest_sha256'))[:12]}")
    if task.OUTPUT_TYPE == "multiple_choice":
        choices = [[str(c).strip() for c in task.doc_to_choice(d)] for d in docs]

        def pick(i: int, index: int) -> float:
            results = [(0.0 if k == index else -1.0, k == index) for k in range(len(choices[i]))]
            return float(task.process_results(docs[i], results)[metric])

        return Split(task_name, protocol, [task.doc_to_target(d) for d in docs], choices, None, pick, where)
    golds = [str(t[0] if isinstance(t := task.doc_to_target(d), list) else t).strip() for d in docs]
    options = [listed_options(str(task.doc_to_text(d))) for d in docs]

    def generated(i: int, answer: str) -> float:
        if task_name in METRIC_ONLY:
            return _rolebench_score(docs[i], answer)
        return float(task.process_results(docs[i], [answer])[metric])

    return Split(task_name, protocol, golds, None, options if all(options) else None, generated, where)


# -- the answerers -----------------------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float:
    found = list(values)
    return sum(found) / len(found) if found else 0.0


def _constants(split: Split) -> tuple[float, str]:
    """The best constant answer's score and the answer, in words."""
    n, better = len(split.golds), (lambda a, b: a > b) if split.protocol.higher_is_better else (lambda a, b: a < b)
    found: list[tuple[float, str]] = []
    if split.choices is not None:
        width = max(len(c) for c in split.choices)
        for position in range(width):
            found.append((_mean(split.score(i, position if position < len(split.choices[i]) else 0)
                                for i in range(n)), f"choice {position}"))
        for text in sorted({t for c in split.choices for t in c}):
            found.append((_mean(split.score(i, c.index(text) if text in c else 0)
                                for i, c in enumerate(split.choices)), text))
    elif split.options is not None:
        for letter in sorted({x for o in split.options for x in o}):
            found.append((_mean(split.score(i, letter) for i in range(n)), letter))
    else:
        counts = Counter(split.golds)
        order = sorted(counts)
        random.Random(0).shuffle(order)
        order.sort(key=lambda text: -counts[text])  # most frequent first, ties in the seeded order
        for text in [t for t in order if t][:CANDIDATES]:
            source = split.golds.index(text)
            found.append((_mean(split.score(i, text) for i in range(n) if i != source), text))
    best = found[0]
    for item in found[1:]:
        best = item if better(item[0], best[0]) else best
    return best


def _random(split: Split, seed: int) -> float:
    rng, n = random.Random(seed), len(split.golds)
    if split.choices is not None:
        return _mean(split.score(i, rng.randrange(len(c))) for i, c in enumerate(split.choices))
    if split.options is not None:
        return _mean(split.score(i, rng.choice(o)) for i, o in enumerate(split.options))
    if n < 2:
        return split.score(0, "")
    return _mean(split.score(i, split.golds[(j := rng.randrange(n - 1)) + (j >= i)]) for i in range(n))


def measure(split: Split) -> MeasuredBaseline:
    """The scores of the empty, constant and random answerers on ``split`` and which is best."""
    scores: dict[str, float] = {}
    if split.choices is None:
        scores["empty"] = _mean(split.score(i, "") for i in range(len(split.golds)))
    constant, answer = _constants(split)
    scores["constant"] = constant
    scores["random"] = _mean(_random(split, seed) for seed in range(SEEDS))
    return MeasuredBaseline.best_of(scores, split.protocol.higher_is_better, DIGITS,
                                    answer=answer if len(answer) <= 80 else answer[:79] + "…", n=len(split.golds),
                                    seeds=SEEDS, data=split.data)


def baseline_of(protocol: Protocol, measured: MeasuredBaseline) -> float | str:
    """The ``baseline`` a protocol records for ``measured``: ``majority`` where it already says so and the best is
    the constant answer (each run's split resolves it to its best constant answer), else the measured number."""
    if protocol.baseline == "majority" and measured.answerer == "constant":
        return "majority"
    return measured.scores[measured.answerer]


# -- recording and printing --------------------------------------------------------------------------------------


def record(item: TaskProtocol, measured: MeasuredBaseline, tasks_dir: Path = TASKS_DIR) -> None:
    """Write ``measured`` into the task's YAML: ``baseline`` and a one-line ``baseline_from`` in its protocol."""
    path = Path(tasks_dir) / item.source
    text = path.read_text(encoding="utf-8")
    value = baseline_of(item.protocol, measured)
    flow = yaml.safe_dump(measured.model_dump(exclude_defaults=True), default_flow_style=True, width=100_000,
                          allow_unicode=True, sort_keys=False).strip()
    block = re.compile(r"^(    baseline: )[^\n]*\n(    baseline_from: [^\n]*\n)?", re.M)
    if len(block.findall(text)) != 1:
        raise ValueError(f"{path}: not exactly one protocol baseline line to replace")
    comment = "  # measured: python -m neurips26.tasks.measure (the best answerer that knows nothing)"
    text = block.sub(lambda m: f"{m.group(1)}{value}{comment}\n    baseline_from: {flow}\n", text)
    path.write_text(text, encoding="utf-8")


# -- evaluators outside lm-eval -----------------------------------------------------------------------------------

WIDTH = 120  # the project's line length
MEASURED_BLOCK = re.compile(r"^MEASURED = \{\n.*?^\}\n", re.M | re.S)


def measure_registered(task: str, limit: int | None = None) -> MeasuredBaseline:
    """The measured baseline of a registered protocol, afresh: ``measure(task, limit)`` of the ``baselines`` module
    beside its protocol module (on the first ``limit`` documents)."""
    package = protocol_module(task).__name__.rpartition(".")[0]
    return importlib.import_module(f"{package}.baselines").measure(task, limit)


def protocol_module(task: str) -> ModuleType:
    """The module whose ``MEASURED`` block holds the registered protocol's ``baseline_from``."""
    recorded = PROTOCOLS.get(task).baseline_from
    found = [m for m in list(sys.modules.values())
             if isinstance(getattr(m, "MEASURED", None), dict) and m.MEASURED.get(task) is recorded is not None]
    if len(found) != 1:
        raise ValueError(f"{task}: {len(found)} modules hold its baseline_from in a MEASURED block, not one")
    return found[0]


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON strings, numbers and dicts are Python literals


def _string_lines(key: str, text: str, indent: int) -> list[str]:
    """``key=("..." "...")``: a long string as adjacent literals, one per line, each within :data:`WIDTH`."""
    room = WIDTH - indent - len(key) - 4
    chunks, current = [], ""
    for word in re.split(r"(?<= )", text):
        while word:
            if len(_literal(current + word)) <= room:
                current, word = current + word, ""
            elif current:
                chunks.append(current)
                current = ""
            else:  # a word longer than a line: cut it
                cut = max(k for k in range(1, len(word) + 1) if len(_literal(word[:k])) <= room)
                chunks.append(word[:cut])
                word = word[cut:]
    if current or not chunks:
        chunks.append(current)
    pad = " " * (len(key) + 2)
    lines = [f"{key}=({_literal(chunks[0])}"] + [f"{pad}{_literal(c)}" for c in chunks[1:]]
    return lines[:-1] + [lines[-1] + ")"]


def python_entry(task: str, measured: MeasuredBaseline) -> str:
    """One entry of a protocol module's ``MEASURED`` block: ``"task": MeasuredBaseline(...)``, wrapped."""
    indent = 8
    lines, line = [], ""
    for key, value in measured.model_dump(exclude_defaults=True).items():
        piece = f"{key}={_literal(value)},"
        if indent + len(line) + len(piece) + 1 <= WIDTH:
            line = f"{line} {piece}" if line else piece
            continue
        if line:
            lines.append(line)
        if indent + len(piece) <= WIDTH or not isinstance(value, str):
            line = piece
        else:
            *head, last = _string_lines(key, value, indent)
            lines += head
            line = last + ","
    lines.append(line.rstrip(",") + "),")
    return f"    {_literal(task)}: MeasuredBaseline(\n" + "\n".join(" " * indent + x for x in lines)


def record_registered(task: str, measured: MeasuredBaseline) -> Path:
    """Write ``measured`` into the ``MEASURED`` block of ``task``'s protocol module; the block keeps every other
    task's entry. Returns the module's path."""
    module = protocol_module(task)
    path = Path(inspect.getsourcefile(module) or str(module.__file__))
    entries = dict(module.MEASURED)
    entries[task] = measured
    text = path.read_text(encoding="utf-8")
    if len(MEASURED_BLOCK.findall(text)) != 1:
        raise ValueError(f"{path}: not exactly one MEASURED = {{...}} block to replace")
    block = "MEASURED = {\n" + "\n".join(python_entry(k, v) for k, v in entries.items()) + "\n}\n"
    path.write_text(MEASURED_BLOCK.sub(lambda _: block, text), encoding="utf-8")
    module.MEASURED[task] = measured  # so that recording its other tasks keeps this one
    return path


def main(argv: list[str] | None = None) -> int:
    """Print (and with ``--record`` write) the measured baselines of the given tasks (default: every ranked task;
    lm-eval tasks read their built folders under ``$NEURIPS26_DATA``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m neurips26.tasks.measure", description=__doc__.split("\n")[0])
    parser.add_argument("tasks", nargs="*")
    parser.add_argument("--record", action="store_true",
                        help="write the measured baselines into the task YAMLs and the protocol modules")
    args = parser.parse_args(argv)
    protocols = read_protocols(strict=True)[0]
    names = args.tasks or sorted(k for k, v in protocols.items() if v.protocol.ranked)
    unknown = [name for name in names if name not in protocols]
    if unknown:
        parser.error(f"no protocol for {', '.join(unknown)}")
    print(f"{'task':34} {'metric':14} {'recorded':>9} {'measured':>9}  answerer  scores")
    for name in names:
        item = protocols[name]
        registered = item.source == "registered"
        measured = measure_registered(name) if registered else measure(load_split(name))
        recorded = item.protocol.baseline if isinstance(item.protocol.baseline, str) else f"{item.protocol.baseline:g}"
        scores = ", ".join(f"{k} {v:.4f}" for k, v in measured.scores.items())
        print(f"{name:34} {item.protocol.metric:14} {recorded:>9} {measured.scores[measured.answerer]:9.4f}  "
              f"{measured.answerer:8}  {scores}  (n={measured.n}; {measured.data})", flush=True)
        if args.record and registered:
            record_registered(name, measured)
        elif args.record:
            record(item, measured)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
