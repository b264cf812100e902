"""Frame access: the frames of a video at given times or indices, fast, and frame sampling.

Decoding and caching live in :mod:`.decoder` (a :class:`Video` per file, seek +
decode forward, byte-bounded caches); this module keeps recently used videos open
and picks frames with the selectors of :mod:`.selection`:

    >>> video = open_video("videos/tar_gen_000.mp4")
    >>> video.frames(times=[0.5, 2.0])          # list of HxWx3 uint8 arrays
    >>> sample(video, 8, "uniform", as_="pil")  # Sample(times, indices, frames)

A sampling policy is a selector (``uniform``, ``fps`` or any query-free one of
:data:`~neurips26.corpora.video.selection.SELECTORS`) run on a pool of every frame of the video.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neurips26.errors import UserError

from .decoder import Format, Source, Video, VideoInfo
from .selection import Pool, select

OPEN_VIDEOS = 16  # videos kept open by open_video()

_OPEN: OrderedDict[str, Video] = OrderedDict()


def open_video(source: Source | Video) -> Video:
    """A :class:`Video` for ``source``; paths stay open (LRU of :data:`OPEN_VIDEOS`) so their caches are reused."""
    if isinstance(source, Video):
        return source
    if isinstance(source, bytes):
        return Video(source)
    path = Path(source).resolve()
    stat = path.stat()
    key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"  # a rewritten file is a new video
    if key in _OPEN:
        _OPEN.move_to_end(key)
        return _OPEN[key]
    video = _OPEN[key] = Video(path)
    while len(_OPEN) > OPEN_VIDEOS:
        _OPEN.popitem(last=False)[1].close()
    return video


def close_all() -> None:
    """Close the videos kept open by :func:`open_video`."""
    while _OPEN:
        _OPEN.popitem()[1].close()


def probe(source: Source) -> VideoInfo:
    """Frame count, fps, duration, size and codec of a video (reads packets, decodes nothing)."""
    with Video(source, cache_bytes=0) as video:
        return video.info


def frames(source: Source | Video, *, times: Sequence[float] | None = None, indices: Sequence[int] | None = None,
           as_: Format = "array", size: tuple[int, int] | None = None) -> list[Any]:
    """Frames of ``source`` at ``times`` (seconds) or ``indices``; see :meth:`Video.frames`."""
    return open_video(source).frames(times=times, indices=indices, as_=as_, size=size)


# -- sampling ------------------------------------------------------------------------------------------------
@dataclass
class Sample:
    """Frames chosen by a policy: the times chosen (those of the frames served), the frame indices, the frames."""

    times: list[float]
    indices: list[int]
    frame_times: list[float]
    frames: list[Any]


def _chosen(video: Video, n: int, policy: str, options: dict[str, Any]) -> list[int]:
    if n < 1:
        raise UserError(f"n must be >= 1, not {n}")
    pool = Pool(times=np.asarray(video.times), duration=video.info.duration)
    seed = int(options.pop("seed", 0))
    return select(policy, pool, n, seed, **options).indices.tolist()


def sample_times(source: Source | Video, n: int, policy: str = "uniform", **options: Any) -> list[float]:
    """The times (seconds) of the frames selector ``policy`` picks for ``n`` frames of ``source``, decoding nothing.

    The pool is every frame of the video; ``options`` go to the selector (``seed`` too).
    A video with no more than ``n`` frames gives all of them.
    """
    video = open_video(source)
    return [video.time_of(i) for i in _chosen(video, n, policy, dict(options))]


def sample(source: Source | Video, n: int, policy: str = "uniform", as_: Format = "array",
           size: tuple[int, int] | None = None, **options: Any) -> Sample:
    """``n`` frames of ``source`` chosen by selector ``policy`` (see :func:`sample_times`)."""
    video = open_video(source)
    indices = _chosen(video, n, policy, dict(options))
    times = [video.time_of(i) for i in indices]
    return Sample(times, indices, list(times), video.frames(indices=indices, as_=as_, size=size))


__all__ = ["OPEN_VIDEOS", "Sample", "Video", "VideoInfo", "close_all", "frames", "open_video", "probe", "sample",
           "sample_times"]
