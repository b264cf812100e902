"""LOCUS tasks: data from the built ``locus`` folder's evaluation configs; lettered-option and catchline scoring.

Every loader reads one config through ``neurips26.tasks.load_config`` (which records what it read in the
task's metadata) and never builds: a missing folder or config stops with the command to run.
"""

from __future__ import annotations

import re
import string

import datasets
from neurips26.tasks import load_config
from rouge_score import rouge_scorer

from neurips26.errors import UserError
from neurips26.stats import macro_f1_of_pairs

_ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")


def _load(config: str, metadata: dict, build_hint: str = "") -> datasets.DatasetDict:
    data = load_config("locus", config, metadata)
    if not len(data["test"]):
        raise UserError(f"locus config {config!r} has an empty test split{build_hint}")
    return data


def load_domain(**metadata) -> datasets.DatasetDict:
    """The ``domain`` config; a folder without domain labels (a LOCUS-v1 ingest) is an error."""
    return _load("domain", metadata, " (its sections carry no chapter headings, as in a LOCUS-v1 ingest); "
                 "evaluate locus_catchline,locus_function,locus_topic instead")


def load_catchline(**metadata) -> datasets.DatasetDict:
    """The ``catchline`` config."""
    return _load("catchline", metadata)


def load_function(**metadata) -> datasets.DatasetDict:
    """The ``function`` config (weak or released labels)."""
    return _load("function", metadata)


def load_topic(**metadata) -> datasets.DatasetDict:
    """The ``topic`` config (weak or released labels)."""
    return _load("topic", metadata)


def _gold(task: str, metadata: dict) -> datasets.DatasetDict:
    try:
        return load_config("locus", f"{task}_gold", metadata)
    except UserError as exc:
        raise UserError(f"{exc} with the gold folder: run `neurips26 build locus --gold DIR` "
                        "(DIR holds the gold set's dev.jsonl)") from None


def load_function_gold(**metadata) -> datasets.DatasetDict:
    """The ``function_gold`` config: the gold dev sections as test."""
    return _gold("function", metadata)


def load_topic_gold(**metadata) -> datasets.DatasetDict:
    """The ``topic_gold`` config: the substantive gold dev sections as test."""
    return _gold("topic", metadata)


def load_substantive_gold(**metadata) -> datasets.DatasetDict:
    """The ``substantive_gold`` config: the gold dev sections' is_substantive as test."""
    return _gold("substantive", metadata)


def normalize(text: str) -> str:
    """Lower-case, no punctuation, single spaces (exact match ignores case and punctuation)."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def score_catchline(doc: dict, results: list[str]) -> dict[str, float]:
    """exact_match and rougeL of a generated catchline against the gold heading."""
    prediction, gold = normalize(results[0]), normalize(doc["heading"])
    rouge = _ROUGE.score(gold, prediction)["rougeL"].fmeasure if prediction and gold else 0.0
    return {"exact_match": float(prediction == gold), "rougeL": rouge}


def score_choice(doc: dict, results: list) -> dict:
    """Lettered options: the answer is the letter with the highest log-likelihood.

    ``acc`` per sample (so the leaderboard can recompute it from the samples) and (gold, predicted) pairs for
    ``macro_f1``. Letters are one token each, so no length normalisation is needed or reported.
    """
    scores = [r[0] if isinstance(r, (tuple, list)) else r for r in results]
    pred = max(range(len(scores)), key=scores.__getitem__)
    gold = int(doc["label"])
    return {"acc": float(pred == gold), "macro_f1": (gold, pred)}


def macro_f1(items: list) -> float:
    """Macro-averaged F1 over the gold classes present (a constant answerer scores low whatever the balance); the
    same function the leaderboard recomputes it with."""
    return macro_f1_of_pairs(items)
