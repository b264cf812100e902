"""``neurips26 score``: the LOCUS analysis layer (score a folder, measure against the gold set, train heads)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neurips26.errors import UserError
from neurips26.options import DataOpt, check_target_file, resource_folder
from neurips26.output import progress

from . import fines

score = typer.Typer(help="LOCUS analysis layer: function, topic, substantive, four scores and fines per section.",
                    no_args_is_help=True, add_completion=False)

BACKENDS = ("default", "modernbert")
AxisModelOpt = Annotated[list[str] | None, typer.Option(
    "--model", help="modernbert backend: AXIS=HUB_ID_OR_FOLDER (repeatable; axes: substantive, opacity, "
                    "paternalism, enforcement_discretion, problem_salience). Default: all LocalLaws models.")]
GoldOpt = Annotated[Path | None, typer.Option(
    help="LOCUS gold folder holding dev.jsonl (default: $NEURIPS26_LOCUS_GOLD or ../shared/data/locus-gold).")]


def parse_models(values: list[str] | None) -> dict[str, str] | None:
    """``["opacity=path", ...]`` -> ``{"opacity": "path"}``; ValueError naming a malformed or unknown axis."""
    from .modernbert import AXES  # lazy: CLI start-up (numpy, pyarrow)

    if not values:
        return None
    out = {}
    for value in values:
        axis, sep, source = value.partition("=")
        if not sep or not source:
            raise UserError(f"--model {value!r} must look like AXIS=HUB_ID_OR_FOLDER")
        if axis not in AXES:
            raise UserError(f"--model {value!r}: unknown axis {axis!r}; axes: {', '.join(AXES)}")
        out[axis] = source
    return out


def _backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise UserError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    return backend


@score.command("locus")
def score_locus(
    data: DataOpt = None,
    backend: Annotated[str, typer.Option(help="default (CPU, nothing downloaded) or modernbert.")] = "default",
    model: AxisModelOpt = None,
    batch_size: Annotated[int, typer.Option(min=1, help="modernbert: sections per forward pass.")] = 16,
) -> None:
    """Score every section of a built LOCUS folder: write the scores config and refresh locus_v1."""
    from rich.console import Console

    from .score import score_folder  # lazy: CLI start-up (numpy, pyarrow)

    folder, models = resource_folder(data, "locus"), parse_models(model)
    with progress() as bars:
        table = score_folder(folder, _backend(backend), models, batch_size, progress=bars.track(f"scoring ({backend})"))
    counts = table.group_by("function").aggregate([("section_id", "count")]).to_pylist()
    summary = ", ".join(f"{c['function']} {c['section_id_count']}" for c in sorted(counts, key=lambda c: c["function"]))
    Console().print(f"[green]scored[/green] {table.num_rows:,} sections of {folder} ({table['backend'][0]}): "
                    f"{summary}. Query: neurips26 query \"SELECT * FROM locus.scores\" --data {folder.parent}",
                    highlight=False)


@score.command("gold")
def score_gold(
    gold: GoldOpt = None,
    backend: Annotated[str, typer.Option(help="default or modernbert.")] = "default",
    model: AxisModelOpt = None,
    weak: Annotated[Path | None, typer.Option(
        help="default: a built LOCUS folder whose weak labels join the heads' training (as for the shipped heads).")]
    = None,
    plot: Annotated[Path | None, typer.Option(help="Also draw the table as a bar chart (PNG).")] = None,
) -> None:
    """Measure a backend against the gold dev part, next to the annotators' agreement (the ceiling)."""
    from rich.console import Console
    from rich.table import Table

    from . import gold as g  # lazy: CLI start-up (numpy, pyarrow)
    from .score import modernbert_labels  # lazy: CLI start-up (numpy, pyarrow)

    models = parse_models(model)  # every value checked before the gold set is read and scored
    if models and _backend(backend) != "modernbert":
        raise UserError("--model goes with --backend modernbert (the default backend has no models to choose)")
    if plot is not None:
        check_target_file(plot, "--plot")
    rows = g.read_gold(gold or g.default_gold_dir())
    if backend == "default":
        with progress() as bars:
            bars.track("embedding and cross-validating")(0)
            pred = g.default_predictions(rows, weak)
    else:
        headings, texts = [r["heading"] for r in rows], [r["text"] for r in rows]
        pred, _ = modernbert_labels(headings, texts, models, 16)
        pred |= {k: [getattr(fines.extract(t), k) for t in texts] for k in ("max_fine_usd", "max_jail_days")}
    lines = g.evaluate(rows, pred)
    table = Table(title=f"LOCUS gold dev ({len(rows)} sections), backend {backend}")
    for column in ("field", "metric", "backend", "annotators (ceiling)", "majority baseline", "n", "note"):
        table.add_column(column)
    for line in lines:
        table.add_row(line.field, line.metric, f"{line.value:.3f}", _num(line.ceiling), _num(line.baseline),
                      str(line.n), line.note)
    Console(width=160).print(table)
    if plot:
        g.plot(lines, plot, f"LOCUS gold dev, backend {backend}")
        Console().print(f"plot: {plot}", highlight=False)


@score.command("train-heads")
def train_heads(
    data: DataOpt = None,
    gold: GoldOpt = None,
    out: Annotated[Path | None, typer.Option(help="Where to write the heads (default: the shipped heads.npz).")]
    = None,
) -> None:
    """Retrain the default backend's heads on the gold dev part and the weak labels of a built LOCUS folder's
    sections (--data)."""
    from rich.console import Console

    from . import gold as g  # lazy: CLI start-up (numpy, pyarrow)
    from . import heads  # lazy: CLI start-up (numpy, pyarrow)

    folder = resource_folder(data, "locus")
    if out is not None:
        check_target_file(out, "--out")
    with progress() as bars:
        bars.track("embedding and training")(0)
        trained = heads.train(gold or g.default_gold_dir(), folder, out or heads.HEADS_FILE)
    Console().print(f"heads: {out or heads.HEADS_FILE} ({trained.info['n_gold']} gold, "
                    f"{trained.info['n_weak']} weak rows)", highlight=False)


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"
