"""Each family's standard evaluation: its data, every baseline on it, one row per document.

A runner returns ``{baseline: rows}`` (rows as :func:`neurips26.runfiles.write_run` takes them: ``doc_id``,
``doc``, ``target``, ``response`` and the metric values) and the data's provenance; set-level numbers (the motion
family's collapse ratio and specificity) ride along under ``set_scores``. Standard settings are the protocols'
(:mod:`.protocol`); smaller settings give an unranked run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from . import motion, motiondata, phantom, segdata, segmentation, surfaces, surfdata
from .core import GeometryError

Rows = list[dict[str, Any]]
MESH_SUFFIXES = (".ply", ".obj", ".stl", ".off", ".glb")


def digest(arrays: Iterable[np.ndarray]) -> str:
    """sha256 over the arrays' bytes: the identity of a generated evaluation set."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _data(family: str, config: str, sha: str, real: bool) -> dict[str, Any]:
    return {"resource": f"geometry_{family}", "config": config, "version": "1", "manifest_sha256": sha,
            "demo": False, "real": real}


def run_segmentation(settings: Mapping[str, Any], baselines: Iterable[str] | None = None,
                     advance: Callable[[], None] = lambda: None) -> tuple[dict[str, Rows], dict[str, Any]]:
    """Every segmentation baseline on the generated shapes at every scale."""
    cases = list(segdata.cases(settings["shapes"], settings["seed"], settings["native"], settings["scales"]))
    names = list(baselines or segdata.BASELINES)
    runs: dict[str, Rows] = {name: [] for name in names}
    for i, case in enumerate(cases):
        for name in names:
            pred = segdata.BASELINES[name](case.image, case.spacing)
            values = segmentation.scores(pred, case.truth, case.spacing, band=settings["band"])
            doc = {"shape_id": case.shape_id, "scale": case.scale, "hurst": case.hurst, "noise": case.noise,
                   "size": case.truth.shape[0], "spacing_mm": case.spacing[0]}
            runs[name].append({"doc_id": i, "doc": doc, "target": f"{int(case.truth.sum())} voxels",
                               "response": f"{int(pred.sum())} voxels", **values})
            advance()
    sha = digest([c.truth for c in cases] + [c.image for c in cases])
    return runs, _data("segmentation", "fractal_shapes", sha, real=False)


HARMONICS = (1, 2, 3, 4, 6, 8, 12, 20)


def run_contours(settings: Mapping[str, Any], harmonics: Iterable[int] = (0, *HARMONICS),
                 advance: Callable[[], None] = lambda: None) -> tuple[dict[str, Rows], dict[str, Any]]:
    """The Fourier pipeline at each K (``efd_k<K>``) and the polygon reference (``polygon``) on the phantom."""
    subjects = [phantom.make_subject(i, settings["seed"]) for i in range(settings["subjects"])]
    runs: dict[str, Rows] = {}
    for k in harmonics:
        name = "polygon" if k == 0 else f"efd_k{k}"
        rows = []
        for s in subjects:
            est = phantom.estimate(s, k, settings["noise_mm"], settings["seed"])
            edv, esv = s.volume(0), s.volume(phantom.ES_FRAME)
            # the document is the subject alone: every method is scored on the same documents
            rows.append({"doc_id": s.subject_id, "doc": {"subject": s.subject_id}, "harmonics": k,
                         "target": f"EF {s.ef:.2f}%", "response": f"EF {est['ef']:.2f}%",
                         "ef_abs_error": abs(est["ef"] - s.ef), "edv_rel_error": abs(est["edv"] - edv) / edv,
                         "esv_rel_error": abs(est["esv"] - esv) / esv,
                         **phantom.contour_errors(s, k, settings["noise_mm"], settings["seed"])})
            advance()
        runs[name] = rows
    sha = digest([np.concatenate([s.rho0, s.length]) for s in subjects])
    return runs, _data("contours", "cardiac_phantom", sha, real=False)


def run_motion(settings: Mapping[str, Any], ecg_dir: Path,
               advance: Callable[[], None] = lambda: None) -> tuple[dict[str, Rows], dict[str, Any]]:
    """Every motion baseline trained on the cohort's training subjects, scored on its test subjects."""
    cohort = motiondata.cohort(ecg_dir, settings["seed"], tuple(settings["records"]))
    train, test = motiondata.split(len(cohort.features), settings["test_share"], settings["seed"])
    truth, population = cohort.motion[test], cohort.motion[train].mean(axis=0)
    runs: dict[str, Rows] = {}
    for name, baseline in motiondata.BASELINES.items():
        pred = baseline(cohort.features[train], cohort.motion[train], cohort.features[test])
        each = motion.per_subject(pred, truth, population)
        rows = []
        for j, i in enumerate(test):
            record, start = cohort.windows[i]
            rows.append({"doc_id": int(i), "doc": {"record": record, "start_s": start,
                                                   "features": dict(zip(motiondata.FEATURES,
                                                                        cohort.features[i].round(5).tolist(),
                                                                        strict=True))},
                         "target": f"motion of subject {i}", "response": f"{name} prediction",
                         "motion_skill": float(each["skill"][j]), "motion_rmse": float(each["rmse"][j]),
                         "rmse_population_mean": float(each["rmse_mean"][j])})
        rows[0]["set_scores"] = motion.scores(pred, truth, population)
        runs[name] = rows
        advance()
    return runs, _data("motion", "ecg_timed_lv", digest([cohort.features, cohort.motion]), real=True)


def meshes(folder: Path) -> list[Path]:
    """The mesh files in ``folder``, sorted."""
    found = sorted(p for p in folder.iterdir() if p.suffix.lower() in MESH_SUFFIXES)
    if not found:
        raise GeometryError(f"{folder}: no mesh files ({', '.join(MESH_SUFFIXES)})")
    return found


def run_surfaces(settings: Mapping[str, Any], mesh_dir: Path, limit: int | None = None,
                 advance: Callable[[], None] = lambda: None) -> tuple[dict[str, Rows], dict[str, Any]]:
    """Every surface baseline on each real mesh's unposed inputs, scored after Sim(3) alignment."""
    runs: dict[str, Rows] = {name: [] for name in surfdata.BASELINES}
    hashes = []
    n = settings["samples"]
    for m, path in enumerate(meshes(mesh_dir)[:limit]):
        mesh = trimesh.load(path, force="mesh")
        truth = surfaces.sample(mesh, n, settings["seed"])
        hashes.append(truth.xyz)
        for k, kind in enumerate(settings["kinds"]):
            observation = surfdata.observe(mesh, kind, settings["seed"])
            for name, baseline in surfdata.BASELINES.items():
                reconstruction = baseline(observation)
                pred = surfdata.prediction_points(reconstruction, n, settings["seed"] + 1)
                values = surfaces.scores(pred, truth, settings["tau"], settings["aligned"])
                runs[name].append({"doc_id": m * len(settings["kinds"]) + k,
                                   "doc": {"mesh": path.name, "input": kind, "input_points": len(observation.points)},
                                   "target": path.name, "response": f"{len(reconstruction.faces)} faces", **values})
                advance()
    return runs, _data("surfaces", "real_meshes", digest(hashes), real=True)
