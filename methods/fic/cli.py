"""``neurips26 fic eval|distill``: sharded multi-turn evaluation on any lm-eval backend, and the
view-asymmetric self-distillation baseline.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(fic, name="fic")``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from neurips26.corpora.fic.records import TASK_TYPES

from neurips26.errors import UserError
from neurips26.options import DataOpt, DeviceOpt, out_option, resource_folder
from neurips26.output import progress

from .protocol import STANDARD_SIMULATIONS, STANDARD_TEMPERATURE
from .simulator import SETTINGS

fic = typer.Typer(help="Found in Conversation: sharded multi-turn evaluation and view-asymmetric self-distillation.",
                  no_args_is_help=True, add_completion=False)


def _names(text: str, known: tuple[str, ...], option: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UserError(f"{option} {text!r}: choose from {', '.join(known)}")
    return names


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
    device: DeviceOpt = None,
    data: DataOpt = None,
    seed: Annotated[int, typer.Option(min=0, help="Sampling seed.")] = 0,
    out: Annotated[Path, out_option("Output folder.")] = Path("fic-eval"),
) -> None:
    """Simulate every test instruction in each setting N times, score the final answers and write transcripts,
    lm-eval-shaped runs per task type (for `neurips26 submit`), summary.json (P, A, U with 95% intervals, the
    degradation) and pau.png."""
    import torch

    from . import backend, report  # lazy: lm-eval and torch load only when the command runs
    from .run import EvalSpec, evaluate  # lazy: as above

    spec = EvalSpec(_names(tasks, TASK_TYPES, "--tasks"), _names(settings, SETTINGS, "--settings"), simulations,
                    limit, temperature=temperature, max_gen_toks=max_gen_toks)
    resource_folder(data, "fic")  # the built folder is found before the model loads
    torch.manual_seed(seed)
    lm, args = backend.load(model, model_args, device=device, batch_size=batch_size)
    name = Path(str(args["pretrained"])).name if model_args is None else str(args["pretrained"])
    with progress() as bars:
        summaries, _ = evaluate(lm, spec, out, model_name=name, model_args={"model": model, **args}, root=data,
                                bar=lambda label, total: bars.steps(f"{label}: model turns", total or None))
    print(report.table(summaries))
    figure = report.plot(summaries, out / "pau.png")
    print(f"transcripts, runs and summary.json in {out}/; plot: {figure}")


@fic.command()
def distill(
    model_args: Annotated[str | None, typer.Option(
        help="transformers model, e.g. pretrained=ORG/NAME (default: the embedded model).")] = None,
    tasks: Annotated[str, typer.Option(help="Comma-separated task types to train and evaluate on.")] = "arithmetic",
    train_limit: Annotated[int | None, typer.Option(min=1, help="Train instructions per task type (default all).")]
    = None,
    steps: Annotated[int, typer.Option(min=1, help="Training steps (one instruction each).")] = 100,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 2e-4,
    lora: Annotated[bool, typer.Option("--lora/--full", help="LoRA adapters (merged after) or full fine-tuning.")]
    = True,
    lora_rank: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 8,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Teacher response tokens.")] = 64,
    on_policy: Annotated[bool, typer.Option("--on-policy/--ack", help=(
        "The student's sharded view holds its own replies between shards (FiC's), or a fixed acknowledgement."))]
    = True,
    teacher_view: Annotated[str, typer.Option(
        help="The teacher's single-turn view: concat (the shards as one list, FiC's) or full (the original prompt).")]
    = "concat",
    settings: Annotated[str, typer.Option(help="Settings evaluated before and after.")] = "full,concat,sharded",
    simulations: Annotated[int, typer.Option(min=1, help="Simulations per instruction (N).")] = 3,
    limit: Annotated[int | None, typer.Option(min=1, help="Test instructions per task type.")] = 10,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature of the evaluation.")]
    = STANDARD_TEMPERATURE,
    max_gen_toks: Annotated[int | None, typer.Option(min=1, help="Tokens per evaluated reply.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Conversations per generate call.")] = 8,
    device: DeviceOpt = None,
    data: DataOpt = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of training order and sampling.")] = 0,
    out: Annotated[Path, out_option("Output folder.")] = Path("fic-distill"),
) -> None:
    """View-asymmetric self-distillation: evaluate, train the student on the multi-turn view to match the frozen
    teacher on the concatenated view (train split), evaluate again; report recovery = (P_sharded,after -
    P_sharded,before) / (P_full - P_sharded,before), whether the full setting dropped, the cost, and the plot."""
    import json

    import torch

    from neurips26 import models  # lazy: torch loads only when the command runs

    from . import backend, report  # lazy: torch, transformers and lm-eval load only when the command runs
    from .distill import DistillConfig  # lazy: as above
    from .distill import distill as train  # lazy: as above
    from .evaluate import instructions  # lazy: as above
    from .run import EvalSpec, evaluate, outcome  # lazy: as above

    task_types = _names(tasks, TASK_TYPES, "--tasks")
    _names(teacher_view, ("concat", "full"), "--teacher-view")
    spec = EvalSpec(task_types, _names(settings, SETTINGS, "--settings"), simulations, limit,
                    temperature=temperature, max_gen_toks=max_gen_toks)
    if not {"full", "sharded"} <= set(spec.settings):
        raise UserError("--settings must include full and sharded (recovery compares them)")
    train_rows = [row for t in task_types for row in instructions(t, "train", train_limit, data)[0]]
    if not train_rows:
        raise UserError(f"no train instructions for {tasks} (translation has no train part)")
    where = models.device(device)
    model, tokenizer, args = backend.load_transformers(model_args, where)
    name = Path(str(args["pretrained"])).name
    torch.manual_seed(seed)
    with progress() as bars:
        def bar(label: str, total: int) -> Callable[[int], None]:
            return bars.steps(label, total or None)

        before, scores_before = evaluate(backend.wrap(model, tokenizer, batch_size), spec, out / "before",
                                         model_name=name, model_args=args, root=data, bar=bar)
        config = DistillConfig(steps=steps, lr=lr, lora=lora, lora_rank=lora_rank, max_new_tokens=max_new_tokens,
                               seed=seed, teacher_view=teacher_view, on_policy=on_policy)
        student, cost = train(model, tokenizer, train_rows, config, where, bar("distilling", steps))
        student.save_pretrained(out / "student")
        tokenizer.save_pretrained(out / "student")
        torch.manual_seed(seed)
        after, scores_after = evaluate(backend.wrap(student, tokenizer, batch_size), spec, out / "after",
                                       model_name=f"{name}-fic-distilled",
                                       model_args={"pretrained": str(out / "student")}, root=data, bar=bar)
    result = {"outcome": outcome(before, after, scores_before, scores_after), "cost": cost.as_dict(),
              "config": vars(config), "train_instructions": len(train_rows), "eval": vars(spec) | {"device": where}}
    (out / "distill.json").write_text(json.dumps(result, indent=1, default=list) + "\n", encoding="utf-8")
    print(report.table({f"{t} {when}": s[t] for t in task_types for when, s in (("before", before), ("after", after))}))
    for task_type, row in result["outcome"].items():
        change = row["full_change"]
        recovery = "n/a (no gap)" if row["recovery"] is None else f"{row['recovery']:+.3f}"
        print(f"{task_type}: recovery {recovery}; P_full change {change['delta']:+.3f} "
              f"[{change['delta_ci'][0]:+.2f}, {change['delta_ci'][1]:+.2f}]{' DROPPED' if change['dropped'] else ''}")
    print(f"cost: teacher {cost.teacher_seconds:.1f} s, training {cost.steps} steps {cost.train_seconds:.1f} s, "
          f"{cost.trainable_params:,} trainable parameters, peak {cost.peak_memory_mb:.0f} MB on {cost.device}")
    figure = report.plot({f"{t} {w}": s[t] for t in task_types for w, s in (("before", before), ("after", after))},
                         out / "pau_before_after.png", "FiC self-distillation: P, A, U before and after")
    print(f"student in {out / 'student'}; runs in {out}/before and {out}/after; distill.json; plot: {figure}")
