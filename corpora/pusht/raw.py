"""Reading Diffusion Policy's PushT replay store (Zarr v2) one episode at a time, and resampling an episode.

Input contract (``--raw DIR``): ``DIR/pusht_cchi_v7_replay.zarr`` (or any ``*.zarr`` directly in DIR, or DIR
itself a ``.zarr``) with ``data/{action,state,keypoint,img,n_contacts}`` and ``meta/episode_ends``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .records import CONTROL_HZ, BuildError

ARRAYS = ("action", "state", "keypoint", "n_contacts")


@dataclass
class Episode:
    """One demonstration at 10 Hz: arrays aligned by step (images only when asked for)."""

    index: int
    action: np.ndarray  # (n, 2)
    state: np.ndarray  # (n, 5)
    keypoint: np.ndarray  # (n, 9, 2)
    n_contacts: np.ndarray  # (n,)
    img: np.ndarray | None = None  # (n, 96, 96, 3) uint8

    def __len__(self) -> int:
        return len(self.action)

    def problem(self) -> str | None:
        """Why the episode cannot be used, or None."""
        if len(self) < 2:
            return f"{len(self)} step(s): an episode needs at least 2"
        for name in ARRAYS:
            if not np.isfinite(getattr(self, name)).all():
                return f"{name}: not finite"
        if (self.action < 0).any() or (self.action > 512).any():
            return "action outside the 512x512 scene"
        return None


def find_store(raw: Path) -> Path:
    """The replay store in ``raw``."""
    raw = Path(raw)
    if raw.suffix == ".zarr" and raw.is_dir():
        return raw
    if not raw.is_dir():
        raise BuildError(f"{raw}: raw folder not found")
    stores = sorted(raw.glob("*.zarr"))
    if not stores:
        raise BuildError(f"{raw}: no *.zarr replay store (expected pusht_cchi_v7_replay.zarr)")
    return stores[0]


def open_store(store: Path):
    """The opened Zarr group, checked for the arrays the build reads."""
    import zarr  # lazy: only builds and the methods' data loading read the store

    try:
        group = zarr.open(str(store), mode="r")
        ends = np.asarray(group["meta/episode_ends"][:], dtype=np.int64)
        missing = [f"data/{name}" for name in (*ARRAYS, "img") if f"data/{name}" not in group]
    except (KeyError, ValueError, OSError) as error:
        raise BuildError(f"{store}: not a PushT replay store ({error})") from None
    if missing:
        raise BuildError(f"{store}: missing {', '.join(missing)}")
    if len(ends) == 0 or (np.diff(ends) < 0).any() or ends[-1] != group["data/action"].shape[0]:
        raise BuildError(f"{store}: meta/episode_ends does not partition the {group['data/action'].shape[0]} steps")
    return group, ends


def episodes(store: Path, *, images: bool = False, limit: int | None = None) -> Iterator[Episode]:
    """Stream the store's episodes (the first ``limit`` when given); ``images`` decodes each one's frames."""
    group, ends = open_store(store)
    starts = np.concatenate([[0], ends[:-1]])
    for index, (lo, hi) in enumerate(zip(starts, ends, strict=True)):
        if limit is not None and index >= limit:
            return
        img = None
        if images:
            img = np.clip(np.rint(group["data/img"][lo:hi]), 0, 255).astype(np.uint8)
        yield Episode(index, np.asarray(group["data/action"][lo:hi], np.float64),
                      np.asarray(group["data/state"][lo:hi], np.float64),
                      np.asarray(group["data/keypoint"][lo:hi], np.float64),
                      np.asarray(group["data/n_contacts"][lo:hi], np.float64).reshape(-1), img)


def count(store: Path) -> int:
    """Episodes in the store."""
    return len(open_store(store)[1])


def resample(values: np.ndarray, rate_hz: float, source_hz: float = CONTROL_HZ, *,
             angle_column: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (steps x ...) sampled at ``source_hz``, linearly interpolated at ``rate_hz`` over the same
    duration: (times in seconds, resampled values). ``angle_column`` is unwrapped before interpolating and wrapped
    back into [0, 2 pi) after."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.reshape(len(values), -1).copy()
    if angle_column is not None:
        flat[:, angle_column] = np.unwrap(flat[:, angle_column])
    source_t = np.arange(len(values)) / source_hz
    times = np.arange(0.0, source_t[-1] + 1e-9, 1.0 / rate_hz)
    out = np.stack([np.interp(times, source_t, flat[:, j]) for j in range(flat.shape[1])], axis=1)
    if angle_column is not None:
        out[:, angle_column] = np.mod(out[:, angle_column], 2 * np.pi)
    return times, out.reshape(len(times), *values.shape[1:])
