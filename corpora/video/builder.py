"""The build every video resource shares: read a release's items, check the videos they reference, keep or reject
each item, and write the folder; and the card fields both cards fill in.

A resource gives what differs (:class:`Release`): how its annotation files are read into rows, which id names an
item, which videos a row references, what else rejects a row (a span after its video's end), the order of the
kept rows and its card. Everything rejected lands in the ``errors`` config, so the report's tallies reconcile.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import pyarrow as pa

from neurips26 import hubfolder

from . import fields, ingest, release
from .records import BuildError, BuildReport, FileReport, VideoCheck, VideoInfo

SPLIT_NAME = re.compile(r"^\w+$")
Row = dict[str, Any]


@dataclass(frozen=True)
class Release:
    """What one video resource's build does its own way."""

    read: Callable[[Path, list[FileReport], list[dict]], list[Row]]  # rows (``{"_rejected": True}`` if rejected)
    items: str  # the items config: its name (annotations, questions), schema and description
    schema: pa.Schema
    description: str
    id_key: str  # the column that names an item ("id", "qid")
    video_ids: Callable[[Row], list[str]]  # the videos one row references
    reject: Callable[[Row, dict[str, VideoCheck]], str | None]  # why a row with an unused id is rejected, or None
    card: Callable[[BuildReport, list[Row], list[hubfolder.ConfigSpec]], str]  # the card's prose
    meta: dict[str, Any]
    builder: dict[str, str]  # name, version, package_version (manifest.json)
    unit: str = "annotations"  # what an item is called in the summary
    order: Callable[[Row], Any] | None = None  # sort key of the kept rows (stable), else the read order


def read_items(items: list[Any], rel: str, split: str | None, default_split: str, id_names: tuple[str, ...],
               id_key: str, normalize: Callable[[Any], Row], fallback_id: Callable[[Row, int], str],
               errors: list[dict]) -> list[Row]:
    """The rows of one annotation file's items; a bad item (or an :class:`~.fields.ItemError` in its place) is
    an ``errors`` row and a ``{"_rejected": True}`` row. Without its own id, an item gets ``fallback_id(row, k)``."""
    rows: list[Row] = []
    for k, item in enumerate(items):
        key, given = ingest.first(item, id_names) if isinstance(item, dict) else (None, None)
        where = str(given) if key else f"#{k}"
        item_split = split or (item.get("split") if isinstance(item, dict) else None) or default_split
        try:
            if isinstance(item, fields.ItemError):
                raise item
            if not SPLIT_NAME.match(str(item_split)):
                raise fields.ItemError(f"split {item_split!r} is not a valid split name")
            row = normalize(item)
        except fields.ItemError as exc:
            errors.append({"source_file": rel, "item": where, "level": "item", "reason": str(exc)})
            rows.append({"_rejected": True})
            continue
        row[id_key] = str(given).strip() if key and str(given).strip() else fallback_id(row, k)
        row["split"], row["source_file"] = str(item_split), rel
        rows.append(row)
    return rows


def after_end(end: float, info: VideoInfo) -> bool:
    """True when a span ending at ``end`` seconds ends after the video (one frame and 50 ms of slack)."""
    return end > info.duration + 1 / max(info.fps, 1) + 0.05


def build_release(resource: Release, raw: Path, out: Path, workers: int,
                  progress: Callable[[int, int], None] | None, embed_videos: bool) -> BuildReport:
    """Build ``raw`` (a resolved folder) into ``out``: items with a duplicate id, an unusable video or a reason
    of ``resource.reject`` are rejected; files in = parsed + rejected + ignored, items in = built + rejected,
    videos referenced = ok + missing + corrupt."""
    demo = release.is_generated(raw)  # invented by the package's generator, not a released dataset
    if not raw.is_dir():
        raise BuildError(f"{raw}: raw folder not found")
    files: list[FileReport] = []
    errors: list[dict] = []
    parsed = resource.read(raw, files, errors)
    report = BuildReport(items_in=len(parsed), unit=resource.unit, videos_embedded=embed_videos)
    rows = [r for r in parsed if not r.get("_rejected")]

    found, stray = ingest.find_videos(raw)
    sums, sum_files = ingest.read_checksums(raw)
    wanted = sorted({v for r in rows for v in resource.video_ids(r)})
    checks = ingest.check_videos(raw, wanted, found, sums, workers, progress)
    kept, seen = [], set()
    for row in rows:
        name = row[resource.id_key]
        reason = (f"duplicate {resource.id_key} {name!r} (first kept)" if name in seen
                  else resource.reject(row, checks))
        if reason:
            errors.append({"source_file": row["source_file"], "item": name, "level": "item", "reason": reason})
            continue
        seen.add(name)
        kept.append(row)
    report.items_built = len(kept)
    report.items_rejected = report.items_in - report.items_built

    ingest.account(report, checks, found, stray, raw, files, errors, sum_files)
    if resource.order is not None:
        kept.sort(key=resource.order)
    items = hubfolder.ConfigSpec(resource.items, resource.schema, resource.description, default=True)  # new shards
    release.write_release(out, items, kept, resource.video_ids, checks, raw, embed_videos, report, files,
                          errors, resource.meta, lambda configs: resource.card(report, kept, configs),
                          resource.builder, demo)
    return report


def card_text(meta: dict[str, Any], report: BuildReport, rows: list[Row], configs: list[hubfolder.ConfigSpec],
              items: str, real_name: str, repo: str, **own: str) -> str:
    """``cards/<meta name>.md`` with a video build's counts, configs and ``items`` fields filled in, and the
    resource's ``own`` fields (its taxonomy table...). ``real_name`` names the real data a generated build is not."""
    template = Template(resources.files("neurips26.cards").joinpath(f"{meta['name']}.md").read_text(encoding="utf-8"))
    spec = next(c for c in configs if c.name == items)
    generated = rows and all(r["source"] == "neurips26-generator" for r in rows)
    return template.substitute(
        repo=repo, license=meta["license"], n_items=f"{report.items_built:,}",
        by_split=", ".join(f"{k} {v:,}" for k, v in report.by_split.items()) or "none",
        n_videos=report.videos_ok, video_seconds=f"{report.video_seconds:,.0f}",
        items_in=report.items_in, items_rejected=report.items_rejected,
        videos_referenced=report.videos_referenced, videos_ok=report.videos_ok,
        videos_missing=report.videos_missing, videos_corrupt=report.videos_corrupt,
        files_in=report.files_in, files_parsed=report.files_parsed, files_rejected=report.files_rejected,
        files_ignored=report.files_ignored,
        video_storage=("The videos' bytes are embedded in the `videos` shards (the default), so a row decodes "
                       "from any working folder and after a push; `--no-embed-videos` keeps them as files under "
                       "`videos/` instead." if report.videos_embedded else
                       "This build keeps the videos as files under `videos/` of this folder (`--no-embed-videos`): "
                       "a row's path is relative to the folder, so rows decode from inside it; a default build "
                       "embeds the bytes in the `videos` shards."),
        origin=(f"**This build is the procedural generator's synthetic release**, not the real {real_name} data."
                if generated else ""),
        config_table="\n".join(f"| `{c.name}` | {c.rows():,} | {c.description} |" for c in configs),
        fields="\n".join(f"| `{f.name}` | {f.type} | {(f.metadata or {}).get(b'description', b'').decode()} |"
                         for f in spec.schema),
        **own,
    )
