"""``neurips26 holmes run|answer``: HOLMES against uniform frames on CLoVR, per level, with certificates.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(holmes, name="holmes")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from neurips26.errors import UserError
from neurips26.options import DataOpt, out_option, resource_folder
from neurips26.output import progress

holmes = typer.Typer(help="HOLMES: evidence-slot filling over a binding graph for cross-video questions (CLoVR).",
                     no_args_is_help=True, add_completion=False)
console = Console(width=max(Console().width, 120))
err = Console(stderr=True)


def _list(text: str, what: str, cast: type = str) -> list[Any]:
    try:
        values = [cast(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"{what} must be comma-separated {cast.__name__}s, got {text!r}") from None
    if not values or (cast is int and min(values) < 1):
        raise UserError(f"{what}: give at least one value (integers >= 1 for budgets), got {text!r}")
    return values


def _scenes(scenes: Path | None) -> Path | None:
    if scenes is not None:
        return scenes
    from neurips26.corpora.clovr.build import default_raw  # lazy: the generator; CLI start-up

    path = default_raw() / "scenes"
    return path if path.is_dir() else None


def level_table(rows: list[dict], budgets: list[int]) -> Table:
    """Rows: level (and overall, slot F1, binding accuracy); columns: method/perception per budget."""
    runs = sorted({(r["method"], r["perception"]) for r in rows}, key=lambda x: (x[1], x[0] != "holmes"))
    table = Table(title="CLoVR accuracy per level (generated release); slot F1 and binding accuracy vs the truth")
    table.add_column("row")
    for method, perception in runs:
        for b in budgets:
            table.add_column(f"{method}/{perception}@{b}", justify="right")
    keys = sorted({(r["scope"], r["name"], r["metric"]) for r in rows if r["scope"] in ("level", "all")},
                  key=lambda k: (k[0] != "level", k[1], k[2]))
    for scope, name, metric in keys:
        cells = []
        for method, perception in runs:
            for b in budgets:
                hit = [r for r in rows if (r["method"], r["perception"], r["budget"], r["scope"], r["name"],
                                           r["metric"]) == (method, perception, b, scope, name, metric)]
                cells.append(f"{hit[0]['value']:.2f}" if hit else "-")
        label = f"{name} (n={max((r['n'] for r in rows if r['name'] == name and r['metric'] == metric), default=0)})"
        table.add_row(label if metric == "acc" else metric, *cells)
    return table


@holmes.command()
def run(
    perception: Annotated[str, typer.Option(help="Comma-separated perception backends: oracle, descriptor, vlm.")]
    = "oracle,descriptor",
    budgets: Annotated[str, typer.Option(help="Comma-separated frame budgets per question.")] = "8,16,32",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N questions.")] = None,
    data: DataOpt = None,
    scenes: Annotated[Path | None, typer.Option(help="The generated release's scenes/ folder (oracle perception "
                                                     "and the truth for slot F1, bindings and calibration; default: "
                                                     "the generator's default release).")] = None,
    model: Annotated[str | None, typer.Option(help="vlm perception: tiny-idefics3[-seed<k>] or hf:<VLM>.")] = None,
    candidate_fps: Annotated[float, typer.Option(min=0.1, help="Candidate frames per second of video.")] = 2.0,
    out: Annotated[Path | None, out_option("Write results.json and answers.jsonl (answers with their certificates "
                                           "and graph edges) here.")] = None,
) -> None:
    """Answer CLoVR questions with HOLMES and with uniform frames (same perception and readout); print the table."""
    from neurips26.methods.frameselect.runner import default_cache  # lazy: every selector; CLI start-up

    from . import evaluate  # lazy: frameselect and the CLoVR reader; CLI start-up

    sizes = _list(budgets, "--budgets", int)
    folder = resource_folder(data, "clovr")
    with progress() as bars:
        rows, records = evaluate.evaluate(folder, _list(perception, "--perception"), sizes, scenes=_scenes(scenes),
                                          limit=limit, candidate_fps=candidate_fps, model=model,
                                          cache=default_cache(), progress=bars.track("answering"))
    console.print(level_table(rows, sizes))
    calib = [r for r in rows if r["scope"] == "calibration" and r["method"] == "holmes"]
    for r in calib:
        console.print(f"certificates {r['perception']}@{r['budget']} {r['name']}: n={r['n']}, mean confidence "
                      f"{r['confidence']:.2f}, truly absent {r['value']:.2f}", highlight=False)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
        (out / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        err.print(f"wrote {out}/results.json and {out}/answers.jsonl ({len(records)} answers)", highlight=False)
