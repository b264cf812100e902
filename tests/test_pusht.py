"""PushT: the folder built from the real demonstrations, bad stores, the simulator against the recorded data,
resampling and the DCT, and `neurips26 actions` end to end on a few episodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from neurips26.corpora.pusht import build as pusht
from neurips26.corpora.pusht import raw, sim
from neurips26.methods.actions.codecs import dct_encode

from neurips26 import hubfolder
from neurips26.errors import UserError

EPISODES = 4


def rows(folder: Path, config: str, split: str = "train") -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()


@pytest.fixture(scope="module")
def store(shared_data: Path) -> Path:
    return shared_data / "pusht" / "pusht_cchi_v7_replay.zarr"


@pytest.fixture(scope="module")
def built(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pusht") / "pusht"
    report = pusht.build(store.parent, out, episodes=EPISODES)
    assert report.reconciles() and report.episodes_kept == EPISODES
    return out


def test_folder_loads_with_images_splits_and_rates(built: Path) -> None:
    episodes = datasets.load_dataset(str(built), "episodes")
    indices = {split: sorted(episodes[split]["episode_index"]) for split in episodes}
    assert sorted(indices["train"] + indices.get("test", [])) == list(range(EPISODES))
    assert all(pusht.is_test(i) == (split == "test") for split, ids in indices.items() for i in ids)
    frames = datasets.load_dataset(str(built), "frames", split="train")
    assert isinstance(frames.features["image"], datasets.Image)
    first = frames[0]["image"]
    assert first.size == (96, 96) and first.mode == "RGB"
    train = rows(built, "episodes")
    assert len(frames) == sum(r["length"] for r in train)
    for row in train:
        assert len(row["action"]) == len(row["state"]) == len(row["coverage"]) == row["length"]
        assert max(row["coverage"]) == pytest.approx(row["max_coverage"])
    mixed = rows(built, "mixed_frequency")
    assert sorted((r["episode_index"], r["rate_hz"]) for r in mixed) == sorted(
        (r["episode_index"], rate) for r in train for rate in (5.0, 10.0, 20.0))
    for r in mixed:
        base = next(t for t in train if t["episode_index"] == r["episode_index"])
        assert r["length"] == int((base["length"] - 1) / 10 * r["rate_hz"] + 1e-9) + 1
    text = (built / "README.md").read_text(encoding="utf-8")
    assert f"**{EPISODES} episodes**" in text and "first 4 of 206 episodes" in text
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["demo"] is False and manifest["inputs"]["files"] > 0
    for shard in (s for splits in manifest["configs"].values() for shards in splits.values() for s in shards):
        assert hubfolder.sha256_file(built / shard["path"]) == shard["sha256"]


def _write_store(path: Path, lengths: list[int], nan_episode: int | None = None) -> Path:
    import zarr

    group = zarr.open_group(str(path), mode="w", zarr_format=2)
    n = sum(lengths)
    rng = np.random.default_rng(0)
    state = np.column_stack([rng.uniform(100, 400, (n, 4)), rng.uniform(0, 6, n)]).astype(np.float32)
    action = rng.uniform(50, 450, (n, 2)).astype(np.float32)
    if nan_episode is not None:
        action[sum(lengths[:nan_episode])] = np.nan
    group.create_array("data/action", data=action)
    group.create_array("data/state", data=state)
    group.create_array("data/keypoint", data=np.zeros((n, 9, 2), np.float32))
    group.create_array("data/n_contacts", data=np.zeros((n, 1), np.float32))
    group.create_array("data/img", data=np.full((n, 96, 96, 3), 200.0, np.float32))
    group.create_array("meta/episode_ends", data=np.cumsum(lengths).astype(np.int64))
    return path


def test_bad_episodes_go_to_errors_and_bad_stores_are_named(tmp_path: Path) -> None:
    raw_dir = tmp_path / "raw"
    _write_store(raw_dir / "pusht_cchi_v7_replay.zarr", [5, 1, 6], nan_episode=2)
    report = pusht.build(raw_dir, tmp_path / "out")
    assert (report.episodes_in, report.episodes_kept, report.episodes_rejected) == (3, 1, 2) and report.reconciles()
    errors = rows(tmp_path / "out", "errors")
    assert sorted((e["episode_index"], e["reason"]) for e in errors) == [
        (1, "1 step(s): an episode needs at least 2"), (2, "action: not finite")]
    with pytest.raises(UserError, match="no embedded sample"):
        pusht.build(None, tmp_path / "none")
    with pytest.raises(UserError, match=r"no \*\.zarr"):
        pusht.build(tmp_path / "out", tmp_path / "x")
    broken = _write_store(tmp_path / "broken" / "b.zarr", [3, 3])
    import shutil

    shutil.rmtree(broken / "data" / "img")
    with pytest.raises(UserError, match="missing data/img"):
        pusht.build(broken.parent, tmp_path / "y")


def test_simulator_replays_recorded_actions_to_the_recorded_states_and_coverage(store: Path) -> None:
    """Replaying a demo's actions from its first recorded state reproduces every recorded state and its coverage
    (204 of the 206 demos within 0.01 px; the worst drifts by 9.8 px after contact chaos amplifies float32 error)."""
    for episode in raw.episodes(store, limit=3):
        replay = sim.replay(episode.state[0], episode.action)
        assert replay.max_state_error(episode.state) < 0.01
        recorded = sim.coverage_of_states(episode.state)
        np.testing.assert_allclose(replay.coverage[:-1], recorded[1:], atol=1e-4)
        assert max(replay.coverage) >= recorded.max() - 1e-4
    # gym-pusht's own reset_to_state sets the block's position before its angle and lands it elsewhere
    first = next(raw.episodes(store, limit=1))
    env = sim.make_env()
    env.reset(options={"reset_to_state": first.state[0]})
    assert np.abs(sim.observe(env)[2:4] - first.state[0, 2:4]).max() > 1.0


def test_resampling_to_5_and_20_hz_and_back_keeps_the_dct_coefficients(store: Path) -> None:
    episode = next(raw.episodes(store, limit=1))
    window = slice(20, 36)  # 1.6 s at 10 Hz
    original = dct_encode(episode.action[window], 6)
    scale = np.abs(original[1:]).max()
    for rate, tolerance in ((20.0, 1e-9), (5.0, 0.1)):
        _, there = raw.resample(episode.action, rate)
        _, back = raw.resample(there, 10.0, source_hz=rate)
        n = min(len(back), len(episode.action))
        np.testing.assert_allclose(back[:n][window] if n > 36 else back[window], episode.action[window],
                                   atol=tolerance * 1000 if rate == 5.0 else 1e-6)
        coefficients = dct_encode(back[window], 6)
        assert np.abs(coefficients - original).max() <= tolerance * scale + 1e-9, rate
    # the same 1.6 s of motion sampled at 5, 10 or 20 Hz has (nearly) the same low coefficients
    for rate in (5.0, 20.0):
        _, there = raw.resample(episode.action, rate)
        start = round(2.0 * rate)
        coefficients = dct_encode(there[start:start + round(1.6 * rate)], 4)
        assert np.abs(coefficients - dct_encode(episode.action[20:36], 4)).max() < 0.15 * scale, rate


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "neurips26.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_actions_cli_trains_evaluates_and_compares(built: Path, tmp_path: Path) -> None:
    from neurips26.results import read_run

    missing = _cli("build", "pusht", "--out", str(tmp_path / "p"), cwd=tmp_path)
    assert missing.returncode == 2 and "no embedded sample" in missing.stderr
    trained = _cli("actions", "train", "--data", str(built), "--out", "m", "--methods", "bc,fafm", "--steps", "20",
                   cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert sorted(p.name for p in (tmp_path / "m").glob("*.pt")) == ["bc.pt", "fafm.pt"]
    evaluated = _cli("actions", "eval", "--models", "m", "--out", "e", "--episodes", "2", "--max-seconds", "2",
                     "--rates", "10,20", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    run = read_run(tmp_path / "e" / "fafm" / "20hz")
    task = run.tasks["pusht_rollout"]
    assert task.n_effective == 2 and 0.0 <= task.value("max_coverage") <= 1.0 and len(task.samples) == 2
    assert task.metadata["rate_hz"] == 20.0 and task.data["resource"] == "pusht"
    compared = _cli("actions", "compare", "--eval", "e", cwd=tmp_path)
    assert compared.returncode == 0 and (tmp_path / "e" / "actions.png").is_file(), compared.stderr
    assert "fafm" in compared.stdout and "bc" in compared.stdout
    bad = _cli("actions", "train", "--data", str(built), "--methods", "diffusion", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown diffusion" in bad.stderr


def test_freeact_labels_held_out_frames_and_reports_within_bounds(built: Path) -> None:
    from neurips26.methods.actions import freeact

    train_clips = freeact.load_clips(built, "train", episodes=2)
    test_clips = freeact.load_clips(built, "test" if rows(built, "episodes", "test") else "train", episodes=1)
    first = rows(built, "episodes")[0]
    assert len(train_clips.now) == sum(r["length"] - 1 for r in rows(built, "episodes")[:2])
    np.testing.assert_allclose(train_clips.displacement[0], np.subtract(first["state"][1][:2], first["state"][0][:2]),
                               atol=1e-4)
    model = freeact.LatentActionModel(codes=8)
    cost = freeact.train(model, train_clips, steps=5, batch_size=8, align=1.0)
    report = freeact.evaluate(model, train_clips, test_clips, cost["seconds"])
    assert report.pairs == len(test_clips.now) and 1 <= report.codes_used <= 8
    assert 1.0 <= report.perplexity <= report.codes_used + 1e-9
    assert report.copy_frame_mse == pytest.approx(float(((test_clips.now - test_clips.after) ** 2).mean()))
    assert report.pseudo_label_rmse > 0 and report.mean_offset_rmse > 0
