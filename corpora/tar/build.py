"""Build TAR from a release (or the generator's output) into a Hub-ready dataset folder.

Input contract (``--raw DIR``)::

    DIR/annotations/<split>/<task_type>.json   {"items": [{"video_id": ..., ...}, ...]}  (or a bare list)
    DIR/annotations/<task_type>.json           flat layout: each item's "split" field, else train
    DIR/videos/<video_id>.mp4                  any depth, any of .mp4 .mkv .webm .avi .mov .m4v
    DIR/SHA256SUMS                             optional: expected hashes of the videos

``<task_type>`` is one of :data:`~.tasktypes.TASK_TYPES`. Items are read with
the field names releases use (``id``/``qid``, ``question``/``query``,
``options``/``choices``, ``answer``/``gt``, ``reasoning``/``cot``/``rationale``,
``timestamps`` or ``start``/``end``, ``source``...); fields we do not know are
kept, as JSON, in ``extra``. A malformed item (missing video id or question,
bad options, an answer that is not an option, a bad or out-of-video span, a
duplicate id) or one whose video is missing or corrupt is rejected with its
reason; a file that is not JSON, has no item list or names an unknown task
type is rejected whole. Everything rejected is in the ``errors`` config, and
``items in = built + rejected``, ``files in = parsed + rejected + ignored``,
``videos referenced = ok + missing + corrupt``.

Without ``--raw`` the build uses the generator's default release
(:func:`default_raw`), made once in the cache.

Configs: ``annotations`` (train/test), ``videos`` (per split; the videos' bytes
embedded by default, or files under ``videos/`` with ``--no-embed-videos``) and ``errors``.
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

from . import generate
from .card import META, render_card
from .tasktypes import TASK_TYPES

BUILDER_VERSION = "1.0.0"
GENERATOR_VERSION = "1"  # bump when the generator's output changes, so the cached default is remade

ID = ("id", "qid", "question_id", "qa_id", "uid")
VIDEO = ("video_id", "video", "video_name", "vid")
QUESTION = ("question", "query", "prompt", "instruction")
OPTIONS = ("options", "choices", "candidates")
ANSWER = ("answer", "gt_answer", "ground_truth", "gt", "label", "response")
REASONING = ("reasoning", "reasoning_trace", "cot", "chain_of_thought", "rationale", "thinking")
SPAN = ("timestamps", "timestamp", "time_span", "segment", "span")
START, END = ("start", "start_time", "start_sec"), ("end", "end_time", "end_sec")
SOURCE = ("source", "source_dataset", "dataset", "origin")
KNOWN = set(ID + VIDEO + QUESTION + OPTIONS + ANSWER + REASONING + SPAN + START + END + SOURCE + ("split",
                                                                                                   "task_type"))

STR, INT, FLOAT = pa.string(), pa.int64(), pa.float64()
ANNOTATIONS = pa.schema([
    column("id", STR, "Annotation id (the release's, else '<video_id>_<task_type>_<k>')"),
    column("video_id", STR, "Video the question is about (see the videos config)"),
    column("task_type", STR, "One of the ten TAR task types"),
    column("group", STR, "Question Answering, Temporal Reasoning or Scene Understanding"),
    column("question", STR, "Question or instruction"),
    column("options", pa.list_(STR), "Answer options, without letter prefixes (choice tasks)"),
    column("answer", STR, "Option letter (choice tasks), reference text, or 'start-end' (localization)"),
    column("answer_index", INT, "0-based index of the correct option (choice tasks)"),
    column("start", FLOAT, "Start of the answer span in seconds (temporal tasks)"),
    column("end", FLOAT, "End of the answer span in seconds (temporal tasks)"),
    column("reasoning", STR, "Chain-of-thought reasoning trace"),
    column("source", STR, "Dataset the video comes from"),
    column("split", STR, "train or test"),
    column("extra", STR, "Fields of the release item this schema does not know, as a JSON object"),
    column("source_file", STR, "Annotation file, relative to the raw folder"),
])


def default_raw(seed: int = 0, root: Path | None = None) -> Path:
    """The generator's default release, made once under ``root`` (default: the cache, ``NEURIPS26_CACHE``)."""
    return ingest.generated_release(f"tar-v{GENERATOR_VERSION}", generate.generate, seed, root)


def normalize(item: Any, task: str) -> dict[str, Any]:
    """One release item -> one row of the annotations config (without id and split checks)."""
    if not isinstance(item, dict):
        raise fields.ItemError(f"item is a {type(item).__name__}, not an object")
    spec = TASK_TYPES[task]
    _, video = ingest.first(item, VIDEO)
    if not isinstance(video, str | int) or not str(video).strip():
        raise fields.ItemError("missing video_id")
    video = str(video).strip()
    if Path(video).suffix.lower() in ingest.VIDEO_EXTENSIONS:
        video = Path(video).stem
    _, question = ingest.first(item, QUESTION)
    if question is None or not str(question).strip():
        if spec.prompt is None:
            raise fields.ItemError("missing question")
        question = spec.prompt
    _, answer = ingest.first(item, ANSWER)
    row: dict[str, Any] = {"video_id": video, "task_type": task, "group": spec.group, "question": str(question).strip(),
                           "options": [], "answer_index": None, "start": None, "end": None}
    _, opts = ingest.first(item, OPTIONS)
    if spec.answer == "choice":
        if opts is None:
            raise fields.ItemError("choice task without options")
        row["options"] = fields.options(opts)
        row["answer_index"] = fields.choice(answer, row["options"])
        row["answer"] = fields.LETTERS[row["answer_index"]]
    elif opts is not None:
        row["options"] = fields.options(opts)
    span = _span(item)
    if span is None and spec.answer == "span" and answer is not None:
        span = fields.span(answer)
    if span:
        row["start"], row["end"] = span
    if spec.answer == "span" and span is None:
        raise fields.ItemError("temporal localization item without a time span")
    if spec.answer != "choice":
        if spec.answer == "span" and answer is None:
            answer = f"{span[0]:g}-{span[1]:g}"
        if not isinstance(answer, str | int | float) or not str(answer).strip():
            raise fields.ItemError("missing answer")
        row["answer"] = str(answer).strip()
    _, reasoning = ingest.first(item, REASONING)
    _, source = ingest.first(item, SOURCE)
    row["reasoning"] = None if reasoning is None else str(reasoning)
    row["source"] = None if source is None else str(source)
    extra = {k: v for k, v in item.items() if k not in KNOWN}
    row["extra"] = json.dumps(extra, sort_keys=True, ensure_ascii=False) if extra else None
    return row


def _span(item: dict[str, Any]) -> tuple[float, float] | None:
    key, value = ingest.first(item, SPAN)
    if key:
        return fields.span(value)
    _, start = ingest.first(item, START)
    _, end = ingest.first(item, END)
    if start is None and end is None:
        return None
    return fields.span([start, end])


def read_annotations(raw: Path, files: list[FileReport], errors: list[dict]) -> list[dict[str, Any]]:
    """Rows of every annotation file (ids, splits and spans checked later); files and errors filled in."""
    folder = raw / "annotations"
    if not folder.is_dir():
        raise BuildError(f"{raw}: no annotations/ folder (expected annotations/<split>/<task_type>.json)")
    rows: list[dict[str, Any]] = []
    for path in ingest.list_files(folder, raw):
        rel = path.relative_to(raw).as_posix()
        parts = path.relative_to(folder).parts
        report = FileReport(rel, hubfolder.sha256_file(path), "rejected", "annotations")
        files.append(report)
        task = path.stem
        if path.suffix.lower() != ".json":
            report.status, report.kind, report.reason = "ignored", "other", "not a .json annotation file"
            continue
        if len(parts) > 2 or (len(parts) == 2 and not builder.SPLIT_NAME.match(parts[0])):
            report.reason = "annotation files go in annotations/<split>/<task_type>.json or annotations/"
        elif task not in TASK_TYPES:
            report.reason = f"unknown task type {task!r} (known: {', '.join(TASK_TYPES)})"
        else:
            try:
                data = ingest.load_json(path)
            except ValueError as exc:
                report.reason = str(exc)
            else:
                items = data.get("items") if isinstance(data, dict) else data
                if not isinstance(items, list):
                    report.reason = 'expected {"items": [...]} or a list of items'
        if report.reason:
            errors.append({"source_file": rel, "item": None, "level": "file", "reason": report.reason})
            continue
        report.status, report.items = "parsed", len(items)
        rows += builder.read_items(items, rel, parts[0] if len(parts) == 2 else None, "train", ID, "id",
                                   lambda item, task=task: normalize(item, task),
                                   lambda row, k, task=task: f"{row['video_id']}_{task}_{k}", errors)
    return rows


def _reject(row: dict[str, Any], checks: dict[str, VideoCheck]) -> str | None:
    """Why a row is rejected beyond its id: its video unusable, or its span after the video's end."""
    check = checks[row["video_id"]]
    if check.status != "ok":
        return f"video {row['video_id']!r} {check.status}: {check.reason}"
    if row["end"] is not None and builder.after_end(row["end"], check.info):
        return f"span ends at {row['end']:g} s, after the video's {check.info.duration:g} s"
    return None


ORDER = {name: k for k, name in enumerate(TASK_TYPES)}
RELEASE = builder.Release(
    read=read_annotations,
    items="annotations", schema=ANNOTATIONS,
    description="One row per annotation (question, answer, reasoning trace), splits train and test.",
    id_key="id", video_ids=lambda r: [r["video_id"]], reject=_reject, card=render_card, meta=META,
    builder={"name": "neurips26.corpora.tar", "version": BUILDER_VERSION, "package_version": __version__},
    order=lambda r: (ORDER[r["task_type"]], r["source_file"]),  # stable: file order within a task type
)


@RESOURCES.register("tar")
def build(raw: Path | None = None, out: Path = Path("tar"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, *,
          embed_videos: Annotated[bool, typer.Option(
              "--embed-videos/--no-embed-videos",
              help="Store the videos' bytes in the videos config, so a row decodes from any working folder and "
                   "after a push; --no-embed-videos keeps them as files under videos/ (rows then decode from "
                   "inside the folder).")] = True) -> BuildReport:
    """Build the TAR folder at ``out`` from ``raw`` (default: the generator's release, see :func:`default_raw`)."""
    raw = Path(raw).resolve() if raw else default_raw()
    return builder.build_release(RELEASE, raw, out, workers, progress, embed_videos)
