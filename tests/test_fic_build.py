"""FiC builder: the Hub folder, the sharding rule on all of HumanEval, counts that reconcile, the real LiC data."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from neurips26.corpora.fic import build as fic_build
from neurips26.corpora.fic import sharding, sources

LIC = "lost-in-conversation"


def rows(folder: Path, config: str, split: str = "train") -> list[dict]:
    files = sorted((folder / "data" / config).glob(f"{split}-*.parquet"))
    return pq.read_table(files).to_pylist() if files else []


@pytest.fixture(scope="module")
def built(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fic") / "fic"
    assert fic_build.build(raw=shared_data / LIC, out=out).reconciles()
    return out


def test_every_config_loads_and_counts_reconcile(built: Path) -> None:
    report = json.loads((built / "build_report.json").read_text())
    assert report["reconciles"] and report["read"] == {"translation": 30, "code": 164, "arithmetic": 126}
    assert report["kept"]["code"] == {"train": 64, "test": 100}
    assert report["kept"]["arithmetic"] == {"train": 66, "test": 60}
    assert report["kept"]["translation"] == {"train": 0, "test": 30}
    for config in ("code", "arithmetic"):
        loaded = datasets.load_dataset(str(built), config)
        train_ids, test_ids = set(loaded["train"]["task_id"]), set(loaded["test"]["task_id"])
        assert not train_ids & test_ids, f"{config}: train and test share instructions"
    test = datasets.load_dataset(str(built), "translation", split="test")
    assert len(test) == 30 and all(r["license"].startswith("MIT") for r in test)
    assert json.loads((built / "manifest.json").read_text())["demo"] is False


def test_translation_keeps_lic_shards_in_order_and_skips_only_empty_ones(built: Path, shared_data: Path) -> None:
    released = {r["task_id"]: r for r in json.loads((shared_data / LIC / sources.TRANSLATION_FILE).read_text())}
    report = json.loads((built / "build_report.json").read_text())
    assert sorted(note.split(":")[0] for note in report["notes"]) == ["wmt-news-17-de-en", "wmt-news-20-de-en"]
    for row in rows(built, "translation", "test"):
        original = [s["shard"].strip() for s in sorted(released[row["task_id"]]["shards"], key=lambda s: s["shard_id"])
                    if s["shard"].strip()]
        assert row["shards"][0] == f"{sharding.TRANSLATION_INTENT}\n\n{original[0]}"
        assert row["shards"][1:] == original[1:]
        assert row["reference"] == released[row["task_id"]]["document_en"].strip()
        assert released[row["task_id"]]["document_de"].strip() in row["full_prompt"]


def test_sharding_restores_every_requirement_of_every_humaneval_prompt() -> None:
    problems = sources.read_humaneval()
    assert len(problems) == 164
    for problem in problems:
        sharded = sharding.shard_code(problem["prompt"], problem["entry_point"])
        joined = sharding.normalise(" ".join(sharded.shards))
        assert sharded.shards[0].startswith("Write a Python function `def " + problem["entry_point"])
        assert all(req in joined for req in sharded.requirements), problem["task_id"]
        fn = next(n for n in ast.walk(ast.parse(problem["prompt"]))
                  if isinstance(n, ast.FunctionDef) and n.name == problem["entry_point"])
        doc = next(n.value.value for n in fn.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        lost = Counter(doc.split()) - Counter(joined.split())
        assert not lost, f"{problem['task_id']}: words of the docstring missing from the shards: {lost}"


def test_code_shards_split_description_and_examples_in_docstring_order() -> None:
    prompt = ('def f(x: int) -> int:\n    """Return x doubled. Negative x is an error.\n'
              '    >>> f(2)\n    4\n    >>> f(0)\n    0\n    """\n')
    sharded = sharding.shard_code(prompt, "f")
    assert sharded.shards[1:] == ["Negative x is an error.", ">>> f(2)\n4", ">>> f(0)\n0"]
    assert "`def f(x: int) -> int:`" in sharded.shards[0] and "Return x doubled." in sharded.shards[0]
    with pytest.raises(sharding.ShardingError, match="no docstring"):
        sharding.shard_code("def f(x):\n    return x\n", "f")


def test_a_bad_translation_record_is_in_errors_with_its_reason(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    good = {"task_id": "doc-1", "task": "translation", "document_de": "Hallo Welt.", "document_en": "Hello world.",
            "shards": [{"shard_id": 1, "shard": "Hallo Welt."}]}
    bad = {**good, "task_id": "doc-2", "document_en": ""}
    (raw / sources.TRANSLATION_FILE).write_text(json.dumps([good, bad]))
    report = fic_build.build(raw=raw, out=tmp_path / "fic")
    assert report.reconciles() and report.read["translation"] == 2 and report.rejected["translation"] == 1
    errors = rows(tmp_path / "fic", "errors")
    assert errors == [{"source": f"{sources.TRANSLATION_FILE}[1]", "task_id": "doc-2", "reason": "missing document_en"}]


def test_generated_arithmetic_has_exact_answers(tmp_path: Path) -> None:
    for row in sources.generated_arithmetic():
        a, op, b = row["task_id"].removeprefix("arith-").partition("+" if "+" in row["task_id"] else "-")
        assert int(row["reference"]) == (int(a) + int(b) if op == "+" else int(a) - int(b))
        assert all(req in " ".join(row["shards"]) for req in row["requirements"])
