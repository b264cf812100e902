"""The video resources' records: what a video is, what a build checked, read and made.

:class:`VideoInfo` (a video's frames and size, from its packets), :class:`VideoCheck` (one
referenced video: ok, missing or corrupt), :class:`FileReport` (one input file) and
:class:`BuildReport` (the counts a build reconciles), the expected errors, and
:class:`GenerateReport` (what a generator made) with :data:`VIDEO_GENERATORS` (``neurips26 generate``). This module
imports nothing else of its package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.registry import Registry


class BuildError(UserError):
    """The build cannot start (bad arguments or an unusable raw folder)."""


class MissingInputError(UserError, FileNotFoundError):
    """A video, built folder or config that a command needs is missing (the message names what to run)."""


@dataclass(frozen=True)
class VideoInfo:
    """What a video is: exact frame count and duration from its packets."""

    n_frames: int
    fps: float
    duration: float  # seconds, from the first frame's start to the last frame's end
    width: int
    height: int
    codec: str
    n_keyframes: int



@dataclass
class VideoCheck:
    video_id: str
    status: str  # ok, missing or corrupt
    source_file: str | None = None  # relative to the raw folder
    sha256: str | None = None
    size_bytes: int = 0
    info: VideoInfo | None = None
    reason: str | None = None

    def row(self, path: str) -> dict[str, Any]:
        info = self.info
        return {"video_id": self.video_id, "path": path, "duration": info.duration, "fps": info.fps,
                "n_frames": info.n_frames, "width": info.width, "height": info.height, "codec": info.codec,
                "size_bytes": self.size_bytes, "sha256": self.sha256, "source_file": self.source_file}


@dataclass
class FileReport:
    path: str
    sha256: str
    status: str  # parsed, rejected or ignored
    kind: str  # annotations, video or other
    items: int = 0
    reason: str | None = None


@dataclass
class BuildReport(Reconciled):
    """Counts of a video resource build; every input file, item and referenced video is accounted for."""

    files_in: int = 0
    files_parsed: int = 0
    files_rejected: int = 0
    files_ignored: int = 0
    items_in: int = 0
    items_built: int = 0
    items_rejected: int = 0
    videos_referenced: int = 0
    videos_ok: int = 0
    videos_missing: int = 0
    videos_corrupt: int = 0
    videos_unreferenced: int = 0
    video_seconds: float = 0.0
    by_split: dict[str, int] = field(default_factory=dict)
    unit: str = "annotations"  # what an item is called in the summary
    videos_embedded: bool = True  # bytes inside the videos shards (default), else files under videos/
    missing: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)

    def tallies(self) -> list[Tally]:
        """Items in = built + rejected; videos referenced = ok + missing + corrupt; files in = parsed + rejected +
        ignored."""
        return [Tally.of("items in", self.items_in, built=self.items_built, rejected=self.items_rejected),
                Tally.of("videos referenced", self.videos_referenced, ok=self.videos_ok,
                         missing=self.videos_missing, corrupt=self.videos_corrupt),
                Tally.of("files in", self.files_in, parsed=self.files_parsed, rejected=self.files_rejected,
                         ignored=self.files_ignored)]

    @property
    def problems(self) -> list[str]:
        """Rejected files and items, missing and corrupt videos (each in the errors config)."""
        return [text for n, text in (
            (self.files_rejected, f"{self.files_rejected} file(s) rejected"),
            (self.items_rejected, f"{self.items_rejected:,} of {self.items_in:,} {self.unit} rejected"),
            (self.videos_missing, f"{self.videos_missing} video(s) missing: {_some(self.missing)}"),
            (self.videos_corrupt, f"{self.videos_corrupt} video(s) corrupt: {_some(self.corrupt)}")) if n]

    def summary(self) -> str:
        """One line for the CLI."""
        splits = ", ".join(f"{k} {v:,}" for k, v in self.by_split.items()) or "none"
        return (f"{self.items_built:,} {self.unit} ({splits}) over {self.videos_ok} videos "
                f"({self.video_seconds:,.0f} s); {self.tally_text()}"
                + "".join(f"; {name}: {_some(ids)}" for name, ids in (("missing", self.missing),
                                                                      ("corrupt", self.corrupt)) if ids))


def _some(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


def split_order(split: str) -> tuple:
    """train, validation, test, then other splits by name."""
    known = ("train", "validation", "test")
    return (known.index(split) if split in known else len(known), split)


def report_json(report: BuildReport, files: list[FileReport]) -> str:
    return report.to_json(files=[asdict(f) for f in sorted(files, key=lambda f: f.path)])


@dataclass
class GenerateReport:
    """What a generator made: videos, annotations, seconds of video and frames, and its wall time."""

    out: Path
    videos: int
    annotations: int
    video_seconds: float
    frames: int
    seconds: float  # wall time

    def summary(self) -> str:
        return (f"{self.videos} videos ({self.video_seconds:.0f} s of video, {self.frames:,} frames), "
                f"{self.annotations} annotations in {self.seconds:.1f} s "
                f"({self.video_seconds / max(self.seconds, 1e-9):.1f} video-s/s)")


# procedural releases: ``generate(out, seed=, fps=, size=, progress=, **options) -> GenerateReport`` by resource
VIDEO_GENERATORS: Registry[Callable[..., GenerateReport]] = Registry("video generator",
                                                                     group="neurips26.video_generators")
