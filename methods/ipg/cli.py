"""``neurips26 ipg``: which neurons (or SAE features) drive a model's outcome on a task."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

import typer

from neurips26.options import DeviceOpt, ModelOpt, out_option
from neurips26.output import progress


def ipg(
    model: ModelOpt = None,
    task: Annotated[str, typer.Option(
        help="arithmetic (generated word problems), arithmetic:STEPS, or a JSONL file of {question, answer}.")]
    = "arithmetic",
    layers: Annotated[str | None, typer.Option(help="Comma-separated layers, e.g. 10,15 (default: the middle one).")]
    = None,
    steps: Annotated[int, typer.Option(help="Riemann steps M over alpha in (0, 1).")] = 8,
    samples: Annotated[int, typer.Option(help="Trajectories N per step and problem (>= 2).")] = 8,
    problems: Annotated[int, typer.Option(help="Number of problems.")] = 16,
    max_new_tokens: Annotated[int, typer.Option(help="Longest completion, in tokens.")] = 32,
    temperature: Annotated[float, typer.Option(help="Sampling temperature of the policy.")] = 1.0,
    outcome: Annotated[str, typer.Option(help="Scorer: number (final number matches) or contains.")] = "number",
    sae: Annotated[Path | None, typer.Option(
        exists=True, help="SAE weights (.safetensors/.pt/.npz: W_enc, b_enc, W_dec, b_dec[, threshold]): attribute its "
             "features at the one layer in --layers instead of MLP neurons.")] = None,
    sae_site: Annotated[Literal["resid", "mlp"], typer.Option(
        help="Where the SAE reads: resid (layer output) or mlp (MLP output).")] = "resid",
    module: Annotated[str | None, typer.Option(
        help="Projection whose input holds the neurons, e.g. 'model.layers.{layer}.mlp.down_proj' "
             "(default: found by name).")] = None,
    joint: Annotated[bool, typer.Option(help="Scale all layers along one path (default: one layer at a time).")]
    = False,
    top_k: Annotated[int, typer.Option(help="Components ablated / amplified in the validation.")] = 10,
    gamma: Annotated[float, typer.Option(help="Amplification factor for the top-k.")] = 2.0,
    seeds: Annotated[int, typer.Option(help="Random k-sets compared with the top-k.")] = 3,
    eval_samples: Annotated[int, typer.Option(help="Trajectories per problem for each validation condition.")] = 16,
    ablation: Annotated[str, typer.Option(help="zero or mean ablation.")] = "zero",
    validation: Annotated[bool, typer.Option("--validate/--no-validate", help="Run the ablation study.")] = True,
    heldout: Annotated[bool, typer.Option("--heldout/--in-sample", help=(
        "Validate on --problems further problems (default) or on the attributed ones."))] = True,
    endpoints: Annotated[bool, typer.Option(help="Also sample J(0) and J(1) for the completeness check.")] = True,
    batch_rows: Annotated[int, typer.Option(help="Trajectories per batched model pass.")] = 64,
    seed: Annotated[int, typer.Option(min=0, help="Seed for problems and sampling.")] = 0,
    device: DeviceOpt = None,
    out: Annotated[Path, out_option("Output folder (Hub-ready dataset + ipg.png).")] = Path("ipg"),
) -> None:
    """Integrated Policy Gradient: attribute a task's outcome (e.g. a correct final answer) to MLP neurons.

    Scales the components of each layer by alpha from 0 to 1, samples completions from the scaled model,
    and integrates the score-function policy gradient of the expected outcome. Then compares with
    activation magnitude, gradient x activation and integrated gradients on the answer log-probability,
    ablates and amplifies the top-k, and writes a ranked table (Hub-ready folder) and a plot to --out.
    """
    from rich.console import Console
    from rich.table import Table

    from .run import Settings, parse_layers, run  # lazy: torch, so the command line starts without it

    settings = Settings(model, task, parse_layers(layers), steps, samples, problems, max_new_tokens, temperature,
                        sae, sae_site, module, joint, outcome, top_k, gamma, seeds, eval_samples, ablation,
                        validation, heldout, endpoints, batch_rows, seed, device or "auto",
                        command=shlex.join(["neurips26", "ipg", *sys.argv[1:][sys.argv[1:2] == ["ipg"]:]]))
    settings.check()
    console = Console()
    with progress(lines=True) as bars:  # off a terminal (a log file): a line per tenth of each stage
        stages: dict[str, Callable[[int], None]] = {}

        def advance(description: str, step: int, total: int) -> None:
            if description not in stages:
                stages[description] = bars.steps(description, total)
            stages[description](step)

        result = run(settings, out, advance)

    table = Table(title=f"top components by IPG ({result['meta']['model_name']}, {task})")
    for column in ("rank", "component", "ipg", "stderr", "activation", "grad_x_act", "integrated_gradients"):
        table.add_column(column, justify="right")
    for row in result["components"][:15]:
        table.add_row(str(row["rank"]), row["component"], *(f"{row[c]:.4g}" for c in
                      ("ipg", "stderr", "activation", "grad_x_act", "integrated_gradients")))
    console.print(table)
    for name, c in result["meta"]["completeness"].items():
        console.print(f"completeness {name}: sum IPG = {c['sum_ipg']:.4f} (s.e. {c['stderr_sum']:.4f}), "
                      f"J(1) - J(0) = {c['j_gap']:.4f}")
    if result["validation"]:
        table = Table(title=f"validation (k={top_k}, gamma={gamma}, {seeds} random seeds, 95% intervals)")
        for column in ("condition", "ranking", "seed", "outcome", "delta", "interval"):
            table.add_column(column, justify="right")
        for r in result["validation"]:
            interval = f"[{r['delta_low']:+.3f}, {r['delta_high']:+.3f}]"
            table.add_row(r["condition"], r["ranking"], "" if r["seed"] < 0 else str(r["seed"]),
                          f"{r['outcome']:.3f}", f"{r['delta']:+.3f}", interval)
        console.print(table)
    counts = result["meta"]["counts"]
    console.print(f"{counts['generate_batches']} sampling and {counts['gradient_batches']} gradient passes, "
                  f"{counts['generate_rows']} trajectories, {result['meta']['seconds']:.0f} s; wrote {out}")
