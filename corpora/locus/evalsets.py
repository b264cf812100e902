"""Evaluation sets, written as configs of the ``locus`` folder at build time: the lm-eval tasks only read them.

Configs (splits ``train``, the few-shot pool, ``validation`` and ``test``):

- ``domain``: a section's text -> its regulatory domain (``domains.py``), four options lettered A-D: the gold
  domain and three distractors picked by hash;
- ``catchline``: a section's text -> its heading (active sections with a real heading);
- ``function``, ``topic``: a section's text -> its LOCUS function / topic (``records.FUNCTIONS``/``TOPICS``),
  weak labels read from the code's own headings (``labels.py``; the prompt shows the text only, since the
  labels come from the headings). In a folder ingested from LOCUS-v1 the released labels (majority of three
  annotators, ``v1_source``) take the place of the weak ones wherever they are given;
- ``function_gold``, ``topic_gold``, ``substantive_gold`` (only with ``build(gold=DIR)``): ``test`` is the gold
  ``dev`` sections with their majority labels (topic: the substantive ones), ``train`` the weak train split of
  the same label.

Splits are by jurisdiction, so a test jurisdiction's text never appears among few-shot examples:
jurisdictions are ordered by the sha256 of their id; the first 20% (at least :data:`MIN_TEST_JURISDICTIONS`)
are ``test``, the next 10% (at least one) ``validation``, the rest (at least one) ``train``. With fewer
jurisdictions no evaluation sets are written. Within a split, examples are kept up to a cap (``CAPS``), drawn
per label in proportion to the split's label counts (stratified), in sha256(section_id) order within a label,
so the sets stay small and identical across rebuilds. The corpus is read in batches; memory is bounded by the
caps.

A label task whose test split comes from a single jurisdiction or holds a single label would score a
constant answerer at 100% or measure one code's style: the build refuses it (:class:`BuildError` naming the
config and why).
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .domains import DOMAINS, domain_of_path
from .labels import weak_function, weak_topic
from .records import CATCHLINE, DOMAIN, FUNCTIONS, LABEL, SUBSTANTIVE, TOPICS, BuildError

SPLITS = ("train", "validation", "test")
SHARES = {"test": 0.2, "validation": 0.1}
MIN_TEST_JURISDICTIONS = 2
CAPS = {"train": 2_000, "validation": 500, "test": 1_000}
LABEL_CAPS = {"train": 300, "validation": 100, "test": 300}
N_CHOICES = 4
MAX_TEXT = 2_000  # characters of section text in a domain/catchline prompt
MAX_LABEL_TEXT = 1_200  # in a function/topic prompt (the gold texts are cut at 2,500)
MIN_TEXT = 80
SKIP_HEADINGS = ("reserved", "repealed", "[reserved]", "[repealed]")

# config -> (schema, description, label column or None, options)
CONFIGS = {
    "domain": (DOMAIN, "Evaluation set: regulatory domain of a section (4 lettered options), splits by "
                       "jurisdiction.", "domain", None),
    "catchline": (CATCHLINE, "Evaluation set: write a section's catchline from its text, splits by jurisdiction.",
                  None, None),
    "function": (LABEL, "Evaluation set: LOCUS function of a section (Context, Rules, Process, Enforcement), "
                        "weak labels, splits by jurisdiction.", "answer", FUNCTIONS),
    "topic": (LABEL, "Evaluation set: LOCUS topic of a section (Buildings, Business, Nuisance, Zoning, Other), "
                     "weak labels, splits by jurisdiction.", "answer", TOPICS),
}
GOLD_CONFIGS = {
    "function_gold": (LABEL, "Evaluation set: LOCUS function, test = the gold dev sections.", "answer", FUNCTIONS),
    "topic_gold": (LABEL, "Evaluation set: LOCUS topic, test = the substantive gold dev sections.", "answer", TOPICS),
    "substantive_gold": (LABEL, "Evaluation set: whether a section is substantive (no/yes), test = the gold dev "
                                "sections' is_substantive.", "answer", SUBSTANTIVE),
}
OPTIONS = {"function": FUNCTIONS, "topic": TOPICS, "substantive": SUBSTANTIVE}


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def jurisdiction_splits(jurisdiction_ids: list[str]) -> dict[str, str]:
    """jurisdiction_id -> split (see module docstring); empty when there are too few jurisdictions."""
    ordered = sorted(set(jurisdiction_ids), key=lambda j: (_hash(j), j))
    n_test = max(MIN_TEST_JURISDICTIONS, round(len(ordered) * SHARES["test"]))
    n_val = max(1, round(len(ordered) * SHARES["validation"]))
    if len(ordered) < n_test + n_val + 1:
        return {}
    return {j: "test" if i < n_test else "validation" if i < n_test + n_val else "train"
            for i, j in enumerate(ordered)}


def domain_choices(section_id: str, gold: str) -> tuple[list[str], int]:
    """Gold plus three distractors, in an order fixed by the section id."""
    others = sorted((d for d in DOMAINS if d != gold), key=lambda d: _hash(section_id + d))
    choices = sorted([gold, *others[: N_CHOICES - 1]], key=lambda d: _hash(d + section_id))
    return choices, choices.index(gold)


class _Pool:
    """The examples of one (config, split): per label, the ``cap`` smallest hashes, and every label's count.

    An example is a section row (without its text) and how to make its row (``make(section, *args)``), which is
    done only for the examples finally taken, once their texts are read (:func:`derive`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.heaps: dict[str | None, list[tuple[int, str, dict, Callable[..., dict], tuple]]] = defaultdict(list)
        self.counts: Counter[str | None] = Counter()

    def offer(self, label: str | None, key: int, section: dict, make: Callable[..., dict], *args: object) -> None:
        """Count ``label``; keep the example if its hash ``key`` is among the label's ``cap`` smallest."""
        self.counts[label] += 1
        heap, item = self.heaps[label], (-key, section["section_id"])  # max-heap
        if len(heap) < self.cap:
            heapq.heappush(heap, (*item, section, make, args))
        elif item > heap[0][:2]:
            heapq.heapreplace(heap, (*item, section, make, args))

    def take(self) -> list[tuple[dict, Callable[..., dict], tuple]]:
        """Up to ``cap`` examples, each label's share in proportion to its count (largest remainder)."""
        total = sum(self.counts.values())
        if total <= self.cap:
            quota = dict(self.counts)
        else:
            exact = {label: self.cap * n / total for label, n in self.counts.items()}
            quota = {label: int(v) for label, v in exact.items()}
            spare = self.cap - sum(quota.values())
            for label in sorted(exact, key=lambda k: (-(exact[k] - quota[k]), str(k)))[:spare]:
                quota[label] += 1
        kept = [item for label, heap in self.heaps.items()
                for item in sorted(heap, key=lambda t: t[:2], reverse=True)[:quota[label]]]
        return [(section, make, args) for _, _, section, make, args in sorted(kept, key=lambda t: (-t[0], t[1]))]


_COLUMNS = ["section_id", "jurisdiction_id", "number", "heading", "path"]


def _candidates(shards: list[Path], jurisdiction_ids: list[str]) -> Iterator[dict]:
    """The sections that can be examples (in ``jurisdiction_ids``, active, at least :data:`MIN_TEXT` characters
    of text), filtered in Arrow and read without their text: ``at`` says where the text is (shard, row)."""
    wanted = pa.array(jurisdiction_ids, pa.string())
    for n, shard in enumerate(shards):
        offset = 0
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=8_192, columns=[*_COLUMNS, "status", "text"]):
            usable = pc.and_(pc.and_(pc.equal(batch["status"], "active"),
                                     pc.greater_equal(pc.utf8_length(batch["text"]), MIN_TEXT)),
                             pc.is_in(batch["jurisdiction_id"], value_set=wanted))
            rows = np.flatnonzero(pc.fill_null(usable, False).to_numpy(zero_copy_only=False))
            for i, section in zip(rows.tolist(), batch.select(_COLUMNS).take(rows).to_pylist(), strict=True):
                section["at"] = (n, offset + i)
                yield section
            offset += batch.num_rows


def _with_texts(shards: list[Path], sections: list[dict]) -> None:
    """Give each section its ``text``, reading only the row groups that hold them."""
    wanted: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))  # shard -> row -> sections
    for section in sections:
        n, row = section["at"]
        wanted[n][row].append(section)
    for n, rows in wanted.items():
        file = pq.ParquetFile(shards[n])
        start = 0
        for group in range(file.metadata.num_row_groups):
            size = file.metadata.row_group(group).num_rows
            inside = sorted(r for r in rows if start <= r < start + size)
            if inside:
                texts = file.read_row_group(group, columns=["text"])["text"]
                for r, text in zip(inside, texts.take(pa.array([r - start for r in inside])).to_pylist(),
                                   strict=True):
                    for section in rows[r]:
                        section["text"] = text
            start += size


def _domain_row(s: dict, base: dict, domain: str) -> dict:
    choices, label = domain_choices(s["section_id"], domain)
    return {**base, "heading": s["heading"], "text": s["text"][:MAX_TEXT], "domain": domain, "choices": choices,
            "label": label}


def _catchline_row(s: dict, base: dict, heading: str) -> dict:
    return {**base, "text": s["text"][:MAX_TEXT], "heading": heading}


def _labelled(row: dict, task: str, label: str | bool, source: str) -> dict:
    answer = SUBSTANTIVE[int(label)] if task == "substantive" else str(label)
    return {"section_id": row["section_id"], "jurisdiction_id": row["jurisdiction_id"], "number": row["number"],
            "text": row["text"][:MAX_LABEL_TEXT], "answer": answer, "label": OPTIONS[task].index(answer),
            "label_source": source}


def derive(shards: list[Path], jurisdiction_ids: list[str],
           released: dict[str, dict] | None = None) -> dict[str, dict[str, list[dict]]]:
    """{config: {split: rows}} for ``domain``, ``catchline``, ``function``, ``topic`` and the weak
    ``substantive`` pool (the ``substantive_gold`` few-shot split), from the sections shards.

    ``released``: section_id -> LOCUS-v1's released ``function``/``topic``/``substantive`` labels, which
    replace the weak ones where given. Texts are read only for the examples kept.
    """
    splits = jurisdiction_splits(jurisdiction_ids)
    if not splits:
        return {}
    released = released or {}
    tasks = ("domain", "catchline", "function", "topic", "substantive")
    pools = {(task, split): _Pool((CAPS if task in ("domain", "catchline") else LABEL_CAPS)[split])
             for task in tasks for split in SPLITS}
    for s in _candidates(shards, list(splits)):
        split = splits[s["jurisdiction_id"]]
        sid = s["section_id"]
        key = _hash(sid)  # once per section, for every pool it is offered to
        base = {"section_id": sid, "jurisdiction_id": s["jurisdiction_id"], "number": s["number"]}
        domain = domain_of_path(s["path"])
        if domain:
            pools[("domain", split)].offer(domain, key, s, _domain_row, base, domain)
        heading = s["heading"].strip().rstrip(".")
        if heading and heading.lower() not in SKIP_HEADINGS and len(heading) <= 200:
            pools[("catchline", split)].offer(None, key, s, _catchline_row, base, heading)
        given = {k: v for k, v in released.get(sid, {}).items() if v is not None}
        function = weak_function(s["heading"]) if not {"function", "substantive"} <= given.keys() else None
        weak = {"function": function, "topic": weak_topic(s["path"]) if "topic" not in given else None,
                "substantive": None if function is None else function != "Context"}  # = weak_substantive
        for task in ("function", "topic", "substantive"):
            label, source = (given[task], "released") if task in given else (weak[task], "weak")
            if label is not None:
                answer = SUBSTANTIVE[int(label)] if task == "substantive" else str(label)
                pools[(task, split)].offer(answer, key, s, _labelled, task, label, source)
    taken = {name: pool.take() for name, pool in pools.items()}
    _with_texts(shards, [s for examples in taken.values() for s, _, _ in examples])
    return {task: {split: [make(s, *args) for s, make, args in taken[(task, split)]] for split in SPLITS}
            for task in tasks}


def gold_sets(gold: list[dict], sets: dict[str, dict[str, list[dict]]]) -> dict[str, dict[str, list[dict]]]:
    """{``<task>_gold``: {"train": the weak train split, "test": the gold dev examples}} (``goldset.read_gold``)."""
    out = {}
    for task in ("function", "topic", "substantive"):
        test = []
        for r in gold:
            row = {**r, "section_id": r["gid"]}
            if task == "function":
                test.append(_labelled(row, task, r["function_majority"], "gold"))
            elif task == "topic" and r["is_substantive"] and r["topic_majority"]:
                test.append(_labelled(row, task, r["topic_majority"], "gold"))
            elif task == "substantive":
                test.append(_labelled(row, task, bool(r["is_substantive"]), "gold"))
        out[f"{task}_gold"] = {"train": sets.get(task, {}).get("train", []), "test": test}
    return out


def check_test_splits(sets: dict[str, dict[str, list[dict]]]) -> None:
    """Refuse a config whose test split is drawn from one jurisdiction or (label tasks) holds one label."""
    for name, splits in sets.items():
        if name not in CONFIGS and name not in GOLD_CONFIGS:
            continue
        test = splits.get("test", [])
        if not test:
            continue
        label_column = (CONFIGS.get(name) or GOLD_CONFIGS[name])[2]
        jurisdictions = sorted({r["jurisdiction_id"] for r in test})
        if len(jurisdictions) < 2:
            raise BuildError(f"locus config {name!r}: its test split comes from a single jurisdiction "
                             f"({jurisdictions[0]}), so it would measure one code's style; add jurisdictions "
                             f"with such sections to the raw folder")
        labels = sorted({r[label_column] for r in test}) if label_column else []
        if label_column and len(labels) < 2:
            raise BuildError(f"locus config {name!r}: every test example has the label {labels[0]!r}, so a "
                             f"constant answer would score 100%; add sections with other labels")


def domain_counts(sets: dict) -> dict[str, int]:
    """Domain label -> examples over all splits of the domain evaluation set."""
    counts: Counter[str] = Counter()
    for rows in sets.get("domain", {}).values():
        counts.update(row["domain"] for row in rows)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
