"""TAR builder: the generated release into a Hub-ready folder; malformed files, items and videos are reported."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("av")

from neurips26.corpora.tar import build as tar  # noqa: E402
from neurips26.corpora.tar.tasktypes import TASK_TYPES  # noqa: E402
from neurips26.corpora.video import fields  # noqa: E402

from neurips26.errors import UserError  # noqa: E402
from neurips26.sql import run_query  # noqa: E402


@pytest.fixture(scope="session")
def tar_raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tar.default_raw(root=tmp_path_factory.getbasetemp() / "video-raw")


@pytest.fixture(scope="module")
def built(tar_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tar.BuildReport]:
    out = tmp_path_factory.mktemp("data") / "tar"
    return out, tar.build(raw=tar_raw, out=out)


def read(folder: Path, config: str, split: str | None = None) -> list[dict]:
    files = sorted((folder / "data" / config).glob(f"{split or '*'}-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_build_reconciles(built: tuple[Path, tar.BuildReport]) -> None:
    out, report = built
    assert report.reconciles() and not report.problems
    assert (report.items_in, report.items_built, report.videos_ok) == (72, 72, 6)
    assert report.by_split == {"train": 48, "test": 24}
    assert report.files_ignored == 6  # the scene scripts: inputs, counted, not built
    assert "72 annotations (train 48, test 24) over 6 videos" in report.summary()
    for name in ("README.md", "croissant.json", "manifest.json", "build_report.json"):
        assert (out / name).is_file()
    assert "procedural generator's synthetic release" in (out / "README.md").read_text()


def test_schema_and_answers(built: tuple[Path, tar.BuildReport], tar_raw: Path) -> None:
    out, _ = built
    rows = read(out, "annotations")
    assert {r["task_type"] for r in rows} == set(TASK_TYPES)
    for row in rows:
        spec = TASK_TYPES[row["task_type"]]
        assert row["group"] == spec.group and row["question"] and row["reasoning"]
        if spec.answer == "choice":
            assert row["options"] and row["answer"] == "ABCD"[row["answer_index"]]
            assert not any(o[:3] in ("A. ", "B. ") for o in row["options"])  # letter prefixes stripped
        if spec.answer == "span":
            assert 0 <= row["start"] < row["end"] <= 10.0
        assert json.loads(row["extra"])["scenario"]  # unknown release fields are kept
    description = next(r for r in rows if r["task_type"] == "scene_description")
    assert description["question"] == TASK_TYPES["scene_description"].prompt  # no question in the release


def test_videos_config_and_files(built: tuple[Path, tar.BuildReport]) -> None:
    out, _ = built
    test_videos = read(out, "videos", "test")
    assert len(test_videos) == 2 and len(read(out, "videos", "train")) == 4
    for video in test_videos + read(out, "videos", "train"):
        assert (video["n_frames"], video["fps"], video["duration"]) == (100, 10.0, 10.0)
        assert hashlib.sha256(video["video"]["bytes"]).hexdigest() == video["sha256"]  # embedded by default
        assert video["video"]["path"] == video["path"] and not (out / video["path"]).exists()


def test_load_dataset_and_sql(built: tuple[Path, tar.BuildReport], monkeypatch: pytest.MonkeyPatch,
                              tmp_path: Path) -> None:
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    out, _ = built
    test = datasets.load_dataset(str(out), "annotations", split="test")
    assert test.num_rows == 24 and test.features["options"].feature.dtype == "string"
    assert datasets.load_dataset(str(out), "videos", split="train").num_rows == 4
    table = run_query("SELECT \"group\", count(*) AS n FROM tar.annotations GROUP BY ALL ORDER BY 1",
                      {"tar": out})
    assert table.to_pylist() == [{"group": "Question Answering", "n": 42}, {"group": "Scene Understanding", "n": 12},
                                 {"group": "Temporal Reasoning", "n": 18}]


def test_rebuild_is_byte_identical(built: tuple[Path, tar.BuildReport], tar_raw: Path, tmp_path: Path) -> None:
    out, _ = built
    tar.build(raw=tar_raw, out=tmp_path / "tar", workers=2)
    first = json.loads((out / "manifest.json").read_text())["configs"]
    second = json.loads((tmp_path / "tar" / "manifest.json").read_text())["configs"]
    assert first == second


def damaged(tar_raw: Path, root: Path) -> Path:
    """A copy of the release with every kind of problem the builder must report."""
    raw = root / "raw"
    shutil.copytree(tar_raw, raw)
    test = raw / "annotations" / "test"
    (test / "broken.json").write_text("{not json")  # unknown task type, checked before parsing
    (test / "mcq_openended.json").write_text('{"items": [1, 2')  # invalid JSON
    (test / "open_qa.json").write_text('{"rows": []}')  # no item list
    (raw / "annotations" / "train" / "notes.txt").write_text("not an annotation file")
    mcq = json.loads((test / "mcq.json").read_text())
    good = mcq["items"][0]
    mcq["items"] += [
        {**good, "id": "bad_answer", "answer": "E"},
        {**good, "id": "no_video", "video_id": ""},
        {**good, "id": "one_option", "options": ["A. Only one"]},
        {**good},  # duplicate id
        "just a string",
        {**good, "id": "ghost", "video_id": "tar_gen_999"},  # video missing
        {**good, "id": "dict_options", "options": {"A": "Yes", "B": "No"}, "answer": "No", "new_field": [1, 2]},
    ]
    (test / "mcq.json").write_text(json.dumps(mcq))
    loc = json.loads((test / "temporal_localization.json").read_text())
    loc["items"] += [
        {**loc["items"][0], "id": "reversed", "timestamps": [5.0, 2.0]},
        {**loc["items"][0], "id": "too_late", "timestamps": [8.0, 30.0]},
        {**{k: v for k, v in loc["items"][0].items() if k != "timestamps"}, "id": "from_answer", "answer": "2.5-4"},
        {**{k: v for k, v in loc["items"][0].items() if k != "timestamps"}, "id": "no_span", "answer": "soon"},
    ]
    (test / "temporal_localization.json").write_text(json.dumps(loc))
    # tar_gen_005 (test): bytes changed, so its SHA256SUMS line no longer matches
    video = raw / "videos" / "tar_gen_005.mp4"
    data = bytearray(video.read_bytes())
    data[len(data) // 2] ^= 0xFF
    video.write_bytes(bytes(data))
    # tar_gen_000 (train): truncated and its checksum line removed, so only decoding can tell
    video = raw / "videos" / "tar_gen_000.mp4"
    video.write_bytes(video.read_bytes()[:2000])
    sums = [line for line in (raw / "SHA256SUMS").read_text().splitlines() if "tar_gen_000" not in line]
    (raw / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    shutil.copy(raw / "videos" / "tar_gen_001.mp4", raw / "videos" / "unused_clip.mp4")
    (raw / "videos" / "readme.txt").write_text("videos come from ...")
    return raw


def test_malformed_input_is_reported_never_fatal(tar_raw: Path, tmp_path: Path) -> None:
    raw = damaged(tar_raw, tmp_path)
    out = tmp_path / "tar"
    report = tar.build(raw=raw, out=out)
    assert report.reconciles() and report.problems
    assert (report.videos_missing, report.videos_corrupt) == (1, 2)
    assert report.missing == ["tar_gen_999"] and sorted(report.corrupt) == ["tar_gen_000", "tar_gen_005"]
    assert report.videos_unreferenced == 1
    assert report.summary().endswith("; missing: tar_gen_999; corrupt: tar_gen_000, tar_gen_005")
    errors = read(out, "errors")
    by_item = {e["item"]: e["reason"] for e in errors if e["level"] == "item"}
    assert "not one of the 4 options" in by_item["bad_answer"]
    assert by_item["#8"] == "item is a str, not an object"  # position, as it has no id
    assert "missing video_id" in next(r for k, r in by_item.items() if k == "no_video")
    assert "need at least 2" in by_item["one_option"]
    assert "duplicate id" in by_item[json.loads((raw / "annotations/test/mcq.json").read_text())["items"][0]["id"]]
    assert "tar_gen_999" in by_item["ghost"] and "missing" in by_item["ghost"]
    assert "start < end" in by_item["reversed"]
    assert "after the video's 10 s" in by_item["too_late"]
    assert "no 'start - end'" in by_item["no_span"]
    files = {e["source_file"]: e["reason"] for e in errors if e["level"] == "file"}
    assert "unknown task type 'broken'" in files["annotations/test/broken.json"]
    assert "invalid JSON" in files["annotations/test/mcq_openended.json"]
    assert "expected" in files["annotations/test/open_qa.json"]
    videos = {e["item"]: e["reason"] for e in errors if e["level"] == "video"}
    assert "does not match SHA256SUMS" in videos["tar_gen_005"]
    assert "cannot decode" in videos["tar_gen_000"]
    rows = {r["id"]: r for r in read(out, "annotations")}
    assert rows["from_answer"]["start"] == 2.5 and rows["from_answer"]["end"] == 4.0
    assert rows["dict_options"]["options"] == ["Yes", "No"] and rows["dict_options"]["answer"] == "B"
    assert json.loads(rows["dict_options"]["extra"])["new_field"] == [1, 2]
    assert not any(r["video_id"] in ("tar_gen_000", "tar_gen_005") for r in rows.values())
    assert {v["video_id"] for v in read(out, "videos")} == {"tar_gen_001", "tar_gen_002", "tar_gen_003",
                                                             "tar_gen_004"}
    assert not (out / "videos" / "unused_clip.mp4").exists()
    listed = json.loads((out / "build_report.json").read_text())["files"]
    status = {f["path"]: f["status"] for f in listed}
    assert status["videos/unused_clip.mp4"] == "ignored" and status["videos/readme.txt"] == "ignored"
    assert status["annotations/train/notes.txt"] == "ignored" and status["videos/tar_gen_000.mp4"] == "rejected"


def test_flat_layout_and_embedded_videos(tar_raw: Path, tmp_path: Path) -> None:
    raw = tmp_path / "flat"
    (raw / "annotations").mkdir(parents=True)
    shutil.copytree(tar_raw / "videos", raw / "videos")
    items = []
    for split in ("train", "test"):
        for item in json.loads((tar_raw / "annotations" / split / "bcq.json").read_text())["items"]:
            items.append({**item, "split": split})
    (raw / "annotations" / "bcq.json").write_text(json.dumps(items))  # a bare list, splits per item
    out = tmp_path / "tar"
    report = tar.build(raw=raw, out=out, embed_videos=True)
    assert report.by_split == {"train": 8, "test": 4} and report.reconciles()
    assert not (out / "videos").exists()
    video = read(out, "videos", "test")[0]
    assert video["video"]["bytes"] == (raw / video["source_file"]).read_bytes()
    assert video["video"]["path"] == video["path"]


def test_default_build_uses_the_generator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          tar_raw: Path) -> None:
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))
    shutil.copytree(tar_raw, tmp_path / "cache" / "generated" / tar_raw.name)  # as if generated before
    report = tar.build(out=tmp_path / "tar")
    assert report.items_built == 72
    assert json.loads((tmp_path / "tar" / "manifest.json").read_text())["demo"] is True  # the generator's default
    tar.build(raw=tar_raw, out=tmp_path / "tar-raw")  # any generated release is invented data
    assert json.loads((tmp_path / "tar-raw" / "manifest.json").read_text())["demo"] is True
    released = shutil.copytree(tar_raw, tmp_path / "released", ignore=shutil.ignore_patterns("scenes"))
    tar.build(raw=released, out=tmp_path / "tar-released")  # a release without the generator's scene scripts
    assert json.loads((tmp_path / "tar-released" / "manifest.json").read_text())["demo"] is False
    with pytest.raises(FileExistsError):
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "notes.txt").write_text("x")
        tar.build(out=tmp_path / "mine")
    assert issubclass(tar.BuildError, UserError) and issubclass(fields.ItemError, UserError)
    with pytest.raises(tar.BuildError, match="no annotations"):
        (tmp_path / "empty").mkdir()
        tar.build(raw=tmp_path / "empty", out=tmp_path / "out2")


@pytest.mark.parametrize(("value", "expected"), [
    (["A. Yes", "B. No"], ["Yes", "No"]),
    (["(A) red", "(B) blue", "(C) green"], ["red", "blue", "green"]),
    (["Yes", "No"], ["Yes", "No"]),
    ({"B": "No", "A": "Yes"}, ["Yes", "No"]),
    (["A. left", "C. right"], ["A. left", "C. right"]),  # not consecutive letters: kept as text
])
def test_option_normalisation(value: object, expected: list[str]) -> None:
    assert fields.options(value) == expected


@pytest.mark.parametrize(("answer", "index"), [("B", 1), ("(b)", 1), ("B. No", 1), ("No", 1), (0, 0), ("yes", 0)])
def test_answer_normalisation(answer: object, index: int) -> None:
    assert fields.choice(answer, ["Yes", "No"]) == index


@pytest.mark.parametrize("answer", ["C", "B. Yes", 2, True, None, "maybe"])
def test_bad_answers(answer: object) -> None:
    with pytest.raises(fields.ItemError):
        fields.choice(answer, ["Yes", "No"])


def test_cli_build_of_the_registered_resource(tar_raw: Path, tmp_path: Path) -> None:
    import inspect
    import typing

    import typer
    from neurips26.corpora import RESOURCES

    assert RESOURCES.get("tar") is tar.build
    option = inspect.signature(tar.build).parameters["embed_videos"]
    assert option.kind is inspect.Parameter.KEYWORD_ONLY and option.default is True
    hints = typing.get_type_hints(tar.build, include_extras=True)["embed_videos"]
    assert any(isinstance(m, typer.models.OptionInfo) for m in hints.__metadata__)
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["build", "tar", "--raw", str(tar_raw), "--out", str(tmp_path / "tar")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tar" / "manifest.json").is_file()
