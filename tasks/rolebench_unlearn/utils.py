"""RoleBench-Unlearn tasks: data from the built folder, role prompts, and the unlearning measures.

Data comes from the built folder (``neurips26 build rolebench_unlearn``), never built here; the loaders
record what they read in the task's ``metadata["data"]`` (see :func:`neurips26.tasks.load_config`). The forget
set comes from the task metadata (``--metadata '{"split": "forget10"}'``; default forget05). Per
response: style (the role-fidelity scorer's P(role | response), with the scorer of the document's language),
ROUGE-L against the role's references, and the NLL under the original model
(:func:`neurips26.settings.original_model`, default the embedded model), aggregated to a perplexity. The
scorer and the original model are loaded once per process.
"""

from __future__ import annotations

import datasets
from neurips26.methods.unlearn import metrics, prompts
from neurips26.methods.unlearn import scorer as role_scorer
from neurips26.tasks import built_folder, load_config

RESOURCE = "rolebench_unlearn"


def load_forget_set(split: str = "forget05", **metadata) -> datasets.DatasetDict:
    """The forget set ``split`` (forget01, forget05, forget10) of the built folder."""
    return load_config(RESOURCE, split, metadata)


def load_general(**metadata) -> datasets.DatasetDict:
    """The general instruction set of the built folder."""
    return load_config(RESOURCE, "general", metadata)


def role_prompt(doc: dict) -> str:
    return prompts.role_prompt(doc["role"], doc["question"])


def general_prompt(doc: dict) -> str:
    return prompts.general_prompt(doc["instruction"])


def _nll(response: str) -> float:
    model, tokenizer = metrics.original_model()
    return metrics.response_nll(model, tokenizer, [response])[0]


def _role_scores(doc: dict, response: str) -> tuple[float, float]:
    scorer = role_scorer.for_folder(built_folder(RESOURCE))
    style = scorer.fidelity([response], [doc["role"]], [doc.get("language") or "en"])[0]
    return style, metrics.rouge_l(response, doc["references"])


def score_forget(doc: dict, results: list[str]) -> dict[str, float]:
    response = prompts.cut(results[0])
    style, rouge = _role_scores(doc, response)
    return {"forget_style": style, "forget_rougeL": rouge, "ppl": _nll(response)}


def score_retain(doc: dict, results: list[str]) -> dict[str, float]:
    response = prompts.cut(results[0])
    style, rouge = _role_scores(doc, response)
    return {"retain_style": style, "retain_rougeL": rouge, "ppl": _nll(response)}


def score_general(doc: dict, results: list[str]) -> dict[str, float]:
    response = prompts.cut(results[0])
    return {"general_rougeL": metrics.rouge_l(response, doc["references"]), "ppl": _nll(response)}


def perplexity(nlls: list[float]) -> float:
    """exp of the mean per-response NLL."""
    return metrics.perplexity(list(nlls))
