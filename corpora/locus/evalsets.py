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
per label in proportion to the split's label counts (stratified), in sha256(section_id) order within a label
(equal hashes: in sections order), so the sets stay small and identical across rebuilds. Read in batches.

A label task whose test split comes from a single jurisdiction or holds a single label would score a
constant answerer at 100% or measure one code's style: the build refuses it (:class:`BuildError` naming the
config and why).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .domains import DOMAINS, domain_of_path
from .labels import DOMAIN_TOPIC, weak_function
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
COLUMNS = ["section_id", "jurisdiction_id", "number", "heading", "text", "path", "status"]
BATCH_ROWS = 8_192  # sections read at a time (a row group: memory stays flat whatever the corpus)
TABLE_BATCH_ROWS = 65_536  # sections taken at a time from a table the build holds (fewer passes; text not copied)
NO_BOUND = 2**64 - 1
_PATH_SEP = "\x1f"
TOPIC_OF = (pa.array(list(DOMAIN_TOPIC)), pa.array(list(DOMAIN_TOPIC.values())))  # domain -> weak topic

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
    """The examples of one (config, split) so far, as arrays: per label, the ``cap`` smallest hashes (equal
    hashes: the earlier section) with their sections' positions, and every label's count."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.labels: list[str | None] = []  # a label's code -> the label
        self.counts: Counter[str | None] = Counter()
        self.key = np.zeros(0, np.uint64)  # the kept rows, sorted by label code, hash, position
        self.label = np.zeros(0, np.int64)
        self.pos = np.zeros(0, np.int64)
        self.released = np.zeros(0, bool)
        self.bound = np.zeros(0, np.uint64)  # per label code: the largest kept hash once ``cap`` are kept

    def add(self, values: list, index: np.ndarray, key: np.ndarray, pos: np.ndarray, released: np.ndarray) -> None:
        """Count rows (``values[index]`` their labels) and keep those among their label's ``cap`` smallest."""
        for value in values:
            if value not in self.labels:
                self.labels.append(value)
                self.bound = np.append(self.bound, np.uint64(NO_BOUND))
        label = np.array([self.labels.index(v) for v in values] or [0], np.int64)[index]
        counts = np.bincount(label, minlength=len(self.labels)).tolist()
        self.counts.update({self.labels[code]: n for code, n in enumerate(counts) if n})
        within = key <= self.bound[label]  # a larger hash than a full label's largest cannot be kept
        if not within.any():
            return
        key, label = np.concatenate([self.key, key[within]]), np.concatenate([self.label, label[within]])
        pos, released = np.concatenate([self.pos, pos[within]]), np.concatenate([self.released, released[within]])
        order = np.lexsort((pos, key, label))
        label = label[order]
        starts = np.flatnonzero(np.concatenate([[True], label[1:] != label[:-1]]))
        sizes = np.diff(np.append(starts, len(label)))
        keep = np.arange(len(label)) - np.repeat(starts, sizes) < self.cap
        self.key, self.label = key[order][keep], label[keep]
        self.pos, self.released = pos[order][keep], released[order][keep]
        full = sizes >= self.cap
        kept_starts = np.cumsum(np.minimum(sizes, self.cap)) - np.minimum(sizes, self.cap)
        self.bound[label[starts[full]]] = self.key[kept_starts[full] + self.cap - 1]

    def take(self) -> list[tuple[int, str | None, bool]]:
        """(position, label, released) of up to ``cap`` rows, each label's share in proportion to its count
        (largest remainder), ordered by hash."""
        total = sum(self.counts.values())
        if total <= self.cap:
            quota = dict(self.counts)
        else:
            exact = {label: self.cap * n / total for label, n in self.counts.items()}
            quota = {label: int(v) for label, v in exact.items()}
            spare = self.cap - sum(quota.values())
            for label in sorted(exact, key=lambda k: (-(exact[k] - quota[k]), str(k)))[:spare]:
                quota[label] += 1
        starts = np.searchsorted(self.label, np.arange(len(self.labels)))
        at = np.concatenate([np.arange(start, start + min(quota.get(label, 0), self.cap), dtype=np.int64)
                             for start, label in zip(starts, self.labels, strict=True)] or [np.zeros(0, np.int64)])
        at = at[np.lexsort((self.pos[at], self.key[at]))]
        return [(p, self.labels[code], r) for p, code, r in
                zip(self.pos[at].tolist(), self.label[at].tolist(), self.released[at].tolist(), strict=True)]


def _batches(sections: list[Path] | pa.Table) -> Iterator[pa.Table]:
    if isinstance(sections, pa.Table):
        yield from (pa.Table.from_batches([b]) for b in sections.select(COLUMNS).to_batches(TABLE_BATCH_ROWS))
        return
    for shard in sections:
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=COLUMNS):
            yield pa.Table.from_batches([batch])


def _keys(section_ids: pa.ChunkedArray) -> np.ndarray:
    """:func:`_hash` of every section id, as uint64."""
    sha256 = hashlib.sha256
    digests = b"".join([sha256(s).digest() for s in section_ids.cast(pa.binary()).to_pylist()])
    return np.frombuffer(digests, ">u8")[::4].astype(np.uint64)  # the first 8 of each digest's 32 bytes


def _catchline(heading: str) -> str | None:
    """A heading as a catchline (without trailing periods); None when empty, reserved/repealed or too long."""
    heading = heading.strip().rstrip(".")
    return heading if heading and heading.lower() not in SKIP_HEADINGS and len(heading) <= 200 else None


def _has_catchline(headings: pa.ChunkedArray) -> np.ndarray:
    """Whether :func:`_catchline` keeps each heading. Arrow settles the plain ones: at most 200 characters, an
    ASCII letter or digit (which stripping keeps) and no skip word in any case; Python the others."""
    plain = pc.and_(pc.and_(pc.less_equal(pc.utf8_length(headings), 200),
                            pc.match_substring_regex(headings, "[A-Za-z0-9]")),
                    pc.invert(pc.match_substring_regex(headings, "reserved|repealed", ignore_case=True)))
    ok = pc.fill_null(plain, False).to_numpy(zero_copy_only=False).copy()
    rest = np.flatnonzero(~ok)
    if len(rest):
        ok[rest] = [_catchline(h) is not None for h in headings.take(rest).to_pylist()]
    return ok


def _domains(paths: pa.ChunkedArray, seen: dict[str, str | None]) -> pa.Array:
    """:func:`domain_of_path` of every path (null for an empty one), once per distinct path (``seen``, keyed by
    the path's headings joined with a unit separator, which no heading holds)."""
    nonempty = pc.fill_null(pc.greater(pc.list_value_length(paths), 0), False).combine_chunks()
    given = paths.filter(nonempty)
    if pc.any(pc.match_substring(pc.list_flatten(given), _PATH_SEP)).as_py():  # never from our parsers
        found = pa.array([domain_of_path(path) for path in given.to_pylist()], pa.string())
    else:
        encoded = pc.binary_join(given, _PATH_SEP).combine_chunks().dictionary_encode()
        keys = encoded.dictionary.to_pylist()
        for key in keys:
            if key not in seen:
                seen[key] = domain_of_path(key.split(_PATH_SEP))
        found = pa.array([seen[key] for key in keys], pa.string()).take(encoded.indices)
    return pc.replace_with_mask(pa.nulls(len(paths), pa.string()), nonempty, found)


def _weak_functions(headings: pa.ChunkedArray, needed: pa.ChunkedArray) -> pa.Array:
    """:func:`weak_function` of the headings where ``needed`` (null elsewhere), once per distinct heading."""
    needed = pc.fill_null(needed, False).combine_chunks()
    encoded = headings.filter(needed).combine_chunks().dictionary_encode()
    functions = pa.array([weak_function(h) for h in encoded.dictionary.to_pylist()], pa.string())
    return pc.replace_with_mask(pa.nulls(len(headings), pa.string()), needed, functions.take(encoded.indices))


def _released(released: pa.Table | None, section_ids: pa.ChunkedArray, offset: int) -> pa.Table:
    """The released labels of these sections (null where none), by section_id; rows at the same position
    (``offset`` on) are taken without a lookup."""
    n = len(section_ids)
    if released is None:
        return pa.table({"function": pa.nulls(n, pa.string()), "topic": pa.nulls(n, pa.string()),
                         "substantive": pa.nulls(n, pa.bool_())})
    same = released.slice(offset, n)
    if same.num_rows == n and same["section_id"].equals(section_ids):
        return same
    return released.take(pc.index_in(section_ids, value_set=released["section_id"].combine_chunks()))


def _labels(rows: pa.Table, released: pa.Table, seen_paths: dict) -> dict[str, tuple[list, np.ndarray, np.ndarray]]:
    """task -> (its labels, each row's label index or -1 when the row is not offered, whether the label is the
    released one). Released labels replace the weak ones where given."""
    domain = _domains(rows["path"], seen_paths)
    given = {"function": released["function"], "topic": released["topic"],
             "substantive": pc.if_else(released["substantive"], SUBSTANTIVE[1], SUBSTANTIVE[0])}
    weak_f = _weak_functions(rows["heading"], pc.or_(pc.is_null(given["function"]), pc.is_null(given["substantive"])))
    weak = {"function": weak_f, "topic": TOPIC_OF[1].take(pc.index_in(domain, value_set=TOPIC_OF[0])),
            "substantive": pc.if_else(pc.equal(weak_f, "Context"), SUBSTANTIVE[0], SUBSTANTIVE[1])}
    catchline = _has_catchline(rows["heading"])
    out = {"domain": (*_encode(domain), np.zeros(len(domain), bool)),
           "catchline": ([None], np.where(catchline, 0, -1), np.zeros(len(catchline), bool))}
    for task in ("function", "topic", "substantive"):
        out[task] = (*_encode(pc.coalesce(given[task], weak[task])),
                     pc.is_valid(given[task]).to_numpy(zero_copy_only=False))
    return out


def _encode(labels: pa.Array | pa.ChunkedArray) -> tuple[list, np.ndarray]:
    """(distinct labels, each row's index among them or -1 for null)."""
    encoded = pc.dictionary_encode(labels)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded.dictionary.to_pylist(), pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)


def _example(task: str, s: dict, label: str | None, released: bool) -> dict:
    """The example of section ``s`` for ``task``, with its label."""
    base = {"section_id": s["section_id"], "jurisdiction_id": s["jurisdiction_id"], "number": s["number"]}
    if task == "domain":
        choices, index = domain_choices(s["section_id"], label)
        return {**base, "heading": s["heading"], "text": s["text"][:MAX_TEXT], "domain": label, "choices": choices,
                "label": index}
    if task == "catchline":
        return {**base, "text": s["text"][:MAX_TEXT], "heading": _catchline(s["heading"])}
    value = label == SUBSTANTIVE[1] if task == "substantive" else label
    return _labelled(task, s, value, "released" if released else "weak")


def _labelled(task: str, row: dict, label: str | bool, source: str) -> dict:
    answer = SUBSTANTIVE[int(label)] if task == "substantive" else str(label)
    return {"section_id": row["section_id"], "jurisdiction_id": row["jurisdiction_id"], "number": row["number"],
            "text": row["text"][:MAX_LABEL_TEXT], "answer": answer, "label": OPTIONS[task].index(answer),
            "label_source": source}


def derive(sections: list[Path] | pa.Table, jurisdiction_ids: list[str],
           released: pa.Table | None = None) -> dict[str, dict[str, list[dict]]]:
    """{config: {split: rows}} for ``domain``, ``catchline``, ``function``, ``topic`` and the weak
    ``substantive`` pool (the ``substantive_gold`` few-shot split), from the sections shards (or the sections
    table itself, where the build still holds it).

    ``released``: LOCUS-v1's released labels by ``section_id`` (columns ``function``, ``topic``,
    ``substantive``; null where not given; rows best in the order of the sections), which replace the weak
    ones where given.

    Column by column, a batch at a time, with arrays of hashes and positions: a section's own values become
    Python objects only when it is in a set.
    """
    splits = jurisdiction_splits(jurisdiction_ids)
    if not splits:
        return {}
    tasks = ("domain", "catchline", "function", "topic", "substantive")
    pools = {(task, split): _Pool((CAPS if task in ("domain", "catchline") else LABEL_CAPS)[split])
             for task in tasks for split in SPLITS}
    ids = pa.array(list(splits), pa.string())
    split_of = np.array([SPLITS.index(split) for split in splits.values()])
    seen_paths: dict[str, str | None] = {}
    store = _Store()
    offset = 0
    for batch in _batches(sections):
        given = _released(released, batch["section_id"], offset)
        at = pc.index_in(batch["jurisdiction_id"], value_set=ids)
        keep = pc.fill_null(pc.and_(pc.and_(pc.is_valid(at), pc.equal(batch["status"], "active")),
                                    pc.greater_equal(pc.utf8_length(batch["text"]), MIN_TEXT)), False)
        rows = batch.drop_columns(["text"]).filter(keep)  # the text is not copied: it is taken where kept
        pos = offset + np.flatnonzero(keep.to_numpy(zero_copy_only=False))
        split = split_of[at.filter(keep).to_numpy(zero_copy_only=False)]
        keys = _keys(rows["section_id"])
        for task, (values, index, from_release) in _labels(rows, given.filter(keep), seen_paths).items():
            for code, name in enumerate(SPLITS):
                chosen = np.flatnonzero((split == code) & (index >= 0))
                pools[(task, name)].add(values, index[chosen], keys[chosen], pos[chosen], from_release[chosen])
        store.add(batch, offset, list(pools.values()))
        offset += batch.num_rows
    taken = {pool: pool.take() for pool in pools.values()}
    sections_at = store.rows({p for kept in taken.values() for p, _, _ in kept})
    return {task: {split: [_example(task, sections_at[p], label, released)
                           for p, label, released in taken[pools[(task, split)]]] for split in SPLITS}
            for task in tasks}


class _Store:
    """The example columns of the sections some pool keeps, by position; dropped once none does (bounded)."""

    COLUMNS = ["section_id", "jurisdiction_id", "number", "heading", "text"]

    def __init__(self) -> None:
        self.pos: list[np.ndarray] = []  # ascending
        self.tables: list[pa.Table] = []  # their rows, the text cut at MAX_TEXT

    def add(self, batch: pa.Table, offset: int, pools: list[_Pool]) -> None:
        """Keep the rows of ``batch`` (its first at position ``offset``) that a pool keeps."""
        new = np.unique(np.concatenate([p.pos[p.pos >= offset] for p in pools]))
        self.pos.append(new)
        rows = batch.select(self.COLUMNS).take(new - offset)
        cut = pc.utf8_slice_codeunits(rows["text"], 0, MAX_TEXT)  # an example shows at most MAX_TEXT characters
        self.tables.append(rows.set_column(rows.schema.get_field_index("text"), "text", cut))
        if sum(len(p) for p in self.pos) > 2 * sum(len(p.pos) for p in pools):  # half are rows no pool keeps
            live = np.concatenate([p.pos for p in pools])  # dropped table by table: no second copy of the store
            alive = [np.isin(pos, live) for pos in self.pos]
            self.tables = [table.filter(keep) for table, keep in zip(self.tables, alive, strict=True)]
            self.pos = [pos[keep] for pos, keep in zip(self.pos, alive, strict=True)]

    def rows(self, positions: set[int]) -> dict[int, dict]:
        """position -> the section's example columns, as a dict."""
        if not positions:
            return {}
        pos, wanted = np.concatenate(self.pos), np.array(sorted(positions), np.int64)
        table = pa.concat_tables(self.tables).take(np.searchsorted(pos, wanted))
        return dict(zip(wanted.tolist(), table.to_pylist(), strict=True))


def gold_sets(gold: list[dict], sets: dict[str, dict[str, list[dict]]]) -> dict[str, dict[str, list[dict]]]:
    """{``<task>_gold``: {"train": the weak train split, "test": the gold dev examples}} (``goldset.read_gold``)."""
    out = {}
    for task in ("function", "topic", "substantive"):
        test = []
        for r in gold:
            row = {**r, "section_id": r["gid"]}
            if task == "function":
                test.append(_labelled(task, row, r["function_majority"], "gold"))
            elif task == "topic" and r["is_substantive"] and r["topic_majority"]:
                test.append(_labelled(task, row, r["topic_majority"], "gold"))
            elif task == "substantive":
                test.append(_labelled(task, row, bool(r["is_substantive"]), "gold"))
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
