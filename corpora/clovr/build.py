"""Build CLoVR-Bench from a release (or the generator's output) into a Hub-ready dataset folder.

Input contract (``--raw DIR``)::

    DIR/annotations/<split>.json    {"items": [...]} or a list; .jsonl (one item per line) too
    DIR/annotations.json            single-file layout: each item's "split" field, else test
    DIR/videos/<video_id>.mp4       any depth, any of .mp4 .mkv .webm .avi .mov .m4v
    DIR/SHA256SUMS                  optional: expected hashes of the videos

An item has ``qid``, ``video_ids`` (the videos the question spans, in the
order the question numbers them), ``level`` (one of the three, spelled
freely: 'Comparative Analysis', 'comparative_analysis', 'Level 1', 1),
``task``, ``subtask``, ``question``, ``options``, ``answer`` and ``evidence``
(a list of ``{"video_id", "start", "end"}`` or ``[video_id, start, end]``,
each inside one of the question's videos; stored as three parallel lists
``evidence_video_ids``, ``evidence_start``, ``evidence_end``, which every
reader, Croissant included, handles). Unknown fields are kept as JSON in
``extra``. Malformed items, and items with a missing or corrupt video or an
evidence span outside its video, are rejected with the reason (``errors``
config); ``items in = built + rejected``, ``files in = parsed + rejected +
ignored``, ``videos referenced = ok + missing + corrupt``.

Without ``--raw`` the build uses the generator's default release
(:func:`default_raw`), made once in the cache.

Configs: ``questions`` (the test split), ``videos`` (the videos' bytes embedded by default, or files
under ``videos/`` with ``--no-embed-videos``) and ``errors``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer
from neurips26.corpora import RESOURCES
from neurips26.corpora.video import builder, fields, ingest
from neurips26.corpora.video.records import BuildError, BuildReport, FileReport, VideoCheck

from neurips26 import __version__, hubfolder
from neurips26.hubfolder import column

from . import generate, taxonomy
from .card import META, render_card

BUILDER_VERSION = "1.0.0"
GENERATOR_VERSION = "1"  # bump when the generator's output changes, so the cached default is remade
DEFAULT_SPLIT = "test"

ID = ("qid", "id", "question_id", "uid")
VIDEOS = ("video_ids", "videos", "video_list", "video_id")
EVIDENCE = ("evidence", "evidence_spans", "spans", "grounding")
KNOWN = set(ID + VIDEOS + EVIDENCE + ("level", "task", "subtask", "question", "options", "choices", "answer", "split",
                                      "source"))

STR, INT, FLOAT = pa.string(), pa.int64(), pa.float64()
QUESTIONS = pa.schema([
    column("qid", STR, "Question id"),
    column("video_ids", pa.list_(STR), "The videos the question spans, in the order it numbers them (Video 1, ...)"),
    column("n_videos", INT, "Number of videos"),
    column("level", STR, "Comparative Analysis, Tracking and Retrieval or Integrated Reasoning"),
    column("task", STR, "Task within the level"),
    column("subtask", STR, "Subtask within the task"),
    column("question", STR, "Question"),
    column("options", pa.list_(STR), "Answer options, without letter prefixes"),
    column("answer", STR, "Letter of the correct option"),
    column("answer_index", INT, "0-based index of the correct option"),
    column("evidence_video_ids", pa.list_(STR), "Evidence spans that support the answer: their videos"),
    column("evidence_start", pa.list_(FLOAT), "Evidence spans: start in seconds (same order)"),
    column("evidence_end", pa.list_(FLOAT), "Evidence spans: end in seconds (same order)"),
    column("source", STR, "Where the question comes from"),
    column("split", STR, "Split (the release has test only)"),
    column("extra", STR, "Fields of the release item this schema does not know, as a JSON object"),
    column("source_file", STR, "Annotation file, relative to the raw folder"),
])


def default_raw(seed: int = 0, root: Path | None = None) -> Path:
    """The generator's default release, made once under ``root`` (default: the cache, ``NEURIPS26_CACHE``)."""
    return ingest.generated_release(f"clovr-v{GENERATOR_VERSION}", generate.generate, seed, root)


def _evidence(value: Any, video_ids: list[str]) -> dict[str, list]:
    """The evidence columns: parallel lists of video ids, starts and ends."""
    if value is None:
        value = []
    if not isinstance(value, list):
        raise fields.ItemError("evidence: expected a list of spans")
    out: list[tuple[str, float, float]] = []
    for span in value:
        if isinstance(span, dict):
            vid = span.get("video_id", span.get("video"))
            start, end = fields.span(span)
        elif isinstance(span, list | tuple) and len(span) == 3:
            vid, (start, end) = span[0], fields.span(list(span[1:]))
        else:
            raise fields.ItemError(f"evidence: {str(span)[:40]} is not (video_id, start, end)")
        if str(vid) not in video_ids:
            raise fields.ItemError(f"evidence: video {vid!r} is not one of the question's videos")
        out.append((str(vid), start, end))
    return {"evidence_video_ids": [o[0] for o in out], "evidence_start": [o[1] for o in out],
            "evidence_end": [o[2] for o in out]}


def normalize(item: Any) -> dict[str, Any]:
    """One release item -> one row of the questions config (without id, split and video checks)."""
    if not isinstance(item, dict):
        raise fields.ItemError(f"item is a {type(item).__name__}, not an object")
    _, videos = ingest.first(item, VIDEOS)
    if isinstance(videos, str):
        videos = [videos]
    if not isinstance(videos, list) or not videos or not all(isinstance(v, str) and v.strip() for v in videos):
        raise fields.ItemError("video_ids: expected a non-empty list of video ids")
    videos = [Path(v.strip()).stem if Path(v.strip()).suffix.lower() in ingest.VIDEO_EXTENSIONS else v.strip()
              for v in videos]
    if len(set(videos)) != len(videos):
        raise fields.ItemError("video_ids: a video is listed twice")
    try:
        level = taxonomy.level(item.get("level"))
    except ValueError as exc:
        raise fields.ItemError(str(exc)) from None
    task, subtask, question = (item.get(k) for k in ("task", "subtask", "question"))
    if not isinstance(task, str) or not task.strip():
        raise fields.ItemError("missing task")
    if not isinstance(question, str) or not question.strip():
        raise fields.ItemError("missing question")
    _, opts = ingest.first(item, ("options", "choices"))
    if opts is None:
        raise fields.ItemError("missing options")
    options = fields.options(opts)
    index = fields.choice(item.get("answer"), options)
    _, evidence = ingest.first(item, EVIDENCE)
    extra = {k: v for k, v in item.items() if k not in KNOWN}
    return {
        "video_ids": videos, "n_videos": len(videos), "level": level, "task": task.strip(),
        "subtask": str(subtask).strip() if subtask is not None else None, "question": question.strip(),
        "options": options, "answer": fields.LETTERS[index], "answer_index": index,
        **_evidence(evidence, videos), "source": None if item.get("source") is None else str(item["source"]),
        "extra": json.dumps(extra, sort_keys=True, ensure_ascii=False) if extra else None,
    }


def _items(path: Path) -> list[Any]:
    """Items of one annotation file; ValueError names what is wrong with the file."""
    if path.suffix.lower() == ".jsonl":
        items = []
        for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    items.append(fields.ItemError(f"line {n}: invalid JSON: {exc.msg}"))
        return items
    data = ingest.load_json(path)
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError('expected {"items": [...]} or a list of items')
    return items


def read_annotations(raw: Path, files: list[FileReport], errors: list[dict]) -> list[dict[str, Any]]:
    folder = raw / "annotations"
    paths = ingest.list_files(folder, raw) if folder.is_dir() else []
    single = raw / "annotations.json"
    if single.is_file():
        paths.insert(0, single)
    if not paths:
        raise BuildError(f"{raw}: no annotations (expected annotations/<split>.json or annotations.json)")
    rows: list[dict[str, Any]] = []
    for path in paths:
        rel = path.relative_to(raw).as_posix()
        report = FileReport(rel, hubfolder.sha256_file(path), "rejected", "annotations")
        files.append(report)
        if path.suffix.lower() not in (".json", ".jsonl"):
            report.status, report.kind, report.reason = "ignored", "other", "not a .json/.jsonl annotation file"
            continue
        split = None if path == single else path.stem
        if path != single and (path.parent != folder or not builder.SPLIT_NAME.match(path.stem)):
            report.reason = "annotation files go in annotations/<split>.json"
        else:
            try:
                items = _items(path)
            except ValueError as exc:
                report.reason = str(exc)
        if report.reason:
            errors.append({"source_file": rel, "item": None, "level": "file", "reason": report.reason})
            continue
        report.status, report.items = "parsed", len(items)
        rows += builder.read_items(items, rel, split, DEFAULT_SPLIT, ID, "qid", normalize,
                                   lambda row, k, stem=path.stem: f"{stem}_{k}", errors)
    return rows


def _reject(row: dict[str, Any], checks: dict[str, VideoCheck]) -> str | None:
    """Why a row is rejected beyond its id: a video unusable, or evidence after its video's end."""
    bad = [f"{v} {checks[v].status}" for v in row["video_ids"] if checks[v].status != "ok"]
    late = [(v, end) for v, end in zip(row["evidence_video_ids"], row["evidence_end"], strict=True)
            if checks[v].status == "ok" and builder.after_end(end, checks[v].info)]
    return (f"video(s) {', '.join(bad)}" if bad
            else f"evidence in {late[0][0]} ends at {late[0][1]:g} s, after the video" if late
            else None)


RELEASE = builder.Release(
    read=read_annotations, items="questions", schema=QUESTIONS,
    description="One row per question, with its videos, taxonomy labels, options, answer and evidence spans.",
    id_key="qid", video_ids=lambda r: r["video_ids"], reject=_reject, card=render_card, meta=META,
    builder={"name": "neurips26.corpora.clovr", "version": BUILDER_VERSION, "package_version": __version__},
    unit="questions",
)


@RESOURCES.register("clovr")
def build(raw: Path | None = None, out: Path = Path("clovr"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, *,
          embed_videos: Annotated[bool, typer.Option(
              "--embed-videos/--no-embed-videos",
              help="Store the videos' bytes in the videos config, so a row decodes from any working folder and "
                   "after a push; --no-embed-videos keeps them as files under videos/ (rows then decode from "
                   "inside the folder).")] = True) -> BuildReport:
    """Build the CLoVR-Bench folder at ``out`` from ``raw`` (default: the generator's release)."""
    raw = Path(raw).resolve() if raw else default_raw()
    return builder.build_release(RELEASE, raw, out, workers, progress, embed_videos)
