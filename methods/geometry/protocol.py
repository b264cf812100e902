"""The leaderboard protocols of the geometry evaluators: one board per family, each on its standard set (boards
``fractal_g``, ``fourier_contours``, ``time2track``, ``surface_recon``).

* ``geometry_segmentation``: 12 generated fractal shapes at 0.5x, 1x and 2x the native 96² grid (36 cases);
  ranked by Boundary IoU (band 2% of the diagonal).
* ``geometry_contours``: 40 phantom ventricles, noisy short-axis contours (0.8 mm); ranked by the absolute
  ejection-fraction error in points.
* ``geometry_motion``: the 54 test subjects of the ECG-timed cohort (MIT-BIH 100, 30% test, seed 0); ranked by
  the per-subject skill over the population-mean motion.
* ``geometry_surfaces``: the 8 real meshes x 2 unposed inputs (partial points, depth maps), scored after Sim(3)
  alignment; ranked by F-score at 1% of the diagonal.

Each baseline is measured (:mod:`.baselines`): the best score of answerers that never look at the input (an empty,
a constant and a random answer) on the standard set, recorded in :data:`MEASURED` by
``python -m neurips26.tasks.measure --record``.

The per-document values are the evaluator's (a reconstruction is not in the samples file): the leaderboard takes
them as recorded.
"""

from __future__ import annotations

from neurips26.protocol import PROTOCOLS, MeasuredBaseline, Protocol

VERSION = 1.0
NOTE = "per-document values recorded by the geometry evaluator (neurips26 geometry bench)"

SEGMENTATION = {"shapes": 12, "native": 96, "scales": [0.5, 1.0, 2.0], "seed": 0, "band": 0.02}
CONTOURS = {"subjects": 40, "noise_mm": 0.8, "seed": 0}
MOTION = {"records": ["100"], "test_share": 0.3, "seed": 0}
SURFACES = {"kinds": ["partial", "depth"], "tau": 0.01, "samples": 20000, "seed": 0, "aligned": True}

# the best answerers that know nothing: `python -m neurips26.tasks.measure --record` rewrites this block
MEASURED = {
    "geometry_segmentation": MeasuredBaseline(
        answerer="constant", scores={"empty": 0.0, "constant": 0.0969, "random": 0.084}, answer="mean shape", n=36,
        seeds=5, data="geometry segmentation/test: 12 generated shapes x scales [0.5, 1.0, 2.0], sha256 5684b932fbdf",
        how="methods/geometry/baselines.py"),
    "geometry_contours": MeasuredBaseline(
        answerer="constant", scores={"constant": 9.6024, "random": 12.9225}, answer="EF 50.44%", n=40, seeds=5,
        data="geometry contours/test: 40 phantom subjects (seed 0), sha256 57296cd8ad55",
        how="methods/geometry/baselines.py"),
    "geometry_motion": MeasuredBaseline(
        answerer="constant", scores={"constant": 0.0, "random": -0.3864}, answer="training mean", n=54, seeds=5,
        data="geometry motion/test: 54 subjects of MIT-BIH 100 (seed 0), sha256 34e6e9c0f292",
        how="methods/geometry/baselines.py"),
    "geometry_surfaces": MeasuredBaseline(
        answerer="random", scores={"constant": 0.1123, "random": 0.1172}, answer="sphere", n=16, seeds=5,
        data="geometry surfaces/test: 8 real meshes x 2 inputs, 20000 points each, sha256 97149404d947",
        how="methods/geometry/baselines.py"),
}


TASKS = {
    "geometry_segmentation": PROTOCOLS.register(
        "geometry_segmentation", group="fractal_g", output_type="generate_until", version=VERSION,
        metrics=("boundary_iou", "dice", "hd95", "nsd"))(Protocol(
            split="test", metric="boundary_iou", higher_is_better=True, range=(0, 1), size=36,
            task_metadata=SEGMENTATION, note=NOTE, baseline_from=MEASURED["geometry_segmentation"])),
    "geometry_contours": PROTOCOLS.register(
        "geometry_contours", group="fourier_contours", output_type="generate_until", version=VERSION,
        metrics=("ef_abs_error", "edv_rel_error"))(Protocol(
            split="test", metric="ef_abs_error", higher_is_better=False, range=(0, 100), size=40,
            task_metadata=CONTOURS, note=NOTE, baseline_from=MEASURED["geometry_contours"])),
    "geometry_motion": PROTOCOLS.register(
        "geometry_motion", group="time2track", output_type="generate_until", version=VERSION,
        metrics=("motion_skill", "motion_rmse"))(Protocol(
            split="test", metric="motion_skill", higher_is_better=True, range=(-1, 1), size=54,
            task_metadata=MOTION, note=NOTE, baseline_from=MEASURED["geometry_motion"])),
    "geometry_surfaces": PROTOCOLS.register(
        "geometry_surfaces", group="surface_recon", output_type="generate_until", version=VERSION,
        metrics=("fscore", "chamfer_l1", "normal_consistency"))(Protocol(
            split="test", metric="fscore", higher_is_better=True, range=(0, 1), size=16,
            task_metadata=SURFACES, note=NOTE, baseline_from=MEASURED["geometry_surfaces"])),
}
