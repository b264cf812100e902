"""``neurips26 rediff train|eval``: train the small masked-diffusion LM and its ReDiff refiner, then measure the
error cascade of both against tokens committed per step.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(rediff, name="rediff")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from neurips26.errors import UserError
from neurips26.models import device as choose_device
from neurips26.options import DeviceOpt, out_option
from neurips26.output import progress

from .cascade import speeds, summarise
from .data import evaluation_set
from .decoding import decode
from .protocol import STANDARD_SIZE
from .report import plot, table, write_run
from .schedule import Schedule

rediff = typer.Typer(help="ReDiff: error cascades in parallel decoding of a masked-diffusion LM, and the refiner.",
                     no_args_is_help=True, add_completion=False)
BASE, REFINER = "base.pt", "rediff.pt"
DEFAULT = Schedule()


def _ks(text: str | None, length: int) -> list[int]:
    if not text:
        return speeds(length)
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise UserError(f"--tokens-per-step {text!r}: comma-separated integers, e.g. 1,2,4,8") from None
    if not ks or ks[0] < 1 or ks[-1] > length:
        raise UserError(f"--tokens-per-step: each value between 1 and the answer length {length}")
    return ks


@rediff.command()
def train(
    out: Annotated[Path, out_option("Folder for base.pt, rediff-stage1.pt, rediff.pt and training.json.")]
    = Path("rediff-models"),
    digits: Annotated[int, typer.Option(min=1, max=17, help="Digits per operand of the addition problems.")]
    = DEFAULT.digits,
    steps: Annotated[int, typer.Option(min=1, help="Masked-diffusion pre-training steps (shared by both arms).")]
    = DEFAULT.steps,
    stage1_steps: Annotated[int, typer.Option(min=0, help="ReDiff stage 1 (synthetic corruptions) steps.")]
    = DEFAULT.stage1_steps,
    stage2_steps: Annotated[int, typer.Option(min=0, help="ReDiff stage 2 (own drafts, corrected) steps.")]
    = DEFAULT.stage2_steps,
    batch_size: Annotated[int, typer.Option(min=2, help="Problems per step.")] = DEFAULT.batch_size,
    dim: Annotated[int, typer.Option(min=8, help="Model width.")] = DEFAULT.dim,
    layers: Annotated[int, typer.Option(min=1, help="Transformer layers.")] = DEFAULT.layers,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the initial weights and the training problems.")] = 0,
    device: DeviceOpt = None,
) -> None:
    """Pre-train a masked-diffusion LM on generated addition, then branch it: ReDiff (stage 1 on synthetic
    corruptions, stage 2 on its own parallel drafts corrected toward the exact answers) and the base, trained as
    many more steps with the masked-diffusion objective, so both models have the same total training steps."""
    from .experiment import train_arms  # lazy: torch, only when a command runs
    from .model import save  # lazy: torch, only when a command runs

    schedule = Schedule(digits, steps, stage1_steps, stage2_steps, batch_size, dim, layers)
    where = choose_device(device)
    with progress(transient=False) as bars:
        arms = train_arms(schedule, seed, where, bars.steps)
    costs = {arm: [c.as_dict() for c in arm_costs] for arm, arm_costs in arms.costs.items()}
    save(arms.base, out / BASE, "base", {"costs": costs["base"]})
    save(arms.stage1, out / "rediff-stage1.pt", "rediff-stage1", {"costs": costs["rediff"][:2]})
    save(arms.rediff, out / REFINER, "rediff-stage2", {"costs": costs["rediff"]})
    steps_of = {arm: arms.train_steps(arm) for arm in costs}
    (out / "training.json").write_text(json.dumps({"device": where, "seed": seed, "schedule": schedule.as_dict(),
                                                   "train_steps": steps_of, "costs": costs}, indent=1))
    for arm, arm_costs in arms.costs.items():
        for cost in arm_costs:
            print(f"{arm:7} {cost.stage:14} {cost.steps:5d} steps  {cost.seconds:8.1f} s  "
                  f"peak {cost.peak_memory_mb:8.1f} MB  loss {cost.final_loss:.4f}")
    print(f"train steps: base {steps_of['base']}, ReDiff {steps_of['rediff']}")
    print(f"models in {out}/ (base: {BASE}, ReDiff: {REFINER}); next: neurips26 rediff eval --models {out}")


@rediff.command("eval")
def eval_(
    models: Annotated[Path, typer.Option(help="The folder `neurips26 rediff train` wrote.")] = Path("rediff-models"),
    out: Annotated[Path, out_option("Folder for the results, samples, curves.json and the plot.")]
    = Path("rediff-eval"),
    tokens_per_step: Annotated[str | None, typer.Option(
        help="Comma-separated tokens committed per step (default 1, 2, 4, ... and the whole answer).")] = None,
    problems: Annotated[int, typer.Option(min=1, help="Evaluation problems (the standard run: 512).")]
    = STANDARD_SIZE,
    window: Annotated[int, typer.Option(min=1, help="Cascade lift: how near (in tokens) an earlier error counts.")]
    = 2,
    device: DeviceOpt = None,
) -> None:
    """Decode the evaluation problems with the base model (no revision) and with ReDiff (revision allowed) at
    each number of tokens per step; write lm-eval-shaped results per run, curves.json and speed_quality.png."""
    from .model import TorchDenoiser, load  # lazy: torch, only when a command runs

    where = choose_device(device)
    base, _, base_info = load(models / BASE, where)
    refiner, _, info = load(models / REFINER, where)
    data = evaluation_set(base.config["digits"], problems)
    ks = _ks(tokens_per_step, data.answer_length)
    decoders = {"base": (base, False, models / BASE), "rediff": (refiner, True, models / REFINER)}
    curves: dict[str, list[dict]] = {}
    with progress() as bars:
        advance = bars.steps("decoding", len(ks) * len(decoders))
        for name, (model, revises, path) in decoders.items():
            for k in ks:
                trace = decode(TorchDenoiser(model, revises=revises), data.prompts, data.answer_length, k)
                summary = summarise(trace, data.targets, window)
                write_run(out / name / f"k{k}", data, trace, summary, f"rediff-{name}",
                          {"path": str(path), "revise": revises, **model.config}, {"device": where})
                curves.setdefault(name, []).append({"decoder": name, **summary})
                advance()
    training = {"base": base_info.get("costs", []), "rediff": info.get("costs", [])}
    (out / "curves.json").write_text(json.dumps({**curves, "training": training}, indent=1))
    figure = plot(curves, out / "speed_quality.png")
    print(table([row for rows in curves.values() for row in rows]))
    print(f"runs in {out}/<decoder>/k<k>/ (lm-eval results + samples); curves: {out / 'curves.json'}; plot: {figure}")
