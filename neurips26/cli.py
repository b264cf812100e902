"""The ``neurips26`` command line: build, query, search and push datasets."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="Hub-ready datasets, lm-eval tasks and a leaderboard for NeurIPS 2026 resources.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
console = Console()
err = Console(stderr=True)

DataOpt = Annotated[Path, typer.Option("--data", help="Folder holding the built dataset folders.")]


def _expected_errors() -> tuple[type[Exception], ...]:
    from neurips26.corpora.locus.build import BuildError
    from neurips26.sql import QueryError

    return (BuildError, QueryError, ValueError, FileNotFoundError)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn expected failures (bad arguments, bad input) into one line on stderr, exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _expected_errors() as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def print_table(table: Any, title: str | None = None, max_width: int = 80) -> None:
    """Print a pyarrow table with rich (long cells cut to ``max_width``)."""
    out = Table(title=title, show_lines=False)
    for name in table.column_names:
        out.add_column(name, overflow="fold")
    for row in table.to_pylist():
        out.add_row(*[_cell(v, max_width) for v in row.values()])
    console.print(out)


def _cell(value: Any, width: int) -> str:
    text = "" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _folder(data: Path, resource: str) -> Path:
    from neurips26.sql import dataset_folders

    folders = dataset_folders(data)
    if resource not in folders:
        raise FileNotFoundError(f"no built '{resource}' folder under {data.resolve()} "
                                f"(run: neurips26 build {resource} --out {data / resource})")
    return folders[resource]


@app.command()
@friendly
def build(
    resource: Annotated[str, typer.Argument(help="Resource to build, e.g. locus.")],
    raw: Annotated[Path | None, typer.Option(help="Raw input folder (default: the embedded sample).")] = None,
    out: Annotated[Path | None, typer.Option(help="Output folder (default: ./<resource>).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Parallel parser processes.")] = 1,
) -> None:
    """Build a resource into a Hub-ready dataset folder (Parquet shards + card + Croissant)."""
    from neurips26.corpora import builder

    module = builder(resource)
    out = out or Path(resource)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(f"building {resource}", total=None)
        report = module.build(raw=raw, out=out, workers=workers,
                              progress=lambda done, total: bar.update(task, completed=done, total=total))
    console.print(f"[green]built[/green] {out}: {report.sections:,} sections; files in {report.files_in} = "
                  f"parsed {report.files_parsed} + duplicate {report.files_duplicate} + "
                  f"rejected {report.files_rejected} ({'reconciles' if report.reconciles else 'DOES NOT RECONCILE'})"
                  f"; {report.rows_rejected} csv row problem(s), {report.record_errors} record warning(s)")
    if report.files_rejected or report.rows_rejected:
        console.print(f"see the errors config: neurips26 query \"SELECT * FROM {resource}.errors\"")


@app.command()
@friendly
def query(
    sql: Annotated[str, typer.Argument(help="One SELECT over views <resource>.<config>, e.g. locus.sections.")],
    data: DataOpt = Path("."),
    max_width: Annotated[int, typer.Option(help="Cut cells longer than this.")] = 80,
) -> None:
    """Run read-only SQL over the built datasets with DuckDB."""
    from neurips26.sql import dataset_folders, run_query

    print_table(run_query(sql, dataset_folders(data)), max_width=max_width)


@app.command()
@friendly
def search(
    resource: Annotated[str, typer.Argument(help="Resource to search, e.g. locus.")],
    query: Annotated[str, typer.Argument(help="Words and/or section numbers like 1-5.11.")],
    state: Annotated[str | None, typer.Option(help="USPS state code, e.g. GA.")] = None,
    county: Annotated[str | None, typer.Option(help="Five-digit county FIPS, e.g. 13015.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Number of hits.")] = 10,
    data: DataOpt = Path("."),
) -> None:
    """BM25 full-text search (index built once, then reused)."""
    from neurips26.search import Filters
    from neurips26.search import search as run_search

    hits = run_search(_folder(data, resource), query, Filters(state, county), limit)
    print_table(hits, title=f"{resource}: {query!r} ({hits.num_rows} hits)")


@app.command()
@friendly
def push(
    resource: Annotated[str, typer.Argument(help="Resource folder to upload, e.g. locus.")],
    repo: Annotated[str, typer.Option(help="Hub dataset repo, ORG/NAME.")],
    data: DataOpt = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be uploaded; upload nothing.")] = False,
    private: Annotated[bool, typer.Option(help="Create the repo private.")] = False,
) -> None:
    """Upload a built folder, unchanged, to the Hugging Face Hub."""
    from neurips26.hub import files_to_push
    from neurips26.hub import push as run_push

    if "/" not in repo or repo.count("/") != 1:
        raise ValueError(f"--repo {repo!r} must look like ORG/NAME")
    folder = _folder(data, resource)
    files = files_to_push(folder)
    if dry_run:
        for path, size in files:
            console.print(f"{size:>12,}  {path}", highlight=False)
        console.print(f"{sum(s for _, s in files):>12,}  total, {len(files)} files -> "
                      f"https://huggingface.co/datasets/{repo} (dry run: nothing uploaded)")
        return
    console.print(run_push(folder, repo, private=private))


def main() -> None:  # pragma: no cover - console entry point
    app(prog_name="neurips26")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
