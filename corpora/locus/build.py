"""Build LOCUS from raw scrapes into a Hub-ready dataset folder.

Input contract (``--raw DIR``)::

    DIR/jurisdictions.csv   jurisdiction_id,name,kind,state,counties,source
    DIR/<jurisdiction_id>/  that jurisdiction's files, any supported format, any depth

Configs written: ``sections`` (the corpus), ``jurisdictions``, ``counties`` (the
county access layer: every code that applies in a county), ``errors`` (every
rejected file, row or record, with the reason), the evaluation sets ``domain`` and
``catchline``, ``county_representatives`` and ``coverage`` (the paper's county
layer, ``counties.py``) and ``locus_v1`` (the corpus in the LOCUS-v1 schema,
``v1.py``). ``--from-locus-v1 DIR`` reads a LOCUS-v1 download instead of a raw
folder and also writes ``v1_source``. Every file under DIR other than
``jurisdictions.csv`` is counted once: parsed (possibly as a duplicate of the
same code in a better format) or rejected, so ``files in = parsed + rejected``.

Jurisdictions are parsed independently (``--workers N`` processes), in sorted
order, and their rows streamed into the shards, so memory is bounded by the
largest single code and the output does not depend on the number of workers.
"""

from __future__ import annotations

import csv
import hashlib
import multiprocessing
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import addfips
import pyarrow as pa

from neurips26 import __version__, hubfolder
from neurips26.hubfolder import column

from . import evalsets, formats
from .card import render_card
from .formats import html_toc

BUILDER_VERSION = "1.0.0"
SAMPLE_DIR = Path(__file__).parent / "sample"
CSV_NAME = "jurisdictions.csv"
CSV_COLUMNS = ("jurisdiction_id", "name", "kind", "state", "counties", "source")
KINDS = ("city", "town", "village", "county", "consolidated", "district")
# When one code arrives in several formats, the most structured one is kept.
FORMAT_PREFERENCE = ("dc-code-xml", "tei-xml", "semantic-html", "municode-text", "pdf")
TWIN_OVERLAP = 0.9  # share of section numbers two files must share to be the same code


class BuildError(Exception):
    """The build cannot start (bad arguments or an unusable jurisdictions.csv)."""



STR, INT, LIST = pa.string(), pa.int64(), pa.list_(pa.string())
SECTIONS = pa.schema([
    column("section_id", STR, "Stable id: '<jurisdiction_id>:<number>', '~k' for the k-th repeat of a number"),
    column("jurisdiction_id", STR, "Jurisdiction the code belongs to"),
    column("state", STR, "USPS state code"),
    column("number", STR, "Section number as printed, e.g. '1-5.11'"),
    column("heading", STR, "Catchline of the section"),
    column("text", STR, "Section text, without history notes and cross-references"),
    column("path", LIST, "Title/chapter/article headings above the section, outermost first"),
    column("history", LIST, "History notes (ordinances that enacted or amended it)"),
    column("cross_references", LIST, "Cross-references and state-law references"),
    column("status", STR, "active, repealed or reserved"),
    column("order", INT, "Position of the section within its code, from 0"),
    column("source_file", STR, "File it was parsed from, relative to the raw folder"),
    column("format", STR, "Format of the source file"),
])
JURISDICTIONS = pa.schema([
    column("jurisdiction_id", STR, "Id of the jurisdiction (its raw folder name)"),
    column("name", STR, "Official name"),
    column("kind", STR, "city, town, village, county, consolidated or district"),
    column("state", STR, "USPS state code"),
    column("state_fips", STR, "Two-digit state FIPS code"),
    column("counties", LIST, "Counties the jurisdiction lies in"),
    column("county_fips", LIST, "Five-digit FIPS codes of those counties (unresolved names left out)"),
    column("n_files", INT, "Files in its raw folder"),
    column("n_sections", INT, "Sections built"),
    column("n_characters", INT, "Characters of section text"),
    column("formats", LIST, "Formats of the files its sections came from"),
    column("source", STR, "Where the code came from"),
])
COUNTIES = pa.schema([
    column("county_fips", STR, "Five-digit county FIPS code"),
    column("county_name", STR, "County name"),
    column("state", STR, "USPS state code"),
    column("county_code_id", STR, "The county's own code (a county or consolidated jurisdiction), if any"),
    column("jurisdiction_ids", LIST, "Every code that applies in the county: its own and its places'"),
    column("n_jurisdictions", INT, "Number of applicable codes"),
    column("n_sections", INT, "Sections over all applicable codes"),
])
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder) the problem is in"),
    column("jurisdiction_id", STR, "Jurisdiction concerned, if known"),
    column("level", STR, "file (whole file rejected), row (jurisdictions.csv row) or record"),
    column("reason", STR, "What is wrong"),
])


@dataclass
class Jurisdiction:
    jurisdiction_id: str
    name: str
    kind: str
    state: str
    counties: list[str]
    source: str
    state_fips: str = ""
    resolved_counties: list[tuple[str, str]] = field(default_factory=list)  # (name, FIPS)

    @property
    def county_fips(self) -> list[str]:
        return [fips for _, fips in self.resolved_counties]


@dataclass
class FileReport:
    path: str
    sha256: str
    status: str  # parsed, duplicate or rejected
    format: str | None = None
    sections: int = 0
    reason: str | None = None


@dataclass
class CodeResult:
    """What one worker returns for one jurisdiction."""

    jurisdiction_id: str
    rows: list[dict]
    files: list[FileReport]
    record_errors: list[dict]


@dataclass
class BuildReport:
    files_in: int = 0
    files_parsed: int = 0
    files_duplicate: int = 0
    files_rejected: int = 0
    rows_rejected: int = 0
    record_errors: int = 0
    sections: int = 0
    characters: int = 0
    bytes_in: int = 0
    by_format: dict[str, int] = field(default_factory=dict)

    @property
    def reconciles(self) -> bool:
        return self.files_in == self.files_parsed + self.files_duplicate + self.files_rejected

    def summary(self) -> str:
        """One line for the CLI: counts, and whether files in = parsed + duplicate + rejected."""
        return (f"{self.sections:,} sections; files in {self.files_in} = parsed {self.files_parsed} + duplicate "
                f"{self.files_duplicate} + rejected {self.files_rejected} "
                f"({'reconciles' if self.reconciles else 'DOES NOT RECONCILE'}); {self.rows_rejected} csv row "
                f"problem(s), {self.record_errors} record warning(s)")

    @property
    def problems(self) -> int:
        return self.files_rejected + self.rows_rejected


def natural_key(text: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def read_jurisdictions(raw: Path, errors: list[dict]) -> list[Jurisdiction]:
    """Valid rows of jurisdictions.csv; bad rows go to ``errors`` with line and reason."""
    csv_path = raw / CSV_NAME
    if not csv_path.is_file():
        raise BuildError(f"{csv_path}: not found (the raw folder needs a {CSV_NAME})")
    try:
        text = csv_path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BuildError(f"{csv_path}: not valid UTF-8 at byte {exc.start}") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise BuildError(f"{csv_path}: missing column(s) {', '.join(missing)}")
    fips = addfips.AddFIPS()
    seen: set[str] = set()
    out = []
    for line, row in enumerate(reader, start=2):
        def reject(reason: str, jid: str | None = None, line: int = line) -> None:
            errors.append({"source_file": CSV_NAME, "jurisdiction_id": jid, "level": "row",
                           "reason": f"line {line}: {reason}"})

        values = {k: (row.get(k) or "").strip() for k in CSV_COLUMNS}
        jid = values["jurisdiction_id"]
        if not jid or "/" in jid or jid.startswith("."):
            reject(f"jurisdiction_id {jid!r} is empty or not a folder name")
            continue
        if jid in seen:
            reject(f"duplicate jurisdiction_id {jid!r} (first row kept)", jid)
            continue
        if values["kind"] not in KINDS:
            reject(f"kind {values['kind']!r} is not one of {', '.join(KINDS)}", jid)
            continue
        state_fips = fips.get_state_fips(values["state"])
        if not state_fips:
            reject(f"state {values['state']!r} is not a USPS state code", jid)
            continue
        if not (raw / jid).is_dir():
            reject(f"folder {jid}/ for jurisdiction {jid!r} is missing", jid)
            continue
        seen.add(jid)
        counties = [c.strip() for c in values["counties"].split(";") if c.strip()]
        j = Jurisdiction(jid, values["name"], values["kind"], values["state"], counties, values["source"],
                         state_fips)
        for county in counties:
            code = fips.get_county_fips(county, state=values["state"])
            if code:
                j.resolved_counties.append((county, code))
            else:
                reject(f"county {county!r} not found in {values['state']} (kept without it)", jid)
        out.append(j)
    return sorted(out, key=lambda j: natural_key(j.jurisdiction_id))


def list_files(folder: Path) -> list[Path]:
    """Every regular file under ``folder`` (following links), in natural order."""
    files = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return sorted(files, key=lambda p: natural_key(p.relative_to(folder).as_posix()))


def parse_code(raw: Path, jurisdiction: Jurisdiction) -> CodeResult:
    """Parse every file of one jurisdiction; pick one file per code; number the rows."""
    folder = formats.Folder(raw / jurisdiction.jurisdiction_id)
    reports: list[FileReport] = []
    parsed: list[tuple[FileReport, formats.Format, list[formats.Section]]] = []
    record_errors: list[dict] = []
    for path in list_files(folder.root):
        rel = path.relative_to(raw).as_posix()
        data = path.read_bytes()
        report = FileReport(rel, hashlib.sha256(data).hexdigest(), "rejected")
        reports.append(report)
        try:
            fmt = formats.detect(path)
            report.format = fmt.name
            sections = list(fmt.parse(path, folder))
        except formats.FormatError as exc:
            report.reason = str(exc)
            continue
        except Exception as exc:  # a parser bug must not lose the rest of the build
            report.reason = f"parser {report.format} failed: {type(exc).__name__}: {exc}"
            continue
        report.status, report.sections = "parsed", len(sections)
        if not fmt.companion:
            parsed.append((report, fmt, sections))
        if fmt.name == "semantic-html":
            for gap in html_toc.toc_gaps(path, folder):
                record_errors.append({"source_file": rel, "jurisdiction_id": jurisdiction.jurisdiction_id,
                                      "level": "record", "reason": gap})

    # The same code in two formats (a text export and its XML markup): keep the best one. A twin always
    # has another format, so files of one format (625 D.C. section files) are never compared.
    kept: list[tuple[FileReport, formats.Format, set[str]]] = []
    for report, fmt, sections in sorted(parsed, key=lambda t: _preference(t[1].name)):
        numbers = {s.number for s in sections}
        twin = next((k for k in kept if k[1] is not fmt and numbers and _overlap(numbers, k[2])), None)
        if twin:
            report.status = "duplicate"
            report.reason = f"same code as {twin[0].path} (kept: {twin[1].name})"
        else:
            kept.append((report, fmt, numbers))
    kept_paths = {k[0].path for k in kept}

    rows: list[dict] = []
    repeats: dict[str, int] = defaultdict(int)
    for report, fmt, sections in ((r, f, s) for r, f, s in parsed if r.path in kept_paths):
        for section in sections:
            repeats[section.number] += 1
            k = repeats[section.number]
            suffix = f"~{k}" if k > 1 else ""
            rows.append({
                "section_id": f"{jurisdiction.jurisdiction_id}:{section.number}{suffix}",
                "jurisdiction_id": jurisdiction.jurisdiction_id,
                "state": jurisdiction.state,
                **vars(section),
                "order": len(rows),
                "source_file": report.path,
                "format": fmt.name,
            })
    return CodeResult(jurisdiction.jurisdiction_id, rows, reports, record_errors)


def _preference(format_name: str) -> int:
    return FORMAT_PREFERENCE.index(format_name) if format_name in FORMAT_PREFERENCE else len(FORMAT_PREFERENCE)


def _overlap(a: set[str], b: set[str]) -> bool:
    return len(a & b) >= TWIN_OVERLAP * min(len(a), len(b))


def _parse_job(args: tuple[Path, Jurisdiction]) -> CodeResult:
    return parse_code(*args)


def build(raw: Path | None = None, out: Path = Path("locus"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, from_locus_v1: Path | None = None,
          population: Path | None = None) -> BuildReport:
    """Build the LOCUS folder at ``out`` from ``raw`` (default: the embedded sample) or a LOCUS-v1 download.

    ``population``: a CSV of jurisdiction id or GEOID and population for the representative county
    layer (see ``counties.py``).
    """
    from . import counties, v1

    if raw is not None and from_locus_v1 is not None:
        raise BuildError("give --raw or --from-locus-v1, not both")
    populations = counties.read_population(population) if population is not None else None
    errors: list[dict] = []
    inputs: dict[str, str] = {}
    v1_input = None
    if from_locus_v1 is not None:
        root = Path(from_locus_v1).resolve()
        v1_input = v1.read_v1(root)
        jurisdictions, all_files = v1_input.jurisdictions, list(v1_input.files)
        errors.extend(v1_input.errors)
        report = BuildReport()
        results: Iterator[tuple[CodeResult, list[dict] | None]] = v1_input.results()
    else:
        root = (raw or SAMPLE_DIR).resolve()
        if not root.is_dir():
            raise BuildError(f"{root}: raw folder not found")
        jurisdictions = read_jurisdictions(root, errors)
        report = BuildReport(rows_rejected=len(errors))
        all_files = _unowned_files(root, jurisdictions, errors)
        inputs[CSV_NAME] = hubfolder.sha256_file(root / CSV_NAME)
        results = ((r, None) for r in _run([(root, j) for j in jurisdictions], workers))

    out = Path(out)
    hubfolder.reset_folder(out)
    specs = {name: hubfolder.ConfigSpec(name, schema, desc) for name, schema, desc in [
        ("sections", SECTIONS, "One row per section of every code."),
        ("jurisdictions", JURISDICTIONS, "One row per jurisdiction."),
        ("counties", COUNTIES, "County access layer: every code that applies in each county."),
        ("errors", ERRORS, "Every rejected file, jurisdictions.csv row or record, with the reason."),
    ]}
    specs["sections"].default = True
    sections_writer = hubfolder.SplitWriter(out, "sections", SECTIONS)
    source_writer = hubfolder.SplitWriter(out, "v1_source", v1.V1_SOURCE) if v1_input else None
    jurisdiction_rows = []
    for i, (result, source_rows) in enumerate(results, start=1):
        j = next(j for j in jurisdictions if j.jurisdiction_id == result.jurisdiction_id)
        sections_writer.write_all(result.rows)
        if source_writer is not None:
            source_writer.write_all(source_rows or [])
        all_files.extend(result.files)
        errors.extend(result.record_errors)
        chars = sum(len(r["text"]) for r in result.rows)
        report.sections += len(result.rows)
        report.characters += chars
        jurisdiction_rows.append({
            **{k: getattr(j, k) for k in ("jurisdiction_id", "name", "kind", "state", "state_fips",
                                          "counties", "county_fips", "source")},
            "n_files": v1_input.n_files[j.jurisdiction_id] if v1_input else len(result.files),
            "n_sections": len(result.rows), "n_characters": chars,
            "formats": sorted({r["format"] for r in result.rows}),
        })
        if progress:
            progress(i, len(jurisdictions))
    specs["sections"].shards["train"] = sections_writer.close()
    ingested = v1_input is not None
    del v1_input, results  # the LOCUS-v1 download's rows are no longer needed

    for f in all_files:
        inputs[f.path] = f.sha256
        report.files_in += 1
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
    report.bytes_in = sum((root / f.path).stat().st_size for f in all_files)
    report.record_errors = sum(e["level"] == "record" for e in errors)

    built = [j["jurisdiction_id"] for j in jurisdiction_rows if j["n_sections"]]
    sets = evalsets.derive([out / s.path for s in specs["sections"].shards["train"]], built)
    for task, schema, desc in [
        ("domain", evalsets.DOMAIN, "Evaluation set: regulatory domain of a section (4 choices), "
                                    "splits by jurisdiction."),
        ("catchline", evalsets.CATCHLINE, "Evaluation set: write a section's catchline from its text, "
                                          "splits by jurisdiction."),
    ]:
        if task in sets:
            specs[task] = hubfolder.ConfigSpec(task, schema, desc)
            for split in evalsets.SPLITS:
                hubfolder.write_table(out, specs[task], sets[task][split], split)

    hubfolder.write_table(out, specs["jurisdictions"], jurisdiction_rows)
    access = county_rows(jurisdictions, jurisdiction_rows)
    hubfolder.write_table(out, specs["counties"], access)
    errors.sort(key=lambda e: (e["level"] != "row", natural_key(e["source_file"]), e["reason"]))
    hubfolder.write_table(out, specs["errors"], errors)

    representatives = counties.representative_rows(access, jurisdiction_rows, populations)
    coverage = counties.coverage_rows(representatives, [j.state for j in jurisdictions])
    for name, schema, rows, desc in [
        ("county_representatives", counties.REPRESENTATIVES, representatives,
         "County layer as the LOCUS paper defines it: one representative code per county."),
        ("coverage", counties.COVERAGE, coverage, "Counties with a representative code, per state."),
    ]:
        specs[name] = hubfolder.ConfigSpec(name, schema, desc)
        hubfolder.write_table(out, specs[name], rows)
    if source_writer is not None:
        specs["v1_source"] = hubfolder.ConfigSpec(
            "v1_source", v1.V1_SOURCE, "LOCUS-v1 identity and label columns of the ingested rows, by section_id.")
        specs["v1_source"].shards["train"] = source_writer.close()
    specs["locus_v1"] = hubfolder.ConfigSpec("locus_v1", v1.V1_SCHEMA, v1.DESCRIPTION)
    write_arrow(out, specs["locus_v1"], v1.locus_v1_table(out))

    configs = list(specs.values())
    meta = {**card_meta(), **(v1.LICENSE if ingested else {})}  # LOCUS-v1 is CC-BY-NC-4.0
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.locus", "version": BUILDER_VERSION,
                                            "package_version": __version__}, inputs)
    origin = (f"Ingested from a LOCUS-v1 download ({len(all_files)} file(s)), released under CC-BY-NC-4.0, "
              "which this folder keeps." if ingested
              else "Built from raw ordinance codes.")
    hubfolder.write_card(out, configs, meta, render_card(report, jurisdiction_rows, configs, domain_counts(sets),
                                                         coverage=coverage, origin=origin,
                                                         license=meta["license"]))
    hubfolder.write_croissant(out, configs, meta)
    (out / "build_report.json").write_text(_report_json(report, all_files), encoding="utf-8")
    return report


def write_arrow(folder: Path, spec: hubfolder.ConfigSpec, table: pa.Table, split: str = "train") -> None:
    """Write a config split from an Arrow table, batch by batch."""
    writer = hubfolder.SplitWriter(folder, spec.name, spec.schema, split)
    for batch in table.to_batches(max_chunksize=hubfolder.ROW_GROUP_ROWS):
        writer.write_all(batch.to_pylist())
    spec.shards[split] = writer.close()


def _unowned_files(raw: Path, jurisdictions: list[Jurisdiction], errors: list[dict]) -> list[FileReport]:
    """Files outside any built jurisdiction are inputs too: rejected, with the reason."""
    listed = {j.jurisdiction_id for j in jurisdictions}
    rejected_rows = {e["jurisdiction_id"] for e in errors} - listed
    unowned: list[FileReport] = []
    for path in list_files(raw):
        rel = path.relative_to(raw)
        if rel.as_posix() == CSV_NAME or rel.parts[0] in listed:
            continue
        why = (f"jurisdiction {rel.parts[0]!r} rejected in {CSV_NAME}" if rel.parts[0] in rejected_rows
               else f"not in a folder listed in {CSV_NAME}" if len(rel.parts) > 1
               else "stray file at the top of the raw folder")
        unowned.append(FileReport(rel.as_posix(), hubfolder.sha256_file(path), "rejected", reason=why))
    return unowned


def county_rows(jurisdictions: list[Jurisdiction], jurisdiction_rows: list[dict]) -> list[dict]:
    """The access layer: for each county, its own code and every place code inside it."""
    n_sections = {j["jurisdiction_id"]: j["n_sections"] for j in jurisdiction_rows}
    counties: dict[str, dict] = {}
    for j in jurisdictions:
        own_code = j.kind in ("county", "consolidated") or (j.kind == "district" and len(j.county_fips) == 1)
        for name, fips in j.resolved_counties:
            c = counties.setdefault(fips, {"county_fips": fips, "county_name": name, "state": j.state,
                                           "county_code_id": None, "jurisdiction_ids": [],
                                           "n_jurisdictions": 0, "n_sections": 0})
            if own_code and c["county_code_id"] is None:
                c["county_code_id"] = j.jurisdiction_id
            c["jurisdiction_ids"].append(j.jurisdiction_id)
            c["n_jurisdictions"] += 1
            c["n_sections"] += n_sections[j.jurisdiction_id]
    for c in counties.values():
        own = c["county_code_id"]
        c["jurisdiction_ids"].sort(key=lambda jid: (jid != own, natural_key(jid)))
    return [counties[k] for k in sorted(counties)]


def domain_counts(sets: dict) -> dict[str, int]:
    """Domain label -> examples over all splits of the domain evaluation set."""
    counts: dict[str, int] = defaultdict(int)
    for rows in sets.get("domain", {}).values():
        for row in rows:
            counts[row["domain"]] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _report_json(report: BuildReport, files: list[FileReport]) -> str:
    import json

    payload = {**asdict(report), "reconciles": report.reconciles,
               "files": [asdict(f) for f in sorted(files, key=lambda f: natural_key(f.path))]}
    return json.dumps(payload, indent=2) + "\n"


def _run(jobs: list[tuple[Path, Jurisdiction]], workers: int) -> Iterator[CodeResult]:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_parse_job, jobs)
        return
    ctx = multiprocessing.get_context("spawn" if multiprocessing.get_start_method() != "fork" else "fork")
    with ctx.Pool(workers) as pool:
        yield from pool.imap(_parse_job, jobs, chunksize=1)


def card_meta() -> dict:
    from .card import META

    return META
