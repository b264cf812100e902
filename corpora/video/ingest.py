"""What the video builders share: finding, checking, describing and copying the videos of a release.

A release keeps its videos under ``<raw>/videos/`` (any depth), named
``<video_id>.<ext>``. An optional ``SHA256SUMS`` file (``sha256sum`` format,
paths relative to the raw folder; at the top of the raw folder or inside
``videos/``) gives the expected hashes. Every video an annotation references
is checked: missing, hash mismatch, or not decodable (PyAV cannot open it or
decode its first frame) — each with the reason. Checks run in ``workers``
processes. Videos no annotation references are listed as ignored, not copied.

The ``videos`` config describes each checked video (path inside the dataset
folder, duration, fps, frame count, size, sha256); the files are copied
(hard-linked when possible) to ``<out>/videos/``, or embedded as bytes in the
Parquet shards with ``embed_videos=True``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from neurips26 import hubfolder
from neurips26.hubfolder import column

from . import frames

VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
SUMS_NAME = "SHA256SUMS"



STR, INT, FLOAT = pa.string(), pa.int64(), pa.float64()
VIDEO_FIELDS = [
    column("video_id", STR, "Video id (the file name without extension)"),
    column("path", STR, "Path of the video file inside the dataset folder"),
    column("duration", FLOAT, "Seconds from the first frame's start to the last frame's end"),
    column("fps", FLOAT, "Average frame rate"),
    column("n_frames", INT, "Number of frames"),
    column("width", INT, "Frame width in pixels"),
    column("height", INT, "Frame height in pixels"),
    column("codec", STR, "Video codec"),
    column("size_bytes", INT, "File size in bytes"),
    column("sha256", STR, "SHA-256 of the file"),
    column("source_file", STR, "Path of the file in the raw folder"),
]
VIDEOS = pa.schema(VIDEO_FIELDS)
VIDEOS_EMBEDDED = pa.schema(VIDEO_FIELDS + [column("video", pa.binary(), "The video file's bytes")])
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder) the problem is in"),
    column("item", STR, "Item id (or position) concerned, if any"),
    column("level", STR, "file (whole file rejected), item (one annotation rejected) or video"),
    column("reason", STR, "What is wrong"),
])


class BuildError(ValueError):
    """The build cannot start (bad arguments or an unusable raw folder)."""


@dataclass
class VideoCheck:
    video_id: str
    status: str  # ok, missing or corrupt
    source_file: str | None = None  # relative to the raw folder
    sha256: str | None = None
    size_bytes: int = 0
    info: frames.VideoInfo | None = None
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
class BuildReport:
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
    missing: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)

    @property
    def reconciles(self) -> bool:
        return (self.files_in == self.files_parsed + self.files_rejected + self.files_ignored
                and self.items_in == self.items_built + self.items_rejected
                and self.videos_referenced == self.videos_ok + self.videos_missing + self.videos_corrupt)

    @property
    def problems(self) -> int:
        """Rejected files and items, missing and corrupt videos (the CLI points to the errors config)."""
        return self.files_rejected + self.items_rejected + self.videos_missing + self.videos_corrupt

    def summary(self) -> str:
        """One line for the CLI."""
        splits = ", ".join(f"{k} {v:,}" for k, v in self.by_split.items()) or "none"
        return (f"{self.items_built:,} {self.unit} ({splits}) over {self.videos_ok} videos "
                f"({self.video_seconds:,.0f} s); items in {self.items_in:,} = built {self.items_built:,} + "
                f"rejected {self.items_rejected:,}; videos referenced {self.videos_referenced} = ok {self.videos_ok} "
                f"+ missing {self.videos_missing} + corrupt {self.videos_corrupt}; files in {self.files_in} = "
                f"parsed {self.files_parsed} + rejected {self.files_rejected} + ignored {self.files_ignored} "
                f"({'reconciles' if self.reconciles else 'DOES NOT RECONCILE'})"
                + "".join(f"; {name}: {_some(ids)}" for name, ids in (("missing", self.missing),
                                                                      ("corrupt", self.corrupt)) if ids))


def _some(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


def split_order(split: str) -> tuple:
    """train, validation, test, then other splits by name."""
    known = ("train", "validation", "test")
    return (known.index(split) if split in known else len(known), split)


def list_files(folder: Path) -> list[Path]:
    return sorted((p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")),
                  key=lambda p: p.relative_to(folder).as_posix())


def find_videos(raw: Path) -> tuple[dict[str, Path], list[tuple[Path, str]]]:
    """video_id -> file under ``raw/videos``; plus (file, reason) for files that are not usable videos."""
    found: dict[str, Path] = {}
    others: list[tuple[Path, str]] = []
    folder = raw / "videos"
    for path in list_files(folder) if folder.is_dir() else []:
        if path.name == SUMS_NAME:
            continue
        if path.suffix.lower() not in VIDEO_EXTENSIONS:
            others.append((path, f"not a video file ({', '.join(VIDEO_EXTENSIONS)})"))
        elif path.stem in found:
            others.append((path, f"second file for video {path.stem!r} (kept {found[path.stem].relative_to(raw)})"))
        else:
            found[path.stem] = path
    return found, others


def read_checksums(raw: Path) -> tuple[dict[str, str], list[Path]]:
    """Expected sha256 by path relative to ``raw``, from SHA256SUMS files; and those files."""
    sums: dict[str, str] = {}
    files = [p for p in (raw / SUMS_NAME, raw / "videos" / SUMS_NAME) if p.is_file()]
    for path in files:
        base = path.parent.relative_to(raw)
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            match = re.fullmatch(r"([0-9a-fA-F]{64}) [ *](.+)", line.strip())
            if match:
                sums[(base / match.group(2)).as_posix().removeprefix("./")] = match.group(1).lower()
    return sums, files


def check_video(args: tuple[str, Path | None, Path, str | None]) -> VideoCheck:
    """Exists, matches its expected hash, opens and decodes its first frame."""
    video_id, path, raw, expected = args
    if path is None:
        return VideoCheck(video_id, "missing", reason=f"video {video_id!r} not found under videos/")
    rel = path.relative_to(raw).as_posix()
    check = VideoCheck(video_id, "corrupt", rel, hubfolder.sha256_file(path), path.stat().st_size)
    if expected and expected != check.sha256:
        check.reason = f"sha256 {check.sha256[:12]}... does not match {SUMS_NAME} ({expected[:12]}...)"
        return check
    try:
        with frames.Video(path, cache_bytes=0) as video:
            video.frames(indices=[0])
            check.info = video.info
    except Exception as exc:  # PyAV raises many kinds of errors for broken files
        check.reason = f"cannot decode: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return check
    if check.info.n_frames < 1 or check.info.duration <= 0:
        check.reason = "no frames"
        return check
    check.status = "ok"
    return check


def check_videos(raw: Path, wanted: list[str], found: dict[str, Path], sums: dict[str, str], workers: int = 1,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, VideoCheck]:
    """Check every wanted video (in ``workers`` processes); video_id -> check."""
    jobs = [(vid, found.get(vid), raw, sums.get(found[vid].relative_to(raw).as_posix()) if vid in found else None)
            for vid in wanted]
    out: dict[str, VideoCheck] = {}
    for i, check in enumerate(_run(check_video, jobs, workers), start=1):
        out[check.video_id] = check
        if progress:
            progress(i, len(jobs))
    return out


def _run(fn: Callable, jobs: list, workers: int) -> Iterator:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(fn, jobs)
        return
    ctx = multiprocessing.get_context("fork" if multiprocessing.get_start_method() == "fork" else "spawn")
    with ctx.Pool(workers) as pool:
        yield from pool.imap(fn, jobs, chunksize=1)


def place_video(src: Path, dst: Path) -> None:
    """Hard-link ``src`` to ``dst`` when both are on one file system, else copy it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def reset_video_folder(out: Path) -> None:
    """``hubfolder.reset_folder`` plus the ``videos/`` an earlier build copied in."""
    hubfolder.reset_folder(out)
    shutil.rmtree(out / "videos", ignore_errors=True)


def write_videos(out: Path, spec: hubfolder.ConfigSpec, checks: dict[str, VideoCheck], by_split: dict[str, list[str]],
                 raw: Path, embed: bool) -> None:
    """The ``videos`` config (one split per annotation split) and the files themselves."""
    for split, ids in by_split.items():
        writer = hubfolder.SplitWriter(out, spec.name, spec.schema, split, row_group_rows=1 if embed else 8192)
        for vid in ids:
            check = checks[vid]
            src = raw / check.source_file
            path = f"videos/{vid}{src.suffix.lower()}"
            row = check.row(path)
            if embed:
                row["video"] = src.read_bytes()
            else:
                place_video(src, out / path)
            writer.write(row)
        spec.shards[split] = writer.close()


def report_json(report: BuildReport, files: list[FileReport]) -> str:
    payload = {**asdict(report), "reconciles": report.reconciles,
               "files": [asdict(f) for f in sorted(files, key=lambda f: f.path)]}
    return json.dumps(payload, indent=2) + "\n"


def load_json(path: Path) -> Any:
    """Parsed JSON, or ValueError with a one-line reason."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def first(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    """(key, value) of the first of ``names`` present in ``item`` with a non-null value."""
    for name in names:
        if item.get(name) is not None:
            return name, item[name]
    return None, None


def account(report: BuildReport, checks: dict[str, VideoCheck], found: dict[str, Path],
                    stray: list[tuple[Path, str]], raw: Path, files: list[FileReport], errors: list[dict],
                    sum_files: list[Path]) -> None:
    """Count the referenced videos, and list every file under videos/ (and the checksum files) as an input."""
    for check in checks.values():
        report.videos_referenced += 1
        if check.status == "ok":
            report.videos_ok += 1
        else:
            report.videos_missing += check.status == "missing"
            report.videos_corrupt += check.status == "corrupt"
            (report.missing if check.status == "missing" else report.corrupt).append(check.video_id)
            errors.append({"source_file": check.source_file or f"videos/{check.video_id}.*", "item": check.video_id,
                           "level": "video", "reason": f"{check.status}: {check.reason}"})
    for vid, path in found.items():
        rel = path.relative_to(raw).as_posix()
        check = checks.get(vid)
        sha = check.sha256 if check and check.sha256 else hubfolder.sha256_file(path)
        if check is None:
            report.videos_unreferenced += 1
            files.append(FileReport(rel, sha, "ignored", "video", reason="no annotation references this video"))
        else:
            files.append(FileReport(rel, sha, "parsed" if check.status == "ok" else "rejected", "video",
                                    reason=check.reason))
    for path, why in stray:
        rel = path.relative_to(raw).as_posix()
        files.append(FileReport(rel, hubfolder.sha256_file(path), "ignored", "other", reason=why))
    for path in sum_files:
        files.append(FileReport(path.relative_to(raw).as_posix(), hubfolder.sha256_file(path), "parsed", "checksums"))
    counted = {f.path for f in files}
    for path in list_files(raw):  # scenes/, READMEs...: inputs too, counted as ignored
        rel = path.relative_to(raw).as_posix()
        if rel not in counted:
            files.append(FileReport(rel, hubfolder.sha256_file(path), "ignored", "other",
                                    reason="outside annotations/ and videos/"))
    report.files_in = len(files)
    report.files_parsed = sum(f.status == "parsed" for f in files)
    report.files_rejected = sum(f.status == "rejected" for f in files)
    report.files_ignored = sum(f.status == "ignored" for f in files)


def write_release(out: Path, items: hubfolder.ConfigSpec, kept: list[dict], video_ids: Callable[[dict], list[str]],
                  checks: dict[str, VideoCheck], raw: Path, embed_videos: bool, report: BuildReport,
                  files: list[FileReport], errors: list[dict], meta: dict[str, Any],
                  card: Callable[[list[hubfolder.ConfigSpec]], str], builder: dict[str, str]) -> None:
    """Write a video resource's folder: ``items`` split by split (rows in the order given), the ``videos`` and
    ``errors`` configs, then manifest (every input file's sha256), card, Croissant and build_report.json.

    Call :func:`account` first, so the video errors and input files are complete.
    """
    out = Path(out)
    reset_video_folder(out)
    configs = [items,
               hubfolder.ConfigSpec("videos", VIDEOS_EMBEDDED if embed_videos else VIDEOS,
                                    f"One row per video a row of {items.name} in the split references."),
               hubfolder.ConfigSpec("errors", ERRORS, "Every rejected file, item and video, with the reason.")]
    by_split: dict[str, list[dict]] = {}
    for row in kept:
        by_split.setdefault(row["split"], []).append(row)
    splits = sorted(by_split, key=split_order)
    for split in splits:
        hubfolder.write_table(out, items, by_split[split], split)
        report.by_split[split] = len(by_split[split])
    videos_by_split = {split: sorted({v for r in by_split[split] for v in video_ids(r)}) for split in splits}
    write_videos(out, configs[1], checks, videos_by_split, raw, embed_videos)
    report.video_seconds = sum(checks[v].info.duration for v in {v for r in kept for v in video_ids(r)})
    errors.sort(key=lambda e: ({"file": 0, "video": 1, "item": 2}[e["level"]], e["source_file"], e["item"] or ""))
    hubfolder.write_table(out, configs[2], errors)

    hubfolder.write_manifest(out, configs, builder, {f.path: f.sha256 for f in files})
    hubfolder.write_card(out, configs, meta, card(configs))
    hubfolder.write_croissant(out, configs, meta)
    (out / "build_report.json").write_text(report_json(report, files), encoding="utf-8")


def generated_release(name: str, generate: Callable[..., Any], seed: int = 0, root: Path | None = None) -> Path:
    """``<root>/<name>-seed<seed>`` (root: ``<cache>/generated``), made once with ``generate(folder, seed=seed)``.

    ``name`` carries the generator version, so a changed generator makes a new folder.
    """
    if root is None:
        from neurips26.search import cache_dir

        root = cache_dir() / "generated"
    target = Path(root) / f"{name}-seed{seed}"
    if not (target / SUMS_NAME).is_file():
        from filelock import FileLock

        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock"):
            if not (target / SUMS_NAME).is_file():
                tmp = target.with_name(target.name + ".tmp")
                shutil.rmtree(tmp, ignore_errors=True)
                generate(tmp, seed=seed)
                shutil.rmtree(target, ignore_errors=True)
                tmp.replace(target)
    return target
