"""The ``videos`` config of each video resource decodes with the default install: ``datasets.Video()`` hands back a
torchcodec decoder (the CPU build pinned in pyproject.toml, over the system's FFmpeg libraries) whose frames are
the built video's pixels, no cast to ``Video(decode=False)`` needed. A default build embeds the bytes, so a row
decodes from any working folder; a ``--no-embed-videos`` build decodes from inside its folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

import datasets  # noqa: E402
from neurips26.corpora import RESOURCES  # noqa: E402

RESOURCES_WITH_VIDEOS = ["tar", "clovr"]


@pytest.fixture(autouse=True)
def offline_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))


@pytest.fixture(scope="module", params=RESOURCES_WITH_VIDEOS)
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """One resource built from its embedded sample twice: videos as files beside the shards, and by default."""
    name = request.param
    root = tmp_path_factory.mktemp(f"decode-{name}")
    RESOURCES.get(name)(out=root / name, embed_videos=False)
    RESOURCES.get(name)(out=root / f"{name}-default")
    return name, root / name, root / f"{name}-default"


def first_frame(folder: Path) -> tuple[dict, object]:
    """The first test row of ``folder``'s videos config, as ``load_dataset`` gives it, and its decoded first frame."""
    row = datasets.load_dataset(str(folder), "videos")["test"][0]
    decoder = row["video"]
    assert type(decoder).__name__ == "VideoDecoder"
    return row, decoder[0]


def check(row: dict, frame: object) -> None:
    """A real decoded frame: channels-first uint8 of the row's size, not blank, as many frames as the row says."""
    import torch

    assert isinstance(frame, torch.Tensor) and frame.dtype == torch.uint8
    assert tuple(frame.shape) == (3, row["height"], row["width"])
    assert int(frame.max()) > int(frame.min())  # a rendered scene, not an empty picture
    assert len(row["video"]) == row["n_frames"]


def test_a_default_build_decodes_from_another_working_folder(built: tuple[str, Path, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, default = built
    monkeypatch.chdir(tmp_path)  # the bytes are in the shard: the working folder does not matter
    assert not (default / "videos").exists()
    check(*first_frame(default))


def test_videos_beside_the_shards_decode_from_the_folder(built: tuple[str, Path, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    name, folder, embedded = built
    monkeypatch.chdir(folder)  # the row's path is the file inside the folder (videos/<id>.mp4)
    row, frame = first_frame(folder)
    assert row["video"].metadata.path == row["path"] and (folder / row["path"]).is_file()
    check(row, frame)
    _, same = first_frame(embedded)
    assert bool((frame == same).all()), f"{name}: the file and the embedded bytes decode to different pixels"
