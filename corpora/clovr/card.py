"""CLoVR-Bench dataset card and metadata: the template lives in ``cards/clovr.md``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from neurips26.corpora.video.builder import card_text

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
    taxonomy = Counter((r["level"], r["task"], r["subtask"] or "") for r in rows)
    order = {name: k for k, name in enumerate(LEVELS)}
    return card_text(
        META, report, rows, configs, "questions", "CLoVR-Bench", repo,
        videos_per_question=f"{sum(r['n_videos'] for r in rows) / max(len(rows), 1):.1f}",
        with_evidence=f"{sum(bool(r['evidence_video_ids']) for r in rows):,}",
        taxonomy_table="\n".join(f"| {lv} | {task} | {sub} | {n} |" for (lv, task, sub), n in
                                  sorted(taxonomy.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2]))))
