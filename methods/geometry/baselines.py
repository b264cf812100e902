"""The measured baselines of the geometry protocols: each family's ranking metric for answerers that never look
at the input (the image, the contour points, the ECG, the observed points), on the protocol's standard set, the
same data :mod:`.bench` scores a method on.

* ``geometry_segmentation`` (Boundary IoU): ``empty``, the all-background mask; ``constant``, the best of the
  all-foreground mask and the mean shape (each pixel's majority over the other shapes' truths on the same grid);
  ``random``, the truth of another shape on the same grid, drawn uniformly.
* ``geometry_contours`` (absolute EF error): ``constant``, the best single EF among the subjects' own, each scored
  on the other subjects; ``random``, another subject's EF.
* ``geometry_motion`` (skill over the population mean): ``constant``, the best of the training subjects' mean
  motion (skill 0 by definition) and no motion at all; ``random``, another test subject's motion.
* ``geometry_surfaces`` (F-score after Sim(3) alignment): ``constant``, the best of a sphere and a cube, aligned
  to each truth as any reconstruction is; ``random``, another real mesh of the set (not the same mesh seen
  through its other input).

A random answerer's score is the mean over :data:`~neurips26.knownothing.SEEDS` seeds. ``limit`` keeps the first
documents of the standard set (segmentation: shapes), for a quick check; the recorded baselines use the whole set.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from neurips26.knownothing import SEEDS, constant_gold, random_gold
from neurips26.protocol import MeasuredBaseline
from neurips26.settings import REPO_ROOT

from . import motion, motiondata, phantom, segdata, segmentation, surfaces, surfdata
from .bench import digest, meshes
from .protocol import CONTOURS, MOTION, SEGMENTATION, SURFACES, TASKS

SHARED = REPO_ROOT.parent / "shared" / "data"
HOW = "methods/geometry/baselines.py"


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def _random_mean(n: int, score: Callable[[int, random.Random], float]) -> float:
    """The mean over seeds of the mean over documents of ``score(document, rng)``."""
    return _mean([_mean([score(i, rng) for i in range(n)]) for rng in (random.Random(s) for s in range(SEEDS))])


def segmentation_baseline(limit: int | None = None) -> MeasuredBaseline:
    """Boundary IoU of the empty, constant and random masks on the generated shapes at every grid scale (the
    first ``limit`` shapes: generating the whole set takes half a minute)."""
    shapes = SEGMENTATION["shapes"] if limit is None else min(limit, SEGMENTATION["shapes"])
    cases = list(segdata.cases(shapes, SEGMENTATION["seed"], SEGMENTATION["native"], SEGMENTATION["scales"]))
    band = SEGMENTATION["band"]

    def score(case: segdata.Case, mask: np.ndarray) -> float:
        return segmentation.boundary_iou(mask, case.truth, band, case.spacing)

    def others(case: segdata.Case) -> list[segdata.Case]:
        return [c for c in cases if c.scale == case.scale and c.shape_id != case.shape_id]

    def mean_shape(case: segdata.Case) -> np.ndarray:
        return np.mean([c.truth for c in others(case)], axis=0) > 0.5

    full = _mean([score(c, np.ones_like(c.truth)) for c in cases])
    mean = _mean([score(c, mean_shape(c)) for c in cases])
    scores = {"empty": _mean([score(c, np.zeros_like(c.truth)) for c in cases]), "constant": max(full, mean),
              "random": _random_mean(len(cases), lambda i, rng: score(cases[i], rng.choice(others(cases[i])).truth))}
    data = (f"geometry segmentation/test: {shapes} generated shapes x scales "
            f"{SEGMENTATION['scales']}, sha256 {digest([c.truth for c in cases] + [c.image for c in cases])[:12]}")
    return MeasuredBaseline.best_of(scores, True, answer="mean shape" if mean >= full else "all foreground",
                                    n=len(cases), seeds=SEEDS, data=data, how=HOW)


def contours_baseline(limit: int | None = None) -> MeasuredBaseline:
    """Absolute EF error of the constant and random EF answers on the phantom subjects."""
    subjects = [phantom.make_subject(i, CONTOURS["seed"]) for i in range(CONTOURS["subjects"])][:limit]
    efs = [s.ef for s in subjects]

    def error(i: int, ef: float) -> float:
        return abs(ef - efs[i])

    constant, answer = constant_gold(efs, error, higher_is_better=False, candidates=len(efs))
    scores = {"constant": constant, "random": random_gold(efs, error)}
    sha = digest([np.concatenate([s.rho0, s.length]) for s in subjects])
    data = f"geometry contours/test: {len(subjects)} phantom subjects (seed {CONTOURS['seed']}), sha256 {sha[:12]}"
    return MeasuredBaseline.best_of(scores, False, answer=f"EF {answer:.2f}%", n=len(subjects), seeds=SEEDS,
                                    data=data, how=HOW)


def motion_baseline(limit: int | None = None, ecg_dir: Path = SHARED / "ecg") -> MeasuredBaseline:
    """Motion skill of the constant and random motions on the test subjects of the ECG-timed cohort."""
    cohort = motiondata.cohort(ecg_dir, MOTION["seed"], tuple(MOTION["records"]))
    train, test = motiondata.split(len(cohort.features), MOTION["test_share"], MOTION["seed"])
    test = test[:limit]
    truth, population = cohort.motion[test], cohort.motion[train].mean(axis=0)

    def skill(pred: np.ndarray) -> np.ndarray:
        return motion.per_subject(pred, truth, population)["skill"]

    constants = {"training mean": float(skill(np.broadcast_to(population, truth.shape)).mean()),
                 "no motion": float(skill(np.zeros_like(truth)).mean())}
    answer = max(constants, key=constants.__getitem__)
    # skills[i, j]: the skill on subject i of answering subject j's motion
    skills = np.stack([skill(np.broadcast_to(truth[j], truth.shape)) for j in range(len(test))], axis=1)
    scores = {"constant": constants[answer],
              "random": random_gold(list(range(len(test))), lambda i, j: float(skills[i, j]))}
    data = (f"geometry motion/test: {len(test)} subjects of MIT-BIH {'+'.join(MOTION['records'])} "
            f"(seed {MOTION['seed']}), sha256 {digest([cohort.features, cohort.motion])[:12]}")
    return MeasuredBaseline.best_of(scores, True, answer=answer, n=len(test), seeds=SEEDS, data=data, how=HOW)


def surfaces_baseline(limit: int | None = None, mesh_dir: Path = SHARED / "meshes",
                      samples: int | None = None) -> MeasuredBaseline:
    """F-score of the constant and random shapes against each real mesh (every input kind), after alignment
    (``samples`` points per surface, default the protocol's: the whole set takes about 6 minutes)."""
    import trimesh  # lazy: only the surface family loads meshes

    paths = meshes(mesh_dir)
    truths = [trimesh.load(p, force="mesh") for p in paths]
    n, tau, seed = samples or SURFACES["samples"], SURFACES["tau"], SURFACES["seed"]
    points = [surfaces.sample(m, n, seed) for m in truths]
    docs = [m for m in range(len(paths)) for _ in SURFACES["kinds"]][:limit]  # document -> its mesh
    cache: dict[tuple[int, str | int], float] = {}

    def fscore(truth: int, shape: str | int) -> float:
        if (truth, shape) not in cache:
            mesh = truths[shape] if isinstance(shape, int) else SHAPES[shape]()
            pred = surfdata.prediction_points(mesh, n, seed + 1)
            cache[truth, shape] = surfaces.scores(pred, points[truth], tau, SURFACES["aligned"])["fscore"]
        return cache[truth, shape]

    constants = {name: _mean([fscore(m, name) for m in docs]) for name in SHAPES}
    answer = max(constants, key=constants.__getitem__)
    random_score = random_gold(docs, lambda i, m: fscore(docs[i], m), groups=docs)
    scores = {"constant": constants[answer], "random": random_score}
    data = (f"geometry surfaces/test: {len(paths)} real meshes x {len(SURFACES['kinds'])} inputs, {n} points "
            f"each, sha256 {digest([p.xyz for p in points])[:12]}")
    return MeasuredBaseline.best_of(scores, True, answer=answer, n=len(docs), seeds=SEEDS, data=data, how=HOW)


def _sphere():  # type: ignore[no-untyped-def]
    import trimesh  # lazy: as above

    return trimesh.creation.icosphere(subdivisions=3)


def _cube():  # type: ignore[no-untyped-def]
    import trimesh  # lazy: as above

    return trimesh.creation.box()


SHAPES = {"sphere": _sphere, "cube": _cube}
MEASURES: dict[str, Callable[..., MeasuredBaseline]] = {
    "geometry_segmentation": segmentation_baseline, "geometry_contours": contours_baseline,
    "geometry_motion": motion_baseline, "geometry_surfaces": surfaces_baseline}
assert set(MEASURES) == set(TASKS)


def measure(task: str, limit: int | None = None) -> MeasuredBaseline:
    """The measured baseline of the geometry protocol ``task`` (on its first ``limit`` documents; segmentation:
    shapes)."""
    return MEASURES[task](limit)
