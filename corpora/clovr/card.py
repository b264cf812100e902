"""CLoVR-Bench dataset card and metadata: the template lives in ``cards/clovr.md``."""

from __future__ import annotations

from collections import Counter
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Any

from .taxonomy import LEVELS

if TYPE_CHECKING:
    from neurips26.corpora.video.records import BuildReport

    from neurips26.hubfolder import ConfigSpec

META = {
    "name": "clovr",
    "pretty_name": "CLoVR-Bench: Cross-Long-Video Reasoning",
    "description": "Multiple-choice questions spanning several long videos, in a three-level taxonomy "
                   "(comparative analysis, tracking and retrieval, integrated reasoning) with evidence spans.",
    "license": "cc-by-nc-4.0",
    "license_url": "https://creativecommons.org/licenses/by-nc/4.0/",
    "url": "https://huggingface.co/datasets/neurips26/clovr",
    "version": "1.0.0",
    "task_categories": ["video-text-to-text", "visual-question-answering"],
    "tags": ["video", "long-video", "multi-video", "reasoning", "benchmark"],
    "citation": "CLoVR-Bench: Cross-Long-Video Reasoning. NeurIPS 2026 Datasets and Benchmarks.",
    "rai": {
        "data_collection": "Long videos from public sources grouped into sets; questions and evidence spans "
                           "written and verified by annotators. The embedded default is rendered by a procedural "
                           "generator.",
        "data_collection_type": ["Manual Human Curation", "Software Collection"],
        "data_preprocessing_protocol": ["Level names normalised; option and answer normalisation; evidence "
                                        "spans checked against their videos; video hash and decode checks."],
        "data_biases": ["Video sources and question templates favour some domains and entity types."],
        "data_limitations": ["2,000 questions: per-subtask accuracies rest on few questions and have wide "
                             "confidence intervals."],
        "data_use_cases": ["Evaluating video-language models on reasoning across several long videos."],
        "data_social_impact": "Measures multi-video understanding; re-identification tasks could be misused "
                              "for tracking people, which the license and intended use exclude.",
        "personal_sensitive_information": ["People may appear in the source videos; no identities are "
                                           "annotated."],
        "data_release_maintenance_plan": "Rebuilt from the release with `neurips26 build clovr`; each build "
                                         "records input and shard digests in manifest.json.",
    },
}


def render_card(report: BuildReport, rows: list[dict[str, Any]], configs: list[ConfigSpec],
                repo: str = "clovr") -> str:
    """The card's prose with this build's counts filled in."""
    template = Template(resources.files("neurips26.cards").joinpath("clovr.md").read_text(encoding="utf-8"))
    questions = next(c for c in configs if c.name == "questions")
    taxonomy = Counter((r["level"], r["task"], r["subtask"] or "") for r in rows)
    order = {name: k for k, name in enumerate(LEVELS)}
    generated = rows and all(r["source"] == "neurips26-generator" for r in rows)
    return template.substitute(
        repo=repo, license=META["license"], n_items=f"{report.items_built:,}",
        by_split=", ".join(f"{k} {v:,}" for k, v in report.by_split.items()) or "none",
        n_videos=report.videos_ok, video_seconds=f"{report.video_seconds:,.0f}",
        videos_per_question=f"{sum(r['n_videos'] for r in rows) / max(len(rows), 1):.1f}",
        with_evidence=f"{sum(bool(r['evidence_video_ids']) for r in rows):,}",
        items_in=report.items_in, items_rejected=report.items_rejected,
        videos_referenced=report.videos_referenced, videos_ok=report.videos_ok,
        videos_missing=report.videos_missing, videos_corrupt=report.videos_corrupt,
        files_in=report.files_in, files_parsed=report.files_parsed, files_rejected=report.files_rejected,
        files_ignored=report.files_ignored,
        origin=("**This build is the procedural generator's synthetic release**, not the real CLoVR-Bench data."
                if generated else ""),
        config_table="\n".join(f"| `{c.name}` | {c.rows():,} | {c.description} |" for c in configs),
        fields="\n".join(f"| `{f.name}` | {f.type} | {(f.metadata or {}).get(b'description', b'').decode()} |"
                         for f in questions.schema),
        taxonomy_table="\n".join(f"| {lv} | {task} | {sub} | {n} |" for (lv, task, sub), n in
                                 sorted(taxonomy.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2]))),
    )
