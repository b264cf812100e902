"""Benchmarks: the questions a selector is compared on, read from a built TAR or CLoVR-Bench folder.

A benchmark is a function ``(folder=None, split=None) -> list[Question]`` registered in
:data:`BENCHMARKS`. Without ``folder`` it reads the built folder the video lm-eval tasks
read (:func:`neurips26.settings.data_root`: ``$NEURIPS26_DATA/<name>``, else ``./<name>`` or the
cache's ``data/<name>``); it must be built (``neurips26 build <name>``).

- ``tar``: every annotation of every split (``split`` picks one); the evidence of a
  question is its answer span (``start``/``end``), which only the temporal task types
  have; the others have no evidence and count for answer-level scores only.
- ``clovr``: the test questions, each over 2-8 videos, with evidence spans per video.

The question keeps its built row in ``row``, so answer-level evaluation can hand it to the
task's own prompt and scoring functions (:mod:`.evaluators`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurips26.corpora.video.records import MissingInputError
from neurips26.corpora.video.release import video_paths

from neurips26 import settings
from neurips26.errors import UserError

from .core import BENCHMARKS


@dataclass
class Question:
    """One question: its videos (ids, absolute paths), evidence spans and the built row it comes from."""

    benchmark: str
    id: str
    query: str
    kind: str  # TAR task type or CLoVR level
    video_ids: list[str]
    video_paths: list[str]
    evidence: list[tuple[int, float, float]] = field(default_factory=list)  # (position in video_ids, start, end) s
    answer: str = ""
    options: list[str] = field(default_factory=list)
    row: dict[str, Any] = field(default_factory=dict)


def built_folder(name: str, folder: Path | str | None) -> Path:
    """``folder``, else ``<data>/<name>``; it must be built (this never builds: the error names the command)."""
    folder = settings.data_root() / name if folder is None else Path(folder)
    if not (folder / settings.MANIFEST).is_file():
        raise MissingInputError(f"{folder}: not a built {name} folder (no manifest.json); "
                            f"build one with: neurips26 build {name} --out {folder}")
    return folder


def _rows(folder: Path, config: str, split: str | None) -> list[dict[str, Any]]:
    import datasets  # lazy: the Hugging Face loader is slow to import and only needed to read questions

    data = datasets.load_dataset(str(folder), config)
    if split is not None and split not in data:
        raise UserError(f"{folder}: config {config!r} has no split {split!r} (has {', '.join(data)})")
    paths = video_paths(folder)
    rows = [dict(row) for name in ([split] if split else list(data)) for row in data[name]]
    return [{**row, "_paths": paths} for row in rows]


@BENCHMARKS.register("tar")
def tar(folder: Path | str | None = None, split: str | None = None) -> list[Question]:
    """TAR questions (all splits unless ``split``); evidence = the answer span of temporal task types."""
    out = []
    for row in _rows(built_folder("tar", folder), "annotations", split):
        paths = row.pop("_paths")
        evidence = [(0, row["start"], row["end"])] if row["start"] is not None else []
        out.append(Question("tar", row["id"], row["question"], row["task_type"], [row["video_id"]],
                            [paths[row["video_id"]]], evidence, row["answer"], row["options"] or [], row))
    return out


@BENCHMARKS.register("clovr")
def clovr(folder: Path | str | None = None, split: str | None = None) -> list[Question]:
    """CLoVR-Bench questions, each over several videos, with their evidence spans."""
    out = []
    for row in _rows(built_folder("clovr", folder), "questions", split):
        paths = row.pop("_paths")
        ids = list(row["video_ids"])
        spans = zip(row["evidence_video_ids"], row["evidence_start"], row["evidence_end"], strict=True)
        evidence = [(ids.index(v), s, e) for v, s, e in spans]
        out.append(Question("clovr", row["qid"], row["question"], row["level"], ids, [paths[v] for v in ids],
                            evidence, row["answer"], row["options"] or [], row))
    return out


def load(name: str, folder: Path | str | None = None, split: str | None = None, limit: int | None = None
         ) -> list[Question]:
    """The questions of benchmark ``name`` (the first ``limit`` when given)."""
    questions = BENCHMARKS.get(name)(folder=folder, split=split)
    return questions[:limit] if limit else questions
