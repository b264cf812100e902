"""Reading a raw folder (the ``--raw`` input contract): jurisdictions, their files, parsed sections.

Input contract::

    DIR/jurisdictions.csv   jurisdiction_id,name,kind,state,counties,source
    DIR/<jurisdiction_id>/  that jurisdiction's files, any supported format, any depth

Every file under DIR other than ``jurisdictions.csv`` is counted once: parsed (all its sections twins of another
file's: duplicate) or rejected, so ``files in = parsed + duplicate + rejected``; a parsed file's sections are kept
or dropped as twins, with the count and the reason in its report (``twins.py``). Jurisdictions are
parsed independently (``workers`` processes), in sorted order, so the output does not depend on the number of
workers.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import itertools
import multiprocessing
import multiprocessing.pool
import os
import platform
import re
import tempfile
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import TypeVar

import addfips
import pyarrow as pa

from neurips26.hubfolder import rawfiles
from neurips26.leftovers import remove_stale

from . import formats, twins
from .formats import html_toc, tei
from .formats.base import TextAccount
from .records import (
    CSV_COLUMNS,
    CSV_NAME,
    FRONT_MATTER_LIMIT,
    FRONT_MATTER_MIN_CHARS,
    KINDS,
    SECTIONS,
    UNACCOUNTED_LIMIT,
    BuildError,
    CodeResult,
    FileReport,
    Jurisdiction,
    natural_key,
    read_csv,
)

SPOOL = re.compile(r"locus-spool-(?P<pid>\d+)-\w+")  # a build's spool folder, named after its process
T = TypeVar("T")
H = TypeVar("H")


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
    """Parse every file of one jurisdiction, merge them into one code (``twins.merge``), number the rows."""
    folder = formats.Folder(raw / jurisdiction.jurisdiction_id)
    jid = jurisdiction.jurisdiction_id
    reports: list[FileReport] = []
    parsed: list[twins.Parsed] = []
    record_errors: list[dict] = []
    for path in list_files(folder.root):
        rel = path.relative_to(raw).as_posix()
        if refused := rawfiles.refusal(path, raw):  # a link out of the raw folder is never read
            reports.append(FileReport(rel, "", "rejected", reason=refused))
            continue
        data = path.read_bytes()
        report = FileReport(rel, hashlib.sha256(data).hexdigest(), "rejected")
        reports.append(report)
        warned = len(folder.warnings)
        try:
            fmt = formats.detect(path, data)
            report.format = fmt.name
            del data
            sections = list(fmt.parse(path, folder))
        except formats.FormatError as exc:
            report.reason = str(exc)
            continue
        except Exception as exc:  # a parser bug must not lose the rest of the build
            report.reason = f"parser {report.format} failed: {type(exc).__name__}: {exc}"
            continue
        report.status, report.sections = "parsed", len(sections)
        if (account := folder.accounts.pop(path, None)) is not None:
            record_errors.extend(account_text(report, account, sections, jid))
        warnings = [message for _, message in folder.warnings[warned:]]
        record_errors.extend({"source_file": rel, "jurisdiction_id": jid, "level": "record", "reason": message}
                             for message in warnings)
        if not fmt.companion:
            parsed.append(twins.Parsed(report, fmt.name, sections,
                                       recovered=any(tei.RECOVERED in m for m in warnings)))
        if fmt.name == "semantic-html":
            record_errors.extend({"source_file": rel, "jurisdiction_id": jid, "level": "record", "reason": gap}
                                 for gap in html_toc.toc_gaps(path, folder))
    return CodeResult(jid, sections_batch(jurisdiction, twins.merge(parsed)), reports, record_errors)


def account_text(report: FileReport, account: TextAccount, sections: list[formats.Section], jid: str
                 ) -> list[dict]:
    """Put a parsed file's text account in its report; the errors rows it calls for (level ``text``): more than
    :data:`UNACCOUNTED_LIMIT` of its text unaccounted, or a front matter too large to be one."""
    report.chars_total, report.chars_sections = account.total, account.in_sections
    report.chars_structure = dict(account.structure)
    rows = []
    lost, total = report.chars_unaccounted or 0, account.total or 1
    if lost / total > UNACCOUNTED_LIMIT:
        sample = " | ".join(account.sample) or "(no single line: characters lost inside lines)"
        rows.append(f"{lost / total:.1%} of its text ({lost:,} of {account.total:,} non-whitespace characters) is in "
                    f"no section and in no recognised structure; first such lines: {sample}")
    front = account.structure["front_matter"]
    if front > FRONT_MATTER_MIN_CHARS and front / total > FRONT_MATTER_LIMIT:
        rows.append(f"{front / total:.1%} of its text ({front:,} characters) comes before its first section or "
                    "heading line: more than a code's front matter, so its sections may be in a style the parser "
                    "does not know")
    return [{"source_file": report.path, "jurisdiction_id": jid, "level": "text", "reason": r} for r in rows]


def sections_batch(jurisdiction: Jurisdiction, merged: list[tuple[formats.Section, twins.Parsed]]
                   ) -> pa.RecordBatch:
    """The code's rows as one Arrow batch, built column by column (``section_id`` gets ``~k`` for the k-th
    repeat of a number)."""
    jid, n = jurisdiction.jurisdiction_id, len(merged)
    sections = [s for s, _ in merged]
    repeats: dict[str, int] = defaultdict(int)
    ids = []
    for number in map(attrgetter("number"), sections):
        repeats[number] += 1
        k = repeats[number]
        ids.append(f"{jid}:{number}~{k}" if k > 1 else f"{jid}:{number}")
    columns = {
        "section_id": ids, "jurisdiction_id": pa.repeat(jid, n), "state": pa.repeat(jurisdiction.state, n),
        **{name: list(map(attrgetter(name), sections))
           for name in ("number", "heading", "text", "path", "history", "cross_references", "status")},
        "order": pa.array(range(n), pa.int64()),
        "source_file": [f.report.path for _, f in merged],
        "format": [f.format for _, f in merged],
    }
    return pa.RecordBatch.from_pydict(columns, schema=SECTIONS)


# glibc's mallopt parameters (malloc.h) and the values a parsing process uses.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
KEEP_FREED_BYTES, MMAP_FROM_BYTES = 64 * 2**20, 32 * 2**20


@functools.cache
def keep_freed_memory() -> bool:
    """Let this process's C allocator keep up to 64 MB of freed memory for reuse instead of giving it back to the
    system, and take blocks under 32 MB from its heap instead of mapping each one. A code's text, lines and rows
    are a few large blocks, made and freed once per file: glibc's defaults unmap each one and return the heap's
    top, so the next file page-faults its memory in again (measured on 0.2 GB of Municode text: 224k page faults and
    5.2 s of worker CPU with glibc's defaults; 33k and 4.2 s with these).
    A worker's peak memory grows by at most the 64 MB kept (measured: 3 MB). Called in each process that parses
    (pool and Ray workers, and the build process when it parses itself); a no-op (False) where the C library is
    not glibc. (Freezing the garbage collector's objects or raising its thresholds in a worker was measured too,
    and made it slower.)"""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    return bool(libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREED_BYTES) and libc.mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES))


def _parse_to_spool(args: tuple[Path, Path, Jurisdiction]) -> CodeResult:
    """Parse one jurisdiction in a worker; its rows go to ``<spool>/<jurisdiction_id>.arrow`` (one Arrow IPC
    record batch message of the ``SECTIONS`` schema, which both sides know: no schema to write and read back per
    code), the rest comes back through the pipe."""
    spool, raw, jurisdiction = args
    result = parse_code(raw, jurisdiction)
    with pa.OSFile(str(spool / f"{result.jurisdiction_id}.arrow"), "wb") as sink:
        sink.write(result.batch.serialize())
    return dataclasses.replace(result, batch=None)


def _from_spool(spool: Path, result: CodeResult) -> CodeResult:
    """The worker's result with its rows memory-mapped from the spool file (no copy), the file unlinked."""
    path = spool / f"{result.jurisdiction_id}.arrow"
    with pa.memory_map(str(path)) as source:
        batch = pa.ipc.read_record_batch(source, SECTIONS)
    path.unlink()  # the mapping keeps the pages until the batch is released
    return dataclasses.replace(result, batch=batch)


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


def in_order(jobs: Iterable[T], submit: Callable[[T], H], window: int) -> Iterator[H]:
    """Submit ``jobs`` with at most ``window`` in flight; yield their handles in ``jobs`` order, the next job
    submitted as each handle is taken. Both engines use it, so a slow consumer (the shard writer) holds a bounded
    number of parsed codes, whatever the corpus size."""
    todo = iter(jobs)
    pending = deque(submit(job) for job in itertools.islice(todo, window))
    while pending:
        handle = pending.popleft()
        if (job := next(todo, None)) is not None:
            pending.append(submit(job))
        yield handle


def run(jobs: list[tuple[Path, Jurisdiction]], workers: int) -> Iterator[CodeResult]:
    """Parse the jurisdictions in ``workers`` processes (at most ``2 x workers`` in flight); yield their results
    in ``jobs`` order. The rows travel as Arrow IPC files in a temporary spool folder, memory-mapped by this
    process: pickling them through the pipe cost this process about 5 s of CPU per GB of input, which bounded the
    build's scaling. The spool folder carries this process's id: a build killed with ``kill -9`` leaves it behind,
    and the next build removes it."""
    if workers <= 1 or len(jobs) <= 1:
        keep_freed_memory()  # this process is the worker
        yield from (parse_code(*job) for job in jobs)
        return
    ctx = multiprocessing.get_context("spawn" if multiprocessing.get_start_method() != "fork" else "fork")
    remove_stale(Path(tempfile.gettempdir()).glob("locus-spool-*"), SPOOL)  # spools of builds killed on the way
    with tempfile.TemporaryDirectory(prefix=f"locus-spool-{os.getpid()}-") as folder, \
            ctx.Pool(workers, initializer=keep_freed_memory) as pool:
        spool = Path(folder)

        def submit(job: tuple[Path, Jurisdiction]) -> multiprocessing.pool.AsyncResult:
            return pool.apply_async(_parse_to_spool, ((spool, *job),))

        for handle in in_order(jobs, submit, 2 * workers):
            yield _from_spool(spool, handle.get())
