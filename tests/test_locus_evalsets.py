"""LOCUS evaluation sets and task design: configs written at build time, honest test splits, one label set."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import evalsets, v1
from neurips26.corpora.locus.labels import weak_function, weak_topic
from neurips26.corpora.locus.records import FUNCTIONS, LETTERS, SECTIONS, SUBSTANTIVE, TOPICS, BuildError
from neurips26.tasks import TASKS_DIR

from neurips26.errors import UserError

LOCUS_TASKS = TASKS_DIR / "locus"
LABEL_TASKS = {"locus_function": FUNCTIONS, "locus_topic": TOPICS, "locus_substantive_gold": SUBSTANTIVE}
PROTOCOL_KEYS = {"split", "num_fewshot", "fewshot_split", "chat_template", "metric", "higher_is_better",
                 "baseline", "baseline_from", "range", "task_metadata", "generation"}


class _Loader(yaml.SafeLoader):
    """YAML loader that reads lm-eval's ``!function`` tags as plain strings."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def task_yaml(name: str) -> dict:
    config = yaml.load((LOCUS_TASKS / f"{name}.yaml").read_text(encoding="utf-8"), Loader=_Loader)
    if "include" in config:
        config = {**yaml.load((LOCUS_TASKS / config["include"]).read_text(encoding="utf-8"), Loader=_Loader),
                  **{k: v for k, v in config.items() if k != "include"}}
    return config


def task_names() -> list[str]:
    return sorted(p.stem for p in LOCUS_TASKS.glob("locus_*.yaml"))


def read(folder: Path, config: str, split: str) -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evalsets") / "locus"
    locus.build(out=out)
    return out


@pytest.mark.parametrize("task, labels", LABEL_TASKS.items())
def test_label_sets_agree_with_the_task_yaml(task: str, labels: tuple[str, ...]) -> None:
    config = task_yaml(task)
    letters = list(LETTERS[:len(labels)])
    assert config["doc_to_choice"] == letters
    options = re.findall(r"^([A-J])\. (\w+)", config["doc_to_text"], flags=re.M)
    assert options == list(zip(letters, labels, strict=True))


def test_domain_options_are_lettered() -> None:
    config = task_yaml("locus_domain")
    assert config["doc_to_choice"] == list(LETTERS[:evalsets.N_CHOICES])
    assert f"'{LETTERS[:evalsets.N_CHOICES]}'[loop.index0]" in config["doc_to_text"]


@pytest.mark.parametrize("task", task_names())
def test_every_task_has_a_protocol_and_reads_a_config(task: str) -> None:
    config = task_yaml(task)
    assert config["metadata"]["version"] == 2.0 and config["metadata"]["data"] == {}  # filled at load time
    protocol = config["metadata"]["protocol"]
    assert set(protocol) == PROTOCOL_KEYS and protocol["split"] == config["test_split"] == "test"
    assert config["dataset_path"] == "locus" and config["custom_dataset"].startswith("!function utils.load_")
    assert config["dataset_name"] in {**evalsets.CONFIGS, **evalsets.GOLD_CONFIGS}
    metrics = [m["metric"] for m in config["metric_list"]]
    assert metrics[0] == protocol["metric"] and "acc_norm" not in metrics
    if config["output_type"] == "multiple_choice":
        assert protocol["metric"] == "acc" and protocol["baseline"] == "majority" and "macro_f1" in metrics
    else:
        assert isinstance(protocol["baseline"], float)
        assert protocol["generation"] == config["generation_kwargs"]


def test_substantive_is_not_a_weak_task() -> None:
    """The weak substantive label is "function is not Context": only the gold label gets a task."""
    assert "locus_substantive" not in task_names()
    group = yaml.safe_load((LOCUS_TASKS / "_locus.yaml").read_text())
    assert group["task"] == ["locus_domain", "locus_catchline", "locus_function", "locus_topic"]
    assert [m["metric"] for m in group["aggregate_metric_list"]] == ["acc"]


def test_every_label_task_config_is_built_with_honest_splits(sample: Path) -> None:
    manifest = json.loads((sample / "manifest.json").read_text())
    assert manifest["demo"] is True
    for name, (_, _, label_column, options) in evalsets.CONFIGS.items():
        assert set(manifest["configs"][name]) == set(evalsets.SPLITS), name
        splits = {s: read(sample, name, s) for s in evalsets.SPLITS}
        test = splits["test"]
        assert len({r["jurisdiction_id"] for r in test}) >= 2, name
        assert not {r["jurisdiction_id"] for r in test} & {r["jurisdiction_id"] for r in splits["train"]}
        if label_column:
            assert len({r[label_column] for r in test}) >= 2, name
        if options:
            assert all(options[r["label"]] == r["answer"] for rows in splits.values() for r in rows)


def test_constant_answers_score_at_the_majority_baseline(sample: Path) -> None:
    """A constant answerer's acc is at most the majority baseline, and its macro-F1 is far below it."""
    from neurips26.tasks.locus import utils

    for name in ("domain", "function", "topic"):
        test = read(sample, name, "test")
        n_options = evalsets.N_CHOICES if name == "domain" else len(evalsets.CONFIGS[name][3])
        majority = max(Counter(r["label"] for r in test).values()) / len(test)
        for constant in range(n_options):
            loglik = [(0.0 if k == constant else -1.0, k == constant) for k in range(n_options)]
            scored = [utils.score_choice(r, loglik) for r in test]
            acc = sum(s["acc"] for s in scored) / len(scored)
            assert acc <= majority + 1e-9
            assert utils.macro_f1([s["macro_f1"] for s in scored]) <= 2 / len({r["label"] for r in test})


def test_task_reads_a_built_folder_and_never_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.tasks.locus import utils

    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path))
    with pytest.raises(UserError, match=r"run `neurips26 build locus`"):
        utils.load_function()
    assert not (tmp_path / "locus").exists()


# -- refusals: raw folders made so that a test split would mislead ---------------------------------------------

TEXT = ("The owner or occupant of any premises within the jurisdiction shall comply with every requirement of "
        "this section at all times, and the administrator shall enforce it as provided in this code.")


def municode(chapters: dict[str, list[str]]) -> bytes:
    """A Municode-style code: chapters of sections with the given catchlines and a long enough text."""
    lines = ["THE CODE OF ORDINANCES", "PART II - CODE OF ORDINANCES"]
    for n, (chapter, headings) in enumerate(chapters.items(), start=1):
        lines.append(f"Chapter {n} - {chapter}")
        lines += [f"Sec. {n}-{k}. - {heading}. {TEXT}" for k, heading in enumerate(headings, start=1)]
    return ("\n".join(lines) + "\n").encode()


VARIED = {"ANIMALS": ["Definitions", "Dogs at large prohibited", "Kennel permit required", "Penalties"],
          "ZONING": ["Purpose", "Setbacks", "Variance applications", "Violations"],
          "BUSINESS LICENSES": ["Scope", "Hours of operation", "License fees", "Revocation"]}


def make_raw(root: Path, codes: dict[str, bytes]) -> Path:
    root.mkdir(parents=True)
    rows = ["jurisdiction_id,name,kind,state,counties,source"]
    for jid, data in codes.items():
        (root / jid).mkdir()
        (root / jid / "code.txt").write_bytes(data)
        rows.append(f"{jid},Town of {jid},town,GA,Putnam County,test")
    (root / "jurisdictions.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def test_jurisdiction_splits_need_two_test_jurisdictions() -> None:
    assert evalsets.jurisdiction_splits(["a", "b", "c"]) == {}
    splits = evalsets.jurisdiction_splits([f"j{k}" for k in range(4)])
    assert Counter(splits.values()) == {"test": 2, "validation": 1, "train": 1}


def test_build_refuses_a_single_jurisdiction_test_split(tmp_path: Path) -> None:
    ids = [f"town-{k}" for k in range(4)]
    test_ids = sorted(j for j, s in evalsets.jurisdiction_splits(ids).items() if s == "test")
    # the second test jurisdiction has only sections too short to enter any evaluation set
    codes = {jid: municode(VARIED) for jid in ids}
    codes[test_ids[1]] = b"Chapter 1 - ANIMALS\nSec. 1-1. - Dogs. No dogs.\n"
    with pytest.raises(BuildError, match=rf"locus config 'domain': its test split comes from a single jurisdiction "
                                         rf"\({test_ids[0]}\)"):
        locus.build(raw=make_raw(tmp_path / "raw", codes), out=tmp_path / "locus")


def test_build_refuses_a_single_label_test_split(tmp_path: Path) -> None:
    ids = [f"town-{k}" for k in range(4)]
    test_ids = {j for j, s in evalsets.jurisdiction_splits(ids).items() if s == "test"}
    codes = {jid: municode({"ANIMALS": VARIED["ANIMALS"]} if jid in test_ids else VARIED) for jid in ids}
    with pytest.raises(BuildError, match="locus config 'domain': every test example has the label 'animals'"):
        locus.build(raw=make_raw(tmp_path / "raw", codes), out=tmp_path / "locus")


def test_varied_raw_folder_builds_every_label_config(tmp_path: Path) -> None:
    ids = [f"town-{k}" for k in range(4)]
    out = tmp_path / "locus"
    locus.build(raw=make_raw(tmp_path / "raw", {jid: municode(VARIED) for jid in ids}), out=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["demo"] is False
    locus.build(raw=locus.SAMPLE_DIR, out=tmp_path / "named-sample")  # the embedded sample named with --raw
    assert json.loads((tmp_path / "named-sample" / "manifest.json").read_text())["demo"] is True
    assert {"domain", "catchline", "function", "topic"} <= set(manifest["configs"])
    assert {r["answer"] for r in read(out, "function", "test")} == set(FUNCTIONS)


# --- the selection, against the rules applied row by row ---------------------------------------------------

HEADINGS = ["Definitions.", "Penalty for violation", "Permit required", "  Reserved. ", "[Repealed]", "", "Fees.",
            "x" * 250, "Über die Straße", "\x1fDefinitions", "Noise; hours", "RESERVED", "Short title", "Sec. 4-2."]
PATHS = [[], ["Chapter 6 - ANIMALS"], ["ZONING", "Article II. - Districts"], ["BUSINESS LICENSES AND TAXES"],
         ["Title 9 - HEALTH", "Chapter 3 - Noise"], ["Chapter 1 - GENERAL PROVISIONS"]]


def rule_by_rule(rows: list[dict], jurisdiction_ids: list[str], released: dict[str, dict]) -> dict:
    """The module docstring's rules, one section at a time: every eligible section with its label and hash, then
    per label the smallest hashes up to the label's share of the cap."""
    splits = evalsets.jurisdiction_splits(jurisdiction_ids)
    offered: dict[tuple[str, str], list[tuple]] = {}
    for s in rows:
        split = splits.get(s["jurisdiction_id"])
        if split is None or s["status"] != "active" or len(s["text"]) < evalsets.MIN_TEXT:
            continue
        key, sid = evalsets._hash(s["section_id"]), s["section_id"]
        base = {"section_id": sid, "jurisdiction_id": s["jurisdiction_id"], "number": s["number"]}
        domain = evalsets.domain_of_path(s["path"])
        if domain:
            choices, label = evalsets.domain_choices(sid, domain)
            offered.setdefault(("domain", split), []).append((domain, key, sid, {
                **base, "heading": s["heading"], "text": s["text"][:evalsets.MAX_TEXT], "domain": domain,
                "choices": choices, "label": label}))
        heading = s["heading"].strip().rstrip(".")
        if heading and heading.lower() not in evalsets.SKIP_HEADINGS and len(heading) <= 200:
            offered.setdefault(("catchline", split), []).append((None, key, sid, {
                **base, "text": s["text"][:evalsets.MAX_TEXT], "heading": heading}))
        given = {k: v for k, v in released.get(sid, {}).items() if v is not None}
        function = weak_function(s["heading"])
        weak = {"function": function, "topic": weak_topic(s["path"]),
                "substantive": None if function is None else function != "Context"}
        for task in ("function", "topic", "substantive"):
            label, source = (given[task], "released") if task in given else (weak[task], "weak")
            if label is not None:
                example = evalsets._labelled(task, s, label, source)
                offered.setdefault((task, split), []).append((example["answer"], key, sid, example))
    sets = {}
    for (task, split), items in offered.items():
        cap = (evalsets.CAPS if task in ("domain", "catchline") else evalsets.LABEL_CAPS)[split]
        counts = Counter(label for label, *_ in items)
        quota = dict(counts)
        if len(items) > cap:
            exact = {label: cap * n / len(items) for label, n in counts.items()}
            quota = {label: int(v) for label, v in exact.items()}
            for label in sorted(exact, key=lambda k: (-(exact[k] - quota[k]), str(k)))[:cap - sum(quota.values())]:
                quota[label] += 1
        kept = [item for label in counts for item in sorted((i for i in items if i[0] == label),
                                                            key=lambda i: (i[1], i[2]))[:quota[label]]]
        sets.setdefault(task, {})[split] = [example for *_, example in sorted(kept, key=lambda i: (i[1], i[2]))]
    return {task: {split: sets.get(task, {}).get(split, []) for split in evalsets.SPLITS}
            for task in ("domain", "catchline", "function", "topic", "substantive")}


@pytest.mark.parametrize("batch_rows", [97, 100_000])
def test_selection_matches_the_rules_row_by_row(batch_rows: int, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """derive() works a batch at a time and offers a pool only the sections it can keep; what it selects is what
    the rules give one section at a time: from the shards or a table, with or without released labels (in the
    sections' order or not), with small caps, in many batches or one."""
    monkeypatch.setattr(evalsets, "BATCH_ROWS", batch_rows)
    monkeypatch.setattr(evalsets, "CAPS", {"train": 60, "validation": 25, "test": 40})
    monkeypatch.setattr(evalsets, "LABEL_CAPS", {"train": 30, "validation": 10, "test": 20})
    rng = random.Random(7)
    ids = [f"town-{k}" for k in range(12)]
    rows = [{"section_id": f"{jid}:{i}", "jurisdiction_id": jid, "state": "GA", "number": str(i),
             "heading": rng.choice(HEADINGS), "text": "word " * rng.choice([3, 20, 200]), "path": rng.choice(PATHS),
             "history": [], "cross_references": [], "status": rng.choice(["active"] * 5 + ["repealed"]),
             "order": i, "source_file": "code.txt", "format": "text"}
            for jid in ids for i in range(rng.randrange(40, 160))]
    table = pa.Table.from_pylist(rows, schema=SECTIONS)
    shards = []
    for k, start in enumerate(range(0, len(rows), 500)):
        shards.append(tmp_path / f"s{k}.parquet")
        pq.write_table(table.slice(start, 500), shards[-1])
    source = pa.table({"section_id": table["section_id"],
                       "function": [rng.choice([*FUNCTIONS, None, "Bogus"]) for _ in rows],
                       "topic": [rng.choice([*TOPICS, None]) for _ in rows],
                       "is_substantive": [rng.choice([True, False, None]) for _ in rows]})
    released = v1.released_labels(source)
    by_id = {r["section_id"]: {"function": r["function"], "topic": r["topic"], "substantive": r["substantive"]}
             for r in released.to_pylist()}
    assert evalsets.derive(shards, ids) == rule_by_rule(rows, ids, {})
    expected = rule_by_rule(rows, ids, by_id)
    assert expected["function"]["train"] and expected["catchline"]["test"] and expected["domain"]["validation"]
    assert evalsets.derive(table, ids, released) == expected
    assert evalsets.derive(shards, ids, released.take(list(reversed(range(len(rows)))))) == expected
