"""What the video builders share: finding, checking, describing and copying the videos of a release.

A release keeps its videos under ``<raw>/videos/`` (any depth), named
``<video_id>.<ext>``. An optional ``SHA256SUMS`` file (``sha256sum`` format,
paths relative to the raw folder; at the top of the raw folder or inside
``videos/``) gives the expected hashes. Every video an annotation references
is checked: missing, hash mismatch, or not decodable (PyAV cannot open it or
decode its first frame) — each with the reason. Checks run in ``workers``
processes. Videos no annotation references are listed as ignored, not copied.

Writing the folder (the ``videos`` config, copied or embedded files, manifest) is
:mod:`.release`; the records a build fills in are :mod:`.records`.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from neurips26 import hubfolder, settings
from neurips26.hubfolder import rawfiles

from . import decoder
from .records import BuildReport, FileReport, VideoCheck

VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
SUMS_NAME = "SHA256SUMS"


def list_files(folder: Path, root: Path | None = None) -> list[Path]:
    """Files under ``folder`` that may be read: symbolic links out of the raw folder ``root`` (default
    ``folder``), to folders or broken are left out here and rejected by :func:`account`."""
    return rawfiles.readable(folder, root)[0]


def find_videos(raw: Path) -> tuple[dict[str, Path], list[tuple[Path, str]]]:
    """video_id -> file under ``raw/videos``; plus (file, reason) for files that are not usable videos."""
    found: dict[str, Path] = {}
    others: list[tuple[Path, str]] = []
    folder = raw / "videos"
    for path in list_files(folder, raw) if folder.is_dir() else []:
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
        with decoder.Video(path, cache_bytes=0) as video:
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
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


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
        files.append(FileReport(rel, rawfiles.digest(path, raw), "ignored", "other", reason=why))
    for path in sum_files:
        files.append(FileReport(path.relative_to(raw).as_posix(), hubfolder.sha256_file(path), "parsed", "checksums"))
    counted = {f.path for f in files}
    for path in rawfiles.walk(raw):  # scenes/, READMEs...: inputs too, counted as ignored
        rel = path.relative_to(raw).as_posix()
        if rel in counted:
            continue
        if refused := rawfiles.refusal(path, raw):  # never read
            files.append(FileReport(rel, "", "rejected", "other", reason=refused))
            errors.append({"source_file": rel, "item": None, "level": "file", "reason": refused})
        else:
            files.append(FileReport(rel, hubfolder.sha256_file(path), "ignored", "other",
                                    reason="outside annotations/ and videos/"))
    report.files_in = len(files)
    report.files_parsed = sum(f.status == "parsed" for f in files)
    report.files_rejected = sum(f.status == "rejected" for f in files)
    report.files_ignored = sum(f.status == "ignored" for f in files)


def generated_release(name: str, generate: Callable[..., Any], seed: int = 0, root: Path | None = None) -> Path:
    """``<root>/<name>-seed<seed>`` (root: ``<cache>/generated``), made once with ``generate(folder, seed=seed)``.

    ``name`` carries the generator version, so a changed generator makes a new folder.
    """
    if root is None:
        root = settings.cache_dir() / "generated"
    target = Path(root) / f"{name}-seed{seed}"
    if not (target / SUMS_NAME).is_file():
        from filelock import FileLock  # lazy: only when a release must be generated

        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock"):
            if not (target / SUMS_NAME).is_file():
                tmp = target.with_name(target.name + ".tmp")
                shutil.rmtree(tmp, ignore_errors=True)
                generate(tmp, seed=seed)
                shutil.rmtree(target, ignore_errors=True)
                tmp.replace(target)
    return target
