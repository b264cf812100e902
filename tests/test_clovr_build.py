"""CLoVR-Bench builder: the generated release into a Hub-ready folder; bad questions and videos are reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("av")

from neurips26.corpora.clovr import build as clovr  # noqa: E402
from neurips26.corpora.clovr.taxonomy import LEVELS, level  # noqa: E402

from neurips26.sql import run_query  # noqa: E402


@pytest.fixture(scope="session")
def clovr_raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clovr.default_raw(root=tmp_path_factory.getbasetemp() / "video-raw")


@pytest.fixture(scope="module")
def built(clovr_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, clovr.BuildReport]:
    out = tmp_path_factory.mktemp("data") / "clovr"
    return out, clovr.build(raw=clovr_raw, out=out, workers=2)


def read(folder: Path, config: str) -> list[dict]:
    return [r for f in sorted((folder / "data" / config).glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_build_and_schema(built: tuple[Path, clovr.BuildReport], clovr_raw: Path) -> None:
    out, report = built
    assert report.reconciles() and not report.problems
    assert (report.items_built, report.videos_ok, report.by_split) == (33, 9, {"test": 33})
    assert report.summary().startswith("33 questions (test 33) over 9 videos")
    rows = read(out, "questions")
    assert {r["level"] for r in rows} == set(LEVELS)
    raw = {i["qid"]: i for i in json.loads((clovr_raw / "annotations" / "test.json").read_text())["items"]}
    for row in rows:
        item = raw[row["qid"]]
        assert row["video_ids"] == item["video_ids"] and row["n_videos"] == 3
        assert row["answer"] == item["answer"] and row["options"][row["answer_index"]] == \
            item["options"]["ABCD".index(item["answer"])].split(". ", 1)[1]
        spans = list(zip(row["evidence_video_ids"], row["evidence_start"], row["evidence_end"], strict=True))
        assert spans == [(e["video_id"], e["start"], e["end"]) for e in item["evidence"]]
    assert "Tracking and Retrieval | Re-identification | appearance set | 6 |" in (out / "README.md").read_text()


def test_load_dataset_and_sql(built: tuple[Path, clovr.BuildReport], monkeypatch: pytest.MonkeyPatch,
                              tmp_path: Path) -> None:
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    out, _ = built
    questions = datasets.load_dataset(str(out), "questions", split="test")
    assert questions.num_rows == 33 and len(questions[0]["evidence_start"]) >= 1
    assert datasets.load_dataset(str(out), "videos", split="test").num_rows == 9
    table = run_query("SELECT level, count(*) AS n FROM clovr.questions GROUP BY ALL ORDER BY level",
                      {"clovr": out})
    assert table.to_pylist() == [{"level": "Comparative Analysis", "n": 12}, {"level": "Integrated Reasoning", "n": 9},
                                 {"level": "Tracking and Retrieval", "n": 12}]
    spans = run_query("SELECT count(*) AS n FROM (SELECT unnest(evidence_end) - unnest(evidence_start) AS d "
                      "FROM clovr.questions) WHERE d <= 0", {"clovr": out})
    assert spans.to_pylist() == [{"n": 0}]


def test_bad_questions_and_videos_are_reported(clovr_raw: Path, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(clovr_raw, raw)
    items = json.loads((raw / "annotations" / "test.json").read_text())["items"]
    first = items[0]
    bad = [
        {**first, "qid": "bad_level", "level": "Level 9"},
        {**first, "qid": "no_videos", "video_ids": []},
        {**first, "qid": "foreign_evidence", "evidence": [{"video_id": "elsewhere", "start": 0, "end": 1}]},
        {**first, "qid": "late_evidence", "evidence": [[first["video_ids"][0], 10.0, 99.0]]},
        {**first, "qid": "missing_video", "video_ids": first["video_ids"] + ["clovr_gen_s9_v1"]},
        {**first, "qid": "slug_level", "level": "tracking_and_retrieval", "evidence": None, "extra_note": "x"},
    ]
    (raw / "annotations" / "test.json").write_text(json.dumps({"items": items + bad}))
    (raw / "annotations" / "extra.jsonl").write_text(json.dumps({**first, "qid": "from_jsonl"}) + "\n{oops\n")
    (raw / "videos" / "clovr_gen_s2_v3.mp4").write_bytes(b"\x00" * 100)  # corrupt, used by set 2's questions
    out = tmp_path / "clovr"
    report = clovr.build(raw=raw, out=out)
    assert report.reconciles() and report.videos_corrupt == 1 and report.videos_missing == 1
    errors = {e["item"]: e["reason"] for e in read(out, "errors") if e["level"] == "item"}
    assert "is not one of" in errors["bad_level"]
    assert "non-empty list" in errors["no_videos"]
    assert "not one of the question's videos" in errors["foreign_evidence"]
    assert "after the video" in errors["late_evidence"]
    assert "clovr_gen_s9_v1 missing" in errors["missing_video"]
    assert "invalid JSON" in errors["#1"]
    assert sum("clovr_gen_s2_v3 corrupt" in r for r in errors.values()) == 11  # all of set 2's questions
    rows = {r["qid"]: r for r in read(out, "questions")}
    assert rows["slug_level"]["level"] == "Tracking and Retrieval" and rows["slug_level"]["evidence_start"] == []
    assert json.loads(rows["slug_level"]["extra"]) == {"extra_note": "x", "set": "s0"}
    assert rows["from_jsonl"]["split"] == "extra"
    assert report.by_split == {"test": 23, "extra": 1}


@pytest.mark.parametrize(("value", "name"), [
    ("Comparative Analysis", "Comparative Analysis"), ("comparative_analysis", "Comparative Analysis"),
    ("Level 2", "Tracking and Retrieval"), (3, "Integrated Reasoning"),
    ("INTEGRATED-REASONING", "Integrated Reasoning"),
])
def test_level_names(value: object, name: str) -> None:
    assert level(value) == name


def test_cli_build_of_the_registered_resource(clovr_raw: Path, tmp_path: Path) -> None:
    from neurips26.corpora import RESOURCES

    assert RESOURCES.get("clovr") is clovr.build
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["build", "clovr", "--raw", str(clovr_raw), "--out", str(tmp_path / "clovr")])
    assert result.exit_code == 0, result.output
