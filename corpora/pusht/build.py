"""Build PushT from Diffusion Policy's replay store into a Hub-ready dataset folder.

Input: ``--raw DIR`` holding ``pusht_cchi_v7_replay.zarr`` (see :mod:`.raw`); there is no embedded sample, the
build reads the real demonstrations only. Episodes are streamed one at a time (the frames decode to 2.8 GB).

Configs: ``episodes`` (one row per demonstration at 10 Hz: actions, states, keypoints, contacts, coverage and
reward per step derived from the recorded states, the final coverage replayed in the simulator; train/test by
episode), ``frames`` (one row per step: the 96x96 rendering as an ``Image``), ``mixed_frequency`` (the same
episodes resampled to 5, 10 and 20 Hz by linear interpolation, the rate in ``rate_hz``) and ``errors`` (every
episode not built, with the reason). ``episodes in = kept + rejected``.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from neurips26.corpora import RESOURCES

from neurips26 import __version__, hubfolder

from . import raw as raw_store
from . import sim
from .card import META, render_card
from .records import (
    CONTROL_HZ,
    EPISODES,
    ERRORS,
    FRAMES,
    MIXED,
    MIXED_RATES,
    SUCCESS_COVERAGE,
    BuildError,
    BuildReport,
    with_image,
)

BUILDER_VERSION = "1.0.0"
TEST_SHARE = 10  # one episode in TEST_SHARE is held out, drawn by sha256 of its index
__all__ = ["BUILDER_VERSION", "BuildError", "BuildReport", "build", "is_test"]


def is_test(episode_index: int) -> bool:
    """Whether an episode is in the test split (fixed by sha256 of its index, whatever else is present)."""
    digest = hashlib.sha256(f"pusht/{episode_index}".encode()).hexdigest()
    return int(digest[:8], 16) % TEST_SHARE == 0


def _png(image: np.ndarray) -> bytes:
    from PIL import Image  # lazy: only frames need it

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _vectors(values: np.ndarray) -> list[list[float]]:
    return np.asarray(values, dtype=np.float32).reshape(len(values), -1).tolist()


def episode_row(episode: raw_store.Episode) -> tuple[dict, float]:
    """The ``episodes`` row of a demonstration and the simulator replay's largest state error (pixels)."""
    covs = sim.coverage_of_states(episode.state)
    replay = sim.replay(episode.state[0], episode.action)
    final, error = float(replay.coverage[-1]), replay.max_state_error(episode.state)
    row = {"episode_index": episode.index, "length": len(episode), "rate_hz": CONTROL_HZ,
           "time": (np.arange(len(episode)) / CONTROL_HZ).tolist(), "action": _vectors(episode.action),
           "state": _vectors(episode.state), "keypoint": _vectors(episode.keypoint),
           "n_contacts": episode.n_contacts.astype(np.float32).tolist(), "coverage": covs.astype(np.float32).tolist(),
           "reward": np.asarray(sim.reward(covs), np.float32).tolist(), "max_coverage": float(covs.max()),
           "final_coverage": final, "success": final >= SUCCESS_COVERAGE, "replay_error": error}
    return row, error


def mixed_rows(episode: raw_store.Episode) -> list[dict]:
    """The episode resampled at each of :data:`MIXED_RATES`."""
    rows = []
    for rate in MIXED_RATES:
        times, action = raw_store.resample(episode.action, rate)
        _, state = raw_store.resample(episode.state, rate, angle_column=4)
        _, keypoint = raw_store.resample(episode.keypoint, rate)
        rows.append({"episode_index": episode.index, "length": len(times), "rate_hz": rate, "time": times.tolist(),
                     "action": _vectors(action), "state": _vectors(state), "keypoint": _vectors(keypoint)})
    return rows


@RESOURCES.register("pusht")
def build(raw: Path | None = None, out: Path = Path("pusht"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, *,
          episodes: Annotated[int | None, typer.Option(help="Build only the first N episodes (a quick look).")]
          = None,
          frames: Annotated[bool, typer.Option(help="Write the frames config (PNG images of every step).")]
          = True) -> BuildReport:
    """Build the PushT folder at ``out`` from the replay store in ``raw`` (required: there is no embedded sample).

    ``workers`` is accepted for the common builder signature; episodes are streamed in one process.
    """
    if raw is None:
        raise BuildError("pusht has no embedded sample: give --raw DIR, the folder with pusht_cchi_v7_replay.zarr "
                         "(Diffusion Policy's PushT demonstrations)")
    store = raw_store.find_store(Path(raw))
    total = raw_store.count(store)
    wanted = total if episodes is None else min(episodes, total)
    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    specs = {"episodes": hubfolder.ConfigSpec("episodes", EPISODES, "One row per demonstration at 10 Hz; "
                                              "train/test by episode.", default=True),
             "frames": hubfolder.ConfigSpec("frames", with_image(FRAMES), "One row per step: the 96x96 rendering."),
             "mixed_frequency": hubfolder.ConfigSpec("mixed_frequency", MIXED, "The episodes resampled to 5, 10 and "
                                                     "20 Hz (linear interpolation); the rate in rate_hz.")}
    writers = {(name, split): hubfolder.SplitWriter(out, name, specs[name].schema, split)
               for name in specs for split in ("train", "test") if frames or name != "frames"}
    report, errors = BuildReport(episodes_in=wanted), []
    for episode in raw_store.episodes(store, images=frames, limit=wanted):
        problem = episode.problem()
        if problem:
            errors.append({"episode_index": episode.index, "reason": problem})
            continue
        split = "test" if is_test(episode.index) else "train"
        row, error = episode_row(episode)
        report.replay_max_state_error = max(report.replay_max_state_error, error)
        report.replay_exact += error <= 0.01
        report.successes += row["success"]
        report.final_coverage_low = min(report.final_coverage_low, row["final_coverage"])
        report.final_coverage_high = max(report.final_coverage_high, row["final_coverage"])
        writers["episodes", split].write(row)
        for mixed in mixed_rows(episode):
            writers["mixed_frequency", split].write(mixed)
        if frames and episode.img is not None:
            for step, image in enumerate(episode.img):
                writers["frames", split].write({"episode_index": episode.index, "step": step,
                                                "image": {"bytes": _png(image), "path": None}})
            report.frames += len(episode.img)
        report.episodes_kept += 1
        report.steps += len(episode)
        setattr(report, split, getattr(report, split) + 1)
        if progress:
            progress(report.episodes_kept + len(errors), wanted)
    report.episodes_rejected = len(errors)
    report.problems = [f"episode {e['episode_index']} rejected: {e['reason']}" for e in errors]
    if not report.episodes_kept:
        raise BuildError(f"{store}: no usable episode ({len(errors)} rejected; first: {errors[0]['reason']})")
    for (name, split), writer in writers.items():
        specs[name].shards[split] = writer.close()
    specs["errors"] = hubfolder.ConfigSpec("errors", ERRORS, "Every episode not built, with the reason.")
    hubfolder.write_table(out, specs["errors"], errors)
    configs = [specs[name] for name in ("episodes", "frames", "mixed_frequency", "errors") if specs[name].shards]
    source = "Diffusion Policy's PushT demonstrations" + (f" (first {wanted} of {total} episodes)"
                                                          if wanted < total else "")
    inputs = {f"{store.name}/{p.relative_to(store).as_posix()}": hubfolder.sha256_file(p)
              for p in sorted(store.rglob("*")) if p.is_file() and p.name.startswith(".z")}
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.pusht", "version": BUILDER_VERSION,
                                            "package_version": __version__, "source": source,
                                            "episodes": wanted, "frames": frames}, inputs, demo=False)
    hubfolder.write_card(out, configs, META, render_card(report, configs, source))
    hubfolder.write_croissant(out, configs, META)
    (out / "build_report.json").write_text(report.to_json(), encoding="utf-8")
    hubfolder.commit_build(out, final)
    return report
