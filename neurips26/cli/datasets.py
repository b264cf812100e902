"""``neurips26 query``, ``search`` and ``push``: read and publish built dataset folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from neurips26.errors import UserError
from neurips26.hub import files_to_push
from neurips26.hub import push as run_push
from neurips26.hubfolder import built_folder
from neurips26.output import Format, FormatOpt, console, emit
from neurips26.search import Filters
from neurips26.search import search as run_search
from neurips26.sql import Limits, dataset_folders, run_query

DataOpt = Annotated[Path, typer.Option("--data", help="Folder holding the built dataset folders.")]


def query(
    sql: Annotated[str, typer.Argument(help="One SELECT over views <resource>.<config>, e.g. locus.sections.")],
    data: DataOpt = Path("."),
    max_width: Annotated[int, typer.Option(help="Table format: cut cells longer than this.")] = 80,
    format: FormatOpt = Format.table,
    timeout: Annotated[float, typer.Option(min=0, help="Stop the query after this many seconds (0: never).")] = 300,
    memory: Annotated[str, typer.Option(help="DuckDB memory limit, e.g. 4GB.")] = "4GB",
) -> None:
    """Run read-only SQL over the built datasets with DuckDB."""
    emit(run_query(sql, dataset_folders(data), Limits(timeout_s=timeout or None, memory=memory)), format,
         max_width=max_width)


def search(
    resource: Annotated[str, typer.Argument(help="Resource to search, e.g. locus.")],
    query: Annotated[str, typer.Argument(help="Words and/or section numbers like 1-5.11.")],
    state: Annotated[str | None, typer.Option(help="USPS state code, e.g. GA.")] = None,
    county: Annotated[str | None, typer.Option(help="Five-digit county FIPS, e.g. 13015.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Number of hits.")] = 10,
    data: DataOpt = Path("."),
    format: FormatOpt = Format.table,
) -> None:
    """BM25 full-text search (index built once, then reused)."""
    hits = run_search(built_folder(resource, data), query, Filters(state, county), limit)
    emit(hits, format, title=f"{resource}: {query!r} ({hits.num_rows} hits)")


def push(
    resource: Annotated[str, typer.Argument(help="Resource folder to upload, e.g. locus.")],
    repo: Annotated[str, typer.Option(help="Hub dataset repo, ORG/NAME.")],
    data: DataOpt = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be uploaded; upload nothing.")] = False,
    private: Annotated[bool, typer.Option(help="Create the repo private.")] = False,
) -> None:
    """Upload a built folder, unchanged, to the Hugging Face Hub."""
    if "/" not in repo or repo.count("/") != 1:
        raise UserError(f"--repo {repo!r} must look like ORG/NAME")
    folder = built_folder(resource, data)
    files = files_to_push(folder)
    if dry_run:
        for path, size in files:
            console.print(Text(f"{size:>12,}  {path}"), highlight=False)
        console.print(Text(f"{sum(s for _, s in files):>12,}  total, {len(files)} files -> "
                           f"https://huggingface.co/datasets/{repo} (dry run: nothing uploaded)"))
        return
    console.print(Text(str(run_push(folder, repo, private=private))))
