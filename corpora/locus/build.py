"""Build LOCUS into a Hub-ready dataset folder: the orchestration above the package's parts.

Sources: a raw folder (``--raw DIR``, the input contract in ``raw.py``; default: the embedded sample), or a
LOCUS-v1 download (``--from-locus-v1 DIR``, ``v1_ingest.py``), which also writes ``v1_source``.

Configs written: ``sections`` (the corpus), ``jurisdictions``, ``counties`` (the county access layer),
``errors`` (every rejected file, row or record, with the reason), ``county_representatives`` and
``coverage`` (the paper's county layer, ``counties.py``), ``locus_v1`` (the corpus in the LOCUS-v1 schema,
``v1.py``) and the evaluation sets ``domain``, ``catchline``, ``function``, ``topic`` (+ ``*_gold`` with
``--gold DIR``; ``evalsets.py``), which the lm-eval tasks read. ``manifest.json`` says ``"demo": true`` when
the folder was built from the embedded sample.

Rows are streamed into the shards jurisdiction by jurisdiction, so memory is bounded by the largest single
code (an ingest holds the download it read), and the output does not depend on the number of workers. Arrow
work runs in threads beside the rest of the build where it can (Arrow releases the interpreter lock): an
ingest's ``sections``, ``v1_source`` and ``locus_v1`` shards, each in a thread of its own fed in output order;
from raw codes with workers, ``locus_v1`` beside the evaluation sets. The bytes are those of a serial build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import pyarrow as pa
import pyarrow.compute as pc
import typer
from neurips26.corpora import RESOURCES

from neurips26 import __version__, hubfolder

from . import counties, distributed, evalsets, goldset, v1, v1_ingest
from . import raw as rawfolder
from .card import META, render_card
from .formats.base import STRUCTURE_KINDS
from .records import (
    BUILDER_VERSION,
    COUNTIES,
    COVERAGE,
    CSV_NAME,
    ERRORS,
    JURISDICTIONS,
    REPRESENTATIVES,
    SAMPLE_DIR,
    SECTIONS,
    TEXT_COVERAGE,
    V1_SCHEMA,
    V1_SOURCE,
    BuildError,
    BuildReport,
    CodeResult,
    FileReport,
    Jurisdiction,
    natural_key,
)

__all__ = ["SAMPLE_DIR", "BuildError", "BuildReport", "build"]


@RESOURCES.register("locus")
def build(raw: Path | None = None, out: Path = Path("locus"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, *,
          from_locus_v1: Annotated[Path | None, typer.Option(
              "--from-locus-v1", help="Ingest LOCUS-v1 Parquet files from this folder instead of --raw.")] = None,
          population: Annotated[Path | None, typer.Option(
              help="CSV of jurisdiction_id or geoid + population for the representative county layer.")] = None,
          gold: Annotated[Path | None, typer.Option(
              help="LOCUS gold folder (dev.jsonl): also write the function_gold, topic_gold and substantive_gold "
                   "evaluation configs.")] = None,
          engine: Annotated[str, typer.Option(
              help="local (worker processes on this machine) or ray (Ray tasks on a local instance or the cluster "
                   "at --address); both write the same bytes.")] = "local",
          address: Annotated[str | None, typer.Option(
              help="Ray cluster to join with --engine ray (e.g. auto or ray://HEAD:10001); default: a local Ray "
                   "instance with --workers CPUs.")] = None) -> BuildReport:
    """Build the LOCUS folder at ``out`` from ``raw`` (default: the embedded sample) or a LOCUS-v1 download."""
    if raw is not None and from_locus_v1 is not None:
        raise BuildError("give --raw or --from-locus-v1, not both")
    if engine not in distributed.ENGINES:
        raise BuildError(f"--engine {engine!r}: use one of {', '.join(distributed.ENGINES)}")
    if address is not None and engine != "ray":
        raise BuildError("--address needs --engine ray")
    populations = counties.read_population(population) if population is not None else None
    gold_rows = goldset.read_gold(gold) if gold is not None else None
    errors: list[dict] = []
    inputs: dict[str, str] = {}
    v1_input = None
    if from_locus_v1 is not None:
        root = Path(from_locus_v1).resolve()
        v1_input = v1_ingest.read_v1(root)
        jurisdictions, all_files = v1_input.jurisdictions, list(v1_input.files)
        errors.extend(v1_input.errors)
        report = BuildReport()
        results = None
    else:
        root = (raw or SAMPLE_DIR).resolve()
        if not root.is_dir():
            raise BuildError(f"{root}: raw folder not found")
        jurisdictions = rawfolder.read_jurisdictions(root, errors)
        report = BuildReport(rows_rejected=len(errors))
        all_files = rawfolder.unowned_files(root, jurisdictions, errors)
        inputs[CSV_NAME] = hubfolder.sha256_file(root / CSV_NAME)
        jobs = [(root, j) for j in jurisdictions]
        results = distributed.run(jobs, workers, address) if engine == "ray" else rawfolder.run(jobs, workers)

    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    specs = {name: hubfolder.ConfigSpec(name, schema, desc) for name, schema, desc in [
        ("sections", SECTIONS, "One row per section of every code."),
        ("jurisdictions", JURISDICTIONS, "One row per jurisdiction."),
        ("counties", COUNTIES, "County access layer: every code that applies in each county."),
        ("errors", ERRORS, "Every rejected file, jurisdictions.csv row or record, with the reason."),
        ("text_coverage", TEXT_COVERAGE, "Every input file's text: characters in sections, in structure, lost."),
    ]}
    specs["sections"].default = True
    ingested = v1_input is not None
    with ThreadPoolExecutor(3 if ingested else 1) as pool:
        written: dict[str, Future[list[hubfolder.Shard]]] = {}  # config -> its shards, written in a thread
        if ingested:
            specs["v1_source"] = hubfolder.ConfigSpec(
                "v1_source", V1_SOURCE, "LOCUS-v1 identity and label columns of the ingested rows, by section_id.")
            written = v1_input.write_shards(out, pool, progress)  # sections, v1_source, locus_v1
            jurisdiction_rows = [_jurisdiction_row(j, v1_input.n_files[j.jurisdiction_id],
                                                   v1_input.sections.slice(start, n), report)
                                 for j, start, n in v1_input.spans()]
            sections, released = v1_input.sections, v1.released_labels(v1_input.tables[1])
        else:
            jurisdiction_rows = _write_sections(out, specs, jurisdictions, results, all_files, errors, report,
                                                progress)
            sections, released = [out / s.path for s in specs["sections"].shards["train"]], None
        _count_files(root, all_files, errors, inputs, report, ingested)
        if gold is not None:
            inputs[f"gold/{goldset.GOLD_FILE}"] = hubfolder.sha256_file(Path(gold) / goldset.GOLD_FILE)

        hubfolder.write_table(out, specs["jurisdictions"], jurisdiction_rows)
        access = counties.county_rows(jurisdictions, jurisdiction_rows)
        hubfolder.write_table(out, specs["counties"], access)
        errors.sort(key=lambda e: (e["level"] != "row", natural_key(e["source_file"]), e["reason"]))
        hubfolder.write_table(out, specs["errors"], errors)
        hubfolder.write_table(out, specs["text_coverage"], _text_coverage_rows(all_files, ingested))
        representatives = counties.representative_rows(access, jurisdiction_rows, populations)
        coverage = counties.coverage_rows(representatives, [j.state for j in jurisdictions])
        county_layer = {}  # listed after the evaluation sets; written now, as locus_v1 reads it
        for name, schema, rows, desc in [
            ("county_representatives", REPRESENTATIVES, representatives,
             "County layer as the LOCUS paper defines it: one representative code per county."),
            ("coverage", COVERAGE, coverage, "Counties with a representative code, per state."),
        ]:
            county_layer[name] = hubfolder.ConfigSpec(name, schema, desc)
            hubfolder.write_table(out, county_layer[name], rows)

        # The last passes over the sections: the evaluation sets and, from raw codes, locus_v1 (made from the
        # configs above; beside the evaluation sets when workers were given, else after them).
        if not ingested and workers > 1:
            written["locus_v1"] = pool.submit(v1.write_shards, out)
        built = [j["jurisdiction_id"] for j in jurisdiction_rows if j["n_sections"]]
        sets = _write_evalsets(out, specs, built, sections, released, gold_rows)
        del v1_input, results, sections, released  # the build's own references to the download's rows
        specs.update(county_layer, locus_v1=hubfolder.ConfigSpec("locus_v1", V1_SCHEMA, v1.DESCRIPTION))
        for name, shards in written.items():
            specs[name].shards["train"] = shards.result()
        if "locus_v1" not in written:
            specs["locus_v1"].shards["train"] = v1.write_shards(out)

    configs = list(specs.values())
    meta = {**META, **(v1.LICENSE if ingested else {})}  # LOCUS-v1 is CC-BY-NC-4.0
    demo = not ingested and (raw is None or Path(raw).resolve() == SAMPLE_DIR.resolve())  # the invented sample
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.locus", "version": BUILDER_VERSION,
                                            "package_version": __version__}, inputs, demo=demo)
    origin = (f"Ingested from a LOCUS-v1 download ({len(all_files)} file(s)), released under CC-BY-NC-4.0, "
              "which this folder keeps." if ingested
              else "Built from raw ordinance codes.")
    hubfolder.write_card(out, configs, meta, render_card(report, jurisdiction_rows, configs,
                                                         evalsets.domain_counts(sets), coverage=coverage,
                                                         origin=origin, license=meta["license"]))
    hubfolder.write_croissant(out, configs, meta)
    (out / "build_report.json").write_text(_report_json(report, all_files), encoding="utf-8")
    hubfolder.commit_build(out, final)
    return report


def _write_sections(out: Path, specs: dict, jurisdictions: list[Jurisdiction], results: Iterator[CodeResult],
                    all_files: list[FileReport], errors: list[dict], report: BuildReport,
                    progress: Callable[[int, int], None] | None) -> list[dict]:
    """Stream every jurisdiction's parsed sections into their shards; return the jurisdiction rows."""
    writer = hubfolder.SplitWriter(out, "sections", SECTIONS)
    jurisdiction_rows: list[dict] = []
    by_id = {j.jurisdiction_id: j for j in jurisdictions}
    for i, result in enumerate(results, start=1):
        writer.write_batch(result.batch)
        all_files.extend(result.files)
        errors.extend(result.record_errors)
        jurisdiction_rows.append(_jurisdiction_row(by_id[result.jurisdiction_id], len(result.files), result.batch,
                                                   report))
        if progress:
            progress(i, len(jurisdictions))
    specs["sections"].shards["train"] = writer.close()
    return jurisdiction_rows


def _jurisdiction_row(j: Jurisdiction, n_files: int, sections: pa.RecordBatch | pa.Table,
                      report: BuildReport) -> dict:
    """The ``jurisdictions`` row of ``j`` with its sections, which ``report`` counts."""
    chars = pc.sum(pc.utf8_length(sections.column("text"))).as_py() or 0
    report.sections += sections.num_rows
    report.characters += chars
    return {**{k: getattr(j, k) for k in ("jurisdiction_id", "name", "kind", "state", "state_fips", "counties",
                                           "county_fips", "source")},
            "n_files": n_files, "n_sections": sections.num_rows, "n_characters": chars,
            "formats": sorted(pc.unique(sections.column("format")).to_pylist())}


def _count_files(root: Path, all_files: list[FileReport], errors: list[dict], inputs: dict[str, str],
                 report: BuildReport, ingested: bool) -> None:
    """Every input file counted once (parsed, duplicate or rejected); rejected ones become errors; every parsed
    section counted once (kept, or dropped as a twin)."""
    for f in all_files:
        inputs[f.path] = f.sha256
        report.files_in += 1
        report.count_text(f)
        if not ingested:  # a LOCUS-v1 row is a section or a record error: nothing is a twin
            report.sections_parsed += f.sections
            report.sections_dropped += f.dropped
        if f.status == "parsed":
            report.files_parsed += 1
            report.by_format[f.format or "?"] = report.by_format.get(f.format or "?", 0) + 1
        elif f.status == "duplicate":
            report.files_duplicate += 1
        else:
            report.files_rejected += 1
            jid = Path(f.path).parts[0] if len(Path(f.path).parts) > 1 and not ingested else None
            errors.append({"source_file": f.path, "jurisdiction_id": jid, "level": "file",
                           "reason": f.reason or "rejected"})
    if ingested:
        report.sections_parsed = report.sections
    report.bytes_in = sum((root / f.path).stat().st_size for f in all_files)
    report.record_errors = sum(e["level"] == "record" for e in errors)
    report.text_problems = len({e["source_file"] for e in errors if e["level"] == "text"})


def _text_coverage_rows(files: list[FileReport], ingested: bool) -> list[dict]:
    """One ``text_coverage`` row per input file, in natural order."""
    rows = []
    for f in sorted(files, key=lambda f: natural_key(f.path)):
        parts, total = Path(f.path).parts, f.chars_total
        row = {"source_file": f.path, "jurisdiction_id": parts[0] if len(parts) > 1 and not ingested else None,
               "format": f.format or None, "status": f.status, "measured": total is not None,
               "chars_total": total, "chars_in_sections": f.chars_sections,
               "chars_structure": None if total is None else sum((f.chars_structure or {}).values()),
               "chars_unaccounted": f.chars_unaccounted,
               "share_in_sections": (f.chars_sections or 0) / total if total else None,
               "share_unaccounted": (f.chars_unaccounted or 0) / total if total else None}
        rows.append(row | {kind: (f.chars_structure or {}).get(kind) for kind in STRUCTURE_KINDS})
    return rows


def _write_evalsets(out: Path, specs: dict, built: list[str], sections: list[Path] | pa.Table,
                    released: pa.Table | None, gold_rows: list[dict] | None) -> dict:
    """Derive, check and write the evaluation configs from ``sections`` (its shards, or the table itself where the
    build holds it); return the sets (for the card)."""
    sets = evalsets.derive(sections, built, released)
    if not sets:
        if gold_rows is not None:
            raise BuildError("--gold: the build has too few jurisdictions for evaluation sets "
                             f"(at least {evalsets.MIN_TEST_JURISDICTIONS + 2} with sections)")
        return sets
    written = {name: sets[name] for name in evalsets.CONFIGS}
    if gold_rows is not None:
        written.update(evalsets.gold_sets(gold_rows, sets))
    evalsets.check_test_splits(written)
    for name, splits in written.items():
        schema, desc, _, _ = evalsets.CONFIGS.get(name) or evalsets.GOLD_CONFIGS[name]
        specs[name] = hubfolder.ConfigSpec(name, schema, desc)
        for split, rows in splits.items():
            hubfolder.write_table(out, specs[name], rows, split)
    return sets


def _report_json(report: BuildReport, files: list[FileReport]) -> str:
    return report.to_json(files=[asdict(f) for f in sorted(files, key=lambda f: natural_key(f.path))])
