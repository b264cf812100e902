"""Decoding: a :class:`Video` with a keyframe index and byte-bounded caches of decoded frames.

A :class:`Video` demuxes its packets once (no decoding) to learn the exact
presentation time of every frame and where the keyframes are. A request for
frames is then served in time order: for each target frame it seeks to the
keyframe before it and decodes forward, unless the decoder is already inside
that keyframe's neighbourhood before the target, in which case it just keeps
decoding. Frames are cached as decoded YUV in two LRU caches bounded in bytes:
the frames asked for, and every frame decoded on the way (the keyframe
neighbourhoods), so questions that ask for the same or nearby frames of one
video decode them once, and a long decode cannot push out the frames served.

The frame "at time t" is the one on screen at t: the last frame whose
presentation time (counted from the first frame) is <= t.
"""

from __future__ import annotations

import bisect
import io
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .records import VideoInfo

Source = str | Path | bytes
Format = Literal["array", "pil"]
CACHE_BYTES = 256 * 2**20  # decoded neighbourhood frames kept per open video
SERVED_BYTES = 64 * 2**20  # frames asked for, kept apart so long decodes do not evict them


def _av():
    try:
        import av
    except ImportError:  # pragma: no cover - the video extra is missing
        raise ImportError("video support needs PyAV: pip install 'neurips26[video]'") from None
    return av


class FrameCache:
    """Decoded frames by pts; the least recently used go first when over ``limit`` bytes (YUV 4:2:0 size)."""

    def __init__(self, limit: int) -> None:
        self.frames: OrderedDict[int, Any] = OrderedDict()
        self.limit, self.bytes = limit, 0

    def get(self, pts: int) -> Any | None:
        frame = self.frames.get(pts)
        if frame is not None:
            self.frames.move_to_end(pts)
        return frame

    def put(self, pts: int, frame: Any) -> None:
        if pts in self.frames:
            self.frames.move_to_end(pts)
            return
        self.frames[pts] = frame
        self.bytes += frame.width * frame.height * 3 // 2
        while self.bytes > self.limit and self.frames:
            _, old = self.frames.popitem(last=False)
            self.bytes -= old.width * old.height * 3 // 2

    def clear(self) -> None:
        self.frames.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self.frames)


class Video:
    """One open video with a keyframe index and caches of decoded frames."""

    def __init__(self, source: Source, cache_bytes: int = CACHE_BYTES, served_bytes: int = SERVED_BYTES) -> None:
        av = _av()
        self.source = source
        self._container = av.open(io.BytesIO(source) if isinstance(source, bytes) else str(source))
        if not self._container.streams.video:
            self._container.close()
            raise ValueError(f"{source if not isinstance(source, bytes) else '<bytes>'}: no video stream")
        self._stream = self._container.streams.video[0]
        self._stream.thread_type = "AUTO"
        self._cache = FrameCache(cache_bytes)  # every frame decoded on the way
        self._served = FrameCache(served_bytes)  # the frames asked for
        self._decoder: Iterator[Any] | None = None
        self._position: int | None = None  # pts of the last frame the live decoder produced
        self.decoded = 0  # frames decoded so far (for benchmarks and tests)
        self._index()

    def _index(self) -> None:
        """Presentation times of all frames and of the keyframes, from the packets alone."""
        pts, keys = [], []
        for packet in self._container.demux(self._stream):
            if packet.pts is None:
                continue
            pts.append(packet.pts)
            if packet.is_keyframe:
                keys.append(packet.pts)
        if not pts:
            raise ValueError("video stream has no frames")
        self._pts = sorted(pts)
        self._keys = sorted(keys) or self._pts[:1]
        self._time_base = self._stream.time_base or Fraction(1, 1)
        start = self._pts[0]
        self._times = [float((p - start) * self._time_base) for p in self._pts]
        steps = np.diff(self._pts)
        step = float(np.median(steps)) if len(steps) else 0.0
        rate = self._stream.average_rate
        fps = float(rate) if rate else (1.0 / float(step * self._time_base) if step else 0.0)
        ctx = self._stream.codec_context
        self.info = VideoInfo(
            n_frames=len(self._pts), fps=fps,
            duration=self._times[-1] + (float(step * self._time_base) if step else (1 / fps if fps else 0.0)),
            width=ctx.width, height=ctx.height, codec=ctx.name, n_keyframes=len(self._keys),
        )

    # -- positions ---------------------------------------------------------------------------------------
    def index_at(self, t: float) -> int:
        """Index of the frame on screen at ``t`` seconds (clamped to the video)."""
        return min(max(bisect.bisect_right(self._times, t + 1e-6) - 1, 0), len(self._times) - 1)

    @property
    def times(self) -> list[float]:
        """Presentation time of every frame in seconds from the first frame."""
        return list(self._times)

    def time_of(self, index: int) -> float:
        """Presentation time of frame ``index`` in seconds from the first frame."""
        return self._times[index]

    # -- frames ------------------------------------------------------------------------------------------
    def frames(self, *, times: Sequence[float] | None = None, indices: Sequence[int] | None = None,
               as_: Format = "array", size: tuple[int, int] | None = None) -> list[Any]:
        """Frames at ``times`` (seconds) or ``indices``, in the order asked, as arrays or PIL images.

        ``size`` = (width, height) rescales them.
        """
        if (times is None) == (indices is None):
            raise ValueError("give exactly one of times= or indices=")
        if times is not None:
            indices = [self.index_at(float(t)) for t in times]
        n = self.info.n_frames
        for i in indices:
            if not 0 <= i < n:
                raise IndexError(f"frame index {i} out of range (video has {n} frames)")
        decoded = self._decode([self._pts[i] for i in indices])
        return [_convert(decoded[self._pts[i]], as_, size) for i in indices]

    def _decode(self, targets: list[int]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        for target in sorted(set(targets)):
            frame = self._served.get(target)
            if frame is None:
                frame = self._cache.get(target)
            if frame is None:
                key = self._keys[max(bisect.bisect_right(self._keys, target) - 1, 0)]
                if self._decoder is None or self._position is None or not key <= self._position < target:
                    self._container.seek(key, stream=self._stream, backward=True, any_frame=False)
                    self._decoder, self._position = self._container.decode(self._stream), None
                frame = self._decode_until(target)
            self._served.put(target, frame)
            out[target] = frame
        return out

    def _decode_until(self, target: int) -> Any:
        last = None
        for frame in self._decoder:
            self.decoded += 1
            if frame.pts is None:
                continue
            self._position = frame.pts
            self._cache.put(frame.pts, frame)
            last = frame
            if frame.pts >= target:
                return frame
        self._decoder = None  # end of stream: the target was the last frame or is missing
        if last is None:
            raise ValueError(f"could not decode the frame at pts {target}")
        return last

    def iter_frames(self, as_: Format = "array", size: tuple[int, int] | None = None) -> Iterator[Any]:
        """Every frame, decoded in order (the baseline that seeking is measured against)."""
        self._container.seek(self._keys[0], stream=self._stream, backward=True)
        self._decoder, self._position = None, None
        for frame in self._container.decode(self._stream):
            self.decoded += 1
            yield _convert(frame, as_, size)

    def close(self) -> None:
        self._cache.clear()
        self._served.clear()
        self._container.close()

    def __enter__(self) -> Video:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _convert(frame: Any, as_: Format, size: tuple[int, int] | None) -> Any:
    kwargs = {"width": size[0], "height": size[1]} if size else {}
    if as_ == "pil":
        return frame.to_image(**kwargs)
    if as_ == "array":
        return frame.to_ndarray(format="rgb24", **kwargs)
    raise ValueError(f"as_ must be 'array' or 'pil', not {as_!r}")
