"""``neurips26 query``, ``search`` and ``push``: read and publish built dataset folders.

Every command finds the built folders with the one data rule (:func:`neurips26.settings.resolve_data`:
``--data``, then ``$NEURIPS26_DATA``, then ``.``, then the cache) and says on stderr when it fell back.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pyarrow as pa
import typer
from rich.text import Text

from neurips26.corpora import RESOURCES
from neurips26.decoding import DecodingError, decode_line
from neurips26.errors import UnknownNameError, UserError
from neurips26.hub import push as run_push
from neurips26.hub import push_plan
from neurips26.hubfolder import read_table
from neurips26.options import DataOpt
from neurips26.output import Format, FormatOpt, console, emit, err, terminal_safe
from neurips26.search import Filters
from neurips26.search import search as run_search
from neurips26.settings import resolve_data
from neurips26.sql import Limits, QueryError, Session, dataset_folders, split_statements

FIPS = re.compile(r"\d{5}")


def data_folders(data: Path | None) -> dict[str, Path]:
    """Resource name -> built folder under the data root the rule picks (said on stderr when it is the cache)."""
    root = resolve_data(data)
    if root.source == "cache":
        err.print(Text(root.describe(), style="dim"), highlight=False, soft_wrap=True)
    folders = dataset_folders(root.path)
    if not folders:
        raise UserError(f"no built dataset folders under {root.describe().removeprefix('data: ')}: "
                        "run `neurips26 build <resource>` here, or pass --data / set NEURIPS26_DATA")
    return folders


def resource_folder(resource: str, data: Path | None) -> Path:
    """The built folder of ``resource``; an unknown or unbuilt one is an error naming what exists."""
    folders = data_folders(data)
    if resource in folders:
        return folders[resource]
    root = resolve_data(data).path
    built = f"built there: {', '.join(folders)}" if folders else "nothing is built there"
    if resource not in RESOURCES.names():
        raise UnknownNameError(f"unknown resource {resource!r}; resources: {', '.join(RESOURCES.names())} "
                               f"({built} under {root})")
    raise UserError(f"no built {resource} folder under {root} ({built}): run `neurips26 build {resource}` "
                    "or pass --data / set NEURIPS26_DATA")


def query(
    sql: Annotated[list[str] | None, typer.Argument(help=(
        "SELECTs over views <resource>.<config>, e.g. locus.sections, run in order on one connection; "
        "- reads one statement per line from stdin and answers each as it comes."), show_default=False)] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", help="Also run the statements of this SQL file (separated by ;).")] = None,
    data: DataOpt = None,
    max_width: Annotated[int, typer.Option(help="Table format: cut cells longer than this.")] = 80,
    format: FormatOpt = Format.table,
    timeout: Annotated[float, typer.Option(min=0, help="Stop a query after this many seconds (0: never).")] = 300,
    memory: Annotated[str, typer.Option(help="DuckDB memory limit, e.g. 4GB.")] = "4GB",
) -> None:
    """Run read-only SQL over the built datasets with DuckDB.

    Several statements share one connection, each under the limits. With one statement the output is as
    ever; with several, each result is printed in turn (json: one line per statement; csv: a blank line
    between results) and the first failure stops the run. From stdin (-) a failing line is answered with its
    error (json: {"error": ...}) and the next line still runs; the exit code is 2 if any failed.
    """
    statements = list(sql or [])
    if file is not None:
        statements += split_statements(read_sql_file(file))
    if "-" in statements and len(statements) > 1:
        raise UserError("- (statements from stdin) goes alone: no other SQL argument and no --file")
    if not statements:
        raise UserError("give a SELECT, several, --file FILE, or - to read statements from stdin")
    limits = Limits(timeout_s=timeout or None, memory=memory)
    with Session(data_folders(data), limits) as session:
        if statements == ["-"]:
            answer_lines(session, format, max_width)
        elif len(statements) == 1:
            emit(session.query(statements[0]), format, max_width=max_width)
        else:
            for number, statement in enumerate(statements, 1):
                try:
                    table = session.query(statement)
                except QueryError as exc:
                    raise QueryError(f"statement {number} ({one_line(statement)}): {exc}") from None
                emit_one_of_many(table, format, f"[{number}] {one_line(statement)}", max_width)


def read_sql_file(path: Path) -> str:
    """The text of a SQL file, UTF-8 (the error names the file and the first byte that is not)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DecodingError(f"--file {path}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8; "
                            "give UTF-8 text") from None


def one_line(sql: str, width: int = 60) -> str:
    """``sql`` on one line, cut to ``width`` characters."""
    text = " ".join(sql.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def emit_one_of_many(table: pa.Table, fmt: Format, title: str, max_width: int) -> None:
    """One result of several: a table under its title line, one JSON line, or CSV followed by a blank line."""
    if fmt is Format.json:
        sys.stdout.write(json.dumps(table.to_pylist(), ensure_ascii=False, default=str) + "\n")
    elif fmt is Format.csv:
        emit(table, fmt)
        sys.stdout.write("\n")
    else:
        console.print(Text(terminal_safe(title), style="bold"), highlight=False, soft_wrap=True)
        emit(table, fmt, max_width=max_width)
    sys.stdout.flush()


def answer_lines(session: Session, fmt: Format, max_width: int) -> None:
    """Run each stdin line (blank lines and -- comments skipped) as it arrives; a failing line answers its error
    and the rest still run. Raises at the end if any failed."""
    failed = total = 0
    for number, line in enumerate(stdin_lines(), 1):
        try:
            statement = (line if isinstance(line, str) else decode_line(line, f"stdin line {number}")).strip()
        except DecodingError as exc:
            statement, problem = "?", exc
        else:
            problem = None
        if not statement or statement.startswith("--"):
            continue
        total += 1
        try:
            if problem is not None:
                raise problem
            table = session.query(statement)
        except (QueryError, DecodingError) as exc:
            failed += 1
            if fmt is Format.json:
                sys.stdout.write(json.dumps({"error": str(exc)}, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            else:
                err.print(Text(terminal_safe(f"error: [{total}] {exc}")), highlight=False, soft_wrap=True)
            continue
        emit_one_of_many(table, fmt, f"[{total}] {one_line(statement)}", max_width)
    if failed:
        raise UserError(f"{failed} of {total} statements from stdin failed")


def stdin_lines() -> Iterator[bytes | str]:
    """The lines of stdin as bytes (decoded one by one by the caller), or as text where stdin has no bytes."""
    stream = getattr(sys.stdin, "buffer", None)
    return iter(stream.readline, b"") if stream is not None else iter(sys.stdin)


def check_filters(folder: Path, state: str | None, county: str | None) -> Filters:
    """``--state`` and ``--county`` checked against the folder: a bad code or one the folder has no code for is a
    UserError listing the values that would match."""
    import addfips  # lazy: only the state check needs the FIPS tables

    if state:
        if addfips.AddFIPS().get_state_fips(state) is None:
            raise UserError(f"--state {state!r}: not a USPS state code (two letters, e.g. GA)")
        table = read_table(folder, "sections", ["state"])
        states = sorted(set(table.column(0).to_pylist())) if table is not None else []
        if state.upper() not in states:
            raise UserError(f"--state {state.upper()}: {folder.name} has no sections from it; "
                            f"states present: {', '.join(states) or 'none'}")
    if county:
        if not FIPS.fullmatch(county):
            raise UserError(f"--county {county!r}: not a five-digit county FIPS code (e.g. 13237)")
        table = read_table(folder, "counties", ["county_fips"])
        counties = sorted(set(table.column(0).to_pylist())) if table is not None else []
        if county not in counties:
            raise UserError(f"--county {county}: no code in {folder.name} applies in that county; "
                            f"counties with codes: {', '.join(counties) or 'none'}")
    return Filters(state.upper() if state else None, county)


def search(
    resource: Annotated[str, typer.Argument(help="Resource to search, e.g. locus.")],
    query: Annotated[str, typer.Argument(help="Words and/or section numbers like 6-21.")],
    state: Annotated[str | None, typer.Option(help="USPS state code, e.g. GA.")] = None,
    county: Annotated[str | None, typer.Option(help="Five-digit county FIPS, e.g. 13237.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Number of hits.")] = 10,
    data: DataOpt = None,
    format: FormatOpt = Format.table,
) -> None:
    """BM25 full-text search (index built once, then reused)."""
    folder = resource_folder(resource, data)
    hits = run_search(folder, query, check_filters(folder, state, county), limit)
    emit(hits, format, title=f"{resource}: {query!r} ({hits.num_rows} hits)")


def push(
    resource: Annotated[str, typer.Argument(help="Resource folder to upload, e.g. locus.")],
    repo: Annotated[str, typer.Option(help="Hub dataset repo, ORG/NAME.")],
    data: DataOpt = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="List what would be uploaded and deleted; upload nothing.")] = False,
    remote: Annotated[Path | None, typer.Option(help=(
        "With --dry-run: a folder standing for the repo's current files (e.g. a copy of the last pushed build); "
        "default: the repo's file list on the Hub."))] = None,
    private: Annotated[bool, typer.Option(help="Create the repo private.")] = False,
) -> None:
    """Upload a built folder, unchanged, to the Hugging Face Hub; stale data files there are deleted."""
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise UserError(f"--repo {repo!r} must look like ORG/NAME")
    if remote is not None and not dry_run:
        raise UserError("--remote only goes with --dry-run (a real push reads the repo's files on the Hub)")
    folder = resource_folder(resource, data)
    if dry_run:
        plan = push_plan(folder, repo, remote=remote)
        for path, size in plan.upload:
            console.print(Text(f"{size:>12,}  {path}"), highlight=False)
        for path in plan.delete:
            console.print(Text(f"{'delete':>12}  {path}"), highlight=False)
        console.print(Text(f"{plan.upload_bytes:>12,}  total, {len(plan.upload)} files to upload, "
                           f"{len(plan.delete)} stale file(s) to delete -> https://huggingface.co/datasets/{repo} "
                           f"({plan.remote_source}; dry run: nothing uploaded)"), highlight=False)
        console.print(Text(f"commit message: {plan.commit_message}"), highlight=False)
        return
    console.print(Text(str(run_push(folder, repo, private=private))))
