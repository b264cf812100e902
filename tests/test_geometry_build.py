"""The ``geometry`` resource: a Hub-ready folder that datasets loads, whose rows the evaluators score."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import numpy as np
import pytest
from neurips26.corpora import RESOURCES
from neurips26.methods.geometry import contours, segmentation

from neurips26.errors import UserError


@pytest.fixture(scope="module")
def built(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    shutil.copytree(shared_data / "ecg", raw / "ecg")
    (raw / "meshes").mkdir()
    shutil.copy(shared_data / "meshes" / "fandisk.obj", raw / "meshes")
    (raw / "meshes" / "broken.ply").write_text("not a mesh\n")
    out = tmp_path_factory.mktemp("geometry")
    RESOURCES.get("geometry")(raw, out, shapes=1, subjects=2)
    return out


def test_every_config_loads_and_the_truth_scores_perfectly(built: Path) -> None:
    seg = datasets.load_dataset(str(built), "segmentation", split="test")
    assert len(seg) == 3 and sorted(seg["scale"]) == [0.5, 1.0, 2.0]
    case = seg[0]
    truth = np.array(case["truth"], bool)
    assert np.array(case["image"]).shape == truth.shape
    assert segmentation.scores(truth, truth, case["spacing_mm"])["boundary_iou"] == 1.0
    slices = datasets.load_dataset(str(built), "contours", split="test")
    row = slices[0]
    fitted = contours.area(contours.fit(np.array(row["points"]), 6))
    assert fitted == pytest.approx(row["true_area_mm2"], rel=0.05)
    volumes = datasets.load_dataset(str(built), "volumes", split="test")
    assert all(30 <= ef <= 70 for ef in volumes["ef_percent"])
    motion = datasets.load_dataset(str(built), "motion")
    assert len(motion["train"]) + len(motion["test"]) == 180
    assert np.array(motion["test"][0]["motion"]).shape == (25, 24, 3)
    surfaces = datasets.load_dataset(str(built), "surfaces", split="test")
    assert sorted(surfaces["input"]) == ["depth", "partial"] and surfaces[0]["mesh"] == "fandisk.obj"


def test_a_bad_mesh_is_in_errors_and_the_card_says_what_is_real(built: Path) -> None:
    errors = datasets.load_dataset(str(built), "errors", split="train")
    assert errors["source"] == ["meshes/broken.ply"] and "cannot be read" in errors["reason"][0]
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["demo"] is False and "meshes/broken.ply" in manifest["inputs"]["sha256"]
    card = (built / "README.md").read_text()
    assert "**generated**" in card and "**real ECG**" in card and "synthetic" in card


def test_a_raw_folder_without_the_real_data_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="ecg: not a folder"):
        RESOURCES.get("geometry")(tmp_path, tmp_path / "out")
