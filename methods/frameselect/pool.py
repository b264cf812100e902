"""Candidate pools from video files: frames at a fixed rate, thumbnails, encoder features, an on-disk cache.

    pool = build_pool(["videos/a.mp4", "videos/b.mp4"], query="When does the red car stop?",
                      encoder="descriptor", candidate_fps=1.0, cache=Path(".frameselect-cache"))

Candidates are the frames on screen at ``0, 1/fps, 2/fps, ...`` seconds of each video,
ordered by video then time. With ``cache`` set, each video's candidates (times,
thumbnails, features) are stored under a key made of the video's content sha256, the
candidate times, the thumbnail size and the encoder's name and model, and the query's
features under the encoder and the query text: a second run decodes and encodes nothing
(and does not even load the encoder's model).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.video.frames import open_video
from neurips26.corpora.video.records import MissingInputError
from PIL import Image

from neurips26.errors import UserError

from .core import Pool
from .encoders import Encoder, get_encoder

CHUNK = 64  # frames decoded and encoded at a time, so long videos do not sit in memory at full size
_DIGESTS: dict[tuple[str, int, int], str] = {}


def candidate_times(duration: float, candidate_fps: float) -> np.ndarray:
    """``0, 1/fps, 2/fps, ...`` up to (not including) ``duration``; at least the first frame."""
    n = max(1, int(np.ceil(duration * candidate_fps - 1e-9)))
    return np.round(np.arange(n) / candidate_fps, 6)


def video_digest(path: Path) -> str:
    """sha256 of the file's bytes (remembered per path, size and mtime)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def _key(**parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _load(path: Path) -> dict[str, np.ndarray] | None:
    if not path.exists():
        return None
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _save(path: Path, **arrays: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(path)  # atomic: a crashed run never leaves half an entry


def encode_video(path: Path, times: np.ndarray, thumb: int, encoder: Encoder | None) -> dict[str, np.ndarray]:
    """Thumbnails (and features) of the frames of ``path`` at ``times``, decoded in chunks."""
    video = open_video(path)
    pixels, features = [], []
    for start in range(0, len(times), CHUNK):
        frames = video.frames(times=times[start:start + CHUNK].tolist())
        pixels += [np.asarray(Image.fromarray(f).resize((thumb, thumb), Image.BILINEAR)) for f in frames]
        if encoder is not None:
            features.append(encoder.encode_images(frames))
    out = {"pixels": np.stack(pixels).astype(np.uint8)}
    if encoder is not None:
        out["features"] = np.concatenate(features).astype(np.float32)
    return out


def build_pool(videos: Sequence[str | Path], query: str | None = None, encoder: str | None = "descriptor",
               candidate_fps: float = 1.0, thumb: int = 64, cache: Path | None = None,
               **encoder_options: Any) -> Pool:
    """The candidate :class:`Pool` of a question over ``videos`` (see the module docstring)."""
    if not len(videos):
        raise UserError("build_pool needs at least one video")
    if candidate_fps <= 0:
        raise UserError(f"candidate_fps must be > 0, not {candidate_fps}")
    if thumb < 1:
        raise ValueError(f"thumb must be >= 1, not {thumb}")
    paths = [Path(v) for v in videos]
    for path in paths:
        if not path.is_file():
            raise MissingInputError(f"video not found: {path}")
    enc = get_encoder(encoder, **encoder_options) if encoder is not None else None
    enc_key = enc.key if enc is not None else None
    times, index, pixels, features, lengths = [], [], [], [], []
    for v, path in enumerate(paths):
        try:
            length = open_video(path).info.duration
        except Exception as err:  # PyAV raises its own error types for unreadable files
            raise UserError(f"{path}: not a readable video ({err})") from None
        t = candidate_times(length, candidate_fps)
        entry = None
        if cache is not None:
            name = _key(video=video_digest(path), times=t.tolist(), thumb=thumb, encoder=enc_key)
            entry = _load(Path(cache) / f"{name}.npz")
        if entry is None:
            entry = encode_video(path, t, thumb, enc)
            if cache is not None:
                _save(Path(cache) / f"{name}.npz", **entry)
        times.append(t)
        index.append(np.full(len(t), v, np.int64))
        pixels.append(entry["pixels"])
        if enc is not None:
            features.append(entry["features"])
        lengths.append(length)
    return Pool(times=np.concatenate(times), duration=sum(lengths), video_durations=lengths,
                video_ids=[p.stem for p in paths],
                video_index=np.concatenate(index), features=np.concatenate(features) if enc is not None else None,
                query=query, query_features=_query_features(enc, query, cache), pixels=np.concatenate(pixels))


def _query_features(enc: Encoder | None, query: str | None, cache: Path | None) -> np.ndarray | None:
    if enc is None or query is None:
        return None
    key = f"{enc.key}/{getattr(enc, 'text_key', '')}"  # an encoder's query side may change without its image side
    path = Path(cache) / f"query-{_key(encoder=key, query=query)}.npz" if cache is not None else None
    if path is not None and (entry := _load(path)) is not None:
        return entry["features"] if entry["features"].size else None
    vector = enc.encode_text(query)
    if path is not None:
        _save(path, features=np.zeros(0, np.float32) if vector is None else vector)
    return vector
