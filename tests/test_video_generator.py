"""The procedural generator: same seed same bytes, the released layout, and answers that follow from the scripts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")

from neurips26.corpora.clovr import build as clovr_build  # noqa: E402
from neurips26.corpora.clovr import generate as clovr_gen  # noqa: E402
from neurips26.corpora.tar import build as tar_build  # noqa: E402
from neurips26.corpora.tar import generate as tar_gen  # noqa: E402
from neurips26.corpora.tar import narration  # noqa: E402
from neurips26.corpora.tar import scenarios as scenarios_module  # noqa: E402
from neurips26.corpora.tar.tasktypes import TASK_TYPES  # noqa: E402
from neurips26.corpora.video import frames  # noqa: E402
from neurips26.corpora.video.scene import COLOURS, Entity, Scene  # noqa: E402


@pytest.fixture(scope="session")
def tar_raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tar_build.default_raw(root=tmp_path_factory.getbasetemp() / "video-raw")


@pytest.fixture(scope="session")
def clovr_raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clovr_build.default_raw(root=tmp_path_factory.getbasetemp() / "video-raw")


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def load_scene(raw: Path, video_id: str) -> Scene:
    data = json.loads((raw / "scenes" / f"{video_id}.json").read_text())
    from neurips26.corpora.video.scene import Event, Layout

    scene = Scene(**{k: v for k, v in data.items() if k not in ("layout", "entities", "events")},
                  layout=Layout(**data["layout"]))
    scene.entities = [Entity(**{**e, "path": [tuple(p) for p in e["path"]]}) for e in data["entities"]]
    scene.events = [Event(**e) for e in data["events"]]
    return scene


def test_same_seed_same_bytes(tmp_path: Path, tar_raw: Path) -> None:
    again = tar_gen.generate(tmp_path / "again", seed=0)
    assert digests(tmp_path / "again") == digests(tar_raw)
    assert again.videos == 6 and again.annotations == 72
    other = tar_gen.generate(tmp_path / "other", seed=1, n_videos=2, test_videos=1)
    assert other.videos == 2
    assert (digests(tmp_path / "other")["videos/tar_gen_000.mp4"] != digests(tar_raw)["videos/tar_gen_000.mp4"])


def test_tar_release_layout(tar_raw: Path) -> None:
    for split in ("train", "test"):
        names = sorted(p.stem for p in (tar_raw / "annotations" / split).glob("*.json"))
        assert names == sorted(TASK_TYPES)
        for name in names:
            items = json.loads((tar_raw / "annotations" / split / f"{name}.json").read_text())["items"]
            assert items and all(item["video_id"].startswith("tar_gen_") and item["reasoning"] for item in items)
    sums = (tar_raw / "SHA256SUMS").read_text().split("\n")
    assert len([s for s in sums if s]) == 6
    for line in filter(None, sums):
        digest, rel = line.split("  ")
        assert hashlib.sha256((tar_raw / rel).read_bytes()).hexdigest() == digest
    info = frames.probe(tar_raw / "videos" / "tar_gen_000.mp4")
    assert (info.n_frames, info.fps, info.duration, info.width, info.height) == (100, 10.0, 10.0, 160, 96)


def test_tar_answers_follow_from_the_scripts(tar_raw: Path) -> None:
    items = {}
    for path in (tar_raw / "annotations").glob("*/*.json"):
        for item in json.loads(path.read_text())["items"]:
            items[item["id"]] = item
    scenarios = set()
    for video in sorted((tar_raw / "scenes").glob("*.json")):
        scene = load_scene(tar_raw, video.stem)
        scenario = items[f"{scene.video_id}_bcq_0"]["scenario"]
        scenarios.add(scenario)
        anomaly = next((e for e in scene.events if e.anomaly), None)
        assert (anomaly is None) == (scenario == "normal")
        assert items[f"{scene.video_id}_bcq_0"]["answer"] == ("B" if anomaly is None else "A")
        mcq = items[f"{scene.video_id}_mcq_0"]
        chosen = mcq["options"]["ABCD".index(mcq["answer"])]
        assert chosen.split(". ", 1)[1].lower() == narration.LABELS[scenario].lower()
        span = items[f"{scene.video_id}_temporal_localization_0"]["timestamps"]
        event = anomaly or scene.events[0]
        assert span == [event.start, event.end]
        for t in (event.start, event.end):  # event times lie on the frame grid
            assert abs(t * scene.fps - round(t * scene.fps)) < 1e-6
        if anomaly is not None:
            check_pixels(tar_raw / "videos" / f"{scene.video_id}.mp4", scene, anomaly.entities[0], anomaly.start)
    assert scenarios == set(scenarios_module.SCENARIOS) == set(scenarios_module.SCRIPTS.names())


def check_pixels(video: Path, scene: Scene, entity_id: str, t: float) -> None:
    """The road user is drawn where and when the script puts it, in its colour."""
    entity = scene.entity(entity_id)
    t = t + 0.25 if entity.box(t + 0.25) and entity.visible(t + 0.25) else t
    x, y = entity.position(t)
    image = frames.frames(video, times=[t])[0].astype(int)
    px, py = int(x * scene.width), int(y * scene.height)
    patch = image[max(py - 1, 0):py + 2, max(px - 1, 0):px + 2].reshape(-1, 3)
    distance = np.abs(patch - np.array(COLOURS[entity.colour])).sum(axis=1).min()
    tolerance = 130 if entity.kind == "pedestrian" else 90  # a 3-pixel dot loses colour to 4:2:0 chroma
    assert distance < tolerance, (scene.video_id, entity.name, t, patch.tolist())


def test_collision_is_contact_at_the_scripted_time(tar_raw: Path) -> None:
    for video in sorted((tar_raw / "scenes").glob("*.json")):
        scene = load_scene(tar_raw, video.stem)
        crash = next((e for e in scene.events if e.kind == "collision"), None)
        if crash is None:
            continue
        hitter, hit = (scene.entity(e) for e in crash.entities)
        gaps = [hit.box(t)[0] - hitter.box(t)[2] for t in (crash.start, crash.start - 0.2)]
        assert gaps[0] == pytest.approx(0, abs=1e-9) and gaps[1] > 0.01
        return
    pytest.fail("no collision scene in the default release")


def test_clovr_release_and_answers(clovr_raw: Path) -> None:
    items = json.loads((clovr_raw / "annotations" / "test.json").read_text())["items"]
    assert {i["level"] for i in items} == {"Comparative Analysis", "Tracking and Retrieval", "Integrated Reasoning"}
    assert len(items) == 33 and len(list((clovr_raw / "videos").glob("*.mp4"))) == 9
    for item in items:
        scenes = [load_scene(clovr_raw, v) for v in item["video_ids"]]
        answer = item["options"]["ABCD".index(item["answer"])].split(". ", 1)[1]
        if item["subtask"] == "vehicle count":
            counts = [sum(e.kind != "pedestrian" for e in s.entities) for s in scenes]
            assert answer == f"Video {counts.index(max(counts)) + 1}" and counts.count(max(counts)) == 1
        if item["subtask"] == "appearance count":
            name = item["question"].split(" does ")[1].removesuffix(" appear?")
            shown = sum(any(e.name == name for e in s.entities) for s in scenes)
            assert answer == ["None", "One", "Two", "Three"][shown]
        for span in item["evidence"]:
            scene = scenes[item["video_ids"].index(span["video_id"])]
            assert 0 <= span["start"] < span["end"] <= scene.duration
    assert all(item["evidence"] for item in items)
    again = clovr_gen.generate(clovr_raw.parent / "clovr-again", seed=0, n_sets=1)
    assert again.videos == 3
    assert digests(clovr_raw.parent / "clovr-again")["videos/clovr_gen_s0_v1.mp4"] == \
        digests(clovr_raw)["videos/clovr_gen_s0_v1.mp4"]


def test_generator_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="even"):
        tar_gen.generate(tmp_path / "x", size=(161, 96))
    with pytest.raises(ValueError):
        clovr_gen.generate(tmp_path / "y", duration=5)


def test_generate_command(tmp_path: Path) -> None:
    import typer
    from neurips26.corpora.video.cli import generate
    from typer.testing import CliRunner

    app = typer.Typer()
    app.command()(generate)
    app.command("noop")(lambda: None)  # a second command keeps typer's subcommand syntax
    out = tmp_path / "tar-raw"
    result = CliRunner().invoke(app, ["generate", "tar", "--out", str(out), "--videos", "2", "--test-videos", "1",
                                      "--duration", "10"])
    assert result.exit_code == 0, result.output
    assert "2 videos" in " ".join(result.output.split()) and (out / "SHA256SUMS").is_file()  # rich wraps lines
    result = CliRunner().invoke(app, ["generate", "tar", "--out", str(out), "--sets", "2"])
    assert result.exit_code != 0 and "do not apply" in str(result.exception)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(app, ["generate", "clovr", "--out", str(tmp_path / "mine")])
    assert isinstance(result.exception, FileExistsError)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
