"""Score every section of a built LOCUS folder and write the ``scores`` config (and refresh ``locus_v1``).

``scores`` (one row per section, in ``sections`` order, keyed by ``section_id``): ``function``,
``is_substantive``, ``topic`` (null when not substantive); ``opacity``, ``paternalism``,
``enforcement_discretion``, ``problem_salience`` as z-scores over the scored corpus (mean 0, standard
deviation 1; all 0 when a score does not vary); ``max_fine_usd``, ``fine_per_day``, ``jail_mentioned``,
``max_jail_days`` (always by rule, ``fines.py``); ``backend``.

Backends:

- ``default``: MiniLM embeddings + the shipped heads (function, substantive, topic, paternalism), the
  interpretable opacity measure, counted cues for discretion and salience; CPU, nothing downloaded;
- ``modernbert``: the released LocalLaws classifiers (``modernbert.py``), all of ``AXES`` from the Hub or the
  ones given as local folders; fields the given models do not produce come from the default backend, and
  ``backend`` then reads ``modernbert+default``.

The ``locus_v1`` config is then rewritten with these labels (``corpora/locus/v1.py``); for a folder ingested
from LOCUS-v1 the released vote and annotator columns are cleared there, since they describe the released
labels, which stay in ``v1_source``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
from neurips26.corpora.locus import v1

from neurips26 import hubfolder
from neurips26.errors import UserError
from neurips26.hubfolder import column

from . import fines, lexical, modernbert, opacity
from .heads import Heads, embed
from .modernbert import CONTINUOUS

BACKENDS = ("default", "modernbert")
CHUNK = 256  # sections embedded per step (progress granularity)



SCORES = pa.schema([
    column("section_id", pa.string(), "Section scored (key into sections)"),
    column("function", pa.string(), "Context, Rules, Process or Enforcement"),
    column("is_substantive", pa.bool_(), "Whether the section states an operative rule, procedure or sanction"),
    column("topic", pa.string(), "Buildings, Business, Nuisance, Zoning or Other; null when not substantive"),
    column("opacity", pa.float64(), "How hard the section is to understand (z-score over the corpus)"),
    column("paternalism", pa.float64(), "Restriction of self-regarding conduct (z-score over the corpus)"),
    column("enforcement_discretion", pa.float64(), "Latitude left to enforcing officials (z-score over the corpus)"),
    column("problem_salience", pa.float64(), "How prominently it names the problem it addresses (z-score)"),
    column("max_fine_usd", pa.float64(), "Largest fine the section states, in dollars; null when none"),
    column("fine_per_day", pa.bool_(), "Each day of a continuing violation is a separate offense"),
    column("jail_mentioned", pa.bool_(), "Jail or imprisonment is mentioned"),
    column("max_jail_days", pa.int64(), "Longest jail term stated, in days; null when none"),
    column("backend", pa.string(), "Scorer that produced the labels: default, modernbert or modernbert+default"),
])
V1_CLEARED = ("function_votes", "topic_votes", *[f"annotator{k}_{f}" for f in ("function", "topic", "confidence")
                                                 for k in (1, 2, 3)])


def read_sections(folder: Path) -> pa.Table:
    """section_id, heading, text of a built LOCUS folder's ``sections`` config."""
    table = hubfolder.read_table(folder, "sections", ["section_id", "heading", "text"])
    if table is None:
        raise FileNotFoundError(f"{folder}: no sections config (data/sections/train-*.parquet); "
                                "run: neurips26 build locus")
    if len(set(table["section_id"].to_pylist())) != table.num_rows:
        raise ValueError(f"{folder}: sections has repeated section_id values; rebuild the folder")
    return table


def zscore(values: list[float]) -> list[float]:
    x = np.asarray(values, dtype=float)
    sd = x.std()
    return (np.zeros_like(x) if not len(x) or sd == 0 else (x - x.mean()) / sd).tolist()


def default_labels(headings: list[str], texts: list[str],
                   progress: Callable[[int], None] | None = None) -> dict[str, list]:
    """Raw (not yet z-scored) labels of the default backend."""
    heads = Heads.load()
    chunks = []
    for start in range(0, len(texts), CHUNK):
        chunks.append(embed(headings[start:start + CHUNK], texts[start:start + CHUNK]))
        if progress:
            progress(len(chunks[-1]))
    x = np.concatenate(chunks) if chunks else np.zeros((0, 384), dtype=np.float32)
    out = heads.predict(x)
    out["opacity"] = [opacity.measure(t).opacity for t in texts]
    out["enforcement_discretion"] = [lexical.enforcement_discretion(t) for t in texts]
    out["problem_salience"] = [lexical.problem_salience(t) for t in texts]
    return out


def modernbert_labels(headings: list[str], texts: list[str], models: dict[str, str] | None,
                      batch_size: int, progress: Callable[[float], None] | None = None) -> tuple[dict[str, list], bool]:
    """Labels from the released classifiers; (labels, whether the default backend filled any field)."""
    sources = dict(models) if models else dict(modernbert.AXES)
    out: dict[str, list] = {}
    step = (lambda n: progress(n / len(sources))) if progress else None  # one pass over the corpus per axis
    for axis, source in sources.items():
        out |= modernbert.predict(modernbert.load(axis, source), headings, texts, batch_size, progress=step)
    if "function" in out:  # a class that names only a function: substantive unless Context
        known = out.get("is_substantive") or [None] * len(texts)
        out["is_substantive"] = [s if s is not None else f != "Context" for s, f in zip(known, out["function"],
                                                                                        strict=True)]
    needed = ("function", "is_substantive", "topic", *CONTINUOUS)
    missing = [k for k in needed if k not in out]
    if missing:
        fallback = default_labels(headings, texts)
        out |= {k: fallback[k] for k in missing}
    if "topic" in out and "is_substantive" in out:
        out["topic"] = [t if s else None for t, s in zip(out["topic"], out["is_substantive"], strict=True)]
    return out, bool(missing)


def score_table(sections: pa.Table, backend: str = "default", models: dict[str, str] | None = None,
                batch_size: int = 16, progress: Callable[[int], None] | None = None) -> pa.Table:
    """The ``scores`` table of a sections table (section_id, heading, text)."""
    if backend not in BACKENDS:
        raise UserError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if models and backend != "modernbert":
        raise ValueError("--model applies to the modernbert backend only")
    headings = [h or "" for h in sections["heading"].to_pylist()]
    texts = [t or "" for t in sections["text"].to_pylist()]
    name = backend
    if backend == "default":
        labels = default_labels(headings, texts, progress)
    else:
        labels, filled = modernbert_labels(headings, texts, models, batch_size, progress)
        name = "modernbert+default" if filled else "modernbert"
    extracted = [fines.extract(t) for t in texts]
    columns = {
        "section_id": sections["section_id"].to_pylist(),
        "function": labels["function"], "is_substantive": labels["is_substantive"], "topic": labels["topic"],
        **{k: zscore(labels[k]) for k in CONTINUOUS},
        **{k: [getattr(e, k) for e in extracted] for k in ("max_fine_usd", "fine_per_day", "jail_mentioned",
                                                          "max_jail_days")},
        "backend": [name] * sections.num_rows,
    }
    return pa.table(columns, schema=SCORES)


def score_folder(folder: Path, backend: str = "default", models: dict[str, str] | None = None,
                 batch_size: int = 16, progress: Callable[[int, int], None] | None = None) -> pa.Table:
    """Score a built LOCUS folder in place: write ``scores`` and rewrite ``locus_v1``; return the scores."""
    folder = Path(folder)
    sections = read_sections(folder)
    done = 0

    def step(n: float) -> None:
        nonlocal done
        done += n
        if progress:
            progress(min(done, sections.num_rows), sections.num_rows)

    scores = score_table(sections, backend, models, batch_size, step)
    hubfolder.add_config(folder, hubfolder.ConfigSpec(
        "scores", SCORES, "LOCUS analysis layer: function, topic, four z-scored dimensions and fines per section."),
        scores, v1.folder_meta(folder))
    labels = scores.select(["section_id", "function", "is_substantive", "topic", *CONTINUOUS])
    cleared = {c: pa.nulls(scores.num_rows, v1.V1_SCHEMA.field(c).type) for c in V1_CLEARED}
    for name, nulls in cleared.items():
        labels = labels.append_column(name, nulls)
    v1.write_locus_v1(folder, labels)
    return scores
