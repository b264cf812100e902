"""Writing a video resource's folder: its items, ``videos`` (copied or embedded) and ``errors`` configs,
manifest (with ``demo``), card, Croissant and build report; and reading its ``videos`` config back into local
video files (:func:`video_paths`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from neurips26 import hubfolder, settings
from neurips26.hubfolder import column

from .records import BuildReport, FileReport, VideoCheck, report_json, split_order

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
# ``video`` is a ``datasets.Video()`` column ({bytes, path}): the Hub's viewer plays it and ``load_dataset`` gives
# a video object. Its path names the file inside the folder (``videos/<id>.mp4``). By default the bytes are in the
# shard too (as ``push_to_hub`` would embed them), so a row decodes from any working folder and from the Hub;
# with ``--no-embed-videos`` the file itself is under ``videos/`` and ``datasets`` opens the path relative to the
# working folder. The feature type travels in the schema's ``huggingface`` metadata, as datasets writes it.
VIDEO_COLUMN = column("video", pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
                      "The video (datasets.Video): its bytes when embedded, else its path inside the folder")


def video_schema(fields: list[pa.Field]) -> pa.Schema:
    """``fields`` with the ``datasets`` feature types recorded, ``video`` as ``datasets.Video()``."""
    import datasets  # lazy: heavy; only writing the videos config needs it

    plain = pa.schema(fields)
    features = datasets.Features({f.name: datasets.Video() if f.name == "video"
                                  else datasets.Features.from_arrow_schema(pa.schema([f]))[f.name] for f in plain})
    return plain.with_metadata({"huggingface": json.dumps({"info": {"features": features.to_dict()}})})


VIDEOS_FIELDS = [*VIDEO_FIELDS, VIDEO_COLUMN]
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder) the problem is in"),
    column("item", STR, "Item id (or position) concerned, if any"),
    column("level", STR, "file (whole file rejected), item (one annotation rejected) or video"),
    column("reason", STR, "What is wrong"),
])


def place_video(src: Path, dst: Path) -> None:
    """Hard-link ``src`` to ``dst`` when both are on one file system, else copy it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


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
            row["video"] = {"bytes": src.read_bytes() if embed else None, "path": path}
            if not embed:
                place_video(src, out / path)
            writer.write(row)
        spec.shards[split] = writer.close()


def video_paths(folder: Path | str) -> dict[str, str]:
    """video_id -> a local video file, from the ``videos`` config of a built folder (all splits), for the code that
    seeks in files (frame sampling, FrameSelect pools).

    A folder built with ``--no-embed-videos`` gives its own files. A default build embeds the bytes: each video is
    written once to ``<cache>/videos/<sha256>/<video_id>.<ext>`` (the file name stays the video id, as in the
    folder). Only the small columns are read, and a video's bytes only when its cached file is missing.
    """
    import pyarrow.parquet as pq  # lazy: only reading a videos config needs it

    from neurips26.errors import UserError  # lazy: as above

    folder = Path(folder)
    shards = sorted((folder / "data" / "videos").glob("*.parquet"))
    if not shards:
        raise UserError(f"{folder}: no videos config; build it with `neurips26 build`")
    out = {}
    for shard in shards:
        parquet = pq.ParquetFile(shard)
        rows = parquet.read(columns=["video_id", "path", "sha256"]).to_pylist()
        starts = [0]  # the first row of each row group (embedded builds write one video per row group)
        for k in range(parquet.num_row_groups):
            starts.append(starts[-1] + parquet.metadata.row_group(k).num_rows)
        for i, row in enumerate(rows):
            path = (folder / row["path"]).resolve()
            if not path.is_file():
                name, digest = Path(row["path"]).name, str(row["sha256"])
                if name in ("", ".", "..") or len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
                    raise UserError(f"{shard}: video {row['video_id']!r} has no file at {row['path']!r} and its "
                                    f"path or sha256 ({digest!r}) cannot name a cached copy")
                path = settings.cache_dir() / "videos" / digest / name
                if not path.is_file():
                    group = next(k for k in range(parquet.num_row_groups) if starts[k] <= i < starts[k + 1])
                    video = parquet.read_row_group(group, columns=["video"]).column("video")[i - starts[group]]
                    data = video["bytes"].as_py()
                    if not data:
                        raise UserError(f"{shard}: video {row['video_id']!r} is neither a file at {row['path']!r} "
                                        "nor embedded")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_name(path.name + ".part")
                    tmp.write_bytes(data)
                    tmp.replace(path)
            out[row["video_id"]] = str(path)
    return out


def is_generated(raw: Path) -> bool:
    """True for a release written by the package's generator (``neurips26 generate``): it keeps each clip's scene
    script (the exact ground truth) under ``scenes/``, which a released dataset does not have. Scores on such a
    release are scores on invented data: the folder is marked ``demo`` and the leaderboard does not rank them."""
    return (Path(raw) / "scenes").is_dir()


def write_release(out: Path, items: hubfolder.ConfigSpec, kept: list[dict], video_ids: Callable[[dict], list[str]],
                  checks: dict[str, VideoCheck], raw: Path, embed_videos: bool, report: BuildReport,
                  files: list[FileReport], errors: list[dict], meta: dict[str, Any],
                  card: Callable[[list[hubfolder.ConfigSpec]], str], builder: dict[str, str],
                  demo: bool = False) -> None:
    """Write a video resource's folder: ``items`` split by split (rows in the order given), the ``videos`` and
    ``errors`` configs, then manifest (every input file's sha256; ``demo`` as given), card, Croissant and
    build_report.json.

    Call :func:`account` first, so the video errors and input files are complete. Written into a hidden sibling
    that replaces ``out`` once complete.
    """
    with hubfolder.building(out) as stage:
        _write_release(stage, items, kept, video_ids, checks, raw, embed_videos, report, files, errors, meta, card,
                       builder, demo)


def _write_release(out: Path, items: hubfolder.ConfigSpec, kept: list[dict], video_ids: Callable[[dict], list[str]],
                   checks: dict[str, VideoCheck], raw: Path, embed_videos: bool, report: BuildReport,
                   files: list[FileReport], errors: list[dict], meta: dict[str, Any],
                   card: Callable[[list[hubfolder.ConfigSpec]], str], builder: dict[str, str], demo: bool) -> None:
    configs = [items,
               hubfolder.ConfigSpec("videos", video_schema(VIDEOS_FIELDS),
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

    hubfolder.write_manifest(out, configs, builder, {f.path: f.sha256 for f in files}, demo=demo)
    hubfolder.write_card(out, configs, meta, card(configs))
    hubfolder.write_croissant(out, configs, meta)
    (out / "build_report.json").write_text(report_json(report, files), encoding="utf-8")
