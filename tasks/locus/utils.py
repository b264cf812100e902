"""LOCUS tasks: data from the built folder's evaluation configs, catchline scoring."""

from __future__ import annotations

import re
import string

import datasets
from neurips26.tasks import dataset_folder
from rouge_score import rouge_scorer

_ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")


def _load(config: str) -> datasets.DatasetDict:
    return datasets.load_dataset(str(dataset_folder("locus")), config)


def load_domain(**kwargs) -> datasets.DatasetDict:
    return _load("domain")


def load_catchline(**kwargs) -> datasets.DatasetDict:
    return _load("catchline")


def normalize(text: str) -> str:
    """Lower-case, no punctuation, single spaces (exact match ignores case and punctuation)."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def score_catchline(doc: dict, results: list[str]) -> dict[str, float]:
    prediction, gold = normalize(results[0]), normalize(doc["heading"])
    rouge = _ROUGE.score(gold, prediction)["rougeL"].fmeasure if prediction and gold else 0.0
    return {"exact_match": float(prediction == gold), "rougeL": rouge}


def _analysis(task: str, gold: bool = False) -> datasets.DatasetDict:
    """LOCUS analysis sets (``neurips26.methods.locus_analysis.tasksets``): weak corpus, or gold dev as test."""
    from neurips26.methods.locus_analysis import gold as gold_set
    from neurips26.methods.locus_analysis import tasksets

    folder = dataset_folder("locus").resolve()
    sets = (tasksets.gold_sets(folder, gold_set.default_gold_dir().resolve()) if gold
            else tasksets.corpus_sets(folder))[task]
    return datasets.DatasetDict({split: datasets.Dataset.from_list(rows) for split, rows in sets.items() if rows})


def load_function(**kwargs) -> datasets.DatasetDict:
    return _analysis("function")


def load_topic(**kwargs) -> datasets.DatasetDict:
    return _analysis("topic")


def load_substantive(**kwargs) -> datasets.DatasetDict:
    return _analysis("substantive")


def load_function_gold(**kwargs) -> datasets.DatasetDict:
    return _analysis("function", gold=True)


def load_topic_gold(**kwargs) -> datasets.DatasetDict:
    return _analysis("topic", gold=True)


def load_substantive_gold(**kwargs) -> datasets.DatasetDict:
    return _analysis("substantive", gold=True)
