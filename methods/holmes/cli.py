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
    perception: Annotated[str, typer.Option(help="Comma-separated perception backends: oracle (the release's scene "
                                                 "records), learned (MLPs trained on another generated release), "
                                                 "descriptor (fixed colour rules), vlm.")]
    = "oracle,learned",
    planner: Annotated[str, typer.Option(help="What reads each question into its plan: rules (the release's subtask "
                                              "labels and the generator's words), reader (MiniLM, labels dropped) "
                                              "or lm (a language model writes the plan, labels dropped).")]
    = "reader",
    budgets: Annotated[str, typer.Option(help="Comma-separated frame budgets per question.")] = "8,16,32",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N questions.")] = None,
    data: DataOpt = None,
    scenes: Annotated[Path | None, typer.Option(help="The generated release's scenes/ folder (oracle perception "
                                                     "and the truth for slot F1, bindings and calibration; default: "
                                                     "the generator's default release).")] = None,
    model: Annotated[str | None, typer.Option(help="vlm perception: tiny-idefics3[-seed<k>] or hf:<VLM>.")] = None,
    planner_model: Annotated[str | None, typer.Option(help="lm planner: lm (the embedded SmolLM2-135M-Instruct, "
                                                           "the default) or lm:<causal LM folder or Hub id>.")] = None,
    train_release: Annotated[Path | None, typer.Option(help="learned perception: a generated CLoVR release (videos/ "
                                                            "and scenes/) to train on; default: one generated with "
                                                            "seed 900, trained once and cached.")] = None,
    candidate_fps: Annotated[float, typer.Option(min=0.1, help="Candidate frames per second of video.")] = 2.0,
    out: Annotated[Path | None, out_option("Write results.json and answers.jsonl (answers with their certificates "
                                           "and graph edges) here.")] = None,
) -> None:
    """Answer CLoVR questions with HOLMES and with uniform frames (same perception and readout); print the table."""
    from neurips26.methods.frameselect.runner import default_cache  # lazy: every selector; CLI start-up

    from . import evaluate  # lazy: frameselect and the CLoVR reader; CLI start-up
    from .planner import planner as planner_of  # lazy: MiniLM or the language model load on use

    sizes = _list(budgets, "--budgets", int)
    folder = resource_folder(data, "clovr")
    release_scenes = _scenes(scenes)
    plans = planner_of(planner, planner_model)
    with progress() as bars:
        backends = {name: evaluate.perception_of(name, release_scenes, model, train_release)
                    for name in _list(perception, "--perception")}
        rows, records = evaluate.evaluate(folder, backends, sizes, scenes=release_scenes, limit=limit,
                                          candidate_fps=candidate_fps, cache=default_cache(), planner=plans,
                                          progress=bars.track("answering"))
    for name, backend in backends.items():
        console.print(f"perception {evaluate.described(name, backend)}", highlight=False)
    if planner == "rules":
        said = "the release's subtask labels and the generator's words"
    elif planner == "reader":
        said = "MiniLM reader (subtask labels dropped)"
    else:
        said = f"{plans.name} (subtask labels dropped); {plans.summary()}"
    console.print(f"planner {planner}: {said}", highlight=False)
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
