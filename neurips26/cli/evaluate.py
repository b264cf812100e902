"""``neurips26 tasks`` and ``neurips26 eval``: our lm-eval tasks and a run of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from neurips26 import models
from neurips26.errors import UserError
from neurips26.leaderboard.cli import submit as submit_results
from neurips26.options import DataOpt, DeviceOpt
from neurips26.output import console, err
from neurips26.results import parse_model_args, parse_run, summarise
from neurips26.settings import resolve_data
from neurips26.tasks import TASKS_DIR, evaluation


def tasks(
    path: Annotated[bool, typer.Option("--path", help="Print only the tasks folder (for --include_path).")] = False,
) -> None:
    """Show where the lm-eval tasks folder is and list its groups and tasks."""
    if path:
        print(TASKS_DIR)
        return
    known = evaluation.list_tasks()
    console.print(f"tasks folder: {TASKS_DIR}", highlight=False)
    console.print(f"groups: {', '.join(known['groups'])}", highlight=False)
    console.print(f"tasks:  {', '.join(known['tasks'])}", highlight=False)
    console.print(f"lm_eval --include_path {TASKS_DIR} --tasks neurips26 --model hf --model_args pretrained=ORG/NAME",
                  highlight=False)


def task_arguments(metadata: str | None) -> dict | None:
    """``--metadata`` as a dict; a UserError when it is not a JSON object."""
    try:
        task_args = json.loads(metadata) if metadata else None
    except json.JSONDecodeError as exc:
        raise UserError(f"--metadata: not JSON ({exc.msg} at column {exc.colno}): {metadata}") from None
    if task_args is not None and not isinstance(task_args, dict):
        raise UserError(f"--metadata: expected a JSON object, got {metadata}")
    return task_args


def batch_size_value(text: str) -> int | str:
    """``--batch-size``: a positive count, ``auto`` or ``auto:N`` (lm-eval's forms); else a UserError."""
    if text.isdecimal() and int(text) > 0:
        return int(text)
    if text == "auto" or (text.startswith("auto:") and text[5:].isdecimal() and int(text[5:]) > 0):
        return text
    raise UserError(f"--batch-size {text!r}: a positive count, auto or auto:N")


def eval_(
    tasks: Annotated[str, typer.Option(help="Comma-separated tasks or groups.")] = "neurips26",
    model: Annotated[str, typer.Option(help="lm-eval model type: hf, vllm, ...")] = "hf",
    model_args: Annotated[str | None, typer.Option(
        help="lm-eval model args, e.g. pretrained=ORG/NAME,dtype=float32 (default: the embedded model).")] = None,
    limit: Annotated[float | None, typer.Option(help="Examples per task (or a fraction).")] = None,
    num_fewshot: Annotated[int | None, typer.Option(min=0, help="Few-shot examples (from the train split).")] = None,
    batch_size: Annotated[str, typer.Option(help="Batch size, or 'auto'.")] = "1",
    output: Annotated[Path, typer.Option(help="Where lm-eval's results and samples files go.")] = Path("results"),
    device: DeviceOpt = None,
    data: DataOpt = None,
    apply_chat_template: Annotated[bool | None, typer.Option(
        "--apply-chat-template/--no-apply-chat-template",
        help="Prompt through the model's chat template (default: on for chat models; see README).")] = None,
    submit: Annotated[bool, typer.Option(help="Hand the results to the leaderboard store.")] = False,
    revision: Annotated[str | None, typer.Option(help="With --submit: commit sha of the evaluated weights.")] = None,
    metadata: Annotated[str | None, typer.Option(help=(
        "Task arguments as JSON, as lm_eval's --metadata, e.g. '{\"num_frames\": 16}' for the video tasks or "
        "'{\"selections\": \"frameselect\", \"selector\": \"dpp\"}' to show stored frame selections."))] = None,
) -> None:
    """Evaluate a model on our lm-eval tasks (lm_eval.simple_evaluate with our tasks folder).

    Builds nothing: a task whose dataset folder is not built stops with the command that builds it.
    """
    task_args = task_arguments(metadata)
    embedded = model_args is None and model == "hf"
    if submit and not embedded and not revision:
        raise UserError("--submit needs --revision (the commit sha of the evaluated weights)")
    if revision and not submit:
        raise UserError("--revision goes with --submit (it names the evaluated weights on the leaderboard)")
    if limit is not None and (not limit > 0 or (limit > 1 and not limit.is_integer())):
        raise UserError(f"--limit {limit}: a count of examples (1, 2, ...) or a fraction below 1")
    run = evaluation.run([t.strip() for t in tasks.split(",") if t.strip()], model, model_args, limit=limit,
                         num_fewshot=num_fewshot, batch_size=batch_size_value(batch_size),
                         output=output, device=device, data=data, apply_chat_template=apply_chat_template,
                         metadata=task_args)
    table = Table(title="scores")
    for column in ("task", "metric", "value", "stderr", "n"):
        table.add_column(column)
    for row in summarise(parse_run(run.results)):
        table.add_row(Text(str(row["task"])), Text(str(row["metric"])), f"{row['value']:.4f}",
                      "" if row["stderr"] is None else f"{row['stderr']:.4f}", str(row["n"] or ""))
    console.print(table)
    console.print(Text(f"results: {run.results_file}"), highlight=False)
    root = resolve_data(data)
    if root.source == "cache":  # the data rule's last step (a failure names the folder in its one line)
        err.print(Text(root.describe(), style="dim"), highlight=False, soft_wrap=True)
    if submit:
        submit_results(run.results_file, run.samples_files,
                       model=models.DEFAULT_MODEL_ID if embedded else parse_model_args(model_args)
                       .get("pretrained", ""),
                       revision=revision or models.default_model_revision(),
                       license=models.DEFAULT_MODEL_LICENSE if embedded else "unknown",
                       model_type="instruction-tuned" if embedded else "other")
