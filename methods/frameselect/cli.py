"""``neurips26 frameselect run|replay|list``: compare frame selectors, re-answer stored selections, list components.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(frameselect, name="frameselect")``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from neurips26.errors import UserError
from neurips26.options import DataOpt, data_root, out_option, resource_folder
from neurips26.output import progress, save_figure

frameselect = typer.Typer(help="FrameSelect: compare frame selectors, replay stored selections, list components.",
                          no_args_is_help=True, add_completion=False)
console = Console(width=max(Console().width, 132))  # the comparison table is wide
err = Console(stderr=True)
HIGHLIGHT = {"uniform": {"lw": 2.5, "color": "black", "ls": "--"}, "framerouter": {"lw": 2.5, "color": "crimson"}}
METRIC_LABELS = {"recall": "R", "precision": "P", "tiou": "IoU", "coverage": "Cov", "redundancy": "Red"}


class Format(StrEnum):
    """How ``run`` prints its result rows."""

    table = "table"
    json = "json"
    csv = "csv"


RESULT_FIELDS = ("benchmark", "selector", "evaluator", "budget", "answering_model", "metric", "value", "n")


def format_rows(rows: Sequence[dict[str, Any]], fmt: Format | str) -> str:
    """Result rows as JSON (a list of objects) or CSV (a header and one line per row)."""
    if Format(fmt) is Format.json:
        return json.dumps(list(rows), indent=1)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[f for f in RESULT_FIELDS if any(f in r for r in rows)] or RESULT_FIELDS,
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().rstrip("\n")


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise UserError(f"{what} must be integers >= 1, got {text!r}")
    return values


def comparison_table(rows: Sequence[dict[str, Any]], benchmark: str, budgets: Sequence[int]) -> Table:
    """Rows: selectors; columns: budgets; cells: the selection-level metrics (R P IoU Cov Red)."""
    cells: dict[tuple[str, int], dict[str, float]] = {}
    counts: dict[str, int] = {}
    for r in rows:
        if r["benchmark"] == benchmark and r["evaluator"] == "selection":
            cells.setdefault((r["selector"], r["budget"]), {})[r["metric"]] = r["value"]
            if r["metric"] == "recall":
                counts[r["selector"]] = max(counts.get(r["selector"], 0), r["n"])
    legend = "/".join(METRIC_LABELS.values())
    table = Table(title=f"{benchmark}: selection-level metrics ({legend}) per budget")
    table.add_column("selector")
    table.add_column("n")
    for b in budgets:
        table.add_column(f"{b} frames", justify="right")
    for selector in sorted({s for s, _ in cells}):
        row = [selector, str(counts.get(selector, ""))]
        for b in budgets:
            values = cells.get((selector, b), {})
            row.append("/".join("-" if values.get(m) is None else f"{values[m]:.2f}".removeprefix("0")
                                for m in METRIC_LABELS))
        table.add_row(*row)
    return table


def plot(rows: Sequence[dict[str, Any]], benchmark: str, path: Path) -> Path:
    """One panel per selection-level metric: value against budget, a line per selector."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    selectors = sorted({r["selector"] for r in rows if r["benchmark"] == benchmark})
    fig, axes = plt.subplots(1, len(METRIC_LABELS), figsize=(4 * len(METRIC_LABELS), 4), sharex=True)
    cmap = plt.get_cmap("tab20")
    for ax, metric in zip(axes, METRIC_LABELS, strict=True):
        for k, selector in enumerate(selectors):
            pts = sorted((r["budget"], r["value"]) for r in rows if r["benchmark"] == benchmark
                         and r["selector"] == selector and r["metric"] == metric and r["evaluator"] == "selection")
            if pts:
                style = HIGHLIGHT.get(selector, {"lw": 1})
                ax.plot(*zip(*pts, strict=True), marker="o", ms=3, label=selector,
                        **({"color": cmap(k % 20)} | style))
        ax.set_xscale("log", base=2)
        ax.set_title(metric)
        ax.set_xlabel("frame budget")
    axes[0].legend(fontsize=6, ncol=2)
    fig.suptitle(f"FrameSelect on {benchmark}")
    return save_figure(fig, path)


@frameselect.command()
def run(
    benchmark: Annotated[str, typer.Option(help="tar or clovr (comma-separated for both).")] = "tar",
    selectors: Annotated[str | None, typer.Option(help="Comma-separated selectors (default: all, plus "
                                                       "framerouter).")] = None,
    budgets: Annotated[str, typer.Option(help="Comma-separated frame budgets.")] = "8,16,32,64",
    encoder: Annotated[str, typer.Option(help="Encoder of the candidate pools.")] = "descriptor",
    candidate_fps: Annotated[float, typer.Option(help="Candidate frames per second of video.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Seed given to the selectors.")] = 0,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N questions with evidence.")] = None,
    data: DataOpt = None,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="PNG to write (default: "
                                                                  "frameselect-<benchmark>.png).")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the result rows as JSON.")] = None,
    common: Annotated[bool, typer.Option("--common", help="Only questions every selector ran on (query-aware "
                                                          "selectors refuse questions the encoder cannot embed).")
                      ] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table: the comparison table per benchmark (and a plot); "
                                                         "json or csv: every result row on stdout.")
                   ] = Format.table,
) -> None:
    """Run selectors at several budgets on a benchmark; print the comparison table (or the rows) and write a plot."""
    from neurips26.methods.frameselect import BENCHMARKS, SELECTORS, runner  # lazy: numpy/scipy; CLI start-up

    names = [s.strip() for s in selectors.split(",") if s.strip()] if selectors else [*SELECTORS.names(),
                                                                                        runner.ROUTER]
    sizes = _ints(budgets, "--budgets")
    wanted = [b.strip() for b in benchmark.split(",") if b.strip()]
    for name in wanted:
        BENCHMARKS.get(name)  # an unknown benchmark is refused before any work ...
    folders = {name: resource_folder(data, name) for name in wanted}  # ... and so is an unbuilt one
    all_rows: list[dict[str, Any]] = []
    for name in wanted:
        with progress() as bars:
            _, rows, refused = runner.run(name, names, sizes, encoder, candidate_fps, seed, folders[name], limit,
                                          common=common, progress=bars.track(f"{name}: selecting"))
        for selector, n in sorted(refused.items()):
            err.print(f"[yellow]{selector}[/yellow] refused {n} (question, budget) selection(s): the pool "
                      "lacks what it needs (e.g. query features for a question the encoder cannot embed)",
                      highlight=False)
        if fmt is Format.table:
            console.print(comparison_table(rows, name, sizes))
            path = plot(rows, name, plot_path or Path(f"frameselect-{name}.png"))
            console.print(f"plot: {path}", highlight=False)
        elif plot_path:
            plot(rows, name, plot_path)
        all_rows += rows
    if fmt is not Format.table:
        typer.echo(format_rows(all_rows, fmt))
    if json_path:
        json_path.write_text(json.dumps(all_rows, indent=1) + "\n", encoding="utf-8")
        err.print(f"results: {json_path}", highlight=False)


@frameselect.command()
def replay(
    folder: Annotated[Path, typer.Argument(help="A folder written by `neurips26 build frameselect`.")],
    model: Annotated[str, typer.Option(help="Answering model: tiny-idefics3[-seed<k>], hf:<model id or folder>, "
                                            "or a model folder.")],
    data: DataOpt = None,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Answer length in tokens.")] = 16,
    selectors: Annotated[str | None, typer.Option(help="Only these stored selectors (comma-separated).")] = None,
    budgets: Annotated[str | None, typer.Option(help="Only these stored budgets (comma-separated).")] = None,
) -> None:
    """Answer the stored selections with another model (no selector runs) and add its rows to `results`; the
    videos are read from the built tar/ and clovr/ folders under --data."""
    from neurips26.methods.frameselect.tables import replay as replay_folder  # lazy: every selector; CLI start-up

    with progress() as bars:
        rows = replay_folder(folder, model, data_root(data), bars.track(f"answering with {model}"),
                             selectors=[s.strip() for s in selectors.split(",")] if selectors else None,
                             budgets=_ints(budgets, "--budgets") if budgets else None, max_new_tokens=max_new_tokens)
    table = Table(title=f"answer-level results, {model}")
    for name in ("benchmark", "selector", "budget", "metric", "value", "n"):
        table.add_column(name)
    for r in rows:
        table.add_row(r["benchmark"], r["selector"], str(r["budget"]), r["metric"], f"{r['value']:.3f}", str(r["n"]))
    console.print(table)
    console.print(f"[green]wrote[/green] {len(rows)} rows to {folder}/data/results", highlight=False)


@frameselect.command("train-bgrpo")
def train_bgrpo(
    train_folder: Annotated[Path, typer.Option(
        "--train", help="A built folder of the benchmark's TRAIN questions (never the ones you evaluate on), e.g. "
                        "`neurips26 generate clovr --seed 1` then build.")],
    benchmark: Annotated[str, typer.Option(help="Benchmark reader of --train: clovr or tar.")] = "clovr",
    out: Annotated[Path | None, out_option("Model folder to write (default: <cache>/frameselect/bgrpo, which the "
                                           "bgrpo selector reads when given no model=).")] = None,
    members: Annotated[int, typer.Option(min=1, help="Posterior ensemble members.")] = 5,
    epochs: Annotated[int, typer.Option(min=0, help="GRPO passes over the train questions (0: saliency only).")] = 3,
    group: Annotated[int, typer.Option(min=2, help="GRPO group size (picks per question per step).")] = 8,
    budget: Annotated[int, typer.Option(min=1, help="Frames per pick while training.")] = 8,
    candidate_fps: Annotated[float, typer.Option(help="Candidate frames per second (use the same when "
                                                      "selecting).")] = 2.0,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap, anchors and GRPO samples.")] = 0,
    answerer: Annotated[str, typer.Option(help="GRPO's frozen answerer (the reward is its likelihood of the gold "
                                               "answer): tiny-idefics3[-seed<k>], hf:<model> or a model folder.")
                        ] = "tiny-idefics3",
    calibration: Annotated[Path | None, typer.Option(help="A built folder of OTHER questions on which the answerer's "
                                                          "confidence is fitted (default: confidence 0.5).")] = None,
) -> None:
    """Train the Bayesian GRPO selector (bgrpo) on a train split and write a Hub-ready model folder."""
    from neurips26.methods.frameselect.answerers import answerer as answering  # lazy: transformers; CLI start-up
    from neurips26.methods.frameselect.benchmarks import built_folder  # lazy: CLI start-up
    from neurips26.methods.frameselect.bgrpo import Config, card, train  # lazy: scipy; CLI start-up
    from neurips26.methods.frameselect.bgrpo.data import examples  # lazy: reads video; CLI start-up
    from neurips26.methods.frameselect.bgrpo.reward import AnswerReward  # lazy: CLI start-up
    from neurips26.methods.frameselect.runner import default_cache  # lazy: every selector; CLI start-up
    from neurips26.methods.frameselect.selectors.bgrpo import default_model  # lazy: CLI start-up

    for folder in (train_folder, calibration):  # built folders, checked before the answerer loads
        if folder is not None:
            built_folder(benchmark, folder)
    model = answering(answerer)
    with progress() as bars:
        train_set = examples(benchmark, train_folder, candidate_fps, cache=default_cache(), answerer=model,
                             progress=bars.track("pools"))
        reward = AnswerReward()
        if calibration is not None and epochs > 0:
            reward.fit(examples(benchmark, calibration, candidate_fps, cache=default_cache(), answerer=model), budget)
        posterior = train(train_set, reward, Config(members=members, epochs=epochs, group=group, budget=budget,
                                                    seed=seed), progress=bars.track("training"))
    folder = posterior.save(out or default_model(), card(posterior, len(train_set), f"{benchmark} at {train_folder}",
                                                         reward=f"{model.name}, confidence {reward.confidence:.3f}"))
    for h in posterior.history:
        err.print(f"member {h['member']} epoch {h['epoch']}: reward {h['reward']:.4f}, KL {h['kl']:.4f}",
                  highlight=False)
    console.print(f"[green]wrote[/green] {folder} ({len(train_set)} train questions, {members} members, "
                  f"{posterior.steps} optimiser steps)", highlight=False)


@frameselect.command("list")
def list_components() -> None:
    """List the registered selectors, encoders, evaluators, benchmarks and answering backends."""
    from neurips26.methods.frameselect import (  # lazy: importing registers every component; CLI start-up
        ANSWERERS,
        BENCHMARKS,
        ENCODERS,
        SELECTION_EVALUATORS,
        SELECTORS,
        needs,
        runner,
    )

    table = Table(title="FrameSelect components")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("needs")
    for registry in (SELECTORS, ENCODERS, SELECTION_EVALUATORS, BENCHMARKS, ANSWERERS):
        for name in registry.names():
            table.add_row(registry.kind, name, ", ".join(needs(registry, name)))
    table.add_row("selector", runner.ROUTER, "(FrameRouter: per-question budgets, mean = the budget)")
    console.print(table)
