"""The ``geometry`` resource: the four evaluators' standard inputs and exact ground truth as one Hub-ready folder.

One config per family, built by running the generators of this package (so the builder sits with the method):

* ``segmentation`` (generated): each fractal shape at each grid scale, the image and its exact truth mask;
* ``contours`` (generated): the phantom's noisy endocardial points per subject, ED/ES frame and slice, with the
  slice's exact area; ``volumes``: each subject's exact EDV, ESV and EF;
* ``motion`` (real ECG, synthetic pairing): each subject's ECG window, its features and its ground-truth motion,
  in the train/test split of the standard protocol;
* ``surfaces`` (real meshes): each mesh's unposed inputs (partial points, fused depth points with camera
  directions) and the mesh file itself as the truth;
* ``errors``: every input that was not made into rows (a mesh that does not load, an ECG window with too few
  beats), with the reason.

``raw`` is the folder with ``ecg/`` and ``meshes/`` (default ``../shared/data`` beside the checkout).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Annotated, Any

import numpy as np
import pyarrow as pa
import trimesh
import typer
from neurips26.corpora import RESOURCES

from neurips26 import __version__, hubfolder
from neurips26.buildreport import Reconciled, Tally
from neurips26.hubfolder.shards import column
from neurips26.settings import REPO_ROOT

from . import motiondata, phantom, protocol, segdata, surfdata
from .bench import meshes as mesh_files
from .core import GeometryError

BUILDER_VERSION = "1.0.0"
F32 = pa.float32()
SCHEMAS = {
    "segmentation": pa.schema([
        column("shape_id", pa.int32(), "Shape number (same shape at every scale)."),
        column("scale", pa.float32(), "Grid scale relative to the native 96x96 grid."),
        column("hurst", pa.float32(), "Hurst exponent of the boundary (small: rough)."),
        column("noise", pa.float32(), "Standard deviation of the image noise."),
        column("spacing_mm", pa.float32(), "Pixel spacing in mm (isotropic)."),
        column("image", pa.list_(pa.list_(F32)), "The image, rows of pixels."),
        column("truth", pa.list_(pa.list_(pa.bool_())), "The exact mask: pixel centre inside the shape.")]),
    "contours": pa.schema([
        column("subject_id", pa.int32(), "Phantom subject."),
        column("phase", pa.string(), "ED or ES."),
        column("slice_index", pa.int32(), "Short-axis slice from the base."),
        column("depth_mm", pa.float32(), "Slice centre below the base (mm); slices are 8 mm thick."),
        column("points", pa.list_(pa.list_(pa.float64())), "Observed noisy endocardial points (mm), (N, 2)."),
        column("true_area_mm2", pa.float64(), "The slice's exact endocardial area.")]),
    "volumes": pa.schema([
        column("subject_id", pa.int32(), "Phantom subject."),
        column("edv_ml", pa.float64(), "Exact end-diastolic volume."),
        column("esv_ml", pa.float64(), "Exact end-systolic volume."),
        column("ef_percent", pa.float64(), "Exact ejection fraction."),
        column("volume_curve_ml", pa.list_(pa.float64()), "Exact volume at each of the 20 frames.")]),
    "motion": pa.schema([
        column("subject_id", pa.int32(), "Subject (ECG window) number."),
        column("record", pa.string(), "wfdb record the window comes from."),
        column("start_s", pa.float32(), "Window start (s)."),
        *[column(name, pa.float64(), f"ECG feature {name}.") for name in motiondata.FEATURES],
        column("motion", pa.list_(pa.list_(pa.list_(F32))), "Ground truth: 25 frames x 24 landmarks x 3 (mm).")]),
    "surfaces": pa.schema([
        column("mesh", pa.string(), "Mesh file name."),
        column("input", pa.string(), "partial or depth."),
        column("points", pa.list_(pa.list_(F32)), "Input points in an unknown similarity frame, (N, 3)."),
        column("towards_camera", pa.list_(pa.list_(F32)), "Unit directions to the camera (depth input), or null."),
        column("truth_mesh", pa.binary(), "The ground-truth mesh file's bytes."),
        column("mesh_format", pa.string(), "Its format (file suffix).")]),
    "errors": pa.schema([
        column("source", pa.string(), "The input (a file, an ECG window)."),
        column("reason", pa.string(), "Why it was not made into rows.")]),
}
DESCRIPTIONS = {
    "segmentation": "Generated fractal shapes at 0.5x/1x/2x grids: image and exact mask.",
    "contours": "Phantom ventricles: noisy endocardial points per ED/ES slice, exact slice areas.",
    "volumes": "Phantom ventricles: exact EDV, ESV, EF and volume curve.",
    "motion": "Real ECG windows (MIT-BIH 100) with synthetic parametric LV motion (the pairing is synthetic).",
    "surfaces": "Unposed inputs made from the real meshes, with the mesh as truth.",
    "errors": "Inputs not made into rows, with the reason.",
}
META = {
    "name": "geometry", "pretty_name": "Geometry evaluators: segmentation, contours, motion, surfaces",
    "description": "Standard inputs with exact ground truth for four geometric evaluators: fractal-boundary "
                   "segmentation, Fourier contours of a cardiac phantom, ECG-timed heart motion, unposed surface "
                   "reconstruction from real meshes.",
    "license": "mit", "license_url": "https://opensource.org/licenses/MIT",
    "url": "https://huggingface.co/datasets/neurips26/geometry", "version": BUILDER_VERSION,
    "task_categories": ["image-segmentation"], "tags": ["geometry", "medical", "3d", "benchmark", "evaluation"],
    "citation": "Geometry evaluators. NeurIPS 2026.",
    "rai": {
        "data_collection": "Generated shapes and phantoms; public ECG (MIT-BIH, PhysioNet) and meshes (trimesh).",
        "data_collection_type": ["Software Collection"],
        "data_preprocessing_protocol": ["Seeded generators; ECG in 10-s windows; meshes posed at random."],
        "data_biases": ["One ECG record (one person); the motion is parametric, its pairing with the ECG synthetic."],
        "data_limitations": ["Phantoms and parametric motion are simpler than real anatomy."],
        "data_use_cases": ["Comparing segmentation, contour, motion and surface methods on one set of metrics."],
        "data_social_impact": "Makes geometric metrics comparable; not for clinical use.",
        "personal_sensitive_information": ["An anonymised public ECG recording."],
        "data_release_maintenance_plan": "Rebuilt with `neurips26 build geometry`; manifest.json has the inputs.",
    },
}


@dataclass
class BuildReport(Reconciled):
    """What a geometry build made: rows per config, and its real inputs (ECG windows, meshes) used or rejected."""

    rows: dict[str, int] = field(default_factory=dict)
    inputs: int = 0
    built: int = 0
    rejected: int = 0
    problems: list[str] = field(default_factory=list)  # a line per rejected input

    def tallies(self) -> list[Tally]:
        """Real inputs = built + rejected."""
        return [Tally.of("real inputs", self.inputs, built=self.built, rejected=self.rejected)]

    def summary(self) -> str:
        """One line: rows per config and the real inputs in and out."""
        rows = ", ".join(f"{k} {v}" for k, v in self.rows.items())
        return f"{rows}; {self.tally_text()}"


def _segmentation(shapes: int) -> list[dict[str, Any]]:
    return [{"shape_id": c.shape_id, "scale": c.scale, "hurst": c.hurst, "noise": c.noise,
             "spacing_mm": c.spacing[0], "image": c.image.tolist(), "truth": c.truth.tolist()}
            for c in segdata.cases(shapes, protocol.SEGMENTATION["seed"], protocol.SEGMENTATION["native"],
                                   protocol.SEGMENTATION["scales"])]


def _contours(subjects: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, volumes = [], []
    for i in range(subjects):
        s = phantom.make_subject(i, protocol.CONTOURS["seed"])
        for phase, frame in (("ED", 0), ("ES", phantom.ES_FRAME)):
            observed = phantom.observe(s, frame, protocol.CONTOURS["noise_mm"], seed=protocol.CONTOURS["seed"])
            for k, (z, points) in enumerate(zip(phantom.slice_depths(s, frame), observed, strict=True)):
                rows.append({"subject_id": i, "phase": phase, "slice_index": k, "depth_mm": float(z),
                             "points": points.tolist(), "true_area_mm2": float(s.endo_area(z, frame))})
        curve = [s.volume(f) for f in range(phantom.FRAMES)]
        volumes.append({"subject_id": i, "edv_ml": curve[0], "esv_ml": curve[phantom.ES_FRAME], "ef_percent": s.ef,
                        "volume_curve_ml": curve})
    return rows, volumes


@RESOURCES.register("geometry")
def build(raw: Path | None = None, out: Path = Path("geometry"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None, *,
          shapes: Annotated[int, typer.Option(min=1, help="Segmentation shapes (standard: 12).")] = 12,
          subjects: Annotated[int, typer.Option(min=1, help="Phantom subjects (standard: 40).")] = 40,
          mesh_limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N meshes.")] = None,
          ) -> BuildReport:
    """Build the geometry folder at ``out``; ``raw`` holds ``ecg/`` and ``meshes/`` (default ../shared/data)."""
    raw = Path(raw or REPO_ROOT.parent / "shared" / "data")
    for sub in ("ecg", "meshes"):
        if not (raw / sub).is_dir():
            raise GeometryError(f"{raw / sub}: not a folder; pass --raw DIR with ecg/ and meshes/")
    report, errors, inputs = BuildReport(), [], {}
    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    specs = {name: hubfolder.ConfigSpec(name, schema, DESCRIPTIONS[name], default=name == "segmentation")
             for name, schema in SCHEMAS.items()}
    hubfolder.write_table(out, specs["segmentation"], _segmentation(shapes), "test")
    contour_rows, volume_rows = _contours(subjects)
    hubfolder.write_table(out, specs["contours"], contour_rows, "test")
    hubfolder.write_table(out, specs["volumes"], volume_rows, "test")
    if progress:
        progress(1, 3)

    settings = protocol.MOTION
    for name in settings["records"]:
        for suffix in (".hea", ".dat", ".atr"):
            if (raw / "ecg" / f"{name}{suffix}").is_file():
                inputs[f"ecg/{name}{suffix}"] = hubfolder.sha256_file(raw / "ecg" / f"{name}{suffix}")
    cohort = motiondata.cohort(raw / "ecg", settings["seed"], tuple(settings["records"]))
    errors += [{"source": f"{record} @ {start:g} s", "reason": reason} for record, start, reason in cohort.skipped]
    train, test = motiondata.split(len(cohort.features), settings["test_share"], settings["seed"])
    for split, index in (("train", train), ("test", test)):
        hubfolder.write_table(out, specs["motion"], [
            {"subject_id": int(i), "record": cohort.windows[i][0], "start_s": cohort.windows[i][1],
             **dict(zip(motiondata.FEATURES, cohort.features[i].tolist(), strict=True)),
             "motion": cohort.motion[i].astype(np.float32).tolist()} for i in index], split)
    if progress:
        progress(2, 3)

    surface_rows = []
    meshes, meshes_read = mesh_files(raw / "meshes")[:mesh_limit], 0
    for path in meshes:
        inputs[f"meshes/{path.name}"] = hubfolder.sha256_file(path)
        try:
            mesh = trimesh.load(path, force="mesh")
            if len(mesh.faces) == 0:
                raise ValueError("no faces")
        except (OSError, ValueError) as error:
            errors.append({"source": f"meshes/{path.name}", "reason": f"cannot be read as a mesh: {error}"})
            continue
        meshes_read += 1
        for kind in surfdata.KINDS:
            seen = surfdata.observe(mesh, kind, protocol.SURFACES["seed"])
            surface_rows.append({"mesh": path.name, "input": kind, "points": seen.points.astype(np.float32).tolist(),
                                 "towards_camera": None if seen.towards_camera is None
                                 else seen.towards_camera.astype(np.float32).tolist(),
                                 "truth_mesh": path.read_bytes(), "mesh_format": path.suffix.lower().lstrip(".")})
    hubfolder.write_table(out, specs["surfaces"], surface_rows, "test")
    hubfolder.write_table(out, specs["errors"], errors)
    report.rows = {name: spec.rows() for name, spec in specs.items()}
    report.inputs = len(cohort.windows) + len(cohort.skipped) + len(meshes)
    report.built = len(cohort.windows) + meshes_read
    report.rejected = len(errors)
    report.problems = [f"{e['source']} rejected: {e['reason']}" for e in errors]
    configs = list(specs.values())
    parameters = {"shapes": shapes, "subjects": subjects, "mesh_limit": mesh_limit}
    hubfolder.write_manifest(out, configs, {"name": "neurips26.methods.geometry.dataset", "version": BUILDER_VERSION,
                                            "package_version": __version__, "parameters": parameters},
                             inputs, demo=False)
    template = Template(resources.files("neurips26.cards").joinpath("geometry.md").read_text(encoding="utf-8"))
    hubfolder.write_card(out, configs, META, template.substitute(
        config_table="\n".join(f"| `{c.name}` | {c.rows():,} | {c.description} |" for c in configs),
        parameters=json.dumps(parameters)))
    hubfolder.write_croissant(out, configs, META)
    hubfolder.commit_build(out, final)
    if progress:
        progress(3, 3)
    return report
