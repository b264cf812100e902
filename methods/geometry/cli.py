"""``neurips26 geometry eval|bench``: score your own outputs with one family's metrics, or run the baselines on a
family's standard set and write ranked-format runs, a table with 95% intervals and a plot.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(geometry, name="geometry")``.
"""

from __future__ import annotations

import inspect
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from neurips26.options import DeviceOpt, out_option
from neurips26.output import progress
from neurips26.settings import REPO_ROOT

from . import bench, protocol, report
from .core import GEOMETRY_EVALUATORS, GeometryError
from .training import GEOMETRY_METHODS, SCALES, read_metrics

geometry = typer.Typer(help="Geometry evaluators (segmentation boundaries, Fourier contours, motion diversity, "
                            "surface reconstruction) and the papers' trainable methods.", no_args_is_help=True,
                       add_completion=False)
SHARED = REPO_ROOT.parent / "shared" / "data"


class Family(StrEnum):
    """The evaluator families."""

    segmentation = "segmentation"
    contours = "contours"
    motion = "motion"
    surfaces = "surfaces"


@geometry.command("train")
def train_(
    method: Annotated[str, typer.Argument(help="The method to train (see --help of `geometry methods`).")],
    scale: Annotated[str, typer.Option(help=f"Size of the run: {', '.join(SCALES)} (large: for a GPU).")] = "tiny",
    out: Annotated[Path, out_option("Folder for the checkpoint and metrics.json.")] = Path("geometry-train"),
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    device: DeviceOpt = None,
    own_data: Annotated[Path | None, typer.Option(
        "--own-data", help="Your own data instead of the generated set, for the methods that read it (fractal-g: a "
                           "folder of images/ and masks/ PNGs).")] = None,
) -> None:
    """Train METHOD at --scale; write its checkpoint and a JSON of its metrics beside its baselines'."""
    if scale not in SCALES:
        raise GeometryError(f"--scale {scale!r}: use one of {', '.join(SCALES)}")
    trainer = GEOMETRY_METHODS.get(method)
    options: dict[str, Any] = {}
    if own_data is not None:
        if "data" not in inspect.signature(trainer).parameters:
            raise GeometryError(f"--own-data: {method} trains on its own generated or shared data only")
        if not own_data.is_dir():
            raise GeometryError(f"--own-data {own_data}: not a folder")
        options["data"] = own_data
    with progress() as bars:
        metrics = trainer(scale, out, seed=seed, device=device or "auto", progress=bars.track(f"{method} ({scale})"),
                          **options)
    _print_rows(metrics)
    print(f"checkpoint and metrics.json in {out}")


@geometry.command("methods")
def methods_() -> None:
    """List the trainable methods: name, family, what it is."""
    for name in GEOMETRY_METHODS.names():
        info = GEOMETRY_METHODS.info(name)
        print(f"{name:<18} {info['family']:<13} {info.get('summary', '')}")


def _print_rows(metrics: dict[str, Any]) -> None:
    rows = metrics.get("rows", [])
    keys = sorted({k for row in rows for k, v in row.items() if isinstance(v, int | float) and k != "seed"})
    print("  ".join(["arm".ljust(22), *(k[:14].rjust(14) for k in keys)]))
    for row in rows:
        print("  ".join([str(row.get("arm", "?")).ljust(22),
                         *(f"{row[k]:14.4g}" if isinstance(row.get(k), int | float) else " " * 14 for k in keys)]))


@geometry.command("eval")
def eval_(
    pred: Annotated[Path | None, typer.Argument(help="Your prediction file.")] = None,
    truth: Annotated[Path | None, typer.Argument(help="The ground-truth file.")] = None,
    trained: Annotated[Path | None, typer.Option(help="Instead of PRED and TRUTH: a folder written by `geometry "
                                                      "train`, re-scored beside its baselines.")] = None,
    metric: Annotated[Family, typer.Option(help="Which family's metrics.")] = Family.segmentation,
    spacing: Annotated[str | None, typer.Option(help="segmentation: voxel spacing, e.g. 1.0,0.8,0.8 (mm).")] = None,
    tau: Annotated[float | None, typer.Option(help="segmentation: NSD tolerance (mm); surfaces: F-score "
                                                   "threshold (fraction of the truth's diagonal).")] = None,
    band: Annotated[float, typer.Option(help="segmentation: Boundary IoU band (fraction of the diagonal).")] = 0.02,
    cross_resolution: Annotated[bool, typer.Option(help="segmentation: also on 0.5x and 2x grids.")] = False,
    harmonics: Annotated[int | None, typer.Option(help="contours: fit the prediction with K harmonics first.")]
    = None,
    population: Annotated[Path | None, typer.Option(help="motion: the population-mean motion (.npy; default: "
                                                         "the truths' mean).")] = None,
    align: Annotated[bool, typer.Option(help="surfaces: Sim(3) alignment + ICP before scoring.")] = True,
    samples: Annotated[int, typer.Option(min=100, help="surfaces: points sampled per mesh.")] = 20_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Score PRED against TRUTH with one family's metrics (your own outputs, any method), or re-score a trained
    method's folder (--trained DIR) beside its baselines."""
    if trained is not None:
        method = read_metrics(trained).get("method", "")
        metrics = GEOMETRY_METHODS.info(method)["evaluate"](trained)
        if as_json:
            print(json.dumps(metrics, indent=1))
        else:
            _print_rows(metrics)
        return
    if pred is None or truth is None:
        raise GeometryError("give PRED and TRUTH files, or --trained DIR")
    options: dict[str, Any] = {"band": band, "cross_resolution": cross_resolution, "harmonics": harmonics,
                               "population": population, "aligned": align, "samples": samples}
    if spacing:
        try:
            options["spacing"] = [float(s) for s in spacing.split(",")]
        except ValueError:
            raise GeometryError(f"--spacing {spacing!r}: comma-separated numbers, e.g. 1.0,0.8,0.8") from None
    if tau is not None:
        options["tau"] = tau
    values = GEOMETRY_EVALUATORS.get(metric.value)(pred, truth, **options)
    if as_json:
        print(json.dumps(values, indent=1))
        return
    width = max(len(k) for k in values)
    for key, value in values.items():
        print(f"{key:<{width}}  {value:.6g}")


@geometry.command("bench")
def bench_(
    family: Annotated[Family, typer.Argument(help="Which evaluator family to run.")],
    out: Annotated[Path, out_option("Folder for the runs (one per baseline), summary.json, the table and the "
                                    "plot.")] = Path("geometry-bench"),
    ecg: Annotated[Path | None, typer.Option(help="motion: folder with the wfdb records (default: "
                                                  "../shared/data/ecg).")] = None,
    meshes: Annotated[Path | None, typer.Option(help="surfaces: folder with the meshes (default: "
                                                     "../shared/data/meshes).")] = None,
    quick: Annotated[bool, typer.Option(help="A small, unranked run (fewer shapes/subjects/meshes/points).")]
    = False,
) -> None:
    """Run every baseline of FAMILY on its standard set; write lm-eval-shaped runs the leaderboard ranks on the
    family's own board, and print the table of means with 95% bootstrap intervals."""
    settings = dict(getattr(protocol, family.value.upper()))
    if quick:
        settings.update({"segmentation": {"shapes": 3, "scales": [0.5, 1.0]}, "contours": {"subjects": 8},
                         "motion": {}, "surfaces": {"samples": 3000}}[family.value])
    for option, value, owner in (("--ecg", ecg, Family.motion), ("--meshes", meshes, Family.surfaces)):
        if value is not None and family is not owner:
            raise GeometryError(f"{option} applies to the {owner.value} family only")
    ecg, meshes = ecg or SHARED / "ecg", meshes or SHARED / "meshes"
    needed = {Family.motion: ("--ecg", ecg), Family.surfaces: ("--meshes", meshes)}.get(family)
    if needed and not needed[1].is_dir():
        raise GeometryError(f"{needed[0]} {needed[1]}: not a folder (the real data lives in ../shared/data)")
    with progress() as bars:
        advance = bars.steps(family.value)
        if family is Family.segmentation:
            runs, data = bench.run_segmentation(settings, advance=advance)
        elif family is Family.contours:
            runs, data = bench.run_contours(settings, advance=advance)
        elif family is Family.motion:
            runs, data = bench.run_motion(settings, ecg, advance=advance)
        else:
            runs, data = bench.run_surfaces(settings, meshes, limit=2 if quick else None, advance=advance)
    for name, rows in runs.items():
        report.write(out / name, family.value, name, rows, data, settings)
    rows = report.summary(family.value, runs)
    table = report.markdown(family.value, rows)
    key = {Family.segmentation: "scale", Family.surfaces: "input"}.get(family)
    if key:  # the cross-resolution protocol: each grid scale; surfaces: each input kind
        table += f"\n\nBy {key}:\n\n" + report.markdown(family.value, report.by_doc_key(family.value, runs, key))
    (out / "summary.json").write_text(json.dumps({"settings": settings, "data": data, "baselines": rows}, indent=1))
    (out / "table.md").write_text(table + "\n")
    figure = report.plot_by(family.value, runs, out / f"{family.value}.png")
    print(table)
    print(f"runs in {out}/<baseline>/ (lm-eval results + samples); table: {out / 'table.md'}; plot: {figure}")
