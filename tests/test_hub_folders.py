"""Hub-native folders as a Hub user meets them: every config of every resource loads with ``datasets``, cards
parse with ``huggingface_hub``, videos are ``datasets.Video()`` columns that decode, and a push plan deletes the
shards a rebuild no longer has."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pytest
from huggingface_hub import DatasetCard
from neurips26.corpora import RESOURCES

from neurips26 import hubfolder
from neurips26.hub import OWNED_PATTERNS, commit_message, push_plan

META = {"pretty_name": "Tiny", "license": "cc-by-4.0", "task_categories": ["text-classification"]}
SCHEMA = pa.schema([hubfolder.column("text", pa.string(), "Some text")])


@pytest.fixture(scope="module")
def resources(small_video_releases: Path, shared_data: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, Path]:
    """Every registered resource built small: LOCUS and RoleBench-Unlearn from their samples, TAR and CLoVR
    generated, FrameSelect with one selector over those; FiC, geometry and PushT from the real shared data (two
    PushT episodes, one mesh)."""
    root = tmp_path_factory.mktemp("resources")
    out = {"tar": small_video_releases / "tar", "clovr": small_video_releases / "clovr"}
    for name in ("locus", "rolebench_unlearn"):
        RESOURCES.get(name)(out=root / name)
        out[name] = root / name
    RESOURCES.get("frameselect")(raw=small_video_releases, out=root / "frameselect", selectors=["uniform"],
                                 budgets=[2], limit=2)
    out["frameselect"] = root / "frameselect"
    RESOURCES.get("fic")(raw=shared_data / "lost-in-conversation", out=root / "fic")
    RESOURCES.get("geometry")(raw=shared_data, out=root / "geometry", shapes=2, subjects=4, mesh_limit=1)
    RESOURCES.get("pusht")(raw=shared_data / "pusht", out=root / "pusht", episodes=2)
    out |= {name: root / name for name in ("fic", "geometry", "pusht")}
    assert sorted(out) == sorted(RESOURCES.names()), "a new resource: build it here too"
    return out


def test_every_config_of_every_resource_loads(resources: dict[str, Path]) -> None:
    for name, folder in resources.items():
        manifest = json.loads((folder / "manifest.json").read_text())
        card = DatasetCard.load(folder / "README.md")
        declared = {c["config_name"] for c in card.data.configs}
        assert declared == set(manifest["configs"]), f"{name}: card configs differ from the manifest"
        for config, splits in manifest["configs"].items():
            for split, shards in splits.items():
                rows = sum(s["rows"] for s in shards)
                # datasets 5.2 materialises only non-empty splits; empty ones stream (huggingface/datasets#8401)
                data = datasets.load_dataset(str(folder), config, split=split, streaming=rows == 0)
                got = sum(1 for _ in data) if rows == 0 else data.num_rows
                assert got == rows, f"{name}/{config}/{split}: {got} rows loaded, manifest says {rows}"


def test_an_empty_errors_config_is_declared_and_loads(resources: dict[str, Path]) -> None:
    folder = resources["locus"]
    card = DatasetCard.load(folder / "README.md")
    assert "errors" in {c["config_name"] for c in card.data.configs}
    data = datasets.load_dataset(str(folder), "errors", split="train", streaming=True)
    assert list(data) == [] and "reason" in data.features


@pytest.mark.parametrize("embed", [False, True])
def test_videos_are_datasets_video_columns_that_decode(small_video_releases: Path, tmp_path: Path,
                                                       embed: bool) -> None:
    av = pytest.importorskip("av")
    from neurips26.corpora.tar import build as tar_build

    folder = small_video_releases / "tar"  # built with the default: videos embedded
    if not embed:
        folder = tmp_path / "tar"
        tar_build.build(raw=small_video_releases.parent / "tar-raw", out=folder, embed_videos=False)
    videos = datasets.load_dataset(str(folder), "videos", split="test")
    assert isinstance(videos.features["video"], datasets.Video)
    row = videos.cast_column("video", datasets.Video(decode=False))[0]
    assert row["video"]["path"] == row["path"]
    source = row["video"]["bytes"] if embed else folder / row["video"]["path"]
    assert (row["video"]["bytes"] is not None) == embed
    with av.open(io.BytesIO(source) if embed else source) as container:
        frame = next(container.decode(video=0))
    assert (frame.width, frame.height) == (row["width"], row["height"])


def build_tiny(folder: Path, rows: int, shard_bytes: int) -> None:
    """A one-config folder written by the real writer; a small ``shard_bytes`` cuts one shard per row group."""
    with hubfolder.building(folder) as stage:
        spec = hubfolder.ConfigSpec("texts", SCHEMA, "Texts", default=True)
        writer = hubfolder.SplitWriter(stage, "texts", SCHEMA, shard_bytes=shard_bytes, row_group_rows=2)
        writer.write_all({"text": f"row {i}"} for i in range(rows))
        spec.shards["train"] = writer.close()
        hubfolder.write_manifest(stage, [spec], {"name": "tiny", "version": "1"}, {})
        hubfolder.write_card(stage, [spec], META, "A tiny card.")


def test_push_dry_run_after_a_rebuild_with_fewer_shards_lists_the_stale_ones(tmp_path: Path) -> None:
    build_tiny(tmp_path / "before" / "tiny", rows=6, shard_bytes=1)  # 3 shards: what the Hub holds
    build_tiny(tmp_path / "data" / "tiny", rows=6, shard_bytes=2**20)  # the rebuild: 1 shard
    before = sorted(p.name for p in (tmp_path / "before" / "tiny" / "data" / "texts").iterdir())
    assert before == [f"train-0000{i}-of-00003.parquet" for i in range(3)]

    plan = push_plan(tmp_path / "data" / "tiny", "org/tiny", remote=tmp_path / "before" / "tiny")
    assert plan.delete == [f"data/texts/{name}" for name in before]
    assert "data/texts/train-00000-of-00001.parquet" in [p for p, _ in plan.upload]
    assert OWNED_PATTERNS == ["data/*", "videos/*"]  # README.md, croissant.json are replaced, never deleted

    result = subprocess.run([sys.executable, "-m", "neurips26.cli", "push", "tiny", "--repo", "org/tiny",
                             "--dry-run", "--remote", str(tmp_path / "before" / "tiny"), "--data",
                             str(tmp_path / "data")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    for name in before:
        assert f"delete  data/texts/{name}" in result.stdout
    assert "3 stale file(s) to delete" in result.stdout
    digest = hashlib.sha256((tmp_path / "data" / "tiny" / "manifest.json").read_bytes()).hexdigest()
    assert f"manifest sha256 {digest[:12]}" in result.stdout
    assert digest in commit_message(tmp_path / "data" / "tiny")[1]


def test_an_unchanged_rebuild_deletes_nothing(tmp_path: Path) -> None:
    build_tiny(tmp_path / "tiny", rows=5, shard_bytes=2**20)
    shutil.copytree(tmp_path / "tiny", tmp_path / "remote")
    (tmp_path / "remote" / "notes.txt").write_text("kept: outside the build's folders")
    assert push_plan(tmp_path / "tiny", "org/tiny", remote=tmp_path / "remote").delete == []
