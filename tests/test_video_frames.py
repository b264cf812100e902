"""Frame access: exact frames by index and time, seeking with a keyframe index, the cache, sampling policies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

av = pytest.importorskip("av")

from neurips26.corpora.video import frames  # noqa: E402

from neurips26.errors import UnknownNameError  # noqa: E402

N, FPS, GOP = 100, 10, 20
W, H = 64, 32


def encode_counter(path: Path, n: int = N, fps: int = FPS, gop: int = GOP) -> Path:
    """A video whose frame i shows i in binary (8 big black/white blocks), with B-frames and a fixed GOP."""
    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps, options={
            "preset": "veryfast", "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes=2"})
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        for i in range(n):
            image = np.zeros((H, W, 3), np.uint8)
            for bit in range(8):
                if i >> bit & 1:
                    image[:, bit * 8:(bit + 1) * 8] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def read_counter(image: np.ndarray) -> int:
    return sum(1 << bit for bit in range(8) if image[H // 2, bit * 8 + 4].mean() > 127)


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return encode_counter(tmp_path_factory.mktemp("frames") / "counter.mp4")


def test_info_from_packets(counter: Path) -> None:
    info = frames.probe(counter)
    assert (info.n_frames, info.fps, info.duration, info.width, info.height) == (N, 10.0, 10.0, W, H)
    assert info.n_keyframes == N // GOP and info.codec == "h264"


def test_frames_by_index_in_any_order_are_the_right_ones(counter: Path) -> None:
    video = frames.Video(counter)
    asked = [95, 3, 41, 3, 0, 99, 60, 59, 61]
    got = video.frames(indices=asked)
    assert [read_counter(image) for image in got] == asked
    sequential = list(frames.Video(counter).iter_frames())
    assert len(sequential) == N
    for i, image in zip(asked, got, strict=True):
        assert np.array_equal(image, sequential[i])  # the same decoded pixels as a full decode


def test_time_maps_to_the_frame_on_screen(counter: Path) -> None:
    video = frames.Video(counter)
    cases = {0.0: 0, 0.0999: 0, 0.1: 1, 0.15: 1, 4.95: 49, 9.95: 99, 42.0: 99, -1.0: 0}
    for t, index in cases.items():
        assert video.index_at(t) == index, t
    assert [read_counter(x) for x in video.frames(times=list(cases))] == list(cases.values())
    assert video.time_of(37) == pytest.approx(3.7)


def test_seek_decodes_only_the_keyframe_neighbourhood_and_caches_it(counter: Path) -> None:
    video = frames.Video(counter)
    video.frames(indices=[95])
    assert video.decoded <= GOP  # seek to the keyframe at 80, decode forward to 95
    before = video.decoded
    video.frames(indices=[95, 85, 90])  # all decoded on the way: served from the cache
    assert video.decoded == before
    video.frames(indices=[97])  # same neighbourhood, after the decoder's position: keep decoding
    assert video.decoded - before <= 2 + 2  # two frames (+ B-frame reordering slack)
    video.frames(indices=[5])  # behind: seek back to the keyframe at 0
    assert read_counter(video.frames(indices=[5])[0]) == 5


def test_caches_are_bounded_and_keep_served_frames(counter: Path) -> None:
    frame_bytes = W * H * 3 // 2
    video = frames.Video(counter, cache_bytes=frame_bytes * 10, served_bytes=frame_bytes * 8)  # 10 and 8 frames
    asked = [5, 30, 55, 90]
    video.frames(indices=asked)
    assert len(video._cache) <= 10 and len(video._served) == 4
    before = video.decoded
    assert [read_counter(x) for x in video.frames(indices=asked)] == asked
    assert video.decoded == before  # served from the cache although later decodes filled the other one


def test_pil_output_size_and_bytes_source(counter: Path) -> None:
    images = frames.frames(counter.read_bytes(), indices=[7], as_="pil", size=(32, 16))
    assert images[0].size == (32, 16) and images[0].mode == "RGB"
    with pytest.raises(ValueError):
        frames.Video(counter).frames(indices=[1], as_="tensor")  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        frames.Video(counter).frames(indices=[N])
    with pytest.raises(ValueError):
        frames.Video(counter).frames()


def test_open_video_reuses_one_instance(counter: Path) -> None:
    a = frames.open_video(counter)
    assert frames.open_video(str(counter)) is a
    frames.close_all()
    assert frames.open_video(counter) is not a


def test_sampling_policies_are_selectors(counter: Path) -> None:
    # uniform: the frame at the centre of each of n equal segments (times are those of the frames served)
    assert frames.sample_times(counter, 4, "uniform") == pytest.approx([1.2, 3.7, 6.2, 8.7])
    # fps: one frame per 1/rate s, thinned evenly to n (first and last kept); too few and the rate is n / duration
    assert frames.sample_times(counter, 4, "fps", rate=2.0) == pytest.approx([0.0, 3.0, 6.5, 9.5])
    assert frames.sample_times(counter, 5, "fps", rate=0.5) == pytest.approx([0.0, 2.0, 4.0, 6.0, 8.0])
    assert frames.sample_times(counter, 20, "fps", rate=1.0) == pytest.approx([k / 2 for k in range(20)])
    assert len(frames.sample_times(counter, 500, "uniform")) == N  # no more frames than the video has
    s = frames.sample(counter, 4, "uniform")
    assert s.indices == [12, 37, 62, 87] and [read_counter(x) for x in s.frames] == s.indices
    assert s.frame_times == pytest.approx([1.2, 3.7, 6.2, 8.7]) and s.times == s.frame_times
    with pytest.raises(UnknownNameError, match="unknown selector 'keyframes'.*uniform") as caught:
        frames.sample(counter, 4, "keyframes")
    assert isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="n must be >= 1"):
        frames.sample_times(counter, 0)

    # any query-free selector is a policy, with its options and seed
    random = frames.sample(counter, 6, "random", seed=3)
    assert len(set(random.indices)) == 6 and random.indices == sorted(random.indices)
    assert [read_counter(x) for x in random.frames] == random.indices
    assert frames.sample(counter, 6, "random", seed=3).indices == random.indices
    with pytest.raises(ValueError, match="needs pool field"):
        frames.sample(counter, 4, "topk")  # a query-aware selector has no features to work on here


def test_broken_files_raise(tmp_path: Path, counter: Path) -> None:
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(counter.read_bytes()[: counter.stat().st_size // 2])
    with pytest.raises(Exception):  # noqa: B017 - PyAV's error type depends on where the file breaks
        frames.Video(truncated).frames(indices=[N - 1])
    (tmp_path / "text.mp4").write_text("not a video")
    with pytest.raises(Exception):  # noqa: B017
        frames.probe(tmp_path / "text.mp4")
