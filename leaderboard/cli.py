"""``neurips26 submit`` and ``neurips26 leaderboard``: plain functions the main CLI registers as commands."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()

StoreOpt = Annotated[Path | None, typer.Option(
    "--store", help="Leaderboard folder (default: $NEURIPS26_LEADERBOARD or ~/.cache/neurips26/leaderboard).")]


def submit(
    results: Annotated[Path, typer.Argument(help="lm-eval results file (results_<date>.json).")],
    samples: Annotated[list[Path] | None, typer.Option(
        "--samples", help="lm-eval samples file (samples_<task>_<date>.jsonl); repeat for each task.")] = None,
    model: Annotated[str, typer.Option("--model", help="Model id, e.g. ORG/NAME as on the Hub.")] = ...,
    revision: Annotated[str, typer.Option("--revision", help="Commit sha of the model weights (7-64 hex).")] = ...,
    precision: Annotated[str | None, typer.Option(
        help="float32, float16, bfloat16, int8, int4 or other (default: the dtype lm-eval recorded).")] = None,
    params: Annotated[int | None, typer.Option(
        help="Parameter count (default: the count lm-eval recorded).")] = None,
    license: Annotated[str, typer.Option("--license", help="Model license, e.g. apache-2.0.")] = "unknown",
    model_type: Annotated[str, typer.Option(
        help="pretrained, fine-tuned, instruction-tuned, rl-tuned, merged or other.")] = "other",
    submitter: Annotated[str | None, typer.Option(help="Who submits (default: the login name).")] = None,
    store: StoreOpt = None,
) -> None:
    """Submit lm-eval results to the leaderboard: validated, deduplicated, stored with a status."""
    from neurips26.leaderboard.schema import TORCH_DTYPES
    from neurips26.leaderboard.store import REJECTED, Store

    if not results.is_file():
        raise FileNotFoundError(f"results file {results} not found")
    missing = [str(p) for p in samples or [] if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"samples file(s) not found: {', '.join(missing)}")
    recorded = _recorded_config(results)
    meta: dict[str, Any] = {
        "model_id": model, "revision": revision,
        "precision": precision or TORCH_DTYPES.get(str(recorded.get("model_dtype") or "")),
        "params": params if params is not None else recorded.get("model_num_parameters"),
        "license": license, "model_type": model_type, "submitter": submitter or getpass.getuser(),
    }
    entry = Store(store).submit(results, {k: v for k, v in meta.items() if v is not None}, samples or [])
    label = {"VALID": "green", "PENDING": "yellow", "REJECTED": "red"}[entry.status]
    what = f"{escape(entry.model_id)} @ {escape(entry.revision)} ({escape(entry.precision)})"
    if entry.duplicate_of is not None:
        console.print(f"duplicate of submission #{entry.id} [{label}]{entry.status}[/{label}] {what}, "
                      f"submitted {entry.submitted_at:%Y-%m-%d %H:%M} UTC: not stored again", highlight=False)
        return
    console.print(f"[{label}]{entry.status}[/{label}] submission #{entry.id}: {what}", highlight=False)
    if entry.status == REJECTED:
        for problem in (entry.reason or "").split("; "):
            console.print(f"  - {escape(problem)}", highlight=False)
        raise typer.Exit(2)
    if not samples and list(results.parent.glob("samples_*.jsonl")):
        console.print("hint: samples files lie next to the results file; submit them with --samples to allow "
                      "paired comparisons", highlight=False)


def leaderboard(
    task: Annotated[str | None, typer.Option(help="One task (default: overall, the mean over tasks).")] = None,
    store: StoreOpt = None,
    limit: Annotated[int, typer.Option(min=1, help="Rows to show.")] = 20,
    group: Annotated[str | None, typer.Option(help="Only the tasks of this group, e.g. locus.")] = None,
) -> None:
    """Print the leaderboard: scores with 95% intervals and the ranks each model could hold."""
    from neurips26.leaderboard.ranking import leaderboard as ranked
    from neurips26.leaderboard.ranking import scope
    from neurips26.leaderboard.store import Store

    board = Store(store)
    table = ranked(board, task=task, group=group)
    if task:
        spec = board.tasks[task]
        title = f"{task} ({spec.primary}, v{spec.version:g})"
    else:
        title = (f"overall{' ' + group if group else ''}: mean of the primary metrics of the "
                 f"{len(scope(board.tasks, group=group))} tasks (tasks: how many a submission has)")
    if table.num_rows == 0:
        console.print(f"{title}: no valid submissions yet in {board.root}", highlight=False)
        return
    out = Table(title=escape(title), caption=f"{table.num_rows} submission(s); 95% intervals; range: the ranks "
                "the intervals allow", caption_justify="left")
    headers = ["rank", "range", "model", "revision", "precision", "params", "score", "95% CI", "n", "id"]
    for header in headers + ([] if task else ["tasks"]):
        out.add_column(header, justify="left" if header in ("model", "revision", "precision") else "right")
    for row in table.slice(0, limit).to_pylist():
        out.add_row(str(row["rank"]), f"{row['rank_best']}–{row['rank_worst']}", escape(row["model_id"]),
                    escape(row["revision"][:10]), escape(row["precision"]), human(row["params"]),
                    f"{row['score']:.3f}", f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]", str(row["n"]),
                    f"#{row['submission_id']}", *([] if task else [str(row["n_tasks"])]))
    console.print(out)


def human(count: int | None) -> str:
    """135M, 7.2B: parameter counts as people write them."""
    if count is None:
        return ""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return str(count)


def _recorded_config(results: Path) -> dict[str, Any]:
    """lm-eval's ``config`` block of a results file (for defaults); empty when unreadable (the store says why)."""
    from neurips26.leaderboard.schema import MAX_RESULTS_BYTES

    try:
        if results.stat().st_size > MAX_RESULTS_BYTES:
            return {}
        config = json.loads(results.read_bytes()).get("config")
    except (OSError, ValueError, AttributeError):
        return {}
    return config if isinstance(config, dict) else {}
