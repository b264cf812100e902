"""``neurips26 unlearn``: run unlearning baselines on a RoleBench-Unlearn forget set and score them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from neurips26.options import DataOpt, DeviceOpt, ModelOpt, out_option


def unlearn(
    method: Annotated[str, typer.Option(
        help="Method(s), comma-separated, or 'all': reference, refusal, ga, gd, npo, rolemoe.")] = "npo",
    split: Annotated[Literal["forget01", "forget05", "forget10"], typer.Option(help="Forget set.")] = "forget05",
    model: ModelOpt = None,
    data: DataOpt = None,
    out: Annotated[Path, out_option("Results go to OUT/<split>/<method>/.")] = Path("unlearn"),
    full: Annotated[bool, typer.Option("--full/--lora", help="Train all weights instead of a LoRA adapter.")] = False,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 12,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per step (forget; and retain).")] = 4,
    lr: Annotated[float | None, typer.Option(help="Learning rate (default 1e-3 LoRA, 2e-5 full).")] = None,
    max_length: Annotated[int, typer.Option(min=16, help="Tokens per training example.")] = 128,
    lora_r: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 8,
    retain_weight: Annotated[float, typer.Option(help="gd: weight of the retain NLL.")] = 1.0,
    npo_beta: Annotated[float, typer.Option(min=1e-6, help="npo: beta.")] = 0.1,
    npo_retain_weight: Annotated[float, typer.Option(help="npo: weight of a retain NLL term (NPO-RT).")] = 0.0,
    moe_experts: Annotated[int, typer.Option(min=2, help="rolemoe: LoRA experts per layer (rank --lora-r).")] = 4,
    moe_steps: Annotated[int, typer.Option(min=0, help="rolemoe: stage-1 steps (specialise the experts to roles); "
                                                       "--steps is stage 2 (forget).")] = 24,
    moe_batch_size: Annotated[int, typer.Option(min=2, help="rolemoe: stage-1 examples per step (two per role).")] = 8,
    moe_lr: Annotated[float, typer.Option(help="rolemoe: stage-1 learning rate.")] = 3e-3,
    specialization_weight: Annotated[float, typer.Option(help="rolemoe: weight of -I(role; expert).")] = 1.0,
    disentanglement_weight: Annotated[float, typer.Option(help="rolemoe: weight of the expert overlap.")] = 0.1,
    moe_forget_top: Annotated[int, typer.Option(min=1, help="rolemoe: experts forgotten per target role (its most "
                                                            "used).")] = 1,
    moe_routing: Annotated[str, typer.Option(help="rolemoe: learned (router trained by -I(role; expert)) or owned "
                                                  "(one expert per role, router taught the owners, top-1).")]
    = "learned",
    moe_forget_loss: Annotated[str, typer.Option(help="rolemoe: stage-2 forgetting loss, npo or gd.")] = "npo",
    eval_limit: Annotated[int, typer.Option(min=0, help="Test questions per set (forget, retain, general); 0: all.")]
    = 24,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens generated per response.")] = 48,
    eval_batch_size: Annotated[int, typer.Option(min=1, help="Prompts per generation batch.")] = 16,
    device: DeviceOpt = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed for the order of training examples.")] = 0,
) -> None:
    """Unlearn the target roles of a forget set with baselines; write each model (or adapter) and its evaluation.

    Every method is scored on the target roles' and the other roles' held-out questions and on the general set,
    and compared with the reference (role prompting, no unlearning) in the combined score. Defaults are a small
    CPU setting; on a GPU use e.g. --steps 200 --batch-size 16 --eval-limit 0 --eval-batch-size 64.
    """
    from rich.console import Console
    from rich.table import Table

    from . import evaluate, experiment, train  # lazy: torch, so the command line starts without it
    from .methods import ORDER, UNLEARNING_METHODS  # lazy: torch, so the command line starts without it

    names = list(ORDER) if method.strip() == "all" else [m.strip() for m in method.split(",") if m.strip()]
    for name in names:
        UNLEARNING_METHODS.get(name)  # UnknownNameError for an unknown method, before any work
    console, err = Console(width=200), Console(stderr=True)
    folder = experiment.dataset(data)
    train_cfg = train.TrainConfig(steps=steps, batch_size=batch_size, lr=lr, max_length=max_length, lora=not full,
                                  lora_r=lora_r, lora_alpha=2 * lora_r, retain_weight=retain_weight,
                                  npo_beta=npo_beta, npo_retain_weight=npo_retain_weight, seed=seed,
                                  moe_experts=moe_experts, moe_steps=moe_steps, moe_batch_size=moe_batch_size,
                                  moe_lr=moe_lr, specialization_weight=specialization_weight,
                                  disentanglement_weight=disentanglement_weight, moe_forget_top=moe_forget_top,
                                  moe_routing=moe_routing, moe_forget_loss=moe_forget_loss)
    eval_cfg = evaluate.EvalConfig(limit=eval_limit or None, max_new_tokens=max_new_tokens,
                                   batch_size=eval_batch_size)

    def say(message: str) -> None:
        err.print(f"[dim]{message}[/dim]", highlight=False)

    reference = experiment.reference_parts(split, model, folder, out, eval_cfg, device, say)
    rows = []
    for name in names:
        if name == "reference":  # evaluated (or found up to date) just above
            rows.append(experiment.saved_row(out, split, name))
            continue
        result = experiment.run(name, split, model, folder, out, train_cfg, eval_cfg, device, reference, say)
        rows.append(result.row())
        console.print(f"{name}: written {result.folder}", highlight=False)
        if result.routing:
            (result.folder / "routing.md").write_text(experiment.routing_table(result.routing), encoding="utf-8")
            console.print(experiment.routing_table(result.routing), highlight=False)
    table = Table(title=f"RoleBench-Unlearn {split} ({folder})")
    for header in ("method", *experiment.HEADERS.values()):
        table.add_column(header, justify="left" if header == "method" else "right", no_wrap=True)
    text = experiment.markdown_table(rows)
    for line in text.splitlines()[2:]:
        table.add_row(*[c.strip() for c in line.strip("|").split("|")])
    console.print(table)
    target = Path(out) / split
    (target / "results.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    (target / "results.md").write_text(text, encoding="utf-8")
    console.print(f"tables: {target / 'results.md'}, {target / 'results.json'}", highlight=False)
