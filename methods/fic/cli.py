"""``neurips26 fic eval|distill``: sharded multi-turn evaluation on any lm-eval backend, and the
view-asymmetric self-distillation baseline.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(fic, name="fic")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from neurips26.corpora.fic.records import TASK_TYPES
from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from neurips26.errors import UserError

from .protocol import STANDARD_SIMULATIONS, STANDARD_TEMPERATURE
from .simulator import SETTINGS

fic = typer.Typer(help="Found in Conversation: sharded multi-turn evaluation and view-asymmetric self-distillation.",
                  no_args_is_help=True, add_completion=False)
err = Console(stderr=True)


def _names(text: str, known: tuple[str, ...], option: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UserError(f"{option} {text!r}: choose from {', '.join(known)}")
    return names


def _progress() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), MofNCompleteColumn(),
                    TextColumn("model turns"), TimeElapsedColumn(), console=err, transient=True)


@fic.command("eval")
def eval_(
    model: Annotated[str, typer.Option(help="lm-eval model backend: hf, vllm, ...")] = "hf",
    model_args: Annotated[str | None, typer.Option(
        help="lm-eval model arguments, e.g. pretrained=ORG/NAME,dtype=bfloat16 (default: the embedded model).")]
    = None,
    tasks: Annotated[str, typer.Option(help="Comma-separated task types.")] = ",".join(TASK_TYPES),
    settings: Annotated[str, typer.Option(help="Comma-separated settings.")] = ",".join(SETTINGS),
    simulations: Annotated[int, typer.Option(min=1, help="Simulations per instruction and setting (N).")]
    = STANDARD_SIMULATIONS,
    limit: Annotated[int | None, typer.Option(min=1, help="First N test instructions per task (not standard).")]
    = None,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature (0: greedy).")]
    = STANDARD_TEMPERATURE,
    max_gen_toks: Annotated[int | None, typer.Option(min=1, help="Tokens per reply (default: per task type).")]
    = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Conversations per generate call.")] = 8,
    device: Annotated[str | None, typer.Option(help="cuda or cpu (default: cuda when present).")] = None,
    data: Annotated[Path | None, typer.Option(help="Folder holding the built fic folder.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("fic-eval"),
) -> None:
    """Simulate every test instruction in each setting N times, score the final answers and write transcripts,
    lm-eval-shaped runs per task type (for `neurips26 submit`), summary.json (P, A, U with 95% intervals, the
    degradation) and pau.png."""
    import torch

    from . import backend, report  # lazy: lm-eval and torch load only when the command runs
    from .run import EvalSpec, evaluate  # lazy: as above

    spec = EvalSpec(_names(tasks, TASK_TYPES, "--tasks"), _names(settings, SETTINGS, "--settings"), simulations,
                    limit, temperature=temperature, max_gen_toks=max_gen_toks)
    torch.manual_seed(seed)
    lm, args = backend.load(model, model_args, device=device, batch_size=batch_size)
    name = Path(str(args["pretrained"])).name if model_args is None else str(args["pretrained"])
    with _progress() as progress:
        def bar(label: str, total: int):
            task = progress.add_task(label, total=None)
            return lambda n: progress.advance(task, n)

        summaries = evaluate(lm, spec, out, model_name=name, model_args={"model": model, **args}, root=data, bar=bar)
    print(report.table(summaries))
    figure = report.plot(summaries, out / "pau.png")
    print(f"transcripts, runs and summary.json in {out}/; plot: {figure}")
