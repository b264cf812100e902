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
    """The ``domain`` config; a folder without one (a LOCUS-v1 ingest: no chapter headings to label) is an error."""
    import pyarrow.parquet as pq

    folder = dataset_folder("locus")
    if not sum(pq.read_metadata(f).num_rows for f in (folder / "data" / "domain").glob("*.parquet")):
        raise ValueError(f"{folder}: no domain set (its sections carry no chapter headings, as in a LOCUS-v1 "
                         "ingest); evaluate locus_catchline,locus_function,locus_topic,locus_substantive instead")
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
    columns = ["section_id", "jurisdiction_id", "number", "text", "answer", "label"]
    return datasets.DatasetDict({split: datasets.Dataset.from_list(rows) if rows else
                                 datasets.Dataset.from_dict({c: [] for c in columns}) for split, rows in sets.items()})


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
