"""LOCUS dataset card and metadata: the template lives in ``cards/locus.md``."""

from __future__ import annotations

from importlib import resources
from string import Template
from typing import TYPE_CHECKING

from .records import V1_SCHEMA, BuildReport

if TYPE_CHECKING:
    from neurips26.hubfolder import ConfigSpec

META = {
    "name": "locus",
    "pretty_name": "LOCUS: Local Ordinance Corpus for the United States",
    "description": "U.S. municipal and county ordinance codes as one machine-readable corpus of sections, "
                   "with a county access layer listing every code that applies in each county.",
    "license": "cc-by-4.0",
    "license_url": "https://creativecommons.org/licenses/by/4.0/",
    "url": "https://huggingface.co/datasets/neurips26/locus",
    "version": "1.0.0",
    "task_categories": ["text-classification", "text-generation", "text-retrieval"],
    "tags": ["legal", "local-government", "ordinances", "municipal-codes"],
    "citation": "LOCUS: Local Ordinance Corpus for the United States. NeurIPS 2026 Datasets and Benchmarks.",
    "rai": {
        "data_collection": "Ordinance codes published by municipalities, counties and their code vendors "
                           "(Municode, American Legal, eCode360, city websites, PDFs), scraped as released.",
        "data_collection_type": ["Web Scraping"],
        "data_preprocessing_protocol": ["Format detection from content; section splitting; removal of front "
                                        "matter, tables of contents and page boilerplate; separation of "
                                        "history notes and cross-references; county FIPS resolution."],
        "data_biases": ["Coverage follows what vendors and cities publish online: larger and wealthier "
                        "places and some states are over-represented."],
        "data_limitations": ["Scraped codes lag behind amendments; heuristic parsing can mis-split headings "
                             "on unseen layouts. Not the authoritative text of any code."],
        "data_use_cases": ["Research on local regulation, legal NLP, retrieval and classification "
                           "benchmarks."],
        "data_social_impact": "Makes local law searchable and comparable across places; errors in parsing "
                              "could mislead if used as legal advice.",
        "personal_sensitive_information": ["Public officials' names appear in code front matter and "
                                           "history notes; no private personal data is collected."],
        "data_release_maintenance_plan": "Rebuilt from raw scrapes with `neurips26 build locus`; each "
                                         "release records input and shard digests in manifest.json.",
    },
}


def render_card(report: BuildReport, jurisdictions: list[dict], configs: list[ConfigSpec],
                domain_counts: dict[str, int], repo: str = "locus", coverage: list[dict] | None = None,
                origin: str = "Built from raw ordinance codes.", license: str = META["license"]) -> str:
    """The card's prose with this build's counts filled in."""
    template = Template(resources.files("neurips26.cards").joinpath("locus.md").read_text(encoding="utf-8"))
    sections = next(c for c in configs if c.name == "sections")
    counties = {f for j in jurisdictions for f in j["county_fips"]}
    return template.substitute(
        repo=repo,
        license=license,
        n_sections=f"{report.sections:,}",
        n_characters=f"{report.characters:,}",
        n_jurisdictions=len(jurisdictions),
        n_states=len({j["state"] for j in jurisdictions}),
        n_counties=len(counties),
        files_in=report.files_in, files_parsed=report.files_parsed,
        files_duplicate=report.files_duplicate, files_rejected=report.files_rejected,
        sections_parsed=f"{report.sections_parsed:,}", sections_dropped=f"{report.sections_dropped:,}",
        config_table="\n".join(f"| `{c.name}` | {c.rows():,} | {c.description} |" for c in configs),
        section_fields="\n".join(
            f"| `{f.name}` | {f.type} | {(f.metadata or {}).get(b'description', b'').decode()} |"
            for f in sections.schema),
        jurisdiction_table="\n".join(
            f"| {j['name']} (`{j['jurisdiction_id']}`) | {j['kind']} | {j['state']} | "
            f"{'; '.join(j['counties'])} | {j['n_sections']:,} | {', '.join(j['formats'])} |"
            for j in jurisdictions),
        domain_counts=", ".join(f"{k} {v}" for k, v in domain_counts.items()) or "none (too few jurisdictions)",
        text_line=report.text_line(),
        by_format=", ".join(f"{k} {v}" for k, v in sorted(report.by_format.items())) or "none",
        origin=origin,
        coverage_table="\n".join(
            f"| {c['state']} | {c['counties_covered']} | {c['counties_total']} | "
            f"{'' if c['share'] is None else format(c['share'], '.1%')} |" for c in coverage or []),
        v1_fields="\n".join(
            f"| `{f.name}` | {f.type} | {(f.metadata or {}).get(b'description', b'').decode()} |"
            for f in V1_SCHEMA),
    )
