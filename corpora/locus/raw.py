"""Reading a raw folder (the ``--raw`` input contract): jurisdictions, their files, parsed sections.

Input contract::

    DIR/jurisdictions.csv   jurisdiction_id,name,kind,state,counties,source
    DIR/<jurisdiction_id>/  that jurisdiction's files, any supported format, any depth

Every file under DIR other than ``jurisdictions.csv`` is counted once: parsed (possibly as a duplicate of the
same code in a better format) or rejected, so ``files in = parsed + duplicate + rejected``. Jurisdictions are
parsed independently (``workers`` processes), in sorted order, so the output does not depend on the number of
workers.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import addfips

from neurips26.hubfolder import rawfiles

from . import formats
from .formats import html_toc
from .records import (
    CSV_COLUMNS,
    CSV_NAME,
    FORMAT_PREFERENCE,
    KINDS,
    TWIN_OVERLAP,
    BuildError,
    CodeResult,
    FileReport,
    Jurisdiction,
    natural_key,
    read_csv,
)


def read_jurisdictions(raw: Path, errors: list[dict]) -> list[Jurisdiction]:
    """Valid rows of jurisdictions.csv; bad rows go to ``errors`` with line and reason."""
    csv_path = raw / CSV_NAME
    reader = read_csv(csv_path, f"not found (the raw folder needs a {CSV_NAME})")
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
    """Every regular file and symbolic link under ``folder``, in natural order (links are judged by
    :func:`neurips26.hubfolder.rawfiles.refusal` before they are read)."""
    return sorted(rawfiles.walk(folder), key=lambda p: natural_key(p.relative_to(folder).as_posix()))


def parse_code(raw: Path, jurisdiction: Jurisdiction) -> CodeResult:
    """Parse every file of one jurisdiction; pick one file per code; number the rows."""
    folder = formats.Folder(raw / jurisdiction.jurisdiction_id)
    reports: list[FileReport] = []
    parsed: list[tuple[FileReport, formats.Format, list[formats.Section]]] = []
    record_errors: list[dict] = []
    for path in list_files(folder.root):
        rel = path.relative_to(raw).as_posix()
        if refused := rawfiles.refusal(path, raw):  # a link out of the raw folder is never read
            reports.append(FileReport(rel, "", "rejected", reason=refused))
            continue
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


def unowned_files(raw: Path, jurisdictions: list[Jurisdiction], errors: list[dict]) -> list[FileReport]:
    """Files outside any built jurisdiction are inputs too: rejected, with the reason."""
    listed = {j.jurisdiction_id for j in jurisdictions}
    rejected_rows = {e["jurisdiction_id"] for e in errors} - listed
    unowned: list[FileReport] = []
    for path in list_files(raw):
        rel = path.relative_to(raw)
        if rel.as_posix() == CSV_NAME or rel.parts[0] in listed:
            continue
        why = (rawfiles.refusal(path, raw) or (f"jurisdiction {rel.parts[0]!r} rejected in {CSV_NAME}"
                                               if rel.parts[0] in rejected_rows
                                               else f"not in a folder listed in {CSV_NAME}" if len(rel.parts) > 1
                                               else "stray file at the top of the raw folder"))
        unowned.append(FileReport(rel.as_posix(), rawfiles.digest(path, raw), "rejected", reason=why))
    return unowned


def run(jobs: list[tuple[Path, Jurisdiction]], workers: int) -> Iterator[CodeResult]:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_parse_job, jobs)
        return
    ctx = multiprocessing.get_context("spawn" if multiprocessing.get_start_method() != "fork" else "fork")
    with ctx.Pool(workers) as pool:
        yield from pool.imap(_parse_job, jobs, chunksize=1)
