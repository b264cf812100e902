"""Candidate pools from generated videos: candidate times, thumbnails, features, the encoding cache, bad input."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("av")

from neurips26.corpora.video import frames  # noqa: E402
from neurips26.corpora.video.render import write_mp4  # noqa: E402
from neurips26.corpora.video.scene import LANES, Entity, Scene, random_layout  # noqa: E402
from neurips26.methods.frameselect import build_pool, select  # noqa: E402


def clip(path: Path, seed: int, colour: str, enters: float, duration: float = 3.0) -> Path:
    """A short CCTV clip (10 fps, 96x64) in which a bus of ``colour`` drives in at ``enters`` seconds."""
    scene = Scene(path.stem, duration, 10, 96, 64, random_layout(random.Random(seed), "CAM 1"))
    y = LANES["eastbound"][0]
    scene.entities = [Entity("v0", "bus", colour, [(enters, -0.1, y), (enters + 1.2, 0.6, y), (duration, 0.6, y)],
                             lane="eastbound")]
    return write_mp4(scene, path)


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("pool-videos")
    return [clip(root / "first.mp4", 0, "red", enters=1.5), clip(root / "second.mp4", 1, "blue", enters=0.5)]


def test_pool_candidates_in_video_then_time_order(videos: list[Path]) -> None:
    pool = build_pool(videos, query="When does the red bus stop?", candidate_fps=2.0, thumb=16)
    assert pool.times.tolist() == [0, 0.5, 1, 1.5, 2, 2.5] * 2
    assert pool.video_index.tolist() == [0] * 6 + [1] * 6 and pool.video_ids == ["first", "second"]
    assert pool.duration == pytest.approx(6.0)
    assert pool.pixels.shape == (12, 16, 16, 3) and pool.pixels.dtype == np.uint8
    assert np.allclose(np.linalg.norm(pool.features, axis=1), 1.0, atol=1e-5)
    first = frames.open_video(videos[0]).frames(times=[1.0])[0]
    assert np.array_equal(pool.pixels[2], np.asarray(Image.fromarray(first).resize((16, 16), Image.BILINEAR)))
    sim = pool.features @ pool.query_features
    assert sim[[4, 5]].min() > sim[[0, 1, 2, 3]].max()  # the red bus drives in from 1.5 s, in view from 2 s
    assert set(pool.video_index[select("uniform", pool, 4).indices]) == {0, 1}
    assert select("topk", pool, 2).indices.tolist() == [4, 5]


def test_without_an_encoder_the_pool_has_pixels_only(videos: list[Path]) -> None:
    pool = build_pool(videos[:1], query="the red bus", encoder=None)
    assert pool.features is None and pool.query_features is None and pool.pixels.shape == (3, 64, 64, 3)
    with pytest.raises(ValueError, match="needs pool field"):
        select("topk", pool, 2)
    assert len(select("shot_boundary", pool, 2).indices) == 2


def test_cache_serves_a_second_run_without_decoding_and_misses_a_changed_video(tmp_path: Path,
                                                                               videos: list[Path]) -> None:
    video = clip(tmp_path / "cached.mp4", 2, "red", enters=1.0)
    cache = tmp_path / "cache"
    first = build_pool([video], query="the red bus", candidate_fps=4.0, cache=cache)
    frames.close_all()
    again = build_pool([video], query="the red bus", candidate_fps=4.0, cache=cache)
    assert frames.open_video(video).decoded == 0  # served from the cache: nothing decoded
    for name in ("times", "pixels", "features", "query_features"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    assert len(list(cache.glob("*.npz"))) == 2  # one video entry, one query entry
    clip(video, 3, "blue", enters=0.2)  # rewritten in place: other bytes, other key
    frames.close_all()
    changed = build_pool([video], query="the red bus", candidate_fps=4.0, cache=cache)
    assert frames.open_video(video).decoded > 0 and not np.array_equal(changed.pixels, first.pixels)
    build_pool([video], candidate_fps=2.0, cache=cache)
    assert len(list(cache.glob("*.npz"))) == 4  # other candidate times, other entry


def test_bad_input_is_named(tmp_path: Path, videos: list[Path]) -> None:
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        build_pool([videos[0], tmp_path / "missing.mp4"])
    (tmp_path / "notes.mp4").write_text("not a video")
    with pytest.raises(ValueError, match="notes.mp4: not a readable video"):
        build_pool([tmp_path / "notes.mp4"])
    with pytest.raises(ValueError, match="candidate_fps must be > 0"):
        build_pool(videos, candidate_fps=0)
    with pytest.raises(ValueError, match="at least one video"):
        build_pool([])
    with pytest.raises(KeyError, match="unknown encoder 'nope'"):
        build_pool(videos, encoder="nope")


def test_descriptor_query_finds_a_generated_collision(tmp_path: Path) -> None:
    """On a generated TAR clip, "collide" ranks the frames showing the collision burst (drawn for 1 s) first."""
    import json

    from neurips26.corpora.tar import generate as tar_generate

    tar_generate.generate(tmp_path, seed=0, n_videos=2, test_videos=0)
    scenes = [json.loads(p.read_text()) for p in sorted((tmp_path / "scenes").glob("*.json"))]
    scene, event = next((s, e) for s in scenes for e in s["events"] if e["kind"] == "collision")
    pool = build_pool([tmp_path / "videos" / f"{scene['video_id']}.mp4"],
                      query="Does any vehicle collide with another vehicle?", candidate_fps=5.0)
    burst = (pool.times >= event["start"]) & (pool.times < event["start"] + 1.0)
    chosen = select("topk", pool, 4).indices
    assert burst[chosen].mean() >= 0.5 > 4 * burst.mean()  # at least half in the burst, against a 10% base rate
