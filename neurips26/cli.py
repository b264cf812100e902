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

    return (BuildError, QueryError, ValueError, FileNotFoundError, FileExistsError, ImportError)


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
    embed_videos: Annotated[bool, typer.Option(
        "--embed-videos", help="Video resources: store the videos' bytes in the videos config.")] = False,
    from_locus_v1: Annotated[Path | None, typer.Option(
        "--from-locus-v1", help="LOCUS: ingest LOCUS-v1 Parquet files from this folder instead of --raw.")] = None,
    population: Annotated[Path | None, typer.Option(
        help="LOCUS: CSV of jurisdiction_id or geoid + population for the representative county layer.")] = None,
) -> None:
    """Build a resource into a Hub-ready dataset folder (Parquet shards + card + Croissant)."""
    import inspect

    from neurips26.corpora import builder

    module = builder(resource)
    extra = {}
    if embed_videos:
        if "embed_videos" not in inspect.signature(module.build).parameters:
            raise ValueError(f"--embed-videos applies to video resources, not {resource}")
        extra["embed_videos"] = True
    for option, value in (("from_locus_v1", from_locus_v1), ("population", population)):
        if value is not None:
            if option not in inspect.signature(module.build).parameters:
                raise ValueError(f"--{option.replace('_', '-')} applies to locus, not {resource}")
            extra[option] = value
    out = out or Path(resource)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(f"building {resource}", total=None)
        report = module.build(raw=raw, out=out, workers=workers,
                              progress=lambda done, total: bar.update(task, completed=done, total=total), **extra)
    console.print(f"[green]built[/green] {out}: {report.summary()}", highlight=False)
    if report.problems:
        console.print(f"see the errors config: neurips26 query \"SELECT * FROM {out.name}.errors\" --data {out.parent}",
                      highlight=False)


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


@app.command()
@friendly
def tasks(
    path: Annotated[bool, typer.Option("--path", help="Print only the tasks folder (for --include_path).")] = False,
) -> None:
    """Show where the lm-eval tasks folder is and list its groups and tasks."""
    from neurips26.evaluation import list_tasks
    from neurips26.tasks import TASKS_DIR

    if path:
        print(TASKS_DIR)
        return
    known = list_tasks()
    console.print(f"tasks folder: {TASKS_DIR}", highlight=False)
    console.print(f"groups: {', '.join(known['groups'])}", highlight=False)
    console.print(f"tasks:  {', '.join(known['tasks'])}", highlight=False)
    console.print(f"lm_eval --include_path {TASKS_DIR} --tasks neurips26 --model hf --model_args pretrained=...",
                  highlight=False)


@app.command("eval")
@friendly
def eval_(
    tasks: Annotated[str, typer.Option(help="Comma-separated tasks or groups.")] = "neurips26",
    model: Annotated[str, typer.Option(help="lm-eval model type: hf, vllm, ...")] = "hf",
    model_args: Annotated[str | None, typer.Option(
        help="lm-eval model args, e.g. pretrained=ORG/NAME,dtype=float32 (default: the embedded model).")] = None,
    limit: Annotated[float | None, typer.Option(help="Examples per task (or a fraction).")] = None,
    num_fewshot: Annotated[int | None, typer.Option(help="Few-shot examples (from the train split).")] = None,
    batch_size: Annotated[str, typer.Option(help="Batch size, or 'auto'.")] = "1",
    output: Annotated[Path, typer.Option(help="Where lm-eval's results and samples files go.")] = Path("results"),
    device: Annotated[str | None, typer.Option(help="cuda or cpu (default: cuda when present).")] = None,
    data: Annotated[Path | None, typer.Option(help="Folder of built datasets (default: see README).")] = None,
    apply_chat_template: Annotated[bool, typer.Option(help="Use the model's chat template.")] = False,
    submit: Annotated[bool, typer.Option(help="Hand the results to the leaderboard store.")] = False,
    revision: Annotated[str | None, typer.Option(help="With --submit: commit sha of the evaluated weights.")] = None,
    metadata: Annotated[str | None, typer.Option(help=(
        "Task arguments as JSON, as lm_eval's --metadata, e.g. '{\"num_frames\": 16}' for the video tasks or "
        "'{\"selections\": \"frameselect\", \"selector\": \"dpp\"}' to show stored frame selections."))] = None,
) -> None:
    """Evaluate a model on our lm-eval tasks (lm_eval.simple_evaluate with our tasks folder)."""
    import json

    from neurips26 import evaluation, models

    try:
        task_args = json.loads(metadata) if metadata else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--metadata: not JSON ({exc.msg} at column {exc.colno}): {metadata}") from None
    if task_args is not None and not isinstance(task_args, dict):
        raise ValueError(f"--metadata: expected a JSON object, got {metadata}")

    run = evaluation.run([t.strip() for t in tasks.split(",") if t.strip()], model, model_args, limit=limit,
                         num_fewshot=num_fewshot, batch_size=int(batch_size) if batch_size.isdigit() else batch_size,
                         output=output, device=device, data=data, apply_chat_template=apply_chat_template,
                         metadata=task_args)
    table = Table(title="scores")
    for column in ("task", "metric", "value", "stderr", "n"):
        table.add_column(column)
    for row in evaluation.score_rows(run.results):
        table.add_row(row["task"], row["metric"], f"{row['value']:.4f}",
                      "" if row["stderr"] is None else f"{row['stderr']:.4f}", str(row["n"] or ""))
    console.print(table)
    console.print(f"results: {run.results_file}", highlight=False)
    if submit:
        from neurips26.leaderboard.cli import submit as submit_results

        embedded = model_args is None and model == "hf"
        if not embedded and not revision:
            raise ValueError("--submit needs --revision (the commit sha of the evaluated weights)")
        submit_results(run.results_file, run.samples_files,
                       model=models.DEFAULT_MODEL_ID if embedded else evaluation.parse_model_args(model_args)
                       .get("pretrained", ""),
                       revision=revision or models.default_model_revision(),
                       license=models.DEFAULT_MODEL_LICENSE if embedded else "unknown",
                       model_type="instruction-tuned" if embedded else "other")


# Commands that live with their method or component: one module each, registered here.
from neurips26.corpora.video.cli import generate  # noqa: E402
from neurips26.leaderboard.cli import leaderboard, submit  # noqa: E402
from neurips26.methods.ipg.cli import ipg  # noqa: E402
from neurips26.methods.labelshift.cli import labelshift  # noqa: E402
from neurips26.methods.unlearn.cli import unlearn  # noqa: E402
from neurips26.space.serve import serve  # noqa: E402

for command in (generate, submit, leaderboard, serve, labelshift, unlearn, ipg):
    app.command()(friendly(command))

from neurips26.methods.frameselect.cli import frameselect  # noqa: E402

for info in frameselect.registered_commands:  # a sub-app: neurips26 frameselect run|replay|list
    info.callback = friendly(info.callback)
app.add_typer(frameselect, name="frameselect")

from neurips26.methods.locus_analysis.cli import score  # noqa: E402

for info in score.registered_commands:  # a sub-app: neurips26 score locus|gold|train-heads
    info.callback = friendly(info.callback)
app.add_typer(score, name="score")


def main() -> None:  # pragma: no cover - console entry point
    app(prog_name="neurips26")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
