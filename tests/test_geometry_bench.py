"""The geometry baselines on their standard sets: ranked on their own boards, the command line, the real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from neurips26.methods.geometry import bench, motion, motiondata, protocol, report
from typer.testing import CliRunner

from neurips26.cli import app

META = {"revision": "0" * 40, "precision": "float32", "params": 1, "license": "apache-2.0",
        "model_type": "pretrained", "submitter": "alice"}


def test_a_standard_contour_run_is_ranked_on_its_own_board_and_a_smaller_one_is_not(tmp_path: Path) -> None:
    """Registered like ReDiff's: the board recomputes nothing it cannot, takes the recorded per-subject errors,
    ranks the standard run and stores the smaller one unranked with the reason."""
    from neurips26.leaderboard.store import Store

    task = "geometry_contours"
    store = Store(tmp_path / "lb")
    assert store.tasks[task].source == "registered" and store.tasks[task].group == "fourier_contours"
    small = {**protocol.CONTOURS, "subjects": 5}
    entries = {}
    runs, data = bench.run_contours(protocol.CONTOURS, harmonics=(4, 8))
    for k in (4, 8):  # two methods on the same documents
        results = report.write(tmp_path / f"k{k}", "contours", f"efd_k{k}", runs[f"efd_k{k}"], data,
                               protocol.CONTOURS)
        entries[k] = store.submit(results, {**META, "model_id": f"org/efd-k{k}"},
                                  sorted((tmp_path / f"k{k}").glob("samples_*.jsonl")))
        assert entries[k].status == "VALID", entries[k].reason
    entries["standard"] = entries[4]
    runs, data = bench.run_contours(small, harmonics=(4,))
    results = report.write(tmp_path / "small", "contours", "efd_k4", runs["efd_k4"], data, small)
    entries["small"] = store.submit(results, {**META, "model_id": "org/efd-small"},
                                    sorted((tmp_path / "small").glob("samples_*.jsonl")))
    assert entries["small"].status == "UNRANKED" and "subjects=5" in entries["small"].reason
    row = next(r for r in store.scores().to_pylist()
               if r["submission_id"] == entries["standard"].id and r["metric"] == "ef_abs_error")
    recorded = json.loads(next((tmp_path / "k4").glob("results_*.json")).read_text())
    assert row["task"] == task and row["n"] == protocol.TASKS[task].size
    assert row["value"] == pytest.approx(recorded["results"][task]["ef_abs_error,none"])
    assert row["value"] < protocol.TASKS[task].baseline  # far better than answering 50% for everyone


def test_segmentation_baselines_score_below_perfect_and_coarse_grids_cost_boundary_iou() -> None:
    settings = {**protocol.SEGMENTATION, "shapes": 3, "native": 64}
    runs, data = bench.run_segmentation(settings)
    assert not data["real"] and set(runs) == {"otsu", "active_contour"}
    for rows in runs.values():
        assert len(rows) == 9 and all(0.5 < r["dice"] < 1 for r in rows)
        by_scale = {s: np.mean([r["boundary_iou"] for r in rows if r["doc"]["scale"] == s]) for s in (0.5, 2.0)}
        assert by_scale[0.5] < by_scale[2.0]


def test_the_contour_bench_writes_runs_a_table_and_the_error_against_k_plot(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["geometry", "bench", "contours", "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    names = [b["baseline"] for b in summary["baselines"]]
    assert names[0] == "polygon" and "efd_k4" in names
    for row in summary["baselines"]:
        mean, low, high = row["ef_abs_error"]
        assert low <= mean <= high
    assert (tmp_path / "contours.png").stat().st_size > 0
    assert len(list(tmp_path.glob("efd_k4/results_*.json"))) == 1
    # smoothing helps the contour: K=4 is closer to the true curve than the noisy points' polygon
    by = {b["baseline"]: b for b in summary["baselines"]}
    assert by["efd_k4"]["mean_distance"][2] < by["polygon"]["mean_distance"][1]


def test_eval_scores_users_masks_and_names_a_bad_file(tmp_path: Path) -> None:
    y, x = np.indices((48, 48))
    truth = np.hypot(x - 24, y - 24) < 12
    np.save(tmp_path / "truth.npy", truth)
    np.save(tmp_path / "pred.npy", np.roll(truth, 2, axis=0))
    runner = CliRunner()
    result = runner.invoke(app, ["geometry", "eval", "--metric", "segmentation", "--spacing", "0.5,0.5", "--json",
                                 "--cross-resolution", str(tmp_path / "pred.npy"), str(tmp_path / "truth.npy")])
    assert result.exit_code == 0, result.output
    values = json.loads(result.output)
    assert values["hd95"] == pytest.approx(1.0) and 0 < values["boundary_iou"] < values["dice"] < 1
    assert "boundary_iou@2x" in values and "dice@0.5x" in values
    bad = runner.invoke(app, ["geometry", "eval", str(tmp_path / "missing.npy"), str(tmp_path / "truth.npy")])
    assert bad.exit_code == 2 and "missing.npy: no such file" in bad.output


def test_real_ecg_subjects_a_conditional_regressor_beats_the_collapsed_mean(shared_data: Path) -> None:
    cohort = motiondata.cohort(shared_data / "ecg")
    assert len(cohort.features) == 180 and cohort.motion.shape[1:] == (motiondata.FRAMES, 24, 3)
    train, test = motiondata.split(len(cohort.features))
    population = cohort.motion[train].mean(axis=0)
    scores = {name: motion.scores(f(cohort.features[train], cohort.motion[train], cohort.features[test]),
                                  cohort.motion[test], population)
              for name, f in motiondata.BASELINES.items()}
    assert scores["population_mean"]["collapse_ratio"] == pytest.approx(0.0, abs=1e-9)
    assert scores["population_mean"]["skill"] == pytest.approx(0.0, abs=1e-9)
    assert scores["ridge"]["skill"] > 0 and scores["ridge"]["specificity"] > 0.3
    assert scores["nearest_neighbour"]["collapse_ratio"] > scores["ridge"]["collapse_ratio"] > 0.2


def test_real_meshes_the_fitted_surface_beats_the_convex_hull_after_alignment(shared_data: Path,
                                                                             tmp_path: Path) -> None:
    (tmp_path / "bunny.ply").symlink_to(shared_data / "meshes" / "bunny.ply")  # not convex: the hull misses
    settings = {**protocol.SURFACES, "samples": 3000, "kinds": ["depth"]}
    runs, data = bench.run_surfaces(settings, tmp_path)
    assert data["real"] and [r["doc"]["mesh"] for r in runs["sdf_mc"]] == ["bunny.ply"]
    assert runs["sdf_mc"][0]["chamfer_l1"] < runs["convex_hull"][0]["chamfer_l1"]


def test_eval_aligns_an_unposed_mesh_before_scoring_it(shared_data: Path, tmp_path: Path) -> None:
    import trimesh
    from scipy.spatial.transform import Rotation

    mesh = trimesh.load(shared_data / "meshes" / "fandisk.obj", force="mesh")
    posed = mesh.copy()
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = 1.7 * Rotation.random(random_state=0).as_matrix(), [3.0, -1.0, 2.0]
    posed.apply_transform(transform)
    posed.export(tmp_path / "posed.ply")
    args = ["geometry", "eval", "--metric", "surfaces", "--samples", "3000", "--json", str(tmp_path / "posed.ply"),
            str(shared_data / "meshes" / "fandisk.obj")]
    aligned = json.loads(CliRunner().invoke(app, args).output)
    raw = json.loads(CliRunner().invoke(app, [*args, "--no-align"]).output)
    itself = [*args[:-2], str(shared_data / "meshes" / "fandisk.obj"), args[-1], "--no-align"]
    floor = json.loads(CliRunner().invoke(app, itself).output)  # two samplings of the same surface in place
    assert raw["fscore"] < 0.05 and raw["chamfer_l1"] > 0.1
    assert aligned["fscore"] == pytest.approx(floor["fscore"], abs=0.05)
    assert aligned["chamfer_l1"] == pytest.approx(floor["chamfer_l1"], rel=0.1)
