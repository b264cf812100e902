"""TAR dataset card and metadata: the template lives in ``cards/tar.md``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from neurips26.corpora.video.builder import card_text

from .tasktypes import TASK_TYPES

if TYPE_CHECKING:
    from neurips26.corpora.video.records import BuildReport

    from neurips26.hubfolder import ConfigSpec

META = {
    "name": "tar",
    "pretty_name": "TAR: Traffic Anomaly Reasoning",
    "description": "Video question answering with chain-of-thought reasoning traces on CCTV traffic footage: ten "
                   "task types in three groups (question answering, temporal reasoning, scene understanding).",
    "license": "cc-by-nc-4.0",
    "license_url": "https://creativecommons.org/licenses/by-nc/4.0/",
    "url": "https://huggingface.co/datasets/neurips26/tar",
    "version": "1.0.0",
    "task_categories": ["video-text-to-text", "visual-question-answering"],
    "tags": ["video", "traffic", "anomaly-detection", "reasoning", "cctv"],
    "citation": "TAR: Traffic Anomaly Reasoning. NeurIPS 2026 Datasets and Benchmarks.",
    "rai": {
        "data_collection": "CCTV traffic videos from public anomaly datasets, annotated per task type; a test set "
                           "reviewed by people. The embedded default is rendered by a procedural generator.",
        "data_collection_type": ["Secondary Data Analysis", "Manual Human Curation", "Software Collection"],
        "data_preprocessing_protocol": ["Mapping of every task type's items into one schema; option and answer "
                                        "normalisation; span checks against video durations; video hash and "
                                        "decode checks."],
        "data_biases": ["Footage over-represents the road layouts, regions and weather of the source datasets; "
                        "anomaly types are far more frequent than on real roads."],
        "data_limitations": ["Training annotations and reasoning traces were produced with model help and are "
                             "not all human-verified."],
        "data_use_cases": ["Evaluating and training video-language models on traffic anomaly reasoning."],
        "data_social_impact": "Can improve road-safety analytics; the same techniques could serve intrusive "
                              "surveillance, which the license and intended use exclude.",
        "personal_sensitive_information": ["Road users appear in public-space footage at low resolution; no "
                                           "names or identities are annotated."],
        "data_release_maintenance_plan": "Rebuilt from the release with `neurips26 build tar`; each build "
                                         "records input and shard digests in manifest.json.",
    },
}


def render_card(report: BuildReport, rows: list[dict[str, Any]], configs: list[ConfigSpec],
                repo: str = "tar") -> str:
    """The card's prose with this build's counts filled in."""
    per_task = Counter(r["task_type"] for r in rows)
    return card_text(META, report, rows, configs, "annotations", "TAR", repo, task_table="\n".join(
        f"| `{t.name}` | {t.group} | {t.answer} | {t.metric} | {per_task.get(t.name, 0):,} |"
        for t in TASK_TYPES.values()))
