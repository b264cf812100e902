"""Evaluation sets for the lm-eval tasks ``locus_function``, ``locus_topic`` and ``locus_substantive``.

Two sources, the same prompt and choices:

- the weakly labelled corpus (tasks ``locus_function``... in group ``locus_analysis``): active sections of the
  built ``locus`` folder with a weak label (``labels.py``), split by jurisdiction exactly as the ``domain``
  set (``corpora/locus/evalsets.py``), kept in sha256(section_id) order up to ``CAPS``. The prompt shows the
  text only, since the weak labels come from the headings. In a folder ingested from LOCUS-v1
  (``--from-locus-v1``), the released labels (majority of three LLM annotators, config ``v1_source``) take
  the place of the weak ones wherever they are given;
- the gold ``dev`` part (tasks ``locus_function_gold``... in group ``locus_analysis_gold``): the test split is
  the 90 gold sections (75 substantive ones for topic) with their majority labels; few-shot examples come
  from the weak corpus's train split. These tasks need the gold folder (``gold.default_gold_dir``) and say
  so when it is absent; the ``neurips26`` group does not include them, so the demo runs without it.
"""

from __future__ import annotations

import functools
from pathlib import Path

from neurips26.corpora.locus.evalsets import MIN_TEXT, SPLITS, _hash, jurisdiction_splits

from neurips26 import hubfolder

from .labels import FUNCTIONS, TOPICS, weak_function, weak_substantive, weak_topic

TASKS = ("function", "topic", "substantive")
CHOICES = {"function": list(FUNCTIONS), "topic": list(TOPICS), "substantive": ["no", "yes"]}
CAPS = {"train": 300, "validation": 100, "test": 300}
MAX_TEXT = 1_200  # characters of section text in a prompt (the gold texts are cut at 2,500)


def _example(task: str, row: dict, label: str | bool) -> dict:
    value = ("yes" if label else "no") if task == "substantive" else label
    return {"section_id": row["section_id"], "jurisdiction_id": row["jurisdiction_id"], "number": row["number"],
            "text": row["text"][:MAX_TEXT], "answer": value, "label": CHOICES[task].index(value)}


@functools.cache
def corpus_sets(folder: Path) -> dict[str, dict[str, list[dict]]]:
    """{task: {split: examples}} from a built LOCUS folder's weak labels."""
    columns = ["section_id", "jurisdiction_id", "number", "heading", "text", "path", "status"]
    table = hubfolder.read_table(folder, "sections", columns)
    if table is None:
        raise FileNotFoundError(f"{folder}: no sections config; run: neurips26 build locus")
    rows = table.to_pylist()
    splits = jurisdiction_splits([r["jurisdiction_id"] for r in rows])
    released = _released_labels(Path(folder))
    out: dict[str, dict[str, list[dict]]] = {task: {split: [] for split in SPLITS} for task in TASKS}
    for row in sorted(rows, key=lambda r: (_hash(r["section_id"]), r["section_id"])):
        split = splits.get(row["jurisdiction_id"])
        if split is None or row["status"] != "active" or len(row["text"]) < MIN_TEXT:
            continue
        labels = {"function": weak_function(row["heading"]), "topic": weak_topic(row["path"]),
                  "substantive": weak_substantive(row["heading"], row["status"])}
        labels.update({task: label for task, label in released.get(row["section_id"], {}).items() if label is not None})
        for task, label in labels.items():
            if label is not None and len(out[task][split]) < CAPS[split]:
                out[task][split].append(_example(task, row, label))
    return out


def _released_labels(folder: Path) -> dict[str, dict[str, str | bool | None]]:
    """section_id -> LOCUS-v1's released function/topic/substantive labels, for a folder ingested from LOCUS-v1."""
    table = hubfolder.read_table(folder, "v1_source", ["section_id", "function", "topic", "is_substantive"])
    if table is None:
        return {}
    return {r["section_id"]: {"function": r["function"] if r["function"] in FUNCTIONS else None,
                              "topic": r["topic"] if r["topic"] in TOPICS else None,
                              "substantive": r["is_substantive"]} for r in table.to_pylist()}


@functools.cache
def gold_sets(folder: Path, gold_dir: Path) -> dict[str, dict[str, list[dict]]]:
    """{task: {"train": weak corpus train split, "test": gold dev examples}}."""
    from .gold import read_gold

    gold = read_gold(gold_dir)
    weak = corpus_sets(folder)
    out = {}
    for task in TASKS:
        test = []
        for r in gold:
            row = {**r, "section_id": r["gid"]}
            if task == "function":
                test.append(_example(task, row, r["function_majority"]))
            elif task == "topic" and r["is_substantive"] and r["topic_majority"]:
                test.append(_example(task, row, r["topic_majority"]))
            elif task == "substantive":
                test.append(_example(task, row, bool(r["is_substantive"])))
        out[task] = {"train": weak[task]["train"], "test": test}
    return out
