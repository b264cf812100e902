"""RoleBench-Unlearn builder: Hub folder, split determinism and disjointness, bad input, the real RoleBench."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from neurips26.corpora import RESOURCES
from neurips26.corpora.rolebench_unlearn import build as rb
from neurips26.corpora.rolebench_unlearn import splits

from neurips26 import hubfolder
from neurips26.errors import UserError

FORGETS = ("forget01", "forget05", "forget10")
ROLE_FILE = Path("rolebench-eng/instruction-generalization/role_specific")


def rows(folder: Path, config: str, split: str = "train") -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "rolebench_unlearn"
    report = rb.build(out=out)
    assert report.reconciles() and report.roles == 20
    return out


def test_folder_loads_and_card(sample: Path) -> None:
    header = yaml.safe_load((sample / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert [c["config_name"] for c in header["configs"]] == ["records", "roles", *FORGETS, "general", "errors"]
    for config in ("records", "roles", *FORGETS, "general", "errors"):
        loaded = datasets.load_dataset(str(sample), config)
        assert all(len(split) for split in loaded.values()), config
    assert set(datasets.load_dataset(str(sample), "forget05")) == set(rb.FORGET_SPLITS)
    text = (sample / "README.md").read_text(encoding="utf-8")
    assert "**240 records** of **20 roles**" in text and "harmonic mean" in text
    manifest = json.loads((sample / "manifest.json").read_text())
    for shard in (s for splits_ in manifest["configs"].values() for shards in splits_.values() for s in shards):
        assert hubfolder.sha256_file(sample / shard["path"]) == shard["sha256"]
    assert json.loads((sample / "croissant.json").read_text())["name"] == "rolebench_unlearn"


def test_bad_records_go_to_errors(sample: Path) -> None:
    report = json.loads((sample / "build_report.json").read_text())
    assert (report["records_in"], report["records_kept"], report["records_duplicate"],
            report["records_rejected"]) == (246, 240, 1, 5)
    assert (report["files_in"], report["files_parsed"], report["files_skipped"]) == (3, 2, 1)
    reasons = sorted(e["reason"].split(" (")[0] for e in rows(sample, "errors"))
    assert reasons == ["missing generated", "missing question", "no non-empty reference answer", "not valid JSON",
                       "skipped: RoleGPT baseline outputs, not reference answers", "unknown role"]
    admiral = [r for r in rows(sample, "records") + rows(sample, "records", "test")
               if r["role"] == "Oswin Thornbury" and "Admiral" in r["question"]]
    assert len(admiral) == 1 and len(admiral[0]["references"]) == 2 and len(admiral[0]["source_files"]) == 1


def test_splits_disjoint_and_complete(sample: Path) -> None:
    train, test = rows(sample, "records"), rows(sample, "records", "test")
    assert not {r["record_id"] for r in train} & {r["record_id"] for r in test}
    roles = {r["role"]: r for r in rows(sample, "roles")}
    for info in roles.values():
        n = info["records"]
        assert info["test"] == max(1, round(0.2 * n)) and info["train"] == n - info["test"]
    previous: set[str] = set()
    for name in FORGETS:
        parts = {s: rows(sample, name, s) for s in rb.FORGET_SPLITS}
        forget = {r["role"] for s in ("forget_train", "forget_test") for r in parts[s]}
        retain = {r["role"] for s in ("retain_train", "retain_test") for r in parts[s]}
        assert not forget & retain and forget | retain == set(roles)
        assert len(forget) == max(1, round(rb.splits.FORGET_SHARES[name] * len(roles)))
        assert previous <= forget  # nested
        previous = forget
        assert {r["record_id"] for r in parts["forget_test"] + parts["retain_test"]} == {r["record_id"] for r in test}
        assert {r["record_id"] for r in parts["forget_train"] + parts["retain_train"]} == {r["record_id"]
                                                                                           for r in train}
        assert sorted(forget) == sorted(r for r, i in roles.items() if name in i["forget_splits"])
    ranked = sorted(roles, key=lambda r: roles[r]["rank"])
    assert ranked == splits.role_order(roles)


def test_split_rules_are_deterministic_and_stable() -> None:
    roles = [f"Role {i}" for i in range(95)]
    sets = splits.forget_sets(roles)
    assert [len(sets[n]) for n in FORGETS] == [1, 5, 10]
    assert splits.forget_sets(reversed(roles)) == sets
    assert [len(splits.forget_roles(roles[:20], s)) for s in (0.01, 0.05, 0.10)] == [1, 1, 2]
    questions = [f"question {i}?" for i in range(50)]
    held_out = splits.test_questions(questions)
    assert len(held_out) == 10 and splits.test_questions(reversed(questions)) == held_out
    assert len(splits.test_questions(["only one"])) == 1


def test_rebuild_is_byte_identical(sample: Path, tmp_path: Path) -> None:
    again = tmp_path / "rolebench_unlearn"
    rb.build(out=again)
    for shard in sorted((sample / "data").rglob("*.parquet")):
        assert (again / shard.relative_to(sample)).read_bytes() == shard.read_bytes(), shard


def test_input_contract_errors(tmp_path: Path) -> None:
    with pytest.raises(rb.BuildError, match="rolebench-eng"):
        rb.build(raw=tmp_path, out=tmp_path / "out")
    raw = tmp_path / "raw"
    shutil.copytree(rb.SAMPLE_DIR / "rolebench-eng", raw / "rolebench-eng")  # no desc.json: roles need 5 records
    (raw / ROLE_FILE / "bad.jsonl").write_bytes(b"\xff\xfe not utf-8")
    report = rb.build(raw=raw, out=tmp_path / "out")
    assert report.files_rejected == 1 and report.reconciles()
    reasons = [e["reason"] for e in rows(tmp_path / "out", "errors")]
    assert any("fewer than 5 records" in r for r in reasons) and any("not UTF-8" in r for r in reasons)
    assert issubclass(rb.BuildError, UserError)  # the CLI prints it as one line
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["demo"] is False  # built from --raw


def test_registered_and_demo_manifest(sample: Path) -> None:
    assert RESOURCES.get("rolebench_unlearn") is rb.build
    assert json.loads((sample / "manifest.json").read_text())["demo"] is True  # the embedded sample


def test_real_rolebench(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "rolebench_unlearn"
    report = rb.build(raw=shared_data / "rolebench", out=out)
    assert report.reconciles() and report.roles == 95 and report.records_rejected == 0
    assert json.loads((out / "manifest.json").read_text())["demo"] is False
    assert {k: len(v) for k, v in report.forget_roles.items()} == {"forget01": 1, "forget05": 5, "forget10": 10}
    forget05 = datasets.load_dataset(str(out), "forget05")
    assert len(forget05["forget_test"]) >= 50 and len(forget05["retain_test"]) > 1000
    first = [r["role"] for r in forget05["retain_test"].select(range(20))]
    assert len(set(first)) == 20  # interleaved: the first rows cover many roles


# -- the whole release: rolebench-zh and the general parts (fixtures in the released layout and fields) ----------

ZH_VOICES = {
    "孙悟空": "俺老孙说：{}，呆子莫怕！",
    "林黛玉": "罢了，{}，不过是花谢花飞罢了。",
    "诸葛亮": "亮以为，{}，此乃天时地利人和。",
}
ZH_QUESTIONS = ["你今天做了什么", "你最怕什么", "你喜欢吃什么", "你的朋友是谁", "你有什么愿望", "你怎么看待失败"]
ZH_TOPICS = ["今日去了花果山", "最怕紧箍咒", "爱吃仙桃", "朋友在天上", "愿天下太平", "失败乃成功之母"]
GENERAL_INSTRUCTIONS = ["Describe a rainy day.", "Give advice for a job interview.", "Explain why the sky is blue.",
                        "Write a short poem about the sea.", "How do you make tea?"]


def jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def zh_release(raw: Path) -> None:
    """rolebench-zh/{role_specific,general}: 3 roles x 6 questions each, RoleGPT outputs beside them."""
    specific = [{"role": role, "question": f"{role}，{q}？", "generated": [voice.format(t)], "type": "script_agnostic"}
                for role, voice in ZH_VOICES.items() for q, t in zip(ZH_QUESTIONS, ZH_TOPICS, strict=True)]
    jsonl(raw / "rolebench-zh/role_specific/train.jsonl", specific[::2])
    jsonl(raw / "rolebench-zh/role_specific/test.jsonl", specific[1::2])
    general = [{"role": role, "question": q, "generated": [voice.format(f"{q}答案{i}") for i in range(5)]}
               for role, voice in ZH_VOICES.items() for q in ["请介绍一下春天。", "如何学习写字？"]]
    jsonl(raw / "rolebench-zh/general/train.jsonl", general)
    jsonl(raw / "rolebench-zh/general/rolegpt_baseline.jsonl", general[:2])


def general_release(raw: Path) -> list[str]:
    """The embedded sample's English role_specific files and profiles, plus general/ files for 4 of its roles
    (5 reference answers per role-instruction pair, as RoleBench's general part); the roles used."""
    shutil.copytree(rb.SAMPLE_DIR, raw, dirs_exist_ok=True)
    roles = sorted(json.loads((raw / "profiles-eng/desc.json").read_text(encoding="utf-8")))[:4]
    rows = [{"role": role, "question": q, "generated": [f"As {role} I say: {q.lower()} ({i})" for i in range(5)]}
            for role in roles for q in GENERAL_INSTRUCTIONS]
    jsonl(raw / "rolebench-eng/instruction-generalization/general/train.jsonl", rows[:12])
    jsonl(raw / "rolebench-eng/role-generalization/general/test.jsonl", rows[12:])
    return roles


def test_chinese_release_builds_alone(tmp_path: Path) -> None:
    zh_release(tmp_path / "raw")
    report = rb.build(raw=tmp_path / "raw", out=tmp_path / "out")
    assert report.reconciles() and report.languages == {"zh": 3} and report.files_skipped == 1
    records = rows(tmp_path / "out", "records") + rows(tmp_path / "out", "records", "test")
    assert {r["language"] for r in records} == {"zh"} and {r["part"] for r in records} == {"role_specific", "general"}
    assert len(records) == 3 * 6 + 3 * 2
    roles = rows(tmp_path / "out", "roles")
    assert {r["role"] for r in roles} == set(ZH_VOICES) and {r["language"] for r in roles} == {"zh"}
    forget05 = datasets.load_dataset(str(tmp_path / "out"), "forget05")
    targets = {r["role"] for r in forget05["forget_test"]} | {r["role"] for r in forget05["forget_train"]}
    assert len(targets) == 1 and {r["part"] for r in forget05["forget_train"]} == {"role_specific", "general"}
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "RoleBench (Chinese)" in card and "| 孙悟空 | zh |" in card


def test_general_parts_and_both_languages_build_together(sample: Path, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    general_roles = general_release(raw)
    zh_release(raw)
    report = rb.build(raw=raw, out=tmp_path / "out")
    assert report.reconciles() and report.languages == {"en": 20, "zh": 3}
    assert report.records_kept == 240 + 4 * 5 + 3 * 6 + 3 * 2
    records = rows(tmp_path / "out", "records") + rows(tmp_path / "out", "records", "test")
    general = [r for r in records if (r["language"], r["part"]) == ("en", "general")]
    assert len(general) == 4 * 5 and {r["role"] for r in general} == set(general_roles)
    assert all(len(r["references"]) == 5 for r in general)
    # English role_specific records keep their ids; the general part is split within each role too
    before = {r["record_id"] for r in rows(sample, "records") + rows(sample, "records", "test")}
    assert {r["record_id"] for r in records if (r["language"], r["part"]) == ("en", "role_specific")} == before
    test = rows(tmp_path / "out", "records", "test")
    assert sum(1 for r in test if r["part"] == "general" and r["role"] == general_roles[0]) == 1  # round(0.2 * 5)
    # forget sets per language: forget05 is 1 of 20 English roles and 1 of 3 Chinese roles
    assert [len(report.forget_roles[n]) for n in FORGETS] == [2, 2, 3]
    roles = {(r["language"], r["role"]): r for r in rows(tmp_path / "out", "roles")}
    for name in FORGETS:
        targets = {key for key, info in roles.items() if name in info["forget_splits"]}
        assert {lang for lang, _ in targets} == {"en", "zh"}
        forget_rows = rows(tmp_path / "out", name, "forget_train") + rows(tmp_path / "out", name, "forget_test")
        assert {(r["language"], r["role"]) for r in forget_rows} == targets
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["demo"] is False and "rolebench-zh/general/train.jsonl" in manifest["inputs"]["sha256"]


def test_a_folder_without_either_language_is_refused_by_name(tmp_path: Path) -> None:
    jsonl(tmp_path / "rolebench-fr/role_specific/train.jsonl", [{"role": "a", "question": "b", "generated": ["c"]}])
    with pytest.raises(rb.BuildError, match="no rolebench-eng/ or rolebench-zh/ folder"):
        rb.build(raw=tmp_path, out=tmp_path / "out")
    jsonl(tmp_path / "rolebench-zh/notes/x.jsonl", [{"role": "a", "question": "b", "generated": ["c"]}])
    with pytest.raises(rb.BuildError, match=r"no role_specific/\*.jsonl or general/\*.jsonl files under rolebench-zh/"):
        rb.build(raw=tmp_path, out=tmp_path / "out")
