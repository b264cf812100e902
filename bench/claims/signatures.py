"""Failure signatures: the intervention a signature names helps the items it flags more than a random one of equal cost.

The failure-signature methodology (:mod:`neurips26.methods.diagnostics.signatures`) maps a model's failures to the
intervention class they call for. This claim measures whether the named intervention is worth more than any other
change of the same cost. The model is the embedded SmolLM2-135M-Instruct; the tasks are the LOCUS multiple-choice
tasks (``locus_domain``, ``locus_function``, ``locus_topic``) on the folder built from the package's own sample,
their prompts rendered from the task YAMLs exactly as lm-eval renders them, each option letter scored by its
log-probability after the prompt (lm-eval's ``acc`` for these one-token options).

Per seed, each task's documents (its test split shared out among the seeds, so every seed sees other documents)
are scored as asked, every registered signature is run on that task view, and for each signature that fires and
has a concrete intervention (:data:`interventions.NAMED`: ``position_bias`` -> cyclic option permutation) its
flagged documents (the biased letter chosen, the gold elsewhere) are the affected items. Arms, on those items:

* ``named``: the named intervention (k prompts: the options in their k cyclic orders, scores averaged per option);
* ``random``: the same k prompts' worth of random change: each extra prompt shuffles as many option-block tokens
  as the matching permuted prompt changes (``random_tokens`` in :mod:`.interventions`).

Metric: the change in accuracy on an item (after minus as asked); items are paired (the same document in both
arms). Conditions: ``all items`` (every document of the tasks where the signature fires, the net effect, which
also counts the documents the bias got right) and ``random line order`` (the control that reorders the option
lines with each letter kept at its text). Nothing trains (``train_steps`` 0); ``compute`` records the prompts per
item and the tokens changed per extra prompt of each arm. Signatures that fire on generation tasks (``truncated``,
``empty``) need generation runs that do not fit the CPU budget and have no concrete intervention here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch
import yaml
from jinja2 import Template
from neurips26.corpora import RESOURCES
from neurips26.methods.diagnostics import interventions
from neurips26.methods.diagnostics.signatures import SIGNATURES
from neurips26.methods.diagnostics.views import DocView, TaskView
from neurips26.tasks import TASKS_DIR

from claims.core import CLAIMS, Arm, Outcome
from neurips26 import models, settings
from neurips26.hubfolder import read_table

TASKS = ("locus_domain", "locus_function", "locus_topic")
# scale -> (tasks, splits, documents per task and seed; None: the splits' documents shared out among the seeds)
SCALES = {"tiny": (("locus_topic",), ("test",), 3), "default": (TASKS, ("test",), None),
          "large": (TASKS, ("train", "validation", "test"), None)}
ARMS = {"named": "named", "random": "random_tokens"}  # claim arm -> interventions arm
LINE_ORDER = "random_line_order"


_EMPTY = pa.table({})


class _TaskLoader(yaml.SafeLoader):
    """Reads a task YAML, keeping ``!function`` values as their text."""


_TaskLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def locus_folder() -> Path:
    """The LOCUS folder built from the package's embedded sample (built once into the cache)."""
    folder = settings.cache_dir() / "claims" / "locus-sample"
    if not (folder / "README.md").is_file():
        RESOURCES.get("locus")(out=folder)
    return folder


def task_prompts(folder: Path, task: str, splits: tuple[str, ...]) -> tuple[list[dict[str, Any]], dict]:
    """Every document of ``task`` in ``splits``: its prompt (the YAML's ``doc_to_text``), letters and gold."""
    config = yaml.load((TASKS_DIR / "locus" / f"{task}.yaml").read_text(), Loader=_TaskLoader)
    template = Template(config["doc_to_text"])
    docs = [row for split in splits for row in (read_table(folder, config["dataset_name"], split=split) or
                                                 _EMPTY).to_pylist()]
    return [{"prompt": template.render(**doc), "gold": int(doc[config["doc_to_target"]]),
             "letters": list(config["doc_to_choice"])} for doc in docs], config


def documents(folder: Path, task: str, splits: tuple[str, ...], seed_index: int, n_seeds: int,
              per_seed: int | None) -> tuple[list[dict[str, Any]], str]:
    """The documents of ``task`` this seed scores (a fixed shuffle shared out among the seeds) and the task's
    target delimiter."""
    docs, config = task_prompts(folder, task, splits)
    order = np.random.default_rng(20260).permutation(len(docs))
    mine = [docs[i] | {"doc_id": int(i)} for i in order[seed_index::n_seeds]]
    return (mine[:per_seed] if per_seed else mine), str(config.get("target_delimiter", " "))


def load_scorer(letters: str = "ABCDE", delimiter: str = " ") -> interventions.LetterScorer:
    """The embedded model as a letter scorer (CUDA when present)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: heavy

    folder = models.default_model_dir()
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    return interventions.LetterScorer(model, AutoTokenizer.from_pretrained(str(folder)), letters, delimiter,
                                      models.device())


def score_task(scorer: interventions.LetterScorer, task: str, docs: list[dict[str, Any]],
               rng: np.random.Generator) -> dict[str, Any]:
    """One task on one seed: the signatures that fire, and per document the gold, the pick as asked and under
    every arm."""
    rows, views = [], []
    for doc in docs:
        scored = interventions.permutation_and_controls(scorer, doc["prompt"], rng)
        k = len(scored.base)
        if k != len(doc["letters"]):
            raise ValueError(f"{task} document {doc['doc_id']}: {k} option lines in its prompt, {len(doc['letters'])} "
                             "choices in its task")
        chosen = int(np.argmax(scored.base))
        rows.append({"doc_id": doc["doc_id"], "gold": doc["gold"], "asked": chosen,
                     "picks": {name: int(np.argmax(v)) for name, v in scored.arms.items()},
                     "changed": scored.changed, "prompts": k})
        letters = doc["letters"][:k]
        views.append(DocView(doc["doc_id"], doc["prompt"], float(chosen == doc["gold"]), None, letters[doc["gold"]],
                             letters, chosen, chosen, doc["gold"]))
    view = TaskView(task, "multiple_choice", "acc", views)
    found = {name: SIGNATURES.get(name)(view) for name in SIGNATURES.names()}
    fired = {name: f for name, f in found.items() if f is not None and f.fires}
    return {"rows": rows, "fired": fired}


def _change(row: dict[str, Any], arm: str) -> float:
    return float(row["picks"][arm] == row["gold"]) - float(row["asked"] == row["gold"])


def _arm(per_seed: list[list[dict[str, Any]]], arm: str) -> Arm:
    items = [[_change(r, arm) for r in rows] for rows in per_seed]
    changed = [c for rows in per_seed for r in rows for c in r["changed"][arm]]
    prompts = [r["prompts"] for rows in per_seed for r in rows]
    return Arm([float(np.mean(x)) if x else 0.0 for x in items],
               {"train_steps": 0, "prompts_per_item": float(np.mean(prompts)) if prompts else 0.0,
                "changed_tokens_per_extra_prompt": float(np.mean(changed)) if changed else 0.0,
                "intervention": arm}, items)


@CLAIMS.register("signatures", method="Failure signatures (AVLM)",
                 claim="The intervention a failure signature names raises the score on the items it flags more than "
                       "a random intervention of the same cost",
                 metric="accuracy change on the flagged items", direction="higher",
                 baseline="random option-block token shuffles, same prompts and tokens changed per prompt",
                 method_arm="named", baseline_arm="random")
def signatures_claim(scale: str, seeds: list[int]) -> Outcome:
    """Named intervention against its random same-cost control on the embedded model's LOCUS failures."""
    torch.set_num_threads(1)
    tasks, splits, per_seed = SCALES[scale]
    folder = locus_folder()
    scorer = load_scorer()
    affected, every, detail = [], [], []
    for index, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        mine, all_rows = [], []
        for task in tasks:
            docs, delimiter = documents(folder, task, splits, index, len(seeds), per_seed)
            if delimiter != " ":
                raise ValueError(f"{task}: target delimiter {delimiter!r}; the scorer reads letters after ' '")
            result = score_task(scorer, task, docs, rng)
            named = {name: f for name, f in result["fired"].items() if name in interventions.NAMED}
            flagged = {i for f in named.values() for i in f.doc_ids}
            mine += [r for r in result["rows"] if r["doc_id"] in flagged]
            all_rows += result["rows"] if named else []
            detail.append({"seed": seed, "task": task, "documents": len(docs),
                           "accuracy_as_asked": float(np.mean([r["asked"] == r["gold"] for r in result["rows"]])),
                           "fired": {n: {"count": f.count, "n": f.n, "detail": f.detail}
                                     for n, f in result["fired"].items()},
                           "affected": len(flagged),
                           "accuracy_after": {arm: float(np.mean([r["picks"][arm] == r["gold"]
                                                                  for r in result["rows"]]))
                                              for arm in ("named", *interventions.CONTROLS)}})
        affected.append(mine)
        every.append(all_rows)
    arms = {name: _arm(affected, arm) for name, arm in ARMS.items()}
    conditions = {"all items": {name: _arm(every, arm) for name, arm in ARMS.items()},
                  "random line order": {"named": _arm(affected, "named"), "random": _arm(affected, LINE_ORDER)}}
    return Outcome(arms=arms, conditions=conditions,
                   extra={"model": models.DEFAULT_MODEL_NAME, "tasks": list(tasks), "splits": list(splits),
                          "named_interventions": {k: v.__name__ for k, v in interventions.NAMED.items()},
                          "per_seed_task": detail})
